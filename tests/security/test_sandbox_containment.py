"""Containment proved by side effects: with the allowlist out of the way ("any program,
sandboxed"), programs run by shell_exec cannot write outside the write folders, read hidden
secrets, reach a listener on 127.0.0.1, change .git/config, signal other processes or follow a
symlink out of the project — and ordinary work (pytest, make, git) inside the project works.

Every check looks at the world outside the sandbox afterwards, never at a policy answer.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest

from app.core.sandbox import Sandbox
from app.core.sensitive_paths import sensitive_paths
from app.core.tools.base import GitPermission, ToolContext
from app.core.tools.builtin.shell_exec import LEVEL_ANY_SANDBOXED, ShellExecTool
from tests.sandbox_support import PYTHON, STATUS, py, requires_sandbox

pytestmark = requires_sandbox

SECRET = "-----BEGIN OPENSSH PRIVATE KEY----- sandbox-test-secret"


@pytest.fixture
def home(visible: Path) -> Path:
    home = visible / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text(SECRET)
    (home / ".netrc").write_text("machine example.com password hunter2")
    return home


def _ctx(project: Path, home: Path, *, data_dir: Path | None = None,
         git: GitPermission = GitPermission.READ_ONLY, **config: object) -> ToolContext:
    assert STATUS.available, STATUS.reason
    hidden = sensitive_paths(home=home, extra=[data_dir] if data_dir else [])
    shell_config = {"program_level": LEVEL_ANY_SANDBOXED, **config}
    return ToolContext(project_root=project, sandbox=Sandbox(STATUS, True, hidden),
                       git_permission=git, tool_config={"shell_exec": shell_config},
                       shell_timeout_s=60)


def _run(ctx: ToolContext, command: str) -> dict[str, object]:
    result = asyncio.run(ShellExecTool().execute({"command": command}, ctx))
    try:
        payload = json.loads(result.content)
    except json.JSONDecodeError:
        pytest.fail(f"not a command result: {result.content}")
    assert payload["sandboxed"] is True
    return payload



def test_write_outside_the_write_folders_changes_nothing(project: Path, home: Path,
                                                         outside: Path) -> None:
    target = outside / "planted.txt"
    out = _run(_ctx(project, home), py(f"open({str(target)!r}, 'w').write('x')"))
    assert not target.exists()
    assert out["exit_code"] != 0
    assert "[sandbox]" in str(out["stderr"])  # the model is told it was the sandbox


def test_writes_inside_the_project_and_private_tmp_work(project: Path, home: Path) -> None:
    out = _run(_ctx(project, home),
               py("import tempfile; open('made.txt', 'w').write('ok'); "
                   "tempfile.NamedTemporaryFile(dir='/tmp').write(b'x')"))
    assert out["exit_code"] == 0, out
    assert (project / "made.txt").read_text() == "ok"


def test_tmp_is_private(project: Path, home: Path, tmp_path: Path) -> None:
    marker = Path("/tmp") / f"tebiki-sandbox-test-{os.getpid()}"
    _run(_ctx(project, home), py(f"open({str(marker)!r}, 'w').write('x')"))
    assert not marker.exists()


def test_hidden_secrets_cannot_be_read(project: Path, home: Path) -> None:
    out = _run(_ctx(project, home),
               py(f"import pathlib; h=pathlib.Path({str(home)!r}); "
                   "[print(p.read_text()) for p in (h/'.ssh'/'id_rsa', h/'.netrc') "
                   "if p.is_file()]"))
    assert SECRET not in str(out["stdout"]) and "hunter2" not in str(out["stdout"])


def test_the_data_folder_is_hidden(project: Path, home: Path, fresh_data_dir: Path) -> None:
    (fresh_data_dir / "tebiki.sqlite3").write_text("conversations")
    # The data folder lives under the private /tmp here; put a copy under home to be sure
    # the hiding, not /tmp, is what keeps it away.
    data = home / "tebiki-data"
    data.mkdir()
    (data / "tebiki.sqlite3").write_text("conversations")
    out = _run(_ctx(project, home, data_dir=data),
               py(f"import os; print(os.listdir({str(data)!r}))"))
    assert "tebiki.sqlite3" not in str(out["stdout"])


def test_no_connection_reaches_a_loopback_listener(project: Path, home: Path) -> None:
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(5)
    port = server.getsockname()[1]
    accepted: list[object] = []

    def accept() -> None:
        try:
            accepted.append(server.accept())
        except OSError:
            pass
    thread = threading.Thread(target=accept)
    thread.start()
    try:
        out = _run(_ctx(project, home),
                   py(f"import socket; socket.create_connection(('127.0.0.1', {port}), 3)"))
    finally:
        server.close()
        thread.join()
    assert not accepted
    assert out["exit_code"] != 0


def test_network_switch_lets_the_connection_through(project: Path, home: Path) -> None:
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(10)
    port = server.getsockname()[1]
    accepted: list[object] = []
    thread = threading.Thread(target=lambda: accepted.append(server.accept()))
    thread.start()
    try:
        out = _run(_ctx(project, home, network=True),
                   py(f"import socket; socket.create_connection(('127.0.0.1', {port}), 3)"))
    finally:
        thread.join()
        server.close()
    assert accepted and out["exit_code"] == 0


def _git(project: Path, *args: str) -> str:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    return subprocess.run(["git", *args], cwd=project, env=env, check=True,
                          capture_output=True, text=True).stdout


@pytest.fixture
def repo(project: Path) -> Path:
    _git(project, "init", "-q")
    _git(project, "config", "user.email", "t@example.com")
    _git(project, "config", "user.name", "T")
    (project / "a.txt").write_text("one\n")
    _git(project, "add", "a.txt")
    _git(project, "commit", "-qm", "first")
    return project


def test_git_config_and_hooks_cannot_be_changed(repo: Path, home: Path) -> None:
    config = (repo / ".git" / "config").read_bytes()
    hook = repo / ".git" / "hooks" / "post-checkout"
    for git in (GitPermission.READ_ONLY, GitPermission.READ_WRITE):
        _run(_ctx(repo, home, git=git),
             py("import pathlib; g=pathlib.Path('.git'); "
                 "open(g/'config','a').write('[core]\\n\\tfsmonitor = touch /tmp/pwned\\n')"))
        _run(_ctx(repo, home, git=git),
             py(f"open({str(hook)!r}, 'w').write('#!/bin/sh\\ntouch /tmp/pwned\\n')"))
        assert (repo / ".git" / "config").read_bytes() == config
        assert not hook.exists()


def test_git_read_only_level_keeps_history(repo: Path, home: Path) -> None:
    head = _git(repo, "rev-parse", "HEAD")
    (repo / "a.txt").write_text("two\n")
    out = _run(_ctx(repo, home), "git commit -am second")
    assert out["exit_code"] != 0
    assert _git(repo, "rev-parse", "HEAD") == head


def test_git_works_at_the_read_write_level(repo: Path, home: Path) -> None:
    (repo / "a.txt").write_text("two\n")
    ctx = _ctx(repo, home, git=GitPermission.READ_WRITE)
    status = _run(ctx, "git status --short")
    assert "a.txt" in str(status["stdout"])
    diff = _run(ctx, "git diff")
    assert "+two" in str(diff["stdout"])
    commit = _run(ctx, "git -c user.email=t@example.com -c user.name=T commit -qam second")
    assert commit["exit_code"] == 0, commit
    assert "second" in _git(repo, "log", "--oneline")


def test_symlink_out_of_the_project_is_not_followed_for_writes(project: Path, home: Path,
                                                                outside: Path) -> None:
    (project / "link").symlink_to(outside)
    _run(_ctx(project, home), py("open('link/escaped.txt', 'w').write('x')"))
    assert not (outside / "escaped.txt").exists()


def test_other_processes_cannot_be_signalled(project: Path, home: Path) -> None:
    victim = subprocess.Popen([PYTHON, "-c", "import time; time.sleep(60)"])
    try:
        _run(_ctx(project, home),
             py(f"import os, signal; os.kill({victim.pid}, signal.SIGKILL)"))
        _run(_ctx(project, home), py(f"import os, signal; os.kill({os.getpid()}, signal.SIGTERM)"))
        assert victim.poll() is None
    finally:
        victim.send_signal(signal.SIGKILL)
        victim.wait()


def test_pytest_and_make_run_inside_the_project(project: Path, home: Path) -> None:
    (project / "test_x.py").write_text("def test_ok():\n    assert 1 + 1 == 2\n")
    (project / "Makefile").write_text("all:\n\techo built > out.txt\n")
    ctx = _ctx(project, home)
    tested = _run(ctx, f"{PYTHON} -m pytest -q -p no:cacheprovider test_x.py")
    assert tested["exit_code"] == 0, tested
    assert "1 passed" in str(tested["stdout"])
    made = _run(ctx, "make")
    assert made["exit_code"] == 0, made
    assert (project / "out.txt").read_text() == "built\n"


def test_a_background_job_is_sandboxed_too(project: Path, home: Path, outside: Path) -> None:
    ctx = _ctx(project, home)
    target = outside / "from-job.txt"

    async def scenario() -> str:
        tool = ShellExecTool()
        started = await tool.execute(
            {"command": py(f"open({str(target)!r}, 'w').write('x')"), "background": True}, ctx)
        job_id = json.loads(started.content)["job_id"]
        jobs = ctx.session["shell_jobs"]
        await jobs[job_id].task
        return job_id
    asyncio.run(scenario())
    assert not target.exists()


def test_a_timed_out_command_leaves_no_process_behind(project: Path, home: Path) -> None:
    """A grandchild that detaches (its own session) still dies with the sandbox: it would
    write a marker two seconds later."""
    code = ("import os, subprocess, sys, time; "
            "subprocess.Popen([sys.executable, '-c', "
            "'import time; time.sleep(2); "
            "open(\"late.txt\", \"w\").write(\"x\")'], "
            "start_new_session=True); time.sleep(30)")
    ctx = _ctx(project, home)
    result = asyncio.run(ShellExecTool().execute({"command": py(code), "timeout": 0.5}, ctx))
    assert "timed out" in result.content
    time.sleep(3)
    assert not (project / "late.txt").exists()
