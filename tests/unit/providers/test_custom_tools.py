"""Custom TOML tools: template parsing, argv rendering, hostile values, loading and reload."""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

from app.core.tools.base import RiskLevel, SubjectError, ToolCategory, ToolContext
from app.core.tools.default_registry import custom_tools_provider
from app.core.tools.providers.base import ToolProvider
from app.core.tools.providers.custom import (
    PROJECT_TOOLS_FILE,
    CustomTool,
    CustomToolsProvider,
    Placeholder,
    TemplateError,
    ToolDefinitionError,
    build_tool,
    load_tools_file,
    parse_template,
)
from app.core.tools.registry import ToolRegistry

DUMP = Path(__file__).with_name("argv_dump.py")
PY = shlex.quote(sys.executable)
DUMP_CMD = f"{PY} {shlex.quote(str(DUMP))}"


def toml_str(text: str) -> str:
    """A TOML basic string (JSON string escapes are valid TOML)."""
    return json.dumps(text)


def tool_toml(name: str, command: str, params: dict[str, dict[str, Any]] | None = None,
              **keys: Any) -> str:
    lines = [f"[{name}]", 'description = "test tool"', f"command = {toml_str(command)}"]
    lines += [f"{k} = {json.dumps(v)}" for k, v in keys.items()]
    for pname, ptable in (params or {}).items():
        lines.append(f"[{name}.parameters.{pname}]")
        lines += [f"{k} = {json.dumps(v)}" for k, v in ptable.items()]
    return "\n".join(lines) + "\n"


def make_tool(command: str, params: dict[str, dict[str, Any]] | None = None,
              **keys: Any) -> CustomTool:
    table: dict[str, Any] = {"description": "test tool", "command": command, **keys}
    if params is not None:
        table["parameters"] = params
    return build_tool("t", table)


async def dump(tool: CustomTool, ctx: ToolContext, **values: Any) -> dict[str, Any]:
    result = await tool.execute(values, ctx)
    assert not result.is_error, result.content
    payload = json.loads(result.content)
    assert payload["success"] is True, payload
    out = json.loads(payload["stdout"])
    out["command"] = payload["command"]
    return out


@pytest.fixture
def ctx(project: Path) -> ToolContext:
    return ToolContext(project_root=project)


# -- the template ----------------------------------------------------------------------------

def test_template_is_split_once_into_words_with_placeholders() -> None:
    words = parse_template("gh issue create --title={title} \"a {body} b\" -- {path} '{{x}}'")
    assert [w.parts for w in words] == [
        ("gh",), ("issue",), ("create",), ("--title=", Placeholder("title")),
        ("a ", Placeholder("body"), " b"), ("--",), (Placeholder("path"),), ("{x}",)]
    assert [w.operand for w in words] == [False] * 6 + [True, True]


@pytest.mark.parametrize("command, needle", [
    ("ls | wc -l", "one program"),
    ("ls && rm -rf x", "one program"),
    ("echo $HOME", "$"),
    ("echo `id`", "`"),
    ("ls *.py", "*"),
    ("{prog} --version", "literal"),
    ("cat > out.txt", ">"),
    ("", "empty"),
])
def test_template_refuses_shell_features(command: str, needle: str) -> None:
    with pytest.raises(TemplateError) as info:
        parse_template(command)
    assert needle in str(info.value)


# -- hostile values ----------------------------------------------------------------------------

HOSTILE = [
    "; rm -rf /tmp/x",
    "$(touch pwned)",
    "`touch pwned`",
    "${HOME}",
    "' ; touch pwned; echo '",
    '" ; touch pwned; echo "',
    "a\nb\ntouch pwned",
    "line\r\nbreak",
    "&& touch pwned",
    "| tee pwned",
    "> pwned",
    "< /etc/passwd",
    "*",
    "~",
    "{other}",
    "a b   c\t d",
    "\\",
    "",
    "ünïcödé ☃",
    "%s%n",
    "x=1",
]


