"""Approval dialog and queue: what the person sees, and that every exit except Approve declines."""

from __future__ import annotations

import asyncio

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QTabWidget, QWidget

from app.core.agent.events import ApprovalRequest
from app.core.permissions.rules import PermissionRule
from app.core.tools.base import RiskLevel, ToolCategory, ToolSpec
from app.ui.approval_queue import ApprovalQueue
from app.ui.dialogs.approval import ApprovalDialog
from tests.ui.conftest import wait_for

DIFF = "--- a/doc/x.md\n+++ b/doc/x.md\n@@ -1 +1 @@\n-old\n+new\n"


def _spec(name="write_file", kind="path", risk=RiskLevel.HIGH,
          category=ToolCategory.FILE_SYSTEM, subjects_fn=None):
    return ToolSpec(name, "d", {"type": "object"}, category, risk,
                    subjects_fn=subjects_fn or (lambda i, wd: [str((wd or "") / i["path"])
                                                               if wd else i["path"]]),
                    subject_kind=kind)


def _request(services, name="write_file", tool_input=None, spec=None, preview=DIFF,
             tool_use_id="tu_1"):
    tool_input = tool_input or {"path": "doc/x.md", "content": "new"}
    decision = services.permissions.decide("builtin", name, tool_input)
    return ApprovalRequest(tool_use_id, name, "builtin", tool_input,
                           spec or _spec(name), decision, preview)


def test_dialog_shows_everything(qtbot, services, project):
    dialog = ApprovalDialog(_request(services), None, project)
    qtbot.addWidget(dialog)
    assert "write_file" in dialog.windowTitle()
    labels = " ".join(label.text() for label in dialog.findChildren(QLabel))
    assert "server: builtin" in labels and "high risk" in labels
    assert "no rule matched" in labels or "rule #" in labels
    assert "changes files" in labels
    tabs = dialog.findChild(QTabWidget)
    assert [tabs.tabText(i) for i in range(tabs.count())] == ["Changes", "Input (JSON)"]
    assert "+new" in dialog.diff_view.toPlainText()
    assert '"content": "new"' in dialog.input_view.toPlainText()


def test_low_risk_has_no_warning_and_shell_lists_commands(qtbot, services, project):
    spec = ToolSpec("shell_exec", "d", {"type": "object"}, ToolCategory.EXECUTION,
                    RiskLevel.HIGH, subjects_fn=lambda i, _wd: i["command"].split(" && "),
                    subjects_heading="Commands")
    request = _request(services, "shell_exec", {"command": "git status && ls -la"}, spec, None)
    dialog = ApprovalDialog(request, None, project)
    qtbot.addWidget(dialog)
    tabs = dialog.findChild(QTabWidget)
    assert tabs.tabText(0) == "Commands (2)"
    low = ApprovalDialog(_request(services, "read_file", {"path": "a"}, _spec(
        "read_file", risk=RiskLevel.LOW, category=ToolCategory.READ_ONLY), None), None, project)
    qtbot.addWidget(low)
    assert low.findChild(QWidget, "approval-warning") is None


def test_remember_offers_narrow_rule_first(qtbot, services, project):
    dialog = ApprovalDialog(_request(services), None, project)
    qtbot.addWidget(dialog)
    choices = [dialog.remember_choice.itemText(i) for i in range(dialog.remember_choice.count())]
    assert choices == ["Always allow write_file for exactly doc/x.md",
                       "Always allow write_file for files directly in doc/"]
    dialog.remember.setChecked(True)
    dialog.remember_choice.setCurrentIndex(1)
    dialog.accept()
    response = dialog.response()
    assert response.approved
    assert [r.input_pattern for r in response.rules_to_remember] == ["doc/*"]
    assert response.remember_rule.tool_name == "write_file"


def test_also_matches_is_shown_before_ticking_and_follows_the_choice(qtbot, services, project):
    spec = ToolSpec("shell_exec", "d", {"type": "object"}, ToolCategory.EXECUTION,
                    RiskLevel.HIGH, subjects_fn=lambda i, _wd: [i["command"]])
    request = _request(services, "shell_exec", {"command": "git log -p"}, spec, None)
    dialog = ApprovalDialog(request, None, project)
    qtbot.addWidget(dialog)
    dialog.show()
    label = dialog.findChild(QLabel, "approval-also-matches")
    assert not dialog.remember.isChecked()
    assert label.isVisible()
    assert label.text() == "Nothing else: only exactly this."
    assert dialog.remember_choice.itemText(1) == ("Always allow shell_exec for `git log` with "
                                                  "any arguments")
    dialog.remember_choice.setCurrentIndex(1)
    assert label.text().startswith("Also matches: `git log` with any arguments, e.g. `git log")
    dialog.remember.setChecked(True)
    dialog.accept()
    assert [r.input_pattern for r in dialog.response().rules_to_remember] == ["git log",
                                                                              "git log *"]


def test_compound_command_offers_one_rule_per_part_except_denied(qtbot, services, project):
    services.permissions.rules.add(PermissionRule(decision="deny", tool_name="shell_exec",
                                                  input_pattern="rm *", priority=50))
    spec = ToolSpec("shell_exec", "d", {"type": "object"}, ToolCategory.EXECUTION,
                    RiskLevel.HIGH, subjects_fn=lambda i, _wd: i["command"].split(" && "),
                    subjects_heading="Commands")
    request = _request(services, "shell_exec",
                       {"command": "git status && rm -rf build && ls -la"}, spec, None)
    dialog = ApprovalDialog(request, None, project)
    qtbot.addWidget(dialog)
    assert dialog.remember_choice.count() == 1  # no "every shell_exec call" for a risky tool
    assert dialog.remember_choice.itemText(0) == "Always allow these 2 commands"
    details = dialog.findChild(QLabel, "approval-also-matches").text()
    assert details == "• git status\n• ls -la\nNothing else: only exactly these 2."
    dialog.remember.setChecked(True)
    dialog.accept()
    response = dialog.response()
    assert [r.input_pattern for r in response.rules_to_remember] == ["git status", "ls -la"]


