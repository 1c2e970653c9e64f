"""app.core.outcomes: one vocabulary for who decided a call and what became of it."""

from __future__ import annotations

import pytest

from app.core.outcomes import Outcome, Verdict, result_label, verdict

STOPPED = "The user stopped the run before approving this tool call, so it was not run."


@pytest.mark.parametrize(("args", "kwargs", "expected"), [
    (("allow", "rule #3: allow read_file"), {"has_rule": True}, Verdict.ALLOWED_BY_RULE),
    (("allow", "auto mode: a read inside the project"), {}, Verdict.ALLOWED_BY_MODE),
    (("ask", ""), {}, Verdict.ASKS_YOU),
    (("ask", ""), {"waiting": True}, Verdict.WAITING),
    (("review", ""), {}, Verdict.IN_REVIEW),
    (("ask", ""), {"outcome": Outcome.EXECUTED}, Verdict.APPROVED_BY_YOU),
    (("ask", ""), {"outcome": Outcome.CANCELLED, "ran": True}, Verdict.APPROVED_BY_YOU),
    (("ask", ""), {"outcome": Outcome.DECLINED}, Verdict.DECLINED),
    (("ask", ""), {"outcome": Outcome.DECLINED, "output": STOPPED}, Verdict.NOT_ANSWERED),
    (("ask", ""), {"outcome": Outcome.DENIED}, Verdict.REFUSED_BY_CAPABILITY),
    (("deny", "refused by capability: curl is not allowed"), {"has_rule": True,
                                                              "outcome": Outcome.DENIED},
     Verdict.REFUSED_BY_CAPABILITY),
    (("deny", "no rule matched"), {"outcome": Outcome.INVALID}, Verdict.INVALID),
    (("allow", "rule #3"), {"outcome": Outcome.CANCELLED}, Verdict.NOT_RUN),
    (("deny", "rule #4: deny"), {"has_rule": True, "outcome": Outcome.DENIED},
     Verdict.DENIED_BY_RULE),
    (("deny", "plan mode: this call would change something"), {"outcome": Outcome.DENIED},
     Verdict.DENIED_BY_MODE),
    (("deny", "secret egress check: a key"), {"outcome": Outcome.DENIED},
     Verdict.DENIED_BY_GUARD),
    (("ask", "approved by review: fine"), {"outcome": Outcome.EXECUTED},
     Verdict.APPROVED_BY_REVIEW),
    (("ask", ""), {"review": "rejected", "outcome": Outcome.DECLINED},
     Verdict.REJECTED_BY_REVIEW),
])
def test_verdict(args, kwargs, expected):
    assert verdict(*args, **kwargs) is expected


@pytest.mark.parametrize(("outcome", "is_error", "ran", "refused", "expected"), [
    (Outcome.EXECUTED, False, True, None, "done"),
    (Outcome.EXECUTED, True, True, None, "failed"),  # never "executed (error)"
    (Outcome.CANCELLED, True, True, None, "stopped while running"),
    (Outcome.CANCELLED, True, False, None, "not run"),
    (Outcome.INVALID, True, False, Verdict.INVALID, "invalid"),
    (Outcome.DECLINED, True, False, Verdict.DECLINED, "declined"),
    (Outcome.DECLINED, True, False, Verdict.NOT_ANSWERED, "not run"),
    (Outcome.DECLINED, True, False, Verdict.REJECTED_BY_REVIEW, "rejected by review"),
    (Outcome.DENIED, True, False, Verdict.REFUSED_BY_CAPABILITY, "refused by capability"),
    (Outcome.DENIED, True, False, Verdict.DENIED_BY_MODE, "denied by mode"),
    (Outcome.DENIED, True, False, None, "denied by rule"),
])
def test_result_label(outcome, is_error, ran, refused, expected):
    assert result_label(outcome, is_error, ran=ran, refused=refused) == expected
