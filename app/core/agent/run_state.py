"""What one run of an AgentSession carries from call to call: the profile's settings (read
once when the run starts), the tools it offers, the reviewers' state, each tool's context and
the tokens used so far. The model turns build it; the call runner reads and fills it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from app.core.agent.review_step import ReviewState
from app.core.permission_mode import PermissionMode
from app.core.store.profiles import ToolSetting
from app.core.tools.base import ToolContext


@dataclass
class RunState:
    """What one run needs for every call: the profile's settings, read once at its start."""

    settings: Mapping[str, ToolSetting]
    offered: frozenset[str]
    mode: PermissionMode = PermissionMode.ASK
    review_before_asking: bool = False
    review: ReviewState = field(default_factory=ReviewState)
    position: tuple[int, int] | None = None  # the call being run: (n, of the turn's calls)
    contexts: dict[str, ToolContext] = field(default_factory=dict)
    announced: set[str] = field(default_factory=set)  # tool_use ids with a ToolRequested
    input_tokens: int = 0
    output_tokens: int = 0
    cache_writes: int = 0
    cache_reads: int = 0
