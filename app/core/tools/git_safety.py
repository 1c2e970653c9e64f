"""git_safety: the environment in which every git that Tebiki starts runs, however it is reached.

Why an environment and not git options: a repository's own configuration (``.git/config``, its
includes, its submodules' and worktrees' configs) together with ``.gitattributes`` can name
programs that git runs during ordinary commands — ``core.fsmonitor`` on status,
``diff.<driver>.textconv`` / ``.command`` and ``diff.external`` on diff,
``filter.<driver>.clean`` on status/add, pagers, hooks, signing programs. ``-c`` options only
reach a git whose argv Tebiki writes; they miss ``timeout 20 git status``, a Makefile or a test
runner that runs git, and ``-c`` splits at the first ``=`` so a driver named ``a=b`` cannot be
named at all. Environment variables are inherited by every process a command starts, and git
reads its overrides from ``GIT_CONFIG_COUNT`` / ``GIT_CONFIG_KEY_<n>`` / ``GIT_CONFIG_VALUE_<n>``
(git 2.31+), where key and value are separate strings.

:func:`safe_git_env` returns such an environment:

- no system config (``GIT_CONFIG_NOSYSTEM``) and, instead of the person's global config, a file
  Tebiki writes (``GIT_CONFIG_GLOBAL``, git 2.32+) holding only identity and format settings
  copied from it (name, e-mail, line endings, default branch, safe.directory),
- overrides, in the "command" scope that beats every config file: a fixed set (no fsmonitor, no
  pager, no editor, no signing, no ext:: transport, hooks off unless ``run_hooks``, no network
  protocols unless ``allow_network``), plus a harmless value for every program-running key that
  the repository's configs define — found by listing them with git itself (listing never runs
  programs), the whole output read and parsed on its NUL separators,
- never prompting, never paging, never using replace refs.

The configs consulted are the ones git resolves from the directory (local, worktree, includes),
every include file named anywhere in them whatever its condition, every submodule's config under
``.git/modules`` (nested ones too) and in embedded ``.git`` folders named by ``.gitmodules``, and
every linked worktree's ``config.worktree``. The result is cached per directory and checked
against the size/mtime/inode of each of those files and folders before reuse.

Residual: an embedded ``.git`` folder of a submodule that ``.gitmodules`` does not list is not
scanned (a clone never produces one); the fixed overrides still apply there.

This module assembles the environment and scans a repository's configs; the parts live in
``app.core.tools.git_config`` (reading configs with git, the override tables, finding the
config files, the controlled global config).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import time
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from app.core.stamps import may_change_unseen
from app.core.tools.git_config.files import (
    MAX_CONFIG_FILES,
    Stamp,
    discover,
    embedded_submodules,
    include_target,
    repository_dirs,
    stamp,
)
from app.core.tools.git_config.files import (
    surely_outside_repositories as _surely_outside_repositories,
)
from app.core.tools.git_config.global_config import controlled_global, private_state_dir
from app.core.tools.git_config.overrides import DISABLED_DIFF_PROGRAM, config_overrides
from app.core.tools.git_config.reader import (
    MIN_GIT_VERSION,
    SCAN_TIMEOUT_S,
    Deadline,
    GitSafetyError,
    is_include,
    require_version,
)
from app.core.tools.git_config.reader import read_tokens as _read_tokens

__all__ = [
    "DISABLED_DIFF_PROGRAM",
    "GIT_ENV",
    "MIN_GIT_VERSION",
    "GitSafetyError",
    "config_overrides",
    "private_state_dir",
    "safe_git_env",
]

GIT_ENV: dict[str, str] = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_PAGER": "cat",
    "PAGER": "cat",
    "GIT_EDITOR": "true",
    "GIT_SEQUENCE_EDITOR": "true",
    "GIT_ASKPASS": "false",
    "SSH_ASKPASS": "false",
    "GIT_NO_REPLACE_OBJECTS": "1",
}

_MAX_INCLUDE_DEPTH = 10  # as git's own limit
_CACHE_SIZE = 64


# -- the public entry point -------------------------------------------------------------------

async def safe_git_env(repo_dir: Path | str, *, base_env: Mapping[str, str],
                       run_hooks: bool = False, allow_network: bool = False) -> dict[str, str]:
    """``base_env`` plus everything that keeps git from running the repository's programs.

    ``repo_dir`` is the directory commands start in (inside a repository or not). Raises
    :class:`GitSafetyError` when git is too old to honour the overrides or the repository's
    configuration cannot be read in time.
    """
    # Inherited GIT_* settings could add config (GIT_CONFIG_PARAMETERS), point elsewhere
    # (GIT_DIR) or name programs (GIT_SSH_COMMAND, GIT_EXTERNAL_DIFF); none are wanted here.
    env = {k: v for k, v in base_env.items() if not k.startswith("GIT_")}
    env.update(GIT_ENV)
    git = shutil.which("git", path=env.get("PATH"))
    if git is None:  # nothing to protect; keep the overrides for a git found some other way
        env["GIT_CONFIG_GLOBAL"] = os.devnull
        _set_overrides(env, config_overrides((), run_hooks=run_hooks,
                                             allow_network=allow_network))
        return env
    await require_version(git, env)
    env["GIT_CONFIG_GLOBAL"] = await controlled_global(git, base_env)
    found = await _repository_keys(Path(repo_dir), git, _scan_env(base_env))
    _set_overrides(env, config_overrides(found, run_hooks=run_hooks,
                                         allow_network=allow_network))
    return env


def _set_overrides(env: dict[str, str], pairs: list[tuple[str, str]]) -> None:
    env["GIT_CONFIG_COUNT"] = str(len(pairs))
    for index, (key, value) in enumerate(pairs):
        env[f"GIT_CONFIG_KEY_{index}"] = key
        env[f"GIT_CONFIG_VALUE_{index}"] = value


def _scan_env(base_env: Mapping[str, str]) -> dict[str, str]:
    """For reading configs: only repository configs count, and discovery as in safe_git_env."""
    env = {k: v for k, v in base_env.items() if not k.startswith("GIT_")}
    env.update({"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
                "GIT_TERMINAL_PROMPT": "0", "GIT_CONFIG_COUNT": "1",
                "GIT_CONFIG_KEY_0": "safe.bareRepository", "GIT_CONFIG_VALUE_0": "explicit"})
    return env


# -- the repository's configs ----------------------------------------------------------------------

@dataclass
class _Scan:
    keys: frozenset[str]
    stamps: tuple[tuple[str, Stamp], ...]


_cache: OrderedDict[tuple[str, str, str], _Scan] = OrderedDict()


async def _repository_keys(start: Path, git: str, env: Mapping[str, str]) -> frozenset[str]:
    with contextlib.suppress(OSError):
        start = start.resolve()
    # HOME: include paths starting with ~/ resolve against it
    cache_key = (str(start), git, env.get("HOME", ""))
    cached = _cache.get(cache_key)
    if cached is not None and all(stamp(Path(p)) == s for p, s in cached.stamps):
        _cache.move_to_end(cache_key)
        return cached.keys
    scan, cacheable = await _scan(start, git, env)
    if not cacheable:
        _cache.pop(cache_key, None)
        return scan.keys
    _cache[cache_key] = scan
    while len(_cache) > _CACHE_SIZE:
        _cache.popitem(last=False)
    return scan.keys


async def _listing(start: Path, git: str, env: Mapping[str, str],
                   deadline: Deadline) -> set[str]:
    """Keys of every repository scope git itself resolves from ``start`` (includes followed)."""
    code, tokens = await _read_tokens(
        [git, "config", "--list", "-z", "--show-scope", "--includes"], cwd=start, env=env,
        deadline=deadline)
    keys: set[str] = set()
    if code == 0:
        # "scope NUL key LF value NUL": scope tokens alternate with entries
        for (scope, _), (key, _) in zip(tokens[0::2], tokens[1::2], strict=False):
            if scope not in ("global", "system", "command") and key:
                keys.add(key)
    return keys


async def _scan(start: Path, git: str, env: Mapping[str, str]) -> tuple[_Scan, bool]:
    """(every key found, whether the stamps in it prove it current later)."""
    deadline = Deadline(SCAN_TIMEOUT_S)
    began = time.time_ns()
    found = discover(start)
    if found is None:
        if _surely_outside_repositories(start):
            # Nothing git could discover: its listing would hold no repository scope, so
            # none is spawned (the fixed overrides and the controlled global still apply).
            return _Scan(frozenset(), ()), False
        # git may see something our discovery does not; the listing covers it, but without
        # files to watch the result must not be reused
        return _Scan(frozenset(await _listing(start, git, env, deadline)), ()), False
    keys = await _listing(start, git, env, deadline)
    gitdir, commondir, top, walked = found
    stamps: dict[str, Stamp] = {str(p): stamp(p) for p in walked}
    files: list[tuple[Path, int]] = []  # (config file, include depth)
    for repo_dir in repository_dirs(gitdir, commondir, stamps, deadline):
        files += [(repo_dir / "config", 0), (repo_dir / "config.worktree", 0)]
    if top is not None:
        for sub in await embedded_submodules(top, git, env, deadline, stamps):
            files += [(sub / "config", 0), (sub / "config.worktree", 0)]
    read: list[Stamp] = []
    seen: set[str] = set()
    while files:
        path, depth = files.pop()
        if str(path) in seen:
            continue
        seen.add(str(path))
        if len(seen) > MAX_CONFIG_FILES:
            raise GitSafetyError("the repository has too many git config files to check; git "
                                 "was not run")
        file_stamp = stamp(path)
        stamps[str(path)] = file_stamp
        if file_stamp is None:
            continue
        read.append(file_stamp)
        code, tokens = await _read_tokens([git, "config", "--file", str(path), "--list", "-z"],
                                          cwd=start, env=env, deadline=deadline)
        if code != 0:
            continue  # git refuses such a file everywhere it appears, so it configures nothing
        for key, value in tokens:
            keys.add(key)
            if value and is_include(key) and depth < _MAX_INCLUDE_DEPTH:
                target = include_target(value, path, env)
                if target is not None:
                    files.append((target, depth + 1))
    # A file changed within the timestamp granularity could change again without its stamp
    # changing, so such a result is used once and not kept.
    racy = any(may_change_unseen(s[0], began) for s in read if s is not None)
    return _Scan(frozenset(keys), tuple(stamps.items())), not racy
