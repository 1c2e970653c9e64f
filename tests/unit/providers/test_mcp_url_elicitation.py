"""URL-mode elicitation through a real server (tests/mcp_servers/human_loop_server.py): an
``elicitation/create`` in mode "url" and a tool call refused with -32042 both reach the
person (the handler's ``elicit_url``), the answer goes back to the server or to the model, and
nothing malformed crashes. What the client declares at initialize is what it supports."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest

from app.core.tools.base import ToolContext
from app.core.tools.providers.mcp.config.schema import parse_mcp_config
from app.core.tools.providers.mcp.elicitation_required import MAX_PAGES, ask_for_pages
from app.core.tools.providers.mcp.provider import McpProvider
from app.core.tools.providers.mcp.server_requests import (
    ElicitationReply,
    SamplingReply,
    SamplingRequest,
    elicitation_callback,
)
from app.core.tools.providers.mcp.url_elicitation import UrlElicitation, url_elicitation_from_wire
from tests.mcp_reference import everything_entry

HUMAN_LOOP = Path(__file__).parents[2] / "mcp_servers" / "human_loop_server.py"


class UrlHandler:
    """Answers every URL request with ``reply`` and records what it was shown."""

    def __init__(self, reply: str = "accept") -> None:
        self.reply = reply
        self.shown: list[tuple[str, UrlElicitation]] = []

    async def create_message(self, server: str, params: SamplingRequest) -> SamplingReply:
        raise AssertionError("no sampling here")

    async def elicit(self, server: str, message: str,
                     requested_schema: Mapping[str, Any]) -> ElicitationReply:
        raise AssertionError("no form here")

    async def elicit_url(self, server: str, request: UrlElicitation) -> ElicitationReply:
        self.shown.append((server, request))
        if self.reply == "fail":
            raise RuntimeError("the dialog broke")
        if self.reply == "hang":
            await asyncio.Event().wait()
        return ElicitationReply(self.reply, {"leak": "never sent"})  # type: ignore[arg-type]


@contextlib.asynccontextmanager
async def _serving(handler: UrlHandler | None, name: str = "loop",
                   entry: dict[str, Any] | None = None) -> AsyncIterator[McpProvider]:
    """The server ``name`` (the human-loop server unless ``entry`` says otherwise), started
    with ``handler`` answering its requests."""
    entry = entry or {"command": sys.executable, "args": [str(HUMAN_LOOP)]}
    provider = McpProvider(parse_mcp_config({"mcpServers": {name: entry}}).servers)
    provider.server_requests = handler
    try:
        await provider.start()
        assert provider.status(name)[0] == "running", provider.server_status(name)
        yield provider
    finally:
        await provider.aclose()


@pytest.fixture
def ctx(project: Path) -> ToolContext:
    return ToolContext(project_root=project)


@pytest.fixture
async def loop_server() -> AsyncIterator[tuple[McpProvider, UrlHandler]]:
    handler = UrlHandler()
    async with _serving(handler) as provider:
        yield provider, handler


def _answer(content: str) -> Any:
    return json.JSONDecoder().raw_decode(content)[0]


# -- elicitation/create in mode "url" ------------------------------------------------------------


@pytest.mark.parametrize("action", ["accept", "decline", "cancel"])
async def test_a_url_request_reaches_the_person_and_the_answer_the_server(loop_server, ctx,
                                                                          action):
    provider, handler = loop_server
    handler.reply = action
    result = await provider.call("loop", "ask_person_url", {}, ctx)
    assert _answer(result.content) == {"action": action}  # no content, ever
    [(server, request)] = handler.shown
    assert server == "loop"
    assert request == UrlElicitation("Sign in, please", "https://example.invalid/login", "e1")
    assert request.host == "example.invalid"


@pytest.mark.parametrize("url", ["javascript:alert(1)", "file:///etc/passwd",
                                 "https://bank.example@evil.example/",
                                 "https://evil.example\\@bank.example/"])
async def test_a_url_that_is_not_a_plain_web_address_is_declined_unseen(loop_server, ctx, url):
    provider, handler = loop_server
    result = await provider.call("loop", "ask_person_url", {"url": url}, ctx)
    assert _answer(result.content) == {"action": "decline"}
    assert handler.shown == []


async def test_the_client_declares_both_elicitation_modes_only_with_a_handler(ctx):
    for handler, declared in ((UrlHandler(), {"form": {}, "url": {}}), (None, None)):
        async with _serving(handler) as provider:
            result = await provider.call("loop", "capabilities", {}, ctx)
        assert _answer(result.content) == declared


# -- a tool call refused with -32042 -------------------------------------------------------------


async def test_required_pages_are_shown_and_the_model_told_to_retry(loop_server, ctx):
    provider, handler = loop_server
    urls = ["https://auth.example/login?state=s3cr3t", "ftp://files.example/x"]
    result = await provider.call("loop", "needs_pages", {"urls": urls}, ctx)
    assert result.is_error
    assert [r.url for _s, r in handler.shown] == [urls[0]]  # the ftp page is never shown
    assert handler.shown[0][1].elicitation_id == "page-1"
    text = result.content
    assert "URL elicitation required" in text and "The call was not completed" in text
    assert "a page on auth.example: the person chose to open it in the browser" in text
    assert "only web addresses (http, https)" in text
    assert "call the tool again" in text
    assert "s3cr3t" not in text  # the URL (and what it carries) never reaches the model
    assert provider.status("loop")[0] == "running"


async def test_a_declined_page_tells_the_model_not_to_retry(loop_server, ctx):
    provider, handler = loop_server
    handler.reply = "decline"
    result = await provider.call("loop", "needs_pages", {"urls": ["https://a.example/"]}, ctx)
    assert "the person declined to open it" in result.content
    assert "do not retry unless they ask you to" in result.content


async def test_unreadable_error_data_is_an_answer_not_a_crash(loop_server, ctx):
    provider, handler = loop_server
    result = await provider.call("loop", "needs_garbage", {}, ctx)
    assert result.is_error and "named no page" in result.content
    assert handler.shown == []


async def test_without_a_handler_the_model_hears_nobody_could_be_asked(ctx):
    async with _serving(None) as provider:
        result = await provider.call("loop", "needs_pages", {"urls": ["https://a.example/"]},
                                     ctx)
    assert result.is_error and "cannot ask the person right now" in result.content


async def test_the_reference_server_url_flow_error_path_then_retry(ctx):
    """server-everything's trigger-url-elicitation: -32042 names a prerequisite page; the
    retry the model is told to make then asks (elicitation/create, mode url) for the page."""
    handler = UrlHandler("accept")
    args = {"url": "https://example.com/start", "message": "Finish signing in",
            "errorPath": True}
    async with _serving(handler, "everything", everything_entry()) as provider:
        first = await provider.call("everything", "trigger-url-elicitation", args, ctx)
        retry = await provider.call("everything", "trigger-url-elicitation", args, ctx)
    assert first.is_error and "a page on modelcontextprotocol.io: the person chose to open" \
        in first.content and "call the tool again" in first.content
    assert not retry.is_error and "User completed the URL elicitation flow" in retry.content
    assert [r.url for _s, r in handler.shown] == ["https://modelcontextprotocol.io",
                                                   "https://example.com/start"]
    assert handler.shown[1][1].message == "Finish signing in"


# -- the pieces alone -----------------------------------------------------------------------------


async def test_a_broken_or_silent_dialog_is_a_line_of_the_answer():
    broken = UrlHandler("fail")
    result = await ask_for_pages("s", "s__t", [{"url": "https://a.example/"}], lambda: broken)
    assert "a page on a.example: Tebiki could not show it" in result.content
    silent = UrlHandler("hang")
    result = await ask_for_pages("s", "s__t", [{"url": "https://a.example/"}], lambda: silent,
                                 timeout_s=0.05)
    assert "no answer within 0.05s" in result.content


async def test_at_most_a_few_pages_are_shown():
    handler = UrlHandler()
    pages = [{"url": f"https://p{n}.example/"} for n in range(MAX_PAGES + 3)]
    result = await ask_for_pages("s", "s__t", pages, lambda: handler)
    assert len(handler.shown) == MAX_PAGES
    assert "3 more page(s) were not shown" in result.content


async def test_a_url_request_never_carries_content_back():
    handler = UrlHandler("accept")
    callback = elicitation_callback("s", lambda: handler)
    result = await callback(None, types.ElicitRequestURLParams(
        message="m", url="https://a.example/", elicitation_id="e"))
    assert isinstance(result, types.ElicitResult)
    assert (result.action, result.content) == ("accept", None)


@pytest.mark.parametrize("wire, problem", [
    ("https://a.example/", "not an object"),
    ({"message": "m"}, "no URL"),
    ({"url": "https://a.example/x y"}, "spaces or invisible"),
    ({"url": "https://a.example/\u202e"}, "spaces or invisible"),
    ({"url": "https:///path"}, "no host"),
    ({"url": "https://a.example:port/"}, "cannot be read"),
    ({"url": "https://a.example/" + "x" * 9000}, "longer than"),
])
def test_malformed_url_requests_are_clear_errors(wire, problem):
    with pytest.raises(ValueError, match=problem):
        url_elicitation_from_wire(wire)


def test_a_look_alike_host_is_shown_in_its_ascii_spelling():
    request = url_elicitation_from_wire({"url": "https://b\u0430nk.example/login"})
    assert request.host == "b\u0430nk.example"
    assert request.ascii_host == "xn--bnk-6cd.example"
