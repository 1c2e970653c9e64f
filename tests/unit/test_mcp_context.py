"""MCP prompt messages and resource contents as prompt text and attachments: what a server
sends is untrusted, so malformed or oversized content becomes a clear error, never a crash."""

from __future__ import annotations

import base64

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.core.agent.attachments import MAX_TEXT_BYTES, AttachmentError
from app.core.agent.mcp_context import (
    MAX_RESOURCE_BYTES,
    PromptChoice,
    expand_prompt,
    expand_template,
    resource_attachment,
    template_variables,
)
from app.ui.ai_panel.mcp_prompts import slash_token

CHOICE = PromptChoice(server="s", name="p", label="p")
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 20).decode("ascii")


def test_a_single_user_message_is_inserted_as_it_is():
    result = {"messages": [{"role": "user", "content": {"type": "text", "text": "Hello"}}]}
    assert expand_prompt(CHOICE, result).text == "Hello"


def test_a_conversation_names_each_role_and_attaches_images_and_resources():
    result = {"messages": [
        {"role": "user", "content": {"type": "text", "text": "Look"}},
        {"role": "user", "content": {"type": "image", "data": PNG, "mimeType": "image/png"}},
        {"role": "assistant", "content": {"type": "resource", "resource": {
            "uri": "x://doc", "mimeType": "text/plain", "text": "doc body"}}},
        {"role": "user", "content": {"type": "resource_link", "uri": "x://link", "name": "l"}},
        {"role": "user", "content": {"type": "audio", "data": "AAAA"}},
    ]}
    expansion = expand_prompt(CHOICE, result)
    assert expansion.text == ("User:\nLook\n\nUser:\n[attached image p-image-2]\n\n"
                              "Assistant:\n[attached resource x://doc]\n\n"
                              "User:\n[resource link x://link]\n\n"
                              "User:\n[audio content, not shown]")
    assert [(a.name, a.kind) for a in expansion.attachments] == [("p-image-2", "image"),
                                                                  ("x://doc", "text")]
    assert expansion.problems == []


def test_content_that_cannot_be_attached_is_named_and_reported():
    result = {"messages": [
        {"role": "user", "content": {"type": "image", "data": "not base64!"}},
        {"role": "user", "content": {"type": "resource", "resource": {
            "uri": "x://bin", "blob": base64.b64encode(b"\0\1\2").decode()}}},
    ]}
    expansion = expand_prompt(CHOICE, result)
    assert expansion.text == "[image p-image-1: not attached]\n\n[resource x://bin: not attached]"
    assert expansion.attachments == []
    assert "malformed base64" in expansion.problems[0]
    assert "binary file" in expansion.problems[1]


@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                    lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.sampled_from(["messages", "role", "content", "type",
                                                       "text", "data", "resource", "uri"]),
                                      inner, max_size=4), max_leaves=20))
def test_malformed_prompt_results_never_crash(raw):
    result = raw if isinstance(raw, dict) else {"messages": raw}
    expansion = expand_prompt(CHOICE, result)
    assert isinstance(expansion.text, str)


def test_resource_text_over_the_limit_is_refused():
    with pytest.raises(AttachmentError, match="too large"):
        resource_attachment("x://big", [{"uri": "x://big", "text": "a" * (MAX_TEXT_BYTES + 1)}])


def test_a_huge_blob_is_refused_before_it_is_decoded():
    blob = "A" * (MAX_RESOURCE_BYTES * 4 // 3 + 8)
    with pytest.raises(AttachmentError, match="too large"):
        resource_attachment("x://huge", [{"uri": "x://huge", "blob": blob}])


def test_several_text_parts_are_one_document_and_an_empty_read_is_an_error():
    attachment = resource_attachment("x://d", [{"uri": "x://a", "text": "A"},
                                               {"uri": "x://b", "text": "B"}])
    assert attachment.data == b"[x://a]\nA\n\n[x://b]\nB"
    assert resource_attachment("x://i", [{"uri": "x://i", "blob": PNG}]).kind == "image"
    with pytest.raises(AttachmentError, match="no content"):
        resource_attachment("x://e", [])


def test_uri_templates():
    assert template_variables("demo://items/{item}") == ["item"]
    assert template_variables("x://{a}/{+b}{?c,d}") == ["a", "b", "c", "d"]
    assert expand_template("demo://items/{item}", {"item": "a b/c"}) == "demo://items/a%20b%2Fc"
    assert expand_template("x://{+path}", {"path": "a/b c"}) == "x://a/b%20c"
    assert expand_template("x://s{?q,n}", {"q": "1", "n": ""}) == "x://s?q=1"


def test_slash_token_only_at_the_start_while_typed():
    assert slash_token("/rev", 4) == "/rev"
    assert slash_token("/rev more", 2) == "/rev"
    assert slash_token("/rev more", 6) is None  # the cursor is past the command
    assert slash_token("see /rev", 8) is None
    assert slash_token("", 0) is None
