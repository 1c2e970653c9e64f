"""Per-message actions: copy (the Markdown source; a code block's exact fence body), edit and
resend, regenerate, the context bar and compaction, in the AI panel against the loopback
Messages API."""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import QEvent, QPointF, Qt
from PySide6.QtGui import QEnterEvent, QGuiApplication, QMouseEvent
from PySide6.QtWidgets import QApplication, QLabel, QPushButton, QToolButton

from app.core.agent.compaction import SUMMARY_INTRO
from app.core.agent.events import UsageUpdated
from app.core.pricing import Usage
from app.ui.widgets.message_actions import code_blocks, code_runs, code_text, copy_message
from app.ui.widgets.transcript_view import MessageView
from tests.fakes.anthropic_server import (  # noqa: F401  (fixtures)
    Response,
    Text,
    Thinking,
    fake_anthropic,
    fake_anthropic_env,
)
from tests.ui.conftest import make_ai_panel, wait_for

MARKDOWN = ("Here is a **Markdown** check.\n\n## A heading\n\n"
            "```python\ndef fib(n: int) -> int:\n\treturn n  \n\n    # indented\n```\n\n"
            "- one\n- two\n\n"
            "~~~\nplain ``` text\n~~~\n\nThe end.")
FIRST_CODE = "def fib(n: int) -> int:\n\treturn n  \n\n    # indented"
TOO_LONG = "prompt is too long: 210000 tokens > 200000 maximum"


def _clipboard() -> str:
    return QGuiApplication.clipboard().text()


def _streamed(qtbot, text: str) -> MessageView:
    view = MessageView("", "assistant")
    qtbot.addWidget(view)
    for start in range(0, len(text), 5):
        view.append(text[start:start + 5])
        view.render_markdown()
    return view


def _views(panel, role: str | None = None) -> list[MessageView]:
    return [w for w in panel.transcript.items()
            if isinstance(w, MessageView) and (role is None or w.role == role)]


def test_copy_is_the_markdown_source_for_streamed_and_whole_messages(qtbot) -> None:
    for view in (_streamed(qtbot, MARKDOWN), MessageView(MARKDOWN)):
        QGuiApplication.clipboard().clear()
        copy_message(view)
        assert _clipboard() == MARKDOWN
        assert len(code_runs(view.document())) == 2
        assert code_text(view, 0) == FIRST_CODE
        assert code_text(view, 1) == "plain ``` text"


def test_code_blocks_read_fences_as_commonmark_does() -> None:
    text = "  ```js\n  let a = 1;\n    b();\n  ```\n````\n```\ninner\n```\n````\n```\nopen"
    assert [(b.language, b.body) for b in code_blocks(text)] == [
        ("js", "let a = 1;\n  b();"), ("", "```\ninner\n```"), ("", "open")]


def test_an_incomplete_mark_is_not_copied(qtbot) -> None:
    view = MessageView("Half an ans")
    qtbot.addWidget(view)
    if not hasattr(view, "mark_incomplete"):
        return
    view.mark_incomplete()
    copy_message(view)
    assert _clipboard() == "Half an ans"


def test_hover_shows_the_toolbar_and_the_code_button(qtbot) -> None:
    view = MessageView(MARKDOWN)
    qtbot.addWidget(view)
    view.resize(600, 400)
    view.show()
    qtbot.waitExposed(view)
    QApplication.sendEvent(view, QEnterEvent(QPointF(5, 5), QPointF(5, 5), QPointF(5, 5)))
    toolbar = view.message_actions.toolbar
    assert toolbar is not None and toolbar.isVisible()
    QGuiApplication.clipboard().clear()
    toolbar.findChild(QToolButton, "copy-message").click()
    assert _clipboard() == MARKDOWN
    # Over the second code block: its own Copy button, which copies its fence body.
    second = code_runs(view.document())[1][0]
    rect = view.document().documentLayout().blockBoundingRect(second)
    pos = QPointF(rect.left() + 5, rect.center().y())
    QApplication.sendEvent(view.viewport(), QMouseEvent(
        QEvent.Type.MouseMove, pos, view.viewport().mapToGlobal(pos.toPoint()).toPointF(),
        Qt.MouseButton.NoButton, Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier))
    button = view.message_actions.code_button
    assert button is not None and button.isVisible()
    button.click()
    assert _clipboard() == "plain ``` text"
    QApplication.sendEvent(view, QEvent(QEvent.Type.Leave))
    assert not toolbar.isVisible() and not button.isVisible()


