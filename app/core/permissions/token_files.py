"""Project files with an ordinary name that hold a well-known secret token.

The sandbox hides files *named* like secrets (``.env``, ``*.pem``); a ``deploy.py`` with a
GitHub token in it is code, shown to every program. A program that prints it in a form no scan
reads (each character shifted, by its own code) would carry the token out unlabelled. So the
project's text files are read once, when the project is opened, for the well-known token
formats (``secret_formats.token_hits``): each token found is learnt into the machine's known
secrets (a result or a send carrying it, plain or encoded, is caught), and the files holding
one are remembered (``token_file_paths``): a command that may read any file it sees (a program
that is not a plain file printer, ``history_secrets.prints_git_objects``) reads them, and
app.core.agent.flow_tracking labels the conversation.

Bounds: ``MAX_FILES`` files, ``MAX_FILE_BYTES`` each, ``MAX_TOTAL_BYTES`` in all; folders of
installed packages, git's own and the caches are skipped (their tokens are not the
person's, and a program shown them reads them anyway as part of a package).
"""

from __future__ import annotations

import os
from pathlib import Path

from app.core.permissions.egress import SecretMatcher
from app.core.permissions.learnt_paths import LearntPaths
from app.core.permissions.secret_formats import token_hits
from app.core.sensitive_paths import SensitivePaths

__all__ = ["TOKEN_SUFFIX", "learn_token_files", "token_file_paths"]

MAX_FILES = 5000
MAX_FILE_BYTES = 256 * 1024
MAX_TOTAL_BYTES = 16 * 1024 * 1024
TOKEN_SUFFIX = " (holds a secret token)"
_SKIPPED = frozenset({".git", "node_modules", "site-packages", "dist-packages", ".venv", "venv",
                      "__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".tox",
                      "target", "dist", "build"})

_learnt = LearntPaths()


def learn_token_files(matcher: SecretMatcher, root: Path, sensitive: SensitivePaths) -> int:
    """Learn the well-known tokens of ``root``'s ordinary files (secret-named ones are learnt
    by ``secret_sources``); returns how many were found."""
    found: list[str] = []
    learnt = 0
    for path in _text_files(root, sensitive):
        try:
            with open(path, "rb") as handle:
                text = handle.read(MAX_FILE_BYTES).decode("utf-8", "replace")
        except OSError:
            continue
        hits = token_hits(text)
        if not hits:
            continue
        relative = os.path.relpath(path, root)
        found.append(relative)
        for hit in hits:
            learnt += matcher.add_secret(text[hit.start:hit.end], relative)
    _learnt.remember(root, tuple(found))
    return learnt


def token_file_paths(root: Path) -> tuple[str, ...]:
    """The ordinary files of ``root`` that hold a token (as learnt; none before)."""
    return _learnt.of(root)


def _text_files(root: Path, sensitive: SensitivePaths) -> list[str]:
    files: list[str] = []
    total = 0
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d not in _SKIPPED and not sensitive.name_is_secret(d)]
        for name in names:
            if sensitive.name_is_secret(name):
                continue
            path = os.path.join(folder, name)
            try:
                info = os.stat(path, follow_symlinks=False)
            except OSError:
                continue
            if not os.path.isfile(path) or os.path.islink(path) or info.st_size == 0:
                continue
            total += min(info.st_size, MAX_FILE_BYTES)
            files.append(path)
            if len(files) >= MAX_FILES or total >= MAX_TOTAL_BYTES:
                return files
    return files
