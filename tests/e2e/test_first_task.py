"""A first coding task on a fresh install needs no Configure dialog: read a file, edit it, run a
program that is not on the allowlist (sandboxed), each asked once and executed when approved.

The real window, the real AgentSession and tools, the fake Messages API on 127.0.0.1. The only
set-up is ticking the tools on, as the person does in the tools list; no tool's configuration is
touched, so what runs is what a new profile ships with.
"""

from __future__ import annotations

import asyncio
import shutil

import pytest

from app.core.services import build_services
from tests.e2e.conftest import shown_window
from tests.fakes.anthropic_server import Response
from tests.ui.conftest import wait_for

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="no sandbox here")


@pytest.fixture
async def fresh_window(qtbot, db, fresh_data_dir, project, fake_anthropic_env):
    services = build_services(db, fresh_data_dir, project)
    profile_id = services.profiles.ensure_default().id
    for name in ("edit_file", "shell_exec"):  # the tools list's check boxes, nothing else
        services.profiles.set_enabled(profile_id, name, True)
    async with shown_window(qtbot, services, project) as win:
        yield win


async def test_read_edit_and_run_with_only_approvals(fresh_window, fake_anthropic, project):
    if not fresh_window.services.sandbox.status.available:
        pytest.skip(f"the sandbox does not work here: {fresh_window.services.sandbox.status}")
    (project / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    fake_anthropic.script(
        Response.tool_use("read_file", {"path": "calc.py"}),
        Response.tool_use("edit_file", {"path": "calc.py", "old_string": "a - b",
                                        "new_string": "a + b"}),
        Response.tool_use("shell_exec", {"command": "python3 -c 'import calc; "
                                                    "print(calc.add(2, 3))'"}),
        Response.text("Fixed."))
    approved: list[str] = []

    async def approve_every_ask() -> None:
        while True:
            dialog = fresh_window.approvals.current_dialog
            if dialog is not None and dialog.isVisible():
                approved.append(dialog.input_view.toPlainText())
                dialog.approve_button.click()
            await asyncio.sleep(0.01)

    approver = asyncio.ensure_future(approve_every_ask())
    try:
        assert fresh_window.ai_panel.send("fix add() and show add(2, 3)")
        await wait_for(lambda: not fresh_window.ai_panel.running, timeout=60)
    finally:
        approver.cancel()
    assert (project / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    results = [r for request in fake_anthropic.requests for r in request.tool_results()]
    assert len(results) == 3 and not any(r.get("is_error") for r in results), results
    assert "5" in str(results[-1].get("content"))
    assert len(approved) >= 2  # the edit and the command asked; none was refused outright
