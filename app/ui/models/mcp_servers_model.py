"""Table model over the configured MCP servers and their live status (Settings → MCP servers)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from PySide6.QtCore import QObject, Qt

from app.core.tools.providers.mcp.config.model import McpServerConfig
from app.core.tools.providers.mcp.server_status import ServerStatus
from app.ui.models.base import Index, RowsTableModel
from app.ui.tones import Tone, tone


def status_text(status: ServerStatus | None) -> str:
    """One line for a server's state; ``None`` is a server the provider has not loaded yet."""
    if status is None:
        return "not started"
    if status.state == "running":
        return f"running · {status.message}" if status.message else "running"
    if status.state == "starting":
        return "starting…"
    if status.state == "failed" and status.message.startswith("needs sign-in"):
        return status.message
    if status.state == "failed":
        return f"failed: {status.message}" if status.message else "failed"
    return status.state


@dataclass(frozen=True)
class McpServerRow:
    name: str
    config: McpServerConfig
    status: ServerStatus | None


class McpServersModel(RowsTableModel[McpServerRow]):
    COL_NAME, COL_TRANSPORT, COL_TARGET, COL_STATUS = range(4)
    HEADERS = ("Server", "Transport", "Command / URL", "Status")
    NameRole = Qt.ItemDataRole.UserRole + 1

    STATE_TONES: ClassVar[dict[str, Tone]] = {
        "running": Tone.SUCCESS, "failed": Tone.DANGER, "starting": Tone.WARNING}

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._rows: list[McpServerRow] = []

    # -- read ------------------------------------------------------------------------------

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        row = self.row_for(index)
        if row is None:
            return None
        column = index.column()
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            # Cells are narrow and commands long: the tooltip shows the whole text.
            return self._text(row, column)
        if role == Qt.ItemDataRole.ForegroundRole and column == self.COL_STATUS \
                and row.status is not None and row.status.state in self.STATE_TONES:
            # Needing sign-in is a step for the person, not a fault: amber, not red.
            state = "starting" if row.status.needs_auth else row.status.state
            return tone(self.STATE_TONES[state]).text
        if role == self.NameRole:
            return row.name
        return None

    def _text(self, row: McpServerRow, column: int) -> str:
        if column == self.COL_NAME:
            return row.name
        if column == self.COL_TRANSPORT:
            if row.config.transport == "stdio":
                return "stdio"
            return "SSE (legacy)" if row.config.url_type == "sse" else "HTTP"
        if column == self.COL_TARGET:
            return row.config.summary()
        return status_text(row.status)

    def names(self) -> list[str]:
        return [row.name for row in self._rows]

    def row_of(self, name: str) -> int:
        for number, row in enumerate(self._rows):
            if row.name == name:
                return number
        return -1

    def name_at(self, row: int) -> str:
        return self._rows[row].name

    # -- write -----------------------------------------------------------------------------

    def update(self, servers: Mapping[str, McpServerConfig],
               statuses: Mapping[str, ServerStatus]) -> None:
        """Show ``servers`` in their order, each with its status (missing: not started)."""
        rows = [McpServerRow(name, config, statuses.get(name))
                for name, config in servers.items()]
        if rows == self._rows:
            return
        if [r.name for r in rows] == self.names():
            # Same servers, new status: a reset would lose the view's selection and scroll
            # position every time a server reports progress.
            self._rows = rows
            self.dataChanged.emit(self.index(0, 0),
                                  self.index(len(rows) - 1, len(self.HEADERS) - 1))
            return
        self.beginResetModel()
        self._rows = rows
        self.endResetModel()
