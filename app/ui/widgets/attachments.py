"""Attachments in the prompt box: drop or paste files and images, a chip per attachment.

``PromptEdit`` is the prompt: local files dropped or pasted on it (a file manager's copy, a
drag from anywhere) and image data pasted from the clipboard (a screenshot) go to the
``AttachmentTray`` instead of being inserted as text; any other text pastes as usual.

The tray reads each file in a worker thread (app.core.agent.attachments decides what it is and
checks the limits) and shows a chip per attachment: its name and size, or why it cannot be
sent (an error chip; it is never sent), and × to remove it. An image over the size limit, and
any pasted image, is scaled to at most ``MAX_EDGE`` pixels on its long side first: the API
scales larger images down to about that anyway, so the copy loses nothing the model would
see and keeps the stored conversation small.

Editing a sent message sets the tray's chips aside (``set_aside``) and puts the message's
attachments on it (``add_pending``, then ``settle``); cancelling the edit puts the chips that
were set aside back (``put_back``).

``add_attachment_note`` shows a sent message's attachments in the transcript, above the
message (names and sizes, never the content).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QImage
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QScrollArea,
    QToolButton,
    QWidget,
)

from app.core.agent.attachments import (
    MAX_IMAGE_BYTES,
    Attachment,
    AttachmentError,
    AttachmentTooLarge,
    attachment_from_bytes,
    describe,
    limit_error,
    read_attachment,
)
from app.ui.controllers.checkpoints import loop_running
from app.ui.tones import Tone, tone

if TYPE_CHECKING:
    import asyncio  # imported where used: the ready window loads before the event loop

    from PySide6.QtCore import QMimeData

log = logging.getLogger(__name__)

# The long edge the API scales images down to (its documented 1568 px).
MAX_EDGE = 1568


class PromptEdit(QPlainTextEdit):
    """The prompt box: dropped and pasted files and images become attachments."""

    files_dropped = Signal(list)  # local paths (str)
    image_pasted = Signal(QImage)

    def canInsertFromMimeData(self, source: QMimeData) -> bool:
        return bool(local_files(source)) or source.hasImage() or \
            super().canInsertFromMimeData(source)

    def insertFromMimeData(self, source: QMimeData) -> None:
        files = local_files(source)
        if files:
            self.files_dropped.emit(files)
            return
        image = image_of(source)
        if image is not None:
            self.image_pasted.emit(image)
            return
        super().insertFromMimeData(source)


def local_files(source: QMimeData) -> list[str]:
    """The local files among ``source``'s URLs (all of them local, or none: a mix of web
    links and files is text)."""
    if not source.hasUrls():
        return []
    urls = source.urls()
    if not urls or not all(url.isLocalFile() for url in urls):
        return []
    return [url.toLocalFile() for url in urls]


def image_of(source: QMimeData) -> QImage | None:
    if not source.hasImage():
        return None
    from PySide6.QtGui import QPixmap

    data = source.imageData()
    if isinstance(data, QPixmap):
        data = data.toImage()
    if not isinstance(data, QImage) or data.isNull():
        return None
    return data


class AttachmentChip(QFrame):
    """One attachment: reading…, its name and size, or what is wrong with it; × removes it."""

    remove_requested = Signal(object)

    def __init__(self, name: str) -> None:
        super().__init__()
        self.setObjectName("attachment-chip")
        self.name = name
        self.attachment: Attachment | None = None
        self.error: str | None = None
        self.pending = True
        self.task: asyncio.Future[None] | None = None
        row = QHBoxLayout(self)
        row.setContentsMargins(6, 1, 2, 1)
        row.setSpacing(2)
        self.label = QLabel(f"{name} · reading…")
        self.label.setTextFormat(Qt.TextFormat.PlainText)
        self.remove_button = QToolButton()
        self.remove_button.setObjectName("attachment-remove")
        self.remove_button.setText("×")
        self.remove_button.setAutoRaise(True)
        self.remove_button.setToolTip(f"Remove {name}")
        self.remove_button.clicked.connect(lambda: self.remove_requested.emit(self))
        row.addWidget(self.label)
        row.addWidget(self.remove_button)
        self._style(error=False)

    def set_ready(self, attachment: Attachment) -> None:
        self.pending, self.attachment, self.name = False, attachment, attachment.name
        shown = describe(attachment.media_type, attachment.size)
        self.label.setText(f"{attachment.name} · {shown}")
        self.setToolTip(f"{attachment.name}: sent with your next message")

    def set_error(self, message: str) -> None:
        self.pending, self.attachment, self.error = False, None, message
        # The reason's first clause on the chip ("x.bin: a binary file"), all of it on hover.
        self.label.setText(f"⚠ {_shortened(message.split(';')[0])}")
        self.setToolTip(f"{message}\nNot sent with your message; remove it with ×.")
        self._style(error=True)

    def _style(self, error: bool) -> None:
        self.setProperty("error", error)
        color = tone(Tone.DANGER).text.name() if error else "palette(mid)"
        self.setStyleSheet(f"QFrame#attachment-chip {{ border: 1px solid {color}; "
                           "border-radius: 9px; }" +
                           (f" QLabel {{ color: {color}; }}" if error else ""))


# The events a drop on the panel arrives in: its filter looks no further into any other.
_DROP_EVENTS = (QEvent.Type.DragEnter, QEvent.Type.DragMove, QEvent.Type.Drop)


class AttachmentTray(QScrollArea):
    """The chips under the prompt; hidden while there are none."""

    changed = Signal()

    def __init__(self, prompt: PromptEdit | None = None,
                 drop_target: QWidget | None = None) -> None:
        super().__init__()
        self.setObjectName("attachment-tray")
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        inner = QWidget()
        self._row = QHBoxLayout(inner)
        self._row.setContentsMargins(0, 0, 0, 0)
        self._row.addStretch(1)
        self.setWidget(inner)
        self.setMaximumHeight(40)
        self.chips: list[AttachmentChip] = []
        # The chips of a new message, off the tray while a sent one is edited; those still
        # being read go on being read.
        self._aside: list[AttachmentChip] = []
        self._pasted = 0
        self.hide()
        if prompt is not None:
            prompt.files_dropped.connect(self.add_paths)
            prompt.image_pasted.connect(self.add_image)
        if drop_target is not None:  # files dropped anywhere on it (the conversation, say)
            drop_target.setAcceptDrops(True)
            drop_target.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        kind = event.type()
        if kind not in _DROP_EVENTS:
            return super().eventFilter(watched, event)
        # The drag and drop event types load with the first drag: the ready window needs none.
        from PySide6.QtGui import QDragMoveEvent, QDropEvent

        if kind in (QEvent.Type.DragEnter, QEvent.Type.DragMove) and \
                isinstance(event, QDragMoveEvent):  # QDragEnterEvent is a QDragMoveEvent
            mime = event.mimeData()
            if local_files(mime) or image_of(mime) is not None:
                event.acceptProposedAction()
                return True
        elif kind == QEvent.Type.Drop and isinstance(event, QDropEvent):
            mime = event.mimeData()
            files, image = local_files(mime), image_of(mime)
            if files or image is not None:
                if files:
                    self.add_paths(files)
                elif image is not None:
                    self.add_image(image)
                event.acceptProposedAction()
                return True
        return super().eventFilter(watched, event)

    # -- what is attached ---------------------------------------------------------------------

    def attachments(self) -> list[Attachment]:
        """The attachments to send, in order (not the error chips, not those still read)."""
        return [c.attachment for c in self.chips if c.attachment is not None]

    @property
    def busy(self) -> bool:
        """Some file is still being read."""
        return any(c.pending for c in self.chips)

    def clear(self) -> None:
        for chip in list(self.chips):
            self.remove(chip)

    def cancel_loads(self) -> None:
        """Stop waiting for the files still being read (the panel is going away): their chips
        stay pending. A read already in its worker thread finishes there, unseen."""
        for chip in (*self.chips, *self._aside):
            if chip.task is not None:
                chip.task.cancel()
                chip.task = None

    def remove(self, chip: AttachmentChip) -> None:
        if chip not in self.chips:
            return
        if chip.task is not None:
            chip.task.cancel()
        self.chips.remove(chip)
        self._row.removeWidget(chip)
        chip.setParent(None)
        chip.deleteLater()
        self.setVisible(bool(self.chips))
        self.changed.emit()

    def set_aside(self) -> None:
        """Take the chips off the tray as they are, until ``put_back``."""
        for chip in self.chips:
            self._row.removeWidget(chip)
            chip.hide()
        self._aside.extend(self.chips)
        self.chips = []
        self.hide()
        self.changed.emit()

    def put_back(self) -> None:
        """The chips set aside replace those on the tray."""
        self.clear()
        self.chips, self._aside = self._aside, []
        for chip in self.chips:
            self._row.insertWidget(self._row.count() - 1, chip)
            chip.show()
        self.setVisible(bool(self.chips))
        self.changed.emit()

    # -- adding -------------------------------------------------------------------------------

    def add_paths(self, paths: Sequence[str | Path]) -> None:
        for each in paths:
            path = Path(each)
            self._load(path.name or str(path), partial(_read_file, path))

    def add_image(self, image: QImage) -> None:
        self._pasted += 1
        name = f"pasted-image-{self._pasted}.png"
        copy = QImage(image)  # the clipboard's image may change while the worker encodes
        self._load(name, lambda: attachment_from_bytes(name, encode_image(copy)))

    def add_attachment(self, attachment: Attachment) -> None:
        """One made elsewhere (an MCP resource or prompt part), checked against the
        message's limits like a file."""
        self._finish(self._add_chip(attachment.name), attachment, None)
        self.changed.emit()

    def add_pending(self, name: str) -> AttachmentChip:
        """A chip "reading…" for an attachment that comes later (``settle``)."""
        chip = self._add_chip(name)
        self.changed.emit()
        return chip

    def settle(self, chip: AttachmentChip, attachment: Attachment | None,
               error: str | None = None) -> bool:
        """A pending chip's attachment (checked against the message's limits) or error;
        False when the chip is no longer on the tray."""
        if chip not in self.chips:
            return False
        self._finish(chip, attachment, error)
        return True

    def _add_chip(self, name: str) -> AttachmentChip:
        chip = AttachmentChip(name)
        chip.remove_requested.connect(self.remove)
        self.chips.append(chip)
        self._row.insertWidget(self._row.count() - 1, chip)
        self.show()
        return chip

    def _load(self, name: str, read: Callable[[], Attachment]) -> None:
        import asyncio

        chip = self._add_chip(name)
        if loop_running():  # reading and encoding are off the GUI thread
            chip.task = asyncio.ensure_future(self._read(chip, read))
        else:  # no event loop (a script or a synchronous test): read here
            self._finish(chip, *_attempt(read))
        self.changed.emit()

    async def _read(self, chip: AttachmentChip, read: Callable[[], Attachment]) -> None:
        import asyncio

        outcome = await asyncio.to_thread(_attempt, read)
        if chip in self.chips or chip in self._aside:
            self._finish(chip, *outcome)

    def _finish(self, chip: AttachmentChip, attachment: Attachment | None,
                error: str | None) -> None:
        chip.task = None
        if attachment is not None:
            group = self._aside if chip in self._aside else self.chips
            error = limit_error([c.attachment for c in group if c.attachment is not None],
                                attachment)
            if error is None:
                chip.set_ready(attachment)
        if error is not None:
            chip.set_error(error)
        self.changed.emit()


