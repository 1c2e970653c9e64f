"""What the model gets from a tool result: structured content once, an output-schema violation
named as such, text blobs as text. Against server-filesystem (tests/.mcp-reference) and the
quirks server (tests/mcp_servers/quirks_server.py) for what the reference servers cannot show."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from app.core.tools.base import ToolContext
from app.core.tools.providers.mcp.config.model import McpServerConfig
from app.core.tools.providers.mcp.config.schema import parse_mcp_config
from app.core.tools.providers.mcp.provider import McpProvider
from app.core.tools.providers.mcp.resources import contents_to_text
from app.core.tools.providers.mcp.results import content_to_parts
from tests.mcp_reference import filesystem_entry
from tests.mcp_servers import quirks_server_entry


def _configs(**entries: dict) -> dict[str, McpServerConfig]:
    return parse_mcp_config({"mcpServers": entries}).servers


@pytest.fixture
def ctx(project: Path) -> ToolContext:
    return ToolContext(project_root=project)


@pytest.fixture
async def quirks(project):
    """The quirks server, started (its state is checked by the tests that call it)."""
    provider = McpProvider(_configs(q=quirks_server_entry()), roots=[project])
    try:
        await provider.start()
        yield provider
    finally:
        await provider.aclose()


# -- 1. structured content once -----------------------------------------------------------------

async def test_server_filesystem_read_text_file_is_sent_once_and_not_cut(project, ctx):
    line = "The quick brown fox jumps over the lazy dog, line {:05d}.\n"
    body = "".join(line.format(i) for i in range(520))  # about 29.7 KB
    assert 29_000 < len(body) < 30_500
    (project / "big.txt").write_text(body)
    provider = McpProvider(_configs(fs=filesystem_entry(project)), roots=[project])
    try:
        await provider.start()
        read = await provider.call("fs", "read_text_file", {"path": str(project / "big.txt")},
                                   ctx)
    finally:
        await provider.aclose()
    assert not read.is_error, read.content
    assert "truncated" not in read.content
    assert read.content.strip() == body.strip()


def test_structured_content_beside_real_text_is_not_repeated():
    text = "Three results: alpha, beta and gamma, all of them green."
    shown, _ = content_to_parts([{"type": "text", "text": text}],
                                {"results": ["alpha", "beta", "gamma"], "colour": "green"})
    assert shown == text


@pytest.mark.parametrize("stub", ["ok", "{}", "", "done"])
def test_a_stub_text_gets_the_structured_json(stub):
    structured = {"rows": [{"id": i, "name": f"row {i}"} for i in range(20)]}
    shown, _ = content_to_parts([{"type": "text", "text": stub}], structured)
    assert '"name": "row 19"' in shown


def test_a_placeholder_far_shorter_than_the_json_gets_the_json():
    structured = {"rows": [{"id": i, "name": f"row number {i}"} for i in range(40)]}
    shown, _ = content_to_parts([{"type": "text", "text": "See the structured result."}],
                                structured)
    assert shown.startswith("See the structured result.\n\n[structured content]\n")
    assert '"name": "row number 39"' in shown


# -- 2. an output-schema violation is not "could not run" ---------------------------------------

async def test_structured_content_breaking_its_schema_says_the_tool_ran(quirks, ctx):
    result = await quirks.call("q", "mismatch", {}, ctx)
    assert result.is_error
    assert "could not run" not in result.content
    assert "mismatch ran on MCP server 'q'" in result.content
    assert "did not match the output schema" in result.content
    assert "'many' is not of type 'integer'" in result.content
    assert result.content.endswith("The text it returned:\ncounted: many")


# -- 3. a text blob is text -----------------------------------------------------------------------

async def test_an_embedded_json_blob_is_shown_as_text(quirks, ctx):
    result = await quirks.call("q", "json_blob", {}, ctx)
    assert not result.is_error, result.content
    assert result.content == ('[resource quirks://inline.json]\n'
                              '{"answer": 42, "note": "text sent as a blob"}')


async def test_a_json_blob_resource_reads_as_text(quirks):
    contents = await quirks.read_resource("q", "quirks://data.json")
    text = contents_to_text("quirks://data.json", contents)
    assert text == '{"answer": 42, "note": "text sent as a blob"}'


@pytest.mark.parametrize(("mime", "raw"), [
    ("application/octet-stream", b"plain words"),  # not a text type
    ("text/plain", b"\xff\xfe\x00bad"),  # labelled text, but not UTF-8
])
def test_a_blob_that_is_not_text_is_still_described(mime, raw):
    blob = base64.b64encode(raw).decode()
    text = contents_to_text("x://y", [{"uri": "x://y", "mimeType": mime, "blob": blob}])
    assert "it is not text" in text
    shown, _ = content_to_parts([{"type": "resource",
                                  "resource": {"uri": "x://y", "mimeType": mime, "blob": blob}}])
    assert "not shown: binary" in shown


@pytest.mark.parametrize("mime", ["text/markdown; charset=utf-8", "application/json",
                                  "application/vnd.api+json", "application/atom+xml",
                                  "application/x-yaml"])
def test_text_mime_types(mime):
    blob = base64.b64encode("héllo".encode()).decode()
    assert contents_to_text("x://y", [{"uri": "x://y", "mimeType": mime, "blob": blob}]) == \
        "héllo"


def _annotated(text: str, audience) -> dict:
    return {"type": "text", "text": text, "annotations": {"audience": audience}}


def _converted(*blocks: dict):
    from mcp.types import CallToolResult

    from app.core.tools.providers.mcp.results import call_result_to_tool_result
    return call_result_to_tool_result(CallToolResult.model_validate({"content": list(blocks)}),
                                      "t", 50_000)


def test_without_an_audience_the_card_shows_what_the_model_gets():
    result = _converted({"type": "text", "text": "plain"}, _annotated("both", ["user",
                                                                              "assistant"]))
    assert result.content == "plain\n\nboth" and result.for_person is None


def test_audience_splits_a_result_between_the_model_and_the_card():
    result = _converted(_annotated("for you", ["user"]), {"type": "text", "text": "shared"},
                        _annotated("for the model", ["assistant"]))
    assert result.content == "shared\n\nfor the model"
    assert result.for_person is not None and result.for_person.text == "for you\n\nshared"


def test_an_empty_audience_restricts_nothing():
    result = _converted(_annotated("empty", []))
    assert result.content == "empty" and result.for_person is None
