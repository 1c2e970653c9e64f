"""The AI panel's conversation actions: edit and resend, regenerate, copy the last answer (the
agent's side is app.core.agent.forking).

- **Edit** (a person's message): its text goes back into the prompt with a banner saying so,
  and its attachments back on the tray (``edit_attachments``); Send then removes that message
  and everything after it from the transcript, the store and the session's history, and sends
  the new text with what is on the tray. Cancel (or Escape) leaves everything as it was;
  after either, what the person had typed and attached for a new message is back.
  Tool calls that ran after it stay in the tool history (the audit trail is history) and
  their file changes stay ("Restore to before this message" undoes them).
- **Regenerate** (the last answer): sets everything after the last message of the person
  aside as a version of the answer and asks again; ``answer_end`` shows the versions
  ("‹ 1/2 ›") and a prompt left unanswered (with Resend, which is Regenerate for it).

None of them while a run is going. Keyboard (``shortcuts``, installed by the panel):
Ctrl+Shift+E edits the last message, Ctrl+Shift+R regenerates, Ctrl+Shift+C copies the last
answer; Escape in the prompt cancels an edit.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QWidget

from app.ui.ai_panel.answer_end import AnswerEnd
from app.ui.ai_panel.edit_attachments import EditAttachments
from app.ui.ai_panel.on_demand import OnDemand
from app.ui.ai_panel.ports import idle_session
from app.ui.message_shortcuts import MESSAGE_SHORTCUTS
from app.ui.widgets.attachment_note import add_attachment_note
from app.ui.widgets.transcript_view import MessageView

if TYPE_CHECKING:
    from app.core.agent.session import AgentSession
    from app.ui.ai_panel.ports import RunStarter, SessionSource, Status
    from app.ui.widgets.attachments import AttachmentTray, PromptEdit
    from app.ui.widgets.transcript_view import Transcript


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


class ConversationActions:
    """``edit_banner``: made by the first edit and placed by the panel's ``place_banner`` above
    the prompt; ``editing``: the message being edited (None: no edit open)."""

    def __init__(self, transcript: Transcript, prompt: PromptEdit, tray: AttachmentTray,
                 sessions: SessionSource, runs: RunStarter, status: Status, *,
                 send: Callable[[str], bool], cut: Callable[[QWidget | None], None],
                 reopen: Callable[[int], object],
                 place_banner: Callable[[QWidget], None]) -> None:
        """``send`` sends a prompt as Send does; ``cut`` takes a widget and everything after
        it out of the transcript (with the panel's bookkeeping of it), and leaves the next
        run's cards to start from none; ``reopen`` opens a stored conversation again."""
        self._transcript = transcript
        self._prompt = prompt
        self._tray = tray
        self._sessions = sessions
        self._runs = runs
        self._status = status
        self._send = send
        self._cut = cut
        self.editing: MessageView | None = None
        self._draft = ""  # the prompt's text before Edit, put back by Cancel
        self.edit_attachments = EditAttachments(transcript, tray, sessions, status)
        self._banner = OnDemand(self._make_banner, place_banner)
        self.answer_end = AnswerEnd(transcript, sessions, runs, status,
                                    resend=self.regenerate, reopen=reopen)
        transcript.message_action.connect(self._on_message_action)
        escape = QShortcut(QKeySequence(Qt.Key.Key_Escape), prompt)
        escape.setContext(Qt.ShortcutContext.WidgetShortcut)
        escape.activated.connect(self.cancel_edit)

    def _make_banner(self) -> EditBanner:
        banner = EditBanner()
        banner.cancel_button.clicked.connect(self.cancel_edit)
        return banner

    @property
    def edit_banner(self) -> EditBanner:
        return self._banner.widget

    def _hide_banner(self) -> None:
        if (banner := self._banner.built) is not None:
            banner.hide()

    def shortcuts(self) -> list[tuple[str, Callable[[], bool]]]:
        """The keys (anywhere in the panel) and what they do."""
        return [(keys, getattr(self, method)) for keys, _name, method in MESSAGE_SHORTCUTS]

    # -- the transcript ------------------------------------------------------------------------

    def _messages(self, role: str) -> list[MessageView]:
        return [w for w in self._transcript.items()
                if isinstance(w, MessageView) and w.role == role]

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
        return idle_session(self._sessions, self._runs, self._status)

    # -- edit and resend -----------------------------------------------------------------------

    def start_edit(self, view: MessageView) -> bool:
        users = self._messages("user")
        if self._blocked() is None or view not in users:
            return False
        first = self.editing is None
        if first:
            self._draft = self._prompt.toPlainText()
        # Counted from the start of the stored conversation: a long one shows only its end.
        index = self._transcript.hidden_prompts + users.index(view)
        self.edit_attachments.start(view, index, first=first)
        self.editing = view
        self._prompt.setPlainText(view.markdown)
        self._prompt.setFocus()
        self.edit_banner.show()
        return True

    def edit_last(self) -> bool:
        users = self._messages("user")
        return bool(users) and self.start_edit(users[-1])

    def cancel_edit(self) -> None:
        if self.editing is None:
            return
        self.editing = None
        self._hide_banner()
        self._prompt.setPlainText(self._draft)
        self._draft = ""
        self.edit_attachments.end()

    def send_edit(self, text: str) -> bool:
        """Send (while editing): fork the conversation at the edited message."""
        view = self.editing
        draft = self._prompt.toPlainText()
        if view is not None and text != draft.strip():
            # Another sender while editing (the round cap's Continue): a normal prompt; the
            # edit stays open.
            self.editing = None
            try:
                return self._send(text)
            finally:
                self.editing = view
                self._prompt.setPlainText(draft)
        session = self._blocked()
        if view is None or session is None:
            return False
        users = self._messages("user")
        if view not in users:  # the transcript changed meanwhile
            self.cancel_edit()
            return False
        tray = self._tray
        if tray.busy:
            self._status("Still reading the attachments; send again in a moment.")
            return False
        attachments = tray.attachments()
        if not (text or attachments):
            return False
        if not text:
            from app.core.agent.attachments import default_prompt

            text = default_prompt(attachments)
        index = self._transcript.hidden_prompts + users.index(view)
        # What the person had typed and attached for a new message comes back.
        draft, self.editing, self._draft = self._draft, None, ""
        self._hide_banner()
        self._prompt.setPlainText(draft)
        self.edit_attachments.end()
        self._cut(view)
        sent = self._transcript.add(MessageView(text, "user"))
        add_attachment_note(self._transcript, sent, [a.info for a in attachments])
        self._runs.start(session.resend_from(index, text, attachments))
        return True

    # -- regenerate ------------------------------------------------------------------------

    def regenerate(self) -> bool:
        session = self._blocked()
        if session is None:
            return False
        users = self._messages("user")
        if not users:
            self._status("There is no answer to regenerate.")
            return False
        items = self._transcript.items()
        after = items.index(users[-1]) + 1
        self._cut(items[after] if after < len(items) else None)
        self._runs.start(session.regenerate())
        return True

    def copy_last_answer(self) -> bool:
        answers = self._messages("assistant")
        if not answers:
            return False
        from app.ui.widgets.message_actions import copy_message

        copy_message(answers[-1])
        self._status("Copied the last answer.")
        return True

    def reset(self) -> None:
        """Another conversation: no edit in progress."""
        if self.editing is not None:
            self.cancel_edit()
