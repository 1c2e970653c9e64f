"""The conversation's flow labels, for AgentSession: loaded with the conversation, updated
after each call from what the call read (app.core.permissions.flow), persisted with the
conversation and announced with ``FlowChanged``."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from app.core.agent.events import EventSink, FlowChanged
from app.core.permissions.egress import SecretMatcher
from app.core.permissions.flow import FlowLabel, FlowState
from app.core.permissions.history_secrets import (
    HISTORY_SUFFIX,
    history_secret_paths,
    prints_git_objects,
)
from app.core.permissions.service import Decision
from app.core.permissions.token_files import TOKEN_SUFFIX, token_file_paths
from app.core.store.conversations import ConversationRepository
from app.core.store.writer import BackgroundWriter
from app.core.tools.base import ToolCategory, ToolSpec, canonical_json

log = logging.getLogger(__name__)

IN_THE_RESULT = " (in the result)"
# How much of one result is learnt as secret material (a key file is a few KB).
MAX_LEARNT_CHARS = 256 * 1024
# Built-in tools that leave the content of secret files out of the git history they print.
_FILTERS_SECRET_HISTORY = frozenset({"git_ops"})
# How much of a result is scanned for the machine's known secrets.
MAX_SCANNED_CHARS = 1024 * 1024


class FlowTracking:
    """One conversation's flow labels. ``known_secrets`` are the machine's secrets a result is
    scanned for; files of a project that is not ``project_trusted`` are untrusted content;
    the labels are stored with the conversation ``conversation_id()`` names (none yet: kept in
    memory) and announced through ``emit``."""

    def __init__(self, conversations: ConversationRepository, writer: BackgroundWriter,
                 known_secrets: SecretMatcher, project_root: Path, project_trusted: bool,
                 conversation_id: Callable[[], int | None], emit: EventSink,
                 state: FlowState | None = None) -> None:
        self._conversations = conversations
        self._writer = writer
        self._known_secrets = known_secrets
        self._project_root = project_root
        self.project_trusted = project_trusted
        self._conversation_id = conversation_id
        self._emit = emit
        # ``state``: labels it shares with another conversation (a sub-agent's parent's).
        self._flow: FlowState | None = state
        self._vouched_messages = 0  # user messages of the history already vouched for

    @property
    def flow(self) -> FlowState:
        """The labels (loaded from the conversation on first use)."""
        if self._flow is None:
            stored = None
            conversation_id = self._conversation_id()
            if conversation_id is not None:
                try:
                    stored = self._conversations.flow(conversation_id)
                except KeyError:
                    stored = None
                except Exception:  # unreadable: fail closed (from_json marks it)
                    log.exception("could not read the conversation's flow labels")
                    stored = {"damaged": True}
            self._flow = FlowState.from_json(stored)
        return self._flow

    def reset(self) -> None:
        """Forget the labels (the person starts a different task in this conversation)."""
        self.flow.clear()
        self._changed()

    def track_result(self, spec: ToolSpec, tool_input: Mapping[str, Any], decision: Decision,
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
        for hit in self._known_secrets.scan(content[:MAX_SCANNED_CHARS]):
            changed |= flow.add(FlowLabel.READ_SENSITIVE,
                                f"{self._shown(hit.source)}{IN_THE_RESULT}", spec.name)
        # A call that read or named a secret (an approved ``cat .env`` too, whatever the
        # tool calls itself) carries it in its result: the conversation has read it.
        for path, _entry in facts.sensitive:
            changed |= flow.add(FlowLabel.READ_SENSITIVE, self._shown(path), spec.name)
            flow.secrets.add_text(content[:MAX_LEARNT_CHARS], self._shown(path))
        # A git command that can print any blob, in a project whose history holds secret
        # files, read them; a program that may read any file it sees read the ordinary files
        # that hold a token too: its output may carry them in a form no scan reads.
        for source in (*self._program_reads(spec, tool_input),
                       *self._searched_token_files(spec, tool_input)):
            changed |= flow.add(FlowLabel.READ_SENSITIVE, source, spec.name)
        if spec.is_read_only(tool_input):
            for path in facts.outside:
                changed |= flow.add(FlowLabel.READ_OUTSIDE, self._shown(path), spec.name)
        # Before this result teaches anything: a link the model wrote (into a file, a
        # command) is not one it was given. A send's own URL was judged as it went out.
        if not facts.egress:
            flow.provenance.learn_authored(canonical_json(tool_input))
        untrusted = self._untrusted_source(spec, tool_input, facts.egress)
        if untrusted:
            changed |= flow.add(FlowLabel.UNTRUSTED, untrusted, spec.name)
            # Which values a later call could have taken from it (provenance guard).
            flow.provenance.learn_untrusted(content, f"the result of {spec.name}"
                                                     f" ({untrusted})")
        elif spec.category is ToolCategory.ORCHESTRATION:
            # A sub-agent's answer is text a model wrote after reading what it read (labels
            # the conversation already has): never the person's word, so what it names is
            # no more vouched for than the page it may repeat.
            flow.provenance.learn_untrusted(content, f"the answer of a sub-agent ({spec.name})")
        elif spec.is_read_only(tool_input) and not facts.outside:
            flow.provenance.learn_vouched(content)  # a trusted project's own files
        if changed:
            self._changed()

    def _untrusted_source(self, spec: ToolSpec, tool_input: Mapping[str, Any],
                          egress: bool) -> str:
        """Where the result came from when it is untrusted content ("" when it is not)."""
        if spec.needs_network and spec.server_id == "builtin":
            return _web_source(tool_input) or spec.name
        if spec.runs_programs and egress and spec.server_id == "builtin":
            # A command with network: its output may be a page it downloaded (`curl`).
            return f"the output of {spec.name} with network"
        if spec.server_id != "builtin":
            return f"{spec.server_id} tool results"
        if not self.project_trusted and (spec.is_read_only(tool_input) or spec.runs_programs):
            return self._untrusted_project_files()
        return ""

    def _program_reads(self, spec: ToolSpec, tool_input: Mapping[str, Any]) -> tuple[str, ...]:
        paths = tuple(p + HISTORY_SUFFIX for p in history_secret_paths(self._project_root)) + \
            tuple(p + TOKEN_SUFFIX for p in token_file_paths(self._project_root))
        # Tebiki's own tools whose subjects are the commands they run (shell_exec) or the
        # checks that run the project's code (self_eval); git_ops leaves secret files'
        # content out of what it prints, and grep_search's subjects are paths.
        if not paths or not spec.runs_programs or spec.subjects_fn is None or \
                spec.server_id != "builtin" or spec.subject_kind != "text" or \
                spec.name in _FILTERS_SECRET_HISTORY:
            return ()
        try:
            commands = spec.subjects(tool_input, self._project_root)
        except Exception:  # not understood: it asked, and its output was scanned
            return ()
        return paths if prints_git_objects(commands) else ()

    def _searched_token_files(self, spec: ToolSpec, tool_input: Mapping[str, Any]) -> list[str]:
        """A content search (a reading tool that runs its search program over paths:
        grep_search) reads every file its paths reach, also when it answers with a count or
        file names only (a yes/no is a bit of the file): the files holding a token among
        them. Listing names (list_directory, glob_search) starts no program: names only."""
        files = token_file_paths(self._project_root)
        if not files or spec.server_id != "builtin" or spec.subject_kind != "path" or \
                not spec.runs_programs or not spec.is_read_only(tool_input):
            return []
        try:
            searched = [Path(p).resolve() for p in spec.subjects(tool_input, self._project_root)]
        except Exception:  # not understood: it asked, and its output was scanned
            return []
        root = self._project_root
        return [f + TOKEN_SUFFIX for f in files
                if any((root / f).resolve().is_relative_to(where) for where in searched)]

    def vouch_person_text(self, history: Sequence[Mapping[str, Any]],
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

    def track_server_instructions(self, instructions: Mapping[str, str]) -> None:
        """MCP servers' instructions go into the system prompt: text a third party wrote,
        which the model reads like any tool result from that server."""
        changed = False
        for server in sorted(instructions):
            changed |= self.flow.add(FlowLabel.UNTRUSTED, f"{server} server instructions",
                                     server)
        if changed:
            self._changed()

    def track_project_instructions(self, instructions: Mapping[str, str]) -> None:
        """The project's instructions files (``{name: text}``, AGENTS.md and the like, a
        sub-agent's file in ``.tebiki/agents``) go into a system prompt: when the project is
        not trusted, they are its files taken in like a read of them, untrusted content.
        Nothing is vouched for: they widen nothing."""
        if self.project_trusted or not instructions:
            return
        source = self._untrusted_project_files()
        for name, text in sorted(instructions.items()):
            self.flow.provenance.learn_untrusted(text, f"the project instructions {name}"
                                                       f" ({source})")
        if self.flow.add(FlowLabel.UNTRUSTED, source, "project instructions"):
            self._changed()

    def _shown(self, path: str) -> str:
        """A file as a person names it: relative inside the project, ~ in the home folder
        (one name per file, so a reason lists it once)."""
        candidate = Path(path)
        if candidate.is_absolute() and candidate.is_relative_to(self._project_root):
            return str(candidate.relative_to(self._project_root)) or "."
        return _shown(path)

    def _untrusted_project_files(self) -> str:
        return (f"files of {self._project_root.name or self._project_root} "
                "(the project is not marked trusted)")

    def changed(self) -> None:
        """Store and announce the labels: another session that shares them (a sub-agent)
        added some."""
        self._changed()

    def _changed(self) -> None:
        flow = self.flow
        conversation_id = self._conversation_id()
        if conversation_id is not None:
            self._writer.submit(self._conversations.set_flow, conversation_id, flow.to_json())
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
