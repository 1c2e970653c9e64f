"""A repository's own configuration must not run programs through any git Tebiki starts.

The fixture repositories are hostile: program-running settings point at a script that records
its invocation in a marker file. Positive controls prove the setup really runs the script with
plain git, so these tests can fail. git is reached directly (git_ops, shell_exec), through a
wrapper (`timeout 20 git ...` in shell_exec and in a custom TOML tool) and from another program
(make via self_eval); the safe environment must cover all of them.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest

from app.core.sandbox import Sandbox
from app.core.tools import git_safety
from app.core.tools.base import GitPermission, ToolContext
from app.core.tools.builtin.git_ops import GitOpsTool
from app.core.tools.builtin.self_eval import SelfEvalTool
from app.core.tools.builtin.shell_exec import ShellExecTool
from app.core.tools.git_safety import safe_git_env
from app.core.tools.process_runner import minimal_env
from app.core.tools.providers.custom import build_tool

BASE_ENV = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null",
            "HOME": "/nonexistent", "PATH": "/usr/local/bin:/usr/bin:/bin"}

# These tests prove git_safety's environment on its own, as it works where no OS sandbox
# exists; the sandbox around the same commands is tested in test_sandbox_containment.py.
UNSANDBOXED = Sandbox.off("testing git_safety's environment on its own")


def context(**fields: Any) -> ToolContext:
    return ToolContext(sandbox=UNSANDBOXED, **fields)


def git(repo: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=repo, env=BASE_ENV, check=check,
                          capture_output=True, text=True)


@pytest.fixture
def hostile(project: Path, tmp_path: Path) -> tuple[Path, Path]:
    """(repo, marker): a repository whose config tries to run `evil` on every occasion."""
    marker = tmp_path / "marker"
    evil = tmp_path / "evil.sh"
    evil.write_text(f'#!/bin/sh\necho "$0 $*" >> "{marker}"\ncat\n')
    evil.chmod(evil.stat().st_mode | stat.S_IXUSR)
    repo = project
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "dev@example.com")
    git(repo, "config", "user.name", "Dev")
    (repo / "a.txt").write_text("one\n")
    (repo / "doc.bin").write_text("binary-ish\n")
    git(repo, "add", "a.txt", "doc.bin")
    git(repo, "commit", "-q", "-m", "first")
    (repo / "a.txt").write_text("one\ntwo\n")
    git(repo, "commit", "-q", "-am", "second")
    (repo / "a.txt").write_text("one\ntwo\nthree\n")  # a dirty work tree for status/diff

    e = str(evil)
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    for hook in ("pre-commit", "commit-msg", "post-commit", "post-checkout", "prepare-commit-msg",
                 "pre-auto-gc", "reference-transaction", "post-index-change"):
        for folder in (hooks, repo / ".git" / "hooks"):
            path = folder / hook
            path.write_text(f'#!/bin/sh\necho "hook {hook}" >> "{marker}"\n')
            path.chmod(0o755)
    included = tmp_path / "included.config"
    included.write_text(f"[filter \"inc\"]\n\tclean = {e}\n\tsmudge = {e}\n")
    settings = {
        "core.fsmonitor": e, "core.pager": e, "core.editor": e, "sequence.editor": e,
        "core.sshCommand": e, "core.askPass": e, "core.hooksPath": str(hooks),
        "pager.status": e, "pager.diff": e, "pager.log": e, "pager.show": e, "pager.branch": e,
        "diff.external": e, "diff.evil.textconv": e, "diff.evil.command": e,
        "filter.evil.clean": e, "filter.evil.smudge": e, "filter.evil.process": e,
        "filter.evil.required": "true",
        "merge.evil.driver": e, "credential.helper": f"!{e}", "gpg.program": e,
        "commit.gpgSign": "true", "log.showSignature": "true", "tag.gpgSign": "true",
        "alias.status": f"!{e}", "alias.st": f"!{e}", "interactive.diffFilter": e,
        "remote.origin.url": "ext::sh -c evil", "remote.origin.uploadpack": e,
        "include.path": str(included), "core.alternateRefsCommand": e,
        "trailer.sign.command": e,
    }
    for key, value in settings.items():
        git(repo, "config", key, value)
    (repo / ".gitattributes").write_text("*.txt diff=evil filter=evil\n*.bin filter=inc\n")
    # .gitattributes itself is committed as an attacker would ship it
    return repo, marker


def fired(marker: Path) -> str:
    return marker.read_text() if marker.exists() else ""


def test_positive_control_plain_git_runs_the_script(hostile: tuple[Path, Path]) -> None:
    repo, marker = hostile
    git(repo, "status", check=False)
    git(repo, "diff", check=False)
    assert fired(marker), "the hostile fixture no longer triggers plain git; fix the fixture"


READS = [
    ("status", {}),
    ("diff", {}),
    ("diff", {"staged": True}),
    ("diff", {"ref": "HEAD~1"}),
    ("diff", {"files": ["a.txt"]}),
    ("log", {}),
    ("log", {"max_count": 2, "files": ["a.txt"]}),
    ("show", {}),
    ("show", {"ref": "HEAD~1"}),
    ("branch_list", {}),
]


@pytest.mark.parametrize(("action", "args"), READS)
async def test_read_actions_run_nothing(hostile: tuple[Path, Path], action: str,
                                        args: dict) -> None:
    repo, marker = hostile
    ctx = context(project_root=repo, git_permission=GitPermission.READ_ONLY)
    result = await GitOpsTool().execute({"action": action, "args": args}, ctx)
    assert not result.is_error, result.content
    assert fired(marker) == ""


async def test_read_output_is_real(hostile: tuple[Path, Path]) -> None:
    repo, _ = hostile
    ctx = context(project_root=repo)
    diff = json.loads((await GitOpsTool().execute({"action": "diff"}, ctx)).content)["output"]
    assert "+three" in diff


async def test_write_actions_run_no_hooks_or_drivers(hostile: tuple[Path, Path]) -> None:
    repo, marker = hostile
    ctx = context(project_root=repo, git_permission=GitPermission.READ_WRITE)
    tool = GitOpsTool()
    (repo / "b.txt").write_text("b\n")
    for action, args in [("add", {"files": ["a.txt", "b.txt", ".gitattributes"]}),
                         ("commit", {"message": "third"}),
                         ("branch_create", {"branch_name": "topic"}),
                         ("checkout", {"branch_name": "main"})]:
        result = await tool.execute({"action": action, "args": args}, ctx)
        assert not result.is_error, (action, result.content)
    assert fired(marker) == ""
    assert git(repo, "log", "-1", "--format=%s").stdout.strip() == "third"


async def test_hooks_run_when_configured(hostile: tuple[Path, Path]) -> None:
    repo, marker = hostile
    ctx = context(project_root=repo, git_permission=GitPermission.READ_WRITE,
                      tool_config={"git_ops": {"run_hooks": True}})
    (repo / "c.txt").write_text("c\n")
    await GitOpsTool().execute({"action": "add", "args": {"files": ["c.txt"]}}, ctx)
    await GitOpsTool().execute({"action": "commit", "args": {"message": "with hooks"}}, ctx)
    assert "hook pre-commit" in fired(marker)


SHELL_GIT = [
    "git status",
    "git diff",
    "git diff HEAD~1",
    "git log -p -2",
    "git show",
    "git show --stat HEAD~1",
    "git branch -a",
    "git --no-pager log --oneline",
    "git blame a.txt",
    "git grep one",
    "git ls-files",
    "git diff --cached",
]


@pytest.mark.parametrize("command", SHELL_GIT)
async def test_shell_exec_git_runs_nothing(hostile: tuple[Path, Path], command: str) -> None:
    repo, marker = hostile
    ctx = context(project_root=repo, allowed_commands=("git",))
    result = await ShellExecTool().execute({"command": command}, ctx)
    assert not result.is_error, result.content
    assert fired(marker) == "", (command, json.loads(result.content))


@pytest.mark.parametrize("command", ["git st", "git -c core.pager=sh log", "git difftool",
                                     "git -p log", "git config core.fsmonitor x",
                                     "git log --ext-diff -p", "git diff --textconv",
                                     "git fetch --upload-pack=x origin", "git push origin main",
                                     "git grep -O one", "git --exec-path=/tmp status"])
async def test_shell_exec_git_escapes_refused(hostile: tuple[Path, Path], command: str) -> None:
    repo, marker = hostile
    ctx = context(project_root=repo, allowed_commands=("git",))
    result = await ShellExecTool().execute({"command": command}, ctx)
    assert result.is_error
    assert fired(marker) == ""


async def test_ref_injection_output_option(hostile: tuple[Path, Path], tmp_path: Path) -> None:
    repo, _ = hostile
    target = tmp_path / "written-by-git"
    ctx = context(project_root=repo, git_permission=GitPermission.READ_WRITE)
    for action in ("show", "diff", "log"):
        result = await GitOpsTool().execute({"action": action,
                                             "args": {"ref": f"--output={target}"}}, ctx)
        assert result.is_error
    assert not target.exists()


async def test_branch_name_injection(hostile: tuple[Path, Path]) -> None:
    repo, _ = hostile
    ctx = context(project_root=repo, git_permission=GitPermission.READ_WRITE)
    before = git(repo, "rev-parse", "HEAD").stdout
    for name in ("--orphan", "--orphan=x", "-f", "--detach", "--force"):
        for action in ("branch_create", "checkout"):
            result = await GitOpsTool().execute({"action": action,
                                                 "args": {"branch_name": name}}, ctx)
            assert result.is_error, (action, name)
    assert git(repo, "rev-parse", "HEAD").stdout == before
    assert git(repo, "branch", "--show-current").stdout.strip() == "main"
    assert os.path.exists(repo / "a.txt")


# --- git reached through a wrapper or another program ---------------------------------------------

async def shell(repo: Path, command: str, **config: object) -> dict:
    ctx = context(project_root=repo, allowed_commands=("git", "timeout"),
                      tool_config={"shell_exec": dict(config)})
    result = await ShellExecTool().execute({"command": command}, ctx)
    assert not result.is_error, result.content
    return json.loads(result.content)


WRAPPED = ["timeout 20 git status", "timeout 20 git diff", "timeout 20 git log -p -2",
           "timeout 20 git blame a.txt", "timeout 20 git commit -qam wrapped"]


@pytest.mark.parametrize("command", WRAPPED)
async def test_shell_exec_git_through_a_wrapper_runs_nothing(hostile: tuple[Path, Path],
                                                             command: str) -> None:
    repo, marker = hostile
    payload = await shell(repo, command)
    assert fired(marker) == "", (command, payload)


async def test_plain_commit_runs_programs(hostile: tuple[Path, Path]) -> None:
    """Positive control for the commit above: plain git commit runs the fixture's programs."""
    repo, marker = hostile
    git(repo, "commit", "-qam", "plain", check=False)
    assert fired(marker)


