"""stdio MCP servers in the OS sandbox, opt-in per server (``"sandbox"`` in its entry).

The config key is parsed, validated and kept; a real server (tests/mcp_servers) opted in starts
under bubblewrap, answers calls, and cannot write outside its write folders — proved by looking
at the disk afterwards; one not opted in runs as before and can. Without a working sandbox a
server that opted in does not start when the sandbox is required, and says it is not
sandboxed otherwise.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from app.core.sandbox import Sandbox, SandboxStatus, probe_sandbox
from app.core.sensitive_paths import sensitive_paths
from app.core.tools.base import ToolContext
from app.core.tools.providers.mcp.config.model import (
    McpConfigError,
    McpSandbox,
    McpServerConfig,
    dump_mcp_config,
)
from app.core.tools.providers.mcp.config.schema import parse_mcp_config
from app.core.tools.providers.mcp.config.store import McpConfigStore
from app.core.tools.providers.mcp.provider import McpProvider
from app.core.tools.providers.mcp.tool_specs import spec_for_tool
from app.core.tools.providers.mcp.transport import resolve_command, stdio_launch
from tests.mcp_servers import DEMO_SERVER, demo_server_entry

WRITER_SERVER = Path(__file__).parents[2] / "mcp_servers" / "writer_server.py"
STATUS = probe_sandbox()
needs_sandbox = pytest.mark.skipif(not STATUS.available,
                                   reason=f"no sandbox on this machine: {STATUS.reason}")
UNAVAILABLE = SandboxStatus.unavailable("bubblewrap is not installed (test)")


def _configs(**entries: object) -> dict[str, McpServerConfig]:
    return parse_mcp_config({"mcpServers": entries}).servers


def _errors(entry: dict[str, object]) -> list[str]:
    with pytest.raises(McpConfigError) as caught:
        parse_mcp_config({"mcpServers": {"s": entry}})
    return caught.value.errors


def _sandbox(required: bool = True) -> Sandbox:
    return Sandbox(STATUS, required, sensitive_paths(extra=[os.environ["TEBIKI_DATA_DIR"]]))


def _writer_entry(**extra: object) -> dict[str, object]:
    entry: dict[str, object] = {"command": sys.executable, "args": [str(WRITER_SERVER)]}
    entry.update(extra)
    return entry


@pytest.fixture
def ctx(project: Path) -> ToolContext:
    return ToolContext(project_root=project)


@pytest.fixture
def visible():
    """A folder outside /tmp (the sandbox's /tmp is private, so a folder there would be out of
    reach for that reason alone, not because of the write folders under test)."""
    folder = Path(tempfile.mkdtemp(prefix="tebiki-mcp-sandbox-", dir="/var/tmp")).resolve()
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


# -- the config key ----------------------------------------------------------------------------


def test_sandbox_key_forms_parse():
    servers = _configs(
        plain=demo_server_entry(),
        on=demo_server_entry(sandbox=True),
        off=demo_server_entry(sandbox=False),
        empty=demo_server_entry(sandbox={}),
        full=demo_server_entry(sandbox={"network": True,
                                        "write_folders": ["~/notes", "/var/tmp/x"]}),
    )
    assert servers["plain"].sandbox is None
    assert servers["off"].sandbox is None
    assert servers["on"].sandbox == McpSandbox()
    assert servers["empty"].sandbox == McpSandbox()
    assert servers["full"].sandbox == McpSandbox(network=True,
                                                 write_folders=("~/notes", "/var/tmp/x"))


def test_sandbox_key_round_trips_through_to_json_and_the_store(db):
    from app.core.store.settings import SettingsRepository

    servers = _configs(
        on=demo_server_entry(sandbox=True),
        net=demo_server_entry(sandbox={"network": True}),
        full=demo_server_entry(cwd="/var/tmp",
                               sandbox={"network": False, "write_folders": ["~/a", "/b"]}),
        plain=demo_server_entry(),
    )
    dumped = dump_mcp_config(servers)["mcpServers"]
    assert dumped["on"]["sandbox"] is True
    assert dumped["net"]["sandbox"] == {"network": True}
    assert dumped["full"]["sandbox"] == {"write_folders": ["~/a", "/b"]}  # ~ kept as written
    assert "sandbox" not in dumped["plain"]
    assert parse_mcp_config(dump_mcp_config(servers)).servers == servers
    store = McpConfigStore(SettingsRepository(db), get_secret_fn=lambda _: None,
                           set_secret_fn=lambda *_: None)
    store.save(servers)
    assert store.load() == servers


@pytest.mark.parametrize(("sandbox", "expected"), [
    ("yes", "sandbox: must be true, false or an object"),
    (1, "sandbox: must be true, false or an object"),
    ({"network": "no"}, "sandbox.network: must be true or false"),
    ({"write_folders": "/var/tmp"}, "sandbox.write_folders: must be a list of strings"),
    ({"write_folders": [3]}, "sandbox.write_folders[0]: must be a string"),
    ({"write_folders": ["relative/dir"]}, "must be an absolute folder (or start with ~)"),
    ({"write_folders": [" "]}, "sandbox.write_folders[0]: must not be empty"),
    ({"writeFolders": ["/x"]}, "sandbox.writeFolders: unknown key"),
])
def test_sandbox_key_is_validated(sandbox, expected):
    errors = _errors(demo_server_entry(sandbox=sandbox))
    assert any(expected in e for e in errors), errors
    assert all(e.startswith('mcpServers["s"].sandbox') for e in errors), errors


def test_http_servers_refuse_the_sandbox_key():
    errors = _errors({"url": "https://example.com/mcp", "sandbox": True})
    assert any("sandbox: only stdio servers" in e for e in errors), errors


# -- the command line --------------------------------------------------------------------------


def test_command_is_resolved_like_the_sdk_would(tmp_path):
    bin_dir = Path(sys.executable).parent
    assert resolve_command(Path(sys.executable).name, {"PATH": str(bin_dir)}, None) == \
        os.path.abspath(sys.executable)
    tool = tmp_path / "tool.sh"
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    assert resolve_command("./tool.sh", {"PATH": ""}, str(tmp_path)) == str(tool)
    with pytest.raises(McpConfigError, match="not found"):
        resolve_command("no-such-program-tebiki", {"PATH": str(bin_dir)}, None)


def test_a_server_that_does_not_opt_in_is_launched_as_configured():
    cfg = _configs(s={"command": "npx", "args": ["-y", "pkg"], "cwd": "~/x"})["s"]
    launch = stdio_launch(cfg, _sandbox(), {}, {"PATH": "/usr/bin"})
    assert (launch.command, launch.args) == ("npx", ["-y", "pkg"])
    assert launch.cwd == os.path.expanduser("~/x") and not launch.sandboxed and launch.note == ""


@needs_sandbox
def test_an_opted_in_server_is_launched_through_bwrap(visible):
    cwd, extra = visible / "cwd", visible / "extra"
    cwd.mkdir()
    extra.mkdir()
    cfg = _configs(s=demo_server_entry(cwd=str(cwd), sandbox={"write_folders": [str(extra)]}))["s"]
    launch = stdio_launch(cfg, _sandbox(), {}, {"PATH": os.environ.get("PATH", "")})
    assert launch.sandboxed and launch.command == STATUS.executable
    assert launch.note == STATUS.summary
    args = launch.args
    assert args[args.index("--") + 1:] == [os.path.abspath(sys.executable), str(DEMO_SERVER)]
    assert ["--bind", str(cwd), str(cwd)] == args[args.index(str(cwd)) - 1:][:3]
    assert "--bind" in args and str(extra) in args
    assert "--share-net" not in args
    assert args[args.index("--chdir") + 1] == str(cwd)


# -- real servers ------------------------------------------------------------------------------


@needs_sandbox
async def test_a_sandboxed_demo_server_starts_lists_and_answers(ctx):
    provider = McpProvider(_configs(demo=demo_server_entry(sandbox=True)), sandbox=_sandbox())
    try:
        await provider.start()
        status = provider.server_status("demo")
        assert status.state == "running", status
        assert STATUS.summary in status.message  # "8 tools; sandboxed (bubblewrap)"
        specs = {t.spec.name: t.spec for t in provider.tools()}
        assert {"demo__echo", "demo__add", "demo__pid"} <= set(specs)
        assert all(s.runs_programs and s.sandboxed and not s.needs_network
                   for s in specs.values())
        assert (await provider.call("demo", "echo", {"text": "hi"}, ctx)).content == "hi"
        assert (await provider.call("demo", "add", {"a": 2, "b": 3}, ctx)).content == "5"
        # Its own PID namespace: the server is one of the first processes it can see.
        pid = await provider.call("demo", "pid", {}, ctx)
        assert int(pid.content) < 10, pid.content
    finally:
        await provider.aclose()


@needs_sandbox
async def test_a_sandboxed_server_writes_only_in_its_write_folders(ctx, visible):
    allowed, outside = visible / "allowed", visible / "outside"
    allowed.mkdir()
    outside.mkdir()
    entry = _writer_entry(sandbox={"write_folders": [str(allowed)]})
    provider = McpProvider(_configs(w=entry), sandbox=_sandbox())
    try:
        await provider.start()
        assert provider.status("w")[0] == "running", provider.server_status("w")
        inside = await provider.call("w", "write", {"path": str(allowed / "ok.txt")}, ctx)
        assert not inside.is_error, inside.content
        refused = await provider.call("w", "write", {"path": str(outside / "escape.txt")}, ctx)
        home = await provider.call("w", "write", {"path": str(visible / "top.txt")}, ctx)
    finally:
        await provider.aclose()
    assert (allowed / "ok.txt").read_text() == "written by writer_server"
    assert refused.is_error and not (outside / "escape.txt").exists()
    assert home.is_error and not (visible / "top.txt").exists()


@needs_sandbox
async def test_the_cwd_of_a_sandboxed_server_is_writable(ctx, visible):
    cwd = visible / "work"
    cwd.mkdir()
    provider = McpProvider(_configs(w=_writer_entry(cwd=str(cwd), sandbox=True)),
                           sandbox=_sandbox())
    try:
        await provider.start()
        assert provider.status("w")[0] == "running", provider.server_status("w")
        result = await provider.call("w", "write", {"path": "relative.txt"}, ctx)
        assert not result.is_error, result.content
        blocked = await provider.call("w", "write", {"path": str(visible / "no.txt")}, ctx)
    finally:
        await provider.aclose()
    assert (cwd / "relative.txt").exists()
    assert blocked.is_error and not (visible / "no.txt").exists()


async def test_a_server_that_does_not_opt_in_runs_as_before(ctx, visible):
    target = visible / "outside.txt"
    provider = McpProvider(_configs(w=_writer_entry()), sandbox=_sandbox())
    try:
        await provider.start()
        status = provider.server_status("w")
        assert status.state == "running" and status.message == "2 tools", status
        specs = [t.spec for t in provider.tools()]
        assert specs and all(s.runs_programs and not s.sandboxed for s in specs)
        result = await provider.call("w", "write", {"path": str(target)}, ctx)
    finally:
        await provider.aclose()
    assert not result.is_error, result.content
    assert target.read_text() == "written by writer_server"


async def test_required_but_unavailable_sandbox_does_not_start_the_server(ctx, visible):
    target = visible / "never.txt"
    provider = McpProvider(_configs(w=_writer_entry(sandbox=True),
                                    other=_writer_entry()),
                           sandbox=Sandbox(UNAVAILABLE, required=True))
    try:
        await provider.start()
        status = provider.server_status("w")
        assert status.state == "failed", status
        assert status.message.startswith("not started: the sandbox is required"), status
        assert UNAVAILABLE.reason in status.message
        assert [t for t in provider.tools() if t.server == "w"] == []
        result = await provider.call("w", "write", {"path": str(target)}, ctx)
        assert result.is_error and "not started: the sandbox is required" in result.content
        # A server that did not opt in is not affected by the sandbox setting.
        assert provider.status("other")[0] == "running"
    finally:
        await provider.aclose()
    assert not target.exists()


async def test_unavailable_sandbox_not_required_starts_unsandboxed_and_says_so(ctx):
    provider = McpProvider(_configs(demo=demo_server_entry(sandbox=True)),
                           sandbox=Sandbox(UNAVAILABLE, required=False))
    try:
        await provider.start()
        status = provider.server_status("demo")
        assert status.state == "running", status
        assert f"not sandboxed: {UNAVAILABLE.reason}" in status.message
        specs = [t.spec for t in provider.tools()]
        assert specs and all(s.runs_programs and not s.sandboxed for s in specs)
        assert (await provider.call("demo", "echo", {"text": "x"}, ctx)).content == "x"
    finally:
        await provider.aclose()


@needs_sandbox
async def test_a_missing_command_of_a_sandboxed_server_fails_with_a_clear_message():
    provider = McpProvider(_configs(gone={"command": "no-such-mcp-server-tebiki",
                                          "sandbox": True}), sandbox=_sandbox())
    try:
        await provider.start()
        status = provider.server_status("gone")
        assert status.state == "failed"
        assert "'no-such-mcp-server-tebiki' was not found" in status.message, status
    finally:
        await provider.aclose()


async def test_the_sandbox_setting_reaches_every_connection_from_the_next_start(ctx):
    provider = McpProvider(_configs(demo=demo_server_entry(sandbox=True)),
                           sandbox=Sandbox(UNAVAILABLE, required=False))
    try:
        provider.sandbox = Sandbox(UNAVAILABLE, required=True)
        await provider.start()
        assert provider.server_status("demo").message.startswith("not started")
        provider.sandbox = Sandbox(UNAVAILABLE, required=False)
        await provider.restart("demo")
        assert provider.status("demo")[0] == "running"
    finally:
        await provider.aclose()


def test_build_services_gives_the_app_sandbox_to_the_mcp_provider(db, fresh_data_dir):
    from app.core.services import build_services

    services = build_services(db, fresh_data_dir)
    assert services.mcp is not None
    assert services.mcp.sandbox == services.sandbox
    services.set_sandbox_required(not services.sandbox.required)
    assert services.mcp.sandbox == services.sandbox


# -- spec flags --------------------------------------------------------------------------------


def test_spec_flags_default_to_a_server_that_starts_no_program():
    spec = spec_for_tool("web", "web__t", {"name": "t"})
    assert not spec.runs_programs and not spec.sandboxed and not spec.needs_network
    spec = spec_for_tool("s", "s__t", {"name": "t"}, runs_programs=True, sandboxed=True,
                         network=True)
    assert spec.runs_programs and spec.sandboxed and spec.needs_network


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


async def test_tools_of_an_http_server_start_no_program():
    port = _free_port()
    server = subprocess.Popen([sys.executable, str(DEMO_SERVER), "--http", str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "HTTP demo server did not start"
                time.sleep(0.05)
        provider = McpProvider(_configs(web={"url": f"http://127.0.0.1:{port}/mcp"}),
                               sandbox=_sandbox())
        try:
            await provider.start()
            assert provider.status("web")[0] == "running", provider.server_status("web")
            specs = [t.spec for t in provider.tools()]
            assert specs and not any(s.runs_programs or s.sandboxed for s in specs)
        finally:
            await provider.aclose()
    finally:
        server.terminate()
        server.wait(timeout=10)
