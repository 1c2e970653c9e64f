"""McpProvider against a real MCP server (tests/mcp_servers/demo_server.py) over stdio and HTTP."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from app.core.permissions.rules import PermissionRule
from app.core.permissions.service import ToolPermissionService
from app.core.tools.base import RiskLevel, ToolCategory, ToolContext
from app.core.tools.default_registry import default_registry
from app.core.tools.providers.mcp.config.model import McpServerConfig
from app.core.tools.providers.mcp.config.schema import parse_mcp_config
from app.core.tools.providers.mcp.provider import McpProvider
from app.core.tools.providers.mcp.tool_specs import VALID_TOOL_NAME
from tests.mcp_servers import DEMO_SERVER, demo_server_entry

DEMO_TOOLS = {"echo", "add", "fail", "crash", "slow", "media", "pid", "grow"}


def _configs(**entries: dict) -> dict[str, McpServerConfig]:
    return parse_mcp_config({"mcpServers": entries}).servers


def _children() -> set[int]:
    """Live or zombie child processes of this test process (Linux /proc)."""
    me, found = os.getpid(), set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == me:
            found.add(int(entry.name))
    return found


@pytest.fixture
def ctx(project: Path) -> ToolContext:
    return ToolContext(project_root=project)


@pytest.fixture
async def demo():
    """A started provider with one demo server; the registry refreshes on tool changes."""
    registry = default_registry()
    provider = McpProvider(_configs(demo=demo_server_entry()), on_tools_changed=registry.refresh)
    registry.register_provider(provider)
    await provider.start()
    assert provider.status("demo")[0] == "running", provider.server_status("demo")
    yield provider, registry
    await provider.aclose()


async def test_lists_tools_under_their_server_with_schema_and_annotations(demo):
    provider, registry = demo
    specs = {s.name: s for s in registry.specs() if s.server_id == "demo"}
    assert set(specs) == {f"demo__{t}" for t in DEMO_TOOLS}
    assert all(VALID_TOOL_NAME.match(name) for name in specs)
    add = specs["demo__add"]
    assert add.input_schema["required"] == ["a", "b"]
    assert add.input_schema["properties"]["a"]["type"] == "integer"
    assert add.description == "Add two integers."
    assert add.annotations["readOnlyHint"] is True
    assert (add.category, add.risk) == (ToolCategory.READ_ONLY, RiskLevel.LOW)
    crash = specs["demo__crash"]
    assert crash.annotations == {"destructiveHint": True}
    assert (crash.category, crash.risk) == (ToolCategory.COMPOSITE, RiskLevel.HIGH)
    assert registry.provider_of("demo__echo") is provider
    assert registry.get("read_file").spec.server_id == "builtin"  # never shadowed


async def test_calls_return_text_and_validate_input(demo, ctx):
    _provider, registry = demo
    assert (await registry.execute("demo__echo", {"text": "héllo"}, ctx)).content == "héllo"
    result = await registry.execute("demo__add", {"a": 2, "b": 40}, ctx)
    assert (result.content, result.is_error) == ("42", False)
    bad = await registry.execute("demo__add", {"a": "two"}, ctx)
    assert bad.is_error and "Invalid input for demo__add" in bad.content


async def test_error_result_is_an_error(demo, ctx):
    _provider, registry = demo
    result = await registry.execute("demo__fail", {"message": "disk on fire"}, ctx)
    assert result.is_error and "disk on fire" in result.content


async def test_images_pass_on_and_resources_become_text(demo, ctx):
    _provider, registry = demo
    result = await registry.execute("demo__media", {}, ctx)
    assert not result.is_error
    assert result.content.startswith("here is a picture")
    assert "[image 1: image/png, 12 bytes]" in result.content  # the image travels beside it
    assert [i.media_type for i in result.images] == ["image/png"]
    assert "[resource file:///notes.txt]\nresource body" in result.content


async def test_crash_mid_call_is_an_error_with_stderr_and_marks_the_server_failed(demo, ctx):
    provider, registry = demo
    pid = int((await registry.execute("demo__pid", {}, ctx)).content)
    result = await registry.execute("demo__crash", {}, ctx)
    assert result.is_error
    assert "stopped while running demo__crash" in result.content
    assert "demo-server: crashing on purpose" in result.content
    state, tail = provider.status("demo")
    assert state == "failed" and "crashing on purpose" in tail
    assert "exited unexpectedly" in provider.server_status("demo").message
    # Its tools stay listed (the next call restarts it); the rest of the app keeps working.
    assert not provider.tool_available("demo__echo")
    assert "demo__echo" in {t.spec.name for t in provider.tools()}
    assert (await registry.execute("read_file", {"path": "missing.txt"}, ctx)).is_error
    if Path("/proc/self/stat").exists():  # the dead server is reaped, not left a zombie
        for _ in range(500):
            if not Path(f"/proc/{pid}").exists():
                break
            await asyncio.sleep(0.01)
        assert not Path(f"/proc/{pid}").exists()


async def test_restart_brings_a_crashed_server_back(demo, ctx):
    provider, registry = demo
    first_pid = (await registry.execute("demo__pid", {}, ctx)).content
    await registry.execute("demo__crash", {}, ctx)
    assert provider.status("demo")[0] == "failed"
    await provider.restart("demo")
    assert provider.status("demo")[0] == "running"
    assert provider.tool_available("demo__echo")
    assert (await registry.execute("demo__echo", {"text": "back"}, ctx)).content == "back"
    assert (await registry.execute("demo__pid", {}, ctx)).content != first_pid


async def test_stop_cancels_a_slow_call_promptly(demo, ctx):
    _provider, registry = demo
    call = asyncio.create_task(registry.execute("demo__slow", {"seconds": 60}, ctx))
    await asyncio.sleep(0.3)  # the request is on its way
    assert not call.done()
    started = time.monotonic()
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    assert time.monotonic() - started < 1.0
    # The session survives the abandoned call.
    assert (await registry.execute("demo__echo", {"text": "ok"}, ctx)).content == "ok"


async def test_slow_call_times_out_with_the_server_timeout(ctx):
    provider = McpProvider(_configs(demo=demo_server_entry(timeout=0.5)))
    try:
        await provider.start()
        slow = next(t for t in provider.tools() if t.remote_name == "slow")
        started = time.monotonic()
        result = await slow.execute({"seconds": 60}, ctx)
        assert result.is_error and "did not answer within 0.5s" in result.content
        assert time.monotonic() - started < 5
        echo = next(t for t in provider.tools() if t.remote_name == "echo")
        assert (await echo.execute({"text": "still here"}, ctx)).content == "still here"
    finally:
        await provider.aclose()


async def test_list_changed_notification_refreshes_the_registry(demo, ctx):
    _provider, registry = demo
    generation = registry.generation
    assert (await registry.execute("demo__grow", {}, ctx)).content == "added"
    for _ in range(200):
        if registry.get("demo__extra") is not None:
            break
        await asyncio.sleep(0.01)
    assert registry.generation > generation
    assert (await registry.execute("demo__extra", {}, ctx)).content == "extra tool"


async def test_server_that_fails_to_start_reports_its_stderr(ctx):
    provider = McpProvider(_configs(
        broken={"command": sys.executable, "args": [str(DEMO_SERVER), "--fail-start"]},
        missing={"command": "/nonexistent/mcp-server-xyz"},
        unset={"command": sys.executable, "args": [str(DEMO_SERVER)],
               "env": {"TOKEN": "${TEBIKI_TEST_UNSET_VARIABLE}"}},
    ))
    try:
        await provider.start()
        state, tail = provider.status("broken")
        assert state == "failed" and "missing DEMO_TOKEN, giving up" in tail
        assert "exited during startup" in provider.server_status("broken").message
        assert provider.status("missing")[0] == "failed"
        assert "/nonexistent/mcp-server-xyz" in provider.server_status("missing").message
        assert "${TEBIKI_TEST_UNSET_VARIABLE}, which is not set" in \
            provider.server_status("unset").message
        assert provider.tools() == []
    finally:
        await provider.aclose()


async def test_env_values_reach_the_server(ctx, monkeypatch):
    monkeypatch.setenv("TEBIKI_TEST_SECRET", "12345")
    provider = McpProvider(_configs(demo=demo_server_entry(env={
        "DEMO_SECRET": "${TEBIKI_TEST_SECRET}"})))
    try:
        await provider.start()
        assert "secret length 5" in provider.status("demo")[1]
    finally:
        await provider.aclose()


async def test_rules_scoped_to_the_server_id_decide_its_calls(demo, db):
    _provider, registry = demo
    permissions = ToolPermissionService(db, registry=registry)
    rules = permissions.rules
    rules.add(PermissionRule("allow", server_id="demo", tool_name="demo__echo"))
    rules.add(PermissionRule("deny", server_id="demo", tool_pattern="demo__cr*"))
    rules.add(PermissionRule("allow", server_id="other", tool_pattern="*", priority=50))
    rules.add(PermissionRule("allow", server_id="demo", tool_name="demo__add",
                             input_pattern='*"a":1,*'))
    assert permissions.decide("demo", "demo__echo", {"text": "x"}).kind == "allow"
    assert permissions.decide("demo", "demo__crash", {}).kind == "deny"
    # The other server's allow-everything rule does not reach this server.
    assert permissions.decide("demo", "demo__fail", {}).kind == "ask"
    # Input patterns match the canonical JSON of the call.
    assert permissions.decide("demo", "demo__add", {"a": 1, "b": 2}).kind == "allow"
    assert permissions.decide("demo", "demo__add", {"a": 3, "b": 2}).kind == "ask"
    # A same-named call claimed by another server id is not decided by demo's rules.
    assert permissions.decide("other-server", "demo__crash", {}).kind == "ask"
    permissions.close()


async def test_read_only_hint_is_shown_but_never_trusted(demo, db):
    _provider, registry = demo
    permissions = ToolPermissionService(db, registry=registry)
    spec = registry.get("demo__add").spec
    assert spec.annotations.get("readOnlyHint") is True and spec.risk == RiskLevel.LOW
    decision = permissions.decide("demo", "demo__add", {"a": 1, "b": 2})
    assert decision.kind == "ask"
    assert decision.rule is None or decision.rule.server_id is None  # only the global default
    assert not permissions.should_auto_approve("demo", "demo__add", {"a": 1, "b": 2})
    permissions.close()


async def test_apply_config_keeps_untouched_servers_running(ctx):
    provider = McpProvider(_configs(a=demo_server_entry()))
    try:
        await provider.start()
        pid_a = await provider.call("a", "pid", {}, ctx)
        await provider.apply_config(_configs(a=demo_server_entry(), b=demo_server_entry()))
        assert [s.state for s in provider.statuses()] == ["running", "running"]
        assert (await provider.call("a", "pid", {}, ctx)).content == pid_a.content
        assert {t.spec.name for t in provider.tools()} >= {"a__echo", "b__echo"}
        await provider.apply_config(_configs(b=demo_server_entry(disabled=True)))
        assert provider.server_names() == ["b"] and provider.status("b")[0] == "disabled"
        assert provider.tools() == []
        gone = await provider.call("a", "echo", {"text": "x"}, ctx)
        assert gone.is_error and "no longer configured" in gone.content
    finally:
        await provider.aclose()


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
async def test_aclose_leaves_no_child_processes(ctx):
    before = _children()
    provider = McpProvider(_configs(a=demo_server_entry(), b=demo_server_entry()))
    await provider.start()
    busy = asyncio.create_task(provider.call("a", "slow", {"seconds": 60}, ctx))
    await asyncio.sleep(0.2)
    assert len(_children() - before) >= 2
    started = time.monotonic()
    await provider.aclose()
    assert time.monotonic() - started < 8
    result = await busy
    assert result.is_error and "stopped or restarted" in result.content
    assert _children() - before == set()  # neither running nor zombie
    assert [s.state for s in provider.statuses()] == ["stopped", "stopped"]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


async def test_streamable_http_server(ctx):
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
                await asyncio.sleep(0.05)
        provider = McpProvider(_configs(web={"url": f"http://127.0.0.1:{port}/mcp",
                                             "headers": {"X-Test": "1"}}))
        try:
            await provider.start()
            assert provider.status("web")[0] == "running", provider.server_status("web")
            assert (await provider.call("web", "add", {"a": 1, "b": 2}, ctx)).content == "3"
            failed = await provider.call("web", "fail", {"message": "nope"}, ctx)
            assert failed.is_error and "nope" in failed.content
        finally:
            await provider.aclose()
    finally:
        server.terminate()
        server.wait(timeout=10)


HANGING = {"command": sys.executable,
           "args": ["-c", "import sys, time; sys.stderr.write('hanging\\n'); sys.stderr.flush(); "
                          "time.sleep(120)"]}


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
async def test_a_server_that_never_answers_times_out_and_is_killed():
    before = _children()
    provider = McpProvider(_configs(mute=HANGING), startup_timeout_s=1.0)
    try:
        await provider.start()
        state, tail = provider.status("mute")
        assert state == "failed" and "hanging" in tail
        assert "did not finish starting within 1s" in provider.server_status("mute").message
        assert _children() - before == set()
    finally:
        await provider.aclose()


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
async def test_aclose_during_startup_stops_at_once():
    before = _children()
    provider = McpProvider(_configs(mute=HANGING), startup_timeout_s=60.0)
    starting = asyncio.create_task(provider.start())
    for _ in range(500):
        if _children() - before:
            break
        await asyncio.sleep(0.01)
    assert provider.status("mute")[0] == "starting"
    started = time.monotonic()
    await provider.aclose()
    await asyncio.wait_for(starting, 5)
    assert time.monotonic() - started < 8
    assert provider.status("mute")[0] == "stopped"
    assert _children() - before == set()
