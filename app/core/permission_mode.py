"""Permission modes: what an agent profile does with a call no permission rule decides.

A ``StrEnum`` whose values are what ``agent_profiles.permission_mode`` stores (its CHECK
constraint allows exactly these), so the store, the permission service, the UI and the system
prompt share one definition, each member with its texts.
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

    @property
    def prompt_sentence(self) -> str:
        """The system prompt's one sentence: what runs on its own and what the model should
        do about it."""
        return _PROMPT_SENTENCES[self]

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

_PROMPT_SENTENCES = {
    PermissionMode.ASK: (
        "Permission mode: ask — any call the user's rules do not allow waits for the user's "
        "approval, so say briefly what a call that changes something is for, and take a "
        "declined call (and its reason) as the user's answer rather than retrying it."),
    PermissionMode.AUTO: (
        "Permission mode: auto — reads, edits and sandboxed commands inside the project run "
        "without asking and can be undone, while anything that reads secrets, leaves the "
        "project or sends data out still asks the user first."),
    PermissionMode.PLAN: (
        "Permission mode: plan, which is read-only — read files and research as you need, "
        "change nothing (no edits, no commands that change state), and end with a concrete "
        "plan (which files, what changes, which commands) for the user to review."),
}
