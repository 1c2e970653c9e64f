"""Conversations in a run workspace through the real window: File → New Conversation in a
Worktree (the workspace made off the GUI thread, the project's setup commands asked like any
call, the panel's line), Review changes (per-file diff, Apply / Discard, a conflict merged in the
restore merge UI, the apply as a card of the conversation, Undo apply, Finish keeping the
branch), an apply undone from its conversation after a restart, and the workspaces left behind
after a crash, cleaned."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication

from app.core.services import Services
from app.core.worktrees.workspace import Worktrees
from app.ui.dialogs.restore_preview import KEEP, MERGE, RestorePreviewDialog
from app.ui.dialogs.review_changes import ReviewChangesDialog
from app.ui.dialogs.stale_workspaces import StaleWorkspacesDialog
from app.ui.main_window import MainWindow
from app.ui.widgets.tool_card import ToolCard
from tests.fakes.anthropic_server import (  # noqa: F401  (fixtures)
    Response,
    fake_anthropic,
    fake_anthropic_env,
)
from tests.ui.conftest import wait_for
from tests.ui.run_windows import git, git_project, run_window


@pytest.fixture
def project(visible: Path) -> Path:
    """A git project outside /tmp (the sandbox's /tmp is private)."""
    return git_project(visible, {"a.txt": "one\ntwo\nthree\nfour\nfive\n"})


@pytest.fixture
def window(qtbot, services: Services, project: Path,
           fake_anthropic_env) -> MainWindow:  # noqa: F811
    return run_window(qtbot, services, project)


async def new_worktree_conversation(window: MainWindow):
    runs = window.worktree_runs
    runs.new_action.trigger()
    await wait_for(lambda: runs.shown() is not None, timeout=60)
    return runs.shown()


async def approve_until(window: MainWindow, done, timeout: float = 60) -> None:
    """Approve every call asked until ``done()``."""
    approvals = window.ai_panel.approvals

    def step() -> bool:
        if done():
            return True
        dialog = approvals.current_dialog
        if dialog is not None and dialog.isVisible():
            dialog.approve_button.click()
        return False
    await wait_for(step, timeout=timeout)


async def test_a_conversation_in_a_worktree_runs_the_setup_commands_there(
        qtbot, window, project, services):
    (project / ".tebiki").mkdir()
    (project / ".tebiki" / "worktree.toml").write_text(
        '[setup]\ncommands = ["touch set-up.txt"]\n')
    asked: list[str] = []
    window.approvals.dialog_shown.connect(lambda d: asked.append(d.request.input["command"]))
    file_menu = window.menuBar().actions()[0].menu()
    texts = [a.text() for a in file_menu.actions()]
    assert texts[texts.index("&New Conversation") + 1] == "New Conversation in a &Worktree"
    workspace = await new_worktree_conversation(window)
    panel = window.ai_panel
    runs = window.worktree_runs
    assert workspace.branch.startswith("tebiki/")
    assert panel.session.project_root == workspace.repo != project
    assert runs.line.isVisible()
    assert runs.label.text() == f"Worktree {workspace.branch} of project"
    await approve_until(window, lambda: (workspace.repo / "set-up.txt").exists())
    assert not (project / "set-up.txt").exists()  # in the worktree, not the project
    assert asked == ["touch set-up.txt"]  # the project's command, asked like any call
    await wait_for(lambda: panel.session.conversation_id in runs.by_conversation, timeout=20)
    record = json.loads((workspace.repo.parent / "run.json").read_text())
    assert record["conversation_id"] == panel.session.conversation_id
    await wait_for(lambda: not panel.running, timeout=20)
    assert window.parallel_runs.switch.describe_project(workspace.repo) == "worktree of project"

    conversation_id = panel.session.conversation_id
    panel.new_conversation()  # the line follows the conversation shown
    runs.refresh_line()
    assert not runs.line.isVisible() and not runs.review_action.isEnabled()
    panel.conversations.open(conversation_id)  # opened again: it works in its workspace
    assert panel.session.project_root == workspace.repo
    runs.refresh_line()
    assert runs.line.isVisible()
    await panel.shutdown()


async def test_review_applies_per_file_merges_a_conflict_undoes_and_finishes(
        qtbot, window, project, fake_anthropic_env):  # noqa: F811
    workspace = await new_worktree_conversation(window)
    panel = window.ai_panel
    fake_anthropic_env.script(
        Response.tool_use("write_file", {"path": "doc/new.md", "content": "new\n"}),
        Response.text("Written."))
    assert panel.send("write the doc")
    await approve_until(window, lambda: not panel.running and
                        (workspace.repo / "doc" / "new.md").exists())
    window.parallel_runs.action.trigger()  # the status view names whose worktree it ran in
    view = window.parallel_runs.button.view
    assert [view.table.item(0, c).text() for c in (0, 1, 2)] == \
        ["write the doc", "Done", "worktree of project"]
    (workspace.repo / "a.txt").write_text("one\ntwo\nthree\nfour\nFIVE\n")  # the run's edit
    (project / "a.txt").write_text("ONE\ntwo\nthree\nfour\nfive\n")  # the person's, meanwhile

    assert window.worktree_runs.review_action.isEnabled()  # Run → Review Changes… too
    window.worktree_runs.review_button.click()
    dialog = window.worktree_runs.dialogs[-1]
    assert isinstance(dialog, ReviewChangesDialog)
    await wait_for(lambda: dialog.files.count() == 2, timeout=30)
    rows = [dialog.files.item(i).text() for i in range(2)]
    assert rows == ["a.txt  (modified) — changed in the project too", "doc/new.md  (added)"]
    assert "+FIVE" in dialog.diff.toPlainText() and "-five" in dialog.diff.toPlainText()
    previews: list[dict[str, object]] = []  # what each preview showed (it goes once answered)
    answer = {"choice": KEEP, "accept": False}

    async def answer_preview(preview: RestorePreviewDialog) -> bool:
        previews.append({"title": preview.windowTitle(), "conflicts": preview.plan.conflicts,
                         "summary": preview.summary.text(),
                         "diff": preview.diff_view.toPlainText(),
                         "take": [preview.choices[p].itemText(1) for p in preview.choices]})
        if preview.plan.conflicts:
            preview.set_choice("a.txt", str(answer["choice"]))
            await wait_for(preview.merging_done, timeout=30)
        return bool(answer["accept"])
    panel.checkpoints.answer_preview = answer_preview

    dialog.files.setCurrentRow(1)  # no conflict: applied without asking
    dialog.apply_button.click()
    await wait_for(lambda: (project / "doc" / "new.md").exists(), timeout=30)
    await wait_for(lambda: dialog.busy.done() and dialog.finish_button.isEnabled())
    assert previews == []
    cards = [w for w in panel.transcript.items() if isinstance(w, ToolCard)]
    assert cards[-1].tool_name == f"Applied 1 file from {workspace.branch}"
    assert cards[-1].has_changes and not cards[-1].changes_row.undo_button.isHidden()

    dialog.files.setCurrentRow(0)  # changed in the project too: the restore merge UI
    dialog.apply_button.click()  # … cancelled: nothing written
    await wait_for(lambda: dialog.busy.done() and dialog.finish_button.isEnabled(), timeout=30)
    preview = previews[-1]
    assert preview["conflicts"] == ("a.txt",) and preview["take"] == ["Take the run's"]
    assert "changed in the project since the run started" in str(preview["summary"])
    assert "+FIVE" in str(preview["diff"]) and "-ONE" in str(preview["diff"])
    assert (project / "a.txt").read_text() == "ONE\ntwo\nthree\nfour\nfive\n"
    assert dialog.status.text() == "Apply cancelled: nothing was written."
    answer.update(choice=MERGE, accept=True)
    dialog.apply_button.click()
    await wait_for(lambda: dialog.busy.done() and dialog.finish_button.isEnabled(), timeout=30)
    assert (project / "a.txt").read_text() == "ONE\ntwo\nthree\nfour\nFIVE\n", \
        dialog.status.text()
    assert not dialog.apply_all_button.isEnabled()  # nothing left to apply
    merged_card = [w for w in panel.transcript.items() if isinstance(w, ToolCard)][-1]
    assert merged_card.tool_name == f"Applied 1 file from {workspace.branch}"

    dialog.undo_button.click()  # the merge goes: the card's undo, the same preview
    await wait_for(lambda: (project / "a.txt").read_text() == "ONE\ntwo\nthree\nfour\nfive\n",
                   timeout=30)
    await wait_for(lambda: dialog.busy.done() and dialog.finish_button.isEnabled())
    assert merged_card.undone and previews[-1]["title"] == "Undo the apply"
    dialog.undo_button.click()  # then the new file
    await wait_for(lambda: not (project / "doc" / "new.md").exists(), timeout=30)
    await wait_for(lambda: dialog.busy.done() and dialog.finish_button.isEnabled())
    assert cards[-1].undone
    assert dialog.apply_all_button.isEnabled()
    dialog.discard_all_button.click()
    assert not dialog.apply_all_button.isEnabled()
    assert dialog.files.item(1).text().endswith("— discarded")

    dialog.keep_branch.setChecked(True)
    dialog.finish_button.click()
    await wait_for(lambda: not workspace.repo.parent.exists(), timeout=30)
    await wait_for(lambda: not window.worktree_runs.line.isVisible(), timeout=5)
    assert git(project, "branch", "--list", workspace.branch).strip().endswith(workspace.branch)
    assert git(project, "branch", "--show-current").strip() == "main"
    await panel.shutdown()


async def test_workspaces_left_behind_by_a_crash_are_listed_and_cleaned(
        qtbot, window, project, services):
    worktrees = Worktrees(services.data_dir)
    unused = await worktrees.create(project)  # made, never given to a conversation
    half = worktrees.root / "20260101-000000-abcdef"  # the app died while making it
    half.mkdir(parents=True)
    (half / "run.json").write_text(json.dumps(
        {"id": half.name, "repo": str(half / "repo"), "source": str(project),
         "branch": "tebiki/" + half.name, "base": "", "created_at": 1.0, "ready": False}))
    window.worktree_runs.clean_action.trigger()
    dialog = window.worktree_runs.dialogs[-1]
    assert isinstance(dialog, StaleWorkspacesDialog)
    await wait_for(lambda: dialog.list.count() == 2, timeout=30)
    texts = sorted(dialog.list.item(i).text() for i in range(2))
    assert texts[0].endswith("never finished being made")
    assert texts[1].startswith(unused.branch) and texts[1].endswith("no conversation uses it")
    dialog.clean_all_button.click()
    await wait_for(lambda: dialog.status.text() == "Nothing left behind.", timeout=30)
    assert not half.exists() and not unused.repo.exists()
    assert QApplication.instance() is not None
    await window.ai_panel.shutdown()


async def test_after_a_restart_a_conversation_opens_in_its_workspace(
        qtbot, services, project, fake_anthropic_env):  # noqa: F811
    worktrees = Worktrees(services.data_dir)
    workspace = await worktrees.create(project)
    conversation = services.conversations.create(title="earlier", agent_id=None,
                                                 project_root=str(workspace.repo))
    worktrees.attach(workspace, conversation.id)
    window = run_window(qtbot, services, project)  # the app starts again
    runs = window.worktree_runs
    await wait_for(lambda: conversation.id in runs.by_conversation, timeout=20)
    window.ai_panel.conversations.open(conversation.id)
    assert window.ai_panel.session.project_root == workspace.repo
    assert window.ai_panel.session._borrowed == workspace.borrowed
    runs.refresh_line()
    assert runs.label.text() == f"Worktree {workspace.branch} of project"
    await window.ai_panel.shutdown()


async def test_an_apply_is_undone_from_its_conversation_after_a_restart(
        qtbot, db, fresh_data_dir, services, project, fake_anthropic_env):  # noqa: F811
    """The apply's change set is kept in the conversation that ran in the workspace: opened
    in a new app (new services, the same database and data folder) it lists the apply, and
    its Undo restores the project's bytes with the project's checkpoints."""
    from app.core.services import build_services
    from app.core.worktrees.apply import apply, plan_apply
    from app.core.worktrees.apply_record import apply_id, record_apply
    from app.core.worktrees.review import run_changes

    worktrees = Worktrees(services.data_dir)
    workspace = await worktrees.create(project)
    conversation = services.conversations.create(title="earlier", agent_id=None,
                                                 project_root=str(workspace.repo))
    services.conversations.append(conversation.id, "user", "write the doc")
    worktrees.attach(workspace, conversation.id)
    (workspace.repo / "doc").mkdir()
    (workspace.repo / "doc" / "new.md").write_bytes(b"new\r\n")
    (workspace.repo / "a.txt").unlink()
    items = await plan_apply(workspace, project, await run_changes(worktrees, workspace))
    changes = await apply(project, items, {}, services.checkpointer_for(project), apply_id())
    assert changes is not None
    record_apply(services.audit, services.conversations, conversation.id, project,
                 workspace.branch, [i.path for i in items], changes)
    assert not (project / "a.txt").exists()

    restarted = build_services(db, fresh_data_dir, project)
    window = run_window(qtbot, restarted, project)
    panel = window.ai_panel
    await wait_for(lambda: conversation.id in window.worktree_runs.by_conversation, timeout=20)
    panel.conversations.open(conversation.id)
    assert panel.session.project_root == workspace.repo  # the conversation works there …
    title = f"Applied 2 files from {workspace.branch}"

    def card() -> ToolCard | None:
        return next((w for w in panel.transcript.items()
                     if isinstance(w, ToolCard) and w.tool_name == title), None)
    await wait_for(lambda: card() is not None and card().has_changes, timeout=30)
    assert card().checkpointer is restarted.checkpointer_for(project)  # … the apply here
    shown: list[RestorePreviewDialog] = []

    async def accept(preview: RestorePreviewDialog) -> bool:
        shown.append(preview)
        return True
    panel.checkpoints.answer_preview = accept
    card().changes_row.undo_button.click()
    await wait_for(lambda: card().undone, timeout=30)
    assert (project / "a.txt").read_bytes() == b"one\ntwo\nthree\nfour\nfive\n"
    assert not (project / "doc" / "new.md").exists()
    assert len(shown) == 1
    await panel.shutdown()


@pytest.fixture
def loop_gate(monkeypatch) -> dict[str, bool]:
    """The worktree line's "is the event loop running?", answered by the test."""
    import app.ui.worktree_runs as worktree_runs

    gate = {"running": False}
    monkeypatch.setattr(worktree_runs, "loop_running", lambda: gate["running"])
    return gate


@pytest.fixture
def known_workspace(services: Services, project: Path):
    """A workspace an earlier session made for conversation 4711."""
    import asyncio

    worktrees = Worktrees(services.data_dir)
    return worktrees.attach(asyncio.run(worktrees.create(project)), 4711)


@pytest.fixture
def window_after_restart(qtbot, services: Services, project: Path, fake_anthropic_env,  # noqa: F811
                         known_workspace, loop_gate) -> MainWindow:
    return run_window(qtbot, services, project)


async def test_workspaces_of_an_earlier_session_load_once_the_event_loop_runs(
        window_after_restart: MainWindow, known_workspace, loop_gate):
    """app.main shows the window before it starts the event loop: the known workspaces are
    loaded once it runs (they were never loaded, so after a restart a worktree conversation
    had no line and no Review changes)."""
    window = window_after_restart
    for _ in range(3):  # the window's first turns
        QApplication.processEvents()
    assert 4711 not in window.worktree_runs.by_conversation
    loop_gate["running"] = True
    await wait_for(lambda: 4711 in window.worktree_runs.by_conversation, timeout=10)
    assert window.worktree_runs.by_conversation[4711].id == known_workspace.id
    await window.ai_panel.shutdown()


async def test_the_worktree_line_follows_the_conversation_shown_at_once(window: MainWindow):
    """Switching conversations updates the line in the same turn (no timer polls for it)."""
    workspace = await new_worktree_conversation(window)
    runs = window.worktree_runs
    assert runs.line.isVisibleTo(window) and workspace.branch in runs.label.text()
    window.ai_panel.new_conversation()  # no event processed in between
    assert not runs.line.isVisibleTo(window)
    await window.ai_panel.shutdown()
