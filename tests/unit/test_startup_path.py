"""Start-up loads only what the window needs; the heavy libraries load later, off the GUI thread.

Each check runs in a fresh interpreter: the test session itself has imported everything.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from app.core.store.early import read_settings_early
from app.core.warmup import RUN_MODULES
from app.ui.deferred_imports import DEFERRED_UI_MODULES

ROOT = Path(__file__).resolve().parents[2]
# Large libraries a run needs but an idle window does not (each costs 5-75 MB and 50 ms-2 s).
# "anthropic" (the SDK) and "httpx2" stay listed though no run loads them any more (the provider
# speaks the API over httpx): they must not come back at start-up either.
HEAVY = ("anthropic", "httpx", "httpx2", "jsonschema", "selectolax", "html_to_markdown",
         "mcp", "pydantic", "keyring", "tree_sitter", "pathspec", "pygments")


def _module_level_imports(path: Path) -> list[str]:
    """The absolute imports ``path`` runs when it loads (not under ``TYPE_CHECKING``, not
    inside a function)."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except SyntaxError:  # reported by the tests of that module
        return []
    names: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.Import):
            names.extend(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level:
            names.append(node.module or "")
    return names


def _top_level_imports_of(module: str) -> list[str]:
    """The app's modules importing ``module`` when they load."""
    return [str(path.relative_to(ROOT)) for path in sorted((ROOT / "app").rglob("*.py"))
            if any(name.split(".")[0] == module for name in _module_level_imports(path))]


def _imports_any(path: Path, modules: tuple[str, ...]) -> list[str]:
    return [name for name in _module_level_imports(path)
            if any(name == m or name.startswith(m + ".") for m in modules)]


# sqlite-utils (~60 ms of imports: click, pluggy, dateutil, tabulate) is not needed to open,
# migrate or use the store (app.core.store.db.Database). Modules that import it at their top
# only for annotations still load it at start-up; each should import it under TYPE_CHECKING.
SQLITE_UTILS_AT_TOP = _top_level_imports_of("sqlite_utils")


# The window shell (app.main.show_window) is menus, a toolbar and empty panes: none of the
# store, the tools, the agent or the panels. Each of these cost start-up time while it was
# imported before the first paint.
NOT_AT_SHOWN = ("app.core.services", "app.core.agent", "app.core.tools", "app.core.permissions",
                "app.core.store.db", "app.core.sandbox", "app.ui.widgets", "app.ui.ai_panel",
                "app.ui.dialogs", "app.ui.approval_queue")
# The tools part of the services (app.core.services.ToolServices): the registry, the tools, the
# permission service, the sandbox, MCP; and the panels that show them. Built in a worker thread
# right after ready (app.main.finish_start); a Send before then builds it on first use.
TOOLS_PART = ("app.core.tools", "app.core.permissions.service", "app.core.permissions.decision",
              "app.core.sandbox", "app.ui.widgets.tools_panel", "app.ui.widgets.history_view")
# Not needed to be ready (panels live, Send works): what the panels open or show on demand (the
# dialogs, a run's tool cards, a reopened conversation) is imported after it, off the GUI thread
# (app.ui.deferred_imports.DEFERRED_UI_MODULES), and so is what only they use; shell_exec's policy
# tables load with the run warm-up (app.core.warmup), the custom tools' TOML loader, template parser
# and tool only when a tools.toml exists. The checkpoint engine loads with the tools (opening the
# project needs it: app.startup_threads.TOOLS_UI_MODULES), the flow labels (and their secret
# matchers) with the permission service, the usage line's price formatting with the first usage to
# show (~40 ms together while the panel imported them).
PANEL_LOADS_LATER = ("app.core.checkpoints", "app.core.agent.checkpointing",
                     "app.core.permissions.flow", "app.core.permissions.egress",
                     "app.ui.dialogs.usage_settings")
# The sub-agents' store (app.core.store.orchestration): what was working at the last quit is
# failed by the tools build, before the tools could resume it (~2 ms while the store path did it).
NOT_AT_READY = (*DEFERRED_UI_MODULES, *PANEL_LOADS_LATER, "app.core.permissions.suggestions",
                "html", "app.core.store.orchestration",
                "app.ui.widgets.highlighters", "app.core.tools.shell.policy",
                "app.core.tools.providers.custom.loading",
                "app.core.tools.providers.custom.template",
                "app.core.tools.providers.custom.tool", "tomllib", *TOOLS_PART)
# The AI panel and its parts import the agent's session and events, the tool cards, the
# conversation list and replay, the undo preview, the checkpoint engine and the flow labels
# where they are first used (Send, the first event, opening a conversation or the list, an
# undo, a project), not when they load.
PANEL_SOURCES = ("app/ui/ai_panel/panel.py", "app/ui/ai_panel/undo_actions.py",
                 "app/ui/widgets/transcript_view.py", "app/ui/controllers/checkpoints.py",
                 "app/ui/ai_panel/run_events.py", "app/ui/ai_panel/conversations.py",
                 "app/ui/ai_panel/mode_choice.py", "app/ui/ai_panel/flow_chip.py",
                 "app/ui/ai_panel/flow_controls.py", "app/ui/ai_panel/tool_cards.py",
                 "app/ui/ai_panel/answer_stream.py", "app/ui/ai_panel/session_holder.py",
                 "app/ui/ai_panel/run_task.py", "app/ui/ai_panel/run_notes.py",
                 "app/ui/ai_panel/compaction.py", "app/ui/ai_panel/conversation_actions.py",
                 "app/ui/ai_panel/edit_attachments.py", "app/ui/ai_panel/usage_line.py",
                 "app/ui/ai_panel/service_notices.py", "app/ui/ai_panel/ports.py",
                 "app/ui/ai_panel/paging.py", "app/ui/ai_panel/instructions_line.py")
PANEL_LATER = ("app.core.agent.session", "app.core.agent.events", "app.ui.widgets.tool_card",
               "app.ui.widgets.conversation_replay", "app.ui.dialogs.restore_preview",
               "app.ui.widgets.conversation_list", "app.core.checkpoints",
               "app.core.agent.checkpointing", "app.core.permissions.flow")
# The agent's run modules (session, tool loop, context: ~15-20 ms), which nothing on the start
# path needs. app.core.services imports app.core.agent.checkpointing; the package's
# __init__.py imports none of its modules, so that loads none of these.
AGENT_RUN_MODULES = ("app.core.agent.session", "app.core.agent.call_runner",
                     "app.core.agent.context")
# asyncio (~20 ms with ssl) and qasync come with the event loop, after ready (app.main.
# run_event_loop): none of the modules the window loads before it may import asyncio when it loads.
EVENT_LOOP_MODULES = ("asyncio", "ssl", "qasync")


def _source_of(module: str) -> Path:
    path = ROOT.joinpath(*module.split("."))
    return path / "__init__.py" if path.is_dir() else path.with_suffix(".py")


def _loaded(names: list[str], prefixes: tuple[str, ...]) -> list[str]:
    return sorted(n for n in names if any(n == p or n.startswith(p + ".") for p in prefixes))


def _run(code: str, tmp_path: Path) -> dict:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "TEBIKI_DATA_DIR": str(tmp_path)}
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, cwd=ROOT, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_window_shell_and_ready_window_load_no_heavy_library(tmp_path):
    result = _run(f"""
        import json, sys
        from PySide6.QtWidgets import QApplication
        app = QApplication([])
        from app.core.config import resolve_paths
        from app.main import show_window
        from app.startup_threads import load_services
        paths = resolve_paths()
        window = show_window(paths)
        app.processEvents()
        at_shown = sorted(sys.modules)
        window.attach_services(load_services(paths))
        app.processEvents()
        heavy = {HEAVY!r}
        loaded = lambda names: sorted({{m.split('.')[0] for m in names}} & set(heavy))
        at_ready, built_at_ready = loaded(sys.modules), window.services.tools_built
        tools = sorted(window.services.registry.names())  # built on first use
        print(json.dumps({{"shown": loaded(at_shown), "ready": at_ready,
                          "store_at_shown": "sqlite_utils" in at_shown,
                          "built_at_ready": built_at_ready, "tools": tools,
                          "after_tools": loaded(sys.modules)}}))
    """, tmp_path)
    assert result["shown"] == []
    assert result["store_at_shown"] is False  # the shell is up before the store is opened
    assert result["ready"] == []
    assert result["built_at_ready"] is False
    assert {"web_fetch", "web_search", "shell_exec", "read_file"} <= set(result["tools"])
    assert result["after_tools"] == []  # the tools part loads no heavy library either


