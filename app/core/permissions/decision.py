"""What ``ToolPermissionService.decide`` answers (``Decision``), per subject
(``SubjectDecision``), and what it is told beyond the input (``DecisionContext``)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from app.core.permission_mode import PermissionMode
from app.core.permissions.facts import CallFacts
from app.core.permissions.flow import FlowState
from app.core.permissions.rules import DecisionKind, PermissionRule
from app.core.tools.base import ToolContext

__all__ = ["PLAN_MODE_REFUSAL", "Decision", "DecisionContext", "SubjectDecision"]


@dataclass(frozen=True)
class SubjectDecision:
    subject: str
    kind: DecisionKind
    rule: PermissionRule | None


PLAN_MODE_REFUSAL = (
    "Refused: the agent is in plan mode, which is read-only. Do not change files, run "
    "commands or change anything else. Read what you need, then propose the changes (which "
    "files, what edits, which commands) so the user can review them and switch to another "
    "mode to carry them out.")


@dataclass(frozen=True)
class DecisionContext:
    """What ``decide()`` knows about the call beyond its input: the profile's mode, the
    conversation's flow labels, the capability context the call will run with, whether
    checkpoints record the project (the reversibility fact), and which conversation it is."""

    mode: PermissionMode = PermissionMode.ASK
    flow: FlowState | None = None
    tool_context: ToolContext | None = None
    checkpoints: bool = False
    # The conversation the call belongs to: its "remember for this conversation" rules apply
    # (app.core.permissions.conversation_rules). None: only the stored rules.
    conversation_id: int | None = None


@dataclass(frozen=True)
class Decision:
    """The outcome for one call: ``kind`` and the rule that decided it (None: no rule matched).

    ``decided_by`` says in words what decided when it was not (only) a rule: the mode and the
    facts it used, or a guard; ``flow_reason`` is the guard's reason a person must read
    ("this conversation read ~/.aws/credentials at 10:32; this call sends data to …")."""

    kind: DecisionKind
    rule: PermissionRule | None = None
    subjects: tuple[SubjectDecision, ...] = field(default=(), compare=False)
    note: str = field(default="", compare=False)
    decided_by: str = field(default="", compare=False)
    flow_reason: str = field(default="", compare=False)
    facts: CallFacts | None = field(default=None, compare=False)

    @property
    def auto_approve(self) -> bool:
        return self.kind == "allow"

    def explain(self) -> str:
        if self.decided_by:
            why = self.decided_by
        else:
            why = self.rule.summary() if self.rule else \
                "no rule matched (the safe default is ask)"
        text = f"{self.kind}: {why}"
        return f"{text}. {self.note}" if self.note else text

    def with_kind(self, kind: DecisionKind, decided_by: str, *, note: str | None = None,
                  flow_reason: str | None = None) -> Decision:
        return replace(self, kind=kind, decided_by=decided_by,
                       note=self.note if note is None else note,
                       flow_reason=self.flow_reason if flow_reason is None else flow_reason)
