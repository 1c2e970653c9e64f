"""McpServersModel on its own: no widgets, no provider, just configs and statuses."""

from __future__ import annotations

from PySide6.QtCore import Qt

from app.core.tools.providers.mcp.config.schema import parse_mcp_config
from app.core.tools.providers.mcp.server_status import ServerStatus
from app.ui.models.mcp_servers_model import McpServersModel, status_text
from app.ui.tones import tone

SERVERS = parse_mcp_config({"mcpServers": {
    "files": {"command": "npx", "args": ["-y", "server-filesystem", "/tmp"]},
    "remote": {"url": "https://mcp.example.com/mcp"},
}}).servers


def _text(model: McpServersModel, row: int, column: int,
          role: Qt.ItemDataRole = Qt.ItemDataRole.DisplayRole):
    return model.data(model.index(row, column), role)


def test_rows_show_name_transport_target_and_status():
    model = McpServersModel()
    model.update(SERVERS, {"files": ServerStatus("files", "running", "3 tools")})
    assert (model.rowCount(), model.columnCount()) == (2, 4)
    assert [model.headerData(c, Qt.Orientation.Horizontal) for c in range(4)] == \
        ["Server", "Transport", "Command / URL", "Status"]
    assert [_text(model, 0, c) for c in range(4)] == \
        ["files", "stdio", "npx -y server-filesystem /tmp", "running · 3 tools"]
    assert [_text(model, 1, c) for c in range(4)] == \
        ["remote", "HTTP", "https://mcp.example.com/mcp", "not started"]
    # Long command lines are cut by the column: the tooltip carries the whole text.
    assert _text(model, 0, McpServersModel.COL_TARGET, Qt.ItemDataRole.ToolTipRole) == \
        "npx -y server-filesystem /tmp"
    assert _text(model, 1, McpServersModel.COL_NAME, McpServersModel.NameRole) == "remote"
    assert model.names() == ["files", "remote"]
    assert (model.row_of("remote"), model.row_of("missing"), model.name_at(0)) == \
        (1, -1, "files")
    assert _text(model, 5, 0) is None  # out of range


def test_a_legacy_sse_server_says_so():
    model = McpServersModel()
    model.update(parse_mcp_config({"mcpServers": {"old": {"type": "sse", "url": "https://h/sse"}}}
                                  ).servers, {})
    assert _text(model, 0, McpServersModel.COL_TRANSPORT) == "SSE (legacy)"


def test_status_colour_follows_the_state(qtbot):
    model = McpServersModel()
    model.update(SERVERS, {"files": ServerStatus("files", "failed", "exited")})
    colour = _text(model, 0, McpServersModel.COL_STATUS, Qt.ItemDataRole.ForegroundRole)
    assert colour == tone(McpServersModel.STATE_TONES["failed"]).text
    assert _text(model, 1, McpServersModel.COL_STATUS, Qt.ItemDataRole.ForegroundRole) is None
    assert _text(model, 0, McpServersModel.COL_NAME, Qt.ItemDataRole.ForegroundRole) is None


def test_status_text_for_each_state():
    assert status_text(None) == "not started"
    assert status_text(ServerStatus("s", "running")) == "running"
    assert status_text(ServerStatus("s", "starting", "ignored")) == "starting…"
    assert status_text(ServerStatus("s", "failed", "boom")) == "failed: boom"
    assert status_text(ServerStatus("s", "failed")) == "failed"
    assert status_text(ServerStatus("s", "disabled")) == "disabled"


def test_a_status_change_updates_cells_without_a_reset():
    model = McpServersModel()
    model.update(SERVERS, {})
    resets: list[bool] = []
    changed: list[tuple[int, int]] = []
    model.modelReset.connect(lambda: resets.append(True))
    model.dataChanged.connect(lambda top, bottom, *_: changed.append((top.row(), bottom.row())))

    model.update(SERVERS, {"remote": ServerStatus("remote", "starting")})
    assert resets == [] and changed == [(0, 1)]
    assert _text(model, 1, McpServersModel.COL_STATUS) == "starting…"

    model.update(SERVERS, {"remote": ServerStatus("remote", "starting")})
    assert changed == [(0, 1)]  # nothing new: no signal at all

    model.update({"remote": SERVERS["remote"]}, {})
    assert resets == [True] and model.names() == ["remote"]