def test_start_path_loads_only_what_the_shell_and_the_ready_window_need(tmp_path):
    result = _run("""
        import json, sys, time
        from PySide6.QtWidgets import QApplication
        app = QApplication([])
        from app.core.config import resolve_paths
        from app.main import finish_start, show_window
        from app.startup_threads import load_services, start_tools_build
        from app.ui.deferred_imports import DEFERRED_UI_MODULES
        paths = resolve_paths()
        window = show_window(paths)
        app.processEvents()
        at_shown = sorted(sys.modules)
        attached = []
        window.tools_attached.connect(lambda: attached.append(1))
        import app.main as app_main
        # The tools are built by a timer after ready: started below, so the snapshot at ready
        # cannot race with it.
        app_main._AFTER_READY_DELAY_MS = 600_000
        services = load_services(paths)
        finish_start(window, services, None)
        app.processEvents()
        at_ready = sorted(sys.modules)
        from app.ui.widgets.tools_panel import ToolsPanel
        builds = []
        rebuild = ToolsPanel.rebuild
        ToolsPanel.rebuild = lambda self: (builds.append(1), rebuild(self))[1]
        start_tools_build(window, services)
        ready_state = {"placeholder": type(window.tools_dock.widget()).__name__,
                       "typing": window.ai_panel.prompt.isEnabled(),
                       "send": window.ai_panel.send_button.isEnabled()}
        deadline = time.monotonic() + 20  # the tools (a worker) and the deferred imports (the
        while time.monotonic() < deadline and not (attached and all(  # GUI thread) follow
                m in sys.modules for m in DEFERRED_UI_MODULES)):
            app.processEvents()
            time.sleep(0.01)
        items = len(window.tools_panel.enabled_tools())
        print(json.dumps({"shown": at_shown, "ready": at_ready, "builds": len(builds),
                          "items": items, "later": sorted(sys.modules), **ready_state,
                          "status": window.status_label.text()}))
    """, tmp_path)
    assert _loaded(result["shown"], NOT_AT_SHOWN) == []
    assert _loaded(result["ready"], NOT_AT_READY) == []
    assert result["placeholder"] == "QLabel"  # "Loading tools…" until they are built
    assert result["typing"] and result["send"]
    assert result["builds"] == 1  # the tools list is built once, for the opened project
    assert result["items"] > 0
    assert result["status"] == "Ready"
    assert _loaded(result["later"], TOOLS_PART) != []
    # The positive control: what is left out of start-up does load, right after it.
    assert _loaded(result["later"], DEFERRED_UI_MODULES) == sorted(DEFERRED_UI_MODULES)
    assert set(_loaded(result["later"], PANEL_LOADS_LATER)) >= {
        "app.core.checkpoints", "app.core.agent.checkpointing", "app.core.permissions.flow"}


