"""Sending a message brings the view to it, even when the person had scrolled up to read."""

from __future__ import annotations

from app.ui.widgets.transcript_view import MessageView
from tests.fakes.anthropic_server import (  # noqa: F401  (fixtures)
    Response,
    fake_anthropic,
    fake_anthropic_env,
)
from tests.ui.conftest import make_ai_panel, wait_for


async def test_send_scrolls_to_the_new_message(  # type: ignore[no-untyped-def]
        qtbot, services, project, fake_anthropic_env) -> None:  # noqa: F811
    server = fake_anthropic_env
    panel = make_ai_panel(qtbot, services, project, size=(600, 400), show=True)
    for n in range(30):
        panel.transcript.add(MessageView(f"earlier message {n}\n\nwith two lines", "assistant"))
    bar = panel.transcript.verticalScrollBar()
    await wait_for(lambda: bar.maximum() > 0, timeout=10)
    bar.setValue(0)  # the person scrolled up to read
    server.script(Response.text("ok"))
    assert panel.send("a new question")
    await wait_for(lambda: not panel.running, timeout=20)
    await wait_for(lambda: bar.value() == bar.maximum(), timeout=10)
    sent = [w for w in panel.transcript.items()
            if isinstance(w, MessageView) and w.role == "user"][-1]
    top = sent.mapTo(panel.transcript.widget(), sent.rect().topLeft()).y()
    assert top >= bar.value() - sent.height()
    await panel.shutdown()
