"""A conversation's token usage per model, for AgentSession: read from the store on first
use, added to after every model turn (stored in the background) and announced as
``UsageUpdated``."""

from __future__ import annotations

from collections.abc import Callable

from app.core.agent.events import EventSink, UsageUpdated
from app.core.agent.models import ModelTurn
from app.core.pricing import Usage
from app.core.store.usage import UsageRepository
from app.core.store.writer import BackgroundWriter


class UsageTracking:
    """The tokens of the conversation ``conversation_id()`` names, stored in ``usage`` through
    ``writer`` and announced through ``emit``."""

    def __init__(self, usage: UsageRepository, writer: BackgroundWriter,
                 conversation_id: Callable[[], int | None], emit: EventSink) -> None:
        self._repository = usage
        self._writer = writer
        self._conversation_id = conversation_id
        self._emit = emit
        self._totals: dict[str, Usage] | None = None

    def conversation_usage(self) -> dict[str, Usage]:
        """This conversation's tokens per model so far (from the store on first use)."""
        if self._totals is None:
            conversation_id = self._conversation_id()
            self._totals = (self._repository.for_conversation(conversation_id)
                            if conversation_id is not None else {})
        return dict(self._totals)

    def record(self, model: str, turn: ModelTurn, cache_ttl: str) -> None:
        """A model turn's tokens (a run's or a summary's): added, stored and announced."""
        usage = Usage(turn.input_tokens, turn.output_tokens, turn.cache_creation_input_tokens,
                      turn.cache_read_input_tokens)
        totals = self.conversation_usage()
        totals[model] = totals.get(model, Usage()) + usage
        self._totals = totals
        self._writer.submit(self._repository.record, self._conversation_id(), model, usage,
                            cache_ttl)
        self._emit(UsageUpdated(model, usage, dict(totals), cache_ttl))

    def add_child_turn(self, model: str, usage: Usage, cache_ttl: str) -> None:
        """A sub-agent's model turn (stored under the child's conversation, which the store
        sums into this one's): added to the totals and announced, not stored again."""
        totals = self.conversation_usage()
        totals[model] = totals.get(model, Usage()) + usage
        self._totals = totals
        self._emit(UsageUpdated(model, usage, dict(totals), cache_ttl))
