"""The tool-use loop through the real Anthropic SDK against the loopback fake server."""

from __future__ import annotations

import pytest

from app.core.agent.events import (
    ApprovalResponse,
    AwaitingApproval,
    RunFinished,
    ToolFinished,
    ToolRequested,
    ToolStarted,
)
from app.core.permissions.rules import PermissionRule
from app.core.store.profiles import DEFAULT_MODEL
from tests.fakes.anthropic_server import Response, tool
from tests.unit.agent.helpers import TEST_KEY, Harness


async def test_text_turn_streams_and_is_persisted(harness: Harness) -> None:
    harness.update_profile(system_prompt="Be brief.", max_tokens=1234)
    harness.server.script(Response.text("Hello there, how can I help?"))
    session = harness.session()

    await session.run("Hi")

    assert harness.text() == "Hello there, how can I help?"
    assert len([e for e in harness.events if type(e).__name__ == "TextDelta"]) > 1  # streamed
    assert harness.last() == RunFinished("end_turn", 1, 12, harness.last().output_tokens)
    req = harness.server.last_request
    assert req.body["stream"] is True
    assert req.body["model"] == DEFAULT_MODEL
    assert req.body["max_tokens"] == 1234
    # Tebiki's own prompt (project, date, conventions, mode), the profile's last.
    assert req.body["system"].startswith("You are an AI assistant working on the user's")
    assert req.body["system"].endswith("\n\nBe brief.")
    assert "temperature" not in req.body  # the default is not sent
    assert req.body["messages"] == [{"role": "user", "content": [{"type": "text",
                                                                  "text": "Hi"}]}]
    assert "anthropic-version" in req.headers
    assert TEST_KEY in (req.headers.get("x-api-key", "") + req.headers.get("authorization", ""))
    assert harness.stored(session.conversation_id) == [
        {"role": "user", "content": [{"type": "text", "text": "Hi"}]},
        {"role": "assistant", "content": [{"type": "text",
                                           "text": "Hello there, how can I help?"}]},
    ]


async def test_multi_tool_turn_runs_each_call_in_order(harness: Harness) -> None:
    rule = harness.allow("record")
    harness.server.script(
        Response.tools(tool("record", {"value": "a"}, id="toolu_a"),
                       tool("record", {"value": "b"}, id="toolu_b"), text="Recording."),
        Response.text("Both recorded."))
    session = harness.session()

    await session.run("record a and b")

    assert harness.record.calls == [{"value": "a"}, {"value": "b"}]
    assert harness.names() == [
        "ToolRequested", "ToolStarted", "ToolFinished",
        "ToolRequested", "ToolStarted", "ToolFinished", "RunFinished"]
    assert harness.text() == "Recording.Both recorded."
    assert harness.last() == RunFinished("end_turn", 2, 24, harness.last().output_tokens)
    requested = harness.of(ToolRequested)
    assert [(r.tool_use_id, r.decision.kind, r.decision.rule) for r in requested] == [
        ("toolu_a", "allow", rule), ("toolu_b", "allow", rule)]
    finished = harness.of(ToolFinished)
    assert [(f.outcome, f.is_error, f.content) for f in finished] == [
        ("executed", False, "recorded a"), ("executed", False, "recorded b")]
    second = harness.server.message_requests[1]
    assert second.messages[1]["role"] == "assistant"
    assert [b["type"] for b in second.messages[1]["content"]] == ["text", "tool_use", "tool_use"]
    assert second.tool_results() == [
        {"type": "tool_result", "tool_use_id": "toolu_a", "content": "recorded a",
         "is_error": False},
        {"type": "tool_result", "tool_use_id": "toolu_b", "content": "recorded b",
         "is_error": False}]
    audit = harness.audit()
    assert [(a.tool_name, a.decision, a.outcome, a.rule_id, a.tool_use_id, a.conversation_id)
            for a in audit] == [
        ("record", "allow", "executed", rule.id, "toolu_a", session.conversation_id),
        ("record", "allow", "executed", rule.id, "toolu_b", session.conversation_id)]
    assert all(a.duration_ms is not None for a in audit)
    assert audit[0].input == {"value": "a"} and audit[0].server_id == "test"


