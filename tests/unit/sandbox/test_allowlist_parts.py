"""The allowlist's parts: the incremental scanner, toolchain detection, the environment filter,
the hard-link rule, the failure note and the maintainer CLI."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.core.sandbox import Sandbox, SandboxPolicy
from app.core.sandbox.confinement import Confinement
from app.core.sandbox.environment import sandbox_environment
from app.core.sandbox.mounts import HARD_LINKS_PER_FOLDER, Access, plan_mounts
from app.core.sandbox.scanner import TreeScanner
from app.core.sandbox.toolchains import program_root, venv_bases
from app.core.sensitive_paths import SensitivePaths
from tests.sandbox_support import STATUS, requires_sandbox


@pytest.fixture
def base() -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(prefix="tebiki-allowlist-", dir="/var/tmp")).resolve()
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


class CountingScanner(TreeScanner):
    def __init__(self) -> None:
        super().__init__(SensitivePaths().name_is_secret)
        self.listed: list[str] = []

    def _list(self, folder: str, mtime: int):  # type: ignore[no-untyped-def]
        self.listed.append(folder)
        return super()._list(folder, mtime)


def test_scanner_finds_secrets_sockets_and_hard_links(base: Path, tmp_path: Path) -> None:
    (base / "src" / "deep").mkdir(parents=True)
    (base / "src" / "deep" / ".env").write_text("x")
    (base / "terraform.tfstate").write_text("x")
    (base / ".env.example").write_text("x")  # a template, not a secret
    (base / "keys").mkdir()
    (base / "keys" / "id_rsa").write_text("x")
    (base / ".venv" / "lib" / "site-packages" / "certifi").mkdir(parents=True)
    (base / ".venv" / "lib" / "site-packages" / "certifi" / "cacert.pem").write_text("x")
    twin = tmp_path / "twin"
    twin.write_text("x")
    os.link(twin, base / "src" / "linked.txt")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(base / "agent.sock"))
    try:
        found = CountingScanner().scan(base)
    finally:
        sock.close()
    assert set(found.secret_files) == {base / "src/deep/.env", base / "terraform.tfstate",
                                       base / "keys/id_rsa"}
    assert found.special_files == (base / "agent.sock",)
    assert found.hard_links == (base / "src/linked.txt",)


def test_scanner_lists_again_only_what_changed(base: Path) -> None:
    for i in range(20):
        (base / f"d{i}").mkdir()
        (base / f"d{i}" / "f.txt").write_text("x")
    scanner = CountingScanner()
    assert scanner.scan(base).folders == 21
    assert len(scanner.listed) == 21
    scanner.listed.clear()
    assert scanner.scan(base).secret_files == ()
    assert scanner.listed == []  # nothing changed: one stat per folder, no listing
    (base / "d7" / ".env").write_text("x")
    assert scanner.scan(base).secret_files == (base / "d7" / ".env",)
    assert scanner.listed == [str(base / "d7")]


def test_a_venv_shows_its_base_interpreter(base: Path) -> None:
    prefix = base / "pythons" / "3.12"
    (prefix / "bin").mkdir(parents=True)
    (prefix / "bin" / "python3.12").write_text("")
    project = base / "project"
    (project / ".venv" / "bin").mkdir(parents=True)
    (project / ".venv" / "bin" / "python").symlink_to(prefix / "bin" / "python3.12")
    assert venv_bases(project) == (prefix,)
    home = base
    assert program_root(str(prefix / "bin" / "python3.12"), home) == prefix
    assert program_root(str(base / "tool"), home) is None  # never the home itself


def test_environment_keeps_only_what_points_into_sight() -> None:
    env = {"SSH_AUTH_SOCK": "/run/user/1/ssh", "DOCKER_HOST": "tcp://127.0.0.1:2375",
           "DBUS_SESSION_BUS_ADDRESS": "unix:path=/run/user/1/bus", "LANG": "C.UTF-8",
           "PATH": "/usr/bin:/home/me/.secret/bin:/p/bin", "PYTHONPATH": "/p/src:/elsewhere",
           "KUBECONFIG": "/home/me/.kube/config", "SHELL": "/bin/bash", "HOME": "/home/me",
           "TOOL_CACHE": "/p/cache", "X_SOCKET": "/p/x.sock"}
    kept = sandbox_environment(env, [Path("/usr"), Path("/bin"), Path("/p")], Path("/home/me"))
    assert kept == {"LANG": "C.UTF-8", "PATH": "/usr/bin:/p/bin", "PYTHONPATH": "/p/src",
                    "SHELL": "/bin/bash", "HOME": "/home/me", "TOOL_CACHE": "/p/cache",
                    "TMPDIR": "/tmp"}


def test_many_hard_links_make_their_folder_read_only(base: Path, tmp_path: Path) -> None:
    project = base / "project"
    (project / "node_modules" / "pkg").mkdir(parents=True)
    (project / "one").mkdir()
    for i in range(HARD_LINKS_PER_FOLDER + 1):
        (tmp_path / f"c{i}").write_text("x")
        os.link(tmp_path / f"c{i}", project / "node_modules" / "pkg" / f"f{i}.js")
    os.link(tmp_path / "c0", project / "one" / "single.py")
    plan = plan_mounts(SandboxPolicy(writable=(project,), home=base))
    mounts = {m.path: m for m in plan.mounts}
    assert mounts[project / "node_modules" / "pkg"].access is Access.READ_ONLY
    assert mounts[project / "one" / "single.py"].access is Access.READ_ONLY
    assert any("hard-linked" in note for note in plan.notes)
    assert not plan.sees(base / "elsewhere")


def test_a_hard_link_of_a_secret_is_hidden_like_the_secret(base: Path) -> None:
    """The project's .env linked as settings.txt, the person's key (on the sensitive list)
    linked as notes/key.txt: each twin is hidden; a plain hard link stays read-only."""
    project, keys = base / "project", base / "keys"
    (project / "notes").mkdir(parents=True)
    keys.mkdir()
    (project / ".env").write_text("TOKEN=x")
    os.link(project / ".env", project / "settings.txt")
    (keys / "id_ed25519").write_text("key")
    os.link(keys / "id_ed25519", project / "notes" / "key.txt")
    (base / "plain").write_text("x")
    os.link(base / "plain", project / "plain.txt")
    assert CountingScanner().scan(project).secret_twins == (project / "settings.txt",)
    plan = plan_mounts(SandboxPolicy(writable=(project,), home=base, hidden=(keys,)))
    mounts = {m.path: m for m in plan.mounts}
    assert mounts[project / "settings.txt"].access is Access.HIDDEN
    assert mounts[project / "notes" / "key.txt"].access is Access.HIDDEN
    assert mounts[project / "plain.txt"].access is Access.READ_ONLY


@requires_sandbox
def test_a_failure_naming_an_unseen_path_says_how_to_show_it(base: Path) -> None:
    project = base / "project"
    project.mkdir()
    (base / "data").mkdir()
    confinement = Confinement(STATUS, SandboxPolicy(writable=(project,), home=base))
    note = confinement.explain(f"cat: {base}/data/input.csv: No such file or directory")
    assert note is not None
    assert f"{base}/data/input.csv is not visible in the sandbox" in note
    assert "Settings → Sandbox" in note
    assert confinement.explain(f"cat: {project}/missing.txt: No such file") is None


@requires_sandbox
def test_cli_runs_a_command_like_a_tool_and_shows_the_view(base: Path) -> None:
    project = base / "project"
    project.mkdir()
    (project / ".env").write_text("TOKEN=cli-secret\n")
    env = {**os.environ, "SSH_AUTH_SOCK": str(base / "agent.sock")}
    cli = [sys.executable, "-m", "app.core.sandbox"]
    ran = subprocess.run([*cli, "run", "--project", str(project), "--", "sh", "-c",
                          "echo made > made.txt; cat .env; echo sock=$SSH_AUTH_SOCK"],
                         capture_output=True, text=True, env=env, check=False, timeout=60)
    assert (project / "made.txt").read_text() == "made\n"
    assert "cli-secret" not in ran.stdout and "sock=\n" in ran.stdout
    shown = subprocess.run([*cli, "show", "--project", str(project)], capture_output=True,
                           text=True, check=True, timeout=60).stdout
    assert f"writable         {project}" in shown
    assert f"hidden           {project / '.env'}" in shown


def test_the_person_s_read_only_folders_are_visible(base: Path) -> None:
    extra = base / "datasets"
    extra.mkdir()
    sandbox = Sandbox(STATUS, True, read_only=(extra,), home=base)
    if not STATUS.available:
        pytest.skip("needs a sandbox")
    confinement = sandbox.confine(writable=(base / "nowhere",))
    assert confinement is not None
    assert confinement.plan().access_of(extra) is not None
