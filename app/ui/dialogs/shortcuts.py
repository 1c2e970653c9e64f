"""Help → Keyboard Shortcuts: every shortcut of the window, read from the window itself (its
menus' actions, with the keys a menu item shows after a tab, and its QShortcuts), so the list
cannot drift from what the keys do."""

from __future__ import annotations

from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QMainWindow,
    QMenu,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)


def window_shortcuts(window: QMainWindow) -> list[tuple[str, str]]:
    """(keys, what they do), the menus' first, then the shortcuts widgets hold."""
    found: list[tuple[str, str]] = []

    def walk(menu: QMenu, path: str) -> None:
        for action in menu.actions():
            title = action.text().split("\t")[0].replace("&", "")
            sub = action.menu()
            if isinstance(sub, QMenu):
                walk(sub, f"{path} › {title}")
                continue
            keys = action.shortcut().toString(QKeySequence.SequenceFormat.NativeText) or (
                action.text().split("\t", 1)[1] if "\t" in action.text() else "")
            if keys and title:
                found.append((keys, f"{path} › {title}"))

    for action in window.menuBar().actions():
        menu = action.menu()
        if isinstance(menu, QMenu):
            walk(menu, action.text().replace("&", ""))
    shown = {keys for keys, _ in found}
    for shortcut in window.findChildren(QShortcut):
        keys = shortcut.key().toString(QKeySequence.SequenceFormat.NativeText)
        what = shortcut.whatsThis()
        if keys and what and keys not in shown:
            found.append((keys, what))
            shown.add(keys)
    return found


class ShortcutsDialog(QDialog):
    def __init__(self, window: QMainWindow, parent: QWidget | None = None) -> None:
        super().__init__(parent or window)
        self.setWindowTitle("Keyboard Shortcuts")
        rows = window_shortcuts(window)
        self.table = QTableWidget(len(rows), 2)
        self.table.setObjectName("shortcuts-table")
        self.table.setAccessibleName("Keyboard shortcuts")
        self.table.setHorizontalHeaderLabels(["Keys", "Does"])
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        for row, (keys, what) in enumerate(rows):
            self.table.setItem(row, 0, QTableWidgetItem(keys))
            self.table.setItem(row, 1, QTableWidgetItem(what))
        self.table.resizeColumnsToContents()
        self.table.horizontalHeader().setStretchLastSection(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.table)
        layout.addWidget(buttons)
        self.resize(520, 420)
