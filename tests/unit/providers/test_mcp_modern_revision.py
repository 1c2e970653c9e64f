"""Revision 2026-07-28 against a real server on the SDK in the lock
(tests/mcp_servers/modern_server.py), over stdio and Streamable HTTP on 127.0.0.1: Tebiki
negotiates the newest revision both sides speak, and the server's multi-round-trip input
requests reach the same elicitation and sampling handlers as the older revision's requests."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from app.core.tools.base import ToolContext
from app.core.tools.providers.mcp.config.schema import parse_mcp_config
from app.core.tools.providers.mcp.provider import McpProvider
from app.core.tools.providers.mcp.server_requests import (
    ElicitationReply,
    SamplingReply,
    SamplingRequest,
)
from app.core.tools.providers.mcp.url_elicitation import UrlElicitation

MODERN = Path(__file__).parents[2] / "mcp_servers" / "modern_server.py"
HUMAN_LOOP = Path(__file__).parents[2] / "mcp_servers" / "human_loop_server.py"


class Person:
    """The person and the model, scripted: what they were asked, what they answer."""

    def __init__(self) -> None:
        self.forms: list[tuple[str, str]] = []
        self.samplings: list[SamplingRequest] = []
        self.form_reply = ElicitationReply("accept", {"name": "Ada"})

    async def create_message(self, server: str, params: SamplingRequest) -> SamplingReply:
        self.samplings.append(params)
        return SamplingReply("forty-two", "test-model")

    async def elicit(self, server: str, message: str,
                     requested_schema: Mapping[str, Any]) -> ElicitationReply:
        self.forms.append((server, message))
        return self.form_reply

    async def elicit_url(self, server: str, request: UrlElicitation) -> ElicitationReply:
        return ElicitationReply("decline")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _serve(kind: str) -> Iterator[str]:
    """The modern server in its own process on 127.0.0.1; its URL once it accepts."""
    port = _free_port()
    proc = subprocess.Popen([sys.executable, str(MODERN), kind, str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    path = "/mcp" if kind == "http" else "/sse"
    try:
        for _ in range(200):  # wait for the socket, not a fixed sleep
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.1):
                    break
            except OSError:
                if proc.poll() is not None:
                    raise RuntimeError("the test server exited") from None
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}{path}"
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    yield from _serve("http")


async def _provider(server: dict[str, Any], person: Person) -> McpProvider:
    provider = McpProvider(parse_mcp_config({"mcpServers": {"modern": server}}).servers)
    provider.server_requests = person
    await provider.start()
    assert provider.status("modern")[0] == "running", provider.server_status("modern")
    return provider


@pytest.fixture(params=["stdio", "http"])
async def modern(request, project: Path) -> AsyncIterator[tuple[McpProvider, Person,
                                                                   ToolContext]]:
    if request.param == "stdio":
        server: dict[str, Any] = {"command": sys.executable, "args": [str(MODERN)]}
    else:
        server = {"type": "http", "url": request.getfixturevalue("http_url")}
    person = Person()
    provider = await _provider(server, person)
    yield provider, person, ToolContext(project_root=project)
    await provider.aclose()


def _text(content: str) -> str:
    return content.split("\n")[0]


async def test_the_newest_common_revision_is_spoken(modern):
    provider, _person, ctx = modern
    result = await provider.call("modern", "protocol", {}, ctx)
    assert not result.is_error, result.content
    assert _text(result.content) == "2026-07-28"


async def test_a_multi_round_trip_form_reaches_the_person(modern):
    provider, person, ctx = modern
    result = await provider.call("modern", "greet_person", {}, ctx)
    assert not result.is_error, result.content
    assert _text(result.content) == "Hello, Ada!"
    assert person.forms == [("modern", "What is your name?")]


async def test_a_multi_round_trip_sampling_reaches_the_model(modern):
    provider, person, ctx = modern
    result = await provider.call("modern", "ask_model", {"topic": "life"}, ctx)
    assert not result.is_error, result.content
    assert _text(result.content) == "model said: forty-two"
    [request] = person.samplings
    assert request.messages[0].text == "life"


async def test_a_declined_form_is_the_servers_answer_not_a_hang(modern):
    provider, person, ctx = modern
    person.form_reply = ElicitationReply("decline")
    result = await provider.call("modern", "greet_person", {}, ctx)
    assert result.is_error
    assert person.forms  # asked once, then the server's refusal came back


async def test_a_tool_added_later_is_heard_through_subscriptions_listen(request, project):
    changed = asyncio.Event()
    for server in ({"command": sys.executable, "args": [str(MODERN)]},
                   {"type": "http", "url": request.getfixturevalue("http_url")}):
        provider = McpProvider(parse_mcp_config({"mcpServers": {"modern": server}}).servers,
                               on_tools_changed=changed.set)
        try:
            await provider.start()
            assert "modern__later" not in {t.spec.name for t in provider.tools()}
            changed.clear()
            added = await provider.call("modern", "add_later", {},
                                        ToolContext(project_root=project))
            assert _text(added.content) == "added", added.content
            await asyncio.wait_for(changed.wait(), 20)
            assert "modern__later" in {t.spec.name for t in provider.tools()}
        finally:
            await provider.aclose()


async def test_an_older_server_still_gets_sampling_and_elicitation(project):
    person = Person()
    provider = await _provider({"command": sys.executable, "args": [str(HUMAN_LOOP)]}, person)
    try:
        result = await provider.call("modern", "ask_person", {},
                                     ToolContext(project_root=project))
        assert json.JSONDecoder().raw_decode(result.content)[0]["action"] == "accept"
        sampled = await provider.call("modern", "ask_model", {"prompt": "hi"},
                                      ToolContext(project_root=project))
        assert "model said: forty-two" in sampled.content
    finally:
        await provider.aclose()



async def test_a_prompt_argument_is_completed_by_the_server(modern):
    provider, _person, _ctx = modern
    queries = provider.queries
    assert await queries.complete_prompt_argument("modern", "trip", "city", "Pa", {}) == \
        ["Paris", "Parma"]
    assert await queries.complete_prompt_argument("modern", "trip", "days", "", {}) == []


async def test_a_server_without_completions_is_not_asked(project):
    person = Person()
    provider = await _provider({"command": sys.executable, "args": [str(HUMAN_LOOP)]}, person)
    try:
        assert await provider.queries.complete_prompt_argument("modern", "p", "a", "x", {}) == []
    finally:
        await provider.aclose()


async def test_a_prompt_that_asks_within_its_request_reaches_the_person(modern):
    provider, person, _ctx = modern
    prompt = await provider.get_prompt("modern", "signed_note", {"topic": "tides"})
    [message] = prompt["messages"]
    assert message["content"]["text"] == "A note on tides, signed Ada."
    assert person.forms == [("modern", "Who signs the note?")]
