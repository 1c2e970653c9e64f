"""The reviewers' tokens and cost per day, from the reviews stored with the audit rows."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from app.core.pricing import ModelPrice, Usage, cost
from app.core.store.audit import ToolExecution


def review_usage_by_day(executions: Iterable[ToolExecution],
                        prices: Mapping[str, ModelPrice] | None = None
                        ) -> list[tuple[str, int, int, int, float | None]]:
    """(day, reviews, input tokens, output tokens, cost in dollars) per day with reviews,
    newest day first, from the audit rows' ``reviews`` (the stored QuorumResult dicts;
    anything else skipped). The cost is None when a reviewer's model has no price."""
    days: dict[str, list[Any]] = {}
    for execution in executions:
        data = execution.reviews
        if not isinstance(data, Mapping):
            continue
        day = (execution.created_at or "")[:10] or "?"
        totals = days.setdefault(day, [0, 0, 0, 0.0])
        for review in data.get("reviews") or ():
            if not isinstance(review, Mapping):
                continue
            try:
                tokens_in = int(review.get("input_tokens") or 0)
                tokens_out = int(review.get("output_tokens") or 0)
            except (TypeError, ValueError):
                continue
            totals[0] += 1
            totals[1] += tokens_in
            totals[2] += tokens_out
            spent = cost(str(review.get("model") or ""), Usage(tokens_in, tokens_out), prices)
            totals[3] = None if spent is None or totals[3] is None else totals[3] + spent
    return [(day, *values) for day, values in
            sorted(days.items(), reverse=True)]
