"""The Edit menu's standard actions — Undo, Redo, Cut, Copy, Paste, Select All — acting on
whichever text field has the keyboard focus, each enabled only when it can do something there
(a selection to copy, something to undo, a field that is not read-only to paste into). The
state follows the focus and the field's own signals, so a shortcut of a disabled action never
fires, and the field handles its own keys as Qt does."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction, QGuiApplication, QKeySequence
from PySide6.QtWidgets import (
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QLineEdit,
    QMenu,
    QPlainTextEdit,
    QTextEdit,
    QWidget,
)

TextField = QLineEdit | QPlainTextEdit | QTextEdit

# (name, menu text, standard key, method of the focused field)
_ACTIONS = (
    ("undo", "&Undo", QKeySequence.StandardKey.Undo, "undo"),
    ("redo", "&Redo", QKeySequence.StandardKey.Redo, "redo"),
    ("cut", "Cu&t", QKeySequence.StandardKey.Cut, "cut"),
    ("copy", "&Copy", QKeySequence.StandardKey.Copy, "copy"),
    ("paste", "&Paste", QKeySequence.StandardKey.Paste, "paste"),
    ("select_all", "Select &All", QKeySequence.StandardKey.SelectAll, "selectAll"),
)


def text_field(widget: QWidget | None) -> TextField | None:
    """The text field an Edit action acts on for the focus ``widget`` (a spin box's or an
    editable combo box's line edit included), or None."""
    if isinstance(widget, QLineEdit | QPlainTextEdit | QTextEdit):
        return widget
    if isinstance(widget, QComboBox) and widget.isEditable():
        return widget.lineEdit()
    if isinstance(widget, QAbstractSpinBox):
        return widget.findChild(QLineEdit)
    return None


def _can(field: TextField, name: str) -> bool:
    if isinstance(field, QLineEdit):
        writable = not field.isReadOnly()
        selected = field.hasSelectedText() and field.echoMode() == QLineEdit.EchoMode.Normal
        return {
            "undo": writable and field.isUndoAvailable(),
            "redo": writable and field.isRedoAvailable(),
            "cut": writable and selected,
            "copy": selected,
            "paste": writable,
            "select_all": bool(field.text()),
        }[name]
    writable = not field.isReadOnly()
    document = field.document()
    selected = field.textCursor().hasSelection()
    return {
        "undo": writable and document.isUndoAvailable(),
        "redo": writable and document.isRedoAvailable(),
        "cut": writable and selected,
        "copy": selected,
        "paste": writable and field.canPaste(),
        "select_all": not document.isEmpty(),
    }[name]


class EditActions(QObject):
    """Owns the six actions of ``menu`` and keeps them in step with the focused field."""

    def __init__(self, parent: QWidget, menu: QMenu) -> None:
        super().__init__(parent)
        self.actions: dict[str, QAction] = {}
        for name, text, key, method in _ACTIONS:
            action = QAction(text, parent, shortcut=QKeySequence(key))
            action.setObjectName(f"edit-{name}")
            action.triggered.connect(self._runner(method))
            menu.addAction(action)
            self.actions[name] = action
            if name == "redo":
                menu.addSeparator()
        self._field: TextField | None = None
        self._connections: list[tuple[Any, Any]] = []  # (signal, slot) to undo on refocus
        app = QApplication.instance()
        if isinstance(app, QApplication):
            app.focusChanged.connect(self._focus_changed)
        clipboard = QGuiApplication.clipboard()
        clipboard.dataChanged.connect(self.refresh)
        menu.aboutToShow.connect(self.refresh)
        self._focus_changed(None, QApplication.focusWidget())

    def _runner(self, method: str) -> Callable[[], None]:
        def run() -> None:
            field = text_field(QApplication.focusWidget())
            if field is not None:
                getattr(field, method)()
            self.refresh()

        return run

    def _focus_changed(self, _old: QWidget | None, new: QWidget | None) -> None:
        self._watch(text_field(new))
        self.refresh()

    def _watch(self, field: TextField | None) -> None:
        """Follow the focused field's own changes (selection, undo stack, text)."""
        for signal, slot in self._connections:
            try:
                signal.disconnect(slot)
            except (RuntimeError, TypeError):  # the field is gone
                pass
        self._connections = []
        self._field = field
        if field is None:
            return
        signals: list[Any] = [field.selectionChanged, field.textChanged]
        if isinstance(field, QPlainTextEdit | QTextEdit):
            signals += [field.undoAvailable, field.redoAvailable, field.copyAvailable]
        for signal in signals:
            signal.connect(self.refresh)
            self._connections.append((signal, self.refresh))
        field.destroyed.connect(self._forget)

    def _forget(self, *_args: object) -> None:
        self._connections = []
        self._field = None
        self.refresh()

    def refresh(self, *_args: object) -> None:
        field = self._field
        for name, action in self.actions.items():
            try:
                action.setEnabled(field is not None and _can(field, name))
            except RuntimeError:  # the field was deleted under us
                action.setEnabled(False)
