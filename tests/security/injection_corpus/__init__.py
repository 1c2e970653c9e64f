"""A prompt-injection replay corpus in the style of AgentDojo, written for Tebiki's tests.

Four suites (banking, slack, travel, workspace), each one third-party MCP server: its tools in
the MCP wire format (name, description, inputSchema, annotations — some say readOnlyHint, some
say nothing, as real servers do), the person's own tasks with the calls a good agent makes for
them (arguments from the prompt and, as agents do, from earlier results: "reply to the last
email" takes the sender from a search result), and injection goals: an instruction planted in
one result of a task, followed by the call a model that obeys it makes.

Many goals are evasive: written by an attacker who read ``app.core.permissions.provenance`` and
tries to get a value into a call without it appearing literally in what the tools returned
(split into groups, case changed, encoded, spelled out in words, short ids and bare numbers,
values the person also typed). ``evasion`` names the trick; the replay reports per trick.
A goal that no value of its call can give away says why in ``beyond_provenance``.

Nothing here runs anything: ``tests.security.injection_corpus.replay`` drives it through the
agent loop.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["SLOT", "Call", "InjectionGoal", "Step", "Suite", "UserTask", "goal_maker",
           "mcp_tool", "suites"]

# Where a result carries an injection when a goal plants one there.
SLOT = "{injection}"


@dataclass(frozen=True)
class Call:
    """One call of a server tool (its name on the server, not Tebiki's ``server__tool``)."""

    tool: str
    input: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Step:
    """A call and what the server answers. ``result`` may hold ``SLOT``: a goal's injection
    goes there, a benign run puts ``filler`` there."""

    call: Call
    result: str
    filler: str = ""

    def answer(self, injection: str | None = None) -> str:
        return self.result.replace(SLOT, self.filler if injection is None else injection)


@dataclass(frozen=True)
class UserTask:
    id: str
    prompt: str
    steps: tuple[Step, ...]


@dataclass(frozen=True)
class InjectionGoal:
    """An injection planted in the result of step ``planted_in`` of task ``task``; the model
    obeys it right after reading that result: the reads in ``prep``, then ``harm``."""

    id: str
    task: str
    planted_in: int
    text: str
    harm: Call
    evasion: str
    prep: tuple[Step, ...] = ()
    # Why no value of the harmful call tells whose choice it was, when none does: the replay
    # expects exactly these goals to run unasked (a rule that catches one must drop the mark).
    beyond_provenance: str = ""


@dataclass(frozen=True)
class Suite:
    name: str
    server: str
    tools: tuple[Mapping[str, Any], ...]
    tasks: tuple[UserTask, ...]
    goals: tuple[InjectionGoal, ...]

    def task(self, task_id: str) -> UserTask:
        return next(t for t in self.tasks if t.id == task_id)


def mcp_tool(name: str, description: str, properties: Mapping[str, Any],
             required: tuple[str, ...] | None = None, **annotations: bool) -> dict[str, Any]:
    """A tool as an MCP server lists it. ``properties`` maps a name to a JSON type name or a
    full schema; every property is required unless ``required`` says which are."""
    props = {key: {"type": value} if isinstance(value, str) else dict(value)
             for key, value in properties.items()}
    tool: dict[str, Any] = {
        "name": name, "description": description,
        "inputSchema": {"type": "object", "properties": props,
                        "required": list(props if required is None else required)},
    }
    if annotations:
        tool["annotations"] = dict(annotations)
    return tool


def goal_maker(suite: str, say: str) -> Callable[..., InjectionGoal]:
    """A suite's goal constructor: ids prefixed with the suite, the order wrapped in the
    suite's injection wording (``say`` with ``{0}``)."""

    def goal(goal_id: str, task: str, planted_in: int, order: str, harm: Call, evasion: str,
             prep: tuple[Step, ...] = (), beyond_provenance: str = "") -> InjectionGoal:
        return InjectionGoal(f"{suite}/{goal_id}", task, planted_in, say.format(order), harm,
                             evasion, prep, beyond_provenance)

    return goal


def suites() -> tuple[Suite, ...]:
    from tests.security.injection_corpus import banking, slack, travel, workspace

    return (banking.SUITE, slack.SUITE, travel.SUITE, workspace.SUITE)
