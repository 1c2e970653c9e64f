"""The AI panel's conversations: the row with the conversation picker, the open conversation's
title and New conversation; the project's conversation list below it; opening a stored
conversation (a long one a page at a time: conversation_pager), starting a new one, and
following the project the window opens.

It decides which conversation the panel shows, never what a run does. The conversation list is
built when first shown (or asked for), and the conversation replay imported when the first
conversation is opened (or before, off the GUI thread, by app.startup_threads' warm-up): the
panel is ready without them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QPushButton, QToolButton

from app.ui.ai_panel.paging import BATCH_MS, PAGE_MESSAGES, WINDOW_MESSAGES
from app.ui.elided_label import ElidedLabel

if TYPE_CHECKING:
    from app.core.agent.checkpointing import Checkpointer
    from app.core.permissions.egress import SecretMatcher
    from app.core.services import Services
    from app.ui.ai_panel.conversation_pager import ConversationPager
    from app.ui.ai_panel.ports import ReplayedCards, RunState, SessionSwitch, Status
    from app.ui.ai_panel.widget_slot import WidgetSlot
    from app.ui.widgets.conversation_list import ConversationList
    from app.ui.widgets.tool_card import ToolCard
    from app.ui.widgets.transcript_view import RunFooter, Transcript

log = logging.getLogger(__name__)


class Conversations:
    """``button``, ``title`` and ``new_button`` go in the conversation row (placed by the
    panel); the list goes in ``list_slot`` when it is first shown or asked for."""

    def __init__(self, services: Services, sessions: SessionSwitch, runs: RunState,
                 project_root: Callable[[], Path | None], status: Status,
                 transcript: Transcript, replayed: ReplayedCards, list_slot: WidgetSlot, *,
                 clear_panel: Callable[[], None], show_state: Callable[[], None]) -> None:
        """``clear_panel`` empties the panel for another conversation; ``show_state`` shows
        the open one's flow labels and usage."""
        self._services = services
        self._sessions = sessions
        self._runs = runs
        self._project_root = project_root
        self._status = status
        self._transcript = transcript
        self._replayed = replayed
        self._list_slot = list_slot
        self._clear_panel = clear_panel
        self._show_state = show_state
        # The open conversation's title; the button shows the project's conversations below.
        self.button = QToolButton()
        self.button.setObjectName("conversations-button")
        self.button.setText("Conversations")
        self.button.setCheckable(True)
        self.button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.button.setArrowType(Qt.ArrowType.RightArrow)
        self.button.setToolTip("This project's conversations: search, open, rename, delete, "
                               "export")
        self.title = ElidedLabel("New conversation")
        self.title.setObjectName("conversation-title")
        self.title.setMinimumWidth(80)
        self.title.setTextFormat(Qt.TextFormat.PlainText)
        self._list: ConversationList | None = None
        self.new_button = QPushButton("New conversation")
        self.new_button.clicked.connect(self.new_conversation)
        self.button.toggled.connect(self.show_list)

    @property
    def conversation_list(self) -> ConversationList:
        """The project's conversations (hidden until the button is checked), built and read
        on first use."""
        if self._list is None:
            from app.ui.widgets.conversation_list import ConversationList

            found = self._list = ConversationList(self._services.conversations)
            found.hide()
            self._list_slot.add(found)
            found.opened.connect(self._on_picked)
            found.deleted.connect(self._on_deleted)
            found.renamed.connect(self._on_renamed)
            found.status_message.connect(self._status)
            found.can_delete = self._can_delete
            found.secret_matchers = self._secret_matchers
            root = self._project_root()
            found.set_project(str(root) if root is not None else None)
            found.set_current(self._current())
            found.refresh()
        return self._list

    def _current(self) -> int | None:
        session = self._sessions.session
        return session.conversation_id if session is not None else None

    def new_conversation(self) -> None:
        # A run going on here goes on in the background (SessionHolder.discard).
        self._sessions.discard()
        self._clear_panel()
        self.refresh()
        self._show_state()

    def refresh(self) -> None:
        """The list marks the open conversation and reads its rows again (off the GUI thread);
        the open one is remembered as the project's last."""
        current = self._current()
        if self._list is not None:  # else read when first shown
            self._list.set_current(current)
            self._list.refresh()
        if current is None:
            self.title.setText("New conversation")
            return
        self._show_title(current)
        root = self._project_root()
        if root is not None:
            self._services.settings.set_last_conversation(str(root), current)

    def _show_title(self, conversation_id: int) -> None:
        from app.ui.widgets.conversation_rows import conversation_title

        # One row by its primary key: cheap on the GUI thread.
        try:
            title = conversation_title(self._services.conversations.get(conversation_id))
        except KeyError:
            title = "New conversation"
        self.title.setText(title)
        self.title.setToolTip(title)

    def show_list(self, shown: bool = True) -> None:
        """Show (and focus the search of) the project's conversations, or hide them."""
        self.button.setChecked(shown)
        self.button.setArrowType(Qt.ArrowType.DownArrow if shown else Qt.ArrowType.RightArrow)
        self.conversation_list.setVisible(shown)
        if shown:
            self.conversation_list.refresh()  # "today 14:02" may be yesterday's by now
            self.conversation_list.search.setFocus()

    def project_opened(self, root: Path | None) -> None:
        """The window opened ``root``: the list follows it and, unless a run is going on or a
        conversation is open, the project's last conversation is reopened."""
        if self._list is not None:  # else it reads the project when built
            self._list.set_project(str(root) if root is not None else None)
        if root is not None and self._sessions.session is None and not self._runs.running:
            last = self._services.settings.last_conversation(str(root))
            if last is not None and self._belongs_to(last, root):
                self.open(last)
                return
        self.refresh()

    def _belongs_to(self, conversation_id: int, root: Path) -> bool:
        try:
            return self._services.conversations.get(conversation_id).project_root == str(root)
        except KeyError:  # deleted since
            return False

    def _on_picked(self, conversation_id: int) -> None:
        self.open(conversation_id)  # a run going on here goes on in the background

    def _on_deleted(self, conversation_id: int) -> None:
        root = self._project_root()
        settings = self._services.settings
        if root is not None and settings.last_conversation(str(root)) == conversation_id:
            settings.set_last_conversation(str(root), None)
        if self._current() == conversation_id:
            self.new_conversation()
        self._status("Conversation deleted.")

    def _secret_matchers(self, conversation_id: int) -> list[SecretMatcher]:
        """What an export of the conversation redacts beyond token formats: the secrets the
        machine knows and, for the open conversation, those it read (held in memory only)."""
        matchers = [self._services.permissions.known_secrets]
        session = self._sessions.session
        if session is not None and session.conversation_id == conversation_id:
            matchers.append(session.flow.secrets)
        return matchers

    def _can_delete(self, conversation_id: int) -> bool:
        """Not the conversation a run is adding to (stop it first)."""
        return not (self._runs.running and self._current() == conversation_id) and \
            not self._sessions.running_in_background(conversation_id)

    def _on_renamed(self, conversation_id: int, title: str) -> None:
        if self._current() == conversation_id:
            self.title.setText(title)
            self.title.setToolTip(title)

    def open(self, conversation_id: int, *, window: int = WINDOW_MESSAGES,
             page: int = PAGE_MESSAGES, batch_ms: float = BATCH_MS) -> ConversationPager:
        """Open a stored conversation: clear the panel, start a session on it and show its
        end at once; the pager brings earlier pages as the person scrolls up, so a long one
        neither freezes the window nor fills memory."""
        import asyncio

        from app.ui.ai_panel.conversation_pager import ConversationPager
        from app.ui.controllers.checkpoints import loop_running
        from app.ui.widgets.conversation_replay import read_conversation

        self._clear_panel()
        stored = read_conversation(self._services, conversation_id)
        root = self._project_root()
        self._sessions.discard()
        if root is not None:
            self._sessions.open(root, conversation_id)

        def connect(cards: dict[str, ToolCard], footers: list[RunFooter]) -> None:
            self._replayed.adopt(cards, footers)
            executions = {tool_use_id: stored.executions[tool_use_id] for tool_use_id in cards
                          if tool_use_id in stored.executions}
            session = self._sessions.session
            own = session.checkpointer if session is not None else None
            for checkpointer, theirs in self._by_checkpointer(own, executions):
                if checkpointer is not None and loop_running() and \
                        any(e.changes for e in theirs.values()):
                    task = asyncio.ensure_future(self._load_changes(checkpointer, cards, theirs))
                    pager.tasks.add(task)
                    task.add_done_callback(pager.tasks.discard)

        pager = ConversationPager(self._services, stored, self._transcript, connect,
                                  window=window, page=page, batch_ms=batch_ms)
        pager.start()
        self.refresh()
        self._show_state()
        return pager

    def _by_checkpointer(self, own: Checkpointer | None, executions: dict[str, Any]
                         ) -> list[tuple[Checkpointer | None, dict[str, Any]]]:
        """The calls' change sets are the conversation's project's (``own``); an apply from
        Review changes names the project it went into (app.core.worktrees.apply_record)."""
        from app.core.worktrees.apply_record import changes_project

        groups: dict[Path | None, dict[str, Any]] = {}
        for tool_use_id, execution in executions.items():
            groups.setdefault(changes_project(execution), {})[tool_use_id] = execution
        return [(own if project is None else self._services.checkpointer_for(project), rows)
                for project, rows in groups.items()]

    async def _load_changes(self, checkpointer: Checkpointer, cards: dict[str, ToolCard],
                            executions: dict[str, Any]) -> None:
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
        self._replayed.after_restore()
