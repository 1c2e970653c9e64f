"""Test helpers for the agent loop: fake tools, a scripted approver, a harness around a session."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.core.agent.events import (
    AgentEvent,
    ApprovalRequest,
    ApprovalResponse,
    FlowChanged,
    RunCancelled,
    RunFailed,
    RunFinished,
    TextDelta,
    ThinkingBlock,
    UsageUpdated,
)
from app.core.agent.models import client_factory
from app.core.agent.session import AgentSession
from app.core.permissions.rules import PermissionRule
from app.core.permissions.service import ToolPermissionService
from app.core.store.audit import AuditRepository
from app.core.store.conversations import ConversationRepository
from app.core.store.profiles import AgentProfile, ProfileRepository, ToolSetting
from app.core.tools.base import (
    RiskLevel,
    ToolCategory,
    ToolContext,
    ToolResult,
    ToolSpec,
)
from app.core.tools.registry import ToolRegistry
from tests.fakes.anthropic_server import FakeAnthropicServer

TEST_KEY = "sk-ant-test-0123456789"


def _schema(**props: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": list(props),
            "additionalProperties": False}


class RecordTool:
    """Appends every input it runs with to ``calls``: the side effect tests assert on."""

    def __init__(self, name: str = "record") -> None:
        self.spec = ToolSpec(name=name, description="Records a value (test tool).",
                             input_schema=_schema(value={"type": "string"}),
                             category=ToolCategory.FILE_SYSTEM, risk=RiskLevel.HIGH,
                             server_id="test")
        self.calls: list[dict[str, Any]] = []
        self.contexts: list[ToolContext] = []

    async def execute(self, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        self.calls.append(dict(input))
        self.contexts.append(ctx)
        return ToolResult.ok(f"recorded {input['value']}")


class SlowTool:
    """Runs until cancelled; remembers that it started and that it was cancelled."""

    def __init__(self, name: str = "slow") -> None:
        self.spec = ToolSpec(name=name, description="Takes forever (test tool).",
                             input_schema={"type": "object", "properties": {}},
                             category=ToolCategory.EXECUTION, risk=RiskLevel.HIGH,
                             server_id="test")
        self.started = False
        self.cancelled = False
        self.finished = False

    async def execute(self, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        self.started = True
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        self.finished = True
        return ToolResult.ok("done")


class ScriptedApprover:
    """Answers approval requests from a queue; ``hang`` waits until cancelled instead."""

    def __init__(self) -> None:
        self.answers: list[ApprovalResponse | str] = []
        self.requests: list[ApprovalRequest] = []
        self.cancelled = 0

    def then(self, *answers: ApprovalResponse | str) -> ScriptedApprover:
        self.answers.extend(answers)
        return self

    async def __call__(self, request: ApprovalRequest) -> ApprovalResponse:
        self.requests.append(request)
        if not self.answers:
            raise AssertionError(f"unexpected approval request for {request.tool_name}")
        answer = self.answers.pop(0)
        if answer == "hang":
            try:
                await asyncio.Future()
            except asyncio.CancelledError:
                self.cancelled += 1
                raise
        assert isinstance(answer, ApprovalResponse)
        return answer


@dataclass
class Harness:
    db: Any
    project: Path
    server: FakeAnthropicServer
    registry: ToolRegistry
    permissions: ToolPermissionService
    profile_id: int
    record: RecordTool
    slow: SlowTool
    approver: ScriptedApprover = field(default_factory=ScriptedApprover)
    events: list[AgentEvent] = field(default_factory=list)
    max_retries: int = 0
    sessions: list[AgentSession] = field(default_factory=list)
    on_event_hook: Any = None

    # -- building ------------------------------------------------------------------------

    def session(self, conversation_id: int | None = None, **kwargs: Any) -> AgentSession:
        kwargs.setdefault("client_factory", client_factory(
            api_key=TEST_KEY, base_url=self.server.base_url, max_retries=self.max_retries))
        session = AgentSession(self.db, self.registry, self.permissions, self.profile_id,
                               self.project, self.approver, self._sink,
                               conversation_id=conversation_id, **kwargs)
        self.sessions.append(session)
        return session

    def _sink(self, event: AgentEvent) -> None:
        self.events.append(event)
        if self.on_event_hook is not None:
            self.on_event_hook(event)

    @property
    def profiles(self) -> ProfileRepository:
        return ProfileRepository(self.db)

    def profile(self) -> AgentProfile:
        return self.profiles.get(self.profile_id)

    def update_profile(self, **changes: Any) -> None:
        from dataclasses import replace

        self.profiles.update(replace(self.profile(), **changes))

    def enable(self, name: str, enabled: bool = True, **config: Any) -> None:
        current = self.profiles.tool_settings(self.profile_id).get(name, ToolSetting(name))
        merged = {**current.config, **config}
        self.profiles.set_tool(self.profile_id, ToolSetting(name, enabled, merged))

    def allow(self, tool_name: str, **fields: Any) -> PermissionRule:
        return self.permissions.rules.add(PermissionRule("allow", tool_name=tool_name, **fields))

    # -- inspecting ----------------------------------------------------------------------

    def of(self, kind: type) -> list[Any]:
        return [e for e in self.events if isinstance(e, kind)]

    def names(self) -> list[str]:
        """The events in order, without text deltas, flow-label, usage and thinking updates
        (tests of those look at them with ``of``)."""
        return [type(e).__name__ for e in self.events
                if not isinstance(e, TextDelta | FlowChanged | UsageUpdated | ThinkingBlock)]

    def text(self) -> str:
        return "".join(e.text for e in self.of(TextDelta))

    def last(self) -> AgentEvent:
        ends = [e for e in self.events if isinstance(e, RunFinished | RunFailed | RunCancelled)]
        assert ends, f"the run did not end; events: {self.names()}"
        return ends[-1]

    def stored(self, conversation_id: int | None) -> list[dict[str, Any]]:
        assert conversation_id is not None
        return [{"role": m.role, "content": m.content}
                for m in ConversationRepository(self.db).messages(conversation_id)]

    def audit(self) -> list[Any]:
        return list(reversed(AuditRepository(self.db).list()))


def sdk_modules_loaded_after(code: str) -> dict[str, bool]:
    """Whether a fresh interpreter has the Anthropic SDK (and its HTTP stack, httpx2) loaded
    after running ``code``: this test session has imported everything already."""
    import json
    import os
    import subprocess
    import sys
    import textwrap

    script = textwrap.dedent(code) + textwrap.dedent("""
        import json, sys
        print(json.dumps({name: name in sys.modules for name in ("anthropic", "httpx2")}))
    """)
    env = {**os.environ, "ANTHROPIC_BASE_URL": "", "ANTHROPIC_API_KEY": "",
           "OPENAI_API_KEY": "", "OPENAI_BASE_URL": ""}
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          cwd=Path(__file__).resolve().parents[3], env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])
