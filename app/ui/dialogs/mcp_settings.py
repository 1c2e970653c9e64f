"""Settings → MCP servers: the configured servers, their status, and editing them.

The tab is a thin view over ``McpConfigStore`` (what is saved) and ``McpProvider`` (what runs).
Every change is saved, then applied to the running servers in the background: keyring I/O runs
in a worker thread and server starts are coroutines on the qasync loop (``ensure_future``), so
the window never freezes while a server takes seconds to start.
"""

from __future__ import annotations

import asyncio
import html
import logging
from collections.abc import Coroutine, Mapping
from pathlib import Path
from typing import Any

import shiboken6
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor, QFontDatabase
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.core.tools.providers.mcp import McpProvider
from app.core.tools.providers.mcp_config import (
    SECRET_PLACEHOLDER,
    McpConfigError,
    McpConfigStore,
    McpServerConfig,
    claude_desktop_config_paths,
    dump_mcp_config_text,
    find_claude_desktop_config,
    merge_servers,
    parse_mcp_config,
    read_claude_desktop_config,
)
from app.core.tools.providers.mcp_connection import ServerStatus

log = logging.getLogger(__name__)

NEW_SERVER_TEMPLATE = """{
  "mcpServers": {
    "my-server": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-filesystem", "/path/to/folder"],
      "env": {}
    }
  }
}
"""

STATE_COLORS = {"running": "#1a7f37", "failed": "#cf222e", "starting": "#9a6700"}


def _fixed_font_editor() -> QPlainTextEdit:
    editor = QPlainTextEdit()
    editor.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
    editor.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
    return editor


def status_text(status: ServerStatus | None) -> str:
    if status is None:
        return "not started"
    if status.state == "running":
        return f"running · {status.message}" if status.message else "running"
    if status.state == "starting":
        return "starting…"
    if status.state == "failed":
        return f"failed: {status.message}" if status.message else "failed"
    return status.state


class McpServerEditor(QDialog):
    """Edit one server (or paste several) as ``{"mcpServers": {...}}``, validated as you type.

    OK stays disabled until the text is valid and its names do not clash with other servers.
    """

    def __init__(self, text: str, taken_names: set[str], parent: QWidget | None = None,
                 title: str = "MCP server") -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        self.resize(640, 460)
        self._taken = {name.lower() for name in taken_names}
        self._servers: dict[str, McpServerConfig] = {}
        self.editor = _fixed_font_editor()
        self.editor.setObjectName("mcp-json-editor")
        self.editor.setPlainText(text)
        hint = QLabel("Claude Desktop's format: <code>command</code>, <code>args</code>, "
                      "<code>env</code> for a program over stdio, or <code>url</code> and "
                      "<code>headers</code> for streamable HTTP. Optional: "
                      "<code>\"timeout\"</code> (seconds per call), "
                      "<code>\"disabled\": true</code>. "
                      "Env and header values are kept in the OS keyring; "
                      f"<code>{html.escape(SECRET_PLACEHOLDER)}</code> keeps the stored value, "
                      "<code>${VAR}</code> reads Tebiki's environment.")
        hint.setWordWrap(True)
        self.problems = QLabel()
        self.problems.setObjectName("mcp-json-problems")
        self.problems.setWordWrap(True)
        self.problems.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok |
                                        QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(hint)
        layout.addWidget(self.editor, 1)
        layout.addWidget(self.problems)
        layout.addWidget(self.buttons)
        self.editor.textChanged.connect(self.validate)
        self.validate()

    @property
    def ok_button(self) -> QPushButton:
        return self.buttons.button(QDialogButtonBox.StandardButton.Ok)

    def validate(self) -> bool:
        errors: list[str] = []
        warnings: list[str] = []
        servers: dict[str, McpServerConfig] = {}
        try:
            parsed = parse_mcp_config(self.editor.toPlainText())
            servers, warnings = parsed.servers, parsed.warnings
            if not servers:
                errors.append("Add at least one server inside \"mcpServers\".")
            errors += [f"A server named {name!r} already exists; choose another name."
                       for name in servers if name.lower() in self._taken]
        except McpConfigError as exc:
            errors = exc.errors
        self._servers = {} if errors else servers
        if errors:
            self.problems.setText("<span style='color:#cf222e'>" + "<br>".join(
                html.escape(e) for e in errors) + "</span>")
        else:
            names = ", ".join(servers)
            note = "".join(f"<br>⚠ {html.escape(w)}" for w in warnings)
            self.problems.setText(f"✓ Valid: {html.escape(names)}{note}")
        self.ok_button.setEnabled(not errors)
        return not errors

    def servers(self) -> dict[str, McpServerConfig]:
        return dict(self._servers)


