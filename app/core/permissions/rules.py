"""PermissionRule: one row of ``tool_permission_rules``, validated before it can exist."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field, replace
from typing import Any, Literal, get_args

# "review": reviewer models decide first (app.core.review); only their unanimous approval runs
# the call, anything else asks the person or declines.
DecisionKind = Literal["allow", "ask", "deny", "review"]
DECISIONS: tuple[str, ...] = get_args(DecisionKind)

# Strictness: a call's decision is the strictest over its subjects (deny > ask > review >
# allow), and at equal priority a stricter rule is evaluated first.
STRICTNESS: dict[str, int] = {"allow": 0, "review": 1, "ask": 2, "deny": 3}

# What each decision does, for a person choosing one (the rule editor, the rules table) or
# reading one ("Test a call"); in the order of strictness.
DECISION_HELP: dict[str, str] = {
    "allow": "The call runs without asking.",
    "review": "Reviewers decide; you are asked if they do not all approve.",
    "ask": "You are asked every time.",
    "deny": "The call is refused.",
}

MAX_PATTERN_LENGTH = 1000
MAX_NAME_LENGTH = 256


class InvalidRuleError(ValueError):
    """A rule value is not acceptable; the message says which field and why."""


@dataclass(frozen=True)
class PermissionRule:
    decision: DecisionKind
    server_id: str | None = None
    tool_name: str | None = None
    tool_pattern: str | None = None
    input_pattern: str | None = None
    priority: int = 0
    description: str = ""
    id: int | None = None
    # An allow rule that explicitly opts out of the flow guard: it still allows a call that
    # sends data out after the conversation read a secret. Shown with a warning badge.
    ignore_flow: bool = False
    created_at: str | None = field(default=None, compare=False)
    updated_at: str | None = field(default=None, compare=False)

    @property
    def auto_approve(self) -> bool:
        """The releio spec's flag, kept for compatibility: true iff the decision is allow."""
        return self.decision == "allow"

    def validated(self) -> PermissionRule:
        return validate_rule(self)

    def with_changes(self, **changes: Any) -> PermissionRule:
        return replace(self, **changes)

    def summary(self) -> str:
        """One line a person (or the model) can read: which calls, what happens."""
        parts = []
        if self.server_id:
            parts.append(f"server {self.server_id}")
        if self.tool_name:
            parts.append(f"tool {self.tool_name}")
        elif self.tool_pattern:
            parts.append(f"tools matching {self.tool_pattern}")
        else:
            parts.append("any tool")
        if self.input_pattern:
            parts.append(f"input matching {self.input_pattern}")
        if self.ignore_flow:
            parts.append("ignores the flow guard")
        label = f"#{self.id} " if self.id is not None else ""
        return f"rule {label}({self.decision}, priority {self.priority}): " + ", ".join(parts)


def _check_text(field_name: str, value: Any, *, max_len: int, allow_space: bool) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidRuleError(f"{field_name} must be text or empty, not {type(value).__name__}")
    if value == "":
        return None  # an empty field means "not set", as in the settings UI
    if value.strip() != value and not allow_space:
        raise InvalidRuleError(f"{field_name} {value!r} has leading or trailing whitespace")
    if len(value) > max_len:
        raise InvalidRuleError(f"{field_name} is longer than {max_len} characters")
    for ch in value:
        category = unicodedata.category(ch)
        if category in ("Cc", "Cf", "Cs", "Co", "Cn"):
            raise InvalidRuleError(
                f"{field_name} contains a control or invisible character (U+{ord(ch):04X})")
        if not allow_space and category.startswith("Z"):
            raise InvalidRuleError(f"{field_name} {value!r} must not contain whitespace")
    return value


def validate_rule(rule: PermissionRule) -> PermissionRule:
    """Return the rule with empty strings normalised to None, or raise InvalidRuleError."""
    if rule.decision not in DECISIONS:
        raise InvalidRuleError(
            f"decision must be one of {', '.join(DECISIONS)}, not {rule.decision!r}")
    # bool is an int subclass; True as a priority is a bug, not a number.
    if not isinstance(rule.priority, int) or isinstance(rule.priority, bool):
        raise InvalidRuleError(f"priority must be an integer, not {rule.priority!r}")
    if not -(2**62) <= rule.priority <= 2**62:
        raise InvalidRuleError("priority is out of range")
    server_id = _check_text("server_id", rule.server_id, max_len=MAX_NAME_LENGTH,
                            allow_space=False)
    tool_name = _check_text("tool_name", rule.tool_name, max_len=MAX_NAME_LENGTH,
                            allow_space=False)
    tool_pattern = _check_text("tool_pattern", rule.tool_pattern, max_len=MAX_NAME_LENGTH,
                               allow_space=False)
    input_pattern = _check_text("input_pattern", rule.input_pattern,
                                max_len=MAX_PATTERN_LENGTH, allow_space=True)
    if tool_name is not None and tool_pattern is not None:
        raise InvalidRuleError(
            "set either tool_name (exact) or tool_pattern (wildcard), not both")
    if tool_name is not None and "*" in tool_name:
        raise InvalidRuleError(
            f"tool_name {tool_name!r} contains '*'; use tool_pattern for wildcards")
    if input_pattern is not None and not input_pattern.strip():
        raise InvalidRuleError("input_pattern must not be only whitespace")
    if not isinstance(rule.ignore_flow, bool | int) or rule.ignore_flow not in (0, 1):
        raise InvalidRuleError(f"ignore_flow must be true or false, not {rule.ignore_flow!r}")
    description = rule.description if rule.description is not None else ""
    if not isinstance(description, str):
        raise InvalidRuleError("description must be text")
    return replace(rule, server_id=server_id, tool_name=tool_name, tool_pattern=tool_pattern,
                   input_pattern=input_pattern, description=description,
                   ignore_flow=bool(rule.ignore_flow))
