"""The states a tool call goes through, as enums: one definition for the loop, the audit trail
and the transcript's cards.

They are ``StrEnum``s whose values are the strings the database has always stored (and its
CHECK constraints allow), so rows written before and after read the same, and a member
compares equal to its string.
"""

from __future__ import annotations

from enum import StrEnum


class Outcome(StrEnum):
    """How a tool call ended (``tool_executions.outcome``)."""

    EXECUTED = "executed"
    DECLINED = "declined"
    DENIED = "denied"
    CANCELLED = "cancelled"
    INVALID = "invalid"


class CallState(StrEnum):
    """Where an audited call is (``tool_executions.state``): waiting for approval, running, or
    finished with an ``Outcome``."""

    PENDING = "pending"
    RUNNING = "running"
    DONE = "done"


class CardStatus(StrEnum):
    """What a tool card in the transcript shows: the live states of a call, then its outcome
    (or ``ERROR`` for an executed call whose result is an error)."""

    REQUESTED = "requested"
    AWAITING = "awaiting"
    RUNNING = "running"
    EXECUTED = Outcome.EXECUTED.value
    ERROR = "error"
    DECLINED = Outcome.DECLINED.value
    DENIED = Outcome.DENIED.value
    CANCELLED = Outcome.CANCELLED.value
    INVALID = Outcome.INVALID.value
    # A call the app never finished (killed or crashed), by the state its row was left in.
    INTERRUPTED = "interrupted"
    INTERRUPTED_RUNNING = "interrupted_running"

    @classmethod
    def for_outcome(cls, outcome: str, is_error: bool) -> CardStatus:
        """The finished card's status: an executed call whose result is an error failed."""
        if outcome == Outcome.EXECUTED and is_error:
            return cls.ERROR
        return cls(outcome)
