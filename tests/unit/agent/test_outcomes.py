"""The call-state enums keep the strings the database stores: every member is accepted by the
table's CHECK constraints and reads back as the same value."""

from __future__ import annotations

import sqlite3

import pytest

from app.core.outcomes import CallState, CardStatus, Outcome
from app.core.store.audit import AuditRepository


def _record(audit: AuditRepository, outcome: str) -> int:
    return audit.record(tool_name="t", server_id="builtin", tool_input={}, decision="allow",
                        outcome=outcome)  # type: ignore[arg-type]


def test_every_outcome_is_stored_as_its_old_string(db):
    audit = AuditRepository(db)
    for outcome in Outcome:
        _record(audit, outcome)
    stored = [row[0] for row in db.conn.execute(
        "SELECT outcome FROM tool_executions ORDER BY id")]
    assert stored == ["executed", "declined", "denied", "cancelled", "invalid"]
    assert all(type(value) is str for value in stored)


def test_every_call_state_is_stored_as_its_old_string(db):
    audit = AuditRepository(db)
    ids = [audit.begin(tool_name="t", server_id="builtin", tool_input={}, decision="ask",
                       state=state) for state in CallState]
    audit.set_state(ids[0], CallState.RUNNING)
    stored = [row[0] for row in db.conn.execute(
        "SELECT state FROM tool_executions ORDER BY id")]
    assert stored == ["running", "running", "done"]


def test_a_value_outside_the_enum_is_refused_by_the_database(db):
    # The positive control for the two tests above: the CHECK constraint is what they rely on.
    with pytest.raises(sqlite3.IntegrityError):
        _record(AuditRepository(db), "exploded")


@pytest.mark.parametrize(("outcome", "is_error", "status"), [
    (Outcome.EXECUTED, False, CardStatus.EXECUTED),
    (Outcome.EXECUTED, True, CardStatus.ERROR),
    (Outcome.DECLINED, True, CardStatus.DECLINED),
    (Outcome.INVALID, True, CardStatus.INVALID),
    ("interrupted_running", True, CardStatus.INTERRUPTED_RUNNING),
])
def test_a_finished_card_shows_its_outcome(outcome: str, is_error: bool, status: CardStatus):
    assert CardStatus.for_outcome(outcome, is_error) is status
