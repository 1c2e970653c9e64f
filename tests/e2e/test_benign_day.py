"""A realistic benign working day in auto mode, through the app's own composition.

``build_services`` (the rules every install seeds, the built-in tools with their default
configuration, the machine's sandbox), a real ``AgentSession`` with the app's checkpoints, a
git repository with a small Python package and its tests, and a scripted model making 80
ordinary calls: reading and searching, editing and writing, running the tests, git status /
diff / log / add / commit / branch, fetching documentation pages. Goal (issue "Proven
containment and undo"): at most 3% of them ask, and every one of them does its work.
"""

from __future__ import annotations

import os
import site
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from app.core.agent.events import ApprovalRequest, ApprovalResponse, ToolFinished
from app.core.agent.session import AgentSession
from app.core.permission_mode import PermissionMode
from app.core.services import build_services
from app.core.store.profiles import ToolSetting
from tests.fakes.anthropic_server import FakeAnthropicServer, Response, tool
from tests.fakes.web_server import FakeWebServer
from tests.sandbox_support import STATUS

pytestmark = pytest.mark.skipif(not STATUS.available, reason=f"no sandbox: {STATUS.reason}")

GIT_ENV = {"GIT_AUTHOR_NAME": "Dev", "GIT_AUTHOR_EMAIL": "dev@example.com",
           "GIT_COMMITTER_NAME": "Dev", "GIT_COMMITTER_EMAIL": "dev@example.com"}


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True,
                   env={**os.environ, **GIT_ENV, "GIT_CONFIG_GLOBAL": os.devnull})


@pytest.fixture
def workspace(visible: Path) -> Path:
    root = visible / "shop"
    (root / "shop").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "docs").mkdir()
    (root / "shop" / "__init__.py").write_text("")
    (root / "shop" / "cart.py").write_text(
        "def total(prices):\n    return sum(prices)\n\n\ndef count(items):\n"
        "    return len(items)\n")
    (root / "tests" / "test_cart.py").write_text(
        "from shop.cart import count, total\n\n\ndef test_total():\n"
        "    assert total([1, 2]) == 3\n\n\ndef test_count():\n    assert count([1]) == 1\n")
    (root / "README.md").write_text("# shop\n\nA tiny shop. Run the tests with pytest.\n")
    (root / "docs" / "design.md").write_text("# Design\n\nCarts hold prices.\n")
    (root / ".gitignore").write_text("__pycache__/\n.pytest_cache/\nbuild/\n.venv/\n")
    # The project's own virtual environment, as people have one; its packages are this
    # test run's (pytest), so nothing is installed.
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root / ".venv")],
                   check=True, capture_output=True)
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    packages = root / ".venv" / "lib" / version / "site-packages"
    (packages / "test_run.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "initial")
    return root


def _day(page: str) -> list[tuple[str, dict[str, Any]]]:
    pytest_cmd = ".venv/bin/python -m pytest -q -p no:cacheprovider tests"
    calls: list[tuple[str, dict[str, Any]]] = []
    for round_ in range(4):
        calls += [
            ("list_directory", {"path": "."}),
            ("read_file", {"path": "shop/cart.py"}),
            ("read_file", {"path": "tests/test_cart.py"}),
            ("grep_search", {"pattern": "def total"}),
            ("glob_search", {"pattern": "**/*.py"}),
            ("git_ops", {"action": "status"}),
            ("web_fetch", {"url": page}),
            ("edit_file", {"path": "shop/cart.py", "old_string": f"# r{round_ - 1}\n"
                           if round_ else "def count", "new_string": f"# r{round_}\n"
                           if round_ else "# r0\ndef count"}),
            ("write_file", {"path": f"shop/feature_{round_}.py",
                            "content": f"VALUE = {round_}\n"}),
            ("write_file", {"path": f"docs/notes_{round_}.md", "content": "Notes.\n"}),
            ("shell_exec", {"command": pytest_cmd}),
            ("shell_exec", {"command": "ls shop"}),
            ("git_ops", {"action": "diff"}),
            ("grep_search", {"pattern": "VALUE", "path": "shop"}),
            ("read_file", {"path": "README.md"}),
            ("git_ops", {"action": "add", "args": {"files": ["."]}}),
            ("git_ops", {"action": "commit", "args": {"message": f"Round {round_}"}}),
            ("git_ops", {"action": "log", "args": {"max_count": 3}}),
            ("shell_exec", {"command": ".venv/bin/python -c \"import shop.cart; print('ok')\""}),
            ("read_file", {"path": "docs/design.md"}),
        ]
    calls[-1] = ("git_ops", {"action": "branch_create", "args": {"branch_name": "feature/next"}})
    return calls


async def test_a_benign_day_in_auto_mode_rarely_asks(
        db, fresh_data_dir: Path, workspace: Path, fake_anthropic_env: FakeAnthropicServer,
        monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in GIT_ENV.items():
        monkeypatch.setenv(key, value)
    with FakeWebServer() as web:
        web.add("/docs", body="<h1>pytest docs</h1><p>Use assert.</p>",
                content_type="text/html")
        services = build_services(db, fresh_data_dir, workspace)
        profile = services.profiles.ensure_default()
        assert profile.id is not None
        services.profiles.update(replace(profile, permission_mode=PermissionMode.AUTO,
                                         max_iterations=50))
        # The only change from a fresh install: the loopback "documentation site" is a
        # private address, which web_fetch refuses by default.
        settings = services.profiles.tool_settings(profile.id)
        fetch = settings["web_fetch"]
        services.profiles.set_tool(profile.id, ToolSetting(
            "web_fetch", True, {**fetch.config, "allow_private_network": True}))
        # Ticked in the tools list, with their default configuration; and git at the
        # read-write level, so the day can commit.
        for name in ("write_file", "edit_file", "shell_exec"):
            spec = services.registry.get(name).spec  # type: ignore[union-attr]
            config = settings[name].config if name in settings else dict(spec.default_config)
            services.profiles.set_tool(profile.id, ToolSetting(name, True, config))
        git = settings["git_ops"]
        services.profiles.set_tool(profile.id, ToolSetting(
            "git_ops", True, {**git.config, "git_permission": "read_write"}))
        asked: list[ApprovalRequest] = []

        async def approver(request: ApprovalRequest) -> ApprovalResponse:
            asked.append(request)
            return ApprovalResponse.approve()

        finished: list[ToolFinished] = []
        session = AgentSession(
            db=db, registry=services.registry, permissions=services.permissions,
            profile_id=profile.id, project_root=workspace, approver=approver,
            on_event=lambda e: finished.append(e) if isinstance(e, ToolFinished) else None,
            checkpointer=services.checkpointer_for(workspace))
        calls = _day(web.url("/docs"))
        assert len(calls) == 80
        try:
            for start in range(0, len(calls), 10):
                batch = calls[start:start + 10]
                fake_anthropic_env.script(*[Response.tools(tool(name, args, id=f"t{start + i}"))
                                        for i, (name, args) in enumerate(batch)],
                                      Response.text("done"))
                await session.run("Keep improving the shop package; run the tests.")
        finally:
            await session.aclose()
            await services.aclose()

    failed = [(e.tool_name, e.content[:300]) for e in finished if e.is_error]
    assert failed == [], failed
    assert len(finished) == 80
    why = [(r.tool_name, r.decision.explain()) for r in asked]
    assert len(asked) <= 2, why  # ≤ 3% of 80