@pytest.mark.parametrize("command", ["timeout 20 git status", "timeout 20 git diff",
                                     "git log -p -2"])
async def test_custom_tool_git_runs_nothing(hostile: tuple[Path, Path], command: str) -> None:
    repo, marker = hostile
    tool = build_tool("repo_state", {"description": "repository state", "command": command})
    result = await tool.execute({}, context(project_root=repo))
    payload = json.loads(result.content)
    assert payload["exit_code"] is not None, payload
    assert fired(marker) == "", (command, payload)


@pytest.mark.skipif(not shutil.which("make"), reason="make is not installed")
async def test_self_eval_make_running_git_runs_nothing(hostile: tuple[Path, Path]) -> None:
    repo, marker = hostile
    (repo / "Makefile").write_text("check:\n\tgit status\n\tgit diff\n\tgit log -p -1\n")
    subprocess.run(["make", "-s", "check"], cwd=repo, env=BASE_ENV, capture_output=True)
    assert fired(marker), "positive control: make's git runs the fixture's programs"
    marker.unlink()
    ctx = context(project_root=repo, max_output_bytes=20_000,
                      tool_config={"self_eval": {"checks": {"build": "make -s check"}}})
    result = await SelfEvalTool().execute({"checks": ["build"]}, ctx)
    check = json.loads(result.content)["checks"]["build"]
    assert "diff --git" in check["stdout"] or "a.txt" in check["stdout"], check
    assert fired(marker) == "", check


