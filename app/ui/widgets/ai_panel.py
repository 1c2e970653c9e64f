"""The AI panel: the conversation transcript, the prompt box, Send and Stop.

The agent session runs as a task on the qasync loop; its events arrive here and are rendered as
they happen. Markdown re-rendering of streamed text is throttled so the GUI never stalls.

Above the conversation: one-time notices (``Services.take_notices``), the first-run choice of a
permission mode (``mode_intro``) until the person has chosen one, and next to the conversation
picker the flow chip (what this conversation has read; ``flow_chip``). None of them is modal.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QKeySequence, QShortcut, QShowEvent
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.core.outcomes import CardStatus
from app.core.permission_mode import PermissionMode
from app.ui.approval_queue import ApprovalQueue
from app.ui.controllers.checkpoints import CheckpointController, loop_running
from app.ui.widgets.flow_chip import FlowChip
from app.ui.widgets.transcript_view import ErrorCard, MessageView, RunFooter, Transcript
from app.ui.widgets.undo_actions import UndoActions

if TYPE_CHECKING:
    # The agent's session and events, the tool cards and the conversation replay are imported
    # by their first use (Send, the first event, opening a conversation), or before it, off the
    # GUI thread, by app.main's warm-up after ready (DEFERRED_UI_MODULES,
    # DEFERRED_AGENT_MODULES): the panel is ready without them.
    from app.core.agent.checkpointing import Checkpointer
    from app.core.agent.session import AgentSession
    from app.core.pricing import Usage
    from app.core.services import Services
    from app.ui.widgets.mode_intro import ModeIntro
    from app.ui.widgets.notice_bar import Notices
    from app.ui.widgets.tool_card import ToolCard

log = logging.getLogger(__name__)
_RENDER_INTERVAL_MS = 60


class AIPanel(UndoActions, QWidget):
    running_changed = Signal(bool)
    status_message = Signal(str)
    # The first keystroke in the prompt: time to load what a run needs (app.core.warmup).
    writing_started = Signal()
    # The person chose a permission mode here (the first-run panel): its value.
    permission_mode_changed = Signal(str)

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
        # Undo / redo of the agent's file changes (cards, runs, messages) and pruning.
        self.checkpoints = CheckpointController(services, self)
        self.checkpoints.message.connect(self.status_message)
        self.checkpoints.busy_changed.connect(self._on_checkpoints_busy)
        self._run_cards: list[ToolCard] = []  # the current run's cards, for its footer
        self._footers: dict[str, RunFooter] = {}  # tool_use id → its run's footer
        self._changes_task: asyncio.Future[None] | None = None

        self.conversation_picker = QComboBox()
        self.conversation_picker.setObjectName("conversation-picker")
        self.conversation_picker.setMinimumWidth(160)  # room for the flow chip beside it
        self.new_button = QPushButton("New conversation")
        top = QHBoxLayout()
        top.addWidget(QLabel("Conversation:"))
        top.addWidget(self.conversation_picker, 1)
        top.addWidget(self.new_button)
        self.flow_chip = FlowChip()
        top.addWidget(self.flow_chip)
        self.flow_chip.reset_requested.connect(self.reset_flow)
        self.flow_chip.trust_toggled.connect(self.set_project_trusted)
        # The project folder may have changed since: read its trust when the menu opens.
        self.flow_chip.menu_.aboutToShow.connect(self._show_trust)

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
        # Tokens and cost of the last turn and of the conversation (UsageUpdated).
        self.usage_label = QLabel("")
        self.usage_label.setObjectName("usage")
        self.usage_label.setStyleSheet("QLabel { color: palette(placeholder-text); }")
        self.usage_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        # Notices and the first-run mode choice, above the conversation row.
        self.banners = QVBoxLayout()
        self.banners.setSpacing(6)
        self.notices: Notices | None = None
        self.mode_intro: ModeIntro | None = None
        self._notices_taken = False

        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addLayout(self.banners)
        layout.addLayout(top)
        layout.addWidget(self.transcript, 1)
        layout.addWidget(self.usage_label)
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
        self._show_mode_intro_if_needed()
        self._show_flow()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if not self._notices_taken:
            self.show_notices()

    # -- notices and the permission mode ------------------------------------------------------

    def show_notices(self) -> None:
        """The services' one-time notices, once, as dismissible bars (never a modal box)."""
        self._notices_taken = True
        notices = self.services.take_notices()
        if not notices:
            return
        if self.notices is None:
            from app.ui.widgets.notice_bar import Notices

            self.notices = Notices()
            self.banners.insertWidget(0, self.notices)
        for text in notices:
            self.notices.add(text)

    def _show_mode_intro_if_needed(self) -> None:
        from app.ui.widgets.mode_intro import MODE_CHOSEN_KEY

        if self.mode_intro is not None or self.services.settings.get(MODE_CHOSEN_KEY, False):
            return
        from app.ui.widgets.mode_intro import ModeIntro

        self.mode_intro = ModeIntro(self._profile_mode())
        self.mode_intro.chosen.connect(self.choose_permission_mode)
        self.banners.addWidget(self.mode_intro)

    def _profile_mode(self) -> PermissionMode:
        try:
            return self.services.profiles.get(self.profile_id).permission_mode
        except KeyError:  # the profile is gone (deleted meanwhile)
            return PermissionMode.ASK

    def choose_permission_mode(self, value: str) -> None:
        """Save ``value`` as the current profile's mode (read at the start of each run) and
        remember that the person has chosen (the first-run panel goes away)."""
        mode = PermissionMode.parse(value)
        self.services.profiles.set_permission_mode(self.profile_id, mode)
        self.permission_mode_chosen()
        self.permission_mode_changed.emit(mode.value)
        self.status_message.emit(f"Permission mode: {mode.label}" + (
            " (applies from the next message)" if self.running else ""))

    def permission_mode_chosen(self) -> None:
        """The person chose a mode (here or in the toolbar): no first-run panel any more."""
        from app.ui.widgets.mode_intro import MODE_CHOSEN_KEY

        self.services.settings.set(MODE_CHOSEN_KEY, True)
        if self.mode_intro is not None:
            self.mode_intro.hide()
            self.mode_intro.deleteLater()
            self.mode_intro = None

    def show_permission_mode(self) -> None:
        """The profile changed: the first-run panel preselects its mode."""
        if self.mode_intro is not None:
            self.mode_intro.select(self._profile_mode())

    # -- usage -------------------------------------------------------------------------------

    def show_usage(self, model: str, turn: Usage | None, conversation: dict[str, Usage],
                   cache_ttl: str = "5m") -> None:
        """"Last turn: … · Conversation: …" with the cost from the price table (Settings →
        Usage & prices); empty for a conversation without turns."""
        from app.core.pricing import PRICES_KEY, Usage, cost, prices_from_setting
        from app.ui.dialogs.usage_settings import format_usage

        if not conversation:
            self.usage_label.setText("")
            return
        table = prices_from_setting(self.services.settings.get(PRICES_KEY, {}))
        total, dollars = Usage(), 0.0
        priced = True
        for name, usage in conversation.items():
            total = total + usage
            spent = cost(name, usage, table, cache_ttl=cache_ttl)
            priced = priced and spent is not None
            dollars += spent or 0.0
        parts = []
        if turn is not None:
            parts.append("Last turn: " + format_usage(turn, cost(model, turn, table,
                                                                 cache_ttl=cache_ttl)))
        parts.append("Conversation: " + format_usage(total, dollars if priced else None))
        self.usage_label.setText("   ·   ".join(parts))

    def _show_conversation_usage(self) -> None:
        session = self.session
        self.show_usage("", None, session.conversation_usage() if session is not None else {})

    # -- flow labels -------------------------------------------------------------------------

    def _show_flow(self) -> None:
        """The chip shows the current conversation's labels (clean before its first run), and
        the usage line its tokens."""
        self._show_conversation_usage()
        if self.session is None:
            self.flow_chip.set_flow("clean", (), resettable=False)
        else:
            flow = self.session.flow  # read from the conversation on first use
            self.flow_chip.set_flow(flow.summary(), flow.sources)
        self._show_trust()

    def _show_trust(self) -> None:
        root = self._project_root()
        self.flow_chip.set_trust(None if root is None else (root.name or str(root)),
                                 root is not None and self.services.is_trusted(root))

    def reset_flow(self) -> None:
        """The chip's "Reset labels for this conversation"."""
        if self.session is None:
            return
        self.session.reset_flow()  # announces FlowChanged (and saves the empty labels)
        self._show_flow()
        self.status_message.emit("Flow labels reset for this conversation.")

    def set_project_trusted(self, trusted: bool) -> None:
        """The chip's "Trust this project folder": for the sessions created from now on (a
        new or reopened conversation), not the current one."""
        root = self._project_root()
        if root is None:
            return
        self.services.set_trusted(root, trusted)
        self._show_trust()
        name = root.name or str(root)
        self.status_message.emit(
            (f"{name} is now trusted" if trusted else f"{name} is no longer trusted") +
            ": applies to conversations started or reopened from now on.")

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
        self._end_run()  # a retried run's leftovers close before the new prompt
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
        self._end_run()
        self._set_running(False)
        self.refresh_conversations()
        if self.session is not None:
            self.checkpoints.prune_in_background(self.session.checkpointer)

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
        from app.core.agent.session import AgentSession

        return AgentSession(
            db=self.services.db, registry=self.services.registry,
            permissions=self.services.permissions, profile_id=self.profile_id,
            project_root=root, approver=self.approvals.request, on_event=self.handle_event,
            conversation_id=conversation_id, checkpointer=self.services.checkpointer_for(root),
            project_trusted=self.services.is_trusted(root))

    # -- events --------------------------------------------------------------------------------

    def handle_event(self, event: object) -> None:
        from app.core.agent.events import (
            AwaitingApproval,
            FilesChanged,
            FlowChanged,
            ReviewArrived,
            ReviewFinished,
            RunCancelled,
            RunFailed,
            RunFinished,
            TextDelta,
            ThinkingBlock,
            ToolFinished,
            ToolRequested,
            ToolStarted,
            UsageUpdated,
        )

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
            from app.ui.widgets.tool_card import ToolCard

            new_card = ToolCard(event.tool_use_id, event.tool_name, event.server_id, event.input,
                                event.decision.kind, rule)
            self.cards[event.tool_use_id] = new_card
            self._connect_card(new_card)
            self._run_cards.append(new_card)
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
        elif isinstance(event, FilesChanged):
            card = self.cards.get(event.tool_use_id)
            if card is not None:
                checkpointer = self.session.checkpointer if self.session is not None else None
                card.set_changes(event.changes, checkpointer)
                footer = self._footers.get(event.tool_use_id)
                if footer is not None:  # it came after the run ended (a stopped call)
                    footer.refresh()
                self._refresh_restore_actions()
        elif isinstance(event, FlowChanged):
            self.flow_chip.set_flow(event.summary, event.sources)
        elif isinstance(event, ReviewArrived | ReviewFinished):
            card = self.cards.get(event.tool_use_id)
            if card is not None:
                card.handle_review_event(event)
        elif isinstance(event, ThinkingBlock):
            from app.ui.widgets.thinking_view import ThinkingView

            # Above this turn's answer (still the current text view: the turn just ended).
            self.transcript.insert_before(ThinkingView(event.text, event.redacted),
                                          self._current_text)
        elif isinstance(event, UsageUpdated):
            self.show_usage(event.model, event.turn, event.conversation, event.cache_ttl)
        elif isinstance(event, RunFinished):
            self._flush_text()
            if event.stop_reason == "max_iterations":
                self.transcript.add(self._round_cap_card(event.iterations))
        elif isinstance(event, RunFailed):
            self._flush_text()
            self.transcript.add(ErrorCard(event.message, event.retryable, self.retry))
        elif isinstance(event, RunCancelled):
            self._flush_text()
            label = QLabel("■ Stopped.")
            label.setObjectName("cancelled-note")
            label.setStyleSheet("color: palette(placeholder-text);")
            self.transcript.add(label)

    def _round_cap_card(self, iterations: int) -> QWidget:
        """The run reached the profile's round cap: not an error, the work can go on. Continue
        sends a continue message as the next prompt (once)."""
        from PySide6.QtWidgets import QFrame

        card = QFrame()
        card.setObjectName("round-cap-card")
        card.setStyleSheet("QFrame#round-cap-card { border: 1px solid palette(mid); "
                           "border-radius: 8px; }")
        row = QHBoxLayout(card)
        label = QLabel(f"Paused after {iterations} tool rounds (the profile's limit per "
                       "request). Continue to let the AI carry on where it stopped.")
        label.setWordWrap(True)
        row.addWidget(label, 1)
        button = QPushButton("Continue")
        button.setObjectName("round-cap-continue")

        def carry_on() -> None:
            if self.send("Continue where you stopped."):
                button.setEnabled(False)

        button.clicked.connect(carry_on)
        row.addWidget(button)
        return card

    def _render_current_text(self) -> None:
        if self._current_text is not None:
            self._current_text.render_markdown()

    def _flush_text(self) -> None:
        self._render_timer.stop()
        self._render_current_text()
        self._current_text = None

    async def _load_changes(self, checkpointer: Checkpointer, cards: dict[str, ToolCard],
                            executions: dict) -> None:
        from app.ui.widgets.conversation_replay import load_call_changes

        try:
            found = await load_call_changes(checkpointer, executions)
        except Exception:
            log.exception("reading the conversation's checkpoints failed")
            return
        for tool_use_id, changes in found.items():
            card = cards.get(tool_use_id)
            if card is None or card.parent() is None:
                continue  # the transcript was cleared meanwhile
            if isinstance(changes, str):
                card.set_changes_unavailable(changes)
            else:
                card.set_changes(changes, checkpointer)
        self._after_restore()

    # -- conversations ---------------------------------------------------------------------

    def new_conversation(self) -> None:
        if self.running:
            return
        self._discard_session()
        self._clear()
        self.refresh_conversations()
        self._show_flow()

    def _clear(self) -> None:
        if self._changes_task is not None:
            self._changes_task.cancel()
            self._changes_task = None
        self.cards.clear()
        self._run_cards.clear()
        self._footers.clear()
        self.transcript.clear()

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
        from app.ui.widgets.conversation_replay import replay_conversation

        self._clear()
        cards, executions = replay_conversation(self.services, conversation_id, self.transcript)
        for card in cards.values():
            self._connect_card(card)
        for footer in self._all_footers():
            self._connect_footer(footer)
            for card in footer.cards:
                self._footers[card.tool_use_id] = footer
        root = self._project_root()
        self._discard_session()
        if root is not None:
            self.session = self._new_session(root, conversation_id)
            checkpointer = self.session.checkpointer
            if checkpointer is not None and loop_running() and \
                    any(e.changes for e in executions.values()):
                self._changes_task = asyncio.ensure_future(
                    self._load_changes(checkpointer, cards, executions))
        self.refresh_conversations()
        self._show_flow()
