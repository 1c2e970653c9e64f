"""How a stored conversation shows as a row of the conversation list: its title (or a stand-in
for an untitled one), a relative date, the project folder's name, and the tooltips.

Apart from the list (app.ui.widgets.conversation_list) so that the panel can show a title
without loading the list.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHeaderView, QTreeWidget, QTreeWidgetItem

from app.core.store.conversations import Conversation

ID_ROLE = Qt.ItemDataRole.UserRole
"""Where a row keeps its conversation's id (in the title column)."""
TITLE, DATE, PROJECT = range(3)  # the columns


def relative_date(stamp: str, now: datetime | None = None) -> str:
    """"today 14:02", "yesterday", "3 Nov" (this year) or "3 Nov 2025", in local time."""
    try:
        moment = datetime.fromisoformat(stamp.replace("Z", "+00:00")).astimezone()
    except ValueError:
        return stamp
    today = (now or datetime.now().astimezone()).astimezone().date()
    day = moment.date()
    if day == today:
        return f"today {moment:%H:%M}"
    if day == today - timedelta(days=1):
        return "yesterday"
    if day.year == today.year:
        return f"{day.day} {moment:%b}"
    return f"{day.day} {moment:%b %Y}"


def conversation_title(conversation: Conversation) -> str:
    return conversation.title.strip() or f"Conversation {conversation.id}"


def set_up_columns(tree: QTreeWidget) -> None:
    """Title (stretched), Updated and Project (hidden until every project is listed)."""
    tree.setColumnCount(3)
    tree.setHeaderLabels(["Title", "Updated", "Project"])
    header = tree.header()
    header.setStretchLastSection(False)
    header.setSectionResizeMode(TITLE, QHeaderView.ResizeMode.Stretch)
    header.setSectionResizeMode(DATE, QHeaderView.ResizeMode.ResizeToContents)
    header.setSectionResizeMode(PROJECT, QHeaderView.ResizeMode.ResizeToContents)
    tree.setColumnHidden(PROJECT, True)


def conversation_row(conversation: Conversation, now: datetime) -> QTreeWidgetItem:
    """An editable row (the title is renamed in place) holding the conversation's id."""
    title = conversation_title(conversation)
    item = QTreeWidgetItem([title, relative_date(conversation.updated_at, now),
                            Path(conversation.project_root).name
                            if conversation.project_root else ""])
    item.setData(TITLE, ID_ROLE, conversation.id)
    item.setFlags(item.flags() | Qt.ItemFlag.ItemIsEditable)
    item.setToolTip(TITLE, f"{title}\nStarted {relative_date(conversation.created_at, now)}")
    item.setToolTip(PROJECT, conversation.project_root or "")
    return item


def rows_of(tree: QTreeWidget) -> list[QTreeWidgetItem]:
    items = (tree.topLevelItem(i) for i in range(tree.topLevelItemCount()))
    return [item for item in items if item is not None]


def row_of(tree: QTreeWidget, conversation_id: int) -> QTreeWidgetItem | None:
    """The row showing ``conversation_id`` (None: not listed)."""
    return next((item for item in rows_of(tree)
                 if item.data(TITLE, ID_ROLE) == conversation_id), None)


def selected_conversation(tree: QTreeWidget) -> int | None:
    """The id of the conversation whose row is current (None: no row is)."""
    item = tree.currentItem()
    return None if item is None else item.data(TITLE, ID_ROLE)
