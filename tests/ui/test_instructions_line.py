"""The AI panel's instructions line: which instructions files the model is given, with their
sizes, read off the GUI thread when a project opens and at each run start; Open opens one."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QSizePolicy

from tests.fakes.anthropic_server import (  # noqa: F401  (fixtures)
    Response,
    fake_anthropic,
    fake_anthropic_env,
)
from tests.ui.conftest import make_ai_panel, wait_for


def _line(panel) -> str:
    button = panel.instructions.button
    return button.text() if button.isVisible() else ""


async def test_the_line_names_the_files_and_their_sizes(qtbot, services, project: Path,
                                                        monkeypatch):
    (project / "AGENTS.md").write_text("a" * 2150, encoding="utf-8")
    (project / "CLAUDE.md").write_text("b" * (40 * 1024), encoding="utf-8")
    panel = make_ai_panel(qtbot, services, project, size=(700, 500), show=True)
    assert not panel.instructions.button.isVisible()

    panel.project_opened(project)
    await wait_for(lambda: _line(panel) != "")

    assert _line(panel) == "Instructions: AGENTS.md (2.1 KB), CLAUDE.md (cut at 32 KB)"
    opened: list[QUrl] = []
    monkeypatch.setattr(QDesktopServices, "openUrl", lambda url: opened.append(url))
    actions = panel.instructions.menu.actions()
    assert [a.text() for a in actions] == ["Open AGENTS.md", "Open CLAUDE.md"]
    actions[0].trigger()
    assert [u.toLocalFile() for u in opened] == [str(project / "AGENTS.md")]
    # Long names are clipped, never widening the panel.
    assert panel.instructions.button.sizePolicy().horizontalPolicy() is \
        QSizePolicy.Policy.Ignored
    await panel.shutdown()


async def test_a_run_start_reads_them_again(qtbot, services, project: Path,
                                            fake_anthropic_env):  # noqa: F811
    fake_anthropic_env.script(Response.text("Hello."))
    panel = make_ai_panel(qtbot, services, project, size=(700, 500), show=True)
    panel.project_opened(project)
    await wait_for(lambda: not panel.instructions._pending)
    assert _line(panel) == ""  # none yet
    personal = services.data_dir / "instructions.md"
    personal.write_text("Answer in French.", encoding="utf-8")

    panel.prompt.setPlainText("hi")
    assert panel.send()
    await wait_for(lambda: _line(panel) != "")
    await wait_for(lambda: not panel.running, timeout=20)

    assert _line(panel) == "Instructions: personal instructions.md (17 bytes)"
    sent = fake_anthropic_env.message_requests[-1].body.get("system")
    assert "Answer in French." in str(sent)
    await panel.shutdown()


async def test_no_files_no_line(qtbot, services, project: Path):
    panel = make_ai_panel(qtbot, services, project, size=(700, 500), show=True)
    panel.instructions.show(())  # as a read that found none leaves it
    panel.project_opened(project)
    await wait_for(lambda: not panel.instructions._pending)

    assert not panel.instructions.button.isVisible()
    await panel.shutdown()
