"""Model providers behind one small interface, so the tool-use loop does not care which API runs.

A provider streams one assistant turn: it calls ``on_text`` for each text delta and returns the
whole turn as Anthropic-format content blocks plus the tool calls it contains. Errors become a
``ProviderError`` with a ``kind`` the UI can act on (auth, rate_limit, overloaded, server,
connection, bad_request) and whether retrying can help. The transcript format is always
Anthropic's; the OpenAI-compatible provider translates on the way in and out.

``create_provider(profile)`` picks the provider from the profile (``anthropic`` or
``openai_compatible``), resolving the API key from the environment or the OS keyring.
``list_models(profile)`` asks the API which models exist; ``list_model_infos`` adds their
release dates and lifecycle, from which app.core.agent.models picks defaults and warns.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from app.core.agent.credentials import get_api_key
from app.core.agent.models import ModelInfo
from app.core.store.profiles import DEFAULT_MODEL, AgentProfile

log = logging.getLogger(__name__)

# The OpenAI-compatible default is Ollama on this machine: a local model needs no key and no
# traffic leaves the computer unless the person configures another URL.
DEFAULT_OPENAI_BASE_URL = "http://127.0.0.1:11434/v1"
DEFAULT_MAX_RETRIES = 2


class ProviderError(Exception):
    """A model request failed; ``message`` is for a person, never contains a key."""

    def __init__(self, message: str, kind: str, retryable: bool,
                 status: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.kind = kind
        self.retryable = retryable
        self.status = status


@dataclass(frozen=True)
class ModelRequest:
    model: str
    messages: list[dict[str, Any]]      # Anthropic format, already normalised
    max_tokens: int
    system: str = ""
    tools: list[dict[str, Any]] = field(default_factory=list)   # Anthropic tool definitions
    temperature: float | None = None


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
    content: list[dict[str, Any]]   # text and tool_use blocks, as they will be stored
    tool_calls: list[ToolCall]
    stop_reason: str
    input_tokens: int = 0
    output_tokens: int = 0


TextCallback = Callable[[str], None]


@runtime_checkable
class ModelProvider(Protocol):
    name: str

    async def stream(self, request: ModelRequest, on_text: TextCallback) -> ModelTurn: ...

    async def list_models(self) -> list[str]: ...

    async def aclose(self) -> None: ...


# -- errors ----------------------------------------------------------------------------------

_KIND_BY_STATUS: dict[int, tuple[str, bool]] = {
    400: ("bad_request", False),
    401: ("auth", False),
    403: ("auth", False),
    404: ("bad_request", False),
    408: ("connection", True),
    409: ("server", True),
    413: ("bad_request", False),
    422: ("bad_request", False),
    429: ("rate_limit", True),
    529: ("overloaded", True),
}
_KIND_BY_ERROR_TYPE: dict[str, tuple[str, bool]] = {
    "invalid_request_error": ("bad_request", False),
    "authentication_error": ("auth", False),
    "permission_error": ("auth", False),
    "not_found_error": ("bad_request", False),
    "request_too_large": ("bad_request", False),
    "rate_limit_error": ("rate_limit", True),
    "api_error": ("server", True),
    "overloaded_error": ("overloaded", True),
    "timeout_error": ("connection", True),
}
_ADVICE: dict[str, str] = {
    "auth": "Check the API key in Settings → Provider.",
    "rate_limit": "The rate limit was hit even after retrying; wait a moment and retry.",
    "overloaded": "The API is overloaded; retry in a little while.",
    "server": "The API had an internal error; retry.",
    "connection": "Check the network connection and the base URL, then retry.",
    "bad_request": "The request was rejected; check the model name and profile settings.",
}


def classify(status: int | None, error_type: str | None = None) -> tuple[str, bool]:
    """(kind, retryable) for an HTTP status and/or an API error type."""
    if error_type and error_type in _KIND_BY_ERROR_TYPE and (status is None or status == 200
                                                             or status not in _KIND_BY_STATUS):
        return _KIND_BY_ERROR_TYPE[error_type]
    if status is not None:
        if status in _KIND_BY_STATUS:
            return _KIND_BY_STATUS[status]
        if status >= 500:
            return "server", True
        if status >= 400:
            return "bad_request", False
    return "server", True


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
    kind, retryable = classify(status, error_type)
    what = " ".join(p for p in (str(status) if status and status != 200 else "",
                                error_type or "") if p)
    detail = detail.strip()[:500]
    message = f"{provider_label} error"
    if what:
        message += f" ({what})"
    if detail:
        message += f": {detail}"
    message = message.rstrip(".") + ". " + _ADVICE[kind]
    return ProviderError(message, kind, retryable, status)


def connection_error(provider_label: str, exc: BaseException | str, *,
                     mid_stream: bool = False) -> ProviderError:
    detail = exc if isinstance(exc, str) else (str(exc) or type(exc).__name__)
    if mid_stream:
        what = f"The answer from {provider_label} was cut off: the stream ended before it was " \
               f"complete ({detail})"
    else:
        what = f"Connection to {provider_label} failed: {detail}"
    return ProviderError(f"{what}. " + _ADVICE["connection"], "connection", True)


# -- factory ---------------------------------------------------------------------------------


def resolve_base_url(profile: AgentProfile) -> str | None:
    """The profile's base URL, else the provider's environment variable, else None (default)."""
    if profile.base_url and profile.base_url.strip():
        return profile.base_url.strip()
    env = "ANTHROPIC_BASE_URL" if profile.provider == "anthropic" else "OPENAI_BASE_URL"
    value = os.environ.get(env, "").strip()
    return value or None


def create_provider(profile: AgentProfile, *, api_key: str | None = None,
                    base_url: str | None = None,
                    max_retries: int = DEFAULT_MAX_RETRIES,
                    timeout: float | None = None) -> ModelProvider:
    """The provider a profile asks for. Raises ProviderError(kind="auth") when Anthropic has no
    key, so the run ends with a clear event instead of a request that must fail."""
    url = base_url or resolve_base_url(profile)
    if profile.provider == "openai_compatible":
        from app.core.agent.openai_compat import OpenAICompatibleProvider

        return OpenAICompatibleProvider(
            base_url=url or DEFAULT_OPENAI_BASE_URL,
            api_key=api_key if api_key is not None else get_api_key("openai_compatible"),
            max_retries=max_retries, timeout=timeout)
    key = api_key or get_api_key("anthropic")
    if not key:
        raise ProviderError(
            "No Anthropic API key is set. Add one in Settings → Provider (it is kept in the OS "
            "keyring) or set the ANTHROPIC_API_KEY environment variable.", "auth", False)
    from app.core.agent.anthropic_client import AnthropicProvider

    return AnthropicProvider(api_key=key, base_url=url, max_retries=max_retries, timeout=timeout)


def default_client_factory(profile: AgentProfile) -> ModelProvider:
    """What ``AgentSession`` uses when it is given no ``client_factory``."""
    return create_provider(profile)


def client_factory(*, api_key: str | None = None, base_url: str | None = None,
                   max_retries: int = DEFAULT_MAX_RETRIES, timeout: float | None = None
                   ) -> Callable[[AgentProfile], ModelProvider]:
    """A ``client_factory`` with fixed overrides (tests: a loopback base URL, few retries)."""

    def factory(profile: AgentProfile) -> ModelProvider:
        return create_provider(profile, api_key=api_key, base_url=base_url,
                               max_retries=max_retries, timeout=timeout)

    return factory


async def list_model_infos(profile: AgentProfile | None = None, *, api_key: str | None = None,
                           base_url: str | None = None) -> list[ModelInfo]:
    """The models the API offers, with release date, line and lifecycle where the provider
    gives them (Anthropic; an OpenAI-compatible server gives ids only). Empty without a key
    (Anthropic) or when the API cannot be asked: callers keep their built-in default."""
    if profile is None:
        profile = AgentProfile(name="(models)")
    # Both off the event loop: keyring backends may block, and the first import of the
    # Anthropic SDK takes seconds.
    if profile.provider == "anthropic" and not (
            api_key or await asyncio.to_thread(get_api_key, "anthropic")):
        return []
    try:
        provider = await asyncio.to_thread(create_provider, profile, api_key=api_key,
                                           base_url=base_url, max_retries=1, timeout=15.0)
    except ProviderError:
        return []
    try:
        # Providers that know more than ids (created_at, lifecycle) say so; the rest give ids.
        detailed = getattr(provider, "list_model_infos", None)
        if detailed is not None:
            infos: list[ModelInfo] = await detailed()
        else:
            infos = [ModelInfo(model_id) for model_id in await provider.list_models()]
    except ProviderError as exc:
        log.warning("listing models failed: %s", exc.kind)
        return []
    finally:
        await provider.aclose()
    return infos


async def list_models(profile: AgentProfile | None = None, *, api_key: str | None = None,
                      base_url: str | None = None) -> list[str]:
    """Model ids the API offers. Without a key (Anthropic) or when the API cannot be asked,
    the default model (or the profile's) so the model box is never empty."""
    fallback = [profile.model] if profile is not None and profile.model else [DEFAULT_MODEL]
    if (profile is None or profile.provider == "anthropic") and not (
            api_key or await asyncio.to_thread(get_api_key, "anthropic")):
        return [DEFAULT_MODEL]
    infos = await list_model_infos(profile, api_key=api_key, base_url=base_url)
    return [m.id for m in infos] or fallback
