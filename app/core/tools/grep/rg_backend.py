"""grep_search's ripgrep backend: rg run as an argv list, its ``--null`` output parsed.

``--no-config`` (so no RIPGREP_CONFIG_PATH can inject ``--pre``), the pattern after
``--regexp`` (a leading ``-`` stays a pattern) and ``--`` before the path.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import re
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from app.core.sandbox import Confinement
from app.core.sensitive_paths import SECRET_FILE_NAMES
from app.core.tools.fs.paths import visible_name
from app.core.tools.grep.results import FileHits, GrepError, Outcome, Request, compile_pattern

MAX_RG_OUTPUT_BYTES = 64 * 1024 * 1024


def find_rg(cfg: Mapping[str, Any]) -> str | None:
    choice = cfg.get("use_rg", "auto")
    if choice is False or choice == "never":
        return None
    explicit = cfg.get("rg_path")
    if explicit:
        return str(explicit) if os.access(str(explicit), os.X_OK) else None
    return shutil.which("rg")


SECRET_NAME_EXCLUDES = tuple(f"--iglob=!{name}" for name in SECRET_FILE_NAMES)


def rg_argv(rg: str, req: Request) -> list[str]:
    heading = "--heading" if req.mode == "content" else "--no-heading"
    argv = [rg, "--no-config", "--color=never", heading, "--with-filename",
            "--line-number", "--null", "--hidden", "--no-require-git", "--no-ignore-global",
            "--no-ignore-exclude", "--encoding=none",
            "--ignore-case" if req.ignore_case else "--case-sensitive"]
    if req.mode == "files_with_matches":
        argv.append("--files-with-matches")
    elif req.mode == "count":
        argv.append("--count")
    elif req.context:
        argv.append(f"--context={req.context}")
    if req.file_pattern:
        argv.append(f"--glob={req.file_pattern}")
    # Last, so they win over file_pattern: a secret's content enters a result only through a
    # call that names the file itself (which the sensitive-path guard puts before the person).
    argv += ["--glob=!.git", *SECRET_NAME_EXCLUDES,
             *(f"--iglob=!{_rg_glob(name)}" for name in req.secret_names),
             "--regexp", req.pattern, "--", req.root_arg]
    return argv


def _rg_glob(name: str) -> str:
    """A person's name pattern as ripgrep must read it: what Python's fnmatch (the rest of
    Tebiki) takes literally, an unclosed "[" or "{", is escaped, so rg does not refuse to
    search at all."""
    if name.count("[") == name.count("]") and name.count("{") == name.count("}"):
        return name
    return "".join(f"\\{c}" if c in "[]{}" else c for c in name)


@dataclass
class _Proc:
    popen: subprocess.Popen[bytes] | None = None


def _run_rg_blocking(argv: list[str], cwd: Path, timeout: float,
                     holder: _Proc) -> tuple[bytes, bytes, int | None, str | None]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RIPGREP_")}
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=err, env=env)
        holder.popen = proc
        stopped: list[str] = []

        def on_timeout() -> None:
            stopped.append(f"stopped at the {timeout:g} s time limit")
            with contextlib.suppress(OSError):
                proc.kill()

        timer = threading.Timer(timeout, on_timeout)
        timer.daemon = True
        timer.start()
        chunks, total = [], 0
        try:
            assert proc.stdout is not None
            while True:
                chunk = cast(io.BufferedReader, proc.stdout).read1(1 << 20)
                if not chunk:
                    break
                chunks.append(chunk)
                total += len(chunk)
                if total > MAX_RG_OUTPUT_BYTES:
                    stopped.append(f"stopped after {MAX_RG_OUTPUT_BYTES // (1 << 20)} MB of "
                                   "results")
                    proc.kill()
                    break
        finally:
            timer.cancel()
            proc.stdout.close()  # type: ignore[union-attr]
            code = proc.wait()
        err.seek(0)
        return b"".join(chunks), err.read(64 * 1024), code, (stopped[0] if stopped else None)


def _strip_dot(path: bytes) -> str:
    if path.startswith(b"./"):
        path = path[2:]
    return visible_name(os.fsdecode(path))


_RG_MATCH_LINE = re.compile(rb"(?:^|\n)\d+:")
_RG_COUNT = re.compile(rb"([^\0]+)\0(\d+)(?:\n|$)")


def parse_rg(out: bytes, mode: str, context: int = 0) -> list[FileHits]:
    """Parse rg's ``--null`` output. Content mode uses ``--heading`` blocks (one per file,
    separated by a blank line) so that only counting happens per file here; the lines of a
    block are parsed when a page shows them."""
    files: dict[str, FileHits] = {}
    if mode == "files_with_matches":
        for raw in out.split(b"\0"):
            raw = raw.strip(b"\n")
            if raw:
                p = _strip_dot(raw)
                files[p] = FileHits(p, 1)
        return list(files.values())
    if mode == "count":
        # "path\0count\n" per file; a name may itself hold a newline, so match the records
        # rather than split lines (a name cannot hold NUL).
        for m in _RG_COUNT.finditer(out):
            p = _strip_dot(m[1])
            files[p] = FileHits(p, int(m[2]))
        return list(files.values())
    for block in out.split(b"\n\n"):
        raw, sep, body = block.partition(b"\0")
        if not sep:
            continue
        n_out = body.count(b"\n") + (0 if body.endswith(b"\n") else 1)
        if context:  # "--" separators are not output lines; context lines are not matches
            n_out -= body.count(b"\n--\n")
            count = len(_RG_MATCH_LINE.findall(body))
        else:
            count = n_out
        p = _strip_dot(raw.lstrip(b"\n"))
        files[p] = FileHits(p, count, raw=body, raw_lines=n_out)
    return list(files.values())


async def run_rg(rg: str, req: Request, confinement: Confinement | None = None
                 ) -> Outcome | None:
    """Search with ripgrep (in the sandbox with ``confinement``); None when rg cannot parse a
    pattern Python can (use Python)."""
    holder = _Proc()
    argv = rg_argv(rg, req)
    if confinement is not None:
        _, argv = confinement.wrap(argv, rg, req.cwd)
    try:
        out, err, code, stopped = await asyncio.to_thread(
            _run_rg_blocking, argv, req.cwd, req.timeout, holder)
    except asyncio.CancelledError:
        if holder.popen is not None:
            with contextlib.suppress(OSError):
                holder.popen.kill()
        raise
    errors = err.decode("utf-8", "replace")
    if code == 2 and not out and stopped is None:
        if "regex parse error" in errors or "error parsing regex" in errors:
            compile_pattern(req.pattern, req.ignore_case)  # raises GrepError if Python fails too
            return None
        if "(os error" not in errors:
            raise GrepError(f"ripgrep failed: {errors.strip()[:2000]}")
    outcome = Outcome(parse_rg(out, req.mode, req.context), "rg", incomplete=stopped)
    if code == 2 and errors.strip():
        outcome.errors = [ln for ln in errors.splitlines() if ln.strip()]
    outcome.files.sort(key=lambda h: h.path)
    return outcome
