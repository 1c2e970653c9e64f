"""Per-message actions in the transcript: copy the message, copy a code block, edit and resend
a person's message, regenerate the last answer.

Copies come from the message's Markdown source (``MessageView.markdown``), never from the
rendered document: a copy keeps the Markdown, a code block's copy is exactly the text inside
its fence (tabs, trailing spaces and all), and the thinking, shown in its own view, is never in
it. The same for a streamed message and one reloaded from the store, as both keep the source.

How they are reached, costing nothing until used (a conversation can hold hundreds of
messages): a small toolbar appears at the message's top-right corner while the pointer is over
it; a "Copy" button at a code block's corner while the pointer is over that block; and the
message's context menu (right click, or the Menu key / Shift+F10 once the message has focus)
holds every action, one entry per code block. Messages are not Tab stops (hundreds of them
would stand between the picker and the prompt); the panel's shortcuts (conversation_actions)
reach edit, regenerate and copy from the keyboard.

Edit and Regenerate are requests: they go to the transcript's ``message_action`` signal, and
the panel's controller (conversation_actions.ConversationActions) decides.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from PySide6.QtCore import QEvent, QObject, QPoint, Qt
from PySide6.QtGui import QContextMenuEvent, QGuiApplication, QMouseEvent, QTextBlock, QTextFormat
from PySide6.QtWidgets import QFrame, QHBoxLayout, QMenu, QTextBrowser, QToolButton, QWidget

if TYPE_CHECKING:
    from PySide6.QtCore import SignalInstance
    from PySide6.QtGui import QTextDocument

EDIT = "edit"
REGENERATE = "regenerate"

_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
_BUTTON_STYLE = ("QToolButton { border: 1px solid palette(mid); border-radius: 4px;"
                 " background: palette(base); padding: 1px 6px; font-size: 11px; }")


@runtime_checkable
class ShownMessage(Protocol):
    """A message as its actions read it: transcript_view.MessageView, which imports this module
    (so this one names it by what it has, not by its class)."""

    role: str  # "user" | "assistant"
    markdown: str  # its Markdown source

    def document(self) -> QTextDocument: ...


class MessageSink(Protocol):
    """The transcript showing the messages: Edit and Regenerate are requests to it."""

    message_action: SignalInstance

    def items(self) -> list[QWidget]: ...


@dataclass(frozen=True)
class CodeBlock:
    language: str
    body: str


def code_blocks(markdown: str) -> list[CodeBlock]:
    """The fenced code blocks of ``markdown``, in order: the text between the fences, each
    line without the opening fence's indentation (as CommonMark reads it). An unclosed fence
    runs to the end (a message cut off mid-code)."""
    blocks: list[CodeBlock] = []
    lines = markdown.split("\n")
    i = 0
    while i < len(lines):
        opening = _FENCE.match(lines[i])
        if opening is None or ("`" in opening["info"] and opening["fence"][0] == "`"):
            i += 1
            continue
        indent, fence = len(opening["indent"].expandtabs()), opening["fence"]
        body: list[str] = []
        i += 1
        while i < len(lines):
            closing = _FENCE.match(lines[i])
            if closing is not None and closing["fence"][0] == fence[0] and \
                    len(closing["fence"]) >= len(fence) and not closing["info"].strip():
                break
            line = lines[i]
            strip = len(line) - len(line.lstrip(" "))
            body.append(line[min(strip, indent):])
            i += 1
        i += 1
        language = opening["info"].strip().split(" ")[0] if opening["info"].strip() else ""
        blocks.append(CodeBlock(language, "\n".join(body)))
    return blocks


def _is_code(block: QTextBlock) -> bool:
    return block.blockFormat().hasProperty(QTextFormat.Property.BlockCodeFence)


def code_runs(document: QTextDocument) -> list[tuple[QTextBlock, QTextBlock]]:
    """(first, last) block of each run of fenced-code blocks in the rendered document. A
    fence the stream rendered in two parts is one run."""
    runs: list[tuple[QTextBlock, QTextBlock]] = []
    block = document.begin()
    while block.isValid():
        if _is_code(block):
            first = last = block
            while block.next().isValid() and _is_code(block.next()):
                block = block.next()
                last = block
            runs.append((first, last))
        block = block.next()
    return runs


def message_source(view: ShownMessage) -> str:
    """The message's Markdown as it came (without the "incomplete" note the view adds)."""
    text = view.markdown
    mark = getattr(view, "INCOMPLETE_MARK", None)
    if getattr(view, "incomplete", False) and mark:
        text = text.rstrip().removesuffix(mark).rstrip()
    return text