def test_the_context_menu_holds_every_action(qtbot) -> None:
    view = MessageView(MARKDOWN)
    qtbot.addWidget(view)
    menu = view.message_actions.context_menu()
    labels = [a.text() for a in menu.actions()]
    assert "Copy message (Markdown)" in labels
    assert "Copy code block 1 (python)" in labels and "Copy code block 2" in labels
    next(a for a in menu.actions() if a.text() == "Copy code block 1 (python)").trigger()
    assert _clipboard() == FIRST_CODE
    user = MessageView("a question", "user")
    qtbot.addWidget(user)
    assert "Edit and resend…" in [a.text() for a in user.message_actions.context_menu().actions()]


async def test_copy_after_reload_and_without_thinking(qtbot, services, project,
                                                      fake_anthropic_env) -> None:  # noqa: F811
    profile = services.profiles.ensure_default()
    services.profiles.update(replace(profile, thinking="adaptive"))
    fake_anthropic_env.script(Response.of(Thinking("secret reasoning"), Text(MARKDOWN)))
    panel = make_ai_panel(qtbot, services, project, size=(700, 500), show=True)
    assert panel.send("show me markdown")
    await wait_for(lambda: not panel.running, timeout=20)
    QGuiApplication.clipboard().clear()
    assert panel.conversation_actions.copy_last_answer()
    assert _clipboard() == MARKDOWN
    conversation = panel.session.conversation_id
    await panel.shutdown()

    again = make_ai_panel(qtbot, services, project)
    again.conversations.open(conversation)
    answer = _views(again, "assistant")[-1]
    copy_message(answer)
    assert _clipboard() == MARKDOWN and "secret reasoning" not in _clipboard()
    assert code_text(answer, 0) == FIRST_CODE
    await again.shutdown()


async def test_edit_and_resend_forks_the_conversation(qtbot, services, project,
                                                      fake_anthropic_env) -> None:  # noqa: F811
    server = fake_anthropic_env
    server.script(Response.text("One."), Response.text("Two."), Response.text("One, again."))
    panel = make_ai_panel(qtbot, services, project, size=(700, 500), show=True)
    for prompt in ("first", "second"):
        assert panel.send(prompt)
        await wait_for(lambda: not panel.running, timeout=20)
    first = _views(panel, "user")[0]
    panel.prompt.setPlainText("a draft")
    QApplication.sendEvent(first, QEnterEvent(QPointF(5, 5), QPointF(5, 5), QPointF(5, 5)))
    first.message_actions.toolbar.findChild(QToolButton, "edit-message").click()
    actions = panel.conversation_actions
    assert actions.editing is first and panel.prompt.toPlainText() == "first"
    assert actions.edit_banner.isVisible()
    actions.cancel_edit()  # Cancel puts the draft back and changes nothing
    assert panel.prompt.toPlainText() == "a draft" and not actions.edit_banner.isVisible()

    assert actions.start_edit(first)
    panel.prompt.setPlainText("first, edited")
    assert panel.send()
    await wait_for(lambda: not panel.running, timeout=20)
    assert [(v.role, v.markdown) for v in _views(panel)] == [
        ("user", "first, edited"), ("assistant", "One, again.")]
    assert server.last_request.messages == [
        {"role": "user", "content": [{"type": "text", "text": "first, edited"}]}]
    stored = services.conversations.messages(panel.session.conversation_id)
    assert [m.role for m in stored] == ["user", "assistant"]
    await panel.shutdown()


