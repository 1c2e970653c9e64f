"""API keys: the OS keyring first, then the environment. Never SQLite, never logs."""

from __future__ import annotations

import logging
import os

log = logging.getLogger(__name__)

KEYRING_SERVICE = "tebiki"
ANTHROPIC_API_KEY = "anthropic_api_key"
BRAVE_SEARCH_API_KEY = "brave_search_api_key"

_ENVIRONMENT = {
    ANTHROPIC_API_KEY: "ANTHROPIC_API_KEY",
    BRAVE_SEARCH_API_KEY: "BRAVE_SEARCH_API_KEY",
}


class SecretStoreError(RuntimeError):
    pass


def get_secret(name: str) -> str | None:
    """The keyring value, else the environment variable; None when neither is set."""
    try:
        import keyring

        value = keyring.get_password(KEYRING_SERVICE, name)
    except Exception as exc:  # no backend, locked, D-Bus missing: fall back quietly
        log.debug("keyring unavailable for %s: %s", name, type(exc).__name__)
        value = None
    if value:
        return value
    env_name = _ENVIRONMENT.get(name)
    return os.environ.get(env_name) or None if env_name else None


def set_secret(name: str, value: str | None) -> None:
    """Store (or with an empty value, delete) a secret in the OS keyring."""
    try:
        import keyring
        from keyring.errors import PasswordDeleteError

        if value:
            keyring.set_password(KEYRING_SERVICE, name, value)
        else:
            try:
                keyring.delete_password(KEYRING_SERVICE, name)
            except PasswordDeleteError:
                pass
    except Exception as exc:
        raise SecretStoreError(
            f"The OS keyring is not available ({type(exc).__name__}: {exc}). Set the "
            f"{_ENVIRONMENT.get(name, name)} environment variable instead.") from exc


def secret_source(name: str) -> str:
    """Where the secret currently comes from, for the UI: 'keyring', 'environment' or 'none'."""
    try:
        import keyring

        if keyring.get_password(KEYRING_SERVICE, name):
            return "keyring"
    except Exception:
        pass
    env_name = _ENVIRONMENT.get(name)
    return "environment" if env_name and os.environ.get(env_name) else "none"
