"""AgentSession: one conversation's tool-use loop.

``run(text)`` streams the model's answer; for every ``tool_use`` block, in order:

1. invalid input (not JSON, schema mismatch) or a tool the profile does not offer → an error
   ``tool_result``; never executed, never shown for approval;
2. ``permissions.decide()`` → **deny**: an error result naming the rule; **ask**: the approver
   (the UI's dialog) is awaited with a diff preview for file writes; a decline sends the
   person's reason back to the model; **allow** or approved: executed through the registry with
   a ``ToolContext`` built from *that tool's* configuration;
3. every call, whatever happened, is written to the audit table and answered with exactly one
   ``tool_result`` so the conversation can always continue. A call that waits for approval or
   runs is recorded *before* it does (pending / running) and completed after, so if the app
   is killed meanwhile the record says interrupted, never done (app.core.store.audit).

The permission check parses the input (shell commands with tree-sitter); it runs in a worker
thread, as the loop's thread is the GUI's.

The loop stops on a turn without tool calls, at the profile's iteration cap (the last turn's
calls are then answered "not run" instead of executed), on an API error (``RunFailed``, the
transcript intact for ``retry()``) or on ``cancel()``: that cancels the stream or the running
tool (tools kill their process groups on cancellation), resolves a pending approval as a
decline, answers every open ``tool_use`` and emits ``RunCancelled``.

Messages are persisted as they complete, so a conversation reloads after a restart and
continues; a reload also repairs a turn whose tools were cut off by a crash.

Where the code lives: this module starts, guards and stops the run; model_turns.ModelTurns
drives its model turns, call_runner.ToolCallRunner each turn's tool calls, call_audit.CallAudit
their audit rows and tool results, session_history.ConversationHistory the transcript and its
persistence, model_client.ModelClient the model client, usage_tracking.UsageTracking the
tokens used, and request_options the profile's request options.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.core.agent.attachments import Attachment, content_blocks, default_prompt
from app.core.agent.call_checkpoints import CallCheckpoints
from app.core.agent.call_runner import ToolCallRunner
from app.core.agent.checkpointing import CallChanges, Checkpointer
from app.core.agent.compaction import ConversationCompaction
from app.core.agent.events import AgentEvent, Approver, EventSink, RunCancelled, RunFailed
from app.core.agent.forking import ConversationForking, Prepare
from app.core.agent.model_client import ClientFactory, ModelClient
from app.core.agent.model_turns import ModelTurns
from app.core.agent.providers import (
    InternalError,
    ModelProvider,
    ProviderError,
    default_client_factory,
)
from app.core.agent.request_options import request_options
from app.core.agent.session_history import ConversationHistory
from app.core.agent.transcript import Message
from app.core.agent.usage_tracking import UsageTracking
from app.core.permissions.service import ToolPermissionService
from app.core.pricing import Usage
from app.core.store.audit import AuditRepository
from app.core.store.conversations import ConversationRepository
from app.core.store.profiles import ProfileRepository
from app.core.store.usage import UsageRepository
from app.core.store.writer import BackgroundWriter
from app.core.tools.registry import ToolRegistry
from app.core.tools.shell_jobs import stop_jobs

if TYPE_CHECKING:  # only a type here; the store opens without sqlite-utils
    import sqlite_utils

# ClientFactory and request_options lived here: their callers still import them from here.
__all__ = ["AgentSession", "ClientFactory", "request_options"]

log = logging.getLogger(__name__)


class AgentSession(ToolCallRunner, ConversationHistory, ConversationForking,
                   ConversationCompaction, ModelTurns, ModelClient, UsageTracking):
    """One conversation with one agent profile. Not thread-safe: use it from one event loop.

    ``client_factory(profile) -> ModelProvider`` builds the model client (default:
    ``providers.default_client_factory``: Anthropic or OpenAI-compatible from the profile, key
    from the environment or keyring). It runs in a worker thread, as keyring lookups may block.
    The client is kept for later runs while the profile's provider and base URL stay the same.
    """

    def __init__(
        self,
        db: sqlite_utils.Database,
        registry: ToolRegistry,
        permissions: ToolPermissionService,
        profile_id: int,
        project_root: Path,
        approver: Approver,
        on_event: EventSink,
        conversation_id: int | None = None,
        client_factory: ClientFactory | None = None,
        checkpointer: Checkpointer | None = None,
        project_trusted: bool = False,
    ) -> None:
        self.db = db
        # Files of a project the person has not marked trusted are untrusted content.
        self.project_trusted = project_trusted
        self._flow = None
        self._vouched_messages = 0  # user messages of the history already vouched for
        # Records the project around each call that can change files (None: no checkpoints).
        self.checkpointer = checkpointer
        self._pending_checkpoints: set[asyncio.Future[CallChanges | None]] = set()
        self.registry = registry
        self.permissions = permissions
        self.profile_id = profile_id
        self.project_root = Path(project_root).resolve()
        self.approver = approver
        self.on_event = on_event
        self.last_failure: RunFailed | None = None
        self._conversation_id = conversation_id
        self._client_factory: ClientFactory = client_factory or default_client_factory
        self._profiles = ProfileRepository(db)
        self._conversations = ConversationRepository(db)
        self._audit = AuditRepository(db)
        self._writer = BackgroundWriter()
        self._history: list[Message] | None = None
        self._tool_session: dict[str, Any] = {}
        self._checkpoints = CallCheckpoints(self._tool_session, self._changes_recorded)
        self._usage_repo = UsageRepository(db)
        self._usage: dict[str, Usage] | None = None
        self._provider: ModelProvider | None = None
        self._provider_key: tuple[str, str | None] | None = None
        self._task: asyncio.Task[None] | None = None
        self._stop_requested = False
        if checkpointer is not None:  # an undo stops this conversation's background jobs
            checkpointer.job_stoppers.add(self._stop_jobs)

    # -- public API --------------------------------------------------------------------------

    @property
    def conversation_id(self) -> int | None:
        """The conversation's id; created (and set) by the first ``run``."""
        return self._conversation_id

    @property
    def running(self) -> bool:
        return (self._task is not None and not self._task.done()) or self._compacting

    async def run(self, user_text: str, attachments: Sequence[Attachment] = ()) -> None:
        """Send ``user_text`` (with the person's ``attachments`` as image and document blocks
        before it) and work until the model is done. Emits events; API errors end as
        ``RunFailed``, Stop as ``RunCancelled``; never raises for either."""
        if not user_text.strip():
            if not attachments:
                raise ValueError("the message is empty")
            user_text = default_prompt(attachments)
        # Base64 of up to 10 MB: off the loop's (the GUI's) thread. The person chose these
        # files, like the text they typed: they change no flow label.
        blocks = await asyncio.to_thread(content_blocks, attachments) if attachments else []
        await self._drive(user_text, attachments=blocks)

    async def retry(self) -> None:
        """Re-send the conversation as it stands (after ``RunFailed``): the person's message or
        the tool results the model has not answered yet."""
        await self._drive(None)

    def cancel(self) -> None:
        """Stop: cancel the stream or the running tool; a pending approval counts as declined.
        Safe to call at any time; ``run`` returns after emitting ``RunCancelled``."""
        self._cancel_compaction()
        task = self._task
        if task is None or task.done():
            return
        self._stop_requested = True
        task.cancel()

    async def aclose(self) -> None:
        """Stop a running run and the conversation's background jobs, and release the HTTP
        client."""
        task = self._task
        if task is not None and not task.done():
            self.cancel()
            with contextlib.suppress(BaseException):
                await asyncio.wait({task})
        if self.checkpointer is not None:
            self.checkpointer.job_stoppers.discard(self._stop_jobs)
        await self._stop_jobs()
        await self._close_provider()
        await asyncio.to_thread(self._writer.close)

    async def _stop_jobs(self) -> list[str]:
        return await stop_jobs(self._tool_session)

    # -- driving -----------------------------------------------------------------------------

    async def _drive(self, user_text: str | None, prepare: Prepare | None = None,
                     attachments: list[dict[str, Any]] | None = None) -> None:
        if self.running:
            raise RuntimeError("this conversation is already running; wait for it or cancel it")
        self._stop_requested = False
        # Our own task, so cancel() stops exactly this run and never the caller's task.
        task = asyncio.create_task(self._guarded(user_text, prepare, attachments or []),
                                   name="tebiki-agent-run")
        self._task = task
        try:
            await task
        except asyncio.CancelledError:
            self._emit(RunCancelled("stopped" if self._stop_requested else "task cancelled"))
            current = asyncio.current_task()
            if not self._stop_requested or (current is not None and current.cancelling()):
                raise  # the caller itself is being cancelled (e.g. the app quits)
        finally:
            # When run() returns, the transcript and the audit trail are on disk.
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.shield(self._writer.flush())

    async def _guarded(self, user_text: str | None, prepare: Prepare | None,
                       attachments: list[dict[str, Any]]) -> None:
        try:
            if prepare is not None:  # a fork cuts the conversation first (app.core.agent.forking)
                await prepare()
            await self._run_loop(user_text, attachments)
        except asyncio.CancelledError:
            raise
        except ProviderError as exc:  # the fork could not be made: nothing was sent
            self._fail(exc)
        except Exception as exc:  # a bug must end the run visibly, not kill the UI's task
            log.exception("agent run failed")
            self._fail(InternalError(f"Internal error: {type(exc).__name__}: {exc}"))

    # -- events ------------------------------------------------------------------------------

    def _fail(self, exc: ProviderError) -> None:
        self.last_failure = RunFailed(exc.message, type(exc))
        self._emit(self.last_failure)

    def _emit(self, event: AgentEvent) -> None:
        try:
            self.on_event(event)
        except Exception:  # the UI's bug must not break the run or the transcript
            log.exception("event sink failed on %s", type(event).__name__)
