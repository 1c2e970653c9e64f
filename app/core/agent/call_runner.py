"""Running the model's tool calls, for AgentSession: check each call, ask the permission
service, wait for the approver when asked, execute through the registry and answer every
``tool_use`` with exactly one ``tool_result``, also when the run is stopped half-way.

The runner owns the collaborators of one call: the audit rows (call_audit), the person's
approval (call_approval), the reviewers (review_step), the checkpoints around a call that can
change files (call_checkpoints) and the flow labels a result adds (flow_tracking).
"""

from __future__ import annotations

import asyncio
import copy
import logging
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import replace
from pathlib import Path
from typing import Any

from app.core.agent.call_approval import STOPPED_BEFORE_APPROVAL, CallApproval
from app.core.agent.call_audit import CallAudit
from app.core.agent.call_checkpoints import CallCheckpoints
from app.core.agent.capability_lifts import working_lift
from app.core.agent.checkpointing import UNRECORDED_ASK, CallChanges, Checkpointer
from app.core.agent.context import build_tool_context
from app.core.agent.events import EventSink, ToolRequested, ToolStarted
from app.core.agent.flow_tracking import FlowTracking
from app.core.agent.models import ToolCall
from app.core.agent.progress import ProgressReporter
from app.core.agent.review_step import PLAN_REJECTED, ReviewStep, wants_review
from app.core.agent.run_state import RunState
from app.core.outcomes import CallState, Outcome
from app.core.permissions.egress_history import egress_destination
from app.core.permissions.service import Decision, DecisionContext, ToolPermissionService
from app.core.review import QuorumResult, rejection_feedback
from app.core.store.profiles import ToolSetting
from app.core.tools.base import PersonView, Tool, ToolContext, ToolSpec
from app.core.tools.capability_lift import CapabilityLift
from app.core.tools.images import ImagePart
from app.core.tools.registry import ToolRegistry

log = logging.getLogger(__name__)

UNKNOWN_SERVER = "unknown"
LIFT_REASON = ("{tool}'s configuration does not allow this call. Approving runs it once with "
               "the change shown below; nothing else is widened.")

STOPPED_BEFORE_CALL = "Not run: the user stopped the run before this tool call was reached."
STOPPED_BEFORE_START = "Not run: the user stopped the run while this call was being prepared."


def denied_message(decision: Decision) -> str:
    if decision.rule is None and decision.note:  # a mode or a guard refused: it says why
        return decision.note
    if decision.decided_by and decision.note:
        return decision.note
    which = decision.rule.summary() if decision.rule is not None else "the permission rules"
    return (f"Denied by {which}. This call is not allowed; do not retry it. Choose another "
            "approach or ask the user to change the permission rules.")


