"""Every built-in tool declares itself in one module: schema from Params, defaults, rules.

The schemas are what the model is told, so they must not change by accident (prompt caching
and the model's habits depend on the exact bytes), and converting a tool to Params must not
refuse a call the hand-written schema accepted. The declarations replaced lists kept in the
store, the seed and the Configure dialog; these tests pin them to the values those lists had.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import subprocess
import sys
import typing
from typing import Any

import jsonschema
import pytest

from app.core.tools.base import DEFAULT_ALLOWED_COMMANDS, ToolSpec
from app.core.tools.config_fields import FieldKind
from app.core.tools.params.problems import ParamsError

MODULES = ("read_file", "write_file", "edit_file", "glob_search", "grep_search", "shell_exec",
           "git_ops", "self_eval", "web_fetch", "web_search", "list_directory")


def _specs() -> dict[str, ToolSpec]:
    specs: dict[str, ToolSpec] = {}
    for module in MODULES:
        made = importlib.import_module(f"app.core.tools.builtin.{module}").create()
        for tool in made if isinstance(made, list) else [made]:
            specs[tool.spec.name] = tool.spec
    return specs


SPECS = _specs()

# The first 16 hex digits of sha256(json.dumps(input_schema)), as sent to the model. A change
# here must be deliberate: update the digest in the same commit as the schema.
SCHEMA_DIGESTS = {
    "read_file": "a3dc63ff1371e9ba",
    "write_file": "9a71ba5648168b9b",
    "edit_file": "b9d3e29bbd8497c1",
    "glob_search": "0006fa7b0ed8b78c",
    "grep_search": "fafc2bb5ee284946",
    "shell_exec": "a7b4d1f0545abcfc",
    "shell_jobs": "855ae8ebc9e36f62",
    "git_ops": "a30d794bf376f94f",
    "self_eval": "2df16970eb9a352e",
    "web_fetch": "0f643f0fd825a6e1",
    "web_search": "7196178c5496d241",
    "list_directory": "a442654323a6e267",
}

# The hand-written schemas before Params, without descriptions (those are compared below
# through the digests): what every existing caller was allowed to send.
OLD_SCHEMAS: dict[str, dict[str, Any]] = {
    "read_file": {"type": "object", "properties": {"path": {"type": "string"}, "offset": {"type": "integer", "minimum": 0}, "limit": {"type": "integer", "minimum": 1, "maximum": 100000}}, "required": ["path"], "additionalProperties": False},  # noqa: E501
    "write_file": {"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}, "mode": {"type": "string", "enum": ["create", "overwrite", "append"]}, "create_dirs": {"type": "boolean"}}, "required": ["path", "content"], "additionalProperties": False},  # noqa: E501
    "edit_file": {"type": "object", "properties": {"path": {"type": "string"}, "old_string": {"type": "string", "minLength": 1}, "new_string": {"type": "string"}, "replace_all": {"type": "boolean"}}, "required": ["path", "old_string", "new_string"], "additionalProperties": False},  # noqa: E501
    "glob_search": {"type": "object", "properties": {"pattern": {"type": "string", "minLength": 1}, "base_dir": {"type": "string"}, "max_results": {"type": "integer", "minimum": 1, "maximum": 5000}}, "required": ["pattern"], "additionalProperties": False},  # noqa: E501
    "grep_search": {"type": "object", "properties": {"pattern": {"type": "string", "minLength": 1}, "path": {"type": "string"}, "file_pattern": {"type": "string"}, "context_lines": {"type": "integer", "minimum": 0, "maximum": 20}, "case_insensitive": {"type": "boolean"}, "output_mode": {"type": "string", "enum": ["content", "files_with_matches", "count"]}, "head_limit": {"type": "integer", "minimum": 1, "maximum": 5000}, "offset": {"type": "integer", "minimum": 0}}, "required": ["pattern"], "additionalProperties": False},  # noqa: E501
    "shell_exec": {"type": "object", "properties": {"command": {"type": "string"}, "working_dir": {"type": "string"}, "timeout": {"type": "number", "exclusiveMinimum": 0}, "background": {"type": "boolean"}}, "required": ["command"]},  # noqa: E501
    "shell_jobs": {"type": "object", "properties": {"action": {"type": "string", "enum": ["list", "output", "stop"]}, "job_id": {"type": "string"}, "wait_seconds": {"type": "number", "minimum": 0, "maximum": 60}}, "required": ["action"]},  # noqa: E501
    "git_ops": {"type": "object", "properties": {"action": {"type": "string", "enum": ["status", "diff", "log", "show", "branch_list", "add", "commit", "branch_create", "checkout"]}, "args": {"type": "object", "properties": {"files": {"type": "array", "items": {"type": "string"}}, "message": {"type": "string"}, "branch_name": {"type": "string"}, "max_count": {"type": "integer", "minimum": 1, "maximum": 1000}, "ref": {"type": "string"}, "staged": {"type": "boolean"}}}}, "required": ["action"]},  # noqa: E501
    "self_eval": {"type": "object", "properties": {"checks": {"type": "array", "items": {"type": "string", "enum": ["build", "lint", "type_check", "test"]}}}},  # noqa: E501
    "web_fetch": {"type": "object", "properties": {"url": {"type": "string"}, "max_length": {"type": "integer", "minimum": 1}}, "required": ["url"], "additionalProperties": False},  # noqa: E501
    "web_search": {"type": "object", "properties": {"query": {"type": "string"}, "num_results": {"type": "integer", "minimum": 1}}, "required": ["query"], "additionalProperties": False},  # noqa: E501
}

# Calls the old schemas accepted (checked below against them, so the list cannot drift).
ACCEPTED: dict[str, list[dict[str, Any]]] = {
    "read_file": [{"path": "a.txt"}, {"path": "a", "offset": 0, "limit": 100_000},
                  {"path": "a", "offset": 5.0}],
    "write_file": [{"path": "doc/a", "content": ""},
                   {"path": "a", "content": "x", "mode": "append", "create_dirs": False}],
    "edit_file": [{"path": "a", "old_string": "x", "new_string": ""},
                  {"path": "a", "old_string": "x", "new_string": "y", "replace_all": True}],
    "glob_search": [{"pattern": "**/*.py"}, {"pattern": "*", "base_dir": "src",
                                             "max_results": 5000}],
    "grep_search": [{"pattern": "x"}, {"pattern": "x", "path": "", "file_pattern": "*.py",
                                       "context_lines": 20, "case_insensitive": True,
                                       "output_mode": "count", "head_limit": 1, "offset": 9}],
    "shell_exec": [{"command": "ls"}, {"command": "ls", "working_dir": "src", "timeout": 0.5,
                                       "background": True, "extra": 1}],
    "shell_jobs": [{"action": "list"}, {"action": "output", "job_id": "job-1",
                                        "wait_seconds": 60}],
    "git_ops": [{"action": "status"}, {"action": "log", "args": {}},
                {"action": "diff", "args": {"files": ["a"], "staged": True, "ref": "HEAD",
                                            "unknown": 1}},
                {"action": "log", "args": {"max_count": 1000}},
                {"action": "commit", "args": {"message": "m"}}],
    "self_eval": [{}, {"checks": []}, {"checks": ["test", "lint"]}],
    "web_fetch": [{"url": "https://example.com"}, {"url": "x", "max_length": 10**6}],
    "web_search": [{"query": "q"}, {"query": "q", "num_results": 100}],
}

# Calls the old schemas refused: the limits and types must still hold.
REFUSED: dict[str, list[dict[str, Any]]] = {
    "read_file": [{}, {"path": "a", "limit": 0}, {"path": "a", "limit": 100_001},
                  {"path": "a", "offset": -1}, {"path": "a", "x": 1}],
    "write_file": [{"path": "a"}, {"path": "a", "content": "x", "mode": "truncate"}],
    "edit_file": [{"path": "a", "old_string": "", "new_string": "x"}],
    "glob_search": [{"pattern": ""}, {"pattern": "*", "max_results": 5001}],
    "grep_search": [{"pattern": "x", "context_lines": 21}, {"pattern": "x", "head_limit": 0},
                    {"pattern": "x", "output_mode": "lines"}],
    "shell_exec": [{}, {"command": "ls", "timeout": 0}, {"command": 1}],
    "shell_jobs": [{"action": "kill"}, {"action": "output", "wait_seconds": 61}],
    "git_ops": [{"action": "push"}, {"action": "log", "args": {"max_count": 0}},
                {"action": "add", "args": {"files": "a"}}],
    "self_eval": [{"checks": ["deploy"]}, {"checks": "test"}],
    "web_fetch": [{"url": "x", "max_length": 0}, {}],
    "web_search": [{"query": "q", "num_results": 0}, {"q": "x"}],
}


def test_every_builtin_tool_is_covered() -> None:
    assert set(SPECS) == set(SCHEMA_DIGESTS)
    assert set(OLD_SCHEMAS) == set(SPECS) - {"list_directory"}  # the one new tool


@pytest.mark.parametrize("name", sorted(SCHEMA_DIGESTS))
def test_schema_comes_from_params_and_its_bytes_are_pinned(name: str) -> None:
    spec = SPECS[name]
    assert spec.params is not None
    assert spec.input_schema == spec.params.json_schema()
    data = json.dumps(spec.input_schema, ensure_ascii=False).encode()
    assert hashlib.sha256(data).hexdigest()[:16] == SCHEMA_DIGESTS[name], (
        f"{name}'s schema changed; if that is intended, update SCHEMA_DIGESTS:\n"
        f"{data.decode()}")


def test_schema_bytes_do_not_depend_on_the_process() -> None:
    # Set or dict ordering that varied with hash randomisation would change the bytes between
    # runs and defeat prompt caching: build them in two processes with different hash seeds.
    code = ("import json, sys; sys.path.insert(0, '.'); "
            "from tests.unit.tools.test_tool_specs import SPECS; "
            "print(json.dumps({n: s.input_schema for n, s in SPECS.items()}))")
    outputs = set()
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        outputs.add(subprocess.run([sys.executable, "-c", code], env=env, check=True,
                                   capture_output=True, text=True).stdout)
    assert len(outputs) == 1


@pytest.mark.parametrize("name", sorted(OLD_SCHEMAS))
def test_parse_accepts_what_the_old_schema_accepted(name: str) -> None:
    params = SPECS[name].params
    assert params is not None
    for call in ACCEPTED[name]:
        jsonschema.validate(call, OLD_SCHEMAS[name])  # the example really was valid
        params.parse(call)
        jsonschema.validate(call, SPECS[name].input_schema)


@pytest.mark.parametrize("name", sorted(OLD_SCHEMAS))
def test_parse_refuses_what_the_old_schema_refused(name: str) -> None:
    params = SPECS[name].params
    assert params is not None
    for call in REFUSED[name]:
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(call, OLD_SCHEMAS[name])
        with pytest.raises(ParamsError):
            params.parse(call)


def test_enums_match_the_constants_the_tools_use() -> None:
    # Literal[...] must be spelled out in the class; these are the tuples the code checks.
    from app.core.tools.builtin import git_ops, grep_search, self_eval, write_file
    from app.core.tools.fs.scope import WRITE_MODES

    def literal(cls: Any, field: str) -> tuple[str, ...]:
        hint = {f.name: f.annotation for f in cls.param_fields()}[field]
        args = typing.get_args(hint)
        while args and typing.get_origin(hint) is not typing.Literal:
            hint = args[0]
            args = typing.get_args(hint)
        return args

    assert literal(write_file.WriteFileParams, "mode") == WRITE_MODES
    assert literal(grep_search.GrepSearchParams, "output_mode") == grep_search.OUTPUT_MODES
    assert literal(git_ops.GitOpsParams, "action") == (*git_ops.READ_ACTIONS,
                                                       *git_ops.WRITE_ACTIONS)
    assert literal(self_eval.SelfEvalParams, "checks") == self_eval.CHECKS


def test_defaults_a_new_profile_gets() -> None:
    # The values profiles.py used to hold (DEFAULT_ENABLED_TOOLS, DEFAULT_TOOL_CONFIG).
    enabled = {n for n, s in SPECS.items() if s.default_enabled}
    assert enabled == {"read_file", "glob_search", "grep_search", "web_fetch", "web_search",
                       "git_ops", "list_directory"}
    configs = {n: dict(s.default_config) for n, s in SPECS.items() if s.default_config}
    # The writing tools write the open project (ScopedFs keeps them inside it); shell_exec runs
    # any program sandboxed where the sandbox works, decided at run time ("auto").
    assert configs == {"write_file": {"allowed_write_dirs": ["."]},
                       "edit_file": {"allowed_write_dirs": ["."]},
                       "shell_exec": {"program_level": "auto"},
                       "git_ops": {"git_permission": "read_only"}}


def test_default_rules_read_inside_the_project_and_the_web() -> None:
    # Reading tools are allowed inside the open project only (elsewhere and for secrets they
    # ask); web reading is allowed (the flow guard asks once a secret was read); git's read
    # actions are allowed.
    rules = {n: [(r.decision, r.input_pattern, r.description) for r in s.default_rules]
             for n, s in SPECS.items() if s.default_rules}
    expected = {n: [("allow", "{project}/**", f"{n} reads inside the open project")]
                for n in ("read_file", "glob_search", "grep_search", "list_directory")}
    expected |= {n: [("allow", None, f"{n} is read-only")] for n in ("web_fetch", "web_search")}
    expected["git_ops"] = [("allow", a, f"git {a} only reads")
                           for a in ("status", "diff", "log", "show", "branch_list")]
    assert rules == expected


def test_what_each_tool_can_reach() -> None:
    assert {n for n, s in SPECS.items() if s.runs_programs} == {
        "shell_exec", "shell_jobs", "git_ops", "self_eval", "grep_search"}
    assert {n for n, s in SPECS.items() if s.needs_network} == {"web_fetch", "web_search"}
    assert {n: s.subjects_heading for n, s in SPECS.items() if s.subjects_heading} == {
        "shell_exec": "Commands that will run"}


def test_configure_fields_are_the_ones_the_dialog_showed() -> None:
    fields = {n: [(f.key, f.kind) for f in s.config_fields]
              for n, s in SPECS.items() if s.config_fields}
    assert fields == {
        "write_file": [("allowed_write_dirs", FieldKind.FOLDER_LIST)],
        "edit_file": [("allowed_write_dirs", FieldKind.FOLDER_LIST)],
        "shell_exec": [("allowed_commands", FieldKind.PROGRAM_LIST),
                       ("shell_timeout_s", FieldKind.SECONDS),
                       ("program_level", FieldKind.CHOICE),
                       ("write_folders", FieldKind.FOLDER_LIST),
                       ("network", FieldKind.FLAG),
                       ("git_permission", FieldKind.CHOICE)],
        "self_eval": [("shell_timeout_s", FieldKind.SECONDS), ("checks", FieldKind.TEXT_MAP),
                      ("write_folders", FieldKind.FOLDER_LIST), ("network", FieldKind.FLAG)],
        "git_ops": [("git_permission", FieldKind.CHOICE), ("run_hooks", FieldKind.FLAG)],
        "web_fetch": [("http_timeout_s", FieldKind.SECONDS),
                      ("allow_private_network", FieldKind.FLAG),
                      ("main_content", FieldKind.FLAG),
                      ("follow_cross_host_redirects", FieldKind.FLAG)],
        "web_search": [("http_timeout_s", FieldKind.SECONDS), ("provider", FieldKind.CHOICE),
                       ("brave_key", FieldKind.SECRET)],
        "read_file": [("max_file_bytes", FieldKind.BYTES),
                      ("max_output_chars", FieldKind.INTEGER)],
        "glob_search": [("timeout_s", FieldKind.SECONDS), ("use_fd", FieldKind.CHOICE)],
        "grep_search": [("timeout_s", FieldKind.SECONDS), ("max_output_chars", FieldKind.INTEGER),
                        ("use_rg", FieldKind.CHOICE)],
        "list_directory": [("timeout_s", FieldKind.SECONDS)],
        "shell_jobs": [("max_running_jobs", FieldKind.INTEGER)],
    }
    by_key = {(n, f.key): f for n, s in SPECS.items() for f in s.config_fields}
    assert by_key["shell_exec", "allowed_commands"].default == DEFAULT_ALLOWED_COMMANDS
    assert by_key["web_fetch", "main_content"].default is True
    assert [v for v, _ in by_key["git_ops", "git_permission"].choices] == [
        "disabled", "read_only", "read_write"]
    assert [v for v, _ in by_key["web_search", "provider"].choices] == [
        "auto", "duckduckgo", "brave"]
    assert [v for v, _ in by_key["self_eval", "checks"].choices] == [
        "build", "lint", "type_check", "test"]
    from app.core.secrets import BRAVE_SEARCH_API_KEY
    assert by_key["web_search", "brave_key"].secret_name == BRAVE_SEARCH_API_KEY
    # Every default must survive the field's own parser, or the safe default would replace it.
    for (name, key), field in by_key.items():
        if field.kind is not FieldKind.SECRET:
            assert field.parse(field.default) is not None, (name, key)


@pytest.mark.parametrize("module", ["web_fetch", "web_search"])
def test_web_tools_import_without_their_heavy_libraries(module: str) -> None:
    # Start-up imports every tool module; the HTTP stack and HTML parsers load on first use.
    heavy = ("httpx", "httpcore", "selectolax", "html_to_markdown", "app.core.tools.net_guard",
             "app.core.tools.web_content")
    code = (f"import sys; import app.core.tools.builtin.{module} as m; "
            f"print([n for n in sys.modules if n.split('.')[0] in {heavy!r} or n in {heavy!r}]);"
            "print(m.WARMUP_IMPORTS)")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True, cwd=os.getcwd()).stdout.splitlines()
    assert out[0] == "[]"
    for name in eval(out[1]):  # the warm-up list names modules that exist
        importlib.import_module(name)
