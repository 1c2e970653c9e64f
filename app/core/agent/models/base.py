"""What every model provider shares: the provider protocol, the request and turn types, and
the errors a request can end with.

Errors are a class hierarchy rather than a string kind: callers catch or test the class, and
whether retrying can help is a property of the class (``retryable``), not of each raise site.
``map_exception`` is the one place an HTTP-library exception becomes one of them, so both
providers (and the settings dialog's connection test) report a failure the same way.

Nothing here imports httpx: the window imports the event types at start-up.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol, runtime_checkable

# -- errors ----------------------------------------------------------------------------------


class ProviderError(Exception):
    """A model request (or the run around it) failed; ``message`` is for a person and never
    contains a key."""

    retryable: ClassVar[bool] = True
    # The sentence added after the API's own message: what the person can do about it.
    advice: ClassVar[str] = "Retry."

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


class ProviderAuthError(ProviderError):
    """The key is missing, wrong or lacks permission (401/403)."""

    retryable = False
    advice = "Check the API key in Settings → Provider."


class ProviderRateLimited(ProviderError):
    """429: the provider already retried with backoff before this reached the run."""

    advice = "The rate limit was hit even after retrying; wait a moment and retry."


class ProviderOverloaded(ProviderError):
    """529 or an ``overloaded_error`` event mid-stream."""

    advice = "The API is overloaded; retry in a little while."


class ProviderServerError(ProviderError):
    """A 5xx (or 409) or an ``api_error``: the API's fault, usually transient."""

    advice = "The API had an internal error; retry."


class ProviderConnectionError(ProviderError):
    """The connection failed, timed out or was cut off before the answer was complete."""

    advice = "Check the network connection and the base URL, then retry."


class ProviderBadRequest(ProviderError):
    """The request was rejected as it stands (400/404/413/422): resending it cannot help."""

    retryable = False
    advice = "The request was rejected; check the model name and profile settings."


class MalformedStream(ProviderError):
    """The stream arrived but an event in it was unreadable or of the wrong shape."""


class InternalError(ProviderError):
    """A bug in the app ended the run. Not the API's fault, but a run reports every failure
    through this one hierarchy; retrying re-sends the transcript, which is intact."""

    advice = ""


_BY_STATUS: dict[int, type[ProviderError]] = {
    400: ProviderBadRequest,
    401: ProviderAuthError,
    403: ProviderAuthError,
    404: ProviderBadRequest,
    408: ProviderConnectionError,
    409: ProviderServerError,
    413: ProviderBadRequest,
    422: ProviderBadRequest,
    429: ProviderRateLimited,
    529: ProviderOverloaded,
}
_BY_ERROR_TYPE: dict[str, type[ProviderError]] = {
    "invalid_request_error": ProviderBadRequest,
    "authentication_error": ProviderAuthError,
    "permission_error": ProviderAuthError,
    "not_found_error": ProviderBadRequest,
    "request_too_large": ProviderBadRequest,
    "rate_limit_error": ProviderRateLimited,
    "api_error": ProviderServerError,
    "overloaded_error": ProviderOverloaded,
    "timeout_error": ProviderConnectionError,
}


def classify(status: int | None, error_type: str | None = None) -> type[ProviderError]:
    """The error class for an HTTP status and/or an API error type. The error type wins when
    the status says nothing more specific (a mid-stream ``error`` event arrives with 200)."""
    if error_type and error_type in _BY_ERROR_TYPE and (status is None or status == 200
                                                        or status not in _BY_STATUS):
        return _BY_ERROR_TYPE[error_type]
    if status is not None:
        if status in _BY_STATUS:
            return _BY_STATUS[status]
        if status >= 500:
            return ProviderServerError
        if status >= 400:
            return ProviderBadRequest
    return ProviderServerError


