"""The tones (app/ui/tones.py) read on light and dark palettes, surfaces colour every text in
them, and what is built from tones is built again when the palette changes."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QRect, QSize, Qt
from PySide6.QtGui import QColor, QImage, QPalette
from PySide6.QtWidgets import QApplication, QRadioButton, QStyle, QStyleOptionButton

from app.core.permission_mode import PermissionMode
from app.core.permissions.rules import PermissionRule
from app.ui.ai_panel.mode_intro import ModeIntro
from app.ui.ai_panel.notice_bar import NoticeBar
from app.ui.contrast import contrast_ratio, luminance
from app.ui.models.rules_model import RulesTableModel
from app.ui.tones import LARGE_TEXT_CONTRAST, TEXT_CONTRAST, Tone, is_dark, tone
from app.ui.widgets.badges import badge
from tests.ui.palettes import application_palette, palette

LIGHT = [("#ffffff", "#000000"), ("#fafafa", "#333333"), ("#efefef", "#1f1f1f")]
DARK = [("#1e1e1e", "#eeeeee"), ("#2b2b2b", "#e6e6e6"), ("#353535", "#ffffff"),
        ("#000000", "#d0d0d0")]


def _wrapper_palette() -> QPalette:
    """A dark Fusion palette whose window and base differ (as a desktop's dark theme does)."""
    made = palette("#1e1e1e", "#e6e6e6")
    made.setColor(QPalette.ColorRole.Window, QColor("#2b2b2b"))
    return made


@pytest.mark.parametrize("name", list(Tone))
@pytest.mark.parametrize(("base", "text"), LIGHT + DARK)
def test_every_tone_reads_on_light_and_dark_palettes(qtbot, name, base, text):
    shown = palette(base, text)
    colours = tone(name, shown)
    for role in (QPalette.ColorRole.Window, QPalette.ColorRole.Base):
        assert contrast_ratio(colours.text, shown.color(role)) >= TEXT_CONTRAST
    assert contrast_ratio(colours.on_surface, colours.surface) >= TEXT_CONTRAST
    assert contrast_ratio(colours.on_solid, colours.solid) >= TEXT_CONTRAST


@pytest.mark.parametrize("name", list(Tone))
def test_a_dark_palette_gets_dark_surfaces_and_a_light_one_light_surfaces(qtbot, name):
    dark, light = _wrapper_palette(), palette("#ffffff", "#000000")
    assert is_dark(dark) and not is_dark(light)
    assert luminance(tone(name, dark).surface) < 0.2 < luminance(tone(name, light).surface)
    # A surface stands out from the window it is on, a border from the surface.
    assert tone(name, dark).surface != dark.color(QPalette.ColorRole.Window)
    assert contrast_ratio(tone(name, dark).text, dark.color(QPalette.ColorRole.Window)) \
        >= TEXT_CONTRAST


def _show(qtbot, widget):
    qtbot.addWidget(widget)
    widget.resize(520, widget.sizeHint().height())
    widget.show()
    qtbot.waitExposed(widget)
    QApplication.processEvents()


def _text_pixels(image: QImage, background: QColor, minimum: float) -> int:
    """How many pixels of ``image`` contrast with ``background`` by ``minimum`` or more."""
    count = 0
    for y in range(image.height()):
        for x in range(image.width()):
            if contrast_ratio(image.pixelColor(x, y), background) >= minimum:
                count += 1
    return count


@pytest.mark.parametrize(("base", "text"), [("#1e1e1e", "#eeeeee"), ("#ffffff", "#000000")])
def test_the_mode_intros_radio_labels_read_on_its_box(qtbot, base, text):
    with application_palette(base, text):
        intro = ModeIntro(PermissionMode.ASK)
        _show(qtbot, intro)
        image = intro.grab().toImage()
        surface = image.pixelColor(4, image.height() // 2)  # the box, inside its border
        assert surface == tone(Tone.INFO).surface
        for button in intro.buttons.values():
            # The colour Qt draws the label in, against the box the button sits on.
            drawn = button.palette().color(button.foregroundRole())
            assert contrast_ratio(drawn, surface) >= TEXT_CONTRAST, (button.text(), drawn.name())
            # And on screen: the label's text, drawn on the box, stands out from the box.
            text_width = button.fontMetrics().horizontalAdvance(button.text())
            contents = button.style().subElementRect(
                QStyle.SubElement.SE_RadioButtonContents, _option(button), button)
            area = QRect(button.mapTo(intro, contents.topLeft()),
                         QSize(text_width + 2, contents.height()))
            label_area = image.copy(area)
            assert _text_pixels(label_area, surface, LARGE_TEXT_CONTRAST) >= 5, button.text()


def _option(button: QRadioButton) -> QStyleOptionButton:
    option = QStyleOptionButton()
    option.initFrom(button)
    option.text = button.text()
    return option


def test_the_mode_intros_labels_were_unreadable_with_the_palettes_text(qtbot):
    """What the test above guards against: the dark palette's own text on the light box."""
    dark = palette("#1e1e1e", "#eeeeee")
    light_box = tone(Tone.INFO, palette("#ffffff", "#000000")).surface
    assert contrast_ratio(dark.color(QPalette.ColorRole.WindowText), light_box) < 1.5


def test_a_palette_change_builds_the_styles_again(qtbot):
    with application_palette("#ffffff", "#000000"):
        notice = NoticeBar("An update changed the defaults.")
        intro = ModeIntro(PermissionMode.ASK)
        pill = badge("deny", "deny")
        for widget in (notice, intro, pill):
            _show(qtbot, widget)
        light_notice, light_intro = notice.styleSheet(), intro.styleSheet()
        assert tone(Tone.WARNING).surface.name() in light_notice
        with application_palette("#1e1e1e", "#eeeeee"):
            QApplication.processEvents()  # Qt posts the palette change to shown widgets
            dark_surface = tone(Tone.WARNING).surface.name()
            assert notice.styleSheet() != light_notice and dark_surface in notice.styleSheet()
            assert intro.styleSheet() != light_intro
            assert tone(Tone.INFO).surface.name() in intro.styleSheet()
            label = notice.label
            assert contrast_ratio(label.palette().color(label.foregroundRole()),
                                  QColor(dark_surface)) >= TEXT_CONTRAST
        QApplication.processEvents()
        assert notice.styleSheet() == light_notice and intro.styleSheet() == light_intro
        assert pill.styleSheet()  # a badge keeps its solid colours through the switches


def test_model_colours_follow_the_palette(qtbot, services):
    services.permissions.rules.add(PermissionRule(decision="deny", tool_pattern="read_*",
                                                  priority=3))
    model = RulesTableModel(services.permissions.rules)
    row = next(r for r in range(model.rowCount())
               if model.data(model.index(r, RulesTableModel.COL_DECISION)) == "deny")
    index = model.index(row, RulesTableModel.COL_DECISION)
    foreground = Qt.ItemDataRole.ForegroundRole
    with application_palette("#ffffff", "#000000"):
        light = model.data(index, foreground)
    with application_palette("#1e1e1e", "#eeeeee") as dark:
        shown = model.data(index, foreground)
        assert shown != light
        assert contrast_ratio(shown, dark.color(QPalette.ColorRole.Base)) >= TEXT_CONTRAST


def test_the_tools_list_recolours_its_cells_on_a_palette_change_without_toggling_tools(
        qtbot, services):
    from app.ui.widgets.tools_panel import COL_RISK, ToolsPanel

    with application_palette("#ffffff", "#000000"):
        panel = ToolsPanel(services, services.profiles.ensure_default().id)
        _show(qtbot, panel)
        toggled: list[tuple[str, bool]] = []
        panel.tool_toggled.connect(lambda name, on: toggled.append((name, on)))
        item = panel.item("read_file")
        light = item.foreground(COL_RISK).color()
        assert light == tone(Tone.SUCCESS).text
        with application_palette("#1e1e1e", "#eeeeee") as dark:
            QApplication.processEvents()
            shown = item.foreground(COL_RISK).color()
            assert shown == tone(Tone.SUCCESS).text and shown != light
            assert contrast_ratio(shown, dark.color(QPalette.ColorRole.Base)) >= TEXT_CONTRAST
    assert toggled == []
