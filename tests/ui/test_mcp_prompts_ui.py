"""MCP prompts and resources in the AI panel (issue 19) against real servers: the reference
server-everything (prompts with arguments, an embedded-resource prompt, resources and
templates) and the in-repo demo server run with ``--rich``.

``/`` at the start of the prompt lists the prompts; choosing one with arguments opens a form
that will not accept empty required arguments; the expanded prompt lands in the prompt box
(never sent by itself) and reaches the Messages API on Send. The resource browser lists,
filters and attaches resources, whose text the API receives. Server errors are shown."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from app.core.agent.mcp_context import PromptChoice
from app.core.tools.providers.mcp.config.schema import parse_mcp_config
from app.ui.dialogs.mcp_prompt_form import McpPromptForm
from tests.fakes.anthropic_server import (  # noqa: F401  (fixtures)
    Response,
    fake_anthropic,
    fake_anthropic_env,
)
from tests.mcp_reference import everything_entry
from tests.mcp_servers import DEMO_SERVER
from tests.ui.conftest import make_ai_panel, wait_for


def rich_demo() -> dict:
    return {"command": sys.executable, "args": [str(DEMO_SERVER), "--rich"]}


async def run_servers(services, **entries: dict) -> None:
    provider = services.mcp
    assert provider is not None
    await provider.apply_config(parse_mcp_config({"mcpServers": entries}).servers)
    for name in entries:
        assert provider.server_status(name).state == "running", provider.server_status(name)


@pytest.fixture
async def mcp_services(services):
    yield services
    if services.mcp is not None:
        await services.mcp.aclose()


def panel_for(qtbot, services, project: Path):
    panel = make_ai_panel(qtbot, services, project, size=(700, 500), show=True)
    messages: list[str] = []
    panel.status_message.connect(messages.append)
    return panel, messages


async def type_slash(qtbot, panel, text: str):
    """Type ``text`` into the prompt and wait for the completer's popup."""
    extras = panel.mcp_prompts
    panel.prompt.setFocus()
    qtbot.keyClicks(panel.prompt, text)
    await wait_for(lambda: extras.popup.isVisible(), timeout=20)
    model = extras.completer.completionModel()
    return [model.index(i, 0).data() for i in range(model.rowCount())]


async def test_slash_lists_prompts_and_the_form_requires_arguments_before_inserting(
        qtbot, mcp_services, project):
    await run_servers(mcp_services, everything=everything_entry())
    panel, messages = panel_for(qtbot, mcp_services, project)
    extras = panel.mcp_prompts

    shown = await type_slash(qtbot, panel, "/")
    assert "/args-prompt  —  Arguments Prompt" in shown
    assert "/simple-prompt  —  Simple Prompt" in shown
    qtbot.keyClicks(extras.popup, "args")  # typing on narrows the list
    await wait_for(lambda: extras.completer.completionCount() == 1)
    assert panel.prompt.toPlainText() == "/args"
    qtbot.keyClick(extras.popup, Qt.Key.Key_Return)

    await wait_for(lambda: isinstance(extras.form, McpPromptForm) and extras.form.isVisible())
    form = extras.form
    assert not form.ok_button.isEnabled()  # "city" is required
    form.accept()  # Enter in the form: still refused
    assert form.isVisible() and form.missing() == ["city"]
    assert panel.prompt.toPlainText() == ""  # the "/args" went; nothing inserted yet
    qtbot.keyClicks(form.fields["city"], "Lisbon")
    assert form.ok_button.isEnabled()
    qtbot.mouseClick(form.ok_button, Qt.MouseButton.LeftButton)

    await wait_for(lambda: "Lisbon" in panel.prompt.toPlainText(), timeout=20)
    assert not panel.running  # inserted for review, never sent
    assert any("review it, then send" in m for m in messages)


async def test_expanded_prompt_reaches_the_api_on_send(qtbot, mcp_services, project,
                                                      fake_anthropic_env):  # noqa: F811
    await run_servers(mcp_services, demo=rich_demo())
    fake_anthropic_env.script(Response.text("Reviewed."))
    panel, _ = panel_for(qtbot, mcp_services, project)
    extras = panel.mcp_prompts

    assert await type_slash(qtbot, panel, "/rev") == ["/review  —  Ask for a review of a topic."]
    qtbot.keyClick(extras.popup, Qt.Key.Key_Tab)
    await wait_for(lambda: extras.form is not None and extras.form.isVisible())
    qtbot.keyClicks(extras.form.fields["topic"], "the patch")
    extras.form.accept()
    await wait_for(lambda: panel.prompt.toPlainText() == "Please review the patch.", timeout=20)

    assert panel.send()
    await wait_for(lambda: not panel.running, timeout=20)
    content = fake_anthropic_env.message_requests[0].body["messages"][0]["content"]
    texts = [content] if isinstance(content, str) else [b.get("text") for b in content]
    assert "Please review the patch." in texts


async def test_embedded_resource_of_a_prompt_becomes_an_attachment(qtbot, mcp_services,
                                                                   project):
    await run_servers(mcp_services, everything=everything_entry())
    panel, _ = panel_for(qtbot, mcp_services, project)
    extras = panel.mcp_prompts
    choices = await extras.load_choices()
    choice = next(c for c in choices if c.name == "resource-prompt")

    assert await extras.insert_prompt(choice, {"resourceType": "Text", "resourceId": "2"})
    tray = panel.attachment_tray
    await wait_for(lambda: tray.chips and not tray.busy)
    [attachment] = tray.attachments()
    assert attachment.kind == "text" and attachment.name.endswith("/2")
    assert "[attached resource" in panel.prompt.toPlainText()


