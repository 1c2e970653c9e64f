"""Run parsed commands without a shell: argv processes, pipes, ``&&``/``||``/``;`` sequencing.

Why: handing a string to ``sh -c`` would let the shell re-interpret it, so the structure from
``shell.syntax`` is executed here directly. Shared by shell_exec, self_eval and git_ops so they
all get the same guarantees:

- minimal child environment (no API keys or other secrets of the app),
- every process in its own session / process group (``start_new_session``); on timeout,
  cancellation, or when the command finishes, every group it created is killed, with the
  descendants that left it, so grandchildren do not outlive the call (one whose parent has
  already exited when the call ends can escape; that needs cgroups),
- stdin is /dev/null, stdout/stderr are capped (head and tail kept, a marker in between),
- ``cd`` / ``pwd`` are built in; ``cd`` cannot leave the project folder,
- with a ``Confinement`` every process starts inside the OS sandbox (``app.core.sandbox``):
  the program is resolved here, then started by bubblewrap / sandbox-exec with the policy's
  mounts and the environment filtered to what it can see (``sandbox.environment``: no
  socket variables, no paths out of sight, HOME the private one); a new PID namespace also
  ends the setsid() escape above.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import functools
import os
import shutil
import signal
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from app.core.sandbox import Confinement
from app.core.sandbox.environment import minimal_env
from app.core.tools.output_buffer import OutputBuffer
from app.core.tools.shell.syntax import ChainStep, Pipeline, SimpleCommand

__all__ = [
    "OutputBuffer",
    "RunResult",
    "SpawnRefused",
    "kill_process_groups",
    "minimal_env",
    "run_argv",
    "run_steps",
]

_DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"

# Process groups started by this module that may still be alive (killed at interpreter exit).
_LIVE_GROUPS: set[int] = set()


def _is_within(path: Path, root: Path) -> bool:
    try:
        return path.resolve().is_relative_to(root.resolve())
    except OSError:
        return False


def _same(reader: _PipeReader) -> _PipeReader:
    """Protocol factory for connect_read_pipe: the reader we already made."""
    return reader


class _PipeReader(asyncio.Protocol):
    def __init__(self, buffer: OutputBuffer) -> None:
        self.buffer = buffer
        self.done: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def data_received(self, data: bytes) -> None:
        self.buffer.feed(data)

    def eof_received(self) -> bool | None:
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.done.done():
            self.done.set_result(None)


@dataclass
class RunResult:
    exit_code: int | None
    stdout: str
    stderr: str
    duration_ms: int
    timed_out: bool = False
    cwd: Path | None = None
    stdout_bytes: int = 0
    stderr_bytes: int = 0
    sandboxed: bool = False

    @property
    def success(self) -> bool:
        return self.exit_code == 0 and not self.timed_out


ArgvHook = Callable[[list[str], Path], Awaitable[list[str]]]
# The environment for one process, from its argv and working directory: commands can `cd`, and
# what a program needs (e.g. git's safe configuration) can depend on where it runs.
EnvHook = Callable[[list[str], Path], Awaitable[Mapping[str, str]]]


class SpawnRefused(Exception):
    """Raised by an env hook: the process must not start; the message says why."""


@dataclass
class _Run:
    """State of one execution: the groups to kill and the shared output pipes."""

    env: Mapping[str, str]
    root: Path
    cwd: Path
    argv_hook: ArgvHook | None
    out_w: int
    err_w: int
    env_hook: EnvHook | None = None
    confinement: Confinement | None = None
    groups: set[int] = field(default_factory=set)


def kill_process_groups(groups: set[int] | Sequence[int]) -> None:
    """SIGKILL every process group (children and grandchildren of our processes) and the
    descendants that left it for a session of their own. Why those: the sandbox's inner
    process does that, and dies with its parent only once it has asked to (bubblewrap's
    --die-with-parent), so a Stop in that moment left it and its command running. The group
    is stopped first, so it forks no more while its descendants are read."""
    for pgid in list(groups):
        with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
            os.killpg(pgid, signal.SIGSTOP)
        _until_stopped(pgid)
        left = _descendants(pgid)
        with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
            os.killpg(pgid, signal.SIGKILL)
        for pid in left:
            with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
                os.kill(pid, signal.SIGKILL)
        _LIVE_GROUPS.discard(pgid)


def _state(pid: int) -> str | None:
    """The process's state letter (/proc; None where there is none, or it is gone)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b") ", 1)[1][:1].decode()
    except (OSError, IndexError):
        return None


