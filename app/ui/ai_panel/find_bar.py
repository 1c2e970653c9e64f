"""Find in the transcript (Edit → Find, Ctrl+F): a small bar above the conversation that
highlights every match in the message views, jumps to the current one ("3 of 12"; Enter or F3
for the next, Shift+Enter or Shift+F3 for the previous) and closes with Esc, clearing the
highlights.

The views built so far are searched on the GUI thread as the person types (their documents
are at hand, and a conversation shows at most a window of them plus what was paged in). A long
stored conversation shows only its end (conversation_pager): the part not built yet is searched
in the stored messages off the GUI thread (find_in_store), a moment after typing stops; a newer
query cancels it and a stale answer is dropped. Until it answers the count says "in the loaded
messages". Matches are ordered top to bottom over the whole conversation; stepping to one not
built yet has the pager build down to its message, then scrolls to it and highlights it. The
live part of a conversation (what streams in) is always in the views."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QKeySequence, QShortcut, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QTextEdit,
    QToolButton,
    QWidget,
)

from app.ui.ai_panel.conversation_pager import ConversationPager, live_pager
from app.ui.ai_panel.find_in_store import ShownText, count_matches, shown_texts
from app.ui.controllers.checkpoints import loop_running
from app.ui.tones import Tone, tone
from app.ui.widgets.transcript_view import MessageView, Transcript

log = logging.getLogger(__name__)

MAX_MATCHES = 2000
SEARCH_DELAY_MS = 150  # typing pauses this long before the stored messages are searched


@dataclass(frozen=True)
class EarlierMatch:
    """A match in a stored message not built into the transcript yet."""

    unit: int  # which shown text of the stored conversation (find_in_store.shown_texts)
    occurrence: int  # the how-manyth match in it
    message: int  # its stored message: the pager reveals down to it


ViewMatch = tuple[MessageView, QTextCursor]
Match = ViewMatch | EarlierMatch


@dataclass(frozen=True)
class _StoredResult:
    pager: ConversationPager
    texts: list[ShownText]
    counts: list[int]


def _selection(cursor: QTextCursor, name: Tone) -> QTextEdit.ExtraSelection:
    selection = QTextEdit.ExtraSelection()
    selection.cursor = cursor
    fmt = QTextCharFormat()
    colours = tone(name)
    fmt.setBackground(colours.surface)
    fmt.setForeground(colours.on_surface)  # the palette's text may not read on the mark
    selection.format = fmt
    return selection


class FindBar(QFrame):
    """Searches the conversation shown in ``transcript``; hidden until ``open_bar``."""

    closed = Signal()

    def __init__(self, transcript: Transcript, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("find-bar")
        self.transcript = transcript
        self.field = QLineEdit()
        self.field.setObjectName("find-field")
        self.field.setPlaceholderText("Find in the conversation")
        self.field.setClearButtonEnabled(True)
        self.count_label = QLabel("")
        self.count_label.setObjectName("find-count")
        self.count_label.setStyleSheet("color: palette(placeholder-text);")
        self.previous_button = QToolButton()
        self.previous_button.setText("↑")
        self.previous_button.setToolTip("Previous match (Shift+Enter)")
        self.next_button = QToolButton()
        self.next_button.setText("↓")
        self.next_button.setToolTip("Next match (Enter)")
        close = QToolButton()
        close.setText("✕")
        close.setToolTip("Close (Esc)")
        close.setAutoRaise(True)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(QLabel("Find:"))
        row.addWidget(self.field, 1)
        row.addWidget(self.count_label)
        row.addWidget(self.previous_button)
        row.addWidget(self.next_button)
        row.addWidget(close)
        self.matches: list[Match] = []
        self.current = -1
        self._highlighted: set[MessageView] = set()
        # The stored search: the query's generation (a newer query drops older answers), its
        # task, its answer, and the shown texts per pager (rendered once per conversation).
        self._generation = 0
        self._task: asyncio.Future[None] | None = None
        self._stored: _StoredResult | None = None
        self._texts: tuple[ConversationPager, asyncio.Future[list[ShownText]]] | None = None
        self._revealing: EarlierMatch | None = None  # waiting for the pager to build it
        self._watched: ConversationPager | None = None  # whose ``settled`` is connected
        self._unshown = False  # the current match was picked but not scrolled to
        self._follow: ViewMatch | None = None  # kept in view while the layout settles
        self._delay = QTimer(self)
        self._delay.setSingleShot(True)
        self._delay.setInterval(SEARCH_DELAY_MS)
        self._delay.timeout.connect(self._search_stored)
        scroll = transcript.verticalScrollBar()
        # Bound methods, not lambdas: Qt disconnects them when the bar goes.
        scroll.rangeChanged.connect(self._on_range_changed)
        scroll.actionTriggered.connect(self._on_scrolled)
        self.field.textChanged.connect(lambda _text: self.search())
        self.field.returnPressed.connect(self.next_match)
        self.next_button.clicked.connect(self.next_match)
        self.previous_button.clicked.connect(self.previous_match)
        close.clicked.connect(self.close_bar)
        for keys, slot in ((QKeySequence(Qt.Key.Key_Escape), self.close_bar),
                           (QKeySequence("Shift+Return"), self.previous_match),
                           (QKeySequence("Shift+Enter"), self.previous_match),
                           (QKeySequence(QKeySequence.StandardKey.FindNext), self.next_match),
                           (QKeySequence(QKeySequence.StandardKey.FindPrevious),
                            self.previous_match)):
            shortcut = QShortcut(keys, self)
            shortcut.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            shortcut.activated.connect(slot)
        self.hide()

    # -- opening and closing --------------------------------------------------------------

    def open_bar(self) -> None:
        """Show the bar with its text selected (a second Ctrl+F re-searches, e.g. after new
        messages arrived)."""
        self.show()
        self.field.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.field.selectAll()
        self.search()

    def close_bar(self) -> None:
        self._forget_stored()
        self._clear_highlights()
        self.matches, self.current = [], -1
        self.hide()
        self.closed.emit()

    # -- searching ------------------------------------------------------------------------

    def search(self) -> None:
        """Find every match of the field's text (case-insensitive) in the views built, highlight
        them all and jump to the first one; search the part not built yet a moment later."""
        self._forget_stored()
        self._clear_highlights()
        text = self.field.text()
        self.matches, self.current = list(self._view_matches(text)), -1
        if self.matches:
            self._go_to(0)
        else:
            self._show_count()
        pager = live_pager(self.transcript)
        if text and pager is not None and pager.first_shown > 0 and loop_running():
            self._delay.start()

    def next_match(self) -> None:
        self._step(+1)

    def previous_match(self) -> None:
        self._step(-1)

    def _step(self, direction: int) -> None:
        if self._stale():
            self.search()
            return
        if not self.matches:
            return
        if self._unshown:  # first show the match the count points at
            self._go_to(self.current)
        else:
            self._go_to((self.current + direction) % len(self.matches))

    def _stale(self) -> bool:
        """A view a match was in is gone, or the stored conversation searched is no longer
        the one shown (another conversation was opened meanwhile)."""
        if self._stored is not None and self._stored.pager is not live_pager(self.transcript):
            return True
        views = set(self._views())
        return any(not isinstance(m, EarlierMatch) and m[0] not in views for m in self.matches)

    def _views(self) -> list[MessageView]:
        return [w for w in self.transcript.items() if isinstance(w, MessageView)]

    def _view_matches(self, text: str, limit: int = MAX_MATCHES) -> list[ViewMatch]:
        found: list[ViewMatch] = []
        if not text:
            return found
        for view in self._views():
            document = view.document()
            cursor = document.find(text)
            while not cursor.isNull() and len(found) < limit:
                found.append((view, cursor))
                cursor = document.find(text, cursor)
        return found

    # -- the part not built yet -----------------------------------------------------------

    def _forget_stored(self) -> None:
        self._generation += 1
        self._delay.stop()
        if self._task is not None:
            self._task.cancel()
        self._task = None
        self._stored = None
        self._revealing = None
        self._unshown = False
        self._follow = None

    def _search_stored(self) -> None:
        pager = live_pager(self.transcript)
        query = self.field.text()
        if pager is None or not query or not loop_running():
            return
        self._task = asyncio.ensure_future(self._run_stored(pager, query, self._generation))

    async def _run_stored(self, pager: ConversationPager, query: str, generation: int) -> None:
        try:
            # Shielded: a newer query cancels this search, not the rendering it waits for.
            texts = await asyncio.shield(self._texts_of(pager))
            counts = await asyncio.to_thread(count_matches, texts, query)
        except Exception:  # the loaded part's matches stay; the count says they are partial
            log.exception("searching the stored conversation failed")
            if self._texts is not None and self._texts[1].done():
                self._texts = None  # rendered again by the next search
            return
        if generation != self._generation or pager.cancelled:
            return  # a newer query, or another conversation, came meanwhile
        self._task = None
        self._stored = _StoredResult(pager, texts, counts)
        if pager is not self._watched:
            self._watched = pager
            pager.settled.connect(self._on_settled)
        current = self.matches[self.current] if 0 <= self.current < len(self.matches) else None
        self._assemble(current)

    def _texts_of(self, pager: ConversationPager) -> asyncio.Future[list[ShownText]]:
        if self._texts is None or self._texts[0] is not pager:
            future = asyncio.ensure_future(asyncio.to_thread(shown_texts, pager.stored))
            self._texts = (pager, future)
        return self._texts[1]

    def _assemble(self, keep: Match | None) -> None:
        """The matches over the whole conversation, top to bottom: those in messages not
        built yet, then the views'. ``keep`` stays the current match (where it is now)."""
        stored = self._stored
        assert stored is not None
        first_shown = stored.pager.first_shown
        built_from = next((i for i, shown in enumerate(stored.texts)
                           if shown.message >= first_shown), len(stored.texts))
        views = self._view_matches(self.field.text())
        earlier = [EarlierMatch(unit, k, stored.texts[unit].message)
                   for unit in range(built_from) for k in range(stored.counts[unit])]
        room = max(0, MAX_MATCHES - len(views))
        earlier = earlier[len(earlier) - room:] if len(earlier) > room else earlier
        self._clear_highlights()
        self.matches = [*earlier, *views]
        index = self._index_of(keep, built_from) if keep is not None else None
        if index is not None:
            self._go_to(index)
        elif earlier:  # none was current: point at the nearest above, shown on Enter
            self.current, self._unshown = len(earlier) - 1, True
            self._show_count()
        elif views:
            self._go_to(0)
        else:
            self.current = -1
            self._show_count()

    def _index_of(self, match: Match, built_from: int) -> int | None:
        """Where ``match`` is in ``self.matches`` now (a match in a message built since is
        found in its view: views are built from the shown texts in order)."""
        if isinstance(match, EarlierMatch):
            if match in self.matches:
                return self.matches.index(match)
            views = self._views()
            position = match.unit - built_from
            if not 0 <= position < len(views):
                return None
            view, occurrence = views[position], match.occurrence
        else:
            view, cursor = match
            occurrence = -1
        in_view = [i for i, m in enumerate(self.matches)
                   if not isinstance(m, EarlierMatch) and m[0] is view]
        if not in_view:
            return None
        if occurrence < 0:  # the same match in the same view
            found = next((i for i in in_view if self.matches[i][1] == cursor),  # type: ignore[index]
                         None)
            return found if found is not None else in_view[0]
        return in_view[min(occurrence, len(in_view) - 1)]

    def _reveal(self, match: EarlierMatch) -> None:
        stored = self._stored
        if stored is None or stored.pager.cancelled:
            self.search()
            return
        if match.message >= stored.pager.first_shown:  # built since (scrolled up)
            self._assemble(match)
            return
        self._revealing = match
        self._show_count()
        stored.pager.reveal(match.message)

    def _on_settled(self) -> None:
        match, stored = self._revealing, self._stored
        if match is None or stored is None or match.message < stored.pager.first_shown:
            return
        self._revealing = None
        self._assemble(match)

    # -- showing --------------------------------------------------------------------------

    def _go_to(self, index: int) -> None:
        self.current, self._unshown = index, False
        match = self.matches[index]
        if isinstance(match, EarlierMatch):
            self._reveal(match)
            return
        by_view: dict[MessageView, list[QTextEdit.ExtraSelection]] = {}
        for i, m in enumerate(self.matches):
            if not isinstance(m, EarlierMatch):
                name = Tone.CURRENT_MATCH if i == index else Tone.MATCH
                by_view.setdefault(m[0], []).append(_selection(m[1], name))
        for view, selections in by_view.items():
            view.setExtraSelections(selections)
        self._highlighted = set(by_view)
        self._follow = match
        self._keep_in_view()
        self._show_count()

    def _on_range_changed(self, _low: int, _high: int) -> None:
        self._keep_in_view()

    def _on_scrolled(self, _action: int) -> None:
        self._follow = None  # the person scrolls: the view is theirs again

    def _keep_in_view(self) -> None:
        """Scroll so the current match itself, not only its message, shows; again whenever
        the transcript's height changes (views just built are still being laid out) until the
        person scrolls."""
        if self._follow is None:
            return
        view, cursor = self._follow
        body = self.transcript.widget()
        if body is None or view not in self.transcript.items():
            self._follow = None
            return
        point = view.viewport().mapTo(body, view.cursorRect(cursor).center())
        self.transcript.ensureVisible(point.x(), point.y(), 20, 60)

    def _show_count(self) -> None:
        # Until the part not built yet is searched, the count is the loaded messages'.
        partial = " in the loaded messages" if self._stored is None and \
            self.transcript.earlier_button.isVisible() else ""
        if not self.field.text():
            self.count_label.setText("")
        elif not self.matches:
            self.count_label.setText(f"no matches{partial}")
        else:
            more = "+" if len(self.matches) >= MAX_MATCHES else ""
            loading = " (loading earlier messages…)" if self._revealing is not None else ""
            self.count_label.setText(
                f"{self.current + 1} of {len(self.matches)}{more}{partial}{loading}")

    def _clear_highlights(self) -> None:
        live = set(self._views())
        for view in self._highlighted:
            if view in live:
                view.setExtraSelections([])
        self._highlighted = set()