async def test_a_server_error_is_shown_not_raised(qtbot, mcp_services, project):
    await run_servers(mcp_services, demo=rich_demo())
    panel, messages = panel_for(qtbot, mcp_services, project)
    extras = panel.mcp_prompts

    ghost = PromptChoice(server="demo", name="no-such-prompt", label="no-such-prompt")
    assert not await extras.insert_prompt(ghost, {})
    box = extras.error_box
    assert isinstance(box, QMessageBox) and box.isVisible()
    assert "no-such-prompt" in box.text() and "demo" in box.text()
    assert panel.prompt.toPlainText() == ""

    await mcp_services.mcp.stop_server("demo")  # a stopped server: its prompts are not listed
    assert await extras.load_choices() == []
    assert "No running MCP server offers prompts." in messages


async def test_prompt_menu_lists_prompts_and_inserts_at_the_cursor(qtbot, mcp_services,
                                                                   project):
    await run_servers(mcp_services, demo=rich_demo())
    panel, _ = panel_for(qtbot, mcp_services, project)
    extras = panel.mcp_prompts
    assert extras.button.parent() is not None  # placed in the panel, under Stop

    await extras.refresh_prompt_menu()
    actions = [a for a in extras.prompt_menu.actions() if a.data()]
    assert [a.data() for a in actions] == ["review"]
    panel.prompt.setPlainText("Before. ")
    panel.prompt.moveCursor(panel.prompt.textCursor().MoveOperation.End)
    actions[0].trigger()
    await wait_for(lambda: extras.form is not None and extras.form.isVisible())
    extras.form.fields["topic"].setText("docs")
    extras.form.accept()
    await wait_for(lambda: panel.prompt.toPlainText() == "Before. Please review docs.",
                   timeout=20)


# -- resources ------------------------------------------------------------------------------------


async def test_resource_browser_lists_filters_and_attaches_text_that_is_sent(
        qtbot, mcp_services, project, fake_anthropic_env):  # noqa: F811
    await run_servers(mcp_services, everything=everything_entry())
    fake_anthropic_env.script(Response.text("Read it."))
    panel, _ = panel_for(qtbot, mcp_services, project)
    extras = panel.mcp_prompts

    extras.attach_resource_action.trigger()
    await wait_for(lambda: extras.browser is not None)
    browser = extras.browser
    assert browser.isVisible()
    await wait_for(lambda: browser.loaded, timeout=20)
    uris = browser.visible_uris()
    assert "demo://resource/static/document/architecture.md" in uris
    assert "demo://resource/dynamic/text/{resourceId}" in uris  # a template
    browser.filter.setText("ARCHITECTURE")
    assert browser.visible_uris() == ["demo://resource/static/document/architecture.md"]

    assert browser.select_uri("demo://resource/static/document/architecture.md")
    assert browser.attach_button.isEnabled()
    qtbot.mouseClick(browser.attach_button, Qt.MouseButton.LeftButton)
    tray = panel.attachment_tray
    await wait_for(lambda: tray.attachments() and not tray.busy, timeout=20)
    assert not browser.isVisible()
    [attachment] = tray.attachments()
    body = attachment.data.decode("utf-8")
    assert body.strip()

    panel.prompt.setPlainText("Summarise the attached document.")
    assert panel.send()
    await wait_for(lambda: not panel.running, timeout=20)
    content = fake_anthropic_env.message_requests[0].body["messages"][0]["content"]
    document = content[0]
    assert document["type"] == "document"
    assert document["title"] == "demo://resource/static/document/architecture.md"
    assert document["source"]["data"] == body


async def test_template_asks_for_its_variable_and_a_read_error_stays_in_the_dialog(
        qtbot, mcp_services, project):
    await run_servers(mcp_services, everything=everything_entry())
    panel, _ = panel_for(qtbot, mcp_services, project)
    extras = panel.mcp_prompts
    extras.open_resource_browser()
    await wait_for(lambda: extras.browser is not None)
    browser = extras.browser
    await wait_for(lambda: browser.loaded, timeout=20)

    # resourceId must be an integer: the server refuses "abc" and the dialog says so.
    assert browser.select_uri("demo://resource/dynamic/text/{resourceId}")
    browser.attach_selected()
    form = browser.template_form
    assert not form.ok_button.isEnabled()
    form.fields["resourceId"].setText("abc")
    form.accept()
    await wait_for(lambda: not browser.busy and "abc" in browser.status.text(), timeout=20)
    assert browser.isVisible() and not panel.attachment_tray.chips

    browser.attach_selected()
    browser.template_form.fields["resourceId"].setText("3")
    browser.template_form.accept()
    tray = panel.attachment_tray
    await wait_for(lambda: tray.attachments() and not tray.busy, timeout=20)
    assert tray.attachments()[0].name == "demo://resource/dynamic/text/3"


async def test_without_running_servers_slash_and_the_browser_say_so(qtbot, mcp_services,
                                                                    project):
    panel, messages = panel_for(qtbot, mcp_services, project)
    extras = panel.mcp_prompts
    qtbot.keyClicks(panel.prompt, "/")
    await wait_for(lambda: "No running MCP server offers prompts." in messages)
    assert not extras.popup.isVisible() and panel.prompt.toPlainText() == "/"

    extras.open_resource_browser()
    await wait_for(lambda: extras.browser is not None and extras.browser.loaded)
    assert extras.browser.status.text().startswith("No MCP server is running")
    assert extras.browser.visible_uris() == []
