"""Persistence paths: files in a project that the person's own tools run *without being asked*.

A change to an ordinary project file (a Makefile, package.json, a test) is recorded by the
checkpoint and shown in the diff, and nothing runs it until the person does. The paths below are
different: opening the folder, entering it in a shell, ``git commit`` or starting any Python
runs what they say, outside every sandbox, before anyone has looked at the diff. A call that
writes one is never run unasked (``guards``), a sandboxed program that runs unasked gets the
existing ones read-only (``project_tree.persistence_paths``), and a call's changes can be
checked for new ones (:func:`persistence_changes`).

What is on the list, and why:

- git metadata (any ``.git`` folder or gitdir-pointer file), hook folders (``.husky/``,
  ``.githooks/``) and hook managers' configs (``.pre-commit-config.yaml``, lefthook): git runs
  them on the person's commit, checkout or push;
- folder-open tasks and settings: ``.vscode/tasks.json`` (``runOn: folderOpen``),
  ``.vscode/settings.json`` (interpreters, linters and formatters the editor starts on its
  own), ``.vscode/launch.json`` (one key press runs it, with ``preLaunchTask``), any
  ``*.code-workspace`` (holds settings and tasks), ``.idea/`` (JetBrains run configurations,
  startup tasks, file watchers, external tools), ``.devcontainer/`` and
  ``.devcontainer.json`` (``initializeCommand`` runs on the host when the editor offers to
  reopen the folder in a container);
- where the person's git sends or fetches: ``.lfsconfig`` (git-lfs uploads to its
  ``lfs.url`` on push) and ``.gitmodules`` (``git submodule update --init`` fetches its URLs,
  a path carrying data);
- shell-entry hooks: direnv's ``.envrc`` / ``.env*rc``, mise's ``mise.toml`` / ``.mise.toml``
  (their ``[hooks]`` and ``_.source`` run on ``cd``);
- interpreter start-up hooks: ``*.pth`` files and ``sitecustomize.py`` / ``usercustomize.py``
  anywhere (in a virtual environment's site-packages every ``python`` runs them);
- shell start-up files (``.bashrc``, ``.profile``, ``.zshrc``…): they run only when the project
  folder is a home folder, and elsewhere nobody edits them, so asking costs nothing;
- Tebiki's own ``.tebiki/`` (the project's custom tools, offered to the model next time).

Not on the list: Makefiles, package.json scripts, test files, CI configs, ``.gitattributes``
(its drivers must be configured in git config, which is protected) — they run only when the
person or a call asks, so the checkpoint and the diff are the right protection.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterable
from pathlib import PurePath

__all__ = ["persistence_changes", "persistence_folder", "persistence_reason"]

_GIT = "git runs what is there when the person uses git"

# A path component that makes everything below it a persistence path.
_FOLDERS: dict[str, str] = {
    ".git": f"git metadata: {_GIT}",
    ".husky": f"a git hooks folder (husky): {_GIT}",
    ".githooks": f"a git hooks folder: {_GIT}",
    ".idea": "JetBrains settings: run configurations, startup tasks and file watchers run "
             "programs",
    ".devcontainer": "a dev container definition: its initializeCommand runs on the host",
    ".tebiki": "Tebiki's project tools, offered to the model in the next session",
}

# File names that are persistence paths wherever they are.
_NAMES: dict[str, str] = {
    ".envrc": "a direnv file: the shell runs it on entering the folder",
    # Not programs, destinations: where the person's own git sends and fetches.
    ".lfsconfig": "git-lfs settings: the person's git push uploads files to the lfs.url "
                  "named there",
    ".gitmodules": "git submodules: the person's git submodule update fetches the URLs "
                   "named there",
    ".pre-commit-config.yaml": f"pre-commit hooks: {_GIT}",
    "lefthook.yml": f"lefthook git hooks: {_GIT}",
    ".lefthook.yml": f"lefthook git hooks: {_GIT}",
    "lefthook-local.yml": f"lefthook git hooks: {_GIT}",
    "mise.toml": "a mise file: its hooks run on entering the folder",
    ".mise.toml": "a mise file: its hooks run on entering the folder",
    "mise.local.toml": "a mise file: its hooks run on entering the folder",
    ".devcontainer.json": "a dev container definition: its initializeCommand runs on the host",
    "sitecustomize.py": "a Python start-up hook: every interpreter that finds it runs it",
    "usercustomize.py": "a Python start-up hook: every interpreter that finds it runs it",
    **{name: "a shell start-up file: a shell started here runs it" for name in (
        ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc",
        ".zshenv", ".zprofile", ".zlogin", ".kshrc", ".cshrc", ".tcshrc")},
}

# Files inside a ``.vscode`` folder.
_VSCODE: dict[str, str] = {
    "tasks.json": "VS Code tasks: a folderOpen task runs when the folder is opened",
    "settings.json": "VS Code settings: they name programs the editor starts on its own",
    "launch.json": "VS Code launch configurations: they run programs and tasks on one key",
}

_SUFFIXES: dict[str, str] = {
    ".pth": "a Python .pth file: every interpreter that finds it runs its import lines",
    ".code-workspace": "a VS Code workspace: its settings and tasks run on opening it",
}

_PATTERNS: tuple[tuple[str, str], ...] = (
    (".env*rc", "a direnv file: the shell runs it on entering the folder"),
)


def persistence_folder(name: str) -> str | None:
    """Why a folder called ``name`` holds persistence paths (everything below it), or None."""
    return _FOLDERS.get(name)


def _name_reason(name: str, parent: str) -> str | None:
    reason = _NAMES.get(name)
    if reason is not None:
        return reason
    if parent == ".vscode" and name in _VSCODE:
        return _VSCODE[name]
    for suffix, why in _SUFFIXES.items():
        if name.endswith(suffix) and len(name) > len(suffix):
            return why
    for pattern, why in _PATTERNS:
        if fnmatch.fnmatchcase(name, pattern):
            return why
    return None


def persistence_reason(relative_path: str | os.PathLike[str]) -> str | None:
    """Why the person's tools would run ``relative_path`` (relative to the project folder)
    without being asked, or None for an ordinary project file."""
    parts = [p for p in PurePath(os.fspath(relative_path)).parts if p not in ("", ".", "/")]
    for part in parts[:-1]:
        reason = _FOLDERS.get(part)
        if reason is not None:
            return reason
    if not parts:
        return None
    name = parts[-1]
    return _FOLDERS.get(name) or _name_reason(name, parts[-2] if len(parts) > 1 else "")


def persistence_changes(changed_relative_paths: Iterable[str | os.PathLike[str]],
                        ) -> list[tuple[str, str]]:
    """The persistence paths among a call's changes, each with its reason: for the check
    after a call that ran unasked (revert or report a new one)."""
    out: list[tuple[str, str]] = []
    for path in changed_relative_paths:
        reason = persistence_reason(path)
        if reason is not None:
            out.append((os.fspath(path), reason))
    return out
