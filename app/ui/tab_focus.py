"""Tab and Shift+Tab move focus, everywhere: Qt's defaults make an editable text box type a
tab character and a table walk its cells with Tab, so keyboard focus never leaves them. Applied
to a widget tree (a window, a dialog) after it is built; Ctrl+Tab is left to tab widgets."""

from __future__ import annotations

from PySide6.QtCore import Qt
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


def join_chain_after(anchor: QWidget | None, widget: QWidget) -> None:
    """Put ``widget`` and its descendants right after ``anchor`` (or the focusable widget
    before it) in the Tab chain, keeping their own order. A widget made later joins the end
    of its window's chain wherever it is shown (a card in the transcript would come after the
    tools panel); this keeps Tab in reading order."""
    no_focus = Qt.FocusPolicy.NoFocus
    previous = anchor
    while previous is not None and previous.focusPolicy() == no_focus \
            and not previous.isWindow():
        previous = previous.previousInFocusChain()  # setTabOrder ignores a NoFocus first
    if previous is None or previous.window() is not widget.window():
        return  # not placed in a window yet: nothing to order
    for node in (widget, *widget.findChildren(QWidget)):
        if node.focusPolicy() != no_focus and not node.isWindow():
            QWidget.setTabOrder(previous, node)
            previous = node


def chain_end(container: QWidget) -> QWidget:
    """The last of ``container``'s descendants in the Tab chain (``container`` when none)."""
    node = container
    following = node.nextInFocusChain()
    while following is not None and following is not container \
            and container.isAncestorOf(following):
        node = following
        following = node.nextInFocusChain()
    return node
