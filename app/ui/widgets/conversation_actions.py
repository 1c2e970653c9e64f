"""The AI panel's conversation actions: edit and resend, regenerate, the context bar and
compaction (the agent's side is app.core.agent.forking and app.core.agent.compaction).

- **Edit** (a person's message): its text goes back into the prompt with a banner saying so,
  and its attachments back on the tray (``edit_attachments``); Send then removes that message
  and everything after it from the transcript, the store and the session's history, and sends
  the new text with what is on the tray. Cancel (or Escape) leaves everything as it was;
  after either, what the person had typed and attached for a new message is back.
  Tool calls that ran after it stay in the tool history (the audit trail is history) and
  their file changes stay ("Restore to before this message" undoes them).
- **Regenerate** (the last answer): removes everything after the last message of the person
  and asks again.
- **Context bar**: the last request's input tokens against the model's context window; from
  80% on it offers Compact, and a request rejected for its length offers "Compact and retry"
  instead of a dead error.

None of them while a run is going. Keyboard: Ctrl+Shift+E edits the last message, Ctrl+Shift+R
regenerates, Ctrl+Shift+C copies the last answer; Escape in the prompt cancels an edit.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, QTimer
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QBoxLayout, QFrame, QHBoxLayout, QLabel, QPushButton, QWidget

from app.ui.controllers.checkpoints import loop_running
from app.ui.widgets.attachment_note import add_attachment_note
from app.ui.widgets.context_bar import ContextBar
from app.ui.widgets.edit_attachments import EditAttachments
from app.ui.widgets.transcript_view import ErrorCard, MessageView

if TYPE_CHECKING:
    import asyncio  # imported where used: the ready window loads before the event loop

    from app.core.agent.session import AgentSession
    from app.core.pricing import Usage
    from app.ui.widgets.ai_panel import AIPanel

log = logging.getLogger(__name__)

NOT_WHILE_RUNNING = "Stop or wait for the run to finish first."


class EditBanner(QFrame):
    """Above the prompt while an earlier message is being edited."""

    def __init__(self) -> None:
        super().__init__()
        self.setObjectName("edit-banner")
        self.setStyleSheet("QFrame#edit-banner { border: 1px solid palette(highlight); "
                           "border-radius: 6px; }")
        row = QHBoxLayout(self)
        row.setContentsMargins(6, 2, 6, 2)
        self.label = QLabel("Editing an earlier message: Send replaces it and everything "
                            "after it, and the conversation continues from there.")
        self.label.setWordWrap(True)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setObjectName("cancel-edit")
        row.addWidget(self.label, 1)
        row.addWidget(self.cancel_button)
        self.hide()


class ConversationActions(QObject):
    def __init__(self, panel: AIPanel) -> None:
        super().__init__(panel)
        self.panel = panel
        self.editing: MessageView | None = None
        self._draft = ""  # the prompt's text before Edit, put back by Cancel
        self.edit_attachments = EditAttachments(panel)
        self._model = ""  # of the last request (its context window)
        self._context_tasks: set[asyncio.Future[None]] = set()
        self.context_bar = ContextBar()
        self.edit_banner = EditBanner()
        layout = panel.layout()
        assert isinstance(layout, QBoxLayout)
        index = layout.indexOf(panel.usage_label)
        layout.insertWidget(index if index >= 0 else layout.count(), self.context_bar)
        layout.insertWidget(layout.indexOf(panel.usage_label) + 1, self.edit_banner)
        self.context_bar.compact_requested.connect(lambda: self.compact())
        self.edit_banner.cancel_button.clicked.connect(self.cancel_edit)
        panel.transcript.message_action.connect(self._on_message_action)
        panel.running_changed.connect(self.context_bar.set_busy)
        context = Qt.ShortcutContext.WidgetWithChildrenShortcut
        for keys, slot in (("Ctrl+Shift+E", self.edit_last), ("Ctrl+Shift+R", self.regenerate),
                           ("Ctrl+Shift+C", self.copy_last_answer)):
            shortcut = QShortcut(QKeySequence(keys), panel)
            shortcut.setContext(context)
            shortcut.activated.connect(slot)
        escape = QShortcut(QKeySequence(Qt.Key.Key_Escape), panel.prompt)
        escape.setContext(Qt.ShortcutContext.WidgetShortcut)
        escape.activated.connect(self.cancel_edit)

    # -- the transcript ------------------------------------------------------------------------

    def _messages(self, role: str) -> list[MessageView]:
        return [w for w in self.panel.transcript.items()
                if isinstance(w, MessageView) and w.role == role]

    def _remove_from(self, widget: QWidget) -> None:
        """Take ``widget`` and everything after it out of the transcript (and the panel's
        bookkeeping of cards and footers)."""
        from app.ui.widgets.tool_card import ToolCard

        panel = self.panel
        items = panel.transcript.items()
        if widget not in items:
            return
        for item in items[items.index(widget):]:
            if isinstance(item, ToolCard):
                panel.cards.pop(item.tool_use_id, None)
                panel._footers.pop(item.tool_use_id, None)
                if item in panel._run_cards:
                    panel._run_cards.remove(item)
            panel.transcript.remove(item)
        panel._current_text = None
        panel._refresh_restore_actions()

    def _on_message_action(self, kind: str, view: object) -> None:
        if not isinstance(view, MessageView):
            return
        # Loaded with the first message (transcript_view.MessageView), not with the panel.
        from app.ui.widgets.message_actions import EDIT, REGENERATE

        if kind == EDIT:
            self.start_edit(view)
        elif kind == REGENERATE:
            self.regenerate()

    def _blocked(self) -> AgentSession | None:
        """The session to fork, or None (with a status message) when that cannot be now."""
        if self.panel.running:
            self.panel.status_message.emit(NOT_WHILE_RUNNING)
            return None
        if self.panel.session is None:
            self.panel.status_message.emit("Open a project folder first.")
            return None
        return self.panel.session

    # -- edit and resend -----------------------------------------------------------------------

    def start_edit(self, view: MessageView) -> bool:
        users = self._messages("user")
        if self._blocked() is None or view not in users:
            return False
        first = self.editing is None
        if first:
            self._draft = self.panel.prompt.toPlainText()
        # Counted from the start of the stored conversation: a long one shows only its end.
        index = self.panel.transcript.hidden_prompts + users.index(view)
        self.edit_attachments.start(view, index, first=first)
        self.editing = view
        self.panel.prompt.setPlainText(view.markdown)
        self.panel.prompt.setFocus()
        self.edit_banner.show()
        return True

    def edit_last(self) -> bool:
        users = self._messages("user")
        return bool(users) and self.start_edit(users[-1])

    def cancel_edit(self) -> None:
        if self.editing is None:
            return
        self.editing = None
        self.edit_banner.hide()
        self.panel.prompt.setPlainText(self._draft)
        self._draft = ""
        self.edit_attachments.end()

    def send_edit(self, text: str) -> bool:
        """Send (while editing): fork the conversation at the edited message."""
        view = self.editing
        draft = self.panel.prompt.toPlainText()
        if view is not None and text != draft.strip():
            # Another sender while editing (the round cap's Continue): a normal prompt; the
            # edit stays open.
            self.editing = None
            try:
                return self.panel.send(text)
            finally:
                self.editing = view
                self.panel.prompt.setPlainText(draft)
        session = self._blocked()
        if view is None or session is None:
            return False
        users = self._messages("user")
        if view not in users:  # the transcript changed meanwhile
            self.cancel_edit()
            return False
        tray = self.panel.attachment_tray
        if tray.busy:
            self.panel.status_message.emit(
                "Still reading the attachments; send again in a moment.")
            return False
        attachments = tray.attachments()
        if not (text or attachments):
            return False
        if not text:
            from app.core.agent.attachments import default_prompt

            text = default_prompt(attachments)
        index = self.panel.transcript.hidden_prompts + users.index(view)
        # What the person had typed and attached for a new message comes back.
        draft, self.editing, self._draft = self._draft, None, ""
        self.edit_banner.hide()
        self.panel.prompt.setPlainText(draft)
        self.edit_attachments.end()
        self._remove_from(view)
        self.panel._run_cards.clear()
        sent = self.panel.transcript.add(MessageView(text, "user"))
        add_attachment_note(self.panel.transcript, sent, [a.info for a in attachments])
        self.panel._start(session.resend_from(index, text, attachments))
        return True

    # -- regenerate ------------------------------------------------------------------------

    def regenerate(self) -> bool:
        session = self._blocked()
        if session is None:
            return False
        users = self._messages("user")
        if not users:
            self.panel.status_message.emit("There is no answer to regenerate.")
            return False
        items = self.panel.transcript.items()
        after = items.index(users[-1]) + 1
        if after < len(items):
            self._remove_from(items[after])
        self.panel._run_cards.clear()
        self.panel._start(session.regenerate())
        return True

    def copy_last_answer(self) -> bool:
        answers = self._messages("assistant")
        if not answers:
            return False
        from app.ui.widgets.message_actions import copy_message

        copy_message(answers[-1])
        self.panel.status_message.emit("Copied the last answer.")
        return True

    # -- context and compaction ------------------------------------------------------------------

    def show_context(self, model: str, turn: Usage) -> None:
        """A model turn's usage arrived: its input is what the conversation takes now."""
        from app.core.agent.compaction import context_window

        self._model = model
        used = turn.input_tokens + turn.cache_write_tokens + turn.cache_read_tokens
        self.context_bar.show_usage(used, context_window(model))

    def offer_compaction(self, message: str) -> bool:
        """After a failed request: when it was too long for the context window, a card
        offering "Compact and retry"."""
        from app.core.agent.compaction import is_context_overflow

        if not is_context_overflow(message):
            return False
        card = QFrame()
        card.setObjectName("compact-offer")
        card.setStyleSheet("QFrame#compact-offer { border: 1px solid #bf8700; "
                           "border-radius: 8px; }")
        row = QHBoxLayout(card)
        label = QLabel("The conversation no longer fits the model's context window. Compact "
                       "it: a summary replaces the earlier history sent to the model (the "
                       "transcript stays), then your message is sent again.")
        label.setWordWrap(True)
        button = QPushButton("Compact and retry")
        button.setObjectName("compact-and-retry")

        def go() -> None:
            if self.compact(retry_after=True) is not None:
                button.setEnabled(False)

        button.clicked.connect(go)
        row.addWidget(label, 1)
        row.addWidget(button)
        self.panel.transcript.add(card)
        return True

    def compact(self, retry_after: bool = False) -> asyncio.Future[None] | None:
        session = self._blocked()
        if session is None:
            return None
        self.panel._start(self._compact(session, retry_after))
        return self.panel._task

    async def _compact(self, session: AgentSession, retry_after: bool) -> None:
        import asyncio

        from app.core.agent.compaction import CompactionError, context_window

        self.panel.status_message.emit("Compacting the conversation…")
        try:
            result = await session.compact()
        except asyncio.CancelledError:
            note = QLabel("■ Compaction stopped; nothing was changed.")
            note.setObjectName("cancelled-note")
            note.setStyleSheet("color: palette(placeholder-text);")
            self.panel.transcript.add(note)
            raise
        except CompactionError as exc:
            self.panel.transcript.add(ErrorCard(f"Not compacted: {exc.message}", False,
                                                lambda: None))
            return
        note = QLabel(f"⇣ Conversation compacted: {result.summarised} earlier messages are "
                      "sent to the model as a summary from now on (the transcript stays).")
        note.setObjectName("compaction-note")
        note.setWordWrap(True)
        note.setStyleSheet("color: palette(placeholder-text);")
        note.setToolTip(result.summary)
        self.panel.transcript.add(note)
        self.context_bar.show_usage(result.summary_tokens, context_window(self._model),
                                    estimate=True)
        if retry_after:
            self.panel._current_text = None
            await session.retry()

    def reset(self) -> None:
        """Another conversation: no edit in progress; the context figure of a reopened one
        is read from the store once the panel has its session."""
        if self.editing is not None:
            self.cancel_edit()
        self.context_bar.clear()
        if loop_running():
            QTimer.singleShot(0, self._show_stored_context)

    def _show_stored_context(self) -> None:
        import asyncio

        session = self.panel.session
        if session is None or session.conversation_id is None:
            return
        task = asyncio.ensure_future(self._load_context(session, session.conversation_id))
        self._context_tasks.add(task)
        task.add_done_callback(self._context_tasks.discard)

    async def _load_context(self, session: AgentSession, conversation_id: int) -> None:
        import asyncio

        from app.core.agent.compaction import context_window, stored_context

        try:
            found = await asyncio.to_thread(stored_context, self.panel.services.conversations,
                                            conversation_id)
        except Exception:  # a missing figure is no reason to fail the reopening
            log.exception("reading the conversation's last usage failed")
            return
        if found is None or self.panel.session is not session or self.context_bar.used:
            return  # another conversation meanwhile, or a request already said
        model, used, estimate = found
        self._model = model
        self.context_bar.show_usage(used, context_window(model), estimate=estimate)


def install_conversation_actions(panel: AIPanel) -> ConversationActions:
    return ConversationActions(panel)
