"""The flow labels (what a conversation has read that makes later calls matter more) and every
text the app shows about each: the flow chip's text, colour tone and tooltip, and the source a
simulated label names in Settings' "Test a call" box.

Adding a label is adding a member here with its ``_Described`` entry (a test checks that every
member has one); what the guards do about it is app.core.permissions.guards, and when a
conversation gets it is app.core.agent's flow tracking.

Kept apart from ``app.core.permissions.flow`` (a conversation's labels, and the secret matchers
it imports, ~15 ms): the panel's chip reads these texts before any label exists.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

__all__ = ["CLEAN", "CLEAN_EXPLANATION", "FlowLabel", "FlowTone"]

# The chip of a conversation without labels.
CLEAN = "clean"
CLEAN_EXPLANATION = "Nothing sensitive or untrusted has been read in this conversation."

# How loud the chip is: "danger" (red) or "warning" (yellow).
FlowTone = Literal["danger", "warning"]


class FlowLabel(StrEnum):
    """A label's value is what ``conversations.flow`` stores: never rename one."""

    READ_SENSITIVE = "read_sensitive"
    READ_OUTSIDE = "read_outside"
    UNTRUSTED = "untrusted"

    @property
    def label(self) -> str:
        """The chip's text when this is the conversation's most serious label."""
        return _DESCRIBED[self].label

    @property
    def heading(self) -> str:
        """The label as the heading of its sources in the chip's tooltip."""
        return self.label[:1].upper() + self.label[1:]

    @property
    def explanation(self) -> str:
        """What the label means for the person, the first line of the chip's tooltip."""
        return _DESCRIBED[self].explanation

    @property
    def tone(self) -> FlowTone:
        return _DESCRIBED[self].tone

    @property
    def simulated_source(self) -> str:
        """What a simulated label ("Test a call") says it came from; the flow guard's reason
        shows it."""
        return _DESCRIBED[self].simulated_source

    @classmethod
    def by_seriousness(cls) -> tuple[FlowLabel, ...]:
        """Most serious first: the chip shows the first one a conversation has, and the
        "Test a call" box offers them in this order."""
        return tuple(sorted(cls, key=lambda label: _DESCRIBED[label].rank))


@dataclass(frozen=True)
class _Described:
    label: str
    explanation: str
    tone: FlowTone
    simulated_source: str
    rank: int  # seriousness: 0 is the most serious


_DESCRIBED = {
    FlowLabel.READ_SENSITIVE: _Described(
        "read sensitive",
        "This conversation read a secret: calls that can send data out ask first, whatever "
        "rule allows them.",
        "danger", "a sensitive file (simulated)", 0),
    FlowLabel.UNTRUSTED: _Described(
        "untrusted content",
        "This conversation took in content that could carry instructions (web pages, tool "
        "results, files of an untrusted project).",
        "warning", "untrusted content (simulated)", 1),
    FlowLabel.READ_OUTSIDE: _Described(
        "read outside the project",
        "This conversation read files outside the project.",
        "warning", "a file outside the project (simulated)", 2),
}
