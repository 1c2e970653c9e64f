"""Edit and resend keeps the message's attachments (app.ui.ai_panel.conversation_actions).

Editing a person's message sets the tray's chips aside (what they had attached for a new
message) and puts the edited message's attachments on the tray: a chip "reading…" for each
one its note shows, filled from the stored prompt (app.core.agent.forking.prompt_content,
read off the GUI thread; the store holds them as content blocks, so a conversation reopened
after a restart works the same). The person may remove any or add more; the resent message
carries what is on the tray. An attachment that cannot be restored (a damaged or unknown
stored block) is left out and the panel's status says so. Cancelling the edit, or sending it,
puts the chips that were set aside back.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import TYPE_CHECKING

from app.core.agent.attachments import Attachment, restore_attachments
from app.ui.controllers.checkpoints import loop_running
from app.ui.widgets.attachment_note import AttachmentNote
from app.ui.widgets.attachments import AttachmentChip

if TYPE_CHECKING:
    import asyncio  # imported where used: the ready window loads before the event loop

    from PySide6.QtWidgets import QWidget

    from app.core.agent.session import AgentSession
    from app.ui.ai_panel.ports import SessionSource, Status
    from app.ui.widgets.attachments import AttachmentTray
    from app.ui.widgets.transcript_view import Transcript

log = logging.getLogger(__name__)

NOT_RESTORED = "Not put back on the tray: "


def note_of(transcript: Transcript, view: QWidget) -> AttachmentNote | None:
    """The attachment note shown just above the message ``view``, if any."""
    items = transcript.items()
    if view not in items:
        return None
    at = items.index(view)
    above = items[at - 1] if at > 0 else None
    return above if isinstance(above, AttachmentNote) else None


class EditAttachments:
    """The tray's side of one edit at a time: ``start``, then ``end``."""

    def __init__(self, transcript: Transcript, tray: AttachmentTray, sessions: SessionSource,
                 status: Status) -> None:
        self._transcript = transcript
        self._tray = tray
        self._sessions = sessions
        self._status = status
        self._task: asyncio.Future[None] | None = None

    def start(self, view: QWidget, prompt_index: int, *, first: bool) -> None:
        """``view`` (the ``prompt_index``-th prompt) is being edited; ``first``: no other
        edit was open (the tray holds a new message's chips, set aside until ``end``)."""
        import asyncio

        tray = self._tray
        self.stop_loading()
        if first:
            tray.set_aside()
        else:  # another message's edit was open: its attachments go
            tray.clear()
        note = note_of(self._transcript, view)
        chips = [tray.add_pending(info.name) for info in (note.infos if note else [])]
        session = self._sessions.session
        if session is None:
            self._settle(chips, [], [])
        elif loop_running():
            self._task = asyncio.ensure_future(self._load(session, prompt_index, chips))
        else:  # no event loop (a script or a synchronous test): read here
            self._settle(chips, *self._read_now(session, prompt_index))

    @property
    def loading(self) -> bool:
        return self._task is not None and not self._task.done()

    def end(self) -> None:
        """The edit was cancelled or sent: the chips set aside are back on the tray."""
        self.stop_loading()
        self._tray.put_back()

    def stop_loading(self) -> None:
        """Stop restoring the edited message's attachments (the edit ended, or the panel is
        going away)."""
        if self._task is not None:
            self._task.cancel()
            self._task = None

    @staticmethod
    def _read_now(session: AgentSession, prompt_index: int
                  ) -> tuple[list[Attachment | None], list[str]]:
        try:
            return restore_attachments(session.stored_prompt_content(prompt_index))
        except Exception:  # a store that cannot be read must not break the edit
            log.exception("reading the edited message's attachments failed")
            return [], ["the message's attachments could not be read"]

    async def _load(self, session: AgentSession, prompt_index: int,
                    chips: list[AttachmentChip]) -> None:
        import asyncio

        try:
            content = await session.prompt_content(prompt_index)
            restored, problems = await asyncio.to_thread(restore_attachments, content)
        except asyncio.CancelledError:
            raise
        except Exception:  # a store that cannot be read must not break the edit
            log.exception("reading the edited message's attachments failed")
            restored, problems = [], ["the message's attachments could not be read"]
        self._task = None
        self._settle(chips, restored, problems)

    def _settle(self, chips: list[AttachmentChip], restored: list[Attachment | None],
                problems: list[str]) -> None:
        """Fill the pending chips in order (the note and the stored blocks have the same
        order); a chip the person removed meanwhile stays removed."""
        tray = self._tray
        for at, attachment in enumerate(restored):
            chip = chips[at] if at < len(chips) else None
            if attachment is None:
                if chip is not None:
                    tray.remove(chip)
            elif chip is None:
                tray.add_attachment(attachment)
            else:
                # A stored image block has no name; the note of a message sent in this
                # session still knows the file's.
                if attachment.kind == "image" and chip.name:
                    attachment = replace(attachment, name=chip.name)
                tray.settle(chip, attachment)
        for chip in chips[len(restored):]:  # the store no longer has them
            tray.remove(chip)
        if problems:
            self._status(NOT_RESTORED + "; ".join(problems) + ".")
