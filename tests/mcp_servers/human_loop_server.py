"""An MCP server (stdio) whose tools ask the client back: sampling and elicitation.

Tools: ``ask_model`` (sampling/createMessage with the prompt, a system prompt, model hints and
optionally an image), ``ask_person`` (a form elicitation), ``ask_person_url`` (URL mode),
``ask_person_nested`` (a schema no client can show as a flat form) and ``capabilities`` (what
the client declared at initialize). Each returns what the client answered as text, so a test
can read it through the tool result. ``needs_pages`` fails with -32042 "URL elicitation
required" listing ``urls``; ``needs_garbage`` with -32042 and error data no client can read.
"""

from __future__ import annotations

import json
import warnings

import mcp_types as types
from mcp import MCPError, UrlElicitationRequiredError
from mcp.server.mcpserver import Context, MCPServer

try:  # imported by the tests, or run as a script from its folder
    from tests.mcp_servers.handshake_only import speak_handshake_era_only
except ModuleNotFoundError:
    from handshake_only import speak_handshake_era_only  # type: ignore[no-redef]

server = MCPServer("tebiki-human-loop")

TINY_PNG = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGA"
            "hKmMIQAAAABJRU5ErkJggg==")

PERSON_FORM = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Name", "description": "Your name",
                 "minLength": 2},
        "age": {"type": "integer", "title": "Age", "minimum": 0, "maximum": 150,
                "default": 30},
        "email": {"type": "string", "format": "email", "title": "Email"},
        "subscribe": {"type": "boolean", "title": "Subscribe", "default": True},
        "color": {"type": "string", "enum": ["red", "green"], "enumNames": ["Red", "Green"]},
    },
    "required": ["name", "age"],
}


@server.tool(description="Ask the client's model (sampling) and return its answer.")
async def ask_model(prompt: str, ctx: Context, max_tokens: int = 100,
                    image: bool = False) -> str:
    content: list[types.TextContent | types.ImageContent] = [
        types.TextContent(type="text", text=prompt)]
    if image:
        content.append(types.ImageContent(type="image", data=TINY_PNG, mime_type="image/png"))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # sampling is deprecated in the newest protocol
            result = await ctx.session.create_message(
                [types.SamplingMessage(role="user", content=content)],
                max_tokens=max_tokens, system_prompt="You are the test server's helper.",
                model_preferences=types.ModelPreferences(
                    hints=[types.ModelHint(name="tiny-model")]),
                related_request_id=ctx.request_id)
    except Exception as exc:
        return f"sampling failed: {exc}"
    text = getattr(result.content, "text", "")
    return f"model said: {text} (model={result.model}, stop={result.stop_reason})"


@server.tool(description="Ask the person to fill a form (elicitation).")
async def ask_person(ctx: Context) -> str:
    result = await ctx.session.elicit_form("Who are you?", PERSON_FORM,
                                           related_request_id=ctx.request_id)
    return json.dumps({"action": result.action, "content": result.content})


@server.tool(description="Ask the person to open a URL (URL-mode elicitation).")
async def ask_person_url(ctx: Context, url: str = "https://example.invalid/login") -> str:
    result = await ctx.elicit_url("Sign in, please", url, "e1")
    return json.dumps({"action": result.action})


@server.tool(description="Fail until the person has opened the pages (-32042).")
def needs_pages(urls: list[str]) -> str:
    raise UrlElicitationRequiredError([
        types.ElicitRequestURLParams(message=f"Open page {n}", url=url,
                                     elicitation_id=f"page-{n}")
        for n, url in enumerate(urls, 1)])


@server.tool(description="Fail with -32042 and error data that lists no readable page.")
def needs_garbage() -> str:
    raise MCPError(types.URL_ELICITATION_REQUIRED, "URL elicitation required",
                   data={"elicitations": "not a list"})


@server.tool(description="The elicitation capability the client declared at initialize.")
def capabilities(ctx: Context) -> str:
    declared = ctx.session.client_capabilities
    elicitation = declared.elicitation if declared is not None else None
    return json.dumps(None if elicitation is None else
                      elicitation.model_dump(by_alias=True, exclude_none=True))


@server.tool(description="Ask for a nested object, which no flat form can show.")
async def ask_person_nested(ctx: Context) -> str:
    schema = {"type": "object", "properties": {
        "address": {"type": "object", "properties": {"city": {"type": "string"}}}}}
    result = await ctx.session.elicit_form("Where?", schema, related_request_id=ctx.request_id)
    return json.dumps({"action": result.action, "content": result.content})


if __name__ == "__main__":
    speak_handshake_era_only()  # it asks back mid-call, as servers before 2026-07-28 do
    server.run("stdio")
