"""AgentSession: one conversation's tool-use loop.

``run(text)`` streams the model's answer; for every ``tool_use`` block, in order:

1. invalid input (not JSON, schema mismatch) or a tool the profile does not offer → an error
   ``tool_result``; never executed, never shown for approval;
2. ``permissions.decide()`` → **deny**: an error result naming the rule; **ask**: the approver
   (the UI's dialog) is awaited with a diff preview for file writes; a decline sends the
   person's reason back to the model; **allow** or approved: executed through the registry with
   a ``ToolContext`` built from *that tool's* configuration;
3. every call, whatever happened, is written to the audit table and answered with exactly one
   ``tool_result`` so the conversation can always continue; it is recorded before it waits
   or runs, so a killed app leaves it "interrupted", never done (app.core.store.audit).

The loop stops on a turn without tool calls, at the profile's iteration cap (the last turn's
calls are then answered "not run" instead of executed), on an API error (``RunFailed``, the
transcript intact for ``retry()``) or on ``cancel()``: that cancels the stream or the running
tool (tools kill their process groups on cancellation), resolves a pending approval as a
decline, answers every open ``tool_use`` and emits ``RunCancelled``.

Messages are persisted as they complete, so a conversation reloads after a restart and
continues; a reload also repairs a turn whose tools were cut off by a crash.

Where the code lives: this module starts, guards and stops the run, and its constructor wires
the collaborators together: model_turns.ModelTurns drives a run's model turns,
call_runner.ToolCallRunner each turn's tool calls (with call_audit.CallAudit their audit rows
and tool results, call_approval.CallApproval the person's approval, review_step.ReviewStep the
reviewers, call_checkpoints.CallCheckpoints the checkpoints around them and
flow_tracking.FlowTracking the flow labels their results add; run_state.RunState is what one
run carries from call to call), session_history.ConversationHistory the transcript and its
persistence, forking.ConversationForking edits and regenerations, compactor.Compactor
compaction, model_client.ModelClient the model client, usage_tracking.UsageTracking the tokens
used, request_options the profile's request options and project_instructions.InstructionsLoader
the project's AGENTS.md and the like for the system prompt; a sub-agent's session is the same
with a narrower scope (agent_scope, sub_agents).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.core.agent.agent_scope import PERSON_SCOPE, AgentScope
from app.core.agent.attachments import Attachment, content_blocks, default_prompt
from app.core.agent.call_approval import CallApproval
from app.core.agent.call_audit import CallAudit
from app.core.agent.call_checkpoints import CallCheckpoints
from app.core.agent.call_runner import ToolCallRunner
from app.core.agent.capability_lifts import keep_lift
from app.core.agent.checkpointing import Checkpointer
from app.core.agent.compaction import CompactionResult
from app.core.agent.compactor import Compactor
from app.core.agent.events import AgentEvent, Approver, EventSink, RunCancelled, RunFailed
from app.core.agent.flow_tracking import FlowTracking
from app.core.agent.forking import ConversationForking, Prepare
from app.core.agent.model_client import ClientFactory, ModelClient
from app.core.agent.model_turns import ModelTurns
from app.core.agent.models import InternalError, ProviderError, default_client_factory
from app.core.agent.project_instructions import InstructionsLoader
from app.core.agent.review_step import ReviewStep
from app.core.agent.session_history import ConversationHistory
from app.core.agent.sub_agents.host import SubAgentHost
from app.core.agent.sub_agents.wiring import build_host
from app.core.agent.usage_tracking import UsageTracking
from app.core.permissions.flow import FlowState
from app.core.permissions.rules import PermissionRule
from app.core.permissions.service import ToolPermissionService
from app.core.pricing import Usage
from app.core.store.audit import AuditRepository
from app.core.store.conversations import ConversationRepository
from app.core.store.profiles import ProfileRepository
from app.core.store.settings import SettingsRepository
from app.core.store.usage import UsageRepository
from app.core.store.writer import BackgroundWriter
from app.core.tools.builtin.sub_agents import HOST_KEY
from app.core.tools.registry import ToolRegistry
from app.core.tools.shell.jobs import stop_jobs

if TYPE_CHECKING:  # only annotations name the store
    from app.core.agent.sub_agents.child_workspace import ChildPlace
    from app.core.store.db import Database

log = logging.getLogger(__name__)


class AgentSession:
    """One conversation with one agent profile. Not thread-safe: use it from one event loop.

    ``client_factory(profile) -> ModelProvider`` builds the model client (default:
    ``providers.default_client_factory``: Anthropic or OpenAI-compatible from the profile, key
    from the environment or keyring). It runs in a worker thread, as keyring lookups may block.
    The client is kept for later runs while the profile's provider and base URL stay the same.

    ``flow``: the flow labels to keep, when they are another conversation's too (default:
    this conversation's own, stored with it). ``personal_instructions``: the person's own
    instructions file, put into the system prompt with the project's AGENTS.md and the like
    (app.core.agent.project_instructions). ``scope``: what this session may do beyond its
    profile, only less (a sub-agent's: app.core.agent.agent_scope); ``flow_state``: the labels
    it starts from and shares (a sub-agent's parent's); ``parent_conversation_id``: the
    conversation that started it; ``data_dir``: where the person's own sub-agent files are
    (``agents/*.md``); ``borrowed``: folders its programs may read and never write.
    """

    def __init__(
        self,
        db: Database,
        registry: ToolRegistry,
        permissions: ToolPermissionService,
        profile_id: int,
        project_root: Path,
        approver: Approver,
        on_event: EventSink,
        conversation_id: int | None = None,
        client_factory: ClientFactory | ModelClient | None = None,
        checkpointer: Checkpointer | None = None,
        project_trusted: bool = False,
        *,
        flow: FlowTracking | None = None,
        personal_instructions: Path | None = None,
        scope: AgentScope = PERSON_SCOPE,
        flow_state: FlowState | None = None,
        parent_conversation_id: int | None = None,
        data_dir: Path | None = None,
        borrowed: tuple[Path, ...] = (),
    ) -> None:
        project_root = Path(project_root).resolve()
        self.scope = scope
        self._personal_instructions = personal_instructions
        self._data_dir = data_dir
        self._borrowed = borrowed
        self.db = db
        self.registry = registry
        self.permissions = permissions
        self.profile_id = profile_id
        self.project_root = project_root
        # Records the project around each call that can change files (None: no checkpoints).
        self.checkpointer = checkpointer
        self.on_event = on_event
        self.last_failure: RunFailed | None = None
        self._task: asyncio.Task[None] | None = None
        self._stop_requested = False
        # Every store write of the conversation, in order, off the loop's (the GUI's) thread.
        self.writer = BackgroundWriter()
        conversations = ConversationRepository(db)
        profiles = ProfileRepository(db)
        history = self.history = ConversationHistory(
            conversations, self.writer, profile_id, project_root, conversation_id,
            parent_id=parent_conversation_id)

        def current_conversation() -> int | None:
            return history.conversation_id

        # Files of a project the person has not marked trusted are untrusted content.
        self.flow_tracking = flow if flow is not None else FlowTracking(
            conversations, self.writer, permissions.known_secrets, project_root,
            project_trusted, current_conversation, self._emit, state=flow_state)
        self.usage = UsageTracking(UsageRepository(db), self.writer, current_conversation,
                                   self._emit)
        self.client = ModelClient(client_factory or default_client_factory)
        # The conversation's state the tools keep between calls (background jobs, say).
        self.tool_session: dict[str, Any] = {}
        audit = CallAudit(AuditRepository(db), self.writer, current_conversation, self._emit,
                          agent=scope.agent_label)
        self.approval = CallApproval(
            approver, permissions.rules, self._emit,
            # A lift the person keeps goes into the profile, in order with the other writes
            # (a sub-agent's lifts are for one call: CallApproval never keeps them).
            keep_lift=lambda tool, lift: self.writer.submit(
                keep_lift, profiles, profile_id, tool, lift),
            agent_chain=scope.chain, scoped_rules=self._remember_for_this_agent)
        self.calls = ToolCallRunner(
            registry=registry, permissions=permissions, profile_id=profile_id,
            project_root=project_root, tool_session=self.tool_session, audit=audit,
            approval=self.approval, flow=self.flow_tracking,
            review=ReviewStep(lambda: self.flow_tracking.flow, lambda: history.messages,
                              self._emit),
            checkpoints=CallCheckpoints(self.tool_session, audit.changes_recorded),
            checkpointer=checkpointer, conversation_id=current_conversation, emit=self._emit,
            borrowed=borrowed)
        self.sub_agents: SubAgentHost | None = build_host(
            db=db, profiles=profiles, profile_id=profile_id, registry=registry, scope=scope,
            conversation_id=current_conversation, new_child=self._new_child,
            flow_tracking=self.flow_tracking,
            usage=self.usage, emit=self._emit, changes_recorded=audit.delegated_changes,
            project_root=project_root, data_dir=data_dir, checkpointer=lambda: self.checkpointer
        ) if scope.may_delegate else None  # a sub-agent's children: none, they never delegate
        if self.sub_agents is not None:
            self.tool_session[HOST_KEY] = self.sub_agents
        self.turns = ModelTurns(
            profiles=profiles, settings=SettingsRepository(db), profile_id=profile_id,
            project_root=project_root, registry=registry, permissions=permissions,
            history=history, flow=self.flow_tracking, client=self.client, usage=self.usage,
            calls=self.calls, emit=self._emit, fail=self._fail,
            instructions=InstructionsLoader(personal_instructions), scope=scope,
            delegation=self.sub_agents, data_dir=data_dir)
        self.forking = ConversationForking(history, conversations, self.writer, self._drive)
        self.compactor = Compactor(history, conversations, self.writer, profiles, profile_id,
                                   self.client, self.usage)
        if checkpointer is not None:  # an undo stops this conversation's background jobs
            checkpointer.job_stoppers.add(self._stop_jobs)

    # -- public API --------------------------------------------------------------------------

    @property
    def conversation_id(self) -> int | None:
        """The conversation's id; created (and set) by the first ``run``."""
        return self.history.conversation_id

    @property
    def running(self) -> bool:
        return (self._task is not None and not self._task.done()) or self.compactor.compacting

    @property
    def approver(self) -> Approver:
        """Answers the calls that ask (the UI's dialog)."""
        return self.approval.approver

    @approver.setter
    def approver(self, approver: Approver) -> None:
        self.approval.approver = approver

    @property
    def project_trusted(self) -> bool:
        """Whether the project's files count as the person's (not untrusted content)."""
        return self.flow_tracking.project_trusted

    @property
    def flow(self) -> FlowState:
        """The conversation's flow labels (loaded from the conversation on first use)."""
        return self.flow_tracking.flow

    def reset_flow(self) -> None:
        """Forget the labels (the person starts a different task in this conversation)."""
        self.flow_tracking.reset()

    def conversation_usage(self) -> dict[str, Usage]:
        """This conversation's tokens per model so far (from the store on first use)."""
        return self.usage.conversation_usage()

    def invalidate_client(self) -> None:
        """Build a new model client on the next run (call after the API key changed)."""
        self.client.invalidate()

    async def run(self, user_text: str, attachments: Sequence[Attachment] = ()) -> None:
        """Send ``user_text`` (with the person's ``attachments`` as image and document blocks
        before it) and work until the model is done. Emits events; API errors end as
        ``RunFailed``, Stop as ``RunCancelled``; never raises for either."""
        if await self.forking.ends_unanswered():  # a failed prompt is replaced, not merged
            return await self.forking.resend_from(-1, user_text, attachments)
        if not user_text.strip():
            if not attachments:
                raise ValueError("the message is empty")
            user_text = default_prompt(attachments)
        # Base64 of up to 10 MB, off the loop's thread. The person chose these files.
        blocks = await asyncio.to_thread(content_blocks, attachments) if attachments else []
        await self._drive(user_text, attachments=blocks)

    async def retry(self) -> None:
        """Re-send the conversation as it stands (after ``RunFailed``): the person's message or
        the tool results the model has not answered yet."""
        await self._drive(None)

    async def resend_from(self, prompt_index: int, text: str,
                          attachments: Sequence[Attachment] = ()) -> None:
        """Replace the ``prompt_index``-th prompt and everything after it, and run
        (app.core.agent.forking)."""
        await self.forking.resend_from(prompt_index, text, attachments)

    async def regenerate(self) -> None:
        """Delete the last answer (with its tool calls and results) and ask again."""
        await self.forking.regenerate()

    async def prompt_content(self, prompt_index: int) -> object:
        """The stored content of the ``prompt_index``-th prompt, None when there is none."""
        return await self.forking.prompt_content(prompt_index)

    def stored_prompt_content(self, prompt_index: int) -> object:
        """``prompt_content`` without flushing the writer first (blocking: a worker's)."""
        return self.forking.stored_prompt_content(prompt_index)

    async def compact(self) -> CompactionResult:
        """Summarise the conversation so far and send the summary instead of the history from
        now on (app.core.agent.compaction). Not while a run is going. Raises
        CompactionError."""
        if self.running:
            raise RuntimeError("this conversation is running; wait for it or stop it")
        return await self.compactor.compact()

    def cancel(self) -> None:
        """Stop: cancel the stream or the running tool; a pending approval counts as declined.
        Safe to call at any time; ``run`` returns after emitting ``RunCancelled``."""
        self.compactor.cancel()
        if self.sub_agents is not None:  # Stop stops every child, background ones too
            self.sub_agents.cancel_all()
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
        if self.sub_agents is not None:
            await self.sub_agents.aclose()
        if self.checkpointer is not None:
            self.checkpointer.job_stoppers.discard(self._stop_jobs)
        await self._stop_jobs()
        await self.client.aclose()
        await asyncio.to_thread(self.writer.close)

    def final_answer(self) -> str:
        """The text of the last answer (what a sub-agent gives back)."""
        return self.history.final_answer()

    def reload_history(self) -> None:
        """Read the transcript back from the store on the next run (it was changed there: a
        sub-agent's result filled in after its run paused)."""
        self.history.replace(None)

    def _new_child(self, scope: AgentScope, flow_state: FlowState, on_event: EventSink,
                   place: ChildPlace | None) -> AgentSession:
        """A sub-agent's session: this one's profile, permissions, registry and approver,
        narrowed by ``scope``, in its own ``place`` (workspace, checkpoints) or this one's."""
        return AgentSession(
            self.db, self.registry, self.permissions, self.profile_id,
            place.workspace.repo if place else self.project_root,
            lambda request: self.approval.approver(request), on_event, client_factory=self.client,
            checkpointer=place.checkpointer if place else self.checkpointer,
            project_trusted=self.flow_tracking.project_trusted,
            personal_instructions=self._personal_instructions, scope=scope,
            flow_state=flow_state, parent_conversation_id=self.conversation_id,
            data_dir=self._data_dir,
            borrowed=place.workspace.borrowed if place else self._borrowed)

    def _remember_for_this_agent(self, rules: tuple[PermissionRule, ...]) -> None:
        """A sub-agent's "Always allow": for its own conversation only."""
        if self.conversation_id is not None:
            self.permissions.conversation_rules.remember(self.conversation_id, rules)

    async def _stop_jobs(self) -> list[str]:
        return await stop_jobs(self.tool_session)

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
                await asyncio.shield(self.writer.flush())

    async def _guarded(self, user_text: str | None, prepare: Prepare | None,
                       attachments: list[dict[str, Any]]) -> None:
        try:
            if prepare is not None:  # a fork cuts the conversation first (app.core.agent.forking)
                await prepare()
            await self.turns.run(user_text, attachments)
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
