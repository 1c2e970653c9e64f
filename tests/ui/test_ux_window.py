"""Issue 20's bugs 3, 5, 9 and 12: Stop / Ctrl+. / close act while an approval dialog is open
(and the dialog says "1 of 2"), a saved size larger than the screen is fitted to it, Qt's own
command-line options reach QApplication, and the round cap offers Continue."""

from __future__ import annotations

import asyncio
import base64
from pathlib import Path

import pytest
from PySide6.QtCore import QRect, Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication, QLabel, QPushButton

from app import command_line
from app.core.agent.events import ApprovalRequest, ApprovalResponse, RunFinished
from app.core.services import Services
from app.ui.main_window import MainWindow
from app.ui.widgets.transcript_view import ErrorCard
from tests.ui.conftest import make_ai_panel, wait_for


def _request(services: Services, tool_use_id: str) -> ApprovalRequest:
    tool_input = {"path": f"doc/{tool_use_id}.md", "content": "new"}
    tool = services.registry.get("write_file")
    assert tool is not None
    decision = services.permissions.decide("builtin", "write_file", tool_input)
    return ApprovalRequest(tool_use_id, "write_file", "builtin", tool_input, tool.spec,
                           decision, None)


@pytest.fixture
def window(qtbot, services: Services, project: Path) -> MainWindow:
    win = MainWindow()
    qtbot.addWidget(win)
    win.show()
    with qtbot.waitSignal(win.ready, timeout=5000):
        win.attach_services(services, project)
    return win


async def _two_waiting(window: MainWindow, services: Services
                       ) -> list[asyncio.Future[ApprovalResponse]]:
    futures = [asyncio.ensure_future(window.approvals.request(_request(services, f"tu_{i}")))
               for i in range(2)]
    await wait_for(lambda: window.approvals.current_dialog is not None
                   and window.approvals.pending_count() == 2)
    return futures


async def _declined(futures: list[asyncio.Future[ApprovalResponse]]) -> list[bool]:
    responses = await asyncio.wait_for(asyncio.gather(*futures), timeout=5)
    return [r.approved for r in responses]


# -- bug 3: Stop, Ctrl+. and close while an approval dialog is open ------------------------


async def test_approval_dialog_does_not_block_the_window(qtbot, window, services):
    # A modal dialog makes the window manager's close button (and Stop) dead: Qt drops close
    # and input events for a window blocked by a modal one.
    futures = await _two_waiting(window, services)
    dialog = window.approvals.current_dialog
    assert dialog.isVisible()
    assert QGuiApplication.modalWindow() is None
    assert dialog.windowModality() == Qt.WindowModality.NonModal
    window.approvals.abort()
    await _declined(futures)


async def test_ctrl_period_in_the_approval_dialog_stops_and_declines_all(qtbot, window,
                                                                         services):
    futures = await _two_waiting(window, services)
    dialog = window.approvals.current_dialog
    dialog.activateWindow()
    await wait_for(lambda: QApplication.activeWindow() is dialog)
    qtbot.keyClick(dialog.reason, Qt.Key.Key_Period, Qt.KeyboardModifier.ControlModifier)
    assert await _declined(futures) == [False, False]
    assert window.approvals.current_dialog is None


async def test_closing_the_window_declines_the_dialog_and_the_queue(qtbot, window, services):
    app = QApplication.instance()
    quits = app.quitOnLastWindowClosed()
    app.setQuitOnLastWindowClosed(False)  # the test's event loop outlives the window
    try:
        futures = await _two_waiting(window, services)
        window.close()
        assert await _declined(futures) == [False, False]
        assert window.approvals.pending_count() == 0
        assert not window.isVisible()
    finally:
        app.setQuitOnLastWindowClosed(quits)


async def test_dialog_title_says_which_of_the_waiting_calls_it_is(qtbot, window, services):
    futures = await _two_waiting(window, services)
    first = window.approvals.current_dialog
    assert "1 of 2" in first.windowTitle()
    assert "1 of 2" in first.position_label.text()
    first.approve_button.click()
    await wait_for(lambda: window.approvals.current_dialog not in (None, first))
    second = window.approvals.current_dialog
    assert "2 of 2" in second.windowTitle()
    second.approve_button.click()
    await asyncio.wait_for(asyncio.gather(*futures), timeout=5)
    # Alone, the dialog does not count.
    alone = asyncio.ensure_future(window.approvals.request(_request(services, "alone")))
    await wait_for(lambda: window.approvals.current_dialog is not None)
    assert " of " not in window.approvals.current_dialog.windowTitle()
    assert window.approvals.current_dialog.position_label.isHidden()
    window.approvals.abort()
    await asyncio.wait_for(alone, timeout=5)


