"""Prompt-argument completion in the prompt form: the server's suggestions
(``completion/complete``, a real server: tests/mcp_servers/modern_server.py) are offered as
the person types; an answer for text the person has since changed is dropped, and a failing
completion is no suggestions, not an error."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from PySide6.QtCore import QStringListModel

from app.core.agent.mcp_context import PromptArgument
from app.core.tools.providers.mcp.config.schema import parse_mcp_config
from app.core.tools.providers.mcp.provider import McpProvider
from app.ui.dialogs.mcp_prompt_form import CompleteArgument, McpPromptForm
from tests.ui.conftest import wait_for

MODERN = Path(__file__).parents[1] / "mcp_servers" / "modern_server.py"
ARGUMENTS = [PromptArgument("city", "Where to", True), PromptArgument("days")]


def _form(qtbot, complete: CompleteArgument) -> McpPromptForm:
    form = McpPromptForm("/trip", "Plan a trip", ARGUMENTS, complete=complete)
    qtbot.addWidget(form)
    form.show()
    form.fields["city"].setFocus()
    return form


def _offered(form: McpPromptForm, name: str) -> list[str]:
    model = form.completers[name].model()
    assert isinstance(model, QStringListModel)
    return model.stringList()


async def test_the_servers_suggestions_are_offered_as_the_person_types(qtbot):
    provider = McpProvider(parse_mcp_config({"mcpServers": {"modern": {
        "command": sys.executable, "args": [str(MODERN)]}}}).servers)
    await provider.start()
    try:
        async def complete(argument: str, typed: str, filled: dict[str, str]) -> list[str]:
            return await provider.queries.complete_prompt_argument(
                "modern", "trip", argument, typed, filled)

        form = _form(qtbot, complete)
        qtbot.keyClicks(form.fields["city"], "Pa")
        await wait_for(lambda: _offered(form, "city") == ["Paris", "Parma"], timeout=20)
        qtbot.keyClicks(form.fields["city"], "rm")
        await wait_for(lambda: _offered(form, "city") == ["Parma"], timeout=20)
    finally:
        await provider.aclose()


async def test_an_answer_for_text_since_changed_is_dropped(qtbot):
    release = asyncio.Event()
    asked: list[str] = []

    async def complete(argument: str, typed: str, filled: dict[str, str]) -> list[str]:
        asked.append(typed)
        if typed == "P":
            await release.wait()  # the slow answer to the first keystroke
            return ["Stale"]
        return ["Porto"]

    form = _form(qtbot, complete)
    qtbot.keyClicks(form.fields["city"], "Po")
    await wait_for(lambda: _offered(form, "city") == ["Porto"])
    release.set()
    await wait_for(lambda: not form._tasks._tasks)
    assert asked == ["P", "Po"] and _offered(form, "city") == ["Porto"]


async def test_a_failing_completion_offers_nothing_and_the_form_still_works(qtbot):
    async def complete(argument: str, typed: str, filled: dict[str, str]) -> list[str]:
        raise RuntimeError("server gone")

    form = _form(qtbot, complete)
    qtbot.keyClicks(form.fields["city"], "Rome")
    await wait_for(lambda: not form._tasks._tasks)
    assert _offered(form, "city") == [] and form.ok_button.isEnabled()
    assert form.values() == {"city": "Rome"}
