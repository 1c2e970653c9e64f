"""Benchmark: shell policy throughput and shell_exec overhead (prints `name: value` lines).

Run: .venv/bin/python tests/bench/bench_shell_policy.py [--commands N] [--runs N]

1. Policy check (parse with tree-sitter-bash + allowlist + option-escape tables) on 10,000
   realistic generated commands, against the seed's check (forbidden substrings + first token)
   measured in the same run.
2. shell_exec overhead against a bare asyncio.create_subprocess_exec of the same program.
3. The sandbox's cost: shell_exec running `true` sandboxed (bubblewrap, the app's hidden-paths
   list) against the same call unsandboxed, interleaved in the same run. Goal: ≤ 10 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from app.core.sandbox import Sandbox, probe_sandbox
from app.core.sensitive_paths import sensitive_paths
from app.core.tools.base import ToolContext
from app.core.tools.builtin.shell_exec import ShellExecTool
from app.core.tools.shell.policy import check_command
from app.core.tools.shell.syntax import MAX_COMMAND_LENGTH, parse_command
from tests.security.fuzz_parser import corpus, short

ALLOWED = ("ls", "cat", "head", "tail", "wc", "find", "grep", "tree", "git", "echo", "sed",
           "awk", "sort", "uniq", "rg", "pytest", "ruff", "make", "npm", "cargo", "true")

FILES = ["src/main.py", "app/core/tools/base.py", "README.md", "tests/test_x.py", "pyproject.toml",
         "package.json", "src/lib.rs", "docs/guide.md"]
DIRS = ["src", "app", "tests", "docs", ".", "app/core"]
WORDS = ["TODO", "def main", "import os", "FIXME", "class Tool", "async def", "return None"]


def generate(n: int, seed: int = 1) -> list[str]:
    rnd = random.Random(seed)

    def simple() -> str:
        f, d, w = rnd.choice(FILES), rnd.choice(DIRS), rnd.choice(WORDS)
        return rnd.choice([
            "git status", "git status --short", f"git diff --stat HEAD~{rnd.randint(1, 9)}",
            f"git log --oneline -n {rnd.randint(1, 50)}", f"git show HEAD~{rnd.randint(0, 5)}",
            "git branch -a", f"git diff -- {f}", f"git add {f}", "git commit -m 'fix: things'",
            f"ls -la {d}", f"cat {f}", f"head -n {rnd.randint(5, 200)} {f}", f"wc -l {f}",
            f"grep -rn '{w}' {d}", f"rg -n '{w}' {d}", f"find {d} -name '*.py' -type f",
            f"tree -L {rnd.randint(1, 3)} {d}",
            f"sed -n '{rnd.randint(1, 9)},{rnd.randint(10, 99)}p' {f}",
            f"awk '{{print $1}}' {f}", f"sort {f}", "pytest -q",
            f"pytest -q tests -k {w.split()[0]}",
            "ruff check .", "make test", "npm run build", "cargo test", f"echo '{w}'",
        ])

    def refused() -> str:
        f = rnd.choice(FILES)
        return rnd.choice([f"rm -rf {f}", f"cat {f} > out.txt", "echo $(id)", "ls && curl x | sh",
                           "find . -name x -exec rm {} ;", f"sed -i s/a/b/ {f}",
                           "git -c core.pager=sh log", "git push origin main",
                           f"awk 'BEGIN{{system(\"id\")}}' {f}", "bash -c 'ls'"])

    out = []
    for _ in range(n):
        roll = rnd.random()
        if roll < 0.1:
            out.append(refused())
        elif roll < 0.55:
            out.append(simple())
        else:
            parts = [simple() for _ in range(rnd.randint(2, 4))]
            cmd = parts[0]
            for part in parts[1:]:
                cmd += rnd.choice([" && ", " || ", "; ", " | "]) + part
            out.append(cmd)
    return out


_FORBIDDEN = ["&&", "||", ";", "|", "$(", "`", "${", ">", ">>", "<", "\n", "\r"]


def seed_check(command: str) -> bool:
    """The seed's (insufficient) check, as the same-run baseline."""
    if any(p in command for p in _FORBIDDEN):
        return False
    first = command.split()[0] if command.split() else ""
    return first in ALLOWED


def time_per_command(fn, commands: list[str], runs: int) -> float:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        for command in commands:
            fn(command)
        samples.append((time.perf_counter() - started) / len(commands))
    return statistics.median(samples)


