"""Fuzz the shell parser and the permission service in child processes.

Two uses:

- tests/security/test_parser_fuzz.py runs the fixed corpus (:func:`corpus`, fixed seed).
- ``python tests/security/fuzz_parser.py --seconds 60`` explores random inputs until the time is
  up; it exits 1 on the first crash, exception or hang and saves the batch that caused it.

Why child processes: the failures hunted here are crashes inside the C parser (tree-sitter's
bash grammar segfaulted on ``{`` followed by some high-plane code points), which would take the
test runner down with them; a child's negative return code names the signal instead. Inputs go
to the child as JSON on stdin (``ensure_ascii`` escapes lone surrogates, which UTF-8 cannot
carry), and every input is run several times because memory corruption only crashes some runs.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # run as a script: make `app` importable
    sys.path.insert(0, str(ROOT))

from app.core.tools.shell.syntax import MAX_COMMAND_LENGTH  # noqa: E402

CORPUS_SEED = 20_261_123
# A parse (plus one decide) taking this much CPU time counts as a failure. Far above the
# ~50 ms design bound, so a loaded machine cannot make it flaky; a real regression (the old
# parser needed 7-20 s for operator floods) still trips it.
SLOW_CALL_S = 1.0

# Runs in the child: parse_command and ToolPermissionService.decide on every input, `repeats`
# times; prints one JSON report. Problems are collected per input rather than raised, so the
# parent can say which input failed; a crash or hang is seen from outside.
CHILD_SCRIPT = r"""
import json, sys, time, traceback
from pathlib import Path

request = json.load(sys.stdin)
sys.path.insert(0, request["root"])
from app.core.permissions.repository import RuleRepository
from app.core.permissions.rules import PermissionRule
from app.core.permissions.service import ToolPermissionService
from app.core.store.db import open_database
from app.core.tools.shell.syntax import parse_command

db = open_database(Path(request["db"]))
# decide() only parses the command when some shell_exec rule has an input pattern.
RuleRepository(db).replace_all([
    PermissionRule(decision="allow", tool_name="shell_exec", input_pattern="ls*", priority=10),
    PermissionRule(decision="deny", tool_name="shell_exec", input_pattern="rm *"),
])
service = ToolPermissionService(db)
errors = []
worst = (0.0, -1)
for index, command in enumerate(request["inputs"]):
    for _ in range(request["repeats"]):
        started = time.thread_time()
        try:
            parsed = parse_command(command)
            parse_s = time.thread_time() - started
            decision = service.decide("builtin", "shell_exec", {"command": command})
        except BaseException:
            errors.append([index, "exception: " + traceback.format_exc()])
            break
        took = time.thread_time() - started
        if parse_s > worst[0]:
            worst = (parse_s, index)
        if took > request["slow_s"]:
            errors.append([index, f"slow: {took * 1000:.0f} ms CPU for parse + decide"])
        if any("internal parser error" in p for p in parsed.problems):
            errors.append([index, f"internal parser error: {parsed.problems}"])
        # Accepted text must be read back verbatim from the input (byte offsets line up).
        if parsed.ok and any(c.text not in command for c in parsed.commands):
            errors.append([index, "an accepted command's text is not part of the input"])
        if not parsed.ok and decision.kind == "allow":
            errors.append([index, "a refused command was auto-approved"])
        if errors and errors[-1][0] == index:
            break
service.close()
db.close()
print(json.dumps({"count": len(request["inputs"]), "errors": errors,
                  "worst_parse_ms": worst[0] * 1000, "worst_index": worst[1]}))
