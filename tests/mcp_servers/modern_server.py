"""An MCP server on the SDK in the lock that speaks revision 2026-07-28 (and the older ones).

Its tools ask the client back through resolvers, which the SDK sends as multi-round-trip input
requests (``input_required``) on 2026-07-28 and as standalone requests on older revisions:
``greet_person`` asks the person (a form elicitation), ``ask_model`` samples the client's
model, ``echo`` asks nothing; the prompt ``trip`` completes its ``city`` argument;
``signed_note`` asks the person within ``prompts/get``.
``protocol`` says which revision the call arrived on. ``job`` is long-running: to a client that
declared the Tasks extension it answers with a task (``mcp_servers.task_extension``), whose end
``ending`` chooses (``done``, ``fail``: a JSON-RPC error, ``give_up``: the server cancels it,
``garble``: completed without a result); ``signed_job``'s task first asks the person who signs
it; ``task_states`` says what became of every task, ``task_polls`` how often each was polled;
``declared_extensions`` which extensions the client declared. ``add_later`` adds the tool
``later`` and announces it to ``subscriptions/listen`` subscribers (the only way a 2026-07-28
server can). The resource ``note://current`` is the text ``update_note`` last set (reading it
fails while it is set ``broken``); each update is announced to the listen streams that follow
it.

``python modern_server.py`` serves stdio; ``python modern_server.py http PORT`` serves
Streamable HTTP at ``http://127.0.0.1:PORT/mcp``; ``python modern_server.py sse PORT`` serves
legacy HTTP+SSE at ``http://127.0.0.1:PORT/sse``. With ``--no-tasks`` it does not offer the
Tasks extension (``job`` then answers plainly); with ``--handshake-only`` it speaks only the
handshake revisions (2025-11-25 and older), where a client never gets a task.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Annotated, Any

import mcp_types as types
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.resolve import Elicit, Resolve, Sample
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel

try:
    from tests.mcp_servers.handshake_only import speak_handshake_era_only
    from tests.mcp_servers.task_extension import Garbled, GaveUp, TaskExtension
except ImportError:  # run as a script: the modules are beside this one
    from handshake_only import speak_handshake_era_only  # type: ignore[no-redef]
    from task_extension import Garbled, GaveUp, TaskExtension  # type: ignore[no-redef]

SIGNER_FORM = {"mode": "form", "message": "Who signs the job?", "requestedSchema": {
    "type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}}
TASKS = TaskExtension(frozenset({"job"}), ask_first={"signed_job": SIGNER_FORM})
server = MCPServer("tebiki-modern", instructions="A 2026-07-28 test server.",
                   extensions=[] if "--no-tasks" in sys.argv else [TASKS])


class Person(BaseModel):
    name: str


def ask_name() -> Elicit[Person]:
    return Elicit("What is your name?", Person)


def ask_the_model(topic: str) -> Sample:
    return Sample([types.SamplingMessage(role="user",
                                         content=types.TextContent(type="text", text=topic))],
                  max_tokens=50)


@server.tool(description="Greet the person, asking for their name first.")
async def greet_person(person: Annotated[Person, Resolve(ask_name)]) -> str:
    return f"Hello, {person.name}!"


@server.tool(description="Ask the client's model about a topic.")
async def ask_model(topic: str,
                    answer: Annotated[types.CreateMessageResult, Resolve(ask_the_model)]) -> str:
    return f"model said: {getattr(answer.content, 'text', '')}"


@server.tool(description="Echo the text.")
def echo(text: str) -> str:
    return text


@server.tool(description="The protocol revision this call arrived on.")
def protocol(ctx: Context) -> str:
    return str(ctx.request_context.protocol_version)


CITIES = ("Paris", "Parma", "Porto", "Prague", "Berlin")


@server.prompt(description="Plan a trip to a city.")
def trip(city: str, days: str = "3") -> str:
    return f"Plan {days} days in {city}."


@server.completion()
async def complete_city(ref: Any, argument: Any, context: Any) -> types.Completion | None:
    if getattr(ref, "name", None) == "trip" and argument.name == "city":
        typed = argument.value.lower()
        return types.Completion(values=[c for c in CITIES if c.lower().startswith(typed)])
    return None


@server.prompt(description="A note on a topic, signed by the person (asked within the request).")
def signed_note(topic: str, ctx: Context) -> str | types.InputRequiredResult:
    answer = (ctx.input_responses or {}).get("signer")
    if not isinstance(answer, types.ElicitResult) or answer.content is None:
        return types.InputRequiredResult(request_state="asked", input_requests={
            "signer": types.ElicitRequest(params=types.ElicitRequestFormParams(
                message="Who signs the note?", requested_schema={
                    "type": "object", "properties": {"name": {"type": "string"}},
                    "required": ["name"]}))})
    return f"A note on {topic}, signed {answer.content['name']}."


@server.tool(description="A long-running job: sleeps `seconds`, then ends as `ending` says.")
async def job(seconds: float = 0.2, ending: str = "done", poll_ms: int = 0) -> str:
    await asyncio.sleep(seconds)
    if ending == "fail":
        raise MCPError(code=-32603, message="the job's disk is full")
    if ending == "garble":
        raise Garbled(code=-32603, message="no result")
    if ending == "give_up":
        raise GaveUp(code=-32603, message="the server gave up on the job")
    return f"job done after {seconds:g} s"


@server.tool(description="A job that asks who signs it, within its task, before it runs.")
def signed_job() -> str:
    return f"job signed by {TaskExtension.answer().get('name', 'nobody')}"


@server.tool(description="What became of every task (task id → status), as JSON.")
def task_states() -> str:
    return json.dumps(TASKS.states())


@server.tool(description="The extensions the client declared for this call, as JSON.")
def declared_extensions(ctx: Context) -> str:
    declared = ctx.request_context.session.client_capabilities
    return json.dumps(sorted((declared.extensions or {}) if declared is not None else {}))


@server.tool(description="How many times each task was polled (task id → tasks/get count).")
def task_polls() -> str:
    return json.dumps(TASKS.polls)


def later() -> str:
    return "later"


@server.tool(description="Add the tool `later` and announce the change.")
async def add_later(ctx: Context) -> str:
    server.add_tool(later, description="Added after start.")
    await ctx.notify_tools_changed()
    return "added"


NOTE = {"text": "first note", "broken": ""}


@server.resource("note://current", name="note", mime_type="text/plain",
                 description="The note `update_note` last wrote.")
def current_note() -> str:
    if NOTE["broken"]:
        raise ValueError("the note is being rewritten")
    return NOTE["text"]


@server.tool(description="Rewrite the note (broken: reading it fails) and announce it.")
async def update_note(text: str, ctx: Context, broken: bool = False) -> str:
    NOTE.update(text=text, broken="yes" if broken else "")
    await ctx.notify_resource_updated("note://current")
    return "updated"


if __name__ == "__main__":
    if "--handshake-only" in sys.argv:
        speak_handshake_era_only()
    if len(sys.argv) >= 3 and sys.argv[1] == "http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    elif len(sys.argv) >= 3 and sys.argv[1] == "sse":
        server.run("sse", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run("stdio")
