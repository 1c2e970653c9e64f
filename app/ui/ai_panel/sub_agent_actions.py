"""What the sub-agent rows under a call can do: stop one child, stop them all, and open a
child's full transcript (read off the GUI thread, shown read-only), review a write-capable
child's changes."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import asyncio  # imported where used: the ready window loads before the event loop

    from app.core.services import Services
    from app.ui.ai_panel.ports import SessionSource

log = logging.getLogger(__name__)


class SubAgentActions:
    def __init__(self, services: Services, sessions: SessionSource) -> None:
        self._services = services
        self._sessions = sessions
        self._reads: set[asyncio.Future[Any]] = set()
        # The window's "Review changes" of a child's workspace (by its conversation), once
        # the window has built it (app.ui.worktree_runs).
        self.review: Callable[[int], None] | None = None

    def review_changes(self, conversation_id: int | None) -> None:
        if conversation_id is not None and self.review is not None:
            self.review(conversation_id)

    def stop(self, execution_id: int) -> None:
        host = self._host()
        child = host.child(execution_id) if host is not None else None
        if child is not None:
            child.cancel()

    def stop_all(self) -> None:
        host = self._host()
        if host is not None:
            host.cancel_all()

    def open_transcript(self, conversation_id: int | None, title: str) -> None:
        import asyncio

        if conversation_id is None:
            return
        read = asyncio.ensure_future(asyncio.to_thread(
            self._services.conversations.messages, conversation_id))
        self._reads.add(read)
        read.add_done_callback(lambda f: self._show(f, title))

    def _show(self, read: asyncio.Future[Any], title: str) -> None:
        from PySide6.QtCore import Qt
        from PySide6.QtWidgets import QDialog, QPlainTextEdit, QVBoxLayout

        self._reads.discard(read)
        if read.cancelled() or read.exception() is not None:
            log.warning("could not read the sub-agent's transcript")
            return
        dialog = QDialog()
        dialog.setWindowTitle(f"Transcript — sub-agent {title}")
        dialog.setObjectName("sub-agent-transcript")
        view = QPlainTextEdit(transcript_text(read.result()))
        view.setReadOnly(True)
        view.setAccessibleName(f"Transcript of sub-agent {title}")
        QVBoxLayout(dialog).addWidget(view)
        dialog.resize(720, 560)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.show()
        self.last_dialog = dialog

    def _host(self) -> Any:
        session = self._sessions.session
        return getattr(session, "sub_agents", None) if session is not None else None


def transcript_text(messages: list[Any]) -> str:
    """A stored conversation as plain text: each message's role, then its blocks."""
    parts: list[str] = []
    for message in messages:
        parts.append(f"── {message.role} ──")
        content = message.content
        for block in content if isinstance(content, list) else [content]:
            if isinstance(block, dict) and block.get("type") == "text":
                parts.append(str(block.get("text", "")))
            elif isinstance(block, dict) and block.get("type") == "tool_use":
                parts.append(f"[tool call {block.get('name')}] "
                             f"{json.dumps(block.get('input'), ensure_ascii=False)[:2000]}")
            elif isinstance(block, dict) and block.get("type") == "tool_result":
                parts.append(f"[tool result] {str(block.get('content'))[:4000]}")
            elif isinstance(block, str):
                parts.append(block)
    return "\n".join(parts)
