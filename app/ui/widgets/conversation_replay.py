"""Replaying a stored conversation into the AI panel's transcript: its messages, and a tool
card per call with the outcome the audit trail recorded (a call the app never finished reads
as interrupted, never as done).

What each call changed is in its audit row (``changes``, the JSON of ``CallChanges``); the
checkpoints it names are read back from the shadow repository in a worker thread
(:func:`load_call_changes`), so undo, redo and "restore to before this message" work on a
conversation reopened after a restart. An apply from Review changes has an audit row and no
message (app.core.worktrees.apply_record): its card goes after the message it followed."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from PySide6.QtWidgets import QWidget

from app.core.agent.attachments import attachments_in
from app.core.agent.call_audit import person_view_of
from app.core.agent.checkpointing import CallChanges, Checkpointer
from app.core.agent.transcript import INTERRUPTED_RESULT
from app.core.checkpoints import FileChange
from app.core.outcomes import CallState, CardStatus, Outcome
from app.core.services import Services
from app.core.store.audit import ToolExecution, decided_by_text
from app.core.store.conversations import StoredMessage
from app.core.tools.images import ImagePart, images_in
from app.core.visible_text import make_visible
from app.core.worktrees.apply_record import applies_after
from app.ui.widgets.apply_card import apply_card
from app.ui.widgets.attachment_note import add_attachment_note
from app.ui.widgets.tool_card import ToolCard
from app.ui.widgets.transcript_view import MessageView, RunFooter, Transcript

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class StoredConversation:
    """A stored conversation read back for replay: its messages, the audit rows of its calls
    by tool_use id, and each call's result (text, is_error) and images from the transcript."""

    messages: list[StoredMessage]
    executions: dict[str, ToolExecution]
    results: dict[str, tuple[str, bool]]
    images: dict[str, tuple[ImagePart, ...]]

    def run_starts(self) -> list[int]:
        """Where each run begins: 0, then every user message with text (a prompt; its
        answer, calls and their results follow until the next one)."""
        starts = [0]
        for i, message in enumerate(self.messages):
            if i and message.role == "user" and any(
                    isinstance(b, dict) and b.get("type") == "text" and b.get("text")
                    for b in _blocks(message)):
                starts.append(i)
        return starts


def read_conversation(services: Services, conversation_id: int) -> StoredConversation:
    """Read and parse what replaying ``conversation_id`` needs (blocking: the database)."""
    results: dict[str, tuple[str, bool]] = {}
    images: dict[str, tuple[ImagePart, ...]] = {}
    messages = services.conversations.messages(conversation_id)
    executions = services.audit.for_conversation(conversation_id)
    for message in messages:
        if isinstance(message.content, list):
            for block in message.content:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    content = block.get("content", "")
                    tool_use_id = str(block.get("tool_use_id", ""))
                    if isinstance(content, list):
                        images[tool_use_id] = images_in(content)
                        content = "\n".join(str(b.get("text", "")) for b in content
                                            if isinstance(b, dict))
                    results[tool_use_id] = (str(content), bool(block.get("is_error")))
    return StoredConversation(messages, executions, results, images)


def replay_conversation(services: Services, conversation_id: int,
                        transcript: Transcript) -> tuple[dict[str, ToolCard],
                                                         dict[str, ToolExecution]]:
    """Add the stored conversation's messages and tool cards to ``transcript`` (with a run
    footer after each prompt's calls); returns the cards and the audit rows by tool_use id."""
    stored = read_conversation(services, conversation_id)
    cards, _footers = replay_messages(services, stored, 0, len(stored.messages), transcript)
    return cards, stored.executions


