"""Model provider API keys, by provider name, through ``app.core.secrets``."""

from __future__ import annotations

from app.core.secrets import (
    ANTHROPIC_API_KEY,
    KEYRING_SERVICE,
    OPENAI_API_KEY,
    SecretStoreError,
    get_secret,
    secret_source,
    set_secret,
    set_session_secret,
)

CredentialError = SecretStoreError
KEY_NAMES: dict[str, str] = {"anthropic": ANTHROPIC_API_KEY, "openai_compatible": OPENAI_API_KEY}

__all__ = ["KEYRING_SERVICE", "CredentialError", "delete_api_key", "get_api_key", "key_source",
           "set_api_key", "set_session_api_key"]


def _name(provider: str) -> str:
    try:
        return KEY_NAMES[provider]
    except KeyError:
        raise ValueError(f"unknown provider {provider!r}") from None


def get_api_key(provider: str = "anthropic") -> str | None:
    return get_secret(_name(provider))


def key_source(provider: str = "anthropic") -> str | None:
    """"environment", "session", "keyring" or None."""
    source = secret_source(_name(provider))
    return None if source == "none" else source


def set_api_key(key: str, provider: str = "anthropic") -> None:
    set_secret(_name(provider), key)


def set_session_api_key(key: str | None, provider: str = "anthropic") -> None:
    """Keep ``key`` for this session only (no OS keyring): in memory, gone at quit."""
    set_session_secret(_name(provider), key)


def delete_api_key(provider: str = "anthropic") -> None:
    set_secret(_name(provider), None)
