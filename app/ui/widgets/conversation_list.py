"""The conversations of the open project folder: a searchable list with dates, and rename,
delete and export as Markdown.

Every database read and write runs on one worker thread (app.ui.widgets.db_worker), in
order (a write, then the list that shows it): listing is cheap (indexed, LIMIT), but a
full-text search over every message of a big database, a delete that cascades through
thousands of messages and their index rows, or an export are not bounded, and the GUI thread
must never wait on them. A list answer older than the latest request is dropped. Searches wait
for a pause in typing (``SEARCH_DELAY_MS``). The query is taken literally
(``ConversationRepository.search``), so FTS syntax such as ``"``, ``NEAR(`` or ``*`` is
searched for, never an error.

Rename, delete and export are the list's collaborator (app.ui.widgets.conversation_list_edits),
how a conversation shows as a row is in app.ui.widgets.conversation_rows.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QFont, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMenu,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.core.store.conversations import Conversation, ConversationRepository
from app.ui.widgets.conversation_list_edits import ConversationEdits
from app.ui.widgets.conversation_rows import (
    ID_ROLE,
    PROJECT,
    TITLE,
    conversation_row,
    row_of,
    rows_of,
    selected_conversation,
    set_up_columns,
)
from app.ui.widgets.db_worker import DatabaseWorker

if TYPE_CHECKING:
    from app.core.permissions.egress import SecretMatcher

SEARCH_DELAY_MS = 250
LIST_LIMIT = 200
MAX_VISIBLE_ROWS = 8  # the list grows with its rows up to this, then scrolls


class ConversationList(QWidget):
    """Lists, searches, renames, deletes and exports conversations; ``opened`` asks the panel
    to show one, ``deleted`` tells it one is gone."""

    opened = Signal(int)
    deleted = Signal(int)
    renamed = Signal(int, str)
    exported = Signal(str)
    listed = Signal()  # the rows now show the latest answer (for tests and the panel)
    status_message = Signal(str)

    def __init__(self, repository: ConversationRepository,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.repository = repository
        self.project_root: str | None = None
        self.current_id: int | None = None
        self.conversations: list[Conversation] = []
        # Whether a conversation may be deleted now (the panel: not while a run adds to it).
        self.can_delete: Callable[[int], bool] = lambda _conversation_id: True
        self.secret_matchers: Callable[[int], Sequence[SecretMatcher]] = \
            lambda _conversation_id: ()
        self._generation = 0
        self._row_height = 0
        self._worker = DatabaseWorker(self)

        self.search = QLineEdit()
        self.search.setObjectName("conversation-search")
        self.search.setPlaceholderText("Search titles and messages…")
        self.search.setClearButtonEnabled(True)
        self.all_projects = QCheckBox("All projects")
        self.all_projects.setToolTip("Show the conversations of every project folder")
        self.all_projects.setEnabled(False)  # until a project folder is open
        self.tree = QTreeWidget()
        self.tree.setObjectName("conversation-list")
        set_up_columns(self.tree)
        self.tree.setRootIsDecorated(False)
        self.tree.setUniformRowHeights(True)
        self.tree.setAlternatingRowColors(True)
        self.tree.setEditTriggers(QAbstractItemView.EditTrigger.EditKeyPressed)
        self.tree.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self._fit_to_rows()
        self.empty_label = QLabel("")
        self.empty_label.setStyleSheet("color: palette(placeholder-text);")
        self.rename_button = QPushButton("Rename")
        self.delete_button = QPushButton("Delete…")
        self.export_button = QPushButton("Export…")
        self.export_button.setToolTip("Save the selected conversation as a Markdown file")
        self.edits = ConversationEdits(
            self, self.tree, repository, self._worker, rows=lambda: self.conversations,
            refresh=self.refresh, can_delete=lambda cid: self.can_delete(cid),
            secret_matchers=lambda cid: self.secret_matchers(cid),
            show_failure=self.empty_label.setText)
        for mine, edits in ((self.deleted, self.edits.deleted), (self.renamed, self.edits.renamed),
                            (self.exported, self.edits.exported),
                            (self.status_message, self.edits.status_message)):
            edits.connect(mine)

        filters = QHBoxLayout()
        filters.addWidget(self.search, 1)
        filters.addWidget(self.all_projects)
        actions = QHBoxLayout()
        actions.addWidget(self.empty_label, 1)
        for button in (self.rename_button, self.delete_button, self.export_button):
            actions.addWidget(button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(filters)
        layout.addWidget(self.tree, 1)
        layout.addLayout(actions)

        self._search_timer = QTimer(self)
        self._search_timer.setSingleShot(True)
        self._search_timer.setInterval(SEARCH_DELAY_MS)
        self._search_timer.timeout.connect(self.refresh)
        self.search.textChanged.connect(lambda _text: self._search_timer.start())
        self.search.returnPressed.connect(self.refresh)
        self.all_projects.toggled.connect(lambda _on: self.refresh())
        self.tree.itemClicked.connect(self._on_clicked)
        self.tree.itemActivated.connect(self._on_clicked)
        self.tree.currentItemChanged.connect(lambda *_: self._update_buttons())
        self.tree.customContextMenuRequested.connect(self._context_menu)
        delete_key = QShortcut(QKeySequence(QKeySequence.StandardKey.Delete), self.tree)
        delete_key.setContext(Qt.ShortcutContext.WidgetShortcut)
        delete_key.activated.connect(self.edits.request_delete)
        self.rename_button.clicked.connect(self.edits.start_rename)
        self.delete_button.clicked.connect(self.edits.request_delete)
        self.export_button.clicked.connect(self.edits.request_export)
        self._update_buttons()

    # -- what is shown --------------------------------------------------------------------

    def set_project(self, project_root: str | None) -> None:
        """Follow the open project folder (None: no folder, every conversation is listed)."""
        if project_root != self.project_root:
            self.project_root = project_root
            self.all_projects.setEnabled(project_root is not None)
            self.refresh()

    def set_current(self, conversation_id: int | None) -> None:
        """Mark the open conversation (bold, selected) without reading the database."""
        self.current_id = conversation_id
        self._mark_current()

    def refresh(self) -> None:
        """Ask for the rows again (off the GUI thread); ``listed`` says when they are shown."""
        self._search_timer.stop()
        self._generation += 1
        generation = self._generation
        query = self.search.text().strip()
        project_root = None if self.all_projects.isChecked() else self.project_root
        repository = self.repository

        def read() -> list[Conversation]:
            if query:
                return repository.search(query, limit=LIST_LIMIT, project_root=project_root)
            if project_root is not None:
                return repository.list_for_project(project_root, limit=LIST_LIMIT)
            return repository.list(limit=LIST_LIMIT)

        self._submit(read, lambda rows: self._show(generation, query, rows),
                     lambda exc: self._show_error(generation, exc))

    def selected_id(self) -> int | None:
        return selected_conversation(self.tree)

    def select(self, conversation_id: int) -> bool:
        item = row_of(self.tree, conversation_id)
        if item is not None:
            self.tree.setCurrentItem(item)
        return item is not None

    def _show(self, generation: int, query: str, rows: list[Conversation]) -> None:
        if generation != self._generation:
            return  # a newer request is on its way
        self.conversations = rows
        every_project = self.project_root is None or self.all_projects.isChecked()
        self.tree.setColumnHidden(PROJECT, not every_project)
        self.tree.blockSignals(True)
        self.tree.clear()
        now = datetime.now().astimezone()
        for conversation in rows:
            self.tree.addTopLevelItem(conversation_row(conversation, now))
        self.tree.blockSignals(False)
        self._fit_to_rows()
        self._mark_current()
        if rows:
            self.empty_label.setText("")
        elif query:
            self.empty_label.setText(f"Nothing matches “{query}”.")
        else:
            self.empty_label.setText("No conversations here yet.")
        self._update_buttons()
        self.listed.emit()

    def _fit_to_rows(self) -> None:
        """As tall as the rows (at least one, at most ``MAX_VISIBLE_ROWS``): a few
        conversations leave no empty area, many scroll."""
        tree = self.tree
        rows = min(max(tree.topLevelItemCount(), 1), MAX_VISIBLE_ROWS)
        if tree.topLevelItemCount() and tree.sizeHintForRow(0) > 0:
            self._row_height = tree.sizeHintForRow(0)  # remembered for an empty list
        row_height = self._row_height or tree.fontMetrics().height() + 4
        header = tree.header().sizeHint().height() if not tree.isHeaderHidden() else 0
        tree.setFixedHeight(header + rows * row_height + 2 * tree.frameWidth())

    def _show_error(self, generation: int, exc: BaseException) -> None:
        if generation == self._generation:
            self.empty_label.setText(f"Cannot read the conversations: {exc}")
            self.listed.emit()

    def _mark_current(self) -> None:
        self.tree.blockSignals(True)
        for item in rows_of(self.tree):
            font = QFont(item.font(TITLE))
            font.setBold(item.data(TITLE, ID_ROLE) == self.current_id)
            item.setFont(TITLE, font)
        self.tree.blockSignals(False)
        if self.current_id is not None:
            self.select(self.current_id)
        self._update_buttons()

    def _update_buttons(self) -> None:
        chosen = self.selected_id() is not None
        for button in (self.rename_button, self.delete_button, self.export_button):
            button.setEnabled(chosen)

    def _on_clicked(self, item: QTreeWidgetItem, _column: int = 0) -> None:
        conversation_id = item.data(TITLE, ID_ROLE)
        if conversation_id is not None and conversation_id != self.current_id:
            self.opened.emit(conversation_id)

    def _context_menu(self, position: Any) -> None:
        item = self.tree.itemAt(position)
        if item is None:
            return
        self.tree.setCurrentItem(item)
        menu = QMenu(self)
        menu.addAction("Open", lambda: self._on_clicked(item))
        menu.addAction("Rename", self.edits.start_rename)
        menu.addAction("Export as Markdown…", self.edits.request_export)
        menu.addSeparator()
        menu.addAction("Delete…", self.edits.request_delete)
        menu.popup(self.tree.viewport().mapToGlobal(position))

    # -- the worker -------------------------------------------------------------------------

    def _submit(self, work: Callable[[], Any], done: Callable[[Any], None],
                failed: Callable[[BaseException], None]) -> None:
        self._worker.submit(work, done, failed)
