"""The main window with the longest texts it can be given: a very long model name, usage line,
status, conversation title, project path and a 60-character MCP tool name. Used by
tests/ui/test_window_fits_screen.py in-process and, for a scale factor, as a subprocess:

    QT_SCALE_FACTOR=2 python -m tests.ui.window_fit   # prints {"min_width": …, …} (logical px)
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from app.core.services import Services
    from app.ui.main_window import MainWindow

LONG_MODEL = "claude-experimental-long-context-preview-" + "x" * 60 + "-2031-12-31"
LONG_TOOL = "mcp_" + "very_long_remote_tool_name_" * 2 + "ab"  # 60 characters
LONG_TEXT = "A status that goes on and on " * 12


class _IdleTool:
    def __init__(self, spec) -> None:
        self.spec = spec

    async def execute(self, input, ctx):  # never called: only listed
        raise AssertionError("not run here")


def register_long_tool(services: Services) -> None:
    """A third-party tool with a 60-character name, as an MCP server may offer."""
    from app.core.tools.base import RiskLevel, ToolCategory, ToolSpec
    from app.core.tools.providers.base import StaticProvider

    assert len(LONG_TOOL) == 60
    spec = ToolSpec(LONG_TOOL, "A tool with a long name", {"type": "object"},
                    ToolCategory.EXECUTION, RiskLevel.HIGH, server_id="a-server-with-a-long-name",
                    runs_programs=True)
    services.registry.register_provider(StaticProvider([_IdleTool(spec)], id="long-names",
                                                       display_name="Long names"))


def fill_with_long_texts(window: MainWindow) -> None:
    """Every text the window shows that can grow, made as long as it gets."""
    from app.core.pricing import Usage

    services = window.live_services
    profile = services.profiles.get(window.profile_id)
    services.profiles.update(replace(profile, model=LONG_MODEL))
    window.profiles.refresh()
    window.profiles.model_warning.setText("⚠ " + LONG_TEXT)
    window.profiles.project_label.setText(f"Project: /home/someone/{'deep/' * 30}project  ")
    panel = window.ai_panel
    big = Usage(123_456_789, 98_765_432, 12_345_678, 987_654_321)
    panel.usage.show(LONG_MODEL, big, {LONG_MODEL: big, "another-" + LONG_MODEL: big})
    panel.conversations.title.setText("A conversation title " * 10)
    panel.compaction.context_bar.show_usage(190_000, 200_000)
    window.status_label.setText(LONG_TEXT)
    window.approvals_label.setText("12345 approval(s) pending")


def long_text_window(services: Services, project: Path) -> MainWindow:
    """The real main window over ``services`` with the tools attached, shown and filled with
    long texts."""
    from app.ui.main_window import MainWindow

    register_long_tool(services)
    window = MainWindow(services=services, project_root=project)
    window.show()
    fill_with_long_texts(window)
    return window


def _print_minimum_size() -> None:
    import keyring
    from PySide6.QtWidgets import QApplication

    from app.core.services import build_services
    from app.core.store.db import open_database
    from tests.ui.conftest import MemoryKeyring

    keyring.set_keyring(MemoryKeyring())  # never the user's
    app = QApplication.instance() or QApplication(sys.argv)
    with tempfile.TemporaryDirectory() as folder:
        data_dir, project = Path(folder) / "data", Path(folder) / "project"
        os.environ["TEBIKI_DATA_DIR"] = str(data_dir)
        data_dir.mkdir()
        project.mkdir()
        db = open_database(data_dir / "tebiki.sqlite3")
        window = long_text_window(build_services(db, data_dir, project), project)
        app.processEvents()
        hint, minimum = window.minimumSizeHint(), window.minimumSize()
        print(json.dumps({"min_width": max(hint.width(), minimum.width()),
                          "min_height": max(hint.height(), minimum.height()),
                          "ratio": window.devicePixelRatio()}))
        window.close()
        db.close()


if __name__ == "__main__":
    _print_minimum_size()
