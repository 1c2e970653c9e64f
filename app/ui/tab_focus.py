"""Tab and Shift+Tab move focus, everywhere: Qt's defaults make an editable text box type a
tab character and a table walk its cells with Tab, so keyboard focus never leaves them. Applied
to a widget tree (a window, a dialog) after it is built; Ctrl+Tab is left to tab widgets."""

from __future__ import annotations

from PySide6.QtWidgets import QAbstractItemView, QPlainTextEdit, QTextEdit, QWidget


def tab_moves_focus(root: QWidget) -> QWidget:
    """Make Tab leave every text box and table under ``root`` (itself included); returns
    ``root``. The arrow keys still move inside them."""
    # Qt filters the children by class itself: only the matches get Python wrappers (asking
    # for every QWidget wrapped hundreds of them, several ms when the window becomes ready).
    for kind in (QPlainTextEdit, QTextEdit):
        for edit in (root, *root.findChildren(kind)):
            if isinstance(edit, kind):
                edit.setTabChangesFocus(True)
    for view in (root, *root.findChildren(QAbstractItemView)):
        if isinstance(view, QAbstractItemView):
            view.setTabKeyNavigation(False)
    return root
