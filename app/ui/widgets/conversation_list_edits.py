"""What the conversation list does to a conversation: rename it in place, delete it (after
asking) and export it as Markdown (to a file the person chooses).

``ConversationEdits`` is the list's collaborator (app.ui.widgets.conversation_list), apart from
listing and searching: it changes conversations, never what the list shows (it asks for a
refresh). The confirmation box and the file dialog open without blocking; every write runs on
the list's database worker thread.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QFileDialog, QMessageBox, QTreeWidget, QTreeWidgetItem, QWidget

from app.core.store.conversations import Conversation, ConversationRepository
from app.ui.widgets.conversation_rows import (
    ID_ROLE,
    TITLE,
    conversation_title,
    row_of,
    selected_conversation,
)

if TYPE_CHECKING:
    from app.core.permissions.egress import SecretMatcher
    from app.ui.widgets.db_worker import DatabaseWorker


class ConversationEdits(QObject):
    """Renames, deletes and exports the conversations shown in ``tree`` (``rows``: the
    conversations its items show). ``owner``: the widget the boxes and dialogs are shown
    over. ``can_delete`` and ``secret_matchers`` are asked when a delete or an export
    happens; ``show_failure`` puts what went wrong where the list says what it shows."""

    deleted = Signal(int)
    renamed = Signal(int, str)
    exported = Signal(str)
    status_message = Signal(str)

    def __init__(self, owner: QWidget, tree: QTreeWidget, repository: ConversationRepository,
                 worker: DatabaseWorker, *, rows: Callable[[], list[Conversation]],
                 refresh: Callable[[], None], can_delete: Callable[[int], bool],
                 secret_matchers: Callable[[int], Sequence[SecretMatcher]],
                 show_failure: Callable[[str], None]) -> None:
        super().__init__(owner)
        self._owner = owner
        self._tree = tree
        self._repository = repository
        self._worker = worker
        self._rows = rows
        self._refresh = refresh
        self._can_delete = can_delete
        self._secret_matchers = secret_matchers
        self._show_failure = show_failure
        self.confirm_box: QMessageBox | None = None
        self.export_dialog: QFileDialog | None = None
        self.export_warning: QMessageBox | None = None
        tree.itemChanged.connect(self._on_item_changed)

    def _conversation(self, conversation_id: int) -> Conversation | None:
        return next((c for c in self._rows() if c.id == conversation_id), None)

    # -- rename -----------------------------------------------------------------------------

    def start_rename(self) -> None:
        """Edit the selected title in place (Enter saves, Escape keeps the old one)."""
        item = self._tree.currentItem()
        if item is not None:
            self._tree.editItem(item, TITLE)

    def _on_item_changed(self, item: QTreeWidgetItem, column: int) -> None:
        if column != TITLE:
            return
        conversation_id = item.data(TITLE, ID_ROLE)
        old = self._conversation(conversation_id)
        title = " ".join(item.text(TITLE).split())
        if old is None or not title or title == conversation_title(old):
            self._tree.blockSignals(True)
            item.setText(TITLE, conversation_title(old) if old is not None else "")
            self._tree.blockSignals(False)
            return
        self.rename(conversation_id, title)

    def rename(self, conversation_id: int, title: str) -> None:
        repository = self._repository

        def done(_result: object) -> None:
            self.renamed.emit(conversation_id, title)
            self._refresh()

        self._worker.submit(lambda: repository.rename(conversation_id, title), done,
                     lambda exc: self._failed("Renaming failed", exc))

    # -- delete -----------------------------------------------------------------------------

    def request_delete(self) -> None:
        """Ask first (a window-modal box, answered without blocking), then delete."""
        conversation_id = selected_conversation(self._tree)
        if conversation_id is None:
            return
        if not self._can_delete(conversation_id):
            self.status_message.emit("Stop the run before deleting its conversation.")
            return
        item = row_of(self._tree, conversation_id)
        title = item.text(TITLE) if item is not None else f"Conversation {conversation_id}"
        box = QMessageBox(QMessageBox.Icon.Question, "Delete conversation",
                          f"Delete “{title}” and all its messages? This cannot be undone.",
                          QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
                          self._owner)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        box.button(QMessageBox.StandardButton.Yes).setText("Delete")
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.confirm_box = box

        def answered(result: int) -> None:
            self.confirm_box = None
            if result == QMessageBox.StandardButton.Yes:
                self.delete(conversation_id)

        box.finished.connect(answered)
        box.open()

    def delete(self, conversation_id: int) -> None:
        repository = self._repository

        def done(_result: object) -> None:
            self.deleted.emit(conversation_id)
            self._refresh()

        self._worker.submit(lambda: repository.delete(conversation_id), done,
                     lambda exc: self._failed("Deleting failed", exc))

    # -- export -----------------------------------------------------------------------------

    def request_export(self) -> None:
        """Choose a file (a dialog opened without blocking), then write the Markdown there."""
        conversation_id = selected_conversation(self._tree)
        if conversation_id is None:
            return
        from app.core.conversation_export import export_folder, suggested_filename

        conversation = self._conversation(conversation_id)
        if conversation is None:
            return
        folder = export_folder()  # Documents or home: never the project folder
        dialog = QFileDialog(self._owner, "Export conversation as Markdown",
                             str(folder / suggested_filename(conversation)),
                             "Markdown (*.md);;All files (*)")
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        dialog.setDefaultSuffix("md")
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.export_dialog = dialog
        dialog.fileSelected.connect(lambda path: self.export(conversation_id, Path(path)))
        dialog.finished.connect(lambda _result: setattr(self, "export_dialog", None))
        dialog.open()

    def export(self, conversation_id: int, path: Path) -> None:
        repository = self._repository

        matchers = list(self._secret_matchers(conversation_id))

        def write() -> tuple[str, int]:
            from app.core.conversation_export import redacted_markdown

            text, redacted = redacted_markdown(repository.get(conversation_id),
                                               repository.messages(conversation_id), matchers)
            path.write_text(text, encoding="utf-8")
            return str(path), redacted

        def done(result: tuple[str, int]) -> None:
            written, redacted = result
            self.status_message.emit(f"Exported to {written}")
            self.exported.emit(written)
            if redacted:
                self.export_warning = QMessageBox(
                    QMessageBox.Icon.Warning, "Secrets redacted",
                    f"{redacted} secret{'s' if redacted != 1 else ''} (API keys, passwords, "
                    f"values read from sensitive files) {'were' if redacted != 1 else 'was'} "
                    f"replaced by [secret redacted] in {written}.", QMessageBox.StandardButton.Ok,
                    self._owner)
                self.export_warning.open()

        self._worker.submit(write, done, lambda exc: self._failed("Export failed", exc))

    def _failed(self, what: str, exc: BaseException) -> None:
        message = f"{what}: {exc}"
        self._show_failure(message)
        self.status_message.emit(message)