"""


@dataclass
class BatchResult:
    inputs: list[str]
    returncode: int | None  # None: the child hung and was killed
    stderr: str = ""
    errors: list[tuple[int, str]] = field(default_factory=list)
    worst_parse_ms: float = 0.0
    worst_input: str = ""

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.stderr.strip() and not self.errors

    def describe(self) -> str:
        """What went wrong, for an assertion message or the CLI."""
        if self.returncode is None:
            return f"hang: the child did not finish ({len(self.inputs)} inputs)"
        lines = []
        if self.returncode < 0:
            lines.append(f"child killed by signal {signal.Signals(-self.returncode).name} "
                         f"({len(self.inputs)} inputs)")
        elif self.returncode != 0:
            lines.append(f"child exited with {self.returncode}")
        if self.stderr.strip():
            lines.append("stderr: " + self.stderr.strip()[-2000:])
        for index, message in self.errors[:10]:
            lines.append(f"input {index} {short(self.inputs[index])}: {message}")
        return "\n".join(lines) or "ok"


def short(text: str, limit: int = 80) -> str:
    """A readable, bounded repr of a (possibly huge) input."""
    if len(text) <= limit:
        return ascii(text)
    return f"{text[:limit]!a}... ({len(text)} chars)"


def run_batch(inputs: Sequence[str], *, db_path: Path, repeats: int = 3, timeout: float = 120.0,
              script: str = CHILD_SCRIPT) -> BatchResult:
    """Run ``inputs`` through the parser and the permission service in a fresh child process."""
    request = json.dumps({"root": str(ROOT), "db": str(db_path), "inputs": list(inputs),
                          "repeats": repeats, "slow_s": SLOW_CALL_S}, ensure_ascii=True)
    # faulthandler: a crash prints the Python stack to stderr (and still ends by the signal).
    env = {**os.environ, "TEBIKI_DATA_DIR": str(db_path.parent), "PYTHONFAULTHANDLER": "1"}
    try:
        proc = subprocess.run([sys.executable, "-c", script], input=request.encode("ascii"),
                              capture_output=True, timeout=timeout, env=env, cwd=ROOT)
    except subprocess.TimeoutExpired:
        return BatchResult(list(inputs), None)
    result = BatchResult(list(inputs), proc.returncode, proc.stderr.decode("utf-8", "replace"))
    if proc.returncode == 0:
        try:
            report = json.loads(proc.stdout)
        except ValueError:
            result.errors.append((0, f"unreadable report: {proc.stdout[-500:]!r}"))
            return result
        result.errors = [(int(i), str(m)) for i, m in report["errors"]]
        result.worst_parse_ms = float(report["worst_parse_ms"])
        if report["worst_index"] >= 0:
            result.worst_input = result.inputs[report["worst_index"]]
    return result


def run_batches(batches: Sequence[Sequence[str]], *, workdir: Path, repeats: int = 3,
                timeout: float = 120.0, jobs: int = 2) -> list[BatchResult]:
    """Run several batches, ``jobs`` children at a time, each with its own database."""
    def one(item: tuple[int, Sequence[str]]) -> BatchResult:
        number, inputs = item
        db_dir = workdir / f"batch{number}"
        db_dir.mkdir(parents=True, exist_ok=True)
        return run_batch(inputs, db_path=db_dir / "t.sqlite3", repeats=repeats, timeout=timeout)

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        return list(pool.map(one, enumerate(batches)))


def split_balanced(inputs: Sequence[str], parts: int) -> list[list[str]]:
    """Split into ``parts`` batches of similar total length (long inputs dominate the cost)."""
    batches: list[list[str]] = [[] for _ in range(parts)]
    sizes = [0] * parts
    for text in sorted(inputs, key=len, reverse=True):
        smallest = sizes.index(min(sizes))
        batches[smallest].append(text)
        sizes[smallest] += len(text) + 50  # +50: fixed cost per input
    return [b for b in batches if b]


# --- inputs ---------------------------------------------------------------------------------

# Building blocks that reach many grammar states of tree-sitter-bash.
SHELL_TOKENS = [
    *"ab -'\"\\\n\t{},.=!%:@^]#~;|&()<>$`*?[/+_0123", "&&", "||", "|&", ";;", ";&", "<<", "<<<",
    "<<-", ">>", ">&", "&>", "2>&1", "<(", ">(", "$(", "${", "$((", "((", "))", "[[", "]]",
    "$'", '$"', "ls ", "echo ", "git status", "rm -rf x", "if ", "then ", "fi", "for ", "in ",
    "do ", "done", "case ", "esac", "while ", "{ ", " }", "function ", "x=", "HEAD@{1}", "{1..3}",
    "{a,b}", "\\\n", "EOF\n", "#", "!", "=~", "$@", "$#", "$?", "$1", "@(", "+(", "!(",
]

# Code points worth hitting in every context, beyond the random samples per plane.
SPECIAL_CODE_POINTS = [
    *range(0x00, 0x20), 0x7F, *range(0x80, 0xA0, 7),            # C0 / DEL / C1 controls
    0x00A0, 0x1680, 0x2000, 0x200B, 0x200D, 0x2028, 0x2029, 0x202E, 0x2066, 0x3000, 0xFEFF,
    0x0300, 0x0301, 0x036F, 0x0489, 0x1AB0, 0x20D0, 0x20E3, 0xFE20, 0x1DC0,  # combining marks
    0xD800, 0xDB7F, 0xDBFF, 0xDC00, 0xDFFF,                     # lone surrogates
    0xE000, 0xF8FF, 0xF0000, 0xFFFFD, 0x100000, 0x10FFFD,       # private use
    0xFDD0, 0xFFFE, 0xFFFF, 0x1FFFE, 0x10FFFF,                  # noncharacters
    0xE0001, 0xE0041, 0xE0100, 0xE01EF,                         # tags, variation selectors
    0xDC8A2, 0x60000, 0x7FFFF,                                  # the crash class
    0x1F600, 0x20000, 0x2FFFF, 0x30000, 0x3134A,                # emoji, CJK ext
]

# Contexts a code point is put in: `{}` is where the character goes.
CONTEXTS = ["{}", "{{{}", "{}{{", "${}", "${{{}}}", "$({})", "'{}'", '"{}"', "\\{}", "echo {}",
            "echo a{}b", "echo {{{},b}}", "{}=1 ls", "ls <<{}", "`{}`", "[{}]", "{}@x", "ls {}|{}",
            "$'{}'", "{}#"]

NEST_UNITS = ["(", "{", "$(", "${", "`", '"$(', "$((", "[", "((", "<(", "'", '"', "{ ", "( ",
              "if a; then ", "! ", "$[", "\\", "[[ ", "x=$(", "{{{\U000dc8a2"]

FLOOD_UNITS = [")", "<<", "|", "&&", "||", ";", ";;", "&", "|&", ">", "<", ">>", "<<<", ">&",
               "&>", "2>&1 ", "}", "]]", "))", "a|", "a)", "|a", "${a", "fi ", "done ", "esac ",
               "then ", "`", "a;", "a\n", "! ", "a ", "$(a)", "\u00e9)", ")\U000dc8a2",
               "{\U000e0100", "<<EOF\n", "\"a\" ", "'a' "]


def plane_samples(rng: random.Random, per_plane: int = 6) -> list[int]:
    """Code points from every plane 0-16: random ones (mostly unassigned above plane 3) plus
    each plane's first and last."""
    points: list[int] = []
    for plane in range(17):
        base = plane << 16
        points += [base, base + 0xFFFD]
        points += [base + rng.randrange(0x10000) for _ in range(per_plane)]
    return points


