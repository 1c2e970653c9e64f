"""Servers' sampling and elicitation requests reach the app's ServerRequestHandler through the
SDK (a real server: tests/mcp_servers/human_loop_server.py), and every failure becomes an
error or a cancel for the server, never an accept."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest

from app.core.tools.base import ToolContext
from app.core.tools.providers.mcp.config.schema import parse_mcp_config
from app.core.tools.providers.mcp.provider import McpProvider
from app.core.tools.providers.mcp.server_requests import (
    USER_REJECTED,
    ElicitationReply,
    SamplingReply,
    SamplingRequest,
    ServerRequestRefused,
    elicitation_callback,
    sampling_callback,
    sampling_request_from_wire,
)

HUMAN_LOOP = Path(__file__).parents[2] / "mcp_servers" / "human_loop_server.py"


def _answer(content: str) -> Any:
    """The JSON the tool returned (the result text may go on with its structured copy)."""
    return json.JSONDecoder().raw_decode(content)[0]


class ScriptedHandler:
    def __init__(self) -> None:
        self.sampling: list[tuple[str, SamplingRequest]] = []
        self.elicitations: list[tuple[str, str, Mapping[str, Any]]] = []
        self.reply: SamplingReply | Exception = SamplingReply("hello back", "test-model")
        self.form_reply = ElicitationReply("accept", {"name": "Ada", "age": 36})

    async def create_message(self, server: str, params: SamplingRequest) -> SamplingReply:
        self.sampling.append((server, params))
        if isinstance(self.reply, Exception):
            raise self.reply
        return self.reply

    async def elicit(self, server: str, message: str,
                     requested_schema: Mapping[str, Any]) -> ElicitationReply:
        self.elicitations.append((server, message, requested_schema))
        return self.form_reply


@pytest.fixture
async def loop_server(project: Path):
    handler = ScriptedHandler()
    configs = parse_mcp_config({"mcpServers": {"loop": {
        "command": sys.executable, "args": [str(HUMAN_LOOP)]}}}).servers
    provider = McpProvider(configs)
    provider.server_requests = handler
    await provider.start()
    assert provider.status("loop")[0] == "running", provider.server_status("loop")
    yield provider, handler, ToolContext(project_root=project)
    await provider.aclose()


async def test_sampling_request_reaches_the_handler_and_its_answer_the_server(loop_server):
    provider, handler, ctx = loop_server
    result = await provider.call("loop", "ask_model", {"prompt": "Say hi", "image": True}, ctx)
    assert not result.is_error, result.content
    assert "model said: hello back (model=test-model, stop=endTurn)" in result.content
    [(server, request)] = handler.sampling
    assert server == "loop"
    assert request.messages[0].text == "Say hi"
    assert request.messages[0].attachments() == ["image (image/png)"]
    assert request.system_prompt == "You are the test server's helper."
    assert request.model_hints == ("tiny-model",)
    assert request.max_tokens == 100


async def test_a_refusal_reaches_the_server_as_an_error(loop_server):
    provider, handler, ctx = loop_server
    handler.reply = ServerRequestRefused("The user declined the sampling request.")
    result = await provider.call("loop", "ask_model", {"prompt": "x"}, ctx)
    assert "sampling failed" in result.content
    assert "The user declined the sampling request." in result.content


async def test_a_handler_bug_is_an_error_for_the_server_not_a_crash(loop_server):
    provider, handler, ctx = loop_server
    handler.reply = RuntimeError("boom")
    result = await provider.call("loop", "ask_model", {"prompt": "x"}, ctx)
    assert "sampling failed" in result.content and "boom" in result.content
    assert provider.status("loop")[0] == "running"


async def test_form_elicitation_answer_reaches_the_server(loop_server):
    provider, handler, ctx = loop_server
    result = await provider.call("loop", "ask_person", {}, ctx)
    assert _answer(result.content) == {"action": "accept",
                                          "content": {"name": "Ada", "age": 36}}
    [(server, message, schema)] = handler.elicitations
    assert (server, message) == ("loop", "Who are you?")
    assert schema["required"] == ["name", "age"]


@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_decline_and_cancel_carry_no_content(loop_server, action):
    provider, handler, ctx = loop_server
    handler.form_reply = ElicitationReply(action, {"name": "leaked"})
    result = await provider.call("loop", "ask_person", {}, ctx)
    assert _answer(result.content) == {"action": action, "content": None}


async def test_without_a_handler_nothing_is_advertised(project):
    configs = parse_mcp_config({"mcpServers": {"loop": {
        "command": sys.executable, "args": [str(HUMAN_LOOP)]}}}).servers
    provider = McpProvider(configs)
    await provider.start()
    try:
        result = await provider.call("loop", "ask_model", {"prompt": "x"},
                                     ToolContext(project_root=project))
        assert "sampling failed" in result.content
    finally:
        await provider.aclose()


# -- the adapters alone -------------------------------------------------------------------------


def _sampling_params(**extra: Any) -> types.CreateMessageRequestParams:
    return types.CreateMessageRequestParams(
        messages=[types.SamplingMessage(role="user",
                                        content=types.TextContent(type="text", text="hi"))],
        max_tokens=10, **extra)


class Stuck:
    """A handler whose person never answers."""

    def __init__(self) -> None:
        self.cancelled = asyncio.Event()

    async def _wait(self) -> Any:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled.set()
            raise

    async def create_message(self, server: str, params: SamplingRequest) -> SamplingReply:
        return await self._wait()  # type: ignore[no-any-return]

    async def elicit(self, server: str, message: str,
                     requested_schema: Mapping[str, Any]) -> ElicitationReply:
        return await self._wait()  # type: ignore[no-any-return]


async def test_a_sampling_timeout_is_a_refusal_and_withdraws_the_question():
    stuck = Stuck()
    callback = sampling_callback("s", lambda: stuck, timeout_s=0.05)
    result = await callback(None, _sampling_params())
    assert isinstance(result, types.ErrorData)
    assert result.code == USER_REJECTED and "declined" in result.message
    assert stuck.cancelled.is_set()


async def test_an_elicitation_timeout_is_a_cancel():
    stuck = Stuck()
    callback = elicitation_callback("s", lambda: stuck, timeout_s=0.05)
    params = types.ElicitRequestFormParams(message="m", requested_schema={
        "type": "object", "properties": {}})
    result = await callback(None, params)
    assert isinstance(result, types.ElicitResult)
    assert result.action == "cancel" and result.content is None
    assert stuck.cancelled.is_set()


async def test_an_accept_without_content_is_a_cancel():
    handler = ScriptedHandler()
    handler.form_reply = ElicitationReply("accept", None)
    callback = elicitation_callback("s", lambda: handler)
    result = await callback(None, types.ElicitRequestFormParams(
        message="m", requested_schema={"type": "object", "properties": {}}))
    assert result.action == "cancel"


async def test_content_the_protocol_cannot_carry_is_a_cancel():
    handler = ScriptedHandler()
    handler.form_reply = ElicitationReply("accept", {"nested": {"not": "allowed"}})
    callback = elicitation_callback("s", lambda: handler)
    result = await callback(None, types.ElicitRequestFormParams(
        message="m", requested_schema={"type": "object", "properties": {}}))
    assert (result.action, result.content) == ("cancel", None)


async def test_a_handler_removed_after_start_answers_not_available():
    callback = sampling_callback("s", lambda: None)
    result = await callback(None, _sampling_params())
    assert isinstance(result, types.ErrorData) and "not available" in result.message


@pytest.mark.parametrize("wire, problem", [
    ({"messages": [], "maxTokens": 5}, "no messages"),
    ({"messages": ["x"], "maxTokens": 5}, "not an object"),
    ({"messages": [{"role": "user", "content": 3}], "maxTokens": 5}, "content block"),
    ({"messages": [{"role": "user", "content": {"type": "text", "text": "a"}}],
      "maxTokens": 0}, "maxTokens"),
])
def test_malformed_sampling_requests_are_clear_errors(wire, problem):
    with pytest.raises(ValueError, match=problem):
        sampling_request_from_wire(wire)
