"""A child never does what its parent could not: checked by side effects, through the real loop.

Plan parent with an editing child, a deny rule and a child's edit or shell command, a parent's
labels or secret and a child's send, a requested wider mode (with auto's own effect beside it),
a tool the parent lacks, nesting (asked for at definition, or called anyway), background
approvals, a fabricated success and a child's "Always allow"."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.core.agent.events import ApprovalResponse
from app.core.orchestration_mode import Orchestration
from app.core.permission_mode import PermissionMode
from app.core.permissions.flow import FlowLabel
from app.core.permissions.rules import PermissionRule
from app.core.services import default_rules
from tests.fakes.anthropic_server import Response, tool
from tests.sandbox_support import requires_sandbox
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


@requires_sandbox
async def test_a_parent_deny_rule_binds_the_childs_shell(harness: Harness) -> None:
    harness.enable("shell_exec", program_level="any_sandboxed")
    _orchestrating(harness, PermissionMode.AUTO)
    harness.allow("shell_exec", server_id="builtin")
    harness.permissions.rules.add(PermissionRule(
        "deny", server_id="builtin", tool_name="shell_exec", input_pattern="*forbidden*",
        priority=1000))
    harness.server.script(
        _create("sh", "c1", tools=["shell_exec"], model="child-model"), _execute("sh", "e1"),
        Response.text("done"))
    # The output joins what the command keeps apart: it shows only if the command ran.
    harness.server.script_for("child-model", Response.tools(
        tool("shell_exec", {"command": "printf %s-%s allowed 4711"}, id="s1"),
        tool("shell_exec", {"command": "printf %s-%s forbidden 4712"}, id="s2")),
        Response.text("Both commands ran fine."))
    await harness.session().run("go")
    results = _results(harness)
    assert "allowed-4711" in _text(results["s1"])  # the child's shell works...
    assert results["s2"]["is_error"] and "forbidden-4712" not in _text(results["s2"])
    assert "denied" in _text(results["e1"])  # ...and the facts contradict its claim


@pytest.mark.parametrize("parent_mode", [PermissionMode.AUTO, PermissionMode.ASK,
                                         PermissionMode.PLAN])
async def test_a_child_asking_for_auto_gets_no_more_than_its_parents_mode(
        harness: Harness, fresh_data_dir: Path, parent_mode: PermissionMode) -> None:
    """Auto runs an undoable edit in the project unasked (no rule decides here); a child of an
    ask parent that asks for auto still asks, a plan parent's is refused."""
    from app.core.agent.checkpointing import Checkpointer

    harness.enable("write_file", allowed_write_dirs=["."])
    harness.update_profile(permission_mode=parent_mode,
                           orchestration=Orchestration.SUB_AGENTS)
    for name in ("create_sub_agent", "execute_sub_agent"):
        harness.allow(name, server_id="builtin")
    harness.approver.then(ApprovalResponse(False, "no"))
    harness.server.script(
        _create("editor", "c1", tools=["write_file"], mode="auto", model="child-model"),
        _execute("editor", "e1"), Response.text("done"))
    harness.server.script_for("child-model", Response.tools(
        tool("write_file", {"path": "c.txt", "content": "x"}, id="w1")),
        Response.text("I wrote c.txt."))
    await harness.session(checkpointer=Checkpointer(fresh_data_dir, harness.project)).run("go")
    if parent_mode is PermissionMode.AUTO:
        assert (harness.project / "c.txt").exists() and harness.approver.requests == []
        return
    assert not (harness.project / "c.txt").exists()
    facts = _text(_results(harness)["e1"])
    if parent_mode is PermissionMode.PLAN:  # refused outright, as the parent's own edit is
        assert harness.approver.requests == []
        assert "write_file: denied (not run) — Refused: the agent is in plan mode" in facts
        return
    (request,) = harness.approver.requests
    assert request.agent_chain == ("orchestrator", "editor")
    assert "write_file: declined (not run)" in facts


