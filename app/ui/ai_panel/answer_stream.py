"""The answer as it streams: the assistant's text grows in one message view whose Markdown is
re-rendered at most every 60 ms (so the GUI never stalls), and the turn's thinking goes above
it. The thinking view is imported by the first thinking block, not with the panel."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QTimer

from app.ui.widgets.transcript_view import MessageView, Transcript

if TYPE_CHECKING:
    from app.ui.widgets.thinking_view import ThinkingView

RENDER_INTERVAL_MS = 60


class AnswerStream:
    """The message view the current turn's text streams into (none between turns)."""

    def __init__(self, transcript: Transcript) -> None:
        self._transcript = transcript
        self._current: MessageView | None = None
        self._live_thinking: ThinkingView | None = None  # this turn's, while it streams
        self._render_timer = QTimer(transcript)
        self._render_timer.setSingleShot(True)
        self._render_timer.setInterval(RENDER_INTERVAL_MS)
        self._render_timer.timeout.connect(self._render)

    def append(self, text: str) -> None:
        if self._current is None:
            self._current = MessageView("", "assistant")
            self._transcript.add(self._current)
        self._current.append(text)
        if not self._render_timer.isActive():
            self._render_timer.start()

    def add_thinking(self, text: str, redacted: bool) -> None:
        """Above this turn's answer (still the current view: the turn just ended); the view
        that showed it streaming, when there is one, gets the whole block."""
        from app.ui.widgets.thinking_view import ThinkingView

        if self._live_thinking is not None and not redacted:
            self._live_thinking.finish(text)
            self._live_thinking = None
            return
        self._transcript.insert_before(ThinkingView(text, redacted), self._current)

    def append_thinking(self, text: str) -> None:
        """The thinking as it streams, in a collapsed view above the answer to come."""
        from app.ui.widgets.thinking_view import ThinkingView

        if self._live_thinking is None:
            self._live_thinking = ThinkingView("")
            self._transcript.insert_before(self._live_thinking, self._current)
        self._live_thinking.append(text)

    def flush(self) -> None:
        """The turn's text is complete: rendered now; the next text starts a new view."""
        self._render_timer.stop()
        self._render()
        self._current = None
        self._live_thinking = None

    def break_off(self) -> None:
        """The stream broke off mid-answer: the text so far is marked incomplete."""
        if self._current is not None:
            self._current.mark_incomplete()
        self.flush()

    def forget(self) -> None:
        """The current view is gone or done with (a new run, a cut transcript): the next
        text starts a new one."""
        self._current = None
        self._live_thinking = None

    def _render(self) -> None:
        if self._current is not None:
            self._current.render_markdown()
