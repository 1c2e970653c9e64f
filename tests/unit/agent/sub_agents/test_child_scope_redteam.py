"""A child never does what its parent could not: checked by side effects, through the real loop.

Plan parent with an editing child, a deny rule and a child's command, a parent's labels and a
child's send, a requested wider mode, a tool the parent lacks, nesting, background approvals
and a fabricated success."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from app.core.agent.events import ApprovalResponse
from app.core.orchestration_mode import Orchestration
from app.core.permission_mode import PermissionMode
from app.core.permissions.flow import FlowLabel
from app.core.permissions.rules import PermissionRule
from app.core.services import default_rules
from tests.fakes.anthropic_server import Response, tool
from tests.unit.agent.helpers import Harness
from tests.unit.agent.sub_agents.test_delegation import _create, _execute, _results, _text


def _orchestrating(harness: Harness, mode: PermissionMode) -> None:
    harness.update_profile(permission_mode=mode, orchestration=Orchestration.SUB_AGENTS)
    harness.permissions.rules.seed_defaults(default_rules(harness.registry.specs()))


@pytest.fixture
def hits() -> Iterator[tuple[str, list[str]]]:
    """A web server on 127.0.0.1 that records every path it is asked for."""
    seen: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.append(self.path)
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", seen
    server.shutdown()
    server.server_close()


async def test_plan_parent_editing_child_asking_for_auto_writes_nothing(
        harness: Harness) -> None:
    harness.enable("write_file", allowed_write_dirs=["."])
    _orchestrating(harness, PermissionMode.PLAN)
    harness.server.script(
        _create("editor", "c1", tools=["write_file"], mode="auto"), _execute("editor", "e1"),
        Response.tools(tool("write_file", {"path": "a.txt", "content": "x"}, id="w1")),
        Response.text("I wrote a.txt."), Response.text("done"))
    await harness.session().run("go")
    assert not (harness.project / "a.txt").exists()
    assert "write_file:" in _text(_results(harness)["e1"])  # in the facts: it did not run


async def test_a_parent_deny_rule_binds_the_child(harness: Harness) -> None:
    harness.enable("write_file", allowed_write_dirs=["."])
    _orchestrating(harness, PermissionMode.AUTO)
    harness.permissions.rules.add(PermissionRule("deny", server_id="builtin",
                                                 tool_name="write_file", priority=1000))
    harness.server.script(
        _create("editor", "c1", tools=["write_file"]), _execute("editor", "e1"),
        Response.tools(tool("write_file", {"path": "b.txt", "content": "x"}, id="w1")),
        Response.text("done it"), Response.text("done"))
    await harness.session().run("go")
    assert not (harness.project / "b.txt").exists()
    assert "write_file: denied (not run)" in _text(_results(harness)["e1"])


async def test_parent_labels_follow_the_child_to_its_send(
        harness: Harness, hits: tuple[str, list[str]]) -> None:
    base, seen = hits
    harness.enable("web_fetch", allow_private_network=True)
    _orchestrating(harness, PermissionMode.AUTO)
    session = harness.session()
    session.flow.add(FlowLabel.READ_SENSITIVE, ".env", "read_file")
    harness.approver.then(ApprovalResponse(False, "no"))
    harness.server.script(
        _create("sender", "c1", tools=["web_fetch"]), _execute("sender", "e1"),
        Response.tools(tool("web_fetch", {"url": f"{base}/leak"}, id="f1")),
        Response.text("sent"), Response.text("done"))
    await session.run("go")
    assert seen == []  # asked (and declined) instead of sending
    (request,) = harness.approver.requests
    assert request.agent_chain == ("orchestrator", "sender") and request.tool_name == "web_fetch"


async def test_a_childs_labels_join_its_parent(harness: Harness) -> None:
    _orchestrating(harness, PermissionMode.AUTO)
    (harness.project / ".env").write_text("API_KEY=sk-live-0123456789abcdef\n")
    harness.enable("read_file")
    harness.approver.then(ApprovalResponse(True))
    harness.server.script(
        _create("reader", "c1", tools=["read_file"]), _execute("reader", "e1"),
        Response.tools(tool("read_file", {"path": ".env"}, id="r1")),
        Response.text("read it"), Response.text("done"))
    session = harness.session()
    await session.run("go")
    assert session.flow.has(FlowLabel.READ_SENSITIVE)


async def test_a_background_childs_question_waits_for_the_person(harness: Harness) -> None:
    _orchestrating(harness, PermissionMode.ASK)
    harness.approver.then(ApprovalResponse(False, "later"))
    harness.server.script(
        _create("bg", "c1", tools=["record"], model="child-model"),
        _execute("bg", "e1", background=True),
        Response.tools(tool("get_sub_agent_result", {"execution_id": "1", "wait_s": 30},
                            id="g1")),
        Response.text("done"))
    harness.server.script_for(
        "child-model", Response.tools(tool("record", {"value": "v"}, id="r1")),
        Response.text("recorded"))  # the child's claim
    await harness.session().run("go")
    assert [r.tool_name for r in harness.approver.requests] == ["record"]
    assert harness.record.calls == []
    result = _text(_results(harness)["g1"])
    assert "record: declined (not run)" in result


async def test_an_orchestration_run_can_call_web_fetch(
        harness: Harness, hits: tuple[str, list[str]]) -> None:
    """The acceptance line of the first phase: a sub-agent fetches a page for its parent."""
    base, seen = hits
    harness.enable("web_fetch", allow_private_network=True)
    _orchestrating(harness, PermissionMode.AUTO)
    harness.approver.then(ApprovalResponse(True))  # a private address asks; the person agrees
    harness.server.script(
        _create("fetcher", "c1", tools=["web_fetch"]), _execute("fetcher", "e1"),
        Response.tools(tool("web_fetch", {"url": f"{base}/page"}, id="f1")),
        Response.text("The page says ok."), Response.text("done"))
    await harness.session().run("go")
    assert seen == ["/page"]
    result = _text(_results(harness)["e1"])
    assert "The page says ok." in result and "1 executed" in result
