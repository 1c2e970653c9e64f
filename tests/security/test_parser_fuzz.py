"""The shell parser and the permission service survive a fixed fuzz corpus in child processes.

Corpus and harness live in tests/security/fuzz_parser.py (also the entry point for longer random
exploration). A signal (negative return code), any stderr output, an exception, an internal
parser error, a call over ~1 s of CPU or a hung child fails the test.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.tools.shell.syntax import MAX_COMMAND_LENGTH
from tests.security.fuzz_parser import (
    BatchResult,
    corpus,
    run_batch,
    run_batches,
    split_balanced,
)

# Short inputs are cheap, so they run more often: a memory error may crash only some runs, and
# spreading them over several children varies the memory layout (the old `{` + high-plane crash
# hit about half of all fresh processes).
SHORT = 1_000
SHORT_BATCHES, SHORT_REPEATS = 4, 5
LONG_BATCHES, LONG_REPEATS = 2, 2


def failures(results: list[BatchResult]) -> str:
    return "\n\n".join(r.describe() for r in results if not r.ok)


def test_corpus_is_fixed_and_covers_the_input_classes() -> None:
    inputs = corpus()
    assert inputs == corpus()  # deterministic: fixed seed
    code_points = {ord(ch) for text in inputs if len(text) < 40 for ch in text}
    assert {cp >> 16 for cp in code_points} == set(range(17))  # every plane
    assert code_points & set(range(0xD800, 0xE000))  # lone surrogates
    assert {0x0301, 0xE0100, 0xDC8A2, 0x00, 0x1B, 0x7F} <= code_points
    assert any(len(t) == MAX_COMMAND_LENGTH for t in inputs)
    assert any(len(t) == MAX_COMMAND_LENGTH + 1 for t in inputs)
    assert any(t.startswith("$(" * 65) for t in inputs)
    assert any(t.startswith(")" * 100) for t in inputs)


def test_parser_and_permission_service_survive_the_corpus(tmp_path: Path) -> None:
    inputs = corpus()
    short = [t for t in inputs if len(t) < SHORT]
    long = [t for t in inputs if len(t) >= SHORT]
    results = run_batches(split_balanced(short, SHORT_BATCHES), workdir=tmp_path / "short",
                          repeats=SHORT_REPEATS)
    results += run_batches(split_balanced(long, LONG_BATCHES), workdir=tmp_path / "long",
                           repeats=LONG_REPEATS)
    assert sum(len(r.inputs) for r in results) == len(inputs)
    assert all(r.ok for r in results), failures(results)


# --- the harness itself must notice each kind of failure ------------------------------------

@pytest.mark.parametrize(
    ("script", "expected"),
    [
        ("import os, signal; os.kill(os.getpid(), signal.SIGSEGV)", "SIGSEGV"),
        ("raise RuntimeError('boom')", "boom"),
        ("import signal; signal.pause()", "hang"),
    ],
    ids=["signal", "exception", "hang"],
)
def test_harness_reports_crashes_exceptions_and_hangs(tmp_path: Path, script: str,
                                                      expected: str) -> None:
    # signal.pause() never returns: the 2 s timeout is the only way out, not a race.
    result = run_batch(["ls"], db_path=tmp_path / "t.sqlite3", script=script, timeout=2)
    assert not result.ok
    assert expected in result.describe()


def test_harness_reports_problems_found_inside_the_child(tmp_path: Path) -> None:
    # The real child script, with a parser that fails closed on everything: the harness must
    # surface the internal error the child found.
    from tests.security.fuzz_parser import CHILD_SCRIPT

    broken = CHILD_SCRIPT.replace(
        "from app.core.tools.shell.syntax import parse_command",
        "import app.core.tools.shell.syntax as _s\n"
        "_s._parse = lambda command: 1 / 0\n"
        "from app.core.tools.shell.syntax import parse_command")
    assert broken != CHILD_SCRIPT
    result = run_batch(["ls -la"], db_path=tmp_path / "t.sqlite3", script=broken, repeats=1)
    assert not result.ok
    assert "internal parser error" in result.describe()