# -- bug 5: a saved size larger than the screen ----------------------------------------------


def test_saved_geometry_larger_than_the_screen_is_fitted_to_it(qtbot):
    available = QGuiApplication.primaryScreen().availableGeometry()
    big = MainWindow()
    qtbot.addWidget(big)
    big.setGeometry(QRect(available.x() + 50, available.y() + 40,
                          available.width() * 2, available.height() * 2))
    saved = {"ui.geometry": base64.b64encode(big.saveGeometry().data()).decode()}

    window = MainWindow()
    qtbot.addWidget(window)
    window.restore_layout(saved)
    window.show()
    frame = window.frameGeometry()
    assert available.contains(frame), (frame, available)
    send_corner = window.geometry().bottomRight()
    assert available.contains(send_corner)


def test_the_first_window_fits_the_screen(qtbot):
    # No saved layout (a first start), on a small screen or at 200%: the default size was
    # 1200x780 whatever the screen, so Send and Stop were off-screen at 1600x1000 and 200%.
    available = QGuiApplication.primaryScreen().availableGeometry()
    assert available.width() < 1200 or available.height() < 780  # the offscreen screen
    window = MainWindow()
    qtbot.addWidget(window)
    window.restore_layout({})
    window.show()
    qtbot.waitExposed(window)
    assert available.contains(window.frameGeometry()), (window.frameGeometry(), available)


def test_a_window_widened_by_what_it_attaches_is_moved_back_onto_the_screen(qtbot):
    # The tools panel arrives after the window shows and widens its minimum; a window placed
    # near the right edge then ran off it (Send and Stop out of reach at 200%).
    available = QGuiApplication.primaryScreen().availableGeometry()
    window = MainWindow()
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    window.resize(300, 300)
    window.move(available.right() - 320, available.y() + 10)
    qtbot.waitUntil(lambda: available.contains(window.frameGeometry()))
    wide = QLabel("the tools panel")
    wide.setMinimumWidth(available.width() - 300)  # the window still fits the screen
    window.tools_dock.setWidget(wide)
    qtbot.waitUntil(lambda: window.width() >= wide.minimumWidth())
    qtbot.waitUntil(lambda: available.contains(window.frameGeometry()))


def test_saved_geometry_that_fits_is_kept(qtbot):
    available = QGuiApplication.primaryScreen().availableGeometry()
    first = MainWindow()
    qtbot.addWidget(first)
    wanted = QRect(available.x() + 20, available.y() + 30, 500, 400)
    first.setGeometry(wanted)
    saved = {"ui.geometry": base64.b64encode(first.saveGeometry().data()).decode()}
    window = MainWindow()
    qtbot.addWidget(window)
    window.restore_layout(saved)
    assert window.size() == wanted.size()


# -- bug 9: Qt's command-line options -----------------------------------------------------


def test_qt_options_are_passed_to_qapplication():
    argv = ["-style", "fusion", "--project", "/tmp/p", "-reverse", "-platform", "offscreen"]
    args = command_line.parse_args(argv)
    assert args.project == "/tmp/p"
    assert command_line.qt_argv("tebiki", argv) == ["tebiki", "-style", "fusion", "-reverse",
                                       "-platform", "offscreen"]
    assert command_line.qt_argv("tebiki", ["--data-dir", "/tmp/d"]) == ["tebiki"]


# -- bug 12: the round cap offers Continue -----------------------------------------------


def test_round_cap_offers_continue_which_sends_a_continue_message(qtbot, services, project):
    panel = make_ai_panel(qtbot, services, project)
    sent: list[str | None] = []
    panel.send = lambda text=None: sent.append(text) or True  # type: ignore[method-assign]
    panel.handle_event(RunFinished("max_iterations", 25))
    assert not panel.transcript.findChildren(ErrorCard)  # not an error: the run can go on
    buttons = [b for b in panel.transcript.findChildren(QPushButton) if b.text() == "Continue"]
    assert len(buttons) == 1
    card = buttons[0].parent()
    assert card.objectName() == "round-cap-card"
    assert "25" in " ".join(label.text() for label in card.findChildren(QLabel))
    buttons[0].click()
    assert len(sent) == 1 and sent[0] and "continue" in sent[0].lower()
    assert not buttons[0].isEnabled()  # one continuation per card