# --- exact keys: names with "=", huge configs, submodules, worktrees ------------------------

def evil_script(tmp_path: Path) -> tuple[str, Path]:
    marker = tmp_path / "marker"
    evil = tmp_path / "evil.sh"
    # behaves like a real textconv/filter (prints the file or passes stdin) so git continues
    evil.write_text(f'#!/bin/sh\necho "$0 $*" >> "{marker}"\n'
                    'if [ -n "$1" ] && [ -f "$1" ]; then cat "$1"; else cat; fi\n')
    evil.chmod(0o755)
    return str(evil), marker


def plain_repo(repo: Path) -> Path:
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "dev@example.com")
    git(repo, "config", "user.name", "Dev")
    for name in ("a.txt", "b.md", "c.dat"):
        (repo / name).write_text("one\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "first")
    for name in ("a.txt", "b.md", "c.dat"):
        (repo / name).write_text("one\ntwo\n")
    return repo


@pytest.fixture
def odd_names(project: Path, tmp_path: Path) -> tuple[Path, Path]:
    """Drivers whose names contain "=" and ".": `-c` cannot name them (it splits at "=")."""
    repo = plain_repo(project)
    evil, marker = evil_script(tmp_path)
    git(repo, "config", "diff.a=b.c.textconv", evil)
    git(repo, "config", "diff.p=q.r.command", evil)
    git(repo, "config", "filter.x=y.z.clean", evil)
    git(repo, "config", "filter.x=y.z.smudge", evil)
    (repo / ".gitattributes").write_text("*.md diff=a=b.c\n*.dat diff=p=q.r\n"
                                         "*.txt filter=x=y.z\n")
    git(repo, "diff", check=False)
    git(repo, "add", "--dry-run", "a.txt", check=False)
    assert fired(marker), "positive control: plain git runs the odd-named drivers"
    marker.unlink()
    return repo, marker


@pytest.mark.parametrize("command", ["git diff", "git log -p -2", "git status",
                                     "git show HEAD", "git add a.txt b.md c.dat"])
async def test_driver_names_with_equals_and_dots(odd_names: tuple[Path, Path],
                                                 command: str) -> None:
    repo, marker = odd_names
    payload = await shell(repo, command)
    assert fired(marker) == "", (command, payload)


async def test_driver_after_megabytes_of_config(project: Path, tmp_path: Path) -> None:
    """The whole listing is read: a driver in the middle of a huge config is still found."""
    repo = plain_repo(project)
    evil, marker = evil_script(tmp_path)
    padding = "".join(f"\tk{i} = {'x' * 90}\n" for i in range(32_000))  # ~3 MB
    with open(repo / ".git" / "config", "a") as config:
        # one value longer than the per-entry buffer too: its key must still be read exactly
        config.write(f"[pad]\n\tbig = {'y' * 2_500_000}\n" + padding)
        config.write(f'[diff "hidden"]\n\ttextconv = {evil}\n')
        config.write("[pad2]\n" + padding)
    assert (repo / ".git" / "config").stat().st_size > 8_000_000
    (repo / ".gitattributes").write_text("*.md diff=hidden\n")
    git(repo, "diff", check=False)
    assert fired(marker), "positive control"
    marker.unlink()
    payload = await shell(repo, "git diff")
    assert "+two" in payload["stdout"] and fired(marker) == "", payload
    payload = await shell(repo, "timeout 20 git log -p -1")
    assert fired(marker) == "", payload


@pytest.fixture
def with_submodule(project: Path, tmp_path: Path) -> tuple[Path, Path]:
    """A superproject whose submodule's own config (.git/modules/sub/config) names drivers."""
    evil, marker = evil_script(tmp_path)
    upstream = tmp_path / "upstream"
    upstream.mkdir()
    plain_repo(upstream)
    git(upstream, "commit", "-qam", "second")
    repo = plain_repo(project)
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(upstream), "sub")
    git(repo, "commit", "-qm", "add sub")
    module_config = repo / ".git" / "modules" / "sub" / "config"
    assert module_config.is_file()
    for key, value in (("diff.subevil.textconv", evil), ("filter.subf.clean", evil),
                       ("filter.subf.smudge", evil)):
        git(repo, "config", "--file", str(module_config), key, value)
    (repo / "sub" / ".gitattributes").write_text("*.md diff=subevil\n*.txt filter=subf\n")
    (repo / "sub" / "b.md").write_text("one\ntwo\nthree\n")
    git(repo, "diff", "--submodule=diff", check=False)
    assert fired(marker), "positive control: the superproject's diff reaches the submodule"
    marker.unlink()
    return repo, marker


