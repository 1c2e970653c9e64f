"""Settings › Permission rules › Test a call: decided off the GUI thread, subjects listed."""

from __future__ import annotations

import threading

from app.core.permissions.rules import PermissionRule
from app.ui.dialogs.settings import RulesTab
from tests.ui.conftest import wait_for


def _tab(qtbot, services) -> RulesTab:
    tab = RulesTab(services)
    qtbot.addWidget(tab)
    return tab


def _ask(tab: RulesTab, tool: str, text: str) -> None:
    tab.test_tool.setCurrentText(tool)
    tab.test_input.setPlainText(text)
    tab.test_button.click()


def _done(tab: RulesTab) -> bool:
    return tab.test_result.text() not in ("", "Deciding…")


async def test_each_subject_is_shown_with_its_decision_and_rule(qtbot, services):
    services.permissions.rules.add(PermissionRule(decision="deny", tool_name="shell_exec",
                                                  input_pattern="rm *", priority=70,
                                                  description="no deletes"))
    tab = _tab(qtbot, services)
    _ask(tab, "shell_exec", '{"command": "git   status && rm -rf build"}')
    await wait_for(lambda: _done(tab))
    text = tab.test_result.text()
    assert text.startswith("<b>DENY</b>")
    assert "<code>git status</code> → ask" in text           # canonical: words re-joined
    assert "<code>rm -rf build</code> → deny (rule #" in text
    assert "input matching rm *" in text


async def test_seeded_read_is_allowed(qtbot, services):
    tab = _tab(qtbot, services)
    _ask(tab, "read_file", '{"path": "a.txt"}')
    await wait_for(lambda: _done(tab))
    assert tab.test_result.text().startswith("<b>ALLOW</b>")
    assert "a.txt</code> → allow (rule #" in tab.test_result.text()


async def test_host_subjects_are_shown_canonical(qtbot, services):
    tab = _tab(qtbot, services)
    _ask(tab, "web_fetch", '{"url": "http://[::ffff:7f00:1]:8080/x"}')
    await wait_for(lambda: _done(tab))
    assert "<code>127.0.0.1</code>" in tab.test_result.text()


async def test_decide_runs_in_a_worker_thread(qtbot, services, monkeypatch):
    threads: list[threading.Thread] = []
    real_decide = services.permissions.decide

    def recording_decide(*args):
        threads.append(threading.current_thread())
        return real_decide(*args)

    monkeypatch.setattr(services.permissions, "decide", recording_decide)
    tab = _tab(qtbot, services)
    _ask(tab, "shell_exec", '{"command": "ls"}')
    assert tab.test_result.text() == "Deciding…"  # clicked: nothing decided on this thread yet
    await wait_for(lambda: _done(tab))
    assert threads and threads[0] is not threading.main_thread()


async def test_a_stale_result_is_not_shown(qtbot, services, monkeypatch):
    release = threading.Event()
    started = threading.Event()
    real_decide = services.permissions.decide
    calls: list[object] = []

    def slow_decide(server, tool, tool_input, context=None):
        calls.append(tool_input)
        if len(calls) == 1:
            started.set()
            release.wait(10)
        return real_decide(server, tool, tool_input, context)

    monkeypatch.setattr(services.permissions, "decide", slow_decide)
    tab = _tab(qtbot, services)
    _ask(tab, "shell_exec", '{"command": "old-command"}')
    await wait_for(started.is_set)
    first = tab._test_task
    tab.test_input.setPlainText('{"command": "new-command"}')  # changed while deciding
    release.set()
    await wait_for(first.done)
    assert tab.test_result.text() == ""  # the answer about old-command was dropped
    tab.test_button.click()
    await wait_for(lambda: _done(tab))
    assert "new-command" in tab.test_result.text()


async def test_invalid_json_is_reported(qtbot, services):
    tab = _tab(qtbot, services)
    _ask(tab, "shell_exec", "{not json")
    await wait_for(lambda: _done(tab))
    assert tab.test_result.text().startswith("Input is not valid JSON")
