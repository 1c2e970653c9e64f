"""Custom TOML tools in the real sandbox, proved by side effects: the program writes only in
the tool's write_folders (the project folder by default), reaches the network only with
``network = true``, a project's tools.toml cannot widen the wall, and when the sandbox is
required but missing nothing starts. Plus the loading checks of the two new keys.

Every check looks at the world outside the sandbox afterwards, never at a policy answer.
"""

from __future__ import annotations

import json
import socket
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from app.core.sandbox import Sandbox, SandboxStatus
from app.core.sensitive_paths import sensitive_paths
from app.core.tools.base import ToolContext, ToolResult
from app.core.tools.default_registry import custom_tools_provider
from app.core.tools.providers.custom import (
    PROJECT_SERVER_ID,
    PROJECT_TOOLS_FILE,
    CustomTool,
    ToolDefinitionError,
    build_tool,
    load_tools_file,
)
from tests.sandbox_support import PYTHON, STATUS, requires_sandbox

pytestmark = requires_sandbox

# Programs as templates: the code is one literal word (no braces: those are placeholders).
WRITE = (f"{PYTHON} -c \"import sys; open(sys.argv[1], 'w').write('x')\" {{path}}",
         {"path": {"type": "string", "required": True}})
CONNECT = (f"{PYTHON} -c \"import socket, sys; socket.create_connection(('127.0.0.1', "
           f"int(sys.argv[1])), 3).sendall(b'hello')\" {{port}}",
           {"port": {"type": "integer", "required": True}})


@pytest.fixture
def sandbox(visible: Path) -> Sandbox:
    assert STATUS.available, STATUS.reason
    home = visible / "home"
    home.mkdir()
    return Sandbox(STATUS, required=True, hidden=sensitive_paths(home=home))


def _tool(template: tuple[str, dict[str, Any]], **keys: Any) -> CustomTool:
    command, params = template
    return build_tool("t", {"description": "test tool", "command": command,
                            "parameters": params, **keys})


def _ctx(project: Path, sandbox: Sandbox) -> ToolContext:
    return ToolContext(project_root=project, sandbox=sandbox, shell_timeout_s=60)


async def _run(tool: CustomTool, ctx: ToolContext, **values: Any) -> dict[str, Any]:
    result = await tool.execute(values, ctx)
    assert not result.is_error, result.content
    payload: dict[str, Any] = json.loads(result.content)
    return payload


# -- writing --------------------------------------------------------------------------------

async def test_cannot_write_outside_the_project(project: Path, sandbox: Sandbox,
                                                outside: Path) -> None:
    target = outside / "planted.txt"
    out = await _run(_tool(WRITE), _ctx(project, sandbox), path=str(target))
    assert not target.exists()
    assert out["sandboxed"] is True and out["success"] is False
    assert "[sandbox]" in out["stderr"]  # the model is told it was the sandbox


async def test_writes_inside_the_project(project: Path, sandbox: Sandbox) -> None:
    out = await _run(_tool(WRITE), _ctx(project, sandbox), path="made.txt")
    assert out["success"] is True and out["sandboxed"] is True, out
    assert (project / "made.txt").read_text() == "x"


async def test_write_folders_move_the_wall(project: Path, sandbox: Sandbox,
                                           outside: Path) -> None:
    tool = _tool(WRITE, write_folders=[str(outside)])
    ctx = _ctx(project, sandbox)
    there = await _run(tool, ctx, path=str(outside / "there.txt"))
    assert there["success"] is True, there
    assert (outside / "there.txt").read_text() == "x"
    here = await _run(tool, ctx, path="here.txt")
    assert here["success"] is False
    assert not (project / "here.txt").exists()  # the project is read-only for this tool


async def test_an_empty_write_folders_writes_nowhere(project: Path, sandbox: Sandbox) -> None:
    (project / "build").mkdir()
    nowhere = _tool(WRITE, write_folders=[])
    out = await _run(nowhere, _ctx(project, sandbox), path="build/c.txt")
    assert out["success"] is False and out["sandboxed"] is True
    assert not (project / "build" / "c.txt").exists()


# The project is mounted read-only around a writable subfolder of it: the subfolder's bind
# must come after the project's, or the project's read-only bind would cover it.
async def test_a_relative_write_folder_inside_the_project(project: Path,
                                                          sandbox: Sandbox) -> None:
    (project / "build").mkdir()
    ctx = _ctx(project, sandbox)
    build_only = _tool(WRITE, write_folders=["build"])
    assert (await _run(build_only, ctx, path="b.txt"))["success"] is False
    assert not (project / "b.txt").exists()
    out = await _run(build_only, ctx, path="build/a.txt")
    assert out["success"] is True, out
    assert (project / "build" / "a.txt").read_text() == "x"


async def test_project_git_stays_read_only(project: Path, sandbox: Sandbox) -> None:
    (project / ".git").mkdir()
    out = await _run(_tool(WRITE), _ctx(project, sandbox), path=".git/config")
    assert out["success"] is False
    assert not (project / ".git" / "config").exists()


# -- network ------------------------------------------------------------------------------------

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


