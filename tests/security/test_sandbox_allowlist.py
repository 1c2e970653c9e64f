"""The sandbox shows an allowlist, proved by side effects: a sandboxed program cannot read the
person's home (dotfiles, build and package credentials, a wallet, a sibling client's project),
the project's own secrets unless revealed, reach a socket outside even when the environment
names it, or change a hard-linked file's twin outside; and git, python and pytest still work,
with an empty home whose git identity answers.

Everything lives under /var/tmp (the ``visible`` fixture): the sandbox's /tmp is private, so a
folder there would be out of reach for that reason alone.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.core.sandbox import Sandbox
from app.core.sensitive_paths import sensitive_paths
from app.core.settings_fields import SENSITIVE_PATHS
from app.core.tools.base import GitPermission, ToolContext
from app.core.tools.builtin.shell_exec import LEVEL_ANY_SANDBOXED, ShellExecTool
from app.core.tools.process_runner import minimal_env, run_argv
from tests.sandbox_support import PYTHON, STATUS, py, requires_sandbox

pytestmark = requires_sandbox

TOKEN = "allowlist-test-token-5f2c9"


@pytest.fixture
def home(visible: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A person's home outside /tmp, full of things no sandboxed program may read."""
    home = visible / "home"
    files = {
        ".bashrc": f"export GITHUB_TOKEN={TOKEN}\n",
        ".gitconfig": ("[user]\n\tname = Person Name\n\temail = person@example.com\n"
                       f"[http]\n\textraHeader = Authorization: Bearer {TOKEN}\n"),
        ".m2/settings.xml": f"<settings><password>{TOKEN}</password></settings>\n",
        ".config/pip/pip.conf": f"[global]\nindex-url = https://u:{TOKEN}@pypi.example/\n",
        ".pgpass": f"db:5432:*:me:{TOKEN}\n",
        ".bitcoin/wallet.dat": f"wallet {TOKEN}\n",
        "clients/other-client/secrets.txt": f"other client's {TOKEN}\n",
    }
    for rel, text in files.items():
        (home / rel).parent.mkdir(parents=True, exist_ok=True)
        (home / rel).write_text(text)
    monkeypatch.setenv("HOME", str(home))
    return home


@pytest.fixture
def mine(home: Path) -> Path:
    """This client's project: under the home, next to the other client's."""
    project = home / "clients" / "mine"
    project.mkdir(parents=True)
    (project / "main.py").write_text("print('hello')\n")
    (project / "test_main.py").write_text("def test_ok():\n    assert 2 + 2 == 4\n")
    (project / ".env").write_text(f"API_KEY={TOKEN}\n")
    (project / "terraform.tfstate").write_text(f'{{"secret": "{TOKEN}"}}\n')
    return project


def _ctx(project: Path, home: Path, revealed: tuple[Path, ...] = ()) -> ToolContext:
    assert STATUS.available, STATUS.reason
    sandbox = Sandbox(STATUS, True, sensitive_paths(home=home), home=home)
    return ToolContext(project_root=project, sandbox=sandbox,
                       git_permission=GitPermission.READ_WRITE,
                       tool_config={"shell_exec": {"program_level": LEVEL_ANY_SANDBOXED}},
                       shell_timeout_s=60, revealed=revealed)


def _run(ctx: ToolContext, command: str) -> dict[str, object]:
    result = asyncio.run(ShellExecTool().execute({"command": command}, ctx))
    payload = json.loads(result.content)
    assert payload["sandboxed"] is True
    return payload


def script(code: str) -> str:
    """A shell_exec command line running multi-line ``code`` (one line for the shell)."""
    return py(f"exec(bytes.fromhex({code.encode().hex()!r}).decode())")


def _reader(paths: list[Path]) -> str:
    """Python that prints each file's text, or why it could not."""
    return script("import sys\n"
              f"for p in {[str(p) for p in paths]!r}:\n"
              "    try: print(p, open(p).read())\n"
              "    except Exception as e: print(p, type(e).__name__)")


