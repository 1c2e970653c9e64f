"""Rules the person chose to remember "for this conversation only" in the approval dialog.

They live in memory, per conversation id, and are never written to the rules table: the
permission service consults them (``ToolPermissionService.decide`` with a
``DecisionContext.conversation_id``) only for calls of that conversation, after the stored
rules had their say on denying — a stored deny still wins — and before the stored rules'
"ask". The guards still apply after them, as after any allow rule. They are gone when the app
quits (or ``forget`` is called).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable

from app.core.permissions.rules import PermissionRule, validate_rule

REMEMBERED_PREFIX = "remembered for this conversation"


class ConversationRules:
    """conversation id → the rules remembered for it. Safe to use from several threads (the
    service decides in worker threads; the dialog adds on the GUI thread)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._rules: dict[int, tuple[PermissionRule, ...]] = {}
        # Bumped on every change: the service's per-conversation caches key on it.
        self.generation = 0

    def remember(self, conversation_id: int, rules: Iterable[PermissionRule]) -> None:
        """Add ``rules`` (validated like stored ones; InvalidRuleError otherwise) to the
        conversation's; the same rule twice is kept once."""
        checked = [validate_rule(rule) for rule in rules]
        with self._lock:
            current = list(self._rules.get(conversation_id, ()))
            for rule in checked:
                if rule not in current:
                    current.append(rule)
            self._rules[conversation_id] = tuple(current)
            self.generation += 1

    def rules_for(self, conversation_id: int | None) -> tuple[PermissionRule, ...]:
        if conversation_id is None:
            return ()
        with self._lock:
            return self._rules.get(conversation_id, ())

    def forget(self, conversation_id: int) -> None:
        with self._lock:
            if self._rules.pop(conversation_id, None) is not None:
                self.generation += 1