async def test_no_edit_or_regenerate_while_running(qtbot, services, project,
                                                   fake_anthropic_env) -> None:  # noqa: F811
    fake_anthropic_env.script(Response.text("Hello."), Response.text("Slow.", delay_s=2))
    panel = make_ai_panel(qtbot, services, project, size=(700, 500), show=True)
    assert panel.send("hi")
    await wait_for(lambda: not panel.running, timeout=20)
    assert panel.send("again")
    messages: list[str] = []
    panel.status_message.connect(messages.append)
    actions = panel.conversation_actions
    assert not actions.start_edit(_views(panel, "user")[0])
    assert not actions.regenerate() and panel.compaction.compact() is None
    assert messages.count("Stop or wait for the run to finish first.") == 3
    assert panel.prompt.toPlainText() == ""
    panel.stop()
    await wait_for(lambda: not panel.running, timeout=20)
    await panel.shutdown()


async def test_regenerate_replaces_the_last_answer(qtbot, services, project,
                                                   fake_anthropic_env) -> None:  # noqa: F811
    server = fake_anthropic_env
    server.script(Response.text("Hello."), Response.text("Fine."), Response.text("Great."))
    panel = make_ai_panel(qtbot, services, project, size=(700, 500), show=True)
    for prompt in ("hi", "how are you"):
        assert panel.send(prompt)
        await wait_for(lambda: not panel.running, timeout=20)
    older, last = _views(panel, "assistant")
    assert "Regenerate answer" not in [a.text() for a in
                                       older.message_actions.context_menu().actions()]
    QApplication.sendEvent(last, QEnterEvent(QPointF(5, 5), QPointF(5, 5), QPointF(5, 5)))
    button = last.message_actions.toolbar.findChild(QToolButton, "regenerate-answer")
    assert button.isVisible()
    button.click()
    await wait_for(lambda: not panel.running, timeout=20)
    assert [v.markdown for v in _views(panel)] == ["hi", "Hello.", "how are you", "Great."]
    assert [m["role"] for m in server.last_request.messages] == ["user", "assistant", "user"]
    await panel.shutdown()


def test_the_context_bar_shows_use_and_offers_compact(qtbot, services, project) -> None:
    panel = make_ai_panel(qtbot, services, project, size=(700, 500), show=True)
    bar = panel.compaction.context_bar
    assert not bar.isVisible()
    panel.handle_event(UsageUpdated("claude-sonnet-4-5", Usage(100_000, 10, 50_000, 20_000),
                                    {"claude-sonnet-4-5": Usage(100_000, 10, 50_000, 20_000)}))
    assert bar.isVisible() and abs(bar.fraction - 0.85) < 1e-9
    assert "170.0k of 200.0k tokens (85%)" in bar.toolTip()
    assert bar.compact_button.isVisible()
    panel.handle_event(UsageUpdated("claude-sonnet-4-5", Usage(2_000, 10),
                                    {"claude-sonnet-4-5": Usage(102_000, 20, 50_000, 20_000)}))
    assert bar.fraction == 0.01 and not bar.compact_button.isVisible()


async def test_compact_from_the_bar_then_the_summary_is_sent(
        qtbot, services, project, fake_anthropic_env) -> None:  # noqa: F811
    server = fake_anthropic_env
    server.script(Response.text("Hello.", input_tokens=180_000),
                  Response.text("We said hello."), Response.text("Next."))
    panel = make_ai_panel(qtbot, services, project, size=(700, 500), show=True)
    assert panel.send("hi")
    await wait_for(lambda: not panel.running, timeout=20)
    bar = panel.compaction.context_bar
    assert bar.compact_button.isVisible()
    bar.compact_button.click()
    await wait_for(lambda: not panel.running, timeout=20)
    notes = [w for w in panel.transcript.items()
             if isinstance(w, QLabel) and w.objectName() == "compaction-note"]
    assert notes and "2 earlier messages" in notes[0].text()
    assert bar.used < 1000 and not bar.compact_button.isVisible()
    assert [v.markdown for v in _views(panel)] == ["hi", "Hello."]  # the transcript stays
    assert panel.send("go on")
    await wait_for(lambda: not panel.running, timeout=20)
    sent = server.last_request.messages
    assert len(sent) == 1
    assert [b["text"] for b in sent[0]["content"]] == [SUMMARY_INTRO + "We said hello.", "go on"]
    await panel.shutdown()