async def test_ask_then_approve_runs_the_tool(harness: Harness) -> None:
    harness.approver.then(ApprovalResponse.approve())
    harness.server.script(Response.tool_use("record", {"value": "x"}), Response.text("ok"))
    await harness.session().run("go")

    assert harness.record.calls == [{"value": "x"}]
    (request,) = harness.approver.requests
    assert (request.tool_name, request.server_id, request.input) == ("record", "test",
                                                                     {"value": "x"})
    assert request.decision.kind == "ask" and request.spec is harness.record.spec
    assert request.preview is None  # record has no preview
    names = harness.names()
    assert names.index("AwaitingApproval") < names.index("ToolStarted")
    assert harness.audit()[0].decision == "ask"
    assert harness.audit()[0].outcome == "executed"


async def test_decline_never_runs_and_the_reason_reaches_the_model(harness: Harness) -> None:
    harness.approver.then(ApprovalResponse.decline("use the staging copy instead"))
    harness.server.script(Response.tool_use("record", {"value": "prod"}, id="toolu_p"),
                          Response.text("Understood."))
    await harness.session().run("go")

    assert harness.record.calls == []
    assert "ToolStarted" not in harness.names()
    (result,) = harness.server.last_request.tool_results()
    assert result["tool_use_id"] == "toolu_p" and result["is_error"] is True
    assert result["content"] == ("The user declined this tool call. Reason: use the staging "
                                 "copy instead")
    (finished,) = harness.of(ToolFinished)
    assert (finished.outcome, finished.is_error) == ("declined", True)
    assert harness.audit()[0].outcome == "declined"
    assert harness.last().stop_reason == "end_turn"


async def test_decline_without_reason_says_so(harness: Harness) -> None:
    harness.approver.then(ApprovalResponse.decline())
    harness.server.script(Response.tool_use("record", {"value": "v"}), Response.text("ok"))
    await harness.session().run("go")
    (result,) = harness.server.last_request.tool_results()
    assert result["content"].startswith("The user declined this tool call. No reason")


async def test_deny_rule_refuses_without_asking(harness: Harness) -> None:
    rule = harness.permissions.rules.add(PermissionRule("deny", tool_name="record",
                                                        input_pattern="*prod*"))
    harness.allow("record")
    harness.server.script(Response.tools(tool("record", {"value": "prod-db"}),
                                         tool("record", {"value": "dev-db"})),
                          Response.text("ok"))
    await harness.session().run("go")

    assert harness.record.calls == [{"value": "dev-db"}]
    assert harness.approver.requests == []
    denied, allowed = harness.server.last_request.tool_results()
    assert denied["is_error"] is True and f"rule #{rule.id}" in denied["content"]
    assert "Denied by" in denied["content"]
    assert allowed["is_error"] is False
    audit = harness.audit()
    assert [(a.decision, a.outcome, a.rule_id) for a in audit] == [
        ("deny", "denied", rule.id), ("allow", "executed", audit[1].rule_id)]


async def test_disabled_tool_is_not_offered_and_never_runs(harness: Harness) -> None:
    harness.enable("record", False)
    harness.allow("record")
    harness.server.script(Response.tool_use("record", {"value": "sneaky"}),
                          Response.tool_use("no_such_tool", {"a": 1}),
                          Response.text("ok"))
    await harness.session().run("go")

    first = harness.server.message_requests[0]
    assert "record" not in first.tool_names
    assert "slow" in first.tool_names and "read_file" in first.tool_names
    assert "write_file" not in first.tool_names  # off in the default profile
    assert harness.record.calls == []
    assert harness.approver.requests == []
    (r1,) = harness.server.message_requests[1].tool_results()
    assert r1["is_error"] and "'record' is not available" in r1["content"]
    (r2,) = harness.server.message_requests[2].tool_results()
    assert r2["is_error"] and "'no_such_tool' is not available" in r2["content"]
    assert [a.outcome for a in harness.audit()] == ["invalid", "invalid"]
    assert harness.audit()[1].server_id == "unknown"


async def test_iteration_cap_stops_the_loop(harness: Harness) -> None:
    harness.update_profile(max_iterations=3)
    harness.allow("record")
    harness.server.script(*[Response.tool_use("record", {"value": str(i)}) for i in range(5)])
    session = harness.session()
    await session.run("loop forever")

    assert len(harness.server.message_requests) == 3
    assert harness.record.calls == [{"value": "0"}, {"value": "1"}]  # the 3rd turn's call: not run
    assert harness.last() == RunFinished("max_iterations", 3, 36, harness.last().output_tokens)
    last = harness.stored(session.conversation_id)[-1]
    assert last["role"] == "user"
    assert last["content"][0]["is_error"] is True
    assert "limit of 3 model turns" in last["content"][0]["content"]
    assert [a.outcome for a in harness.audit()] == ["executed", "executed", "cancelled"]


