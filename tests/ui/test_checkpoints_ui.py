"""Reversible work in the UI: a card says what its call changed; Diff shows it; "Undo this call",
"Undo this run" and "Restore to before this message" preview, then restore; Redo brings it back;
a file the person changed since is a conflict the preview lets them keep (the default), take or
merge; Settings → Checkpoints saves its values and shows the space used."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from PySide6.QtWidgets import QWidget

from app.core.agent.checkpointing import CallChanges, Checkpointer
from app.core.services import (
    Services,
)
from app.core.settings_fields import CHECKPOINT_MAX_FILE, CHECKPOINTS_ENABLED
from app.ui.ai_panel.panel import AIPanel
from app.ui.controllers.checkpoints import CheckpointController, made_a_commit
from app.ui.dialogs.restore_preview import (
    COMMIT_NOTE,
    KEEP,
    MERGE,
    TAKE,
    DiffDialog,
    RestorePreviewDialog,
)
from app.ui.dialogs.settings import CheckpointsTab, SettingsDialog
from app.ui.widgets.conversation_replay import rebuild_call_changes
from app.ui.widgets.tool_card import ToolCard
from app.ui.widgets.transcript_view import MessageView
from tests.ui.conftest import make_ai_panel, wait_for


@pytest.fixture
def panel(qtbot, services: Services, project: Path) -> AIPanel:
    return make_ai_panel(qtbot, services, project, size=(700, 600), show=True)


@pytest.fixture
def checkpointer(services: Services, project: Path) -> Checkpointer:
    found = services.checkpointer_for(project)
    assert found is not None
    return found


async def _call(checkpointer: Checkpointer, tool_use_id: str,
                edit: Callable[[], None]) -> CallChanges:
    """What a tool call does between its two checkpoints (the session does the same)."""
    before = await checkpointer.snapshot(f"before {tool_use_id}")
    edit()
    changes = await checkpointer.around_call_end(tool_use_id, before)
    assert changes is not None
    return changes


def _card(panel: AIPanel, changes: CallChanges, checkpointer: Checkpointer | None, *,
          tool_name: str = "write_file", tool_input: object = None) -> ToolCard:
    """A finished call's card in the transcript, given its change set as FilesChanged does."""
    card = ToolCard(changes.tool_use_id, tool_name, "builtin", tool_input or {}, "allow",
                    "allowed by a rule")
    card.finish("executed", False, 12, "ok")
    panel.tool_cards.by_id[card.tool_use_id] = card
    panel.undo.connect_card(card)
    panel.tool_cards.this_run.append(card)
    panel.transcript.add(card)
    card.set_changes(changes, checkpointer)
    panel.undo.refresh_restore_actions()
    return card


def _shown(widget: QWidget) -> bool:
    """Shown (not hidden), whether or not the event loop has painted it yet."""
    return not widget.isHidden()


def _accept(check: Callable[[RestorePreviewDialog], object] | None = None):
    async def answer(dialog: RestorePreviewDialog) -> bool:
        if check is not None:
            check(dialog)
        await wait_for(dialog.merging_done)
        return True

    return answer


async def test_card_shows_the_change_count_and_what_is_not_covered(
        panel: AIPanel, services: Services, project: Path) -> None:
    checkpointer = Checkpointer(services.data_dir, project, max_file_bytes=64)

    def edit() -> None:
        (project / "a.txt").write_text("alpha\n")
        (project / "b.txt").write_text("bravo\n")
        (project / "big.bin").write_bytes(b"x" * 200)  # over the 64-byte cap

    card = _card(panel, await _call(checkpointer, "toolu_1", edit), checkpointer)
    row = card.changes_row
    assert row.label.text() == "✎ 2 files changed"
    assert "a.txt" in row.label.toolTip() and "b.txt" in row.label.toolTip()
    assert _shown(row.diff_button) and _shown(row.undo_button)
    assert not _shown(row.redo_button)
    assert _shown(row.not_covered)
    assert row.not_covered.text() == \
        "not covered: 1 file (over the size cap / nested repositories)"
    assert "big.bin" in row.not_covered.toolTip()

    nothing = _card(panel, await _call(checkpointer, "toolu_2", lambda: None), checkpointer)
    assert nothing.changes_row.label.text() == "no files changed"
    assert not _shown(nothing.changes_row.undo_button)
    assert not _shown(nothing.changes_row.diff_button)


