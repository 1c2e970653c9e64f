"""Legacy HTTP+SSE servers: a real SSE server on 127.0.0.1 built on the SDK in the lock
(tests/mcp_servers/modern_server.py ``sse PORT``), reached when the entry says ``"type": "sse"``
and detected when a plain URL answers as SSE."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from app.core.tools.base import ToolContext
from app.core.tools.providers.mcp.config.schema import parse_mcp_config
from app.core.tools.providers.mcp.provider import McpProvider
from tests.unit.providers.test_mcp_modern_revision import _serve


@pytest.fixture(scope="module")
def sse_url() -> Iterator[str]:
    yield from _serve("sse")


async def _started(entry: dict[str, Any]) -> McpProvider:
    provider = McpProvider(parse_mcp_config({"mcpServers": {"old": entry}}).servers)
    await provider.start()
    return provider


@pytest.fixture
async def provider_for() -> AsyncIterator[Any]:
    started: list[McpProvider] = []

    async def start(entry: dict[str, Any]) -> McpProvider:
        started.append(await _started(entry))
        return started[-1]

    yield start
    for provider in started:
        await provider.aclose()


@pytest.mark.parametrize("entry_type", ["sse", None])
async def test_a_legacy_sse_server_runs_configured_or_detected(provider_for, sse_url,
                                                                 entry_type, project: Path):
    entry = {"url": sse_url, **({"type": entry_type} if entry_type else {})}
    provider = await provider_for(entry)
    status = provider.server_status("old")
    assert status.state == "running", status
    assert "legacy SSE" in status.message
    result = await provider.call("old", "echo", {"text": "over sse"},
                                 ToolContext(project_root=project))
    assert not result.is_error and result.content.startswith("over sse"), result.content


async def test_a_url_said_to_be_streamable_http_is_not_tried_as_sse(provider_for, sse_url):
    provider = await provider_for({"type": "http", "url": sse_url})
    status = provider.server_status("old")
    assert status.state == "failed"
    assert "legacy SSE" not in status.message


async def test_a_plain_url_that_is_neither_says_the_first_failure(provider_for, sse_url):
    # The SSE server's message endpoint without a session: refused both ways.
    provider = await provider_for({"url": sse_url.replace("/sse", "/nowhere")})
    status = provider.server_status("old")
    assert status.state == "failed"
    assert "404" in status.message, status.message
