"""Where a person's secrets live: the one list the sandbox hides and the permission modes watch.

Paths are relative to the home folder unless absolute. The list errs on the side of hiding:
a program in the sandbox that needs one of these (a deploy with cloud credentials, an ssh
push) is exactly the call a person should see and run outside the sandbox on purpose.
"""

from __future__ import annotations

import fnmatch
import glob
import os
import re
from collections.abc import Iterable
from pathlib import Path

__all__ = [
    "HOME_SECRET_PATHS",
    "SECRET_FILE_NAMES",
    "SYSTEM_SECRET_PATHS",
    "SensitivePaths",
    "is_secret_name",
    "sensitive_paths",
]

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
    # credentials inside the toolchain roots the sandbox shows read-only (uv's logins, npm's
    # and pip's install-wide config); a "*" stands for each installed version
    ".local/share/uv/credentials", ".nvm/versions/node/*/etc/npmrc",
    ".volta/tools/image/node/*/etc/npmrc", ".pyenv/versions/*/pip.conf",
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
    out: list[Path] = []
    for rel in HOME_SECRET_PATHS:
        if "*" in rel:  # one entry for each installed version (found now)
            out += sorted(Path(p) for p in glob.glob(os.path.join(glob.escape(str(home)), rel)))
        else:
            out.append(home / rel)
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


# Files that hold secrets wherever they are, inside a project too (matched on the file name,
# case-insensitively). Templates of them (.env.example) are not secrets.
SECRET_FILE_NAMES: tuple[str, ...] = (
    ".env", ".env.*", "*.env", ".envrc", ".netrc", "_netrc", ".pgpass", ".git-credentials",
    ".npmrc", ".pypirc", ".htpasswd", ".vault-token", ".dockercfg",
    "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "id_ecdsa_sk", "id_ed25519_sk",
    "*.pem", "*.key", "*.p12", "*.pfx", "*.jks", "*.keystore", "*.kdbx", "*.ppk", "*.asc",
    "credentials", "credentials.json", "credentials.toml", "credentials.db",
    "secrets.json", "secrets.yml", "secrets.yaml", "secrets.toml", "secret.json",
    "service-account*.json", "*-service-account.json", "application_default_credentials.json",
    "terraform.tfvars", "*.tfstate", "kubeconfig", "master.key",
)
NOT_SECRET_NAMES: tuple[str, ...] = (
    "*.example", "*.sample", "*.template", "*.dist", "*.defaults", "*.pub",
    ".env.example", ".env.sample", ".env.template", ".env.defaults", ".env.dist",
)


def _names_regex(globs: Iterable[str]) -> re.Pattern[str] | None:
    parts = [fnmatch.translate(g.lower()) for g in globs if g]
    return re.compile("|".join(f"(?:{p})" for p in parts)) if parts else None


_SECRET_NAMES = _names_regex(SECRET_FILE_NAMES)
_NOT_SECRET_NAMES = _names_regex(NOT_SECRET_NAMES)


def is_secret_name(name: str) -> bool:
    """Is ``name`` (a file name, no folder) the name of a file that holds secrets wherever it
    is (``SECRET_FILE_NAMES``, case-insensitively, templates excepted)? For tools that must
    not take a secret's content into a result unless the call names that file itself."""
    lowered = name.lower()
    return bool(_SECRET_NAMES is not None and _SECRET_NAMES.fullmatch(lowered)
                and not (_NOT_SECRET_NAMES is not None and _NOT_SECRET_NAMES.fullmatch(lowered)))


class SensitivePaths:
    """Is this path a secret? One answer for the permission service (reads of these ask, even
    inside the project) and the conversation's flow labels.

    A path is sensitive when it is, or is inside, one of the folders and files of
    ``sensitive_paths`` (the home list, Tebiki's data folder, the person's additions), or when
    its file name is a secret's name (``SECRET_FILE_NAMES``, or a name pattern the person
    added). Paths are compared as given and resolved, so a symlink to a key is a key.
    """

    def __init__(self, home: Path | None = None, extra: Iterable[Path | str] = (),
                 names: Iterable[str] = ()) -> None:
        extra_paths: list[Path | str] = []
        extra_names: list[str] = []
        for entry in extra:
            text = os.fspath(entry)
            # An entry without a folder part is a file-name pattern ("*.secret", "token.txt").
            if "/" not in text and not text.startswith("~"):
                extra_names.append(text)
            else:
                extra_paths.append(entry)
        self.roots = frozenset(str(p) for p in sensitive_paths(home, extra_paths))
        self.names = (*SECRET_FILE_NAMES, *names, *extra_names)
        self._names = _names_regex(self.names)
        self._not_names = _names_regex(NOT_SECRET_NAMES)

    def match(self, path: str | os.PathLike[str]) -> str | None:
        """Which entry makes ``path`` sensitive (for the person to read), or None."""
        text = os.fspath(path)
        found = self._match_text(text)
        if found is not None:
            return found
        try:
            resolved = os.path.realpath(text)
        except (OSError, ValueError):
            return None
        return self._match_text(resolved) if resolved != text else None

    def _match_text(self, text: str) -> str | None:
        if not text:
            return None
        current = text.rstrip("/") or "/"
        while True:
            if current in self.roots:
                return current
            parent = os.path.dirname(current)
            if parent == current:
                break
            current = parent
        name = os.path.basename(text.rstrip("/")).lower()
        return name if self.name_is_secret(name) else None

    def name_is_secret(self, name: str) -> bool:
        """Is a file of this name a secret wherever it lies (``.env``, ``id_rsa``, ``*.pem``)?
        The sandbox's scanner asks this for every name in the visible folders."""
        name = name.lower()
        return bool(name and self._names is not None and self._names.fullmatch(name) and not (
            self._not_names is not None and self._not_names.fullmatch(name)))