def error_from_body(status: int | None, body: Any, provider_label: str) -> ProviderError:
    """A ProviderError from an API error body (Anthropic or OpenAI shape)."""
    error_type, detail = None, ""
    if isinstance(body, dict):
        err = body.get("error")
        if isinstance(err, dict):
            error_type = err.get("type") if isinstance(err.get("type"), str) else None
            detail = str(err.get("message") or "")
        elif isinstance(err, str):
            detail = err
        elif isinstance(body.get("message"), str):
            detail = body["message"]
    elif isinstance(body, str):
        detail = body
    cls = classify(status, error_type)
    what = " ".join(p for p in (str(status) if status and status != 200 else "",
                                error_type or "") if p)
    detail = detail.strip()[:500]
    message = f"{provider_label} error"
    if what:
        message += f" ({what})"
    if detail:
        message += f": {detail}"
    return cls(message.rstrip(".") + ". " + cls.advice, status)


def connection_error(provider_label: str, exc: BaseException | str, *,
                     mid_stream: bool = False) -> ProviderConnectionError:
    detail = exc if isinstance(exc, str) else (str(exc) or type(exc).__name__)
    if mid_stream:
        what = f"The answer from {provider_label} was cut off: the stream ended before it was " \
               f"complete ({detail})"
    else:
        what = f"Connection to {provider_label} failed: {detail}"
    return ProviderConnectionError(f"{what}. " + ProviderConnectionError.advice)


def map_exception(exc: BaseException, provider_label: str, *,
                  mid_stream: bool = False) -> ProviderError | None:
    """The ProviderError for an exception from httpx (the providers' HTTP stack), or None
    when ``exc`` is none of its (a bug, which must not pass for an API failure).

    httpx is looked up in ``sys.modules`` instead of imported: an exception can only be an
    instance of its classes if it was loaded, and the window imports this module at start-up,
    when httpx is not loaded yet."""
    if isinstance(exc, ProviderError):
        return exc
    http = sys.modules.get("httpx")
    if http is not None and isinstance(exc, http.RequestError):  # transport, decoding, redirects
        return connection_error(provider_label, exc, mid_stream=mid_stream)
    return None


# -- requests and turns ----------------------------------------------------------------------


CACHE_TTLS = ("5m", "1h")
THINKING_MODES = ("off", "adaptive")
EFFORTS = ("low", "medium", "high", "xhigh", "max")
THINKING_DISPLAYS = ("summarized", "omitted")


@dataclass(frozen=True)
class ModelRequest:
    """One model turn to ask for. The options after ``temperature`` are Anthropic features;
    the OpenAI-compatible provider ignores them.

    - ``cache``: mark prompt-cache breakpoints (tools, system prompt, the transcript's end), so
      a tool loop reads its prefix from the cache; ``cache_ttl`` is "5m" or "1h" (the longer
      cache costs more to write but survives an approval that waits for the person);
    - ``thinking``: "off" or "adaptive" (the model decides when and how much to think);
      ``thinking_display`` "summarized" or "omitted" (None: the model's default);
    - ``effort``: "low" … "max" (None: the model's default).
    """

    model: str
    messages: list[dict[str, Any]]      # Anthropic format, already normalised
    max_tokens: int
    system: str = ""
    tools: list[dict[str, Any]] = field(default_factory=list)   # Anthropic tool definitions
    temperature: float | None = None
    cache: bool = True
    cache_ttl: str = "5m"
    thinking: str = "off"
    thinking_display: str | None = None
    effort: str | None = None


@dataclass(frozen=True)
class ToolCall:
    """One tool_use block. ``error`` is set when the streamed input was not a JSON object; the
    call is then answered with an error result and never run (``input`` is ``{}``)."""

    id: str
    name: str
    input: dict[str, Any]
    raw_input: str = ""
    error: str | None = None


@dataclass
class ModelTurn:
    """One assistant turn. ``content`` holds text and tool_use blocks and, with thinking on,
    thinking / redacted_thinking blocks exactly as the API sent them (they must go back
    unchanged in a tool loop). ``input_tokens`` counts only the uncached input; the cache
    writes and reads are counted apart (they are billed at 1.25× and 0.1×)."""

    content: list[dict[str, Any]]
    tool_calls: list[ToolCall]
    stop_reason: str
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0


TextCallback = Callable[[str], None]


@runtime_checkable
class ModelProvider(Protocol):
    name: str

    async def stream(self, request: ModelRequest, on_text: TextCallback) -> ModelTurn: ...

    async def list_models(self) -> list[str]: ...

    async def aclose(self) -> None: ...
