"""The permission service's in-memory rule index: which rules can apply to a tool, found
without testing every rule, and each rule's input pattern compiled for the tool's subjects.

Exact tool names are found by dict lookup, tool patterns by their literal prefix or literal
segment, and only those few are tested by regex. Separate from the service
(app.core.permissions.service), which decides calls: this is the data structure it decides
from, rebuilt whenever the rule table changes, and has no state of its own beyond a snapshot.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from app.core.hosts import canonical_host_pattern
from app.core.permissions.patterns import (
    Matcher,
    compile_path_pattern,
    compile_text_pattern,
    compile_tool_pattern,
    escape_pattern,
    is_relative_path_pattern,
    tool_pattern_literals,
)
from app.core.permissions.rules import PermissionRule
from app.core.tools.base import PROJECT_PLACEHOLDER, SubjectKind


def _never(_subject: str) -> bool:
    return False


@dataclass(frozen=True)
class Candidate:
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
                  if compile_tool_pattern(rule.tool_pattern)(lowered)]
        return found


class RuleIndex:
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


def specialise(rule: PermissionRule, subject_kind: SubjectKind,
               project: Path | None) -> Candidate:
    """``rule`` with its input pattern compiled for subjects of ``subject_kind`` (``{project}``
    standing for ``project``)."""
    pattern = rule.input_pattern
    if pattern is None:
        return Candidate(rule)
    if PROJECT_PLACEHOLDER in pattern:
        if project is None:  # no project open: the rule names nothing
            return Candidate(rule, _never)
        pattern = pattern.replace(PROJECT_PLACEHOLDER, escape_pattern(str(project)))
    if subject_kind == "path":
        return Candidate(rule, compile_path_pattern(pattern), is_relative_path_pattern(pattern))
    if subject_kind == "host":
        # Host subjects are canonical (canonical_host), so the pattern must be spelled the same
        # way: a rule written as `EXAMPLE.com.` or `[::1]` holds for the host it names.
        return Candidate(rule, compile_text_pattern(canonical_host_pattern(pattern)))
    return Candidate(rule, compile_text_pattern(pattern))
