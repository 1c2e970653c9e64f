"""build_tool_context (per-tool capabilities, safe defaults) and transcript normalisation."""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path

from app.core.agent.context import FALLBACK_CAPABILITY_FIELDS, build_tool_context
from app.core.agent.models import (
    ProviderAuthError,
    ProviderBadRequest,
    ProviderOverloaded,
    ProviderRateLimited,
    classify,
    error_from_body,
)
from app.core.agent.models.tool_calls import parse_tool_call
from app.core.agent.transcript import INTERRUPTED_RESULT, normalize
from app.core.store.profiles import ToolSetting
from app.core.tools.base import (
    DEFAULT_ALLOWED_COMMANDS,
    GitPermission,
    RiskLevel,
    ToolCategory,
    ToolSpec,
)
from app.core.tools.config_fields import CAPABILITY_KEYS, ConfigField, FieldKind
from tests.fakes.anthropic_server import Response


def _settings(**configs: dict) -> dict[str, ToolSetting]:
    return {name: ToolSetting(name, True, cfg) for name, cfg in configs.items()}


def test_capabilities_come_only_from_the_called_tool(project: Path) -> None:
    settings = _settings(
        write_file={"allowed_write_dirs": ["doc", "out/sub"]},
        shell_exec={"allowed_commands": ["make", "pytest"], "shell_timeout_s": 120,
                    "allow_private_network": True},
        web_fetch={"http_timeout_s": 5, "allow_private_network": True, "max_output_bytes": 1000},
        git_ops={"git_permission": "read_write"},
        web_search={"provider": "brave", "allowed_commands": ["rm"]},
    )
    session: dict = {}
    write = build_tool_context(1, settings, project, session, tool_name="write_file")
    assert write.allowed_write_dirs == (project / "doc", project / "out" / "sub")
    assert write.allowed_commands == DEFAULT_ALLOWED_COMMANDS
    assert write.git_permission == GitPermission.READ_ONLY
    assert write.allow_private_network is False

    shell = build_tool_context(1, settings, project, session, tool_name="shell_exec")
    assert shell.allowed_commands == ("make", "pytest") and shell.shell_timeout_s == 120.0
    assert shell.allowed_write_dirs == ()

    fetch = build_tool_context(1, settings, project, session, tool_name="web_fetch")
    assert (fetch.http_timeout_s, fetch.allow_private_network, fetch.max_output_bytes) == (
        5.0, True, 1000)
    assert build_tool_context(1, settings, project, session,
                              tool_name="git_ops").git_permission == GitPermission.READ_WRITE
    search = build_tool_context(1, settings, project, session, tool_name="web_search")
    assert search.config_for("web_search") == {"provider": "brave"}  # capability keys removed
    assert search.allowed_commands == ("rm",)  # its own config, as configured
    assert write.session is session and shell.session is session


def test_no_tool_means_safe_defaults(project: Path) -> None:
    ctx = build_tool_context(1, _settings(write_file={"allowed_write_dirs": ["doc"]}), project,
                             {})
    assert ctx.allowed_write_dirs == () and ctx.allowed_commands == DEFAULT_ALLOWED_COMMANDS
    assert ctx.project_root == project


def test_invalid_values_fall_back_to_safe_defaults(project: Path) -> None:
    settings = _settings(x={"allowed_write_dirs": 42, "allowed_commands": ["rm -rf /"],
                            "git_permission": "admin", "http_timeout_s": -1,
                            "shell_timeout_s": True, "allow_private_network": "yes",
                            "max_output_bytes": 0})
    ctx = build_tool_context(1, settings, project, {}, tool_name="x")
    assert ctx.allowed_write_dirs == ()
    assert ctx.allowed_commands == DEFAULT_ALLOWED_COMMANDS
    assert ctx.git_permission == GitPermission.READ_ONLY
    assert (ctx.http_timeout_s, ctx.shell_timeout_s) == (30.0, 30.0)
    assert ctx.allow_private_network is False and ctx.max_output_bytes == 50_000


def _spec(name: str, *fields: ConfigField) -> ToolSpec:
    return ToolSpec(name, name, {"type": "object"}, ToolCategory.FILE_SYSTEM, RiskLevel.HIGH,
                    config_fields=fields)


WRITER = _spec(
    "writer",
    ConfigField("allowed_write_dirs", "Write folders", FieldKind.FOLDER_LIST),
    ConfigField("git_permission", "Git", FieldKind.CHOICE,
                choices=(("disabled", "Off"), ("read_only", "Read only"))),
    ConfigField("style", "Style", FieldKind.TEXT),
)


