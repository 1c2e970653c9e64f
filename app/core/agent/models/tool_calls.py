"""Streamed tool input → ``ToolCall``, for both providers.

The model streams a tool's input as JSON text in pieces; whatever arrives, the loop needs a
JSON object it can run, validate and send back to the API, or a message for the model saying
why not. Both the Anthropic and the OpenAI-compatible streams end here, so neither provider
imports the other.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from app.core.agent.models.base import ToolCall

log = logging.getLogger(__name__)

# Tool inputs are shallow objects; anything deeper is a runaway model, and deep nesting breaks
# what the loop does with an input afterwards (deepcopy, schema validation, json.dumps), each of
# which recurses in Python.
MAX_INPUT_DEPTH = 100
CUT_OFF = ("the input was cut off because the response reached max_tokens; send a smaller input "
           "(e.g. split the content over several calls)")


def parse_tool_call(call_id: str, name: str, raw: str, stop_reason: str | None) -> ToolCall:
    """A ToolCall from streamed JSON text. Anything that is not a JSON object we can send back
    to the API becomes ``error`` (a message for the model); this never raises."""
    try:
        raw, why = _safe_text(raw)
        if why is None:
            if not raw.strip():
                return ToolCall(call_id, name, {}, raw)
            value, why = _load_object(raw)
            if why is None:
                return ToolCall(call_id, name, value, raw)
    except Exception as exc:  # any parser surprise is the model's bad input, not our crash
        log.warning("unexpected failure parsing the input of %s: %r", name, exc)
        why = f"the input could not be read ({type(exc).__name__})"
    if stop_reason == "max_tokens":
        why = CUT_OFF
    return ToolCall(call_id, name, {}, raw if isinstance(raw, str) else "", why)


def _safe_text(raw: object) -> tuple[str, str | None]:
    """``raw`` as text that can be stored (UTF-8 encodable), and why it is unusable if so."""
    if not isinstance(raw, str):
        return "", f"the input must be JSON text, not {type(raw).__name__}"
    try:
        raw.encode("utf-8")
    except UnicodeEncodeError:
        # Lone surrogates cannot go to SQLite or the API; keep a readable copy for the audit.
        safe = raw.encode("utf-8", "backslashreplace").decode("utf-8")
        return safe, ("the input contains invalid text (a lone UTF-16 surrogate); send valid "
                      "Unicode text")
    return raw, None


def _load_object(raw: str) -> tuple[dict[str, Any], str | None]:
    try:
        value = json.loads(raw, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        return {}, f"the input is not valid JSON ({exc.msg} at position {exc.pos})"
    except RecursionError:
        return {}, _too_deep()
    except _NonFinite:
        return {}, _NON_FINITE
    except ValueError as exc:
        if "digits" in str(exc):  # CPython's int-string conversion limit
            return {}, ("a number in the input has too many digits (the limit is 4300); "
                        "send very long numbers as strings")
        return {}, f"the input is not valid JSON ({_short(exc)})"
    if not isinstance(value, dict):
        return {}, f"the input must be a JSON object, not {type(value).__name__}"
    # Fewer brackets than the limit cannot nest deeper than it: the walk is for rare inputs.
    if raw.count("{") + raw.count("[") > MAX_INPUT_DEPTH and _deeper_than(value, MAX_INPUT_DEPTH):
        return {}, _too_deep()
    try:
        # What is kept is sent back to the API in the next request: it must serialise as JSON
        # (no NaN or infinities, e.g. from 1e999) and encode as UTF-8 (no lone surrogates
        # from "\\ud800" escapes).
        json.dumps(value, ensure_ascii=False, allow_nan=False).encode("utf-8")
    except ValueError as exc:  # UnicodeEncodeError is a ValueError too
        if isinstance(exc, UnicodeEncodeError):
            return {}, ("the input contains invalid text (a lone UTF-16 surrogate escape such "
                        "as \\ud800); send valid Unicode text")
        return {}, _NON_FINITE
    return value, None


class _NonFinite(ValueError):
    pass


_NON_FINITE = ("the input contains a number JSON cannot represent (NaN, Infinity or one too "
               "large for a float); send it as a string")


def _reject_constant(name: str) -> Any:
    raise _NonFinite(name)


def _too_deep() -> str:
    return (f"the input is nested too deeply (more than {MAX_INPUT_DEPTH} levels of objects "
            "and arrays); send a flatter input")


def _short(exc: BaseException) -> str:
    text = str(exc)
    return text if len(text) <= 200 else text[:199] + "…"


def _deeper_than(value: Any, limit: int) -> bool:
    """True when ``value`` nests more than ``limit`` containers deep. Iterative: the point is
    to catch what recursion cannot handle."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True
        children = node.values() if isinstance(node, dict) else node
        stack.extend((child, depth + 1) for child in children
                     if isinstance(child, dict | list))
    return False
