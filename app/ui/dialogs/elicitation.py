"""The elicitation dialog: an MCP server asks the person for some values, as a form.

The form comes from ``app.core.tools.providers.mcp.elicit_schema`` (a flat object of text,
number, yes/no and choice fields). Every field starts empty: a default the server suggests is
shown as a hint and a placeholder, never filled in, so nothing is sent that the person did not
enter. Accept checks the entries (required fields, lengths, ranges, formats) and keeps the
dialog open with the problems named; Decline says no; Cancel, Escape and the close button
cancel. No button is the default, so Enter never submits.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QFormLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from app.core.tools.providers.mcp.elicit_schema import ElicitationForm, FormField
from app.core.tools.providers.mcp.server_requests import ElicitationReply
from app.core.visible_text import make_visible
from app.ui.dialogs.answer_buttons import answer_buttons
from app.ui.markup import escape
from app.ui.tones import Tone, tone_text, view_check_boxes

NOT_CHOSEN = "— not chosen —"


class ElicitationDialog(QDialog):
    def __init__(self, server: str, message: str, form: ElicitationForm,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.form = form
        self._reply = ElicitationReply("cancel")
        self.setWindowTitle(f"MCP server {server!r} asks for information")
        self.resize(560, 520)
        layout = QVBoxLayout(self)
        intro = QLabel(f"The MCP server <b>{escape(make_visible(server))}</b> asks:")
        layout.addWidget(intro)
        self.message_label = QLabel(make_visible(message))
        self.message_label.setTextFormat(Qt.TextFormat.PlainText)
        self.message_label.setWordWrap(True)
        layout.addWidget(self.message_label)

        body = QWidget()
        fields = QFormLayout(body)
        self.inputs: dict[str, QWidget] = {}
        self.errors: dict[str, QLabel] = {}
        for f in form.fields:
            editor = _editor(f)
            self.inputs[f.name] = editor
            box = QVBoxLayout()
            box.addWidget(editor)
            notes = [make_visible(t) for t in (f.description, f.hint()) if t]
            if notes:
                note = QLabel(" — ".join(notes))
                note.setTextFormat(Qt.TextFormat.PlainText)
                note.setWordWrap(True)
                box.addWidget(note)
            error = QLabel("")
            tone_text(error, Tone.DANGER)
            error.hide()
            self.errors[f.name] = error
            box.addWidget(error)
            title = make_visible(f.title) + (" *" if f.required else "")
            fields.addRow(QLabel(title), box)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(body)
        layout.addWidget(scroll, 1)
        if any(f.required for f in form.fields):
            layout.addWidget(QLabel("* required"))

        self.cancel_button, self.decline_button, self.accept_button = answer_buttons(
            layout, "Cancel", "Decline", "Send")
        self.cancel_button.clicked.connect(self.reject)
        self.decline_button.clicked.connect(self._decline)
        self.accept_button.clicked.connect(self._submit)

    def entries(self) -> dict[str, Any]:
        """What the person entered, by field name (None: left empty)."""
        return {name: _entry(widget) for name, widget in self.inputs.items()}

    def reply(self) -> ElicitationReply:
        """The answer once the dialog has finished; cancel unless Send or Decline was used."""
        if self.result() != QDialog.DialogCode.Accepted:
            return ElicitationReply("cancel")
        return self._reply

    def _decline(self) -> None:
        self._reply = ElicitationReply("decline")
        self.accept()

    def _submit(self) -> None:
        content, errors = self.form.collect(self.entries())
        for name, label in self.errors.items():
            label.setText(errors.get(name, ""))
            label.setVisible(name in errors)
        if errors:
            first = next(f.name for f in self.form.fields if f.name in errors)
            self.inputs[first].setFocus()
            return
        self._reply = ElicitationReply("accept", content)
        self.accept()


def _editor(f: FormField) -> QWidget:
    if f.kind in ("boolean", "enum"):
        combo = QComboBox()
        combo.addItem(NOT_CHOSEN, None)
        options = [("Yes", True), ("No", False)] if f.kind == "boolean" else \
            [(make_visible(label), value) for value, label in f.options]
        for label, value in options:
            combo.addItem(label, value)
        combo.setCurrentIndex(0)  # never the default: the person chooses
        return combo
    if f.kind == "multi":
        choices = QListWidget()
        view_check_boxes(choices)
        for value, label in f.options:
            item = QListWidgetItem(make_visible(label))
            item.setData(Qt.ItemDataRole.UserRole, value)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Unchecked)
            choices.addItem(item)
        choices.setMaximumHeight(22 * min(len(f.options), 6) + 8)
        return choices
    line = QLineEdit()
    if f.default is not None:
        line.setPlaceholderText(make_visible(f"e.g. {f.default_label()}"))
    return line


def _entry(widget: QWidget) -> Any:
    if isinstance(widget, QComboBox):
        return widget.currentData()
    if isinstance(widget, QListWidget):
        return [widget.item(i).data(Qt.ItemDataRole.UserRole) for i in range(widget.count())
                if widget.item(i).checkState() == Qt.CheckState.Checked]
    assert isinstance(widget, QLineEdit)
    return widget.text()