def test_the_panels_import_the_agent_and_the_cards_where_they_are_used():
    found = {source: _imports_any(ROOT / source, PANEL_LATER) for source in PANEL_SOURCES}
    assert found == {source: [] for source in PANEL_SOURCES}, (
        "import these inside the functions that use them (and under `if TYPE_CHECKING:` for "
        "annotations); app.ui.deferred_imports.DEFERRED_UI_MODULES warms them up after ready")


def test_the_panel_imports_are_pinned_by_a_check_that_can_fail(tmp_path):
    # The positive control for the test above: an import at the top of a panel is found.
    source = tmp_path / "panel.py"
    source.write_text("from __future__ import annotations\n"
                      "from typing import TYPE_CHECKING\n"
                      "from app.core.agent.session import AgentSession\n"
                      "if TYPE_CHECKING:\n    from app.ui.widgets.tool_card import ToolCard\n"
                      "def f():\n    from app.ui.dialogs.restore_preview import DiffDialog\n")
    assert _imports_any(source, PANEL_LATER) == ["app.core.agent.session"]


# A fresh process started as app.main.main starts, up to ready (``window``); the tools part
# comes after it.
START_TO_READY = """
import json, sys
from PySide6.QtWidgets import QApplication
app = QApplication([])
from app.core.config import resolve_paths
import app.main as app_main
from app.ui.gc_guard import MainThreadGarbageCollector
collector = MainThreadGarbageCollector(app)
app_main._AFTER_READY_DELAY_MS = 600_000  # the tools part comes after ready
window, loading = app_main.open_window(resolve_paths())  # app.main.main's steps
app_main.wait_painting(loading)
app_main.show_ready(window, loading.result(), None)
"""


