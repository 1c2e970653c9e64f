"""Attachments in the prompt box: dropped files and pasted images become chips under the
prompt and go to the Messages API as image and document blocks; a file that cannot be sent
shows an error chip and is not sent; a reopened conversation shows what was attached."""

from __future__ import annotations

import asyncio
import base64
from pathlib import Path

from PySide6.QtCore import QMimeData, QPoint, Qt, QUrl
from PySide6.QtGui import QColor, QDragEnterEvent, QDragMoveEvent, QDropEvent, QImage
from PySide6.QtWidgets import QApplication

from app.core.agent.attachments import MAX_TEXT_BYTES
from app.ui.widgets.attachment_note import AttachmentNote
from app.ui.widgets.attachments import AttachmentTray
from tests.fakes.anthropic_server import (  # noqa: F401  (fixtures)
    Response,
    fake_anthropic,
    fake_anthropic_env,
)
from tests.ui.conftest import make_ai_panel, wait_for


def drop_files(widget, paths: list[Path]) -> None:
    """Drag ``paths`` from a file manager onto ``widget`` and drop them (the real events)."""
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(p)) for p in paths])
    target = widget.viewport() if hasattr(widget, "viewport") else widget
    pos = target.rect().center()
    actions = Qt.DropAction.CopyAction
    buttons, mods = Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
    enter = QDragEnterEvent(pos, actions, mime, buttons, mods)
    QApplication.sendEvent(target, enter)
    assert enter.isAccepted(), "the prompt refused the drag"
    QApplication.sendEvent(target, QDragMoveEvent(pos, actions, mime, buttons, mods))
    drop = QDropEvent(pos.toPointF() if isinstance(pos, QPoint) else pos, actions, mime,
                      buttons, mods)
    QApplication.sendEvent(target, drop)


def image(width: int, height: int) -> QImage:
    img = QImage(width, height, QImage.Format.Format_RGB32)
    img.fill(QColor("teal"))
    return img


def png_file(path: Path, width: int = 4, height: int = 3) -> Path:
    assert image(width, height).save(str(path), "PNG")
    return path


async def settled(tray: AttachmentTray) -> None:
    await wait_for(lambda: tray.chips and not tray.busy)


async def test_dropped_text_file_and_png_are_sent_as_blocks_and_shown_again_on_reload(
        qtbot, services, project, tmp_path, fake_anthropic_env):  # noqa: F811
    notes = tmp_path / "notes.md"
    notes.write_text("Remember the milk.", encoding="utf-8")
    shot = png_file(tmp_path / "shot.png")
    fake_anthropic_env.script(Response.text("A teal rectangle and a note about milk."))
    panel = make_ai_panel(qtbot, services, project, size=(700, 500), show=True)
    tray = panel.attachment_tray

    drop_files(panel.prompt, [notes, shot])
    await settled(tray)
    assert tray.isVisible()
    assert [c.label.text() for c in tray.chips] == ["notes.md · text, 18 B",
                                                    f"shot.png · PNG, {shot.stat().st_size} B"]
    assert panel.prompt.toPlainText() == ""  # the file's path was not pasted as text
    panel.prompt.setPlainText("What are these?")
    assert panel.send()
    assert not tray.chips and not tray.isVisible()  # sent: the tray is empty again
    await wait_for(lambda: not panel.running, timeout=20)

    content = fake_anthropic_env.message_requests[0].body["messages"][0]["content"]
    assert [b["type"] for b in content] == ["document", "image", "text"]
    assert content[0]["title"] == "notes.md"
    assert content[0]["source"] == {"type": "text", "media_type": "text/plain",
                                    "data": "Remember the milk."}
    assert content[1]["source"]["media_type"] == "image/png"
    assert base64.b64decode(content[1]["source"]["data"]) == shot.read_bytes()
    assert content[2] == {"type": "text", "text": "What are these?"}
    notes_shown = [w for w in panel.transcript.items() if isinstance(w, AttachmentNote)]
    assert len(notes_shown) == 1 and "notes.md" in notes_shown[0].text()

    conversation = panel.session.conversation_id
    await panel.shutdown()
    again = make_ai_panel(qtbot, services, project)
    again.conversations.open(conversation)
    replayed = [w for w in again.transcript.items() if isinstance(w, AttachmentNote)]
    assert len(replayed) == 1
    text = replayed[0].text()
    assert text.startswith("Attached: notes.md (text, 18 B), image (PNG, ")
    assert len(text) < 200  # names and sizes, never the base64
    await again.shutdown()


async def test_a_too_large_file_shows_an_error_chip_and_is_not_sent(
        qtbot, services, project, tmp_path, fake_anthropic_env):  # noqa: F811
    big = tmp_path / "big.log"
    big.write_text("x" * (MAX_TEXT_BYTES + 1))
    binary = tmp_path / "tool.bin"
    binary.write_bytes(b"\x7fELF\x00\x00\x00")
    fake_anthropic_env.script(Response.text("ok"))
    panel = make_ai_panel(qtbot, services, project, size=(700, 500), show=True)
    tray = panel.attachment_tray

    drop_files(panel.prompt, [big, binary])
    await settled(tray)
    assert [c.error is not None for c in tray.chips] == [True, True]
    assert tray.chips[0].property("error") is True
    assert "big.log: too large" in tray.chips[0].label.text()
    assert "binary file" in tray.chips[1].toolTip()
    assert tray.attachments() == []
    assert not panel.send()  # nothing to send: an empty prompt with only error chips

    tray.chips[1].remove_button.click()
    assert len(tray.chips) == 1
    panel.prompt.setPlainText("hello")
    assert panel.send()
    await wait_for(lambda: not panel.running, timeout=20)
    content = fake_anthropic_env.message_requests[0].body["messages"][0]["content"]
    assert content == [{"type": "text", "text": "hello"}]
    await panel.shutdown()


