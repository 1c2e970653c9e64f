"""The audit trail of tool calls, for the call runner: each call is recorded before it waits or
runs (pending / running) and completed after, so a record cut off by a crash says interrupted,
never done (app.core.store.audit); completing a call also emits ToolFinished and builds the
``tool_result`` block the model gets."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from app.core.agent.checkpointing import CallChanges
from app.core.agent.events import EventSink, FilesChanged, ToolFinished
from app.core.agent.models import ToolCall
from app.core.outcomes import CallState, Outcome
from app.core.permissions.service import Decision
from app.core.review import QuorumResult
from app.core.store.audit import AuditRepository
from app.core.store.writer import BackgroundWriter
from app.core.tools.base import PersonView
from app.core.tools.images import ImagePart, images_in


class CallAudit:
    """Writes one conversation's audit rows through its background ``writer``, in order.
    ``conversation_id()`` is the conversation's id when a row is written (a new conversation
    gets one on its first run); ``emit`` is told ToolFinished and FilesChanged. ``agent``: the
    agent chain every row carries ("orchestrator › researcher-2"; "" for the person's own)."""

    def __init__(self, audit: AuditRepository, writer: BackgroundWriter,
                 conversation_id: Callable[[], int | None], emit: EventSink,
                 agent: str = "") -> None:
        self._agent = agent
        self._audit = audit
        self._writer = writer
        self._conversation_id = conversation_id
        self._emit = emit

    def begin(self, call: ToolCall, server_id: str, decision: Decision,
              state: CallState) -> Future[int]:
        """Record the call before it waits or runs; the future holds the audit row's id."""
        return self._writer.submit(
            self._audit.begin,
            tool_name=call.name, server_id=server_id, tool_input=call.input,
            decision=_audit_kind(decision), state=state,
            rule_id=decision.rule.id if decision.rule is not None else None,
            conversation_id=self._conversation_id(), tool_use_id=call.id,
            decided_by=decided_by_words(decision), agent=self._agent)

    def set_state(self, row: Future[int], state: CallState) -> None:
        """The call moved on (approved: now running)."""
        self._writer.submit(self._write_state, row, state)

    def set_reviews(self, row: Future[int], result: QuorumResult) -> None:
        """The reviewers' verdict on the call."""
        self._writer.submit(self._write_reviews, row, result)

    def changes_recorded(self, row: Future[int], call: ToolCall, changes: CallChanges) -> None:
        """A call's change set (from the checkpoints): to its audit row and its card."""
        self._writer.submit(self._write_changes, row, changes)
        self._emit(FilesChanged(call.id, call.name, changes))

    def delegated_changes(self, call_id: str, tool_name: str, changes: CallChanges) -> None:
        """What the sub-agents the call ``call_id`` started changed: to that call's audit row
        (so undoing the parent's message undoes them after a restart too) and its card."""
        self._writer.submit(self._write_call_changes, self._conversation_id(), call_id,
                            changes)
        self._emit(FilesChanged(call_id, tool_name, changes))

    def _write_call_changes(self, conversation_id: int | None, call_id: str,
                            changes: CallChanges) -> None:
        if conversation_id is not None:
            self._audit.set_changes_of_call(conversation_id, call_id, changes.to_json())

    def _write_state(self, row: Future[int], state: CallState) -> None:
        row_id = _row_id(row)
        if row_id is not None:
            self._audit.set_state(row_id, state)

    def _write_changes(self, row: Future[int], changes: CallChanges) -> None:
        row_id = _row_id(row)
        if row_id is not None:
            self._audit.set_changes(row_id, changes.to_json())

    def _write_reviews(self, row: Future[int], result: QuorumResult) -> None:
        row_id = _row_id(row)
        if row_id is not None:
            self._audit.set_reviews(row_id, result.to_dict())

    def _write_finish(self, row: Future[int] | None, **fields: Any) -> None:
        self._audit.finish(_row_id(row), **fields)

    def finish(self, call: ToolCall, server_id: str, decision: Decision, outcome: Outcome,
                content: str, is_error: bool, duration_ms: int | None,
                row: Future[int] | None = None,
                images: tuple[ImagePart, ...] = (),
                for_person: PersonView | None = None) -> dict[str, Any]:
        """Record the call's end and build its ``tool_result``. With images, the block's
        content is a list, the text (which names each image) then the image blocks.

        The audit row keeps only the text: the tool history is listed and searched, and
        megabytes of base64 there would make it slow while telling a person nothing the
        image notes do not. The conversation keeps the images (what the model saw; a reloaded
        conversation re-sends exactly that), bounded by app.core.tools.images' caps."""
        self._writer.submit(
            self._write_finish, row,
            tool_name=call.name, server_id=server_id,
            tool_input=call.input if call.error is None else call.raw_input,
            decision=_audit_kind(decision), outcome=outcome,
            output=content, is_error=is_error,
            rule_id=decision.rule.id if decision.rule is not None else None,
            duration_ms=duration_ms, conversation_id=self._conversation_id(),
            tool_use_id=call.id, decided_by=decided_by_words(decision), agent=self._agent,
            for_person=person_view_json(for_person))
        self._emit(ToolFinished(call.id, call.name, is_error, duration_ms or 0, content, outcome,
                                images, for_person))
        result: str | list[dict[str, Any]] = content
        if images:
            result = [{"type": "text", "text": content}, *(i.api_block() for i in images)]
        return {"type": "tool_result", "tool_use_id": call.id, "content": result,
                "is_error": is_error}


def person_view_json(view: PersonView | None) -> dict[str, Any] | None:
    """What the card showed instead of the result, as the audit row keeps it (so a reopened
    card shows it again; the conversation sent to the model never holds it)."""
    if view is None:
        return None
    return {"text": view.text, "images": [image.api_block() for image in view.images]}


def person_view_of(stored: Any) -> PersonView | None:
    """``person_view_json``'s answer read back; None when there is none or it is damaged."""
    if not isinstance(stored, dict) or not isinstance(stored.get("text"), str):
        return None
    return PersonView(stored["text"], images_in(stored.get("images")))


def _audit_kind(decision: Decision) -> str:
    """The audit's decision column: allow, ask or deny. A call sent to review waited for
    someone other than a rule, as an ask does (``decided_by`` says who)."""
    return "ask" if decision.kind == "review" else decision.kind


def decided_by_words(decision: Decision) -> str:
    """What decided, for the audit row and the live tool card alike (a reloaded card reads
    the row, so both say the same): the mode fact or guard, else the rule; and the flow
    reason or the note when they add something."""
    text = decision.decided_by or (decision.rule.summary() if decision.rule is not None
                                   else "no rule matched")
    if decision.flow_reason and decision.flow_reason not in text:
        text += f" — {decision.flow_reason}"
    if decision.note and decision.note not in text:
        text += f". {decision.note}"
    return text


def _row_id(row: Future[int] | None) -> int | None:
    """The id ``AuditRepository.begin`` returned. Writes run in order on one thread, so a
    later write finds the begin done; a failed begin gives None (finish then inserts)."""
    if row is None or not row.done() or row.cancelled() or row.exception() is not None:
        return None
    return row.result()
