"""API keys: the environment, then this session's memory, then the OS keyring. Never SQLite,
never logs.

The environment wins: it is the explicit per-process override (CI, tests, a shell session), and
it keeps a run pointed at a loopback test server from ever reading a real key out of the
keyring. Keyring backends fail in many ways (no D-Bus session, a locked wallet, no backend);
every read failure counts as "no key" and is logged without the value. Without a working
keyring a key can be kept for this session only (``set_session_secret``): in memory, gone when
the app quits.
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

SecretSource = Literal["environment", "session", "keyring", "none"]

# How to get a keyring where there is none, for messages. Never a backend that keeps keys in
# a plain file (keyrings.alt's, readable by anything running as you).
KEYRING_INSTALL_HINT = (
    "To store keys, install and unlock a keyring service: GNOME Keyring (gnome-keyring) or "
    "KWallet, which provide the Secret Service; or set the key in the environment Tebiki "
    "starts in.")



def keep_across_starts(name: str) -> str:
    """How to keep secret ``name`` when the OS keyring does not work (a key typed in the app
    then lasts only until it quits): the environment variable, or a working keyring."""
    env_name = ENVIRONMENT_VARIABLES.get(name, name.upper())
    return (f"To keep it across starts, set the {env_name} environment variable before "
            f"starting the app (for example, add export {env_name}=… to ~/.profile), or start "
            f"or unlock the OS keyring. {KEYRING_INSTALL_HINT}")


def missing_key_message(name: str, label: str, where: str) -> str:
    """What to say when secret ``name`` (an "Anthropic API key") is set nowhere: where to add
    it (``where``) and where it is kept — the OS keyring only when there is one. Ask after
    ``get_secret``: its keyring answer decides."""
    env_name = ENVIRONMENT_VARIABLES.get(name, name.upper())
    if _keyring_failure is None:
        return (f"No {label} is set. Add one in {where} (it is stored in the OS keyring) or "
                f"set the {env_name} environment variable.")
    return (f"No {label} is set, and there is no OS keyring here ({_keyring_failure}): a key "
            f"added in {where} works until the app quits. {keep_across_starts(name)}")


# Keys kept for this session only (no keyring): in memory, never written anywhere.
_session: dict[str, str] = {}
# The last failure of the keyring ("NoKeyringError"), None once it answered.
_keyring_failure: str | None = None


class SecretStoreError(RuntimeError):
    """The keyring refused to store or delete a secret; the message never contains it."""


def secret_from_environment(name: str) -> str | None:
    env_name = ENVIRONMENT_VARIABLES.get(name)
    value = os.environ.get(env_name, "").strip() if env_name else ""
    return value or None


def _from_keyring(name: str) -> str | None:
    global _keyring_failure
    try:
        import keyring

        value = keyring.get_password(KEYRING_SERVICE, name)
    except Exception as exc:
        _keyring_failure = type(exc).__name__
        log.info("OS keyring unavailable for %s (%s)", name, _keyring_failure)
        return None
    _keyring_failure = None
    value = (value or "").strip()
    return value or None


def keyring_failure() -> str | None:
    """Why the keyring failed the last time it was asked ("NoKeyringError"); None when it
    answered (or was not asked yet)."""
    return _keyring_failure


def get_secret(name: str) -> str | None:
    """The secret from the environment, else this session's memory, else the keyring; None
    when none has it.

    May block on a keyring backend: call it from a worker thread, not the event loop.
    """
    return secret_from_environment(name) or _session.get(name) or _from_keyring(name)


def secret_source(name: str) -> SecretSource:
    """Where ``get_secret`` would find the secret, for the UI."""
    if secret_from_environment(name):
        return "environment"
    if _session.get(name):
        return "session"
    return "keyring" if _from_keyring(name) else "none"


def set_session_secret(name: str, value: str | None) -> None:
    """Keep ``value`` in memory for this session only (an empty value forgets it)."""
    value = (value or "").strip()
    if value:
        _session[name] = value
    else:
        _session.pop(name, None)


def set_secret(name: str, value: str | None) -> None:
    """Store ``value`` in the OS keyring; an empty value deletes the stored one. Either way a
    key kept for this session only is dropped: the keyring's answer counts from now on."""
    global _keyring_failure
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
        _keyring_failure = type(exc).__name__
        env_name = ENVIRONMENT_VARIABLES.get(name, name.upper())
        raise SecretStoreError(
            f"The OS keyring is not available ({_keyring_failure}). Keep the key for this "
            f"session only, or set the {env_name} environment variable. "
            f"{KEYRING_INSTALL_HINT}") from None
    _keyring_failure = None
    _session.pop(name, None)