async def test_default_iteration_cap_is_twenty(harness: Harness) -> None:
    assert harness.profile().max_iterations == 20


async def test_malformed_tool_input_is_an_error_result_and_the_loop_goes_on(
        harness: Harness) -> None:
    harness.allow("record")
    harness.server.script(
        Response.tools(tool("record", raw_json='{"value": "a"', id="toolu_bad"),
                       tool("record", {"wrong": 1}, id="toolu_schema"),
                       tool("record", raw_json='["a"]', id="toolu_list"),
                       tool("record", {"value": "good"}, id="toolu_ok")),
        Response.text("fixed"))
    await harness.session().run("go")

    assert harness.record.calls == [{"value": "good"}]
    bad, schema, listed, ok = harness.server.last_request.tool_results()
    assert bad["is_error"] and "not valid JSON" in bad["content"]
    assert schema["is_error"] and "Invalid input for record" in schema["content"]
    assert listed["is_error"] and "must be a JSON object" in listed["content"]
    assert ok == {"type": "tool_result", "tool_use_id": "toolu_ok", "content": "recorded good",
                  "is_error": False}
    # the stored tool_use of the broken call carries an object, so the API accepts it
    sent_uses = [b for b in harness.server.last_request.messages[1]["content"]
                 if b["type"] == "tool_use"]
    assert sent_uses[0]["input"] == {}
    assert [a.outcome for a in harness.audit()] == ["invalid", "invalid", "invalid", "executed"]
    assert harness.audit()[0].input == '{"value": "a"'  # the raw text, for the record
    assert harness.last().stop_reason == "end_turn"


async def test_remember_rule_is_added_before_running(harness: Harness) -> None:
    remember = PermissionRule("allow", tool_name="record", description="from the dialog")
    harness.approver.then(ApprovalResponse.approve(remember_rule=remember))
    harness.server.script(Response.tool_use("record", {"value": "1"}),
                          Response.tool_use("record", {"value": "2"}),
                          Response.text("ok"))
    await harness.session().run("go")

    assert harness.record.calls == [{"value": "1"}, {"value": "2"}]
    assert len(harness.approver.requests) == 1  # the second call was allowed by the new rule
    rules = [r for r in harness.permissions.rules.list() if r.description == "from the dialog"]
    assert len(rules) == 1 and rules[0].decision == "allow"
    assert harness.of(ToolRequested)[1].decision.rule == rules[0]


async def test_an_invalid_remembered_rule_does_not_block_the_answer(harness: Harness) -> None:
    bad = PermissionRule("allow", tool_name="re cord")  # whitespace: rejected by validation
    harness.approver.then(ApprovalResponse.approve(remember_rule=bad))
    harness.server.script(Response.tool_use("record", {"value": "1"}), Response.text("ok"))
    await harness.session().run("go")
    assert harness.record.calls == [{"value": "1"}]


async def test_write_file_preview_and_nothing_unapproved_is_written(harness: Harness) -> None:
    harness.enable("write_file", True, allowed_write_dirs=["doc"])
    harness.approver.then(ApprovalResponse.decline("not now"), ApprovalResponse.approve())
    call = {"path": "doc/notes.md", "content": "hello\n"}
    harness.server.script(Response.tool_use("write_file", call), Response.text("ok"))
    await harness.session().run("write it")

    target = harness.project / "doc" / "notes.md"
    assert not target.exists()
    request = harness.approver.requests[0]
    assert request.preview is not None
    assert "+++ b/doc/notes.md" in request.preview and "+hello" in request.preview
    assert request.spec is not None and request.spec.name == "write_file"

    harness.server.script(Response.tool_use("write_file", call), Response.text("ok"))
    await harness.sessions[0].run("now write it")
    assert target.read_text() == "hello\n"
    assert harness.of(ToolFinished)[-1].outcome == "executed"


