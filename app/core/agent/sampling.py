"""MCP sampling through the person: a server's ``sampling/createMessage`` is a call of server
``<name>``, tool ``sampling/createMessage`` for the permission service, asked by default.

- **deny** (a rule): the server gets an error; nobody is asked.
- **ask**: the person sees the request (``SamplingPrompt``) and approves it, possibly with the
  last user text edited and the token cap lowered, or declines (the server gets an error).
- **allow**: only a rule that names sampling (tool ``sampling/createMessage`` or a pattern
  with "sampling" in it) runs it unasked; a rule allowing *any* tool of the server was written
  for its tools, not for spending the person's model on its behalf, so it still asks.

An approved request is one model request to the current profile's provider, without tools; its
text goes back as the ``CreateMessageResult``. Every request is in the history (the audit
table): server, tool ``sampling/createMessage``, the messages, decision, who decided, answer.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from app.core.agent.models import ModelProvider, ModelRequest, ProviderError, map_exception
from app.core.agent.models.factory import default_client_factory
from app.core.outcomes import Outcome
from app.core.permissions.service import Decision, ToolPermissionService
from app.core.settings_fields import SAMPLING_MAX_TOKENS_CAP
from app.core.store.audit import AuditRepository
from app.core.store.profiles import AgentProfile
from app.core.tools.providers.mcp.server_requests import (
    ElicitationReply,
    SamplingReply,
    SamplingRequest,
    ServerRequestRefused,
)
from app.core.tools.providers.mcp.url_elicitation import UrlElicitation

log = logging.getLogger(__name__)

SAMPLING_TOOL = "sampling/createMessage"
_STOP_REASONS = {"end_turn": "endTurn", "max_tokens": "maxTokens",
                 "stop_sequence": "stopSequence"}


@dataclass(frozen=True)
class SamplingPrompt:
    """What the person is shown for one request."""

    server: str
    request: SamplingRequest
    model: str              # the model that will answer (the current profile's)
    max_tokens: int         # proposed: the server's maxTokens, capped
    max_tokens_cap: int     # the most the person may allow (a setting)
    why: str = ""           # why they are asked (the rule, or that none decided)


@dataclass(frozen=True)
class SamplingApproval:
    max_tokens: int
    # The last user message's text as the person left it (None: unchanged).
    last_user_text: str | None = None


SamplingAsker = Callable[[SamplingPrompt], Awaitable[SamplingApproval | None]]
ElicitationAsker = Callable[[str, str, dict[str, Any]], Awaitable[ElicitationReply]]
UrlElicitationAsker = Callable[[str, UrlElicitation], Awaitable[ElicitationReply]]


class SamplingBroker:
    """The agent layer's half of ``ServerRequestHandler``: decides, asks (``ask``, the UI),
    runs the model and records. ``elicit`` and ``elicit_url`` are passed straight to
    ``ask_elicitation`` and ``ask_url_elicitation``."""

    def __init__(self, *,
                 permissions: ToolPermissionService | Callable[[], ToolPermissionService],
                 audit: AuditRepository,
                 profile: Callable[[], AgentProfile], ask: SamplingAsker,
                 ask_elicitation: ElicitationAsker | None = None,
                 ask_url_elicitation: UrlElicitationAsker | None = None,
                 client_factory: Callable[[AgentProfile], ModelProvider] = default_client_factory,
                 max_tokens_cap: Callable[[], int] = lambda: SAMPLING_MAX_TOKENS_CAP.default
                 ) -> None:
        # A getter is accepted: the app builds its tools (and the service) after the window.
        self._permissions = permissions if callable(permissions) else (lambda: permissions)
        self._audit = audit
        self._profile = profile  # reads the database: called off the event loop
        self._ask = ask
        self._ask_elicitation = ask_elicitation
        self._ask_url_elicitation = ask_url_elicitation
        self._client_factory = client_factory
        self._cap = max_tokens_cap

    async def elicit(self, server: str, message: str,
                     requested_schema: Any) -> ElicitationReply:
        if self._ask_elicitation is None:
            return ElicitationReply("decline", note="elicitation is not available")
        return await self._ask_elicitation(server, message, dict(requested_schema))

    async def elicit_url(self, server: str, request: UrlElicitation) -> ElicitationReply:
        if self._ask_url_elicitation is None:
            return ElicitationReply("decline", note="opening a URL is not available")
        return await self._ask_url_elicitation(server, request)

    async def create_message(self, server: str, params: SamplingRequest) -> SamplingReply:
        audit_input = params.audit_input()
        decision = self._decide(server, audit_input)
        record = _Record(self._audit, server, audit_input, decision)
        if decision.kind == "deny":
            await record.write("deny", Outcome.DENIED, "Refused by a permission rule.")
            raise ServerRequestRefused(
                f"Tebiki's permission rules refuse sampling for MCP server {server!r}.")
        profile = await asyncio.to_thread(self._profile)
        cap = max(1, int(await asyncio.to_thread(self._cap)))  # a setting: the database
        approval: SamplingApproval | None = SamplingApproval(min(params.max_tokens, cap))
        if decision.kind == "ask":
            prompt = SamplingPrompt(server, params, profile.model, min(params.max_tokens, cap),
                                    cap, record.decided_by)
            try:
                approval = await self._ask(prompt)
            except BaseException:
                await record.write("ask", Outcome.CANCELLED,
                                   "No answer: the request was withdrawn.")
                raise
            if approval is None:
                record.decided_by = "declined by the person"
                await record.write("ask", Outcome.DECLINED, "Declined by the person.")
                raise ServerRequestRefused("The user declined the sampling request.")
            record.decided_by = "approved by the person"
        assert approval is not None
        max_tokens = max(1, min(approval.max_tokens, cap))
        record.tool_input = dict(audit_input, maxTokens=max_tokens)
        if approval.last_user_text is not None:
            record.tool_input["editedUserText"] = approval.last_user_text
        record.started = time.monotonic()
        try:
            reply = await self._request_model(params, profile, max_tokens,
                                              approval.last_user_text)
        except ServerRequestRefused as exc:
            await record.write(decision.kind, Outcome.EXECUTED, exc.message)
            raise
        except BaseException:
            await record.write(decision.kind, Outcome.CANCELLED,
                               "The model request was cancelled.")
            raise
        await record.write(decision.kind, Outcome.EXECUTED, reply.text, is_error=False)
        return reply

    # -- internals ---------------------------------------------------------------------------

    def _decide(self, server: str, audit_input: dict[str, Any]) -> Decision:
        decision = self._permissions().decide(server, SAMPLING_TOOL, audit_input)
        if decision.kind == "allow" and not _names_sampling(decision):
            return Decision("ask", decision.rule, note="A rule allows this server's tools; "
                                                       "sampling is asked unless a rule names it.")
        if decision.kind == "review":  # reviewers judge tool calls, not model requests
            return Decision("ask", decision.rule)
        return decision

    async def _request_model(self, params: SamplingRequest, profile: AgentProfile,
                             max_tokens: int, last_user_text: str | None) -> SamplingReply:
        """One request to the profile's model, without tools; failures become refusals."""
        messages = model_messages(params, last_user_text)
        temperature = params.temperature if params.temperature is not None \
            and 0 <= params.temperature <= 1 else None
        request = ModelRequest(model=profile.model, messages=messages,
                               max_tokens=max_tokens,
                               system=params.system_prompt, temperature=temperature,
                               cache=False)
        provider: ModelProvider | None = None
        try:
            provider = await asyncio.to_thread(self._client_factory, profile)
            turn = await provider.stream(request, lambda _text: None)
        except Exception as exc:
            error = map_exception(exc, "the model provider")
            if error is None:
                log.exception("sampling request failed")
                error = ProviderError(f"the request failed: {exc}")
            raise ServerRequestRefused(f"The model request failed: {error.message}",
                                       -32603) from exc
        finally:
            if provider is not None:
                await provider.aclose()
        text = "".join(str(b.get("text", "")) for b in turn.content if b.get("type") == "text")
        return SamplingReply(text, profile.model,
                             _STOP_REASONS.get(turn.stop_reason, turn.stop_reason or "endTurn"))


