"""What an agent run tells the outside world while it happens, and how it asks for approval.

The loop never talks to widgets: it calls an ``EventSink`` with these frozen events, in order,
and awaits an ``Approver`` for calls the permission rules send to the person. The UI renders the
events and answers approvals with a dialog; tests record the events and script the approvals.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeGuard, get_args

from app.core.agent.checkpointing import CallChanges
from app.core.agent.models.base import ProviderError
from app.core.outcomes import Outcome
from app.core.permissions.flow import FlowSource
from app.core.permissions.rules import PermissionRule
from app.core.permissions.service import Decision
from app.core.pricing import Usage
from app.core.review import QuorumResult, Review
from app.core.tools.base import PersonView, ToolSpec
from app.core.tools.capability_lift import CapabilityLift
from app.core.tools.images import ImagePart


@dataclass(frozen=True)
class ApprovalRequest:
    """One tool call waiting for the person's decision.

    ``preview`` is the unified diff a file-writing tool would make (computed before asking, so
    the dialog shows exactly what will happen); None when the tool has no preview or it failed.
    """

    tool_use_id: str
    tool_name: str
    server_id: str
    input: dict[str, Any]
    spec: ToolSpec | None
    decision: Decision
    preview: str | None = None
    # The reviewer models' verdicts when the call was reviewed first and they did not agree
    # (app.core.review), and why the person is asked after all.
    reviews: tuple[Review, ...] = ()
    review_reason: str = ""
    # Which of the turn's tool calls this is, (1, 2) for "1 of 2"; None for a lone call.
    position: tuple[int, int] | None = None
    # The tool's configuration refused this call; approving runs it with this change (and
    # keeps the change in the profile when the person ticks it: ``ApprovalResponse.keep_lift``).
    lift: CapabilityLift | None = None
    # The sub-agent that asks ("orchestrator", "researcher-2"); () for the person's own agent.
    # Its "Always allow" is kept for that sub-agent only (app.core.agent.call_approval).
    agent_chain: tuple[str, ...] = ()
    # The conversation that asks (several run at once: the dialog names it); set by the UI.
    conversation_id: int | None = None
    conversation_title: str = ""


@dataclass(frozen=True)
class ApprovalResponse:
    """The person's answer. ``reason`` is sent to the model on decline; ``remember_rule`` is
    added to the rule table before the call runs ("Always allow ...")."""

    approved: bool
    reason: str = ""
    remember_rule: PermissionRule | None = None
    # "Always allow these N commands" adds one rule per part, all at once.
    more_rules: tuple[PermissionRule, ...] = ()
    # Keep the request's capability lift in the tool's configuration (else this call only).
    keep_lift: bool = False

    @property
    def rules_to_remember(self) -> tuple[PermissionRule, ...]:
        first = (self.remember_rule,) if self.remember_rule is not None else ()
        return first + self.more_rules

    @classmethod
    def approve(cls, remember_rule: PermissionRule | None = None) -> ApprovalResponse:
        return cls(True, "", remember_rule)

    @classmethod
    def decline(cls, reason: str = "", remember_rule: PermissionRule | None = None
                ) -> ApprovalResponse:
        return cls(False, reason, remember_rule)


@dataclass(frozen=True)
class TextDelta:
    """A piece of the assistant's text, as it streams."""

    text: str


@dataclass(frozen=True)
class ToolRequested:
    """The model asked for a tool call; ``decision`` says what the rules made of it (for calls
    that are invalid or not offered, a ``deny`` with a note, and the call is never run)."""

    tool_use_id: str
    tool_name: str
    server_id: str
    input: dict[str, Any]
    decision: Decision


@dataclass(frozen=True)
class AwaitingApproval:
    request: ApprovalRequest


@dataclass(frozen=True)
class ToolStarted:
    tool_use_id: str
    tool_name: str


@dataclass(frozen=True)
class ToolFinished:
    """A call is over, whatever happened. ``outcome`` is the audit outcome; ``content`` is
    exactly what the model receives."""

    tool_use_id: str
    tool_name: str
    is_error: bool
    duration_ms: int
    content: str
    outcome: Outcome
    # The result's images (the card's thumbnails); ``content`` names each one.
    images: tuple[ImagePart, ...] = field(default=(), repr=False)
    # What the card shows instead of ``content`` and ``images`` when the tool marked some of
    # its content for the person only or the model only (ToolResult.for_person).
    for_person: PersonView | None = field(default=None, repr=False)


@dataclass(frozen=True)
class ToolProgress:
    """How far a running call got, as its tool reports it (an MCP server's progress
    notifications). ``total`` None: unknown (an indeterminate bar). Throttled by the runner:
    at most a few per second per call, the latest value always arriving before ToolFinished."""

    tool_use_id: str
    progress: float
    total: float | None = None
    message: str | None = None


