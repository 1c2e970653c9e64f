"""Requests an MCP server sends to Tebiki (sampling, elicitation), answered through the person.

A server may ask the client to run a model for it (``sampling/createMessage``) or to ask the
person for some values or to open a web page (``elicitation/create`` in mode "form" or "url",
see ``mcp.url_elicitation``). All must go through the person, so the work is
done by a ``ServerRequestHandler`` that the app supplies (the agent layer decides and asks, the
UI shows the dialogs); this module only defines that interface in SDK-free types and turns a
handler into the SDK's ``sampling_callback`` / ``elicitation_callback``.

The adapters never raise into the SDK: a refusal, a failure, a timeout or a bug becomes a
JSON-RPC error (sampling) or a ``cancel`` (elicitation) for the server, never an accept. A
connection only advertises the two capabilities (elicitation in both modes, as the SDK
declares it) when a handler is set when it starts (``server_request_callbacks``); a handler
removed later answers "not available".
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import anyio

from app.core.tools.providers.mcp.url_elicitation import UrlElicitation, url_elicitation_from_wire

log = logging.getLogger(__name__)

# How long a server request may wait for the person (and the model) before it is answered
# as declined: a forgotten dialog must not hold the server's request open for ever.
SERVER_REQUEST_TIMEOUT_S = 600.0
# MCP's suggested code for "the user rejected the sampling request".
USER_REJECTED = -1
_INTERNAL_ERROR = -32603
_INVALID_REQUEST = -32600

ElicitAction = Literal["accept", "decline", "cancel"]


@dataclass(frozen=True)
class SamplingMessage:
    """One message of a sampling request: its role and its content blocks in wire format
    (``{"type": "text", "text": …}``, ``{"type": "image", "data": …, "mimeType": …}``…)."""

    role: str
    blocks: tuple[Mapping[str, Any], ...]

    @property
    def text(self) -> str:
        return "\n".join(str(b.get("text", "")) for b in self.blocks if b.get("type") == "text")

    def attachments(self) -> list[str]:
        """What the message carries besides text, named for a person ("image (image/png)")."""
        names = []
        for block in self.blocks:
            kind = str(block.get("type", "?"))
            if kind != "text":
                mime = block.get("mimeType")
                names.append(f"{kind} ({mime})" if mime else kind)
        return names


@dataclass(frozen=True)
class SamplingRequest:
    """What the server asks the model, as Tebiki understood it (SDK-free)."""

    messages: tuple[SamplingMessage, ...]
    max_tokens: int
    system_prompt: str = ""
    model_hints: tuple[str, ...] = ()
    # MCP's model preferences (0..1 each) as the server sent them, for display.
    priorities: Mapping[str, float] = field(default_factory=dict)
    temperature: float | None = None
    stop_sequences: tuple[str, ...] = ()
    include_context: str | None = None

    def audit_input(self) -> dict[str, Any]:
        """The request as the history records it (images named, not stored)."""
        return {
            "messages": [{"role": m.role, "text": m.text, "attachments": m.attachments()}
                         for m in self.messages],
            "systemPrompt": self.system_prompt,
            "maxTokens": self.max_tokens,
            "modelHints": list(self.model_hints),
        }


@dataclass(frozen=True)
class SamplingReply:
    text: str
    model: str
    # MCP's stop reasons: endTurn, maxTokens, stopSequence (or the provider's own word).
    stop_reason: str = "endTurn"


@dataclass(frozen=True)
class ElicitationReply:
    action: ElicitAction
    content: Mapping[str, Any] | None = None
    # Why Tebiki declined on its own (an unsupported form, URL mode); recorded in ``_meta``.
    note: str = ""


class ServerRequestRefused(Exception):
    """Raised by a handler to answer a sampling request with an error (declined, denied by a
    rule, the model failed). ``message`` goes to the server."""

    def __init__(self, message: str, code: int = USER_REJECTED) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


class ServerRequestHandler(Protocol):
    async def create_message(self, server: str, params: SamplingRequest) -> SamplingReply:
        """Answer a sampling request, or raise ``ServerRequestRefused``."""
        ...

    async def elicit(self, server: str, message: str,
                     requested_schema: Mapping[str, Any]) -> ElicitationReply:
        """Ask the person for values; decline / cancel are answers, not errors."""
        ...

    async def elicit_url(self, server: str, request: UrlElicitation) -> ElicitationReply:
        """Ask the person to open a web page; accept means they chose to open it (no
        content); decline / cancel are answers, not errors."""
        ...


HandlerSource = Callable[[], ServerRequestHandler | None]


# -- SDK params → Tebiki's types --------------------------------------------------------------


def sampling_request_from_wire(wire: Mapping[str, Any]) -> SamplingRequest:
    """A ``SamplingRequest`` from the wire form of ``CreateMessageRequestParams`` (camelCase);
    raises ValueError for a request that cannot be shown to a person."""
    raw_messages = wire.get("messages")
    if not isinstance(raw_messages, list) or not raw_messages:
        raise ValueError("the request has no messages")
    messages = []
    for raw in raw_messages:
        if not isinstance(raw, Mapping):
            raise ValueError("a message is not an object")
        content = raw.get("content")
        raw_blocks: list[Any] = content if isinstance(content, list) else [content]
        blocks = tuple(b for b in raw_blocks if isinstance(b, Mapping))
        if len(blocks) != len(raw_blocks):
            raise ValueError("a message's content is not a content block")
        messages.append(SamplingMessage(str(raw.get("role", "user")), blocks))
    max_tokens = wire.get("maxTokens")
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens <= 0:
        raise ValueError(f"maxTokens must be a positive integer, not {max_tokens!r}")
    raw_prefs = wire.get("modelPreferences")
    prefs: Mapping[str, Any] = raw_prefs if isinstance(raw_prefs, Mapping) else {}
    hints = tuple(str(h.get("name")) for h in prefs.get("hints") or []
                  if isinstance(h, Mapping) and h.get("name"))
    priorities = {k: float(v) for k, v in prefs.items()
                  if k.endswith("Priority") and isinstance(v, int | float)}
    temperature = wire.get("temperature")
    stops = wire.get("stopSequences") or []
    return SamplingRequest(
        messages=tuple(messages), max_tokens=max_tokens,
        system_prompt=str(wire.get("systemPrompt") or ""), model_hints=hints,
        priorities=priorities,
        temperature=float(temperature) if isinstance(temperature, int | float) else None,
        stop_sequences=tuple(str(s) for s in stops if isinstance(s, str)),
        include_context=wire.get("includeContext") if isinstance(
            wire.get("includeContext"), str) else None)


# -- adapters ----------------------------------------------------------------------------------


def server_request_callbacks(server: str, source: HandlerSource, *,
                             timeout_s: float = SERVER_REQUEST_TIMEOUT_S) -> dict[str, Any]:
    """``ClientSession`` keyword arguments for ``server``: the two callbacks when a handler is
    set now (so the capabilities are advertised), else nothing."""
    if source() is None:
        return {}
    return {"sampling_callback": sampling_callback(server, source, timeout_s=timeout_s),
            "elicitation_callback": elicitation_callback(server, source, timeout_s=timeout_s)}


def sampling_callback(server: str, source: HandlerSource, *,
                      timeout_s: float = SERVER_REQUEST_TIMEOUT_S) -> Any:
    async def on_sampling(_context: Any, params: Any) -> Any:
        import mcp_types as types  # loaded with the SDK that calls us

        def error(message: str, code: int = _INTERNAL_ERROR) -> Any:
            return types.ErrorData(code=code, message=message)

        handler = source()
        if handler is None:
            return error("Sampling is not available in Tebiki right now.", _INVALID_REQUEST)
        try:
            request = sampling_request_from_wire(
                params.model_dump(by_alias=True, mode="json", exclude_none=True))
        except (ValueError, TypeError) as exc:
            return error(f"Tebiki cannot read this sampling request: {exc}", -32602)
        try:
            with anyio.fail_after(timeout_s):
                reply = await handler.create_message(server, request)
        except ServerRequestRefused as exc:
            return error(exc.message, exc.code)
        except TimeoutError:
            return error(f"No answer within {timeout_s:g}s; the request was declined.",
                         USER_REJECTED)
        except Exception as exc:
            log.exception("MCP server %s: sampling handler failed", server)
            return error(f"Tebiki failed to answer the sampling request: {exc}")
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text=reply.text),
            model=reply.model, stop_reason=reply.stop_reason)

    return on_sampling


def elicitation_callback(server: str, source: HandlerSource, *,
                         timeout_s: float = SERVER_REQUEST_TIMEOUT_S) -> Any:
    async def on_elicitation(_context: Any, params: Any) -> Any:
        import mcp_types as types

        def answer(reply: ElicitationReply) -> Any:
            meta = {"tebiki/note": reply.note} if reply.note else None
            content = dict(reply.content) if reply.action == "accept" and reply.content \
                is not None else None
            return types.ElicitResult(action=reply.action, content=content, _meta=meta)

        handler = source()
        if handler is None:
            return types.ErrorData(code=_INVALID_REQUEST,
                                   message="Elicitation is not available in Tebiki right now.")
        mode = getattr(params, "mode", "form") or "form"
        if mode not in ("form", "url"):
            log.warning("MCP server %s asked for elicitation mode %r; declined", server, mode)
            return answer(ElicitationReply("decline", note=f"unknown mode {mode!r}"))
        try:
            with anyio.fail_after(timeout_s):
                if mode == "url":
                    reply = await _elicit_url(server, handler, params)
                else:
                    reply = await handler.elicit(server, str(params.message),
                                                 dict(params.requested_schema or {}))
        except TimeoutError:
            return answer(ElicitationReply("cancel", note=f"no answer within {timeout_s:g}s"))
        except Exception:
            log.exception("MCP server %s: elicitation handler failed", server)
            return answer(ElicitationReply("cancel", note="Tebiki failed to ask the person"))
        if reply.action not in ("accept", "decline", "cancel"):
            return answer(ElicitationReply("cancel", note="invalid answer"))
        if mode == "url":  # a page the person opens carries nothing back through Tebiki
            reply = ElicitationReply(reply.action, None, reply.note)
        elif reply.action == "accept" and reply.content is None:
            return answer(ElicitationReply("cancel", note="accepted without content"))
        try:
            return answer(reply)
        except ValueError:  # content the protocol cannot carry (pydantic's ValidationError)
            log.exception("MCP server %s: the elicitation answer is not valid", server)
            return answer(ElicitationReply("cancel", note="invalid answer"))

    return on_elicitation


async def _elicit_url(server: str, handler: ServerRequestHandler,
                      params: Any) -> ElicitationReply:
    """A URL-mode request, shown to the person unless it cannot be shown (then declined)."""
    try:
        request = url_elicitation_from_wire(
            params.model_dump(by_alias=True, mode="json", exclude_none=True))
    except ValueError as exc:
        log.warning("MCP server %s asked to open a URL Tebiki will not show: %s", server, exc)
        return ElicitationReply("decline", note=f"Tebiki will not show this URL: {exc}")
    return await handler.elicit_url(server, request)
