"""The AI panel's transcript: a scrolling column of messages (Markdown, re-rendered as it
streams), tool cards and error cards, which follows new content while scrolled to the bottom."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from app.ui.widgets.markdown_stream import SplitState, freeze_ready_blocks


class MessageView(QTextBrowser):
    """One message as Markdown in its own document, sized to its content.

    While streaming, finished parts are appended once (see markdown_stream) and only the tail
    range of the document is replaced on each render; QTextDocument lays out just the blocks
    that changed, so a tick costs the same at token 10 and at token 10,000.
    """

    def __init__(self, text: str = "", role: str = "assistant") -> None:
        super().__init__()
        self.role = role
        self.setObjectName(f"message-{role}")
        self.setOpenExternalLinks(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.viewport().setAutoFillBackground(role == "user")
        if role == "user":
            self.setStyleSheet("QTextBrowser { background: palette(alternate-base);"
                               " border-radius: 8px; padding: 4px; }")
        else:
            self.setStyleSheet("QTextBrowser { background: transparent; }")
        self.document().documentLayout().documentSizeChanged.connect(self._fit_height)
        self._state = SplitState()
        self._tail_start = 0
        self.markdown = ""
        self.set_markdown(text)

    def _fit_height(self, size) -> None:
        margins = self.contentsMargins()
        self.setFixedHeight(int(size.height()) + margins.top() + margins.bottom() + 2)

    def set_markdown(self, text: str) -> None:
        """Replace the whole message (history, tests); renders immediately."""
        self.document().clear()
        self._state = SplitState()
        self._tail_start = 0
        self.markdown = text
        self.render_markdown()

    def append(self, delta: str) -> None:
        self.markdown += delta

    # Not `render`: that would shadow QWidget.render(target, ...), which Qt's Python API calls.
    def render_markdown(self) -> None:
        frozen, tail = freeze_ready_blocks(self.markdown, self._state)
        cursor = QTextCursor(self.document())
        cursor.beginEditBlock()
        cursor.setPosition(self._tail_start)
        cursor.movePosition(QTextCursor.MoveOperation.End, QTextCursor.MoveMode.KeepAnchor)
        cursor.removeSelectedText()
        for block in frozen:
            cursor.insertMarkdown(block)
        self._tail_start = cursor.position()
        if tail:
            cursor.insertMarkdown(tail)
        cursor.endEditBlock()


class ErrorCard(QFrame):
    def __init__(self, message: str, retryable: bool, on_retry: Callable[[], None]) -> None:
        super().__init__()
        self.setObjectName("error-card")
        self.setStyleSheet("QFrame#error-card { border: 1px solid #cf222e; border-radius: 8px; }")
        layout = QHBoxLayout(self)
        label = QLabel(f"⚠ {message}")
        label.setWordWrap(True)
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(label, 1)
        self.retry_button = QPushButton("Retry")
        self.retry_button.setVisible(retryable)
        self.retry_button.clicked.connect(on_retry)
        layout.addWidget(self.retry_button)


class Transcript(QScrollArea):
    def __init__(self) -> None:
        super().__init__()
        self.setObjectName("transcript")
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        body = QWidget()
        self.column = QVBoxLayout(body)
        self.column.setSpacing(8)
        self.empty_hint = QLabel(
            "<p style='font-size:15px'><b>Ask for work.</b></p>"
            "<p>The AI works in the project folder with the tools checked on the left. "
            "Calls your permission rules do not allow wait for your approval, with the exact "
            "input and, for file changes, the diff.</p>"
            "<p>Ctrl+Enter sends · Ctrl+. stops · Edit → Settings holds the API key and "
            "the rules.</p>")
        self.empty_hint.setObjectName("empty-hint")
        self.empty_hint.setWordWrap(True)
        self.empty_hint.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty_hint.setStyleSheet("color: palette(placeholder-text); padding: 40px;")
        self.column.addWidget(self.empty_hint)
        self.column.addStretch(1)
        self.setWidget(body)
        self._items: list[QWidget] = []
        self._stick_to_bottom = True
        bar = self.verticalScrollBar()
        bar.valueChanged.connect(lambda v: setattr(self, "_stick_to_bottom",
                                                   v >= bar.maximum() - 24))

        def follow_growth(_lo: int, hi: int) -> None:
            if self._stick_to_bottom:
                bar.setValue(hi)

        bar.rangeChanged.connect(follow_growth)

    def add(self, widget: QWidget) -> QWidget:
        self.empty_hint.hide()
        self.column.insertWidget(self.column.count() - 1, widget)
        self._items.append(widget)
        return widget

    def items(self) -> list[QWidget]:
        # Kept here rather than read back with QLayout.itemAt(): PySide6 keeps every
        # QLayoutItem wrapper it hands out alive with the layout, and once Qt deletes that
        # item (its widget removed) a new object at the same address came back as a stale
        # QWidgetItem ("'QWidgetItem' object has no attribute 'setAutoFillBackground'").
        return list(self._items)

    def clear(self) -> None:
        items, self._items = self._items, []
        for widget in items:
            widget.setParent(None)
            widget.deleteLater()
        self.empty_hint.show()
