"""The end of the conversation in the panel: "‹ 1/2 ›" on a regenerated answer (the arrows
switch the answer shown and the one the next prompt continues from), a prompt the model never
answered drawn as such with Resend (sent again as its own turn, never merged with the next
one), and both the same after the conversation is opened again from the store."""

from __future__ import annotations

from app.ui.widgets.answer_end import UnansweredBar, VersionSwitch
from app.ui.widgets.transcript_view import ErrorCard, MessageView
from tests.fakes.anthropic_server import (  # noqa: F401  (fixtures)
    Response,
    fake_anthropic,
    fake_anthropic_env,
)
from tests.ui.conftest import make_ai_panel, wait_for


def _texts(panel) -> list[str]:
    return [w.markdown for w in panel.transcript.items() if isinstance(w, MessageView)]


def _only(panel, kind):
    found = [w for w in panel.transcript.items() if isinstance(w, kind)]
    return found[0] if len(found) == 1 else None


def _sent(request) -> list[str]:
    return ["".join(b.get("text", "") for b in m["content"] if b.get("type") == "text")
            if isinstance(m["content"], list) else m["content"] for m in request.messages]


async def _settled(panel) -> None:
    await wait_for(lambda: not panel.running, timeout=20)
    end = panel.conversation_actions.answer_end
    await wait_for(lambda: not end._tasks._tasks)


async def _failed_prompt(qtbot, services, project, fake, text: str):
    """A panel whose first request (``text``) failed; the next one is answered."""
    fake.script(Response.error(400, "invalid_request_error", "bad request"),
                Response.text("Answered."))
    panel = make_ai_panel(qtbot, services, project, size=(700, 500), show=True)
    assert panel.send(text)
    await _settled(panel)
    return panel


async def test_regenerate_shows_versions_and_the_arrows_switch_them(
        qtbot, services, project, fake_anthropic_env) -> None:  # noqa: F811
    fake_anthropic_env.script(Response.text("One."), Response.text("Two."),
                              Response.text("Next."))
    panel = make_ai_panel(qtbot, services, project, size=(700, 500), show=True)
    assert panel.send("question")
    await _settled(panel)
    assert _only(panel, VersionSwitch) is None
    assert panel.conversation_actions.regenerate()
    await _settled(panel)
    switch = _only(panel, VersionSwitch)
    assert switch is not None and switch.label.text() == "2/2"
    assert panel.transcript.items()[-1] is switch  # under the answer
    assert switch.previous_button.isEnabled() and not switch.next_button.isEnabled()
    assert _texts(panel) == ["question", "Two."]

    switch.previous_button.click()
    await wait_for(lambda: _only(panel, VersionSwitch) is not None
                   and _only(panel, VersionSwitch).label.text() == "1/2")
    await _settled(panel)
    assert _texts(panel) == ["question", "One."]
    cid = panel.session.conversation_id

    # Opened again from the store: the same version, the same switch.
    panel.new_conversation()
    await wait_for(lambda: _only(panel, VersionSwitch) is None)
    panel.conversations.open(cid)
    await wait_for(lambda: _only(panel, VersionSwitch) is not None)
    assert _only(panel, VersionSwitch).label.text() == "1/2"
    assert _texts(panel) == ["question", "One."]

    # The next prompt continues from the version shown.
    assert panel.send("go on")
    await _settled(panel)
    assert _sent(fake_anthropic_env.last_request) == ["question", "One.", "go on"]
    assert _only(panel, VersionSwitch) is None  # the last answer was never regenerated
    await panel.shutdown()


async def test_a_failed_prompt_is_marked_and_resend_sends_it_as_its_own_turn(
        qtbot, services, project, fake_anthropic_env) -> None:  # noqa: F811
    panel = await _failed_prompt(qtbot, services, project, fake_anthropic_env, "question")
    bar = _only(panel, UnansweredBar)
    assert bar is not None and bar.badge.text() == "⚠ Not answered"
    prompt = [w for w in panel.transcript.items() if isinstance(w, MessageView)][-1]
    assert prompt.property("unanswered") is True
    assert panel.transcript.items().index(bar) == panel.transcript.items().index(prompt) + 1
    cid = panel.session.conversation_id

    panel.new_conversation()
    panel.conversations.open(cid)  # reloaded: drawn the same
    await wait_for(lambda: _only(panel, UnansweredBar) is not None)
    bar = _only(panel, UnansweredBar)
    assert _texts(panel) == ["question"]

    bar.resend_button.click()
    await _settled(panel)
    assert _only(panel, UnansweredBar) is None and _only(panel, ErrorCard) is None
    assert _texts(panel) == ["question", "Answered."]
    assert _sent(fake_anthropic_env.last_request) == ["question"]
    stored = services.conversations.messages(cid)
    assert [m.role for m in stored] == ["user", "assistant"]
    await panel.shutdown()


async def test_a_new_prompt_takes_the_place_of_a_failed_one_live_and_on_reload(
        qtbot, services, project, fake_anthropic_env) -> None:  # noqa: F811
    panel = await _failed_prompt(qtbot, services, project, fake_anthropic_env, "first try")
    assert _only(panel, UnansweredBar) is not None
    assert panel.send("second try")
    await _settled(panel)
    assert _sent(fake_anthropic_env.last_request) == ["second try"]  # never merged
    assert _texts(panel) == ["second try", "Answered."]
    assert _only(panel, UnansweredBar) is None and _only(panel, ErrorCard) is None
    cid = panel.session.conversation_id
    panel.new_conversation()
    panel.conversations.open(cid)
    await wait_for(lambda: _texts(panel) == ["second try", "Answered."])
    await _settled(panel)
    assert _only(panel, UnansweredBar) is None
    await panel.shutdown()
