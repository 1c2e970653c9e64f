"""git_ops: actions, permission levels, input validation (refs, branch names, paths, ints)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from app.core.tools.base import GitPermission, ToolContext
from app.core.tools.builtin.git_ops import READ_ACTIONS, WRITE_ACTIONS, GitOpsTool

GIT_ENV = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null", "HOME": "/nonexistent",
           "PATH": "/usr/local/bin:/usr/bin:/bin"}


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, env=GIT_ENV, check=True,
                          capture_output=True, text=True).stdout


@pytest.fixture
def repo(project: Path) -> Path:
    git(project, "init", "-q", "-b", "main")
    git(project, "config", "user.email", "dev@example.com")
    git(project, "config", "user.name", "Dev")
    (project / "a.txt").write_text("one\n")
    git(project, "add", "a.txt")
    git(project, "commit", "-q", "-m", "first commit")
    (project / "a.txt").write_text("one\ntwo\n")
    git(project, "commit", "-q", "-am", "second commit")
    return project


def make_ctx(repo: Path, permission: GitPermission = GitPermission.READ_WRITE) -> ToolContext:
    return ToolContext(project_root=repo, git_permission=permission, shell_timeout_s=30)


async def call(ctx: ToolContext, action: str, **args: object) -> tuple[bool, str]:
    result = await GitOpsTool().execute({"action": action, "args": args}, ctx)
    return result.is_error, result.content


async def ok(ctx: ToolContext, action: str, **args: object) -> str:
    is_error, content = await call(ctx, action, **args)
    assert not is_error, content
    data = json.loads(content)
    assert data["success"] is True and data["action"] == action
    return data["output"]


def test_spec() -> None:
    spec = GitOpsTool().spec
    assert spec.subjects({"action": "status"}) == ["status"]
    assert spec.risk.value == "high" and spec.category.value == "version_control"
    assert "push" not in spec.input_schema["properties"]["action"]["enum"]
    assert "low risk" in spec.description


# --- read actions -----------------------------------------------------------------------------

async def test_status_diff_log_show_branch_list(repo: Path) -> None:
    ctx = make_ctx(repo, GitPermission.READ_ONLY)
    assert "## main" in await ok(ctx, "status")
    (repo / "a.txt").write_text("one\ntwo\nthree\n")
    (repo / "new.txt").write_text("n\n")
    status = await ok(ctx, "status")
    assert " M a.txt" in status and "?? new.txt" in status
    diff = await ok(ctx, "diff")
    assert "+three" in diff
    assert "+three" in await ok(ctx, "diff", files=["a.txt"])
    assert await ok(ctx, "diff", staged=True) == ""
    assert "+two" in await ok(ctx, "diff", ref="HEAD~1", files=["a.txt"])
    log = await ok(ctx, "log")
    assert "second commit" in log and "first commit" in log
    assert len((await ok(ctx, "log", max_count=1)).splitlines()) == 1
    assert "second commit" in await ok(ctx, "log", ref="HEAD~1..HEAD")
    show = await ok(ctx, "show")
    assert "second commit" in show and "+two" in show
    assert "first commit" in await ok(ctx, "show", ref="HEAD~1")
    assert "main" in await ok(ctx, "branch_list")


async def test_not_a_repository(project: Path) -> None:
    is_error, content = await call(make_ctx(project), "status")
    assert is_error and "not a git repository" in content.lower()


# --- permission levels --------------------------------------------------------------------------

@pytest.mark.parametrize("action", READ_ACTIONS + WRITE_ACTIONS)
async def test_disabled_refuses_everything(repo: Path, action: str) -> None:
    is_error, content = await call(make_ctx(repo, GitPermission.DISABLED), action)
    assert is_error and "disabled" in content


@pytest.mark.parametrize("action", WRITE_ACTIONS)
async def test_read_only_refuses_writes(repo: Path, action: str) -> None:
    (repo / "b.txt").write_text("b\n")
    head = git(repo, "rev-parse", "HEAD")
    is_error, content = await call(make_ctx(repo, GitPermission.READ_ONLY), action,
                                   files=["b.txt"], message="m", branch_name="x")
    assert is_error and "read-write" in content
    assert git(repo, "rev-parse", "HEAD") == head
    assert git(repo, "status", "--porcelain") == "?? b.txt\n"
    assert "x" not in git(repo, "branch", "--list").split()


async def test_default_context_is_read_only(repo: Path) -> None:
    ctx = ToolContext(project_root=repo)
    assert (await call(ctx, "commit", message="m"))[0]
    assert not (await call(ctx, "status"))[0]


# --- write actions ------------------------------------------------------------------------------

async def test_add_commit_branch_checkout(repo: Path) -> None:
    ctx = make_ctx(repo)
    (repo / "b.txt").write_text("b\n")
    await ok(ctx, "add", files=["b.txt"])
    assert git(repo, "status", "--porcelain") == "A  b.txt\n"
    await ok(ctx, "commit", message="add b\n\nbody with -dash and $(no) `expansion`")
    assert git(repo, "log", "-1", "--format=%B").startswith("add b\n\nbody with -dash and $(no)")
    await ok(ctx, "branch_create", branch_name="feature/x")
    assert git(repo, "branch", "--show-current").strip() == "feature/x"
    await ok(ctx, "checkout", branch_name="main")
    assert git(repo, "branch", "--show-current").strip() == "main"
    await ok(ctx, "branch_create", branch_name="from-first", ref="HEAD~2")
    assert git(repo, "log", "-1", "--format=%s").strip() == "first commit"


async def test_add_refuses_paths_outside_project(repo: Path) -> None:
    ctx = make_ctx(repo)
    for bad in ("../outside.txt", "/etc/passwd", "sub/../../x"):
        is_error, content = await call(ctx, "add", files=[bad])
        assert is_error and "outside the project" in content


async def test_add_paths_are_literal(repo: Path) -> None:
    ctx = make_ctx(repo)
    (repo / "x1.txt").write_text("1")
    (repo / "x2.txt").write_text("2")
    is_error, _ = await call(ctx, "add", files=["x*.txt"])
    assert is_error  # no file is literally called x*.txt
    assert git(repo, "status", "--porcelain").count("??") == 2


async def test_commit_requires_message(repo: Path) -> None:
    is_error, content = await call(make_ctx(repo), "commit")
    assert is_error and "message" in content


# --- validation -----------------------------------------------------------------------------------

@pytest.mark.parametrize("ref", ["--output=/tmp/tebiki-x", "-p", "--ext-diff", "HEAD;id",
                                 "HEAD $(id)", "a b", "", "HEAD\nx", "-", "@{-1}..--x",
                                 "x" * 300, "HEAD:secret"])
async def test_bad_refs_refused(repo: Path, ref: str, tmp_path: Path) -> None:
    ctx = make_ctx(repo, GitPermission.READ_ONLY)
    for action in ("show", "diff", "log"):
        is_error, _ = await call(ctx, action, ref=ref)
        assert is_error, (action, ref)
    assert not Path("/tmp/tebiki-x").exists()


@pytest.mark.parametrize("name", ["--orphan", "-b", "-", "a..b", "a b", "HEAD~1", "x.lock",
                                  "a:b", "", "--force", "refs/../x"])
async def test_bad_branch_names_refused(repo: Path, name: str) -> None:
    ctx = make_ctx(repo)
    branches = git(repo, "branch", "--list")
    for action in ("branch_create", "checkout"):
        is_error, _ = await call(ctx, action, branch_name=name)
        assert is_error, (action, name)
    assert git(repo, "branch", "--list") == branches
    assert git(repo, "branch", "--show-current").strip() == "main"


@pytest.mark.parametrize("value", [0, -1, 1001, True, "5", 2.5])
async def test_max_count_validated(repo: Path, value: object) -> None:
    is_error, content = await call(make_ctx(repo), "log", max_count=value)
    assert is_error and "max_count" in content


async def test_output_capped(repo: Path) -> None:
    (repo / "big.txt").write_text("line\n" * 50_000)
    ctx = ToolContext(project_root=repo, max_output_bytes=2000)
    output = await ok(ctx, "diff", ref="HEAD")  # untracked: nothing; use status for size
    assert len(output) < 3000
    git(repo, "add", "big.txt")
    output = await ok(ctx, "diff", staged=True)
    assert "truncated" in output and len(output) < 3000


# -- what a read shows: never a secret file's content unless the call names it --------------

SECRET_VALUE = "prod-db-password-7f3a9c2e"


def _commit_all(repo: Path, message: str) -> None:
    for argv in (["git", "add", "-A"], ["git", "commit", "-q", "-m", message]):
        subprocess.run(argv, cwd=repo, check=True, capture_output=True,
                       env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x",
                            "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@x",
                            "GIT_CONFIG_GLOBAL": os.devnull})


@pytest.mark.parametrize("action", ["show", "diff"])
async def test_a_deleted_secret_files_content_is_left_out(repo_for_secrets: Path,
                                                          action: str) -> None:
    repo = repo_for_secrets
    (repo / "deploy" / ".env.production").unlink()
    (repo / "app.py").write_text("print('v2')\n")
    _commit_all(repo, "remove the production env")
    args = {"ref": "HEAD"} if action == "show" else {"ref": "HEAD~1"}
    result = await GitOpsTool().execute({"action": action, "args": args},
                                        ToolContext(project_root=repo))
    assert not result.is_error, result.content
    assert SECRET_VALUE not in result.content
    assert "print('v2')" in result.content  # the rest of the change is there
    if action == "show":  # (a diff leaves the secret's file out by name before git reads it)
        assert ".env.production" in result.content and "left_out" in result.content


async def test_a_secret_named_in_files_is_shown(repo_for_secrets: Path) -> None:
    repo = repo_for_secrets
    (repo / "deploy" / ".env.production").write_text(f"DB_PASSWORD={SECRET_VALUE}-new\n")
    _commit_all(repo, "rotate")
    # Named: the sensitive-path guard asks; approved, the sandbox shows the file to the call.
    result = await GitOpsTool().execute(
        {"action": "diff", "args": {"ref": "HEAD~1", "files": ["deploy/.env.production"]}},
        ToolContext(project_root=repo, revealed=(repo / "deploy" / ".env.production",)))
    assert SECRET_VALUE in result.content


async def test_a_tracked_secret_does_not_break_the_diff_of_the_rest(
        repo_for_secrets: Path) -> None:
    # The sandbox hides the work tree's secret-named files from git: the diff compares the
    # other changed files, and says nothing of the secret's content.
    repo = repo_for_secrets
    (repo / "app.py").write_text("print('v3')\n")
    result = await GitOpsTool().execute({"action": "diff"}, ToolContext(project_root=repo))
    assert not result.is_error, result.content
    assert "print('v3')" in result.content and SECRET_VALUE not in result.content
    (repo / "app.py").write_text("print('v1')\n")
    result = await GitOpsTool().execute({"action": "diff"}, ToolContext(project_root=repo))
    assert not result.is_error and SECRET_VALUE not in result.content


@pytest.fixture
def repo_for_secrets(visible: Path) -> Path:
    repo = visible / "repo"
    (repo / "deploy").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, check=True)
    (repo / "deploy" / ".env.production").write_text(f"DB_PASSWORD={SECRET_VALUE}\n")
    (repo / "app.py").write_text("print('v1')\n")
    _commit_all(repo, "initial")
    return repo
