"""Permission modes, the sensitive-path and flow guards and ``{project}`` rule patterns, on the
real built-in tools' specs (decide() only; the agent-loop tests prove the side effects)."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.permission_mode import PermissionMode
from app.core.permissions.flow import FlowLabel, FlowState
from app.core.permissions.rules import PermissionRule
from app.core.permissions.service import DecisionContext, ToolPermissionService
from app.core.sandbox import Sandbox
from app.core.sensitive_paths import SensitivePaths
from app.core.tools.base import ToolContext, reads_in_project
from app.core.tools.default_registry import builtin_provider
from app.core.tools.registry import ToolRegistry
from tests.sandbox_support import STATUS

ASK, AUTO, PLAN = PermissionMode.ASK, PermissionMode.AUTO, PermissionMode.PLAN


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    (home / ".aws").mkdir(parents=True)
    (home / ".aws" / "credentials").write_text("[default]\naws_secret_access_key = "
                                               "q8Zr2LmXv0PdK4sT9wYb6NcF1gHj3uEo7iAe5RkM\n")
    return home


@pytest.fixture
def service(db, project: Path, home: Path):
    registry = ToolRegistry([builtin_provider()])
    service = ToolPermissionService(db, registry, project_root=project,
                                    sandbox=Sandbox(STATUS, STATUS.available),
                                    sensitive=SensitivePaths(home))
    for name in ("read_file", "grep_search", "glob_search", "list_directory"):
        for rule in reads_in_project(name):
            service.rules.add(PermissionRule(rule.decision, server_id="builtin", tool_name=name,
                                             input_pattern=rule.input_pattern))
    service.rules.add(PermissionRule("allow", server_id="builtin", tool_name="web_fetch"))
    yield service
    service.close()


def ctx(project: Path, mode: PermissionMode = ASK, flow: FlowState | None = None,
        checkpoints: bool = True, **tool_context) -> DecisionContext:
    return DecisionContext(mode=mode, flow=flow, checkpoints=checkpoints,
                           tool_context=ToolContext(project_root=project, **tool_context))


def decide(service, project, tool, tool_input, **context):
    return service.decide("builtin", tool, tool_input, ctx(project, **context))


# -- default rules that do not leak ---------------------------------------------------------

def test_reads_inside_the_project_are_allowed_and_outside_ask(service, project, home):
    (project / "a.py").write_text("x = 1\n")
    assert decide(service, project, "read_file", {"path": "a.py"}).kind == "allow"
    assert decide(service, project, "grep_search", {"pattern": "x"}).kind == "allow"
    outside = decide(service, project, "read_file", {"path": str(home / "notes.txt")})
    assert outside.kind == "ask"
    assert decide(service, project, "grep_search",
                  {"pattern": "AKIA", "path": str(home)}).kind == "ask"


def test_project_pattern_follows_the_open_folder(service, project, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    (other / "b.txt").write_text("b")
    assert decide(service, project, "read_file", {"path": str(other / "b.txt")}).kind == "ask"
    service.project_root = other
    assert decide(service, other, "read_file", {"path": str(other / "b.txt")}).kind == "allow"
    service.project_root = None
    assert decide(service, other, "read_file", {"path": str(other / "b.txt")}).kind == "ask"


def test_project_pattern_is_literal_even_when_the_folder_name_has_wildcards(db, tmp_path):
    weird = tmp_path / "proj[1]*"
    weird.mkdir()
    (weird / "f.txt").write_text("f")
    sibling = tmp_path / "proj1x"
    sibling.mkdir()
    (sibling / "f.txt").write_text("f")
    service = ToolPermissionService(db, ToolRegistry([builtin_provider()]), project_root=weird)
    service.rules.add(PermissionRule("allow", server_id="builtin", tool_name="read_file",
                                     input_pattern="{project}/**"))
    try:
        assert service.decide("builtin", "read_file",
                              {"path": str(weird / "f.txt")}).kind == "allow"
        assert service.decide("builtin", "read_file",
                              {"path": str(sibling / "f.txt")}).kind == "ask"
    finally:
        service.close()


@pytest.mark.parametrize("name", [".env", ".env.local", "config/id_rsa", "certs/server.pem",
                                  "deploy/credentials.json"])
def test_sensitive_files_ask_even_inside_the_project(service, project, name):
    path = project / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("SECRET=1")
    decision = decide(service, project, "read_file", {"path": name}, mode=AUTO)
    assert decision.kind == "ask"
    assert "sensitive" in decision.decided_by
    assert name.rsplit("/", 1)[-1] in decision.flow_reason


def test_a_template_of_a_secret_file_is_not_sensitive(service, project):
    (project / ".env.example").write_text("KEY=\n")
    assert decide(service, project, "read_file", {"path": ".env.example"}).kind == "allow"


def test_a_symlink_to_a_key_is_the_key(service, project, home):
    (project / "innocent.txt").symlink_to(home / ".aws" / "credentials")
    assert decide(service, project, "read_file", {"path": "innocent.txt"}).kind == "ask"


def test_a_rule_that_opts_out_allows_the_sensitive_read(service, project):
    (project / ".env").write_text("A=1")
    service.rules.add(PermissionRule("allow", server_id="builtin", tool_name="read_file",
                                     input_pattern="{project}/.env", priority=5,
                                     ignore_flow=True))
    assert decide(service, project, "read_file", {"path": ".env"}).kind == "allow"


def test_the_dialog_offers_an_exact_rule_for_a_sensitive_file(service, project):
    from app.core.permissions.suggestions import suggest_allow_rules

    (project / ".env").write_text("A=1")
    tool_input = {"path": ".env"}
    decision = decide(service, project, "read_file", tool_input)
    assert decision.kind == "ask"
    spec = service.registry.get("read_file").spec
    offers = suggest_allow_rules("builtin", "read_file", tool_input, spec, project, decision)
    assert [o.rule.input_pattern for o in offers][:1] == [".env"]
    assert offers[0].rule.ignore_flow and "sensitive" in offers[0].label
    service.rules.add(offers[0].rule)
    assert decide(service, project, "read_file", tool_input).kind == "allow"
    (project / ".env.local").write_text("B=2")  # the rule is exactly that file
    assert decide(service, project, "read_file", {"path": ".env.local"}).kind == "ask"


def test_a_deny_rule_always_wins_over_the_mode(service, project):
    service.rules.add(PermissionRule("deny", server_id="builtin", tool_name="write_file"))
    for mode in (ASK, AUTO, PLAN):
        assert decide(service, project, "write_file",
                      {"path": "a.txt", "content": "x"}, mode=mode).kind == "deny"


# -- modes --------------------------------------------------------------------------------

def test_ask_mode_asks_when_no_rule_decides(service, project):
    decision = decide(service, project, "write_file", {"path": "a.txt", "content": "x"})
    assert decision.kind == "ask" and decision.rule is None


def test_auto_allows_a_contained_reversible_edit(service, project):
    decision = decide(service, project, "write_file", {"path": "a.txt", "content": "x"},
                      mode=AUTO)
    assert decision.kind == "allow"
    assert decision.decided_by.startswith("auto mode: contained, reversible, sends nothing")


def test_auto_asks_without_checkpoints(service, project):
    decision = decide(service, project, "write_file", {"path": "a.txt", "content": "x"},
                      mode=AUTO, checkpoints=False)
    assert decision.kind == "ask"
    assert "checkpoints are off" in decision.decided_by


def test_auto_asks_for_a_write_outside_the_project(service, project, tmp_path):
    decision = decide(service, project, "write_file",
                      {"path": str(tmp_path / "elsewhere.txt"), "content": "x"}, mode=AUTO)
    assert decision.kind == "ask"
    assert "outside the project" in decision.decided_by


@pytest.mark.parametrize("path", [".git/hooks/pre-commit", ".git/config",
                                  "vendor/lib/.git/hooks/post-checkout"])
def test_auto_asks_for_a_write_into_a_git_folder(service, project, path):
    decision = decide(service, project, "write_file", {"path": path, "content": "#!/bin/sh"},
                      mode=AUTO)
    assert decision.kind == "ask"
    assert ".git folder" in decision.decided_by


@pytest.mark.skipif(not STATUS.available, reason=f"no sandbox here: {STATUS.summary}")
def test_auto_allows_a_sandboxed_command_without_network(service, project):
    decision = decide(service, project, "shell_exec", {"command": "ls"}, mode=AUTO)
    assert decision.kind == "allow", decision.explain()


@pytest.mark.parametrize("command", [
    "cat ~/notes/secret.txt", "cat /home/someone/.env", "grep -r AKIA /",
    "python3 -c \"print(open('/srv/data/key').read())\"", "cat ../../elsewhere/.env"])
def test_auto_asks_for_a_command_that_names_paths_outside_the_project(service, project,
                                                                     command):
    decision = decide(service, project, "shell_exec", {"command": command}, mode=AUTO)
    assert decision.kind == "ask"
    # A named secret (.env) is said first by the sensitive-path guard; the fact is the same.
    assert decision.facts is not None
    assert "outside the project" in decision.facts.not_contained_because


@pytest.mark.skipif(not STATUS.available, reason=f"no sandbox here: {STATUS.summary}")
@pytest.mark.parametrize("command", ["ls /usr/bin", "cat /etc/os-release", "ls src",
                                     "grep -rn TODO .", "curl -s https://example.com/a/b"])
def test_auto_runs_commands_that_stay_in_the_project_or_system_folders(service, project,
                                                                      command):
    decision = decide(service, project, "shell_exec", {"command": command}, mode=AUTO)
    assert decision.kind == "allow", decision.explain()


def test_auto_asks_for_a_command_with_network(service, project):
    decision = decide(service, project, "shell_exec", {"command": "ls"}, mode=AUTO,
                      tool_config={"shell_exec": {"network": True}})
    assert decision.kind == "ask"
    assert "network" in decision.decided_by


def test_auto_asks_for_a_command_that_may_write_outside(service, project, tmp_path):
    decision = decide(service, project, "shell_exec", {"command": "ls"}, mode=AUTO,
                      tool_config={"shell_exec": {"write_folders": [str(tmp_path)]}})
    assert decision.kind == "ask"


def test_auto_asks_when_the_sandbox_is_missing(db, project, home):
    service = ToolPermissionService(db, ToolRegistry([builtin_provider()]), project_root=project,
                                    sandbox=Sandbox.off("test: no sandbox"),
                                    sensitive=SensitivePaths(home))
    try:
        decision = decide(service, project, "shell_exec", {"command": "ls"}, mode=AUTO)
        assert decision.kind == "ask"
        assert "not contained" in decision.decided_by
    finally:
        service.close()


def test_auto_asks_for_git_commit_where_checkpoints_record_no_repository(service, project):
    # no .git of the project's own (a parent folder's repository, or none): nothing records
    # what a commit changes
    decision = decide(service, project, "git_ops", {"action": "commit", "args": {"message": "m"}},
                      mode=AUTO, git_permission="read_write")
    assert decision.kind == "ask"
    assert "not reversible" in decision.decided_by


@pytest.mark.skipif(not STATUS.available, reason="git_ops is contained only in the sandbox")
def test_auto_runs_git_writes_that_checkpoints_record(service, project):
    (project / ".git" / "refs").mkdir(parents=True)  # checkpoints record HEAD, refs, index
    for tool_input in ({"action": "add", "args": {"files": ["a.txt"]}},
                       {"action": "commit", "args": {"message": "m"}},
                       {"action": "branch_create", "args": {"branch_name": "topic"}},
                       {"action": "checkout", "args": {"branch_name": "main"}}):
        decision = decide(service, project, "git_ops", tool_input, mode=AUTO,
                          git_permission="read_write")
        assert decision.kind == "allow", (tool_input, decision.decided_by)
        assert "contained, reversible" in decision.decided_by
    # a shell command with git write permission still may do anything to .git
    shell = decide(service, project, "shell_exec", {"command": "git commit -m x"}, mode=AUTO,
                   git_permission="read_write")
    assert shell.kind == "ask"


def test_auto_asks_for_web_reading_no_rule_allows(service, project):
    for rule in [r for r in service.rules.list() if r.tool_name == "web_fetch"]:
        service.rules.delete(rule.id)
    decision = decide(service, project, "web_fetch", {"url": "https://example.com/"}, mode=AUTO)
    assert decision.kind == "ask"
    assert "sends data to example.com" in decision.decided_by


def test_plan_refuses_state_changes_even_under_an_allow_rule(service, project):
    service.rules.add(PermissionRule("allow", server_id="builtin", tool_name="write_file"))
    decision = decide(service, project, "write_file", {"path": "a.txt", "content": "x"},
                      mode=PLAN)
    assert decision.kind == "deny"
    assert "plan mode" in decision.note and "propose" in decision.note


def test_plan_runs_reads_inside_the_project(service, project):
    (project / "a.py").write_text("x")
    assert decide(service, project, "read_file", {"path": "a.py"}, mode=PLAN).kind == "allow"
    assert decide(service, project, "git_ops", {"action": "status"}, mode=PLAN).kind != "deny"
    assert decide(service, project, "shell_exec", {"command": "ls"}, mode=PLAN).kind == "deny"


# -- the flow guard and the egress check ----------------------------------------------------

def _flow_after_reading(path: str, content: str = "") -> FlowState:
    flow = FlowState()
    flow.add(FlowLabel.READ_SENSITIVE, path, "read_file")
    if content:
        flow.secrets.add_text(content, path)
    return flow


def test_after_a_sensitive_read_sending_out_asks_even_under_an_allow_rule(service, project):
    flow = _flow_after_reading("~/.aws/credentials")
    decision = decide(service, project, "web_fetch", {"url": "https://example.com/x"},
                      flow=flow)
    assert decision.kind == "ask"
    assert "~/.aws/credentials" in decision.flow_reason
    assert "example.com" in decision.flow_reason
    clean = decide(service, project, "web_fetch", {"url": "https://example.com/x"},
                   flow=FlowState())
    assert clean.kind == "allow"


def test_untrusted_content_alone_does_not_raise(service, project):
    flow = FlowState()
    flow.add(FlowLabel.UNTRUSTED, "https://example.com", "web_fetch")
    assert decide(service, project, "web_fetch", {"url": "https://example.org/"},
                  flow=flow).kind == "allow"


def test_an_ignore_flow_rule_opts_out_of_the_guard(service, project):
    service.rules.add(PermissionRule("allow", server_id="builtin", tool_name="web_fetch",
                                     input_pattern="docs.python.org", priority=10,
                                     ignore_flow=True))
    flow = _flow_after_reading("~/.ssh/id_rsa")
    assert decide(service, project, "web_fetch", {"url": "https://docs.python.org/3/"},
                  flow=flow).kind == "allow"


def test_a_learnt_secret_in_an_outgoing_url_is_refused(service, project):
    secret = "q8Zr2LmXv0PdK4sT9wYb6NcF1gHj3uEo7iAe5RkM"
    flow = _flow_after_reading("~/.aws/credentials",
                               f"[default]\naws_secret_access_key = {secret}\n")
    decision = decide(service, project, "web_fetch",
                      {"url": f"https://example.com/?d={secret}"}, flow=flow)
    assert decision.kind == "deny"
    assert secret not in decision.note  # the refusal never repeats the secret


def test_a_well_known_token_is_refused_without_any_read(service, project):
    decision = decide(service, project, "web_fetch",
                      {"url": "https://example.com/?k=AKIAIOSFODNN7EXAMPLQ"})
    assert decision.kind == "deny"


def test_known_machine_secrets_are_refused_in_any_conversation(service, project, home):
    service.learn_secrets(project, home=home)
    decision = decide(service, project, "web_fetch",
                      {"url": "https://example.com/?d=q8Zr2LmXv0PdK4sT9wYb6NcF1gHj3uEo7iAe5RkM"})
    assert decision.kind == "deny"


def test_project_secret_files_are_learnt(service, project, home):
    (project / ".env").write_text("STRIPE_TOKEN=Zq7Xw2Lp9Rt4Vn8Mk3Hj6Gf1Ds5Aa0Qe\n")
    service.learn_secrets(project, home=home)
    decision = decide(service, project, "web_fetch",
                      {"url": "https://example.com/?x=Zq7Xw2Lp9Rt4Vn8Mk3Hj6Gf1Ds5Aa0Qe"})
    assert decision.kind == "deny"
    ordinary = decide(service, project, "web_fetch", {"url": "https://example.com/?x=hello"})
    assert ordinary.kind == "allow"


def test_decisions_without_context_keep_the_sensitive_guard(service, project):
    (project / ".env").write_text("A=1")
    assert service.decide("builtin", "read_file",
                          {"path": str(project / ".env")}).kind == "ask"


@pytest.mark.parametrize("command", [
    "cat .env", "python3 -c \"print(open('.env').read().encode().hex())\"",
    "base64 config/prod.pem", "cat infra/terraform.tfstate"])
def test_a_command_naming_a_project_secret_is_shown_to_the_person(service, project, command):
    # Even in auto mode and inside the project: the sandbox hides the file from a call the
    # person did not approve with it visible, and one they approved labels the conversation.
    decision = decide(service, project, "shell_exec", {"command": command}, mode=AUTO)
    assert decision.kind == "ask"
    assert "sensitive path" in decision.decided_by
    assert decision.facts is not None and decision.facts.sensitive
