"""A Send before the run's modules were warmed up (the person did not type first) imports the
agent's session off the GUI thread: the window keeps handling events, and a Stop meanwhile
gives the prompt back without sending anything."""

from __future__ import annotations

import sys

import pytest
from PySide6.QtCore import QTimer

from app.core.agent.attachments import attachment_from_bytes
from app.ui.ai_panel import panel as panel_module
from tests.fakes.anthropic_server import (  # noqa: F401  (fixtures)
    Response,
    fake_anthropic,
    fake_anthropic_env,
)
from tests.ui import slow_imports
from tests.ui.conftest import make_ai_panel, wait_for

HELD = "tests.ui.slow_imports.held"


@pytest.fixture
def held_session_import(monkeypatch: pytest.MonkeyPatch):
    """The panel's session module is one whose import waits until the test opens the gate."""
    monkeypatch.setattr(panel_module, "SESSION_MODULE", HELD)
    monkeypatch.delitem(sys.modules, HELD, raising=False)
    slow_imports.ENTERED.clear()
    slow_imports.GATE.clear()
    yield slow_imports.GATE
    slow_imports.GATE.set()  # never leave a worker waiting


async def test_the_first_send_imports_the_session_off_the_gui_thread(
        qtbot, services, project, fake_anthropic_env, held_session_import):  # noqa: F811
    fake_anthropic_env.script(Response.text("Hello."))
    panel = make_ai_panel(qtbot, services, project, size=(700, 500), show=True)
    panel.prompt.setPlainText("hi")
    assert panel.send()
    await wait_for(slow_imports.ENTERED.is_set)
    ticks: list[int] = []
    QTimer.singleShot(0, lambda: ticks.append(1))
    await wait_for(lambda: ticks == [1])  # the GUI thread handles events during the import
    assert panel.running and panel.session is None and fake_anthropic_env.message_requests == []

    held_session_import.set()
    await wait_for(lambda: not panel.running, timeout=20)
    assert panel.session is not None
    sent = fake_anthropic_env.message_requests[-1].body["messages"]
    assert [m["role"] for m in sent] == ["user"]
    assert [b["text"] for b in sent[0]["content"] if b["type"] == "text"] == ["hi"]
    await panel.shutdown()


@pytest.mark.parametrize("stop_at", ["during the import", "before the run's task started"])
async def test_stop_while_the_session_loads_gives_the_prompt_back(
        qtbot, services, project, fake_anthropic_env, held_session_import,  # noqa: F811
        stop_at):
    panel = make_ai_panel(qtbot, services, project, size=(700, 500), show=True)
    panel.attachment_tray.add_attachment(attachment_from_bytes("notes.md", b"# notes\n"))
    panel.prompt.setPlainText("do the thing")
    assert panel.send()
    if stop_at == "during the import":
        await wait_for(slow_imports.ENTERED.is_set)
    assert panel.prompt.toPlainText() == ""
    panel.stop()
    held_session_import.set()
    await wait_for(lambda: not panel.running, timeout=20)

    assert panel.prompt.toPlainText() == "do the thing"
    assert [a.name for a in panel.attachment_tray.attachments()] == ["notes.md"]
    assert panel.session is None
    assert fake_anthropic_env.message_requests == []
    assert not any(getattr(item, "markdown", None) == "do the thing"
                   for item in panel.transcript.items())
    await panel.shutdown()
