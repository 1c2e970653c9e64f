"""The quorum: all reviewers in parallel, one outcome, and the repeated-rejection helper.

``decide`` is the whole policy, as a pure function of the reviews:

1. no reviewer configured                                  → "ask"
2. a reviewer missing, or any review failed (``error``)    → "ask"
3. every review is a valid "approve"                       → "approved"
4. any valid "reject"                                      → "rejected" (rationales to the model)
5. anything else (an "escalate" among approvals)           → "ask"

With ``split="ask"`` a reject next to an approve (reviewers disagree) asks the person instead of
rejecting. Both outcomes fail closed; "approved" is reachable only through rule 3.
"""

from __future__ import annotations

import asyncio
import logging
import posixpath
import shlex
import ssl
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from app.core.review.model import (
    AnyRequest,
    QuorumResult,
    Review,
    ReviewBudget,
    ReviewerConfig,
)
from app.core.review.reviewer import review_once

if TYPE_CHECKING:  # imported where a request is made: start-up never loads httpx
    import httpx

log = logging.getLogger(__name__)

Split = Literal["reject", "ask"]
ReviewCallback = Callable[[Review], None]

MAX_FEEDBACK_CHARS = 4000


def _names(reviews: Sequence[Review]) -> str:
    return ", ".join(r.reviewer for r in reviews)


def decide(reviewers: Sequence[ReviewerConfig] | int, reviews: Sequence[Review], *,
           split: Split = "reject") -> QuorumResult:
    """The outcome of a set of reviews (see the module docstring). ``reviewers`` is the list
    that was asked, or its length: fewer reviews than reviewers is never unanimous."""
    expected = reviewers if isinstance(reviewers, int) else len(reviewers)
    reviews = tuple(reviews)
    if expected <= 0:
        return QuorumResult("ask", reviews, "No reviewer is configured, so you decide.")
    if len(reviews) != expected:
        return QuorumResult("ask", reviews,
                            f"Only {len(reviews)} of {expected} reviewers answered, "
                            "so you decide.")
    failed = [r for r in reviews if r.failed]
    if failed:
        first = failed[0]
        more = f" (and {len(failed) - 1} more)" if len(failed) > 1 else ""
        return QuorumResult("ask", reviews,
                            f"Reviewer {first.reviewer} gave no valid verdict "
                            f"({first.error}){more}, so you decide.")
    if all(r.valid_approve for r in reviews):
        n = len(reviews)
        return QuorumResult("approved", reviews,
                            "Approved by the reviewer." if n == 1 else
                            f"Approved unanimously by {n} reviewers.")
    rejects = [r for r in reviews if r.verdict == "reject"]
    approves = [r for r in reviews if r.verdict == "approve"]
    if rejects and not (split == "ask" and approves):
        return QuorumResult("rejected", reviews,
                            f"Rejected by {_names(rejects)}: {rejects[0].rationale}"[:500])
    if rejects:
        return QuorumResult("ask", reviews,
                            f"The reviewers disagree ({_names(approves)} approve, "
                            f"{_names(rejects)} reject), so you decide.")
    escalated = [r for r in reviews if r.verdict == "escalate"]
    return QuorumResult("ask", reviews,
                        f"{_names(escalated)} asked for your decision: "
                        f"{escalated[0].rationale}"[:500])


async def run_quorum(reviewers: Sequence[ReviewerConfig], request: AnyRequest, *,
                     budget: ReviewBudget | None = None,
                     on_review: ReviewCallback | None = None,
                     transport: httpx.AsyncClient | None = None,
                     split: Split = "reject") -> QuorumResult:
    """Ask every reviewer at once and decide. Never raises except CancelledError.

    ``budget``: the run's ReviewBudget; when any reviewer has used its calls, no reviewer is
    asked and the outcome is "ask". ``on_review`` is called (on the event loop) as each review
    arrives, failures included; an exception in it is logged and ignored. ``transport``: a
    shared httpx.AsyncClient (kept open); without one a client is made and closed here.
    Cancelling this coroutine cancels every reviewer request. ``reviews`` in the result are in
    the order of ``reviewers``.
    """
    reviewers = list(reviewers)
    if not reviewers:
        return decide(0, ())
    try:
        if budget is not None:
            exhausted = budget.reserve(reviewers)
            if exhausted:
                reviews = tuple(Review.failure(
                    c, f"review budget exhausted ({c.max_calls_per_run} calls this run)")
                    for c in exhausted)
                for review in reviews:
                    _notify(on_review, review)
                return QuorumResult("ask", reviews,
                                    f"The review budget of {_names(reviews)} is used up for "
                                    "this run, so you decide.")
        start = time.perf_counter()
        if transport is not None:
            reviews = await _gather(transport, reviewers, request, on_review)
        else:
            import httpx

            async with httpx.AsyncClient(verify=_ssl_context()) as client:
                reviews = await _gather(client, reviewers, request, on_review)
        result = decide(reviewers, reviews, split=split)
        log.info("review of %s: %s (%s) in %d ms", _subject(request), result.outcome,
                 " ".join(f"{r.reviewer}={r.verdict}{'!' if r.failed else ''}"
                          for r in reviews),
                 int((time.perf_counter() - start) * 1000))
        return result
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # a bug here must not run the call either
        log.exception("review failed")
        return QuorumResult("ask", (), f"The review failed ({type(exc).__name__}), "
                                       "so you decide.")


