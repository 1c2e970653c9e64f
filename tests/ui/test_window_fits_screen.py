"""The main window fits 1280×720 at 100% and 1600×1000 at 200% with every control reachable:
long texts (model name, usage line, status, conversation title, a 60-character MCP tool name)
elide or scroll; they never set the window's minimum width."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from PySide6.QtCore import QPoint, QRect
from PySide6.QtWidgets import QApplication, QWidget

from app.ui.widgets.tools_panel import COL_CONFIGURE, COL_RISK, COL_SANDBOX
from tests.ui.window_fit import LONG_TOOL, long_text_window

ROOT = Path(__file__).resolve().parents[2]


def _window(qtbot, services, project):
    window = long_text_window(services, project)
    qtbot.addWidget(window)
    QApplication.processEvents()
    return window


def _inside(widget: QWidget, window: QWidget) -> bool:
    return window.rect().contains(QRect(widget.mapTo(window, QPoint(0, 0)), widget.size()))


def test_the_minimum_size_fits_1280_by_720(qtbot, services, project):
    window = _window(qtbot, services, project)
    for size in (window.minimumSizeHint(), window.minimumSize()):
        assert size.width() <= 1280 and size.height() <= 720, size


def test_send_stop_and_the_tool_columns_are_on_screen_at_1280_by_720(qtbot, services,
                                                                      project):
    window = _window(qtbot, services, project)
    window.resize(1280, 720)
    QApplication.processEvents()
    assert (window.width(), window.height()) == (1280, 720)
    panel = window.ai_panel
    for button in (panel.send_button, panel.stop_button):
        assert button.isVisible() and _inside(button, window), button.text()
    # The long name is elided, whole in its tooltip; Risk, Sandbox and Configure stay in view.
    tree = window.tools_panel.tree
    assert LONG_TOOL in window.tools_panel.item(LONG_TOOL).toolTip(0)
    assert tree.horizontalScrollBar().maximum() == 0
    for column in (COL_RISK, COL_SANDBOX, COL_CONFIGURE):
        right = tree.header().sectionViewportPosition(column) + tree.columnWidth(column)
        assert tree.columnWidth(column) > 0 and right <= tree.viewport().width(), column


def test_long_texts_are_elided_with_the_whole_text_kept(qtbot, services, project):
    window = _window(qtbot, services, project)
    window.resize(1280, 720)
    QApplication.processEvents()
    usage = window.ai_panel.usage.label
    assert usage.text().startswith("Last turn:") and "Conversation:" in usage.text()
    assert usage.toolTip() == usage.text()  # cut at this width: the whole line in the tooltip
    assert window.status_label.toolTip() == window.status_label.text()


def test_the_minimum_size_fits_1600_by_1000_at_200_percent():
    env = {**os.environ, "QT_SCALE_FACTOR": "2", "QT_QPA_PLATFORM": "offscreen"}
    done = subprocess.run([sys.executable, "-m", "tests.ui.window_fit"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["ratio"] == 2.0
    # Device-independent pixels: 800×500 of them are 1600×1000 on the screen.
    assert found["min_width"] <= 800 and found["min_height"] <= 500, found
