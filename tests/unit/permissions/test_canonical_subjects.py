"""Permission rules on shell commands hold whatever the spelling (wrappers, git global options).

Decided with a real database, the real rule repository and the real shell_exec subjects.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.core.permissions.repository import RuleRepository
from app.core.permissions.rules import PermissionRule
from app.core.permissions.service import ToolPermissionService
from app.core.tools.base import SubjectError
from app.core.tools.builtin.shell_exec import ShellExecTool
from app.core.tools.shell.subjects import canonical_subjects, command_subjects


@pytest.fixture
def service(db, project: Path) -> ToolPermissionService:
    repo = RuleRepository(db)
    repo.replace_all([])  # no first-run seed rules: only the rules below decide
    repo.add(PermissionRule(decision="deny", tool_name="shell_exec", input_pattern="rm *"))
    repo.add(PermissionRule(decision="deny", tool_name="shell_exec",
                            input_pattern="git commit*"))
    repo.add(PermissionRule(decision="allow", tool_name="shell_exec",
                            input_pattern="git status*", priority=10))
    repo.add(PermissionRule(decision="allow", tool_name="shell_exec", input_pattern="ls*",
                            priority=10))
    return ToolPermissionService(db, project_root=project)


def decide(service: ToolPermissionService, command: str) -> str:
    return service.decide("builtin", "shell_exec", {"command": command}).kind


@pytest.mark.parametrize("command", [
    "timeout 20 rm -rf x", "nice -n 5 nohup rm x", "nohup rm x", "stdbuf -oL rm x",
    "ionice -c3 rm x", "ionice -c 2 -n 7 rm x", "timeout -s KILL 5 nice -n 1 rm x",
    "timeout -k1 --signal=TERM 5 rm x", "nice -5 rm x", "nice --5 rm x",
    "timeout -- 5 rm x", "stdbuf -oL ionice -c3 timeout 5 nice nohup rm -rf /",
    "/usr/bin/timeout 5 rm x", "timeout --weird 5 rm x", "nice -x rm x",
    "ls && timeout 5 rm x", "timeout 5 rm x > out", "ls $(timeout 5 rm x)",
])
def test_deny_rm_holds_through_wrappers(service: ToolPermissionService, command: str) -> None:
    assert decide(service, command) == "deny"


@pytest.mark.parametrize("command", [
    "git -P commit -m x", "git --no-pager commit", "git --no-pager commit -m x",
    "git -C . commit", "git -C . commit -m x", "git -c a=b commit", "git -ca=b commit",
    "git --git-dir=x commit", "git --git-dir x commit", "git --work-tree=. commit",
    "git --no-optional-locks --literal-pathspecs commit -m x", "git -p commit",
    "git --exec-path=/x commit", "git --namespace=n commit", "git --config-env=a=B commit",
    "timeout 5 git -P commit -m x", "nice git -C . -c a=b commit", "git --bogus commit",
    "git -P commit -m x > out",
])
def test_deny_git_commit_holds_through_global_options(service: ToolPermissionService,
                                                      command: str) -> None:
    assert decide(service, command) == "deny"


@pytest.mark.parametrize(("command", "expected"), [
    ("git status", "allow"),
    ("timeout 5 git status", "allow"),
    ("git --no-pager status", "allow"),
    ("git -P status -s", "allow"),
    ("nice -n 5 timeout 5 git --no-optional-locks status", "allow"),
    ("timeout 5 ls -la", "allow"),
    # Options that change where or how git acts are a separate subject that no allow rule
    # matches, so the call is asked about instead of silently allowed.
    ("git -C /tmp status", "ask"),
    ("git -C . status", "ask"),
    ("git -c core.fsmonitor=x status", "ask"),
    ("git --git-dir=/elsewhere status", "ask"),
    ("git --work-tree=/ status", "ask"),
    ("timeout 5 git -C /tmp status", "ask"),
    ("./timeout 5 ls", "ask"),  # not necessarily the real timeout
    ("timeout --weird 5 ls", "ask"),
])
def test_allow_rules_see_through_harmless_spellings_only(service: ToolPermissionService,
                                                         command: str, expected: str) -> None:
    assert decide(service, command) == expected


def test_shell_exec_uses_canonical_subjects() -> None:
    spec = ShellExecTool().spec
    assert spec.subjects({"command": "timeout 20 rm -rf x"}) == ["rm -rf x"]
    assert spec.subjects({"command": "git -C d commit"}) == ["git commit", "git -C d commit"]


def test_command_subjects_contract() -> None:
    assert command_subjects({"command": "nohup ls && git -P log"}) == ["ls", "git log"]
    with pytest.raises(SubjectError):
        command_subjects({"command": 3})
    with pytest.raises(SubjectError) as info:
        command_subjects("timeout 5 rm x > out")
    assert info.value.partial == ["rm x"]


def test_wrapper_that_runs_nothing_stays_as_written() -> None:
    assert canonical_subjects(["nice"]) == ["nice"]
    assert canonical_subjects(["git", "--version"]) == ["git", "git --version"]


_WRAPPERS = st.sampled_from([
    ["timeout", "5"], ["timeout", "-s", "KILL", "5"], ["timeout", "-sKILL", "-k", "1", "9s"],
    ["timeout", "--preserve-status", "--", "5"], ["nice"], ["nice", "-n", "5"], ["nice", "-5"],
    ["nice", "--adjustment=3"], ["nohup"], ["stdbuf", "-oL"], ["stdbuf", "-i0", "-e", "L"],
    ["ionice", "-c3"], ["ionice", "-c", "2", "-n", "7", "-t"], ["/usr/bin/timeout", "3"],
    ["timeout", "--weird", "5"], ["nice", "-x"],
])
_GIT_GLOBALS = st.sampled_from([
    ["-P"], ["--no-pager"], ["--no-optional-locks"], ["--literal-pathspecs"], ["-C", "."],
    ["-c", "a=b"], ["--git-dir=.git"], ["--work-tree", "."], ["-p"], ["--namespace=x"],
])
_DENIED = st.sampled_from([
    ["rm", "-rf", "x"], ["rm", "x"], ["git", "commit", "-m", "x"], ["git", "commit"],
])


@settings(max_examples=200, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(_DENIED, st.lists(_WRAPPERS, max_size=4), st.lists(_GIT_GLOBALS, max_size=3))
def test_wrapping_never_turns_deny_into_non_deny(service: ToolPermissionService,
                                                 inner: list[str], wrappers: list[list[str]],
                                                 git_globals: list[list[str]]) -> None:
    words = list(inner)
    if words[0] == "git":
        words = ["git", *(w for g in git_globals for w in g), *words[1:]]
    for wrapper in reversed(wrappers):
        words = [*wrapper, *words]
    command = " ".join(words)
    assert decide(service, command) == "deny", (command, command_subjects(command))
