"""The URL consent dialog (app.ui.dialogs.url_elicitation): what the person sees, that only
their click opens the page, and what each exit answers; then end to end, a real server's URL
request and its -32042 refusal through the app's queue (the browser replaced by a recorder)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QLabel, QPushButton, QWidget

from app.core.services import Services
from app.core.tools.base import ToolContext
from app.core.tools.providers.mcp.config.schema import parse_mcp_config
from app.core.tools.providers.mcp.url_elicitation import UrlElicitation, url_elicitation_from_wire
from app.ui.dialogs.url_elicitation import UrlElicitationDialog
from app.ui.server_requests import install_server_requests
from tests.ui.conftest import wait_for

HUMAN_LOOP = Path(__file__).parents[1] / "mcp_servers" / "human_loop_server.py"
SIGN_IN = UrlElicitation("Sign in to continue.",
                         "https://auth.example/authorize?client=tebiki&state=abc", "e1")


class Browser:
    def __init__(self, works: bool = True) -> None:
        self.works = works
        self.opened: list[str] = []

    def __call__(self, url: QUrl) -> bool:
        self.opened.append(url.toString(QUrl.ComponentFormattingOption.FullyEncoded))
        return self.works


def _dialog(qtbot: Any, request: UrlElicitation = SIGN_IN,
            browser: Browser | None = None) -> tuple[UrlElicitationDialog, Browser]:
    browser = browser or Browser()
    dialog = UrlElicitationDialog("billing", request, None, open_url=browser)
    qtbot.addWidget(dialog)
    dialog.show()
    return dialog, browser


def test_it_shows_the_server_the_host_and_the_full_url(qtbot) -> None:
    dialog, browser = _dialog(qtbot)
    labels = " ".join(label.text() for label in dialog.findChildren(QLabel))
    assert "billing" in dialog.windowTitle() and "<b>billing</b>" in labels
    assert "Sign in to continue." in labels
    assert dialog.host_label.text() == "auth.example"
    assert dialog.host_label.font().bold()
    assert dialog.host_label.font().pointSizeF() > dialog.message_label.font().pointSizeF()
    assert dialog.url_view.toPlainText() == SIGN_IN.url and dialog.url_view.isReadOnly()
    assert not any(b.isDefault() or b.autoDefault() for b in dialog.findChildren(QPushButton))
    assert browser.opened == []  # nothing opens by itself


def test_open_opens_exactly_that_url_and_accepts(qtbot) -> None:
    dialog, browser = _dialog(qtbot)
    dialog.open_button.click()
    assert browser.opened == [SIGN_IN.url]
    assert dialog.reply().action == "accept" and dialog.reply().content is None


def test_decline_and_close_open_nothing(qtbot) -> None:
    declined, browser = _dialog(qtbot)
    declined.decline_button.click()
    assert declined.reply().action == "decline"
    closed, _ = _dialog(qtbot, browser=browser)
    closed.close()
    assert closed.reply().action == "cancel"
    assert browser.opened == []


def test_a_browser_that_does_not_start_keeps_the_dialog_open(qtbot) -> None:
    dialog, _ = _dialog(qtbot, browser=Browser(works=False))
    dialog.open_button.click()
    assert dialog.isVisible() and dialog.problem_label.isVisible()
    assert "could not be started" in dialog.problem_label.text()
    dialog.decline_button.click()
    assert dialog.reply().action == "decline"


def test_a_look_alike_host_is_spelt_as_the_browser_reads_it(qtbot) -> None:
    request = url_elicitation_from_wire({"url": "https://b\u0430nk.example/login",
                                         "message": "m"})
    dialog, browser = _dialog(qtbot, request)
    assert dialog.host_label.text() == "xn--bnk-6cd.example"
    labels = " ".join(label.text() for label in dialog.findChildren(QLabel))
    assert "The server wrote it as" in labels
    dialog.open_button.click()  # Qt reads the same host, so it opens
    assert [QUrl(u).host(QUrl.ComponentFormattingOption.FullyEncoded)
            for u in browser.opened] == ["xn--bnk-6cd.example"]


@pytest.mark.parametrize("url", [
    "https://evil.example\\@bank.example/",  # built directly: the wire parser refuses it
    "https://0x7f.1/",  # shown as "0x7f.1"; the browser would go to 127.0.0.1
])
def test_a_url_qt_reads_differently_is_not_opened(qtbot, url: str) -> None:
    dialog, browser = _dialog(qtbot, UrlElicitation("m", url))
    dialog.open_button.click()
    assert browser.opened == [] and dialog.problem_label.isVisible()


# -- end to end ----------------------------------------------------------------------------------


async def test_a_servers_url_request_and_its_required_pages_reach_the_person(
        qtbot, services: Services, project: Path, monkeypatch) -> None:
    browser = Browser()
    monkeypatch.setattr(QDesktopServices, "openUrl", browser)
    window = QWidget()
    qtbot.addWidget(window)
    window.profile_id = services.profiles.ensure_default().id  # type: ignore[attr-defined]
    await asyncio.to_thread(services.build_tools)
    queue = install_server_requests(window, services)
    mcp = services.mcp
    assert mcp is not None
    await mcp.apply_config(parse_mcp_config({"mcpServers": {"loop": {
        "command": sys.executable, "args": [str(HUMAN_LOOP)]}}}).servers)
    ctx = ToolContext(project_root=project)

    async def shown() -> UrlElicitationDialog:
        await wait_for(lambda: isinstance(queue.current_dialog, UrlElicitationDialog),
                       timeout=30)
        dialog = queue.current_dialog
        assert isinstance(dialog, UrlElicitationDialog)
        return dialog

    try:
        call = asyncio.ensure_future(mcp.call("loop", "ask_person_url", {}, ctx))
        dialog = await shown()
        assert dialog.host_label.text() == "example.invalid"
        dialog.open_button.click()
        result = await asyncio.wait_for(call, 30)
        assert json.JSONDecoder().raw_decode(result.content)[0] == {"action": "accept"}
        assert browser.opened == ["https://example.invalid/login"]

        call = asyncio.ensure_future(mcp.call(
            "loop", "needs_pages", {"urls": ["https://pay.example/checkout"]}, ctx))
        required = await shown()
        assert required.url_view.toPlainText() == "https://pay.example/checkout"
        required.decline_button.click()
        result = await asyncio.wait_for(call, 30)
        assert result.is_error and "a page on pay.example: the person declined" in \
            result.content
        assert browser.opened == ["https://example.invalid/login"]
    finally:
        queue.abort("test over")
        await services.aclose()