class ToolCallRunner:
    """The tool calls of one model turn, in order, for one conversation.

    What a call may use: the tools of ``registry`` (the profile picks among them), decided on
    by ``permissions``, run in ``project_root`` with the profile ``profile_id``'s per-tool
    configuration and the conversation's ``tool_session`` (background jobs, checkpoint
    coverage). ``checkpointer`` (None: no checkpoints) records the project around each call
    that can change files; ``conversation_id()`` is the conversation the decisions are for;
    ``emit`` is told every event of a call.
    """

    def __init__(self, *, registry: ToolRegistry, permissions: ToolPermissionService,
                 profile_id: int, project_root: Path, tool_session: dict[str, Any],
                 audit: CallAudit, approval: CallApproval, review: ReviewStep,
                 flow: FlowTracking, checkpoints: CallCheckpoints,
                 checkpointer: Checkpointer | None,
                 conversation_id: Callable[[], int | None], emit: EventSink,
                 borrowed: tuple[Path, ...] = ()) -> None:
        # Folders every program of this conversation may read, never write: the object
        # stores a run workspace borrows (app.core.worktrees.workspace).
        self._borrowed = borrowed
        self.registry = registry
        self.permissions = permissions
        self._profile_id = profile_id
        self._project_root = project_root
        self._tool_session = tool_session
        self._audit = audit
        self._approval = approval
        self._review = review
        self._flow_tracking = flow
        self._checkpoints = checkpoints
        self._checkpointer = checkpointer
        self._conversation_id = conversation_id
        self._emit = emit
        # The second checkpoint of a stopped call, which runs on after its run has ended.
        self._pending_checkpoints: set[asyncio.Future[CallChanges | None]] = set()

    async def run_calls(self, calls: list[ToolCall], run: RunState,
                        answers: list[dict[str, Any]]) -> None:
        """Run ``calls`` in order; each one's ``tool_result`` goes into ``answers``, in the
        calls' order, also when this is stopped half-way (the open ones answered "not run")."""
        results: list[dict[str, Any] | None] = [None] * len(calls)
        try:
            for i, call in enumerate(calls):
                run.position = (i + 1, len(calls)) if len(calls) > 1 else None
                await self._run_call(call, run, results, i)
        except BaseException as exc:  # Stop, or a bug: every call still gets its answer
            why = STOPPED_BEFORE_CALL if isinstance(exc, asyncio.CancelledError) else \
                "Not run: an internal error ended the run before this tool call."
            open_slots = [i for i, r in enumerate(results) if r is None]
            unreached: list[dict[str, Any]] = []
            try:
                await self.answer_not_run([calls[i] for i in open_slots], run, why, unreached)
            finally:
                for i, answer in zip(open_slots, unreached, strict=False):
                    results[i] = answer
            raise
        finally:
            # One user turn answering every tool_use, even when stopped half-way.
            answers.extend(r for r in results if r is not None)

    async def _run_call(self, call: ToolCall, run: RunState, results: list[dict[str, Any] | None],
                        i: int) -> None:
        tool = self.registry.get(call.name)
        spec = tool.spec if tool is not None else None
        server_id = spec.server_id if spec is not None else UNKNOWN_SERVER
        row: Future[int] | None = None  # the audit row, once the call is recorded as begun

        def finish(outcome: Outcome, content: str, is_error: bool, decision: Decision,
                   duration_ms: int | None = None, images: tuple[ImagePart, ...] = (),
                   for_person: PersonView | None = None) -> None:
            results[i] = self._audit.finish(call, server_id, decision, outcome, content,
                                            is_error, duration_ms, row, images, for_person)

        problem = self._problem(call, run)
        if problem is not None:
            note, content = problem
            decision = Decision("deny", None, note=note)
            self._announce(run, call, server_id, decision)
            finish(Outcome.INVALID, content, True, decision)
            return
        assert tool is not None and spec is not None
        ctx = self._context(run, call.name)
        decision = await self._decide(server_id, call, run, ctx)
        self._announce(run, call, server_id, decision)
        if decision.kind == "deny":
            finish(Outcome.DENIED, denied_message(decision), True, decision)
            return
        lift: CapabilityLift | None = None
        if decision.kind != "allow" and spec.capability_refusal is not None:
            refusal = await self._capability_refusal(spec, call, ctx)
            offered = await self._lift_for(spec, call, ctx, refusal, run) if refusal else None
            if refusal is not None and offered is None:  # approving could not make it run
                finish(Outcome.DENIED, f"{refusal}\n(Not run, and the user was not asked: "
                                       "the tool's configuration does not allow this call.)",
                       True, decision.with_kind("deny", f"refused by capability: {refusal}"))
                return
            if offered is not None:  # the person may lift the limit: only they, never a review
                lift, ctx = offered
                decision = decision.with_kind(
                    "ask", f"refused by capability; the person may lift it: {lift.summary}",
                    flow_reason=LIFT_REASON.format(tool=call.name))
        if not spec.is_read_only(call.input):
            plan = await self._review.review_plan(call, run.review, sorted(run.offered))
            if plan is not None and plan.outcome == "rejected":
                finish(Outcome.DECLINED, PLAN_REJECTED.format(
                    feedback=rejection_feedback(plan)), True,
                    decision.with_kind("ask", f"plan rejected by review: {plan.reason}"))
                return
        row = self._audit.begin(call, server_id, decision, CallState.RUNNING
                                if decision.kind == "allow" else CallState.PENDING)
        try:
            await self._approve_and_execute(call, tool, spec, server_id, decision, ctx, row,
                                            finish, run, lift)
        except BaseException as exc:
            if results[i] is None:  # Stop or a bug between begin and finish: no dangling row
                finish(Outcome.CANCELLED, STOPPED_BEFORE_START
                       if isinstance(exc, asyncio.CancelledError) else
                       "Not run: an internal error ended the run during this tool call.",
                       True, decision)
            raise

    async def _approve_and_execute(self, call: ToolCall, tool: Tool, spec: ToolSpec,
                                   server_id: str, decision: Decision, ctx: ToolContext,
                                   row: Future[int], finish: Callable[..., None],
                                   run: RunState, lift: CapabilityLift | None = None) -> None:
        unasked = decision.kind == "allow"  # by a rule, the mode or a review: no person
        if not unasked:
            approved = await self._approval_of(call, tool, spec, server_id, decision, ctx, row,
                                               finish, run, lift)
            if approved is None:
                return
            decision, ctx, unasked = approved
        checkpointer = self._checkpointer if spec.may_change_files(call.input) else None
        before, protected = await self._checkpoints.before(call, spec, checkpointer, unasked,
                                                           run)
        if protected is None and decision.rule is None:  # the mode's "reversible" fails
            decision = decision.with_kind("ask", UNRECORDED_ASK)
            if not await self._approval.ask_person(call, spec, server_id, decision, None,
                                                   None, finish, run.position):
                return
            self._audit.set_state(row, CallState.RUNNING)
        protected = protected or ()
        self._emit(ToolStarted(call.id, call.name))
        started = time.perf_counter()
        reporter = ProgressReporter(call.id, self._emit)
        try:
            # Validated when the call was checked (``_problem``): not again while the name
            # still routes to the same tool.
            result = await self.registry.execute(call.name, call.input, replace(
                ctx, progress=reporter, protected=(*ctx.protected, *protected),
                call_id=call.id), validated=tool)
        except asyncio.CancelledError:
            reporter.close()
            finish(Outcome.CANCELLED, f"Cancelled: the user stopped the run while {call.name} "
                                      "was running. It may have done part of its work; check "
                                      "before relying on it.", True, decision,
                   _ms_since(started))
            if checkpointer is not None and before is not None:
                # What a stopped command did half-way is exactly what one wants to undo; the
                # second checkpoint runs on after the run has ended.
                pending = asyncio.ensure_future(
                    self._checkpoints.record_changes(checkpointer, call, before, row))
                self._pending_checkpoints.add(pending)
                pending.add_done_callback(self._pending_checkpoints.discard)
            raise
        reporter.close()  # its last value before ToolFinished, nothing after
        content = self._checkpoints.note_read_only(call, checkpointer, protected, result.content)
        recorded = False
        if unasked and checkpointer is not None and before is not None:
            # Before the model reads the result: what no mount could keep read-only (a new
            # persistence file) is put back first, and the result says so.
            changes = await self._checkpoints.record_changes(checkpointer, call, before, row)
            recorded = True
            content = await self._checkpoints.revert_persistence(
                call, checkpointer, changes, content)
        finish(Outcome.EXECUTED, content or "(no output)", result.is_error, decision,
               _ms_since(started), result.images, result.for_person)
        try:
            self._flow_tracking.track_result(spec, call.input, decision, result.content or "")
        except Exception:  # labels are a guard's input: log, never break the run
            log.exception("flow labels were not updated after %s", call.name)
        if checkpointer is not None and not recorded:
            await self._checkpoints.record_changes(checkpointer, call, before, row)

    async def _approval_of(self, call: ToolCall, tool: Tool, spec: ToolSpec, server_id: str,
                           decision: Decision, ctx: ToolContext, row: Future[int],
                           finish: Callable[..., None], run: RunState,
                           lift: CapabilityLift | None
                           ) -> tuple[Decision, ToolContext, bool] | None:
        """A call that was not allowed outright: the reviewers' verdict (when wanted), else the
        person's. (decision, context, unasked) for the call to run with; None when it was
        answered instead (declined, rejected, stopped)."""
        unasked = False
        reviewed: QuorumResult | None = None
        try:
            preview = await self._approval.preview(tool, call.input, ctx)
            if wants_review(decision, run.review_before_asking):
                reviewed = await self._review.review_call(call, server_id, decision,
                                                          preview, run.review)
                self._audit.set_reviews(row, reviewed)
        except asyncio.CancelledError:
            finish(Outcome.DECLINED, STOPPED_BEFORE_APPROVAL, True, decision)
            raise
        except Exception:  # a broken review must not run anything: the person decides
            log.exception("review of %s failed", call.name)
            reviewed = None
        if reviewed is not None and reviewed.outcome == "rejected":
            finish(Outcome.DECLINED, rejection_feedback(reviewed), True,
                   decision.with_kind("ask", f"rejected by review: {reviewed.reason}"))
            return None
        if reviewed is not None and reviewed.outcome == "approved":
            decision = decision.with_kind("allow", f"approved by review: {reviewed.reason}")
            self._audit.set_state(row, CallState.RUNNING)
            unasked = True  # reviewers are not the person: the same walls as a rule
        else:
            if not await self._approval.ask_person(call, spec, server_id, decision,
                                                   preview, reviewed, finish, run.position,
                                                   lift):
                return None
            self._audit.set_state(row, CallState.RUNNING)
            # The person saw the secrets this call names: the sandbox shows it those.
            if decision.facts is not None:
                ctx = replace(ctx, revealed=decision.facts.secret_paths)
        if decision.facts is not None and decision.facts.egress:  # joined scans see it
            self._flow_tracking.flow.record_egress(
                egress_destination(spec.server_id, spec.name, call.input), call.input)
        return decision, ctx, unasked

    async def _capability_refusal(self, spec: ToolSpec, call: ToolCall,
                                  ctx: ToolContext) -> str | None:
        if (check := spec.capability_refusal) is None:
            return None
        try:  # off the loop: a command's check parses it
            return await asyncio.to_thread(check, call.input, ctx)
        except Exception:  # a broken check must not block the call: the tool checks again
            log.exception("capability check of %s failed", call.name)
            return None

    async def _lift_for(self, spec: ToolSpec, call: ToolCall, ctx: ToolContext, refusal: str,
                        run: RunState) -> tuple[CapabilityLift, ToolContext] | None:
        """The lift the tool proposes for a refused call, with the context it gives the call,
        when under it the call is no longer refused (off the loop: a command is parsed)."""
        def context_for(settings: Mapping[str, ToolSetting]) -> ToolContext:
            return self._build_context(settings, call.name, spec)
        return await asyncio.to_thread(working_lift, spec, call.input, ctx, refusal,
                                       run.settings, context_for)

    def _problem(self, call: ToolCall, run: RunState) -> tuple[str, str] | None:
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

    async def _decide(self, server_id: str, call: ToolCall, run: RunState,
                      ctx: ToolContext | None = None) -> Decision:
        # Off the event loop: deciding parses the input (shell commands with tree-sitter),
        # and this loop is the GUI's. ToolPermissionService is safe for concurrent calls.
        context = DecisionContext(mode=run.mode, flow=self._flow_tracking.flow,
                                  tool_context=ctx, checkpoints=self._checkpointer is not None,
                                  conversation_id=self._conversation_id())
        return await asyncio.to_thread(self.permissions.decide, server_id, call.name,
                                       call.input, context)

    async def answer_not_run(self, calls: list[ToolCall], run: RunState, message: str,
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

    async def _not_run(self, call: ToolCall, run: RunState, message: str) -> dict[str, Any]:
        """Answer (and audit) a call that was never reached."""
        decision = None
        if call.error is None and call.name in run.offered:
            try:
                decision = await self._decide(self._server_id(call), call, run)
            except Exception:  # only for the audit column; never fatal
                log.exception("permission check failed for %s", call.name)
        return self._not_run_as(call, run, message, decision)

    def _not_run_as(self, call: ToolCall, run: RunState, message: str,
                    decision: Decision | None) -> dict[str, Any]:
        server_id = self._server_id(call)
        decision = decision or Decision("deny", None, note="Not run.")
        self._announce(run, call, server_id, decision)
        return self._audit.finish(call, server_id, decision, Outcome.CANCELLED, message, True,
                                  None)

    def _server_id(self, call: ToolCall) -> str:
        tool = self.registry.get(call.name)
        return tool.spec.server_id if tool is not None else UNKNOWN_SERVER

    def _announce(self, run: RunState, call: ToolCall, server_id: str, decision: Decision) -> None:
        if call.id not in run.announced:
            run.announced.add(call.id)
            # A copy: whatever the UI does with it, what runs is what was decided on.
            self._emit(ToolRequested(call.id, call.name, server_id, copy.deepcopy(call.input),
                                     decision))

    def _context(self, run: RunState, tool_name: str) -> ToolContext:
        ctx = run.contexts.get(tool_name)
        if ctx is None:
            tool = self.registry.get(tool_name)
            ctx = run.contexts[tool_name] = self._build_context(
                run.settings, tool_name, tool.spec if tool is not None else None)
        return ctx

    def _build_context(self, settings: Mapping[str, ToolSetting], tool_name: str,
                       spec: ToolSpec | None) -> ToolContext:
        """The capability boundary of a call to ``tool_name`` under ``settings``."""
        sandbox = self.permissions.sandbox
        if self._borrowed:
            sandbox = replace(sandbox, read_only=(*sandbox.read_only, *self._borrowed))
        return build_tool_context(self._profile_id, settings, self._project_root,
                                  self._tool_session, tool_name=tool_name, spec=spec,
                                  sandbox=sandbox)

def _ms_since(started: float) -> int:
    return max(0, round((time.perf_counter() - started) * 1000))
