"""Replaying a stored conversation into the AI panel's transcript: its messages, and a tool
card per call with the outcome the audit trail recorded (a call the app never finished reads
as interrupted, never as done)."""

from __future__ import annotations

from app.core.agent.transcript import INTERRUPTED_RESULT
from app.core.outcomes import CallState, CardStatus, Outcome
from app.core.services import Services
from app.core.store.audit import ToolExecution
from app.ui.widgets.tool_card import ToolCard
from app.ui.widgets.transcript_view import MessageView, Transcript


def replay_conversation(services: Services, conversation_id: int,
                        transcript: Transcript) -> None:
    """Add the stored conversation's messages and tool cards to ``transcript``."""
    results: dict[str, tuple[str, bool]] = {}
    messages = services.conversations.messages(conversation_id)
    executions = services.audit.for_conversation(conversation_id)
    for message in messages:
        if isinstance(message.content, list):
            for block in message.content:
                if block.get("type") == "tool_result":
                    content = block.get("content", "")
                    if isinstance(content, list):
                        content = "\n".join(b.get("text", "") for b in content)
                    results[block.get("tool_use_id", "")] = (str(content),
                                                             bool(block.get("is_error")))
    for message in messages:
        blocks = message.content if isinstance(message.content, list) else \
            [{"type": "text", "text": message.content}]
        for block in blocks:
            kind = block.get("type")
            if kind == "text" and block.get("text"):
                transcript.add(MessageView(block["text"], message.role))
            elif kind == "tool_use":
                tool = services.registry.get(block["name"])
                server_id = tool.spec.server_id if tool is not None else "builtin"
                execution = executions.get(block["id"])
                card = ToolCard(block["id"], block["name"], server_id, block.get("input"),
                                execution.decision if execution is not None else "history",
                                "from an earlier session")
                card.finish(*_restored_outcome(execution, results.get(block["id"])))
                transcript.add(card)


def _restored_outcome(execution: ToolExecution | None, result: tuple[str, bool] | None
                      ) -> tuple[str, bool, int, str]:
    """(status, is_error, duration_ms, content) for a reloaded card, from the audit row and
    the tool_result in the transcript. A call the app never finished says so; it must never
    read as done."""
    content = result[0] if result is not None else ""
    if execution is not None and execution.state != CallState.DONE:
        status = CardStatus.INTERRUPTED if execution.state == CallState.PENDING \
            else CardStatus.INTERRUPTED_RUNNING
        return status, True, 0, content or execution.output or ""
    if execution is not None:
        return (execution.outcome, execution.is_error, execution.duration_ms or 0,
                content or execution.output or "")
    if result is None or content == INTERRUPTED_RESULT:
        # Never answered, or answered only by the repair after a restart: it did not finish.
        return CardStatus.INTERRUPTED, True, 0, content or INTERRUPTED_RESULT
    # No audit row (its write failed): the transcript's answer is all there is to show.
    return Outcome.EXECUTED, result[1], 0, content
