"""A workspace's setup commands run as shell_exec calls through the conversation's call
runner: decided by the rules, asked, audited; a declined one does not run."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from app.core.agent.events import ApprovalResponse
from app.core.agent.setup_commands import SetupFileError, read_setup, run_setup
from tests.unit.agent.helpers import Harness


def _setup_file(project: Path, text: str) -> None:
    (project / ".tebiki").mkdir(exist_ok=True)
    (project / ".tebiki" / "worktree.toml").write_text(text)


def test_reading_the_setup_file(project: Path) -> None:
    assert read_setup(project) == []
    _setup_file(project, '[setup]\ncommands = ["npm ci", "  "]\n')
    assert read_setup(project) == ["npm ci"]
    _setup_file(project, "[setup]\ncommands = 3\n")
    with pytest.raises(SetupFileError):
        read_setup(project)
    (project / ".tebiki" / "worktree.toml").unlink()
    os.mkfifo(project / ".tebiki" / "worktree.toml")  # must not hang
    with pytest.raises(SetupFileError):
        read_setup(project)


async def test_setup_commands_are_asked_and_audited(harness: Harness) -> None:
    harness.enable("shell_exec", allowed_commands=["touch"], program_level="allowlist")
    harness.approver.then(ApprovalResponse(True), ApprovalResponse(False, "no"))
    session = harness.session()
    answers = await run_setup(session, ["touch first-ran", "touch second-ran"])
    assert [r.tool_name for r in harness.approver.requests] == ["shell_exec", "shell_exec"]
    assert (harness.project / "first-ran").exists()
    assert not (harness.project / "second-ran").exists()
    assert [a["is_error"] for a in answers] == [False, True]
    await session.writer.flush()
    assert [r.outcome for r in harness.audit()] == ["executed", "declined"]
