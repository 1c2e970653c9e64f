"""A worktree run from start to end with the loopback fake model: a conversation in a worktree
edits a file and commits it inside the sandbox (shell ``git commit``), adds one and deletes one
and commits with git_ops; Review changes applies them into the project, the file the person also
changed meanwhile resolved through the restore merge UI (a three-way merge). The apply is a
change set of the project's checkpoints: its card in the conversation, "Applied 3 files from
tebiki/…", is there again when the conversation is reopened, and its Undo puts back the exact
bytes (the created file deleted, the deleted one back, the merged one as the person had it);
the person's repository never moved. Then the workspaces a crash left behind are listed and
cleaned."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.core.worktrees.workspace import Worktrees
from app.ui.dialogs.restore_preview import MERGE, RestorePreviewDialog
from app.ui.dialogs.review_changes import ReviewChangesDialog
from app.ui.dialogs.stale_workspaces import StaleWorkspacesDialog
from app.ui.widgets.tool_card import ToolCard
from tests.e2e.conftest import shown_window
from tests.fakes.anthropic_server import Response
from tests.sandbox_support import STATUS, requires_sandbox
from tests.ui.conftest import wait_for
from tests.ui.run_windows import git, git_project
from tests.ui.test_worktree_runs import approve_until, new_worktree_conversation

pytestmark = requires_sandbox

NOTES = "notes\nline 2\nline 3\nline 4\n"
PERSONS_NOTES = "NOTES\nline 2\nline 3\nline 4\n"  # changed in the project meanwhile
RUNS_NOTES = NOTES + "more\n"


@pytest.fixture
def project(visible: Path) -> Path:
    return git_project(visible, {"doc/notes.md": NOTES, "doc/old.md": "old\n"})


@pytest.fixture
async def window(qtbot, db, fresh_data_dir, project, fake_anthropic_env):
    from app.core.services import build_services
    from app.core.store.profiles import ToolSetting

    services = build_services(db, fresh_data_dir, project)
    profile_id = services.profiles.ensure_default().id
    settings = services.profiles.tool_settings(profile_id)
    for name in ("write_file", "shell_exec", "git_ops"):
        spec = services.registry.get(name).spec  # type: ignore[union-attr]
        config = settings[name].config if name in settings else dict(spec.default_config)
        config.update(git_permission="read_write")
        if name == "write_file":
            config["allowed_write_dirs"] = ["doc"]
        services.profiles.set_tool(profile_id, ToolSetting(name, True, config))
    async with shown_window(qtbot, services, project) as win:
        yield win


def _calls(*calls: tuple[str, dict]) -> list[Response]:
    return [Response.tool_use(name, args, id=f"call{i}") for i, (name, args) in enumerate(calls)]


async def test_a_worktree_run_commits_is_applied_and_undone(window, project, fake_anthropic_env):
    assert STATUS.available
    before = git(project, "for-each-ref", "--format=%(refname) %(objectname)")
    workspace = await new_worktree_conversation(window)
    panel = window.ai_panel
    fake_anthropic_env.script(
        *_calls(("write_file", {"path": "doc/notes.md", "content": RUNS_NOTES}),
                ("shell_exec", {"command": "git add doc/notes.md && git commit -q -m notes"}),
                ("write_file", {"path": "doc/plan.md", "content": "the plan\n"}),
                ("git_ops", {"action": "add", "args": {"files": ["doc/plan.md"]}}),
                ("shell_exec", {"command": "git rm -q doc/old.md"}),
                ("git_ops", {"action": "commit", "args": {"message": "plan"}})),
        Response.text("Committed both."))
    assert panel.send("plan and commit")
    await approve_until(window, lambda: not panel.running, timeout=120)
    results = [r for req in fake_anthropic_env.message_requests for r in
               req.tool_results()]
    assert not [r for r in results if r.get("is_error")], results
    assert git(workspace.repo, "log", "--format=%s", workspace.branch).split() == \
        ["plan", "notes", "first"]
    assert git(workspace.repo, "status", "--porcelain") == ""
    assert git(project, "for-each-ref", "--format=%(refname) %(objectname)") == before
    assert not (project / "doc" / "plan.md").exists()
    (project / "doc" / "notes.md").write_text(PERSONS_NOTES)  # the person's edit, meanwhile
    conversation_id = panel.session.conversation_id
    await wait_for(lambda: conversation_id in window.worktree_runs.by_conversation, timeout=20)

    previews: list[RestorePreviewDialog] = []

    async def answer(preview: RestorePreviewDialog) -> bool:
        previews.append(preview)
        if preview.plan.conflicts:  # the apply: merge the file both changed
            assert preview.plan.conflicts == ("doc/notes.md",)
            preview.set_choice("doc/notes.md", MERGE)
            await wait_for(preview.merging_done, timeout=30)
            assert "It merged cleanly" in preview.merge_label.text()
        return True
    panel.checkpoints.answer_preview = answer

    dialog = window.worktree_runs.review()
    assert isinstance(dialog, ReviewChangesDialog)
    await wait_for(lambda: dialog.files.count() == 3, timeout=30)
    # A button is enabled by the done-callback of the task before it, a loop turn after the
    # task is done: a click before that is a click on a disabled button.
    await wait_for(dialog.apply_all_button.isEnabled, timeout=30)
    dialog.apply_all_button.click()
    await wait_for(lambda: dialog.busy.done(), timeout=30)
    assert len(previews) == 1, dialog.status.text()  # the restore merge UI, for the conflict
    assert (project / "doc" / "plan.md").read_text() == "the plan\n", dialog.status.text()
    assert (project / "doc" / "notes.md").read_text() == "NOTES\nline 2\nline 3\nline 4\nmore\n"
    assert not (project / "doc" / "old.md").exists()
    title = f"Applied 3 files from {workspace.branch}"
    await wait_for(lambda: [c.tool_name for c in _cards(panel)][-1:] == [title], timeout=30)
    await wait_for(dialog.finish_button.isEnabled, timeout=30)
    dialog.finish_button.click()  # the apply stays undoable without the workspace
    await wait_for(lambda: not workspace.repo.exists(), timeout=30)
    assert git(project, "branch", "--list", workspace.branch) == ""  # not kept

    panel.new_conversation()  # reopened from the store, as after a restart
    panel.conversations.open(conversation_id)
    await wait_for(lambda: any(c.tool_name == title and c.has_changes for c in _cards(panel)),
                   timeout=30)
    card = next(c for c in _cards(panel) if c.tool_name == title)
    assert card.checkpointer is window.services.checkpointer_for(project)
    await wait_for(card.changes_row.undo_button.isEnabled, timeout=30)
    card.changes_row.undo_button.click()
    await wait_for(lambda: card.undone, timeout=30)
    assert len(previews) == 2
    assert (project / "doc" / "notes.md").read_bytes() == PERSONS_NOTES.encode()
    assert (project / "doc" / "old.md").read_bytes() == b"old\n"
    assert not (project / "doc" / "plan.md").exists()
    assert git(project, "for-each-ref", "--format=%(refname) %(objectname)") == before


def _cards(panel) -> list[ToolCard]:
    return [w for w in panel.transcript.items() if isinstance(w, ToolCard)]


async def test_after_a_crash_the_workspaces_left_behind_are_cleaned(window, project):
    worktrees = Worktrees(window.services.data_dir)
    made = await worktrees.create(project)  # the app died before it had a conversation
    record = made.repo.parent / "run.json"
    data = json.loads(record.read_text())
    record.write_text(json.dumps({**data, "ready": False}))  # … or while making it
    dialog = window.worktree_runs.show_stale()
    assert isinstance(dialog, StaleWorkspacesDialog)
    await wait_for(lambda: dialog.list.count() == 1, timeout=30)
    assert dialog.list.item(0).text().endswith("never finished being made")
    dialog.list.setCurrentRow(0)
    dialog.clean_button.click()
    await wait_for(lambda: dialog.status.text() == "Nothing left behind.", timeout=30)
    assert not made.repo.parent.exists()
    assert git(project, "branch", "--list", "tebiki/*") == ""
