"""Rule CRUD over ``tool_permission_rules``; every write bumps a per-database generation.

The service compares generations before each decision, so an edit made through any repository
instance on the same connection takes effect on the very next call, without touching the disk.
"""

from __future__ import annotations

import builtins
import json
import logging
import sqlite3
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from app.core.permissions.rules import DECISIONS, InvalidRuleError, PermissionRule, validate_rule
from app.core.store.db import ChangeNotifier, store_of, utc_now

if TYPE_CHECKING:  # only annotations name the store
    from app.core.store.db import Database

log = logging.getLogger(__name__)

_COLUMNS = ("id", "server_id", "tool_name", "tool_pattern", "input_pattern", "decision",
            "priority", "description", "ignore_flow", "created_at", "updated_at")
_EDITABLE = ("server_id", "tool_name", "tool_pattern", "input_pattern", "decision", "priority",
             "description", "ignore_flow")


# The rules' change notifier is kept per database by the store (``Store.rule_changes``), so
# every repository and service on one connection shares it.
RuleChanges = ChangeNotifier


def rule_changes(db: Database) -> RuleChanges:
    return store_of(db).rule_changes


def default_rule_key(rule: PermissionRule) -> str:
    """Which default rule this is, for ``seeded_default_rules`` (its description and priority
    may change between versions without making it a new rule)."""
    return f"{rule.server_id}:{rule.tool_name}:{rule.decision}:{rule.input_pattern or ''}"


class RuleNotFoundError(KeyError):
    pass


def _row_to_rule(row: sqlite3.Row | tuple[Any, ...]) -> PermissionRule:
    # Rows were validated on the way in (and by CHECK constraints); skipping the frozen
    # dataclass __init__ makes loading 10,000 rules several times faster.
    rule = object.__new__(PermissionRule)
    rule.__dict__.update(zip(_COLUMNS, row, strict=True))
    rule.__dict__["ignore_flow"] = bool(rule.ignore_flow)
    return rule


# The one definition of evaluation order: priority high to low, then deny before ask before
# review before allow, then lower id.
_EVALUATION_ORDER = (" ORDER BY priority DESC,"
                     " CASE decision WHEN 'deny' THEN 0 WHEN 'ask' THEN 1 WHEN 'review' THEN 2"
                     " ELSE 3 END, id")


_INSERT = ("INSERT INTO tool_permission_rules (server_id, tool_name, tool_pattern, input_pattern,"
           " decision, auto_approve, priority, description, ignore_flow, created_at, updated_at)"
           " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")


def _insert_values(rule: PermissionRule, now: str) -> tuple[Any, ...]:
    return (rule.server_id, rule.tool_name, rule.tool_pattern, rule.input_pattern, rule.decision,
            int(rule.auto_approve), rule.priority, rule.description, int(rule.ignore_flow), now,
            now)


class RuleRepository:
    def __init__(self, db: Database) -> None:
        self.db = db
        self.store = store_of(db)
        self.changes = self.store.rule_changes

    # -- reads -----------------------------------------------------------------------------

    def list(self) -> list[PermissionRule]:
        """All rules in evaluation order."""
        # Raw SQL and _row_to_rule: the service reloads every rule after each edit, a measured
        # hot path (tests/bench/bench_permissions.py) that sqlite-utils' row dicts would slow.
        with self.store.lock:
            rows = self.db.conn.execute(
                f"SELECT {', '.join(_COLUMNS)} FROM tool_permission_rules"
                + _EVALUATION_ORDER).fetchall()
        return [_row_to_rule(r) for r in rows]

    def get(self, rule_id: int) -> PermissionRule:
        with self.store.lock:
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
        with self.store.transaction() as conn:
            cur = conn.execute(_INSERT, _insert_values(rule, now))
            rule_id = cur.lastrowid
        self.changes.bump()
        return rule.with_changes(id=rule_id, created_at=now, updated_at=now)

    def update(self, rule_id: int, **changes: Any) -> PermissionRule:
        unknown = set(changes) - set(_EDITABLE)
        if unknown:
            raise InvalidRuleError(f"cannot change {', '.join(sorted(unknown))}")
        with self.store.transaction() as conn:
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
                " description = ?, ignore_flow = ?, updated_at = ? WHERE id = ?",
                (rule.server_id, rule.tool_name, rule.tool_pattern, rule.input_pattern,
                 rule.decision, int(rule.auto_approve), rule.priority, rule.description,
                 int(rule.ignore_flow), now, rule_id))
        self.changes.bump()
        return rule.with_changes(updated_at=now)

    def delete(self, rule_id: int) -> None:
        with self.store.transaction() as conn:
            cur = conn.execute("DELETE FROM tool_permission_rules WHERE id = ?", (rule_id,))
            if cur.rowcount == 0:
                raise RuleNotFoundError(rule_id)
        self.changes.bump()

    def replace_all(self, rules: Iterable[PermissionRule]) -> builtins.list[PermissionRule]:
        """Atomically swap the whole table (rules import); all rules validated first."""
        validated = [validate_rule(r.with_changes(id=None)) for r in rules]
        with self.store.transaction() as conn:
            conn.execute("DELETE FROM tool_permission_rules")
            now = utc_now()
            conn.executemany(_INSERT, [_insert_values(r, now) for r in validated])
        self.changes.bump()
        return self.list()

    def seed_defaults(self, rules: Iterable[PermissionRule]) -> builtins.list[PermissionRule]:
        """Add the tools' default rules this database was never given; returns those added.

        Each rule is given once (recorded in ``seeded_default_rules`` under
        ``default_rule_key``): one the person deleted or edited is never added again, and
        their own rules are never touched. Called at every start (app.core.services).
        """
        validated = []
        for rule in rules:
            try:
                validated.append(validate_rule(rule.with_changes(id=None)))
            except InvalidRuleError as exc:  # a tool's mistake must not stop the app starting
                log.error("default rule %s of %s skipped: %s", rule, rule.tool_name, exc)
        added: builtins.list[PermissionRule] = []
        with self.store.transaction() as conn:
            seeded = {row[0] for row in conn.execute("SELECT key FROM seeded_default_rules")}
            now = utc_now()
            for rule in validated:
                key = default_rule_key(rule)
                if key in seeded:
                    continue
                seeded.add(key)
                cur = conn.execute(_INSERT, _insert_values(rule, now))
                conn.execute("INSERT INTO seeded_default_rules (key, seeded_at) VALUES (?, ?)",
                             (key, now))
                added.append(rule.with_changes(id=cur.lastrowid, created_at=now,
                                               updated_at=now))
        if added:
            self.changes.bump()
        return added

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
