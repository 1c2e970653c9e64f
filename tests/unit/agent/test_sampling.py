"""MCP sampling through the person: a real server (tests/mcp_servers/human_loop_server.py) asks
for a model answer; the permission service decides, the person (a scripted asker here; the
dialog has its own tests) approves, edits or declines, the fake Messages API answers, and the
history records it."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from app.core.agent.models.factory import client_factory
from app.core.agent.sampling import (
    SAMPLING_TOOL,
    SamplingApproval,
    SamplingBroker,
    SamplingPrompt,
)
from app.core.permissions.service import ToolPermissionService
from app.core.store.audit import AuditRepository
from app.core.store.profiles import ProfileRepository
from app.core.tools.base import ToolContext
from app.core.tools.providers.mcp.config.schema import parse_mcp_config
from app.core.tools.providers.mcp.provider import McpProvider
from tests.fakes.anthropic_server import FakeAnthropicServer, Response

HUMAN_LOOP = Path(__file__).parents[2] / "mcp_servers" / "human_loop_server.py"


@dataclass
class Person:
    """Answers each sampling prompt with the next scripted answer (None: declines)."""

    answers: list[SamplingApproval | None] = field(default_factory=list)
    prompts: list[SamplingPrompt] = field(default_factory=list)

    async def __call__(self, prompt: SamplingPrompt) -> SamplingApproval | None:
        self.prompts.append(prompt)
        return self.answers.pop(0)


@dataclass
class Setup:
    provider: McpProvider
    person: Person
    permissions: ToolPermissionService
    audit: AuditRepository
    fake: FakeAnthropicServer
    ctx: ToolContext
    cap: list[int]

    async def ask_model(self, prompt: str = "Summarise the weather", **extra: object) -> str:
        result = await self.provider.call("loop", "ask_model", {"prompt": prompt, **extra},
                                          self.ctx)
        return result.content

    def rows(self):
        return [r for r in self.audit.list() if r.tool_name == SAMPLING_TOOL]


@pytest.fixture
async def setup(db, project: Path, fake_anthropic: FakeAnthropicServer):
    permissions = ToolPermissionService(db, project_root=project)
    audit = AuditRepository(db)
    profiles = ProfileRepository(db)
    profile = profiles.ensure_default()
    person = Person()
    cap = [4096]
    broker = SamplingBroker(
        permissions=permissions, audit=audit, profile=lambda: profiles.get(profile.id),
        ask=person,
        client_factory=client_factory(api_key="sk-ant-test", base_url=fake_anthropic.base_url,
                                      max_retries=0),
        max_tokens_cap=lambda: cap[0])
    configs = parse_mcp_config({"mcpServers": {"loop": {
        "command": sys.executable, "args": [str(HUMAN_LOOP)]}}}).servers
    provider = McpProvider(configs)
    provider.server_requests = broker
    await provider.start()
    assert provider.status("loop")[0] == "running", provider.server_status("loop")
    yield Setup(provider, person, permissions, audit, fake_anthropic,
                ToolContext(project_root=project), cap)
    await provider.aclose()
    permissions.close()


async def test_approved_request_is_answered_by_the_model_and_recorded(setup):
    setup.fake.script(Response.text("Sunny, 21 degrees."))
    setup.person.answers = [SamplingApproval(max_tokens=100)]

    answer = await setup.ask_model(image=True)

    assert "model said: Sunny, 21 degrees." in answer
    assert "stop=endTurn" in answer
    [prompt] = setup.person.prompts
    assert (prompt.server, prompt.max_tokens, prompt.max_tokens_cap) == ("loop", 100, 4096)
    assert prompt.request.model_hints == ("tiny-model",)
    body = setup.fake.last_request.body
    assert body["max_tokens"] == 100 and not body.get("tools")
    assert "helper" in str(body["system"])
    [message] = body["messages"]
    assert message["content"][0] == {"type": "text", "text": "Summarise the weather"}
    assert message["content"][1]["type"] == "image"  # images reach the model as images
    [row] = setup.rows()
    assert (row.server_id, row.decision, row.outcome, row.is_error, row.state) == \
        ("loop", "ask", "executed", False, "done")
    assert row.decided_by == "approved by the person"
    assert row.output == "Sunny, 21 degrees."
    assert row.input["messages"][0]["text"] == "Summarise the weather"
    assert row.input["messages"][0]["attachments"] == ["image (image/png)"]


async def test_the_person_edits_the_text_and_lowers_the_cap(setup):
    setup.cap[0] = 60  # the setting caps what is proposed
    setup.fake.script(Response.text("ok"))
    setup.person.answers = [SamplingApproval(max_tokens=40, last_user_text="Only this")]

    await setup.ask_model("Secret plans and the weather")

    assert setup.person.prompts[0].max_tokens == 60
    body = setup.fake.last_request.body
    assert body["max_tokens"] == 40
    assert body["messages"][0]["content"] == [{"type": "text", "text": "Only this"}]
    assert setup.rows()[0].input["editedUserText"] == "Only this"


async def test_declined_request_is_an_error_for_the_server_and_recorded(setup):
    setup.person.answers = [None]

    answer = await setup.ask_model()

    assert "sampling failed" in answer and "declined" in answer
    assert setup.fake.message_requests == []
    [row] = setup.rows()
    assert (row.decision, row.outcome, row.is_error) == ("ask", "declined", True)
    assert row.decided_by == "declined by the person"


async def test_a_deny_rule_refuses_without_asking(setup):
    setup.permissions.rules.add(decision="deny", server_id="loop", tool_name=SAMPLING_TOOL)

    answer = await setup.ask_model()

    assert "sampling failed" in answer and "permission rules refuse" in answer
    assert setup.person.prompts == []
    assert setup.fake.message_requests == []
    [row] = setup.rows()
    assert (row.decision, row.outcome) == ("deny", "denied")


async def test_a_rule_allowing_every_tool_of_the_server_still_asks(setup):
    setup.permissions.rules.add(decision="allow", server_id="loop")
    setup.person.answers = [None]

    await setup.ask_model()

    assert len(setup.person.prompts) == 1


async def test_a_rule_that_names_sampling_allows_it_unasked(setup):
    setup.permissions.rules.add(decision="allow", server_id="loop", tool_name=SAMPLING_TOOL)
    setup.fake.script(Response.text("fine"))

    answer = await setup.ask_model()

    assert "model said: fine" in answer
    assert setup.person.prompts == []
    [row] = setup.rows()
    assert (row.decision, row.outcome) == ("allow", "executed")
    assert "sampling/createMessage" in row.decided_by


async def test_a_model_failure_is_an_error_for_the_server_and_recorded(setup):
    setup.fake.script(Response.error(400, message="bad model"))
    setup.person.answers = [SamplingApproval(max_tokens=10)]

    answer = await setup.ask_model()

    assert "sampling failed" in answer and "model request failed" in answer
    [row] = setup.rows()
    assert (row.outcome, row.is_error) == ("executed", True)
    assert "bad model" in row.output
