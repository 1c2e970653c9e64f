"""Find in the transcript (Edit → Find, Ctrl+F): a small bar above the conversation that
highlights every match in the message views, jumps to the current one ("3 of 12"; Enter or F3
for the next, Shift+Enter or Shift+F3 for the previous) and closes with Esc, clearing the
highlights. Searching reads the messages' documents on the GUI thread, capped at
``MAX_MATCHES``: a conversation's text is small next to what a frame may cost."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor, QKeySequence, QShortcut, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QTextEdit,
    QToolButton,
    QWidget,
)

from app.ui.widgets.transcript_view import MessageView, Transcript

MAX_MATCHES = 2000
_ALL_MATCHES = QColor("#fff8c5")
_CURRENT_MATCH = QColor("#ffb86c")


def _selection(cursor: QTextCursor, colour: QColor) -> QTextEdit.ExtraSelection:
    selection = QTextEdit.ExtraSelection()
    selection.cursor = cursor
    fmt = QTextCharFormat()
    fmt.setBackground(colour)
    selection.format = fmt
    return selection


class FindBar(QFrame):
    """Searches the message views of ``transcript``; hidden until ``open_bar``."""

    closed = Signal()

    def __init__(self, transcript: Transcript, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("find-bar")
        self.transcript = transcript
        self.field = QLineEdit()
        self.field.setObjectName("find-field")
        self.field.setPlaceholderText("Find in the conversation")
        self.field.setClearButtonEnabled(True)
        self.count_label = QLabel("")
        self.count_label.setObjectName("find-count")
        self.count_label.setStyleSheet("color: palette(placeholder-text);")
        self.previous_button = QToolButton()
        self.previous_button.setText("↑")
        self.previous_button.setToolTip("Previous match (Shift+Enter)")
        self.next_button = QToolButton()
        self.next_button.setText("↓")
        self.next_button.setToolTip("Next match (Enter)")
        close = QToolButton()
        close.setText("✕")
        close.setToolTip("Close (Esc)")
        close.setAutoRaise(True)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(QLabel("Find:"))
        row.addWidget(self.field, 1)
        row.addWidget(self.count_label)
        row.addWidget(self.previous_button)
        row.addWidget(self.next_button)
        row.addWidget(close)
        self.matches: list[tuple[MessageView, QTextCursor]] = []
        self.current = -1
        self._highlighted: set[MessageView] = set()
        self.field.textChanged.connect(lambda _text: self.search())
        self.field.returnPressed.connect(self.next_match)
        self.next_button.clicked.connect(self.next_match)
        self.previous_button.clicked.connect(self.previous_match)
        close.clicked.connect(self.close_bar)
        for keys, slot in ((QKeySequence(Qt.Key.Key_Escape), self.close_bar),
                           (QKeySequence("Shift+Return"), self.previous_match),
                           (QKeySequence("Shift+Enter"), self.previous_match),
                           (QKeySequence(QKeySequence.StandardKey.FindNext), self.next_match),
                           (QKeySequence(QKeySequence.StandardKey.FindPrevious),
                            self.previous_match)):
            shortcut = QShortcut(keys, self)
            shortcut.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            shortcut.activated.connect(slot)
        self.hide()

    # -- opening and closing --------------------------------------------------------------

    def open_bar(self) -> None:
        """Show the bar with its text selected (a second Ctrl+F re-searches, e.g. after new
        messages arrived)."""
        self.show()
        self.field.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.field.selectAll()
        self.search()

    def close_bar(self) -> None:
        self._clear_highlights()
        self.matches, self.current = [], -1
        self.hide()
        self.closed.emit()

    # -- searching ------------------------------------------------------------------------

    def search(self) -> None:
        """Find every match of the field's text (case-insensitive), highlight them all and
        jump to the first one."""
        self._clear_highlights()
        self.matches, self.current = [], -1
        text = self.field.text()
        if text:
            for view in self._views():
                document = view.document()
                cursor = document.find(text)
                while not cursor.isNull() and len(self.matches) < MAX_MATCHES:
                    self.matches.append((view, cursor))
                    cursor = document.find(text, cursor)
        if self.matches:
            self._go_to(0)
        else:
            self._show_count()

    def next_match(self) -> None:
        if self._stale():
            self.search()
            return
        if self.matches:
            self._go_to((self.current + 1) % len(self.matches))

    def previous_match(self) -> None:
        if self._stale():
            self.search()
            return
        if self.matches:
            self._go_to((self.current - 1) % len(self.matches))

    def _stale(self) -> bool:
        """A view a match was in is gone (a new conversation was opened meanwhile)."""
        views = set(self._views())
        return any(view not in views for view, _cursor in self.matches)

    def _views(self) -> list[MessageView]:
        return [w for w in self.transcript.items() if isinstance(w, MessageView)]

    def _go_to(self, index: int) -> None:
        self.current = index
        by_view: dict[MessageView, list[QTextEdit.ExtraSelection]] = {}
        for i, (view, cursor) in enumerate(self.matches):
            colour = _CURRENT_MATCH if i == index else _ALL_MATCHES
            by_view.setdefault(view, []).append(_selection(cursor, colour))
        for view, selections in by_view.items():
            view.setExtraSelections(selections)
        self._highlighted = set(by_view)
        view, cursor = self.matches[index]
        body = self.transcript.widget()
        if body is not None:  # scroll so the match itself, not only its message, shows
            point = view.viewport().mapTo(body, view.cursorRect(cursor).center())
            self.transcript.ensureVisible(point.x(), point.y(), 20, 60)
        self._show_count()

    def _show_count(self) -> None:
        # A long conversation shows only its end (conversation_pager): Find searches what is
        # loaded, and says so while earlier messages are not.
        partial = " in the loaded messages" if self.transcript.earlier_button.isVisible() else ""
        if not self.field.text():
            self.count_label.setText("")
        elif not self.matches:
            self.count_label.setText(f"no matches{partial}")
        else:
            more = "+" if len(self.matches) >= MAX_MATCHES else ""
            self.count_label.setText(f"{self.current + 1} of {len(self.matches)}{more}{partial}")

    def _clear_highlights(self) -> None:
        live = set(self._views())
        for view in self._highlighted:
            if view in live:
                view.setExtraSelections([])
        self._highlighted = set()
