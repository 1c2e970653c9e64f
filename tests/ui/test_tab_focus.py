"""Issue 20, bug 4: Tab moves focus out of text boxes and tables (it never types a tab or
traps focus); Ctrl+Tab keeps switching tabs."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QApplication,
    QPlainTextEdit,
    QTableView,
    QTabWidget,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

from tests.ui.conftest import make_ai_panel


def _show_and_focus(qtbot, window: QWidget, widget: QWidget) -> None:
    window.show()
    qtbot.waitExposed(window)
    window.activateWindow()
    widget.setFocus(Qt.FocusReason.OtherFocusReason)
    qtbot.waitUntil(lambda: QApplication.focusWidget() is widget)


def test_tab_in_the_prompt_moves_focus_to_send(qtbot, services, project):
    panel = make_ai_panel(qtbot, services, project, size=(800, 600))
    _show_and_focus(qtbot, panel, panel.prompt)
    panel.prompt.setPlainText("hello")
    qtbot.keyClick(panel.prompt, Qt.Key.Key_Tab)
    assert "\t" not in panel.prompt.toPlainText()
    assert QApplication.focusWidget() is panel.send_button
    qtbot.keyClick(panel.send_button, Qt.Key.Key_Backtab, Qt.KeyboardModifier.ShiftModifier)
    assert QApplication.focusWidget() is panel.prompt


def test_messages_in_the_transcript_do_not_join_the_tab_chain(qtbot, services, project):
    from app.ui.widgets.transcript_view import MessageView

    view = MessageView("some answer", "assistant")
    qtbot.addWidget(view)
    assert not view.focusPolicy() & Qt.FocusPolicy.TabFocus


def test_history_table_does_not_trap_tab(qtbot, services):
    from app.ui.widgets.history_view import HistoryView

    view = HistoryView(services.audit, ["read_file"])
    qtbot.addWidget(view)
    assert not view.table.tabKeyNavigation()
    _show_and_focus(qtbot, view, view.table)
    qtbot.keyClick(view.table, Qt.Key.Key_Tab)
    assert QApplication.focusWidget() is view.details


def test_tab_moves_focus_fixes_every_text_box_and_table_under_a_widget(qtbot):
    from app.ui.tab_focus import tab_moves_focus

    root = QWidget()
    qtbot.addWidget(root)
    layout = QVBoxLayout(root)
    plain, rich, table = QPlainTextEdit(), QTextEdit(), QTableView()
    for widget in (plain, rich, table):
        layout.addWidget(widget)
    assert table.tabKeyNavigation()  # Qt's default: the reason for the fix
    tab_moves_focus(root)
    assert plain.tabChangesFocus() and rich.tabChangesFocus()
    assert not table.tabKeyNavigation()


def test_ctrl_tab_in_the_prompt_switches_tabs(qtbot, services, project):
    tabs = QTabWidget()
    qtbot.addWidget(tabs)
    panel = make_ai_panel(qtbot, services, project)
    tabs.addTab(panel, "Assistant")
    other = QWidget()
    tabs.addTab(other, "Tool history")
    tabs.resize(800, 600)
    _show_and_focus(qtbot, tabs, panel.prompt)
    qtbot.keyClick(panel.prompt, Qt.Key.Key_Tab, Qt.KeyboardModifier.ControlModifier)
    switched = tabs.currentIndex()
    tabs.removeTab(0)
    panel.setParent(None)  # the panel's owner is the test (make_ai_panel), not the tabs
    assert switched == 1
    assert "\t" not in panel.prompt.toPlainText()
