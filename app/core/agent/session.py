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

Where the code lives: this module drives the run (the model turns); call_runner.ToolCallRunner
handles each turn's tool calls, call_audit.CallAudit their audit rows and tool results, and
session_history.ConversationHistory the transcript and its persistence.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.core.agent.attachments import Attachment, content_blocks, default_prompt
from app.core.agent.call_runner import ToolCallRunner, _Run
from app.core.agent.checkpointing import CallChanges, Checkpointer
from app.core.agent.compaction import ConversationCompaction
from app.core.agent.events import (
    AgentEvent,
    Approver,
    EventSink,
    RunCancelled,
    RunFailed,
    RunFinished,
    TextDelta,
    ThinkingBlock,
    UsageUpdated,
)
from app.core.agent.forking import ConversationForking, Prepare
from app.core.agent.providers import (
    CACHE_TTLS,
    EFFORTS,
    THINKING_DISPLAYS,
    THINKING_MODES,
    InternalError,
    ModelProvider,
    ModelRequest,
    ModelTurn,
    ProviderAuthError,
    ProviderBadRequest,
    ProviderError,
    default_client_factory,
)
from app.core.agent.review_step import ReviewState, load_reviewers
from app.core.agent.session_history import ConversationHistory
from app.core.agent.system_prompt import build_system_prompt
from app.core.agent.transcript import Message
from app.core.permissions.service import ToolPermissionService
from app.core.pricing import Usage
from app.core.store.audit import AuditRepository
from app.core.store.conversations import ConversationRepository
from app.core.store.profiles import AgentProfile, ProfileRepository
from app.core.store.settings import SettingsRepository
from app.core.store.usage import UsageRepository
from app.core.store.writer import BackgroundWriter
from app.core.tools.providers.mcp import server_instructions
from app.core.tools.registry import ToolRegistry
from app.core.warmup import warm_up

if TYPE_CHECKING:  # only a type here; the store opens without sqlite-utils
    import sqlite_utils

log = logging.getLogger(__name__)

ClientFactory = Callable[[AgentProfile], ModelProvider]

ITERATION_CAP = ("Not run: the agent reached its limit of {n} model turns for one request. "
                 "Summarise what is done and what is left; the user can ask you to continue.")


def request_options(profile: AgentProfile) -> dict[str, Any]:
    """The model-request options a profile sets beyond model, tokens and temperature:
    ``thinking`` ("off" | "adaptive"), ``thinking_display``, ``effort`` (None or "low" …
    "max"), ``cache`` and ``cache_ttl`` ("5m" | "1h"), as ``ModelRequest`` keyword arguments.

    Read with ``getattr``: a profile (or a store version) without the attribute gets the
    request's default, and a value the API would not take is replaced by the default, so a
    bad setting never fails a run."""
    thinking = getattr(profile, "thinking", "off")
    display = getattr(profile, "thinking_display", None)
    effort = getattr(profile, "effort", None)
    ttl = getattr(profile, "cache_ttl", "5m")
    return {
        "thinking": thinking if thinking in THINKING_MODES else "off",
        "thinking_display": display if display in THINKING_DISPLAYS else None,
        "effort": effort if effort in EFFORTS else None,
        "cache": bool(getattr(profile, "prompt_cache", True)),
        "cache_ttl": ttl if ttl in CACHE_TTLS else "5m",
    }