_SSL_CONTEXT: ssl.SSLContext | None = None


def _ssl_context() -> ssl.SSLContext:
    """One verifying SSL context for every client run_quorum makes (building one costs
    ~20 ms; reusing it makes a fresh client cost under a millisecond)."""
    global _SSL_CONTEXT
    if _SSL_CONTEXT is None:
        import httpx

        _SSL_CONTEXT = httpx.create_ssl_context()
    return _SSL_CONTEXT


def _subject(request: AnyRequest) -> str:
    return getattr(request, "tool_name", "plan")


def _notify(on_review: ReviewCallback | None, review: Review) -> None:
    if on_review is None:
        return
    try:
        on_review(review)
    except Exception:
        log.exception("on_review callback failed")


async def _gather(client: httpx.AsyncClient, reviewers: list[ReviewerConfig],
                  request: AnyRequest, on_review: ReviewCallback | None) -> tuple[Review, ...]:
    async def one(config: ReviewerConfig) -> Review:
        review = await review_once(client, config, request)
        _notify(on_review, review)
        return review

    async with asyncio.TaskGroup() as group:  # leaving it cancelled cancels every request
        tasks = [group.create_task(one(c), name=f"review:{c.name}") for c in reviewers]
    return tuple(t.result() for t in tasks)


def rejection_feedback(result: QuorumResult) -> str:
    """The tool result the model receives when the reviewers reject its call: who rejected
    and why, so it can revise. Reviewer text is capped; it is data for the model."""
    lines = ["The tool call was not run: the reviewers rejected it."]
    for review in result.reviews:
        if review.verdict != "reject":
            continue
        lines.append(f"- {review.reviewer} (risk {review.risk}): {review.rationale}")
        lines.extend(f"  - {concern}" for concern in review.concerns)
    lines.append("Revise the call to address these concerns, or explain to the person why "
                 "it is needed.")
    text = "\n".join(lines)
    return text if len(text) <= MAX_FEEDBACK_CHARS else text[:MAX_FEEDBACK_CHARS] + " …"


# -- repeated rejections -----------------------------------------------------------------------

_TARGET_KEYS = ("path", "file_path", "filepath", "filename", "file", "target", "destination",
                "dest", "url", "uri", "to", "recipient", "repo", "repository", "name")
_COMMAND_KEYS = ("command", "cmd", "script")


def intent_key(tool_name: str, tool_input: Mapping[str, Any], server_id: str = "") -> str:
    """A key that stays the same while the model revises the same intent.

    The server, the tool, and what it acts on: the first target-like argument (a path, URL,
    recipient...), normalised, or for a command the program it runs. A revision that changes
    the content but not the target keeps the key; a call on another target gets its own.
    """
    target = ""
    for key in _TARGET_KEYS:
        value = tool_input.get(key)
        if isinstance(value, str) and value.strip():
            value = value.strip()
            if "://" not in value:
                value = posixpath.normpath(value.replace("\\", "/"))
            target = f"{key}={value}"
            break
    if not target:
        for key in _COMMAND_KEYS:
            value = tool_input.get(key)
            if isinstance(value, str) and value.strip():
                try:
                    words = shlex.split(value)
                except ValueError:
                    words = value.split()
                target = f"{key}={posixpath.basename(words[0])}" if words else ""
                break
    return f"{server_id}\x1f{tool_name}\x1f{target}"


class RejectionTracker:
    """Counts rejected revisions of the same intent; after ``limit`` the person is asked.

    Keep one per run (or per conversation). After each quorum call ``apply``::

        result = tracker.apply(tool_name, intent_key(tool_name, tool_input, server_id), result)

    A "rejected" result counts; the ``limit``-th rejection of the same key comes back as "ask"
    (the person sees the reviews) and the count starts over. "approved" and "ask" also start the
    count over for that key. Memory is bounded (the oldest keys are forgotten first).
    """

    def __init__(self, limit: int = 3, max_keys: int = 1000) -> None:
        if limit < 1:
            raise ValueError("limit must be at least 1")
        self.limit = limit
        self.max_keys = max_keys
        self._counts: OrderedDict[tuple[str, str], int] = OrderedDict()

    def count(self, tool_name: str, intent: str) -> int:
        return self._counts.get((tool_name, intent), 0)

    def record_rejection(self, tool_name: str, intent: str) -> bool:
        """Count one rejection; True when the person should now be asked."""
        key = (tool_name, intent)
        n = self._counts.pop(key, 0) + 1
        self._counts[key] = n
        while len(self._counts) > self.max_keys:
            self._counts.popitem(last=False)
        return n >= self.limit

    def reset(self, tool_name: str, intent: str) -> None:
        self._counts.pop((tool_name, intent), None)

    def clear(self) -> None:
        self._counts.clear()

    def apply(self, tool_name: str, intent: str, result: QuorumResult) -> QuorumResult:
        """``result``, turned into "ask" on the ``limit``-th rejection of the same intent."""
        if result.outcome != "rejected":
            self.reset(tool_name, intent)
            return result
        if not self.record_rejection(tool_name, intent):
            return result
        self.reset(tool_name, intent)
        return QuorumResult("ask", result.reviews,
                            f"The reviewers rejected this {self.limit} times, so you decide.")