async def test_diff_opens_a_read_only_viewer(panel: AIPanel, checkpointer: Checkpointer,
                                             project: Path) -> None:
    (project / "a.txt").write_text("old line\n")
    changes = await _call(checkpointer, "toolu_1",
                          lambda: (project / "a.txt").write_text("new line\n"))
    card = _card(panel, changes, checkpointer)
    shown: list[object] = []
    panel.checkpoints.dialog_shown.connect(shown.append)
    card.changes_row.diff_button.click()
    await wait_for(lambda: shown)
    dialog = shown[0]
    assert isinstance(dialog, DiffDialog)
    assert dialog.diff_view.isReadOnly()
    text = dialog.diff_view.toPlainText()
    assert "-old line" in text and "+new line" in text
    dialog.close()


async def test_undo_this_call_then_redo(panel: AIPanel, checkpointer: Checkpointer,
                                        project: Path) -> None:
    (project / "a.txt").write_text("before\n")

    def edit() -> None:
        (project / "a.txt").write_text("after\n")
        (project / "new.txt").write_text("created\n")

    card = _card(panel, await _call(checkpointer, "toolu_1", edit), checkpointer)
    seen: list[dict[str, object]] = []

    def check(preview: RestorePreviewDialog) -> None:  # the dialog goes once answered
        seen.append({"actions": {a.path: a.kind for a in preview.plan.actions},
                     "summary": preview.summary.text(),
                     "diff": preview.diff_view.toPlainText(),
                     "conflicts": preview.conflicts_box, "commit": preview.commit_note})

    panel.checkpoints.answer_preview = _accept(check=check)

    card.changes_row.undo_button.click()
    await wait_for(lambda: card.undone)
    assert (project / "a.txt").read_text() == "before\n"
    assert not (project / "new.txt").exists()
    assert card.changes_row.label.text() == "↶ Undone"
    assert _shown(card.changes_row.redo_button)
    assert not _shown(card.changes_row.undo_button)
    assert seen[0]["actions"] == {"a.txt": "write", "new.txt": "delete"}
    assert "write 1 file and delete 1 file" in str(seen[0]["summary"])
    assert "+before" in str(seen[0]["diff"])
    assert seen[0]["conflicts"] is None and seen[0]["commit"] is None

    card.changes_row.redo_button.click()
    await wait_for(lambda: not card.undone)
    assert (project / "a.txt").read_text() == "after\n"
    assert (project / "new.txt").read_text() == "created\n"
    assert card.changes_row.label.text() == "✎ 2 files changed"
    assert _shown(card.changes_row.undo_button)

    # And undone once more: the redo left the files as the call had.
    card.changes_row.undo_button.click()
    await wait_for(lambda: card.undone)
    assert (project / "a.txt").read_text() == "before\n"


async def test_cancelled_preview_changes_nothing(panel: AIPanel, checkpointer: Checkpointer,
                                                 project: Path) -> None:
    changes = await _call(checkpointer, "toolu_1",
                          lambda: (project / "a.txt").write_text("made\n"))
    card = _card(panel, changes, checkpointer)

    async def cancel(dialog: RestorePreviewDialog) -> bool:
        return False

    panel.checkpoints.answer_preview = cancel
    task = panel.undo.undo_cards([card], "this call")
    assert task is not None
    await task
    assert (project / "a.txt").read_text() == "made\n"
    assert not card.undone and not panel.checkpoints.busy


async def test_a_file_changed_since_is_a_conflict_and_keep_mine_is_the_default(
        panel: AIPanel, checkpointer: Checkpointer, project: Path) -> None:
    (project / "a.txt").write_text("one\n")
    (project / "b.txt").write_text("bee\n")

    def edit() -> None:
        (project / "a.txt").write_text("one\nagent\n")
        (project / "b.txt").write_text("bee by agent\n")

    card = _card(panel, await _call(checkpointer, "toolu_1", edit), checkpointer)
    (project / "a.txt").write_text("one\nagent\nmine\n")  # the person edits after the agent

    def check(dialog: RestorePreviewDialog) -> None:
        assert dialog.plan.conflicts == ("a.txt",)
        assert dialog.conflicts_box is not None and _shown(dialog.conflicts_box)
        assert dialog.choice("a.txt") == KEEP
        assert [dialog.choices["a.txt"].itemData(i) for i in
                range(dialog.choices["a.txt"].count())] == [KEEP, TAKE, MERGE]
        assert any("changed by you" in dialog.files.item(i).text()
                   for i in range(dialog.files.count()))

    panel.checkpoints.answer_preview = _accept(check=check)
    card.changes_row.undo_button.click()
    await wait_for(lambda: card.undone)
    assert (project / "a.txt").read_text() == "one\nagent\nmine\n"  # kept
    assert (project / "b.txt").read_text() == "bee\n"  # restored


