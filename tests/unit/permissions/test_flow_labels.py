"""Every flow label carries its texts (chip, tooltip, simulated source) and its place in the
order of seriousness: adding one needs only app.core.permissions.flow_labels."""

from __future__ import annotations

import pytest

from app.core.permissions.flow import FlowState
from app.core.permissions.flow_labels import CLEAN, FlowLabel


@pytest.mark.parametrize("label", list(FlowLabel))
def test_every_label_has_its_texts(label: FlowLabel) -> None:
    for text in (label.label, label.explanation, label.simulated_source, label.heading):
        assert isinstance(text, str) and text.strip() == text and text
    assert label.heading.lower() == label.label.lower()
    assert label.explanation.endswith(".")
    assert "(simulated)" in label.simulated_source
    assert label.tone in ("danger", "warning")


def test_texts_are_distinct_and_never_clean() -> None:
    chip_texts = [label.label for label in FlowLabel]
    assert len(set(chip_texts)) == len(chip_texts)  # the chip's text names one label
    assert CLEAN not in chip_texts
    assert len({label.simulated_source for label in FlowLabel}) == len(FlowLabel)


def test_seriousness_orders_every_label_once() -> None:
    order = FlowLabel.by_seriousness()
    assert sorted(order) == sorted(FlowLabel)
    assert order[0] is FlowLabel.READ_SENSITIVE
    assert order == (FlowLabel.READ_SENSITIVE, FlowLabel.UNTRUSTED, FlowLabel.READ_OUTSIDE)


def test_the_summary_is_the_most_serious_labels_text() -> None:
    flow = FlowState()
    assert flow.summary() == CLEAN
    flow.add(FlowLabel.READ_OUTSIDE, "/etc/hosts", "read_file")
    assert flow.summary() == "read outside the project"
    flow.add(FlowLabel.UNTRUSTED, "https://example.com", "web_fetch")
    assert flow.summary() == "untrusted content"
    flow.add(FlowLabel.READ_SENSITIVE, "~/.aws/credentials", "read_file")
    assert flow.summary() == "read sensitive"


def test_a_quarantined_state_keeps_secrets_and_outside_reads_but_passes_untrusted_up() -> None:
    parent = FlowState()
    child = parent.child_for_quarantine()
    child.add(FlowLabel.READ_SENSITIVE, ".env", "read_file")
    child.add(FlowLabel.READ_OUTSIDE, "~/notes", "read_file")
    assert parent.labels == frozenset()
    assert child.add(FlowLabel.UNTRUSTED, "https://example.com/page", "web_fetch")
    assert parent.labels == {FlowLabel.UNTRUSTED}
    assert parent.sources_of(FlowLabel.UNTRUSTED)[0].source == "https://example.com/page"