def _modules_at_ready(tmp_path) -> list[str]:
    """The modules a fresh process has loaded once the window is ready."""
    return _run(START_TO_READY + """
print(json.dumps({"ready": sorted(sys.modules)}))
""", tmp_path)["ready"]


def test_ready_window_does_not_load_the_agents_run_modules(tmp_path):
    assert _loaded(_modules_at_ready(tmp_path), AGENT_RUN_MODULES) == []


def test_ready_window_does_not_load_the_event_loop(tmp_path):
    ready = _modules_at_ready(tmp_path)
    importing = [name for name in ready if name.split(".")[0] == "app"
                 and _imports_any(_source_of(name), ("asyncio",))]
    assert importing == [], (f"{importing} import asyncio when they load: import it inside the "
                             "functions that use it (and under `if TYPE_CHECKING:` for "
                             "annotations); the event loop comes after ready")
    assert _loaded(ready, EVENT_LOOP_MODULES) == []


def test_cli_version_probes_started_early_serve_the_first_detection_only(monkeypatch):
    from app.core.tools.default_registry import cli_provider
    from app.core.tools.providers import cli_detect

    programs = {"rg": "/opt/fake/rg", "fd": "/opt/fake/fd"}
    runs: list[str] = []

    def probe(path: str) -> tuple[tuple[int, ...], None]:
        runs.append(path)
        return (14, 1), None

    monkeypatch.setattr(cli_detect, "_locate", lambda name, _path: programs.get(name))
    monkeypatch.setattr(cli_detect, "_probe_version", probe)
    monkeypatch.setattr(cli_detect, "_early_probes", {})
    monkeypatch.setattr(cli_detect, "_early_closed", False)
    cli_detect.probe_versions_early()
    assert runs == ["/opt/fake/rg", "/opt/fake/fd"]
    provider = cli_provider()
    detected = provider.detect()
    assert runs == ["/opt/fake/rg", "/opt/fake/fd"]  # the early answers, not new runs
    assert detected["rg"].path == "/opt/fake/rg" and detected["rg"].version == (14, 1)
    assert detected["fd"].path == "/opt/fake/fd"
    provider.reload()  # after installing or upgrading a program: probed afresh
    assert runs == ["/opt/fake/rg", "/opt/fake/fd"] * 2
    cli_detect.probe_versions_early()  # too late: the first detection has happened
    assert runs == ["/opt/fake/rg", "/opt/fake/fd"] * 2


