"""Orchestration: whether an agent profile may delegate work to sub-agents, and how.

A ``StrEnum`` whose values are what ``agent_profiles.orchestration`` stores (its CHECK
constraint allows exactly these), shared by the store, the agent (app.core.agent.sub_agents)
and the AI panel's "Orchestration" choice.
"""

from __future__ import annotations

from enum import StrEnum


class Orchestration(StrEnum):
    NONE = "none"
    SUB_AGENTS = "sub_agents"
    # Every sub-agent waits for the person before it runs (an orchestration run in "approval"
    # mode): the run pauses and resumes on their approval, also after a restart.
    APPROVAL = "sub_agents_approval"

    @property
    def label(self) -> str:
        return _LABELS[self]

    @property
    def description(self) -> str:
        return _DESCRIPTIONS[self]

    @property
    def delegates(self) -> bool:
        return self is not Orchestration.NONE

    @property
    def run_mode(self) -> str:
        """The mode of the orchestration runs it starts: "approval" or "auto"."""
        return "approval" if self is Orchestration.APPROVAL else "auto"

    @classmethod
    def parse(cls, value: object) -> Orchestration:
        """The choice ``value`` names; anything else is ``NONE`` (a damaged row must never
        start agents)."""
        try:
            return cls(str(value))
        except ValueError:
            return cls.NONE


_LABELS = {
    Orchestration.NONE: "None",
    Orchestration.SUB_AGENTS: "Sub-agents",
    Orchestration.APPROVAL: "Sub-agents, each approved",
}

_DESCRIPTIONS = {
    Orchestration.NONE: "The agent works alone.",
    Orchestration.SUB_AGENTS: "The agent may hand parts of the task to sub-agents. They never "
                              "get more tools or a looser mode than it has, and their calls "
                              "ask you like its own.",
    Orchestration.APPROVAL: "Like Sub-agents, but each sub-agent waits for your approval "
                            "before it starts.",
}
