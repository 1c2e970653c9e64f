"""Compacting one AgentSession's conversation: the summary request and the marker that stores
it (what is summarised, how it is stored and sent: app.core.agent.compaction)."""

from __future__ import annotations

import asyncio

from app.core.agent.compaction import (
    CompactionError,
    CompactionResult,
    marker_content,
    plan_compaction,
    request_summary,
    summary_message,
    summary_text,
)
from app.core.agent.model_client import ModelClient
from app.core.agent.models import ProviderError
from app.core.agent.session_history import ConversationHistory
from app.core.agent.transcript import normalize
from app.core.agent.usage_tracking import UsageTracking
from app.core.store.conversations import ConversationRepository
from app.core.store.profiles import ProfileRepository
from app.core.store.writer import BackgroundWriter


class Compactor:
    """``compact()`` for the conversation of ``history``: the profile ``profile_id`` (from
    ``profiles``) names the model, ``client`` sends the summary request, ``usage`` is told
    its tokens; the marker goes to ``conversations`` once ``writer`` has written the rest."""

    def __init__(self, history: ConversationHistory, conversations: ConversationRepository,
                 writer: BackgroundWriter, profiles: ProfileRepository, profile_id: int,
                 client: ModelClient, usage: UsageTracking) -> None:
        self._history = history
        self._conversations = conversations
        self._writer = writer
        self._profiles = profiles
        self._profile_id = profile_id
        self._client = client
        self._usage = usage
        self.compacting = False
        self._task: asyncio.Task[object] | None = None

    async def compact(self) -> CompactionResult:
        """Summarise the conversation so far (one request) and send the summary instead of
        the history from now on. Raises CompactionError. The caller makes sure no run is
        going."""
        conversation_id = self._history.conversation_id
        if conversation_id is None:
            raise CompactionError("There is nothing to compact yet.")
        self.compacting = True
        self._task = asyncio.current_task()
        try:
            return await self._compact(conversation_id)
        finally:
            self.compacting = False
            self._task = None

    def cancel(self) -> None:
        """Stop: a compaction in progress is cancelled (nothing is stored then)."""
        task = self._task
        if task is not None and not task.done():
            task.cancel()

    async def _compact(self, conversation_id: int) -> CompactionResult:
        await self._writer.flush()  # every message of the last run is on disk
        stored = await asyncio.to_thread(self._conversations.messages, conversation_id)
        plan = plan_compaction(stored)
        try:
            profile = self._profiles.get(self._profile_id)
        except KeyError:
            raise CompactionError("This agent profile no longer exists.") from None
        try:
            provider = await self._client.provider_for(profile)
        except ProviderError as exc:
            raise CompactionError(exc.message) from exc
        turn = await request_summary(provider, profile.model, plan.summarised,
                                     profile.max_tokens)
        self._usage.record(profile.model, turn, "5m")  # the summary was paid for
        summary = summary_text(turn)
        if not summary:
            raise CompactionError("The model returned an empty summary; nothing was changed.")
        # Stopped while the marker is written (its thread finishes anyway): the next run
        # reads the history back from the store rather than trusting memory.
        self._history.replace(None)
        await asyncio.to_thread(self._conversations.append, conversation_id, "user",
                                marker_content(summary, plan.through))
        self._history.replace(normalize([summary_message(summary), *plan.kept]))
        return CompactionResult(summary, plan.count, turn.output_tokens)
