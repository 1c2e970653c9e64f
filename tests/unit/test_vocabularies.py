"""The vocabularies carry their texts: every member of PermissionMode, ToolCategory and
FlowLabel has each text the UI and the system prompt read from it, and every built-in tool's
spec has what the UI and the system prompt show of it."""

from __future__ import annotations

import pytest

from app.core.permission_mode import PermissionMode
from app.core.permissions.flow_labels import FlowLabel
from app.core.tools.base import ToolCategory
from app.core.tools.default_registry import default_registry

TEXTS = {
    PermissionMode: ("label", "description", "prompt_sentence"),
    ToolCategory: ("label", "risk_warning"),
    FlowLabel: ("label", "heading", "explanation", "simulated_source"),
}
MEMBERS = [(vocabulary, member) for vocabulary in TEXTS for member in vocabulary]


@pytest.mark.parametrize(("vocabulary", "member"), MEMBERS, ids=lambda v: str(v))
def test_every_member_has_its_texts(vocabulary, member) -> None:
    for name in TEXTS[vocabulary]:
        text = getattr(member, name)
        assert isinstance(text, str) and text and text.strip() == text, (member, name)


@pytest.mark.parametrize("vocabulary", list(TEXTS))
def test_labels_tell_members_apart(vocabulary) -> None:
    labels = [member.label for member in vocabulary]
    assert len(set(labels)) == len(labels)


def test_mode_sentences_name_their_mode() -> None:
    for mode in PermissionMode:
        assert mode.prompt_sentence.startswith(f"Permission mode: {mode.value}")


def test_every_built_in_tool_has_its_texts() -> None:
    specs = default_registry().specs()
    assert specs
    for spec in specs:
        assert spec.description.strip(), spec.name
        assert spec.category.label and spec.category.risk_warning
        assert all(isinstance(line, str) and line for line in spec.prompt_conventions)
    # Two tools never share a place in the prompt's order of conventions.
    orders = [s.prompt_order for s in specs if s.prompt_conventions]
    assert len(set(orders)) == len(orders)
