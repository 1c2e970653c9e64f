"""Conversations that work in a run workspace (app.core.worktrees): File → New Conversation in
a Worktree, the panel's line "Worktree tebiki/<id> of <project>" with Review changes, and
Run → Clean Up Workspaces….

Making the workspace (a clone and a checkout: seconds on a large project) runs in a worker
thread with its own event loop. The project's setup commands (``.tebiki/worktree.toml``) then
run as the new conversation's first run, each a shell_exec call decided, asked and sandboxed
like the model's (app.core.agent.setup_commands). The workspace is recorded against its
conversation as soon as the conversation exists; the panel's sessions then open that
conversation in the workspace (``SessionHolder.workspaces``), also after a restart.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import shiboken6
from PySide6.QtCore import QTimer
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.ui.ai_panel.sub_agent_actions import SubAgentActions
from app.ui.controllers.checkpoints import loop_running
from app.ui.task_set import TaskSet
from app.ui.window_menus import menu_named

if TYPE_CHECKING:
    from app.core.agent.run_board import RunRow
    from app.core.agent.session import AgentSession
    from app.core.services import Services
    from app.core.worktrees.workspace import RunWorkspace, Worktrees
    from app.ui.ai_panel.panel import AIPanel
    from app.ui.ai_panel.run_switch import RunSwitch

LOAD_RETRY_MS = 100  # the known workspaces wait for the event loop


def worktree_line(workspace: RunWorkspace) -> str:
    return f"Worktree {workspace.branch} of {workspace.source.name}"


class WorktreeRuns:
    """Built by the main window with the AI panel; ``switch`` is the status view's, told how
    to name a workspace's project."""

    def __init__(self, window: QMainWindow, panel: AIPanel, services: Services,
                 project_root: Callable[[], Path | None], status: Callable[[str], None],
                 switch: RunSwitch) -> None:
        self._window = window
        self._panel = panel
        self._services = services
        self._project_root = project_root
        self._status = status
        self._worktrees: Worktrees | None = None
        self.by_conversation: dict[int, RunWorkspace] = {}
        self._unattached: list[tuple[AgentSession, RunWorkspace]] = []
        self.tasks = TaskSet("worktree runs", lambda exc: status(f"Worktree: {exc}"))
        self.new_action = QAction("New Conversation in a &Worktree", window)
        self.new_action.setObjectName("new-worktree-conversation")
        self.new_action.setToolTip("A conversation working in its own copy of the project, on a "
                                   "new branch; its changes come back through Review changes")
        self.new_action.triggered.connect(self.start)
        self.review_action = QAction("Review &Changes…", window)
        self.review_action.setObjectName("review-worktree-changes")
        self.review_action.setEnabled(False)  # a conversation in a worktree is shown
        self.review_action.triggered.connect(lambda: self.review())
        self.clean_action = QAction("Clean Up &Workspaces…", window)
        self.clean_action.setObjectName("clean-workspaces")
        self.clean_action.triggered.connect(self.show_stale)
        file_menu, run_menu = menu_named(window, "&File"), menu_named(window, "&Run")
        if file_menu is not None:  # right after New Conversation
            new_conversation = next((a for a in file_menu.actions()
                                     if a.text() == "&New Conversation"), None)
            index = file_menu.actions().index(new_conversation) + 1 if new_conversation else 0
            following = file_menu.actions()[index:index + 1]
            if following:
                file_menu.insertAction(following[0], self.new_action)
            else:
                file_menu.addAction(self.new_action)
        if run_menu is not None:
            run_menu.addAction(self.review_action)
            run_menu.addAction(self.clean_action)
        self.line = QWidget()
        self.line.setObjectName("worktree-line")
        self.label = QLabel()
        self.review_button = QPushButton("Review changes…")
        self.review_button.setObjectName("review-changes")
        self.review_button.clicked.connect(lambda: self.review())
        row = QHBoxLayout(self.line)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.label, 1)
        row.addWidget(self.review_button)
        self.line.hide()
        layout = panel.layout()
        if isinstance(layout, QVBoxLayout):  # above the instructions line
            layout.insertWidget(layout.indexOf(panel.instructions.button), self.line)
        panel.sessions.pool.listeners.append(self._row_changed)
        actions = panel.tool_cards.sub_agent_controls
        if isinstance(actions, SubAgentActions):  # a sub-agent row's Review changes
            actions.review = self.review_conversation
        switch.describe_project = self.describe_project
        panel.running_changed.connect(lambda _running: self.refresh_line())
        panel.sessions.shown_listeners.append(self.refresh_line)
        self.dialogs: list[QWidget] = []  # open review / clean-up dialogs (tests reach them)
        QTimer.singleShot(0, self._start_loading)

    def _start_loading(self) -> None:
        """The workspaces known from earlier sessions (once the event loop runs: app.main
        shows the window before it starts the loop, so ask again until it does)."""
        if loop_running():
            self.tasks.run(self._load_known())
        else:
            QTimer.singleShot(LOAD_RETRY_MS, self.line, self._start_loading)

    @property
    def worktrees(self) -> Worktrees:
        """Made by the first use (git's modules load then, not with the window)."""
        if self._worktrees is None:
            from app.core.worktrees.workspace import Worktrees

            self._worktrees = Worktrees(self._services.data_dir)
        return self._worktrees

    # -- the shown conversation ------------------------------------------------------------

    def shown(self) -> RunWorkspace | None:
        session = self._panel.session
        if session is None:
            return None
        for known, workspace in self._unattached:
            if known is session:
                return workspace
        if session.conversation_id is None:
            return None
        return self.by_conversation.get(session.conversation_id)

    def refresh_line(self) -> None:
        workspace = self.shown()
        self.line.setVisible(workspace is not None)
        self.review_action.setEnabled(workspace is not None and not self._panel.running)
        if workspace is not None:
            self.label.setText(worktree_line(workspace))
            self.label.setToolTip(str(workspace.repo))
            self.review_button.setEnabled(not self._panel.running)

    def describe_project(self, folder: Path) -> str:
        """The status view's project of a run: a workspace as "worktree of <project>"."""
        for workspace in [*self.by_conversation.values(), *(w for _s, w in self._unattached)]:
            if workspace.repo == folder:
                return f"worktree of {workspace.source.name}"
        return folder.name or str(folder)

    # -- making one ------------------------------------------------------------------------

    def start(self) -> None:
        project = self._project_root()
        if project is None:
            self._status("Open a project folder first (File → Open Folder…).")
            return
        self.new_action.setEnabled(False)
        self.tasks.run(self.create(project))

    async def create(self, project: Path) -> RunWorkspace | None:
        """The workspace off the GUI thread, a new conversation in it, its setup commands."""
        import asyncio

        from app.core.agent.setup_commands import SetupFileError, read_setup
        from app.core.worktrees.host_git import WorktreeError

        self._status(f"Making a worktree of {project.name}…")
        try:
            workspace = await asyncio.to_thread(asyncio.run, self.worktrees.create(project))
            commands = await asyncio.to_thread(read_setup, project)
        except (WorktreeError, SetupFileError, OSError) as exc:
            self._status(f"No worktree: {exc}")
            return None
        finally:
            self.new_action.setEnabled(True)
        self._panel.new_conversation()
        session = self._panel.sessions.begin_in(workspace.repo, workspace.borrowed)
        self._unattached.append((session, workspace))
        self.refresh_line()
        self._status(worktree_line(workspace))
        if commands:
            self._panel.runs.start(self._set_up(session, commands))
        return workspace

    async def _set_up(self, session: AgentSession, commands: list[str]) -> None:
        from app.core.agent.setup_commands import run_setup

        await run_setup(session, commands)
        await self._attach_ready()

    def _row_changed(self, _row: RunRow) -> None:
        if any(s.conversation_id is not None for s, _w in self._unattached):
            self.tasks.run(self._attach_ready())

    async def _attach_ready(self) -> None:
        """Record each new workspace against its conversation once that exists."""
        import asyncio

        for entry in list(self._unattached):
            session, workspace = entry
            conversation_id = session.conversation_id
            if conversation_id is None or entry not in self._unattached:
                continue
            self._unattached.remove(entry)
            attached = await asyncio.to_thread(self.worktrees.attach, workspace,
                                               conversation_id)
            self._know(attached)

    def _know(self, workspace: RunWorkspace) -> None:
        if workspace.conversation_id is None:
            return
        self.by_conversation[workspace.conversation_id] = workspace
        self._panel.sessions.workspaces[workspace.conversation_id] = (workspace.repo,
                                                                      workspace.borrowed)
        self.refresh_line()

    async def _load_known(self) -> None:
        import asyncio

        for workspace in await asyncio.to_thread(self.worktrees.all):
            if workspace.ready and workspace.source.is_dir():
                self._know(workspace)

    def forget(self, workspace: RunWorkspace) -> None:
        """``workspace`` was removed (Finish, Clean)."""
        if workspace.conversation_id is not None:
            self.by_conversation.pop(workspace.conversation_id, None)
            self._panel.sessions.workspaces.pop(workspace.conversation_id, None)
        self._unattached = [e for e in self._unattached if e[1].id != workspace.id]
        self.refresh_line()

    # -- bringing work back, cleaning up ---------------------------------------------------

    def review(self, workspace: RunWorkspace | None = None) -> QWidget | None:
        from app.ui.dialogs.review_changes import ReviewChangesDialog
        from app.ui.worktree_applies import ProjectApplies

        workspace = workspace or self.shown()
        if workspace is None:
            return None
        dialog = ReviewChangesDialog(
            workspace, self.worktrees, ProjectApplies(self._panel, self._services, self.owner),
            finished=self.forget, parent=self._window)
        self._keep(dialog)
        return dialog

    def owner(self, workspace: RunWorkspace) -> int | None:
        """The conversation that ran in ``workspace`` (its applies go into its history)."""
        if workspace.conversation_id is not None:
            return workspace.conversation_id
        known = [c for c, w in self.by_conversation.items() if w.id == workspace.id]
        known += [s.conversation_id for s, w in self._unattached
                  if w.id == workspace.id and s.conversation_id is not None]
        return known[0] if known else None

    def review_conversation(self, conversation_id: int) -> None:
        """Review the workspace a sub-agent of that conversation worked in."""
        self.tasks.run(self._review_conversation(conversation_id))

    async def _review_conversation(self, conversation_id: int) -> None:
        import asyncio

        found = [w for w in await asyncio.to_thread(self.worktrees.all)
                 if w.ready and w.conversation_id == conversation_id]
        if not found:
            self._status("Its changes are no longer waiting for review (applied or removed).")
            return
        self._know(found[0])
        self.review(found[0])

    def _keep(self, dialog: QWidget) -> None:
        """Shown, and referenced while open (closed ones are let go)."""
        self.dialogs = [d for d in self.dialogs if shiboken6.isValid(d) and d.isVisible()]
        self.dialogs.append(dialog)
        dialog.show()

    def show_stale(self) -> QWidget:
        from app.ui.dialogs.stale_workspaces import StaleWorkspacesDialog

        dialog = StaleWorkspacesDialog(self.worktrees, self._conversation_exists,
                                       removed=self.forget, parent=self._window)
        self._keep(dialog)
        return dialog

    def _conversation_exists(self, conversation_id: int) -> bool:
        try:
            self._services.conversations.get(conversation_id)
        except KeyError:
            return False
        return True
