"""Where a person's secrets live: the one list the sandbox hides and the permission modes watch.

Paths are relative to the home folder unless absolute. The list errs on the side of hiding:
a program in the sandbox that needs one of these (a deploy with cloud credentials, an ssh
push) is exactly the call a person should see and run outside the sandbox on purpose.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

__all__ = ["HOME_SECRET_PATHS", "SYSTEM_SECRET_PATHS", "sensitive_paths"]

# Credentials, keys, tokens, keyrings, browser profiles and shell histories under $HOME.
HOME_SECRET_PATHS: tuple[str, ...] = (
    # keys and cloud / cluster credentials
    ".ssh", ".gnupg", ".aws", ".azure", ".config/gcloud", ".kube", ".docker", ".netrc",
    ".git-credentials", ".config/git/credentials", ".config/gh", ".config/hub",
    ".npmrc", ".pypirc", ".cargo/credentials", ".cargo/credentials.toml", ".gem/credentials",
    ".terraform.d", ".vault-token", ".config/doctl", ".oci", ".password-store",
    ".config/op", ".local/share/keyrings", ".pki", ".mozilla", ".thunderbird",
    # browser profiles
    ".config/google-chrome", ".config/chromium", ".config/BraveSoftware",
    ".config/microsoft-edge", ".config/vivaldi", ".config/opera",
    "snap/firefox", "snap/chromium",
    "Library/Keychains", "Library/Application Support/Google/Chrome",
    "Library/Application Support/Firefox", "Library/Cookies",
    # shell and REPL histories
    ".bash_history", ".zsh_history", ".zhistory", ".history", ".sh_history",
    ".local/share/fish/fish_history", ".python_history", ".node_repl_history",
    ".psql_history", ".mysql_history", ".sqlite_history", ".lesshst", ".irb_history",
)

# Sockets that hand out other credentials or root: an agent, a keyring daemon, Docker.
SYSTEM_SECRET_PATHS: tuple[str, ...] = (
    "/run/docker.sock", "/var/run/docker.sock", "/run/podman", "/run/dbus",
)


def sensitive_paths(home: Path | None = None, extra: Iterable[Path | str] = ()) -> tuple[Path, ...]:
    """Absolute paths to hide: the home list, the system sockets, the user's runtime folder
    (``$XDG_RUNTIME_DIR``: ssh-agent, keyring and D-Bus sockets) and ``extra`` (Tebiki's own
    data folder, the person's additions). Whether each exists is for the caller to check."""
    home = home if home is not None else Path(os.path.expanduser("~"))
    out: list[Path] = [home / rel for rel in HOME_SECRET_PATHS]
    out += [Path(p) for p in SYSTEM_SECRET_PATHS]
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isabs(runtime):
        out.append(Path(runtime))
    out += [Path(os.path.expanduser(os.fspath(p))) for p in extra]
    seen: set[Path] = set()
    unique = []
    for path in out:
        if path not in seen:
            seen.add(path)
            unique.append(path)
    return tuple(unique)
