"""Model providers behind one small interface, so the tool-use loop does not care which API runs.

A provider streams one assistant turn: it calls ``on_text`` for each text delta and returns the
whole turn as Anthropic-format content blocks plus the tool calls it contains. The transcript
format is always Anthropic's; the OpenAI-compatible provider translates on the way in and out.

- ``base``: the ``ModelProvider`` protocol, request and turn types, and the ``ProviderError``
  hierarchy with ``map_exception``, the one mapping from library exceptions to it;
- ``anthropic``: the Messages API over httpx (SSE decoded by ``app.core.agent.sse``);
- ``openai_compat``: chat completions over httpx (Ollama, llama.cpp, LM Studio, vLLM);
- ``http_retry``: what both retry (statuses, ``retry-after``, backoff) and never replay;
- ``factory``: the provider for a profile, its base URL and key; model listing;
- ``catalog``: what is known about the models (``ModelInfo``): defaults, deprecations.

This package imports only ``base`` and ``factory`` (and ``catalog``, which the factory uses); the
two providers load when a profile asks for them (``create_provider``) or the run warm-up
imports them in a worker thread.
"""

from app.core.agent.models.base import (
    CACHE_TTLS,
    EFFORTS,
    THINKING_DISPLAYS,
    THINKING_MODES,
    InternalError,
    MalformedStream,
    ModelProvider,
    ModelRequest,
    ModelTurn,
    ProviderAuthError,
    ProviderBadRequest,
    ProviderConnectionError,
    ProviderError,
    ProviderOverloaded,
    ProviderRateLimited,
    ProviderServerError,
    TextCallback,
    ToolCall,
    classify,
    connection_error,
    error_from_body,
    map_exception,
)
from app.core.agent.models.factory import (
    DEFAULT_MAX_RETRIES,
    DEFAULT_OPENAI_BASE_URL,
    client_factory,
    create_provider,
    default_client_factory,
    list_model_infos,
    list_models,
    provider_model_infos,
    resolve_base_url,
)

__all__ = [
    "CACHE_TTLS",
    "DEFAULT_MAX_RETRIES",
    "DEFAULT_OPENAI_BASE_URL",
    "EFFORTS",
    "THINKING_DISPLAYS",
    "THINKING_MODES",
    "InternalError",
    "MalformedStream",
    "ModelProvider",
    "ModelRequest",
    "ModelTurn",
    "ProviderAuthError",
    "ProviderBadRequest",
    "ProviderConnectionError",
    "ProviderError",
    "ProviderOverloaded",
    "ProviderRateLimited",
    "ProviderServerError",
    "TextCallback",
    "ToolCall",
    "classify",
    "client_factory",
    "connection_error",
    "create_provider",
    "default_client_factory",
    "error_from_body",
    "list_model_infos",
    "list_models",
    "map_exception",
    "provider_model_infos",
    "resolve_base_url",
]
