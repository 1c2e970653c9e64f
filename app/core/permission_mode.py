"""Permission modes: what an agent profile does with a call no permission rule decides.

A ``StrEnum`` whose values are what ``agent_profiles.permission_mode`` stores (its CHECK
constraint allows exactly these), so the store, the permission service and the UI share one
definition.
"""

from __future__ import annotations

from enum import StrEnum


class PermissionMode(StrEnum):
    ASK = "ask"
    AUTO = "auto"
    PLAN = "plan"

    @property
    def label(self) -> str:
        return _LABELS[self]

    @property
    def description(self) -> str:
        """One sentence a person reads before choosing it."""
        return _DESCRIPTIONS[self]

    @classmethod
    def parse(cls, value: object) -> PermissionMode:
        """The mode ``value`` names; anything else is ``ASK``, the mode that decides nothing
        on its own (a damaged row must never widen what runs)."""
        try:
            return cls(str(value))
        except ValueError:
            return cls.ASK


_LABELS = {
    PermissionMode.ASK: "Ask",
    PermissionMode.AUTO: "Auto",
    PermissionMode.PLAN: "Plan",
}

_DESCRIPTIONS = {
    PermissionMode.ASK: "The rules decide; anything no rule covers asks you first.",
    PermissionMode.AUTO: "Reads, edits and sandboxed commands inside the project run on their "
                         "own and can be undone; anything that reads secrets, leaves the "
                         "project or sends data out asks you first.",
    PermissionMode.PLAN: "Read-only: the agent reads and researches, proposes changes and "
                         "makes none.",
}
