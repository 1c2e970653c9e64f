"""File-tool writes to what git executes are not contained, and writes to persistence paths
(what the person's tools run unasked) always ask: in auto mode, under an allow rule, whatever
the mode decided; a deny stays a deny. decide() on the real built-in tools' specs."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from app.core.permission_mode import PermissionMode
from app.core.permissions.rules import PermissionRule
from app.core.permissions.service import DecisionContext, ToolPermissionService
from app.core.sandbox import Sandbox
from app.core.sensitive_paths import SensitivePaths
from app.core.tools.base import ToolContext
from app.core.tools.default_registry import builtin_provider
from app.core.tools.registry import ToolRegistry
from tests.sandbox_support import STATUS

AUTO = PermissionMode.AUTO


def _git(folder: Path, *args: str) -> None:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    subprocess.run(["git", *args], cwd=folder, env=env, check=True, capture_output=True)


@pytest.fixture
def service(db, project: Path, tmp_path: Path):
    service = ToolPermissionService(db, ToolRegistry([builtin_provider()]), project_root=project,
                                    sandbox=Sandbox(STATUS, STATUS.available),
                                    sensitive=SensitivePaths(tmp_path / "home"))
    yield service
    service.close()


@pytest.fixture
def repo(project: Path) -> Path:
    _git(project, "init", "-q")
    _git(project, "config", "core.hooksPath", ".githooks")
    _git(project, "config", "include.path", "../team.gitconfig")
    _git(project, "config", "includeIf.gitdir:~/work/.path", "../conditional.inc")
    _git(project, "init", "-q", "--bare", "mirror.git")
    return project


def _write(service: ToolPermissionService, project: Path, path: str,
           mode: PermissionMode = AUTO):
    context = DecisionContext(mode=mode, checkpoints=True,
                              tool_context=ToolContext(project_root=project))
    return service.decide("builtin", "write_file", {"path": path, "content": "x"}, context)


@pytest.mark.parametrize("path", [".githooks/pre-commit", "team.gitconfig", "conditional.inc",
                                  "mirror.git/hooks/post-update", "mirror.git/config"])
def test_auto_asks_for_a_write_into_what_git_runs(service, repo, path):
    decision = _write(service, repo, path)
    assert decision.kind == "ask", decision.explain()
    assert "not contained" in decision.decided_by and "what git runs" in decision.decided_by
    assert path.split("/")[0] in decision.decided_by


@pytest.mark.parametrize("path", [".vscode/tasks.json", ".vscode/settings.json", ".envrc",
                                  "x.pth", ".venv/lib/python3.12/site-packages/evil.pth",
                                  "src/sitecustomize.py", ".pre-commit-config.yaml",
                                  ".husky/pre-commit", ".idea/workspace.xml",
                                  ".devcontainer/devcontainer.json", ".tebiki/tools.toml"])
def test_auto_asks_for_a_persistence_write(service, project, path):
    decision = _write(service, project, path)
    assert decision.kind == "ask", decision.explain()
    assert str(project / path) in decision.decided_by  # .envrc is a sensitive path as well
    assert decision.facts is not None and decision.facts.persistence
    assert "runs" in decision.flow_reason


def test_a_rule_that_opts_out_of_the_flow_guard_does_not_cover_persistence(service, project):
    """.envrc is also a sensitive path; a rule the person made for it (ignore_flow) lets the
    sensitive guard pass, not the persistence one."""
    service.rules.add(PermissionRule("allow", server_id="builtin", tool_name="write_file",
                                     ignore_flow=True))
    decision = _write(service, project, ".envrc")
    assert decision.kind == "ask", decision.explain()
    assert decision.decided_by.startswith(f"persistence path: {project / '.envrc'}")


def test_an_allow_rule_does_not_let_a_persistence_write_run_unasked(service, project):
    service.rules.add(PermissionRule("allow", server_id="builtin", tool_name="write_file"))
    assert _write(service, project, "notes.txt", PermissionMode.ASK).kind == "allow"
    for mode in (PermissionMode.ASK, AUTO):
        decision = _write(service, project, ".vscode/tasks.json", mode)
        assert decision.kind == "ask", decision.explain()


def test_a_deny_rule_stays_a_deny(service, project):
    service.rules.add(PermissionRule("deny", server_id="builtin", tool_name="write_file"))
    assert _write(service, project, ".envrc").kind == "deny"


@pytest.mark.parametrize("path", ["Makefile", "package.json", "src/app.py", "tests/conftest.py",
                                  ".vscode/extensions.json", "docs/envrc.md"])
def test_ordinary_project_files_are_still_auto_allowed(service, project, path):
    decision = _write(service, project, path)
    assert decision.kind == "allow", decision.explain()
