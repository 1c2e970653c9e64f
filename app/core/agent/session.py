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
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import logging
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import sqlite_utils

from app.core.agent.context import build_tool_context
from app.core.agent.events import (
    AgentEvent,
    ApprovalRequest,
    ApprovalResponse,
    Approver,
    AwaitingApproval,
    EventSink,
    RunCancelled,
    RunFailed,
    RunFinished,
    TextDelta,
    ToolFinished,
    ToolRequested,
    ToolStarted,
)
from app.core.agent.providers import (
    InternalError,
    ModelProvider,
    ModelRequest,
    ProviderAuthError,
    ProviderBadRequest,
    ProviderError,
    ToolCall,
    default_client_factory,
)
from app.core.agent.transcript import (
    Message,
    dangling_tool_uses,
    interrupted_results,
    normalize,
)
from app.core.outcomes import CallState, Outcome
from app.core.permissions.rules import PermissionRule
from app.core.permissions.service import Decision, ToolPermissionService
from app.core.store.audit import AuditRepository
from app.core.store.conversations import ConversationRepository
from app.core.store.profiles import AgentProfile, ProfileRepository, ToolSetting
from app.core.store.writer import BackgroundWriter
from app.core.tools.base import Tool, ToolContext, ToolSpec
from app.core.tools.registry import ToolRegistry
from app.core.warmup import warm_up

log = logging.getLogger(__name__)

UNKNOWN_SERVER = "unknown"
PREVIEW_TIMEOUT_S = 10.0
TITLE_LENGTH = 60

ClientFactory = Callable[[AgentProfile], ModelProvider]

STOPPED_BEFORE_APPROVAL = ("The user stopped the run before approving this tool call, so it was "
                           "not run.")
STOPPED_BEFORE_CALL = "Not run: the user stopped the run before this tool call was reached."
ITERATION_CAP = ("Not run: the agent reached its limit of {n} model turns for one request. "
                 "Summarise what is done and what is left; the user can ask you to continue.")


def declined_message(reason: str) -> str:
    reason = reason.strip()
    if reason:
        return f"The user declined this tool call. Reason: {reason}"
    return "The user declined this tool call. No reason was given; ask the user how to proceed."


def denied_message(decision: Decision) -> str:
    which = decision.rule.summary() if decision.rule is not None else "the permission rules"
    return (f"Denied by {which}. This call is not allowed; do not retry it. Choose another "
            "approach or ask the user to change the permission rules.")


@dataclass
class _Run:
    """What one run needs for every call: the profile's settings, read once at its start."""

    settings: Mapping[str, ToolSetting]
    offered: frozenset[str]
    contexts: dict[str, ToolContext] = field(default_factory=dict)
    announced: set[str] = field(default_factory=set)  # tool_use ids with a ToolRequested
    input_tokens: int = 0
    output_tokens: int = 0


