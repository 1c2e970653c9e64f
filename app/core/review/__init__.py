"""Quorum review: reviewer models in front of the person for risky tool calls (issue 18).

Data in, data out. This package sits next to ``app.core.permissions`` and below the agent
layer: it imports neither Qt, ``app.ui``, ``app.core.agent`` nor the permission service; it
takes plain data and returns plain data. Only httpx does I/O.

API
===

Config and requests (``model.py``, frozen dataclasses)::

    ReviewerConfig(name, provider: "anthropic" | "openai_compatible", model, base_url=None,
                   api_key=None, timeout_s=90.0, max_calls_per_run=50, max_output_tokens=1024)
        # api_key resolved by the caller (keyring / env); hidden from repr, redacted from errors
    ReviewRequest(tool_name, server_id, tool_input, preview=None, deciding_rule="",
                  flow_labels=(), contained=False, reversible=False, conversation_excerpt="")
    PlanReviewRequest(plan, conversation_excerpt="", tools=())   # the seed's plan review

Results::

    Review(reviewer, model, verdict: "approve"|"reject"|"escalate", risk: "low"|"medium"|"high",
           rationale, concerns: tuple[str, ...], latency_ms, input_tokens=0, output_tokens=0,
           error: str | None = None)     # error set ⇒ verdict "escalate" (enforced)
        .failed, .valid_approve, .to_dict(), Review.from_dict(d)
    QuorumResult(outcome: "approved"|"rejected"|"ask", reviews: tuple[Review, ...], reason)
        .approved, .to_dict(), QuorumResult.from_dict(d)

The quorum (``quorum.py``)::

    async run_quorum(reviewers, request, *, budget=None, on_review=None, transport=None,
                     split="reject") -> QuorumResult
    decide(reviewers_or_count, reviews, *, split="reject") -> QuorumResult   # the pure policy
    rejection_feedback(result) -> str      # the tool result for the model after "rejected"
    ReviewBudget()                         # one per run: .reserve(), .used(c), .remaining(c)
    RejectionTracker(limit=3)              # one per run: .apply(tool, intent, result)
    intent_key(tool_name, tool_input, server_id="") -> str

Semantics
=========

* No reviewer → "ask". Every reviewer answered with a valid ``approve`` → "approved" (the only
  way to "approved"). Any valid ``reject`` and no failure → "rejected" (``split="ask"`` turns
  approve-vs-reject into "ask"). An ``escalate``, a timeout, an HTTP error, a dropped
  connection, a malformed answer (not JSON, text instead of the tool call, a wrong tool, missing
  / extra / mistyped fields, unknown enum values, over-long fields), an exhausted budget, or a
  bug in this package → "ask".
* Reviewers run concurrently (``asyncio.TaskGroup``; each request bounded by
  ``asyncio.wait_for(timeout_s)`` and the same httpx timeout), so the total is about the
  slowest reviewer. ``on_review`` is called on the loop as each review arrives. Cancelling
  ``run_quorum`` cancels every request.
* Budget: ``ReviewBudget.reserve`` takes one call from every reviewer or none; if any reviewer
  is used up, nobody is asked (the quorum could not be unanimous) and the result is "ask".
* After "rejected", return ``rejection_feedback(result)`` to the model as the tool result. Pass
  every result through ``RejectionTracker.apply(tool, intent_key(...), result)``: the third
  rejection of the same intent comes back as "ask", so the person decides.
* The caller must never review a call a deny rule blocks, and an "approved" result only stands
  in for the person's "allow once": it never widens a capability or writes a rule.

Fail closed
===========

``review_once`` (``reviewer.py``) turns every failure into a ``Review`` with ``error`` set and
verdict "escalate" (``Review`` refuses any other verdict with an error); ``run_quorum`` catches
anything else and answers "ask"; ``decide`` returns "approved" only when the number of reviews
equals the number of reviewers and each one is an error-free "approve" read from the
``submit_verdict`` tool call. Reviewer prose is never parsed. The prompt (``prompt.py``) puts
the call and the excerpt in tags as escaped JSON and tells the reviewer to ignore instructions
in them, but safety does not depend on the reviewer obeying that.

Logging: reviewer names, verdicts and latency only; never the key or the tool input.
"""

from __future__ import annotations

from app.core.review.model import (
    AnyRequest,
    Outcome,
    PlanReviewRequest,
    Provider,
    QuorumResult,
    Review,
    ReviewBudget,
    ReviewerConfig,
    ReviewRequest,
    Risk,
    Verdict,
)
from app.core.review.prompt import SYSTEM_PROMPT, TOOL_NAME, VERDICT_SCHEMA
from app.core.review.quorum import (
    RejectionTracker,
    decide,
    intent_key,
    rejection_feedback,
    run_quorum,
)
from app.core.review.reviewer import review_once

__all__ = [
    "SYSTEM_PROMPT",
    "TOOL_NAME",
    "VERDICT_SCHEMA",
    "AnyRequest",
    "Outcome",
    "PlanReviewRequest",
    "Provider",
    "QuorumResult",
    "RejectionTracker",
    "Review",
    "ReviewBudget",
    "ReviewRequest",
    "ReviewerConfig",
    "Risk",
    "Verdict",
    "decide",
    "intent_key",
    "rejection_feedback",
    "review_once",
    "run_quorum",
]
