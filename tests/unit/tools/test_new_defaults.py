"""Defaults that work on a fresh install: write_file/edit_file write the project, shell_exec runs
any program sandboxed where the sandbox works (decided at run time), and refusals say which
Configure setting lifts them."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from app.core.sandbox import machine_sandbox
from app.core.services import profile_defaults
from app.core.tools.base import ToolContext
from app.core.tools.builtin import builtin_tools, shell_exec, write_file
from app.core.tools.builtin.shell_exec import (
    LEVEL_ALLOWLIST,
    LEVEL_ANY_SANDBOXED,
    LEVEL_AUTO,
    program_level,
)


def test_new_profiles_write_the_project_and_run_programs_by_the_sandbox() -> None:
    configs = profile_defaults(tool.spec for tool in builtin_tools())["configs"]
    assert configs["write_file"]["allowed_write_dirs"] == ["."]
    assert configs["edit_file"]["allowed_write_dirs"] == ["."]
    assert configs["shell_exec"]["program_level"] == LEVEL_AUTO  # not the machine's answer
    assert write_file.DOCS_ONLY_WRITE_DIRS == ("doc",)


def test_auto_is_decided_from_the_sandbox_status_at_run_time(project: Path,
                                                             tmp_path: Path) -> None:
    working = machine_sandbox(tmp_path)
    config = {"shell_exec": {"program_level": LEVEL_AUTO}}
    ctx = ToolContext(project_root=project, tool_config=config, sandbox=working)
    broken = replace(working, status=replace(working.status, available=False,
                                             reason="no bubblewrap"))
    if working.status.available:
        assert program_level(ctx) == LEVEL_ANY_SANDBOXED
    assert program_level(replace(ctx, sandbox=broken)) == LEVEL_ALLOWLIST
    # A profile that never chose (existing ones) keeps the allowlist.
    assert program_level(ToolContext(project_root=project, sandbox=working)) == LEVEL_ALLOWLIST


def test_a_write_refused_inside_the_project_names_the_setting(project: Path) -> None:
    ctx = ToolContext(project_root=project, allowed_write_dirs=(project / "doc",),
                      tool_config={"write_file": {"allowed_write_dirs": ["doc"]}})
    spec = write_file.create().spec
    assert spec.capability_refusal is not None
    why = spec.capability_refusal({"path": "src/a.py", "content": ""}, ctx)
    assert why is not None and "Write folders" in why and "Configure" in why
    outside = spec.capability_refusal({"path": "/var/tmp/x", "content": ""}, ctx)
    assert outside is not None and "Write folders" not in outside


def test_a_program_off_the_allowlist_names_the_setting(project: Path) -> None:
    ctx = ToolContext(project_root=project, allowed_commands=("ls",),
                      tool_config={"shell_exec": {"program_level": LEVEL_ALLOWLIST}})
    spec = next(t for t in shell_exec.create() if t.spec.name == "shell_exec").spec
    assert spec.capability_refusal is not None
    why = spec.capability_refusal({"command": "make test"}, ctx)
    assert why is not None and "Allowed programs" in why and "Configure" in why
