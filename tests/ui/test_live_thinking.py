"""Thinking streams live in its collapsed section above the answer, and the whole block at
the turn's end fills the same section (one section, not two)."""

from __future__ import annotations

from app.ui.ai_panel.answer_stream import AnswerStream
from app.ui.widgets.thinking_view import ThinkingView
from app.ui.widgets.transcript_view import MessageView, Transcript


def test_live_thinking_then_the_block_fills_one_section(qtbot) -> None:  # type: ignore[no-untyped-def]
    transcript = Transcript()
    qtbot.addWidget(transcript)
    stream = AnswerStream(transcript)
    stream.append_thinking("Let me ")
    stream.append_thinking("think about it.")
    (live,) = [w for w in transcript.items() if isinstance(w, ThinkingView)]
    qtbot.waitUntil(lambda: live.body.text() == "Let me think about it.", timeout=2000)
    assert live.toggle.text().startswith("▸ Thinking…")
    assert not live.body.isVisible()  # collapsed while it streams
    stream.append("The answer.")
    stream.add_thinking("Let me think about it, fully.", redacted=False)
    views = [w for w in transcript.items() if isinstance(w, ThinkingView)]
    assert views == [live] and live.body.text() == "Let me think about it, fully."
    assert live.toggle.text() == "▸ Thinking (6 words)"
    order = transcript.items()
    answer = next(w for w in order if isinstance(w, MessageView))
    assert order.index(live) < order.index(answer)
    stream.flush()
    stream.append_thinking("Next turn.")
    assert len([w for w in transcript.items() if isinstance(w, ThinkingView)]) == 2