def code_text(view: ShownMessage, index: int) -> str:
    """The ``index``-th code block's text: from the source; from the rendered document only
    when the two disagree on how many blocks there are (two fences with nothing between)."""
    blocks = code_blocks(message_source(view))
    runs = code_runs(view.document())
    if len(blocks) == len(runs) or not runs:
        return blocks[index].body
    first, last = runs[index]
    lines = []
    block = first
    while True:
        lines.append(block.text())
        if block == last:
            break
        block = block.next()
    return "\n".join(lines)


def copy_message(view: ShownMessage) -> None:
    QGuiApplication.clipboard().setText(message_source(view))


def copy_code(view: ShownMessage, index: int) -> None:
    QGuiApplication.clipboard().setText(code_text(view, index))


def transcript_of(view: QWidget) -> MessageSink | None:
    """The transcript showing ``view`` (found by its ``message_action`` signal, not its class:
    transcript_view imports this module)."""
    parent = view.parentWidget()
    while parent is not None and not hasattr(parent, "message_action"):
        parent = parent.parentWidget()
    return parent  # type: ignore[return-value]


def is_last_answer(view: QWidget, message: ShownMessage) -> bool:
    """An assistant message with no prompt after it: part of the answer Regenerate redoes."""
    transcript = transcript_of(view)
    if message.role != "assistant" or transcript is None:
        return False
    items = transcript.items()
    if view not in items:
        return False
    return not any(isinstance(w, ShownMessage) and w.role == "user"
                   for w in items[items.index(view) + 1:])


def request(view: QWidget, kind: str) -> None:
    transcript = transcript_of(view)
    if transcript is not None:
        transcript.message_action.emit(kind, view)