async def test_hostile_values_arrive_as_one_literal_argv_item(ctx: ToolContext,
                                                              project: Path) -> None:
    tool = make_tool(f"{DUMP_CMD} before {{value}} --opt={{value}} after",
                     {"value": {"type": "string", "required": True}})
    for value in HOSTILE:
        out = await dump(tool, ctx, value=value)
        assert out["argv"] == ["before", value, f"--opt={value}", "after"], value
        assert tool.spec.subjects({"value": value}) == [
            " ".join([sys.executable, str(DUMP), "before", value, f"--opt={value}", "after"])]
    assert not (project / "pwned").exists()
    assert not any(project.iterdir())


async def test_leading_dash_is_refused_unless_the_template_makes_it_an_operand(
        ctx: ToolContext) -> None:
    tool = make_tool(f"{DUMP_CMD} {{value}} -- {{path}}",
                     {"value": {"type": "string"}, "path": {"type": "string"}})
    for bad in ("-rf", "--exec=touch pwned", "-"):
        result = await tool.execute({"value": bad}, ctx)
        assert result.is_error
        assert "starting with '-'" in result.content and "parameter 'value'" in result.content
    # after a literal `--` in the template the program treats it as an operand
    out = await dump(tool, ctx, path="--exec=touch pwned")
    assert out["argv"] == ["--", "--exec=touch pwned"]
    # not at the start of the word: `--opt=-x` cannot become an option of its own
    inner = make_tool(f"{DUMP_CMD} --opt={{v}}", {"v": {"type": "string"}})
    assert (await dump(inner, ctx, v="-x"))["argv"] == ["--opt=-x"]


async def test_leading_dash_allowed_by_the_parameter_or_its_enum(ctx: ToolContext) -> None:
    tool = make_tool(f"{DUMP_CMD} {{n}} {{mode}}", {
        "n": {"type": "integer", "allow_leading_dash": True},
        "mode": {"type": "string", "enum": ["-a", "-b"]}})
    assert (await dump(tool, ctx, n=-5, mode="-b"))["argv"] == ["-5", "-b"]


def test_subjects_of_a_bad_call_keep_what_rendered() -> None:
    tool = make_tool("git branch --list {pattern} {n}",
                     {"pattern": {"type": "string"}, "n": {"type": "integer"}})
    with pytest.raises(SubjectError) as info:
        tool.spec.subjects({"pattern": "-D", "n": 2})
    assert info.value.partial == ["git branch --list 2"]
    assert tool.spec.subjects({"pattern": "feat/*"}) == ["git branch --list feat/*"]
    assert tool.spec.subject_kind == "text"


# -- parameters --------------------------------------------------------------------------------

async def test_absent_optional_parameters_drop_their_whole_word(ctx: ToolContext) -> None:
    tool = make_tool(f"{DUMP_CMD} --title={{title}} {{body}} x{{title}}y",
                     {"title": {"type": "string"}, "body": {"type": "string"}})
    assert (await dump(tool, ctx, body="b"))["argv"] == ["b"]
    assert (await dump(tool, ctx))["argv"] == []
    assert (await dump(tool, ctx, title="T"))["argv"] == ["--title=T", "xTy"]
    assert (await dump(tool, ctx, title=""))["argv"] == ["--title=", "xy"]


async def test_flags_booleans_and_defaults(ctx: ToolContext) -> None:
    tool = make_tool(f"{DUMP_CMD} {{verbose}} {{limit}} {{title}} color={{color}}", {
        "verbose": {"type": "boolean", "flag": "--verbose"},
        "limit": {"type": "integer", "flag": "-n", "default": 10},
        "title": {"type": "string", "flag": "--title"},
        "color": {"type": "boolean"},
    })
    assert (await dump(tool, ctx))["argv"] == ["-n", "10"]
    assert (await dump(tool, ctx, verbose=True, title="a b", color=False))["argv"] == [
        "--verbose", "-n", "10", "--title", "a b", "color=false"]
    assert (await dump(tool, ctx, verbose=False, limit=3, color=True))["argv"] == [
        "-n", "3", "color=true"]
    result = await tool.execute({"title": "-x"}, ctx)
    assert result.is_error and "starting with '-'" in result.content


