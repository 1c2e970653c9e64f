"""The sub-agents a call started, as a small tree under its card: one row per child with its
name, status, elapsed time (ticking while it works), tokens and cost, Stop and Open transcript,
and Stop all (app.core.agent.events.SubAgentUpdated)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import (
    QHBoxLayout,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

if TYPE_CHECKING:
    from app.core.agent.events import SubAgentUpdated

STATUS_TEXT = {
    "awaiting_approval": "Waiting for your approval",
    "working": "Working",
    "needs_input": "Needs input",
    "done": "Done",
    "failed": "Failed",
    "cancelled": "Cancelled",
}
ACTIVE = frozenset({"working", "needs_input"})
COLUMNS = ("Sub-agent", "Status", "Time", "Tokens", "Cost", "")


class SubAgentControls(Protocol):
    def stop(self, execution_id: int) -> None: ...
    def stop_all(self) -> None: ...
    def open_transcript(self, conversation_id: int | None, title: str) -> None: ...
    def review_changes(self, conversation_id: int | None) -> None: ...


class SubAgentRows(QWidget):
    """execution id → its row; updated in place as the child moves on."""

    def __init__(self, controls: SubAgentControls | None = None) -> None:
        super().__init__()
        self._controls = controls
        self.tree = QTreeWidget()
        self.tree.setHeaderLabels(list(COLUMNS))
        self.tree.setRootIsDecorated(False)
        self.tree.setAccessibleName("Sub-agents")
        self.tree.setMaximumHeight(140)
        self.stop_all = QPushButton("Stop all")
        self.stop_all.setObjectName("sub-agents-stop-all")
        self.stop_all.clicked.connect(lambda: controls.stop_all() if controls else None)
        bottom = QHBoxLayout()
        bottom.addStretch(1)
        bottom.addWidget(self.stop_all)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.tree)
        layout.addLayout(bottom)
        self._rows: dict[int, QTreeWidgetItem] = {}
        self._events: dict[int, tuple[SubAgentUpdated, float]] = {}
        self._buttons: dict[int, tuple[QPushButton, QPushButton, QPushButton]] = {}
        self._timer = QTimer(self)  # one for the tree: the working rows' time ticks
        self._timer.setInterval(1000)
        self._timer.timeout.connect(self._tick)

    def update_row(self, event: SubAgentUpdated) -> None:
        row = self._rows.get(event.execution_id)
        if row is None:
            row = self._rows[event.execution_id] = QTreeWidgetItem(self.tree)
            self._add_buttons(row, event)
        self._events[event.execution_id] = (event, time.monotonic())
        self._show(event.execution_id)
        stop, _open, review = self._buttons[event.execution_id]
        stop.setEnabled(event.status in ACTIVE or event.status == "awaiting_approval")
        # A write-capable child's changes wait in its workspace until the person reviews them.
        review.setVisible(bool(event.workspace_branch))
        review.setEnabled(event.status not in ACTIVE)
        review.setToolTip(f"Review and apply its changes ({event.workspace_branch})")
        active = any(e.status in ACTIVE for e, _at in self._events.values())
        self.stop_all.setEnabled(active)
        if active and not self._timer.isActive():
            self._timer.start()
        elif not active:
            self._timer.stop()

    def status_of(self, execution_id: int) -> str:
        row = self._rows.get(execution_id)
        return row.text(1) if row is not None else ""

    def _add_buttons(self, row: QTreeWidgetItem, event: SubAgentUpdated) -> None:
        controls = self._controls
        stop, show = QPushButton("Stop"), QPushButton("Open transcript")
        review = QPushButton("Review changes…")
        review.setObjectName("sub-agent-review")
        review.hide()
        stop.setObjectName("sub-agent-stop")
        show.setObjectName("sub-agent-open")
        execution_id = event.execution_id
        stop.clicked.connect(lambda: controls.stop(execution_id) if controls else None)
        review.clicked.connect(lambda: controls.review_changes(
            self._events[execution_id][0].conversation_id) if controls else None)
        show.clicked.connect(lambda: controls.open_transcript(
            self._events[execution_id][0].conversation_id,
            self._events[execution_id][0].name) if controls else None)
        cell = QWidget()
        row_layout = QHBoxLayout(cell)
        row_layout.setContentsMargins(0, 0, 0, 0)
        row_layout.addWidget(stop)
        row_layout.addWidget(show)
        row_layout.addWidget(review)
        self.tree.setItemWidget(row, len(COLUMNS) - 1, cell)
        self._buttons[execution_id] = (stop, show, review)

    def _show(self, execution_id: int) -> None:
        event, at = self._events[execution_id]
        elapsed = event.elapsed_s + (time.monotonic() - at if event.status in ACTIVE else 0)
        tokens = event.input_tokens + event.output_tokens
        row = self._rows[execution_id]
        for column, text in enumerate((event.name, STATUS_TEXT.get(event.status, event.status),
                                       f"{elapsed:.0f} s", f"{tokens:,}",
                                       f"${event.cost_usd:.4f}")):
            row.setText(column, text)
        row.setToolTip(0, event.chain)

    def _tick(self) -> None:
        for execution_id, (event, _at) in self._events.items():
            if event.status in ACTIVE:
                self._show(execution_id)
