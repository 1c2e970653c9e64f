"""A stored prompt's blocks back into attachments (editing a sent message puts them back on
the tray): each restored attachment's block is exactly the stored one; what cannot be
restored is left out with a reason, never a crash."""

from __future__ import annotations

import pytest

from app.core.agent.attachments import (
    AttachmentError,
    attachment_from_block,
    attachment_from_bytes,
    attachments_in,
    restore_attachments,
)

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 20
PDF = b"%PDF-1.4\n" + b"x" * 50


@pytest.mark.parametrize(("name", "data", "kind"), [
    ("shot.png", PNG, "image"), ("paper.pdf", PDF, "pdf"),
    ("notes.md", "Grüße\n".encode(), "text")])
def test_a_block_this_app_made_comes_back_as_the_same_block(name, data, kind) -> None:
    original = attachment_from_bytes(name, data)
    block = original.block()
    restored = attachment_from_block(block)
    assert restored.kind == kind and restored.data == data
    assert restored.block() == block
    if kind != "image":  # an image block keeps no name
        assert restored == original


@pytest.mark.parametrize("block", [
    {"type": "search_result", "source": "x", "title": "t", "content": []},
    {"type": "image", "source": {"type": "url", "url": "http://127.0.0.1/a.png"}},
    {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                 "data": "not base64!"}},
    {"type": "image", "source": {"type": "base64", "media_type": "image/tiff", "data": "AAAA"}},
    {"type": "document", "title": "n", "source": {"type": "text", "media_type": "text/plain",
                                                  "data": "x"}, "cache_control": {}},
    {"type": "document", "source": "text"},
    {"type": "document", "title": "n", "source": {"type": "text", "media_type": "text/plain",
                                                  "data": 7}},
])
def test_other_or_damaged_blocks_are_refused_with_a_reason(block) -> None:
    with pytest.raises(AttachmentError) as raised:
        attachment_from_block(block)
    assert str(raised.value)


def test_restore_keeps_what_it_can_one_slot_per_attachment_the_note_shows() -> None:
    notes = attachment_from_bytes("notes.md", b"milk").block()
    damaged = {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                           "data": "@@@@"}}
    unknown = {"type": "search_result", "source": "x", "title": "t", "content": []}
    content = [damaged, unknown, "junk", notes, {"type": "text", "text": "Look"}]
    restored, problems = restore_attachments(content)
    assert len(restored) == len(attachments_in(content)) == 2
    assert restored[0] is None
    assert restored[1] is not None and restored[1].block() == notes
    assert len(problems) == 3
    assert "unknown kind ('search_result')" in problems[1]
    assert problems[2] == "a damaged stored block"


@pytest.mark.parametrize("content", [None, "just text", [], [{"type": "text", "text": "hi"}]])
def test_a_prompt_without_attachments_restores_nothing(content) -> None:
    assert restore_attachments(content) == ([], [])
