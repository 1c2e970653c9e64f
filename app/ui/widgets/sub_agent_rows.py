"""The sub-agents a call started, as a small tree under its card: one row per child with its
name, status, elapsed time, tokens and cost (app.core.agent.events.SubAgentUpdated)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtWidgets import QTreeWidget, QTreeWidgetItem

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
COLUMNS = ("Sub-agent", "Status", "Time", "Tokens", "Cost")


class SubAgentRows(QTreeWidget):
    """execution id → its row; updated in place as the child moves on."""

    def __init__(self) -> None:
        super().__init__()
        self.setHeaderLabels(list(COLUMNS))
        self.setRootIsDecorated(False)
        self.setAccessibleName("Sub-agents")
        self.setMaximumHeight(140)
        self._rows: dict[int, QTreeWidgetItem] = {}

    def update_row(self, event: SubAgentUpdated) -> None:
        row = self._rows.get(event.execution_id)
        if row is None:
            row = self._rows[event.execution_id] = QTreeWidgetItem(self)
        tokens = event.input_tokens + event.output_tokens
        values = (event.name, STATUS_TEXT.get(event.status, event.status),
                  f"{event.elapsed_s:.0f} s", f"{tokens:,}", f"${event.cost_usd:.4f}")
        for column, text in enumerate(values):
            row.setText(column, text)
        row.setToolTip(0, event.chain)

    def status_of(self, execution_id: int) -> str:
        row = self._rows.get(execution_id)
        return row.text(1) if row is not None else ""