async def test_a_pasted_image_is_attached_and_a_large_one_is_scaled_down(
        qtbot, services, project, fake_anthropic_env):  # noqa: F811
    fake_anthropic_env.script(Response.text("A teal screenshot."))
    panel = make_ai_panel(qtbot, services, project, size=(700, 500), show=True)
    tray = panel.attachment_tray

    QApplication.clipboard().setImage(image(3000, 1000))
    panel.prompt.setFocus()
    panel.prompt.paste()
    await settled(tray)
    assert panel.prompt.toPlainText() == ""
    [chip] = tray.chips
    assert chip.error is None and chip.label.text().startswith("pasted-image-1.png · PNG")
    assert panel.send()  # only an image: the prompt names it
    await wait_for(lambda: not panel.running, timeout=20)
    content = fake_anthropic_env.message_requests[0].body["messages"][0]["content"]
    assert [b["type"] for b in content] == ["image", "text"]
    assert content[1]["text"] == "Attached: pasted-image-1.png"
    sent = QImage.fromData(base64.b64decode(content[0]["source"]["data"]))
    assert sent.width() == 1568 and sent.height() in (522, 523)  # the long edge the API keeps
    await panel.shutdown()


def test_text_still_pastes_as_text(qtbot, services, project):
    panel = make_ai_panel(qtbot, services, project)
    mime = QMimeData()
    mime.setText("just words")
    panel.prompt.insertFromMimeData(mime)
    assert panel.prompt.toPlainText() == "just words"
    web = QMimeData()  # a web link is text, not an attachment
    web.setUrls([QUrl("https://example.com/a.png")])
    web.setText("https://example.com/a.png")
    panel.prompt.insertFromMimeData(web)
    assert panel.attachment_tray.chips == []


async def test_a_dropped_image_over_the_limit_is_sent_as_a_smaller_copy(
        qtbot, services, project, tmp_path):
    import os

    from app.core.agent.attachments import MAX_IMAGE_BYTES

    side = 1200  # noise does not compress: its PNG is over the limit
    noise = QImage(os.urandom(side * side * 4), side, side, QImage.Format.Format_RGB32)
    path = tmp_path / "photo.png"
    assert noise.save(str(path), "PNG") and path.stat().st_size > MAX_IMAGE_BYTES
    panel = make_ai_panel(qtbot, services, project)
    tray = panel.attachment_tray
    drop_files(panel.prompt, [path])
    await settled(tray)
    [attachment] = tray.attachments()
    assert attachment.media_type == "image/jpeg" and attachment.size <= MAX_IMAGE_BYTES
    assert tray.chips[0].label.text().startswith("photo.png · JPEG")
    await panel.shutdown()


async def test_editing_a_message_takes_its_attachment_note_with_it(
        qtbot, services, project, tmp_path, fake_anthropic_env):  # noqa: F811
    notes = tmp_path / "notes.md"
    notes.write_text("milk", encoding="utf-8")
    fake_anthropic_env.script(Response.text("Noted."), Response.text("Fine."))
    panel = make_ai_panel(qtbot, services, project, size=(700, 500), show=True)
    drop_files(panel.prompt, [notes])
    await settled(panel.attachment_tray)
    panel.prompt.setPlainText("Read this")
    assert panel.send()
    await wait_for(lambda: not panel.running, timeout=20)
    assert panel.conversation_actions.edit_last()
    await settled(panel.attachment_tray)  # the edit puts the attachment back on the tray
    panel.attachment_tray.chips[0].remove_button.click()  # and the person removes it
    panel.prompt.setPlainText("Never mind")
    assert panel.send()
    await wait_for(lambda: not panel.running, timeout=20)
    await wait_for(lambda: not any(isinstance(w, AttachmentNote)
                                   for w in panel.transcript.items()))
    assert fake_anthropic_env.message_requests[1].body["messages"][0]["content"] == [
        {"type": "text", "text": "Never mind"}]
    await panel.shutdown()


async def test_files_dropped_on_the_conversation_are_attached_too(
        qtbot, services, project, tmp_path):
    notes = tmp_path / "notes.md"
    notes.write_text("milk", encoding="utf-8")
    panel = make_ai_panel(qtbot, services, project, size=(700, 500), show=True)
    drop_files(panel, [notes])
    await settled(panel.attachment_tray)
    assert [a.name for a in panel.attachment_tray.attachments()] == ["notes.md"]
    await panel.shutdown()


async def test_shutting_the_panel_down_cancels_attachment_reads_still_running(
        qtbot, services, project, tmp_path, monkeypatch):
    # A file still being read when the window closes: its chip is not filled in afterwards
    # (the panel is going away), and quitting does not wait for the read.
    import threading

    import app.ui.widgets.attachments as attachments

    release = threading.Event()
    started = threading.Event()
    real_read = attachments._read_file

    def slow_read(path):
        started.set()
        release.wait(10)
        return real_read(path)

    monkeypatch.setattr(attachments, "_read_file", slow_read)
    note = tmp_path / "notes.md"
    note.write_text("# notes\n")
    panel = make_ai_panel(qtbot, services, project, size=(700, 500), show=True)
    tray = panel.attachment_tray
    drop_files(panel.prompt, [note])
    await wait_for(started.is_set, timeout=5)
    chip = tray.chips[0]
    assert chip.task is not None and not chip.task.done()

    await panel.shutdown()
    assert chip.task is None or chip.task.cancelled()
    release.set()
    for _ in range(20):  # the read's thread ends; nothing fills the chip in
        await asyncio.sleep(0.01)
    assert chip.attachment is None and chip.pending
