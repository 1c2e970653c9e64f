"""The note above a sent message in the transcript naming its attachments ("Attached: …"),
shown when it is sent and when a conversation is reopened; it goes when the message does."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QWidget

from app.core.agent.attachments import AttachmentInfo
from app.ui.widgets.transcript_view import Transcript


class AttachmentNote(QLabel):
    """A sent message's attachments, above it in the transcript."""

    def __init__(self, infos: Sequence[AttachmentInfo]) -> None:
        super().__init__("Attached: " + ", ".join(info.label for info in infos))
        self.setObjectName("attachment-note")
        self.infos = list(infos)
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setWordWrap(True)
        self.setAlignment(Qt.AlignmentFlag.AlignRight)
        self.setStyleSheet("QLabel { color: palette(placeholder-text); }")


def add_attachment_note(transcript: Transcript, view: QWidget,
                        infos: Sequence[AttachmentInfo]) -> AttachmentNote | None:
    """Show ``infos`` above the message ``view``; the note goes when the message does (an
    edit removes the message from the transcript)."""
    if not infos:
        return None
    note = AttachmentNote(infos)
    transcript.insert_before(note, view)

    def drop(*_args: object) -> None:
        try:
            transcript.remove(note)
        except RuntimeError:  # the transcript itself is gone (the window closed)
            pass

    view.destroyed.connect(drop)
    return note