def replay_messages(services: Services, stored: StoredConversation, start: int, stop: int,
                    transcript: Transcript, above: QWidget | None = None
                    ) -> tuple[dict[str, ToolCard], list[RunFooter]]:
    """Add ``stored.messages[start:stop]`` to ``transcript``, just above ``above`` (at the end
    when None); returns their cards by tool_use id and their run footers."""
    cards: dict[str, ToolCard] = {}
    footers: list[RunFooter] = []
    footer: RunFooter | None = None

    def place(widget: QWidget) -> QWidget:
        return transcript.insert_before(widget, above)

    def end_run() -> None:
        nonlocal footer
        if footer is not None:
            place(footer)
            footer.refresh()
            footers.append(footer)
        footer = None

    applies = applies_after(stored.messages, stored.executions, shown_from=start)

    def place_applies(after: int) -> None:
        for execution in applies.get(after, ()):
            end_run()  # the run before it ends there (a no-op after the first)
            card = apply_card(str(execution.tool_use_id), execution.tool_name,
                              execution.input, execution.output or "")
            place(card)
            cards[card.tool_use_id] = card

    place_applies(0)
    for message in stored.messages[start:stop]:
        blocks = _blocks(message)
        for block in blocks:
            if not isinstance(block, dict):  # a damaged stored message: show the rest
                continue
            kind = block.get("type")
            if kind == "text" and block.get("text"):
                if message.role == "user":
                    end_run()
                view = place(MessageView(block["text"], message.role))
                if message.role == "user":  # the person's attached files, above the prompt
                    add_attachment_note(transcript, view, attachments_in(blocks))
            elif kind in ("thinking", "redacted_thinking"):
                from app.ui.widgets.thinking_view import ThinkingView

                place(ThinkingView(str(block.get("thinking", "")),
                                   redacted=kind == "redacted_thinking"))
            elif kind == "tool_use" and isinstance(block.get("id"), str) \
                    and isinstance(block.get("name"), str):
                card = _call_card(services, stored, block)
                place(card)
                cards[block["id"]] = card
                if footer is None:
                    footer = RunFooter()
                footer.cards.append(card)
        place_applies(message.id)
    end_run()
    return cards, footers


def _call_card(services: Services, stored: StoredConversation,
               block: Mapping[str, Any]) -> ToolCard:
    """A stored call's card, finished as its audit row and result say."""
    tool = services.registry.get(block["name"])
    server_id = tool.spec.server_id if tool is not None else "builtin"
    execution = stored.executions.get(block["id"])
    card = _restored_card(block, server_id, execution)
    card.finish(*_restored_outcome(execution, stored.results.get(block["id"])),
                stored.images.get(block["id"], ()),
                person_view_of(execution.for_person) if execution else None)
    if execution is not None:
        card.restore_reviews(execution.reviews, execution.decided_by)
    return card


def _blocks(message: StoredMessage) -> list[Any]:
    if isinstance(message.content, list):
        return message.content
    return [{"type": "text", "text": message.content}]


async def load_call_changes(checkpointer: Checkpointer,
                            executions: Mapping[str, ToolExecution]
                            ) -> dict[str, CallChanges | str]:
    """The change sets the audit rows recorded, rebuilt from the shadow repository (in a worker
    thread): tool_use id → ``CallChanges``, or why it cannot be rebuilt."""
    recorded = {tool_use_id: execution.changes for tool_use_id, execution in executions.items()
                if isinstance(execution.changes, dict)}
    if not recorded:
        return {}
    return await asyncio.to_thread(_rebuild_all, checkpointer, recorded)


def _rebuild_all(checkpointer: Checkpointer, recorded: Mapping[str, dict[str, Any]]
                 ) -> dict[str, CallChanges | str]:
    out: dict[str, CallChanges | str] = {}
    store = checkpointer.store
    if not store.shadow_dir.is_dir():  # never checkpointed here: another project's calls
        return dict.fromkeys(recorded, "its checkpoints are not in this project")
    for tool_use_id, data in recorded.items():
        try:
            out[tool_use_id] = rebuild_call_changes(checkpointer, tool_use_id, data)
        except Exception as exc:
            log.info("change set of %s not rebuilt: %s", tool_use_id, exc)
            out[tool_use_id] = "its checkpoints are gone"
    return out


def rebuild_call_changes(checkpointer: Checkpointer, tool_use_id: str,
                         data: Mapping[str, Any]) -> CallChanges:
    """``CallChanges`` from its ``to_json()`` (blocking: runs git)."""
    store = checkpointer.store
    before = store.checkpoint(str(data["before"]))
    after = store.checkpoint(str(data["after"]))
    changes = tuple(
        FileChange(path=str(c["path"]), kind=c["kind"],
                   old_path=str(c["old_path"]) if c.get("old_path") else None,
                   binary=bool(c.get("binary")))
        for c in data.get("changes") or ())
    return CallChanges(tool_use_id, before, after, changes)


def _restored_card(block: Mapping[str, Any], server_id: str,
                   execution: ToolExecution | None) -> ToolCard:
    """A reloaded call's card: the decision, what decided and whether it ran, as its audit
    row recorded them (the badge then says who decided, in the words the history uses)."""
    if execution is None:
        return ToolCard(block["id"], block["name"], server_id, block.get("input"), "history",
                        "from an earlier session")
    decided_by = decided_by_text(execution)
    card = ToolCard(block["id"], block["name"], server_id, block.get("input"),
                    execution.decision, make_visible(decided_by) or "from an earlier session",
                    decided_by=decided_by, has_rule=execution.rule_id is not None)
    card.ran = execution.ran
    return card


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
