"""Settings → MCP servers: the configured servers, their status, and editing them.

The widgets only: what the buttons do lives in ``McpSettingsController`` (which never blocks the
GUI), and the server list is its ``McpServersModel``.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
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
    QTableView,
    QVBoxLayout,
    QWidget,
)

from app.core.tools.providers.mcp.config.model import SECRET_PLACEHOLDER, McpServerConfig
from app.core.tools.providers.mcp.config.store import McpConfigStore
from app.core.tools.providers.mcp.provider import McpProvider
from app.core.tools.providers.mcp.server_log import LOG_LEVELS
from app.ui.controllers.mcp_settings import EditorCheck, McpSettingsController
from app.ui.models.mcp_servers_model import McpServersModel, status_text
from app.ui.tones import Tone, span


def _fixed_font_editor() -> QPlainTextEdit:
    editor = QPlainTextEdit()
    editor.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
    editor.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
    return editor


def _show_tail(view: QPlainTextEdit, text: str) -> None:
    """Show ``text`` scrolled to its end (untouched when it did not change)."""
    if view.toPlainText() != text:
        view.setPlainText(text)
        bar = view.verticalScrollBar()
        bar.setValue(bar.maximum())


class McpServerEditor(QDialog):
    """Edit one server (or paste several) as ``{"mcpServers": {...}}``, validated as you type.

    OK stays disabled until ``check`` accepts the text.
    """

    def __init__(self, text: str, check: Callable[[str], EditorCheck],
                 parent: QWidget | None = None, title: str = "MCP server") -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        self.resize(640, 460)
        self._check = check
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
        self.editor.textChanged.connect(self._validate)
        self._validate()

    @property
    def ok_button(self) -> QPushButton:
        return self.buttons.button(QDialogButtonBox.StandardButton.Ok)

    def _validate(self) -> None:
        result = self._check(self.editor.toPlainText())
        self._servers = result.servers
        if result.errors:
            self.problems.setText(span(Tone.DANGER, "<br>".join(
                html.escape(e) for e in result.errors)))
        else:
            note = "".join(f"<br>⚠ {html.escape(w)}" for w in result.warnings)
            self.problems.setText(f"✓ Valid: {html.escape(', '.join(result.servers))}{note}")
        self.ok_button.setEnabled(result.ok)

    def servers(self) -> dict[str, McpServerConfig]:
        """The servers of the last valid text (empty while it is invalid)."""
        return dict(self._servers)


class McpServersTab(QWidget):
    """The "MCP servers" tab: status per server, add/edit/remove, import, restart."""

    def __init__(self, store: McpConfigStore, provider: McpProvider,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.controller = McpSettingsController(store, provider, self)
        self.model = self.controller.model

        intro = QLabel("Servers use Claude Desktop's <code>mcpServers</code> format. Their tools "
                       "appear in the tools list under <i>Server: name</i>. Tool annotations "
                       "such as <i>read-only</i> are shown but never trusted: calls ask unless a "
                       "permission rule for the server's name allows them.")
        intro.setWordWrap(True)

        self.table = QTableView()
        self.table.setObjectName("mcp-servers-table")
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(McpServersModel.COL_TARGET, QHeaderView.ResizeMode.Stretch)

        self.add_button = QPushButton("Add…")
        self.edit_button = QPushButton("Edit…")
        self.remove_button = QPushButton("Remove")
        self.restart_button = QPushButton("Restart")
        self.sign_in_button = QPushButton("Sign in")
        self.sign_in_button.setToolTip("Sign in to this HTTP server in your web browser (OAuth)")
        self.sign_out_button = QPushButton("Sign out")
        self.sign_out_button.setToolTip("Forget this server's sign-in (its tokens are deleted)")
        self.import_claude_button = QPushButton("Import from Claude Desktop")
        self.import_claude_button.setToolTip("Reads " + " or ".join(
            str(p) for p in self.controller.claude_desktop_paths()))
        self.import_file_button = QPushButton("Import file…")
        toolbar = QHBoxLayout()
        for button in (self.add_button, self.edit_button, self.remove_button,
                       self.restart_button, self.sign_in_button, self.sign_out_button):
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
        self.log_level = QComboBox()
        self.log_level.setObjectName("mcp-log-level")
        self.log_level.addItems(LOG_LEVELS)
        self.log_level.setToolTip("The server sends its log messages from this level on "
                                  "(when it supports logging)")
        self.log_view = _fixed_font_editor()
        self.log_view.setObjectName("mcp-log")
        self.log_view.setReadOnly(True)
        self.log_view.setPlaceholderText("The server's log messages appear here.")
        self.log_view.setMaximumHeight(160)
        log_row = QHBoxLayout()
        log_row.addWidget(QLabel("Log messages from level:"))
        log_row.addWidget(self.log_level)
        log_row.addStretch(1)
        details_layout.addWidget(self.detail_label)
        details_layout.addWidget(self.stderr_view)
        details_layout.addLayout(log_row)
        details_layout.addWidget(self.log_view)

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
        self.sign_in_button.clicked.connect(self.sign_in_selected)
        self.sign_out_button.clicked.connect(self.sign_out_selected)
        self.controller.server_changed.connect(lambda _name: self._update_sign_in_buttons())
        self.import_claude_button.clicked.connect(self.import_claude_desktop)
        self.import_file_button.clicked.connect(self.import_file)
        self.log_level.currentTextChanged.connect(self._set_log_level)
        self.controller.server_changed.connect(lambda _name: self._show_log())
        self.table.selectionModel().selectionChanged.connect(self._show_details)
        self.table.doubleClicked.connect(lambda _index: self.edit_selected())
        self.controller.message.connect(self.show_message)
        # A reset (servers added, removed or renamed) clears the selection: restore it.
        self._reselect: str | None = None
        self.model.modelAboutToBeReset.connect(self._remember_selection)
        self.model.modelReset.connect(self._restore_selection)
        self.model.dataChanged.connect(self._show_details)
        self._restore_selection()

    # -- view --------------------------------------------------------------------------------

    def selected_name(self) -> str | None:
        rows = self.table.selectionModel().selectedRows()
        return self.model.name_at(rows[0].row()) if rows else None

    def _remember_selection(self) -> None:
        self._reselect = self.selected_name()

    def _restore_selection(self) -> None:
        row = self.model.row_of(self._reselect) if self._reselect is not None else -1
        if row < 0 and self.model.rowCount() > 0:
            row = 0
        if row >= 0:
            self.table.selectRow(row)
        self._show_details()

    def _show_details(self) -> None:
        name = self.selected_name()
        for button in (self.edit_button, self.remove_button, self.restart_button):
            button.setEnabled(name is not None)
        self._update_sign_in_buttons()
        if name is None:
            self.detail_label.setText(
                "No server selected." if self.model.rowCount() else
                "No MCP servers yet: add one or import Claude Desktop's.")
            self.stderr_view.setPlainText("")
            self._show_log()
            return
        status = self.controller.status(name)
        tools = self.controller.tools_of(name)
        text = f"<b>{html.escape(name)}</b> — {html.escape(status_text(status))}"
        if tools:
            text += f"<br>Tools: {html.escape(', '.join(tools))}"
        text += (f"<br>Permission rules for these tools use server id "
                 f"<code>{html.escape(name)}</code>.")
        self.detail_label.setText(text)
        tail = status.stderr_tail if status is not None else ""
        _show_tail(self.stderr_view, tail)
        self._show_log()

    def _show_log(self) -> None:
        """The selected server's log messages and level (log messages change no status)."""
        name = self.selected_name()
        server_log = self.controller.server_log(name) if name is not None else None
        self.log_level.setEnabled(server_log is not None)
        if server_log is not None and self.log_level.currentText() != server_log.level:
            self.log_level.blockSignals(True)
            self.log_level.setCurrentText(server_log.level)
            self.log_level.blockSignals(False)
        _show_tail(self.log_view, server_log.text() if server_log is not None else "")

    def _set_log_level(self, level: str) -> None:
        name = self.selected_name()
        server_log = self.controller.server_log(name) if name is not None else None
        if server_log is not None:
            server_log.set_level(level)

    def _update_sign_in_buttons(self) -> None:
        name = self.selected_name()
        self.sign_in_button.setEnabled(name is not None and self.controller.can_sign_in(name))
        self.sign_out_button.setEnabled(name is not None and self.controller.can_sign_out(name))

    def show_message(self, text: str, error: bool = False) -> None:
        escaped = html.escape(text).replace("\n", "<br>")
        self.status.setText(span(Tone.DANGER, escaped) if error
                            else escaped)

    # -- actions -----------------------------------------------------------------------------

    def add_server(self) -> None:
        self._open_editor(None, "Add MCP server")

    def edit_selected(self) -> None:
        name = self.selected_name()
        if name is not None:
            self._open_editor(name, f"Edit MCP server {name}")

    def _open_editor(self, editing: str | None, title: str) -> None:
        dialog = McpServerEditor(self.controller.editor_text(editing),
                                 lambda text: self.controller.check(text, editing), self, title)
        dialog.setWindowModality(Qt.WindowModality.WindowModal)

        def done(code: int) -> None:
            servers = dialog.servers()
            if code == QDialog.DialogCode.Accepted and servers:
                self.controller.save_edit(servers, editing)
            dialog.deleteLater()

        dialog.finished.connect(done)
        dialog.open()

    def remove_selected(self) -> None:
        name = self.selected_name()
        if name is None:
            return
        box = QMessageBox(QMessageBox.Icon.Warning, "Remove MCP server",
                          f"Remove {name!r}? The server is stopped and its tools disappear; "
                          "its stored env and header values are deleted from the keyring.",
                          QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
                          self)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        box.setWindowModality(Qt.WindowModality.WindowModal)

        def done(_code: int) -> None:
            if box.clickedButton() is box.button(QMessageBox.StandardButton.Yes):
                self.controller.remove(name)
            box.deleteLater()

        box.finished.connect(done)
        box.open()

    def restart_selected(self) -> None:
        name = self.selected_name()
        if name is not None:
            self.controller.restart(name)

    def sign_in_selected(self) -> None:
        name = self.selected_name()
        if name is not None:
            self.controller.sign_in(name)

    def sign_out_selected(self) -> None:
        name = self.selected_name()
        if name is not None:
            self.controller.sign_out(name)

    def import_claude_desktop(self) -> None:
        path = self.controller.find_claude_desktop_config()
        if path is None:
            self.import_file()
        else:
            self.controller.import_file(path)

    def import_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Import MCP servers",
                                              self.controller.import_start_dir(),
                                              "JSON (*.json);;All files (*)")
        if path:
            self.controller.import_file(Path(path))
