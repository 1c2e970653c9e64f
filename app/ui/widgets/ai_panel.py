"""The AI panel: the conversation transcript, the prompt box, Send and Stop.

The composition root of the panel's parts, each a mixin in a module of its own: the header
(notices, the first-run permission mode, the flow chip, the usage line: ``panel_header``), the
conversations (picker, list, opening and starting one: ``conversation_switching``), a run's
events turned into transcript items (``run_events``) and the undo actions (``undo_actions``);
plus the edit/resend and context tools (``conversation_actions``), MCP prompts and the
attachment tray. What stays here is the run itself: Send, the agent session, Stop and Retry.

The agent session runs as a task on the qasync loop; its events arrive in ``handle_event``.
"""

from __future__ import annotations

import importlib
import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QHBoxLayout, QPushButton, QVBoxLayout, QWidget

from app.ui.approval_queue import ApprovalQueue, remember_in_conversation
from app.ui.controllers.checkpoints import CheckpointController, loop_running
from app.ui.widgets.attachment_note import add_attachment_note
from app.ui.widgets.attachments import AttachmentTray, PromptEdit
from app.ui.widgets.conversation_actions import install_conversation_actions
from app.ui.widgets.conversation_switching import ConversationSwitching
from app.ui.widgets.mcp_prompts import install_mcp_prompts
from app.ui.widgets.panel_header import PanelHeader
from app.ui.widgets.run_events import RunEvents
from app.ui.widgets.transcript_view import ErrorCard, MessageView, RunFooter, Transcript
from app.ui.widgets.undo_actions import UndoActions

if TYPE_CHECKING:
    import asyncio  # imported where used: the ready window loads before the event loop

    # The agent's session and events, the tool cards and the conversation replay are imported
    # by their first use (Send, the first event, opening a conversation), or before it, off the
    # GUI thread, by app.startup_threads' warm-up after ready (DEFERRED_UI_MODULES,
    # DEFERRED_AGENT_MODULES): the panel is ready without them.
    from app.core.agent.attachments import Attachment
    from app.core.agent.session import AgentSession
    from app.core.services import Services
    from app.ui.widgets.tool_card import ToolCard

log = logging.getLogger(__name__)
# The agent's session and its tool loop: imported by the warm-up once the person types, or by
# the first run off the GUI thread (AIPanel._first_run).
SESSION_MODULE = "app.core.agent.session"


class AIPanel(RunEvents, ConversationSwitching, PanelHeader, UndoActions, QWidget):
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
        self._stop_before_start = False
        self._build_rendering()

        top = self._build_conversation_row()
        self._build_header(top)

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

        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addLayout(self.banners)
        layout.addLayout(top)
        layout.addLayout(self.conversation_list_slot)
        layout.addWidget(self.transcript, 1)
        layout.addWidget(self.usage_label)
        layout.addLayout(bottom)
        self.attachment_tray = AttachmentTray(self.prompt, drop_target=self)
        layout.addWidget(self.attachment_tray)
        # Edit and resend, regenerate, the context bar and compaction.
        self.conversation_actions = install_conversation_actions(self)
        # MCP prompts ("/" in the prompt, the MCP button) and resources (issue 19).
        self.mcp_prompts = install_mcp_prompts(self)

        self.send_button.clicked.connect(lambda: self.send())
        self.stop_button.clicked.connect(self.stop)
        for keys in ("Ctrl+Return", "Ctrl+Enter"):
            shortcut = QShortcut(QKeySequence(keys), self.prompt)
            shortcut.activated.connect(lambda: self.send())
        self.prompt.textChanged.connect(self._on_prompt_changed)
        self.refresh_conversations()
        self._show_flow()

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
        if not text:
            from app.core.agent.attachments import default_prompt

            text = default_prompt(attachments)
        self.prompt.clear()
        if typed:  # a Continue leaves the tray as it is
            self.attachment_tray.clear()
        self._end_run()  # a retried run's leftovers close before the new prompt
        view = self.transcript.add(MessageView(text, "user"))
        add_attachment_note(self.transcript, view, [a.info for a in attachments])
        if self.session is None and SESSION_MODULE not in sys.modules:
            self._stop_before_start = False  # set by a Stop before the run can start
            self._start(self._first_run(root, view, text, attachments))
            return True
        session = self._ensure_session(root)
        self._start(session.run(text, attachments))
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
        await self._ensure_session(root).run(text, attachments)

    def _drop_project_hint(self) -> None:
        if self._project_hint is not None:
            self.transcript.remove(self._project_hint)
            self._project_hint = None

    def retry(self) -> None:
        if self.session is not None and not self.running:
            self._start(self.session.retry())

    def stop(self) -> None:
        """Stop: the stream and any running tool are cancelled; pending approvals decline."""
        self.approvals.abort("The person stopped the run.")
        if self.session is not None:
            self.session.cancel()
        elif self.running:  # the first run is still loading its modules (_first_run)
            self._stop_before_start = True

    async def shutdown(self) -> None:
        """Quit: nothing pending may run. Waits for the run to wind down, closes the client."""
        import asyncio

        self.stop()
        # Attachments still being read are not waited for: their chips would be filled in
        # on a panel that is going away.
        self.attachment_tray.cancel_loads()
        self.conversation_actions.edit_attachments.stop_loading()
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
        import asyncio

        old, self.session = self.session, None
        # Without a running loop (a script, a synchronous test) nothing could run the close;
        # the session's client goes with the session.
        if old is not None and loop_running():
            self._closing.add(asyncio.ensure_future(old.aclose()))
            self._closing = {t for t in self._closing if not t.done()}

    def _start(self, coro) -> None:
        import asyncio

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
