"""A Tebiki agent run in a child process, for tests that kill the app mid-call.

``python -m tests.unit.agent.interrupted_child DB BASE_URL MODE`` runs one conversation against
the fake Messages API at BASE_URL, with the database at DB. MODE ``approval``: the call waits for
an approval that never comes; ``running``: the call is allowed and its tool never returns. Once
the call's audit row is committed, the child prints ``READY <conversation id>`` and waits to be
killed (the parent sends SIGKILL: no cleanup of any kind runs).
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

# Calls the fake server scripts for the child (one tool_use each).
APPROVAL_CALL_ID = "toolu_waiting"
RUNNING_CALL_ID = "toolu_running"

_session: Any = None


async def _ready() -> None:
    # The audit row is written by the session's background writer; wait until it is on disk.
    await _session.writer.flush()
    print(f"READY {_session.conversation_id}", flush=True)
    await asyncio.Future()  # until killed


async def _main(db_path: str, base_url: str, mode: str) -> None:
    global _session
    from app.core.agent.models import client_factory
    from app.core.agent.session import AgentSession
    from app.core.permissions.rules import PermissionRule
    from app.core.permissions.service import ToolPermissionService
    from app.core.store.db import open_database
    from app.core.store.profiles import ProfileRepository, ToolSetting
    from app.core.tools.base import ToolContext, ToolResult
    from app.core.tools.default_registry import builtin_provider
    from app.core.tools.providers.base import StaticProvider
    from app.core.tools.registry import ToolRegistry
    from tests.unit.agent.helpers import RecordTool, SlowTool

    class HangingTool(SlowTool):
        async def execute(self, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
            await _ready()
            return ToolResult.ok("never")

    async def never_answers(_request: Any) -> Any:
        await _ready()

    db = open_database(db_path)
    registry = ToolRegistry([builtin_provider(),
                             StaticProvider([RecordTool(), HangingTool()], id="test",
                                            display_name="Test", priority=0)])
    permissions = ToolPermissionService(db, registry, project_root=Path.cwd())
    profiles = ProfileRepository(db)
    profile = profiles.ensure_default()
    assert profile.id is not None
    for name in ("record", "slow"):
        profiles.set_tool(profile.id, ToolSetting(name, True, {}))
    if mode == "running":
        permissions.rules.add(PermissionRule("allow", tool_name="slow"))
    _session = AgentSession(db, registry, permissions, profile.id, Path.cwd(), never_answers,
                            lambda _event: None,
                            client_factory=client_factory(api_key="sk-ant-test-0123456789",
                                                          base_url=base_url, max_retries=0))
    await _session.run("go")


def spawn(db_path: Path, base_url: str, mode: str, cwd: Path) -> tuple[subprocess.Popen[str],
                                                                        int]:
    """Start the child and wait until its call is on record; returns it and the
    conversation id."""
    root = Path(__file__).resolve().parents[3]
    env = {**os.environ, "PYTHONPATH": str(root)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.unit.agent.interrupted_child", str(db_path), base_url,
         mode], cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()  # blocks until READY (pytest-timeout guards a hang)
    if not line.startswith("READY "):
        proc.kill()
        _out, err = proc.communicate(timeout=10)
        raise AssertionError(f"the child did not get ready: {line!r}\n{err}")
    return proc, int(line.split()[1])


def kill(proc: subprocess.Popen[str]) -> None:
    """SIGKILL: as abrupt as a crash or a power cut for the process; nothing is cleaned up."""
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()


if __name__ == "__main__":
    asyncio.run(_main(*sys.argv[1:4]))
