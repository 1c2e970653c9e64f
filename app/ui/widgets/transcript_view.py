"""The AI panel's transcript: a scrolling column of messages (Markdown, re-rendered as it
streams), tool cards and error cards, which follows new content while scrolled to the bottom."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QSizeF, Qt, Signal
from PySide6.QtGui import QPaintEvent, QResizeEvent
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QTextBrowser,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.ui.tab_focus import chain_end, join_chain_after
from app.ui.tones import Tone, follow_palette, tone
from app.ui.widgets.link_guard import LinkGuard

if TYPE_CHECKING:
    from app.core.agent.checkpointing import UndoRecord
    from app.ui.widgets.tool_card import ToolCard

_ACTION_ROW_PX = 22  # room under a user message for "Restore to before this message"
USER_MESSAGE_STYLE = ("QTextBrowser { background: palette(alternate-base); border-radius: 8px;"
                      " padding: 4px; }")


class MessageView(QTextBrowser):
    """One message as Markdown in its own document, sized to its content.

    While streaming, finished parts are appended once, each as its own blocks (see
    markdown_stream.MarkdownStream), and only the tail range of the document is replaced on each
    render; QTextDocument lays out just the blocks that changed, so a tick costs the same at
    token 10 and at token 10,000.
    """

    def __init__(self, text: str = "", role: str = "assistant") -> None:
        super().__init__()
        self.role = role
        self.setObjectName(f"message-{role}")
        # Clicked to select and copy, but not a Tab stop: hundreds of messages would stand
        # between the conversation picker and the prompt.
        self.setFocusPolicy(Qt.FocusPolicy.ClickFocus)
        self.link_guard = LinkGuard(self)  # opens http(s)/mailto only; the URL on hover
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.viewport().setAutoFillBackground(role == "user")
        if role == "user":
            self.setStyleSheet(USER_MESSAGE_STYLE)
        else:
            self.setStyleSheet("QTextBrowser { background: transparent; }")
        self.document().documentLayout().documentSizeChanged.connect(self._fit_height)
        # Imported by the first message, not with the panel: an empty panel is ready without
        # the Markdown renderer and the message actions (and the Qt text-format enums they
        # create), ~8 ms of start-up.
        from app.ui.widgets.markdown_stream import MarkdownStream
        from app.ui.widgets.message_actions import attach_message_actions

        self._stream = MarkdownStream(self.document())
        self.markdown = ""
        self.set_markdown(text)
        # Copy, copy code, edit / regenerate: on hover and in the context menu.
        self.message_actions = attach_message_actions(self, self)

    def _fit_height(self, size: QSizeF) -> None:
        margins = self.contentsMargins()
        extra = self.viewportMargins().bottom()
        self.setFixedHeight(int(size.height()) + margins.top() + margins.bottom() + 2 + extra)

    # -- "Restore to before this message" (user messages) ------------------------------------

    restore_button: QToolButton | None = None
    _restore_shown = False
    _on_restore: Callable[[], object] | None = None

    def _restore_clicked(self) -> None:
        if self._on_restore is not None:
            self._on_restore()

    def set_restore_action(self, on_restore: Callable[[], object] | None) -> None:
        """Show (or, with None, hide) "Restore to before this message" under the message."""
        if on_restore is None:
            if self.restore_button is not None and self._restore_shown:
                self._restore_shown = False
                self.restore_button.hide()
                self.setViewportMargins(0, 0, 0, 0)
                self._fit_height(self.document().documentLayout().documentSize())
            return
        if self.restore_button is None:
            button = QToolButton(self)
            button.setObjectName("restore-to-message")
            button.setText("↶ Restore to before this message")
            button.setToolTip("Undo every file change the agent made after this message "
                              "(with a preview)")
            button.setAutoRaise(True)
            button.setCursor(Qt.CursorShape.PointingHandCursor)
            button.setStyleSheet("QToolButton { color: palette(link); border: none; "
                                 "font-size: 11px; }")
            self.restore_button = button
            button.clicked.connect(self._restore_clicked)
        button = self.restore_button
        self._on_restore = on_restore
        if not self._restore_shown:
            self._restore_shown = True
            self.setViewportMargins(0, 0, 0, _ACTION_ROW_PX)
            button.show()
            self._place_restore_button()
            self._fit_height(self.document().documentLayout().documentSize())

    def _place_restore_button(self) -> None:
        button = self.restore_button
        if button is None:
            return
        button.adjustSize()
        button.move(self.width() - button.width() - 6, self.height() - button.height() - 2)
        button.raise_()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._place_restore_button()

    def paintEvent(self, event: QPaintEvent) -> None:
        super().paintEvent(event)
        if ">" in self.markdown:  # a quote's bars (imported by the first message with one)
            from app.ui.widgets.quote_bars import paint_quote_bars

            paint_quote_bars(self, event.rect())

    def set_markdown(self, text: str) -> None:
        """Replace the whole message (history, tests); renders immediately."""
        self._stream.reset()
        self.markdown = text
        self.render_markdown()

    def append(self, delta: str) -> None:
        self.markdown += delta

    incomplete = False
    INCOMPLETE_MARK = "*⚠ incomplete: the answer was cut off before it finished.*"

    def mark_incomplete(self) -> None:
        """The stream broke off (a dropped connection, an API error): say so under the text,
        so a half answer never reads as a whole one."""
        if self.incomplete:
            return
        self.incomplete = True
        self.setProperty("incomplete", True)
        self.markdown = self.markdown.rstrip() + "\n\n" + self.INCOMPLETE_MARK
        self.render_markdown()

    # Not `render`: that would shadow QWidget.render(target, ...), which Qt's Python API calls.
    def render_markdown(self) -> None:
        self._stream.render(self.markdown)


class ErrorCard(QFrame):
    """A failed turn. Its Retry works once, and only while it is the latest failure
    (``retire``): an older card retrying would resend a conversation that has moved on."""

    def __init__(self, message: str, retryable: bool, on_retry: Callable[[], None]) -> None:
        super().__init__()
        self.message = message
        self._on_retry = on_retry
        self.setObjectName("error-card")
        follow_palette(self, lambda: "QFrame#error-card { border: 1px solid "
                       f"{tone(Tone.DANGER).text.name()}; border-radius: 8px; }}")
        layout = QHBoxLayout(self)
        label = QLabel(f"⚠ {message}")
        label.setWordWrap(True)
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(label, 1)
        self.retry_button = QPushButton("Retry")
        self.retry_button.setVisible(retryable)
        self.retry_button.clicked.connect(self._retry)
        layout.addWidget(self.retry_button)

    def _retry(self) -> None:
        self.retry_button.setEnabled(False)  # one retry per failure; a double click is one
        self._on_retry()

    def retire(self) -> None:
        """A newer run started or failed: this failure can no longer be retried."""
        self.retry_button.setEnabled(False)
        self.retry_button.setToolTip("Only the latest failed turn can be retried.")


class RunFooter(QFrame):
    """The end of a run that changed files: what it changed, "Undo this run", then "Redo"."""

    undo_requested = Signal()
    redo_requested = Signal()

    def __init__(self) -> None:
        super().__init__()
        self.setObjectName("run-footer")
        self.cards: list[ToolCard] = []
        self.undo_record: UndoRecord | None = None
        self.label = QLabel("")
        self.label.setObjectName("run-summary")
        self.label.setStyleSheet("color: palette(placeholder-text);")
        self.undo_button = QPushButton("Undo this run")
        self.undo_button.setObjectName("run-undo")
        self.undo_button.setToolTip("Restore every file this run's tool calls changed "
                                    "(with a preview)")
        self.redo_button = QPushButton("Redo")
        self.redo_button.setObjectName("run-redo")
        self.redo_button.hide()
        self.undo_button.clicked.connect(self.undo_requested)
        self.redo_button.clicked.connect(self.redo_requested)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(4, 0, 4, 0)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.undo_button)
        layout.addWidget(self.redo_button)
        self.refresh()

    def add_card(self, card: ToolCard) -> None:
        if card not in self.cards:
            self.cards.append(card)
        self.refresh()

    def changed_cards(self) -> list[ToolCard]:
        return [c for c in self.cards if c.has_changes]

    def refresh(self) -> None:
        """Say what the run changed; shown only when it changed something."""
        cards = self.changed_cards()
        paths = {p for c in cards if c.changes is not None for p in c.changes.paths}
        all_undone = bool(cards) and all(c.undone for c in cards)
        if self.undo_record is not None:
            self.label.setText("↶ This run's changes are undone.")
        elif all_undone:  # call by call, on the cards: their Redo brings each back
            self.label.setText("↶ This run's changes are undone (see the calls above).")
        else:
            calls = len(cards)
            self.label.setText(f"This run changed {len(paths)} file"
                               f"{'s' if len(paths) != 1 else ''} in {calls} call"
                               f"{'s' if calls != 1 else ''}.")
        self.undo_button.setVisible(self.undo_record is None and not all_undone)
        self.redo_button.setVisible(self.undo_record is not None)
        self.setVisible(bool(cards))

    def set_undone(self, record: UndoRecord | None) -> None:
        self.undo_record = record
        self.refresh()

    def set_actions_enabled(self, enabled: bool) -> None:
        self.undo_button.setEnabled(enabled and any(not c.undone for c in self.changed_cards()))
        self.redo_button.setEnabled(enabled)


class Transcript(QScrollArea):
    # A message's Edit or Regenerate ("edit" | "regenerate", the MessageView); the panel's
    # conversation_actions.ConversationActions acts on it.
    message_action = Signal(str, object)
    cleared = Signal()  # emptied for another conversation (a pager stops loading into it)
    earlier_requested = Signal()  # "Show earlier messages", or scrolled to the very top

    def __init__(self) -> None:
        super().__init__()
        self.setObjectName("transcript")
        self.setAccessibleName("Conversation")
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
        # A long conversation opens with its last messages only (conversation_pager); the
        # earlier ones come a page at a time from here, or by scrolling to the very top.
        self.earlier_button = QPushButton("Show earlier messages")
        self.earlier_button.setObjectName("show-earlier")
        self.earlier_button.setFlat(True)
        self.earlier_button.setCursor(Qt.CursorShape.PointingHandCursor)
        self.earlier_button.hide()
        self.earlier_button.clicked.connect(self.earlier_requested)
        # How many of the person's prompts are stored before the first one shown: edit and
        # resend counts prompts from the start of the stored conversation.
        self.hidden_prompts = 0
        self.column.addWidget(self.earlier_button)
        self.column.addWidget(self.empty_hint)
        self.column.addStretch(1)
        self.setWidget(body)
        self._items: list[QWidget] = []
        self._stick_to_bottom = True
        # (item, its distance from the top of the view): kept there while earlier items are
        # inserted above it and laid out, until the person scrolls.
        self._anchor: tuple[QWidget, int] | None = None
        bar = self.verticalScrollBar()

        def moved(value: int) -> None:
            self._stick_to_bottom = value >= bar.maximum() - 24
            if value == 0 and bar.maximum() > 0 and self.earlier_button.isVisible():
                self.earlier_requested.emit()

        bar.valueChanged.connect(moved)
        bar.actionTriggered.connect(lambda _action: setattr(self, "_anchor", None))

        def follow_growth(_lo: int, hi: int) -> None:
            if self._anchor is not None and not self._stick_to_bottom:
                widget, offset = self._anchor
                if widget in self._items:
                    bar.setValue(widget.y() - offset)
            elif self._stick_to_bottom:
                bar.setValue(hi)

        bar.rangeChanged.connect(follow_growth)

    def show_earlier(self, messages: int) -> None:
        """Offer the ``messages`` stored before the first one shown (none: no offer)."""
        self.earlier_button.setText(f"↑ Show earlier messages ({messages} more)")
        self.earlier_button.setVisible(messages > 0)

    def hold_position(self) -> None:
        """Items are about to be inserted at the top: unless following the end, keep what
        is in view where it is."""
        if self._stick_to_bottom or not self._items:
            self._anchor = None
            return
        if self._anchor is not None and self._anchor[0] in self._items:
            return  # still laying out what came before: that item is the one to keep
        first = self._items[0]
        self._anchor = (first, first.y() - self.verticalScrollBar().value())

    def follow_end(self) -> None:
        """The person sent a message: show the end and follow what comes, wherever they had
        scrolled to."""
        self._anchor = None
        self._stick_to_bottom = True
        bar = self.verticalScrollBar()
        bar.setValue(bar.maximum())

    def add(self, widget: QWidget) -> QWidget:
        self._anchor = None  # new content at the end: the view follows it, or stays
        self.empty_hint.hide()
        self.column.insertWidget(self.column.count() - 1, widget)
        join_chain_after(chain_end(self), widget)  # Tab: after what is above, before the prompt
        self._items.append(widget)
        return widget

    def insert_before(self, widget: QWidget, anchor: QWidget | None) -> QWidget:
        """Put ``widget`` just above ``anchor`` (at the end when it is not shown here)."""
        if anchor is None or anchor not in self._items:
            return self.add(widget)
        self.empty_hint.hide()
        self.column.insertWidget(self.column.indexOf(anchor), widget)
        join_chain_after(anchor.previousInFocusChain(), widget)
        self._items.insert(self._items.index(anchor), widget)
        return widget

    def remove(self, widget: QWidget) -> None:
        """Take ``widget`` out of the transcript (and delete it); nothing if it is not here."""
        if widget not in self._items:
            return
        self._items.remove(widget)
        widget.setParent(None)
        widget.deleteLater()
        if not self._items:
            self.empty_hint.show()

    def items(self) -> list[QWidget]:
        # Kept here rather than read back with QLayout.itemAt(): PySide6 keeps every
        # QLayoutItem wrapper it hands out alive with the layout, and once Qt deletes that
        # item (its widget removed) a new object at the same address came back as a stale
        # QWidgetItem ("'QWidgetItem' object has no attribute 'setAutoFillBackground'").
        return list(self._items)

    def clear(self) -> None:
        self.cleared.emit()
        self.hidden_prompts = 0
        self._anchor = None
        self.earlier_button.hide()
        items, self._items = self._items, []
        for widget in items:
            widget.setParent(None)
            widget.deleteLater()
        self.empty_hint.show()
