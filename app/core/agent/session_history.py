"""The conversation's transcript, for AgentSession: loaded from the store once (repairing a
turn whose tools were cut off by a crash, and sending a compacted conversation's summary
instead of what it covers; app.core.agent.compaction), then kept in memory in the API's shape
while every message is persisted as it completes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app.core.agent.compaction import effective_messages
from app.core.agent.transcript import (
    Message,
    dangling_tool_uses,
    interrupted_results,
    normalize,
)
from app.core.store.conversations import ConversationRepository, StoredMessage
from app.core.store.writer import BackgroundWriter

TITLE_LENGTH = 60


class ConversationHistory:
    """One conversation's transcript and its persistence. The conversation
    ``conversation_id`` (None: created, for the profile ``profile_id`` in ``project_root``,
    by the first ``load``); messages are written through ``writer``, in order."""

    def __init__(self, conversations: ConversationRepository, writer: BackgroundWriter,
                 profile_id: int, project_root: Path,
                 conversation_id: int | None = None, parent_id: int | None = None) -> None:
        self._conversations = conversations
        # A sub-agent's conversation is kept with its parent's (and out of the lists).
        self._parent_id = parent_id
        self._writer = writer
        self._profile_id = profile_id
        self._project_root = project_root
        self._conversation_id = conversation_id
        # The transcript in the API's shape; None until loaded (or to read it back again).
        self.messages: list[Message] | None = None

    @property
    def conversation_id(self) -> int | None:
        """The conversation's id; set when the first ``load`` creates it."""
        return self._conversation_id

    def load(self, title_hint: str | None) -> list[Message]:
        """The transcript: from memory, else from the store; a new conversation is created
        (titled after ``title_hint``). KeyError when the conversation was deleted."""
        if self.messages is not None:
            return self.messages
        if self._conversation_id is None:
            conv = self._conversations.create(title=title_for(title_hint),
                                              agent_id=self._profile_id,
                                              project_root=str(self._project_root),
                                              parent_id=self._parent_id)
            self._conversation_id = conv.id
            self.messages = []
            return self.messages
        self._conversations.get(self._conversation_id)  # KeyError: deleted meanwhile
        self.messages = self.from_rows(self._conversations.messages(self._conversation_id))
        return self.messages

    def replace(self, messages: list[Message] | None) -> None:
        """The transcript is now ``messages`` (after a fork or a compaction changed what is
        stored); None reads it back from the store on the next ``load``."""
        self.messages = messages

    def from_rows(self, rows: list[StoredMessage]) -> list[Message]:
        """The in-memory transcript for the stored ``rows`` (after a compaction: its summary
        and what came after it), repairing on disk a turn whose tools were cut off."""
        assert self._conversation_id is not None
        stored = effective_messages(rows)
        dangling = dangling_tool_uses(stored)
        if dangling:  # the app stopped while these ran: answer them on disk too
            self._conversations.append(self._conversation_id, "user",
                                       interrupted_results(dangling))
        # In memory the transcript is kept in the API's shape (normalised once here, then
        # maintained by append), so a turn never re-walks the whole conversation.
        return normalize(stored)

    def append(self, role: str, content: list[dict[str, Any]]) -> None:
        """Persist a message as it is, and add it to the in-memory transcript the way
        ``normalize`` would (empty text dropped, a second turn of the same role merged)."""
        assert self._conversation_id is not None and self.messages is not None
        self._writer.submit(self._conversations.append, self._conversation_id, role, content)
        blocks = [b for b in content if b.get("type") != "text" or b.get("text")]
        if not blocks:
            return
        history = self.messages
        if history and history[-1]["role"] == role:
            history[-1] = {"role": role, "content": history[-1]["content"] + blocks}
        else:
            history.append({"role": role, "content": blocks})


    def final_answer(self) -> str:
        """The text of the last assistant message (a sub-agent's answer to its parent)."""
        for message in reversed(self.messages or []):
            if message["role"] == "assistant":
                return "\n".join(b.get("text", "") for b in message["content"]
                                 if isinstance(b, dict) and b.get("type") == "text").strip()
        return ""


def title_for(text: str | None) -> str:
    """The conversation's title: the first line of the first message, shortened."""
    lines = (text or "").strip().splitlines()
    title = lines[0].strip() if lines else "New conversation"
    if len(title) > TITLE_LENGTH:
        title = title[: TITLE_LENGTH - 1].rstrip() + "…"
    return title