class _Record:
    """One sampling request's row in the history, written once its outcome is known (with
    what was actually sent: the cap and the person's edit)."""

    def __init__(self, audit: AuditRepository, server: str, tool_input: dict[str, Any],
                 decision: Decision) -> None:
        self._audit = audit
        self.server = server
        self.tool_input = tool_input
        self.decision = decision
        self.decided_by = _rule_words(decision)
        self.started: float | None = None

    async def write(self, kind: str, outcome: Outcome, output: str, *,
                    is_error: bool = True) -> None:
        duration = None if self.started is None else \
            int((time.monotonic() - self.started) * 1000)
        rule = self.decision.rule
        # Shielded: a withdrawn request must still leave its row.
        await asyncio.shield(asyncio.to_thread(
            self._audit.record, tool_name=SAMPLING_TOOL, server_id=self.server,
            tool_input=self.tool_input, decision=kind, outcome=outcome, output=output,
            is_error=is_error, rule_id=rule.id if rule is not None else None,
            duration_ms=duration, decided_by=self.decided_by))


def model_messages(params: SamplingRequest,
                   last_user_text: str | None = None) -> list[dict[str, Any]]:
    """The request's messages in Anthropic format: text, images as base64 image blocks, other
    content named in a text block; the last user message's text replaced when edited."""
    last_user = max((i for i, m in enumerate(params.messages) if m.role == "user"), default=-1)
    messages = []
    for index, message in enumerate(params.messages):
        role = "assistant" if message.role == "assistant" else "user"
        blocks: list[dict[str, Any]] = []
        replaced = False
        for block in message.blocks:
            kind = block.get("type")
            if kind == "text":
                if index == last_user and last_user_text is not None:
                    if not replaced:
                        blocks.append({"type": "text", "text": last_user_text})
                        replaced = True
                    continue
                blocks.append({"type": "text", "text": str(block.get("text", ""))})
            elif kind == "image" and isinstance(block.get("data"), str):
                blocks.append({"type": "image", "source": {
                    "type": "base64", "media_type": str(block.get("mimeType") or "image/png"),
                    "data": block["data"]}})
            else:
                blocks.append({"type": "text",
                               "text": f"[{kind} content omitted: Tebiki sends text and images]"})
        if index == last_user and last_user_text is not None and not replaced:
            blocks.append({"type": "text", "text": last_user_text})
        messages.append({"role": role, "content": blocks or [{"type": "text", "text": ""}]})
    return messages


def _names_sampling(decision: Decision) -> bool:
    rule = decision.rule
    if rule is None:
        return False
    return rule.tool_name == SAMPLING_TOOL or (
        rule.tool_pattern is not None and "sampling" in rule.tool_pattern.lower())


def _rule_words(decision: Decision) -> str:
    text = decision.rule.summary() if decision.rule is not None else "no rule matched"
    return f"{text} — {decision.note}" if decision.note else text
