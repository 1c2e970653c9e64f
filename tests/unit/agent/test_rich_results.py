"""Images and progress through the agent loop: a tool's images reach the Messages API request as
image blocks in its tool_result (and again after the conversation is reloaded), the audit keeps
text only, the OpenAI-compatible path gets a note; ``ToolContext.progress`` becomes throttled
ToolProgress events. The last tests run the real server-everything (tests/mcp_reference.py)."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import AsyncIterator, Mapping
from typing import Any

import pytest

from app.core.agent.events import ToolFinished, ToolProgress
from app.core.agent.progress import ProgressReporter
from app.core.tools.base import RiskLevel, ToolCategory, ToolContext, ToolResult, ToolSpec
from app.core.tools.images import ImagePart, image_part
from app.core.tools.providers.base import StaticProvider
from app.core.tools.providers.mcp.connection import McpConnection
from tests.fakes.anthropic_server import Response
from tests.mcp_reference import ConnectionTool, config, everything_entry
from tests.unit.agent.helpers import Harness

PNG = b"\x89PNG\r\n\x1a\n" + b"\x01" * 40
PNG_B64 = base64.b64encode(PNG).decode()


def _spec(name: str) -> ToolSpec:
    return ToolSpec(name=name, description="test tool", input_schema={"type": "object"},
                    category=ToolCategory.READ_ONLY, risk=RiskLevel.LOW, server_id="rich")


class PictureTool:
    def __init__(self) -> None:
        self.spec = _spec("picture")

    async def execute(self, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        part = image_part("image/png", PNG_B64)
        assert isinstance(part, ImagePart)
        return ToolResult.ok(f"a picture\n\n{part.note(1)}", (part,))


class ChattyTool:
    """Reports progress 500 times at once, once from a worker thread, once malformed."""

    def __init__(self) -> None:
        self.spec = _spec("chatty")

    async def execute(self, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        assert ctx.progress is not None
        for i in range(1, 501):
            ctx.progress(i, 1000, f"step {i}")
        ctx.progress(float("nan"), None, None)  # dropped, not shown as a broken bar
        await asyncio.to_thread(ctx.progress, 600, 1000, "from a thread")
        return ToolResult.ok("done")


def _add_tools(h: Harness, *tools: Any) -> None:
    h.registry.register_provider(StaticProvider(tools, id="rich", display_name="Rich",
                                                priority=0))
    for tool in tools:
        h.enable(tool.spec.name)
        h.allow(tool.spec.name)


async def test_image_reaches_the_request_and_a_reloaded_conversation(harness: Harness) -> None:
    h = harness
    _add_tools(h, PictureTool())
    h.server.script(Response.tool_use("picture", {}), Response.text("I see it"))
    session = h.session()
    await session.run("look")
    result = h.server.message_requests[1].tool_results()[0]
    text, image = result["content"]
    assert text == {"type": "text", "text": "a picture\n\n[image 1: image/png, 48 bytes]"}
    assert image == {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                                 "data": PNG_B64}}
    finished = h.of(ToolFinished)[0]
    assert [i.media_type for i in finished.images] == ["image/png"]
    # The tool history keeps the text and the note, not the base64.
    audit = h.audit()[0]
    assert audit.output == "a picture\n\n[image 1: image/png, 48 bytes]"
    assert PNG_B64 not in audit.output

    # Reloaded from the store, the conversation re-sends the image as it was.
    h.server.script(Response.text("still there"))
    again = h.session(conversation_id=session.conversation_id)
    await again.run("and now?")
    resent = h.server.message_requests[2].messages[2]["content"][0]
    assert resent["type"] == "tool_result" and resent["content"][1] == image


async def test_openai_compatible_path_gets_the_text_and_a_note(harness: Harness) -> None:
    h = harness
    h.update_profile(provider="openai_compatible", model="qwen2.5-coder",
                     base_url=h.server.base_url)
    _add_tools(h, PictureTool())
    h.server.script(Response.tool_use("picture", {}, id="call_1"), Response.text("ok"))
    await h.session(client_factory=None).run("look")
    tool_message = h.server.message_requests[1].body["messages"][-1]
    assert tool_message["role"] == "tool"
    assert tool_message["content"] == (
        "a picture\n\n[image 1: image/png, 48 bytes]\n\n[1 image omitted: Tebiki sends tool "
        "results to OpenAI-compatible endpoints as text only]")


async def test_a_flood_of_progress_is_throttled_and_ends_before_the_result(
        harness: Harness) -> None:
    h = harness
    _add_tools(h, ChattyTool())
    h.server.script(Response.tool_use("chatty", {}), Response.text("ok"))
    await h.session().run("go")
    names = h.names()
    progress = h.of(ToolProgress)
    # The first at once, then at most one per interval (none, unless the thread hop took
    # that long), and the latest when the call ends: never one per notification.
    assert (progress[0].progress, progress[0].total, progress[0].message) == (1.0, 1000.0,
                                                                              "step 1")
    assert progress[-1] == ToolProgress(progress[-1].tool_use_id, 600.0, 1000.0,
                                        "from a thread")
    assert len(progress) <= 3
    assert names.index("ToolProgress") > names.index("ToolStarted")
    assert names.index("ToolFinished") > len(names) - 1 - names[::-1].index("ToolProgress")


async def test_reporter_sends_the_latest_value_after_the_interval() -> None:
    sent: list[ToolProgress] = []
    arrived = asyncio.Event()

    def emit(event: ToolProgress) -> None:
        sent.append(event)
        if len(sent) == 2:
            arrived.set()

    reporter = ProgressReporter("t1", emit, interval_s=0.01)
    reporter(1, None, None)
    reporter(2, None, "two")
    reporter(3, 4, "three")
    assert [e.progress for e in sent] == [1.0]
    await asyncio.wait_for(arrived.wait(), 10)
    assert sent[1] == ToolProgress("t1", 3.0, 4.0, "three")
    reporter.close()
    reporter(4, 4, None)  # after the call: ignored
    assert len(sent) == 2 and (reporter.received, reporter.sent) == (3, 2)


async def test_reporter_drops_malformed_notifications() -> None:
    sent: list[ToolProgress] = []
    reporter = ProgressReporter("t1", sent.append)
    for bad in (("x", None, None), (-1, None, None), (float("inf"), 1, None), (True, 1, None)):
        reporter(*bad)  # type: ignore[arg-type]
    reporter(1, 0, "x" * 1000)  # a zero total is unknown; a long message is cut
    reporter.close()
    assert len(sent) == 1 and sent[0].total is None and len(sent[0].message or "") == 200


# -- the real server-everything ------------------------------------------------------------


@pytest.fixture
async def everything() -> AsyncIterator[McpConnection]:
    conn = McpConnection(config("everything", everything_entry()))
    await conn.start()
    assert conn.running, conn.message
    yield conn
    await conn.stop()


async def test_server_everything_image_reaches_the_request_body(
        harness: Harness, everything: McpConnection) -> None:
    h = harness
    _add_tools(h, ConnectionTool(everything, "get-tiny-image"))
    h.server.script(Response.tool_use("get_tiny_image", {}), Response.text("a logo"))
    await h.session().run("show me")
    content = h.server.message_requests[1].tool_results()[0]["content"]
    assert content[0]["type"] == "text" and "[image 1: image/png" in content[0]["text"]
    assert "The image above is the MCP logo." in content[0]["text"]
    source = content[1]["source"]
    assert content[1]["type"] == "image" and source["media_type"] == "image/png"
    assert base64.b64decode(source["data"]).startswith(b"\x89PNG\r\n\x1a\n")


async def test_server_everything_progress_becomes_events(
        harness: Harness, everything: McpConnection) -> None:
    h = harness
    _add_tools(h, ConnectionTool(everything, "trigger-long-running-operation"))
    h.server.script(Response.tool_use("trigger_long_running_operation",
                                      {"duration": 0.6, "steps": 3}),
                    Response.text("done"))
    await h.session().run("go")
    progress = h.of(ToolProgress)
    assert progress and all(p.total == 3.0 for p in progress)
    values = [p.progress for p in progress]
    assert values == sorted(values) and set(values) <= {1.0, 2.0, 3.0}
    names = h.names()
    assert max(i for i, n in enumerate(names) if n == "ToolProgress") < names.index(
        "ToolFinished")
    assert "Long running operation completed" in h.of(ToolFinished)[0].content
