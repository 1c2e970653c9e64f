"""Render README screenshots: run under Xvfb with a window manager, e.g.

    xvfb-run -a -s '-screen 0 1400x900x24' sh -c 'openbox & sleep 1; \
        .venv/bin/python scripts/take_screenshots.py'

Drives the real main window against the fake Messages API from the tests, in a small Python
project with a few earlier conversations: an edit that asks for approval (the dialog, with
"remember in this conversation only"), a question answered in Markdown (heading, code block,
list, table), the project's conversations searched, a long request that fills most of the
context window (the usage line and the context bar offering Compact), and the rules settings.
Writes PNGs to resources/screenshots/. Needs ImageMagick (``import`` grabs the screen) and
xdotool (moves the pointer over a code block, so its Copy button shows).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
OUT = ROOT / "resources" / "screenshots"

PROJECT_FILES = {
    "README.md": "# invoice-tools\n\nParse supplier invoices (CSV and PDF text) into one "
                 "ledger format.\n",
    "pyproject.toml": '[project]\nname = "invoice-tools"\nversion = "0.4.0"\n'
                      'requires-python = ">=3.11"\n',
    "src/invoices/__init__.py": "",
    "src/invoices/dates.py": '''"""Invoice dates as the suppliers write them."""

from datetime import date, datetime

FORMATS = ("%Y-%m-%d", "%d.%m.%Y", "%d/%m/%Y")


def parse_date(text: str) -> date:
    for fmt in FORMATS:
        try:
            return datetime.strptime(text.strip(), fmt).date()
        except ValueError:
            continue
    raise ValueError(f"not an invoice date: {text!r}")
''',
    "src/invoices/ledger.py": "from invoices.dates import parse_date\n",
    "tests/test_dates.py": '''import pytest

from invoices.dates import parse_date


@pytest.mark.parametrize("text", ["2026-03-01", "01.03.2026", "01/03/2026"])
def test_formats(text):
    assert str(parse_date(text)) == "2026-03-01"


def test_rejects_us_dates():
    with pytest.raises(ValueError):
        parse_date("03/31/2026")
''',
    "doc/guide.md": "# Importing invoices\n\nDates must be written as MM/DD/YYYY.\n\n"
                    "## Running\n\n`invoice-tools import FILE`\n",
}

# Earlier conversations of the project: (title, days ago, prompt, answer).
HISTORY = [
    ("Add a CSV export of the ledger", 0.2,
     "Add a CSV export of the ledger with one row per invoice line.",
     "Added `export_csv()` in ledger.py; every date is written as ISO 8601."),
    ("Why does the March import fail?", 1,
     "The March import fails on the Norwegian supplier's invoices. Why?",
     "Their invoices write the date as 31.03.2026, a format the parser did not know."),
    ("Set up pytest and ruff", 6,
     "Set up pytest and ruff for this project.",
     "Added both to pyproject.toml and a `make check` target."),
    ("Rename Invoice.total to amount_due", 9,
     "Rename Invoice.total to amount_due everywhere.",
     "Renamed in 4 files; the tests pass."),
    ("Date formats in the supplier list", 23,
     "Which date formats do our suppliers use?",
     "ISO (3 suppliers), DD.MM.YYYY (2) and DD/MM/YYYY (1)."),
    ("Read PDF invoices with pdfplumber", 41,
     "Can we read the PDF invoices too?",
     "Yes: pdfplumber extracts the text; the totals table needs its own parser."),
]

ANSWER = """## How `parse_date` reads a date

It tries each format in `FORMATS` in order and returns the first that fits:

```python
FORMATS = ("%Y-%m-%d", "%d.%m.%Y", "%d/%m/%Y")

for fmt in FORMATS:
    try:
        return datetime.strptime(text.strip(), fmt).date()
    except ValueError:
        continue
```

- Surrounding spaces are ignored (`text.strip()`).
- A date that fits no format raises `ValueError` with the text in the message.
- US dates such as `03/31/2026` are **rejected**: `%d/%m/%Y` has no month 31.

### What the tests cover

| input | expected | test |
|---|---|---|
| `2026-03-01` | 1 March 2026 | `test_formats` |
| `01.03.2026` | 1 March 2026 | `test_formats` |
| `01/03/2026` | 1 March 2026 | `test_formats` |
| `03/31/2026` | `ValueError` | `test_rejects_us_dates` |