def test_load_services_reports_a_database_it_cannot_open(tmp_path):
    from app.core.config import resolve_paths
    from app.core.store.errors import DatabaseError
    from app.startup_threads import load_services

    paths = resolve_paths(str(tmp_path))
    paths.database.parent.mkdir(parents=True, exist_ok=True)
    paths.database.write_bytes(b"not a database" * 100)
    with pytest.raises(DatabaseError):
        load_services(paths)
    from app.core.tools.providers import cli_detect

    # The CLI probes it started early are not left for a later detection to take.
    assert cli_detect._early_closed is True and cli_detect._early_probes == {}


def test_the_store_opens_migrates_and_works_without_sqlite_utils(tmp_path):
    result = _run("""
        import json, os, sys
        from pathlib import Path
        from app.core.store.db import open_database
        from app.core.store.audit import AuditRepository
        from app.core.store.conversations import ConversationRepository
        from app.core.store.profiles import ProfileRepository, ToolSetting
        from app.core.store.settings import SettingsRepository
        path = Path(os.environ["TEBIKI_DATA_DIR"]) / "t.sqlite3"
        for _ in range(2):  # created and migrated, then reopened
            db = open_database(path)
            settings = SettingsRepository(db)
            settings.set("ui.geometry", "AAEC")
            profile = ProfileRepository(db).ensure_default(enabled=["read_file"])
            ProfileRepository(db).set_tool(profile.id, ToolSetting("read_file", True, {}))
            conversations = ConversationRepository(db)
            conversation = conversations.create(title="kept")
            conversations.append(conversation.id, "user", "zanzibar")
            audit = AuditRepository(db)
            audit.record(tool_name="read_file", server_id="builtin", tool_input={},
                         decision="allow", outcome="executed", output="zanzibar")
            found = (len(conversations.search("zanzibar")), len(audit.search("zanzibar")),
                     db.conn.execute("SELECT count(*) FROM tool_permission_rules").fetchone()[0],
                     settings.get("ui.geometry"))
            db.close()
        loaded_by_store = "sqlite_utils" in sys.modules
        db = open_database(path)
        tables = db.table_names()  # the sqlite-utils API is there when asked for
        db.close()
        print(json.dumps({"loaded_by_store": loaded_by_store, "found": found,
                          "on_demand": "sqlite_utils" in sys.modules, "tables": tables}))
    """, tmp_path)
    assert result["loaded_by_store"] is False
    assert result["found"][:2] == [2, 2] and result["found"][2] > 0
    assert result["found"][3] == "AAEC"
    assert result["on_demand"] is True
    assert {"settings", "messages_fts"} <= set(result["tables"])


@pytest.mark.xfail(bool(SQLITE_UTILS_AT_TOP), strict=True,
                   reason=f"imported at module level by {SQLITE_UTILS_AT_TOP}: move each under "
                          "`if TYPE_CHECKING:` (annotations only)")
def test_ready_window_does_not_load_sqlite_utils(tmp_path):
    assert "sqlite_utils" not in _modules_at_ready(tmp_path)


def test_a_run_warm_up_loads_the_provider_and_freezes_what_it_imported(tmp_path):
    result = _run("""
        import gc, json, sys, asyncio
        gc.disable()  # as in the app: collections happen on the GUI thread only
        from app.core.warmup import RUN_MODULES, warm_up
        frozen_before = gc.get_freeze_count()
        seconds = asyncio.run(warm_up())
        again = asyncio.run(warm_up())
        print(json.dumps({"loaded": [m for m in RUN_MODULES if m in sys.modules],
                          "sdk": sorted({"anthropic", "httpx2"} & set(sys.modules)),
                          "httpx": "httpx" in sys.modules,
                          "frozen": gc.get_freeze_count() - frozen_before,
                          "seconds": seconds, "again": again}))
    """, tmp_path)
    # The Anthropic provider speaks the API over httpx: the SDK (~56 MB) never loads.
    assert result["sdk"] == [] and result["httpx"] is True
    assert result["loaded"] == list(RUN_MODULES)
    assert result["frozen"] > 10_000  # the imports' objects left the collector's generations
    assert result["seconds"] > 0
    assert result["again"] == 0.0  # nothing left to import


