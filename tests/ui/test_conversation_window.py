"""A long stored conversation opens with its end only (conversation_pager): the last window of
messages, earlier pages above on request or by scrolling to the top (what is in view stays
put), and edit and resend, regenerate and Find still act on the right stored messages."""

from __future__ import annotations

from app.core.agent.forking import prompt_rows
from app.ui.ai_panel.conversation_pager import ConversationPager
from app.ui.ai_panel.find_bar import FindBar
from app.ui.widgets.tool_card import ToolCard
from app.ui.widgets.transcript_view import MessageView, RunFooter
from tests.fakes.anthropic_server import (  # noqa: F401  (fixtures)
    Response,
    fake_anthropic,
    fake_anthropic_env,
)
from tests.ui.conftest import make_ai_panel, wait_for

WINDOW = 20
PAGE = 20


def _store(services, exchanges: int, changes: dict[int, dict] | None = None) -> int:
    """``exchanges`` prompts ("prompt 1"…), each answered ("answer 1"…); every fourth with a
    read_file call and its result before the answer (4 stored messages instead of 2), whose
    audit row records ``changes[n]`` (a ``CallChanges.to_json()``) when given."""
    repo = services.conversations
    cid = repo.create(title="long").id
    for n in range(1, exchanges + 1):
        repo.append(cid, "user", f"prompt {n}")
        if n % 4 == 0:
            tool_id = f"toolu_{n:03d}"
            repo.append(cid, "assistant", [
                {"type": "text", "text": f"reading {n}"},
                {"type": "tool_use", "id": tool_id, "name": "read_file",
                 "input": {"path": f"f{n}.txt"}}])
            repo.append(cid, "user", [{"type": "tool_result", "tool_use_id": tool_id,
                                       "content": f"contents {n}"}])
            row = services.audit.record(
                tool_name="read_file", server_id="builtin", tool_input={"path": f"f{n}.txt"},
                decision="allow", outcome="executed", output=f"contents {n}", duration_ms=1,
                conversation_id=cid, tool_use_id=tool_id)
            if changes and n in changes:
                services.audit.set_changes(row, changes[n])
        repo.append(cid, "assistant", f"answer {n}")
    return cid


def _text_of(content: object) -> str:
    if isinstance(content, str):
        return content
    assert isinstance(content, list)
    return "".join(b["text"] for b in content if b.get("type") == "text")


def _texts(panel, role: str | None = None) -> list[str]:
    return [w.markdown for w in panel.transcript.items()
            if isinstance(w, MessageView) and (role is None or w.role == role)]


def _open(qtbot, panel, cid: int, batch_ms: float = 0.0) -> ConversationPager:
    pager = panel.conversations.open(cid, window=WINDOW, page=PAGE, batch_ms=batch_ms)
    qtbot.waitUntil(lambda: not pager.busy)
    return pager


def test_a_long_conversation_opens_with_its_last_window(qtbot, services, project) -> None:
    cid = _store(services, 150)  # 150 prompts, 375 stored messages
    stored = services.conversations.messages(cid)
    panel = make_ai_panel(qtbot, services, project, size=(700, 500), show=True)
    pager = _open(qtbot, panel, cid)
    first = pager.first_shown
    # The window: the runs holding the last WINDOW messages, from a prompt on.
    assert len(stored) - WINDOW - 4 < first <= len(stored) - WINDOW
    assert stored[first].role == "user" and stored[first].content.startswith("prompt ")
    shown_prompts = _texts(panel, "user")
    assert shown_prompts[0] == stored[first].content and shown_prompts[-1] == "prompt 150"
    assert _texts(panel)[-1] == "answer 150"
    assert panel.transcript.hidden_prompts == len(prompt_rows(stored[:first]))
    assert panel.transcript.earlier_button.isVisible()
    assert str(first) in panel.transcript.earlier_button.text()
    cards = [w for w in panel.transcript.items() if isinstance(w, ToolCard)]
    footers = [w for w in panel.transcript.items() if isinstance(w, RunFooter)]
    assert cards and all(panel.tool_cards.footers[c.tool_use_id] in footers for c in cards)
    assert len(panel.transcript.items()) < 40  # not 375 messages' worth of widgets


