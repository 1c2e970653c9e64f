"""The agent: model providers, the tool-use loop and the events it emits (no Qt here).

Start with ``AgentSession`` (session.py) and the events in events.py; ``build_tool_context``
(context.py) maps a profile's per-tool configuration onto a ``ToolContext``; the providers
package holds the model clients (the Anthropic Messages API and OpenAI-compatible servers, both
over httpx) and the ``ProviderError`` hierarchy a failed run reports.

The names below load on first use: importing one submodule (``app.core.agent.checkpointing``
at start-up, say) must not load the whole loop.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from app.core.agent.context import build_tool_context
    from app.core.agent.events import (
        AgentEvent,
        ApprovalRequest,
        ApprovalResponse,
        Approver,
        AwaitingApproval,
        EventSink,
        RunCancelled,
        RunFailed,
        RunFinished,
        TextDelta,
        ToolFinished,
        ToolRequested,
        ToolStarted,
    )
    from app.core.agent.providers import (
        ModelProvider,
        ProviderError,
        client_factory,
        create_provider,
        list_models,
    )
    from app.core.agent.session import AgentSession

_WHERE = {
    "build_tool_context": "context",
    **{name: "events" for name in (
        "AgentEvent", "ApprovalRequest", "ApprovalResponse", "Approver", "AwaitingApproval",
        "EventSink", "RunCancelled", "RunFailed", "RunFinished", "TextDelta", "ToolFinished",
        "ToolRequested", "ToolStarted")},
    **{name: "providers" for name in (
        "ModelProvider", "ProviderError", "client_factory", "create_provider", "list_models")},
    "AgentSession": "session",
}

__all__ = [
    "AgentEvent",
    "AgentSession",
    "ApprovalRequest",
    "ApprovalResponse",
    "Approver",
    "AwaitingApproval",
    "EventSink",
    "ModelProvider",
    "ProviderError",
    "RunCancelled",
    "RunFailed",
    "RunFinished",
    "TextDelta",
    "ToolFinished",
    "ToolRequested",
    "ToolStarted",
    "build_tool_context",
    "client_factory",
    "create_provider",
    "list_models",
]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
