"""Benchmark grep_search (rg path and Python path) against plain ``rg`` on the same tree.

Run: ``.venv/bin/python tests/bench/bench_grep.py``. Generates a deterministic ~100 MB
source-like tree in a temp dir, then times each variant on the same queries in the same run
(median of several interleaved runs after a warm-up round, so the page cache is hot for
everyone and background load hits every variant alike) and prints
``name: value`` lines. Goals (issue 3): rg path ≤ 1.3× plain rg, Python path ≤ 10× plain rg.
"""

from __future__ import annotations

import asyncio
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from app.core.tools.base import ToolContext
from app.core.tools.builtin.grep_search import create

TARGET_BYTES = int(os.environ.get("BENCH_GREP_MB", "100")) * 1024 * 1024
RUNS = int(os.environ.get("BENCH_GREP_RUNS", "7"))
SEED = 20240501

# (label, pattern, case_insensitive). "ident" is the everyday agent query (a literal-led
# identifier) and gives the headline ratios; "regex" has only a short literal, "ci" is
# case-insensitive, "broad" has no usable literal and matches ~190k lines (the worst case for
# the Python path, which must run the regex over all 100 MB and build every result).
QUERIES = (
    ("ident", r"handle_payment_\w+", False),
    ("regex", r"TODO\((alice|bob)\): .*cache", False),
    ("ci", r"handle_PAYMENT_\w+", True),
    ("broad", r"[0-9]{3}\)$", False),
)