@pytest.mark.parametrize("command", ["git status", "git diff --submodule=diff",
                                     "timeout 20 git diff --submodule=diff",
                                     "cd sub && git diff && git status"])
async def test_submodule_config_is_neutralised(with_submodule: tuple[Path, Path],
                                               command: str) -> None:
    repo, marker = with_submodule
    payload = await shell(repo, command)
    assert fired(marker) == "", (command, payload)
    if command.endswith("--submodule=diff"):
        assert "+three" in payload["stdout"], payload  # git still shows the submodule's change


async def test_submodule_status_through_git_ops(with_submodule: tuple[Path, Path]) -> None:
    repo, marker = with_submodule
    ctx = context(project_root=repo, git_permission=GitPermission.READ_ONLY)
    result = await GitOpsTool().execute({"action": "status"}, ctx)
    assert not result.is_error, result.content
    assert "sub" in json.loads(result.content)["output"]
    assert fired(marker) == ""


async def test_linked_worktree_config_is_neutralised(project: Path, tmp_path: Path) -> None:
    repo = plain_repo(project)
    evil, marker = evil_script(tmp_path)
    git(repo, "commit", "-qam", "second")
    git(repo, "config", "extensions.worktreeConfig", "true")
    git(repo, "worktree", "add", "-q", "wt")
    git(repo / "wt", "config", "--worktree", "diff.wtevil.textconv", evil)
    (repo / "wt" / ".gitattributes").write_text("*.md diff=wtevil\n")
    (repo / "wt" / "b.md").write_text("changed\n")
    git(repo / "wt", "diff", check=False)
    assert fired(marker), "positive control"
    marker.unlink()
    payload = await shell(repo, "cd wt && timeout 20 git diff")
    assert "+changed" in payload["stdout"] and fired(marker) == "", payload


