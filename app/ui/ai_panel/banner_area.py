"""The banners' place above the conversation row (notices, the first-run mode choice): as tall
as its banners need at the panel's width, and scrolling when the window is too short for them.

Without it a short window (a 1600x1000 screen at 200% is 800x500 to Qt) squeezed the banners'
word-wrapped lines over each other, the mode choice's descriptions cut in half."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QSize, Qt
from PySide6.QtWidgets import QFrame, QScrollArea, QSizePolicy, QWidget

from app.ui.ai_panel.widget_slot import WidgetSlot


class BannerArea(QScrollArea):
    """``slot``'s column in a frameless vertical scroll area that asks for the height its
    visible banners take at its width (none when all are hidden)."""

    def __init__(self, slot: WidgetSlot, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("banners")
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setWidgetResizable(True)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # Tab goes to the banners' controls
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)
        column = QWidget()
        column.setObjectName("banners-column")
        column.setLayout(slot.layout)
        # A viewport made here, not asked of Qt: PySide wraps a widget Qt made by searching
        # every QWidget class for its type, creating their enums (~10 ms before ready). Set
        # before the column, which it holds (a replaced viewport is deleted with its children).
        viewport = QWidget()
        viewport.setAutoFillBackground(False)
        self.setViewport(viewport)
        self.setWidget(column)
        column.setAutoFillBackground(False)
        column.installEventFilter(self)  # a banner shown or hidden: ask for a new height

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.widget() and event.type() == QEvent.Type.LayoutRequest:
            self.updateGeometry()
        return False

    def sizeHint(self) -> QSize:
        column, hint = self.widget(), super().sizeHint()
        if column is None:
            return hint
        width = self.viewport().width() or self.width()
        needed = column.heightForWidth(width) if column.hasHeightForWidth() else -1
        if needed < 0:
            needed = column.sizeHint().height()
        return QSize(hint.width(), needed)

    def minimumSizeHint(self) -> QSize:
        return QSize(0, 0)
