"""Secrets that a project's git history still holds: learnt like its secret files.

A ``.env.production`` committed once and deleted since is gone from the work tree, and the
sandbox hides secret-named files there; but every version of it is in the repository's
objects, which any read of them can print: ``git_ops show`` of a blob id, a sandboxed
``git show HEAD~1:.env.production``, ``git log -p``, ``git cat-file``, an archive. Rather than
judging each such command (git has many ways to print a blob), the values are learnt into the
machine's known secrets (``ToolPermissionService.known_secrets``, app.core.permissions.
secret_sources): a result that carries one labels the conversation (it read a secret, named
``<path> (git history)``), and a call that sends one out is refused, plain or encoded.

What is read: for the project's repository and each one nested in it (a vendored clone, whose
objects programs see too; ``MAX_NESTED``), one ``git log -p`` over every ref and the reflog,
limited by pathspec to file names the sensitive paths list (``SensitivePaths.names``, any
folder, any case), with git's own
diffs (no external diff, no textconv) in the environment of app.core.tools.git_safety (the
repository's configuration runs no program). Templates (``.env.example``) are left out as in
the work tree. Added and removed lines are the file's versions.

A command that can print the repository's objects (``prints_git_objects``: ``git show``,
``cat-file``, ``log -p``, ..., and any program that may run git or read ``.git/objects``
itself: an interpreter, a build tool, a test runner; a plain printer handed the
repository's own files or searching folders whole) in a project whose history holds such
files is itself a read of them (app.core.agent.flow_tracking labels the conversation), since
its output may carry them in a form no scan reads (``| xxd``, shifted by its code).

Bounds: ``MAX_HISTORY_BYTES`` of output and ``GIT_TIMEOUT_S`` (a huge history is read in part,
newest first, and logged); ``MAX_FILES`` paths. Runs git: call it off the GUI thread and off
any event loop (the permission service's ``learn_secrets`` runs in a worker thread, started
when the project is opened; the first model call waits for it to end).
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
from collections.abc import Iterable
from pathlib import Path

from app.core.permissions.egress import SecretMatcher
from app.core.permissions.learnt_paths import LearntPaths
from app.core.sensitive_paths import SensitivePaths
from app.core.tools.git_metadata import git_metadata
from app.core.tools.git_safety import GitSafetyError, safe_git_env
from app.core.tools.process_runner import minimal_env, run_argv

__all__ = ["HISTORY_SUFFIX", "MAX_HISTORY_BYTES", "history_secret_paths",
           "learn_history_secrets", "prints_git_objects"]

log = logging.getLogger(__name__)

MAX_HISTORY_BYTES = 4 * 1024 * 1024
MAX_FILES = 200
MAX_NESTED = 20  # nested repositories whose history is read
GIT_TIMEOUT_S = 5.0  # a session's first model call waits for what is left: a huge history is cut
HISTORY_SUFFIX = " (git history)"

# git subcommands that can print what a blob holds (any version of any file), and those that
# can when given a patch option.
_PRINTS_BLOBS = frozenset({"show", "cat-file", "grep", "archive", "blame", "annotate", "diff",
                           "difftool", "format-patch", "fast-export", "bundle", "whatchanged",
                           "range-diff", "unpack-file", "pack-objects", "get-tar-commit-id"})
_SHOWS_PATCHES = frozenset({"log", "stash", "reflog", "diff-tree", "diff-index", "diff-files"})
_PATCH_OPTIONS = frozenset({"-p", "-u", "--patch", "--cc", "--full-diff"})
_WITH_VALUE = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace"})
# Programs that print only the files and text they are given and start no other program
# (not sed or awk, which can; not find, fd or rg, which exec; not sort: --compress-program).
# Any other program may run git or read the objects itself and print them in a form no scan
# reads.
_STARTS_NO_PROGRAM = frozenset({
    "ls", "cat", "head", "tail", "wc", "grep", "egrep", "fgrep", "echo", "printf", "pwd",
    "true", "false", "test", "[", "uniq", "cut", "tr", "diff", "cmp", "mkdir", "touch",
    "cp", "mv", "rm", "ln", "stat", "file", "du", "df", "date", "basename", "dirname",
    "realpath", "readlink", "which", "whoami", "uname", "tree", "cd", "xxd", "od", "base64",
    "sha256sum", "md5sum", "nl", "tac", "rev", "fold", "paste", "join", "comm", "column",
    "jq", "sleep", "chmod", "curl", "wget"})
_learnt_paths = LearntPaths()

_HEADER = re.compile(r'^diff --git (?:"a/((?:[^"\\]|\\.)*)"|a/(\S+)) ', re.MULTILINE)


def _pathspecs(sensitive: SensitivePaths) -> list[str]:
    """One pathspec per secret file-name pattern: that name in any folder, any case."""
    return [f":(glob,icase)**/{name}" for name in sensitive.names if name and "/" not in name]


def _versions(patch: str, sensitive: SensitivePaths) -> dict[str, list[str]]:
    """The lines each secret-named file ever held, by path (added and removed lines)."""
    found: dict[str, list[str]] = {}
    headers = list(_HEADER.finditer(patch))
    for i, header in enumerate(headers):
        path = header.group(1) if header.group(1) is not None else header.group(2)
        if not sensitive.name_is_secret(path.rsplit("/", 1)[-1]):
            continue  # a template (.env.example) the pathspec's glob let through
        if path not in found and len(found) >= MAX_FILES:
            continue
        end = headers[i + 1].start() if i + 1 < len(headers) else len(patch)
        lines = found.setdefault(path, [])
        for line in patch[header.end():end].split("\n"):
            if line[:1] in "+-" and not line.startswith(("+++ ", "--- ")):
                lines.append(line[1:])
    return found


async def _history_patch(root: Path, sensitive: SensitivePaths) -> str:
    specs = _pathspecs(sensitive)
    if not specs or not (root / ".git").exists():
        return ""
    env = await safe_git_env(root, base_env=minimal_env(project_root=root))
    result = await run_argv(
        ["git", "--no-pager", "log", "--all", "--reflog", "-p", "--no-ext-diff",
         "--no-textconv", "--no-color", "--no-renames", "--format=", "--end-of-options",
         "--", *specs],
        cwd=root, timeout_s=GIT_TIMEOUT_S, max_output_bytes=MAX_HISTORY_BYTES, env=env)
    if result.timed_out or result.stdout_bytes > MAX_HISTORY_BYTES:
        log.warning("git history of %s read in part (bounded): older secrets not learnt", root)
    elif result.exit_code != 0:
        log.info("git history of %s not read: %s", root, result.stderr.strip()[:200])
        return ""
    return result.stdout


def learn_history_secrets(matcher: SecretMatcher, root: Path,
                          sensitive: SensitivePaths) -> int:
    """Learn the secret values of every secret-named file in the git history of ``root``'s
    repository and of the repositories nested in it (a vendored clone: any program sees its
    objects too); returns how many values were found."""
    learnt = 0
    paths: list[str] = []
    for top in _repositories(root):
        try:
            patch = asyncio.run(_history_patch(top, sensitive))
        except (GitSafetyError, OSError) as exc:
            log.info("git history of %s not read: %s", top, exc)
            continue
        prefix = "" if top == root else os.path.relpath(top, root) + "/"
        for path, lines in _versions(patch, sensitive).items():
            learnt += matcher.add_text("\n".join(lines), prefix + path + HISTORY_SUFFIX)
            paths.append(prefix + path)
    _learnt_paths.remember(root, tuple(paths))
    return learnt


def _repositories(root: Path) -> list[Path]:
    """``root`` and the work trees of the repositories nested inside it (at most
    ``MAX_NESTED``)."""
    root = root.resolve()
    # A nested repository's git dir is its work tree's ``.git`` (bare ones have no files
    # a program would print by name, and git reads them through their own work tree).
    nested = [gitdir.parent for gitdir in git_metadata([root]).nested
              if gitdir.name == ".git" and gitdir.parent != root
              and gitdir.parent.is_relative_to(root)]
    return [root, *dict.fromkeys(nested)][:MAX_NESTED + 1]


def history_secret_paths(root: Path) -> tuple[str, ...]:
    """The secret-named files ``root``'s git history holds (as learnt; none before)."""
    return _learnt_paths.of(root)