async def test_a_too_long_request_offers_compact_and_retry(
        qtbot, services, project, fake_anthropic_env) -> None:  # noqa: F811
    server = fake_anthropic_env
    server.script(Response.text("One."), Response.error(400, message=TOO_LONG),
                  Response.text("Summary."), Response.text("The answer."))
    panel = make_ai_panel(qtbot, services, project, size=(700, 500), show=True)
    for prompt in ("first", "second"):
        assert panel.send(prompt)
        await wait_for(lambda: not panel.running, timeout=20)
    offer = [w for w in panel.transcript.items() if w.objectName() == "compact-offer"]
    assert offer
    button = offer[0].findChild(QPushButton, "compact-and-retry")
    button.click()
    assert not button.isEnabled()
    await wait_for(lambda: not panel.running and len(server.message_requests) == 4, timeout=20)
    assert _views(panel)[-1].markdown == "The answer."
    assert [b["text"] for b in server.last_request.messages[0]["content"]] == [
        SUMMARY_INTRO + "Summary.", "second"]
    await panel.shutdown()


def test_other_errors_offer_no_compaction(qtbot, services, project) -> None:
    panel = make_ai_panel(qtbot, services, project)
    assert not panel.compaction.offer_compaction("Overloaded")
    assert panel.compaction.offer_compaction(TOO_LONG)


async def test_edit_a_reloaded_conversation_with_tool_calls(
        qtbot, services, project, fake_anthropic_env) -> None:  # noqa: F811
    """The n-th person's message shown is the n-th prompt stored: tool results (stored as user
    messages) are not counted."""
    repo = services.conversations
    conv = repo.create(title="earlier")
    repo.append(conv.id, "user", [{"type": "text", "text": "first"}])
    repo.append(conv.id, "assistant", [
        {"type": "text", "text": "Reading."},
        {"type": "tool_use", "id": "toolu_r", "name": "read_file", "input": {"path": "a"}}])
    repo.append(conv.id, "user", [{"type": "tool_result", "tool_use_id": "toolu_r",
                                   "content": "contents of a"}])
    repo.append(conv.id, "assistant", [{"type": "text", "text": "Done."}])
    repo.append(conv.id, "user", [{"type": "text", "text": "second"}])
    repo.append(conv.id, "assistant", [{"type": "text", "text": "Ok."}])
    fake_anthropic_env.script(Response.text("Ok, edited."))
    panel = make_ai_panel(qtbot, services, project, size=(700, 500), show=True)
    panel.conversations.open(conv.id)
    assert panel.conversation_actions.edit_last()  # Ctrl+Shift+E's action
    assert panel.prompt.toPlainText() == "second"
    panel.prompt.setPlainText("second, edited")
    assert panel.send()
    await wait_for(lambda: not panel.running, timeout=20)
    sent = fake_anthropic_env.last_request.messages
    assert [m["role"] for m in sent] == ["user", "assistant", "user", "assistant", "user"]
    assert sent[2]["content"][0]["type"] == "tool_result"
    assert sent[-1]["content"] == [{"type": "text", "text": "second, edited"}]
    assert [v.markdown for v in _views(panel)] == ["first", "Reading.", "Done.",
                                                   "second, edited", "Ok, edited."]
    assert len(repo.messages(conv.id)) == 6
    await panel.shutdown()


