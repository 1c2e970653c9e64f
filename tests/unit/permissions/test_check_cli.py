"""``python -m app.core.permissions check``: the lines of Settings' "Test a call" as text, an
exit status per decision, and the app's database read, never created nor migrated."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from app.core.permissions import __main__ as cli
from app.core.permissions.call_check import PLAIN_TEXT, check_call
from app.core.permissions.flow_labels import FlowLabel
from app.core.permissions.rules import PermissionRule
from app.core.services import build_services
from app.core.settings_fields import CHECKPOINTS_ENABLED
from app.core.store.db import open_database

ROOT = Path(__file__).resolve().parents[3]
ALLOW, DENY, NOT_DECIDED, ASK, REVIEW = 0, 1, 2, 3, 4


@pytest.fixture
def data_dir(tmp_path: Path, visible: Path) -> Path:
    """An app data folder as the app leaves it: migrated, the tools' default rules seeded,
    plus a deny and a review rule."""
    folder = tmp_path / "data"
    db = open_database(folder / "tebiki.sqlite3")
    services = build_services(db, folder, visible)
    services.permissions.rules.add(PermissionRule("deny", tool_name="shell_exec",
                                                  input_pattern="rm *", priority=70,
                                                  description="no deletes"))
    services.permissions.rules.add(PermissionRule("review", tool_name="shell_exec",
                                                  input_pattern="make *", priority=60))
    db.close()
    return folder


def _run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "TEBIKI_DATA_DIR"}
    return subprocess.run([sys.executable, "-m", "app.core.permissions", "check", *args],
                          cwd=ROOT, env=env, input=stdin, capture_output=True, text=True,
                          timeout=120)


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_exit_status_says_the_decision(data_dir: Path, visible: Path) -> None:
    common = ("--data-dir", str(data_dir), "--project", str(visible))
    denied = _run("shell_exec", '{"command": "git status && rm -rf build"}', *common)
    assert denied.returncode == DENY, denied.stderr
    lines = denied.stdout.splitlines()
    assert lines[0].startswith("DENY — deny: rule #")
    assert "Matched against:" in lines
    assert "  • git status → ask (no rule matched)" in lines
    assert any(line.startswith("  • rm -rf build → deny (rule #") and "input matching rm *"
               in line for line in lines)
    allowed = _run("read_file", '{"path": "notes.txt"}', *common)
    assert allowed.returncode == ALLOW, allowed.stdout + allowed.stderr
    assert allowed.stdout.startswith("ALLOW — ")
    asked = _run("shell_exec", '{"command": "ls"}', *common)
    assert asked.returncode == ASK and asked.stdout.startswith("ASK — ")
    reviewed = _run("shell_exec", '{"command": "make all"}', *common)
    assert reviewed.returncode == REVIEW and reviewed.stdout.startswith("REVIEW — ")


def test_malformed_json_is_an_error_not_a_decision(data_dir: Path) -> None:
    done = _run("shell_exec", '{"command": ', "--data-dir", str(data_dir))
    assert done.returncode == NOT_DECIDED
    assert done.stdout == ""
    assert done.stderr.startswith("check: Input is not valid JSON: ")


def test_a_missing_database_is_reported_and_not_created(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-data"
    done = _run("read_file", "{}", "--data-dir", str(missing))
    assert done.returncode == NOT_DECIDED
    assert "No Tebiki database at" in done.stderr and "--data-dir" in done.stderr
    assert not missing.exists()
    empty = tmp_path / "empty"
    empty.mkdir()
    assert _run("read_file", "{}", "--data-dir", str(empty)).returncode == NOT_DECIDED
    assert list(empty.iterdir()) == []


def test_an_older_database_is_not_migrated(tmp_path: Path) -> None:
    folder = tmp_path / "old"
    folder.mkdir()
    database = folder / "tebiki.sqlite3"
    conn = sqlite3.connect(database)
    conn.execute("CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT)")
    conn.execute("PRAGMA user_version=3")
    conn.commit()
    conn.close()
    before = _digest(database)
    done = _run("read_file", "{}", "--data-dir", str(folder))
    assert done.returncode == NOT_DECIDED
    assert "schema version 3" in done.stderr and "migrates it" in done.stderr
    assert _digest(database) == before


def test_the_database_is_only_read(data_dir: Path, visible: Path) -> None:
    database = data_dir / "tebiki.sqlite3"
    before = _digest(database)
    done = _run("write_file", '{"path": "a.txt", "content": "x"}', "--data-dir", str(data_dir),
                "--project", str(visible), "--mode", "auto")
    assert done.returncode in (ALLOW, ASK), done.stderr
    assert _digest(database) == before


def test_the_default_data_folder_is_the_apps(data_dir: Path, visible: Path) -> None:
    env = {**os.environ, "TEBIKI_DATA_DIR": str(data_dir)}
    done = subprocess.run([sys.executable, "-m", "app.core.permissions", "check", "shell_exec",
                           "-", "--project", str(visible)], cwd=ROOT, env=env,
                          input='{"command": "rm x"}', capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == DENY, done.stderr


# -- in this process: the same lines as Settings' box ---------------------------------------


def _main(capsys, *args: str) -> tuple[int, list[str], str]:
    status = cli.main(["check", *args])
    out, err = capsys.readouterr()
    return status, out.splitlines(), err


def test_prints_the_lines_the_settings_box_shows(data_dir: Path, visible: Path,
                                                 capsys) -> None:
    tool_input = {"command": "git status && rm -rf build"}
    status, lines, _ = _main(capsys, "shell_exec", json.dumps(tool_input),
                             "--data-dir", str(data_dir), "--project", str(visible))
    db = open_database(data_dir / "tebiki.sqlite3")
    try:
        services = build_services(db, data_dir, visible)
        expected = check_call(services.permissions, "builtin", "shell_exec", tool_input)
    finally:
        db.close()
    assert lines == [line.render(PLAIN_TEXT) for line in expected.lines()]
    assert status == cli.EXIT_STATUS[expected.decision.kind] == DENY


def test_mode_and_simulated_labels(data_dir: Path, visible: Path, capsys) -> None:
    common = ("--data-dir", str(data_dir), "--project", str(visible))
    status, lines, _ = _main(capsys, "write_file", '{"path": "a.txt", "content": "x"}',
                             "--mode", "plan", *common)
    assert status == DENY and "plan mode" in lines[0]
    status, lines, _ = _main(capsys, "web_fetch", '{"url": "https://example.com/x"}', *common)
    assert status == ALLOW
    status, lines, _ = _main(capsys, "web_fetch", '{"url": "https://example.com/x"}',
                             "--flow", FlowLabel.READ_SENSITIVE.value, *common)
    assert status == ASK and "flow guard" in lines[0]
    guard = next(line for line in lines if line.startswith("⚠ Why this asks: "))
    assert FlowLabel.READ_SENSITIVE.simulated_source in guard
    assert "sends data to example.com" in guard


def test_checkpoints_follow_the_setting(data_dir: Path, visible: Path, capsys) -> None:
    args = ("write_file", '{"path": "a.txt", "content": "x"}', "--mode", "auto",
            "--data-dir", str(data_dir), "--project", str(visible))
    _, with_checkpoints, _ = _main(capsys, *args)
    assert "checkpoints are off" not in "\n".join(with_checkpoints)
    db = open_database(data_dir / "tebiki.sqlite3")
    build_services(db, data_dir, visible).settings.write(CHECKPOINTS_ENABLED, False)
    db.close()
    status, without, _ = _main(capsys, *args)
    assert status == ASK
    assert any(line.startswith("This call: ") and "not reversible (checkpoints are off)" in line
               for line in without)


def test_an_unknown_tool_is_decided_by_the_rules_alone(data_dir: Path, capsys) -> None:
    status, lines, err = _main(capsys, "get_issue", "{}", "--server", "github",
                               "--data-dir", str(data_dir))
    assert status == ASK and lines[0].startswith("ASK — ")
    assert "github/get_issue is not a tool known here" in err


def test_an_unknown_project_folder_is_reported(data_dir: Path, tmp_path: Path,
                                               capsys) -> None:
    status, lines, err = _main(capsys, "read_file", "{}", "--data-dir", str(data_dir),
                               "--project", str(tmp_path / "nowhere"))
    assert status == NOT_DECIDED and lines == [] and "No project folder" in err