# --- diff.external and ordinary repositories --------------------------------------------------

async def test_ordinary_git_commands_work_through_shell_exec(project: Path) -> None:
    repo = plain_repo(project)
    diff = await shell(repo, "git diff")
    assert diff["exit_code"] == 0 and "+two" in diff["stdout"], diff
    assert (await shell(repo, "git status"))["exit_code"] == 0
    commit = await shell(repo, "git commit -qam second && timeout 20 git log --oneline")
    assert commit["exit_code"] == 0 and "second" in commit["stdout"], commit


async def test_diff_external_does_not_run_and_says_why(project: Path, tmp_path: Path) -> None:
    repo = plain_repo(project)
    evil, marker = evil_script(tmp_path)
    git(repo, "config", "diff.external", evil)
    git(repo, "diff", check=False)
    assert fired(marker), "positive control"
    marker.unlink()
    payload = await shell(repo, "git diff")
    assert fired(marker) == "", payload
    assert "tebiki:" in payload["stderr"] and payload["exit_code"] != 0, payload


# --- the person's global config ---------------------------------------------------------------

async def test_global_config_gives_identity_but_no_programs(
        project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    evil, marker = evil_script(tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text(
        f'[user]\n\tname = "Pat \\"Q\\" Person"\n\temail = pat@example.com\n'
        f"[filter \"g\"]\n\tclean = {evil}\n[core]\n\tfsmonitor = {evil}\n\tpager = {evil}\n")
    repo = project
    git(repo, "init", "-q", "-b", "main")
    (repo / ".gitattributes").write_text("*.txt filter=g\n")
    (repo / "a.txt").write_text("one\n")
    plain_env = {**BASE_ENV, "HOME": str(home)}
    del plain_env["GIT_CONFIG_GLOBAL"]
    subprocess.run(["git", "add", "--dry-run", "a.txt"], cwd=repo, env=plain_env,
                   capture_output=True)
    assert fired(marker), "positive control: the global filter runs with plain git"
    marker.unlink()
    monkeypatch.setenv("HOME", str(home))
    ctx = context(project_root=repo, git_permission=GitPermission.READ_WRITE)
    for action, args in (("status", {}), ("add", {"files": ["a.txt", ".gitattributes"]}),
                         ("commit", {"message": "by the person"})):
        result = await GitOpsTool().execute({"action": action, "args": args}, ctx)
        assert not result.is_error, (action, result.content)
    assert fired(marker) == ""
    assert git(repo, "log", "-1", "--format=%an <%ae>").stdout.strip() == \
        'Pat "Q" Person <pat@example.com>'


# --- the environment itself: exact keys, caching, old git -------------------------------------

def overrides(env: dict[str, str]) -> dict[str, str]:
    return {env[f"GIT_CONFIG_KEY_{i}"]: env[f"GIT_CONFIG_VALUE_{i}"]
            for i in range(int(env["GIT_CONFIG_COUNT"]))}


async def test_env_names_each_driver_exactly(odd_names: tuple[Path, Path]) -> None:
    repo, _ = odd_names
    env = await safe_git_env(repo, base_env=minimal_env(project_root=repo))
    found = overrides(env)
    assert found["diff.a=b.c.textconv"] == "cat"
    assert found["filter.x=y.z.clean"] == "cat" and found["filter.x=y.z.smudge"] == "cat"
    assert found["diff.p=q.r.command"] == git_safety.DISABLED_DIFF_PROGRAM
    assert found["core.hooksPath"] == "/dev/null" and found["protocol.allow"] == "never"
    # diff.external is only overridden where some config sets it: plain `git diff` must work
    assert "diff.external" not in found
    hooks = overrides(await safe_git_env(repo, base_env=minimal_env(), run_hooks=True,
                                         allow_network=True))
    assert "core.hooksPath" not in hooks and "protocol.allow" not in hooks


async def test_cached_scan_is_reused_until_a_config_changes(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = plain_repo(project)
    config = repo / ".git" / "config"
    old = config.stat().st_mtime_ns - 60_000_000_000
    os.utime(config, ns=(old, old))  # older than the racy window, so the scan may be cached
    scans = []
    real_scan = git_safety._scan

    async def counting(*args: object) -> object:
        scans.append(args)
        return await real_scan(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(git_safety, "_scan", counting)
    base = minimal_env(project_root=repo)
    first = overrides(await safe_git_env(repo, base_env=base))
    again = overrides(await safe_git_env(repo, base_env=base))
    assert len(scans) == 1 and first == again
    # same size, same inode, mtime put back: only the change time reveals the edit
    text = config.read_text()
    config.write_text(text.replace("[user]", "[diff \"late\"]\n\ttextconv = x\n[user]", 1))
    assert "diff.late.textconv" in overrides(await safe_git_env(repo, base_env=base))
    assert len(scans) == 2
    size = config.stat().st_size
    config.write_text(config.read_text().replace("late", "lat2"))
    assert config.stat().st_size == size
    os.utime(config, ns=(old, old))
    assert "diff.lat2.textconv" in overrides(await safe_git_env(repo, base_env=base))


async def test_outside_a_repository_no_listing_is_spawned_until_one_appears(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Outside any repository nothing git could read is repository config, so no `git config`
    runs; a repository created later (here in a parent folder) is seen on the next call."""
    outer = (tmp_path / "outer").resolve()
    work = outer / "sub"
    work.mkdir(parents=True)
    if not git_safety._surely_outside_repositories(work):
        pytest.skip("the temporary folder is itself inside a repository")
    spawned: list[list[str]] = []
    real_read = git_safety._read_tokens

    async def counting(argv: list[str], **kwargs: object) -> object:
        if "--global" not in argv:  # the controlled global config is read (and cached) apart
            spawned.append(argv)
        return await real_read(argv, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(git_safety, "_read_tokens", counting)
    base = minimal_env(project_root=work)
    first = overrides(await safe_git_env(work, base_env=base))
    again = overrides(await safe_git_env(work, base_env=base))
    assert spawned == [] and first == again
    assert first["core.hooksPath"] == "/dev/null" and first["protocol.allow"] == "never"

    evil, marker = evil_script(tmp_path)
    plain_repo(outer)
    git(outer, "config", "diff.planted.textconv", evil)
    (outer / ".gitattributes").write_text("*.md diff=planted\n")
    git(work, "diff", check=False)
    assert fired(marker), "positive control: plain git in the subfolder runs the driver"
    marker.unlink()
    env = await safe_git_env(work, base_env=base)
    assert spawned, "inside the new repository the listing runs again"
    assert overrides(env)["diff.planted.textconv"] == "cat"
    done = subprocess.run(["git", "diff"], cwd=work, env=env, capture_output=True, text=True)
    assert "+two" in done.stdout and fired(marker) == "", done


async def test_old_git_is_refused_not_run(project: Path, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    marker = tmp_path / "ran"
    fake = tmp_path / "bin" / "git"
    fake.parent.mkdir()
    fake.write_text(f'#!/bin/sh\nif [ "$1" = version ]; then echo "git version 2.30.1"; '
                    f'else echo "$*" >> "{marker}"; fi\n')
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake.parent}:/usr/local/bin:/usr/bin:/bin")
    payload = await shell(project, "git status")
    assert payload["exit_code"] != 0 and "too old" in payload["stderr"], payload
    assert not marker.exists()
    ctx = context(project_root=project, git_permission=GitPermission.READ_ONLY)
    result = await GitOpsTool().execute({"action": "status"}, ctx)
    assert result.is_error and "too old" in result.content
    assert not marker.exists()


@pytest.mark.skipif(not shutil.which("make"), reason="make is not installed")
async def test_conditional_include_is_neutralised_before_its_condition_holds(
        project: Path, tmp_path: Path) -> None:
    """An include that applies only on another branch is read anyway: one process (make) can
    switch branches and then run git with the environment computed before the switch."""
    repo = plain_repo(project)
    evil, marker = evil_script(tmp_path)
    git(repo, "commit", "-qam", "second")
    git(repo, "branch", "other")
    (repo / ".git" / "later.inc").write_text(f'[diff "later"]\n\ttextconv = {evil}\n')
    git(repo, "config", "includeIf.onbranch:other.path", "later.inc")
    (repo / ".gitattributes").write_text("*.md diff=later\n")
    (repo / "b.md").write_text("changed\n")
    (repo / "Makefile").write_text("check:\n\tgit checkout -q other\n\tgit diff\n")
    env = await safe_git_env(repo, base_env=minimal_env(project_root=repo))
    assert "diff.later.textconv" in overrides(env)  # read although main is checked out
    subprocess.run(["make", "-s", "check"], cwd=repo, env=BASE_ENV, capture_output=True)
    assert fired(marker), "positive control"
    marker.unlink()
    git(repo, "checkout", "-q", "main")
    ctx = context(project_root=repo, max_output_bytes=20_000,
                      tool_config={"self_eval": {"checks": {"build": "make -s check"}}})
    result = await SelfEvalTool().execute({"checks": ["build"]}, ctx)
    check = json.loads(result.content)["checks"]["build"]
    assert "+changed" in check["stdout"] and fired(marker) == "", check


async def test_controlled_global_config_is_restored_after_tampering(
        project: Path, tmp_path: Path) -> None:
    """A program run with the safe environment (make, a test suite) may write `git config
    --global`; that lands in Tebiki's file, which must not keep what was written."""
    repo = plain_repo(project)
    evil, marker = evil_script(tmp_path)
    (repo / ".gitattributes").write_text("*.md diff=planted\n")
    base = minimal_env(project_root=repo)
    env = await safe_git_env(repo, base_env=base)
    subprocess.run(["git", "config", "--global", "diff.planted.textconv", evil], cwd=repo,
                   env=env, check=True)
    subprocess.run(["git", "diff"], cwd=repo, env=env, capture_output=True)
    assert fired(marker), "positive control: the planted driver runs from the global file"
    marker.unlink()
    payload = await shell(repo, "git diff")
    assert "+two" in payload["stdout"] and fired(marker) == "", payload
