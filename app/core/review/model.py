"""Plain data of the review package: reviewer configs, requests, reviews, results, the budget.

Everything here is a frozen dataclass or a small mutable counter, with no I/O, so the permission
service, the agent loop, the store and the UI can pass it around and persist it freely
(``Review.to_dict`` / ``Review.from_dict`` give the JSON form for the store).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

Provider = Literal["anthropic", "openai_compatible"]
Verdict = Literal["approve", "reject", "escalate"]
Risk = Literal["low", "medium", "high"]
Outcome = Literal["approved", "rejected", "ask"]

PROVIDERS: tuple[str, ...] = get_args(Provider)
VERDICTS: tuple[str, ...] = get_args(Verdict)
RISKS: tuple[str, ...] = get_args(Risk)

DEFAULT_TIMEOUT_S = 90.0
DEFAULT_MAX_CALLS_PER_RUN = 50


@dataclass(frozen=True)
class ReviewerConfig:
    """One reviewer model. ``api_key`` is resolved by the caller and never shown in ``repr``."""

    name: str                      # shown to the person
    provider: Provider
    model: str
    base_url: str | None = None    # None: api.anthropic.com for "anthropic"; required otherwise
    api_key: str | None = field(default=None, repr=False)
    timeout_s: float = DEFAULT_TIMEOUT_S
    max_calls_per_run: int = DEFAULT_MAX_CALLS_PER_RUN
    max_output_tokens: int = 1024

    def __post_init__(self) -> None:
        if not self.name.strip():
            raise ValueError("a reviewer needs a name")
        if self.provider not in PROVIDERS:
            raise ValueError(f"unknown reviewer provider {self.provider!r}")
        if not self.model.strip():
            raise ValueError(f"reviewer {self.name!r} needs a model")
        if self.provider == "openai_compatible" and not (self.base_url or "").strip():
            raise ValueError(f"reviewer {self.name!r}: an OpenAI-compatible endpoint needs "
                             "a base_url")
        if not (self.timeout_s > 0):
            raise ValueError(f"reviewer {self.name!r}: timeout_s must be positive")
        if self.max_calls_per_run < 0:
            raise ValueError(f"reviewer {self.name!r}: max_calls_per_run must be >= 0")
        if self.max_output_tokens < 64:
            raise ValueError(f"reviewer {self.name!r}: max_output_tokens must be >= 64")

    @property
    def budget_key(self) -> tuple[str, str, str, str]:
        return (self.name, self.provider, self.model, self.base_url or "")


@dataclass(frozen=True)
class ReviewRequest:
    """A tool call put before the reviewers. All fields are data; none is an instruction.

    ``conversation_excerpt`` is bounded by the caller; the prompt caps every field again.
    """

    tool_name: str
    server_id: str
    tool_input: Mapping[str, Any]
    preview: str | None = None       # diff / command preview the person would see
    deciding_rule: str = ""          # the rule that chose "review", described for a person
    flow_labels: tuple[str, ...] = ()
    contained: bool = False          # runs inside the sandbox / the project
    reversible: bool = False         # a checkpoint can undo it
    conversation_excerpt: str = ""


@dataclass(frozen=True)
class PlanReviewRequest:
    """The model's stated plan, reviewed before the first state-changing call of a run."""

    plan: str
    conversation_excerpt: str = ""
    tools: tuple[str, ...] = ()      # the tools the run may use, for context


AnyRequest = ReviewRequest | PlanReviewRequest


