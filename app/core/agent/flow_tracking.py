"""The conversation's flow labels, for AgentSession: loaded with the conversation, updated
after each call from what the call read (app.core.permissions.flow), persisted with the
conversation and announced with ``FlowChanged``."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.core.agent.events import AgentEvent, FlowChanged
from app.core.permissions.flow import FlowLabel, FlowState
from app.core.permissions.service import Decision, ToolPermissionService
from app.core.store.conversations import ConversationRepository
from app.core.store.writer import BackgroundWriter
from app.core.tools.base import ToolSpec

log = logging.getLogger(__name__)

# How much of one result is learnt as secret material (a key file is a few KB).
MAX_LEARNT_CHARS = 256 * 1024
# How much of a result is scanned for the machine's known secrets.
MAX_SCANNED_CHARS = 1024 * 1024


class FlowTracking:
    """Mixin of AgentSession."""

    project_root: Path
    project_trusted: bool
    _conversation_id: int | None
    _conversations: ConversationRepository
    _writer: BackgroundWriter
    _flow: FlowState | None
    _vouched_messages: int
    permissions: ToolPermissionService

    if TYPE_CHECKING:
        def _emit(self, event: AgentEvent) -> None: ...

    @property
    def flow(self) -> FlowState:
        """The labels (loaded from the conversation on first use)."""
        if self._flow is None:
            stored = None
            if self._conversation_id is not None:
                try:
                    stored = self._conversations.flow(self._conversation_id)
                except KeyError:
                    stored = None
                except Exception:  # unreadable: fail closed (from_json marks it)
                    log.exception("could not read the conversation's flow labels")
                    stored = {"damaged": True}
            self._flow = FlowState.from_json(stored)
        return self._flow

    def reset_flow(self) -> None:
        """Forget the labels (the person starts a different task in this conversation)."""
        self.flow.clear()
        self._flow_changed()

    def _track_flow(self, spec: ToolSpec, tool_input: Mapping[str, Any], decision: Decision,
                    content: str) -> None:
        """After a call ran and its result went to the model: what did the conversation just
        take in?"""
        facts = decision.facts
        if facts is None:
            return
        flow = self.flow
        changed = False
        # A result that carries a secret the machine holds (a command printed the project's
        # .env, a search matched a key file) is a sensitive read, whatever the tool.
        for hit in self.permissions.known_secrets.scan(content[:MAX_SCANNED_CHARS]):
            changed |= flow.add(FlowLabel.READ_SENSITIVE, f"{hit.source} (in the result)",
                                spec.name)
        # A call that read or named a secret (an approved ``cat .env`` too, whatever the
        # tool calls itself) carries it in its result: the conversation has read it.
        for path, _entry in facts.sensitive:
            changed |= flow.add(FlowLabel.READ_SENSITIVE, _shown(path), spec.name)
            flow.secrets.add_text(content[:MAX_LEARNT_CHARS], _shown(path))
        if spec.is_read_only(tool_input):
            for path in facts.outside:
                changed |= flow.add(FlowLabel.READ_OUTSIDE, _shown(path), spec.name)
        untrusted = ""
        if spec.needs_network and spec.server_id == "builtin":
            untrusted = _web_source(tool_input) or spec.name
        elif spec.server_id != "builtin":
            untrusted = f"{spec.server_id} tool results"
        elif not self.project_trusted and (spec.is_read_only(tool_input) or spec.runs_programs):
            untrusted = (f"files of {self.project_root.name or self.project_root} "
                         "(the project is not marked trusted)")
        if untrusted:
            changed |= flow.add(FlowLabel.UNTRUSTED, untrusted, spec.name)
            # Which values a later call could have taken from it (provenance guard).
            flow.provenance.learn_untrusted(content, f"the result of {spec.name}"
                                                     f" ({untrusted})")
        elif spec.is_read_only(tool_input) and not facts.outside:
            flow.provenance.learn_vouched(content)  # a trusted project's own files
        if changed:
            self._flow_changed()

    def _vouch_person_text(self, history: Sequence[Mapping[str, Any]],
                           user_text: str | None) -> None:
        """What the person wrote (this prompt, and earlier ones of a reopened conversation):
        the values in it are theirs, whatever a page said too."""
        provenance = self.flow.provenance
        start = self._vouched_messages
        for message in history[start:]:
            content = message.get("content")
            if message.get("role") != "user" or not isinstance(content, list):
                continue
            for block in content:
                if isinstance(block, Mapping) and block.get("type") == "text" and \
                        isinstance(block.get("text"), str):
                    provenance.learn_vouched(block["text"])
        self._vouched_messages = len(history)
        if user_text:
            provenance.learn_vouched(user_text)

    def _track_server_instructions(self, instructions: Mapping[str, str]) -> None:
        """MCP servers' instructions go into the system prompt: text a third party wrote,
        which the model reads like any tool result from that server."""
        changed = False
        for server in sorted(instructions):
            changed |= self.flow.add(FlowLabel.UNTRUSTED, f"{server} server instructions",
                                     server)
        if changed:
            self._flow_changed()

    def _flow_changed(self) -> None:
        flow = self.flow
        if self._conversation_id is not None:
            self._writer.submit(self._conversations.set_flow, self._conversation_id,
                                flow.to_json())
        self._emit(FlowChanged(flow.summary(), flow.sources))


def _shown(path: str) -> str:
    home = str(Path.home())
    return "~" + path[len(home):] if path == home or path.startswith(home + "/") else path


def _web_source(tool_input: Mapping[str, Any]) -> str | None:
    url = tool_input.get("url")
    if isinstance(url, str):
        return url[:200]
    query = tool_input.get("query")
    if isinstance(query, str):
        return f"web search: {query[:100]}"
    return None