@pytest.mark.parametrize("value, error", [
    ("3", "must be an integer"),
    (3.5, "must be an integer"),
    (True, "must be an integer"),
    (0, "at least 1"),
    (101, "at most 100"),
])
async def test_integers_are_validated(ctx: ToolContext, value: Any, error: str) -> None:
    tool = make_tool(f"{DUMP_CMD} {{n}}",
                     {"n": {"type": "integer", "minimum": 1, "maximum": 100, "required": True}})
    result = await tool.execute({"n": value}, ctx)
    assert result.is_error and error in result.content


async def test_numbers_enums_and_required(ctx: ToolContext) -> None:
    tool = make_tool(f"{DUMP_CMD} {{x}} {{level}}", {
        "x": {"type": "number", "required": True},
        "level": {"type": "string", "enum": ["low", "high"]}})
    assert (await dump(tool, ctx, x=3.0))["argv"] == ["3.0"]
    assert (await dump(tool, ctx, x=7, level="low"))["argv"] == ["7", "low"]
    assert (await dump(tool, ctx, x=0.1))["argv"] == ["0.1"]
    for bad, error in (({}, "missing required parameter 'x'"),
                       ({"x": 1, "level": "mid"}, "must be one of 'low', 'high'"),
                       ({"x": float("nan")}, "finite number"),
                       ({"x": 1, "other": 2}, "unknown parameter(s): other"),
                       ({"x": "1\x00"}, "finite number")):
        result = await tool.execute(bad, ctx)
        assert result.is_error and error in result.content, (bad, result.content)
    text = make_tool(f"{DUMP_CMD} {{s}}", {"s": {"type": "string"}})
    result = await text.execute({"s": "a\x00b"}, ctx)
    assert result.is_error and "NUL" in result.content


def test_spec_schema_risk_and_category() -> None:
    tool = make_tool("gh issue create --title {title} --body {body}", {
        "title": {"type": "string", "description": "Issue title", "required": True},
        "body": {"type": "string", "description": "Issue body", "required": False}})
    spec = tool.spec
    assert spec.server_id == "custom"
    assert spec.risk == RiskLevel.HIGH  # safe by default
    assert spec.category == ToolCategory.EXECUTION
    assert spec.input_schema == {
        "type": "object",
        "properties": {"title": {"type": "string", "description": "Issue title"},
                       "body": {"type": "string", "description": "Issue body"}},
        "required": ["title"], "additionalProperties": False}
    low = make_tool("git branch --list", risk_level="low", category="version_control",
                    timeout=5)
    assert (low.spec.risk, low.spec.category, low.timeout_s) == (
        RiskLevel.LOW, ToolCategory.VERSION_CONTROL, 5.0)


@pytest.mark.parametrize("table, error", [
    ({"command": "ls"}, "description is missing"),
    ({"description": "d"}, "command is missing"),
    ({"description": "d", "command": "ls {x}"}, "no parameter 'x' is declared"),
    ({"description": "d", "command": "ls", "parameters": {"x": {"type": "string"}}},
     "command has no {x}"),
    ({"description": "d", "command": "ls", "risk_level": "medium"}, "use \"low\" or"),
    ({"description": "d", "command": "ls", "category": "misc"}, "category 'misc'"),
    ({"description": "d", "command": "ls", "timeout": 0}, "timeout must be"),
    ({"description": "d", "command": "ls", "risk_levle": "low"}, "unknown key(s) risk_levle"),
    ({"description": "d", "command": "ls {x}", "parameters": {"x": {"type": "int"}}},
     "unknown type 'int'"),
    ({"description": "d", "command": "ls {x}",
      "parameters": {"x": {"type": "integer", "default": "ten"}}}, "default 'ten'"),
    ({"description": "d", "command": "ls {x}",
      "parameters": {"x": {"type": "boolean", "enum": [True]}}}, "enum must be"),
    ({"description": "d", "command": "ls --x={x}",
      "parameters": {"x": {"type": "string", "flag": "--x"}}}, "word of its own"),
])
def test_definition_errors_are_clear(table: dict[str, Any], error: str) -> None:
    with pytest.raises(ToolDefinitionError) as info:
        build_tool("t", table)
    assert error in str(info.value)


# -- running -------------------------------------------------------------------------------------