def test_the_run_warm_up_leaves_httpxs_command_line_client_out(tmp_path):
    result = _run("""
        import gc, json, sys, asyncio
        gc.disable()
        from app.core.warmup import warm_up
        asyncio.run(warm_up())
        import httpx
        print(json.dumps({"httpx": "httpx" in sys.modules,
                          "cli": sys.modules.get("httpx._main") is not None,
                          "rich": "rich" in sys.modules, "stub": callable(httpx.main)}))
    """, tmp_path)
    # (Pygments itself is warmed up on purpose: the transcript's code colours use it.)
    assert result == {"httpx": True, "cli": False, "rich": False, "stub": True}


def test_httpx_loads_its_command_line_client_without_the_fix(tmp_path):
    # The positive control for the test above: with click, rich and pygments installed (as
    # here), a plain `import httpx` loads them (18 MB).
    result = _run("""
        import json, sys
        import httpx
        print(json.dumps({"cli": sys.modules.get("httpx._main") is not None,
                          "rich": "rich" in sys.modules}))
    """, tmp_path)
    assert result == {"cli": True, "rich": True}


def test_importing_app_ui_turns_pysides_source_reading_import_hook_off(tmp_path):
    result = _run("""
        import builtins, json, linecache, sys
        import PySide6.QtWidgets
        hooked = builtins.__import__ is not builtins.__orig_import__
        import app.ui
        import email.mime.text  # any module imported afterwards
        print(json.dumps({"hooked_by_pyside": hooked,
                          "plain_after": builtins.__import__ is builtins.__orig_import__,
                          "source_cached": any("email/mime" in f for f in linecache.cache)}))
    """, tmp_path)
    assert result["hooked_by_pyside"] is True  # what PySide6 does; if it stops, drop the fix
    assert result["plain_after"] is True
    assert result["source_cached"] is False


def test_pyside_hook_reads_the_source_of_every_later_import_without_the_fix(tmp_path):
    # The positive control for the test above: the cost exists while the hook is installed.
    result = _run("""
        import json, linecache
        import PySide6.QtWidgets
        import email.mime.text
        print(json.dumps({"source_cached": any("email/mime" in f for f in linecache.cache)}))
    """, tmp_path)
    assert result["source_cached"] is True


class TestEarlySettings:
    def test_reads_what_the_store_saved(self, db, tmp_path):
        from app.core.store.settings import SettingsRepository

        settings = SettingsRepository(db)
        settings.set("ui.geometry", "AAEC")
        settings.set("ui.recent_folders", ["/a", "/b"])
        path = Path(db.conn.execute("PRAGMA database_list").fetchone()[2])
        assert read_settings_early(path, ["ui.geometry", "ui.recent_folders", "ui.none"]) == {
            "ui.geometry": "AAEC", "ui.recent_folders": ["/a", "/b"]}

    def test_missing_file_is_not_created(self, tmp_path):
        path = tmp_path / "new" / "tebiki.sqlite3"
        assert read_settings_early(path, ["ui.geometry"]) == {}
        assert not path.exists() and not path.parent.exists()

    @pytest.mark.parametrize("content", [b"garbage" * 500, b""])
    def test_unreadable_file_means_no_settings(self, tmp_path, content):
        path = tmp_path / "tebiki.sqlite3"
        path.write_bytes(content)
        assert read_settings_early(path, ["ui.geometry"]) == {}
        assert path.read_bytes() == content  # untouched

    def test_database_without_settings_table(self, tmp_path):
        import sqlite3

        path = tmp_path / "other.sqlite3"
        sqlite3.connect(path).execute("CREATE TABLE t (x)").connection.close()
        assert read_settings_early(path, ["ui.geometry"]) == {}
