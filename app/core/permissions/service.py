"""ToolPermissionService: allow, ask or deny a tool call from the rule table.

Rules live in memory as an immutable index that is rebuilt whenever a ``RuleRepository`` on the
same connection writes (it notifies us), so ``decide()`` never touches the disk. The index finds
the rules that can apply to a tool without testing every rule: exact names by dict lookup,
patterns by their literal prefix or literal segment, and only those few by regex. The
per-tool candidate lists are cached until the rules or the registry change.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.core.hosts import canonical_host_pattern
from app.core.permissions.patterns import (
    Matcher,
    compile_path_pattern,
    compile_text_pattern,
    compile_tool_pattern,
    is_relative_path_pattern,
    tool_pattern_literals,
)
from app.core.permissions.repository import RuleRepository
from app.core.permissions.rules import STRICTNESS, DecisionKind, PermissionRule
from app.core.sandbox import Sandbox, machine_sandbox
from app.core.tools.base import SubjectError, SubjectKind, canonical_json
from app.core.tools.containment import ProgramContainment, program_containment
from app.core.tools.registry import ToolRegistry

if TYPE_CHECKING:  # only a type here; the store opens without sqlite-utils
    import sqlite_utils

_MAX_CANDIDATE_CACHE = 4096


@dataclass(frozen=True)
class SubjectDecision:
    subject: str
    kind: DecisionKind
    rule: PermissionRule | None


@dataclass(frozen=True)
class Decision:
    """The outcome for one call: ``kind`` and the rule that decided it (None: no rule matched)."""

    kind: DecisionKind
    rule: PermissionRule | None = None
    subjects: tuple[SubjectDecision, ...] = field(default=(), compare=False)
    note: str = field(default="", compare=False)

    @property
    def auto_approve(self) -> bool:
        return self.kind == "allow"

    def explain(self) -> str:
        why = self.rule.summary() if self.rule else "no rule matched (the safe default is ask)"
        text = f"{self.kind}: {why}"
        return f"{text}. {self.note}" if self.note else text


@dataclass(frozen=True)
class _Candidate:
    """A rule that applies to one tool, with its input pattern compiled for that tool."""

    rule: PermissionRule
    input_matcher: Matcher | None = None
    input_is_relative: bool = False


class _Bucket:
    """The rules of one server scope (a server id, or None for rules of every server)."""

    __slots__ = ("any_tool", "exact", "prefixed", "segmented")

    def __init__(self) -> None:
        self.exact: dict[str, list[tuple[int, PermissionRule]]] = {}
        self.any_tool: list[tuple[int, PermissionRule]] = []
        self.prefixed: dict[str, list[tuple[int, PermissionRule]]] = {}
        self.segmented: dict[str, list[tuple[int, PermissionRule]]] = {}

    def add(self, order: int, rule: PermissionRule) -> None:
        entry = (order, rule)
        if rule.tool_name is not None:
            self.exact.setdefault(rule.tool_name, []).append(entry)
        elif rule.tool_pattern is None:
            self.any_tool.append(entry)
        else:
            prefix, segment = tool_pattern_literals(rule.tool_pattern)
            if prefix:
                self.prefixed.setdefault(prefix, []).append(entry)
            else:
                self.segmented.setdefault(segment, []).append(entry)

    def matching(self, tool_name: str, lowered: str) -> list[tuple[int, PermissionRule]]:
        found = list(self.exact.get(tool_name, ()))
        found += self.any_tool
        pattern_entries: list[tuple[int, PermissionRule]] = []
        if self.prefixed:
            for end in range(1, len(lowered) + 1):
                pattern_entries += self.prefixed.get(lowered[:end], ())
        for segment, entries in self.segmented.items():
            if segment in lowered:
                pattern_entries += entries
        found += [(order, rule) for order, rule in pattern_entries
                  if compile_tool_pattern(rule.tool_pattern)(lowered)]  # type: ignore[arg-type]
        return found


class _RuleIndex:
    """An immutable snapshot of the rule table, indexed by server and tool name."""

    def __init__(self, rules: list[PermissionRule]) -> None:
        self.rules = rules  # already in evaluation order
        self.buckets: dict[str | None, _Bucket] = {}
        for order, rule in enumerate(rules):
            bucket = self.buckets.get(rule.server_id)
            if bucket is None:
                bucket = self.buckets[rule.server_id] = _Bucket()
            bucket.add(order, rule)

    def rules_for(self, server_id: str, tool_name: str) -> list[PermissionRule]:
        lowered = tool_name.lower()
        found: list[tuple[int, PermissionRule]] = []
        for key in (server_id, None):
            bucket = self.buckets.get(key)
            if bucket is not None:
                found += bucket.matching(tool_name, lowered)
        found.sort(key=lambda entry: entry[0])
        return [rule for _order, rule in found]


class ToolPermissionService:
    def __init__(
        self,
        db: sqlite_utils.Database,
        registry: ToolRegistry | None = None,
        working_dir: str | os.PathLike[str] | None = None,
        sandbox: Sandbox | None = None,
    ) -> None:
        if registry is None:
            from app.core.tools.builtin import default_registry

            registry = default_registry()
        self.rules = RuleRepository(db)
        self.registry = registry
        self.working_dir = Path(working_dir).resolve() if working_dir is not None else None
        # Whether a call's programs will run contained is a fact decisions can use.
        self.sandbox = sandbox if sandbox is not None else machine_sandbox()
        self._lock = threading.Lock()
        self._index = _RuleIndex([])
        self._index_generation = -1
        self._candidates: dict[tuple[str, str], tuple[_Candidate, ...]] = {}
        self._candidates_key: tuple[int, int] = (-1, -1)
        self._unsubscribe = self.rules.changes.subscribe(self.reload)
        self.reload()

    # -- public API ------------------------------------------------------------------------

    def should_auto_approve(self, server_id: str, tool_name: str, tool_input: Any) -> bool:
        return self.decide(server_id, tool_name, tool_input).kind == "allow"

    def decide(self, server_id: str, tool_name: str, tool_input: Any) -> Decision:
        candidates = self._candidates_for(str(server_id), str(tool_name))
        if not candidates:
            return Decision("ask")
        if all(c.input_matcher is None for c in candidates):
            # Every candidate matches every subject, so the first one decides the call.
            top = candidates[0].rule
            return Decision(top.decision, top)

        kind_of_subjects, subjects, complete = self._subjects(server_id, tool_name, tool_input)
        decided: list[SubjectDecision] = []
        worst: SubjectDecision | None = None
        for subject in subjects:
            verdict = self._decide_subject(candidates, subject, kind_of_subjects)
            decided.append(verdict)
            if worst is None or STRICTNESS[verdict.kind] > STRICTNESS[worst.kind]:
                worst = verdict
        assert worst is not None  # _subjects always yields at least one subject
        if not complete and worst.kind == "allow":
            return Decision("ask", worst.rule, tuple(decided),
                            note="The input could not be fully analysed, so it is not "
                                 "auto-approved.")
        return Decision(worst.kind, worst.rule, tuple(decided))

    def program_containment(self, server_id: str, tool_name: str) -> ProgramContainment | None:
        """Whether the programs a call to this tool starts run in a working sandbox (None: the
        tool is unknown)."""
        tool = self.registry.get(tool_name)
        if tool is None or tool.spec.server_id != server_id:
            return None
        return program_containment(tool.spec, self.sandbox)

    def reload(self) -> None:
        """Re-read the rule table (called by the repository after every write)."""
        with self._lock:
            generation = self.rules.changes.generation
            self._index = _RuleIndex(self.rules.list())
            self._index_generation = generation

    def close(self) -> None:
        self._unsubscribe()

    # -- evaluation ------------------------------------------------------------------------

    def _decide_subject(self, candidates: tuple[_Candidate, ...], subject: str,
                        kind: SubjectKind) -> SubjectDecision:
        relative = self._relative_form(subject) if kind == "path" else None
        for candidate in candidates:
            matcher = candidate.input_matcher
            if matcher is None or matcher(subject) or (
                    relative is not None and candidate.input_is_relative and matcher(relative)):
                return SubjectDecision(subject, candidate.rule.decision, candidate.rule)
        return SubjectDecision(subject, "ask", None)

    def _relative_form(self, path: str) -> str | None:
        root = self.working_dir
        if root is None:
            return None
        prefix = str(root).rstrip("/") + "/"
        return path[len(prefix):] if path.startswith(prefix) else None

    def _subjects(self, server_id: str, tool_name: str,
                  tool_input: Any) -> tuple[SubjectKind, list[str], bool]:
        tool = self.registry.get(tool_name)
        spec = tool.spec if tool is not None and tool.spec.server_id == server_id else None
        if spec is None:
            return "text", [canonical_json(tool_input)], True
        try:
            if not isinstance(tool_input, Mapping):
                raise SubjectError("tool input is not an object")
            subjects = [s for s in spec.subjects(tool_input, self.working_dir)
                        if isinstance(s, str)]
            complete = True
        except SubjectError as exc:
            subjects, complete = [s for s in exc.partial if isinstance(s, str)], False
        except Exception:  # malformed input: the tool itself will reject it
            subjects, complete = [], False
        if not subjects:
            # Keep evaluating (deny rules may still match the raw input), never auto-approve.
            return "text", [canonical_json(tool_input)], False
        return spec.subject_kind, subjects, complete

    # -- candidates ------------------------------------------------------------------------

    def _candidates_for(self, server_id: str, tool_name: str) -> tuple[_Candidate, ...]:
        # decide() runs in worker threads (the agent parses commands off the event loop): the
        # lock keeps the index and its generation a consistent pair, and the cache coherent.
        with self._lock:
            return self._candidates_locked(server_id, tool_name)

    def _candidates_locked(self, server_id: str, tool_name: str) -> tuple[_Candidate, ...]:
        index = self._index
        key = (self._index_generation, self.registry.generation)
        if key != self._candidates_key:
            self._candidates = {}
            self._candidates_key = key
        cached = self._candidates.get((server_id, tool_name))
        if cached is not None:
            return cached
        subject_kind = self._subject_kind(server_id, tool_name)
        result = tuple(_specialise(rule, subject_kind)
                       for rule in index.rules_for(server_id, tool_name))
        if len(self._candidates) >= _MAX_CANDIDATE_CACHE:
            self._candidates.clear()
        self._candidates[(server_id, tool_name)] = result
        return result

    def _subject_kind(self, server_id: str, tool_name: str) -> SubjectKind:
        tool = self.registry.get(tool_name)
        if tool is not None and tool.spec.server_id == server_id:
            return tool.spec.subject_kind
        return "text"


def _specialise(rule: PermissionRule, subject_kind: SubjectKind) -> _Candidate:
    pattern = rule.input_pattern
    if pattern is None:
        return _Candidate(rule)
    if subject_kind == "path":
        return _Candidate(rule, compile_path_pattern(pattern), is_relative_path_pattern(pattern))
    if subject_kind == "host":
        # Host subjects are canonical (canonical_host), so the pattern must be spelled the same
        # way: a rule written as `EXAMPLE.com.` or `[::1]` holds for the host it names.
        return _Candidate(rule, compile_text_pattern(canonical_host_pattern(pattern)))
    return _Candidate(rule, compile_text_pattern(pattern))
