"""The AI panel's conversations: the row with the conversation picker, the open conversation's
title and New conversation; the project's conversation list below it; opening (replaying) a
stored conversation, starting a new one, and following the project the window opens.

A mixin of ``AIPanel`` (app.ui.widgets.ai_panel), apart from the run and its rendering: it
decides which conversation the panel shows, never what a run does. The conversation list is
built when first shown (or asked for), and the conversation replay imported when the first
conversation is opened (or before, off the GUI thread, by app.startup_threads' warm-up): the
panel is ready without them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QToolButton, QVBoxLayout

if TYPE_CHECKING:
    import asyncio  # imported where used: the ready window loads before the event loop

    from app.core.agent.checkpointing import Checkpointer
    from app.core.agent.session import AgentSession
    from app.core.permissions.egress import SecretMatcher
    from app.ui.widgets.conversation_actions import ConversationActions
    from app.ui.widgets.conversation_list import ConversationList
    from app.ui.widgets.tool_card import ToolCard
    from app.ui.widgets.transcript_view import ErrorCard
    from app.ui.widgets.undo_actions import UndoActions

    _Base = UndoActions  # its project_opened comes after this one's (AIPanel's bases)
else:
    _Base = object

log = logging.getLogger(__name__)


class ConversationSwitching(_Base):
    """Mixin of AIPanel (see the module docstring)."""

    session: AgentSession | None
    conversation_actions: ConversationActions
    cards: dict[str, ToolCard]
    _changes_task: asyncio.Future[None] | None
    _project_hint: ErrorCard | None
    _project_root: Callable[[], Path | None]

    if TYPE_CHECKING:
        def _discard_session(self) -> None: ...
        def _new_session(self, root: Path, conversation_id: int | None = None
                         ) -> AgentSession: ...
        def _drop_project_hint(self) -> None: ...
        def _show_flow(self) -> None: ...

    def _build_conversation_row(self) -> QHBoxLayout:
        """The picker button, the open conversation's title and New conversation, in a row.
        The list goes in ``conversation_list_slot`` (placed by the panel) when it is first
        shown or asked for (``conversation_list``): the panel is ready without it."""
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
        self._conversation_list: ConversationList | None = None
        self.conversation_list_slot = QVBoxLayout()
        self.conversation_list_slot.setContentsMargins(0, 0, 0, 0)
        self.new_button = QPushButton("New conversation")
        row = QHBoxLayout()
        row.addWidget(self.conversations_button)
        row.addWidget(self.conversation_title, 1)
        row.addWidget(self.new_button)
        self.new_button.clicked.connect(self.new_conversation)
        self.conversations_button.toggled.connect(self.show_conversation_list)
        return row

    @property
    def conversation_list(self) -> ConversationList:
        """The project's conversations (hidden until the button is checked), built and read
        on first use."""
        if self._conversation_list is None:
            from app.ui.widgets.conversation_list import ConversationList

            found = self._conversation_list = ConversationList(self.services.conversations)
            found.hide()
            self.conversation_list_slot.addWidget(found)
            found.opened.connect(self._on_conversation_picked)
            found.deleted.connect(self._on_conversation_deleted)
            found.renamed.connect(self._on_conversation_renamed)
            found.status_message.connect(self.status_message)
            found.can_delete = self._can_delete
            found.secret_matchers = self._secret_matchers
            root = self._project_root()
            found.set_project(str(root) if root is not None else None)
            found.set_current(self.session.conversation_id if self.session is not None
                              else None)
            found.refresh()
        return self._conversation_list

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
        if self._conversation_list is not None:  # else read when first shown
            self._conversation_list.set_current(current)
            self._conversation_list.refresh()
        if current is None:
            self.conversation_title.setText("New conversation")
            return
        self._show_title(current)
        root = self._project_root()
        if root is not None:
            self.services.settings.set_last_conversation(str(root), current)

    def _show_title(self, conversation_id: int) -> None:
        from app.ui.widgets.conversation_rows import conversation_title

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
        if self._conversation_list is not None:  # else it reads the project when built
            self._conversation_list.set_project(str(root) if root is not None else None)
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

    def _secret_matchers(self, conversation_id: int) -> list[SecretMatcher]:
        """What an export of the conversation redacts beyond token formats: the secrets the
        machine knows and, for the open conversation, those it read (held in memory only)."""
        matchers = [self.services.permissions.known_secrets]
        if self.session is not None and self.session.conversation_id == conversation_id:
            matchers.append(self.session.flow.secrets)
        return matchers

    def _can_delete(self, conversation_id: int) -> bool:
        """Not the conversation a run is adding to (stop it first)."""
        return not (self.running and self.session is not None
                    and self.session.conversation_id == conversation_id)

    def _on_conversation_renamed(self, conversation_id: int, title: str) -> None:
        if self.session is not None and self.session.conversation_id == conversation_id:
            self.conversation_title.setText(title)
            self.conversation_title.setToolTip(title)

    def load_conversation(self, conversation_id: int) -> None:
        """Open a stored conversation: its end at once, earlier pages as the person scrolls
        up (conversation_pager), so a long one neither freezes the window nor fills memory."""
        from app.ui.widgets.conversation_pager import open_conversation

        open_conversation(self, conversation_id)  # type: ignore[arg-type]  # a mixin of AIPanel

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
