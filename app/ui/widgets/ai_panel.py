"""The AI panel: the conversation transcript, the prompt box, Send and Stop.

The agent session runs as a task on the qasync loop; its events arrive here and are rendered as
they happen. Markdown re-rendering of streamed text is throttled so the GUI never stalls.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QKeySequence, QShortcut, QTextCursor
from PySide6.QtWidgets import (
    QComboBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from app.core.agent.events import (
    AwaitingApproval,
    RunCancelled,
    RunFailed,
    RunFinished,
    TextDelta,
    ToolFinished,
    ToolRequested,
    ToolStarted,
)
from app.core.agent.session import AgentSession
from app.core.agent.transcript import INTERRUPTED_RESULT
from app.core.outcomes import CallState, CardStatus, Outcome
from app.core.services import Services
from app.core.store.audit import ToolExecution
from app.ui.approval_queue import ApprovalQueue
from app.ui.widgets.markdown_stream import SplitState, freeze_ready_blocks
from app.ui.widgets.tool_card import ToolCard

log = logging.getLogger(__name__)
_RENDER_INTERVAL_MS = 60


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


class AIPanel(QWidget):
    running_changed = Signal(bool)
    status_message = Signal(str)
    # The first keystroke in the prompt: time to load what a run needs (app.core.warmup).
    writing_started = Signal()

    def __init__(self, services: Services, profile_id: int, approvals: ApprovalQueue,
                 project_root: Callable[[], Path | None]) -> None:
        super().__init__()
        self.services = services
        self.profile_id = profile_id
        self.approvals = approvals
        self._project_root = project_root
        self.session: AgentSession | None = None
        self._task: asyncio.Task[None] | None = None
        self._running = False
        self._closing: set[asyncio.Future[None]] = set()
        self._current_text: MessageView | None = None
        self._pending_render = False
        self.cards: dict[str, ToolCard] = {}

        self.conversation_picker = QComboBox()
        self.conversation_picker.setObjectName("conversation-picker")
        self.conversation_picker.setMinimumWidth(240)
        self.new_button = QPushButton("New conversation")
        top = QHBoxLayout()
        top.addWidget(QLabel("Conversation:"))
        top.addWidget(self.conversation_picker, 1)
        top.addWidget(self.new_button)

        self.transcript = Transcript()
        self.prompt = QPlainTextEdit()
        self.prompt.setObjectName("prompt")
        self.prompt.setPlaceholderText("Ask for work… (Ctrl+Enter to send)")
        self.prompt.setMaximumHeight(110)
        self.send_button = QPushButton("Send")
        self.send_button.setObjectName("send")
        self.send_button.setToolTip("Send (Ctrl+Enter)")
        self.stop_button = QPushButton("Stop")
        self.stop_button.setObjectName("stop")
        self.stop_button.setEnabled(False)
        buttons = QVBoxLayout()
        buttons.addWidget(self.send_button)
        buttons.addWidget(self.stop_button)
        buttons.addStretch(1)
        bottom = QHBoxLayout()
        bottom.addWidget(self.prompt, 1)
        bottom.addLayout(buttons)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addLayout(top)
        layout.addWidget(self.transcript, 1)
        layout.addLayout(bottom)

        self._render_timer = QTimer(self)
        self._render_timer.setSingleShot(True)
        self._render_timer.setInterval(_RENDER_INTERVAL_MS)
        self._render_timer.timeout.connect(self._render_current_text)
        self.send_button.clicked.connect(lambda: self.send())
        self.stop_button.clicked.connect(self.stop)
        self.new_button.clicked.connect(self.new_conversation)
        for keys in ("Ctrl+Return", "Ctrl+Enter"):
            shortcut = QShortcut(QKeySequence(keys), self.prompt)
            shortcut.activated.connect(lambda: self.send())
        self.conversation_picker.activated.connect(self._on_conversation_picked)
        self.prompt.textChanged.connect(self._on_prompt_changed)
        self.refresh_conversations()

    def _on_prompt_changed(self) -> None:
        if self.prompt.document().isEmpty():
            return
        self.prompt.textChanged.disconnect(self._on_prompt_changed)
        self.writing_started.emit()

    # -- running -----------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        """True from Send until the run's task has ended and the panel has settled."""
        return self._running

    def send(self, text: str | None = None) -> bool:
        text = (text if text is not None else self.prompt.toPlainText()).strip()
        if not text or self.running:
            return False
        root = self._project_root()
        if root is None:
            self.transcript.add(ErrorCard("Open a project folder first (File → Open Folder…); "
                                          "the AI's tools work inside it.", False, lambda: None))
            return False
        self.prompt.clear()
        self.transcript.add(MessageView(text, "user"))
        session = self._ensure_session(root)
        self._start(session.run(text))
        return True

    def retry(self) -> None:
        if self.session is not None and not self.running:
            self._start(self.session.retry())

    def stop(self) -> None:
        """Stop: the stream and any running tool are cancelled; pending approvals decline."""
        self.approvals.abort("The person stopped the run.")
        if self.session is not None:
            self.session.cancel()

    async def shutdown(self) -> None:
        """Quit: nothing pending may run. Waits for the run to wind down, closes the client."""
        self.stop()
        task = self._task
        if task is not None and not task.done():
            try:
                await asyncio.wait_for(asyncio.shield(task), timeout=5)
            except (TimeoutError, asyncio.CancelledError):
                task.cancel()
        if self.session is not None:
            await self.session.aclose()

    def _discard_session(self) -> None:
        """Forget the current session; its HTTP client is closed in the background."""
        old, self.session = self.session, None
        if old is not None:
            self._closing.add(asyncio.ensure_future(old.aclose()))
            self._closing = {t for t in self._closing if not t.done()}

    def _start(self, coro) -> None:
        self._current_text = None
        self._task = asyncio.ensure_future(coro)
        self._task.add_done_callback(self._on_task_done)
        self._set_running(True)

    def _on_task_done(self, task: asyncio.Task[None]) -> None:
        if not task.cancelled() and task.exception() is not None:
            exc = task.exception()
            log.error("agent run crashed", exc_info=exc)
            self.transcript.add(ErrorCard(f"Internal error: {exc}", True, self.retry))
        self._flush_text()
        self._set_running(False)
        self.refresh_conversations()

    def _set_running(self, running: bool) -> None:
        self._running = running
        self.send_button.setEnabled(not running)
        self.stop_button.setEnabled(running)
        self.running_changed.emit(running)
        self.status_message.emit("Working…" if running else "Ready")

    def _ensure_session(self, root: Path) -> AgentSession:
        if self.session is None:
            self.session = self._new_session(root)
        return self.session

    def _new_session(self, root: Path, conversation_id: int | None = None) -> AgentSession:
        return AgentSession(
            db=self.services.db, registry=self.services.registry,
            permissions=self.services.permissions, profile_id=self.profile_id,
            project_root=root, approver=self.approvals.request, on_event=self.handle_event,
            conversation_id=conversation_id)

    # -- events --------------------------------------------------------------------------------

    def handle_event(self, event: object) -> None:
        if isinstance(event, TextDelta):
            if self._current_text is None:
                self._current_text = MessageView("", "assistant")
                self.transcript.add(self._current_text)
            self._current_text.append(event.text)
            if not self._render_timer.isActive():
                self._render_timer.start()
        elif isinstance(event, ToolRequested):
            self._flush_text()
            rule = event.decision.explain()
            new_card = ToolCard(event.tool_use_id, event.tool_name, event.server_id, event.input,
                                event.decision.kind, rule)
            self.cards[event.tool_use_id] = new_card
            self.transcript.add(new_card)
        elif isinstance(event, AwaitingApproval):
            card = self.cards.get(event.request.tool_use_id)
            if card is not None:
                card.set_status(CardStatus.AWAITING)
            self.status_message.emit(f"Waiting for your approval of {event.request.tool_name}")
        elif isinstance(event, ToolStarted):
            card = self.cards.get(event.tool_use_id)
            if card is not None:
                if card.status == CardStatus.AWAITING:
                    card.mark_approved()
                card.set_status(CardStatus.RUNNING)
            self.status_message.emit(f"Running {event.tool_name}…")
        elif isinstance(event, ToolFinished):
            card = self.cards.get(event.tool_use_id)
            if card is not None:
                card.finish(event.outcome, event.is_error, event.duration_ms, event.content)
            self.status_message.emit("Working…")
        elif isinstance(event, RunFinished):
            self._flush_text()
            if event.stop_reason == "max_iterations":
                self.transcript.add(ErrorCard(
                    f"Stopped after {event.iterations} tool rounds (the profile's iteration "
                    "cap).", False, lambda: None))
        elif isinstance(event, RunFailed):
            self._flush_text()
            self.transcript.add(ErrorCard(event.message, event.retryable, self.retry))
        elif isinstance(event, RunCancelled):
            self._flush_text()
            label = QLabel("■ Stopped.")
            label.setObjectName("cancelled-note")
            label.setStyleSheet("color: palette(placeholder-text);")
            self.transcript.add(label)

    def _render_current_text(self) -> None:
        if self._current_text is not None:
            self._current_text.render_markdown()

    def _flush_text(self) -> None:
        self._render_timer.stop()
        self._render_current_text()
        self._current_text = None

    # -- conversations ---------------------------------------------------------------------

    def new_conversation(self) -> None:
        if self.running:
            return
        self._discard_session()
        self.cards.clear()
        self.transcript.clear()
        self.refresh_conversations()

    def refresh_conversations(self) -> None:
        current = self.session.conversation_id if self.session is not None else None
        self.conversation_picker.blockSignals(True)
        self.conversation_picker.clear()
        self.conversation_picker.addItem("(new conversation)", None)
        for conversation in self.services.conversations.list(limit=50):
            title = conversation.title or f"Conversation {conversation.id}"
            self.conversation_picker.addItem(title, conversation.id)
        index = self.conversation_picker.findData(current)
        self.conversation_picker.setCurrentIndex(max(index, 0))
        self.conversation_picker.blockSignals(False)

    def _on_conversation_picked(self, index: int) -> None:
        conversation_id = self.conversation_picker.itemData(index)
        if self.running:
            self.refresh_conversations()
            return
        if conversation_id is None:
            self.new_conversation()
            return
        self.load_conversation(conversation_id)

    def load_conversation(self, conversation_id: int) -> None:
        self.transcript.clear()
        self.cards.clear()
        results: dict[str, tuple[str, bool]] = {}
        messages = self.services.conversations.messages(conversation_id)
        executions = self.services.audit.for_conversation(conversation_id)
        for message in messages:
            if isinstance(message.content, list):
                for block in message.content:
                    if block.get("type") == "tool_result":
                        content = block.get("content", "")
                        if isinstance(content, list):
                            content = "\n".join(b.get("text", "") for b in content)
                        results[block.get("tool_use_id", "")] = (str(content),
                                                                 bool(block.get("is_error")))
        for message in messages:
            blocks = message.content if isinstance(message.content, list) else \
                [{"type": "text", "text": message.content}]
            for block in blocks:
                kind = block.get("type")
                if kind == "text" and block.get("text"):
                    self.transcript.add(MessageView(block["text"], message.role))
                elif kind == "tool_use":
                    tool = self.services.registry.get(block["name"])
                    server_id = tool.spec.server_id if tool is not None else "builtin"
                    execution = executions.get(block["id"])
                    card = ToolCard(block["id"], block["name"], server_id, block.get("input"),
                                    execution.decision if execution is not None else "history",
                                    "from an earlier session")
                    card.finish(*_restored_outcome(execution, results.get(block["id"])))
                    self.transcript.add(card)
        root = self._project_root()
        self._discard_session()
        if root is not None:
            self.session = self._new_session(root, conversation_id)
        self.refresh_conversations()


def _restored_outcome(execution: ToolExecution | None, result: tuple[str, bool] | None
                      ) -> tuple[str, bool, int, str]:
    """(status, is_error, duration_ms, content) for a reloaded card, from the audit row and
    the tool_result in the transcript. A call the app never finished says so; it must never
    read as done."""
    content = result[0] if result is not None else ""
    if execution is not None and execution.state != CallState.DONE:
        status = CardStatus.INTERRUPTED if execution.state == CallState.PENDING \
            else CardStatus.INTERRUPTED_RUNNING
        return status, True, 0, content or execution.output or ""
    if execution is not None:
        return (execution.outcome, execution.is_error, execution.duration_ms or 0,
                content or execution.output or "")
    if result is None or content == INTERRUPTED_RESULT:
        # Never answered, or answered only by the repair after a restart: it did not finish.
        return CardStatus.INTERRUPTED, True, 0, content or INTERRUPTED_RESULT
    # No audit row (its write failed): the transcript's answer is all there is to show.
    return Outcome.EXECUTED, result[1], 0, content
