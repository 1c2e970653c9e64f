"""The queue that shows approval dialogs one at a time, and its one teardown path.

Each request is a future the session awaits. It is resolved in exactly one of three ways:

- the person answers its dialog (Approve, Decline, Escape or the close button; every exit but
  Approve declines) → ``_on_finished``;
- the awaiting task is cancelled → ``_forget`` drops it (a cancelled future needs no answer);
- ``abort(reason)`` → the current dialog and everything queued are declined with ``reason``.

While several requests wait, the shown dialog says which one it is ("1 of 2"): those answered
since the queue was last empty, plus the waiting ones, make the count.

``abort`` is what Stop, closing the window and quitting all call. It is idempotent and safe to
re-enter: it takes every pending request out of the queue *before* resolving any of them or
closing the dialog, so a second abort, or a dialog's ``finished`` signal fired by its own
closing, finds nothing left to decline and no next dialog to show.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QWidget

if TYPE_CHECKING:
    import asyncio  # imported where used: the ready window loads before the event loop

    from app.core.agent.events import ApprovalRequest, ApprovalResponse
    from app.core.permissions.rules import PermissionRule
    from app.core.permissions.service import ToolPermissionService

    # Imported by the first request, not at start-up: the window is ready without it (the app
    # loads it in a worker thread once the window is ready; see
    # app.ui.deferred_imports.DEFERRED_UI_MODULES).
    from app.ui.dialogs.approval import ApprovalDialog

DEFAULT_ABORT_REASON = "The run was stopped."
log = logging.getLogger(__name__)

# Keeps the rules of "remember in this conversation only" (see ``remember_in_conversation``).
ConversationRemember = Callable[[tuple["PermissionRule", ...]], None]


def remember_in_conversation(permissions: ToolPermissionService,
                             conversation_id: Callable[[], int | None],
                             say: Callable[[str], object] = lambda _text: None
                             ) -> ConversationRemember:
    """The queue's ``remember_for_conversation``: adds the rules to the permission service's
    memory for the current conversation (``conversation_id()``), never to the rules table;
    ``say`` gets a status line."""

    def remember(rules: tuple[PermissionRule, ...]) -> None:
        current = conversation_id()
        if current is None:
            say("Not remembered: this conversation is not saved yet.")
            return
        permissions.conversation_rules.remember(current, rules)
        say(f"Remembered for this conversation: {rules[0].summary()}" +
            (f" (and {len(rules) - 1} more)" if len(rules) > 1 else ""))

    return remember


@dataclass
class _Pending:
    request: ApprovalRequest
    future: asyncio.Future[ApprovalResponse]

    def resolve(self, response: ApprovalResponse) -> None:
        # The awaiting task may have been cancelled meanwhile; its future then stays cancelled.
        if not self.future.done():
            self.future.set_result(response)


class ApprovalQueue(QObject):
    """Serialises approval requests: one dialog at a time, the rest wait their turn."""

    dialog_shown = Signal(object)  # ApprovalDialog
    pending_changed = Signal(int)

    def __init__(self, parent_widget: QWidget,
                 project_root_getter: Callable[[], Path | None] = lambda: None,
                 sandbox_getter: Callable[[ApprovalRequest], dict[str, Any]] = lambda _r: {},
                 ) -> None:
        super().__init__(parent_widget)
        self._parent_widget = parent_widget
        self._project_root = project_root_getter
        # The dialog's sandbox line: the app's sandbox and the tool's settings for a request.
        self._sandbox_for = sandbox_getter
        self._waiting: deque[_Pending] = deque()
        self._current: tuple[_Pending, ApprovalDialog] | None = None
        # Requests answered since the queue was last empty: the shown dialog is the next one
        # of this batch ("2 of 3").
        self._answered = 0
        # Set by the panel that owns the conversation: keeps "remember in this conversation
        # only" rules. None: the dialog does not offer that choice.
        self.remember_for_conversation: ConversationRemember | None = None
        # The request whose answer is being remembered (its conversation keeps the rules).
        self.answering: ApprovalRequest | None = None

    @property
    def current_dialog(self) -> ApprovalDialog | None:
        return self._current[1] if self._current else None

    def pending_count(self) -> int:
        return len(self._waiting) + (1 if self._current else 0)

    async def request(self, request: ApprovalRequest) -> ApprovalResponse:
        """The ``Approver`` for an agent session."""
        import asyncio

        future: asyncio.Future[ApprovalResponse] = asyncio.get_running_loop().create_future()
        self._waiting.append(_Pending(request, future))
        self.pending_changed.emit(self.pending_count())
        self._show_next()
        self._show_position()
        try:
            return await future
        except asyncio.CancelledError:
            self._forget(future)
            raise

    def abort(self, reason: str = DEFAULT_ABORT_REASON,
              only: Callable[[ApprovalRequest], bool] | None = None) -> None:
        """Decline the current dialog and every queued request with ``reason``; none of them
        runs. Calling it again, or from inside itself, does nothing more. ``only``: just the
        requests it accepts (one conversation's Stop), the others keep waiting."""
        if only is not None:
            self._abort_some(reason, only)
            return
        current, self._current = self._current, None
        waiting, self._waiting = self._waiting, deque()
        self._answered = 0
        pending = ([current[0]] if current is not None else []) + list(waiting)
        if not pending:
            return
        from app.core.agent.events import ApprovalResponse  # loaded by the request itself

        declined = ApprovalResponse.decline(reason)
        for item in pending:
            item.resolve(declined)
        if current is not None:
            self._dismiss(current[1])
        self.pending_changed.emit(0)

    def _abort_some(self, reason: str, only: Callable[[ApprovalRequest], bool]) -> None:
        from app.core.agent.events import ApprovalResponse  # loaded by the request itself

        declined = ApprovalResponse.decline(reason)
        for item in self._drop(lambda p: only(p.request)):
            item.resolve(declined)

    def _forget(self, future: asyncio.Future[ApprovalResponse]) -> None:
        """The awaiting task was cancelled: drop its request, close its dialog if shown."""
        self._drop(lambda p: p.future is future)

    def _drop(self, which: Callable[[_Pending], bool]) -> list[_Pending]:
        """Take the requests ``which`` accepts out of the queue (closing the shown one's
        dialog, showing the next); they are returned unanswered."""
        dropped = [p for p in self._waiting if which(p)]
        if not dropped and (self._current is None or not which(self._current[0])):
            return []  # nothing to drop: nothing changes (and nothing is told, at quit too)
        self._waiting = deque(p for p in self._waiting if not which(p))
        if self._current is not None and which(self._current[0]):
            pending, dialog = self._current
            self._current = None
            dropped.append(pending)
            self._dismiss(dialog)
            self._show_next()
        if self.pending_count() == 0:
            self._answered = 0
        self._show_position()
        self.pending_changed.emit(self.pending_count())
        return dropped

    def _dismiss(self, dialog: ApprovalDialog) -> None:
        """Close a dialog that is no longer current. Its ``finished`` signal still fires, but
        ``_on_finished`` ignores a dialog that is not the current one."""
        dialog.reject()
        dialog.deleteLater()

    def _show_next(self) -> None:
        if self._current is not None or not self._waiting:
            return
        from app.ui.dialogs.approval import ApprovalDialog

        pending = self._waiting.popleft()
        dialog = ApprovalDialog(pending.request, self._parent_widget, self._project_root(),
                                **self._sandbox_for(pending.request))
        self._current = (pending, dialog)
        dialog.set_conversation_scope_available(self.remember_for_conversation is not None)
        dialog.finished.connect(lambda _code, d=dialog: self._on_finished(d))
        self._show_position()
        # show(), not open(): open() makes it window-modal, and a blocked window's Stop,
        # Ctrl+. and close button do nothing (they must decline it).
        dialog.show()
        dialog.raise_()
        dialog.activateWindow()
        dialog.reason.setFocus()  # typing goes to the reason; approving takes a deliberate click
        self.dialog_shown.emit(dialog)

    def _on_finished(self, dialog: ApprovalDialog) -> None:
        if self._current is None or self._current[1] is not dialog:
            return  # dismissed by abort or _forget, which already answered for it
        pending, _ = self._current
        self._current = None
        remembered = dialog.conversation_rules()
        if remembered and self.remember_for_conversation is not None:
            try:  # before the answer: the next call of this conversation must see them
                self.answering = pending.request
                self.remember_for_conversation(remembered)
            except Exception:  # an invalid rule must not change the answer the person gave
                log.exception("could not remember the rule for this conversation")
            finally:
                self.answering = None
        pending.resolve(dialog.response())
        dialog.deleteLater()
        self._answered = self._answered + 1 if self._waiting else 0
        self.pending_changed.emit(self.pending_count())
        self._show_next()

    def _show_position(self) -> None:
        """The shown dialog says which of the waiting calls it is ("1 of 2")."""
        if self._current is not None:
            position = getattr(self._current[0].request, "position", None)
            if position is not None:  # the loop knows: "2 of 3" calls of this turn
                self._current[1].set_position(*position)
                return
            shown = self._answered + 1
            self._current[1].set_position(shown, shown + len(self._waiting))
