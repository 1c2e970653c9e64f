"""Syntax colours for a 2,000-line code block: how long they hold the GUI thread.

A 1 ms heartbeat timer runs on the GUI thread while a message with a 2,000-line Python block is
rendered and then coloured (Pygments lexes in a worker; the GUI merges the colours a few
milliseconds at a time); the longest gap between heartbeats minus 1 ms is the stall. The
baseline is the same block fenced as a language Pygments does not know (rendered, never
coloured), measured in the same run. Goal: colouring adds ≤ 10 ms to the longest stall.
Prints `name: value` lines.
"""

from __future__ import annotations

import itertools
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

LINES = 2000
ROUNDS = 5
HEARTBEAT_MS = 1


def _block(language: str) -> str:
    code = "\n".join(f"def handler_{i}(request, value={i}):  # step {i}\n"
                     f"    return {{'id': {i}, 'name': \"item {i}\", 'ok': value > 3}}"
                     for i in range(LINES // 2))
    return f"The code:\n\n```{language}\n{code}\n```\n\nThat is all.\n"


def _measure(application: QApplication, language: str) -> tuple[float, float, float]:
    """(the render's own GUI time, the longest stall after it, the time until coloured) in
    ms. The render (Markdown to a document, then its layout) is the same for both fences;
    what colouring adds comes after it, while the worker lexes and the colours are merged."""
    from app.ui.widgets.transcript_view import MessageView, Transcript

    # In a transcript of a window's size, as the panel shows it: only what is in view paints.
    transcript = Transcript()
    transcript.resize(700, 600)
    view = MessageView("")
    transcript.add(view)
    transcript.show()
    application.processEvents()
    started = time.perf_counter()
    view.set_markdown(_block(language))
    application.processEvents()  # the layout of the new text
    rendered = time.perf_counter()
    beats = [rendered]
    timer = QTimer()
    timer.setInterval(HEARTBEAT_MS)
    timer.timeout.connect(lambda: beats.append(time.perf_counter()))
    timer.start()
    colouring = view._stream.code_colouring
    deadline = rendered + 30
    while (not colouring.idle() or time.perf_counter() - rendered < 0.3) and \
            time.perf_counter() < deadline:
        application.processEvents()
        time.sleep(0.0002)
    timer.stop()
    done = time.perf_counter()
    gaps = [b - a for a, b in itertools.pairwise(beats)]
    transcript.deleteLater()
    application.processEvents()
    stall = max(max(gaps, default=0.0) * 1000 - HEARTBEAT_MS, 0.0)
    return (rendered - started) * 1000, stall, (done - rendered) * 1000


def main() -> None:
    application = QApplication.instance() or QApplication([])
    assert isinstance(application, QApplication)
    import importlib

    from app.core.warmup import BASE_RUN_MODULES

    for name in BASE_RUN_MODULES:  # as the warm-up has loaded them before any answer
        if name.startswith("pygments"):
            importlib.import_module(name)
    _measure(application, "python")  # the lexer module and the first layout: not measured
    plain, coloured = [], []
    for _ in range(ROUNDS):  # interleaved, so a slow spell of the machine weighs on both
        plain.append(_measure(application, "notalanguage"))
        coloured.append(_measure(application, "python"))
    plain_render = statistics.median(p[0] for p in plain)
    coloured_render = statistics.median(c[0] for c in coloured)
    plain_stall = statistics.median(p[1] for p in plain)
    coloured_stall = statistics.median(c[1] for c in coloured)
    added = max(coloured_render - plain_render, 0.0) + max(coloured_stall - plain_stall, 0.0)
    print(f"code_colour_block_lines: {LINES}")
    print(f"code_colour_render_plain_ms: {plain_render:.1f}")
    print(f"code_colour_render_coloured_ms: {coloured_render:.1f}")
    print(f"code_colour_stall_after_render_plain_ms: {plain_stall:.1f}")
    print(f"code_colour_stall_after_render_coloured_ms: {coloured_stall:.1f}")
    print(f"code_colour_added_stall_ms: {added:.1f} (goal ≤ 10)")
    print(f"code_colour_until_coloured_ms: {statistics.median(c[2] for c in coloured):.0f}")


if __name__ == "__main__":
    main()
