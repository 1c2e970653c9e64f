"""Quorum review in the agent loop, for the call runner: a call that a ``review`` rule sends to
the reviewers (or any call that would ask, when the profile says "review before asking me")
is put before the reviewer models first (app.core.review).

Only their unanimous approval runs it ("approved by review"); a rejection goes back to the
model as the tool result, so it can revise (the third rejection of the same intent asks the
person); anything else — disagreement, an escalation, a timeout, an error, no reviewer
configured, the run's budget spent — asks the person, with the reviews in the dialog. Calls a
guard raised (a sensitive path, the flow guard) always go to the person, and a deny is never
reviewed: review only ever stands in for "allow once".
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from app.core.agent.events import EventSink, ReviewArrived, ReviewFinished
from app.core.agent.models import ToolCall
from app.core.agent.transcript import Message
from app.core.permissions.flow import FlowState
from app.core.permissions.service import Decision
from app.core.review import (
    PlanReviewRequest,
    QuorumResult,
    RejectionTracker,
    ReviewBudget,
    ReviewerConfig,
    ReviewRequest,
    intent_key,
    run_quorum,
)
from app.core.settings_fields import REVIEWERS
from app.core.store.settings import SettingsRepository

log = logging.getLogger(__name__)

EXCERPT_CHARS = 6000


@dataclass
class ReviewState:
    """What review keeps for one run: the reviewers (read once), their budget and the
    rejection count per intent."""

    reviewers: tuple[ReviewerConfig, ...] = ()
    budget: ReviewBudget = field(default_factory=ReviewBudget)
    rejections: RejectionTracker = field(default_factory=RejectionTracker)
    # Plan review: whether to review, where this run's messages start, and whether the plan
    # has been approved (or handed to the person) already.
    review_plan: bool = False
    history_start: int = 0
    plan_done: bool = False


PLAN_INTENT = "(the plan)"
PLAN_REJECTED = ("Not run: before the first change of this task, the reviewers read your plan "
                 "and rejected it.\n{feedback}\nState a revised plan that addresses this, "
                 "then make the change.")


def load_reviewers(settings: SettingsRepository) -> tuple[ReviewerConfig, ...]:
    """The configured reviewers with their providers' keys. Reads the keyring: call it off
    the event loop. A malformed entry is skipped (logged): fewer reviewers can only ask more."""
    from app.core.agent.credentials import get_api_key

    out: list[ReviewerConfig] = []
    for entry in settings.read(REVIEWERS):
        try:
            provider = str(entry.get("provider", "anthropic"))
            key = None
            try:
                key = get_api_key(provider)
            except Exception:  # no keyring: a reviewer without a key fails, and asks
                log.warning("no API key for reviewer %r", entry.get("name"))
            out.append(ReviewerConfig(
                name=str(entry["name"]), provider=provider,  # type: ignore[arg-type]
                model=str(entry["model"]), base_url=entry.get("base_url") or None,
                api_key=key, timeout_s=float(entry.get("timeout_s", 90.0)),
                max_calls_per_run=int(entry.get("max_calls_per_run", 50))))
        except (KeyError, TypeError, ValueError) as exc:
            log.error("reviewer entry skipped: %s", exc)
    return tuple(out)


def wants_review(decision: Decision, review_before_asking: bool) -> bool:
    if decision.flow_reason:  # a guard asks the person: secrets are not the reviewers' call
        return False
    return decision.kind == "review" or (decision.kind == "ask" and review_before_asking)


def excerpt(history: Sequence[Message] | None, limit: int = EXCERPT_CHARS) -> str:
    """The end of the conversation as plain text (text blocks and tool calls), for the
    reviewers; the prompt marks it as data."""
    lines: list[str] = []
    size = 0
    for message in reversed(list(history or [])):
        content = message.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        for block in reversed(blocks):
            if not isinstance(block, Mapping):
                continue
            if block.get("type") == "text":
                text = str(block.get("text", ""))
            elif block.get("type") == "tool_use":
                text = f"[tool call {block.get('name')}: " \
                       f"{json.dumps(block.get('input'), ensure_ascii=False)[:500]}]"
            elif block.get("type") == "tool_result":
                text = f"[tool result: {_result_text(block.get('content'))[:300]}]"
            else:
                continue
            line = f"{message.get('role')}: {text}"
            lines.append(line)
            size += len(line)
            if size >= limit:
                return "\n".join(reversed(lines))[-limit:]
    return "\n".join(reversed(lines))


def _result_text(content: Any) -> str:
    """A tool result's text for the excerpt: a content list's text blocks, its images named
    (never their base64)."""
    if not isinstance(content, list):
        return str(content)
    parts = []
    for item in content:
        if isinstance(item, Mapping) and item.get("type") == "text":
            parts.append(str(item.get("text", "")))
        elif isinstance(item, Mapping):
            parts.append(f"[{item.get('type')}]")
    return "\n".join(parts)


class ReviewStep:
    """Puts calls and plans before the reviewer models. ``flow()`` is the conversation's
    labels and ``transcript()`` its messages (None before it is loaded), both read when a
    review starts; ``emit`` is told each review as it arrives and the verdict."""

    def __init__(self, flow: Callable[[], FlowState],
                 transcript: Callable[[], Sequence[Message] | None], emit: EventSink) -> None:
        self._flow = flow
        self._transcript = transcript
        self._emit = emit

    async def review_call(self, call: ToolCall, server_id: str, decision: Decision,
                          preview: str | None, state: ReviewState) -> QuorumResult:
        facts = decision.facts
        request = ReviewRequest(
            tool_name=call.name, server_id=server_id, tool_input=dict(call.input),
            preview=preview, deciding_rule=decision.explain(),
            flow_labels=tuple(sorted(label.value for label in self._flow().labels)),
            contained=bool(facts and facts.contained),
            reversible=bool(facts and facts.reversible),
            conversation_excerpt=excerpt(self._transcript()))

        def arrived(review: Any) -> None:
            self._emit(ReviewArrived(call.id, review))

        # Reviewers that disagree (one approves, one rejects) put the call before the person.
        result = await run_quorum(state.reviewers, request, budget=state.budget,
                                  on_review=arrived, split="ask")
        result = state.rejections.apply(call.name, intent_key(call.name, call.input, server_id),
                                        result)
        self._emit(ReviewFinished(call.id, result))
        return result

    async def review_plan(self, call: ToolCall, state: ReviewState,
                          tools: Sequence[str]) -> QuorumResult | None:
        """Before the run's first state-changing call: the reviewers read the model's stated
        plan. None when there is nothing to review (off, done, or no reviewer)."""
        if not state.review_plan or state.plan_done or not state.reviewers:
            return None
        transcript = self._transcript()
        history = list(transcript or [])[state.history_start:]
        plan = "\n\n".join(
            str(block.get("text", "")) for message in history
            if message.get("role") == "assistant" and isinstance(message.get("content"), list)
            for block in message["content"]
            if isinstance(block, Mapping) and block.get("type") == "text").strip()
        request = PlanReviewRequest(plan=plan or "(the model stated no plan before acting)",
                                    conversation_excerpt=excerpt(transcript),
                                    tools=tuple(tools))

        def arrived(review: Any) -> None:
            self._emit(ReviewArrived(call.id, review))

        result = await run_quorum(state.reviewers, request, budget=state.budget,
                                  on_review=arrived)
        result = state.rejections.apply("plan", PLAN_INTENT, result)
        if result.outcome != "rejected":
            # Approved, or the reviewers could not agree: the calls themselves still go
            # through the rules (and the person) one by one.
            state.plan_done = True
        self._emit(ReviewFinished(call.id, result))
        return result
