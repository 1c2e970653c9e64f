"""The conversation list is as tall as its rows, up to MAX_VISIBLE_ROWS: a few conversations
leave no empty area below them, many scroll."""

from __future__ import annotations

from pathlib import Path

from app.core.services import Services
from app.ui.widgets.conversation_list import MAX_VISIBLE_ROWS, ConversationList
from tests.ui.conftest import wait_for
from tests.ui.test_conversation_list import _listed, _panel, _with_message


def _empty_area(conversations: ConversationList) -> int:
    """Pixels of the list's viewport below its last row (0: the rows fill it)."""
    tree = conversations.tree
    count = tree.topLevelItemCount()
    last = tree.visualItemRect(tree.topLevelItem(count - 1)).bottom() + 1 if count else 0
    return tree.viewport().height() - last


async def test_the_list_height_follows_the_rows(qtbot, services: Services,
                                                project: Path) -> None:
    for n in range(4):
        _with_message(services, f"Conversation {n}", project, minutes_ago=n)
    panel = _panel(qtbot, services, project)
    panel.conversations.show_list(True)
    conversations = panel.conversations.conversation_list
    await _listed(conversations)
    tree = conversations.tree
    await wait_for(lambda: tree.viewport().height() < 200)
    assert tree.topLevelItemCount() == 4
    assert 0 <= _empty_area(conversations) <= 2
    four_rows = tree.height()

    for n in range(4, 14):
        _with_message(services, f"Conversation {n}", project, minutes_ago=n)
    await _listed(conversations)
    row = tree.sizeHintForRow(0)
    assert tree.height() == four_rows + (MAX_VISIBLE_ROWS - 4) * row  # capped at 8 rows
    assert tree.verticalScrollBar().maximum() > 0  # the rest scrolls

    conversations.search.setText("nothing is called this")
    await _listed(conversations)
    assert tree.topLevelItemCount() == 0
    assert tree.height() == four_rows - 3 * row  # one row's room, not a blank box
    await panel.shutdown()
