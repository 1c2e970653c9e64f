"""A tool call the server refused with -32042 "URL elicitation required" (MCP 2025-11-25):
the server needs the person to open one or more web pages (its error data lists them as
URL-mode elicitations) before the tool can run.

Each page is shown to the person as a URL-mode elicitation request would be
(``ServerRequestHandler.elicit_url``: the consent dialog); the model then learns that the call
was not completed, what the person answered (the page's host, never the URL, which may carry
a token) and that it may retry once the person has finished there. Malformed error data, a
page that cannot be shown, a dialog that fails or times out: each is a line of that answer,
never an exception.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import anyio

from app.core.tools.base import ToolResult
from app.core.tools.providers.mcp.server_requests import (
    SERVER_REQUEST_TIMEOUT_S,
    HandlerSource,
    ServerRequestHandler,
)
from app.core.tools.providers.mcp.url_elicitation import UrlElicitation, url_elicitation_from_wire

log = logging.getLogger(__name__)

URL_ELICITATION_REQUIRED = -32042
# More pages than any sign-in needs: the rest are not shown (a server must not queue dozens
# of dialogs).
MAX_PAGES = 5

_ANSWERS = {"accept": "the person chose to open it in the browser",
            "decline": "the person declined to open it",
            "cancel": "the person closed the request without opening it"}


def required_pages(exc: BaseException) -> list[Any] | None:
    """The pages a -32042 error lists (as sent, unread), or None for any other failure."""
    if getattr(exc, "code", None) != URL_ELICITATION_REQUIRED:
        return None
    data = getattr(exc, "data", None)
    pages = data.get("elicitations") if isinstance(data, Mapping) else None
    return list(pages) if isinstance(pages, list) else []


async def ask_for_pages(server: str, tool_name: str, pages: list[Any], source: HandlerSource,
                        *, timeout_s: float = SERVER_REQUEST_TIMEOUT_S) -> ToolResult:
    """Show each page to the person, then tell the model the call did not run and why."""
    head = (f"MCP server {server!r} did not run {tool_name}: it needs the person to open a web "
            "page first (URL elicitation required). The call was not completed.")
    handler = source()
    if handler is None:
        return ToolResult.error(f"{head} Tebiki cannot ask the person right now, so nothing "
                                "was shown; tell the person the server asks for this.")
    lines = [await _ask(server, handler, page, timeout_s) for page in pages[:MAX_PAGES]]
    if len(pages) > MAX_PAGES:
        lines.append(f"{len(pages) - MAX_PAGES} more page(s) were not shown.")
    if not lines:
        lines.append("The server named no page, so nothing was shown.")
    return ToolResult.error("\n".join([
        head, *(f"- {line}" for line in lines),
        "Once the person has finished on the page, call the tool again. If they declined or "
        "closed it, do not retry unless they ask you to."]))


async def _ask(server: str, handler: ServerRequestHandler, page: Any, timeout_s: float) -> str:
    try:
        request = url_elicitation_from_wire(page)
    except ValueError as exc:
        log.warning("MCP server %s named a page Tebiki will not show: %s", server, exc)
        return f"a page that was not shown: {exc}"
    where = _where(request)
    try:
        with anyio.fail_after(timeout_s):
            reply = await handler.elicit_url(server, request)
    except TimeoutError:
        return f"{where}: no answer within {timeout_s:g}s"
    except Exception:
        log.exception("MCP server %s: showing a required page failed", server)
        return f"{where}: Tebiki could not show it"
    return f"{where}: {_ANSWERS.get(reply.action, 'no valid answer')}"


def _where(request: UrlElicitation) -> str:
    return f"a page on {request.ascii_host}"
