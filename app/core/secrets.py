"""API keys: the environment, then the OS keyring. Never SQLite, never logs.

The environment wins: it is the explicit per-process override (CI, tests, a shell session), and
it keeps a run pointed at a loopback test server from ever reading a real key out of the
keyring. Keyring backends fail in many ways (no D-Bus session, a locked wallet, no backend);
every read failure counts as "no key" and is logged without the value.
"""

from __future__ import annotations

import logging
import os
from typing import Literal

log = logging.getLogger(__name__)

KEYRING_SERVICE = "tebiki"
ANTHROPIC_API_KEY = "anthropic_api_key"
OPENAI_API_KEY = "openai_api_key"
BRAVE_SEARCH_API_KEY = "brave_search_api_key"

ENVIRONMENT_VARIABLES = {
    ANTHROPIC_API_KEY: "ANTHROPIC_API_KEY",
    OPENAI_API_KEY: "OPENAI_API_KEY",
    BRAVE_SEARCH_API_KEY: "BRAVE_SEARCH_API_KEY",
}

SecretSource = Literal["environment", "keyring", "none"]


class SecretStoreError(RuntimeError):
    """The keyring refused to store or delete a secret; the message never contains it."""


def secret_from_environment(name: str) -> str | None:
    env_name = ENVIRONMENT_VARIABLES.get(name)
    value = os.environ.get(env_name, "").strip() if env_name else ""
    return value or None


def _from_keyring(name: str) -> str | None:
    try:
        import keyring

        value = keyring.get_password(KEYRING_SERVICE, name)
    except Exception as exc:
        log.info("OS keyring unavailable for %s (%s)", name, type(exc).__name__)
        return None
    value = (value or "").strip()
    return value or None


def get_secret(name: str) -> str | None:
    """The secret from the environment, else the keyring; None when neither has it.

    May block on a keyring backend: call it from a worker thread, not the event loop.
    """
    return secret_from_environment(name) or _from_keyring(name)


def secret_source(name: str) -> SecretSource:
    """Where ``get_secret`` would find the secret, for the UI."""
    if secret_from_environment(name):
        return "environment"
    return "keyring" if _from_keyring(name) else "none"


def set_secret(name: str, value: str | None) -> None:
    """Store ``value`` in the OS keyring; an empty value deletes the stored one."""
    value = (value or "").strip()
    try:
        import keyring
        from keyring.errors import PasswordDeleteError

        if value:
            keyring.set_password(KEYRING_SERVICE, name, value)
        else:
            try:
                keyring.delete_password(KEYRING_SERVICE, name)
            except PasswordDeleteError:
                pass  # nothing stored
    except Exception as exc:
        env_name = ENVIRONMENT_VARIABLES.get(name, name.upper())
        raise SecretStoreError(
            f"The OS keyring is not available ({type(exc).__name__}). Set the {env_name} "
            "environment variable instead.") from None