def test_the_first_batch_shows_the_end_before_the_event_loop_runs(
        qtbot, services, project) -> None:
    cid = _store(services, 150)
    panel = make_ai_panel(qtbot, services, project, size=(700, 500), show=True)
    pager = panel.conversations.open(cid, window=WINDOW, page=PAGE, batch_ms=0.0)
    assert pager.busy  # one run now, the rest of the window in later turns
    assert _texts(panel) == ["prompt 150", "answer 150"]
    qtbot.waitUntil(lambda: not pager.busy)
    assert len(_texts(panel)) > 2 and _texts(panel)[-1] == "answer 150"


def test_scrolling_to_the_top_loads_the_page_before_and_keeps_the_view(
        qtbot, services, project) -> None:
    cid = _store(services, 150)
    panel = make_ai_panel(qtbot, services, project, size=(700, 400), show=True)
    pager = _open(qtbot, panel, cid)
    transcript = panel.transcript
    bar = transcript.verticalScrollBar()
    old_top = transcript.items()[0]
    # Laid out: the end in view, "Show earlier messages" above the first item.
    qtbot.waitUntil(lambda: 0 < bar.maximum() == bar.value() and old_top.y() > 0)
    first_before = pager.first_shown
    prompts_before = _texts(panel, "user")
    bar.setValue(0)  # as the wheel would, to the very top
    offset = old_top.y() - bar.value()
    qtbot.waitUntil(lambda: pager.first_shown < first_before and not pager.busy)
    assert _texts(panel, "user")[-len(prompts_before):] == prompts_before
    assert len(_texts(panel, "user")) > len(prompts_before)
    # What was at the top of the view is still there once the page is laid out.
    qtbot.waitUntil(lambda: abs(old_top.y() - bar.value() - offset) <= 1)
    assert bar.value() > 0
    stored = services.conversations.messages(cid)
    assert transcript.hidden_prompts == len(prompt_rows(stored[:pager.first_shown]))


def test_show_earlier_button_loads_pages_down_to_the_start(qtbot, services, project) -> None:
    cid = _store(services, 40)
    panel = make_ai_panel(qtbot, services, project, size=(700, 400), show=True)
    pager = _open(qtbot, panel, cid)
    button = panel.transcript.earlier_button
    while button.isVisible():
        button.click()
        qtbot.waitUntil(lambda: not pager.busy)
    assert _texts(panel, "user") == [f"prompt {n}" for n in range(1, 41)]
    assert panel.transcript.hidden_prompts == 0 and pager.first_shown == 0
    finder = FindBar(panel.transcript)
    qtbot.addWidget(finder)
    finder.field.setText("prompt 1")
    finder.search()
    assert "loaded" not in finder.count_label.text()


def test_find_says_it_searched_the_loaded_messages(qtbot, services, project) -> None:
    cid = _store(services, 150)
    panel = make_ai_panel(qtbot, services, project, size=(700, 400), show=True)
    _open(qtbot, panel, cid)
    finder = FindBar(panel.transcript)
    qtbot.addWidget(finder)
    finder.field.setText("prompt 3")  # prompt 3, 30-39: only 130-139 are loaded
    finder.search()
    assert finder.count_label.text().endswith("in the loaded messages")


def test_a_short_conversation_is_built_at_once(qtbot, services, project) -> None:
    cid = _store(services, 5)
    panel = make_ai_panel(qtbot, services, project, size=(700, 400), show=True)
    pager = panel.conversations.open(cid, window=WINDOW, page=PAGE)
    assert not pager.busy and pager.first_shown == 0
    assert _texts(panel, "user") == [f"prompt {n}" for n in range(1, 6)]
    assert not panel.transcript.earlier_button.isVisible()
    assert panel.transcript.hidden_prompts == 0
    pager.load_earlier()  # nothing before the start
    assert not pager.busy


def test_another_conversation_stops_the_pager(qtbot, services, project) -> None:
    long_id, short_id = _store(services, 150), _store(services, 2)
    panel = make_ai_panel(qtbot, services, project, size=(700, 400), show=True)
    pager = panel.conversations.open(long_id, window=WINDOW, page=PAGE, batch_ms=0.0)
    assert pager.busy
    panel.conversations.open(short_id, window=WINDOW, page=PAGE)
    qtbot.wait(50)  # the old pager's next batch would have run by now
    assert _texts(panel) == ["prompt 1", "answer 1", "prompt 2", "answer 2"]
    assert panel.transcript.hidden_prompts == 0