async def exec_overhead(runs: int) -> dict[str, float]:
    project = Path(tempfile.mkdtemp(prefix="tebiki-bench-")).resolve()
    # Unsandboxed: this measures shell_exec's own overhead (the sandbox's is measured below).
    ctx = ToolContext(project_root=project, allowed_commands=("true", "echo"),
                      sandbox=Sandbox.off("shell_exec's own overhead"))
    tool = ShellExecTool()

    async def bare(argv: list[str]) -> None:
        proc = await asyncio.create_subprocess_exec(*argv, stdout=asyncio.subprocess.PIPE,
                                                    stderr=asyncio.subprocess.PIPE)
        await proc.communicate()

    async def via_tool(command: str) -> None:
        result = await tool.execute({"command": command}, ctx)
        assert not result.is_error, result.content

    results: dict[str, float] = {}
    for label, argv, command in (("true", ["true"], "true"),
                                 ("echo", ["echo", "hello"], "echo hello")):
        await bare(argv)
        await via_tool(command)  # warm-up
        bare_s, tool_s = [], []
        for _ in range(runs):
            t = time.perf_counter()
            await bare(argv)
            bare_s.append(time.perf_counter() - t)
            t = time.perf_counter()
            await via_tool(command)
            tool_s.append(time.perf_counter() - t)
        b, s = statistics.median(bare_s), statistics.median(tool_s)
        results[f"exec_{label}_bare_ms"] = b * 1000
        results[f"exec_{label}_shell_exec_ms"] = s * 1000
        results[f"exec_{label}_overhead_ms"] = (s - b) * 1000
        results[f"exec_{label}_ratio"] = s / b
    return results


async def sandbox_overhead(runs: int) -> dict[str, float | str]:
    status = probe_sandbox()
    if not status.available:
        return {"sandbox": status.summary}
    project = Path(tempfile.mkdtemp(prefix="tebiki-bench-")).resolve()
    plain = ToolContext(project_root=project, allowed_commands=("true",),
                        sandbox=Sandbox.off("the unsandboxed baseline"))
    boxed = ToolContext(project_root=project, allowed_commands=("true",),
                        sandbox=Sandbox(status, True, sensitive_paths()))
    tool = ShellExecTool()

    async def once(ctx: ToolContext) -> float:
        t = time.perf_counter()
        result = await tool.execute({"command": "true"}, ctx)
        elapsed = time.perf_counter() - t
        assert not result.is_error, result.content
        return elapsed

    await once(plain)
    await once(boxed)
    plain_s, boxed_s = [], []
    for _ in range(runs):
        plain_s.append(await once(plain))
        boxed_s.append(await once(boxed))
    p, b = statistics.median(plain_s), statistics.median(boxed_s)
    return {"sandbox": status.summary, "exec_true_unsandboxed_ms": p * 1000,
            "exec_true_sandboxed_ms": b * 1000, "sandbox_overhead_ms": (b - p) * 1000}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--commands", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--exec-runs", type=int, default=50)
    args = parser.parse_args()

    commands = generate(args.commands)
    accepted = sum(check_command(c, ALLOWED).ok for c in commands)
    policy = time_per_command(lambda c: check_command(c, ALLOWED), commands, args.runs)
    seed = time_per_command(seed_check, commands, args.runs)
    print(f"policy_commands: {len(commands)}")
    print(f"policy_accepted: {accepted}")
    print(f"policy_commands_per_sec: {1 / policy:,.0f}")
    print(f"policy_us_per_command: {policy * 1e6:.1f}")
    print(f"seed_check_us_per_command: {seed * 1e6:.2f}")
    print(f"policy_vs_seed_ratio: {policy / seed:.0f}")
    # Parser alone: median per ordinary command (42-47 us wall before the robustness bounds
    # on the 2-core dev machine; old and new within 1% in one interleaved CPU-time run), and
    # the worst case over
    # the fuzz corpus (inputs up to the length limit; min of 3 runs filters scheduler noise).
    parse = time_per_command(parse_command, commands, args.runs)
    print(f"shell_parse_us_per_command: {parse * 1e6:.1f}")
    worst_wall, worst_cpu, worst_text = 0.0, 0.0, ""
    for text in corpus():
        walls, cpus = [], []
        for _ in range(3):
            wall, cpu = time.perf_counter(), time.thread_time()
            parse_command(text)
            walls.append(time.perf_counter() - wall)
            cpus.append(time.thread_time() - cpu)
        if min(walls) > worst_wall:
            worst_wall, worst_text = min(walls), text
        worst_cpu = max(worst_cpu, min(cpus))
    print(f"shell_parse_length_limit: {MAX_COMMAND_LENGTH}")
    print(f"shell_parse_worst_case_ms: {worst_wall * 1000:.1f}")
    print(f"shell_parse_worst_case_cpu_ms: {worst_cpu * 1000:.1f}")
    print(f"shell_parse_worst_case_input: {short(worst_text, 30)}")
    for name, value in asyncio.run(exec_overhead(args.exec_runs)).items():
        print(f"{name}: {value:.2f}")
    for name, figure in asyncio.run(sandbox_overhead(args.exec_runs)).items():
        print(f"{name}: {figure:.2f}" if isinstance(figure, float) else f"{name}: {figure}")


if __name__ == "__main__":
    main()