async def test_take_the_checkpoints_version(panel: AIPanel, checkpointer: Checkpointer,
                                            project: Path) -> None:
    (project / "a.txt").write_text("one\n")
    card = _card(panel, await _call(checkpointer, "toolu_1",
                                    lambda: (project / "a.txt").write_text("agent\n")),
                 checkpointer)
    (project / "a.txt").write_text("mine\n")
    panel.checkpoints.answer_preview = _accept(check=lambda d: d.set_choice("a.txt", TAKE))
    card.changes_row.undo_button.click()
    await wait_for(lambda: card.undone)
    assert (project / "a.txt").read_text() == "one\n"


async def test_merge_writes_the_merged_text_as_the_persons_version(
        panel: AIPanel, checkpointer: Checkpointer, project: Path) -> None:
    lines = [f"line {i}\n" for i in range(12)]
    (project / "a.txt").write_text("".join(lines))
    agent = lines.copy()
    agent[2] = "line 2 by agent\n"
    card = _card(panel, await _call(checkpointer, "toolu_1",
                                    lambda: (project / "a.txt").write_text("".join(agent))),
                 checkpointer)
    mine = agent.copy()
    mine[10] = "line 10 by me\n"
    (project / "a.txt").write_text("".join(mine))
    texts: list[str] = []

    async def merge(dialog: RestorePreviewDialog) -> bool:
        dialog.set_choice("a.txt", MERGE)
        await wait_for(lambda: dialog.merging_done() and "a.txt" in dialog.merged_texts())
        assert _shown(dialog.merge_view)
        texts.append(dialog.merge_view.toPlainText())
        return True

    panel.checkpoints.answer_preview = merge
    card.changes_row.undo_button.click()
    await wait_for(lambda: card.undone)
    expected = lines.copy()
    expected[10] = "line 10 by me\n"  # the agent's change undone, the person's kept
    assert texts == ["".join(expected)]
    assert (project / "a.txt").read_text() == "".join(expected)


async def test_a_conflicting_merge_shows_markers(checkpointer: Checkpointer, project: Path,
                                                 qtbot, services: Services) -> None:
    (project / "a.txt").write_text("base\n")
    changes = await _call(checkpointer, "toolu_1",
                          lambda: (project / "a.txt").write_text("agent\n"))
    (project / "a.txt").write_text("mine\n")
    plan = await checkpointer.plan_undo([changes])
    host = QWidget()
    qtbot.addWidget(host)
    controller = CheckpointController(services, host)
    dialog = RestorePreviewDialog(plan, "Undo", merger=lambda a: controller._merge(
        checkpointer, a))
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.set_choice("a.txt", MERGE)
    assert not dialog.apply_button.isEnabled()  # not before the merge is there
    await wait_for(dialog.merging_done)
    text = dialog.merge_view.toPlainText()
    assert "<<<<<<< yours" in text and "mine" in text and ">>>>>>> checkpoint" in text
    assert "1 conflicting part is marked" in dialog.merge_label.text()
    assert dialog.apply_button.isEnabled()
    assert dialog.resolutions() == {"a.txt": "keep"}
    dialog.merge_view.setPlainText("resolved by hand\n")
    assert dialog.merged_texts() == {"a.txt": "resolved by hand\n"}
    dialog.set_choice("a.txt", KEEP)
    assert dialog.merged_texts() == {}


