"""The AI panel's conversation list: it follows the project folder, shows dates, searches,
renames, deletes (after asking), exports Markdown, and the last conversation comes back."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLineEdit, QMessageBox

from app.core.services import Services
from app.ui.ai_panel.panel import AIPanel
from app.ui.widgets.conversation_list import ConversationList
from app.ui.widgets.conversation_rows import relative_date, row_of
from tests.ui.conftest import make_ai_panel, wait_for


def _titles(conversations: ConversationList) -> list[str]:
    tree = conversations.tree
    return [tree.topLevelItem(i).text(0) for i in range(tree.topLevelItemCount())]


async def _listed(conversations: ConversationList) -> None:
    """Ask for the rows again and wait for the answer from the worker thread."""
    answers: list[None] = []
    conversations.listed.connect(lambda: answers.append(None))
    conversations.refresh()
    await wait_for(lambda: bool(answers))


def _with_message(services: Services, title: str, root: Path | str | None,
                  text: str = "hello", *, minutes_ago: int = 0) -> int:
    """A conversation with one exchange, last updated ``minutes_ago`` (the order of the list
    then never hangs on the clock's resolution)."""
    conv = services.conversations.create(title=title,
                                         project_root=None if root is None else str(root))
    services.conversations.append(conv.id, "user", [{"type": "text", "text": text}])
    services.conversations.append(conv.id, "assistant", [{"type": "text", "text": "ok"}])
    stamp = (datetime.now(UTC) - timedelta(minutes=minutes_ago)).isoformat(
        timespec="milliseconds")
    services.db.conn.execute("UPDATE conversations SET updated_at = ? WHERE id = ?",
                             (stamp, conv.id))
    return conv.id


@pytest.fixture
def other(tmp_path: Path) -> Path:
    root = (tmp_path / "other").resolve()
    root.mkdir()
    return root


def _panel(qtbot, services: Services, project: Path | None) -> AIPanel:
    return make_ai_panel(qtbot, services, project, size=(700, 600), show=True)


def test_relative_dates() -> None:
    now = datetime.fromisoformat("2026-11-23T15:00:00").astimezone()

    def at(text: str) -> str:
        return datetime.fromisoformat(text).astimezone().isoformat()

    assert relative_date(at("2026-11-23T14:02:00"), now) == "today 14:02"
    assert relative_date(at("2026-11-22T23:59:00"), now) == "yesterday"
    assert relative_date(at("2026-11-03T08:00:00"), now) == "3 Nov"
    assert relative_date(at("2025-11-03T08:00:00"), now) == "3 Nov 2025"
    assert relative_date("not a date", now) == "not a date"


async def test_the_list_follows_the_project_folder(qtbot, services: Services, project: Path,
                                                   other: Path) -> None:
    _with_message(services, "Here second", project, minutes_ago=2)
    _with_message(services, "Elsewhere", other, minutes_ago=1)
    _with_message(services, "Here first", project)
    panel = _panel(qtbot, services, project)
    conversations = panel.conversations.conversation_list
    await _listed(conversations)
    assert _titles(conversations) == ["Here first", "Here second"]
    assert conversations.tree.isColumnHidden(2)  # one project: no project column
    date = conversations.tree.topLevelItem(0).text(1)
    assert date.startswith("today ")

    conversations.all_projects.setChecked(True)
    await _listed(conversations)
    assert set(_titles(conversations)) == {"Here first", "Here second", "Elsewhere"}
    assert not conversations.tree.isColumnHidden(2)
    conversations.all_projects.setChecked(False)

    panel.project_opened(other)  # what the window does when a folder is opened
    await _listed(conversations)
    assert _titles(conversations) == ["Elsewhere"]
    await panel.shutdown()


async def test_a_click_opens_the_conversation_and_it_is_reopened_with_its_project(
        qtbot, services: Services, project: Path, other: Path) -> None:
    older = _with_message(services, "Older", project, "the first question", minutes_ago=5)
    _with_message(services, "Newer", project)
    panel = _panel(qtbot, services, project)
    panel.conversations.show_list(True)
    assert panel.conversations.conversation_list.isVisible()
    await _listed(panel.conversations.conversation_list)
    item = row_of(panel.conversations.conversation_list.tree, older)
    assert item is not None
    rect = panel.conversations.conversation_list.tree.visualItemRect(item)
    qtbot.mouseClick(panel.conversations.conversation_list.tree.viewport(),
                     Qt.MouseButton.LeftButton, pos=rect.center())
    assert panel.session is not None and panel.session.conversation_id == older
    assert panel.conversations.title.text() == "Older"
    assert panel.conversations.conversation_list.current_id == older
    assert services.settings.last_conversation(str(project)) == older
    await panel.shutdown()

    # A new start: the window opens the project, and its last conversation is back.
    again = _panel(qtbot, services, project)
    assert again.session is None
    again.project_opened(project)
    assert again.session is not None and again.session.conversation_id == older
    assert again.conversations.title.text() == "Older"
    # Another folder has no last conversation: nothing is opened there.
    again.new_conversation()
    again.project_opened(other)
    assert again.session is None
    assert again.conversations.title.text() == "New conversation"
    await again.shutdown()


async def test_a_last_conversation_of_another_folder_or_deleted_is_not_reopened(
        qtbot, services: Services, project: Path, other: Path) -> None:
    elsewhere = _with_message(services, "Elsewhere", other)
    services.settings.set_last_conversation(str(project), elsewhere)  # a damaged setting
    panel = _panel(qtbot, services, project)
    panel.project_opened(project)
    assert panel.session is None
    gone = _with_message(services, "Gone", project)
    services.settings.set_last_conversation(str(project), gone)
    services.conversations.delete(gone)
    panel.project_opened(project)
    assert panel.session is None
    await panel.shutdown()


async def test_rename_in_place(qtbot, services: Services, project: Path) -> None:
    conv = _with_message(services, "Old title", project)
    panel = _panel(qtbot, services, project)
    panel.conversations.open(conv)
    panel.conversations.show_list(True)
    conversations = panel.conversations.conversation_list
    await _listed(conversations)
    renamed: list[tuple[int, str]] = []
    conversations.renamed.connect(lambda *args: renamed.append(args))
    assert conversations.selected_id() == conv and conversations.rename_button.isEnabled()

    conversations.rename_button.click()
    editor = conversations.tree.viewport().findChild(QLineEdit)
    assert editor is not None and editor.text() == "Old title"
    editor.setText("  A   better title ")
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    await wait_for(lambda: bool(renamed))
    assert renamed == [(conv, "A better title")]
    assert services.conversations.get(conv).title == "A better title"
    assert panel.conversations.title.text() == "A better title"
    await wait_for(lambda: _titles(conversations) == ["A better title"])

    # An empty title is refused: the old one stays.
    conversations.edits.start_rename()
    editor = conversations.tree.viewport().findChild(QLineEdit)
    assert editor is not None
    editor.setText("   ")
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    assert _titles(conversations) == ["A better title"]
    assert services.conversations.get(conv).title == "A better title"
    await panel.shutdown()


async def test_delete_asks_first_and_the_open_one_becomes_a_new_conversation(
        qtbot, services: Services, project: Path) -> None:
    kept = _with_message(services, "Kept", project, minutes_ago=5)
    doomed = _with_message(services, "Doomed", project)
    panel = _panel(qtbot, services, project)
    panel.conversations.open(doomed)
    conversations = panel.conversations.conversation_list
    await _listed(conversations)
    assert conversations.selected_id() == doomed

    panel.conversations.show_list(True)
    conversations.tree.setFocus()
    qtbot.keyClick(conversations.tree, Qt.Key.Key_Delete)  # the Delete key asks too
    box = conversations.edits.confirm_box
    assert box is not None and "Doomed" in box.text()
    box.button(QMessageBox.StandardButton.Cancel).click()  # the person changes their mind
    assert conversations.edits.confirm_box is None
    assert services.conversations.get(doomed).title == "Doomed"

    deleted: list[int] = []
    conversations.deleted.connect(deleted.append)
    conversations.delete_button.click()
    box = conversations.edits.confirm_box
    assert box is not None
    box.button(QMessageBox.StandardButton.Yes).click()
    await wait_for(lambda: bool(deleted))
    assert deleted == [doomed]
    with pytest.raises(KeyError):
        services.conversations.get(doomed)
    assert panel.session is None  # the open one went: a new, empty conversation
    assert panel.conversations.title.text() == "New conversation"
    assert services.settings.last_conversation(str(project)) is None
    await wait_for(lambda: _titles(conversations) == ["Kept"])
    assert services.conversations.get(kept).title == "Kept"
    await panel.shutdown()


async def test_a_conversation_a_run_adds_to_cannot_be_deleted(
        qtbot, services: Services, project: Path) -> None:
    conv = _with_message(services, "Busy", project)
    panel = _panel(qtbot, services, project)
    panel.conversations.open(conv)
    await _listed(panel.conversations.conversation_list)
    messages: list[str] = []
    panel.status_message.connect(messages.append)
    panel.runs._running = True  # what Send sets until the run has ended
    panel.conversations.conversation_list.edits.request_delete()
    assert panel.conversations.conversation_list.edits.confirm_box is None
    assert "Stop the run" in messages[-1]
    panel.runs._running = False
    await panel.shutdown()


@pytest.mark.parametrize("query", ['"', "NEAR(", "*", "(a OR", "\x00"])
async def test_hostile_searches_show_no_error(qtbot, services: Services, project: Path,
                                             query: str) -> None:
    _with_message(services, "Plain", project, 'quotes " and NEAR( and * here')
    conversations = ConversationList(services.conversations)
    qtbot.addWidget(conversations)
    conversations.set_project(str(project))
    conversations.search.setText(query)
    await _listed(conversations)
    assert "Cannot read" not in conversations.empty_label.text()


async def test_search_finds_titles_and_messages_of_this_project(
        qtbot, services: Services, project: Path, other: Path) -> None:
    _with_message(services, "Zanzibar trip", project)
    _with_message(services, "Unrelated", project, "we talked about zanzibar here")
    _with_message(services, "Quiet", project)
    _with_message(services, "Elsewhere", other, "zanzibar too")
    conversations = ConversationList(services.conversations)
    qtbot.addWidget(conversations)
    conversations.set_project(str(project))
    answers: list[None] = []
    conversations.listed.connect(lambda: answers.append(None))
    qtbot.keyClicks(conversations.search, "zanzibar")  # debounced: one search at the end
    await wait_for(lambda: _titles(conversations) != [] and
                   set(_titles(conversations)) == {"Zanzibar trip", "Unrelated"})
    conversations.all_projects.setChecked(True)
    await wait_for(lambda: "Elsewhere" in _titles(conversations))
    assert set(_titles(conversations)) == {"Zanzibar trip", "Unrelated", "Elsewhere"}

    conversations.search.setText("nothing-like-this")
    await _listed(conversations)
    assert _titles(conversations) == []
    assert "Nothing matches" in conversations.empty_label.text()


async def test_export_as_markdown(qtbot, services: Services, project: Path,
                                  tmp_path: Path) -> None:
    conv = services.conversations.create(title="Export me", project_root=str(project))
    services.conversations.append(conv.id, "user", [{"type": "text", "text": "list files"}])
    services.conversations.append(conv.id, "assistant", [
        {"type": "thinking", "thinking": "private musing", "signature": "s"},
        {"type": "tool_use", "id": "t1", "name": "list_dir", "input": {"path": "."}}])
    services.conversations.append(conv.id, "user", [
        {"type": "tool_result", "tool_use_id": "t1", "content": "a.txt\nb.txt"}])
    services.conversations.append(conv.id, "assistant", [{"type": "text", "text": "Two."}])
    conversations = ConversationList(services.conversations)
    qtbot.addWidget(conversations)
    conversations.set_project(str(project))
    await _listed(conversations)
    assert conversations.select(conv.id)
    exported: list[str] = []
    conversations.exported.connect(exported.append)

    conversations.export_button.click()
    dialog = conversations.edits.export_dialog
    assert dialog is not None
    assert dialog.selectedFiles()[0].endswith("export-me.md")
    target = tmp_path / "out" / "chat.md"
    target.parent.mkdir()
    dialog.selectFile(str(target))
    dialog.accept()
    await wait_for(lambda: bool(exported))
    assert exported == [str(target)]
    text = target.read_text(encoding="utf-8")
    assert text.startswith("# Export me\n")
    assert "## You\n\nlist files" in text
    assert '**Tool call:** `list_dir`\n\n```json\n{\n  "path": "."\n}\n```' in text
    assert "**Result of** `list_dir`\n\n```text\na.txt\nb.txt\n```" in text
    assert "## Assistant\n\nTwo.\n" in text
    assert "private musing" not in text


async def test_an_export_that_cannot_be_written_says_so(qtbot, services: Services,
                                                        project: Path, tmp_path: Path) -> None:
    conv = _with_message(services, "Unwritable", project)
    conversations = ConversationList(services.conversations)
    qtbot.addWidget(conversations)
    messages: list[str] = []
    conversations.status_message.connect(messages.append)
    conversations.edits.export(conv, tmp_path / "missing-folder" / "x.md")
    await wait_for(lambda: bool(messages))
    assert messages[-1].startswith("Export failed:")
