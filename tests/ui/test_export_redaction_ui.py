"""Exporting a conversation from the list: the save dialog does not start in the project
folder, the file holds no token, and the person is warned that secrets were redacted."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.services import Services
from app.ui.widgets.conversation_list import ConversationList
from tests.ui.conftest import wait_for

TOKEN = "ghp_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"


async def test_an_export_redacts_warns_and_starts_outside_the_project(
        qtbot, services: Services, project: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    monkeypatch.chdir(project)  # a dialog that fell back to the current folder would show it
    conv = services.conversations.create(title="Leaky", project_root=str(project))
    services.conversations.append(conv.id, "user", [{"type": "text", "text": f"use {TOKEN}"}])
    services.conversations.append(conv.id, "assistant", [{"type": "text", "text": "ok"}])
    conversations = ConversationList(services.conversations)
    qtbot.addWidget(conversations)
    conversations.set_project(str(project))
    listed: list[None] = []
    conversations.listed.connect(lambda: listed.append(None))
    conversations.refresh()
    await wait_for(lambda: bool(listed))
    assert conversations.select(conv.id)
    conversations.edits.request_export()  # what the Export button does
    dialog = conversations.edits.export_dialog
    assert dialog is not None
    start = Path(dialog.directory().absolutePath()).resolve()
    assert not start.is_relative_to(project.resolve()), start

    exported: list[str] = []
    conversations.exported.connect(exported.append)
    target = tmp_path / "chat.md"
    dialog.selectFile(str(target))
    dialog.accept()
    await wait_for(lambda: bool(exported))
    assert TOKEN not in target.read_text(encoding="utf-8")
    warning = conversations.edits.export_warning
    assert warning is not None and "redacted" in warning.text()
