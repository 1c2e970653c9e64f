"""Which files configure a repository's git, found as git would find them, and their stamps
(size/mtime/inode) so a scan can be reused until one of them changes."""

from __future__ import annotations

import asyncio
import contextlib
import os
import stat
from collections.abc import Mapping
from pathlib import Path

from app.core.safe_read import read_project_file, read_project_text
from app.core.tools.git_config.reader import Deadline, GitSafetyError

MAX_CONFIG_FILES = 2000  # submodule/worktree/include files one scan may read

Stamp = tuple[int, int, int, int] | None


def stamp(path: str | os.PathLike[str]) -> Stamp:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino)


def include_target(value: str, including: Path, env: Mapping[str, str]) -> Path | None:
    if value.startswith("~/") or value == "~":
        home = env.get("HOME")
        if not home:
            return None
        return Path(home, value[2:])
    if value.startswith("~"):
        expanded = os.path.expanduser(value)
        return None if expanded == value else Path(expanded)
    return including.parent / value


def is_gitdir(path: Path) -> bool:
    return (path / "HEAD").is_file() and (path / "refs").is_dir() and (
        (path / "objects").is_dir() or (path / "commondir").is_file())


def read_gitfile(path: Path) -> Path | None:
    """Where a ``.git`` file (a gitdir pointer) points, or None. A FIFO or device named
    ``.git`` is no gitfile: read without blocking, regular files only, one short line."""
    try:
        # the project's content: never blocks on a FIFO, never reads a huge file
        text = read_project_file(path, max_bytes=4096, too_large="truncate").decode(
            "utf-8", "replace")
    except OSError:
        return None
    if not text.startswith("gitdir:"):
        return None
    target = Path(text[len("gitdir:"):].strip())
    return target if target.is_absolute() else path.parent / target


def discover(start: Path) -> tuple[Path, Path, Path | None, list[Path]] | None:
    """(gitdir, commondir, work tree top or None, folders walked) as git would find them."""
    walked: list[Path] = []
    for folder in (start, *start.parents):
        walked.append(folder)
        dotgit = folder / ".git"
        gitdir: Path | None = None
        top: Path | None = folder
        if dotgit.is_file():
            gitdir = read_gitfile(dotgit)
            walked.append(dotgit)
        elif dotgit.is_dir() and is_gitdir(dotgit):
            gitdir = dotgit
        elif is_gitdir(folder):
            gitdir, top = folder, None
        if gitdir is None:
            continue
        commondir = gitdir
        pointer = gitdir / "commondir"
        if pointer.is_file():
            with contextlib.suppress(OSError):
                raw = Path(read_project_text(pointer).strip())
                commondir = raw if raw.is_absolute() else gitdir / raw
            walked.append(pointer)
        return gitdir, commondir, top, walked
    return None


def surely_outside_repositories(start: Path) -> bool:
    """Whether ``start`` and every folder above it are plainly not in any repository.

    Stricter than git's discovery (the scan environment has no GIT_DIR or ceiling and refuses
    implicit bare repositories): any ``.git`` or ``HEAD`` entry, valid or not, or any folder
    that cannot be examined means "not sure", and the caller lets git itself decide.
    """
    if not start.is_absolute():
        return False
    for folder in (start, *start.parents):
        try:
            if not stat.S_ISDIR(os.stat(folder).st_mode):
                return False
        except OSError:
            return False
        for name in (".git", "HEAD"):
            try:
                os.lstat(folder / name)
            except FileNotFoundError:
                continue
            except OSError:
                return False
            return False
    return True


def repository_dirs(gitdir: Path, commondir: Path, stamps: dict[str, Stamp],
                    deadline: Deadline) -> list[Path]:
    """gitdir, commondir, their linked worktrees and every submodule gitdir below them."""
    out: list[Path] = [gitdir, commondir]
    queue = [commondir]
    visited: set[str] = set()
    while queue:
        deadline.left()
        repo = queue.pop()
        if str(repo) in visited:
            continue
        visited.add(str(repo))
        worktrees = repo / "worktrees"
        stamps[str(worktrees)] = stamp(worktrees)
        with contextlib.suppress(OSError):
            out += [w for w in worktrees.iterdir() if w.is_dir()]
        modules = repo / "modules"
        stamps[str(modules)] = stamp(modules)
        # Module names may contain "/", so a module's gitdir can sit at any depth; folders
        # that are not gitdirs are walked through, gitdirs are recorded and searched in turn.
        pending = [modules] if modules.is_dir() else []
        while pending:
            folder = pending.pop()
            if len(visited) + len(pending) > MAX_CONFIG_FILES:
                raise GitSafetyError("the repository has too many submodules to check; git "
                                     "was not run")
            with contextlib.suppress(OSError):
                for child in folder.iterdir():
                    if not child.is_dir() or child.is_symlink():
                        continue
                    if is_gitdir(child):
                        out.append(child)
                        queue.append(child)
                    else:
                        stamps[str(child)] = stamp(child)
                        pending.append(child)
    return out


async def embedded_submodules(top: Path, git: str, env: Mapping[str, str],
                              deadline: Deadline, stamps: dict[str, Stamp]) -> list[Path]:
    """Gitdirs of submodules whose ``.git`` is a folder inside the work tree."""
    gitmodules = top / ".gitmodules"
    stamps[str(gitmodules)] = stamp(gitmodules)
    if not gitmodules.is_file():
        return []
    proc = await asyncio.create_subprocess_exec(
        git, "config", "--file", str(gitmodules), "-z", "--get-regexp", r"^submodule\..*\.path$",
        cwd=str(top), env=dict(env), stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)
    try:
        output, _ = await asyncio.wait_for(proc.communicate(), timeout=deadline.left())
    except TimeoutError:
        proc.kill()
        await proc.wait()
        raise GitSafetyError("reading .gitmodules took too long; git was not run") from None
    out: list[Path] = []
    for entry in output.split(b"\0"):
        _, newline, value = entry.partition(b"\n")
        if not newline:
            continue
        dotgit = top / value.decode("utf-8", "surrogateescape") / ".git"
        stamps[str(dotgit)] = stamp(dotgit)
        if dotgit.is_dir() and is_gitdir(dotgit):
            out.append(dotgit)
    return out
