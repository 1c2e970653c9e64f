"""Where MCP servers' sampling and elicitation requests meet the person: one dialog at a time.

``ServerRequestQueue`` shows the sampling and elicitation dialogs (``app.ui.dialogs.sampling``,
``app.ui.dialogs.elicitation``, ``app.ui.dialogs.url_elicitation`` for a web page to open) the
way ``app.ui.approval_queue`` shows approvals: with
``show()``, never ``exec()`` inside a coroutine (the app runs on qasync, and a nested event
loop there re-enters the agent), and not modal, so the window's Stop and close button still
work. The next request waits until the shown one is answered. Each request is a future,
resolved exactly once:

- the person answers the dialog (closing it is Decline for sampling, Cancel for a form or a
  web page);
- the awaiting task is cancelled (the server withdrew the request, or it timed out in
  ``mcp.server_requests``) → its dialog closes, its answer is dropped;
- ``abort(reason)`` (the window closes, the app quits) → everything shown or queued is
  declined / cancelled.

``install_server_requests(window, services)`` builds the queue and the agent layer's
``SamplingBroker`` (``queue.handler``), which must be on the MCP provider before its servers
start (they advertise sampling and elicitation from their next start).
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QApplication, QDialog, QWidget

from app.core.agent.sampling import SamplingApproval, SamplingBroker, SamplingPrompt
from app.core.settings_fields import SAMPLING_MAX_TOKENS_CAP
from app.core.tools.providers.mcp.elicit_schema import UnsupportedSchema, parse_form
from app.core.tools.providers.mcp.server_requests import ElicitationReply, ServerRequestHandler
from app.core.tools.providers.mcp.url_elicitation import UrlElicitation

if TYPE_CHECKING:
    from app.core.services import Services
    from app.core.tools.providers.mcp.provider import McpProvider

log = logging.getLogger(__name__)


@dataclass
class _Pending:
    build: Callable[[], QDialog]        # the dialog, built when its turn comes
    answer: Callable[[Any], Any]        # the dialog's answer once finished
    withdrawn: Any                      # the answer when aborted
    future: asyncio.Future[Any]

    def resolve(self, value: Any) -> None:
        if not self.future.done():
            self.future.set_result(value)


class ServerRequestQueue(QObject):
    """Shows the dialogs of servers' requests one at a time; the rest wait their turn."""

    dialog_shown = Signal(object)  # the QDialog now on screen
    pending_changed = Signal(int)

    def __init__(self, parent_widget: QWidget | None) -> None:
        super().__init__(parent_widget)
        self._parent_widget = parent_widget
        # What the MCP provider calls (install_server_requests sets it: a SamplingBroker
        # asking through this queue).
        self.handler: ServerRequestHandler | None = None
        self._waiting: deque[_Pending] = deque()
        self._current: tuple[_Pending, QDialog] | None = None

    @property
    def current_dialog(self) -> QDialog | None:
        return self._current[1] if self._current else None

    def pending_count(self) -> int:
        return len(self._waiting) + (1 if self._current else 0)

    def attach(self, mcp: McpProvider | None) -> None:
        """Hand ``handler`` to the MCP provider: servers started from now on advertise
        sampling and elicitation."""
        if mcp is not None:
            mcp.server_requests = self.handler

    async def ask_sampling(self, prompt: SamplingPrompt) -> SamplingApproval | None:
        from app.ui.dialogs.sampling import SamplingDialog

        def answer(dialog: Any) -> SamplingApproval | None:
            return dialog.approval()  # type: ignore[no-any-return]

        result: SamplingApproval | None = await self._enqueue(
            lambda: SamplingDialog(prompt, self._parent_widget), answer, None)
        return result

    async def ask_elicitation(self, server: str, message: str,
                              schema: dict[str, Any]) -> ElicitationReply:
        try:
            form = parse_form(schema)
        except UnsupportedSchema as exc:
            log.warning("MCP server %s asked for a form Tebiki cannot show: %s", server, exc)
            return ElicitationReply("decline", note=f"Tebiki cannot show this form: {exc}")
        from app.ui.dialogs.elicitation import ElicitationDialog

        def answer(dialog: Any) -> ElicitationReply:
            return dialog.reply()  # type: ignore[no-any-return]

        result: ElicitationReply = await self._enqueue(
            lambda: ElicitationDialog(server, message, form, self._parent_widget), answer,
            ElicitationReply("cancel"))
        return result

    async def ask_url_elicitation(self, server: str,
                                  request: UrlElicitation) -> ElicitationReply:
        from app.ui.dialogs.url_elicitation import UrlElicitationDialog

        def answer(dialog: Any) -> ElicitationReply:
            return dialog.reply()  # type: ignore[no-any-return]

        result: ElicitationReply = await self._enqueue(
            lambda: UrlElicitationDialog(server, request, self._parent_widget), answer,
            ElicitationReply("cancel"))
        return result

    def abort(self, reason: str = "The window was closed.") -> None:
        """Answer the shown dialog and every queued request as declined / cancelled. Safe to
        call again or from inside itself: the queue is emptied before anything is resolved."""
        current, self._current = self._current, None
        waiting, self._waiting = self._waiting, deque()
        pending = ([current[0]] if current is not None else []) + list(waiting)
        if not pending:
            return
        log.info("server requests withdrawn: %s", reason)
        for item in pending:
            item.resolve(item.withdrawn)
        if current is not None:
            self._dismiss(current[1])
        self.pending_changed.emit(0)

    # -- internals ---------------------------------------------------------------------------

    async def _enqueue(self, build: Callable[[], QDialog], answer: Callable[[Any], Any],
                       withdrawn: Any) -> Any:
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiting.append(_Pending(build, answer, withdrawn, future))
        self.pending_changed.emit(self.pending_count())
        self._show_next()
        try:
            return await future
        except asyncio.CancelledError:
            self._forget(future)
            raise

    def _forget(self, future: asyncio.Future[Any]) -> None:
        self._waiting = deque(p for p in self._waiting if p.future is not future)
        if self._current is not None and self._current[0].future is future:
            dialog = self._current[1]
            self._current = None
            self._dismiss(dialog)
            self._show_next()
        self.pending_changed.emit(self.pending_count())

    def _dismiss(self, dialog: QDialog) -> None:
        dialog.reject()
        dialog.deleteLater()

    def _show_next(self) -> None:
        while self._current is None and self._waiting:
            pending = self._waiting.popleft()
            try:
                dialog = pending.build()
            except Exception:  # a request that cannot be shown is withdrawn, never approved
                log.exception("showing a server request failed")
                pending.resolve(pending.withdrawn)
                continue
            self._current = (pending, dialog)
            dialog.finished.connect(lambda _code, d=dialog: self._on_finished(d))
            dialog.show()
            dialog.raise_()
            dialog.activateWindow()
            self.dialog_shown.emit(dialog)

    def _on_finished(self, dialog: QDialog) -> None:
        if self._current is None or self._current[1] is not dialog:
            return  # dismissed by abort or _forget, which already answered for it
        pending, _ = self._current
        self._current = None
        try:
            pending.resolve(pending.answer(dialog))
        except Exception:
            log.exception("reading a server request's answer failed")
            pending.resolve(pending.withdrawn)
        dialog.deleteLater()
        self.pending_changed.emit(self.pending_count())
        self._show_next()


def sampling_token_cap(services: Services) -> int:
    """The most tokens a server's sampling request may get (a setting); reads the database."""
    return services.settings.read(SAMPLING_MAX_TOKENS_CAP)


def install_server_requests(window: Any, services: Services) -> ServerRequestQueue:
    """Answer MCP servers' sampling and elicitation requests through dialogs over ``window``
    (which has ``profile_id``: the profile whose model answers sampling).

    The handler (``queue.handler``) must be on the MCP provider before its servers start:
    this sets it when the tools are built already, else call ``queue.attach(services.mcp)``
    once they are (before ``apply_config``). Call ``queue.abort`` when the window closes."""
    queue = ServerRequestQueue(window)
    queue.handler = SamplingBroker(
        permissions=lambda: services.permissions, audit=services.audit,
        profile=lambda: services.profiles.get(window.profile_id),
        ask=queue.ask_sampling, ask_elicitation=queue.ask_elicitation,
        ask_url_elicitation=queue.ask_url_elicitation,
        max_tokens_cap=lambda: sampling_token_cap(services))
    if services.tools_built:
        queue.attach(services.mcp)
    app = QApplication.instance()
    if app is not None:
        app.aboutToQuit.connect(lambda: queue.abort("Tebiki is quitting."))
    return queue
