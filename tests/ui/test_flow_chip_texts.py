"""The flow chip reads each label's texts and tone from the label (app.core.permissions.
flow_labels), never from a table of its own."""

from __future__ import annotations

from app.core.permissions.flow import FlowSource
from app.core.permissions.flow_labels import CLEAN, CLEAN_EXPLANATION, FlowLabel
from app.ui.ai_panel.flow_chip import FlowChip, flow_tooltip


def test_tooltip_explains_the_summary_and_heads_each_labels_sources() -> None:
    sources = [FlowSource(FlowLabel.READ_SENSITIVE, "~/.aws/credentials", "read_file",
                          "2026-01-02T10:32:00+00:00"),
               FlowSource(FlowLabel.UNTRUSTED, "https://example.com", "web_fetch",
                          "2026-01-02T10:33:00+00:00")]
    text = flow_tooltip(FlowLabel.READ_SENSITIVE.label, sources)
    lines = text.splitlines()
    assert lines[0] == FlowLabel.READ_SENSITIVE.explanation
    assert "Read sensitive:" in lines and "Untrusted content:" in lines
    assert flow_tooltip(CLEAN, ()).startswith(CLEAN_EXPLANATION)
    assert flow_tooltip("something new", ()).startswith("something new")


def test_chip_colour_follows_the_labels_tone(qtbot) -> None:
    chip = FlowChip()
    qtbot.addWidget(chip)
    styles = {}
    for label in FlowLabel:
        chip.set_flow(label.label, ())
        assert chip.text() == f"⚠ {label.label}"
        styles[label] = chip.styleSheet()
    assert "#cf222e" in styles[FlowLabel.READ_SENSITIVE]  # danger: red
    assert "#fff8c5" in styles[FlowLabel.UNTRUSTED] and "#fff8c5" in styles[FlowLabel.READ_OUTSIDE]
    chip.set_flow(CLEAN, ())
    assert chip.text() == f"● {CLEAN}" and "#dafbe1" in chip.styleSheet()
