"""Render README screenshots: run under Xvfb (`xvfb-run -s '-screen 0 1400x900x24' ...`).

Drives the real main window against the fake Messages API from the tests: a request that
edits a file (approval dialog with its diff), the finished run, and the rules settings.
Writes PNGs to resources/screenshots/.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
OUT = ROOT / "resources" / "screenshots"

GUIDE = """# Getting started

Install the package and run it.

## Usage

Call `tebiki --help` for options.
"""


async def wait_for(condition, timeout: float = 20.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        if loop.time() > deadline:
            raise TimeoutError("screenshot scenario stalled")
        await asyncio.sleep(0.02)


def screen(name: str) -> None:
    """The whole X screen, dialogs and all (what a person sees)."""
    subprocess.run(["import", "-window", "root", str(OUT / name)], check=True)


async def scenario(app) -> None:
    from app.core.permissions.rules import PermissionRule
    from app.core.services import build_services
    from app.core.store.db import open_database
    from app.core.store.profiles import ToolSetting
    from app.ui.main_window import MainWindow
    from tests.fakes.anthropic_server import FakeAnthropicServer, Response, Text, tool

    data = Path(tempfile.mkdtemp(prefix="tebiki-shots-"))
    project = data / "acme-docs"
    (project / "doc").mkdir(parents=True)
    (project / "doc" / "guide.md").write_text(GUIDE)
    (project / "README.md").write_text("# Acme docs\n")
    server = FakeAnthropicServer().start()
    os.environ["ANTHROPIC_BASE_URL"] = server.base_url
    os.environ["ANTHROPIC_API_KEY"] = "sk-ant-screenshot"
    server.script(
        Response.tools(tool("read_file", {"path": "doc/guide.md"}),
                       text="I'll look at the current guide first."),
        Response.tool_use("edit_file", {
            "path": "doc/guide.md",
            "old_string": "Install the package and run it.\n",
            "new_string": "Install the package with `pipx install tebiki`, then open a "
                          "project folder.\n\n1. File → Open Folder…\n2. Ask for work in "
                          "the Assistant panel.\n"},
            text="The install step is vague; I'll make it concrete."),
        Response.of(Text("Done. The **Getting started** section now says how to install "
                         "Tebiki and what to do first:\n\n- `pipx install tebiki`\n- open "
                         "a project folder\n- ask for work in the Assistant panel")),
    )
    db = open_database(data / "tebiki.sqlite3")
    services = build_services(db, data, project)
    profile_id = services.profiles.ensure_default().id
    services.profiles.set_tool(profile_id, ToolSetting("edit_file", True,
                                                       {"allowed_write_dirs": ["doc"]}))
    services.permissions.rules.add(PermissionRule(
        decision="deny", tool_name="shell_exec", input_pattern="rm *", priority=100,
        description="Never delete files from the shell"))
    window = MainWindow(services=services, project_root=project)
    window.resize(1280, 800)
    window.move(60, 40)
    window.show()
    window.ai_panel.prompt.setPlainText("Make the install step in doc/guide.md concrete.")
    await asyncio.sleep(0.5)
    window.ai_panel.send()
    await wait_for(lambda: window.approvals.current_dialog is not None)
    dialog = window.approvals.current_dialog
    dialog.resize(760, 560)
    await asyncio.sleep(0.6)
    screen("approval-dialog.png")
    dialog.approve_button.click()
    await wait_for(lambda: not window.ai_panel.running)
    await asyncio.sleep(0.6)
    screen("main-window.png")

    settings = window.open_settings()
    settings.tabs.setCurrentIndex(1)
    settings.resize(1000, 680)
    tab = settings.rules_tab
    tab.test_tool.setCurrentText("shell_exec")
    tab.test_input.setPlainText('{"command": "git status && rm -rf build"}')
    tab.run_test()
    await asyncio.sleep(0.6)
    screen("rules-settings.png")
    settings.close()
    await window.ai_panel.shutdown()
    await services.registry.aclose()
    window.close()
    server.close()


def main() -> None:
    import qasync
    from PySide6.QtWidgets import QApplication

    OUT.mkdir(parents=True, exist_ok=True)
    app = QApplication(sys.argv)
    app.setQuitOnLastWindowClosed(False)
    with asyncio.Runner(loop_factory=qasync.QEventLoop) as runner:
        runner.run(scenario(app))
    print("screenshots written to", OUT)


if __name__ == "__main__":
    main()
