"""The configuration change a refused call proposes (ToolSpec.capability_lift): under it the
refusal check passes, and nothing is proposed where no configuration could help."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from app.core.tools.base import ToolContext, ToolSpec
from app.core.tools.builtin import edit_file, shell_exec, write_file
from app.core.tools.builtin.shell_exec import LEVEL_ALLOWLIST


def _shell_spec() -> ToolSpec:
    return next(t for t in shell_exec.create() if t.spec.name == "shell_exec").spec


def _lifted(ctx: ToolContext, key: str, value: tuple[str, ...]) -> ToolContext:
    if key == "allowed_write_dirs":
        return replace(ctx, allowed_write_dirs=tuple(Path(v) for v in value))
    return replace(ctx, allowed_commands=value)


def test_a_write_outside_the_write_folders_proposes_the_folder_that_holds_it(
        project: Path) -> None:
    (project / "src" / "pkg").mkdir(parents=True)
    ctx = ToolContext(project_root=project, allowed_write_dirs=(project / "doc",))
    for spec in (write_file.create().spec, edit_file.create().spec):
        assert spec.capability_refusal is not None and spec.capability_lift is not None
        args = {"path": "src/pkg/a.py", "content": "", "old_string": "x", "new_string": "y"}
        assert spec.capability_refusal(args, ctx) is not None
        lift = spec.capability_lift(args, ctx)
        assert lift is not None and lift.key == "allowed_write_dirs"
        assert lift.value == ("doc", "src") and "“src”" in lift.summary
        assert spec.capability_refusal(args, _lifted(ctx, lift.key, lift.value)) is None


def test_a_file_at_the_project_root_proposes_the_whole_project(project: Path) -> None:
    ctx = ToolContext(project_root=project, allowed_write_dirs=(project / "doc",))
    spec = write_file.create().spec
    assert spec.capability_lift is not None and spec.capability_refusal is not None
    lift = spec.capability_lift({"path": "setup.py", "content": ""}, ctx)
    assert lift is not None and lift.value == ("doc", ".") and "whole project" in lift.summary
    assert spec.capability_refusal({"path": "setup.py", "content": ""},
                                   _lifted(ctx, lift.key, lift.value)) is None


def test_no_write_folder_is_proposed_outside_the_project(project: Path, tmp_path: Path) -> None:
    ctx = ToolContext(project_root=project, allowed_write_dirs=(project / "doc",))
    spec = write_file.create().spec
    assert spec.capability_lift is not None
    for path in (str(tmp_path / "elsewhere.txt"), "../sibling/x.txt", "/etc/passwd", 7):
        assert spec.capability_lift({"path": path, "content": ""}, ctx) is None


def test_programs_off_the_list_are_proposed_once_each(project: Path) -> None:
    ctx = ToolContext(project_root=project, allowed_commands=("ls",),
                      tool_config={"shell_exec": {"program_level": LEVEL_ALLOWLIST}})
    spec = _shell_spec()
    assert spec.capability_lift is not None and spec.capability_refusal is not None
    args = {"command": "make test && ls && pytest -q && make lint"}
    lift = spec.capability_lift(args, ctx)
    assert lift is not None and lift.key == "allowed_commands"
    assert lift.value == ("ls", "make", "pytest")
    assert spec.capability_refusal(args, _lifted(ctx, lift.key, lift.value)) is None


def test_nothing_is_proposed_when_the_list_is_not_the_limit(project: Path) -> None:
    ctx = ToolContext(project_root=project, allowed_commands=("ls",),
                      tool_config={"shell_exec": {"program_level": LEVEL_ALLOWLIST}})
    spec = _shell_spec()
    assert spec.capability_lift is not None
    assert spec.capability_lift({"command": "ls -la"}, ctx) is None  # nothing missing
    assert spec.capability_lift({"command": "ls $(cat"}, ctx) is None  # does not parse
    assert spec.capability_lift({"command": "/usr/bin/make"}, ctx) is None  # a path
    assert spec.capability_lift({"command": 3}, ctx) is None
