"""Rule CRUD over ``tool_permission_rules``; every write bumps a per-database generation.

The service compares generations before each decision, so an edit made through any repository
instance on the same connection takes effect on the very next call, without touching the disk.
"""

from __future__ import annotations

import builtins
import json
import sqlite3
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import sqlite_utils

from app.core.permissions.rules import DECISIONS, InvalidRuleError, PermissionRule, validate_rule
from app.core.store.db import attached, db_lock, transaction, utc_now

_COLUMNS = ("id", "server_id", "tool_name", "tool_pattern", "input_pattern", "decision",
            "priority", "description", "created_at", "updated_at")
_EDITABLE = ("server_id", "tool_name", "tool_pattern", "input_pattern", "decision", "priority",
             "description")


@dataclass
class RuleChanges:
    """Change notification for one database connection."""

    generation: int = 0
    listeners: list[Callable[[], None]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def bump(self) -> None:
        with self.lock:
            self.generation += 1
            listeners = list(self.listeners)
        for listener in listeners:
            listener()

    def subscribe(self, listener: Callable[[], None]) -> Callable[[], None]:
        with self.lock:
            self.listeners.append(listener)

        def unsubscribe() -> None:
            with self.lock:
                if listener in self.listeners:
                    self.listeners.remove(listener)

        return unsubscribe


def rule_changes(db: sqlite_utils.Database) -> RuleChanges:
    return attached(db, "_tebiki_rule_changes", RuleChanges)


class RuleNotFoundError(KeyError):
    pass


def _row_to_rule(row: sqlite3.Row | tuple) -> PermissionRule:
    # Rows were validated on the way in (and by CHECK constraints); skipping the frozen
    # dataclass __init__ makes loading 10,000 rules several times faster.
    rule = object.__new__(PermissionRule)
    rule.__dict__.update(zip(_COLUMNS, row, strict=True))
    return rule


# The one definition of evaluation order (DESIGN §3): priority high to low, then deny before ask
# before allow, then lower id.
_EVALUATION_ORDER = (" ORDER BY priority DESC,"
                     " CASE decision WHEN 'deny' THEN 0 WHEN 'ask' THEN 1 ELSE 2 END, id")


_INSERT = ("INSERT INTO tool_permission_rules (server_id, tool_name, tool_pattern, input_pattern,"
           " decision, auto_approve, priority, description, created_at, updated_at)"
           " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")


def _insert_values(rule: PermissionRule, now: str) -> tuple:
    return (rule.server_id, rule.tool_name, rule.tool_pattern, rule.input_pattern, rule.decision,
            int(rule.auto_approve), rule.priority, rule.description, now, now)


class RuleRepository:
    def __init__(self, db: sqlite_utils.Database) -> None:
        self.db = db
        self.changes = rule_changes(db)

    # -- reads -----------------------------------------------------------------------------

    def list(self) -> list[PermissionRule]:
        """All rules in evaluation order."""
        with db_lock(self.db):
            rows = self.db.conn.execute(
                f"SELECT {', '.join(_COLUMNS)} FROM tool_permission_rules"
                + _EVALUATION_ORDER).fetchall()
        return [_row_to_rule(r) for r in rows]

    def get(self, rule_id: int) -> PermissionRule:
        with db_lock(self.db):
            row = self.db.conn.execute(
                f"SELECT {', '.join(_COLUMNS)} FROM tool_permission_rules WHERE id = ?",
                (rule_id,)).fetchone()
        if row is None:
            raise RuleNotFoundError(rule_id)
        return _row_to_rule(row)

    # -- writes ----------------------------------------------------------------------------

    def add(self, rule: PermissionRule | None = None, **fields: Any) -> PermissionRule:
        if rule is None:
            rule = PermissionRule(**fields)
        elif fields:
            rule = rule.with_changes(**fields)
        rule = validate_rule(rule)
        now = utc_now()
        with transaction(self.db) as conn:
            cur = conn.execute(_INSERT, _insert_values(rule, now))
            rule_id = cur.lastrowid
        self.changes.bump()
        return rule.with_changes(id=rule_id, created_at=now, updated_at=now)

    def update(self, rule_id: int, **changes: Any) -> PermissionRule:
        unknown = set(changes) - set(_EDITABLE)
        if unknown:
            raise InvalidRuleError(f"cannot change {', '.join(sorted(unknown))}")
        with transaction(self.db) as conn:
            row = conn.execute(
                f"SELECT {', '.join(_COLUMNS)} FROM tool_permission_rules WHERE id = ?",
                (rule_id,)).fetchone()
            if row is None:
                raise RuleNotFoundError(rule_id)
            rule = validate_rule(_row_to_rule(row).with_changes(**changes))
            now = utc_now()
            conn.execute(
                "UPDATE tool_permission_rules SET server_id = ?, tool_name = ?, tool_pattern = ?,"
                " input_pattern = ?, decision = ?, auto_approve = ?, priority = ?,"
                " description = ?, updated_at = ? WHERE id = ?",
                (rule.server_id, rule.tool_name, rule.tool_pattern, rule.input_pattern,
                 rule.decision, int(rule.auto_approve), rule.priority, rule.description, now,
                 rule_id))
        self.changes.bump()
        return rule.with_changes(updated_at=now)

    def delete(self, rule_id: int) -> None:
        with transaction(self.db) as conn:
            cur = conn.execute("DELETE FROM tool_permission_rules WHERE id = ?", (rule_id,))
            if cur.rowcount == 0:
                raise RuleNotFoundError(rule_id)
        self.changes.bump()

    def replace_all(self, rules: Iterable[PermissionRule]) -> builtins.list[PermissionRule]:
        """Atomically swap the whole table (rules import); all rules validated first."""
        validated = [validate_rule(r.with_changes(id=None)) for r in rules]
        with transaction(self.db) as conn:
            conn.execute("DELETE FROM tool_permission_rules")
            now = utc_now()
            conn.executemany(_INSERT, [_insert_values(r, now) for r in validated])
        self.changes.bump()
        return self.list()

    # -- import / export -------------------------------------------------------------------

    def export_json(self) -> str:
        return json.dumps(
            {"version": 1, "rules": [{k: getattr(r, k) for k in _EDITABLE} for r in self.list()]},
            indent=2, ensure_ascii=False)

    @staticmethod
    def parse_json(text: str) -> builtins.list[PermissionRule]:
        """Rules from an export file; raises InvalidRuleError naming the first bad entry."""
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InvalidRuleError(f"not valid JSON: {exc}") from exc
        items = data.get("rules") if isinstance(data, dict) else data
        if not isinstance(items, list):
            raise InvalidRuleError('expected a list of rules or {"rules": [...]}')
        rules = []
        for index, item in enumerate(items):
            if not isinstance(item, dict):
                raise InvalidRuleError(f"rule {index + 1}: expected an object")
            extra = set(item) - set(_EDITABLE) - {"id", "auto_approve", "created_at",
                                                  "updated_at"}
            if extra:
                raise InvalidRuleError(f"rule {index + 1}: unknown fields {sorted(extra)}")
            fields = {k: item[k] for k in _EDITABLE if k in item}
            if "decision" not in fields and "auto_approve" in item:
                fields["decision"] = "allow" if item["auto_approve"] else "ask"
            if fields.get("decision") not in DECISIONS:
                raise InvalidRuleError(f"rule {index + 1}: decision must be one of "
                                       f"{', '.join(DECISIONS)}")
            try:
                rules.append(validate_rule(PermissionRule(**fields)))
            except InvalidRuleError as exc:
                raise InvalidRuleError(f"rule {index + 1}: {exc}") from exc
        return rules
