"""Tab from the window's start reaches the toolbar and the prompt in a few presses, and every
stop on the way is a control the person can see."""

from __future__ import annotations

import itertools

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QWidget

from app.ui.main_window import MainWindow

MAX_PRESSES = 12


def test_tab_visits_visible_controls_and_reaches_the_prompt_soon(qtbot, services, project):
    window = MainWindow()
    qtbot.addWidget(window)
    window.resize(1200, 800)
    window.show()
    with qtbot.waitSignal(window.ready, timeout=5000):
        window.attach_services(services, project)
    qtbot.waitExposed(window)
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window)
    window.setFocus(Qt.FocusReason.OtherFocusReason)
    visited = []
    for _ in range(MAX_PRESSES):
        current = QApplication.focusWidget() or window
        qtbot.keyClick(current, Qt.Key.Key_Tab)
        focused = QApplication.focusWidget()
        assert focused is not None
        assert focused.isVisible(), f"Tab landed on a hidden {focused!r} after {visited}"
        visited.append(focused.objectName() or type(focused).__name__)
        if focused.objectName() == "prompt":
            break
    assert "profile-picker" in visited and visited[-1] == "prompt", visited


async def _open_window(qtbot, services, project) -> MainWindow:
    from tests.ui.conftest import wait_for

    window = MainWindow()
    qtbot.addWidget(window)
    window.resize(1200, 800)
    window.show()
    window.attach_services(services, project)
    await wait_for(lambda: window.tools_are_attached)
    window.activateWindow()
    await wait_for(lambda: QApplication.activeWindow() is window)
    return window


def _region(window: MainWindow, widget) -> str:
    for name, area in (("toolbar", window.profiles.profile_picker.parentWidget()),
                       ("tabs", window.tabs), ("dock", window.tools_dock)):
        if area is widget or area.isAncestorOf(widget):
            return name
    return f"elsewhere ({widget!r})"


def _tab_cycle(qtbot, window: MainWindow) -> list:
    """Every stop Tab makes from the window's start until it comes round again."""
    window.setFocus(Qt.FocusReason.OtherFocusReason)
    stops: list = []
    for _ in range(200):
        qtbot.keyClick(QApplication.focusWidget() or window, Qt.Key.Key_Tab)
        focused = QApplication.focusWidget()
        assert focused is not None
        if focused in stops:
            return stops
        stops.append(focused)
    raise AssertionError("Tab never came round")


async def test_a_whole_tab_round_is_in_reading_order_with_a_conversation_open(
        qtbot, services, project):
    """Toolbar, then the tabs (the conversation row, the transcript with the controls in it,
    top to bottom, the prompt, Send), then the tools dock: none hidden, none out of place,
    also for the controls a conversation adds later (Resend, the version arrows)."""
    from PySide6.QtCore import QPoint

    from app.core.store.answer_versions import AnswerVersionRepository
    from tests.ui.conftest import wait_for

    repo = services.conversations
    cid = repo.create(title="tabbing").id
    prompt_id = repo.append(cid, "user", "question")
    repo.append(cid, "assistant", [{"type": "text", "text": "first answer"}])
    AnswerVersionRepository(services.db).set_aside(cid, prompt_id)  # regenerated, unanswered
    window = await _open_window(qtbot, services, project)
    window.ai_panel.conversations.open(cid)
    def names():
        return [w.objectName() for w in window.ai_panel.transcript.findChildren(QWidget)]
    await wait_for(lambda: "resend-prompt" in names() and "previous-version" in names())

    stops = _tab_cycle(qtbot, window)
    described = [(w.objectName() or type(w).__name__, _region(window, w)) for w in stops]
    hidden = [d for w, d in zip(stops, described, strict=True) if not w.isVisible()]
    assert not hidden, hidden
    regions = [region for _name, region in described]
    assert regions[0] == "toolbar", described  # no stop before the toolbar
    runs = [r for i, r in enumerate(regions) if i == 0 or regions[i - 1] != r]
    assert runs == ["toolbar", "tabs", "dock"], described
    by_name = [name for name, _region in described]
    for name in ("resend-prompt", "previous-version", "prompt", "send"):
        assert name in by_name, described
    assert by_name.index("transcript") < by_name.index("resend-prompt") \
        < by_name.index("previous-version") < by_name.index("prompt") < by_name.index("send")
    for region in ("toolbar", "tabs", "dock"):
        places = [(w.mapTo(window, QPoint(0, 0)), name) for w, (name, r)
                  in zip(stops, described, strict=True) if r == region]
        for (before, first), (after, second) in itertools.pairwise(places):
            same_row = abs(after.y() - before.y()) <= 8
            assert (same_row and after.x() > before.x()) or \
                (not same_row and after.y() > before.y()), \
                f"{second} ({after}) comes after {first} ({before}): {described}"
