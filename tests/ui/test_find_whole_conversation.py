"""Find (Ctrl+F) in a long stored conversation counts and reaches the matches in the part not
built yet (conversation_pager shows only its end): "n of m" covers the whole conversation, top
to bottom, and stepping to a match above pages it in, scrolls to it and highlights it.

Async tests: the stored part is searched with asyncio.to_thread on the qasync loop, so they
wait with the suite's loop-friendly ``wait_for`` (polling, like qtbot.waitUntil, which would
run a nested event loop inside the running test task)."""

from __future__ import annotations

import threading

from PySide6.QtCore import QRect

from app.ui.ai_panel import find_bar as find_bar_module
from app.ui.ai_panel.find_bar import EarlierMatch, FindBar
from app.ui.widgets.transcript_view import MessageView
from tests.ui.conftest import make_ai_panel, wait_for

MESSAGES = 200


def _store(services, special: dict[int, str]) -> int:
    """A conversation of ``MESSAGES`` stored messages, prompts and answers in turn; message
    ``i`` (0-based) says ``special[i]`` when given."""
    repo = services.conversations
    cid = repo.create(title="long").id
    for i in range(MESSAGES):
        role = "user" if i % 2 == 0 else "assistant"
        text = special.get(i, f"{'prompt' if role == 'user' else 'answer'} number {i}")
        repo.append(cid, role, text if role == "user" else [{"type": "text", "text": text}])
    return cid


async def _open(qtbot, services, project, special: dict[int, str]):
    cid = _store(services, special)
    panel = make_ai_panel(qtbot, services, project, size=(700, 400), show=True)
    pager = panel.conversations.open(cid)  # the default window: the last 40 messages
    await wait_for(lambda: not pager.busy)
    assert pager.first_shown > 100  # only the end is built
    finder = FindBar(panel.transcript)
    qtbot.addWidget(finder)
    return panel, pager, finder


def _view_saying(panel, word: str) -> MessageView | None:
    return next((w for w in panel.transcript.items()
                 if isinstance(w, MessageView) and word in w.markdown), None)


def _current_shown(panel, finder: FindBar, view: MessageView) -> bool:
    """``view`` holds the current match, highlighted, and it is inside the visible area."""
    if not (0 <= finder.current < len(finder.matches)):
        return False
    match = finder.matches[finder.current]
    if isinstance(match, EarlierMatch) or match[0] is not view or not view.extraSelections():
        return False
    transcript = panel.transcript
    centre = view.viewport().mapTo(transcript.viewport(), view.cursorRect(match[1]).center())
    return QRect(0, 0, transcript.viewport().width(),
                 transcript.viewport().height()).contains(centre)


async def test_a_match_in_the_unloaded_part_is_counted_and_stepped_to(
        qtbot, services, project) -> None:
    panel, pager, finder = await _open(qtbot, services, project,
                                       {2: "a prompt about **zanzibar** early on"})
    assert _view_saying(panel, "zanzibar") is None
    finder.field.setText("Zanzibar")
    await wait_for(lambda: finder.count_label.text() == "1 of 1")
    assert _view_saying(panel, "zanzibar") is None  # counted, not built yet
    finder.next_match()
    await wait_for(lambda: pager.first_shown <= 2 and not pager.busy)
    view = _view_saying(panel, "zanzibar")
    assert view is not None
    await wait_for(lambda: _current_shown(panel, finder, view))
    assert finder.count_label.text() == "1 of 1"
    await panel.shutdown()


async def test_count_covers_both_parts_top_to_bottom(qtbot, services, project) -> None:
    panel, pager, finder = await _open(qtbot, services, project, {
        5: "the walrus said early", 120: "later the walrus again",
        MESSAGES - 1: "and the walrus at the end"})
    finder.field.setText("walrus")
    assert finder.count_label.text() == "1 of 1 in the loaded messages"  # at once: the views
    await wait_for(lambda: finder.count_label.text() == "3 of 3")  # the one in view stays
    kinds = [m.message if isinstance(m, EarlierMatch) else "view" for m in finder.matches]
    assert kinds == [5, 120, "view"]
    finder.previous_match()  # up: message 120, paged in
    await wait_for(lambda: _view_saying(panel, "later the walrus") is not None)
    later = _view_saying(panel, "later the walrus")
    await wait_for(lambda: _current_shown(panel, finder, later))
    assert finder.count_label.text() == "2 of 3"
    assert pager.first_shown > 5
    finder.previous_match()  # up again: message 5
    await wait_for(lambda: _view_saying(panel, "the walrus said early") is not None)
    early = _view_saying(panel, "the walrus said early")
    await wait_for(lambda: _current_shown(panel, finder, early))
    assert finder.count_label.text() == "1 of 3"
    finder.previous_match()  # wraps to the last one, at the end
    end = _view_saying(panel, "at the end")
    await wait_for(lambda: _current_shown(panel, finder, end))
    assert finder.count_label.text() == "3 of 3"
    await panel.shutdown()


async def test_typing_fast_ends_with_the_last_querys_result(
        qtbot, services, project, monkeypatch) -> None:
    panel, _pager, finder = await _open(qtbot, services, project, {
        3: "one zanzibar", 7: "walrus", 9: "walrus", 11: "walrus"})
    # The search for "walrus" answers only after the newer query's (released at the end).
    started, release, finished = threading.Event(), threading.Event(), threading.Event()
    count = find_bar_module.count_matches

    def gated(texts, query):
        if query != "walrus":
            return count(texts, query)
        started.set()
        release.wait(10)
        try:
            return count(texts, query)
        finally:
            finished.set()

    monkeypatch.setattr(find_bar_module, "count_matches", gated)
    finder.field.setText("walrus")
    await wait_for(lambda: started.is_set())
    for query in ("w", "wa", "number", "zan", "zanzibar"):  # typed before any answer
        finder.field.setText(query)
    await wait_for(lambda: "loaded" not in finder.count_label.text())
    assert finder.count_label.text() == "1 of 1"
    release.set()  # the walrus search answers now, late
    await wait_for(lambda: finished.is_set())
    finder.search()  # searched again: its answer comes after the late one
    await wait_for(lambda: "loaded" not in finder.count_label.text())
    assert finder.count_label.text() == "1 of 1"
    assert [m.message for m in finder.matches if isinstance(m, EarlierMatch)] == [3]
    await panel.shutdown()


async def test_no_match_anywhere_says_no_matches(qtbot, services, project) -> None:
    panel, _pager, finder = await _open(qtbot, services, project, {})
    finder.field.setText("quokka")
    assert finder.count_label.text() == "no matches in the loaded messages"
    await wait_for(lambda: finder.count_label.text() == "no matches")
    finder.next_match()  # nothing to step to
    assert finder.count_label.text() == "no matches"
    await panel.shutdown()


async def test_the_live_part_comes_from_the_views(qtbot, services, project) -> None:
    """What was added after opening (a run streaming in) is not in the stored snapshot: its
    matches are the views', after those above."""
    panel, _pager, finder = await _open(qtbot, services, project, {4: "an early kiwi"})
    live = panel.transcript.add(MessageView("a kiwi streaming in", "assistant"))
    finder.field.setText("kiwi")
    await wait_for(lambda: finder.count_label.text() == "2 of 2")
    assert isinstance(finder.matches[0], EarlierMatch) and finder.matches[0].message == 4
    assert finder.matches[1][0] is live  # type: ignore[index]
    await wait_for(lambda: _current_shown(panel, finder, live))
    await panel.shutdown()
