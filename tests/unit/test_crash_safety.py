"""A writer killed with SIGKILL loses nothing it acknowledged and leaves a sound database."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from app.core.store.db import open_database

WRITER = textwrap.dedent("""
    import sys
    from app.core.permissions.repository import RuleRepository
    from app.core.store.audit import AuditRepository
    from app.core.store.db import open_database

    db = open_database(sys.argv[1])
    rules, audit = RuleRepository(db), AuditRepository(db)
    i = 0
    while True:
        rule = rules.add(decision="allow", tool_name=f"tool_{i}", priority=i,
                         description="x" * 2000)
        row = audit.record(tool_name=f"tool_{i}", server_id="builtin", tool_input={"i": i},
                           decision="allow", outcome="executed", output="y" * 5000,
                           rule_id=rule.id)
        print(f"{rule.id} {row}", flush=True)   # acknowledged only after COMMIT returned
        i += 1
""")


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="POSIX only")
def test_sigkill_mid_write_loses_nothing_acknowledged(fresh_data_dir: Path):
    path = fresh_data_dir / "crash.sqlite3"
    open_database(path).close()
    repo_root = Path(__file__).resolve().parents[2]
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(path)], stdout=subprocess.PIPE,
                            text=True, cwd=repo_root)
    acknowledged = []
    assert proc.stdout is not None
    for line in proc.stdout:
        acknowledged.append(tuple(int(x) for x in line.split()))
        if len(acknowledged) >= 300:
            break
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL

    db = open_database(path)
    try:
        assert db.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert db.conn.execute("PRAGMA foreign_key_check").fetchall() == []
        rule_ids = {r[0] for r in db.conn.execute("SELECT id FROM tool_permission_rules")}
        audit_ids = {r[0] for r in db.conn.execute("SELECT id FROM tool_executions")}
        for rule_id, audit_id in acknowledged:
            assert rule_id in rule_ids and audit_id in audit_ids
    finally:
        db.close()
