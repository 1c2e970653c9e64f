"""Running git to read configuration: ``git config --list -z`` parsed as it streams, under one
deadline, and the version check (older git cannot take the overrides)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from app.core.tools.process_runner import SpawnRefused

MIN_GIT_VERSION = (2, 32)  # GIT_CONFIG_COUNT arrived in 2.31, GIT_CONFIG_GLOBAL in 2.32
SCAN_TIMEOUT_S = 20.0  # for all config reads of one directory together
_MAX_TOKEN = 1 << 20  # longest key (or include path) accepted from a listing


class GitSafetyError(SpawnRefused):
    """git cannot be run safely here (message says why)."""


class Deadline:
    def __init__(self, seconds: float) -> None:
        self.end = time.monotonic() + seconds

    def left(self) -> float:
        left = self.end - time.monotonic()
        if left <= 0:
            raise GitSafetyError("reading the repository's git configuration took too long; "
                                 "git was not run")
        return left


async def read_tokens(argv: list[str], *, cwd: Path, env: Mapping[str, str],
                      deadline: Deadline, keep_value: Callable[[str], bool] | None = None,
                      ) -> tuple[int | None, list[tuple[str, str | None]]]:
    """Run a ``git config --list -z`` and return (exit code, [(key, value or None)]).

    The whole output is read, however long, but only what is needed is kept: each entry's key,
    and the value where ``keep_value(key)`` (default: include directives). ``--show-scope``
    tokens come back as keys of their own (``("scope", None)`` precedes each real entry);
    callers pair them up.
    """
    keep = keep_value or is_include
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv, cwd=str(cwd), env=dict(env), stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
            start_new_session=True, close_fds=True)
    except OSError as exc:
        raise GitSafetyError(f"cannot read the git configuration in {cwd}: "
                             f"{exc.strerror or exc}") from None
    tokens: list[tuple[str, str | None]] = []
    current = bytearray()
    overflow = False

    def finish(raw: bytes, overflowed: bool) -> None:
        key, newline, value = raw.partition(b"\n")
        text = key.decode("utf-8", "surrogateescape")
        wanted = keep(text)
        if overflowed and (not newline or wanted):
            # a key (or a value we need) too long to be real; fail rather than guess
            raise GitSafetyError("the repository's git configuration has an entry too long to "
                                 "check; git was not run")
        tokens.append((text, value.decode("utf-8", "surrogateescape")
                       if wanted and newline else None))

    async def consume() -> None:
        nonlocal current, overflow
        assert proc.stdout is not None
        while chunk := await proc.stdout.read(1 << 18):
            pieces = chunk.split(b"\0")
            for piece in pieces[:-1]:  # each completes a token
                if not current and not overflow:
                    finish(piece, False)
                    continue
                if not overflow:
                    current += piece
                finish(bytes(current), overflow)
                current, overflow = bytearray(), False
            if not overflow:
                current += pieces[-1]
                if len(current) > _MAX_TOKEN:
                    # keep the head (the key is there); drop the rest of a huge value
                    del current[_MAX_TOKEN:]
                    overflow = True
        await proc.wait()

    try:
        await asyncio.wait_for(consume(), timeout=deadline.left())
    except TimeoutError:
        raise GitSafetyError("reading the repository's git configuration took too long; git "
                             "was not run") from None
    finally:
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            await proc.wait()
    return proc.returncode, tokens


def is_include(key: str) -> bool:
    if key[:7].lower() != "include":  # most keys: decided without lower-casing it all
        return False
    lower = key.lower()
    return lower == "include.path" or (lower.startswith("includeif.")
                                       and lower.endswith(".path"))


_versions: dict[tuple[str, int], tuple[int, int] | None] = {}


async def require_version(git: str, env: Mapping[str, str]) -> None:
    try:
        stamp = (git, os.stat(git).st_mtime_ns)
    except OSError:
        stamp = (git, 0)
    if stamp not in _versions:
        proc = await asyncio.create_subprocess_exec(
            git, "version", env=dict(env), stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)
        try:
            out, _ = await asyncio.wait_for(proc.communicate(), timeout=10)
        except TimeoutError:
            proc.kill()
            await proc.wait()
            out = b""
        match = re.search(rb"(\d+)\.(\d+)", out)
        _versions[stamp] = (int(match[1]), int(match[2])) if match else None
    version = _versions[stamp]
    if version is None or version < MIN_GIT_VERSION:
        found = ".".join(map(str, version)) if version else "unknown"
        raise GitSafetyError(
            f"git {found} at {git} is too old to be run safely (Tebiki needs git "
            f"{'.'.join(map(str, MIN_GIT_VERSION))} or newer to keep a repository's "
            "configuration from running programs); please update git")
