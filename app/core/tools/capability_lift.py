"""A change to one tool's configuration that would let a refused call run.

A capability (a tool's write folders, its allowed programs) is a limit the tool enforces
itself: a call outside it is refused before anyone is asked, since approving could not make it
run. Where the person could lift the limit, the tool's spec proposes the change
(``ToolSpec.capability_lift``): the call then asks, and the dialog says what approving also
changes. The caller checks the proposal before offering it (the refusal check, run again under
the changed configuration, must pass), so a lift that would not make the call run is never
offered.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["CapabilityLift", "LiftProposer"]


@dataclass(frozen=True)
class CapabilityLift:
    """Set ``key`` of the tool's configuration to ``value`` (the whole new value)."""

    key: str
    value: tuple[str, ...]
    summary: str  # what the person reads: "add “src” to Write folders"
    refusal: str = ""  # what the current configuration refused (filled in by the caller)


LiftProposer = Callable[[Mapping[str, Any], Any], CapabilityLift | None]
"""``(tool input, ToolContext) -> CapabilityLift | None``: the smallest change of the tool's
configuration that could let this call run, or None when no configuration change could."""
