"""self_eval's checks in the real sandbox, proved by side effects: a check cannot write outside
its write folders or change .git, reaches the network only when the person turned it on, and
when the sandbox is required but missing, no check starts at all.

Every check looks at the world outside the sandbox afterwards, never at a policy answer.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
from pathlib import Path
from typing import Any

import pytest

from app.core.sandbox import Sandbox, SandboxStatus
from app.core.sensitive_paths import sensitive_paths
from app.core.tools.base import ToolContext, ToolResult
from app.core.tools.builtin.self_eval import SelfEvalTool
from tests.sandbox_support import STATUS, py, requires_sandbox

pytestmark = requires_sandbox



@pytest.fixture
def sandbox(visible: Path) -> Sandbox:
    assert STATUS.available, STATUS.reason
    home = visible / "home"
    home.mkdir()
    return Sandbox(STATUS, required=True, hidden=sensitive_paths(home=home))



def _ctx(project: Path, sandbox: Sandbox, checks: dict[str, str | None],
         **config: object) -> ToolContext:
    return ToolContext(project_root=project, sandbox=sandbox, shell_timeout_s=60,
                       tool_config={"self_eval": {"checks": checks, **config}})


async def _result(ctx: ToolContext, checks: list[str]) -> ToolResult:
    return await SelfEvalTool().execute({"checks": checks}, ctx)


async def _run(ctx: ToolContext, checks: list[str]) -> dict[str, Any]:
    result = await _result(ctx, checks)
    assert not result.is_error, result.content
    payload: dict[str, Any] = json.loads(result.content)
    return payload


async def test_a_check_cannot_write_outside_the_project(project: Path, sandbox: Sandbox,
                                                        outside: Path) -> None:
    target = outside / "planted.txt"
    ctx = _ctx(project, sandbox, {"build": py(f"open({str(target)!r}, 'w').write('x')")})
    out = await _run(ctx, ["build"])
    assert not target.exists()
    assert out["sandboxed"] is True
    build = out["checks"]["build"]
    assert build["passed"] is False and out["all_passed"] is False
    assert "[sandbox]" in build["stderr"]  # the model is told it was the sandbox


async def test_a_check_writes_inside_the_project(project: Path, sandbox: Sandbox) -> None:
    ctx = _ctx(project, sandbox, {
        "build": py("open('made.txt', 'w').write('ok')"),
        "test": py("import tempfile; tempfile.NamedTemporaryFile(dir='/tmp').write(b'x')")})
    out = await _run(ctx, ["build", "test"])
    assert out["all_passed"] is True, out
    assert out["sandboxed"] is True
    assert (project / "made.txt").read_text() == "ok"


async def test_the_write_folders_setting_moves_the_wall(project: Path, sandbox: Sandbox,
                                                        outside: Path) -> None:
    there, here = outside / "there.txt", project / "here.txt"
    ctx = _ctx(project, sandbox, {"build": py(f"open({str(there)!r}, 'w').write('x')"),
                                  "lint": py(f"open({str(here)!r}, 'w').write('x')")},
               write_folders=[str(outside)])
    out = await _run(ctx, ["build", "lint"])
    assert out["checks"]["build"]["passed"] is True, out
    assert there.read_text() == "x"
    assert out["checks"]["lint"]["passed"] is False
    assert not here.exists()  # the project itself is read-only now


async def test_git_stays_read_only(project: Path, sandbox: Sandbox) -> None:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    subprocess.run(["git", "init", "-q"], cwd=project, env=env, check=True)
    config = (project / ".git" / "config").read_bytes()
    hook = project / ".git" / "hooks" / "pre-commit"
    ctx = _ctx(project, sandbox, {
        "build": py("open('.git/config', 'a').write('[core]\\n\\tfsmonitor = touch pwned\\n')"),
        "lint": py("open('.git/hooks/pre-commit', 'w').write('#!/bin/sh\\n')")})
    out = await _run(ctx, ["build", "lint"])
    assert not out["checks"]["build"]["passed"] and not out["checks"]["lint"]["passed"]
    assert (project / ".git" / "config").read_bytes() == config
    assert not hook.exists()


def _listener() -> tuple[socket.socket, int]:
    server = socket.create_server(("127.0.0.1", 0))
    return server, server.getsockname()[1]


def _received(server: socket.socket) -> bytes | None:
    """What a connection that reached the listener sent (None: no connection came). The
    kernel completes the handshake into the backlog, so accepting afterwards sees it."""
    server.setblocking(False)
    try:
        conn, _ = server.accept()
    except BlockingIOError:
        return None
    with conn:
        conn.settimeout(5)
        return conn.recv(100)


def _connect(port: int) -> str:
    return py(f"import socket; socket.create_connection(('127.0.0.1', {port}), 3)"
               ".sendall(b'hello')")


async def test_no_network_unless_turned_on(project: Path, sandbox: Sandbox) -> None:
    server, port = _listener()
    with server:
        out = await _run(_ctx(project, sandbox, {"test": _connect(port)}), ["test"])
        assert _received(server) is None
    assert out["checks"]["test"]["passed"] is False
    server, port = _listener()
    with server:
        out = await _run(_ctx(project, sandbox, {"test": _connect(port)}, network=True),
                         ["test"])
        assert _received(server) == b"hello"
    assert out["checks"]["test"]["passed"] is True, out


async def test_required_but_unavailable_runs_nothing(project: Path) -> None:
    marker = project / "marker.txt"
    sandbox = Sandbox(SandboxStatus.unavailable("test"), required=True)
    ctx = _ctx(project, sandbox, {"build": py(f"open({str(marker)!r}, 'w').write('x')")})
    result = await _result(ctx, ["build"])
    assert result.is_error
    assert "did not run the checks" in result.content
    assert "not available: test" in result.content  # says why
    assert not marker.exists()


async def test_not_required_and_unavailable_runs_unsandboxed(project: Path) -> None:
    marker = project / "marker.txt"
    sandbox = Sandbox(SandboxStatus.unavailable("test"), required=False)
    ctx = _ctx(project, sandbox, {"build": py(f"open({str(marker)!r}, 'w').write('x')")})
    out = await _run(ctx, ["build"])
    assert out["all_passed"] is True, out
    assert out["sandboxed"] is False
    assert marker.read_text() == "x"