class MessageActions(QObject):
    """The hover toolbar, the code-block button and the context menu of one message: ``view``
    is the widget, ``message`` what it shows (the same object, a MessageView)."""

    def __init__(self, view: QTextBrowser, message: ShownMessage) -> None:
        super().__init__(view)
        self.view = view
        self.message = message
        self.toolbar: QFrame | None = None
        self.edit_button: QToolButton | None = None
        self.regenerate_button: QToolButton | None = None
        self.code_button: QToolButton | None = None
        self.code_index = -1
        self._runs: tuple[int, list[tuple[QTextBlock, QTextBlock]]] = (-1, [])
        view.installEventFilter(self)
        view.viewport().installEventFilter(self)
        view.viewport().setMouseTracking(True)

    # -- the hover toolbar ------------------------------------------------------------------

    def _button(self, parent: QWidget, text: str, name: str, tip: str) -> QToolButton:
        button = QToolButton(parent)
        button.setText(text)
        button.setObjectName(name)
        button.setToolTip(tip)
        button.setAccessibleName(tip)
        button.setCursor(Qt.CursorShape.PointingHandCursor)
        button.setStyleSheet(_BUTTON_STYLE)
        return button

    def ensure_toolbar(self) -> QFrame:
        if self.toolbar is not None:
            return self.toolbar
        bar = QFrame(self.view)
        bar.setObjectName("message-actions")
        row = QHBoxLayout(bar)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(4)
        copy = self._button(bar, "Copy", "copy-message", "Copy this message (Markdown)")
        copy.clicked.connect(lambda: copy_message(self.message))
        row.addWidget(copy)
        if self.message.role == "user":
            self.edit_button = self._button(bar, "Edit", "edit-message",
                                            "Edit this message and send it again: the "
                                            "conversation continues from it")
            self.edit_button.clicked.connect(lambda: request(self.view, EDIT))
            row.addWidget(self.edit_button)
        else:
            self.regenerate_button = self._button(bar, "Regenerate", "regenerate-answer",
                                                  "Remove this answer (with its tool calls) "
                                                  "and ask again")
            self.regenerate_button.clicked.connect(lambda: request(self.view, REGENERATE))
            row.addWidget(self.regenerate_button)
        self.toolbar = bar
        return bar

    def show_toolbar(self) -> None:
        bar = self.ensure_toolbar()
        if self.regenerate_button is not None:
            self.regenerate_button.setVisible(is_last_answer(self.view, self.message))
        bar.adjustSize()
        bar.move(self.view.width() - bar.width() - 4, 2)
        bar.show()
        bar.raise_()

    def hide_overlays(self) -> None:
        if self.toolbar is not None:
            self.toolbar.hide()
        if self.code_button is not None:
            self.code_button.hide()

    # -- code blocks ----------------------------------------------------------------------------

    def runs(self) -> list[tuple[QTextBlock, QTextBlock]]:
        """``code_runs`` of the document, computed again only after it changed (the pointer
        moving over a long message must not walk it on every event)."""
        document = self.view.document()
        if self._runs[0] != document.revision():
            self._runs = (document.revision(), code_runs(document))
        return self._runs[1]

    def _code_index_at(self, pos: QPoint) -> int:
        block = self.view.cursorForPosition(pos).block()
        if not _is_code(block):
            return -1
        for index, (first, last) in enumerate(self.runs()):
            if first.blockNumber() <= block.blockNumber() <= last.blockNumber():
                return index
        return -1

    def show_code_button(self, index: int) -> None:
        """The "Copy" button at the top-right of the ``index``-th code block."""
        runs = self.runs()
        if not 0 <= index < len(runs):
            return
        if self.code_button is None:
            self.code_button = self._button(self.view.viewport(), "Copy code", "copy-code",
                                            "Copy this code block")
            self.code_button.clicked.connect(lambda: copy_code(self.message, self.code_index))
        self.code_index = index
        layout = self.view.document().documentLayout()
        top = layout.blockBoundingRect(runs[index][0]).top()
        button = self.code_button
        button.adjustSize()
        button.move(self.view.viewport().width() - button.width() - 4, int(top) + 2)
        button.show()
        button.raise_()

    # -- the context menu ----------------------------------------------------------------------

    def context_menu(self) -> QMenu:
        """The standard menu (copy selection, select all) plus this message's actions."""
        menu = self.view.createStandardContextMenu()
        menu.addSeparator()
        menu.addAction("Copy message (Markdown)", lambda: copy_message(self.message))
        for index, block in enumerate(code_blocks(message_source(self.message))):
            label = f"Copy code block {index + 1}" + (f" ({block.language})"
                                                      if block.language else "")
            menu.addAction(label, functools.partial(copy_code, self.message, index))
        if self.message.role == "user":
            menu.addAction("Edit and resend…", lambda: request(self.view, EDIT))
        elif is_last_answer(self.view, self.message):
            menu.addAction("Regenerate answer", lambda: request(self.view, REGENERATE))
        return menu

    # -- events -------------------------------------------------------------------------------

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        kind = event.type()
        if kind == QEvent.Type.Enter and watched is self.view:
            self.show_toolbar()
        elif kind == QEvent.Type.Leave and watched is self.view:
            self.hide_overlays()
        elif kind == QEvent.Type.MouseMove and isinstance(event, QMouseEvent):
            index = self._code_index_at(event.position().toPoint())
            if index >= 0:
                self.show_code_button(index)
            elif self.code_button is not None:
                self.code_button.hide()
        elif kind == QEvent.Type.ContextMenu and isinstance(event, QContextMenuEvent):
            menu = self.context_menu()
            menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
            menu.popup(event.globalPos())
            return True
        return False


def attach_message_actions(view: QTextBrowser, message: ShownMessage) -> MessageActions:
    return MessageActions(view, message)
