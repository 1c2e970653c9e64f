"""The context bar and compaction (the agent's side is app.core.agent.compaction).

The context bar shows the last request's input tokens against the model's context window; from
80% on it offers Compact, and a request rejected for its length offers "Compact and retry"
instead of a dead error. Not while a run is going.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton

from app.ui.ai_panel.context_bar import ContextBar
from app.ui.ai_panel.on_demand import OnDemand
from app.ui.ai_panel.ports import idle_session
from app.ui.ai_panel.run_notes import grey_note
from app.ui.controllers.checkpoints import loop_running
from app.ui.tones import Tone, border_colour, follow_palette
from app.ui.widgets.transcript_view import ErrorCard

if TYPE_CHECKING:
    import asyncio  # imported where used: the ready window loads before the event loop
    from collections.abc import Callable

    from PySide6.QtWidgets import QWidget

    from app.core.agent.session import AgentSession
    from app.core.pricing import Usage
    from app.core.store.conversations import ConversationRepository
    from app.ui.ai_panel.answer_stream import AnswerStream
    from app.ui.ai_panel.ports import RunStarter, SessionSource, Status
    from app.ui.widgets.transcript_view import Transcript

log = logging.getLogger(__name__)


class ContextCompaction:
    """``context_bar``: made by the first usage to show and placed by the panel's
    ``place_bar`` above the usage line."""

    def __init__(self, conversations: ConversationRepository, sessions: SessionSource,
                 runs: RunStarter, status: Status, transcript: Transcript,
                 stream: AnswerStream, place_bar: Callable[[QWidget], None]) -> None:
        self._conversations = conversations
        self._sessions = sessions
        self._runs = runs
        self._status = status
        self._transcript = transcript
        self._stream = stream
        self._model = ""  # of the last request (its context window)
        self._context_tasks: set[asyncio.Future[None]] = set()
        self._busy = False  # a run is going: no Compact
        self._bar = OnDemand(self._make_bar, place_bar)

    def _make_bar(self) -> ContextBar:
        bar = ContextBar()
        bar.compact_requested.connect(lambda: self.compact())
        bar.set_busy(self._busy)
        return bar

    @property
    def context_bar(self) -> ContextBar:
        return self._bar.widget

    def set_busy(self, busy: bool) -> None:
        self._busy = busy
        if (bar := self._bar.built) is not None:
            bar.set_busy(busy)

    def show_context(self, model: str, turn: Usage) -> None:
        """A model turn's usage arrived: its input is what the conversation takes now."""
        from app.core.agent.compaction import context_window

        self._model = model
        used = turn.input_tokens + turn.cache_write_tokens + turn.cache_read_tokens
        self.context_bar.show_usage(used, context_window(model))

    def offer_compaction(self, message: str) -> bool:
        """After a failed request: when it was too long for the context window, a card
        offering "Compact and retry"."""
        from app.core.agent.compaction import is_context_overflow

        if not is_context_overflow(message):
            return False
        card = QFrame()
        card.setObjectName("compact-offer")
        follow_palette(card, lambda: "QFrame#compact-offer { border: 1px solid "
                       f"{border_colour(Tone.WARNING)}; border-radius: 8px; }}")
        row = QHBoxLayout(card)
        label = QLabel("The conversation no longer fits the model's context window. Compact "
                       "it: a summary replaces the earlier history sent to the model (the "
                       "transcript stays), then your message is sent again.")
        label.setWordWrap(True)
        button = QPushButton("Compact and retry")
        button.setObjectName("compact-and-retry")

        def go() -> None:
            if self.compact(retry_after=True) is not None:
                button.setEnabled(False)

        button.clicked.connect(go)
        row.addWidget(label, 1)
        row.addWidget(button)
        self._transcript.add(card)
        return True

    def compact(self, retry_after: bool = False) -> asyncio.Future[None] | None:
        session = idle_session(self._sessions, self._runs, self._status)
        if session is None:
            return None
        return self._runs.start(self._compact(session, retry_after))

    async def _compact(self, session: AgentSession, retry_after: bool) -> None:
        import asyncio

        from app.core.agent.compaction import CompactionError, context_window

        self._status("Compacting the conversation…")
        try:
            result = await session.compact()
        except asyncio.CancelledError:
            self._transcript.add(grey_note("■ Compaction stopped; nothing was changed."))
            raise
        except CompactionError as exc:
            self._transcript.add(ErrorCard(f"Not compacted: {exc.message}", False,
                                           lambda: None))
            return
        note = grey_note(f"⇣ Conversation compacted: {result.summarised} earlier messages are "
                         "sent to the model as a summary from now on (the transcript stays).",
                         "compaction-note")
        note.setWordWrap(True)
        note.setToolTip(result.summary)
        self._transcript.add(note)
        self.context_bar.show_usage(result.summary_tokens, context_window(self._model),
                                    estimate=True)
        if retry_after:
            self._stream.forget()
            await session.retry()

    def reset(self) -> None:
        """Another conversation: the context figure of a reopened one is read from the store
        once the panel has its session."""
        if (bar := self._bar.built) is not None:
            bar.clear()
        if loop_running():
            QTimer.singleShot(0, self._show_stored_context)

    def _shown_usage(self) -> int:
        bar = self._bar.built
        return bar.used if bar is not None else 0

    def _show_stored_context(self) -> None:
        import asyncio

        session = self._sessions.session
        if session is None or session.conversation_id is None:
            return
        task = asyncio.ensure_future(self._load_context(session, session.conversation_id))
        self._context_tasks.add(task)
        task.add_done_callback(self._context_tasks.discard)

    async def _load_context(self, session: AgentSession, conversation_id: int) -> None:
        import asyncio

        from app.core.agent.compaction import context_window, stored_context

        try:
            found = await asyncio.to_thread(stored_context, self._conversations,
                                            conversation_id)
        except Exception:  # a missing figure is no reason to fail the reopening
            log.exception("reading the conversation's last usage failed")
            return
        if found is None or self._sessions.session is not session or self._shown_usage():
            return  # another conversation meanwhile, or a request already said
        model, used, estimate = found
        self._model = model
        self.context_bar.show_usage(used, context_window(model), estimate=estimate)
