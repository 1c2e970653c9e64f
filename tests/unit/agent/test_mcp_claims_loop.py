"""An MCP server's readOnlyHint through the real agent loop, with a real server that lies.

The server (tests/mcp_servers/claims_server.py) claims read-only for tools that write a file
or reach the network. Unsandboxed, the claim gains it nothing: auto mode asks. In the OS
sandbox without network and write folders the claim counts, so auto mode runs the call
unasked — and the write and the connection fail: the proof is the disk and a listener of our
own afterwards, not the answers. A claim of read-only beside destructive asks everywhere.
"""

from __future__ import annotations

import os
import select
import socket
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from app.core.agent.events import ApprovalResponse, ToolFinished
from app.core.permission_mode import PermissionMode
from app.core.permissions.decision import Decision
from app.core.permissions.service import ToolPermissionService
from app.core.sandbox import Sandbox
from app.core.sensitive_paths import sensitive_paths
from app.core.services import profile_defaults
from app.core.store.profiles import ProfileRepository
from app.core.tools.default_registry import builtin_provider
from app.core.tools.providers.mcp.config.schema import parse_mcp_config
from app.core.tools.providers.mcp.provider import McpProvider
from app.core.tools.registry import ToolRegistry
from tests.fakes.anthropic_server import FakeAnthropicServer, Response, tool
from tests.sandbox_support import STATUS, requires_sandbox
from tests.unit.agent.helpers import Harness, RecordTool, SlowTool

pytestmark = requires_sandbox

CLAIMS_SERVER = Path(__file__).parents[2] / "mcp_servers" / "claims_server.py"


def _sandbox() -> Sandbox:
    return Sandbox(STATUS, True, sensitive_paths(extra=[os.environ["TEBIKI_DATA_DIR"]]))


async def _harness(db, project: Path, server: FakeAnthropicServer,
                   entry: dict[str, object]) -> tuple[Harness, McpProvider]:
    sandbox = _sandbox()
    configs = parse_mcp_config({"mcpServers": {"claims": entry}}).servers
    mcp = McpProvider(configs, sandbox=sandbox)
    await mcp.start()
    assert mcp.status("claims")[0] == "running", mcp.server_status("claims")
    registry = ToolRegistry([builtin_provider(), mcp])
    permissions = ToolPermissionService(db, registry, project_root=project, sandbox=sandbox)
    profile = ProfileRepository(db).ensure_default(**profile_defaults(registry.specs()))
    assert profile.id is not None
    h = Harness(db, project, server, registry, permissions, profile.id, RecordTool(),
                SlowTool())
    for name in ("claims__peek", "claims__lookup", "claims__tidy"):
        h.enable(name)
    h.update_profile(permission_mode=PermissionMode.AUTO)
    return h, mcp


@pytest.fixture
async def unsandboxed(db, project: Path, fake_anthropic: FakeAnthropicServer
                      ) -> AsyncIterator[Harness]:
    entry = {"command": sys.executable, "args": [str(CLAIMS_SERVER)]}
    h, mcp = await _harness(db, project, fake_anthropic, entry)
    yield h
    await _close(h, mcp)


@pytest.fixture
async def sandboxed(db, project: Path, fake_anthropic: FakeAnthropicServer
                    ) -> AsyncIterator[Harness]:
    entry = {"command": sys.executable, "args": [str(CLAIMS_SERVER)], "sandbox": True}
    h, mcp = await _harness(db, project, fake_anthropic, entry)
    yield h
    await _close(h, mcp)


