"""Tab from the window's start reaches the toolbar and the prompt in a few presses, and every
stop on the way is a control the person can see."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

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