async def test_undo_this_run_and_restore_to_before_a_message(
        panel: AIPanel, checkpointer: Checkpointer, project: Path) -> None:
    (project / "a.txt").write_text("a0\n")
    first = MessageView("first prompt", "user")
    panel.transcript.add(first)
    one = _card(panel, await _call(checkpointer, "toolu_1",
                                   lambda: (project / "a.txt").write_text("a1\n")), checkpointer)
    two = _card(panel, await _call(checkpointer, "toolu_2",
                                   lambda: (project / "b.txt").write_text("b1\n")), checkpointer)
    panel.undo.end_run()
    footer = panel.tool_cards.footers["toolu_1"]
    assert footer is panel.tool_cards.footers["toolu_2"] and _shown(footer)
    assert footer.label.text() == "This run changed 2 files in 2 calls."
    second = MessageView("second prompt", "user")
    panel.transcript.add(second)
    three = _card(panel, await _call(checkpointer, "toolu_3",
                                     lambda: (project / "a.txt").write_text("a2\n")),
                  checkpointer)
    panel.undo.end_run()
    assert first.restore_button is not None and first._restore_shown
    assert second.restore_button is not None and second._restore_shown
    panel.checkpoints.answer_preview = _accept()

    # "Undo this run" on the first run: its two calls, checked against what the last left.
    footer.undo_button.click()
    await wait_for(lambda: one.undone and two.undone)
    assert not three.undone
    assert not (project / "b.txt").exists()
    assert _shown(footer.redo_button) and not _shown(footer.undo_button)
    footer.redo_button.click()
    await wait_for(lambda: not one.undone and not two.undone)
    assert (project / "b.txt").read_text() == "b1\n"
    assert (project / "a.txt").read_text() == "a2\n"

    # "Restore to before this message" on the first prompt: all three calls, in order.
    assert first.restore_button is not None
    first.restore_button.click()
    await wait_for(lambda: one.undone and two.undone and three.undone)
    assert (project / "a.txt").read_text() == "a0\n"
    assert not (project / "b.txt").exists()
    assert not first._restore_shown and not second._restore_shown  # nothing left to undo
    one.changes_row.redo_button.click()  # redoes what that restore undid
    await wait_for(lambda: not (one.undone or two.undone or three.undone))
    assert (project / "a.txt").read_text() == "a2\n"


async def test_an_agent_commit_is_mentioned(panel: AIPanel, checkpointer: Checkpointer,
                                            project: Path) -> None:
    assert made_a_commit("git_ops", {"action": "commit", "message": "x"})
    assert not made_a_commit("git_ops", {"action": "status"})
    assert made_a_commit("shell_exec", {"command": "git add -A && git commit -m wip"})
    assert made_a_commit("shell_exec", {"command": "git -c user.name=x commit -m wip"})
    assert not made_a_commit("shell_exec", {"command": "git status"})
    changes = await _call(checkpointer, "toolu_1",
                          lambda: (project / "a.txt").write_text("x\n"))
    card = _card(panel, changes, checkpointer, tool_name="git_ops",
                 tool_input={"action": "commit", "message": "wip"})
    notes: list[str | None] = []
    panel.checkpoints.answer_preview = _accept(check=lambda d: notes.append(
        d.commit_note.text() if d.commit_note is not None else None))
    card.changes_row.undo_button.click()
    await wait_for(lambda: card.undone)
    assert notes == [COMMIT_NOTE]


async def test_an_error_is_a_message_not_a_crash(panel: AIPanel, checkpointer: Checkpointer,
                                                 project: Path, services: Services) -> None:
    changes = await _call(checkpointer, "toolu_1",
                          lambda: (project / "a.txt").write_text("x\n"))
    card = _card(panel, changes, checkpointer)
    await asyncio.to_thread(checkpointer.store.delete_all)  # the checkpoints are gone
    panel.checkpoints.answer_preview = _accept()
    messages: list[str] = []
    panel.checkpoints.message.connect(messages.append)
    task = panel.undo.undo_cards([card], "this call")
    assert task is not None
    await task
    assert not card.undone and not panel.checkpoints.busy
    assert panel.checkpoints.last_error is not None
    assert panel.checkpoints.last_error.startswith("Undo this call failed")
    assert (project / "a.txt").read_text() == "x\n"


async def test_one_restore_at_a_time(panel: AIPanel, checkpointer: Checkpointer,
                                     project: Path) -> None:
    changes = await _call(checkpointer, "toolu_1",
                          lambda: (project / "a.txt").write_text("x\n"))
    card = _card(panel, changes, checkpointer)
    release = asyncio.Event()

    async def slow(dialog: RestorePreviewDialog) -> bool:
        await release.wait()
        return True

    panel.checkpoints.answer_preview = slow
    first = panel.undo.undo_cards([card], "this call")
    await wait_for(lambda: panel.checkpoints.busy)
    assert not card.changes_row.undo_button.isEnabled()
    messages: list[str] = []
    panel.checkpoints.message.connect(messages.append)
    second = panel.undo.undo_cards([card], "this call")
    assert second is not None
    await second
    assert any("Another restore is in progress" in m for m in messages)
    release.set()
    assert first is not None
    await first
    assert card.undone and not (project / "a.txt").exists()