@dataclass(frozen=True)
class FilesChanged:
    """What a call changed in the project folder, from the checkpoints around it (sent after
    its ToolFinished; for a call stopped half-way, possibly after the run ended)."""

    tool_use_id: str
    tool_name: str
    changes: CallChanges


@dataclass(frozen=True)
class ReviewArrived:
    """One reviewer's verdict on a call, as it arrives (the card fills in live)."""

    tool_use_id: str
    review: Review


@dataclass(frozen=True)
class ReviewFinished:
    """The reviewers' combined answer on a call: approved (it runs), rejected (the model gets
    the rationale) or ask (the person decides, with the reviews in the dialog)."""

    tool_use_id: str
    result: QuorumResult


@dataclass(frozen=True)
class FlowChanged:
    """The conversation's flow labels changed (app.core.permissions.flow): ``summary`` is the
    chip's text ("clean", "read sensitive", "untrusted content"), ``sources`` each reason."""

    summary: str
    sources: tuple[FlowSource, ...]


@dataclass(frozen=True)
class ThinkingBlock:
    """The model's reasoning in a turn (adaptive thinking), after the turn: shown collapsed
    above the turn's answer, never as part of it. ``redacted``: the API encrypted it."""

    text: str
    redacted: bool = False


@dataclass(frozen=True)
class UsageUpdated:
    """A model turn's tokens (``turn``) and the conversation's so far per model
    (``conversation``); app.core.pricing turns them into cost."""

    model: str
    turn: Usage
    conversation: dict[str, Usage]
    cache_ttl: str = "5m"


@dataclass(frozen=True)
class RunFinished:
    """The run ended normally: ``stop_reason`` is the model's (end_turn, max_tokens, ...) or
    ``max_iterations`` when the profile's iteration cap stopped it. The token counts are the
    run's totals over its model turns: ``input_tokens`` the uncached input, then the input
    written to and read from the prompt cache (billed at 1.25× and 0.1× of the input price)."""

    stop_reason: str
    iterations: int
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0


@dataclass(frozen=True)
class RunFailed:
    """The model API (or the run) failed. ``error`` is the ProviderError subclass saying what
    kind of failure (the class, not the instance: an exception keeps its traceback's frames,
    and with them the whole request, alive). The transcript is intact;
    ``AgentSession.retry()`` re-sends when ``retryable`` (and may also work after the cause,
    e.g. a key, was fixed)."""

    message: str
    error: type[ProviderError]

    @property
    def retryable(self) -> bool:
        return self.error.retryable


@dataclass(frozen=True)
class RunCancelled:
    """Stop was pressed (or the run's task was cancelled); the partial transcript is kept."""

    detail: str = field(default="", compare=False)


@dataclass(frozen=True)
class ThinkingDelta:
    """A piece of the model's thinking as it streams (shown live, collapsed); the whole block
    follows as ``ThinkingBlock`` when the turn is complete."""

    text: str


@dataclass(frozen=True)
class RetryWaiting:
    """The model request waits ``seconds`` before it is sent again (``why``: "rate limited",
    "the service answered 529"): the panel counts down instead of going silent."""

    seconds: float
    why: str


@dataclass(frozen=True)
class SubAgentUpdated:
    """A sub-agent started by the call ``parent_call_id`` moved on (app.core.agent.sub_agents):
    its row in the tree under that call. ``status``: awaiting_approval, working, needs_input,
    done, failed, cancelled; ``conversation_id``: its transcript, once it has one."""

    execution_id: int
    parent_call_id: str
    name: str
    chain: str
    status: str
    elapsed_s: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    conversation_id: int | None = None
    run_id: int = 0  # its orchestration run (the one "Run it" resumes)
    workspace_branch: str = ""  # its changes wait for review there (a write-capable child's)


# What happens to one tool call, and what happens to the run as a whole.
ToolEvent = (ToolRequested | AwaitingApproval | ToolStarted | ToolProgress | ToolFinished
             | FilesChanged | ReviewArrived | ReviewFinished)
RunEvent = (TextDelta | ThinkingDelta | ThinkingBlock | FlowChanged | UsageUpdated
            | RunFinished | RunFailed | RunCancelled | SubAgentUpdated | RetryWaiting)
AgentEvent = ToolEvent | RunEvent
_TOOL_EVENT_TYPES = get_args(ToolEvent)


def is_tool_event(event: AgentEvent) -> TypeGuard[ToolEvent]:
    """Whether ``event`` is about one tool call (else it is about the run as a whole)."""
    return isinstance(event, _TOOL_EVENT_TYPES)

Approver = Callable[[ApprovalRequest], Awaitable[ApprovalResponse]]
EventSink = Callable[[AgentEvent], None]
