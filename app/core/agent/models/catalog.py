"""Which model a profile should default to, and whether a saved model is deprecated (no Qt).

Two sources, best first:

- the provider's model list (``ModelInfo``: release date, line such as ``sonnet``, lifecycle
  and scheduled retirement), when a key is set and the API answered;
- the tables shipped with the installed Anthropic SDK: its end-of-life table
  (``DEPRECATED_MODELS``) and its list of model ids (the ``Model`` literal, newest first).

The SDK tables are read from the SDK's source files, not imported: importing the SDK costs
seconds and tens of MB, and the profile UI asks about deprecation while the window starts
(tests/unit/test_startup_path.py keeps the SDK out of an idle window). A test checks that this
reading equals the SDK's own objects, so an SDK that moves its tables fails loudly there; at
run time a missing table only means no warning, never a crash.

Nothing here changes a saved profile: a person who chose a deprecated model keeps it and is
told, with the date and a suggested replacement (the UI only displays the sentence).
"""

from __future__ import annotations

import ast
import importlib.util
import logging
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from functools import cache
from pathlib import Path
from typing import Any

from app.core.store.profiles import DEFAULT_MODEL

__all__ = [
    "DEFAULT_FAMILY",
    "Deprecation",
    "ModelInfo",
    "default_model",
    "deprecation",
    "end_of_life",
    "model_deprecation",
    "model_family",
    "newest_in_family",
    "sdk_deprecations",
    "sdk_model_ids",
]

log = logging.getLogger(__name__)

DEFAULT_FAMILY = "sonnet"
# The SDK's ModelLine values plus the retired "instant"; used only when the API gives no line.
_FAMILIES = ("haiku", "sonnet", "opus", "fable", "mythos", "instant")
_FAMILY_RE = re.compile(r"(?:^|-)(" + "|".join(_FAMILIES) + r")(?=-|$)")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class ModelInfo:
    """One entry of the provider's model list; only ``id`` is known for OpenAI-compatible
    servers."""

    id: str
    created_at: datetime | None = None
    line: str | None = None                 # "sonnet", "opus", … (None: not given)
    lifecycle: str = "active"               # "active", "deprecated" or "retired"
    retires_at: date | None = None
    display_name: str = ""

    @classmethod
    def from_api(cls, data: Mapping[str, Any]) -> ModelInfo | None:
        """From a ``/v1/models`` entry (a dict); None when it has no usable id."""
        model_id = data.get("id")
        if not isinstance(model_id, str) or not model_id.strip():
            return None
        line = data.get("line")
        lifecycle = data.get("lifecycle")
        retires = _parse_datetime(data.get("retires_at"))
        return cls(id=model_id, created_at=_parse_datetime(data.get("created_at")),
                   line=line if isinstance(line, str) and line else None,
                   lifecycle=lifecycle if isinstance(lifecycle, str) and lifecycle else "active",
                   retires_at=retires.date() if retires is not None else None,
                   display_name=str(data.get("display_name") or ""))


def _parse_datetime(value: Any) -> datetime | None:
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if isinstance(value, str) and value:
        try:
            parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    return None


# -- the SDK's tables ------------------------------------------------------------------------

_DATE_RE = re.compile(r"^\s*([A-Za-z]+)\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})\s*$")


def _parse_sdk_date(text: str) -> date | None:
    """``"November 30th, 2026"`` (the SDK's format) → 2026-11-30."""
    m = _DATE_RE.match(text)
    if m is None:
        return None
    try:
        return datetime.strptime(f"{m[1]} {m[2]} {m[3]}", "%B %d %Y").date()
    except ValueError:
        return None


def _sdk_dir() -> Path | None:
    try:
        spec = importlib.util.find_spec("anthropic")  # finds the package without importing it
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def _read_literal(path: Path, pattern: re.Pattern[str]) -> Any:
    try:
        source = path.read_text(encoding="utf-8")
    except OSError:
        return None
    m = pattern.search(source)
    if m is None:
        return None
    try:
        return ast.literal_eval(m.group(1))
    except (ValueError, SyntaxError):
        return None


_DEPRECATED_RE = re.compile(r"^DEPRECATED_MODELS\b[^=\n]*=\s*(\{.*?^\})", re.M | re.S)
_MODEL_LITERAL_RE = re.compile(r"^Model\b[^=\n]*=\s*Union\[\s*Literal\[(.*?)\]", re.M | re.S)


@cache
def sdk_deprecations() -> dict[str, date]:
    """Model id → end-of-life date, from the installed SDK (its full table in the Messages
    resource, merged with the newer ``_data`` table, which wins)."""
    root = _sdk_dir()
    table: dict[str, date] = {}
    if root is None:
        return table
    for rel in ("resources/messages/messages.py", "_data/deprecated_models.py"):
        value = _read_literal(root / rel, _DEPRECATED_RE)
        if not isinstance(value, dict):
            continue
        for model_id, when in value.items():
            parsed = _parse_sdk_date(when) if isinstance(when, str) else None
            if isinstance(model_id, str) and parsed is not None:
                table[model_id] = parsed
    if not table:
        log.warning("the Anthropic SDK's model deprecation table was not found")
    return table