async def test_edit_and_resend_a_message_of_an_earlier_page(
        qtbot, services, project, fake_anthropic_env) -> None:  # noqa: F811
    cid = _store(services, 150)
    fake_anthropic_env.script(Response.text("Edited answer."))
    panel = make_ai_panel(qtbot, services, project, size=(700, 400), show=True)
    pager = panel.conversations.open(cid, window=WINDOW, page=PAGE, batch_ms=0.0)
    await wait_for(lambda: not pager.busy)
    window_first = pager.first_shown
    pager.load_earlier()
    await wait_for(lambda: not pager.busy)
    assert pager.first_shown < window_first
    target = next(w for w in panel.transcript.items()  # the first prompt of that page
                  if isinstance(w, MessageView) and w.role == "user")
    n = int(target.markdown.removeprefix("prompt "))
    assert 1 < n < 140
    actions = panel.conversation_actions
    assert actions.start_edit(target)
    panel.prompt.setPlainText(f"prompt {n}, edited")
    assert panel.send()
    await wait_for(lambda: not panel.running, timeout=20)
    stored = services.conversations.messages(cid)
    prompts = [_text_of(m.content) for m in prompt_rows(stored)]
    assert prompts[-2:] == [f"prompt {n - 1}", f"prompt {n}, edited"]
    assert len(prompts) == n
    assert stored[-1].role == "assistant"
    sent = fake_anthropic_env.last_request.messages
    assert sent[-1]["content"] == [{"type": "text", "text": f"prompt {n}, edited"}]
    assert _texts(panel, "user") == [f"prompt {n}, edited"]  # the rest was cut after it
    assert _texts(panel)[-1] == "Edited answer."
    await panel.shutdown()


async def test_regenerate_the_last_answer_of_a_long_conversation(
        qtbot, services, project, fake_anthropic_env) -> None:  # noqa: F811
    cid = _store(services, 150)
    fake_anthropic_env.script(Response.text("A new answer."))
    panel = make_ai_panel(qtbot, services, project, size=(700, 400), show=True)
    pager = panel.conversations.open(cid, window=WINDOW, page=PAGE, batch_ms=0.0)
    await wait_for(lambda: not pager.busy)
    assert panel.conversation_actions.regenerate()
    await wait_for(lambda: not panel.running, timeout=20)
    stored = services.conversations.messages(cid)
    assert stored[-2].content == "prompt 150"
    assert stored[-1].content == [{"type": "text", "text": "A new answer."}]
    assert len(prompt_rows(stored)) == 150
    assert _texts(panel)[-2:] == ["prompt 150", "A new answer."]
    await panel.shutdown()


async def test_cards_of_an_earlier_page_get_their_changes_and_restore(
        qtbot, services, project) -> None:
    """A call with file changes in a page loaded later: its change set is rebuilt from the
    checkpoints, and the prompt before it offers "Restore to before this message"."""
    checkpointer = services.checkpointer_for(project)
    assert checkpointer is not None
    before = await checkpointer.snapshot("before toolu_120")
    (project / "a.txt").write_text("changed\n")
    changes = await checkpointer.around_call_end("toolu_120", before)
    assert changes is not None
    cid = _store(services, 150, changes={120: changes.to_json()})
    panel = make_ai_panel(qtbot, services, project, size=(700, 400), show=True)
    pager = panel.conversations.open(cid, window=WINDOW, page=PAGE, batch_ms=0.0)
    await wait_for(lambda: not pager.busy)
    assert "toolu_120" not in [w.tool_use_id for w in panel.transcript.items()
                               if isinstance(w, ToolCard)]
    while "prompt 120" not in _texts(panel, "user"):
        pager.load_earlier()
        await wait_for(lambda: not pager.busy)
    card = next(w for w in panel.transcript.items()
                if isinstance(w, ToolCard) and w.tool_use_id == "toolu_120")
    await wait_for(lambda: card.has_changes)
    assert panel.tool_cards.footers["toolu_120"].isVisible()
    prompt = next(w for w in panel.transcript.items()
                  if isinstance(w, MessageView) and w.markdown == "prompt 120")
    assert prompt.restore_button is not None and prompt.restore_button.isVisible()
    await panel.shutdown()
