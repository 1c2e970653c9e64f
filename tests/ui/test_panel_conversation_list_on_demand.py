"""The AI panel builds its conversation list when it is first shown (the panel is ready without
it): then it lists the project's conversations, marks the open one and sits between the
conversation row and the transcript."""

from __future__ import annotations

from pathlib import Path

from app.core.services import Services
from app.ui.widgets.conversation_list import ConversationList
from app.ui.widgets.conversation_rows import row_of
from tests.ui.conftest import make_ai_panel, wait_for


def _conversation(services: Services, title: str, root: Path) -> int:
    conversation = services.conversations.create(title=title, project_root=str(root))
    services.conversations.append(conversation.id, "user", [{"type": "text", "text": "hi"}])
    services.conversations.append(conversation.id, "assistant", [{"type": "text", "text": "ok"}])
    return conversation.id


async def test_the_list_is_built_on_first_show_with_the_open_conversation_marked(
        qtbot, services: Services, project: Path) -> None:
    first = _conversation(services, "First", project)
    second = _conversation(services, "Second", project)
    panel = make_ai_panel(qtbot, services, project, size=(700, 600), show=True)
    panel.conversations.open(second)
    panel.new_conversation()
    panel.conversations.open(first)
    assert panel.findChildren(ConversationList) == []  # not built for the ready panel

    panel.conversations.show_list(True)
    [conversations] = panel.findChildren(ConversationList)
    assert panel.conversations.conversation_list is conversations  # built once
    assert conversations.isVisible()
    assert conversations.project_root == str(project)
    assert conversations.current_id == first
    await wait_for(lambda: row_of(conversations.tree, first) is not None
                   and row_of(conversations.tree, second) is not None)
    # Placed where it always was: under the conversation row, above the transcript.
    assert panel.conversations.button.geometry().bottom() <= conversations.geometry().top()
    assert conversations.geometry().bottom() <= panel.transcript.geometry().top()

    panel.conversations.show_list(False)
    assert not conversations.isVisible()
    await panel.shutdown()


async def test_the_list_follows_the_project_and_the_open_conversation_once_built(
        qtbot, services: Services, project: Path, tmp_path: Path) -> None:
    other = (tmp_path / "other").resolve()
    other.mkdir()
    here = _conversation(services, "Here", project)
    panel = make_ai_panel(qtbot, services, project, size=(700, 600), show=True)
    conversations = panel.conversations.conversation_list  # asked for: built, hidden
    assert not conversations.isVisible()
    panel.conversations.open(here)
    assert conversations.current_id == here
    panel.new_conversation()
    panel.project_opened(other)
    assert conversations.project_root == str(other)
    assert conversations.current_id is None
    await panel.shutdown()
