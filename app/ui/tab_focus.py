"""Tab and Shift+Tab move focus, everywhere: Qt's defaults make an editable text box type a
tab character and a table walk its cells with Tab, so keyboard focus never leaves them. Applied
to a widget tree (a window, a dialog) after it is built; Ctrl+Tab is left to tab widgets."""

from __future__ import annotations

from PySide6.QtWidgets import QAbstractItemView, QPlainTextEdit, QTextEdit, QWidget


def tab_moves_focus(root: QWidget) -> QWidget:
    """Make Tab leave every text box and table under ``root`` (itself included); returns
    ``root``. The arrow keys still move inside them."""
    for widget in (root, *root.findChildren(QWidget)):
        if isinstance(widget, QPlainTextEdit | QTextEdit):
            widget.setTabChangesFocus(True)
        elif isinstance(widget, QAbstractItemView):
            widget.setTabKeyNavigation(False)
    return root
