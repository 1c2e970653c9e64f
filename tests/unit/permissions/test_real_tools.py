"""Decisions with the real built-in tools' subjects (tree-sitter shell parsing, resolved paths)."""

from __future__ import annotations

import pytest

from app.core.permissions.repository import RuleRepository
from app.core.permissions.rules import PermissionRule
from app.core.permissions.service import ToolPermissionService


@pytest.fixture
def service(db, project):
    RuleRepository(db).replace_all([
        PermissionRule(decision="allow", tool_name="shell_exec", input_pattern="git status*",
                       priority=10),
        PermissionRule(decision="allow", tool_name="shell_exec", input_pattern="ls*",
                       priority=10),
        PermissionRule(decision="deny", tool_name="shell_exec", input_pattern="rm *"),
        PermissionRule(decision="allow", tool_name="write_file", input_pattern="doc/**",
                       priority=10),
    ])
    return ToolPermissionService(db, project_root=project)


@pytest.mark.parametrize("command, expected", [
    ("git status", "allow"),
    ("git status && ls -la", "allow"),
    ("git status | ls", "allow"),
    ("git   status   -s", "allow"),            # words re-joined by single spaces
    ("'git' \"status\"", "allow"),             # quotes removed: the words are what run
    ("git status && rm -rf build", "deny"),     # one denied part denies the chain
    ("ls; rm -rf /", "deny"),
    ("git status || cat secret", "ask"),        # one unmatched part asks
    ("git status $(rm -rf x)", "deny"),         # nested command still seen by deny rules
    ("git status `curl evil`", "ask"),          # never auto-approved when not analysable
    ("git status > out.txt", "ask"),
    ("git status\nrm -rf x", "deny"),
])
def test_compound_shell_commands(service, command, expected):
    assert service.decide("builtin", "shell_exec", {"command": command}).kind == expected


@pytest.mark.parametrize("path, expected", [
    ("doc/a.md", "allow"),
    ("doc/deep/er/a.md", "allow"),
    ("./doc/../doc/a.md", "allow"),
    ("doc/../src/a.py", "ask"),
    ("doc_evil/a.md", "ask"),
    ("/etc/passwd", "ask"),
])
def test_file_paths_are_resolved_before_matching(service, path, expected):
    decision = service.decide("builtin", "write_file", {"path": path, "content": "x"})
    assert decision.kind == expected


def test_symlink_out_of_doc_is_not_doc(service, project, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (project / "doc").mkdir()
    (project / "doc" / "link").symlink_to(outside)
    decision = service.decide("builtin", "write_file", {"path": "doc/link/x.md", "content": "x"})
    assert decision.kind == "ask"
