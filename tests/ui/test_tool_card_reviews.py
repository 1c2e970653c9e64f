"""The review part of a tool card on its own: reading a stored call's ``decided_by`` back."""

from __future__ import annotations

import pytest

from app.ui.widgets.tool_card_reviews import review_outcome_of


@pytest.mark.parametrize(("decided_by", "expected"), [
    ("approved by review: All reviewers approved.", ("approved", "All reviewers approved.")),
    ("rejected by review: deletes the home folder", ("rejected", "deletes the home folder")),
    ("plan rejected by review: too broad", ("rejected", "too broad")),
    ("  approved by review  ", ("approved", "")),
])
def test_a_review_decision_is_read_back(decided_by: str, expected: tuple[str, str]) -> None:
    assert review_outcome_of(decided_by) == expected


@pytest.mark.parametrize("decided_by", [None, "", "auto mode: contained",
                                        "rule #3: allow read_file", "reviewers asked you"])
def test_anything_else_is_no_review_decision(decided_by: str | None) -> None:
    assert review_outcome_of(decided_by) is None