class AgentSession(ToolCallRunner, ConversationHistory, ConversationForking,
                   ConversationCompaction):
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
        self._usage_repo = UsageRepository(db)
        self._usage: dict[str, Usage] | None = None
        self._provider: ModelProvider | None = None
        self._provider_key: tuple[str, str | None] | None = None
        self._task: asyncio.Task[None] | None = None
        self._stop_requested = False

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

    def invalidate_client(self) -> None:
        """Build a new model client on the next run (call after the API key changed)."""
        self._provider_key = None

    async def aclose(self) -> None:
        """Stop a running run and release the HTTP client."""
        task = self._task
        if task is not None and not task.done():
            self.cancel()
            with contextlib.suppress(BaseException):
                await asyncio.wait({task})
        await self._close_provider()
        await asyncio.to_thread(self._writer.close)

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

    async def _run_loop(self, user_text: str | None,
                        attachments: list[dict[str, Any]]) -> None:
        try:
            profile = self._profiles.get(self.profile_id)
        except KeyError:
            self._emit(RunFailed("This agent profile no longer exists; choose another one.",
                                 ProviderBadRequest))
            return
        settings = self._profiles.tool_settings(self.profile_id)
        try:
            history = self._load_history(user_text)
        except KeyError:
            self._emit(RunFailed("This conversation no longer exists; start a new one.",
                                 ProviderBadRequest))
            return
        if user_text is not None:
            self._append("user", [*attachments, {"type": "text", "text": user_text}])
        elif not history or history[-1]["role"] != "user":
            self._emit(RunFailed("There is nothing to retry: the last answer is complete. "
                                 "Send a new message instead.", ProviderBadRequest))
            return
        try:
            provider = await self._provider_for(profile)
        except ProviderError as exc:
            self._fail(exc)
            return
        # The machine's and the project's secret files, so a call carrying one out is refused
        # (once per folder and process; off the loop, it reads files).
        await asyncio.to_thread(self.permissions.learn_secrets, self.project_root)
        tools = self.registry.definitions_for(sorted(n for n, s in settings.items() if s.enabled))
        reviewers = await asyncio.to_thread(load_reviewers, SettingsRepository(self.db))
        run = _Run(settings, frozenset(t["name"] for t in tools), profile.permission_mode,
                   profile.review_before_asking,
                   ReviewState(reviewers, review_plan=profile.review_plan,
                               history_start=len(history)))
        # Built once per run: the same bytes every turn, so the prompt cache holds.
        names = [t["name"] for t in tools]
        instructions = server_instructions(self.registry.providers(), names)
        self._track_server_instructions(instructions)
        system = build_system_prompt(
            profile.system_prompt, self.project_root, profile.permission_mode, names,
            server_instructions=instructions)
        iterations = 0
        options = request_options(profile)
        cache_writes = cache_reads = 0
        while True:
            iterations += 1
            request = ModelRequest(model=profile.model, messages=list(self._history or []),
                                   max_tokens=profile.max_tokens, system=system,
                                   tools=tools, temperature=profile.temperature, **options)
            partial: list[str] = []

            def on_text(text: str, partial: list[str] = partial) -> None:
                partial.append(text)
                self._emit(TextDelta(text))

            try:
                turn = await provider.stream(request, on_text)
            except ProviderError as exc:
                if isinstance(exc, ProviderAuthError):  # a new key needs a new client
                    self.invalidate_client()
                self._fail(exc)
                return
            except asyncio.CancelledError:
                text = "".join(partial)
                if text.strip():  # what the person saw stays in the transcript
                    self._append("assistant", [{"type": "text", "text": text}])
                raise
            run.input_tokens += turn.input_tokens
            run.output_tokens += turn.output_tokens
            cache_writes += turn.cache_creation_input_tokens
            cache_reads += turn.cache_read_input_tokens
            self._record_usage(profile.model, turn, options["cache_ttl"])
            for block in turn.content:
                if block.get("type") == "thinking":
                    self._emit(ThinkingBlock(str(block.get("thinking", ""))))
                elif block.get("type") == "redacted_thinking":
                    self._emit(ThinkingBlock("", redacted=True))
            if turn.content:
                self._append("assistant", turn.content)
            if not turn.tool_calls:
                self._emit(RunFinished(turn.stop_reason, iterations, run.input_tokens,
                                       run.output_tokens, cache_writes, cache_reads))
                return
            if iterations >= profile.max_iterations:
                message = ITERATION_CAP.format(n=profile.max_iterations)
                answers: list[dict[str, Any]] = []
                try:
                    await self._answer_not_run(turn.tool_calls, run, message, answers)
                finally:
                    self._append("user", answers)
                self._emit(RunFinished("max_iterations", iterations, run.input_tokens,
                                       run.output_tokens, cache_writes, cache_reads))
                return
            await self._run_tools(turn.tool_calls, run)

    # -- helpers -----------------------------------------------------------------------------

    def conversation_usage(self) -> dict[str, Usage]:
        """This conversation's tokens per model so far (from the store on first use)."""
        if self._usage is None:
            self._usage = (self._usage_repo.for_conversation(self._conversation_id)
                           if self._conversation_id is not None else {})
        return dict(self._usage)

    def _record_usage(self, model: str, turn: ModelTurn, cache_ttl: str) -> None:
        usage = Usage(turn.input_tokens, turn.output_tokens, turn.cache_creation_input_tokens,
                      turn.cache_read_input_tokens)
        totals = self.conversation_usage()
        totals[model] = totals.get(model, Usage()) + usage
        self._usage = totals
        self._writer.submit(self._usage_repo.record, self._conversation_id, model, usage,
                            cache_ttl)
        self._emit(UsageUpdated(model, usage, dict(totals), cache_ttl))

    async def _provider_for(self, profile: AgentProfile) -> ModelProvider:
        key = (profile.provider, profile.base_url)
        if self._provider is not None and self._provider_key == key:
            return self._provider
        await self._close_provider()
        # The SDK and the tools' libraries are imported off the GUI thread (usually already
        # done when the person started typing; app.core.warmup).
        await warm_up()
        self._provider = await asyncio.to_thread(self._client_factory, profile)
        self._provider_key = key
        return self._provider

    async def _close_provider(self) -> None:
        provider, self._provider, self._provider_key = self._provider, None, None
        if provider is not None:
            try:
                await provider.aclose()
            except Exception:
                log.exception("closing the model client failed")

    def _fail(self, exc: ProviderError) -> None:
        self.last_failure = RunFailed(exc.message, type(exc))
        self._emit(self.last_failure)

    def _emit(self, event: AgentEvent) -> None:
        try:
            self.on_event(event)
        except Exception:  # the UI's bug must not break the run or the transcript
            log.exception("event sink failed on %s", type(event).__name__)