async def test_a_child_calling_the_sub_agent_tools_anyway_starts_nothing(
        harness: Harness) -> None:
    from app.core.agent.events import SubAgentUpdated

    _orchestrating(harness, PermissionMode.AUTO)
    harness.server.script(
        _create("n", "c1", model="child-model"), _execute("n", "e1"), Response.text("done"))
    # A grandchild would take the parent's "done" (the default model) and leave it unanswered.
    harness.server.script_for("child-model", Response.tools(
        tool("create_sub_agent", {"name": "g", "instructions": "x"}, id="g1"),
        tool("execute_sub_agent", {"agent_id": "g", "input": "x"}, id="g2")),
        Response.text("My own sub-agent finished the task."))
    await harness.session().run("go")
    results = _results(harness)
    assert results["g1"]["is_error"] and results["g2"]["is_error"]
    assert {e.execution_id for e in harness.of(SubAgentUpdated)} == {1}
    assert harness.server.pending == 0
    assert "The parent's last turn" not in _text(results["e1"])
    assert "execute_sub_agent" in _text(results["e1"])  # the facts list the failed calls


async def test_a_childs_always_allow_serves_that_child_alone(harness: Harness) -> None:
    _orchestrating(harness, PermissionMode.ASK)
    remember = PermissionRule("allow", server_id="test", tool_name="record")
    harness.approver.then(ApprovalResponse(True, remember_rule=remember),
                          ApprovalResponse(False, "no"), ApprovalResponse(False, "no"))
    harness.server.script(
        _create("a", "c1", tools=["record"], model="model-a"),
        _create("b", "c2", tools=["record"], model="model-b"),
        _execute("a", "e1"), _execute("b", "e2"),
        Response.tools(tool("record", {"value": "parent"}, id="p1")), Response.text("done"))
    harness.server.script_for("model-a", Response.tools(tool("record", {"value": "a1"})),
                              Response.tools(tool("record", {"value": "a2"})),
                              Response.text("ok"))
    harness.server.script_for("model-b", Response.tools(tool("record", {"value": "b1"})),
                              Response.text("ok"))
    await harness.session().run("go")
    assert harness.record.calls == [{"value": "a1"}, {"value": "a2"}]  # a's second: no ask
    chains = [r.agent_chain for r in harness.approver.requests]
    assert chains[:2] == [("orchestrator", "a"), ("orchestrator", "b")] and len(chains) == 3
    assert [r for r in harness.permissions.rules.list() if r.tool_name == "record"] == []


@pytest.mark.parametrize("parent_read_it", [False, True], ids=["no-secret", "read"])
async def test_a_secret_the_parent_read_cannot_leave_through_its_child(
        harness: Harness, hits: tuple[str, list[str]], parent_read_it: bool) -> None:
    """Even with the person approving everything, the child's fetch carrying a secret its
    parent read is refused (the child shares the parent's labels and known secrets); the
    same fetch goes out when the value is no secret of the project's."""
    base, seen = hits
    secret = "sk-live-0123456789abcdef0123"
    if parent_read_it:
        (harness.project / ".env").write_text(f"API_KEY={secret}\n")
    harness.enable("read_file")
    harness.enable("web_fetch", allow_private_network=True)
    _orchestrating(harness, PermissionMode.AUTO)
    harness.approver.then(*[ApprovalResponse(True) for _ in range(4)])
    read = [Response.tools(tool("read_file", {"path": ".env"}, id="r1"))]
    harness.server.script(
        *(read if parent_read_it else []),
        _create("sender", "c1", tools=["web_fetch"], model="child-model"),
        _execute("sender", "e1", f"fetch {base}/x?k={secret}"), Response.text("done"))
    harness.server.script_for("child-model", Response.tools(
        tool("web_fetch", {"url": f"{base}/x?k={secret}"}, id="f1")),
        Response.text("Fetched it."))
    await harness.session().run("go")
    if not parent_read_it:
        assert seen == [f"/x?k={secret}"]
        return
    assert secret in _text(_results(harness)["r1"])  # the parent did read it
    assert seen == []
    assert _results(harness)["f1"]["is_error"]
