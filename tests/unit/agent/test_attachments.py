"""Attachments: files the person adds to a prompt become image and document blocks, checked
by content and size, sent before the prompt's text, stored with it and sent again on reload;
the OpenAI-compatible provider turns them into its own forms instead of dropping them."""

from __future__ import annotations

import base64
import struct
import zlib
from pathlib import Path

import pytest

from app.core.agent.attachments import (
    MAX_COUNT,
    MAX_IMAGE_BYTES,
    MAX_TEXT_BYTES,
    MAX_TOTAL_BYTES,
    Attachment,
    AttachmentError,
    attachment_from_bytes,
    attachment_info,
    attachments_in,
    content_blocks,
    limit_error,
    read_attachment,
)
from app.core.agent.events import FlowChanged, RunFinished
from app.core.agent.models.openai_compat import to_openai_messages
from tests.fakes.anthropic_server import Response
from tests.unit.agent.helpers import Harness


def png_bytes(width: int = 2, height: int = 2) -> bytes:
    """A real (tiny, grey) PNG."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))

    rows = b"".join(b"\x00" + b"\x80" * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0,
                                                              0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def test_a_png_becomes_a_base64_image_block(tmp_path: Path) -> None:
    data = png_bytes()
    (tmp_path / "shot.png").write_bytes(data)
    attachment = read_attachment(tmp_path / "shot.png")
    assert (attachment.kind, attachment.media_type, attachment.size) == ("image", "image/png",
                                                                         len(data))
    block = attachment.block()
    assert block == {"type": "image", "source": {
        "type": "base64", "media_type": "image/png",
        "data": base64.b64encode(data).decode("ascii")}}


@pytest.mark.parametrize(("head", "media_type"), [
    (b"\xff\xd8\xff\xe0\x00\x10JFIF", "image/jpeg"),
    (b"GIF89a\x01\x00\x01\x00", "image/gif"),
    (b"RIFF\x24\x00\x00\x00WEBPVP8 ", "image/webp"),
])
def test_the_image_type_comes_from_the_content_not_the_name(head: bytes,
                                                            media_type: str) -> None:
    attachment = attachment_from_bytes("picture.txt", head + b"\x00" * 32)
    assert (attachment.kind, attachment.media_type) == ("image", media_type)


def test_a_text_file_becomes_a_titled_text_document(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("# Plan\n\nbuild → ship\n", encoding="utf-8")
    block = read_attachment(tmp_path / "notes.md").block()
    assert block == {"type": "document", "title": "notes.md", "source": {
        "type": "text", "media_type": "text/plain", "data": "# Plan\n\nbuild → ship\n"}}


def test_a_pdf_becomes_a_base64_document() -> None:
    block = attachment_from_bytes("spec.pdf", b"%PDF-1.7\n%\xe2\xe3\n1 0 obj\n").block()
    assert block["type"] == "document" and block["title"] == "spec.pdf"
    assert block["source"]["type"] == "base64"
    assert block["source"]["media_type"] == "application/pdf"


@pytest.mark.parametrize(("data", "reason"), [
    (b"\x7fELF\x02\x01\x01\x00\x00\x00", "binary file"),
    (b"caf\xe9 latin-1 text", "not UTF-8 text"),
    (b"", "empty"),
])
def test_other_files_are_refused_with_a_reason(data: bytes, reason: str) -> None:
    with pytest.raises(AttachmentError, match=reason):
        attachment_from_bytes("thing.bin", data)


def test_too_large_files_are_refused(tmp_path: Path) -> None:
    big_image = png_bytes() + b"\x00" * MAX_IMAGE_BYTES
    with pytest.raises(AttachmentError, match=r"shot.png: too large .*image may be at most"):
        attachment_from_bytes("shot.png", big_image)
    with pytest.raises(AttachmentError, match=r"log.txt: too large .*text file"):
        attachment_from_bytes("log.txt", b"x" * (MAX_TEXT_BYTES + 1))
    huge = tmp_path / "huge.log"
    with huge.open("wb") as handle:  # larger than any limit: refused before it is read
        handle.truncate(64 * 1024 * 1024)
    with pytest.raises(AttachmentError, match=r"huge\.log: too large"):
        read_attachment(huge)


def test_missing_files_and_folders_are_refused(tmp_path: Path) -> None:
    with pytest.raises(AttachmentError, match="does not exist"):
        read_attachment(tmp_path / "gone.txt")
    with pytest.raises(AttachmentError, match="not a file"):
        read_attachment(tmp_path)


def test_count_and_total_limits_per_message() -> None:
    small = Attachment("a.txt", "text", "text/plain", b"a")
    assert limit_error([small] * (MAX_COUNT - 1), small) is None
    assert "at most 10 attachments" in (limit_error([small] * MAX_COUNT, small) or "")
    big = Attachment("big.png", "image", "image/png", b"x" * MAX_IMAGE_BYTES)
    current = [big] * (MAX_TOTAL_BYTES // MAX_IMAGE_BYTES)
    assert "per message" in (limit_error(current, big) or "")


def test_a_stored_block_shows_as_a_chip_without_its_content() -> None:
    image = attachment_from_bytes("shot.png", png_bytes())
    doc = attachment_from_bytes("notes.md", b"hello")
    pdf = attachment_from_bytes("spec.pdf", b"%PDF-1.4 abc")
    infos = attachments_in([image.block(), doc.block(), {"type": "text", "text": "hi"},
                            pdf.block()])
    assert [(i.name, i.kind, i.size) for i in infos] == [
        ("image", "image", image.size), ("notes.md", "text", 5), ("spec.pdf", "pdf", pdf.size)]
    assert infos[1].label == "notes.md (text, 5 B)"
    # Malformed stored blocks are skipped, never a crash.
    assert attachment_info({"type": "image", "source": "nope"}) is None
    assert attachment_info({"type": "document", "source": {"data": 3}}) is None
    assert attachments_in("plain text") == []


async def test_attachments_are_sent_before_the_text_and_again_after_reload(
        harness: Harness) -> None:
    h = harness
    image = attachment_from_bytes("shot.png", png_bytes())
    doc = attachment_from_bytes("notes.md", b"the notes")
    h.server.script(Response.text("I see a grey square."), Response.text("Still grey."))
    session = h.session()
    await session.run("What is this?", [image, doc])
    assert isinstance(h.last(), RunFinished)
    sent = h.server.message_requests[0].body["messages"][0]["content"]
    assert [b["type"] for b in sent] == ["image", "document", "text"]
    assert sent[:2] == content_blocks([image, doc])
    assert sent[2]["text"] == "What is this?"
    stored = h.stored(session.conversation_id)
    assert stored[0]["content"][:2] == content_blocks([image, doc])
    # The person chose these files, as they typed the text: no flow label changes.
    assert h.of(FlowChanged) == [] and session.flow.summary() == "clean"

    again = h.session(session.conversation_id)
    await again.run("And now?")
    second = h.server.message_requests[1].body["messages"]
    assert [b["type"] for b in second[0]["content"]] == ["image", "document", "text"]


async def test_attachments_without_text_get_a_prompt_naming_them(harness: Harness) -> None:
    h = harness
    h.server.script(Response.text("ok"))
    session = h.session()
    await session.run("  ", [attachment_from_bytes("notes.md", b"x")])
    sent = h.server.message_requests[0].body["messages"][0]["content"]
    assert sent[-1] == {"type": "text", "text": "Attached: notes.md"}
    with pytest.raises(ValueError, match="empty"):
        await session.run("  ")


def test_openai_compat_sends_images_as_data_urls_and_documents_as_text() -> None:
    image = attachment_from_bytes("shot.png", png_bytes())
    blocks = content_blocks([image, attachment_from_bytes("notes.md", b"the notes"),
                             attachment_from_bytes("spec.pdf", b"%PDF-1.4 x")])
    messages = to_openai_messages("", [{"role": "user", "content": [
        *blocks, {"type": "text", "text": "Look"}]}])
    assert len(messages) == 1
    text, image_part = messages[0]["content"]
    assert text["type"] == "text"
    assert "--- notes.md ---\nthe notes" in text["text"] and text["text"].endswith("Look")
    assert "PDF spec.pdf omitted" in text["text"]
    assert image_part == {"type": "image_url", "image_url": {
        "url": "data:image/png;base64," + base64.b64encode(image.data).decode("ascii")}}
    # Without images the content stays a plain string, as before.
    plain = to_openai_messages("", [{"role": "user", "content": [
        content_blocks([attachment_from_bytes("a.txt", b"A")])[0],
        {"type": "text", "text": "go"}]}])
    assert plain == [{"role": "user", "content": "--- a.txt ---\nA\n--- end of a.txt ---\n\ngo"}]


async def test_openai_compat_run_with_an_image_reaches_the_server(harness: Harness) -> None:
    h = harness
    h.update_profile(provider="openai_compatible", model="llava", base_url=h.server.base_url)
    h.server.script(Response.text("A square."))
    session = h.session(client_factory=None)
    await session.run("What is it?", [attachment_from_bytes("shot.png", png_bytes())])
    assert isinstance(h.last(), RunFinished)
    user = h.server.message_requests[0].body["messages"][1]
    assert user["role"] == "user"
    assert [p["type"] for p in user["content"]] == ["text", "image_url"]
    assert user["content"][1]["image_url"]["url"].startswith("data:image/png;base64,")
