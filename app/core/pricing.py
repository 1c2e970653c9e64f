"""What a model turn costs: a per-model price table (US dollars per million tokens) and the
arithmetic, shared by the usage display, the tool history and the review costs.

The shipped table holds list prices as Tebiki knew them on ``PRICES_AS_OF``; prices change, so
Settings → Usage & prices lets the person edit them (the ``PRICES`` setting of
app.core.settings_fields, merged over these). A model is priced by the longest table key that
starts its name ("claude-sonnet-5-5-20261001" → "claude-sonnet"), so new versions of a family
are priced without an update; an unknown model costs nothing and says so (``price_for`` → None).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "DEFAULT_PRICES",
    "PRICES_AS_OF",
    "ModelPrice",
    "Usage",
    "cost",
    "price_for",
    "prices_from_setting",
]

PRICES_AS_OF = "2025-11-24"

# Cache writes cost 1.25× input for the 5-minute cache and 2× for the 1-hour one; reads 0.1×.
CACHE_WRITE_5M = 1.25
CACHE_WRITE_1H = 2.0
CACHE_READ = 0.1


@dataclass(frozen=True)
class ModelPrice:
    input_per_mtok: float
    output_per_mtok: float


DEFAULT_PRICES: dict[str, ModelPrice] = {
    "claude-opus-4-1": ModelPrice(15.0, 75.0),
    "claude-opus-4-0": ModelPrice(15.0, 75.0),
    "claude-opus": ModelPrice(5.0, 25.0),
    "claude-sonnet": ModelPrice(3.0, 15.0),
    "claude-haiku-4": ModelPrice(1.0, 5.0),
    "claude-3-5-haiku": ModelPrice(0.8, 4.0),
    "claude-haiku": ModelPrice(1.0, 5.0),
}


@dataclass(frozen=True)
class Usage:
    """Tokens of one turn (or a sum of turns). ``input_tokens`` is the uncached input."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_write_tokens: int = 0
    cache_read_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(self.input_tokens + other.input_tokens,
                     self.output_tokens + other.output_tokens,
                     self.cache_write_tokens + other.cache_write_tokens,
                     self.cache_read_tokens + other.cache_read_tokens)

    @property
    def total_input(self) -> int:
        return self.input_tokens + self.cache_write_tokens + self.cache_read_tokens


def prices_from_setting(value: Any) -> dict[str, ModelPrice]:
    """The table with the person's edits (``{model prefix: [input, output]}``) merged over the
    shipped one; malformed entries are ignored."""
    table = dict(DEFAULT_PRICES)
    if isinstance(value, Mapping):
        for key, pair in value.items():
            if (isinstance(key, str) and key.strip() and isinstance(pair, list | tuple)
                    and len(pair) == 2 and all(isinstance(p, int | float) and p >= 0
                                               for p in pair)):
                table[key.strip()] = ModelPrice(float(pair[0]), float(pair[1]))
    return table


def price_for(model: str, table: Mapping[str, ModelPrice] | None = None) -> ModelPrice | None:
    table = DEFAULT_PRICES if table is None else table
    best = max((key for key in table if model.startswith(key)), key=len, default=None)
    return table[best] if best is not None else None


def cost(model: str, usage: Usage, table: Mapping[str, ModelPrice] | None = None, *,
         cache_ttl: str = "5m") -> float | None:
    """Dollars for ``usage`` on ``model``; None when the model has no price."""
    price = price_for(model, table)
    if price is None:
        return None
    write = CACHE_WRITE_1H if cache_ttl == "1h" else CACHE_WRITE_5M
    input_cost = (usage.input_tokens + usage.cache_write_tokens * write
                  + usage.cache_read_tokens * CACHE_READ) * price.input_per_mtok
    return (input_cost + usage.output_tokens * price.output_per_mtok) / 1_000_000