def test_a_declared_tool_gets_only_its_declared_capabilities(project: Path) -> None:
    settings = _settings(writer={"allowed_write_dirs": ["doc"], "allowed_commands": ["rm"],
                                 "max_output_bytes": 10, "style": "terse"})
    ctx = build_tool_context(1, settings, project, {}, tool_name="writer", spec=WRITER)
    assert ctx.allowed_write_dirs == (project / "doc",)
    # Not declared by the tool: the config cannot set them.
    assert ctx.allowed_commands == DEFAULT_ALLOWED_COMMANDS and ctx.max_output_bytes == 50_000
    assert ctx.config_for("writer") == {"style": "terse"}
    # Without the spec (a tool with no declared fields) every capability key applies.
    loose = build_tool_context(1, settings, project, {}, tool_name="writer")
    assert loose.allowed_commands == ("rm",) and loose.max_output_bytes == 10


def test_a_declared_field_parses_by_its_own_kind(project: Path, caplog) -> None:
    # The tool offers only disabled / read_only: read_write in its config is invalid for it.
    settings = _settings(writer={"git_permission": "read_write"})
    with caplog.at_level(logging.WARNING, logger="app.core.agent.context"):
        ctx = build_tool_context(1, settings, project, {}, tool_name="writer", spec=WRITER)
    assert ctx.git_permission == GitPermission.READ_ONLY
    assert "invalid git_permission 'read_write' ignored" in caplog.text
    settings = _settings(writer={"git_permission": "disabled"})
    ctx = build_tool_context(1, settings, project, {}, tool_name="writer", spec=WRITER)
    assert ctx.git_permission == GitPermission.DISABLED


def test_fallback_fields_cover_every_capability_key() -> None:
    assert {f.key for f in FALLBACK_CAPABILITY_FIELDS} == CAPABILITY_KEYS
    assert all(f.is_capability for f in FALLBACK_CAPABILITY_FIELDS)


def test_normalize_merges_roles_and_drops_empty_text() -> None:
    history = [
        {"role": "user", "content": [{"type": "text", "text": "a"}]},
        {"role": "user", "content": "b"},
        {"role": "assistant", "content": [{"type": "text", "text": ""}]},
        {"role": "assistant", "content": [{"type": "text", "text": "c"}]},
    ]
    assert normalize(history) == [
        {"role": "user", "content": [{"type": "text", "text": "a"},
                                     {"type": "text", "text": "b"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "c"}]},
    ]
    assert history[0]["content"] == [{"type": "text", "text": "a"}]  # input untouched


def test_normalize_answers_dangling_tool_uses_and_drops_orphans() -> None:
    history = [
        {"role": "user", "content": [{"type": "text", "text": "go"}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "x",
                                           "input": {}},
                                          {"type": "tool_use", "id": "t2", "name": "x",
                                           "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t2",
                                      "content": "ok"},
                                     {"type": "tool_result", "tool_use_id": "ghost",
                                      "content": "??"}]},
    ]
    out = normalize(history)
    results = out[2]["content"]
    assert [r["tool_use_id"] for r in results] == ["t1", "t2"]
    assert results[0]["content"] == INTERRUPTED_RESULT and results[0]["is_error"] is True


def test_normalize_puts_tool_results_first() -> None:
    history = [
        {"role": "user", "content": [{"type": "text", "text": "go"}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "x",
                                           "input": {}}]},
        {"role": "user", "content": [{"type": "text", "text": "also"}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                                      "content": "ok"}]},
    ]
    out = normalize(history)
    assert [b["type"] for b in out[2]["content"]] == ["tool_result", "text"]


def test_parse_tool_call() -> None:
    assert parse_tool_call("i", "n", "", "tool_use").input == {}
    assert parse_tool_call("i", "n", '{"a": [1]}', "tool_use").input == {"a": [1]}
    assert "not valid JSON" in (parse_tool_call("i", "n", "{", "tool_use").error or "")
    assert "max_tokens" in (parse_tool_call("i", "n", "{", "max_tokens").error or "")


def test_error_classification() -> None:
    assert classify(529) is ProviderOverloaded
    assert classify(None, "overloaded_error") is ProviderOverloaded
    assert classify(200, "rate_limit_error") is ProviderRateLimited
    assert classify(503, "overloaded_error") is ProviderOverloaded
    assert classify(418) is ProviderBadRequest
    assert ProviderOverloaded.retryable and not ProviderBadRequest.retryable
    err = error_from_body(401, {"type": "error", "error": {"type": "authentication_error",
                                                           "message": "invalid x-api-key"}},
                          "Anthropic API")
    assert type(err) is ProviderAuthError and "invalid x-api-key" in err.message
    assert err.status == 401 and not err.retryable
    assert "Settings" in err.message


async def test_a_run_builds_the_context_from_the_called_tools_spec(harness) -> None:
    harness.record.spec = replace(harness.record.spec, config_fields=(
        ConfigField("shell_timeout_s", "Timeout", FieldKind.SECONDS),))
    harness.enable("record", True, allowed_commands=["make"], shell_timeout_s=5)
    harness.allow("record")
    harness.server.script(Response.tool_use("record", {"value": "1"}), Response.text("ok"))
    await harness.session().run("go")

    (ctx,) = harness.record.contexts
    assert ctx.shell_timeout_s == 5.0
    assert ctx.allowed_commands == DEFAULT_ALLOWED_COMMANDS  # not a field record declares
