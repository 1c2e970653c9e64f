"""The arguments of an MCP prompt (or of a resource template's URI): a field per argument,
required ones marked and enforced (OK stays disabled until they are filled). Accepting only
fills the values in; nothing is sent from here — the expanded prompt goes into the prompt box
for the person to review."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from app.core.agent.mcp_context import PromptArgument


class McpPromptForm(QDialog):
    """Values for ``arguments``; ``values()`` leaves out the empty optional ones."""

    def __init__(self, title: str, description: str, arguments: Sequence[PromptArgument],
                 parent: QWidget | None = None, *, ok_text: str = "Insert") -> None:
        super().__init__(parent)
        self.setObjectName("mcp-prompt-form")
        self.setWindowTitle(title)
        self.arguments = list(arguments)
        layout = QVBoxLayout(self)
        if description:
            about = QLabel(description)
            about.setTextFormat(Qt.TextFormat.PlainText)  # the server's text, not markup
            about.setWordWrap(True)
            layout.addWidget(about)
        form = QFormLayout()
        self.fields: dict[str, QLineEdit] = {}
        for argument in self.arguments:
            edit = QLineEdit()
            edit.setObjectName(f"argument-{argument.name}")
            edit.setPlaceholderText("required" if argument.required else "optional")
            if argument.description:
                edit.setToolTip(argument.description)
            edit.textChanged.connect(self._update_ok)
            label = QLabel(argument.name + (" *" if argument.required else ""))
            label.setTextFormat(Qt.TextFormat.PlainText)
            form.addRow(label, edit)
            self.fields[argument.name] = edit
        layout.addLayout(form)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                        | QDialogButtonBox.StandardButton.Cancel)
        self.ok_button = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.ok_button.setText(ok_text)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)
        self._update_ok()

    def missing(self) -> list[str]:
        """The required arguments still empty."""
        return [a.name for a in self.arguments
                if a.required and not self.fields[a.name].text().strip()]

    def _update_ok(self) -> None:
        missing = self.missing()
        self.ok_button.setEnabled(not missing)
        self.ok_button.setToolTip("Fill in: " + ", ".join(missing) if missing else "")

    def accept(self) -> None:
        if self.missing():  # Enter in a field while a required one is empty
            self._update_ok()
            return
        super().accept()

    def values(self) -> dict[str, str]:
        return {name: edit.text().strip() for name, edit in self.fields.items()
                if edit.text().strip()}