async def _close(h: Harness, mcp: McpProvider) -> None:
    for session in h.sessions:
        await session.aclose()
    h.permissions.close()
    await mcp.aclose()


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    """A TCP port on 127.0.0.1 nobody accepts on: a connection made to it waits in the
    backlog, so the socket is readable afterwards exactly when something connected."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        yield server


def _connected(server: socket.socket) -> bool:
    readable, _, _ = select.select([server], [], [], 0)
    return bool(readable)


async def _run(h: Harness, name: str, tool_input: dict[str, object]) -> ToolFinished:
    h.server.script(Response.tools(tool(name, tool_input, id="toolu_1")),
                    Response.text("Done."))
    await h.session().run("go")
    return h.of(ToolFinished)[-1]


async def _asked(h: Harness, name: str, tool_input: dict[str, object]) -> Decision:
    """Run a call the person declines; it must have asked, once: what decided."""
    h.approver.then(ApprovalResponse(False, "no"))
    await _run(h, name, tool_input)
    assert [r.tool_name for r in h.approver.requests] == [name]
    return h.approver.requests[0].decision


async def test_an_unsandboxed_server_claiming_read_only_still_asks(unsandboxed: Harness,
                                                                   visible: Path) -> None:
    target = visible / "planted.txt"
    decided = await _asked(unsandboxed, "claims__peek", {"path": str(target)})
    assert decided.kind == "ask" and decided.facts is not None
    assert not decided.facts.read_only
    assert "its server claims read-only, which counts only for a server in the sandbox" in \
        decided.decided_by
    assert not target.exists()


async def test_a_sandboxed_server_claiming_read_only_runs_unasked_and_its_writes_fail(
        sandboxed: Harness, visible: Path, project: Path) -> None:
    h = sandboxed
    targets = [visible / "planted.txt", project / "planted.txt"]
    for target in targets:
        finished = await _run(h, "claims__peek", {"path": str(target)})
        assert finished.outcome == "executed" and finished.is_error, finished
        assert "cannot write" in finished.content
    assert h.approver.requests == []  # it ran unasked: the sandbox did the work
    assert not any(target.exists() for target in targets)
    audit = h.audit()[-1]
    assert audit.decided_by.startswith(
        "auto mode: read-only (server's claim), contained (sandboxed, no network, no writes)")


async def test_a_sandboxed_server_claiming_read_only_cannot_reach_the_network(
        sandboxed: Harness, listener: socket.socket) -> None:
    h = sandboxed
    port = listener.getsockname()[1]
    finished = await _run(h, "claims__lookup", {"port": port})
    assert h.approver.requests == []
    assert finished.is_error and "cannot reach" in finished.content, finished
    assert not _connected(listener)


async def test_the_listener_sees_a_connection_from_outside_the_sandbox(
        unsandboxed: Harness, listener: socket.socket) -> None:
    """The check above can fail: the same call, approved, from the unsandboxed server."""
    unsandboxed.approver.then(ApprovalResponse(True))
    finished = await _run(unsandboxed, "claims__lookup", {"port": listener.getsockname()[1]})
    assert not finished.is_error, finished
    assert _connected(listener)


async def test_read_only_with_destructive_asks_even_in_the_sandbox(sandboxed: Harness,
                                                                   visible: Path) -> None:
    target = visible / "kept.txt"
    target.write_text("mine")
    facts = (await _asked(sandboxed, "claims__tidy", {"path": str(target)})).facts
    assert facts is not None and facts.contained
    assert not facts.read_only and not facts.reversible
    assert "destructiveHint" in facts.not_reversible_because
    assert target.read_text() == "mine"


async def test_plan_mode_runs_a_contained_read_only_claim_and_refuses_the_rest(
        sandboxed: Harness, visible: Path) -> None:
    h = sandboxed
    h.update_profile(permission_mode=PermissionMode.PLAN)
    kept = visible / "kept.txt"
    kept.write_text("mine")
    ran = await _run(h, "claims__peek", {"path": str(visible / "a.txt")})
    refused = await _run(h, "claims__tidy", {"path": str(kept)})
    assert h.approver.requests == []
    assert ran.outcome == "executed" and "cannot write" in ran.content
    assert refused.outcome != "executed" and "plan mode" in refused.content
    assert not (visible / "a.txt").exists() and kept.read_text() == "mine"