def _words(rng: random.Random, n: int) -> list[str]:
    syll = ["ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "zen", "qu", "ix", "or", "pe", "da"]
    out = set()
    while len(out) < n:
        out.add("".join(rng.choice(syll) for _ in range(rng.randint(2, 4))))
    return sorted(out)


def generate(root: Path) -> int:
    """Write the tree; returns its size in bytes. Deterministic for a given SEED."""
    rng = random.Random(SEED)
    words = _words(rng, 3000)
    types = ["int", "str", "bytes", "list[str]", "dict[str, int]", "Path", "None"]

    def w() -> str:
        return rng.choice(words)

    templates: list[Callable[[], str]] = [
        lambda: f"def {w()}_{w()}(self, {w()}: {rng.choice(types)}) -> {rng.choice(types)}:",
        lambda: f"        {w()} = {w()}.{w()}({w()}, {rng.randint(0, 999)})",
        lambda: f"    # {w()} {w()} {w()} {w()} {w()}",
        lambda: f"import {w()}.{w()}",
        lambda: f"        return {w()}({w()}, {w()}={w()})",
        lambda: "",
        lambda: f"class {w().capitalize()}{w().capitalize()}({w().capitalize()}):",
        lambda: f"    // TODO({rng.choice(['carol', 'dave', 'erin'])}): {w()} {w()} {w()}",
        lambda: f"        if {w()} is not None and {w()} > {rng.randint(0, 99)}:",
        lambda: f'            raise {w().capitalize()}Error("{w()} {w()} failed")',
        lambda: (f"    let {w()}: Vec<{w().capitalize()}> = "
                 f"{w()}.iter().map(|x| x.{w()}()).collect();"),
    ]
    pool = [rng.choice(templates)() for _ in range(60_000)]
    needles = [f"        result = handle_payment_{w()}(order, {w()})",
               f"    // TODO(alice): flush the {w()} cache before {w()}",
               f"    // TODO(bob): {w()} cache is stale"]
    total = 0
    n = 0
    (root / ".gitignore").write_text("build/\n*.min.js\n")
    while total < TARGET_BYTES:
        d = root / f"pkg{n % 23:02d}" / f"mod{(n // 23) % 11:02d}"
        d.mkdir(parents=True, exist_ok=True)
        lines = rng.choices(pool, k=rng.randint(150, 700))
        if rng.random() < 0.02:
            for _ in range(rng.randint(1, 3)):
                lines.insert(rng.randrange(len(lines)), rng.choice(needles))
        data = ("\n".join(lines) + "\n").encode()
        if rng.random() < 0.01:
            data = data[:200] + b"\x00\x01\x02" + data[200:]  # a binary file
        name = f"{w()}_{n}.{rng.choice(['py', 'rs', 'ts', 'go'])}"
        (d / name).write_bytes(data)
        total += len(data)
        n += 1
        if n % 50 == 0:  # ignored content: searched by neither
            b = root / "build" / f"b{n}"
            b.mkdir(parents=True, exist_ok=True)
            (b / "out.py").write_bytes(data)
    return total


def interleaved_medians(fns: dict[str, Callable[[], object]], runs: int = RUNS
                        ) -> dict[str, float]:
    """Median ms per variant, running the variants round-robin so that load from other
    processes on the machine hits all of them alike (one warm-up round first)."""
    times: dict[str, list[float]] = {name: [] for name in fns}
    for round_ in range(runs + 1):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            if round_:
                times[name].append((time.perf_counter() - t0) * 1000)
    return {name: statistics.median(ts) for name, ts in times.items()}


def main() -> int:
    rg = shutil.which("rg")
    if rg is None:
        print("error: ripgrep (rg) is not installed; the baseline needs it", file=sys.stderr)
        return 1
    tmp = Path(tempfile.mkdtemp(prefix="tebiki-bench-grep-"))
    try:
        t0 = time.perf_counter()
        size = generate(tmp)
        gen_s = time.perf_counter() - t0
        files = sum(1 for _ in tmp.rglob("*") if _.is_file())
        print(f"tree_mb: {size / 1024 / 1024:.1f}")
        print(f"tree_files: {files}")
        print(f"tree_generate_s: {gen_s:.1f}")
        tool = create()
        ctx_rg = ToolContext(project_root=tmp, tool_config={"grep_search": {"use_rg": True}})
        ctx_py = ToolContext(project_root=tmp, tool_config={"grep_search": {"use_rg": False}})

        def run_tool(ctx: ToolContext, pattern: str, ci: bool) -> str:
            result = asyncio.run(tool.execute({"pattern": pattern, "case_insensitive": ci}, ctx))
            assert not result.is_error, result.content
            return result.content

        def plain_argv(pattern: str, ci: bool) -> list[str]:
            return [rg, "-n", *(["-i"] if ci else []), "-e", pattern, str(tmp)]

        for label, pattern, ci in QUERIES:
            same = run_tool(ctx_rg, pattern, ci) == run_tool(ctx_py, pattern, ci)
            plain = subprocess.run(plain_argv(pattern, ci), capture_output=True, check=False)
            matching = plain.stdout.count(b"\n")
            print(f"grep_{label}_matching_lines: {matching}")
            print(f"grep_{label}_backends_identical_output: {str(same).lower()}")
            ms = interleaved_medians({
                "plain": lambda p=pattern, c=ci: subprocess.run(
                    plain_argv(p, c), capture_output=True, check=False),
                "rg": lambda p=pattern, c=ci: run_tool(ctx_rg, p, c),
                "py": lambda p=pattern, c=ci: run_tool(ctx_py, p, c),
            })
            print(f"grep_{label}_plain_rg_ms: {ms['plain']:.1f}")
            print(f"grep_{label}_rg_path_ms: {ms['rg']:.1f}")
            print(f"grep_{label}_python_path_ms: {ms['py']:.1f}")
            print(f"grep_{label}_rg_path_vs_plain_rg_ratio: {ms['rg'] / ms['plain']:.2f}")
            print(f"grep_{label}_python_path_vs_plain_rg_ratio: {ms['py'] / ms['plain']:.2f}")
            if label == "ident":  # the headline figures
                print(f"grep_rg_path_vs_plain_rg_ratio: {ms['rg'] / ms['plain']:.2f}")
                print(f"grep_python_path_vs_plain_rg_ratio: {ms['py'] / ms['plain']:.2f}")
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