Not covered yet: two-digit years and dates with surrounding text."""


async def wait_for(condition, timeout: float = 30.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        if loop.time() > deadline:
            stalled = Path(tempfile.gettempdir()) / "tebiki-screenshots-stalled.png"
            subprocess.run(["import", "-window", "root", str(stalled)], check=False)
            raise TimeoutError(f"screenshot scenario stalled; the screen then: {stalled}")
        await asyncio.sleep(0.02)


async def settle(seconds: float = 0.6) -> None:
    """Let the window manager and pending repaints catch up before a grab."""
    await asyncio.sleep(seconds)


def screen(name: str) -> None:
    """The whole X screen, dialogs and all (what a person sees)."""
    subprocess.run(["import", "-window", "root", str(OUT / name)], check=True)


def region(name: str, top_widget, bottom_widget, margin: int = 8) -> None:
    """The part of the screen across ``top_widget``'s width, from its top to
    ``bottom_widget``'s bottom."""
    top = top_widget.mapToGlobal(top_widget.rect().topLeft())
    right = top_widget.mapToGlobal(top_widget.rect().bottomRight()).x()
    bottom = bottom_widget.mapToGlobal(bottom_widget.rect().bottomRight()).y()
    x, y = top.x() - margin, top.y() - margin
    w, h = right - x + margin, bottom - y + margin
    subprocess.run(["import", "-window", "root", "-crop", f"{w}x{h}+{x}+{y}", "+repage",
                    str(OUT / name)], check=True)


def hover_code(panel) -> None:
    """Move the pointer over the last answer's first code block: its message toolbar and the
    code block's Copy button appear, as they do for a person."""
    from PySide6.QtCore import QPoint

    from app.ui.widgets.message_actions import code_runs
    from app.ui.widgets.transcript_view import MessageView

    answer = [w for w in panel.transcript.items()
              if isinstance(w, MessageView) and w.role == "assistant"][-1]
    first, _last = code_runs(answer.document())[0]
    box = answer.document().documentLayout().blockBoundingRect(first)
    scroll = answer.verticalScrollBar().value()
    point = answer.viewport().mapToGlobal(QPoint(260, int(box.center().y()) - scroll))
    for dx in (0, 1):  # a second move: the view sees a MouseMove over the block
        subprocess.run(["xdotool", "mousemove", str(point.x() + dx), str(point.y())],
                       check=True)


def make_project(data: Path) -> Path:
    project = data / "invoice-tools"
    for relative, text in PROJECT_FILES.items():
        path = project / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return project


