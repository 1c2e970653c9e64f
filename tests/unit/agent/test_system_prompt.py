"""The system prompt (issue 20): project folder, OS, date, tool conventions and the permission
mode, the profile's prompt appended; byte-stable for the same inputs (prompt caching)."""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path

import pytest

from app.core.agent import system_prompt as module
from app.core.agent.system_prompt import build_system_prompt
from app.core.permission_mode import PermissionMode
from app.core.tools.base import RiskLevel, ToolCategory, ToolSpec
from app.core.tools.default_registry import default_registry

ROOT = Path("/home/ada/projects/site")
DAY = date(2026, 11, 23)
TOOLS = ("read_file", "edit_file", "write_file", "shell_exec", "shell_jobs", "grep_search",
         "glob_search", "list_directory", "web_fetch", "web_search", "git_ops")


def _specs(names) -> list[ToolSpec]:
    registry = default_registry()
    return [registry.get(name).spec for name in names]


def _build(profile_prompt: str = "", mode: str = "ask", tools=TOOLS,
           today: date | None = DAY) -> str:
    return build_system_prompt(profile_prompt, ROOT, mode, _specs(tools), today)


def test_it_names_the_project_folder_os_and_date(monkeypatch):
    monkeypatch.setattr(module.platform, "system", lambda: "Darwin")
    text = _build()
    assert f"Project folder: {ROOT}" in text
    assert "Operating system: macOS" in text
    assert "2026-11-23 (Monday)" in text


def test_same_inputs_give_the_same_bytes_whatever_the_tool_order():
    first = _build("Be brief.")
    assert _build("Be brief.") == first
    assert _build("Be brief.", tools=tuple(reversed(TOOLS))) == first
    assert _build("Be brief.", tools=[*TOOLS, "read_file"]) == first  # duplicates are one


def test_no_clock_time_only_the_date():
    text = _build()
    assert not re.search(r"\b\d{1,2}:\d{2}\b", text)
    assert _build(today=DAY) != _build(today=date(2026, 11, 24))


def test_default_date_is_today(monkeypatch):
    class FixedDate(date):
        @classmethod
        def today(cls) -> FixedDate:
            return cls(2027, 1, 5)

    monkeypatch.setattr(module, "date", FixedDate)
    assert "2027-01-05 (Tuesday)" in _build(today=None)


def test_tool_conventions_cover_paths_shell_and_read_before_edit():
    text = _build()
    assert "relative to the project folder" in text
    assert "shell_exec runs a program directly, without a shell" in text
    assert "redirection" in text and "$(...)" in text
    assert "Read a file with read_file before editing it" in text
    assert "untrusted" in text


def test_only_offered_tools_get_conventions():
    text = _build(tools=("read_file", "grep_search"))
    assert "shell_exec" not in text and "web_fetch" not in text and "git_ops" not in text
    assert "read_file" in text and "grep_search" in text
    assert "relative to the project folder" in text  # the general conventions stay


@pytest.mark.parametrize(("mode", "phrase"), [
    ("ask", "Permission mode: ask"),
    ("auto", "Permission mode: auto"),
    ("plan", "Permission mode: plan, which is read-only"),
])
def test_each_permission_mode_has_its_one_sentence(mode, phrase):
    text = _build(mode=mode)
    sentence = next(line for line in text.split("\n\n") if line.startswith("Permission mode"))
    assert sentence.startswith(phrase)
    assert sentence.count(". ") == 0 and sentence.endswith(".")  # one sentence
    others = {"ask", "auto", "plan"} - {mode}
    assert all(f"Permission mode: {other}" not in text for other in others)


def test_an_unknown_mode_reads_as_ask():
    assert _build(mode="yolo") == _build(mode="ask")


def test_the_profile_prompt_is_appended_last():
    text = _build("  Answer in French.\n")
    assert text.endswith("\n\nAnswer in French.")
    assert text.startswith(_build())
    assert not _build().endswith(("\n", " "))  # no empty tail without one


def test_the_conventions_come_from_the_specs_in_their_prompt_order():
    block = next(part for part in _build().split("\n\n")
                 if part.startswith("Tool conventions:"))
    lines = block.splitlines()[3:]  # after the heading and the two general conventions
    starts = ["Read a file with read_file", "edit_file replaces exact text",
              "write_file creates a file", "Use list_directory", "glob_search finds files",
              "grep_search searches", "shell_exec runs a program directly",
              "Use shell_exec with background=true", "Use git_ops", "Text from web_fetch",
              "Cite the pages"]
    assert [line.removeprefix("- ")[:len(start)] for line, start in zip(lines, starts,
                                                                        strict=True)] == starts


def test_every_convention_of_a_built_in_tool_names_that_tool():
    for spec in default_registry().specs():
        for line in spec.prompt_conventions:
            assert spec.name in line, (spec.name, line)
            assert line.endswith(".") and line.strip() == line


def test_a_tool_brings_its_own_conventions():
    spec = ToolSpec(name="lint", description="Lint the project.", input_schema={},
                    category=ToolCategory.EXECUTION, risk=RiskLevel.LOW,
                    prompt_conventions=("Run lint after editing Python files.",),
                    prompt_order=15)
    text = build_system_prompt("", ROOT, "ask", [*_specs(TOOLS), spec], DAY)
    assert "- Read a file with read_file" in text
    assert text.index("read only the part you need") < text.index("- Run lint after") < \
        text.index("- edit_file replaces")
    assert "Run lint" not in _build()


@pytest.mark.parametrize("mode", list(PermissionMode))
def test_the_mode_sentence_is_the_modes_own(mode):
    assert mode.prompt_sentence in _build(mode=mode.value)
