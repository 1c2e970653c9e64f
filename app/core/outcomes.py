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


# -- the words every view uses -------------------------------------------------------------------
# Who let a call run or stopped it (``Verdict``), and what became of it (``result_label``): one
# vocabulary for the transcript's cards (badge and status), conversation replay, the tool
# history and the audit details, derived from the same facts the audit row holds.

REFUSED_BY_CAPABILITY_PREFIX = "refused by capability"
# How the loop words a call the person never answered because Stop came first.
STOPPED_BEFORE_APPROVAL_PREFIX = "The user stopped the run before approving"
_MODE_PREFIXES = ("auto mode", "plan mode")
_REVIEW_APPROVED_PREFIXES = ("approved by review",)
_REVIEW_REJECTED_PREFIXES = ("rejected by review", "plan rejected by review")


class Verdict(StrEnum):
    """Who let a call run or stopped it."""

    ALLOWED_BY_RULE = "allowed by rule"
    ALLOWED_BY_MODE = "allowed by mode"
    APPROVED_BY_YOU = "approved by you"
    APPROVED_BY_REVIEW = "approved by review"
    REJECTED_BY_REVIEW = "rejected by review"
    DECLINED = "declined"
    DENIED_BY_RULE = "denied by rule"
    DENIED_BY_MODE = "denied by mode"
    DENIED_BY_GUARD = "denied by guard"
    REFUSED_BY_CAPABILITY = "refused by capability"
    INVALID = "invalid"
    NOT_RUN = "not run"
    # Not decided yet (a live card), or never answered (the app stopped first).
    ASKS_YOU = "asks you"
    IN_REVIEW = "sent to review"
    WAITING = "waiting for you"
    NOT_ANSWERED = "not answered"

    @property
    def tone(self) -> str:
        """allow | deny | ask | review: the colour family of a badge showing it."""
        if self in (Verdict.ALLOWED_BY_RULE, Verdict.ALLOWED_BY_MODE, Verdict.APPROVED_BY_YOU,
                    Verdict.APPROVED_BY_REVIEW):
            return "allow"
        if self in (Verdict.ASKS_YOU, Verdict.WAITING):
            return "ask"
        if self is Verdict.IN_REVIEW:
            return "review"
        if self in (Verdict.NOT_RUN, Verdict.NOT_ANSWERED):
            return "neutral"
        return "deny"


def verdict(decision: str, decided_by: str | None = None, *, has_rule: bool = False,
            outcome: str | None = None, ran: bool = False, review: str | None = None,
            waiting: bool = False, output: str | None = None) -> Verdict:
    """Who let the call run or stopped it.

    ``decision`` is the rules' kind (allow, ask, review, deny; the audit's decision column),
    ``decided_by`` what decided in words (the audit's column), ``has_rule`` whether a rule did;
    ``outcome`` how the call ended (None: not yet), ``ran`` whether it started, ``review`` the
    reviewers' answer (approved, rejected, ask), ``waiting`` whether a dialog is open for it
    now, ``output`` what the model was told (says when Stop came before an answer)."""
    text = (decided_by or "").strip().lower()
    if outcome == Outcome.INVALID:
        return Verdict.INVALID
    if text.startswith(REFUSED_BY_CAPABILITY_PREFIX):
        return Verdict.REFUSED_BY_CAPABILITY
    if review == "approved" or text.startswith(_REVIEW_APPROVED_PREFIXES):
        return Verdict.APPROVED_BY_REVIEW
    if review == "rejected" or text.startswith(_REVIEW_REJECTED_PREFIXES):
        return Verdict.REJECTED_BY_REVIEW
    if outcome == Outcome.CANCELLED and not ran:
        return Verdict.NOT_RUN
    if decision in ("ask", "review"):
        if ran or outcome in (Outcome.EXECUTED, Outcome.CANCELLED):
            return Verdict.APPROVED_BY_YOU
        if outcome == Outcome.DECLINED:
            stopped = (output or "").startswith(STOPPED_BEFORE_APPROVAL_PREFIX)
            return Verdict.NOT_ANSWERED if stopped else Verdict.DECLINED
        if outcome == Outcome.DENIED:  # refused after asking began (a capability check)
            return Verdict.REFUSED_BY_CAPABILITY
        if waiting:
            return Verdict.WAITING
        return Verdict.IN_REVIEW if decision == "review" else Verdict.ASKS_YOU
    by_mode = text.startswith(_MODE_PREFIXES)
    if decision == "allow":
        return Verdict.ALLOWED_BY_MODE if by_mode else Verdict.ALLOWED_BY_RULE
    if by_mode:
        return Verdict.DENIED_BY_MODE
    # A guard that refused what a rule allowed (the egress scan, the flow guard) names
    # itself: the badge says the guard, not the rule it overrode.
    if text and not text.startswith(("rule", "no rule matched")):
        return Verdict.DENIED_BY_GUARD
    return Verdict.DENIED_BY_RULE


def result_label(outcome: str, is_error: bool, *, ran: bool, refused: Verdict | None = None
                 ) -> str:
    """What became of a finished call, in the same words: done, failed, declined, denied by
    rule, refused by capability, invalid, not run, stopped while running. ``refused`` is the
    call's ``Verdict`` when it was stopped before running (it names who stopped it)."""
    if outcome == Outcome.EXECUTED:
        return "failed" if is_error else "done"
    if outcome == Outcome.CANCELLED:
        return "stopped while running" if ran else Verdict.NOT_RUN.value
    if outcome == Outcome.INVALID:
        return Verdict.INVALID.value
    if outcome == Outcome.DECLINED:
        if refused in (Verdict.REJECTED_BY_REVIEW, Verdict.NOT_ANSWERED):
            return refused.value if refused is Verdict.REJECTED_BY_REVIEW else \
                Verdict.NOT_RUN.value
        return Verdict.DECLINED.value
    if outcome == Outcome.DENIED:
        return refused.value if refused is not None and refused.tone == "deny" else \
            Verdict.DENIED_BY_RULE.value
    return str(outcome)
