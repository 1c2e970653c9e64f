"""The model turns of one AgentSession run: load the profile, the history, the model client
and the project's instructions (AGENTS.md and the like), then ask the model, record its answer
and usage, and run its tool calls, until a turn has none, the profile's iteration cap is
reached (the last turn's calls are then answered "not run"), or a request fails
(``RunFailed``).

AgentSession (app.core.agent.session) starts, guards and stops the run; the tool calls
themselves are call_runner.ToolCallRunner's.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from app.core.agent.agent_scope import PERSON_SCOPE, AgentScope
from app.core.agent.call_runner import ToolCallRunner
from app.core.agent.events import (
    EventSink,
    RetryWaiting,
    RunFailed,
    RunFinished,
    TextDelta,
    ThinkingBlock,
    ThinkingDelta,
)
from app.core.agent.flow_tracking import FlowTracking
from app.core.agent.model_client import ModelClient
from app.core.agent.models import (
    ModelProvider,
    ModelRequest,
    ModelTurn,
    ProviderAuthError,
    ProviderBadRequest,
    ProviderError,
)
from app.core.agent.models.stream_notices import retry_listener, thinking_listener
from app.core.agent.project_instructions import InstructionsLoader
from app.core.agent.request_options import request_options
from app.core.agent.review_step import ReviewState, load_reviewers
from app.core.agent.run_state import RunState
from app.core.agent.session_history import ConversationHistory
from app.core.agent.system_prompt import build_system_prompt
from app.core.agent.usage_tracking import UsageTracking
from app.core.permissions.service import ToolPermissionService
from app.core.skills import find_skills
from app.core.store.profiles import AgentProfile, ProfileRepository, ToolSetting
from app.core.store.settings import SettingsRepository
from app.core.tools.builtin.sub_agents import TOOL_NAMES as DELEGATION_TOOLS
from app.core.tools.builtin.sub_agents import DelegationHost
from app.core.tools.providers.mcp.provider import server_instructions
from app.core.tools.registry import ToolRegistry

ITERATION_CAP = ("Not run: the agent reached its limit of {n} model turns for one request. "
                 "Summarise what is done and what is left; the user can ask you to continue.")


class ModelTurns:
    """One run's model turns for the profile ``profile_id`` (read from ``profiles`` at each
    run; reviewers from ``settings``) in ``project_root``: the profile's tools of ``registry``
    are offered, ``client`` talks to the model, ``history`` keeps the transcript, ``calls``
    runs the tool calls, ``usage`` and ``flow`` are told what each turn used and read.
    ``emit`` is told the run's events; ``fail`` a request that failed; ``instructions``
    loads the project's instructions files (AGENTS.md and the like) at each run start.

    ``scope`` narrows the profile (a sub-agent's tools, mode, turns and model:
    app.core.agent.agent_scope); ``delegation`` starts sub-agents, offered only when the
    profile's orchestration choice allows it and the scope may delegate."""

    def __init__(self, *, profiles: ProfileRepository, settings: SettingsRepository,
                 profile_id: int, project_root: Path, registry: ToolRegistry,
                 permissions: ToolPermissionService, history: ConversationHistory,
                 flow: FlowTracking, client: ModelClient, usage: UsageTracking,
                 calls: ToolCallRunner, emit: EventSink,
                 fail: Callable[[ProviderError], None],
                 instructions: InstructionsLoader | None = None,
                 scope: AgentScope = PERSON_SCOPE,
                 delegation: DelegationHost | None = None,
                 data_dir: Path | None = None) -> None:
        self._data_dir = data_dir  # the person's own skills (app.core.skills)
        self._scope = scope
        self._delegation = delegation
        self._profiles = profiles
        self._settings = settings
        self._profile_id = profile_id
        self._project_root = project_root
        self._registry = registry
        self._permissions = permissions
        self._history = history
        self._flow_tracking = flow
        self._client = client
        self._usage = usage
        self._calls = calls
        self._emit = emit
        self._fail = fail
        self._instructions = instructions or InstructionsLoader()

    async def run(self, user_text: str | None, attachments: list[dict[str, Any]]) -> None:
        """One run: ``user_text`` (with ``attachments``' content blocks) sent, or None to
        re-send the conversation as it stands; ends when the model is done."""
        started = await self._start(user_text, attachments)
        if started is None:
            return
        profile, provider, run, request = started
        iterations = 0
        while True:
            iterations += 1
            request = replace(request, messages=list(self._history.messages or []))
            turn = await self._ask(provider, request)
            if turn is None:
                return
            run.input_tokens += turn.input_tokens
            run.output_tokens += turn.output_tokens
            run.cache_writes += turn.cache_creation_input_tokens
            run.cache_reads += turn.cache_read_input_tokens
            self._usage.record(profile.model, turn, str(request.cache_ttl))
            self._record_answer(turn)
            if not turn.tool_calls:
                self._finish(run, turn.stop_reason, iterations)
                return
            capped = iterations >= profile.max_iterations
            answers: list[dict[str, Any]] = []
            try:
                if capped:  # the last turn's calls are answered "not run"
                    await self._calls.answer_not_run(
                        turn.tool_calls, run, ITERATION_CAP.format(n=profile.max_iterations),
                        answers)
                else:
                    await self._calls.run_calls(turn.tool_calls, run, answers)
            finally:  # one user turn answering every tool_use, even when stopped half-way
                self._history.append("user", answers)
            if self._delegation is not None and self._delegation.take_pause():
                # A sub-agent waits for the person: the run resumes on their approval.
                self._finish(run, "paused_for_approval", iterations)
                return
            if capped:
                self._finish(run, "max_iterations", iterations)
                return

    async def _start(self, user_text: str | None, attachments: list[dict[str, Any]]
                     ) -> tuple[AgentProfile, ModelProvider, RunState, ModelRequest] | None:
        """The run's profile, model client, state and first request (its messages filled in
        each turn); None when the run cannot start (``RunFailed`` emitted)."""
        try:
            profile = self._scoped(self._profiles.get(self._profile_id))
        except KeyError:
            self._emit(RunFailed("This agent profile no longer exists; choose another one.",
                                 ProviderBadRequest))
            return None
        settings = self._profiles.tool_settings(self._profile_id)
        try:
            history = self._history.load(user_text)
        except KeyError:
            self._emit(RunFailed("This conversation no longer exists; start a new one.",
                                 ProviderBadRequest))
            return None
        if self._scope.prompt_from_person:  # a sub-agent's prompt is its parent model's text
            self._flow_tracking.vouch_person_text(history, user_text)
        if user_text is not None:
            self._history.append("user", [*attachments, {"type": "text", "text": user_text}])
        elif not history or history[-1]["role"] != "user":
            self._emit(RunFailed("There is nothing to retry: the last answer is complete. "
                                 "Send a new message instead.", ProviderBadRequest))
            return None
        try:
            provider = await self._client.provider_for(profile)
        except ProviderError as exc:
            self._fail(exc)
            return None
        # The machine's and the project's secret files, so a call carrying one out is refused
        # (read since the project was opened: this waits only for what is left of that read)
        # (once per folder and process; off the loop, it reads files).
        await asyncio.to_thread(self._permissions.learn_secrets, self._project_root)
        tools = self._registry.definitions_for(self._offered(profile, settings))
        if self._delegation is not None:  # its children get at most what this run offers
            self._delegation.run_started(t["name"] for t in tools)
        reviewers = await asyncio.to_thread(load_reviewers, self._settings)
        run = RunState(settings, frozenset(t["name"] for t in tools), profile.permission_mode,
                       profile.review_before_asking,
                       ReviewState(reviewers, review_plan=profile.review_plan,
                                   history_start=len(history)))
        # Built once per run: the same bytes every turn, so the prompt cache holds.
        names = [t["name"] for t in tools]
        instructions = server_instructions(self._registry.providers(), names)
        self._flow_tracking.track_server_instructions(instructions)
        # Read again at each run (off the loop: project files), so an edit counts at once.
        conventions = await asyncio.to_thread(self._instructions.load, self._project_root)
        skills = (await asyncio.to_thread(find_skills, self._project_root, self._data_dir)
                  ).skills if "load_skill" in names else ()
        self._flow_tracking.track_project_instructions(
            {f.name: f.text for f in conventions if f.included and not f.personal}
            | {f"skill {s.name}": s.description for s in skills if s.in_project})
        system = build_system_prompt(
            profile.system_prompt, self._project_root, profile.permission_mode,
            [spec for spec in self._registry.specs() if spec.name in names],
            server_instructions=instructions, project_instructions=conventions,
            project_trusted=self._flow_tracking.project_trusted, skills=skills)
        request = ModelRequest(model=profile.model, messages=[], max_tokens=profile.max_tokens,
                               system=system, tools=tools, temperature=profile.temperature,
                               **request_options(profile))
        return profile, provider, run, request

    def _scoped(self, profile: AgentProfile) -> AgentProfile:
        """The profile as this session's scope narrows it (the person's own: unchanged)."""
        scope = self._scope
        if scope == PERSON_SCOPE:
            return profile
        return replace(profile, permission_mode=scope.effective_mode(profile.permission_mode),
                       max_iterations=scope.effective_iterations(profile.max_iterations),
                       model=scope.model or profile.model,
                       system_prompt=scope.instructions if scope.instructions is not None
                       else profile.system_prompt)

    def _offered(self, profile: AgentProfile, settings: dict[str, ToolSetting]) -> list[str]:
        """The tools this run offers: the profile's enabled ones the scope allows, and the
        sub-agent tools when the profile orchestrates and this agent may delegate."""
        enabled = (n for n, s in settings.items() if s.enabled and n not in DELEGATION_TOOLS)
        names = self._scope.offered_tools(enabled)
        if profile.orchestration.delegates and self._scope.may_delegate and \
                self._delegation is not None:
            names += sorted(DELEGATION_TOOLS)
        return names

    async def _ask(self, provider: ModelProvider, request: ModelRequest) -> ModelTurn | None:
        """The model's answer, streamed as ``TextDelta``s; None when the request failed
        (``RunFailed`` emitted). Stopped half-way, what the person saw stays."""
        partial: list[str] = []

        def on_text(text: str) -> None:
            partial.append(text)
            self._emit(TextDelta(text))

        token = retry_listener.set(lambda seconds, why: self._emit(RetryWaiting(seconds, why)))
        thinking = thinking_listener.set(lambda text: self._emit(ThinkingDelta(text)))
        try:
            return await provider.stream(request, on_text)
        except ProviderError as exc:
            if isinstance(exc, ProviderAuthError):  # a new key needs a new client
                self._client.invalidate()
            self._fail(exc)
            return None
        except asyncio.CancelledError:
            text = "".join(partial)
            if text.strip():  # what the person saw stays in the transcript
                self._history.append("assistant", [{"type": "text", "text": text}])
            raise
        finally:
            retry_listener.reset(token)
            thinking_listener.reset(thinking)

    def _record_answer(self, turn: ModelTurn) -> None:
        for block in turn.content:
            if block.get("type") == "thinking":
                self._emit(ThinkingBlock(str(block.get("thinking", ""))))
            elif block.get("type") == "redacted_thinking":
                self._emit(ThinkingBlock("", redacted=True))
        if turn.content:
            self._history.append("assistant", turn.content)

    def _finish(self, run: RunState, stop_reason: str, iterations: int) -> None:
        self._emit(RunFinished(stop_reason, iterations, run.input_tokens, run.output_tokens,
                               run.cache_writes, run.cache_reads))
