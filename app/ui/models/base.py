"""What the flat table models share: a list of rows and named column headers."""

from __future__ import annotations

from typing import Any, ClassVar, Generic, TypeVar

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt

Index = QModelIndex | QPersistentModelIndex
Row = TypeVar("Row")


class RowsTableModel(QAbstractTableModel, Generic[Row]):
    """Subclasses set ``HEADERS`` and keep their rows in ``self._rows``."""

    HEADERS: ClassVar[tuple[str, ...]] = ()
    _rows: list[Row]

    def rowCount(self, parent: Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.HEADERS)

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal \
                and 0 <= section < len(self.HEADERS):
            return self.HEADERS[section]
        return None

    def row_for(self, index: Index) -> Row | None:
        """The row behind a valid index, None otherwise."""
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        return self._rows[index.row()]