def _attempt(read: Callable[[], Attachment]) -> tuple[Attachment | None, str | None]:
    try:
        return read(), None
    except AttachmentError as exc:
        return None, str(exc)
    except Exception as exc:  # a bug in reading must show on the chip, not vanish
        log.exception("reading an attachment failed")
        return None, f"could not be read ({type(exc).__name__})"


def _read_file(path: Path) -> Attachment:
    """The file as an attachment; an image over the limit as a scaled-down copy (blocking)."""
    try:
        return read_attachment(path)
    except AttachmentTooLarge as exc:
        if exc.kind != "image":
            raise
        image = QImage(str(path))
        if image.isNull():
            raise
        return attachment_from_bytes(path.name, encode_image(image))


def encode_image(image: QImage) -> bytes:
    """``image`` at most ``MAX_EDGE`` pixels on its long side, as PNG (JPEG when the PNG would
    be over the limit: a photo). Safe in a worker thread (QImage is reentrant)."""
    if max(image.width(), image.height()) > MAX_EDGE:
        image = image.scaled(MAX_EDGE, MAX_EDGE, Qt.AspectRatioMode.KeepAspectRatio,
                             Qt.TransformationMode.SmoothTransformation)
    data = _encoded(image, "PNG")
    if len(data) > MAX_IMAGE_BYTES:
        data = _encoded(image.convertToFormat(QImage.Format.Format_RGB888), "JPEG", 85)
    return data


def _encoded(image: QImage, fmt: str, quality: int = -1) -> bytes:
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice

    array = QByteArray()
    buffer = QBuffer(array)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    # PySide6's stubs say bytes for the format; at run time only str works.
    if not image.save(buffer, fmt, quality):  # type: ignore[call-overload]
        raise AttachmentError(f"the image could not be encoded as {fmt}")
    buffer.close()
    return bytes(array.data())


def _shortened(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
