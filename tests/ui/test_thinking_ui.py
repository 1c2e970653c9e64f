"""Thinking in the transcript: shown collapsed above the turn's answer, never inside it (so
never in a copy of it), and again when the conversation is reopened."""

from __future__ import annotations

from dataclasses import replace

from app.ui.widgets.thinking_view import ThinkingView
from app.ui.widgets.transcript_view import MessageView
from tests.fakes.anthropic_server import (  # noqa: F401  (fixtures)
    RedactedThinking,
    Response,
    Text,
    Thinking,
    fake_anthropic,
    fake_anthropic_env,
)
from tests.ui.conftest import make_ai_panel, wait_for

THOUGHT = "The user wants a haiku about tests. Five, seven, five."


async def test_thinking_is_collapsed_above_the_answer_and_comes_back_on_reload(
        qtbot, services, project, fake_anthropic_env):  # noqa: F811
    profile = services.profiles.ensure_default()
    services.profiles.update(replace(profile, thinking="adaptive"))
    fake_anthropic_env.script(Response.of(Thinking(THOUGHT), RedactedThinking(),
                                          Text("Green checks at dawn.")))
    panel = make_ai_panel(qtbot, services, project, size=(700, 500), show=True)
    assert panel.send("a haiku please")
    await wait_for(lambda: not panel.running, timeout=20)
    kinds = [type(w).__name__ for w in panel.transcript.items()]
    assert kinds[-3:] == ["ThinkingView", "ThinkingView", "MessageView"], kinds
    thinking = [w for w in panel.transcript.items() if isinstance(w, ThinkingView)]
    assert not thinking[0].body.isVisible() and "Thinking (" in thinking[0].toggle.text()
    thinking[0].toggle.click()
    assert thinking[0].body.isVisible() and THOUGHT in thinking[0].body.text()
    assert not thinking[1].toggle.isEnabled()  # redacted: nothing to show
    answer = [w for w in panel.transcript.items() if isinstance(w, MessageView)][-1]
    assert THOUGHT not in answer.toPlainText()

    conversation = panel.session.conversation_id
    await panel.shutdown()
    again = make_ai_panel(qtbot, services, project)
    again.conversations.open(conversation)
    replayed = [type(w).__name__ for w in again.transcript.items()]
    assert replayed.count("ThinkingView") == 2
    await again.shutdown()
