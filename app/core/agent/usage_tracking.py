"""A conversation's token usage per model, for AgentSession: read from the store on first
use, added to after every model turn (stored in the background) and announced as
``UsageUpdated``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.core.agent.events import AgentEvent, UsageUpdated
from app.core.agent.providers import ModelTurn
from app.core.pricing import Usage
from app.core.store.usage import UsageRepository
from app.core.store.writer import BackgroundWriter


class UsageTracking:
    """Mixin of AgentSession: ``conversation_usage()``."""

    _conversation_id: int | None
    _usage_repo: UsageRepository
    _usage: dict[str, Usage] | None
    _writer: BackgroundWriter

    if TYPE_CHECKING:
        def _emit(self, event: AgentEvent) -> None: ...

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
