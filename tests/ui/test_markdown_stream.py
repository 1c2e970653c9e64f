"""Frozen blocks + tail: nothing lost, fences kept, renders bounded however long the stream."""

from __future__ import annotations

import random

from app.ui.widgets.markdown_stream import MAX_TAIL_CHARS, SplitState, freeze_ready_blocks


def _stream(text: str, step: int):
    state, blocks, tail = SplitState(), [], ""
    for end in range(step, len(text) + step, step):
        new, tail = freeze_ready_blocks(text[:end], state)
        blocks += new
    return blocks, tail, state


def test_paragraphs_are_frozen_once_complete():
    text = "First paragraph.\n\nSecond *para*.\n\nThird, still strea"
    blocks, tail, _ = _stream(text, 3)
    assert blocks == ["First paragraph.\n\n", "Second *para*.\n\n"]
    assert tail == "Third, still strea"


def test_nothing_is_lost_without_fences():
    rng = random.Random(7)
    words = [rng.choice(["alpha", "beta", "**bold**", "\n", "\n\n", "- item\n"])
             for _ in range(5000)]
    text = " ".join(words)
    blocks, tail, _ = _stream(text, 17)
    assert "".join(blocks) + tail == text


def test_huge_single_line_is_cut_at_words_and_stays_bounded():
    text = " ".join(f"token{i}" for i in range(10_000))
    blocks, tail, _ = _stream(text, 40)
    assert "".join(blocks) + tail == text
    assert max(len(b) for b in blocks) <= MAX_TAIL_CHARS
    assert len(tail) <= 2 * MAX_TAIL_CHARS + 40
    assert all(not b.startswith(" ") for b in blocks[1:])  # cuts fall after a space


def test_code_fence_cut_is_closed_and_reopened():
    code = "\n".join(f"line {i} = {i} * 2" for i in range(400))
    text = f"Here:\n\n```python\n{code}\n```\n\nAfter the code."
    blocks, tail, state = _stream(text, 25)
    code_blocks = [b for b in blocks if "line " in b]
    assert len(code_blocks) > 1
    for block in code_blocks:
        assert block.startswith("```python\n") and block.rstrip().endswith("```")
    assert state.open_fence is None
    assert tail == "After the code."
    joined_lines = [line for b in code_blocks for line in b.splitlines() if line.startswith("line")]
    assert joined_lines == code.splitlines()


def test_transcript_empty_hint_shows_only_when_empty(qtbot):
    from PySide6.QtWidgets import QLabel

    from app.ui.widgets.transcript_view import MessageView, Transcript

    transcript = Transcript()
    qtbot.addWidget(transcript)
    transcript.show()
    assert transcript.empty_hint.isVisible() and transcript.items() == []
    message = transcript.add(MessageView("hi", "user"))
    assert not transcript.empty_hint.isVisible() and transcript.items() == [message]
    transcript.clear()
    assert transcript.empty_hint.isVisible()
    assert isinstance(transcript.empty_hint, QLabel)


def test_transcript_survives_many_clears_without_stale_layout_items(qtbot):
    # Reading the transcript back through QLayout.itemAt() left PySide6 wrappers of deleted
    # QWidgetItems alive; new widgets allocated at their addresses then came back as the
    # stale QWidgetItem (AttributeError), as loading conversations did once in the e2e tests.
    from PySide6.QtCore import QCoreApplication, QEvent

    from app.ui.widgets.transcript_view import MessageView, Transcript

    transcript = Transcript()
    qtbot.addWidget(transcript)
    for _ in range(200):
        for i in range(6):
            transcript.add(MessageView(f"m{i}", "user" if i % 2 else "assistant"))
        assert len(transcript.items()) == 6
        transcript.clear()
        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    assert transcript.items() == [] and transcript.empty_hint.isVisibleTo(transcript)