def _until_stopped(pid: int, limit_s: float = 0.02) -> None:
    """Until the SIGSTOP took (microseconds, as a rule; never longer than ``limit_s``)."""
    deadline = time.monotonic() + limit_s
    while _state(pid) not in (None, "T", "t", "Z", "X") and time.monotonic() < deadline:
        time.sleep(0.0002)


def _descendants(pid: int) -> list[int]:
    """Every live descendant of ``pid`` (/proc's children lists; none where there are none)."""
    found: list[int] = []
    pending = [pid]
    while pending:
        parent = pending.pop()
        try:
            tasks = os.listdir(f"/proc/{parent}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                with open(f"/proc/{parent}/task/{task}/children", "rb") as fh:
                    children = [int(c) for c in fh.read().split()]
            except (OSError, ValueError):
                continue
            found.extend(children)
            pending.extend(children)
    return found


@atexit.register
def _kill_leftovers() -> None:  # background jobs must not outlive the app
    kill_process_groups(set(_LIVE_GROUPS))


def _resolve_program(name: str, env: Mapping[str, str], cwd: Path) -> str | None:
    if "/" in name:
        path = Path(name) if os.path.isabs(name) else cwd / name
        return str(path) if path.is_file() and os.access(path, os.X_OK) else None
    return shutil.which(name, path=env.get("PATH", _DEFAULT_PATH))


async def _spawn(run: _Run, argv: list[str], stdin: int, stdout: int
                 ) -> asyncio.subprocess.Process | str:
    """Start one process or return an error text (bash-like 'command not found')."""
    if run.argv_hook is not None:
        argv = await run.argv_hook(list(argv), run.cwd)
    exe = _resolve_program(argv[0], run.env, run.cwd)
    if exe is None:
        return f"{argv[0]}: command not found\n"
    env = run.env
    if run.env_hook is not None:
        try:
            env = await run.env_hook(list(argv), run.cwd)
        except SpawnRefused as exc:
            return f"{argv[0]}: not started: {exc}\n"
    if run.confinement is not None:
        # The sandbox's view of the environment too: no socket, no path it cannot see.
        exe, argv, env = run.confinement.launch(argv, exe, run.cwd, env)
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv, executable=exe, stdin=stdin, stdout=stdout, stderr=run.err_w,
            cwd=str(run.cwd), env=dict(env), start_new_session=True, close_fds=True,
        )
    except OSError as exc:
        return f"{argv[0]}: {exc.strerror or exc}\n"
    run.groups.add(proc.pid)
    _LIVE_GROUPS.add(proc.pid)
    return proc


def _builtin(run: _Run, cmd: SimpleCommand) -> tuple[int, str, str]:
    """cd / pwd: (status, stdout, stderr)."""
    if cmd.program == "pwd":
        return 0, f"{run.cwd}\n", ""
    args = [a for a in cmd.words[1:] if a != "--"]
    target = run.root if not args else (run.cwd / args[0])
    try:
        resolved = target.resolve()
    except OSError as exc:
        return 1, "", f"cd: {args[0]}: {exc.strerror or exc}\n"
    if not _is_within(resolved, run.root):
        return 1, "", (f"cd: {args[0] if args else target}: outside the project folder "
                       f"{run.root}; the working directory must stay inside it\n")
    if not resolved.is_dir():
        return 1, "", f"cd: {args[0]}: no such directory\n"
    run.cwd = resolved
    return 0, "", ""


def _write_all(fd: int, text: str) -> None:
    data = text.encode("utf-8", "replace")
    # Small messages into our own pipe; the reader drains it concurrently.
    with contextlib.suppress(OSError):
        while data:
            n = os.write(fd, data)
            data = data[n:]


async def _run_pipeline(run: _Run, commands: Sequence[SimpleCommand]) -> int:
    if len(commands) == 1 and commands[0].program in ("cd", "pwd"):
        status, out, err = _builtin(run, commands[0])
        _write_all(run.out_w, out)
        _write_all(run.err_w, err)
        return status
    procs: list[asyncio.subprocess.Process | None] = []
    statuses: list[int] = []
    prev_read = os.open(os.devnull, os.O_RDONLY)  # stdin of the first process
    try:
        for index, cmd in enumerate(commands):
            last = index == len(commands) - 1
            if last:
                out_fd, next_read = run.out_w, -1
            else:
                next_read, out_fd = os.pipe()
            try:
                if cmd.program in ("cd", "pwd"):  # the policy refuses this; be safe anyway
                    spawned: asyncio.subprocess.Process | str = f"{cmd.program}: not in a pipe\n"
                else:
                    spawned = await _spawn(run, list(cmd.words), prev_read, out_fd)
            finally:
                # The children hold their own copies; ours must not keep pipes open.
                os.close(prev_read)
                if not last:
                    os.close(out_fd)
                prev_read = next_read
            if isinstance(spawned, str):
                _write_all(run.err_w, spawned)
                procs.append(None)
                statuses.append(127)
            else:
                procs.append(spawned)
                statuses.append(0)
    finally:
        if prev_read >= 0:
            os.close(prev_read)
    for i, proc in enumerate(procs):
        if proc is not None:
            code = await proc.wait()
            statuses[i] = 128 - code if code < 0 else code
    return statuses[-1]


