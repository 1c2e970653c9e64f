"""Edit and resend keeps the message's attachments: editing puts them back on the tray as
chips, the resent message carries exactly what is on the tray (the same blocks as the
original), a reopened conversation works the same, and Cancel gives the tray back what it held
before the edit."""

from __future__ import annotations

import base64
from pathlib import Path

from PySide6.QtGui import QColor, QImage

from app.ui.widgets.attachment_note import AttachmentNote
from app.ui.widgets.attachments import AttachmentTray
from tests.fakes.anthropic_server import (  # noqa: F401  (fixtures)
    Response,
    fake_anthropic,
    fake_anthropic_env,
)
from tests.ui.conftest import make_ai_panel, wait_for


def png_file(path: Path) -> Path:
    image = QImage(4, 3, QImage.Format.Format_RGB32)
    image.fill(QColor("teal"))
    assert image.save(str(path), "PNG")
    return path


async def settled(tray: AttachmentTray, count: int) -> None:
    await wait_for(lambda: len(tray.chips) == count and not tray.busy)


def new_panel(qtbot, services, project):
    return make_ai_panel(qtbot, services, project, size=(700, 500), show=True)


async def edited_last(panel, count: int) -> AttachmentTray:
    """Edit the last prompt; the tray once the ``count`` chips put back on it are read."""
    assert panel.conversation_actions.edit_last()
    await settled(panel.attachment_tray, count)
    return panel.attachment_tray


def labels(tray: AttachmentTray) -> list[str]:
    return [chip.label.text() for chip in tray.chips]


def files(tmp_path: Path) -> tuple[Path, Path]:
    shot = png_file(tmp_path / "shot.png")
    notes = tmp_path / "notes.md"
    notes.write_text("Remember the milk.", encoding="utf-8")
    return shot, notes


async def sent_first(panel, server, shot: Path, notes: Path) -> list[dict]:
    tray = panel.attachment_tray
    tray.add_paths([shot, notes])
    await settled(tray, 2)
    panel.prompt.setPlainText("What are these?")
    assert panel.send()
    await wait_for(lambda: not panel.running, timeout=20)
    content = server.message_requests[-1].body["messages"][-1]["content"]
    assert [b["type"] for b in content] == ["image", "document", "text"]
    return content


async def test_edit_puts_the_attachments_back_and_resend_carries_them(
        qtbot, services, project, tmp_path, fake_anthropic_env):  # noqa: F811
    shot, notes = files(tmp_path)
    fake_anthropic_env.script(Response.text("A teal box and a note."), Response.text("Again."))
    panel = new_panel(qtbot, services, project)
    original = await sent_first(panel, fake_anthropic_env, shot, notes)

    tray = await edited_last(panel, 2)
    assert panel.prompt.toPlainText() == "What are these?"
    assert tray.isVisible()
    assert labels(tray) == [f"shot.png · PNG, {shot.stat().st_size} B",
                            "notes.md · text, 18 B"]
    panel.prompt.setPlainText("And now?")
    assert panel.send()
    await wait_for(lambda: not panel.running, timeout=20)

    resent = fake_anthropic_env.message_requests[-1].body["messages"]
    assert len(resent) == 1  # the conversation forked at the edited message
    assert resent[0]["content"] == [original[0], original[1], {"type": "text",
                                                               "text": "And now?"}]
    assert base64.b64decode(resent[0]["content"][0]["source"]["data"]) == shot.read_bytes()
    assert not tray.chips  # sent: the tray is empty again
    notes_shown = [w for w in panel.transcript.items() if isinstance(w, AttachmentNote)]
    assert len(notes_shown) == 1 and "shot.png" in notes_shown[0].text()
    await panel.shutdown()


async def test_a_chip_removed_before_resending_is_not_sent(
        qtbot, services, project, tmp_path, fake_anthropic_env):  # noqa: F811
    shot, notes = files(tmp_path)
    fake_anthropic_env.script(Response.text("Both."), Response.text("Just the note."))
    panel = new_panel(qtbot, services, project)
    original = await sent_first(panel, fake_anthropic_env, shot, notes)
    tray = await edited_last(panel, 2)
    tray.chips[0].remove_button.click()  # the image goes
    assert labels(tray) == ["notes.md · text, 18 B"]
    assert panel.send()  # the text as it was
    await wait_for(lambda: not panel.running, timeout=20)

    resent = fake_anthropic_env.message_requests[-1].body["messages"]
    assert resent[0]["content"] == [original[1], original[2]]
    await panel.shutdown()


async def test_edit_in_a_reopened_conversation_puts_the_attachments_back(
        qtbot, services, project, tmp_path, fake_anthropic_env):  # noqa: F811
    shot, notes = files(tmp_path)
    fake_anthropic_env.script(Response.text("Both."), Response.text("Again, after restart."))
    panel = new_panel(qtbot, services, project)
    original = await sent_first(panel, fake_anthropic_env, shot, notes)
    conversation = panel.session.conversation_id
    await panel.shutdown()

    again = new_panel(qtbot, services, project)
    again.conversations.open(conversation)
    tray = await edited_last(again, 2)
    # A stored image block keeps no file name (the note after reload says "image" too).
    assert labels(tray) == [f"image · PNG, {shot.stat().st_size} B", "notes.md · text, 18 B"]
    again.prompt.setPlainText("Once more")
    assert again.send()
    await wait_for(lambda: not again.running, timeout=20)

    resent = fake_anthropic_env.message_requests[-1].body["messages"]
    assert resent[0]["content"] == [original[0], original[1],
                                    {"type": "text", "text": "Once more"}]
    await again.shutdown()


