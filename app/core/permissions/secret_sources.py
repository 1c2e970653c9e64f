"""The secrets on this machine an agent could reach: learnt (in memory) so that an outgoing
input carrying one is refused, however the agent came to see it — a command that printed a
project's ``.env``, a search that matched a key file, a file copied somewhere readable.

Learnt once per process for the home folder and once per project, in a worker thread; only
files whose names say they hold credentials, each capped in size, never shell histories.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from pathlib import Path

from app.core.permissions.egress import SecretMatcher
from app.core.safe_read import read_project_text
from app.core.sensitive_paths import SensitivePaths

__all__ = ["HOME_CREDENTIAL_FILES", "learn_home_secrets", "learn_project_secrets"]

log = logging.getLogger(__name__)

MAX_FILE_BYTES = 64 * 1024
MAX_FILES = 200
PROJECT_DEPTH = 4

# Credential files under $HOME (files, or folders whose files are read one level deep).
HOME_CREDENTIAL_FILES: tuple[str, ...] = (
    ".aws/credentials", ".ssh", ".netrc", ".git-credentials", ".config/git/credentials",
    ".config/gh/hosts.yml", ".pgpass", ".docker/config.json", ".npmrc", ".pypirc",
    ".vault-token", ".config/gcloud/application_default_credentials.json",
    ".config/gcloud/credentials.db", ".cargo/credentials", ".cargo/credentials.toml",
    ".gem/credentials", ".azure/accessTokens.json", ".terraform.d/credentials.tfrc.json",
    ".config/hub",
)
# Files in ~/.ssh that are not secrets.
_NOT_SECRET = ("known_hosts", "known_hosts.old", "config", "authorized_keys", "environment")
# Folders of a project never searched for secret files (vendored or generated).
_SKIP_DIRS = frozenset({".git", "node_modules", ".venv", "venv", "__pycache__", ".tox",
                        "dist", "build", "target", ".mypy_cache", ".ruff_cache",
                        ".pytest_cache", ".next", ".cache"})


def _read(path: Path) -> str | None:
    try:  # a project's file: never blocked on (a FIFO named .env), never read past the cap
        return read_project_text(path, max_bytes=MAX_FILE_BYTES)
    except OSError:
        return None


def _home_files(home: Path) -> Iterator[Path]:
    for rel in HOME_CREDENTIAL_FILES:
        path = home / rel
        if path.is_dir():
            try:
                entries = sorted(path.iterdir())
            except OSError:
                continue
            for entry in entries:
                if entry.name not in _NOT_SECRET and not entry.name.endswith(".pub"):
                    yield entry
        else:
            yield path


def learn_home_secrets(matcher: SecretMatcher, home: Path | None = None) -> int:
    """Learn the credential files of ``home``; returns how many secrets were learnt."""
    home = home if home is not None else Path.home()
    learnt = 0
    for count, path in enumerate(_home_files(home)):
        if count >= MAX_FILES:
            break
        text = _read(path)
        if text:
            learnt += matcher.add_text(text, "~/" + str(path.relative_to(home)))
    return learnt


def _project_files(root: Path, sensitive: SensitivePaths) -> Iterator[Path]:
    stack = [(root, 0)]
    while stack:
        folder, depth = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    if depth < PROJECT_DEPTH and entry.name not in _SKIP_DIRS:
                        stack.append((Path(entry.path), depth + 1))
                elif entry.is_file(follow_symlinks=False) and \
                        sensitive.match(entry.path) is not None:
                    yield Path(entry.path)
            except OSError:
                continue


def learn_project_secrets(matcher: SecretMatcher, root: Path,
                          sensitive: SensitivePaths) -> int:
    """Learn the secret files inside a project folder (``.env``, keys, credentials)."""
    learnt = 0
    for count, path in enumerate(_project_files(root, sensitive)):
        if count >= MAX_FILES:
            break
        text = _read(path)
        if text:
            learnt += matcher.add_text(text, str(path.relative_to(root)))
    return learnt
