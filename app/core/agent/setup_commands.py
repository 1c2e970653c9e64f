"""A run workspace's setup commands (installing dependencies in a fresh worktree), from the
project's ``.tebiki/worktree.toml``::

    [setup]
    commands = ["npm ci", "uv sync"]

They are the project's words, not the person's: each runs as a shell_exec call through the
conversation's call runner — the permission rules and mode, the capability checks, the
approval dialog, the sandbox, the checkpoints and the audit — exactly as if the model had asked
for it, and its card shows in the transcript. Nothing here runs a command itself.
"""

from __future__ import annotations

import tomllib
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.core.agent.models import ToolCall
from app.core.agent.review_step import ReviewState
from app.core.agent.run_state import RunState
from app.core.safe_read import UnsafeReadError, read_project_file
from app.core.store.profiles import ProfileRepository

if TYPE_CHECKING:
    from app.core.agent.session import AgentSession

SETUP_FILE = ".tebiki/worktree.toml"
MAX_COMMANDS = 20
MAX_COMMAND_CHARS = 2000


class SetupFileError(ValueError):
    """The setup file cannot be used; the message says what to fix."""


def read_setup(project: Path) -> list[str]:
    """The setup commands of ``project`` ([] without a file). Raises SetupFileError. Reads a
    project file (never blocking on a FIFO): call it off the GUI thread."""
    path = project / SETUP_FILE
    if not path.exists() and not path.is_symlink():
        return []
    try:
        data = tomllib.loads(read_project_file(path, max_bytes=64 * 1024).decode("utf-8"))
    except (UnsafeReadError, OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise SetupFileError(f"{SETUP_FILE}: {exc}") from exc
    commands = data.get("setup", {}).get("commands", []) if isinstance(
        data.get("setup"), dict) else None
    if not isinstance(commands, list) or not all(isinstance(c, str) for c in commands):
        raise SetupFileError(f"{SETUP_FILE}: [setup] commands must be a list of strings")
    if len(commands) > MAX_COMMANDS or any(len(c) > MAX_COMMAND_CHARS for c in commands):
        raise SetupFileError(f"{SETUP_FILE}: at most {MAX_COMMANDS} commands of "
                             f"{MAX_COMMAND_CHARS} characters")
    return [c for c in commands if c.strip()]


async def run_setup(session: AgentSession, commands: list[str]) -> list[dict[str, Any]]:
    """Run ``commands`` in ``session``'s project, each decided, asked and audited like a
    model's shell_exec call; their ``tool_result`` blocks (not added to the transcript)."""
    if session.running:
        raise RuntimeError("this conversation is running; wait for it or stop it")
    session.history.load("Set up the worktree")  # the conversation the audit rows belong to
    profiles = ProfileRepository(session.db)
    profile = profiles.get(session.profile_id)
    run = RunState(profiles.tool_settings(session.profile_id), frozenset({"shell_exec"}),
                   session.scope.effective_mode(profile.permission_mode),
                   profile.review_before_asking, ReviewState(()))
    calls = [ToolCall(f"setup-{uuid.uuid4().hex[:12]}", "shell_exec", {"command": command})
             for command in commands]
    answers: list[dict[str, Any]] = []
    await session.calls.run_calls(calls, run, answers)
    return answers
