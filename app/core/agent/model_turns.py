"""The model turns of one AgentSession run: load the profile, the history and the model
client, then ask the model, record its answer and usage, and run its tool calls, until a turn
has none, the profile's iteration cap is reached (the last turn's calls are then answered "not
run"), or a request fails (``RunFailed``).

A mixin of ``AgentSession`` (app.core.agent.session), which starts, guards and stops the run;
the tool calls themselves are call_runner.ToolCallRunner's.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.core.agent.call_runner import _Run
from app.core.agent.events import (
    AgentEvent,
    RunFailed,
    RunFinished,
    TextDelta,
    ThinkingBlock,
)
from app.core.agent.providers import (
    ModelProvider,
    ModelRequest,
    ModelTurn,
    ProviderAuthError,
    ProviderBadRequest,
    ProviderError,
    ToolCall,
)
from app.core.agent.request_options import request_options
from app.core.agent.review_step import ReviewState, load_reviewers
from app.core.agent.system_prompt import build_system_prompt
from app.core.agent.transcript import Message
from app.core.permissions.service import ToolPermissionService
from app.core.store.profiles import AgentProfile, ProfileRepository
from app.core.store.settings import SettingsRepository
from app.core.tools.providers.mcp import server_instructions
from app.core.tools.registry import ToolRegistry

if TYPE_CHECKING:  # only a type here; the store opens without sqlite-utils
    from collections.abc import Mapping

    import sqlite_utils

ITERATION_CAP = ("Not run: the agent reached its limit of {n} model turns for one request. "
                 "Summarise what is done and what is left; the user can ask you to continue.")


class ModelTurns:
    """Mixin of AgentSession: ``_run_loop``, one run's model turns."""

    db: sqlite_utils.Database
    registry: ToolRegistry
    permissions: ToolPermissionService
    profile_id: int
    project_root: Path
    _profiles: ProfileRepository
    _history: list[Message] | None

    if TYPE_CHECKING:
        def invalidate_client(self) -> None: ...
        async def _provider_for(self, profile: AgentProfile) -> ModelProvider: ...
        def _record_usage(self, model: str, turn: ModelTurn, cache_ttl: str) -> None: ...
        def _load_history(self, title_hint: str | None) -> list[Message]: ...
        def _append(self, role: str, content: list[dict[str, Any]]) -> None: ...
        def _track_server_instructions(self, instructions: Mapping[str, str]) -> None: ...
        def _vouch_person_text(self, history: list[dict[str, Any]],
                               user_text: str | None) -> None: ...
        async def _run_tools(self, calls: list[ToolCall], run: _Run) -> None: ...
        async def _answer_not_run(self, calls: list[ToolCall], run: _Run, message: str,
                                  answers: list[dict[str, Any]]) -> None: ...
        def _fail(self, exc: ProviderError) -> None: ...
        def _emit(self, event: AgentEvent) -> None: ...

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
        self._vouch_person_text(history, user_text)
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
            profile.system_prompt, self.project_root, profile.permission_mode,
            [spec for spec in self.registry.specs() if spec.name in names],
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
