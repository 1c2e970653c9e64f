"""The countdown of a request waiting to be retried: it counts, and goes when the answer
starts."""

from __future__ import annotations

from app.ui.ai_panel.run_notes import RetryCountdown
from tests.fakes.anthropic_server import (  # noqa: F401  (fixtures)
    Response,
    fake_anthropic,
    fake_anthropic_env,
)
from tests.ui.conftest import make_ai_panel, wait_for


def test_the_countdown_counts_down_and_stops(qtbot) -> None:  # type: ignore[no-untyped-def]
    note = RetryCountdown(3.2, "rate limited")
    qtbot.addWidget(note)
    note.show()
    assert note.text() == "⏳ Rate limited — retrying in 3 s…"
    note._tick()
    assert "in 2 s" in note.text()
    note._tick()
    note._tick()
    assert note.text().endswith("retrying now…") and not note._timer.isActive()
    note.stop()
    assert not note.isVisible()


async def test_a_rate_limited_send_shows_the_countdown_until_the_answer(
        qtbot, services, project, fake_anthropic_env) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    server = fake_anthropic_env
    server.script(Response.error(429, retry_after_ms=400), Response.text("Here."))
    panel = make_ai_panel(qtbot, services, project, size=(700, 500), show=True)
    assert panel.send("hello")
    await wait_for(lambda: any(w.objectName() == "retry-countdown"
                               for w in panel.transcript.items()), timeout=20)
    (note,) = [w for w in panel.transcript.items() if w.objectName() == "retry-countdown"]
    assert "Rate limited" in note.text()
    await wait_for(lambda: not panel.running, timeout=20)
    assert not note.isVisible()
    await panel.shutdown()