class McpServersTab(QWidget):
    """The "MCP servers" tab: status per server, add/edit/remove, import, restart."""

    COL_NAME, COL_TRANSPORT, COL_TARGET, COL_STATUS = range(4)
    _status_changed = Signal(str)

    def __init__(self, store: McpConfigStore, provider: McpProvider,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.store = store
        self.provider = provider
        self._servers: dict[str, McpServerConfig] = store.load_public()
        self._tasks: set[asyncio.Future[Any]] = set()
        self.dialog: McpServerEditor | None = None
        self.confirm_box: QMessageBox | None = None

        intro = QLabel("Servers use Claude Desktop's <code>mcpServers</code> format. Their tools "
                       "appear in the tools list under <i>Server: name</i>. Tool annotations "
                       "such as <i>read-only</i> are shown but never trusted: calls ask unless a "
                       "permission rule for the server's name allows them.")
        intro.setWordWrap(True)

        self.table = QTableWidget(0, 4)
        self.table.setObjectName("mcp-servers-table")
        self.table.setHorizontalHeaderLabels(["Server", "Transport", "Command / URL", "Status"])
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(self.COL_TARGET, QHeaderView.ResizeMode.Stretch)

        self.add_button = QPushButton("Add…")
        self.edit_button = QPushButton("Edit…")
        self.remove_button = QPushButton("Remove")
        self.restart_button = QPushButton("Restart")
        self.import_claude_button = QPushButton("Import from Claude Desktop")
        self.import_claude_button.setToolTip("Reads " + " or ".join(
            str(p) for p in claude_desktop_config_paths()))
        self.import_file_button = QPushButton("Import file…")
        toolbar = QHBoxLayout()
        for button in (self.add_button, self.edit_button, self.remove_button,
                       self.restart_button):
            toolbar.addWidget(button)
        toolbar.addStretch(1)
        toolbar.addWidget(self.import_claude_button)
        toolbar.addWidget(self.import_file_button)

        details = QGroupBox("Selected server")
        details_layout = QVBoxLayout(details)
        self.detail_label = QLabel()
        self.detail_label.setObjectName("mcp-detail")
        self.detail_label.setWordWrap(True)
        self.detail_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.stderr_view = _fixed_font_editor()
        self.stderr_view.setObjectName("mcp-stderr")
        self.stderr_view.setReadOnly(True)
        self.stderr_view.setPlaceholderText("The server's recent stderr output appears here.")
        self.stderr_view.setMaximumHeight(160)
        details_layout.addWidget(self.detail_label)
        details_layout.addWidget(self.stderr_view)

        self.status = QLabel("Changes are saved and applied immediately.")
        self.status.setObjectName("mcp-status")
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addLayout(toolbar)
        layout.addWidget(self.table, 1)
        layout.addWidget(details)
        layout.addWidget(self.status)

        self.add_button.clicked.connect(self.add_server)
        self.edit_button.clicked.connect(self.edit_selected)
        self.remove_button.clicked.connect(self.remove_selected)
        self.restart_button.clicked.connect(self.restart_selected)
        self.import_claude_button.clicked.connect(lambda: self.import_claude_desktop())
        self.import_file_button.clicked.connect(lambda: self.import_file())
        self.table.itemSelectionChanged.connect(self._show_details)
        self.table.doubleClicked.connect(lambda _index: self.edit_selected())
        self._status_changed.connect(self._on_status_changed)

        # The provider outlives this tab: unsubscribe when the widget goes away.
        unsubscribe = provider.subscribe(self._status_changed_from_provider)
        self.destroyed.connect(lambda *_: unsubscribe())
        self.refresh()

    # -- view --------------------------------------------------------------------------------

    def server_names(self) -> list[str]:
        return list(self._servers)

    def selected_name(self) -> str | None:
        rows = self.table.selectionModel().selectedRows()
        if not rows:
            return None
        item = self.table.item(rows[0].row(), self.COL_NAME)
        return item.text() if item is not None else None

    def select(self, name: str) -> None:
        for row in range(self.table.rowCount()):
            item = self.table.item(row, self.COL_NAME)
            if item is not None and item.text() == name:
                self.table.selectRow(row)
                return

    def status_of(self, name: str) -> str:
        """The Status cell's text (for tests and accessibility)."""
        for row in range(self.table.rowCount()):
            item = self.table.item(row, self.COL_NAME)
            if item is not None and item.text() == name:
                status = self.table.item(row, self.COL_STATUS)
                return status.text() if status is not None else ""
        raise KeyError(name)

    def refresh(self) -> None:
        selected = self.selected_name()
        self.table.setRowCount(0)
        for name, config in self._servers.items():
            row = self.table.rowCount()
            self.table.insertRow(row)
            status = self._status(name)
            cells = [name, "stdio" if config.transport == "stdio" else "HTTP", config.summary(),
                     status_text(status)]
            items = [QTableWidgetItem(text) for text in cells]
            for col, item in enumerate(items):
                item.setToolTip(item.text())
                self.table.setItem(row, col, item)
            if status is not None and status.state in STATE_COLORS:
                items[self.COL_STATUS].setForeground(QColor(STATE_COLORS[status.state]))
        if selected in self._servers:
            self.select(selected)
        elif self._servers:
            self.table.selectRow(0)
        self._show_details()

    def _status(self, name: str) -> ServerStatus | None:
        try:
            return self.provider.server_status(name)
        except KeyError:
            return None

    def _show_details(self) -> None:
        name = self.selected_name()
        has = name is not None
        for button in (self.edit_button, self.remove_button, self.restart_button):
            button.setEnabled(has)
        if name is None:
            self.detail_label.setText("No server selected." if self._servers else
                                      "No MCP servers yet: add one or import Claude Desktop's.")
            self.stderr_view.setPlainText("")
            return
        status = self._status(name)
        tools = [t.spec.name for t in self.provider.tools() if t.server == name]
        text = f"<b>{html.escape(name)}</b> — {html.escape(status_text(status))}"
        if tools:
            text += f"<br>Tools: {html.escape(', '.join(tools))}"
        text += (f"<br>Permission rules for these tools use server id "
                 f"<code>{html.escape(name)}</code>.")
        self.detail_label.setText(text)
        tail = status.stderr_tail if status is not None else ""
        if self.stderr_view.toPlainText() != tail:
            self.stderr_view.setPlainText(tail)
            bar = self.stderr_view.verticalScrollBar()
            bar.setValue(bar.maximum())

    def _status_changed_from_provider(self, server: str) -> None:
        if shiboken6.isValid(self):
            self._status_changed.emit(server)

    def _on_status_changed(self, _server: str) -> None:
        self.refresh()

    def show_message(self, text: str, error: bool = False) -> None:
        escaped = html.escape(text).replace("\n", "<br>")
        self.status.setText(f"<span style='color:#cf222e'>{escaped}</span>" if error
                            else escaped)

    # -- editing -----------------------------------------------------------------------------

    def add_server(self) -> McpServerEditor:
        return self._open_editor(NEW_SERVER_TEMPLATE, None, "Add MCP server")

    def edit_selected(self) -> McpServerEditor | None:
        name = self.selected_name()
        if name is None:
            return None
        text = dump_mcp_config_text({name: self._servers[name]})
        return self._open_editor(text, name, f"Edit MCP server {name}")

    def _open_editor(self, text: str, editing: str | None, title: str) -> McpServerEditor:
        taken = {n for n in self._servers if n != editing}
        dialog = McpServerEditor(text, taken, self, title)
        dialog.setWindowModality(Qt.WindowModality.WindowModal)
        self.dialog = dialog

        def done(code: int) -> None:
            servers = dialog.servers()
            if code == QDialog.DialogCode.Accepted and servers:
                updated: dict[str, McpServerConfig] = {}
                for name, config in self._servers.items():
                    if name == editing:
                        updated.update(servers)  # keep the server's place in the list
                    else:
                        updated[name] = config
                updated.update(servers)
                verb = "Saved" if editing else "Added"
                renamed = {new: editing for new in servers} \
                    if editing is not None and editing not in servers and len(servers) == 1 \
                    else {}
                self.apply(updated, f"{verb} {', '.join(servers)}.", renamed)
            self.dialog = None
            dialog.deleteLater()

        dialog.finished.connect(done)
        dialog.open()
        return dialog

    def remove_selected(self) -> QMessageBox | None:
        name = self.selected_name()
        if name is None:
            return None
        box = QMessageBox(QMessageBox.Icon.Warning, "Remove MCP server",
                          f"Remove {name!r}? The server is stopped and its tools disappear; "
                          "its stored env and header values are deleted from the keyring.",
                          QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
                          self)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        box.setWindowModality(Qt.WindowModality.WindowModal)
        self.confirm_box = box

        def done(_code: int) -> None:
            if box.clickedButton() is box.button(QMessageBox.StandardButton.Yes):
                remaining = {n: c for n, c in self._servers.items() if n != name}
                self.apply(remaining, f"Removed {name}.")
            self.confirm_box = None
            box.deleteLater()

        box.finished.connect(done)
        box.open()
        return box

    def restart_selected(self) -> None:
        name = self.selected_name()
        if name is None:
            return
        config = self._servers.get(name)
        if config is not None and config.disabled:
            self.show_message(f"{name} is disabled: edit it and remove \"disabled\" first.")
            return
        if name not in self.provider.server_names():
            self.show_message(f"{name} is not loaded yet; wait for the change to be applied.")
            return
        self.show_message(f"Restarting {name}…")
        self._spawn(self._restart(name))

    async def _restart(self, name: str) -> None:
        await self.provider.restart(name)
        state = self.provider.status(name)[0]
        self._message_if_alive(f"{name}: {state}.", error=state == "failed")

    # -- import ------------------------------------------------------------------------------

    def import_claude_desktop(self, path: str | None = None) -> None:
        """Import from Claude Desktop's config at its usual place (or ``path``); when there is
        none, ask for the file."""
        if path is None:
            found = find_claude_desktop_config()
            if found is None:
                self.show_message("Claude Desktop's configuration was not found at "
                                  + " or ".join(str(p) for p in claude_desktop_config_paths())
                                  + ". Choose the file instead.")
                self.import_file()
                return
            path = str(found)
        self._import(Path(path))

    def import_file(self, path: str | None = None) -> None:
        if path is None:
            start = next((str(p.parent) for p in claude_desktop_config_paths()
                          if p.parent.is_dir()), str(Path.home()))
            path, _ = QFileDialog.getOpenFileName(self, "Import MCP servers", start,
                                                  "JSON (*.json);;All files (*)")
            if not path:
                return
        self._import(Path(path))

    def _import(self, path: Path) -> None:
        try:
            parsed = read_claude_desktop_config(path)
        except McpConfigError as exc:
            self.show_message("Not imported: " + "\n".join(exc.errors), error=True)
            return
        merged, added, skipped = merge_servers(self._servers, parsed.servers)
        notes = [f"Skipped {', '.join(skipped)}: a server with that name exists already."] \
            if skipped else []
        notes += parsed.warnings
        if not added:
            self.show_message("\n".join([f"Nothing imported from {path}.", *notes]))
            return
        self.apply(merged, "\n".join([f"Imported {', '.join(added)} from {path}.", *notes]))

    # -- applying ----------------------------------------------------------------------------

    def apply(self, servers: Mapping[str, McpServerConfig], message: str,
              renamed: Mapping[str, str] | None = None) -> asyncio.Future[Any]:
        """Save ``servers`` and make the provider match them, without blocking the GUI."""
        self.show_message(f"{message} Applying…")
        return self._spawn(self._save_and_apply(dict(servers), message, dict(renamed or {})))

    async def _save_and_apply(self, servers: dict[str, McpServerConfig], message: str,
                              renamed: dict[str, str]) -> None:
        try:
            await asyncio.to_thread(self.store.save, servers, renamed)
            loaded = await asyncio.to_thread(self.store.load)
        except McpConfigError as exc:
            self._message_if_alive("Not saved: " + "\n".join(exc.errors), error=True)
            return
        if shiboken6.isValid(self):
            self._servers = self.store.load_public()
            self.refresh()
        await self.provider.apply_config(loaded)
        failed = [s.name for s in self.provider.statuses()
                  if s.name in servers and s.state == "failed"]
        suffix = f" Failed to start: {', '.join(failed)} (select it to see why)." \
            if failed else ""
        self._message_if_alive(message + suffix, error=bool(failed))

    def _message_if_alive(self, text: str, error: bool = False) -> None:
        if shiboken6.isValid(self):
            self.show_message(text, error)

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> asyncio.Future[Any]:
        future = asyncio.ensure_future(coro)
        self._tasks.add(future)
        future.add_done_callback(self._task_done)
        return future

    def _task_done(self, future: asyncio.Future[Any]) -> None:
        self._tasks.discard(future)
        if not future.cancelled() and future.exception() is not None:
            exc = future.exception()
            log.error("MCP settings action failed", exc_info=exc)
            self._message_if_alive(f"Failed: {type(exc).__name__}: {exc}", error=True)

    def pending(self) -> int:
        """Background saves/restarts still running (tests wait for 0)."""
        return len(self._tasks)

