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
    QHBoxLayout,
    QLabel,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.core.outcomes import CardStatus
from app.core.permission_mode import PermissionMode
from app.ui.approval_queue import ApprovalQueue, remember_in_conversation
from app.ui.controllers.checkpoints import CheckpointController, loop_running
from app.ui.widgets.attachments import AttachmentTray, PromptEdit, add_attachment_note
from app.ui.widgets.conversation_actions import install_conversation_actions
from app.ui.widgets.conversation_list import ConversationList, conversation_title
from app.ui.widgets.flow_chip import FlowChip
from app.ui.widgets.mcp_prompts import install_mcp_prompts
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
        # "Remember in this conversation only": kept for the conversation open here.
        # services.permissions read when it is used: the panel is ready before it is built.
        approvals.remember_for_conversation = lambda rules: remember_in_conversation(
            services.permissions,
            lambda: self.session.conversation_id if self.session is not None else None,
            self.status_message.emit)(rules)
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
        # Shown by Send without a project; removed as soon as one is open.
        self._project_hint: ErrorCard | None = None

        # The open conversation's title; the button shows the project's conversations below.
        self.conversations_button = QToolButton()
        self.conversations_button.setObjectName("conversations-button")
        self.conversations_button.setText("Conversations")
        self.conversations_button.setCheckable(True)
        self.conversations_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.conversations_button.setArrowType(Qt.ArrowType.RightArrow)
        self.conversations_button.setToolTip("This project's conversations: search, open, "
                                             "rename, delete, export")
        self.conversation_title = QLabel("New conversation")
        self.conversation_title.setObjectName("conversation-title")
        self.conversation_title.setMinimumWidth(80)
        self.conversation_title.setTextFormat(Qt.TextFormat.PlainText)
        self.conversation_list = ConversationList(services.conversations)
        self.conversation_list.hide()
        self.new_button = QPushButton("New conversation")
        top = QHBoxLayout()
        top.addWidget(self.conversations_button)
        top.addWidget(self.conversation_title, 1)
        top.addWidget(self.new_button)
        self.flow_chip = FlowChip()
        top.addWidget(self.flow_chip)
        self.flow_chip.reset_requested.connect(self.reset_flow)
        self.flow_chip.trust_toggled.connect(self.set_project_trusted)
        # The project folder may have changed since: read its trust when the menu opens.
        self.flow_chip.menu_.aboutToShow.connect(self._show_trust)

        self.transcript = Transcript()
        self.prompt = PromptEdit()  # dropped or pasted files and images: the tray below
        self.prompt.setObjectName("prompt")
        self.prompt.setPlaceholderText("Ask for work… (Ctrl+Enter to send)")
        self.prompt.setMaximumHeight(110)
        self.prompt.setTabChangesFocus(True)  # Tab goes on to Send, as in any form
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
        layout.addWidget(self.conversation_list)
        layout.addWidget(self.transcript, 1)
        layout.addWidget(self.usage_label)
        layout.addLayout(bottom)
        self.attachment_tray = AttachmentTray(self.prompt, drop_target=self)
        layout.addWidget(self.attachment_tray)
        # Edit and resend, regenerate, the context bar and compaction.
        self.conversation_actions = install_conversation_actions(self)
        # MCP prompts ("/" in the prompt, the MCP button) and resources (issue 19).
        self.mcp_prompts = install_mcp_prompts(self)

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
        self.conversations_button.toggled.connect(self.show_conversation_list)
        self.conversation_list.opened.connect(self._on_conversation_picked)
        self.conversation_list.deleted.connect(self._on_conversation_deleted)
        self.conversation_list.renamed.connect(self._on_conversation_renamed)
        self.conversation_list.status_message.connect(self.status_message)
        self.conversation_list.can_delete = self._can_delete
        root = project_root()
        self.conversation_list.set_project(str(root) if root is not None else None)
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
        # The tray's attachments go with what the person typed, not with a Continue.
        attachments = self.attachment_tray.attachments() if text is None else []
        text = (text if text is not None else self.prompt.toPlainText()).strip()
        if not (text or attachments) or self.running:
            return False
        root = self._project_root()
        if root is None:
            if self._project_hint is None:
                self._project_hint = ErrorCard(
                    "Open a project folder first (File → Open Folder…); the AI's tools work "
                    "inside it.", False, lambda: None)
                self.transcript.add(self._project_hint)
            return False
        self._drop_project_hint()
        if self.conversation_actions.editing is not None:  # an edited message: fork there
            return bool(text) and self.conversation_actions.send_edit(text)
        if self.attachment_tray.busy:
            self.status_message.emit("Still reading the attachments; send again in a moment.")
            return False
        if not text:
            from app.core.agent.attachments import default_prompt

            text = default_prompt(attachments)
        self.prompt.clear()
        self.attachment_tray.clear()
        self._end_run()  # a retried run's leftovers close before the new prompt
        view = self.transcript.add(MessageView(text, "user"))
        add_attachment_note(self.transcript, view, [a.info for a in attachments])
        session = self._ensure_session(root)
        self._start(session.run(text, attachments))
        return True

    def _drop_project_hint(self) -> None:
        if self._project_hint is not None:
            self.transcript.remove(self._project_hint)
            self._project_hint = None

    def _add_error_card(self, message: str, retryable: bool) -> None:
        """A failed turn: the newest card is the only one whose Retry works."""
        self._retire_error_cards()
        self.transcript.add(ErrorCard(message, retryable, self.retry))

    def _retire_error_cards(self) -> None:
        for item in self.transcript.items():
            if isinstance(item, ErrorCard):
                item.retire()

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
        self._retire_error_cards()  # a new run supersedes every earlier failure
        self._task = asyncio.ensure_future(coro)
        self._task.add_done_callback(self._on_task_done)
        self._set_running(True)

    def _on_task_done(self, task: asyncio.Task[None]) -> None:
        if not task.cancelled() and task.exception() is not None:
            exc = task.exception()
            log.error("agent run crashed", exc_info=exc)
            self._add_error_card(f"Internal error: {exc}", True)
        self._flush_text()
        self._end_run()
        self._set_running(False)
        self.refresh_conversations()
        if self.session is not None:
            self.checkpoints.prune_in_background(self.session.checkpointer)
        from app.core.warmup import release_free_memory

        release_free_memory()  # what the run's stream and rendering freed, back to the system

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
            ToolProgress,
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
                                event.decision.kind, rule,
                                decided_by=event.decision.decided_by,
                                has_rule=event.decision.rule is not None)
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
        elif isinstance(event, ToolProgress):
            card = self.cards.get(event.tool_use_id)
            if card is not None:
                card.set_progress(event.progress, event.total, event.message)
        elif isinstance(event, ToolFinished):
            card = self.cards.get(event.tool_use_id)
            if card is not None:
                card.finish(event.outcome, event.is_error, event.duration_ms, event.content,
                            event.images)
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
            self.conversation_actions.show_context(event.model, event.turn)
        elif isinstance(event, RunFinished):
            self._flush_text()
            if event.stop_reason == "max_iterations":
                self.transcript.add(self._round_cap_card(event.iterations))
        elif isinstance(event, RunFailed):
            if self._current_text is not None:  # the stream broke off mid-answer
                self._current_text.mark_incomplete()
            self._flush_text()
            self._add_error_card(event.message, event.retryable)
            self.conversation_actions.offer_compaction(event.message)
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
        self._project_hint = None  # deleted with the rest of the transcript
        self.transcript.clear()
        self.conversation_actions.reset()

    def refresh_conversations(self) -> None:
        """The list marks the open conversation and reads its rows again (off the GUI thread);
        the open one is remembered as the project's last."""
        current = self.session.conversation_id if self.session is not None else None
        self.conversation_list.set_current(current)
        self.conversation_list.refresh()
        if current is None:
            self.conversation_title.setText("New conversation")
            return
        self._show_title(current)
        root = self._project_root()
        if root is not None:
            self.services.settings.set_last_conversation(str(root), current)

    def _show_title(self, conversation_id: int) -> None:
        # One row by its primary key: cheap on the GUI thread.
        try:
            title = conversation_title(self.services.conversations.get(conversation_id))
        except KeyError:
            title = "New conversation"
        self.conversation_title.setText(title)
        self.conversation_title.setToolTip(title)

    def show_conversation_list(self, shown: bool = True) -> None:
        """Show (and focus the search of) the project's conversations, or hide them."""
        self.conversations_button.setChecked(shown)
        self.conversations_button.setArrowType(Qt.ArrowType.DownArrow if shown
                                               else Qt.ArrowType.RightArrow)
        self.conversation_list.setVisible(shown)
        if shown:
            self.conversation_list.refresh()  # "today 14:02" may be yesterday's by now
            self.conversation_list.search.setFocus()

    def project_opened(self, root: Path | None) -> None:
        """The window opened ``root``: the list follows it and, unless a run is going on or a
        conversation is open, the project's last conversation is reopened."""
        super().project_opened(root)
        if root is not None:
            self._drop_project_hint()
        self.conversation_list.set_project(str(root) if root is not None else None)
        if root is not None and self.session is None and not self.running:
            last = self.services.settings.last_conversation(str(root))
            if last is not None and self._belongs_to(last, root):
                self.load_conversation(last)
                return
        self.refresh_conversations()

    def _belongs_to(self, conversation_id: int, root: Path) -> bool:
        try:
            return self.services.conversations.get(conversation_id).project_root == str(root)
        except KeyError:  # deleted since
            return False

    def _on_conversation_picked(self, conversation_id: int) -> None:
        if self.running:
            self.status_message.emit("Stop the run before opening another conversation.")
            self.refresh_conversations()
            return
        self.load_conversation(conversation_id)

    def _on_conversation_deleted(self, conversation_id: int) -> None:
        root = self._project_root()
        if root is not None and \
                self.services.settings.last_conversation(str(root)) == conversation_id:
            self.services.settings.set_last_conversation(str(root), None)
        if self.session is not None and self.session.conversation_id == conversation_id:
            self.new_conversation()
        self.status_message.emit("Conversation deleted.")

    def _can_delete(self, conversation_id: int) -> bool:
        """Not the conversation a run is adding to (stop it first)."""
        return not (self.running and self.session is not None
                    and self.session.conversation_id == conversation_id)

    def _on_conversation_renamed(self, conversation_id: int, title: str) -> None:
        if self.session is not None and self.session.conversation_id == conversation_id:
            self.conversation_title.setText(title)
            self.conversation_title.setToolTip(title)

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