def seed_history(services, project: Path) -> None:
    repository = services.conversations
    now = datetime.now(UTC)
    for title, days, prompt, answer in HISTORY:
        conversation = repository.create(title=title, project_root=str(project))
        repository.append(conversation.id, "user", [{"type": "text", "text": prompt}])
        repository.append(conversation.id, "assistant", [{"type": "text", "text": answer}])
        stamp = (now - timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        with repository.store.transaction() as conn:
            conn.execute("UPDATE conversations SET created_at = ?, updated_at = ? WHERE id = ?",
                         (stamp, stamp, conversation.id))


async def ask(window, text: str) -> None:
    window.ai_panel.prompt.setPlainText(text)
    await settle(0.2)
    window.ai_panel.send()


async def scenario(app) -> None:
    from app.core.permissions.rules import PermissionRule
    from app.core.services import build_services
    from app.core.settings_fields import PERMISSION_MODE_CHOSEN
    from app.core.store.db import open_database
    from app.core.store.profiles import ToolSetting
    from app.ui.main_window import MainWindow
    from tests.fakes.anthropic_server import FakeAnthropicServer, Response, Text, tool

    # The data folder beside the project, not around it: Tebiki's own data folder is a
    # sensitive path, and everything under it would ask.
    base = Path(tempfile.mkdtemp(prefix="tebiki-demo-"))
    data = base / "data"
    data.mkdir()
    project = make_project(base)
    server = FakeAnthropicServer().start()
    os.environ["ANTHROPIC_BASE_URL"] = server.base_url
    os.environ["ANTHROPIC_API_KEY"] = "sk-ant-screenshot"
    server.script(
        # 1: an edit that asks for approval.
        Response.tools(tool("read_file", {"path": "src/invoices/dates.py"}),
                       text="I'll check which formats the parser accepts.", input_tokens=3120),
        Response.tool_use("edit_file", {
            "path": "doc/guide.md",
            "old_string": "Dates must be written as MM/DD/YYYY.\n",
            "new_string": "Dates may be written as YYYY-MM-DD, DD.MM.YYYY or DD/MM/YYYY.\n"
                          "US dates (MM/DD/YYYY) are rejected.\n"},
            text="The guide asks for US dates, which the parser rejects. I'll fix the guide.",
            input_tokens=3890),
        Response.of(Text("Done: `doc/guide.md` now lists the three formats `parse_date` "
                         "accepts and says that US dates are rejected."), input_tokens=4410),
        # 2: a question answered in Markdown.
        Response.tools(tool("grep_search", {"pattern": "parse_date", "path": "."}),
                       tool("read_file", {"path": "tests/test_dates.py"}), input_tokens=4980),
        Response.of(Text(ANSWER, chunk_chars=40), input_tokens=6240),
        # 3: a long log that fills most of the context window.
        Response.tool_use("read_file", {"path": "logs/import-2026-03.log"},
                          text="I'll read the import log.", input_tokens=7010),
        Response.of(Text("The log has 2,314 rejected lines, all from the same supplier: "
                         "their dates are `2026.03.31`, a fourth format."),
                    input_tokens=168_400),
    )
    (project / "logs").mkdir()
    (project / "logs" / "import-2026-03.log").write_text(
        "".join(f"line {n}: rejected date '2026.03.{n % 28 + 1:02d}'\n" for n in range(400)))
    db = open_database(data / "tebiki.sqlite3")
    services = build_services(db, data, project)
    services.settings.write(PERMISSION_MODE_CHOSEN, True)
    profile_id = services.profiles.ensure_default().id
    services.profiles.set_tool(profile_id, ToolSetting("edit_file", True,
                                                       {"allowed_write_dirs": ["doc"]}))
    services.permissions.rules.add(PermissionRule(
        decision="deny", tool_name="shell_exec", input_pattern="rm *", priority=100,
        description="Never delete files from the shell"))
    seed_history(services, project)

    window = MainWindow(services=services, project_root=project)
    window.resize(1280, 800)
    window.move(60, 40)
    window.show()
    panel = window.ai_panel
    await settle()
    panel.new_conversation()  # a fresh conversation, not the reopened last one

    await ask(window, "doc/guide.md says dates are MM/DD/YYYY. Make it match the parser.")
    await wait_for(lambda: window.approvals.current_dialog is not None)
    dialog = window.approvals.current_dialog
    dialog.resize(820, 540)
    dialog.remember.setChecked(True)
    dialog.remember_scope.setCurrentIndex(1)  # in this conversation only
    await settle()
    screen("approval-dialog.png")
    dialog.approve_button.click()
    await wait_for(lambda: not panel.running)

    # A short title instead of the first prompt's words (what Rename in the list does).
    services.conversations.rename(panel.session.conversation_id,
                                  "Fix the date format in the guide")
    panel.conversations.refresh()
    await ask(window, "How does parse_date handle the formats, and what do the tests cover?")
    await wait_for(lambda: not panel.running)
    await settle()
    hover_code(panel)
    await settle()
    screen("main-window.png")
    subprocess.run(["xdotool", "mousemove", "1390", "890"], check=True)

    panel.conversations.show_list(True)
    await settle(0.3)
    listed = asyncio.get_running_loop().create_future()
    panel.conversations.conversation_list.listed.connect(
        lambda: listed.done() or listed.set_result(None))
    panel.conversations.conversation_list.search.setText("date")
    await asyncio.wait_for(listed, 10)
    await settle()
    screen("conversations.png")
    panel.conversations.conversation_list.search.clear()
    panel.conversations.show_list(False)

    await ask(window, "Why were so many lines rejected in the March import log?")
    await wait_for(lambda: not panel.running)
    await settle()
    region("tokens.png", panel.compaction.context_bar, panel.prompt)

    settings = window.profiles.open_settings()
    settings.tabs.setCurrentIndex(1)
    settings.resize(1000, 680)
    tab = settings.rules_tab
    tab.test_tool.setCurrentText("shell_exec")
    tab.test_input.setPlainText('{"command": "git status && rm -rf build"}')
    tab.run_test()
    await settle()
    screen("rules-settings.png")
    settings.close()
    await panel.shutdown()
    await services.registry.aclose()
    window.close()
    server.close()


def main() -> None:
    import qasync
    from PySide6.QtWidgets import QApplication

    OUT.mkdir(parents=True, exist_ok=True)
    app = QApplication(sys.argv)
    app.setQuitOnLastWindowClosed(False)
    with asyncio.Runner(loop_factory=qasync.QEventLoop) as runner:
        runner.run(scenario(app))
    print("screenshots written to", OUT)


if __name__ == "__main__":
    main()
