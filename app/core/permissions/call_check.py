"""Test a call: what the permission service decides for one call and why, as lines a person
reads. Settings → Permission rules → "Test a call" (app.ui.dialogs.rules_tab) shows them as
HTML; ``python -m app.core.permissions check`` prints them as text.

The call is decided as a run decides it (``ToolPermissionService.decide``), in a chosen mode
and, if asked, as if the conversation had read something (simulated flow labels). The lines
say what decided (``Decision.explain``), a guard's reason, the facts the mode looked at, and
each canonical subject the rules are matched against (each shell command, resolved path or
canonical host) with its own decision and the rule that made it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from app.core.permissions.decision import Decision, DecisionContext, SubjectDecision
from app.core.permissions.flow import FlowState
from app.core.permissions.flow_labels import FlowLabel
from app.core.permissions.rules import DECISION_HELP
from app.core.permissions.service import ToolPermissionService
from app.core.visible_text import make_visible

__all__ = ["PLAIN_TEXT", "CallCheck", "CallInputError", "CheckLine", "check_call",
           "parse_call_input", "simulated_flow"]

# The tool a simulated label names as its source.
SIMULATED_BY = "test a call"

# What a line is, so each view can dress it: the decision, a note on it, a guard's reason,
# the call's facts, the heading of the subjects, one subject.
LineRole = Literal["verdict", "note", "guard", "facts", "heading", "subject"]


class CallInputError(ValueError):
    """The call's input is not JSON; the message says so and where."""


@dataclass(frozen=True)
class CheckLine:
    """``lead`` is what the line starts with (the decision, a heading, a subject); ``text``
    the rest. Both are visible text: invisible and control characters are shown as marks."""

    role: LineRole
    lead: str
    text: str = ""

    def render(self, templates: Mapping[LineRole, str],
               escape: Callable[[str], str] = str) -> str:
        """The line in a view's dress: its role's template (``{lead}`` and ``{text}``, each
        passed through ``escape``), or the lead and the text one after the other."""
        template = templates.get(self.role) or ("{lead} {text}" if self.text else "{lead}")
        return template.format(lead=escape(self.lead), text=escape(self.text))


# The lines as plain text (the command line).
PLAIN_TEXT: dict[LineRole, str] = {
    "verdict": "{lead} — {text}",
    "guard": "⚠ {lead} {text}",
    "subject": "  • {lead} → {text}",
}


@dataclass(frozen=True)
class CallCheck:
    """One call's decision and what the rules saw; ``lines()`` says it for a person."""

    decision: Decision
    # What the rules saw, each with its decision and rule: the decision's own subjects, or,
    # when one rule decided whatever the input, the subjects it would have seen.
    matched: tuple[SubjectDecision, ...]

    @property
    def rule_id(self) -> int | None:
        """The deciding rule's id (None: no rule decided)."""
        return self.decision.rule.id if self.decision.rule is not None else None

    def lines(self) -> list[CheckLine]:
        decision = self.decision
        lines = [CheckLine("verdict", decision.kind.upper(), make_visible(decision.explain()))]
        if decision.kind == "review" and not decision.flow_reason:
            lines.append(CheckLine("note", DECISION_HELP["review"]))
        if decision.flow_reason:
            heading = "Why this asks:" if decision.kind == "ask" else "Why this is refused:"
            lines.append(CheckLine("guard", heading, make_visible(decision.flow_reason)))
        if decision.facts is not None:
            lines.append(CheckLine("facts", "This call:", make_visible(decision.facts.describe())))
        if self.matched:
            lines.append(CheckLine("heading", "Matched against:"))
        for part in self.matched:
            why = part.rule.summary() if part.rule else "no rule matched"
            lines.append(CheckLine("subject", make_visible(part.subject),
                                   f"{part.kind} ({make_visible(why)})"))
        return lines


def parse_call_input(text: str) -> Any:
    """The call's input from its JSON text (empty: ``{}``); ``CallInputError`` if it is not
    JSON."""
    try:
        return json.loads(text or "{}")
    except json.JSONDecodeError as exc:
        raise CallInputError(f"Input is not valid JSON: {exc}") from exc


def simulated_flow(labels: Iterable[FlowLabel]) -> FlowState:
    """A conversation's flow labels as if it had read what each label says
    (``FlowLabel.simulated_source``)."""
    flow = FlowState()
    for label in labels:
        flow.add(label, label.simulated_source, SIMULATED_BY)
    return flow


def check_call(permissions: ToolPermissionService, server: str, tool: str, tool_input: Any,
               context: DecisionContext | None = None) -> CallCheck:
    """Decide the call and say why. Parses the input with the tool's subject parsers
    (tree-sitter for shell): call it off a GUI thread."""
    decision = permissions.decide(server, tool, tool_input, context or DecisionContext())
    matched = decision.subjects
    if not matched:
        # The deciding rule applies whatever the input; still show what rules would see.
        # The rules' own verdict: the mode or a guard may have changed the final one.
        verdict = decision.rule.decision if decision.rule is not None else "ask"
        matched = tuple(SubjectDecision(subject, verdict, decision.rule)
                        for subject in _subjects_of(permissions, server, tool, tool_input))
    return CallCheck(decision, matched)


def _subjects_of(permissions: ToolPermissionService, server: str, tool: str,
                 tool_input: object) -> list[str]:
    found = permissions.registry.get(tool)
    if found is None or found.spec.server_id != server or not isinstance(tool_input, dict):
        return []
    try:
        return [s for s in found.spec.subjects(tool_input, permissions.project_root)
                if isinstance(s, str)]
    except Exception as exc:  # SubjectError keeps what it could read
        return [s for s in getattr(exc, "partial", ()) if isinstance(s, str)]
