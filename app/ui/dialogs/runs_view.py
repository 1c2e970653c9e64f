"""The status view of parallel runs: every conversation that runs or waits for the person —
its status, project, elapsed time, tokens and cost — with Open and Stop. The status bar button
that opens it is app.ui.runs_button (the ready window has the button, not this view).

The rows come from the run board (app.core.agent.run_board) through ``RunSwitch``; the view is
told each change and ticks once a second for the elapsed time while shown (a table of a few
rows: nothing that could stall the window).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QHideEvent, QShowEvent
from PySide6.QtWidgets import (
    QDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

if TYPE_CHECKING:
    from app.core.agent.run_board import RunRow
    from app.ui.ai_panel.run_switch import RunSwitch

COLUMNS = ("Conversation", "Status", "Project", "Elapsed", "Tokens", "Cost", "")
TICK_MS = 1000


def elapsed_text(seconds: float) -> str:
    seconds = int(seconds)
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"


def cells(row: RunRow, now: float, project: str) -> tuple[str, ...]:
    """The texts of ``row``'s cells (the last column holds the buttons)."""
    tokens = row.input_tokens + row.output_tokens
    return (row.title, row.status.label, project,
            elapsed_text(row.elapsed_s(now)), f"{tokens:,}",
            cost_text(row.cost_usd))


def cost_text(usd: float) -> str:
    if not usd:
        return "—"
    return "< $0.01" if usd < 0.005 else f"${usd:.2f}"


class RunsView(QDialog):
    """Non-modal: the person keeps working while it is open."""

    def __init__(self, runs: RunSwitch, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("runs-view")
        self.setWindowTitle("Runs")
        self.setWindowModality(Qt.WindowModality.NonModal)
        self._runs = runs
        self.summary = QLabel("")
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for column in range(1, len(COLUMNS)):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        layout = QVBoxLayout(self)
        layout.addWidget(self.summary)
        layout.addWidget(self.table, 1)
        self.resize(760, 300)
        self._keys: list[str] = []
        self._timer = QTimer(self)
        self._timer.setInterval(TICK_MS)
        self._timer.timeout.connect(self.tick)
        self.refresh()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.refresh()
        self._timer.start()

    def hideEvent(self, event: QHideEvent) -> None:
        super().hideEvent(event)
        self._timer.stop()

    def refresh(self) -> None:
        """The rows again (a run started, changed status, or used tokens)."""
        rows = self._runs.rows()
        active = sum(1 for r in rows if r.status.active)
        self.summary.setText(f"{active} running or waiting" if rows else
                             "No conversation has run since the app started.")
        now = time.monotonic()
        if [r.key for r in rows] != self._keys:
            self._keys = [r.key for r in rows]
            self.table.setRowCount(len(rows))
            for index, row in enumerate(rows):
                self.table.setCellWidget(index, len(COLUMNS) - 1, self._buttons(row.key))
        for index, row in enumerate(rows):
            project = self._runs.describe_project(row.project)
            for column, text in enumerate(cells(row, now, project)):
                item = self.table.item(index, column)
                if item is None:
                    item = QTableWidgetItem()
                    self.table.setItem(index, column, item)
                item.setText(text)
            stop = self._stop_button(index)
            if stop is not None:
                stop.setEnabled(row.status.active)

    def tick(self) -> None:
        """Once a second while shown: the elapsed times move on."""
        now = time.monotonic()
        for index, row in enumerate(self._runs.rows()):
            item = self.table.item(index, 3)
            if item is not None:
                item.setText(elapsed_text(row.elapsed_s(now)))

    def _buttons(self, key: str) -> QWidget:
        box = QWidget()
        row = QHBoxLayout(box)
        row.setContentsMargins(2, 0, 2, 0)
        open_button = QPushButton("Open")
        open_button.setObjectName("run-open")
        open_button.setToolTip("Show this conversation in the Assistant")
        open_button.clicked.connect(lambda: self._runs.open(key))
        stop_button = QPushButton("Stop")
        stop_button.setObjectName("run-stop")
        stop_button.setToolTip("Stop this run; the others go on")
        stop_button.clicked.connect(lambda: self._runs.stop(key))
        row.addWidget(open_button)
        row.addWidget(stop_button)
        return box

    def _stop_button(self, index: int) -> QPushButton | None:
        box = self.table.cellWidget(index, len(COLUMNS) - 1)
        return box.findChild(QPushButton, "run-stop") if box is not None else None

    def buttons_of(self, key: str) -> tuple[QPushButton, QPushButton]:
        """Open and Stop of row ``key`` (for the keyboard and tests)."""
        box = self.table.cellWidget(self._keys.index(key), len(COLUMNS) - 1)
        assert box is not None
        open_button = box.findChild(QPushButton, "run-open")
        stop_button = box.findChild(QPushButton, "run-stop")
        assert open_button is not None and stop_button is not None
        return open_button, stop_button