async def test_without_network_no_connection_reaches_a_listener(project: Path,
                                                                sandbox: Sandbox) -> None:
    server, port = _listener()
    with server:
        out = await _run(_tool(CONNECT), _ctx(project, sandbox), port=port)
        assert _received(server) is None
    assert out["success"] is False and out["sandboxed"] is True


async def test_network_true_lets_the_connection_through(project: Path,
                                                        sandbox: Sandbox) -> None:
    server, port = _listener()
    with server:
        out = await _run(_tool(CONNECT, network=True), _ctx(project, sandbox), port=port)
        assert _received(server) == b"hello"
    assert out["success"] is True and out["sandboxed"] is True, out


# -- no sandbox ---------------------------------------------------------------------------------

async def test_required_but_unavailable_runs_nothing(project: Path) -> None:
    marker = project / "marker.txt"
    ctx = _ctx(project, Sandbox(SandboxStatus.unavailable("test"), required=True))
    result: ToolResult = await _tool(WRITE).execute({"path": str(marker)}, ctx)
    assert result.is_error
    assert "t was not run" in result.content
    assert "not available: test" in result.content  # says why
    assert not marker.exists()


async def test_not_required_and_unavailable_runs_unsandboxed(project: Path) -> None:
    marker = project / "marker.txt"
    ctx = _ctx(project, Sandbox(SandboxStatus.unavailable("test"), required=False))
    out = await _run(_tool(WRITE), ctx, path=str(marker))
    assert out["success"] is True and out["sandboxed"] is False, out
    assert marker.read_text() == "x"


# -- a project's tools.toml cannot widen the wall ---------------------------------------------

async def test_a_project_tool_cannot_write_outside_the_project(project: Path, sandbox: Sandbox,
                                                               outside: Path) -> None:
    tool = replace(_tool(WRITE, write_folders=[str(outside)]), server_id=PROJECT_SERVER_ID)
    target = outside / "planted.txt"
    result = await tool.execute({"path": str(target)}, _ctx(project, sandbox))
    assert result.is_error and "cannot make folders outside the project" in result.content
    assert not target.exists()


def test_a_project_file_naming_outside_folders_is_not_loaded(fresh_data_dir: Path,
                                                             project: Path) -> None:
    (project / PROJECT_TOOLS_FILE).parent.mkdir()
    (project / PROJECT_TOOLS_FILE).write_text(
        '[inside]\ndescription = "d"\ncommand = "ls"\nwrite_folders = [".", "build"]\n\n'
        '[escape]\ndescription = "d"\ncommand = "ls"\nwrite_folders = ["../.."]\n\n'
        '[home]\ndescription = "d"\ncommand = "ls"\nwrite_folders = ["~"]\n')
    (fresh_data_dir / "tools.toml").write_text(
        '[mine]\ndescription = "d"\ncommand = "ls"\nwrite_folders = ["~"]\n')
    provider = custom_tools_provider(fresh_data_dir, project)
    assert {t.spec.name for t in provider.tools()} == {"mine", "inside"}
    assert len(provider.load_errors) == 2
    assert all("can only make folders inside the project writable" in e
               for e in provider.load_errors)


# -- loading the new keys -------------------------------------------------------------------

def test_keys_load_from_toml(tmp_path: Path) -> None:
    path = tmp_path / "tools.toml"
    path.write_text('[web]\ndescription = "d"\ncommand = "curl -s https://example.com"\n'
                    'network = true\nwrite_folders = ["out", "/var/tmp/x"]\n\n'
                    '[plain]\ndescription = "d"\ncommand = "ls"\n')
    tools, errors = load_tools_file(path)
    assert errors == []
    web, plain = tools
    assert (web.network, web.write_folders) == (True, ("out", "/var/tmp/x"))
    assert web.spec.needs_network and web.spec.sandboxed and web.spec.runs_programs
    assert (plain.network, plain.write_folders) == (False, None)  # no network, the project


@pytest.mark.parametrize("keys, error", [
    ({"network": "yes"}, "network must be true or false"),
    ({"network": 1}, "network must be true or false"),
    ({"write_folders": "."}, "write_folders must be a list of folders"),
    ({"write_folders": [1]}, "write_folders: 1 is not a folder"),
    ({"write_folders": [""]}, "is not a folder"),
    ({"write_folders": ["/etc"]}, "/etc is a system folder"),
    ({"write_folders": ["/"]}, "/ is a system folder"),
])
def test_bad_keys_are_clear_errors(keys: dict[str, Any], error: str) -> None:
    with pytest.raises(ToolDefinitionError) as info:
        build_tool("t", {"description": "d", "command": "ls", **keys})
    assert error in str(info.value)


def test_a_bad_key_names_its_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "tools.toml"
    path.write_text('[ok]\ndescription = "d"\ncommand = "ls"\n\n'
                    '[bad]\ndescription = "d"\ncommand = "ls"\nnetwork = "on"\n')
    tools, errors = load_tools_file(path)
    assert [t.name for t in tools] == ["ok"]
    assert len(errors) == 1 and f"{path}:5: tool 'bad': network must be" in errors[0]
