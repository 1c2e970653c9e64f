"""A worktree run from start to end with the loopback fake model: a conversation in a worktree
edits a file, commits it inside the sandbox (shell ``git commit``), edits another and commits it
with git_ops; Review changes applies both into the project through its checkpoints, Undo apply
takes them back; the person's repository never moved. Then the workspaces a crash left behind
are listed and cleaned."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.core.worktrees.workspace import Worktrees
from app.ui.dialogs.review_changes import ReviewChangesDialog
from app.ui.dialogs.stale_workspaces import StaleWorkspacesDialog
from tests.e2e.conftest import shown_window
from tests.fakes.anthropic_server import Response
from tests.sandbox_support import STATUS, requires_sandbox
from tests.ui.conftest import wait_for
from tests.ui.run_windows import git, git_project
from tests.ui.test_worktree_runs import approve_until, new_worktree_conversation

pytestmark = requires_sandbox


@pytest.fixture
def project(visible: Path) -> Path:
    return git_project(visible, {"doc/notes.md": "notes\n"})


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
        *_calls(("write_file", {"path": "doc/plan.md", "content": "the plan\n"}),
                ("shell_exec", {"command": "git add doc/plan.md && git commit -q -m plan"}),
                ("write_file", {"path": "doc/notes.md", "content": "notes\nmore\n"}),
                ("git_ops", {"action": "add", "args": {"files": ["doc/notes.md"]}}),
                ("git_ops", {"action": "commit", "args": {"message": "notes"}})),
        Response.text("Committed both."))
    assert panel.send("plan and commit")
    await approve_until(window, lambda: not panel.running, timeout=120)
    results = [r for req in fake_anthropic_env.message_requests for r in
               req.tool_results()]
    assert not [r for r in results if r.get("is_error")], results
    assert git(workspace.repo, "log", "--format=%s", workspace.branch).split() == \
        ["notes", "plan", "first"]
    assert git(workspace.repo, "status", "--porcelain") == ""
    assert git(project, "for-each-ref", "--format=%(refname) %(objectname)") == before
    assert not (project / "doc" / "plan.md").exists()

    dialog = window.worktree_runs.review()
    assert isinstance(dialog, ReviewChangesDialog)
    await wait_for(lambda: dialog.files.count() == 2, timeout=30)
    # A button is enabled by the done-callback of the task before it, a loop turn after the
    # task is done: a click before that is a click on a disabled button.
    await wait_for(dialog.apply_all_button.isEnabled, timeout=30)
    dialog.apply_all_button.click()
    await wait_for(lambda: dialog.busy.done(), timeout=30)
    assert (project / "doc" / "plan.md").read_text() == "the plan\n", dialog.status.text()
    assert (project / "doc" / "notes.md").read_text() == "notes\nmore\n"
    await wait_for(dialog.undo_button.isEnabled, timeout=30)
    dialog.undo_button.click()
    await wait_for(lambda: dialog.busy.done(), timeout=30)
    assert not (project / "doc" / "plan.md").exists(), dialog.status.text()
    assert (project / "doc" / "notes.md").read_text() == "notes\n"
    assert git(project, "for-each-ref", "--format=%(refname) %(objectname)") == before
    await wait_for(dialog.finish_button.isEnabled, timeout=30)
    dialog.finish_button.click()
    await wait_for(lambda: not workspace.repo.exists(), timeout=30)
    assert git(project, "branch", "--list", workspace.branch) == ""  # not kept


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