def test_the_home_and_a_sibling_project_cannot_be_read(home: Path, mine: Path) -> None:
    targets = [home / ".bashrc", home / ".m2/settings.xml", home / ".config/pip/pip.conf",
               home / ".pgpass", home / ".bitcoin/wallet.dat",
               home / "clients/other-client/secrets.txt"]
    out = _run(_ctx(mine, home), _reader([*targets, home / ".gitconfig"]))
    assert out["exit_code"] == 0, out
    assert TOKEN not in str(out["stdout"]) + str(out["stderr"])
    assert str(out["stdout"]).count("Error") == len(targets)  # each one failed, none was read
    listing = _run(_ctx(mine, home), py(f"import os; print(os.listdir({str(home)!r}))"))
    assert ".bashrc" not in str(listing["stdout"]) and ".gitconfig" in str(listing["stdout"])


def test_the_projects_own_secrets_need_revealing(home: Path, mine: Path) -> None:
    secrets = [mine / ".env", mine / "terraform.tfstate"]
    hidden = _run(_ctx(mine, home), _reader(secrets))
    assert TOKEN not in str(hidden["stdout"]), hidden
    shown = _run(_ctx(mine, home, revealed=(mine / ".env",)), _reader(secrets))
    assert f"API_KEY={TOKEN}" in str(shown["stdout"])  # revealed to this call
    assert f'"secret": "{TOKEN}"' not in str(shown["stdout"])  # the other stays hidden


@pytest.fixture
def listener(visible: Path) -> Iterator[tuple[socket.socket, Path]]:
    path = visible / "outside-agent.sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(4)
    server.setblocking(False)
    yield server, path
    server.close()


def _accepted(server: socket.socket) -> bool:
    try:
        conn, _ = server.accept()
    except BlockingIOError:
        return False
    conn.close()
    return True


def test_a_socket_outside_is_unreachable_even_when_the_environment_names_it(
        home: Path, mine: Path, listener: tuple[socket.socket, Path]) -> None:
    server, path = listener
    # A custom tool or MCP server passes its own environment: the sandbox filters it anyway.
    env = minimal_env({"SSH_AUTH_SOCK": str(path), "DOCKER_HOST": f"unix://{path}",
                       "AGENT_PATH": str(path)}, project_root=mine)
    code = ("import os, socket\n"
            "print('env', {k: os.environ.get(k) for k in "
            "('SSH_AUTH_SOCK', 'DOCKER_HOST', 'AGENT_PATH')})\n"
            f"for p in [os.environ.get('SSH_AUTH_SOCK'), {str(path)!r}]:\n"
            "    if not p: continue\n"
            "    s = socket.socket(socket.AF_UNIX)\n"
            "    try: s.connect(p); print('connected', p)\n"
            "    except OSError as e: print('refused', type(e).__name__)")
    confinement = _ctx(mine, home).confine(writable=(mine,))
    result = asyncio.run(run_argv([PYTHON, "-c", code], cwd=mine, timeout_s=60,
                                  max_output_bytes=10_000, env=env, confinement=confinement))
    assert result.exit_code == 0, result.stderr
    assert "connected" not in result.stdout and not _accepted(server)
    assert "'SSH_AUTH_SOCK': None" in result.stdout and "'DOCKER_HOST': None" in result.stdout
    assert "'AGENT_PATH': None" in result.stdout


def test_a_socket_inside_the_project_is_hidden(home: Path, mine: Path) -> None:
    path = mine / "daemon.sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(4)
    server.setblocking(False)
    try:
        out = _run(_ctx(mine, home), script(
            "import socket; s = socket.socket(socket.AF_UNIX)\n"
            f"try: s.connect({str(path)!r}); print('connected')\n"
            "except OSError as e: print('refused', type(e).__name__)"))
        assert "connected" not in str(out["stdout"]) and not _accepted(server)
    finally:
        server.close()


def test_a_hard_linked_twin_outside_stays_unchanged(home: Path, mine: Path,
                                                    outside: Path) -> None:
    twin = outside / "cache-file.py"
    twin.write_text("original\n")
    os.link(twin, mine / "linked.py")
    out = _run(_ctx(mine, home), py("open('linked.py', 'a').write('planted\\n')"))
    assert twin.read_text() == "original\n"
    assert out["exit_code"] != 0
    # Ordinary files next to it stay writable.
    assert _run(_ctx(mine, home), py("open('main.py', 'a').write('#\\n')"))["exit_code"] == 0


