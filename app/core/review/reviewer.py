"""One reviewer call over httpx, and the strict check of its answer.

``review_once`` never raises for anything the reviewer or the network does: every failure
(timeout, HTTP error, dropped connection, non-JSON, text instead of the tool call, a wrong tool,
missing / extra / mistyped fields, an unknown enum value, an over-long field) becomes a ``Review``
with ``error`` set and the verdict "escalate". Only cancellation propagates.

Anthropic: ``POST {base}/v1/messages`` with ``x-api-key`` and ``anthropic-version: 2023-06-01``,
one tool ``submit_verdict`` and ``tool_choice`` forcing it. OpenAI-compatible:
``POST {base}/chat/completions`` (``/v1`` appended when the URL has no version) with one function
tool and ``tool_choice`` forcing it, ``stream: false``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import time
from typing import TYPE_CHECKING, Any, cast

from app.core.review.model import (
    RISKS,
    VERDICTS,
    AnyRequest,
    Review,
    ReviewerConfig,
    Risk,
    Verdict,
)
from app.core.review.prompt import (
    MAX_CONCERN_CHARS,
    MAX_CONCERNS,
    MAX_RATIONALE_CHARS,
    SYSTEM_PROMPT,
    TOOL_DESCRIPTION,
    TOOL_NAME,
    VERDICT_SCHEMA,
    user_message,
)

if TYPE_CHECKING:  # imported where a request is made: start-up never loads httpx
    import httpx

log = logging.getLogger(__name__)

ANTHROPIC_BASE_URL = "https://api.anthropic.com"
ANTHROPIC_VERSION = "2023-06-01"
MAX_RESPONSE_BYTES = 1_000_000
_MAX_ERROR_CHARS = 200
_FIELDS = frozenset(VERDICT_SCHEMA["required"])


class InvalidAnswer(Exception):
    """The reviewer answered, but not with one valid submit_verdict call."""


def anthropic_url(base_url: str | None) -> str:
    base = (base_url or ANTHROPIC_BASE_URL).strip().rstrip("/")
    base = base.removesuffix("/v1/messages").removesuffix("/v1")
    return base + "/v1/messages"


def openai_url(base_url: str | None) -> str:
    base = (base_url or "").strip().rstrip("/").removesuffix("/chat/completions")
    if not re.search(r"/v\d+[a-z]*$", base):
        base += "/v1"
    return base + "/chat/completions"


def build_http_request(config: ReviewerConfig,
                       request: AnyRequest) -> tuple[str, dict[str, str], dict[str, Any]]:
    """(url, headers, JSON body) of the reviewer call. The headers hold the key: never log."""
    text = user_message(request)
    if config.provider == "anthropic":
        headers = {"anthropic-version": ANTHROPIC_VERSION, "content-type": "application/json"}
        if config.api_key:
            headers["x-api-key"] = config.api_key
        body: dict[str, Any] = {
            "model": config.model,
            "max_tokens": config.max_output_tokens,
            "system": SYSTEM_PROMPT,
            "messages": [{"role": "user", "content": text}],
            "tools": [{"name": TOOL_NAME, "description": TOOL_DESCRIPTION,
                       "input_schema": VERDICT_SCHEMA}],
            "tool_choice": {"type": "tool", "name": TOOL_NAME},
        }
        return anthropic_url(config.base_url), headers, body
    headers = {"content-type": "application/json"}
    if config.api_key:
        headers["authorization"] = f"Bearer {config.api_key}"
    body = {
        "model": config.model,
        "max_tokens": config.max_output_tokens,
        "stream": False,
        "messages": [{"role": "system", "content": SYSTEM_PROMPT},
                     {"role": "user", "content": text}],
        "tools": [{"type": "function",
                   "function": {"name": TOOL_NAME, "description": TOOL_DESCRIPTION,
                                "parameters": VERDICT_SCHEMA}}],
        "tool_choice": {"type": "function", "function": {"name": TOOL_NAME}},
    }
    return openai_url(config.base_url), headers, body


# -- the strict answer check ---------------------------------------------------------------------


def validate_verdict(data: Any) -> tuple[Verdict, Risk, str, tuple[str, ...]]:
    """(verdict, risk, rationale, concerns) from a submit_verdict input, or InvalidAnswer."""
    if not isinstance(data, dict):
        raise InvalidAnswer(f"verdict is a {type(data).__name__}, not an object")
    keys = set(data)
    if keys != _FIELDS:
        missing, extra = sorted(_FIELDS - keys), sorted(str(k) for k in keys - _FIELDS)
        raise InvalidAnswer("verdict fields wrong"
                            + (f"; missing {', '.join(missing)}" if missing else "")
                            + (f"; unexpected {', '.join(extra)[:100]}" if extra else ""))
    verdict, risk = data["verdict"], data["risk"]
    rationale, concerns = data["rationale"], data["concerns"]
    if type(verdict) is not str or verdict not in VERDICTS:
        raise InvalidAnswer(f"verdict must be one of {'/'.join(VERDICTS)}")
    if type(risk) is not str or risk not in RISKS:
        raise InvalidAnswer(f"risk must be one of {'/'.join(RISKS)}")
    if type(rationale) is not str or not rationale.strip():
        raise InvalidAnswer("rationale must be a non-empty string")
    if len(rationale) > MAX_RATIONALE_CHARS:
        raise InvalidAnswer(f"rationale longer than {MAX_RATIONALE_CHARS} characters")
    if type(concerns) is not list:
        raise InvalidAnswer("concerns must be a list")
    if len(concerns) > MAX_CONCERNS:
        raise InvalidAnswer(f"more than {MAX_CONCERNS} concerns")
    for concern in concerns:
        if type(concern) is not str or not concern.strip():
            raise InvalidAnswer("each concern must be a non-empty string")
        if len(concern) > MAX_CONCERN_CHARS:
            raise InvalidAnswer(f"a concern is longer than {MAX_CONCERN_CHARS} characters")
    return (cast(Verdict, verdict), cast(Risk, risk), rationale.strip(),
            tuple(c.strip() for c in concerns))


def _tokens(usage: Any, *names: str) -> int:
    if not isinstance(usage, dict):
        return 0
    for name in names:
        value = usage.get(name)
        if type(value) is int and value >= 0:
            return value
    return 0


def parse_anthropic(body: Any) -> tuple[Any, int, int]:
    """(submit_verdict input, input tokens, output tokens) of a Messages API answer."""
    if not isinstance(body, dict) or body.get("type") != "message":
        raise InvalidAnswer("not a Messages API message")
    usage = body.get("usage")
    tokens = _tokens(usage, "input_tokens"), _tokens(usage, "output_tokens")
    content = body.get("content")
    if not isinstance(content, list):
        raise InvalidAnswer("message has no content list")
    calls = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_use"]
    others = [b for b in content
              if not (isinstance(b, dict) and b.get("type") in ("tool_use", "text"))]
    if not calls:
        raise InvalidAnswer(f"answered with text instead of {TOOL_NAME}")
    if others:
        raise InvalidAnswer("unexpected content blocks in the answer")
    if len(calls) != 1 or calls[0].get("name") != TOOL_NAME:
        raise InvalidAnswer(f"expected exactly one {TOOL_NAME} call")
    if body.get("stop_reason") != "tool_use":
        raise InvalidAnswer(f"stop_reason {str(body.get('stop_reason'))[:40]!r}, "
                            "not tool_use")
    return calls[0].get("input"), *tokens


def parse_openai(body: Any) -> tuple[Any, int, int]:
    """(submit_verdict arguments, input tokens, output tokens) of a chat completion."""
    if not isinstance(body, dict):
        raise InvalidAnswer("not a chat completion")
    usage = body.get("usage")
    tokens = _tokens(usage, "prompt_tokens"), _tokens(usage, "completion_tokens")
    choices = body.get("choices")
    if not isinstance(choices, list) or len(choices) != 1 or not isinstance(choices[0], dict):
        raise InvalidAnswer("expected exactly one choice")
    choice = choices[0]
    message = choice.get("message")
    if not isinstance(message, dict):
        raise InvalidAnswer("choice has no message")
    calls = message.get("tool_calls")
    if not calls:
        raise InvalidAnswer(f"answered with text instead of {TOOL_NAME}")
    if not isinstance(calls, list) or len(calls) != 1 or not isinstance(calls[0], dict):
        raise InvalidAnswer(f"expected exactly one {TOOL_NAME} call")
    function = calls[0].get("function")
    if not isinstance(function, dict) or function.get("name") != TOOL_NAME:
        raise InvalidAnswer(f"expected exactly one {TOOL_NAME} call")
    # A forced function call finishes with "stop" on OpenAI, "tool_calls" elsewhere; "length"
    # or "content_filter" mean the arguments may be cut off.
    if choice.get("finish_reason") not in ("tool_calls", "stop", "function_call"):
        raise InvalidAnswer(f"finish_reason {str(choice.get('finish_reason'))[:40]!r}")
    arguments = function.get("arguments")
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            raise InvalidAnswer(f"{TOOL_NAME} arguments are not JSON") from None
    return arguments, *tokens


# -- the call ------------------------------------------------------------------------------------


def _redact(text: str, config: ReviewerConfig) -> str:
    text = text.replace("\n", " ").strip()
    if config.api_key:
        text = text.replace(config.api_key, "***")
    return text[:_MAX_ERROR_CHARS]


def _http_error(resp: httpx.Response, body: bytes) -> str:
    detail = ""
    try:
        data = json.loads(body)
    except ValueError:
        data = None
    if isinstance(data, dict):
        err = data.get("error")
        if isinstance(err, dict):
            detail = str(err.get("type") or err.get("code") or "") + (
                f": {err['message']}" if isinstance(err.get("message"), str) else "")
        elif isinstance(err, str):
            detail = err
    return f"HTTP {resp.status_code}" + (f" ({detail})" if detail else "")


async def _post(client: httpx.AsyncClient, config: ReviewerConfig,
                request: AnyRequest) -> tuple[int, bytes, httpx.Response]:
    import httpx

    url, headers, body = build_http_request(config, request)
    timeout = httpx.Timeout(config.timeout_s, connect=min(config.timeout_s, 10.0))
    async with client.stream("POST", url, headers=headers, json=body,
                             timeout=timeout) as resp:
        chunks: list[bytes] = []
        size = 0
        async for chunk in resp.aiter_bytes():
            size += len(chunk)
            if size > MAX_RESPONSE_BYTES:
                raise InvalidAnswer("answer larger than 1 MB")
            chunks.append(chunk)
        return resp.status_code, b"".join(chunks), resp


async def review_once(client: httpx.AsyncClient, config: ReviewerConfig,
                      request: AnyRequest) -> Review:
    """Ask one reviewer, within ``config.timeout_s``. Never raises except CancelledError."""
    import httpx

    start = time.perf_counter()

    def elapsed() -> int:
        return int((time.perf_counter() - start) * 1000)

    tokens = (0, 0)
    try:
        status, raw, resp = await asyncio.wait_for(_post(client, config, request),
                                                   timeout=config.timeout_s)
        if status != 200:
            return Review.failure(config, _redact(_http_error(resp, raw), config),
                                  latency_ms=elapsed())
        try:
            body = json.loads(raw)
        except ValueError:
            raise InvalidAnswer("answer is not JSON") from None
        parse = parse_anthropic if config.provider == "anthropic" else parse_openai
        arguments, *counts = parse(body)
        tokens = (counts[0], counts[1])
        verdict, risk, rationale, concerns = validate_verdict(arguments)
        return Review(reviewer=config.name, model=config.model, verdict=verdict,
                      risk=risk, rationale=rationale, concerns=concerns,
                      latency_ms=elapsed(), input_tokens=tokens[0], output_tokens=tokens[1])
    except TimeoutError:
        error = f"no answer within {config.timeout_s:g} s"
    except InvalidAnswer as exc:
        error = f"invalid answer: {exc}"
    except httpx.TimeoutException:
        error = f"no answer within {config.timeout_s:g} s"
    except httpx.ConnectError:
        error = "could not connect"
    except (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError):
        error = "connection dropped"
    except httpx.HTTPError as exc:
        error = f"request failed ({type(exc).__name__})"
    except Exception as exc:  # fail closed on anything else, bugs included
        log.exception("reviewer %s failed unexpectedly", config.name)
        error = f"reviewer failed ({type(exc).__name__})"
    return Review.failure(config, _redact(error, config), latency_ms=elapsed(),
                          input_tokens=tokens[0], output_tokens=tokens[1])
