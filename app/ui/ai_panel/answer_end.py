"""The end of the conversation shown, as the store has it: the versions of the last answer
("‹ 1/2 ›") and a last prompt the model never answered (marked, with Resend).

Both are read from the session (``forking.versions``, ``forking.ends_unanswered``) after each
run and when a conversation is opened, so a live conversation and a reloaded one look the
same. The arrows make another version the conversation's answer (the next prompt continues
from it) and the conversation is opened again from the store. Resend sends the unanswered
prompt again as its own turn (Regenerate with no answer to set aside); a new message sent
instead takes its place, in the store (``AgentSession.run``) and here: the unanswered
prompt leaves the transcript when the run of the new one starts.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from shiboken6 import isValid

from app.ui.task_set import TaskSet
from app.ui.tones import follow_palette
from app.ui.widgets.answer_end import UnansweredBar, VersionSwitch, unanswered_style
from app.ui.widgets.transcript_view import USER_MESSAGE_STYLE, MessageView

if TYPE_CHECKING:
    from app.core.agent.session import AgentSession
    from app.ui.ai_panel.ports import RunState, SessionSource, Status
    from app.ui.widgets.transcript_view import Transcript


class AnswerEnd:
    """``refresh`` after a run and on opening; ``on_running`` around each run."""

    def __init__(self, transcript: Transcript, sessions: SessionSource, runs: RunState,
                 status: Status, *, resend: Callable[[], bool],
                 reopen: Callable[[int], object]) -> None:
        self._transcript = transcript
        self._sessions = sessions
        self._runs = runs
        self._status = status
        self._resend = resend
        self._reopen = reopen
        self.switch: VersionSwitch | None = None
        self.unanswered: tuple[MessageView, UnansweredBar] | None = None
        self._generation = 0  # a newer refresh, or another conversation: older answers drop
        self._tasks = TaskSet("the conversation's end",
                              lambda exc: status(f"Could not read the conversation: {exc}"))
        transcript.cleared.connect(self._forget)

    def _forget(self) -> None:
        """The transcript was cleared: its widgets are gone with it."""
        self._generation += 1
        self.switch = None
        self.unanswered = None

    def on_running(self, running: bool) -> None:
        if not running:
            self.refresh()
            return
        self._generation += 1
        self._drop_replaced_prompt()
        if self.switch is not None and isValid(self.switch):  # an edit may have cut it
            self.switch.set_enabled(False)
        if self.unanswered is not None:
            self._unmark()

    def refresh(self) -> None:
        """Read the end of the conversation shown and show it (in a task: the store)."""
        from app.ui.controllers.checkpoints import loop_running

        self._generation += 1
        session = self._sessions.session
        if session is None or not loop_running():
            self._show(None, False)
            return
        self._tasks.run(self._read(session, self._generation))

    async def _read(self, session: AgentSession, generation: int) -> None:
        try:
            versions = await session.forking.versions()
            unanswered = await session.forking.ends_unanswered()
        except RuntimeError:  # the event loop closed under it (quitting): nothing to show
            return
        if generation == self._generation and self._sessions.session is session and \
                not self._runs.running:
            self._show(versions, unanswered)

    def _show(self, versions: tuple[int, int] | None, unanswered: bool) -> None:
        transcript = self._transcript
        if self.switch is not None and isValid(self.switch):
            transcript.remove(self.switch)
            self.switch = None
        self._unmark()
        prompts = [w for w in transcript.items()
                   if isinstance(w, MessageView) and w.role == "user"]
        if unanswered and prompts:
            self._mark(prompts[-1])
        if versions is not None:
            switch = self.switch = VersionSwitch(*versions)
            switch.chosen.connect(self._choose)
            transcript.add(switch)

    # -- an unanswered prompt ---------------------------------------------------------------

    def _mark(self, view: MessageView) -> None:
        bar = UnansweredBar()
        bar.resend.connect(self._resend_clicked)
        items = self._transcript.items()
        after = items.index(view) + 1
        self._transcript.insert_before(bar, items[after] if after < len(items) else None)
        view.setProperty("unanswered", True)
        follow_palette(view, unanswered_style)
        self.unanswered = (view, bar)

    def _unmark(self) -> None:
        if self.unanswered is None:
            return
        view, bar = self.unanswered
        self.unanswered = None
        self._transcript.remove(bar)
        if not isValid(view):
            return  # cut from the transcript (an edit of it)
        view.setProperty("unanswered", False)
        follow_palette(view, USER_MESSAGE_STYLE)

    def _resend_clicked(self) -> None:
        self._resend()  # Regenerate: cuts what followed the prompt, sends it again

    def _drop_replaced_prompt(self) -> None:
        """A new prompt was sent after the unanswered one: the store has only the new one, so
        the old one (with the failure shown under it) leaves the transcript too."""
        if self.unanswered is None:
            return
        view = self.unanswered[0]
        self._unmark()
        items = self._transcript.items()
        if view not in items:
            return
        start = items.index(view)
        newer = next((i for i, w in enumerate(items) if i > start and
                      isinstance(w, MessageView) and w.role == "user"), None)
        if newer is None:
            return  # a Retry or a compaction: the prompt is still the conversation's
        from app.ui.widgets.attachment_note import AttachmentNote

        stop = newer - 1 if isinstance(items[newer - 1], AttachmentNote) else newer
        for widget in items[start:stop]:  # its note goes with it (add_attachment_note)
            self._transcript.remove(widget)

    # -- versions -------------------------------------------------------------------------

    def _choose(self, position: int) -> None:
        from app.ui.ai_panel.ports import idle_session

        session = idle_session(self._sessions, self._runs, self._status)
        if session is None or session.conversation_id is None:
            return
        self._tasks.run(self._show_version(session, position))

    async def _show_version(self, session: AgentSession, position: int) -> None:
        if self.switch is not None:
            self.switch.set_enabled(False)
        if not await session.forking.show_version(position):
            self._status("That version is no longer there.")
            self.refresh()
            return
        if self._sessions.session is session and session.conversation_id is not None:
            self._reopen(session.conversation_id)
