"""Opening a stored conversation in the AI panel without building all of it: a long one shows
its last ``WINDOW_MESSAGES`` messages (from the prompt that starts their run), and earlier
ones come a page at a time, inserted above what is shown while it stays in view, when the
person scrolls to the very top or clicks "Show earlier messages".

Every message is its own rich-text widget and a tool card costs milliseconds to build, so
widgets are built newest first, a run at a time, for about ``BATCH_MS`` per turn of the event
loop: the end of the conversation is on screen after the first batch and the GUI never waits
for the rest. A conversation of up to ``WINDOW_MESSAGES`` messages is built at once, as
before.

Everything that counts messages works on the part shown: the transcript's ``hidden_prompts``
says how many prompts are stored before it (edit and resend cuts at the right stored prompt);
"Restore to before this message" sees what is loaded, which is always the end of the
conversation. Find searches the part not shown in ``stored`` (find_in_store) and, stepping to a
match there, has the pager ``reveal`` down to its message."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QTimer, Signal

from app.core.agent.forking import prompt_rows
from app.ui.ai_panel.paging import BATCH_MS, PAGE_MESSAGES, WINDOW_MESSAGES
from app.ui.widgets.conversation_replay import StoredConversation, replay_messages

if TYPE_CHECKING:
    import asyncio

    from app.core.services import Services
    from app.ui.widgets.tool_card import ToolCard
    from app.ui.widgets.transcript_view import RunFooter, Transcript

log = logging.getLogger(__name__)


Built = Callable[[dict[str, "ToolCard"], list["RunFooter"]], None]


class ConversationPager(QObject):
    """Builds ``stored`` into ``transcript`` run by run, from the end (see the module)."""

    settled = Signal()  # the window or page asked for is built

    def __init__(self, services: Services, stored: StoredConversation, transcript: Transcript,
                 on_built: Built, *, window: int = WINDOW_MESSAGES, page: int = PAGE_MESSAGES,
                 batch_ms: float = BATCH_MS) -> None:
        super().__init__(transcript)
        self.services = services
        self.stored = stored
        self.transcript = transcript
        self._on_built = on_built
        self._window, self._page, self._batch_ms = window, page, batch_ms
        self._starts = stored.run_starts()
        prompts = {id(m) for m in prompt_rows(stored.messages)}
        self._prompt_positions = [i for i, m in enumerate(stored.messages) if id(m) in prompts]
        self._next = len(self._starts)  # the first run built (none yet)
        self._goal = self._next  # build runs down to this one
        self._cancelled = False
        self._scheduled = False
        self.tasks: set[asyncio.Future[None]] = set()  # loading the shown cards' changes
        transcript.cleared.connect(self.cancel)
        transcript.earlier_requested.connect(self.load_earlier)

    @property
    def busy(self) -> bool:
        return self._next > self._goal

    @property
    def first_shown(self) -> int:
        """The index of the first stored message shown (``len(messages)``: none yet)."""
        if self._next >= len(self._starts):
            return len(self.stored.messages)
        return self._starts[self._next]

    def start(self) -> None:
        """Show the conversation's end: at once when it is short, else its newest batch now
        and the rest of the window in the next turns of the event loop."""
        total = len(self.stored.messages)
        self._goal = self._run_reaching(total - self._window)
        self._step(unlimited=total <= self._window)

    @property
    def cancelled(self) -> bool:
        return self._cancelled

    def reveal(self, message: int) -> None:
        """Build down to the run holding stored message ``message`` (Find stepping to a match
        not shown yet), page by page as ``load_earlier`` does; ``settled`` when it is shown."""
        if self._cancelled or message >= self.first_shown:
            return
        self._goal = min(self._goal, self._run_reaching(message))
        self.transcript.earlier_button.setEnabled(False)
        self._schedule()

    def load_earlier(self) -> None:
        """A page more above what is shown (nothing while one is being built)."""
        if self._cancelled or self.busy or self._next == 0:
            return
        self._goal = self._run_reaching(self.first_shown - self._page)
        self.transcript.earlier_button.setEnabled(False)
        self._schedule()

    def cancel(self) -> None:
        """The transcript was cleared: build nothing more into it."""
        if self._cancelled:
            return
        self._cancelled = True
        self._goal = self._next
        for task in list(self.tasks):
            task.cancel()
        self.deleteLater()

    def _prompts_before(self, message: int) -> int:
        """How many prompts are stored before stored message ``message``."""
        return sum(1 for i in self._prompt_positions if i < message)

    def _run_reaching(self, message: int) -> int:
        """The last run starting at or before stored message ``message``."""
        found = 0
        for i, start in enumerate(self._starts):
            if start <= message:
                found = i
        return found

    def _schedule(self) -> None:
        if not self._scheduled:
            self._scheduled = True
            QTimer.singleShot(0, self._scheduled_step)

    def _scheduled_step(self) -> None:
        self._scheduled = False
        self._step()

    def _step(self, unlimited: bool = False) -> None:
        """Build runs from the end down towards the goal, for about ``batch_ms``."""
        if self._cancelled:
            return
        transcript = self.transcript
        deadline = time.perf_counter() + self._batch_ms / 1000
        cards: dict[str, ToolCard] = {}
        footers: list[RunFooter] = []
        first_run = True
        while self.busy and (unlimited or first_run or time.perf_counter() < deadline):
            first_run = False
            run = self._next - 1
            stop = self._starts[run + 1] if run + 1 < len(self._starts) \
                else len(self.stored.messages)
            items = transcript.items()
            transcript.hold_position()
            built_cards, built_footers = replay_messages(
                self.services, self.stored, self._starts[run], stop, transcript,
                above=items[0] if items else None)
            cards.update(built_cards)
            footers.extend(built_footers)
            self._next = run
        first = self.first_shown
        transcript.hidden_prompts = self._prompts_before(first)
        transcript.show_earlier(first)
        transcript.earlier_button.setEnabled(True)
        try:
            self._on_built(cards, footers)
        except Exception:  # the cards stay shown; only their actions may be missing
            log.exception("connecting the replayed cards failed")
        if self.busy:
            self._schedule()
        else:
            self.settled.emit()


def live_pager(transcript: Transcript) -> ConversationPager | None:
    """The pager building into ``transcript`` (None: nothing opened from the store since it
    was last cleared)."""
    for pager in transcript.findChildren(ConversationPager):
        if not pager.cancelled:
            return pager
    return None

