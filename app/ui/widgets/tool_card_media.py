"""The parts of a tool card for long and rich calls: the progress row of a running call (with
its Cancel, which stops the call like the panel's Stop: an MCP task is then cancelled on its
server) and the thumbnails of a result's images.

Thumbnails are decoded off the GUI thread: an image may be up to 5 MB (app.core.tools.images),
and decoding and scaling one can take tens of milliseconds, a visible stall when a result holds
several. A worker (QThreadPool) turns the bytes into a small QImage (QImage, unlike QPixmap, may
be made in any thread); the card turns that into a pixmap when it arrives.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence

from PySide6.QtCore import QObject, QRunnable, Qt, QThreadPool, Signal
from PySide6.QtGui import QImage, QPixmap
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.core.tools.images import ImagePart, human_size

THUMBNAIL_PX = 160
_STEPS = 1000  # a determinate bar's resolution


class ProgressRow(QWidget):
    """A running call's progress: a bar (busy when the total is unknown), the message (an MCP
    task's "task <id> · <status>") and Cancel."""

    cancel_requested = Signal()

    def __init__(self) -> None:
        super().__init__()
        self.setObjectName("card-progress")
        self.bar = QProgressBar()
        self.bar.setObjectName("card-progress-bar")
        self.bar.setMaximumHeight(12)
        self.bar.setTextVisible(False)
        self.label = QLabel("")
        self.label.setObjectName("card-progress-text")
        self.label.setStyleSheet("color: palette(placeholder-text); font-size: 11px;")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 2, 0, 2)
        self.cancel = QToolButton()
        self.cancel.setObjectName("card-progress-cancel")
        self.cancel.setText("Cancel")
        self.cancel.setToolTip("Stop the run, as Stop does (a server task is cancelled too)")
        self.cancel.clicked.connect(self._cancel)
        layout.addWidget(self.bar, 1)
        layout.addWidget(self.label)
        layout.addWidget(self.cancel)

    def _cancel(self) -> None:
        self.cancel.setEnabled(False)  # once: the stop is under way
        self.cancel_requested.emit()

    @property
    def determinate(self) -> bool:
        return self.bar.maximum() > 0

    def set_progress(self, progress: float, total: float | None, message: str | None) -> None:
        if total:
            self.bar.setRange(0, _STEPS)
            self.bar.setValue(round(min(max(progress / total, 0.0), 1.0) * _STEPS))
            amount = f"{progress:g} of {total:g}"
        else:
            self.bar.setRange(0, 0)  # Qt's busy indicator
            amount = "" if message and not progress else f"{progress:g}"  # a task: no count
        self.label.setText(f"{message} ({amount})" if message and amount else message or amount)


class _Decoded(QObject):
    done = Signal(int, QImage)


class _DecodeTask(QRunnable):
    def __init__(self, index: int, data: str, signals: _Decoded) -> None:
        super().__init__()
        self._index = index
        self._data = data
        self._signals = signals  # kept alive by the task until it has emitted

    def run(self) -> None:
        image = QImage()
        try:
            image.loadFromData(base64.b64decode(self._data))
        except (binascii.Error, ValueError):
            pass
        if not image.isNull():
            image = image.scaled(THUMBNAIL_PX, THUMBNAIL_PX, Qt.AspectRatioMode.KeepAspectRatio,
                                 Qt.TransformationMode.SmoothTransformation)
        self._signals.done.emit(self._index, image)


class Thumbnails(QWidget):
    """A result's images, small, in a row; each says its type and size in its tooltip."""

    def __init__(self, images: Sequence[ImagePart]) -> None:
        super().__init__()
        self.setObjectName("card-thumbnails")
        self.labels: list[QLabel] = []
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        for n, image in enumerate(images, start=1):
            label = QLabel("loading image…")
            label.setObjectName("card-thumbnail")
            label.setToolTip(f"image {n}: {image.media_type}, {human_size(image.size)}")
            label.setAlignment(Qt.AlignmentFlag.AlignCenter)
            label.setMinimumSize(24, 24)
            row.addWidget(label)
            self.labels.append(label)
        row.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 2, 0, 2)
        layout.addLayout(row)
        self._signals = _Decoded()
        self._signals.done.connect(self._on_decoded)
        self.pending = len(images)
        for index, image in enumerate(images):
            QThreadPool.globalInstance().start(_DecodeTask(index, image.data, self._signals))

    def _on_decoded(self, index: int, image: QImage) -> None:
        self.pending -= 1
        label = self.labels[index]
        if image.isNull():
            label.setText("(image cannot be previewed)")
            return
        label.setText("")
        label.setPixmap(QPixmap.fromImage(image))
