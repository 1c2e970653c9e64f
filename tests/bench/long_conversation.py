"""A stored 300-message conversation reopened in the AI panel: what it costs in memory, how long
it takes to show (and the longest GUI stall meanwhile), and the longest GUI stall while scrolling
up to the top of what is shown (which loads the page before it) and back down to the end.

Used by bench_ui_responsiveness (``measure_long_conversation``); runs in a fresh process of its
own (``python tests/bench/long_conversation.py``), so the figures are the conversation's only.
Prints `name: value` lines.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
MESSAGES = 300
HEARTBEAT_MS = 16

_ANSWER = """## Step {n}: what changed

Here is the **change** for part {n}, with a `helper` and a list:

- read `src/module_{n}.py`
- adjust the *parser* (see below)
- run the tests

```python
def parse_{n}(text: str) -> list[str]:
    \"\"\"Split on commas, dropping blanks.\"\"\"
    return [part.strip() for part in text.split(",") if part.strip()]
```

> Note: the old behaviour kept empty parts.

| file | lines |
| --- | --- |
| src/module_{n}.py | {n} |
"""


def store_long_conversation(services: Any, messages: int = MESSAGES) -> int:
    """A conversation of ``messages`` stored messages: prompts, Markdown answers (heading,
    list, code block, quote, table) and, every third exchange, a tool call with its result and
    audit row (a tool card). Returns its id."""
    conversations, audit = services.conversations, services.audit
    conversation = conversations.create(title="A long conversation")
    cid = conversation.id
    stored = n = 0
    while stored < messages:
        n += 1
        conversations.append(cid, "user", f"Please do part {n} of the refactoring.")
        stored += 1
        if n % 3 == 0 and stored + 3 <= messages:
            tool_id = f"toolu_{n:04d}"
            tool_input = {"path": f"src/module_{n}.py"}
            conversations.append(cid, "assistant", [
                {"type": "text", "text": f"Reading module {n} first."},
                {"type": "tool_use", "id": tool_id, "name": "read_file", "input": tool_input}])
            output = "\n".join(f"{i:4d}  line {i} of module {n}" for i in range(1, 41))
            conversations.append(cid, "user", [
                {"type": "tool_result", "tool_use_id": tool_id, "content": output}])
            audit.record(tool_name="read_file", server_id="builtin", tool_input=tool_input,
                         decision="allow", outcome="executed", output=output,
                         duration_ms=3, conversation_id=cid, tool_use_id=tool_id)
            stored += 2
        if stored < messages:
            conversations.append(cid, "assistant", _ANSWER.format(n=n))
            stored += 1
    return cid


def _rss_mb() -> float:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:")) / 1024


def measure_long_conversation() -> dict[str, float]:
    import gc

    from PySide6.QtCore import QEventLoop, QTimer
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([])
    from app.core.services import build_services
    from app.core.store.db import open_database
    from app.ui.deferred_imports import DEFERRED_UI_MODULES
    from app.ui.gc_guard import MainThreadGarbageCollector
    from app.ui.main_window import MainWindow

    collector = MainThreadGarbageCollector(app)  # as app.main: collections on the GUI thread
    data = Path(tempfile.mkdtemp(prefix="tebiki-bench-long-"))
    project = data / "project"
    project.mkdir()
    db = open_database(data / "tebiki.sqlite3")
    services = build_services(db, data, project)
    cid = store_long_conversation(services)
    window = MainWindow(services=services, project_root=project)
    window.resize(1200, 780)
    window.show()
    from app.core.warmup import import_all

    import_all(DEFERRED_UI_MODULES)  # as after ready in the app: the cards' modules are loaded
    app.processEvents()
    gc.collect()
    before = _rss_mb()

    gaps: list[float] = []
    last = [time.perf_counter()]

    def beat() -> None:
        now = time.perf_counter()
        gaps.append(now - last[0])
        last[0] = now

    def stall() -> float:
        return max(0.0, (max(gaps) - HEARTBEAT_MS / 1000) * 1000) if gaps else 0.0

    def run_until(done: Any) -> None:
        while not done():
            app.processEvents(QEventLoop.ProcessEventsFlag.WaitForMoreEvents)

    heartbeat = QTimer()
    heartbeat.setInterval(HEARTBEAT_MS)
    heartbeat.timeout.connect(beat)
    heartbeat.start()
    last[0] = start = time.perf_counter()
    # As AIPanel.load_conversation: the conversation's end at once, the rest of its window in
    # batches while the event loop runs.
    pager = window.ai_panel.conversations.open(cid)
    run_until(lambda: not pager.busy)
    app.processEvents()  # laid out and painted
    load_ms = (time.perf_counter() - start) * 1000
    beat()
    open_stall = stall()
    after_load = _rss_mb()

    bar = window.ai_panel.transcript.verticalScrollBar()
    stable = 0
    while stable < 3:  # until the layout has settled (messages fit their heights in passes)
        height = bar.maximum()
        app.processEvents()
        stable = stable + 1 if bar.maximum() == height else 0
    gaps.clear()
    steps = [0]
    reached_top = [False]
    loop = QEventLoop()

    def scroll() -> None:
        """Half a page per frame, as a fast wheel: up to the top of what is shown (which
        loads the page before it, above), then down to the end."""
        steps[0] += 1
        if not reached_top[0]:
            bar.setValue(max(bar.value() - max(bar.pageStep() // 2, 1), 0))
            reached_top[0] = bar.value() == 0
        elif pager.busy:
            return
        elif bar.value() >= bar.maximum():
            loop.quit()
        else:
            bar.setValue(bar.value() + max(bar.pageStep() // 2, 1))

    scroller = QTimer()
    scroller.setInterval(HEARTBEAT_MS)
    scroller.timeout.connect(scroll)
    scroller.start()
    last[0] = time.perf_counter()
    loop.exec()
    heartbeat.stop()
    scroller.stop()
    after_scroll = _rss_mb()
    items = len(window.ai_panel.transcript.items())
    height = bar.maximum() + bar.pageStep()
    scroll_stall = stall()
    window.close()
    db.close()
    collector.stop()
    return {"messages": MESSAGES, "items": items, "load_ms": load_ms,
            "load_max_stall_ms": open_stall,
            "rss_growth_load_mb": after_load - before,
            "rss_growth_after_scroll_mb": after_scroll - before,
            "scroll_max_stall_ms": scroll_stall, "scroll_steps": steps[0],
            "document_height_px": height}


def main() -> None:
    figures = measure_long_conversation()
    print(f"ui_long_conversation_messages: {figures['messages']} "
          f"({figures['items']} transcript items, {figures['document_height_px']} px)")
    print(f"ui_long_conversation_load_ms: {figures['load_ms']:.0f} "
          f"(longest GUI stall {figures['load_max_stall_ms']:.0f} ms)")
    print(f"ui_long_conversation_rss_growth_mb: {figures['rss_growth_after_scroll_mb']:.1f} "
          f"(after loading: {figures['rss_growth_load_mb']:.1f})")
    print(f"ui_long_conversation_scroll_max_stall_ms: {figures['scroll_max_stall_ms']:.1f} "
          f"({figures['scroll_steps']} half-page steps)")


if __name__ == "__main__":
    main()