class AgentSession:
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
    ) -> None:
        self.db = db
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
        return self._task is not None and not self._task.done()

    async def run(self, user_text: str) -> None:
        """Send ``user_text`` and work until the model is done. Emits events; API errors end
        as ``RunFailed``, Stop as ``RunCancelled``; never raises for either."""
        if not user_text.strip():
            raise ValueError("the message is empty")
        await self._drive(user_text)

    async def retry(self) -> None:
        """Re-send the conversation as it stands (after ``RunFailed``): the person's message or
        the tool results the model has not answered yet."""
        await self._drive(None)

    def cancel(self) -> None:
        """Stop: cancel the stream or the running tool; a pending approval counts as declined.
        Safe to call at any time; ``run`` returns after emitting ``RunCancelled``."""
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

    async def _drive(self, user_text: str | None) -> None:
        if self.running:
            raise RuntimeError("this conversation is already running; wait for it or cancel it")
        self._stop_requested = False
        # Our own task, so cancel() stops exactly this run and never the caller's task.
        task = asyncio.create_task(self._guarded(user_text), name="tebiki-agent-run")
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

    async def _guarded(self, user_text: str | None) -> None:
        try:
            await self._run_loop(user_text)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a bug must end the run visibly, not kill the UI's task
            log.exception("agent run failed")
            self._fail(InternalError(f"Internal error: {type(exc).__name__}: {exc}"))

    async def _run_loop(self, user_text: str | None) -> None:
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
            self._append("user", [{"type": "text", "text": user_text}])
        elif not history or history[-1]["role"] != "user":
            self._emit(RunFailed("There is nothing to retry: the last answer is complete. "
                                 "Send a new message instead.", ProviderBadRequest))
            return
        try:
            provider = await self._provider_for(profile)
        except ProviderError as exc:
            self._fail(exc)
            return
        tools = self.registry.definitions_for(sorted(n for n, s in settings.items() if s.enabled))
        run = _Run(settings, frozenset(t["name"] for t in tools))
        iterations = 0
        while True:
            iterations += 1
            request = ModelRequest(model=profile.model, messages=list(self._history or []),
                                   max_tokens=profile.max_tokens, system=profile.system_prompt,
                                   tools=tools, temperature=profile.temperature)
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
            if turn.content:
                self._append("assistant", turn.content)
            if not turn.tool_calls:
                self._emit(RunFinished(turn.stop_reason, iterations, run.input_tokens,
                                       run.output_tokens))
                return
            if iterations >= profile.max_iterations:
                message = ITERATION_CAP.format(n=profile.max_iterations)
                answers: list[dict[str, Any]] = []
                try:
                    await self._answer_not_run(turn.tool_calls, run, message, answers)
                finally:
                    self._append("user", answers)
                self._emit(RunFinished("max_iterations", iterations, run.input_tokens,
                                       run.output_tokens))
                return
            await self._run_tools(turn.tool_calls, run)

    # -- tools -------------------------------------------------------------------------------

    async def _run_tools(self, calls: list[ToolCall], run: _Run) -> None:
        results: list[dict[str, Any] | None] = [None] * len(calls)
        try:
            for i, call in enumerate(calls):
                await self._run_call(call, run, results, i)
        except BaseException as exc:  # Stop, or a bug: every call still gets its answer
            why = STOPPED_BEFORE_CALL if isinstance(exc, asyncio.CancelledError) else \
                "Not run: an internal error ended the run before this tool call."
            open_slots = [i for i, r in enumerate(results) if r is None]
            answers: list[dict[str, Any]] = []
            try:
                await self._answer_not_run([calls[i] for i in open_slots], run, why, answers)
            finally:
                for i, answer in zip(open_slots, answers, strict=False):
                    results[i] = answer
            raise
        finally:
            # One user turn answering every tool_use, even when stopped half-way.
            self._append("user", [r for r in results if r is not None])

    async def _run_call(self, call: ToolCall, run: _Run, results: list[dict[str, Any] | None],
                        i: int) -> None:
        tool = self.registry.get(call.name)
        spec = tool.spec if tool is not None else None
        server_id = spec.server_id if spec is not None else UNKNOWN_SERVER
        row: Future[int] | None = None  # the audit row, once the call is recorded as begun

        def finish(outcome: Outcome, content: str, is_error: bool, decision: Decision,
                   duration_ms: int | None = None) -> None:
            results[i] = self._finish(call, server_id, decision, outcome, content, is_error,
                                      duration_ms, row)

        problem = self._problem(call, run)
        if problem is not None:
            note, content = problem
            decision = Decision("deny", None, note=note)
            self._announce(run, call, server_id, decision)
            finish(Outcome.INVALID, content, True, decision)
            return
        assert tool is not None and spec is not None
        decision = await self._decide(server_id, call)
        self._announce(run, call, server_id, decision)
        if decision.kind == "deny":
            finish(Outcome.DENIED, denied_message(decision), True, decision)
            return
        ctx = self._context(run, call.name)
        row = self._begin(call, server_id, decision,
                          CallState.RUNNING if decision.kind == "allow" else CallState.PENDING)
        try:
            await self._approve_and_execute(call, tool, spec, server_id, decision, ctx, row,
                                            finish)
        except BaseException:
            if results[i] is None:  # a bug between begin and finish: the row must not dangle
                finish(Outcome.CANCELLED, "Not run: an internal error ended the run during "
                                          "this tool call.", True, decision)
            raise

    async def _approve_and_execute(self, call: ToolCall, tool: Tool, spec: ToolSpec,
                                   server_id: str, decision: Decision, ctx: ToolContext,
                                   row: Future[int], finish: Callable[..., None]) -> None:
        if decision.kind != "allow":
            try:
                preview = await self._preview(tool, call.input, ctx)
                request = ApprovalRequest(call.id, call.name, server_id,
                                          copy.deepcopy(call.input), spec, decision, preview)
                self._emit(AwaitingApproval(request))
                response = await self.approver(request)
            except asyncio.CancelledError:
                finish(Outcome.DECLINED, STOPPED_BEFORE_APPROVAL, True, decision)
                raise
            except Exception as exc:  # a broken dialog must not approve anything
                log.exception("approver failed for %s", call.name)
                response = ApprovalResponse.decline(
                    f"the approval dialog failed ({type(exc).__name__})")
            if not isinstance(response, ApprovalResponse):
                response = ApprovalResponse.decline("the approval answer was not understood")
            for rule in response.rules_to_remember:
                self._remember(rule)
            if not response.approved:
                finish(Outcome.DECLINED, declined_message(response.reason), True, decision)
                return
            self._writer.submit(self._audit_set_state, row, CallState.RUNNING)
        self._emit(ToolStarted(call.id, call.name))
        started = time.perf_counter()
        try:
            result = await self.registry.execute(call.name, call.input, ctx)
        except asyncio.CancelledError:
            finish(Outcome.CANCELLED, f"Cancelled: the user stopped the run while {call.name} "
                                      "was running. It may have done part of its work; check "
                                      "before relying on it.", True, decision,
                   _ms_since(started))
            raise
        finish(Outcome.EXECUTED, result.content or "(no output)", result.is_error, decision,
               _ms_since(started))

    def _problem(self, call: ToolCall, run: _Run) -> tuple[str, str] | None:
        """(note, message for the model) when the call cannot run at all, else None."""
        if call.error is not None:
            return ("The tool input was not a valid JSON object, so the call was not run.",
                    f"Invalid tool call: {call.error}. Call {call.name} again with a JSON "
                    "object that matches its input_schema.")
        if call.name not in run.offered:
            available = ", ".join(sorted(run.offered)) or "none"
            return ("This tool is not enabled for this agent profile, so it was not run.",
                    f"Tool {call.name!r} is not available in this conversation (it is not "
                    f"enabled for this agent). Available tools: {available}.")
        problem = self.registry.validate(call.name, call.input)
        if problem is not None:
            return ("The input does not match the tool's schema, so the call was not run.",
                    problem)
        return None

    async def _decide(self, server_id: str, call: ToolCall) -> Decision:
        # Off the event loop: deciding parses the input (shell commands with tree-sitter),
        # and this loop is the GUI's. ToolPermissionService is safe for concurrent calls.
        return await asyncio.to_thread(self.permissions.decide, server_id, call.name,
                                       call.input)

    async def _answer_not_run(self, calls: list[ToolCall], run: _Run, message: str,
                              answers: list[dict[str, Any]]) -> None:
        """Answer (and audit) calls that were never reached, into ``answers``. If this is
        itself interrupted (a second Stop), the rest are answered without consulting the
        rules: every tool_use must still get its result."""
        try:
            for call in calls:
                answers.append(await self._not_run(call, run, message))
        except BaseException:
            answers.extend(self._not_run_as(call, run, message, None)
                           for call in calls[len(answers):])
            raise

    async def _not_run(self, call: ToolCall, run: _Run, message: str) -> dict[str, Any]:
        """Answer (and audit) a call that was never reached."""
        decision = None
        if call.error is None and call.name in run.offered:
            try:
                decision = await self._decide(self._server_id(call), call)
            except Exception:  # only for the audit column; never fatal
                log.exception("permission check failed for %s", call.name)
        return self._not_run_as(call, run, message, decision)

    def _not_run_as(self, call: ToolCall, run: _Run, message: str,
                    decision: Decision | None) -> dict[str, Any]:
        server_id = self._server_id(call)
        decision = decision or Decision("deny", None, note="Not run.")
        self._announce(run, call, server_id, decision)
        return self._finish(call, server_id, decision, Outcome.CANCELLED, message, True, None)

    def _server_id(self, call: ToolCall) -> str:
        tool = self.registry.get(call.name)
        return tool.spec.server_id if tool is not None else UNKNOWN_SERVER

    def _announce(self, run: _Run, call: ToolCall, server_id: str, decision: Decision) -> None:
        if call.id not in run.announced:
            run.announced.add(call.id)
            # A copy: whatever the UI does with it, what runs is what was decided on.
            self._emit(ToolRequested(call.id, call.name, server_id, copy.deepcopy(call.input),
                                     decision))

    def _begin(self, call: ToolCall, server_id: str, decision: Decision,
               state: CallState) -> Future[int]:
        """Record the call before it waits or runs; the future holds the audit row's id."""
        return self._writer.submit(
            self._audit.begin,
            tool_name=call.name, server_id=server_id, tool_input=call.input,
            decision=decision.kind, state=state,
            rule_id=decision.rule.id if decision.rule is not None else None,
            conversation_id=self._conversation_id, tool_use_id=call.id)

    def _audit_set_state(self, row: Future[int], state: CallState) -> None:
        row_id = _row_id(row)
        if row_id is not None:
            self._audit.set_state(row_id, state)

    def _audit_finish(self, row: Future[int] | None, **fields: Any) -> None:
        self._audit.finish(_row_id(row), **fields)

    def _finish(self, call: ToolCall, server_id: str, decision: Decision, outcome: Outcome,
                content: str, is_error: bool, duration_ms: int | None,
                row: Future[int] | None = None) -> dict[str, Any]:
        self._writer.submit(
            self._audit_finish, row,
            tool_name=call.name, server_id=server_id,
            tool_input=call.input if call.error is None else call.raw_input,
            decision=decision.kind, outcome=outcome,
            output=content, is_error=is_error,
            rule_id=decision.rule.id if decision.rule is not None else None,
            duration_ms=duration_ms, conversation_id=self._conversation_id,
            tool_use_id=call.id)
        self._emit(ToolFinished(call.id, call.name, is_error, duration_ms or 0, content, outcome))
        return {"type": "tool_result", "tool_use_id": call.id, "content": content,
                "is_error": is_error}

    def _context(self, run: _Run, tool_name: str) -> ToolContext:
        ctx = run.contexts.get(tool_name)
        if ctx is None:
            tool = self.registry.get(tool_name)
            ctx = run.contexts[tool_name] = build_tool_context(
                self.profile_id, run.settings, self.project_root, self._tool_session,
                tool_name=tool_name, spec=tool.spec if tool is not None else None)
        return ctx

    async def _preview(self, tool: Tool, tool_input: Mapping[str, Any],
                       ctx: ToolContext) -> str | None:
        preview = getattr(tool, "preview", None)
        if not callable(preview):
            return None
        try:
            text = await asyncio.wait_for(preview(dict(tool_input), ctx), PREVIEW_TIMEOUT_S)
        except asyncio.CancelledError:
            raise
        except Exception:  # a preview is a courtesy; asking still works without it
            log.exception("preview of %s failed", tool.spec.name)
            return None
        return text if isinstance(text, str) else None

    def _remember(self, rule: PermissionRule) -> None:
        try:
            self.permissions.rules.add(rule)
        except Exception:  # an invalid rule must not block the answer the person gave
            log.exception("could not save the remembered permission rule")

    # -- persistence -------------------------------------------------------------------------

    def _load_history(self, title_hint: str | None) -> list[Message]:
        if self._history is not None:
            return self._history
        if self._conversation_id is None:
            conv = self._conversations.create(title=_title(title_hint),
                                              agent_id=self.profile_id,
                                              project_root=str(self.project_root))
            self._conversation_id = conv.id
            self._history = []
            return self._history
        self._conversations.get(self._conversation_id)  # KeyError: deleted meanwhile
        stored = [{"role": m.role, "content": m.content}
                  for m in self._conversations.messages(self._conversation_id)]
        # In memory the transcript is kept in the API's shape (normalised once here, then
        # maintained by _append), so a turn never re-walks the whole conversation.
        self._history = normalize(stored)
        dangling = dangling_tool_uses(stored)
        if dangling:  # the app stopped while these ran: answer them on disk too
            self._conversations.append(self._conversation_id, "user",
                                       interrupted_results(dangling))
        return self._history

    def _append(self, role: str, content: list[dict[str, Any]]) -> None:
        """Persist a message as it is, and add it to the in-memory transcript the way
        ``normalize`` would (empty text dropped, a second turn of the same role merged)."""
        assert self._conversation_id is not None and self._history is not None
        self._writer.submit(self._conversations.append, self._conversation_id, role, content)
        blocks = [b for b in content if b.get("type") != "text" or b.get("text")]
        if not blocks:
            return
        history = self._history
        if history and history[-1]["role"] == role:
            history[-1] = {"role": role, "content": history[-1]["content"] + blocks}
        else:
            history.append({"role": role, "content": blocks})

    # -- helpers -----------------------------------------------------------------------------

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


def _title(text: str | None) -> str:
    """The conversation's title: the first line of the first message, shortened."""
    lines = (text or "").strip().splitlines()
    title = lines[0].strip() if lines else "New conversation"
    if len(title) > TITLE_LENGTH:
        title = title[: TITLE_LENGTH - 1].rstrip() + "…"
    return title


def _row_id(row: Future[int] | None) -> int | None:
    """The id ``AuditRepository.begin`` returned. Writes run in order on one thread, so a
    later write finds the begin done; a failed begin gives None (finish then inserts)."""
    if row is None or not row.done() or row.cancelled() or row.exception() is not None:
        return None
    return row.result()


def _ms_since(started: float) -> int:
    return max(0, round((time.perf_counter() - started) * 1000))
