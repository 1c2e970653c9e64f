"""The banners above the conversation row scroll in a short window instead of being squeezed."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QTextEdit, QVBoxLayout, QWidget

from app.core.permission_mode import PermissionMode
from app.ui.ai_panel.banner_area import BannerArea
from app.ui.ai_panel.mode_intro import ModeIntro
from app.ui.ai_panel.widget_slot import WidgetSlot


def _column(qtbot, height: int) -> tuple[QWidget, WidgetSlot, BannerArea]:
    panel = QWidget()
    qtbot.addWidget(panel)
    slot = WidgetSlot(spacing=6)
    area = BannerArea(slot)
    layout = QVBoxLayout(panel)
    layout.addWidget(area)
    layout.addWidget(QTextEdit(), 1)  # the transcript, which takes what is left
    panel.resize(420, height)
    return panel, slot, area


def test_a_short_window_scrolls_the_banners_and_never_squeezes_their_lines(qtbot):
    # Before (the banners' layout straight in the panel's column), the mode choice got less
    # height than its wrapped lines need and they were drawn over each other.
    panel, slot, area = _column(qtbot, 260)
    intro = ModeIntro(PermissionMode.ASK)
    slot.add(intro)
    panel.show()
    qtbot.waitExposed(panel)
    qtbot.waitUntil(lambda: intro.height() >= intro.heightForWidth(intro.width()))
    assert area.height() < intro.height()  # the rest is reached by scrolling
    assert area.verticalScrollBar().maximum() > 0


def test_banners_take_the_height_they_need_when_there_is_room(qtbot):
    panel, slot, area = _column(qtbot, 900)
    notice = QLabel("A notice whose words wrap over several lines at this width " * 4)
    notice.setWordWrap(True)
    slot.add(notice)
    panel.show()
    qtbot.waitExposed(panel)
    qtbot.waitUntil(lambda: area.height() >= notice.heightForWidth(area.viewport().width()))
    assert area.verticalScrollBar().maximum() == 0


def test_hidden_banners_take_no_height(qtbot):
    panel, slot, area = _column(qtbot, 600)
    notice = QLabel("Shown for a while")
    slot.add(notice)
    panel.show()
    qtbot.waitExposed(panel)
    qtbot.waitUntil(lambda: area.height() > 0)
    notice.hide()
    qtbot.waitUntil(lambda: area.height() == 0)
