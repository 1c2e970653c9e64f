"""The tool card's progress bar and thumbnails (app/ui/widgets/tool_card_media.py)."""

from __future__ import annotations

import base64

from PySide6.QtCore import QBuffer, QIODevice
from PySide6.QtGui import QColor, QImage

from app.core.agent.events import ToolFinished, ToolProgress, ToolRequested
from app.core.outcomes import Outcome
from app.core.permissions.service import Decision
from app.core.tools.images import ImagePart
from app.ui.widgets.tool_card import ToolCard
from app.ui.widgets.tool_card_media import THUMBNAIL_PX
from tests.ui.conftest import make_ai_panel


def _png(width: int, height: int) -> str:
    image = QImage(width, height, QImage.Format.Format_RGB32)
    image.fill(QColor("teal"))
    buffer = QBuffer()
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG")
    return base64.b64encode(bytes(buffer.data())).decode()


def _card(qtbot) -> ToolCard:
    card = ToolCard("t1", "everything__long", "everything", {}, "allow", "allowed")
    qtbot.addWidget(card)
    card.show()
    return card


def test_progress_bar_is_determinate_with_a_total_and_busy_without(qtbot) -> None:
    card = _card(qtbot)
    assert card.progress_row is None  # nothing until a call reports progress
    card.set_progress(2, 8, "copying")
    row = card.progress_row
    assert row is not None and row.isVisible() and row.determinate
    assert row.bar.value() == 250 and row.label.text() == "copying (2 of 8)"
    card.set_progress(3, None, None)
    assert not row.determinate and row.label.text() == "3"
    card.finish(Outcome.EXECUTED, False, 12, "done")
    assert row.isHidden()


def test_thumbnails_are_decoded_off_the_gui_thread_and_scaled(qtbot) -> None:
    card = _card(qtbot)
    images = (ImagePart("image/png", _png(800, 400)), ImagePart("image/png", "AAAA"))
    card.finish(Outcome.EXECUTED, False, 5, "[image 1] [image 2]", images)
    strip = card.thumbnails
    assert strip is not None and strip.isVisible()
    qtbot.waitUntil(lambda: strip.pending == 0)
    pixmap = strip.labels[0].pixmap()
    assert (pixmap.width(), pixmap.height()) == (THUMBNAIL_PX, THUMBNAIL_PX // 2)
    assert strip.labels[1].text() == "(image cannot be previewed)"  # not an image: no crash


def test_the_panel_routes_progress_and_images_to_the_card(qtbot, services, project) -> None:
    panel = make_ai_panel(qtbot, services, project)
    panel.handle_event(ToolRequested("t1", "long", "everything", {}, Decision("allow", None)))
    panel.handle_event(ToolProgress("t1", 1, 4, "first"))
    card = panel.tool_cards.by_id["t1"]
    assert card.progress_row is not None and card.progress_row.label.text() == "first (1 of 4)"
    panel.handle_event(ToolFinished("t1", "long", False, 3, "[image 1]", Outcome.EXECUTED,
                                    (ImagePart("image/png", _png(10, 10)),)))
    assert card.thumbnails is not None
    qtbot.waitUntil(lambda: card.thumbnails is not None and card.thumbnails.pending == 0)
    assert not card.thumbnails.labels[0].pixmap().isNull()
