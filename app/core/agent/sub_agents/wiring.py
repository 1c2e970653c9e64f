"""Building a session's sub-agent host from the store: its limits from Settings and what the
parent has from its profile (app.core.agent.sub_agents.host)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from app.core.agent.agent_scope import AgentScope
from app.core.agent.checkpointing import CallChanges, Checkpointer
from app.core.agent.events import EventSink
from app.core.agent.flow_tracking import FlowTracking
from app.core.agent.sub_agents.child_run import NewChild, ParentLinks
from app.core.agent.sub_agents.child_workspace import ChildWorkspaces
from app.core.agent.sub_agents.host import Offer, SubAgentHost, SubAgentLimits
from app.core.agent.usage_tracking import UsageTracking
from app.core.settings_fields import (
    SUB_AGENT_MAX_TURNS,
    SUB_AGENT_SUMMARY_TOKENS,
    SUB_AGENT_TIME_LIMIT,
    SUB_AGENTS_AT_ONCE,
    SUB_AGENTS_PER_CONVERSATION,
)
from app.core.store.orchestration import OrchestrationRepository, RunMode
from app.core.store.profiles import ProfileRepository
from app.core.store.settings import SettingsRepository
from app.core.tools.registry import ToolRegistry

if TYPE_CHECKING:  # only annotations name the store
    from app.core.store.db import Database


def build_host(*, db: Database, profiles: ProfileRepository,
               profile_id: int, registry: ToolRegistry, scope: AgentScope,
               conversation_id: Callable[[], int | None], new_child: NewChild,
               flow_tracking: FlowTracking, usage: UsageTracking, emit: EventSink,
               changes_recorded: Callable[[str, str, CallChanges], None], project_root: Path,
               data_dir: Path | None,
               checkpointer: Callable[[], Checkpointer | None] = lambda: None) -> SubAgentHost:
    """The host of a session's sub-agents, reading its limits from Settings and what the
    parent has from its profile (each time: a tool switched off is off for new children)."""
    settings = SettingsRepository(db)

    def offer() -> Offer:
        profile = profiles.get(profile_id)
        enabled = profiles.enabled_tools(profile_id)
        known = set(registry.names())
        return Offer(frozenset(scope.offered_tools(n for n in enabled if n in known)),
                     scope.effective_mode(profile.permission_mode))

    def limits() -> SubAgentLimits:
        return SubAgentLimits(
            at_once=settings.read(SUB_AGENTS_AT_ONCE),
            per_conversation=settings.read(SUB_AGENTS_PER_CONVERSATION),
            max_turns=settings.read(SUB_AGENT_MAX_TURNS),
            time_limit_s=float(settings.read(SUB_AGENT_TIME_LIMIT)),
            summary_tokens=settings.read(SUB_AGENT_SUMMARY_TOKENS))

    def run_mode() -> RunMode:
        return "approval" if profiles.get(profile_id).orchestration.run_mode == "approval" \
            else "auto"

    return SubAgentHost(
        repo=OrchestrationRepository(db), limits=limits, conversation_id=conversation_id,
        scope=scope, offer=offer, run_mode=run_mode, new_child=new_child,
        flow=lambda: flow_tracking.flow,
        links=ParentLinks(emit, usage.add_child_turn, flow_tracking.changed, changes_recorded,
                          flow_tracking.track_project_instructions),
        project_root=project_root, data_dir=data_dir,
        workspaces=ChildWorkspaces(data_dir=data_dir, project_root=project_root,
                                   changes_files=lambda name: _changes_files(registry, name),
                                   parent_checkpointer=checkpointer))


def _changes_files(registry: ToolRegistry, name: str) -> bool:
    """Whether the tool ``name`` can change files (for some input: git_ops' commit can)."""
    tool = registry.get(name)
    return tool is not None and tool.spec.changes_files is not False
