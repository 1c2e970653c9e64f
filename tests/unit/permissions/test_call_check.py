"""Test a call, the part shared by Settings and ``python -m app.core.permissions check``: the
decision and why, as lines each view dresses its own way."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.permission_mode import PermissionMode
from app.core.permissions.call_check import (
    PLAIN_TEXT,
    SIMULATED_BY,
    CallInputError,
    CheckLine,
    check_call,
    parse_call_input,
    simulated_flow,
)
from app.core.permissions.decision import DecisionContext
from app.core.permissions.flow_labels import FlowLabel
from app.core.permissions.rules import DECISION_HELP, PermissionRule
from app.core.permissions.service import ToolPermissionService
from app.core.tools.default_registry import builtin_provider
from app.core.tools.registry import ToolRegistry
from tests.unit.permissions.helpers import fake_registry


@pytest.fixture
def service(db, project: Path) -> ToolPermissionService:
    return ToolPermissionService(db, fake_registry(), project_root=project)


def _roles(check) -> list[str]:
    return [line.role for line in check.lines()]


def test_each_subject_has_its_decision_and_rule(service: ToolPermissionService) -> None:
    rule = service.rules.add(PermissionRule("deny", tool_name="shell", input_pattern="rm *",
                                            priority=70))
    check = check_call(service, "builtin", "shell", {"command": "git  status && rm -rf b"})
    assert check.decision.kind == "deny" and check.rule_id == rule.id
    lines = check.lines()
    assert (lines[0].lead, lines[0].role) == ("DENY", "verdict")
    assert lines[0].text == check.decision.explain()
    subjects = {line.lead: line.text for line in lines if line.role == "subject"}
    assert subjects["git status"] == "ask (no rule matched)"
    assert subjects["rm -rf b"].startswith(f"deny (rule #{rule.id}")
    assert _roles(check).index("heading") < _roles(check).index("subject")


def test_a_rule_for_any_input_still_shows_the_subjects(service: ToolPermissionService) -> None:
    service.rules.add(PermissionRule("allow", tool_name="shell"))
    check = check_call(service, "builtin", "shell", {"command": "ls && pwd"})
    assert check.decision.subjects == ()  # one rule decided whatever the input
    assert [(m.subject, m.kind) for m in check.matched] == [("ls", "allow"), ("pwd", "allow")]


def test_review_gets_its_help_line(service: ToolPermissionService) -> None:
    service.rules.add(PermissionRule("review", tool_name="shell"))
    check = check_call(service, "builtin", "shell", {"command": "make"})
    assert check.decision.kind == "review"
    note = next(line for line in check.lines() if line.role == "note")
    assert note.lead == DECISION_HELP["review"]


def test_a_guard_says_why_with_the_simulated_source(db, project: Path) -> None:
    service = ToolPermissionService(db, ToolRegistry([builtin_provider()]), project_root=project)
    service.rules.add(PermissionRule("allow", tool_name="web_fetch"))
    flow = simulated_flow([FlowLabel.READ_SENSITIVE])
    assert [s.tool for s in flow.sources] == [SIMULATED_BY]
    check = check_call(service, "builtin", "web_fetch", {"url": "https://example.com/x"},
                       DecisionContext(mode=PermissionMode.ASK, flow=flow))
    assert check.decision.kind == "ask"
    guard = next(line for line in check.lines() if line.role == "guard")
    assert guard.lead == "Why this asks:"
    assert FlowLabel.READ_SENSITIVE.simulated_source in guard.text
    assert "example.com" in guard.text
    facts = next(line for line in check.lines() if line.role == "facts")
    assert facts.lead == "This call:" and facts.text


def test_text_is_made_visible(service: ToolPermissionService) -> None:
    check = check_call(service, "builtin", "shell", {"command": "echo a\u202eb"})
    subject = next(line for line in check.lines() if line.role == "subject")
    assert "\u202e" not in subject.lead


def test_input_must_be_json() -> None:
    assert parse_call_input("") == {}
    assert parse_call_input('{"a": 1}') == {"a": 1}
    with pytest.raises(CallInputError, match=r"^Input is not valid JSON: "):
        parse_call_input("{not json")


def test_lines_render_as_plain_text(service: ToolPermissionService) -> None:
    rule = service.rules.add(PermissionRule("deny", tool_name="shell", input_pattern="rm *"))
    check = check_call(service, "builtin", "shell", {"command": "ls && rm x"})
    text = [line.render(PLAIN_TEXT) for line in check.lines()]
    assert text[0] == f"DENY — {check.decision.explain()}"
    assert "Matched against:" in text
    assert "  • ls → ask (no rule matched)" in text
    assert any(t.startswith(f"  • rm x → deny (rule #{rule.id}") for t in text)


def test_render_escapes_the_values_not_the_template() -> None:
    line = CheckLine("subject", "<b>", "a & b")
    assert line.render({"subject": "<code>{lead}</code> {text}"},
                       lambda s: s.replace("&", "&amp;").replace("<", "&lt;")) == \
        "<code>&lt;b></code> a &amp; b"
    assert CheckLine("heading", "Matched against:").render(PLAIN_TEXT) == "Matched against:"
    assert CheckLine("facts", "This call:", "reads").render(PLAIN_TEXT) == "This call: reads"
