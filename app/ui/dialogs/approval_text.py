"""The words of the approval dialog (app.ui.dialogs.approval): why the call asks, what decided
it, and the call's input as JSON with every string made visible.

Separate from the dialog because it is text built from a decision, not widgets: the explanation
of a permission decision is read and tested on its own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from app.core.visible_text import make_visible
from app.ui.markup import escape

if TYPE_CHECKING:
    from app.core.agent.events import ApprovalRequest


def why_text(request: ApprovalRequest) -> str:
    """Rich text: why this call asks the person (the rule, the mode or the guard)."""
    decision = request.decision
    rule = decision.rule
    # What decided, named: "auto mode", "flow guard", "sensitive path" (the details are in the
    # small "Decided by" line).
    decider = escape(make_visible(decision.decided_by.partition(":")[0].strip()))
    if rule is None and decider:
        text = f"No permission rule decides this call, so the {decider} decides: it asks you."
    elif rule is not None and decider and rule.decision != decision.kind:
        # A guard raised what the rule said (an allow rule, then a secret was read).
        label = make_visible(rule.description or rule.summary())
        text = (f"Rule #{rule.id} <i>{escape(label)}</i> would {rule.decision} this call, "
                f"but the {decider} asks you first.")
    elif rule is None:
        text = "No permission rule matches this call, so Tebiki asks you (the safe default)."
    elif rule.decision == "review":
        label = make_visible(rule.description or rule.summary())
        text = (f"Rule #{rule.id} <i>{escape(label)}</i> sends this call to the reviewers; "
                "they did not all approve, so you decide.")
    else:
        label = make_visible(rule.description or rule.summary())
        text = (f"Asked because of rule #{rule.id}: <i>{escape(label)}</i> "
                f"<span style='color:palette(placeholder-text)'>({escape(rule.summary())})"
                "</span>")
    if decision.note:
        text += f"<br>{escape(decision.note)}"
    return text


def decided_by_text(request: ApprovalRequest) -> str:
    """Plain text: what decided, and the facts the permission mode looked at."""
    decision = request.decision
    rule = decision.rule
    why = decision.decided_by or (rule.summary() if rule is not None else
                                  "no rule matched (the safe default is ask)")
    text = f"Decided by: {why}"
    facts = decision.facts.describe() if decision.facts is not None else ""
    if facts and facts not in why:
        text += f" · This call: {facts}"
    return make_visible(text)


def visible_json(value: Any) -> Any:
    """``value`` with every string (keys too) made visible, so the JSON view shows the same
    markers as the other views rather than JSON escapes for some characters and raw bidi or
    zero-width characters for others."""
    if isinstance(value, str):
        return make_visible(value)
    if isinstance(value, dict):
        return {make_visible(str(k)): visible_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [visible_json(v) for v in value]
    return value