def test_nothing_to_remember_disables_the_box(qtbot, services, project):
    spec = ToolSpec("shell_exec", "d", {"type": "object"}, ToolCategory.EXECUTION,
                    RiskLevel.HIGH, subjects_fn=lambda i, _wd: [])
    dialog = ApprovalDialog(_request(services, "shell_exec", {"command": "x"}, spec, None),
                            None, project)
    qtbot.addWidget(dialog)
    assert not dialog.remember.isEnabled()
    dialog.accept()
    assert dialog.response().rules_to_remember == ()


def test_hidden_characters_in_the_input_are_shown_marked(qtbot, services, project):
    command = "echo \u202eevil\x1b[31m red\rgit status"
    spec = ToolSpec("shell_exec", "d", {"type": "object"}, ToolCategory.EXECUTION,
                    RiskLevel.HIGH, subjects_fn=lambda i, _wd: [i["command"]])
    request = ApprovalRequest("tu", "shell_exec", "builtin", {"command": command}, spec,
                              services.permissions.decide("builtin", "shell_exec",
                                                          {"command": command}),
                              "+++ b/f\u200b.txt\n+x\x1b[2J\n")
    dialog = ApprovalDialog(request, None, project)
    qtbot.addWidget(dialog)
    shown = "echo ⟦U+202E⟧evil⟦ESC⟧[31m red⟦CR⟧git status"
    assert dialog.command_view.toPlainText() == shown
    assert shown in dialog.input_view.toPlainText()
    assert dialog.diff_view.toPlainText() == "+++ b/f⟦U+200B⟧.txt\n+x⟦ESC⟧[2J\n"
    for view in (dialog.command_view, dialog.input_view, dialog.diff_view):
        assert not any(ch in view.toPlainText() for ch in "\u202e\x1b\r\u200b")
    texts = [dialog.remember_choice.itemText(i) for i in range(dialog.remember_choice.count())]
    texts.append(dialog.findChild(QLabel, "approval-also-matches").text())
    assert not any(ch in text for text in texts for ch in "\u202e\x1b\r")


def test_unparsed_shell_command_is_still_shown(qtbot, services, project):
    from app.core.tools.default_registry import default_registry

    spec = default_registry().get("shell_exec").spec
    command = "ls \x1b]0;title\x07 $(whoami)"
    dialog = ApprovalDialog(_request(services, "shell_exec", {"command": command}, spec, None),
                            None, project)
    qtbot.addWidget(dialog)
    tabs = dialog.findChild(QTabWidget)
    assert "Command" in [tabs.tabText(i) for i in range(tabs.count())]
    assert dialog.command_view.toPlainText() == "ls ⟦ESC⟧]0;title⟦BEL⟧ $(whoami)"


async def test_queue_shows_one_dialog_at_a_time(qtbot, services, project):
    parent = QWidget()
    qtbot.addWidget(parent)
    queue = ApprovalQueue(parent, lambda: project)
    first = asyncio.ensure_future(queue.request(_request(services, tool_use_id="a")))
    second = asyncio.ensure_future(queue.request(_request(services, tool_use_id="b")))
    await wait_for(lambda: queue.current_dialog is not None)
    dialog = queue.current_dialog
    assert dialog.request.tool_use_id == "a" and queue.pending_count() == 2
    assert dialog.isVisible()
    # Not modal: Stop, Ctrl+. and the close button of the window must stay live (issue 20).
    assert dialog.windowModality() == Qt.WindowModality.NonModal
    dialog.reason.setText("not now")
    dialog.decline_button.click()
    response = await first
    assert not response.approved and response.reason == "not now"
    await wait_for(lambda: queue.current_dialog is not None)
    assert queue.current_dialog.request.tool_use_id == "b"
    queue.current_dialog.approve_button.click()
    assert (await second).approved
    assert queue.pending_count() == 0


async def test_closing_the_dialog_declines(qtbot, services, project):
    parent = QWidget()
    qtbot.addWidget(parent)
    queue = ApprovalQueue(parent, lambda: project)
    pending = asyncio.ensure_future(queue.request(_request(services)))
    await wait_for(lambda: queue.current_dialog is not None)
    queue.current_dialog.close()
    response = await pending
    assert response.approved is False


async def test_abort_resolves_everything(qtbot, services, project):
    parent = QWidget()
    qtbot.addWidget(parent)
    queue = ApprovalQueue(parent, lambda: project)
    futures = [asyncio.ensure_future(queue.request(_request(services, tool_use_id=str(i))))
               for i in range(3)]
    await wait_for(lambda: queue.current_dialog is not None)
    queue.abort("stopped")
    responses = await asyncio.gather(*futures)
    assert [r.approved for r in responses] == [False, False, False]
    assert all(r.reason == "stopped" for r in responses)
    assert queue.current_dialog is None


async def test_cancelled_request_removes_its_dialog(qtbot, services, project):
    parent = QWidget()
    qtbot.addWidget(parent)
    queue = ApprovalQueue(parent, lambda: project)
    task = asyncio.ensure_future(queue.request(_request(services)))
    await wait_for(lambda: queue.current_dialog is not None)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert queue.current_dialog is None and queue.pending_count() == 0
