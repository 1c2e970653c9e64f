"""The Edit menu: undo/redo/cut/copy/paste/select all act on the focused field and are enabled
only when they can act there; Find (Ctrl+F) highlights and jumps to matches in the transcript
and Esc closes it; Tab leaves the window's text boxes and tables."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QKeySequence
from PySide6.QtWidgets import QApplication, QPlainTextEdit

from app.core.services import Services
from app.ui.main_window import MainWindow
from app.ui.widgets.transcript_view import MessageView


@pytest.fixture
def window(qtbot, services: Services, project: Path) -> MainWindow:
    win = MainWindow()
    qtbot.addWidget(win)
    win.show()
    with qtbot.waitSignal(win.ready, timeout=5000):
        win.attach_services(services, project)
    qtbot.waitExposed(win)
    win.activateWindow()
    return win


def _focus(qtbot, widget) -> None:
    widget.setFocus(Qt.FocusReason.OtherFocusReason)
    qtbot.waitUntil(lambda: QApplication.focusWidget() is widget)


def _enabled(window: MainWindow) -> dict[str, bool]:
    return {name: action.isEnabled() for name, action in window.menus.edit_actions.actions.items()}


def test_edit_menu_has_the_standard_actions_and_settings(window):
    edit = next(a.menu() for a in window.menuBar().actions() if a.text() == "&Edit")
    texts = [a.text() for a in edit.actions() if not a.isSeparator()]
    assert texts[:6] == ["&Undo", "&Redo", "Cu&t", "&Copy", "&Paste", "Select &All"]
    assert "&Find in Conversation…" in texts and "&Settings…" in texts
    assert window.menus.edit_actions.actions["copy"].shortcut() == \
        QKeySequence(QKeySequence.StandardKey.Copy)
    assert window.menus.find_action.shortcut() == QKeySequence(QKeySequence.StandardKey.Find)


async def test_actions_follow_the_focused_field(qtbot, window):
    # async: typing in the prompt starts the warm-up task on the running loop
    prompt: QPlainTextEdit = window.ai_panel.prompt
    _focus(qtbot, prompt)
    assert _enabled(window) == {"undo": False, "redo": False, "cut": False, "copy": False,
                                "paste": _enabled(window)["paste"], "select_all": False}
    prompt.setPlainText("")
    qtbot.keyClicks(prompt, "hello world")
    assert _enabled(window)["undo"] and _enabled(window)["select_all"]
    assert not _enabled(window)["copy"]
    window.menus.edit_actions.actions["select_all"].trigger()
    assert prompt.textCursor().selectedText() == "hello world"
    assert _enabled(window)["copy"] and _enabled(window)["cut"]
    window.menus.edit_actions.actions["cut"].trigger()
    assert prompt.toPlainText() == ""
    assert QGuiApplication.clipboard().text() == "hello world"
    assert _enabled(window)["paste"]
    window.menus.edit_actions.actions["paste"].trigger()
    assert prompt.toPlainText() == "hello world"
    window.menus.edit_actions.actions["undo"].trigger()
    assert prompt.toPlainText() == ""
    assert _enabled(window)["redo"]
    window.menus.edit_actions.actions["redo"].trigger()
    assert prompt.toPlainText() == "hello world"


def test_nothing_to_act_on_disables_every_action(qtbot, window):
    _focus(qtbot, window.ai_panel.send_button)
    assert not any(_enabled(window).values())


def test_a_read_only_message_can_be_copied_but_not_cut(qtbot, window):
    view = window.ai_panel.transcript.add(MessageView("an answer to copy", "assistant"))
    _focus(qtbot, view)
    window.menus.edit_actions.actions["select_all"].trigger()
    assert _enabled(window)["copy"] and not _enabled(window)["cut"]
    assert not _enabled(window)["paste"]
    window.menus.edit_actions.actions["copy"].trigger()
    assert QGuiApplication.clipboard().text() == "an answer to copy"


def test_find_highlights_jumps_and_closes_with_escape(qtbot, window):
    transcript = window.ai_panel.transcript
    views = [transcript.add(MessageView(f"message {i} about apples" if i % 10 == 0 else
                                        f"message {i}", "assistant")) for i in range(40)]
    window.menus.find_action.trigger()
    bar = window.ai_panel.find_bar()  # the one Edit → Find made and opened
    assert bar.isVisible()
    assert QApplication.focusWidget() is bar.field
    qtbot.keyClicks(bar.field, "APPLES")  # case-insensitive
    assert len(bar.matches) == 4
    assert bar.count_label.text() == "1 of 4"
    assert views[0].extraSelections()  # highlighted
    qtbot.keyClick(bar.field, Qt.Key.Key_Return)
    qtbot.keyClick(bar.field, Qt.Key.Key_Return)
    qtbot.keyClick(bar.field, Qt.Key.Key_Return)
    assert bar.count_label.text() == "4 of 4"
    last = views[30]
    top = last.mapTo(transcript.widget(), last.rect().topLeft()).y()
    shown = transcript.verticalScrollBar().value()
    assert shown <= top <= shown + transcript.viewport().height()  # scrolled to it
    qtbot.keyClick(bar.field, Qt.Key.Key_Return)
    assert bar.count_label.text() == "1 of 4"  # wraps
    qtbot.keyClick(bar.field, Qt.Key.Key_Escape)
    assert not bar.isVisible()
    assert not any(v.extraSelections() for v in views)
    assert QApplication.focusWidget() is window.ai_panel.prompt


def test_find_without_matches_says_so(qtbot, window):
    window.ai_panel.transcript.add(MessageView("nothing here", "assistant"))
    window.menus.find_action.trigger()
    bar = window.ai_panel.find_bar()  # the one Edit → Find made and opened
    assert bar.isVisible()
    qtbot.keyClicks(bar.field, "zebra")
    assert bar.count_label.text() == "no matches"


def test_window_text_boxes_and_tables_let_tab_through(window):
    assert window.ai_panel.prompt.tabChangesFocus()
    assert not window.history.table.tabKeyNavigation()