async def test_change_sets_are_rebuilt_from_the_audit_json(checkpointer: Checkpointer,
                                                           project: Path) -> None:
    changes = await _call(checkpointer, "toolu_1",
                          lambda: (project / "a.txt").write_text("x\n"))
    rebuilt = await asyncio.to_thread(rebuild_call_changes, checkpointer, "toolu_1",
                                      changes.to_json())
    assert rebuilt == changes


async def test_old_checkpoints_are_pruned_at_most_hourly(
        panel: AIPanel, checkpointer: Checkpointer, project: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[float | None, int | None]] = []

    async def prune(*, max_age_days: float | None, max_bytes: int | None) -> int:
        calls.append((max_age_days, max_bytes))
        return 0

    monkeypatch.setattr(checkpointer, "prune", prune)
    # No shadow repository yet: nothing to prune, and none is created for it.
    task = panel.checkpoints.prune_in_background(checkpointer)
    assert task is not None
    await task
    assert calls == [] and not checkpointer.store.shadow_dir.exists()
    # ... and not counted: the first prune after the first checkpoint is not an hour away.
    await checkpointer.snapshot("x")
    task = panel.checkpoints.prune_in_background(checkpointer)
    assert task is not None
    await task
    assert calls == [(30.0, 2048 * 1024 * 1024)]
    assert panel.checkpoints.prune_in_background(checkpointer) is None  # within the hour
    panel.checkpoints._pruned[checkpointer.project_root] = time.monotonic() - 3601
    task = panel.checkpoints.prune_in_background(checkpointer)
    assert task is not None
    await task
    assert len(calls) == 2


async def test_settings_round_trip_and_space_used(qtbot, services: Services, project: Path,
                                                  checkpointer: Checkpointer) -> None:
    services.permissions.project_root = project
    await checkpointer.snapshot("one")
    dialog = SettingsDialog(services, services.profiles.ensure_default().id)
    qtbot.addWidget(dialog)
    tab = dialog.checkpoints_tab
    assert dialog.tabs.tabText(dialog.tabs.indexOf(tab)) == "Checkpoints"
    assert dialog.tabs.indexOf(tab) == dialog.tabs.indexOf(
        dialog.sandbox_group.parentWidget()) + 1
    assert tab.enabled.isChecked()
    assert (tab.max_file_mb.value(), tab.retention_days.value(),
            tab.retention_mb.value()) == (10, 30, 2048)
    assert "nested repositories" in tab.NOTE
    await wait_for(lambda: tab.rows)
    assert [row[0] for row in tab.rows] == [str(project)]
    assert "(open now)" in tab.usage.item(0, 0).text()
    assert tab.rows[0][2] > 0 and tab.delete_current_button.isEnabled()

    tab.enabled.setChecked(False)
    tab.max_file_mb.setValue(3)
    tab.retention_days.setValue(7)
    tab.retention_mb.setValue(0)  # no limit
    dialog._save()
    assert services.settings.get(CHECKPOINTS_ENABLED.key) is False
    assert services.settings.get(CHECKPOINT_MAX_FILE.key) == 3 * 1024 * 1024
    assert services.checkpoint_retention() == (7.0, None)
    assert services.checkpointer_for(project) is None

    again = CheckpointsTab(services)
    qtbot.addWidget(again)
    assert not again.enabled.isChecked()
    assert (again.max_file_mb.value(), again.retention_days.value(),
            again.retention_mb.value()) == (3, 7, 0)
    assert again.retention_mb.text() == "no limit"
    again.enabled.setChecked(True)
    again.save()
    enabled = services.checkpointer_for(project)
    assert enabled is not None and enabled.store.max_file_bytes == 3 * 1024 * 1024

    await wait_for(lambda: again.rows)
    await again.delete_project(str(project))
    assert again.rows == [] and not checkpointer.store.shadow_dir.exists()
    assert again.usage_status.text() == "No checkpoints yet."
