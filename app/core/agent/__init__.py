"""The agent: model providers, the tool-use loop and the events it emits (no Qt here).

Start with ``AgentSession`` (session.py) and the events in events.py; ``build_tool_context``
(context.py) maps a profile's per-tool configuration onto a ``ToolContext``; the providers
package holds the model clients (Anthropic through the official SDK, OpenAI-compatible over
httpx) and the ``ProviderError`` hierarchy a failed run reports.
"""

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
