"""The arguments of an MCP prompt (or of a resource template's URI): a field per argument,
required ones marked and enforced (OK stays disabled until they are filled). Accepting only
fills the values in; nothing is sent from here — the expanded prompt goes into the prompt box
for the person to review.

When the server completes arguments (``completion/complete``), a field offers its suggestions
as the person types: each edit asks on the event loop, and an answer that arrives after the
text moved on is dropped. A failed or slow completion only means no suggestions."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence

from PySide6.QtCore import QStringListModel, Qt
from PySide6.QtWidgets import (
    QCompleter,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from app.core.agent.mcp_context import PromptArgument
from app.ui.task_set import TaskSet

log = logging.getLogger(__name__)

# (argument, what is typed, the other arguments filled in) → the server's suggestions.
CompleteArgument = Callable[[str, str, dict[str, str]], Awaitable[list[str]]]


class McpPromptForm(QDialog):
    """Values for ``arguments``; ``values()`` leaves out the empty optional ones."""

    def __init__(self, title: str, description: str, arguments: Sequence[PromptArgument],
                 parent: QWidget | None = None, *, ok_text: str = "Insert",
                 complete: CompleteArgument | None = None) -> None:
        super().__init__(parent)
        self._complete = complete
        self._tasks = TaskSet("MCP argument completion", lambda _error: None)
        self.finished.connect(lambda _result: self._tasks.cancel_all())
        self.completers: dict[str, QCompleter] = {}
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
            if complete is not None:
                self._offer_completion(argument.name, edit)
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

    def _offer_completion(self, name: str, edit: QLineEdit) -> None:
        completer = QCompleter(QStringListModel(self), edit)
        completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        edit.setCompleter(completer)
        self.completers[name] = completer
        edit.textEdited.connect(lambda typed: self._tasks.run(self._suggest(name, typed)))

    async def _suggest(self, name: str, typed: str) -> None:
        """Ask the server for ``name``'s suggestions; show them if the text is still ``typed``."""
        assert self._complete is not None
        filled = {n: v for n, v in self.values().items() if n != name}
        try:
            values = await self._complete(name, typed, filled)
        except Exception as exc:  # no suggestions: the person types on
            log.info("MCP argument completion of %s failed: %s", name, exc)
            return
        edit = self.fields[name]
        if edit.text() != typed:
            return  # the person typed on; that edit asked again
        completer = self.completers[name]
        model = completer.model()
        assert isinstance(model, QStringListModel)
        model.setStringList(values)
        if values and edit.hasFocus():
            completer.complete()

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
