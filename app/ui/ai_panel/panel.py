"""The AI panel: the conversation transcript, the prompt box, Send and Stop.

The composition root of the panel's parts (the package docstring lists them): it builds them,
places their widgets and turns the agent's events (``handle_event``) into calls on them. What
stays here is the run itself: Send, Stop and Retry; the session runs on the qasync loop.
"""

from __future__ import annotations

import importlib
import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QKeySequence, QShortcut, QShowEvent
from PySide6.QtWidgets import QHBoxLayout, QPushButton, QVBoxLayout, QWidget

from app.ui.ai_panel.answer_stream import AnswerStream
from app.ui.ai_panel.banner_area import BannerArea
from app.ui.ai_panel.compaction import ContextCompaction
from app.ui.ai_panel.conversation_actions import ConversationActions
from app.ui.ai_panel.conversations import Conversations
from app.ui.ai_panel.flow_controls import FlowControls
from app.ui.ai_panel.instructions_line import InstructionsLine
from app.ui.ai_panel.mcp_prompts import McpPrompts
from app.ui.ai_panel.mode_choice import MODE_INTRO_DELAY_MS, ModeChoice
from app.ui.ai_panel.on_demand import place_by
from app.ui.ai_panel.orchestration_pauses import OrchestrationPauses
from app.ui.ai_panel.run_events import RunEvents
from app.ui.ai_panel.run_notes import add_error_card, retire_error_cards
from app.ui.ai_panel.run_task import RunTask
from app.ui.ai_panel.service_notices import ServiceNotices
from app.ui.ai_panel.session_holder import SessionHolder, asking_conversation
from app.ui.ai_panel.sub_agent_actions import SubAgentActions
from app.ui.ai_panel.tool_cards import ToolCards
from app.ui.ai_panel.undo_actions import UndoActions
from app.ui.ai_panel.usage_line import UsageLine
from app.ui.ai_panel.widget_slot import WidgetSlot
from app.ui.approval_queue import ApprovalQueue, remember_in_conversation
from app.ui.controllers.checkpoints import CheckpointController
from app.ui.widgets.attachment_note import add_attachment_note
from app.ui.widgets.attachments import AttachmentTray, PromptEdit
from app.ui.widgets.transcript_view import ErrorCard, MessageView, Transcript

if TYPE_CHECKING:
    import asyncio  # imported where used: the ready window loads before the event loop

    # The agent's session and events, the tool cards and the conversation replay are imported
    # by their first use (Send, the first event, opening a conversation), or before it after
    # ready (app.ui.deferred_imports' DEFERRED_UI_MODULES on the GUI thread, one per turn;
    # app.startup_threads' DEFERRED_AGENT_MODULES in a worker): the panel is ready without them.
    from app.core.agent.attachments import Attachment
    from app.core.agent.events import AgentEvent
    from app.core.agent.session import AgentSession
    from app.core.services import Services
    from app.ui.ai_panel.find_bar import FindBar

log = logging.getLogger(__name__)
# The agent's session: imported by the warm-up once the person types, or the first run.
SESSION_MODULE = "app.core.agent.session"


