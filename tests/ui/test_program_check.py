"""The allowed-programs box checks each name on PATH as it is typed: a misspelt program gets a
warning next to it (the lookup runs off the GUI thread), and saving is still allowed."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from PySide6.QtWidgets import QDialog, QLabel

from app.core.tools.default_registry import default_registry
from app.ui.dialogs.tool_config import ToolConfigDialog


@pytest.fixture
def path_with_mytool(tmp_path: Path, monkeypatch) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    program = bin_dir / "mytool"
    program.write_text("#!/bin/sh\n")
    program.chmod(program.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", str(bin_dir))
    return bin_dir


def _shell_exec_dialog(qtbot, project, programs: list[str]) -> ToolConfigDialog:
    tool = default_registry().get("shell_exec")
    assert tool is not None
    dialog = ToolConfigDialog(tool.spec, {"allowed_commands": programs}, project)
    qtbot.addWidget(dialog)
    return dialog


def _warning(dialog: ToolConfigDialog) -> QLabel:
    label = dialog.findChild(QLabel, "missing-allowed_commands")
    assert label is not None, "no warning line under Allowed programs"
    return label


def test_a_misspelt_program_gets_a_warning_and_can_still_be_saved(qtbot, project,
                                                                  path_with_mytool):
    dialog = _shell_exec_dialog(qtbot, project, ["mytool"])
    warning = _warning(dialog)
    check = dialog.program_checks["allowed_commands"]
    if check.pending:
        with qtbot.waitSignal(check.checked, timeout=5000):
            pass
    assert warning.isHidden()  # every saved name is found

    with qtbot.waitSignal(check.checked, timeout=5000):
        dialog.inputs["allowed_commands"].setPlainText("mytool\nmytoool\ncd\n")
    assert not warning.isHidden()
    assert "mytoool" in warning.text() and "not found" in warning.text()
    assert check.missing == ["mytoool"]  # cd is the shell's own, not a program on PATH

    dialog._try_accept()  # a warning, not a refusal
    assert dialog.result() == QDialog.DialogCode.Accepted
    assert dialog.config()["allowed_commands"] == ["mytool", "mytoool", "cd"]

    with qtbot.waitSignal(check.checked, timeout=5000):
        dialog.inputs["allowed_commands"].setPlainText("mytool")
    assert warning.isHidden()


def test_the_lookup_uses_the_path_programs_get(path_with_mytool, monkeypatch):
    from app.ui.dialogs.program_check import missing_programs

    assert missing_programs(["mytool", "nosuchprogram", "pwd"]) == ["nosuchprogram"]
    # Programs run with the relative entries of PATH dropped: a name found only there is not
    # found for them either.
    monkeypatch.setenv("PATH", "bin")
    monkeypatch.chdir(path_with_mytool.parent)
    assert missing_programs(["mytool"]) == ["mytool"]
