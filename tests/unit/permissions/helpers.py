"""Small fake tools for permission tests: real ToolSpecs with known subject functions."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from app.core.tools.base import (
    RiskLevel,
    SubjectError,
    ToolCategory,
    ToolContext,
    ToolResult,
    ToolSpec,
)
from app.core.tools.providers.base import StaticProvider
from app.core.tools.registry import ToolRegistry


class FakeTool:
    def __init__(self, spec: ToolSpec) -> None:
        self.spec = spec
        self.calls: list[Mapping[str, Any]] = []

    async def execute(self, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        self.calls.append(input)
        return ToolResult.ok("done")


def _split_chain(tool_input: Mapping[str, Any], _wd: Path | None) -> list[str]:
    """A deliberately simple splitter; the real shell parser is tested with shell_exec."""
    command = tool_input["command"]
    if "$(" in command or "`" in command:
        raise SubjectError("substitution", partial=[])
    parts = command.replace("&&", ";").replace("||", ";").replace("|", ";").split(";")
    return [" ".join(p.split()) for p in parts if p.strip()]


def _resolve(tool_input: Mapping[str, Any], wd: Path | None) -> list[str]:
    path = Path(os.path.expanduser(tool_input["path"]))
    if not path.is_absolute():
        path = (wd or Path.cwd()) / path
    return [os.path.normpath(path)]


def spec(name: str, *, server_id: str = "builtin", subjects_fn=None, kind: str = "text",
         risk: RiskLevel = RiskLevel.HIGH) -> ToolSpec:
    return ToolSpec(name=name, description=f"fake {name}",
                    input_schema={"type": "object"}, category=ToolCategory.COMPOSITE, risk=risk,
                    server_id=server_id, subjects_fn=subjects_fn, subject_kind=kind)  # type: ignore[arg-type]


def fake_registry() -> ToolRegistry:
    tools = [
        FakeTool(spec("shell", subjects_fn=_split_chain)),
        FakeTool(spec("read_file", subjects_fn=_resolve, kind="path")),
        FakeTool(spec("write_file", subjects_fn=_resolve, kind="path")),
        FakeTool(spec("fetch", subjects_fn=lambda i, _w: [str(i["host"]).lower()], kind="host")),
        FakeTool(spec("git_status")),
        FakeTool(spec("git_commit")),
        FakeTool(spec("my_git_status")),
    ]
    return ToolRegistry([StaticProvider(tools)])
