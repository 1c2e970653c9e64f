"""self_eval: detected and configured checks, per-check results, timeouts, no shell."""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from pathlib import Path

import pytest

from app.core.sandbox import Sandbox
from app.core.tools.base import ToolContext
from app.core.tools.builtin.self_eval import SelfEvalTool, detect_checks

PY = sys.executable


def ctx_with(project: Path, checks: dict, **config: object) -> ToolContext:
    return ToolContext(project_root=project, max_output_bytes=20_000,
                       tool_config={"self_eval": {"checks": checks, **config}})


async def run(ctx: ToolContext, **input: object) -> dict:
    result = await SelfEvalTool().execute(input, ctx)
    assert not result.is_error, result.content
    return json.loads(result.content)


def py(code: str) -> str:
    return f"{PY} -c '{code}'"


def test_detect_python_project(project: Path) -> None:
    (project / "pyproject.toml").write_text(
        "[project]\nname='x'\n[tool.ruff]\nline-length=100\n[tool.mypy]\nstrict=true\n"
        "[tool.pytest.ini_options]\n")
    checks = detect_checks(project)
    assert checks["lint"].endswith("ruff check .")
    assert checks["type_check"].endswith("mypy .")
    assert checks["test"].endswith("pytest -q")
    assert "build" not in checks


def test_detect_prefers_project_venv(project: Path) -> None:
    (project / "pyproject.toml").write_text("[tool.ruff]\n")
    (project / ".venv" / "bin").mkdir(parents=True)
    (project / ".venv" / "bin" / "ruff").write_text("")
    assert detect_checks(project)["lint"] == ".venv/bin/ruff check ."


def test_detect_node_project(project: Path) -> None:
    (project / "package.json").write_text(json.dumps({"scripts": {
        "build": "vite build", "lint": "eslint .", "typecheck": "tsc --noEmit",
        "test": "echo \"Error: no test specified\" && exit 1"}}))
    (project / "pnpm-lock.yaml").write_text("")
    assert detect_checks(project) == {"build": "pnpm run build", "lint": "pnpm run lint",
                                      "type_check": "pnpm run typecheck"}


def test_detect_rust_and_go(project: Path) -> None:
    (project / "Cargo.toml").write_text("[package]\nname='x'\n")
    assert detect_checks(project)["test"] == "cargo test"
    (project / "Cargo.toml").unlink()
    (project / "go.mod").write_text("module x\n")
    assert detect_checks(project)["lint"] == "go vet ./..."


def test_detect_nothing(project: Path) -> None:
    assert detect_checks(project) == {}


async def test_per_check_results(project: Path) -> None:
    ctx = ctx_with(project, {
        "lint": py("print(\"lint ok\")"),
        "type_check": py("import sys; print(\"bad types\"); sys.exit(2)"),
        "build": None,
    })
    out = await run(ctx, checks=["lint", "type_check"])
    assert out["all_passed"] is False and out["total_checks"] == 2
    lint, types = out["checks"]["lint"], out["checks"]["type_check"]
    assert lint["passed"] is True and lint["exit_code"] == 0 and lint["stdout"] == "lint ok\n"
    assert types["passed"] is False and types["exit_code"] == 2
    assert "bad types" in types["stdout"] and isinstance(types["duration_ms"], int)


async def test_all_passed(project: Path) -> None:
    ctx = ctx_with(project, {"build": py("pass"), "lint": py("pass"), "type_check": py("pass")})
    out = await run(ctx)
    assert out["all_passed"] is True and set(out["checks"]) == {"build", "lint", "type_check"}


async def test_requested_but_unconfigured_check_is_reported(project: Path) -> None:
    out = await run(ctx_with(project, {}), checks=["test"])
    assert out["all_passed"] is False and "test" in out["skipped"]


async def test_shell_syntax_in_configured_command_is_not_run(project: Path) -> None:
    ctx = ctx_with(project, {"lint": "echo x > marker"})
    out = await run(ctx, checks=["lint"])
    assert out["checks"]["lint"]["passed"] is False
    assert "redirection" in out["checks"]["lint"]["error"]
    assert not (project / "marker").exists()


async def test_chains_in_configured_commands(project: Path) -> None:
    ctx = ctx_with(project, {"build": f"{py('pass')} && {py('print(2)')}"})
    out = await run(ctx, checks=["build"])
    assert out["checks"]["build"]["passed"] and out["checks"]["build"]["stdout"] == "2\n"


async def test_timeout_kills_the_check(project: Path) -> None:
    code = ("import subprocess, time; p = subprocess.Popen([\"sleep\", \"60\"]); "
            "open(\"pid\", \"w\").write(str(p.pid)); time.sleep(60)")
    # Unsandboxed: the pid written inside a sandbox is its own namespace's (there, the
    # namespace ends every process; see test_sandbox_containment.py).
    ctx = dataclasses.replace(ctx_with(project, {"test": py(code)}, timeout_s=1.5),
                              sandbox=Sandbox.off("following pids"))
    started = time.monotonic()
    out = await run(ctx, checks=["test"])
    assert time.monotonic() - started < 10
    check = out["checks"]["test"]
    assert check["passed"] is False and "timed out" in check["error"]
    pid = int((project / "pid").read_text())
    deadline = time.monotonic() + 5
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not alive(pid), "the check's child process survived the timeout"


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1][0] not in "ZX"
    except (FileNotFoundError, ProcessLookupError):  # gone between open and read: ESRCH
        return False


async def test_output_excerpt_is_capped(project: Path) -> None:
    ctx = ToolContext(project_root=project, max_output_bytes=8_000,
                      tool_config={"self_eval": {"checks": {"lint": py("print(\"x\" * 200000)")}}})
    out = await run(ctx, checks=["lint"])
    stdout = out["checks"]["lint"]["stdout"]
    assert "truncated" in stdout and len(stdout) < 6_000


async def test_invalid_check_name(project: Path) -> None:
    result = await SelfEvalTool().execute({"checks": ["deploy"]}, ctx_with(project, {}))
    assert result.is_error


def test_spec() -> None:
    spec = SelfEvalTool().spec
    assert spec.category.value == "composite" and spec.risk.value == "high"
    assert spec.subjects({}) == ["build", "lint", "type_check"]
    assert spec.subjects({"checks": ["test"]}) == ["test"]


@pytest.mark.parametrize("name", ["build", "lint", "type_check", "test"])
async def test_each_check_name_runs(project: Path, name: str) -> None:
    out = await run(ctx_with(project, {name: py("pass")}), checks=[name])
    assert out["checks"][name]["passed"] is True