@dataclass(frozen=True)
class Review:
    """One reviewer's answer. ``error`` set means the reviewer failed; its verdict is then
    always "escalate" (and it never counts toward approval)."""

    reviewer: str
    model: str
    verdict: Verdict
    risk: Risk
    rationale: str
    concerns: tuple[str, ...] = ()
    latency_ms: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    error: str | None = None

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"invalid verdict {self.verdict!r}")
        if self.risk not in RISKS:
            raise ValueError(f"invalid risk {self.risk!r}")
        if self.error is not None and self.verdict != "escalate":
            raise ValueError("a failed review must have the verdict 'escalate'")

    @property
    def failed(self) -> bool:
        return self.error is not None

    @property
    def valid_approve(self) -> bool:
        return self.error is None and self.verdict == "approve"

    @classmethod
    def failure(cls, config: ReviewerConfig, error: str, *, latency_ms: int = 0,
                input_tokens: int = 0, output_tokens: int = 0) -> Review:
        """The review of a reviewer that did not give a valid verdict (fail closed)."""
        return cls(reviewer=config.name, model=config.model, verdict="escalate", risk="high",
                   rationale=f"No valid verdict: {error}", concerns=(), latency_ms=latency_ms,
                   input_tokens=input_tokens, output_tokens=output_tokens, error=error)

    def to_dict(self) -> dict[str, Any]:
        return {"reviewer": self.reviewer, "model": self.model, "verdict": self.verdict,
                "risk": self.risk, "rationale": self.rationale,
                "concerns": list(self.concerns), "latency_ms": self.latency_ms,
                "input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
                "error": self.error}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Review:
        return cls(reviewer=str(data["reviewer"]), model=str(data["model"]),
                   verdict=data["verdict"], risk=data["risk"],
                   rationale=str(data.get("rationale", "")),
                   concerns=tuple(str(c) for c in data.get("concerns") or ()),
                   latency_ms=int(data.get("latency_ms") or 0),
                   input_tokens=int(data.get("input_tokens") or 0),
                   output_tokens=int(data.get("output_tokens") or 0),
                   error=None if data.get("error") is None else str(data["error"]))


@dataclass(frozen=True)
class QuorumResult:
    """What the quorum decided. Only "approved" may let a call run without the person."""

    outcome: Outcome
    reviews: tuple[Review, ...]
    reason: str                      # one sentence for the person / the model

    @property
    def approved(self) -> bool:
        return self.outcome == "approved"

    def to_dict(self) -> dict[str, Any]:
        return {"outcome": self.outcome, "reason": self.reason,
                "reviews": [r.to_dict() for r in self.reviews]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> QuorumResult:
        outcome = data["outcome"]
        if outcome not in ("approved", "rejected", "ask"):
            raise ValueError(f"invalid outcome {outcome!r}")
        return cls(outcome=outcome, reason=str(data.get("reason", "")),
                   reviews=tuple(Review.from_dict(r) for r in data.get("reviews") or ()))


class ReviewBudget:
    """Calls per reviewer for one run. The caller keeps one per run (a new run, a new budget).

    ``reserve`` takes one call from every reviewer or from none: if any reviewer has used its
    ``max_calls_per_run``, the quorum cannot be unanimous, so nothing is spent.
    """

    def __init__(self) -> None:
        self._used: dict[tuple[str, str, str, str], int] = {}

    def used(self, config: ReviewerConfig) -> int:
        return self._used.get(config.budget_key, 0)

    def remaining(self, config: ReviewerConfig) -> int:
        return max(0, config.max_calls_per_run - self.used(config))

    def exhausted(self, reviewers: Sequence[ReviewerConfig]) -> list[ReviewerConfig]:
        """The reviewers that cannot take one more call each (a reviewer listed twice needs
        two)."""
        need: dict[tuple[str, str, str, str], int] = {}
        for config in reviewers:
            need[config.budget_key] = need.get(config.budget_key, 0) + 1
        return [c for c in reviewers if self.remaining(c) < need[c.budget_key]]

    def reserve(self, reviewers: Sequence[ReviewerConfig]) -> list[ReviewerConfig]:
        """Take one call from each reviewer; returns the exhausted ones (then takes nothing)."""
        out = self.exhausted(reviewers)
        if out:
            return out
        for config in reviewers:
            self._used[config.budget_key] = self.used(config) + 1
        return []

    def total_used(self) -> int:
        return sum(self._used.values())