def test_git_python_and_pytest_work_with_an_empty_home(home: Path, mine: Path) -> None:
    ctx = _ctx(mine, home)
    ran = _run(ctx, f"{PYTHON} main.py")
    assert ran["exit_code"] == 0 and "hello" in str(ran["stdout"]), ran
    tested = _run(ctx, f"{PYTHON} -m pytest -q -p no:cacheprovider test_main.py")
    assert tested["exit_code"] == 0 and "1 passed" in str(tested["stdout"]), tested
    git = _run(ctx, script("import os, subprocess\n"
                           "for args in (['init', '-q'], ['add', 'main.py'],\n"
                           "             ['commit', '-qm', 'first'], ['config', 'user.name']):\n"
                           "    subprocess.run(['git', *args], check=True)\n"
                           "bare = {k: v for k, v in os.environ.items()\n"
                           "        if k != 'GIT_CONFIG_GLOBAL'}\n"
                           "subprocess.run(['git', 'config', 'user.name'], env=bare, check=True)"))
    assert git["exit_code"] == 0, git
    # Tebiki's git settings carry the person's identity (not their file); a program started
    # without them finds the private home's own.
    assert str(git["stdout"]).splitlines() == ["Person Name", "Tebiki agent"]
    assert (mine / ".git").is_dir()
    listed = _run(ctx, py("import os; print(sorted(os.listdir(os.environ['HOME'])))"))
    # Empty but for the identity and the folders that lead to the project.
    assert str(listed["stdout"]).strip() == "['.gitconfig', 'clients']"


def test_the_persons_own_sensitive_entries_are_hidden_from_programs(
        db, fresh_data_dir: Path, home: Path, mine: Path) -> None:
    from dataclasses import replace

    from app.core.app_sandbox import app_sandbox
    from app.core.store.settings import SettingsRepository

    (mine / "deploy.secret").write_text(f"token {TOKEN}\n")
    (home / "vault").mkdir()
    (mine / "notes.txt").write_text(f"fine {TOKEN[:4]}\n")
    settings = SettingsRepository(db)
    settings.set(SENSITIVE_PATHS.key, ["*.secret", str(mine / "private")])
    (mine / "private").mkdir()
    (mine / "private" / "keys.txt").write_text(f"key {TOKEN}\n")
    sandbox = replace(app_sandbox(settings, fresh_data_dir), home=home, required=True)
    ctx = ToolContext(project_root=mine, sandbox=sandbox,
                      tool_config={"shell_exec": {"program_level": LEVEL_ANY_SANDBOXED}},
                      shell_timeout_s=60)
    out = _run(ctx, _reader([mine / "deploy.secret", mine / "private" / "keys.txt",
                             mine / "notes.txt"]))
    assert TOKEN not in str(out["stdout"]), out
    assert "fine" in str(out["stdout"])  # the rest of the project is there


def test_credentials_inside_the_toolchains_shown_are_hidden(home: Path, mine: Path) -> None:
    """The toolchain roots are shown read-only; the credentials some keep inside are not
    (uv's login tokens, npm's and pip's install-wide config)."""
    secrets = [".local/share/uv/credentials/credentials.toml",
               ".nvm/versions/node/v20.1.0/etc/npmrc", ".pyenv/versions/3.12.1/pip.conf"]
    tools = [".nvm/versions/node/v20.1.0/bin/node", ".pyenv/versions/3.12.1/bin/python3"]
    for rel in [*secrets, *tools]:
        (home / rel).parent.mkdir(parents=True, exist_ok=True)
        (home / rel).write_text(f"{rel} {TOKEN}\n")
    out = _run(_ctx(mine, home), _reader([home / rel for rel in [*secrets, *tools]]))
    shown = str(out["stdout"])
    assert all(f"{rel} {TOKEN}" not in shown for rel in secrets), shown
    assert all(f"{rel} {TOKEN}" in shown for rel in tools), shown  # the toolchains stay
