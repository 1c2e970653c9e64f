"""The probe says honestly whether a sandbox works; a required sandbox that is missing refuses
to start anything; the command lines mount in the order that keeps the walls up."""

from __future__ import annotations

import asyncio
import json
import shutil
import stat
import tempfile
from pathlib import Path

import pytest

from app.core.sandbox import (
    Sandbox,
    SandboxBackend,
    SandboxPolicy,
    SandboxRequired,
    SandboxStatus,
    probe_sandbox,
)
from app.core.sandbox.bubblewrap import bwrap_argv
from app.core.sandbox.mounts import plan_mounts
from app.core.sandbox.seatbelt import seatbelt_profile
from app.core.sensitive_paths import sensitive_paths
from app.core.tools.base import ToolContext
from app.core.tools.builtin.shell_exec import LEVEL_ANY_SANDBOXED, ShellExecTool


def _fake_bwrap(folder: Path, stderr: str, status: int) -> str:
    script = folder / "bwrap"
    script.write_text(f"#!/bin/sh\necho {stderr!r} >&2\nexit {status}\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return str(script)


def test_missing_bubblewrap_is_reported_with_how_to_install(tmp_path: Path) -> None:
    status = probe_sandbox(bwrap=str(tmp_path / "no-such-bwrap"), platform="linux")
    assert not status.available
    assert status.summary.startswith("not sandboxed:")


def test_bubblewrap_without_user_namespaces_says_so(tmp_path: Path) -> None:
    fake = _fake_bwrap(tmp_path, "bwrap: No permissions to creating new namespace", 1)
    status = probe_sandbox(bwrap=fake, platform="linux")
    assert not status.available
    assert "namespace" in status.reason and "user namespaces" in status.reason


def test_windows_has_no_sandbox_yet() -> None:
    status = probe_sandbox(platform="win32")
    assert not status.available and "Windows" in status.reason


def test_switched_off_by_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEBIKI_SANDBOX", "off")
    assert not probe_sandbox().available


def test_required_and_unavailable_refuses() -> None:
    sandbox = Sandbox(SandboxStatus.unavailable("bubblewrap is not installed"), required=True)
    with pytest.raises(SandboxRequired, match="bubblewrap is not installed"):
        sandbox.confine(writable=[Path("/x")])
    assert Sandbox(SandboxStatus.unavailable("x"), required=False).confine() is None


def test_required_sandbox_missing_runs_nothing(project: Path) -> None:
    marker = project / "ran.txt"
    ctx = ToolContext(project_root=project, allowed_commands=("touch",),
                      sandbox=Sandbox(SandboxStatus.unavailable("bubblewrap is not installed; "
                                                                "install bubblewrap"), True))
    result = asyncio.run(ShellExecTool().execute({"command": "touch ran.txt"}, ctx))
    assert result.is_error
    assert "not run" in result.content and "Require the sandbox" in result.content
    assert not marker.exists()


def test_not_required_runs_unsandboxed_and_says_so(project: Path) -> None:
    ctx = ToolContext(project_root=project, allowed_commands=("touch",),
                      sandbox=Sandbox(SandboxStatus.unavailable("none"), required=False))
    result = asyncio.run(ShellExecTool().execute({"command": "touch ran.txt"}, ctx))
    assert json.loads(result.content)["sandboxed"] is False
    assert (project / "ran.txt").exists()


def test_any_program_level_needs_a_working_sandbox(project: Path) -> None:
    ctx = ToolContext(project_root=project, allowed_commands=(),
                      tool_config={"shell_exec": {"program_level": LEVEL_ANY_SANDBOXED}},
                      sandbox=Sandbox(SandboxStatus.unavailable("none"), required=False))
    result = asyncio.run(ShellExecTool().execute({"command": "touch ran.txt"}, ctx))
    assert result.is_error and "no working sandbox" in result.content
    assert not (project / "ran.txt").exists()


def _pairs(argv: list[str]) -> list[tuple[str, ...]]:
    """The mount options of a bwrap argv, in order, with their operands."""
    arity = {"--bind": 2, "--ro-bind": 2, "--tmpfs": 1}
    out, i = [], 0
    while i < len(argv):
        n = arity.get(argv[i])
        if n:
            out.append(tuple(argv[i:i + n + 1]))
            i += n + 1
        else:
            i += 1
    return out


@pytest.fixture
def var_tmp():
    """Outside /tmp, which the sandbox replaces as a whole (paths under it need no hiding)."""
    folder = Path(tempfile.mkdtemp(prefix="tebiki-bwrap-test-", dir="/var/tmp")).resolve()
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_paths_under_private_tmp_need_no_hiding(tmp_path: Path) -> None:
    secret = tmp_path.resolve() / "secret"
    secret.mkdir()
    argv = bwrap_argv("/usr/bin/bwrap", SandboxPolicy(hidden=(secret,)), ["true"], "/bin/true",
                      tmp_path)
    assert str(secret) not in argv


def test_bwrap_mount_order(var_tmp: Path) -> None:
    """The allowlist: nothing of the machine but what is mounted, deeper mounts after the
    folders that hold them. (Was: the whole system read-only with a hidden list on top.)"""
    base = var_tmp
    hidden_parent = base / "secret-parent"
    project = hidden_parent / "project"
    (project / ".git").mkdir(parents=True)
    ssh = base / "home" / ".ssh"
    ssh.mkdir(parents=True)
    netrc = base / "home" / ".netrc"
    netrc.write_text("x")
    policy = SandboxPolicy(writable=(project,), read_only=(project / ".git",),
                           hidden=(hidden_parent, ssh, netrc, base / "home" / ".aws"),
                           home=base / "home")
    argv = bwrap_argv("/usr/bin/bwrap", policy, ["ls", "-a"], "/usr/bin/ls", project)
    mounts = _pairs(argv)
    assert ("--ro-bind", "/", "/") not in mounts  # no longer the whole machine
    assert ("--ro-bind", "/usr", "/usr") in mounts
    # The project is shown though its parent is hidden: nothing of the parent is mounted.
    assert not any(str(hidden_parent) == m[-1] for m in mounts)
    # .git read-only over the writable project, after it.
    assert mounts.index(("--bind", str(project), str(project))) < mounts.index(
        ("--ro-bind", str(project / ".git"), str(project / ".git")))
    # The home is an empty tmpfs; its secrets need no hiding: nothing there is mounted.
    assert ("--tmpfs", str(base / "home")) in mounts
    assert not any(str(ssh) in m or str(netrc) in m for m in mounts)
    assert "--unshare-all" in argv and "--share-net" not in argv
    assert argv[-3:] == ["--", "/usr/bin/ls", "-a"]


def test_bwrap_network_switch(tmp_path: Path) -> None:
    argv = bwrap_argv("/usr/bin/bwrap", SandboxPolicy(network=True), ["true"], "/bin/true",
                      tmp_path)
    assert "--share-net" in argv


def test_hidden_symlink_hides_its_target(var_tmp: Path) -> None:
    """A symlinked secret folder inside a visible folder hides its target."""
    real = var_tmp / "real-ssh"
    real.mkdir()
    home = var_tmp / "home"
    home.mkdir()
    (home / ".ssh").symlink_to(real)
    policy = SandboxPolicy(read_only=(var_tmp,), hidden=(home / ".ssh",), home=home)
    argv = bwrap_argv("/usr/bin/bwrap", policy, ["true"], "/bin/true", var_tmp)
    assert ("--tmpfs", str(real.resolve())) in _pairs(argv)


def test_seatbelt_profile_denies_last() -> None:
    policy = SandboxPolicy(writable=(Path("/p"),), read_only=(Path("/p/.git"),),
                           hidden=(Path('/h/"quoted"'),), network=False)
    profile = seatbelt_profile(policy)
    lines = profile.splitlines()
    assert lines[:3] == ["(version 1)", "(allow default)", "(deny file-write*)"]
    assert '(subpath "/p")' in lines[3]
    assert lines.index('(deny file-write* (subpath "/p/.git"))') > 3
    assert '(subpath "/h/\\"quoted\\"")' in profile
    assert "(deny network*)" in lines
    assert "(deny network*)" not in seatbelt_profile(SandboxPolicy(network=True))


def test_seatbelt_profile_shows_only_the_allowlist_of_home(var_tmp: Path) -> None:
    home = var_tmp / "home"
    project = home / "work" / "project"
    project.mkdir(parents=True)
    (project / ".env").write_text("x")
    (home / ".bashrc").write_text("x")
    policy = SandboxPolicy(writable=(project,), home=home)
    profile = seatbelt_profile(policy, plan=plan_mounts(policy))
    lines = profile.splitlines()
    denied = lines.index(f'(deny file-read* (subpath "{home}"))')
    allowed = next(i for i, line in enumerate(lines)
                   if line.startswith("(allow file-read*") and f'"{project}"' in line)
    secret = next(i for i, line in enumerate(lines)
                  if line.startswith("(deny file-read* file-write*") and f'{project}/.env' in line)
    assert denied < allowed < secret  # later rules win: home denied, project back, .env hidden


def test_sensitive_paths_cover_the_usual_secrets(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_RUNTIME_DIR", "/run/user/1000")
    paths = sensitive_paths(home=tmp_path, extra=[tmp_path / "data"])
    for rel in (".ssh", ".gnupg", ".aws", ".azure", ".config/gcloud", ".kube", ".docker",
                ".netrc", ".local/share/keyrings", ".bash_history", ".mozilla"):
        assert tmp_path / rel in paths
    assert Path("/run/user/1000") in paths and tmp_path / "data" in paths


def test_status_summary() -> None:
    ok = SandboxStatus(True, SandboxBackend.BUBBLEWRAP, "/usr/bin/bwrap")
    assert ok.summary == "sandboxed (bubblewrap)"
    missing = SandboxStatus.unavailable("bubblewrap (bwrap) is not installed")
    assert missing.summary == "not sandboxed: bubblewrap (bwrap) is not installed"