async def test_capabilities_come_from_the_called_tools_config(harness: Harness) -> None:
    harness.enable("record", True, allowed_commands=["make"], shell_timeout_s=5,
                   flavour="salty")
    harness.enable("slow", True, allowed_commands=["rm"], allowed_write_dirs=["/"])
    harness.allow("record")
    harness.server.script(Response.tool_use("record", {"value": "1"}), Response.text("ok"))
    await harness.session().run("go")

    (ctx,) = harness.record.contexts
    assert ctx.allowed_commands == ("make",)
    assert ctx.shell_timeout_s == 5.0
    assert ctx.allowed_write_dirs == ()  # slow's dirs never reach record
    assert ctx.project_root == harness.project
    assert ctx.config_for("record") == {"flavour": "salty"}


async def test_custom_temperature_is_sent(harness: Harness) -> None:
    harness.update_profile(temperature=0.2)
    harness.server.script(Response.text("ok"))
    await harness.session().run("hi")
    assert harness.server.last_request.body["temperature"] == 0.2


async def test_a_failing_event_sink_does_not_break_the_run(harness: Harness) -> None:
    def explode(event: object) -> None:
        raise RuntimeError("UI bug")

    harness.on_event_hook = explode
    harness.allow("record")
    harness.server.script(Response.tool_use("record", {"value": "1"}), Response.text("ok"))
    await harness.session().run("go")
    assert harness.record.calls == [{"value": "1"}]
    assert harness.last().stop_reason == "end_turn"


async def test_a_failing_approver_counts_as_decline(harness: Harness) -> None:
    async def broken(request: object) -> ApprovalResponse:
        raise RuntimeError("dialog crashed")

    session = harness.session()
    session.approver = broken
    harness.server.script(Response.tool_use("record", {"value": "1"}), Response.text("ok"))
    await session.run("go")
    assert harness.record.calls == []
    (result,) = harness.server.last_request.tool_results()
    assert result["is_error"] and "approval dialog failed" in result["content"]


async def test_events_have_the_contract_fields(harness: Harness) -> None:
    harness.allow("record")
    harness.server.script(Response.tool_use("record", {"value": "1"}, id="toolu_1"),
                          Response.text("ok"))
    await harness.session().run("go")
    (requested,) = harness.of(ToolRequested)
    assert (requested.tool_use_id, requested.tool_name, requested.server_id,
            requested.input) == ("toolu_1", "record", "test", {"value": "1"})
    (started,) = harness.of(ToolStarted)
    assert (started.tool_use_id, started.tool_name) == ("toolu_1", "record")
    (finished,) = harness.of(ToolFinished)
    assert finished.duration_ms >= 0 and finished.outcome == "executed"
    assert not harness.of(AwaitingApproval)


async def test_run_rejects_an_empty_message_and_concurrent_runs(harness: Harness) -> None:
    session = harness.session()
    with pytest.raises(ValueError):
        await session.run("   ")


async def test_approval_requests_say_which_call_of_the_turn_they_are(harness: Harness) -> None:
    harness.server.script(
        Response.tools(tool("record", {"value": "a"}, id="toolu_a"),
                       tool("record", {"value": "b"}, id="toolu_b")),
        Response.tools(tool("record", {"value": "c"}, id="toolu_c")),
        Response.text("done"))
    harness.approver.then(ApprovalResponse(True), ApprovalResponse(True), ApprovalResponse(True))
    await harness.session().run("record three")
    assert [r.position for r in harness.approver.requests] == [(1, 2), (2, 2), None]


async def test_a_call_no_configuration_could_allow_is_not_put_to_the_person(
        harness: Harness) -> None:
    harness.enable("write_file", allowed_write_dirs=["doc"])
    (harness.project / "doc").mkdir()
    outside = harness.project.parent / "outside.py"
    harness.server.script(
        Response.tools(tool("write_file", {"path": str(outside), "content": "x"}, id="t1")),
        Response.tools(tool("write_file", {"path": "doc/notes.md", "content": "x"}, id="t2")),
        Response.text("done"))
    harness.approver.then(ApprovalResponse(True))  # only the second call is asked about
    await harness.session().run("write")
    assert [r.input["path"] for r in harness.approver.requests] == ["doc/notes.md"]
    assert harness.approver.requests[0].lift is None
    refused = harness.server.requests[1].tool_results()[0]
    assert refused["is_error"] and "not asked" in refused["content"]
    assert not outside.exists()
    assert (harness.project / "doc" / "notes.md").read_text() == "x"
    assert harness.audit()[0].decided_by.startswith("refused by capability")