async def attached_for_later(qtbot, services, project, tmp_path, fake, second_reply: str):
    """A panel whose first message (an image and a text file) was answered, with later.txt
    on the tray for a new message: then the person edits instead."""
    shot, notes = files(tmp_path)
    later = tmp_path / "later.txt"
    later.write_text("for the next message", encoding="utf-8")
    fake.script(Response.text("Both."), Response.text(second_reply))
    panel = new_panel(qtbot, services, project)
    await sent_first(panel, fake, shot, notes)
    panel.attachment_tray.add_paths([later])
    await settled(panel.attachment_tray, 1)
    return panel


async def test_cancel_gives_the_tray_back_what_it_held_before_the_edit(
        qtbot, services, project, tmp_path, fake_anthropic_env):  # noqa: F811
    panel = await attached_for_later(qtbot, services, project, tmp_path, fake_anthropic_env,
                                     "Got the later file.")
    tray = panel.attachment_tray
    panel.prompt.setPlainText("a draft")

    await edited_last(panel, 2)
    assert [c.name for c in tray.chips] == ["shot.png", "notes.md"]
    panel.conversation_actions.cancel_edit()
    assert labels(tray) == ["later.txt · text, 20 B"] and tray.isVisible()
    assert panel.prompt.toPlainText() == "a draft"

    assert panel.send()  # what was set aside is sent with the next message
    await wait_for(lambda: not panel.running, timeout=20)
    content = fake_anthropic_env.message_requests[-1].body["messages"][-1]["content"]
    assert [b.get("title") for b in content if b["type"] == "document"] == ["later.txt"]
    await panel.shutdown()


async def test_sending_the_edit_gives_back_what_was_set_aside(
        qtbot, services, project, tmp_path, fake_anthropic_env):  # noqa: F811
    panel = await attached_for_later(qtbot, services, project, tmp_path, fake_anthropic_env,
                                     "Edited.")
    tray = await edited_last(panel, 2)
    assert panel.send()
    await wait_for(lambda: not panel.running, timeout=20)
    resent = fake_anthropic_env.message_requests[-1].body["messages"][0]["content"]
    assert [b["type"] for b in resent] == ["image", "document", "text"]  # not later.txt
    assert labels(tray) == ["later.txt · text, 20 B"]
    await panel.shutdown()


async def test_what_cannot_be_restored_is_left_out_and_said(
        qtbot, services, project, tmp_path, fake_anthropic_env):  # noqa: F811
    notes_block = {"type": "document", "title": "notes.md", "source": {
        "type": "text", "media_type": "text/plain", "data": "milk"}}
    repo = services.conversations
    conv = repo.create(title="earlier")
    repo.append(conv.id, "user", [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                     "data": "not base64!"}},
        {"type": "search_result", "source": "https://example.invalid", "title": "x",
         "content": []},
        notes_block,
        {"type": "text", "text": "Look"}])
    repo.append(conv.id, "assistant", [{"type": "text", "text": "Looked."}])
    fake_anthropic_env.script(Response.text("Only the note."))
    panel = new_panel(qtbot, services, project)
    statuses: list[str] = []
    panel.status_message.connect(statuses.append)
    panel.conversations.open(conv.id)
    tray = await edited_last(panel, 1)
    assert labels(tray) == ["notes.md · text, 4 B"]
    said = [s for s in statuses if s.startswith("Not put back on the tray")]
    assert len(said) == 1
    assert "image: its stored data is damaged" in said[0]
    assert "unknown kind ('search_result')" in said[0]
    assert panel.send()
    await wait_for(lambda: not panel.running, timeout=20)
    resent = fake_anthropic_env.message_requests[-1].body["messages"][0]["content"]
    assert resent == [notes_block, {"type": "text", "text": "Look"}]
    await panel.shutdown()


async def test_a_continue_while_editing_leaves_the_restored_chips_on_the_tray(
        qtbot, services, project, tmp_path, fake_anthropic_env):  # noqa: F811
    shot, notes = files(tmp_path)
    fake_anthropic_env.script(Response.text("Both."), Response.text("Continued."))
    panel = new_panel(qtbot, services, project)
    await sent_first(panel, fake_anthropic_env, shot, notes)
    tray = await edited_last(panel, 2)

    assert panel.send("Continue where you stopped.")  # e.g. the round cap's Continue
    await wait_for(lambda: not panel.running, timeout=20)
    sent = fake_anthropic_env.message_requests[-1].body["messages"][-1]["content"]
    assert sent == [{"type": "text", "text": "Continue where you stopped."}]
    assert panel.conversation_actions.editing is not None
    assert [c.name for c in tray.chips] == ["shot.png", "notes.md"]
    await panel.shutdown()
