"""Images in tool results: checked once (type, base64, size, count, magic bytes), and MCP content
blocks turned into text plus images. Whatever a server sends becomes a note, never a crash."""

from __future__ import annotations

import base64

from hypothesis import given
from hypothesis import strategies as st

from app.core.tools.images import MAX_IMAGE_BYTES, MAX_IMAGES, ImagePart, image_part
from app.core.tools.providers.mcp.results import content_to_parts

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 20
PNG_B64 = base64.b64encode(PNG).decode()
GIF_B64 = base64.b64encode(b"GIF89a" + b"\x00" * 10).decode()
WEBP_B64 = base64.b64encode(b"RIFF\x10\x00\x00\x00WEBPVP8 ").decode()
JPEG_B64 = base64.b64encode(b"\xff\xd8\xff\xe0" + b"\x00" * 10).decode()


def test_accepted_types_become_parts_with_api_blocks() -> None:
    for mime, data in (("image/png", PNG_B64), ("image/gif", GIF_B64),
                       ("image/webp", WEBP_B64), ("image/jpeg", JPEG_B64),
                       ("IMAGE/JPG", JPEG_B64)):
        part = image_part(mime, data)
        assert isinstance(part, ImagePart), (mime, part)
        block = part.api_block()
        assert block["type"] == "image" and block["source"]["type"] == "base64"
        assert block["source"]["media_type"] in {"image/png", "image/gif", "image/webp",
                                                 "image/jpeg"}
    png = image_part("image/png", PNG_B64)
    assert isinstance(png, ImagePart) and png.size == len(PNG) and png.raw() == PNG


def test_wrapped_base64_is_accepted_and_re_encoded() -> None:
    wrapped = "\n".join(PNG_B64[i:i + 8] for i in range(0, len(PNG_B64), 8))
    part = image_part("image/png", wrapped)
    assert isinstance(part, ImagePart) and part.data == PNG_B64


def test_bad_type_malformed_base64_wrong_bytes_empty_become_notes() -> None:
    notes = {
        "svg": image_part("image/svg+xml", PNG_B64),
        "no type": image_part(None, PNG_B64),
        "malformed": image_part("image/png", "not base64!!"),
        "wrong bytes": image_part("image/png", GIF_B64),
        "empty": image_part("image/png", ""),
        "not a string": image_part("image/png", 12345),
    }
    for why, note in notes.items():
        assert isinstance(note, str) and note.startswith("[") and note.endswith("]"), why
    assert "image/svg+xml" in notes["svg"] and "PNG, JPEG, GIF and WebP" in notes["svg"]
    assert "invalid base64" in notes["malformed"]
    assert "is not a image/png image" in notes["wrong bytes"]
    assert "without data" in notes["empty"] and "without data" in notes["not a string"]


def test_oversize_and_one_too_many_become_notes() -> None:
    big = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\x00" * MAX_IMAGE_BYTES).decode()
    note = image_part("image/png", big)
    assert isinstance(note, str) and "over 5.0 MB" in note
    assert isinstance(image_part("image/png", PNG_B64, already=MAX_IMAGES - 1), ImagePart)
    note = image_part("image/png", PNG_B64, already=MAX_IMAGES)
    assert isinstance(note, str) and f"at most {MAX_IMAGES} images" in note


@given(st.one_of(st.none(), st.text(max_size=30)), st.one_of(st.none(), st.integers(),
                                                             st.text(max_size=200),
                                                             st.binary(max_size=50)))
def test_any_input_is_a_part_or_a_note(mime: object, data: object) -> None:
    result = image_part(mime, data)
    assert isinstance(result, ImagePart | str)


def test_mcp_content_text_names_each_image_in_place() -> None:
    text, images = content_to_parts([
        {"type": "text", "text": "before"},
        {"type": "image", "mimeType": "image/png", "data": PNG_B64},
        {"type": "image", "mimeType": "image/bmp", "data": PNG_B64},
        {"type": "image", "mimeType": "image/png", "data": "%%%"},
        {"type": "text", "text": "after"},
    ])
    assert [i.media_type for i in images] == ["image/png"]
    lines = text.split("\n\n")
    assert lines[0] == "before" and lines[1] == f"[image 1: image/png, {len(PNG)} bytes]"
    assert "image/bmp" in lines[2] and "invalid base64" in lines[3] and lines[4] == "after"


def test_mcp_image_resource_blob_is_an_image_and_other_blobs_a_note() -> None:
    text, images = content_to_parts([
        {"type": "resource", "resource": {"uri": "file:///a.png", "mimeType": "image/png",
                                          "blob": PNG_B64}},
        {"type": "resource", "resource": {"uri": "file:///a.zip", "mimeType": "application/zip",
                                          "blob": "AAAA"}},
        {"type": "resource", "resource": "nonsense"},
    ])
    assert len(images) == 1
    assert "[resource file:///a.png] [image 1: image/png" in text
    assert "[resource file:///a.zip (application/zip, about 3 bytes) not shown: binary]" in text
    assert "[an embedded resource without contents]" in text


def test_structured_content_is_shown_formatted_once() -> None:
    structured = {"temperature": 22, "conditions": "sunny"}
    # The serialised copy the spec asks for is replaced by the formatted JSON...
    serialised = '{"temperature":22,"conditions":"sunny"}'
    text, _ = content_to_parts([{"type": "text", "text": serialised}], structured)
    assert text == '{\n  "temperature": 22,\n  "conditions": "sunny"\n}'
    # ...other text stays, and the structure follows it, labelled.
    text, _ = content_to_parts([{"type": "text", "text": "The weather"}], structured)
    assert text.startswith("The weather\n\n[structured content]\n{\n  \"temperature\": 22")
    # Alone, it is the whole result.
    text, _ = content_to_parts([], structured)
    assert text.startswith("{\n  \"temperature\"")


def test_a_plain_value_wrapped_as_structured_result_is_not_repeated() -> None:
    text, _ = content_to_parts([{"type": "text", "text": "3"}], {"result": "3"})
    assert text == "3"
    text, _ = content_to_parts([{"type": "text", "text": "[1, 2]"}], {"result": [1, 2]})
    assert text == "[1, 2]"
    text, _ = content_to_parts([{"type": "text", "text": "other"}], {"result": 3})
    assert text == "other\n\n[structured content]\n{\n  \"result\": 3\n}"


def test_images_of_a_stored_tool_result_for_a_reloaded_card() -> None:
    from app.core.tools.images import images_in

    part = image_part("image/png", PNG_B64)
    assert isinstance(part, ImagePart)
    stored = [{"type": "text", "text": "x"}, part.api_block(), {"type": "image"},
              {"type": "image", "source": {"media_type": "image/tiff", "data": "AAAA"}}, "junk"]
    assert images_in(stored) == (part,)
    assert images_in("plain text") == ()