@cache
def sdk_model_ids() -> tuple[str, ...]:
    """The model ids the SDK names, in its order (newest first)."""
    root = _sdk_dir()
    if root is None:
        return ()
    try:
        source = (root / "types" / "model.py").read_text(encoding="utf-8")
    except OSError:
        return ()
    m = _MODEL_LITERAL_RE.search(source)
    if m is None:
        return ()
    return tuple(re.findall(r"\"([^\"]+)\"", m.group(1)))


# -- choosing and warning --------------------------------------------------------------------


def model_family(model_id: str, line: str | None = None) -> str | None:
    """The model's line: the API's ``line`` when given, else read from the id."""
    if line:
        return line
    m = _FAMILY_RE.search(model_id)
    return m.group(1) if m else None


def end_of_life(model_id: str, available: Iterable[ModelInfo] = ()) -> date | None:
    """When ``model_id`` stops working: the provider's ``retires_at`` if it lists one, else
    the SDK's table; None when neither says the model is deprecated."""
    for info in available:
        if info.id == model_id and info.retires_at is not None:
            return info.retires_at
    return sdk_deprecations().get(model_id)


def _usable(info: ModelInfo) -> bool:
    return info.lifecycle == "active" and info.id not in sdk_deprecations()


def newest_in_family(models: Sequence[ModelInfo], family: str = DEFAULT_FAMILY) -> str | None:
    """The newest active, non-deprecated model of ``family`` by ``created_at``; on a tie (or
    no dates) the one listed first, as the API lists newest first."""
    best: tuple[datetime, int, str] | None = None
    for index, info in enumerate(models):
        if model_family(info.id, info.line) != family or not _usable(info):
            continue
        key = (info.created_at or _EPOCH, -index, info.id)
        if best is None or key[:2] > best[:2]:
            best = key
    return best[2] if best else None


def default_model(available: Sequence[ModelInfo] = (), family: str = DEFAULT_FAMILY) -> str:
    """The model for a new profile or "use default": the newest of ``family`` the provider
    lists, else the built-in default."""
    return newest_in_family(available, family) or DEFAULT_MODEL


def _replacement(model_id: str, available: Sequence[ModelInfo]) -> str:
    family = model_family(model_id, next((m.line for m in available if m.id == model_id), None))
    if family is not None:
        if available:
            newest = newest_in_family(available, family)
            if newest is not None and newest != model_id:
                return newest
        newest = newest_in_family([ModelInfo(i) for i in sdk_model_ids()], family)
        if newest is not None and newest != model_id:
            return newest
    return default_model(available)


@dataclass(frozen=True)
class Deprecation:
    """What to tell a person about a deprecated or retired model."""

    model: str
    end_of_life: date | None     # None: deprecated without a known date
    retired: bool                # past its end of life (or the provider says retired)
    replacement: str | None      # None: no better model known
    days_left: int | None = None

    def sentence(self) -> str:
        advice = (f"Suggested replacement: {self.replacement}." if self.replacement
                  else "Choose a current model.")
        if self.retired:
            when = f" on {self.end_of_life.isoformat()}" if self.end_of_life else ""
            return f"{self.model} reached its end of life{when}: requests to it fail. {advice}"
        if self.end_of_life is None or self.days_left is None:
            return f"{self.model} is deprecated and will be retired. {advice}"
        left = "tomorrow" if self.days_left == 1 else f"in {self.days_left} days"
        return (f"{self.model} is deprecated and reaches its end of life on "
                f"{self.end_of_life.isoformat()} ({left}). {advice}")

    def short(self) -> str:
        """A few words for a toolbar; the sentence goes in its tooltip."""
        if self.retired:
            what = "retired" + (f" {self.end_of_life.isoformat()}" if self.end_of_life else "")
        elif self.end_of_life is not None:
            what = f"deprecated, retires {self.end_of_life.isoformat()}"
        else:
            what = "deprecated"
        return what + (f" · use {self.replacement}" if self.replacement else "")


def deprecation(model_id: str, today: date,
                available: Sequence[ModelInfo] = ()) -> Deprecation | None:
    """The facts behind :func:`model_deprecation`; None when there is nothing to warn about."""
    model_id = model_id.strip()
    if not model_id:
        return None
    listed = next((m for m in available if m.id == model_id), None)
    eol = end_of_life(model_id, available)
    retired = listed is not None and listed.lifecycle == "retired"
    deprecated = listed is not None and listed.lifecycle == "deprecated"
    if eol is None and not retired and not deprecated:
        return None
    suggestion = _replacement(model_id, available)
    return Deprecation(model=model_id, end_of_life=eol,
                       retired=retired or (eol is not None and eol <= today),
                       replacement=suggestion if suggestion != model_id else None,
                       days_left=(eol - today).days if eol is not None else None)


def model_deprecation(model_id: str, today: date,
                      available: Sequence[ModelInfo] = ()) -> str | None:
    """A sentence for a person when ``model_id`` is deprecated or past its end of life (with
    the date and a suggested replacement); None when there is nothing to warn about."""
    found = deprecation(model_id, today, available)
    return found.sentence() if found is not None else None