class AIPanel(QWidget):
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
        status = self.status_message.emit
        self.runs = RunTask(starting=self._run_starting, ended=self._run_ended,
                            running_changed=self._show_running)
        # Events and Send are looked up when they happen: a test or a benchmark may wrap them.
        # A conversation left while it runs goes on in the background (sessions.pool).
        self.sessions = SessionHolder(services, lambda: self.profile_id, approvals.request,
                                      lambda event: self.handle_event(event), self.runs)
        # "Remember in this conversation only": kept for the conversation that asked.
        # services.permissions read when it is used: the panel is ready before it is built.
        approvals.remember_for_conversation = lambda rules: remember_in_conversation(
            services.permissions, lambda: asking_conversation(approvals, self.session),
            status)(rules)
        # Shown by Send without a project; removed as soon as one is open.
        self._project_hint: ErrorCard | None = None
        self._stop_before_start = False
        self._find_bar: FindBar | None = None

        self.transcript = Transcript()
        self.stream = AnswerStream(self.transcript)
        self.tool_cards = ToolCards(SubAgentActions(services, self.sessions), services, self.stop)
        # Undo / redo of the agent's file changes (cards, runs, messages) and pruning.
        self.checkpoints = CheckpointController(services, self)
        self.checkpoints.message.connect(self.status_message)
        self.undo = UndoActions(self.transcript, self.tool_cards, self.checkpoints, self.runs,
                                status)
        # Notices and the first-run mode choice, above the conversation row.
        banners = WidgetSlot(spacing=6, tab_after=lambda: self)  # Tab: the panel's first
        self.notices = ServiceNotices(services, banners)
        self.mode_choice = ModeChoice(services, lambda: self.profile_id, banners, self.runs,
                                      status, self.permission_mode_changed.emit)
        self._mode_intro_planned = False  # on the first show
        list_slot = WidgetSlot(tab_after=lambda: self.flow.chip)  # under the conversation row
        self.conversations = Conversations(
            services, self.sessions, self.runs, project_root, status, self.transcript,
            self.undo, list_slot, clear_panel=self._clear, show_state=self._show_state)
        self.flow = FlowControls(services, self.sessions, project_root, status)
        self.usage = UsageLine(services.settings)
        self.instructions = InstructionsLine(services.data_dir, project_root)

        self.prompt = PromptEdit()  # dropped or pasted files and images: the tray below
        self.prompt.setObjectName("prompt")
        self.prompt.setAccessibleName("Request to the AI")  # a screen reader's name for it
        self.prompt.setPlaceholderText("Ask for work… (Ctrl+Enter to send)")
        self.prompt.setMaximumHeight(110)
        self.prompt.setTabChangesFocus(True)  # Tab goes on to Send, as in any form
        self.send_button = QPushButton("Send")
        self.send_button.setObjectName("send")
        self.send_button.setToolTip("Send (Ctrl+Enter)")
        self.stop_button = QPushButton("Stop")
        self.stop_button.setObjectName("stop")
        self.stop_button.setEnabled(False)
        self.attachment_tray = AttachmentTray(self.prompt, drop_target=self)
        # Edit and resend, regenerate; the context bar and compaction.
        self.compaction = ContextCompaction(
            services.conversations, self.sessions, self.runs, status, self.transcript,
            self.stream, place_bar=place_by(self.usage.label, 0, self.attachment_tray))
        self.conversation_actions = ConversationActions(
            self.transcript, self.prompt, self.attachment_tray, self.sessions, self.runs,
            status, send=lambda text: self.send(text), cut=self._cut_transcript,
            reopen=self.conversations.open,  # and the answer's end: versions, unanswered
            place_banner=place_by(self.usage.label, 1, self.attachment_tray))
        # MCP prompts ("/" in the prompt, the MCP button) and resources (issue 19).
        self.mcp_prompts = McpPrompts(services, self.prompt, self.attachment_tray, status)
        self.pauses = OrchestrationPauses(services, self.sessions, self.runs, self.transcript,
                                          status)  # sub-agents waiting for the person
        self.events = RunEvents(
            self.transcript, self.stream, self.tool_cards, self.undo, self.flow, self.usage,
            self.compaction, self.sessions, status, send=lambda text: self.send(text),
            retry=lambda: self.retry(), sub_agent_paused=self.pauses.show)
        self._lay_out(banners, list_slot)
        self.running_changed.connect(self.compaction.set_busy)
        self.running_changed.connect(self.instructions.on_running)
        self.send_button.clicked.connect(lambda: self.send())
        self.stop_button.clicked.connect(self.stop)
        for keys, action in self.conversation_actions.shortcuts():
            shortcut = QShortcut(QKeySequence(keys), self)
            shortcut.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            shortcut.activated.connect(action)
        for keys in ("Ctrl+Return", "Ctrl+Enter"):
            shortcut = QShortcut(QKeySequence(keys), self.prompt)
            shortcut.setWhatsThis("Send the request (in the prompt)")
            shortcut.activated.connect(lambda: self.send())
        self.prompt.textChanged.connect(self._on_prompt_changed)
        self.conversations.refresh()
        self._show_state()

    def _lay_out(self, banners: WidgetSlot, list_slot: WidgetSlot) -> None:
        """The panel's column, top to bottom. The widgets join the Tab order as they are
        placed; the context bar and the edit banner by their first use, after the tray."""
        row = QHBoxLayout()  # the conversation row
        row.addWidget(self.conversations.button)
        row.addWidget(self.conversations.title, 1)
        row.addWidget(self.conversations.new_button)
        row.addWidget(self.flow.chip)
        buttons = QVBoxLayout()
        buttons.addWidget(self.send_button)
        buttons.addWidget(self.stop_button)
        buttons.addStretch(1)
        bottom = QHBoxLayout()
        bottom.addWidget(self.prompt, 1)
        bottom.addLayout(buttons)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(BannerArea(banners))  # scrolls when the window is short
        layout.addLayout(row)
        layout.addLayout(list_slot.layout)
        layout.addWidget(self.instructions.button)
        layout.addWidget(self.transcript, 1)
        layout.addWidget(self.usage.label)
        layout.addLayout(bottom)
        layout.addWidget(self.attachment_tray)
        buttons.insertWidget(buttons.indexOf(self.stop_button) + 1, self.mcp_prompts.button)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if not self.notices.taken:
            self.notices.show()
        if not self._mode_intro_planned:
            self._mode_intro_planned = True
            mode = self.mode_choice.intro_wanted()
            if mode is not None:
                QTimer.singleShot(MODE_INTRO_DELAY_MS, self,
                                  lambda: self.mode_choice.show_intro(mode))

    def _on_prompt_changed(self) -> None:
        if self.prompt.document().isEmpty():
            return
        self.prompt.textChanged.disconnect(self._on_prompt_changed)
        self.writing_started.emit()

    @property
    def session(self) -> AgentSession | None:
        return self.sessions.session

    @property
    def running(self) -> bool:
        """True from Send until the run's task has ended and the panel has settled."""
        return self.runs.running

    def new_conversation(self) -> None:
        self.conversations.new_conversation()

    def choose_permission_mode(self, value: str) -> None:
        self.mode_choice.choose(value)

    def show_permission_mode(self) -> None:
        self.mode_choice.show_profile_mode()

    def project_opened(self, root: Path | None) -> None:
        """The window opened ``root``: its old checkpoints are pruned in the background (at
        most hourly), the conversations and the instructions line follow it."""
        if root is not None:
            self.checkpoints.prune_in_background(self.services.checkpointer_for(root))
            self._drop_project_hint()
        self.conversations.project_opened(root)
        self.instructions.refresh()

    def find_bar(self) -> FindBar:
        """Edit → Find's bar above the transcript, made on first use."""
        if self._find_bar is None:
            from app.ui.ai_panel.find_bar import FindBar

            bar = self._find_bar = FindBar(self.transcript, self)
            layout = self.layout()
            assert isinstance(layout, QVBoxLayout)
            layout.insertWidget(layout.indexOf(self.transcript), bar)
            bar.closed.connect(lambda: self.prompt.setFocus())
        return self._find_bar

    def _clear(self) -> None:
        """Another conversation: nothing of this one's is left in the panel."""
        self.tool_cards.clear()
        self._project_hint = None  # deleted with the rest of the transcript
        self.transcript.clear()
        self.conversation_actions.reset()
        self.compaction.reset()

    def _show_state(self) -> None:
        """The open conversation's tokens, labels (clean before its first run), trust, end."""
        session = self.session
        self.usage.show("", None, session.conversation_usage() if session is not None else {})
        self.flow.show_flow()
        self.pauses.restore(session.conversation_id if session is not None else None)
        self.conversation_actions.answer_end.refresh()

    def _cut_transcript(self, widget: QWidget | None) -> None:
        """``widget`` and everything after it out of the transcript and the bookkeeping of
        cards and streamed text (nothing when None); the next run's cards start from none."""
        items = self.transcript.items()
        if widget is not None and widget in items:
            for item in items[items.index(widget):]:
                self.tool_cards.forget(item)
                self.transcript.remove(item)
            self.stream.forget()
            self.undo.refresh_restore_actions()
        self.tool_cards.this_run.clear()

    def _drop_project_hint(self) -> None:
        if self._project_hint is not None:
            self.transcript.remove(self._project_hint)
            self._project_hint = None

    def handle_event(self, event: AgentEvent) -> None:
        self.events.handle(event)

    def send(self, text: str | None = None) -> bool:
        # The tray's attachments go with what the person typed, not with a Continue.
        typed = text is None
        attachments = self.attachment_tray.attachments() if typed else []
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
            return bool(text or attachments) and self.conversation_actions.send_edit(text)
        if self.attachment_tray.busy:
            self.status_message.emit("Still reading the attachments; send again in a moment.")
            return False
        if not self.sessions.may_start():
            self.status_message.emit(self.sessions.AT_LIMIT)
            return False
        if not text:
            from app.core.agent.attachments import default_prompt

            text = default_prompt(attachments)
        self.prompt.clear()
        if typed:  # a Continue leaves the tray as it is
            self.attachment_tray.clear()
        self.undo.end_run()  # a retried run's leftovers close before the new prompt
        self.transcript.follow_end()  # the new message is in view, whatever was read above
        view = self.transcript.add(MessageView(text, "user"))
        add_attachment_note(self.transcript, view, [a.info for a in attachments])
        if self.session is None and SESSION_MODULE not in sys.modules:
            self._stop_before_start = False  # set by a Stop before the run can start
            self.runs.start(self._first_run(root, view, text, attachments))
            return True
        self.runs.start(self.sessions.ensure(root).run(text, attachments))
        return True

    async def _first_run(self, root: Path, view: QWidget, text: str,
                         attachments: list[Attachment]) -> None:
        """A Send before the warm-up (started by typing) loaded the agent's session and tool
        loop: they are imported off the GUI thread (tens of ms), then the run starts. A Stop
        meanwhile gives the prompt and its attachments back; nothing was sent or stored."""
        import asyncio

        await asyncio.to_thread(importlib.import_module, SESSION_MODULE)
        if self._stop_before_start:
            self.transcript.remove(view)
            self.prompt.setPlainText(text)
            for attachment in attachments:
                self.attachment_tray.add_attachment(attachment)
            self.status_message.emit("Stopped before the request was sent.")
            return
        await self.sessions.ensure(root).run(text, attachments)

    def retry(self) -> None:
        if self.session is not None and not self.running:
            self.runs.start(self.session.retry())

    def stop(self) -> None:
        """Stop this conversation's stream, tool and pending approvals (the others run on)."""
        shown = self.session.conversation_id if self.session is not None else None
        self.approvals.abort("The person stopped the run.",
                             only=lambda r: r.conversation_id in (None, shown))
        if self.session is not None:
            self.session.cancel()
        elif self.running:  # the first run is still loading its modules (_first_run)
            self._stop_before_start = True

    async def shutdown(self) -> None:
        """Quit: nothing pending may run. Waits for the run to wind down, closes the client."""
        import asyncio

        self.stop()
        self.attachment_tray.cancel_loads()  # not waited for: the panel is going away
        self.conversation_actions.edit_attachments.stop_loading()
        task = self.runs.task
        if task is not None and not task.done():
            try:
                await asyncio.wait_for(asyncio.shield(task), timeout=5)
            except (TimeoutError, asyncio.CancelledError):
                task.cancel()
        await self.sessions.aclose()

    def _run_starting(self) -> None:
        self.sessions.started(self._project_root())
        self.stream.forget()
        retire_error_cards(self.transcript)  # a new run supersedes every earlier failure

    def _run_ended(self, task: asyncio.Task[None]) -> None:
        if not task.cancelled() and task.exception() is not None:
            log.error("agent run crashed", exc_info=(exc := task.exception()))
            add_error_card(self.transcript, f"Internal error: {exc}", True, lambda: self.retry())
        self.stream.flush()
        self.undo.end_run()
        self.sessions.ended()

    def _show_running(self, running: bool) -> None:
        self.send_button.setEnabled(not running)
        self.stop_button.setEnabled(running)
        self.running_changed.emit(running)
        self.status_message.emit("Working…" if running else "Ready")
        self.conversation_actions.answer_end.on_running(running)
        if running:
            return
        self.conversations.refresh()
        if self.session is not None:
            self.checkpoints.prune_in_background(self.session.checkpointer)
        from app.core.warmup import release_free_memory

        release_free_memory()  # what the run's stream and rendering freed, back to the system
