"""What an AgentSession may do beyond its profile: nothing more, only less.

The person's own conversation runs with ``PERSON_SCOPE`` (the profile decides
everything). A sub-agent (app.core.agent.sub_agents) runs with a narrower scope built by
``AgentScope.child``: its tools are a subset of the tools its parent offered, its permission
mode is the stricter of its parent's and the one it asked for, its turns are capped, and it can
never start children of its own. The scope only ever *removes*: every field is applied as an
intersection with the profile (``offered_tools``, ``mode``, ``max_iterations``), so nothing a
model passes when it spawns a child can widen what the profile allows.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from app.core.permission_mode import PermissionMode

# Strictness of the modes: plan runs the least on its own, auto the most.
_STRICTNESS = {PermissionMode.PLAN: 0, PermissionMode.ASK: 1, PermissionMode.AUTO: 2}

# The chain's name of the person's own agent, first in every sub-agent's chain.
ORCHESTRATOR = "orchestrator"


def stricter_mode(a: PermissionMode, b: PermissionMode | None) -> PermissionMode:
    """The mode of ``a`` and ``b`` that lets the fewest calls run on their own
    (plan < ask < auto); ``b`` None: ``a``."""
    if b is None:
        return a
    return a if _STRICTNESS[a] <= _STRICTNESS[b] else b


@dataclass(frozen=True)
class AgentScope:
    """A session's limits on top of its profile's. ``chain`` names the agent ("orchestrator ›
    researcher-2"): empty for the person's own agent. ``tools``: the tools it may be offered
    (None: the profile's); ``mode``: a ceiling on the profile's mode; ``max_iterations``: a cap
    on the profile's; ``model``: the model it talks to (None: the profile's);
    ``instructions``: its system prompt instead of the profile's; ``prompt_from_person``:
    whether the prompts of its conversation are the person's own words (a child's prompt is its
    parent model's text, so its values are never vouched for); ``may_delegate``: whether it
    may start sub-agents (depth 1: children never do)."""

    chain: tuple[str, ...] = ()
    tools: frozenset[str] | None = None
    mode: PermissionMode | None = None
    max_iterations: int | None = None
    model: str | None = None
    instructions: str | None = None
    prompt_from_person: bool = True
    may_delegate: bool = True

    @property
    def is_child(self) -> bool:
        return bool(self.chain)

    @property
    def agent_label(self) -> str:
        """"orchestrator › researcher-2"; "" for the person's own agent."""
        return " › ".join(self.chain)

    def offered_tools(self, enabled: Iterable[str]) -> list[str]:
        """The tools to offer: the profile's ``enabled`` ones this scope allows, sorted."""
        names = set(enabled)
        if self.tools is not None:
            names &= self.tools
        return sorted(names)

    def effective_mode(self, profile_mode: PermissionMode) -> PermissionMode:
        return stricter_mode(profile_mode, self.mode)

    def effective_iterations(self, profile_cap: int) -> int:
        if self.max_iterations is None:
            return profile_cap
        return max(1, min(profile_cap, self.max_iterations))

    def child(self, name: str, *, parent_offered: Iterable[str], tools: Iterable[str],
              parent_mode: PermissionMode, requested_mode: PermissionMode | None,
              max_iterations: int, model: str | None, instructions: str) -> AgentScope:
        """The scope of a child named ``name`` this agent starts: the ``tools`` asked for that
        this agent itself was offered, the stricter of ``parent_mode`` (the mode this agent
        runs in) and ``requested_mode``, at most ``max_iterations`` turns; never one that may
        delegate. Raises ``PermissionError`` when this agent may not delegate."""
        if not self.may_delegate:
            raise PermissionError("a sub-agent cannot start sub-agents of its own")
        allowed = frozenset(tools) & frozenset(parent_offered)
        if self.tools is not None:
            allowed &= self.tools
        mode = stricter_mode(self.effective_mode(parent_mode), requested_mode)
        return AgentScope(chain=(*(self.chain or (ORCHESTRATOR,)), name), tools=allowed,
                          mode=mode, max_iterations=self.effective_iterations(max_iterations),
                          model=model, instructions=instructions, prompt_from_person=False,
                          may_delegate=False)


# The person's own agent: the profile decides everything.
PERSON_SCOPE = AgentScope()