def nested(unit: str, depth: int) -> str:
    closers = {"(": ")", "{": "}", "$(": ")", "${": "}", "`": "`", '"$(': ')"', "$((": "))",
               "[": "]", "((": "))", "<(": ")", "'": "'", '"': '"', "{ ": "; }", "( ": " )",
               "if a; then ": " fi", "$[": "]", "[[ ": " ]]", "x=$(": ")"}
    return unit * depth + "ls" + closers.get(unit, "") * depth


def corpus(seed: int = CORPUS_SEED) -> list[str]:
    """The fixed fuzz corpus: every plane, control and odd characters in shell contexts, deep
    nesting, operator floods and inputs at (and just over) the length limit."""
    rng = random.Random(seed)
    limit = MAX_COMMAND_LENGTH
    out: list[str] = []
    points = sorted(set(plane_samples(rng) + SPECIAL_CODE_POINTS))
    for cp in points:
        ch = chr(cp)
        out += [ctx.replace("{}", ch) for ctx in CONTEXTS]
        out.append(ch * 3)
    for unit in NEST_UNITS:
        for depth in (63, 64, 65, 500):
            out.append(nested(unit, depth))
        out.append(unit * (limit // len(unit)))
    for unit in FLOOD_UNITS:
        for length in (2_000, limit, limit + 1):
            out.append((unit * (length // len(unit) + 1))[:length])
    for _ in range(12):  # random token soup and code points, exactly at the limit
        out.append(soup(rng, limit))
    out += ["", " ", "\n" * limit, "a" * limit, "a" * (limit + 1),
            "\ud800" * limit, "\U0010ffff" * limit, "\u0301" * limit]
    return out


def random_code_point(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.3:
        return chr(rng.choice(SPECIAL_CODE_POINTS))
    if roll < 0.5:
        return chr(rng.randrange(0x80, 0x800))
    return chr(rng.randrange(0x110000))  # any plane, surrogates included


def soup(rng: random.Random, length: int) -> str:
    parts: list[str] = []
    size = 0
    while size < length:
        piece = rng.choice(SHELL_TOKENS) if rng.random() < 0.8 else random_code_point(rng)
        parts.append(piece)
        size += len(piece)
    return "".join(parts)[:length]


def random_inputs(rng: random.Random, count: int, seeds: Sequence[str] = ()) -> list[str]:
    """Random inputs for exploration: token soup, floods, nesting and corpus mutations."""
    limit = MAX_COMMAND_LENGTH
    out: list[str] = []
    for _ in range(count):
        kind = rng.randrange(5)
        # log-uniform lengths: most inputs short, some at the limit
        length = min(limit + 2, int(2 ** rng.uniform(0, 13.3)))
        if kind == 0:
            out.append(soup(rng, length))
        elif kind == 1:
            unit = "".join(rng.choice(SHELL_TOKENS) for _ in range(rng.randint(1, 3)))
            if rng.random() < 0.3:
                unit += random_code_point(rng)
            out.append((unit * (length // max(1, len(unit)) + 1))[:length])
        elif kind == 2:
            depth = rng.randint(1, 90)
            openers = [rng.choice(NEST_UNITS) for _ in range(depth)]
            out.append("".join(openers) + soup(rng, rng.randint(0, 20)))
        elif seeds:
            text = rng.choice(seeds)
            out.append(mutate(rng, text))
        else:
            out.append(soup(rng, length))
    return out


def mutate(rng: random.Random, text: str) -> str:
    for _ in range(rng.randint(1, 4)):
        pos = rng.randint(0, len(text))
        roll = rng.randrange(4)
        if roll == 0:
            text = text[:pos] + random_code_point(rng) + text[pos:]
        elif roll == 1:
            text = text[:pos] + rng.choice(SHELL_TOKENS) + text[pos:]
        elif roll == 2 and text:
            end = min(len(text), pos + rng.randint(1, 8))
            text = text[:end] + text[pos:end] * rng.randint(2, 200) + text[end:]
        else:
            text = text[:pos]
    return text[:MAX_COMMAND_LENGTH + 2]


# --- exploration CLI --------------------------------------------------------------------------

def explore(seconds: float, seed: int, jobs: int,
            batch_size: int) -> Iterator[tuple[int, BatchResult]]:
    """Yield (batch seed, result) for random batches until ``seconds`` have passed."""
    seeds = [t for t in corpus() if len(t) < 200]
    deadline = time.monotonic() + seconds
    number = 0
    with tempfile.TemporaryDirectory(prefix="tebiki-fuzz-") as tmp:
        while time.monotonic() < deadline:
            batch_seeds = [seed + number + i for i in range(jobs)]
            number += jobs
            batches = [random_inputs(random.Random(s), batch_size, seeds) for s in batch_seeds]
            remaining = max(30.0, deadline - time.monotonic() + 30.0)
            results = run_batches(batches, workdir=Path(tmp), repeats=2, jobs=jobs,
                                  timeout=remaining)
            yield from zip(batch_seeds, results, strict=True)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="how long to explore")
    parser.add_argument("--seed", type=int, default=None, help="first batch seed (default: "
                        "from the clock; printed, so a run can be repeated)")
    parser.add_argument("--jobs", type=int, default=2, help="child processes at a time")
    parser.add_argument("--batch", type=int, default=300, help="inputs per child")
    parser.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "tebiki-fuzz",
                        help="where a failing batch is saved")
    args = parser.parse_args(argv)
    seed = args.seed if args.seed is not None else int(time.time())
    print(f"fuzz_seed: {seed}", flush=True)
    inputs = batches = 0
    worst = (0.0, "")
    for batch_seed, result in explore(args.seconds, seed, args.jobs, args.batch):
        batches += 1
        inputs += len(result.inputs)
        if result.worst_parse_ms > worst[0]:
            worst = (result.worst_parse_ms, result.worst_input)
        if not result.ok:
            args.out.mkdir(parents=True, exist_ok=True)
            saved = args.out / f"failure-{batch_seed}.json"
            saved.write_text(json.dumps({"seed": batch_seed, "inputs": result.inputs,
                                         "problem": result.describe()}, ensure_ascii=True))
            print(f"FAILURE in batch seed {batch_seed}:\n{result.describe()}\n"
                  f"inputs saved to {saved}", flush=True)
            return 1
    print(f"fuzz_batches: {batches}")
    print(f"fuzz_inputs: {inputs}")
    print(f"fuzz_worst_parse_ms: {worst[0]:.1f}")
    print(f"fuzz_worst_input: {short(worst[1])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
