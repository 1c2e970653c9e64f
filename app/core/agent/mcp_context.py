"""MCP prompts and resources as things the person puts into a prompt (issue 19).

A server's prompts become ``PromptChoice``s (what the ``/`` completer and the "Insert MCP
prompt…" menu list); a prompts/get answer becomes an ``Expansion``: the text to insert into
the prompt box, plus the images and embedded resources as attachments (the person reviews
both before sending). A resources/read answer becomes an ``Attachment`` (a text document or an
image), with the attachments' size limits.

Everything a server sends is untrusted: anything malformed is skipped or becomes an
``AttachmentError``/``McpRequestError`` with a message for the person, never a crash.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from app.core.agent.attachments import (
    MAX_IMAGE_BYTES,
    MAX_PDF_BYTES,
    MAX_TEXT_BYTES,
    Attachment,
    AttachmentError,
    attachment_from_bytes,
    format_size,
)
from app.core.tools.providers.mcp.resources import McpRequestError

if TYPE_CHECKING:
    from app.core.tools.providers.mcp.provider import McpProvider

# The largest resource read into an attachment (an image's or PDF's bytes; text: 200 KB).
MAX_RESOURCE_BYTES = max(MAX_IMAGE_BYTES, MAX_PDF_BYTES)


@dataclass(frozen=True)
class PromptArgument:
    name: str
    description: str = ""
    required: bool = False


@dataclass(frozen=True)
class PromptChoice:
    """One prompt of one running server; ``label`` is what follows the ``/``."""

    server: str
    name: str
    description: str = ""
    title: str = ""
    arguments: tuple[PromptArgument, ...] = ()
    label: str = ""


@dataclass
class Expansion:
    """A prompt's messages: ``text`` for the prompt box, ``attachments`` for the tray, and
    ``problems`` (content that could not be attached) to show the person."""

    text: str
    attachments: list[Attachment] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def running_servers(provider: McpProvider) -> list[str]:
    return [s.name for s in provider.statuses() if s.state == "running"]


async def list_prompt_choices(provider: McpProvider) -> tuple[list[PromptChoice], list[str]]:
    """The running servers' prompts, labelled ``name`` when no other server has a prompt of
    that name and ``server:name`` otherwise; and one error message per server that failed."""
    found: list[tuple[str, dict[str, Any]]] = []
    errors: list[str] = []
    for server in running_servers(provider):
        try:
            prompts = await provider.list_prompts(server)
        except McpRequestError as exc:
            errors.append(str(exc))
            continue
        found += [(server, p) for p in prompts if isinstance(p.get("name"), str) and p["name"]]
    counts: dict[str, int] = {}
    for _server, prompt in found:
        counts[prompt["name"]] = counts.get(prompt["name"], 0) + 1
    choices = []
    for server, prompt in found:
        name = prompt["name"]
        choices.append(PromptChoice(
            server=server, name=name, description=_text(prompt.get("description")),
            title=_text(prompt.get("title")), arguments=_arguments(prompt.get("arguments")),
            label=name if counts[name] == 1 else f"{server}:{name}"))
    return choices, errors


def _arguments(raw: object) -> tuple[PromptArgument, ...]:
    if not isinstance(raw, list):
        return ()
    return tuple(PromptArgument(a["name"], _text(a.get("description")), a.get("required") is True)
                 for a in raw if isinstance(a, Mapping) and isinstance(a.get("name"), str)
                 and a["name"])


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


# -- prompts/get -> the prompt box ----------------------------------------------------------------


def expand_prompt(choice: PromptChoice, result: Mapping[str, Any]) -> Expansion:
    """The messages of a prompts/get ``result``. One user message is inserted as it is; a
    conversation of several roles is written out with a "User:"/"Assistant:" line before each
    message, since the prompt box sends one message."""
    raw = result.get("messages")
    messages = [m for m in raw if isinstance(m, Mapping)] if isinstance(raw, list) else []
    expansion = Expansion("")
    roles_differ = any(m.get("role") != "user" for m in messages)
    parts: list[str] = []
    for index, message in enumerate(messages, 1):
        text = _content_text(choice, index, message.get("content"), expansion)
        if text is None:
            continue
        if roles_differ:
            role = "Assistant" if message.get("role") == "assistant" else "User"
            text = f"{role}:\n{text}"
        parts.append(text)
    expansion.text = "\n\n".join(parts)
    return expansion


def _content_text(choice: PromptChoice, index: int, content: object,
                  expansion: Expansion) -> str | None:
    """Text content as text; an image or embedded resource attached (the text names it);
    anything else named."""
    if not isinstance(content, Mapping):
        return None
    kind = content.get("type")
    if kind == "text":
        return _text(content.get("text"))
    if kind == "image":
        name = f"{choice.name}-image-{index}"
        try:
            attachment = _decoded_attachment(name, content.get("data"))
        except AttachmentError as exc:
            expansion.problems.append(str(exc))
            return f"[image {name}: not attached]"
        expansion.attachments.append(attachment)
        return f"[attached image {attachment.name}]"
    if kind == "resource":
        resource = content.get("resource")
        uri = _text(resource.get("uri")) if isinstance(resource, Mapping) else ""
        try:
            attachment = resource_attachment(uri or f"{choice.name}-resource-{index}",
                                             [resource])
        except AttachmentError as exc:
            expansion.problems.append(str(exc))
            return f"[resource {uri}: not attached]"
        expansion.attachments.append(attachment)
        return f"[attached resource {attachment.name}]"
    if kind == "resource_link":
        return f"[resource link {_text(content.get('uri'))}]"
    return f"[{kind if isinstance(kind, str) else 'unknown'} content, not shown]"


# -- resources/read -> an attachment -------------------------------------------------------------


def resource_attachment(uri: str, contents: Sequence[object]) -> Attachment:
    """The contents of resource ``uri`` as one attachment named by its URI: text parts as a
    text document (several parts each under their own URI), or one image/PDF blob. Raises
    ``AttachmentError`` for empty or unsupported contents and for content over the limits."""
    items = [c for c in contents if isinstance(c, Mapping)]
    texts = [c for c in items if isinstance(c.get("text"), str)]
    blobs = [c for c in items if isinstance(c.get("blob"), str)]
    if texts:
        if len(texts) == 1:
            body = texts[0]["text"]
        else:
            body = "\n\n".join(f"[{c.get('uri') or uri}]\n{c['text']}" for c in texts)
        data = body.encode("utf-8")
        if len(data) > MAX_TEXT_BYTES:
            raise AttachmentError(f"{uri}: too large ({format_size(len(data))}); an attached "
                                  f"resource text may be at most {format_size(MAX_TEXT_BYTES)}")
        if not data:
            raise AttachmentError(f"{uri}: the resource is empty")
        return attachment_from_bytes(uri, data)
    if blobs:
        return _decoded_attachment(uri, blobs[0]["blob"])
    raise AttachmentError(f"{uri}: the server sent no content for this resource")


def _decoded_attachment(name: str, data: object) -> Attachment:
    if not isinstance(data, str) or not data:
        raise AttachmentError(f"{name}: no data")
    # Checked before decoding: a huge blob is never decoded into memory.
    if len(data) * 3 // 4 > MAX_RESOURCE_BYTES:
        raise AttachmentError(f"{name}: too large (about {format_size(len(data) * 3 // 4)}); "
                              f"at most {format_size(MAX_IMAGE_BYTES)} for an image, "
                              f"{format_size(MAX_PDF_BYTES)} for a PDF")
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise AttachmentError(f"{name}: the server sent malformed base64 data") from None
    return attachment_from_bytes(name, raw)


# -- resource templates -------------------------------------------------------------------------

_EXPRESSION = re.compile(r"\{([+#./;?&]?)([^{}]*)\}")


def template_variables(template: str) -> list[str]:
    """The variable names of an RFC 6570 URI template, in order, without repeats."""
    names: list[str] = []
    for match in _EXPRESSION.finditer(template):
        for part in match.group(2).split(","):
            name = part.strip().rstrip("*").split(":")[0]
            if name and name not in names:
                names.append(name)
    return names


def expand_template(template: str, values: Mapping[str, str]) -> str:
    """``template`` with its variables filled in (the RFC 6570 operators MCP servers use:
    simple, ``+``, ``#``, ``/``, ``.``, ``?`` and ``&``); values are percent-encoded except
    under ``+`` and ``#``."""
    from urllib.parse import quote

    def expand(match: re.Match[str]) -> str:
        operator = match.group(1)
        names = [p.strip().rstrip("*").split(":")[0] for p in match.group(2).split(",")]
        present = [(n, values[n]) for n in names if values.get(n)]
        safe = ":/?#[]@!$&'()*+,;=" if operator in ("+", "#") else ""

        def enc(value: str) -> str:
            return quote(value, safe=safe)

        if operator in ("?", "&"):
            query = "&".join(f"{n}={enc(v)}" for n, v in present)
            return (operator + query) if query else ""
        joiner = {"/": "/", ".": ".", ";": ";"}.get(operator, ",")
        body = joiner.join(enc(v) for _n, v in present)
        if not body:
            return ""
        return (operator + body) if operator in ("#", "/", ".", ";") else body

    return _EXPRESSION.sub(expand, template)
