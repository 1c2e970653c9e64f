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
    """Mixin of AgentSession: the in-memory transcript and its persistence."""

    profile_id: int
    project_root: Path
    _conversation_id: int | None
    _conversations: ConversationRepository
    _writer: BackgroundWriter
    _history: list[Message] | None

    def _load_history(self, title_hint: str | None) -> list[Message]:
        if self._history is not None:
            return self._history
        if self._conversation_id is None:
            conv = self._conversations.create(title=_title(title_hint),
                                              agent_id=self.profile_id,
                                              project_root=str(self.project_root))
            self._conversation_id = conv.id
            self._history = []
            return self._history
        self._conversations.get(self._conversation_id)  # KeyError: deleted meanwhile
        self._history = self._history_from(self._conversations.messages(self._conversation_id))
        return self._history

    def _history_from(self, rows: list[StoredMessage]) -> list[Message]:
        """The in-memory transcript for the stored ``rows`` (after a compaction: its summary
        and what came after it), repairing on disk a turn whose tools were cut off."""
        assert self._conversation_id is not None
        stored = effective_messages(rows)
        dangling = dangling_tool_uses(stored)
        if dangling:  # the app stopped while these ran: answer them on disk too
            self._conversations.append(self._conversation_id, "user",
                                       interrupted_results(dangling))
        # In memory the transcript is kept in the API's shape (normalised once here, then
        # maintained by _append), so a turn never re-walks the whole conversation.
        return normalize(stored)

    def _append(self, role: str, content: list[dict[str, Any]]) -> None:
        """Persist a message as it is, and add it to the in-memory transcript the way
        ``normalize`` would (empty text dropped, a second turn of the same role merged)."""
        assert self._conversation_id is not None and self._history is not None
        self._writer.submit(self._conversations.append, self._conversation_id, role, content)
        blocks = [b for b in content if b.get("type") != "text" or b.get("text")]
        if not blocks:
            return
        history = self._history
        if history and history[-1]["role"] == role:
            history[-1] = {"role": role, "content": history[-1]["content"] + blocks}
        else:
            history.append({"role": role, "content": blocks})


def _title(text: str | None) -> str:
    """The conversation's title: the first line of the first message, shortened."""
    lines = (text or "").strip().splitlines()
    title = lines[0].strip() if lines else "New conversation"
    if len(title) > TITLE_LENGTH:
        title = title[: TITLE_LENGTH - 1].rstrip() + "…"
    return title
