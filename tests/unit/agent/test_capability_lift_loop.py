"""A call its tool's configuration refuses, but which the person could allow by changing that
configuration: the loop asks, with the change named, runs the call once with exactly that change
when approved, and keeps it in the profile only when the person ticks it. A refusal no change
could lift is still answered without asking."""

from __future__ import annotations

from app.core.agent.events import ApprovalResponse
from tests.fakes.anthropic_server import Response, tool
from tests.unit.agent.helpers import Harness


def _write(path: str, id: str) -> Response:
    return Response.tools(tool("write_file", {"path": path, "content": "x"}, id=id))


def _write_dirs(harness: Harness) -> list[str]:
    return harness.profiles.tool_settings(harness.profile_id)["write_file"].config[
        "allowed_write_dirs"]


async def test_an_approved_lift_runs_the_call_once_and_changes_no_setting(
        harness: Harness) -> None:
    harness.enable("write_file", allowed_write_dirs=["doc"])
    (harness.project / "src").mkdir()
    harness.server.script(_write("src/a.py", "t1"), _write("src/b.py", "t2"), Response.text("ok"))
    harness.approver.then(ApprovalResponse(True), ApprovalResponse(False, "no"))
    await harness.session().run("write both")

    first, second = harness.approver.requests
    assert first.lift is not None and first.lift.value == ("doc", "src")
    assert "src" in first.lift.summary and "outside" in first.lift.refusal
    assert first.decision.kind == "ask" and first.decision.flow_reason  # never a review's call
    assert (harness.project / "src" / "a.py").read_text() == "x"
    assert _write_dirs(harness) == ["doc"]  # this call only
    assert second.lift is not None  # the next one asks again, and was declined
    assert not (harness.project / "src" / "b.py").exists()
    assert "refused by capability; the person may lift it" in harness.audit()[0].decided_by


async def test_a_kept_lift_goes_into_the_profile(harness: Harness) -> None:
    harness.enable("write_file", allowed_write_dirs=["doc"])
    (harness.project / "src").mkdir()
    harness.server.script(_write("src/a.py", "t1"), Response.text("ok"))
    harness.approver.then(ApprovalResponse(True, keep_lift=True))
    session = harness.session()
    await session.run("write")
    assert (harness.project / "src" / "a.py").exists()
    assert _write_dirs(harness) == ["doc", "src"]

    # The next run reads the kept setting: an ordinary ask, with nothing to lift.
    harness.server.script(_write("src/b.py", "t2"), Response.text("ok"))
    harness.approver.then(ApprovalResponse(True))
    await session.run("one more")
    assert [r.lift is None for r in harness.approver.requests] == [False, True]
    assert (harness.project / "src" / "b.py").exists()


async def test_a_declined_lift_runs_nothing(harness: Harness) -> None:
    harness.enable("write_file", allowed_write_dirs=["doc"])
    harness.server.script(_write("setup.py", "t1"), Response.text("ok"))
    harness.approver.then(ApprovalResponse(False, "not there", keep_lift=True))
    await harness.session().run("write")
    (request,) = harness.approver.requests
    assert request.lift is not None and "whole project" in request.lift.summary
    assert not (harness.project / "setup.py").exists()
    assert _write_dirs(harness) == ["doc"]  # a decline keeps nothing, ticked or not


async def test_a_missing_program_is_offered_and_runs_once_approved(harness: Harness) -> None:
    harness.enable("shell_exec", program_level="allowlist", allowed_commands=["ls"])
    harness.server.script(
        Response.tools(tool("shell_exec", {"command": "touch made-by-agent"}, id="t1")),
        Response.text("done"))
    harness.approver.then(ApprovalResponse(True))
    await harness.session().run("touch")
    (request,) = harness.approver.requests
    assert request.lift is not None and request.lift.value == ("ls", "touch")
    assert (harness.project / "made-by-agent").exists()
    config = harness.profiles.tool_settings(harness.profile_id)["shell_exec"].config
    assert config["allowed_commands"] == ["ls"]


async def test_a_refusal_no_lift_could_pass_is_answered_without_asking(
        harness: Harness) -> None:
    # bash is refused whatever the list says: adding it would not make the call run.
    harness.enable("shell_exec", program_level="allowlist", allowed_commands=["ls"])
    harness.server.script(
        Response.tools(tool("shell_exec", {"command": "bash -c 'touch made-by-agent'"},
                            id="t1")),
        Response.text("done"))
    await harness.session().run("touch")  # the approver has no answer: asking would fail
    assert harness.approver.requests == []
    assert not (harness.project / "made-by-agent").exists()
    result = harness.server.requests[-1].tool_results()[0]
    assert result["is_error"] and "not asked" in result["content"]