def test_keyboard_reaches_edit_and_escape_cancels(qtbot, services, project) -> None:
    panel = make_ai_panel(qtbot, services, project, size=(700, 500), show=True)
    panel.sessions.ensure(project)
    panel.transcript.add(MessageView("a question", "user"))
    panel.activateWindow()
    panel.prompt.setFocus()
    qtbot.waitUntil(panel.prompt.hasFocus)
    qtbot.keyClick(panel.prompt, Qt.Key.Key_E,
                   Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    assert panel.conversation_actions.editing is not None
    assert panel.prompt.toPlainText() == "a question"
    qtbot.keyClick(panel.prompt, Qt.Key.Key_Escape)
    assert panel.conversation_actions.editing is None and panel.prompt.toPlainText() == ""


async def test_stop_cancels_a_compaction(qtbot, services, project,
                                         fake_anthropic_env) -> None:  # noqa: F811
    server = fake_anthropic_env
    server.script(Response.text("Hello."), Response.text("Too late.", delay_s=2))
    panel = make_ai_panel(qtbot, services, project, size=(700, 500), show=True)
    assert panel.send("hi")
    await wait_for(lambda: not panel.running, timeout=20)
    assert panel.compaction.compact() is not None
    await wait_for(lambda: len(server.message_requests) == 2, timeout=20)
    panel.stop()
    await wait_for(lambda: not panel.running, timeout=20)
    notes = [w.text() for w in panel.transcript.items() if isinstance(w, QLabel)]
    assert "■ Compaction stopped; nothing was changed." in notes
    stored = services.conversations.messages(panel.session.conversation_id)
    assert len(stored) == 2 and not panel.session.running
    await panel.shutdown()


async def test_a_reopened_conversation_shows_its_context(qtbot, services, project) -> None:
    from app.core.agent.compaction import marker_content
    from app.core.store.usage import UsageRepository

    repo = services.conversations
    conv = repo.create(title="long")
    repo.append(conv.id, "user", [{"type": "text", "text": "hi"}])
    repo.append(conv.id, "assistant", [{"type": "text", "text": "Hello."}])
    UsageRepository(services.db).record(conv.id, "claude-sonnet-4-5", Usage(10, 5, 0, 0))
    UsageRepository(services.db).record(conv.id, "claude-sonnet-4-5",
                                        Usage(150_000, 5, 10_000, 5_000))
    panel = make_ai_panel(qtbot, services, project, size=(700, 500), show=True)
    bar = panel.compaction.context_bar
    panel.conversations.open(conv.id)
    await wait_for(bar.isVisible)
    assert bar.used == 165_000 and bar.compact_button.isVisible()

    repo.append(conv.id, "user", marker_content("s" * 4000, 2))
    panel.new_conversation()
    assert not bar.isVisible()
    panel.conversations.open(conv.id)
    await wait_for(bar.isVisible)
    assert bar.used == 1000 and "about 1.0k" in bar.toolTip()
    assert [v.markdown for v in _views(panel)] == ["hi", "Hello."]  # the marker is not shown
    await panel.shutdown()


async def test_another_sender_while_editing_sends_normally(
        qtbot, services, project, fake_anthropic_env) -> None:  # noqa: F811
    fake_anthropic_env.script(Response.text("One."), Response.text("Continued."))
    panel = make_ai_panel(qtbot, services, project, size=(700, 500), show=True)
    assert panel.send("first")
    await wait_for(lambda: not panel.running, timeout=20)
    actions = panel.conversation_actions
    assert actions.start_edit(_views(panel, "user")[0])
    panel.prompt.setPlainText("first, being edited")
    assert panel.send("Continue where you stopped.")  # e.g. the round cap's Continue
    await wait_for(lambda: not panel.running, timeout=20)
    assert [v.markdown for v in _views(panel)] == [
        "first", "One.", "Continue where you stopped.", "Continued."]
    assert actions.editing is _views(panel, "user")[0]
    assert panel.prompt.toPlainText() == "first, being edited"
    await panel.shutdown()