async def test_runs_in_the_working_dir_with_a_minimal_env(ctx: ToolContext, project: Path,
                                                          monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-secret")
    tool = make_tool(DUMP_CMD)
    out = await dump(tool, ctx)
    assert out["cwd"] == str(project)
    assert "ANTHROPIC_API_KEY" not in out["env"]
    assert out["command"] == [sys.executable, str(DUMP)]


async def test_result_reports_exit_code_and_timeout(ctx: ToolContext) -> None:
    fails = make_tool(f"{PY} -c 'import sys; print(\"out\"); sys.exit(3)'")
    payload = json.loads((await fails.execute({}, ctx)).content)
    assert payload["exit_code"] == 3 and payload["success"] is False
    assert payload["stdout"] == "out\n" and isinstance(payload["duration_ms"], int)
    slow = make_tool(f"{PY} -c 'import time; time.sleep(30)'", timeout=0.5)
    result = await slow.execute({}, ctx)
    assert result.is_error
    payload = json.loads(result.content)
    assert payload["timed_out"] is True and payload["exit_code"] is None
    assert payload["duration_ms"] < 10_000


async def test_output_is_capped(project: Path) -> None:
    ctx = ToolContext(project_root=project, max_output_bytes=1000)
    tool = make_tool(f"{PY} -c 'print(\"x\" * 100000)'")
    payload = json.loads((await tool.execute({}, ctx)).content)
    assert len(payload["stdout"]) < 1500 and "output truncated" in payload["stdout"]


async def test_missing_program_is_listed_but_errors_on_call(fresh_data_dir: Path,
                                                            ctx: ToolContext) -> None:
    (fresh_data_dir / "tools.toml").write_text(
        tool_toml("ghost", "no-such-program-tebiki --x") + tool_toml("ok", DUMP_CMD))
    provider = custom_tools_provider(fresh_data_dir)
    assert provider.load_errors == []
    assert [t.spec.name for t in provider.tools()] == ["ghost", "ok"]
    assert set(provider.unavailable()) == {"ghost"}
    result = await provider.tools()[0].execute({}, ctx)
    assert result.is_error
    assert "'no-such-program-tebiki' was not found" in result.content
    assert "tools.toml:1" in result.content


async def test_git_program_runs_hardened(ctx: ToolContext, project: Path) -> None:
    if not (Path("/usr/bin/git").exists() or Path("/usr/local/bin/git").exists()):
        pytest.skip("git not installed")
    tool = make_tool("git --version")
    payload = json.loads((await tool.execute({}, ctx)).content)
    assert payload["success"] and payload["stdout"].startswith("git version")
    assert payload["command"] == ["git", "--version"]  # what was approved, not the -c options


# -- files, errors, precedence, reload ------------------------------------------------------------

EXAMPLE = f"""
# A tool per table. The [tools.custom.<name>] form is accepted too.
[list_branches]
description = "List git branches"
command = "git branch --list {{pattern}}"
risk_level = "low"
category = "version_control"

[list_branches.parameters.pattern]
type = "string"
description = "Branch name pattern (e.g. 'feat/*')"

[tools.custom.echo_args]
description = "Echo the arguments"
command = {toml_str(DUMP_CMD + " {count} {loud} --name={name}")}
timeout = 10

[tools.custom.echo_args.parameters.count]
type = "integer"
flag = "-n"
minimum = 1

[tools.custom.echo_args.parameters.loud]
type = "boolean"
flag = "--loud"

[tools.custom.echo_args.parameters.name]
type = "string"
required = true
enum = ["a", "b"]
"""


async def test_example_file_loads_both_forms(fresh_data_dir: Path, ctx: ToolContext) -> None:
    (fresh_data_dir / "tools.toml").write_text(EXAMPLE)
    provider = custom_tools_provider(fresh_data_dir)
    assert provider.load_errors == []
    tools = {t.spec.name: t for t in provider.tools()}
    assert set(tools) == {"list_branches", "echo_args"}
    assert tools["list_branches"].spec.risk == RiskLevel.LOW
    assert tools["echo_args"].spec.risk == RiskLevel.HIGH
    assert tools["echo_args"].spec.annotations["source"].endswith("tools.toml:13")
    out = await dump(tools["echo_args"], ctx, count=2, loud=True, name="b")  # type: ignore[arg-type]
    assert out["argv"] == ["-n", "2", "--loud", "--name=b"]


def test_syntax_error_names_file_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "tools.toml"
    path.write_text('[ok]\ndescription = "x"\ncommand = "ls"\n\n[broken\ncommand = "ls"\n')
    tools, errors = load_tools_file(path)
    assert tools == []
    assert len(errors) == 1
    assert errors[0].startswith(f"{path}:5:")
    assert "invalid TOML" in errors[0]


def test_a_bad_tool_names_its_line_and_the_others_load(tmp_path: Path) -> None:
    path = tmp_path / "tools.toml"
    path.write_text("stray = 1\n" + tool_toml("good", "ls -la") + "\n" +
                    tool_toml("bad", "ls {x}", {"x": {"type": "float"}}) + "\n" +
                    tool_toml("piped", "ls | wc"))
    tools, errors = load_tools_file(path)
    assert [t.name for t in tools] == ["good"]
    assert errors[0] == (f"{path}:1: top-level key 'stray' is not a tool; define a tool as a "
                         "table: [stray] with description and command")
    assert errors[1] == f"{path}:9: tool 'bad': parameter 'x': unknown type 'float'; use one " \
                        "of string, integer, number, boolean"
    assert errors[2].startswith(f"{path}:12: tool 'piped': command must be one program")
    assert len(errors) == 3


def test_invalid_utf8_and_other_tools_tables(tmp_path: Path) -> None:
    path = tmp_path / "tools.toml"
    path.write_bytes(b'[a]\ndescription = "x"\n# \xff\n')
    assert load_tools_file(path)[1] == [f"{path}:3: not valid UTF-8 text (TOML files must be "
                                        "UTF-8)"]
    path.write_text('[tools.cli.aliases]\ngrep_search = "rg"\n')
    errors = load_tools_file(path)[1]
    assert errors and "[tools.cli] is not read from this file" in errors[0]
    assert errors[0].startswith(f"{path}:1:")


async def test_project_file_overrides_the_data_dir_by_name(fresh_data_dir: Path,
                                                           project: Path,
                                                           ctx: ToolContext) -> None:
    (fresh_data_dir / "tools.toml").write_text(
        tool_toml("shared", f"{DUMP_CMD} from-data") + tool_toml("mine", f"{DUMP_CMD} mine"))
    (project / ".tebiki").mkdir()
    (project / PROJECT_TOOLS_FILE).write_text(
        tool_toml("shared", f"{DUMP_CMD} from-project"))
    provider = custom_tools_provider(fresh_data_dir, project)
    tools = {t.spec.name: t for t in provider.tools()}
    assert set(tools) == {"shared", "mine"}
    assert (await dump(tools["shared"], ctx))["argv"] == ["from-project"]  # type: ignore[arg-type]
    assert str(project / PROJECT_TOOLS_FILE) in tools["shared"].spec.annotations["source"]


def test_a_broken_file_does_not_take_down_the_other(fresh_data_dir: Path,
                                                    project: Path) -> None:
    (fresh_data_dir / "tools.toml").write_text(tool_toml("mine", "ls"))
    (project / ".tebiki").mkdir()
    (project / PROJECT_TOOLS_FILE).write_text('[x]\ndescription = "unterminated\n')
    provider = custom_tools_provider(fresh_data_dir, project)
    assert [t.spec.name for t in provider.tools()] == ["mine"]
    assert len(provider.load_errors) == 1
    assert provider.load_errors[0].startswith(f"{project / PROJECT_TOOLS_FILE}:2:")


def test_reload_picks_up_edits_without_restart(fresh_data_dir: Path, project: Path) -> None:
    path = fresh_data_dir / "tools.toml"
    path.write_text(tool_toml("one", "ls"))
    provider = custom_tools_provider(fresh_data_dir, project)
    registry = ToolRegistry([provider])
    assert registry.names() == ["one"]
    assert provider.reload_if_changed() is False
    path.write_text(tool_toml("one", "ls -la") + tool_toml("two", "pwd"))
    assert provider.reload_if_changed() is True
    registry.refresh()
    assert sorted(registry.names()) == ["one", "two"]
    assert registry.get("one").spec.annotations["command"] == "ls -la"  # type: ignore[union-attr]
    path.write_text("[two\n")
    assert provider.reload() and registry.names() == ["one", "two"]  # until refresh()
    registry.refresh()
    assert registry.names() == []
    path.unlink()
    assert provider.reload() == [] and provider.tools() == []
    (project / ".tebiki").mkdir()
    (project / PROJECT_TOOLS_FILE).write_text(tool_toml("proj", "ls"))
    assert provider.reload_if_changed() is True
    assert [t.spec.name for t in provider.tools()] == ["proj"]
    other = project / "sub"
    other.mkdir()
    provider.set_project_root(other)
    assert provider.tools() == []


def test_provider_satisfies_the_protocol(fresh_data_dir: Path) -> None:
    provider = custom_tools_provider(fresh_data_dir)
    assert isinstance(provider, ToolProvider)
    assert (provider.id, provider.priority, provider.is_available()) == ("custom", 75, True)
    assert provider.files() == [fresh_data_dir / "tools.toml"]


async def test_registry_validates_and_routes_custom_calls(fresh_data_dir: Path,
                                                          ctx: ToolContext) -> None:
    (fresh_data_dir / "tools.toml").write_text(
        tool_toml("echo", f"{DUMP_CMD} {{n}}", {"n": {"type": "integer", "required": True}}))
    registry = ToolRegistry([custom_tools_provider(fresh_data_dir)])
    bad = await registry.execute("echo", {"n": "1; rm -rf /"}, ctx)
    assert bad.is_error and "n" in bad.content
    good = await registry.execute("echo", {"n": 4}, ctx)
    assert json.loads(json.loads(good.content)["stdout"])["argv"] == ["4"]
    assert os.path.isfile(DUMP)


def test_a_project_file_cannot_replace_a_builtin_tool(fresh_data_dir: Path,
                                                      project: Path) -> None:
    (project / ".tebiki").mkdir()
    (project / PROJECT_TOOLS_FILE).write_text(tool_toml("read_file", "ls") +
                                              tool_toml("fine", "ls"))
    provider = custom_tools_provider(fresh_data_dir, project)
    assert [t.spec.name for t in provider.tools()] == ["fine"]
    assert provider.load_errors == [
        f"{project / PROJECT_TOOLS_FILE}:1: tool 'read_file' is not loaded: a project's "
        "tools.toml cannot replace the built-in read_file. Rename it, or define it in your own "
        "tools.toml in the data folder."]
    (fresh_data_dir / "tools.toml").write_text(tool_toml("read_file", "ls"))
    assert provider.reload() == provider.load_errors  # still refused from the project
    assert sorted(t.spec.name for t in provider.tools()) == ["fine", "read_file"]
    assert "data" in provider.tools()[0].spec.annotations["source"]
    relaxed = CustomToolsProvider(fresh_data_dir, project, reserved_names=())
    assert relaxed.load_errors == []


def test_project_tools_are_their_own_server_so_user_rules_do_not_approve_them(
        db, fresh_data_dir: Path, tmp_path: Path) -> None:
    from app.core.permissions.rules import PermissionRule
    from app.core.permissions.service import ToolPermissionService

    data_dir = tmp_path / "data"
    project = tmp_path / "repo"
    (project / ".tebiki").mkdir(parents=True)
    data_dir.mkdir()
    (data_dir / "tools.toml").write_text(
        '[deploy]\ndescription = "my deploy"\ncommand = "echo mine"\n')
    provider = custom_tools_provider(data_dir, None)
    registry = ToolRegistry([provider])
    assert registry.get("deploy").spec.server_id == "custom"
    service = ToolPermissionService(db, registry=registry)
    service.rules.add(PermissionRule(decision="allow", server_id="custom", tool_name="deploy",
                                     priority=50))
    assert service.decide("custom", "deploy", {}).kind == "allow"

    (project / ".tebiki" / "tools.toml").write_text(
        '[deploy]\ndescription = "the repo\'s deploy"\ncommand = "echo theirs"\n')
    provider.set_project_root(project)
    registry.refresh()
    replaced = registry.get("deploy").spec
    assert replaced.server_id == "project"
    assert service.decide(replaced.server_id, "deploy", {}).kind != "allow"