async def _run_steps(run: _Run, steps: Sequence[ChainStep]) -> int:
    status = 0
    for step in steps:
        if step.op == "&&" and status != 0:
            continue
        if step.op == "||" and status == 0:
            continue
        status = await _run_pipeline(run, step.pipeline.commands)
    return status


async def run_steps(
    steps: Sequence[ChainStep],
    *,
    cwd: Path,
    root: Path,
    timeout_s: float,
    max_output_bytes: int,
    env: Mapping[str, str] | None = None,
    argv_hook: ArgvHook | None = None,
    env_hook: EnvHook | None = None,
    stdout_buffer: OutputBuffer | None = None,
    stderr_buffer: OutputBuffer | None = None,
    confinement: Confinement | None = None,
) -> RunResult:
    """Execute a parsed (and policy-checked) command; see the module docstring.

    With ``confinement`` every process runs in the sandbox, and a failure that looks like the
    sandbox's doing (a read-only file system, no network) gets a note saying so."""
    loop = asyncio.get_running_loop()
    started = time.monotonic()
    out_buf = stdout_buffer or OutputBuffer(max_output_bytes)
    err_buf = stderr_buffer or OutputBuffer(max_output_bytes)
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    run = _Run(env=env if env is not None else minimal_env(project_root=root), root=root,
               cwd=cwd, argv_hook=argv_hook, out_w=out_w, err_w=err_w, env_hook=env_hook,
               confinement=confinement)
    readers: list[_PipeReader] = []
    transports: list[asyncio.BaseTransport] = []
    for fd, buf in ((out_r, out_buf), (err_r, err_buf)):
        reader = _PipeReader(buf)
        transport, _ = await loop.connect_read_pipe(functools.partial(_same, reader),
                                                    os.fdopen(fd, "rb", buffering=0))
        readers.append(reader)
        transports.append(transport)
    timed_out = False
    status: int | None = None
    try:
        try:
            status = await asyncio.wait_for(_run_steps(run, steps), timeout=timeout_s)
        except TimeoutError:
            timed_out = True
    finally:
        # Normal end, timeout or cancellation: nothing we started may keep running.
        kill_process_groups(run.groups)
        for fd in (out_w, err_w):
            with contextlib.suppress(OSError):
                os.close(fd)
        try:
            # Our write ends are closed and the groups are dead, so EOF comes promptly unless a
            # process escaped its group while holding the pipe; do not wait for it forever.
            await asyncio.wait_for(asyncio.gather(*(r.done for r in readers)), timeout=2.0)
        except (TimeoutError, asyncio.CancelledError):
            pass
        finally:
            for pipe_transport in transports:
                pipe_transport.close()
    stderr = err_buf.text()
    if confinement is not None and status not in (0, None):
        note = confinement.explain(stderr)
        if note:
            stderr += f"\n{note}"
    if timed_out:
        stderr += (f"\n[timed out after {timeout_s:g} s: the command and its child processes "
                   "were killed]")
    return RunResult(
        exit_code=None if timed_out else status,
        stdout=out_buf.text(),
        stderr=stderr,
        duration_ms=int((time.monotonic() - started) * 1000),
        timed_out=timed_out,
        cwd=run.cwd,
        stdout_bytes=out_buf.total,
        stderr_bytes=err_buf.total,
        sandboxed=confinement is not None,
    )


async def run_argv(
    argv: Sequence[str],
    *,
    cwd: Path,
    timeout_s: float,
    max_output_bytes: int,
    env: Mapping[str, str] | None = None,
    root: Path | None = None,
    confinement: Confinement | None = None,
) -> RunResult:
    """Run one argv (no parsing involved) with the same isolation, caps and kill rules."""
    step = ChainStep(None, Pipeline([SimpleCommand(list(argv), " ".join(argv))]))
    return await run_steps([step], cwd=cwd, root=root or cwd, timeout_s=timeout_s,
                           max_output_bytes=max_output_bytes, env=env, confinement=confinement)