def _reaches_git_dir(program: str, arguments: list[str]) -> bool:
    """Does a plain printer's argument name the repository's own files (a path through
    ``.git`` or its ``objects``, any case, as a case-insensitive disk reads it; shell_exec
    expands no pattern), or does it search folders whole (``grep -r``), ``.git`` among them?
    Its objects are the history compressed: printed in any form, a receiver inflates them."""
    if program in ("grep", "egrep", "fgrep") and any(
            a == "--recursive" or (a.startswith("-") and not a.startswith("--")
                                   and ("r" in a or "R" in a)) for a in arguments):
        return True
    return any(part in (".git", "objects")
               for argument in arguments if not argument.startswith("-")
               for part in argument.lower().split("/"))


def prints_git_objects(commands: Iterable[str]) -> bool:
    """Can one of ``commands`` (a shell command's simple commands, wrappers removed) print
    the content of the repository's objects: a git subcommand that shows blobs, or one that
    shows patches when asked (``log -p``, ``stash show -p``), or a program that may start
    git or read the objects itself?"""
    for command in commands:
        words = command.split()
        if not words:
            continue
        program = words[0].rsplit("/", 1)[-1]
        if program != "git":
            if program not in _STARTS_NO_PROGRAM or _reaches_git_dir(program, words[1:]):
                return True
            continue
        rest = words[1:]
        while rest and rest[0].startswith("-"):  # git's own options, some with a value
            option = rest.pop(0)
            if option in _WITH_VALUE and rest:
                rest.pop(0)
        if not rest:
            continue
        subcommand, arguments = rest[0], rest[1:]
        if subcommand in _PRINTS_BLOBS:
            return True
        if subcommand in _SHOWS_PATCHES and any(
                a in _PATCH_OPTIONS or a.startswith(("-L", "--patch", "-U", "--unified"))
                for a in arguments):
            return True
    return False
