"""An unchecked box in a list or tree is visible on a dark palette (the tools list's boxes)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication, QStyleFactory, QTreeWidget, QTreeWidgetItem

from app.ui.contrast import contrast_ratio
from app.ui.tones import LARGE_TEXT_CONTRAST, view_check_boxes
from tests.ui.palettes import application_palette


def _most_contrast(tree: QTreeWidget) -> float:
    """The strongest contrast of any pixel of the (text-less) row against the view's base."""
    image = tree.viewport().grab().toImage()
    base = tree.palette().color(QPalette.ColorRole.Base)
    row = tree.visualItemRect(tree.topLevelItem(0))
    return max(contrast_ratio(QColor(image.pixel(x, y)), base)
               for x in range(row.left(), min(row.right(), 60))
               for y in range(row.top(), row.bottom()))


@pytest.mark.parametrize("state", [Qt.CheckState.Unchecked, Qt.CheckState.Checked])
@pytest.mark.parametrize(("base", "text"), [("#2b2b2b", "#e6e6e6"), ("#353535", "#ffffff")])
def test_check_boxes_in_views_are_visible_on_a_dark_palette(qtbot, state, base, text):
    # Fusion draws a box's frame from the window colour darkened: on a dark theme's base it
    # vanished, and the tools list's unchecked tools looked like plain text.
    fusion = QStyleFactory.create("Fusion")
    with application_palette(base, text) as shown:
        shown.setColor(QPalette.ColorRole.Base, QColor(base).darker(130))
        QApplication.instance().setPalette(shown)
        tree = QTreeWidget()
        qtbot.addWidget(tree)
        tree.setStyle(fusion)
        tree.setHeaderHidden(True)
        tree.setRootIsDecorated(False)
        item = QTreeWidgetItem([""])
        item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
        item.setCheckState(0, state)
        tree.addTopLevelItem(item)
        view_check_boxes(tree)
        tree.resize(200, 80)
        tree.show()
        qtbot.waitExposed(tree)
        assert _most_contrast(tree) >= LARGE_TEXT_CONTRAST


def test_a_light_palette_keeps_the_styles_own_boxes(qtbot):
    with application_palette("#ffffff", "#000000"):
        tree = QTreeWidget()
        qtbot.addWidget(tree)
        view_check_boxes(tree)
        assert tree.styleSheet() == ""
