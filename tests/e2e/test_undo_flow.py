"""Reversible work end to end: the real window, agent loop and write_file tool against the fake
Messages API. Approve an edit → the card says what changed → "Undo this call" → preview → Apply
→ the file is back and the card says undone → "Redo" → preview → Apply → the edit is back; and
after reopening the conversation from history the same card can still undo it."""

from __future__ import annotations

from pathlib import Path

from app.core.store.profiles import ToolSetting
from app.ui.dialogs.restore_preview import RestorePreviewDialog
from app.ui.widgets.tool_card import ToolCard
from app.ui.widgets.transcript_view import MessageView, RunFooter
from tests.fakes.anthropic_server import Response
from tests.ui.conftest import wait_for

OLD = "# Notes\nold line\n"
NEW = "# Notes\nnew line from the agent\n"
EDIT = {"path": "notes.md", "content": NEW}


def _cards(window) -> list[ToolCard]:
    return [w for w in window.ai_panel.transcript.items() if isinstance(w, ToolCard)]


async def _apply_preview(window, shown: list[object], action) -> RestorePreviewDialog:
    """Click ``action``, wait for the preview, check it lists notes.md, press Apply."""
    count = len(shown)
    action()
    await wait_for(lambda: len(shown) > count, timeout=20)
    dialog = shown[-1]
    assert isinstance(dialog, RestorePreviewDialog)
    assert dialog.isVisible()
    assert [dialog.files.item(i).text().split()[-1] for i in range(dialog.files.count())] \
        == ["notes.md"]
    assert not dialog.plan.conflicts
    dialog.apply_button.click()
    return dialog


async def test_approve_an_edit_then_undo_and_redo_it(window, fake_anthropic, project: Path):
    window.services.profiles.set_tool(window.profile_id, ToolSetting(
        "write_file", True, {"allowed_write_dirs": ["."]}))
    (project / "notes.md").write_text(OLD)
    fake_anthropic.script(Response.tool_use("write_file", EDIT), Response.text("Edited."))
    panel = window.ai_panel
    assert panel.send("rewrite the notes")
    await wait_for(lambda: window.approvals.current_dialog is not None, timeout=20)
    window.approvals.current_dialog.approve_button.click()
    await wait_for(lambda: not panel.running, timeout=20)
    assert (project / "notes.md").read_text() == NEW

    card = _cards(window)[0]
    await wait_for(lambda: card.changes is not None, timeout=20)
    row = card.changes_row
    assert row.label.text() == "✎ 1 file changed"
    assert not row.undo_button.isHidden() and not row.diff_button.isHidden()
    footers = [w for w in panel.transcript.items() if isinstance(w, RunFooter)]
    assert len(footers) == 1 and not footers[0].isHidden()
    prompt = next(w for w in panel.transcript.items()
                  if isinstance(w, MessageView) and w.role == "user")
    assert prompt.restore_button is not None and not prompt.restore_button.isHidden()
    row_json = window.services.audit.for_conversation(panel.session.conversation_id)
    assert row_json[card.tool_use_id].changes["changes"] == [
        {"path": "notes.md", "kind": "modified", "old_path": None, "binary": False}]

    shown: list[object] = []
    panel.checkpoints.dialog_shown.connect(shown.append)
    await _apply_preview(window, shown, row.undo_button.click)
    await wait_for(lambda: card.undone, timeout=20)
    assert (project / "notes.md").read_text() == OLD
    assert row.label.text() == "↶ Undone"
    assert not row.redo_button.isHidden() and row.undo_button.isHidden()
    assert prompt.restore_button.isHidden()  # nothing left to undo after it

    await _apply_preview(window, shown, row.redo_button.click)
    await wait_for(lambda: not card.undone, timeout=20)
    assert (project / "notes.md").read_text() == NEW
    assert row.label.text() == "✎ 1 file changed"

    # After a restart: the conversation reopened from history undoes the same call.
    panel.conversations.open(panel.session.conversation_id)
    reloaded = _cards(window)[0]
    assert reloaded is not card
    await wait_for(lambda: reloaded.changes is not None, timeout=20)
    assert reloaded.changes_row.label.text() == "✎ 1 file changed"
    await _apply_preview(window, shown, reloaded.changes_row.undo_button.click)
    await wait_for(lambda: reloaded.undone, timeout=20)
    assert (project / "notes.md").read_text() == OLD
