"""MCP robustness (issue 19): server names rules can express, ``${VAR}`` expansion everywhere,
non-JSON stdout, keyring messages, a hanging initialize. Real servers over stdio."""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import time

import pytest

from app.core import secrets
from app.core.permissions.rules import InvalidRuleError, PermissionRule, validate_rule
from app.core.settings_fields import MCP_SERVERS
from app.core.store.settings import SettingsRepository
from app.core.tools.providers.mcp.config.expand import expand_server_config
from app.core.tools.providers.mcp.config.model import McpConfigError, McpServerConfig
from app.core.tools.providers.mcp.config.schema import parse_mcp_config
from app.core.tools.providers.mcp.config.store import McpConfigStore
from app.core.tools.providers.mcp.provider import McpProvider
from tests.mcp_servers import DEMO_SERVER, demo_server_entry


def _configs(**entries: dict) -> dict[str, McpServerConfig]:
    return parse_mcp_config({"mcpServers": entries}).servers


def _rule_accepts(server_id: str) -> bool:
    try:
        validate_rule(PermissionRule("allow", server_id=server_id))
    except InvalidRuleError:
        return False
    return True


# -- 1. server names that rules can express ------------------------------------------------------

TRICKY_NAMES = ["my files", "tab\tname", "nb\u00a0sp", "zero\u200bwidth", "joiner\u200d",
                "ideographic\u3000space", "bidi\u202etxt", "private\ue000use", "line\u2028sep",
                "unassigned\u0378", "emoji👍", "café", "e\u0301", "ｆｕｌｌ", "a.b", "a:b",
                "x" * 64, "dash-and_under", "UPPER", "数字", " lead", "trail ", "ctl\x7f"]


@pytest.mark.parametrize("name", TRICKY_NAMES)
def test_every_accepted_server_name_is_a_valid_rule_server_id(name):
    try:
        servers = _configs(**{name: {"command": "x"}})
    except McpConfigError as exc:
        assert any(json.dumps(name, ensure_ascii=False) in e for e in exc.errors), exc.errors
        return
    config = servers[name]
    assert _rule_accepts(config.name), name


def test_a_name_with_a_space_is_refused_with_a_clear_error():
    with pytest.raises(McpConfigError) as info:
        _configs(**{"my files": {"command": "x"}})
    text = str(info.value)
    assert "'my files'" in text and "permission rules" in text and "'my-files'" in text


async def test_a_stored_name_rules_cannot_express_shows_a_clear_failure(db):
    """A config saved before the check keeps loading: the other servers start, and the
    renamed-needed one is listed as failed with a message saying what to do."""
    settings = SettingsRepository(db)
    settings.set(MCP_SERVERS.key, {"mcpServers": {
        "my files": demo_server_entry(), "good": demo_server_entry()}})
    store = McpConfigStore(settings, get_secret_fn=lambda _n: None,
                           set_secret_fn=lambda _n, _v: None)
    loaded = store.load()
    assert set(loaded) == {"my files", "good"}
    provider = McpProvider()
    try:
        await provider.apply_config(loaded)
        assert provider.status("good")[0] == "running"
        status = provider.server_status("my files")
        assert status.state == "failed"
        assert "rename" in status.message.lower() and "'my-files'" in status.message
        assert all(tool.spec.server_id == "good" for tool in provider.tools())
    finally:
        await provider.aclose()


# -- 2. ${VAR} and ${VAR:-default} anywhere in a value -------------------------------------------

def test_references_are_expanded_inside_every_string_field():
    cfg = _configs(
        s={"command": "run", "args": ["--token=${TOK}", "${NOPE:-fallback}", "$${TOK}", "a$b"],
           "env": {"AUTH": "Bearer ${TOK}", "EMPTY": "${BLANK:-dflt}"}, "cwd": "${HOME_DIR}/x"},
        h={"url": "https://${HOST}/mcp", "headers": {"Authorization": "Bearer ${TOK}"}})
    environ = {"TOK": "t0k", "HOST": "example.test", "HOME_DIR": "/home/me", "BLANK": ""}
    s = expand_server_config(cfg["s"], environ)
    assert s.args == ("--token=t0k", "fallback", "${TOK}", "a$b")
    assert s.env == {"AUTH": "Bearer t0k", "EMPTY": "dflt"}
    assert s.cwd == "/home/me/x"
    h = expand_server_config(cfg["h"], environ)
    assert h.url == "https://example.test/mcp"
    assert h.headers == {"Authorization": "Bearer t0k"}


@pytest.mark.parametrize(("field", "entry"), [
    ("args[1]", {"command": "run", "args": ["ok", "Bearer ${MISSING_VAR}"]}),
    ("env FOO", {"command": "run", "env": {"FOO": "x${MISSING_VAR}y"}}),
    ("headers Authorization", {"url": "https://h/mcp",
                               "headers": {"Authorization": "Bearer ${MISSING_VAR}"}}),
    ("url", {"url": "https://${MISSING_VAR}/mcp"}),
])
def test_an_undefined_variable_is_an_error_naming_server_and_field(field, entry):
    cfg = _configs(srv=entry)["srv"]
    with pytest.raises(McpConfigError) as info:
        expand_server_config(cfg, {})
    text = str(info.value)
    assert "'srv'" in text and field in text and "MISSING_VAR" in text


def test_a_malformed_reference_is_an_error_not_passed_through():
    cfg = _configs(srv={"command": "run", "args": ["${oops", "${1BAD}"]})["srv"]
    with pytest.raises(McpConfigError) as info:
        expand_server_config(cfg, {})
    assert "args[0]" in str(info.value) and "args[1]" in str(info.value)


async def test_expanded_args_and_env_reach_a_real_server(monkeypatch):
    monkeypatch.setenv("TEBIKI_TEST_TOKEN", "abc")
    monkeypatch.delenv("TEBIKI_TEST_UNSET", raising=False)
    provider = McpProvider(_configs(demo=demo_server_entry(
        args=[str(DEMO_SERVER), "--label", "Bearer ${TEBIKI_TEST_TOKEN}",
              "--label", "${TEBIKI_TEST_UNSET:-fallback}", "--label", "cost $$5"],
        env={"DEMO_LABEL": "pre-${TEBIKI_TEST_TOKEN}-post"})))
    try:
        await provider.start()
        state, tail = provider.status("demo")
        assert state == "running", provider.server_status("demo")
        assert "label: Bearer abc" in tail and "label: fallback" in tail
        assert "label: cost $5" in tail and "env label: pre-abc-post" in tail
    finally:
        await provider.aclose()


async def test_an_undefined_variable_stops_the_server_with_a_clear_status(monkeypatch):
    monkeypatch.delenv("TEBIKI_TEST_UNSET", raising=False)
    provider = McpProvider(_configs(demo=demo_server_entry(
        args=[str(DEMO_SERVER), "--label", "Bearer ${TEBIKI_TEST_UNSET}"])))
    try:
        await provider.start()
        status = provider.server_status("demo")
        assert status.state == "failed"
        assert "args[2]" in status.message and "TEBIKI_TEST_UNSET" in status.message
    finally:
        await provider.aclose()


# -- 3. non-JSON lines on stdout -----------------------------------------------------------------

async def test_non_json_stdout_is_summarised_not_logged_per_line(caplog, project):
    from app.core.tools.base import ToolContext

    caplog.set_level(logging.DEBUG)
    provider = McpProvider(_configs(noisy=demo_server_entry(
        args=[str(DEMO_SERVER), "--noise", "2000"])))
    try:
        await provider.start()
        assert provider.status("noisy")[0] == "running", provider.server_status("noisy")
        result = await provider.call("noisy", "echo", {"text": "hi"},
                                     ToolContext(project_root=project))
        assert result.content == "hi"
        await asyncio.sleep(0.2)
    finally:
        await provider.aclose()
    records = [r for r in caplog.records if r.levelno >= logging.INFO]
    noisy = [r for r in records if "JSON" in r.getMessage() or "not json" in r.getMessage()]
    assert 1 <= len(noisy) <= 10, [r.getMessage() for r in noisy]
    assert all(r.exc_info is None for r in caplog.records if r.name.startswith("mcp"))
    assert any("2000" in r.getMessage() for r in noisy), [r.getMessage() for r in noisy]
    assert any("not json 0" in r.getMessage() for r in noisy)
    # Even at DEBUG the SDK's per-line tracebacks are gone.
    assert sum(1 for r in caplog.records if r.exc_info is not None) == 0


# -- 4. no keyring --------------------------------------------------------------------------------

def test_no_keyring_message_names_a_variable_that_is_actually_read(db, monkeypatch):
    import keyring
    from keyring.errors import NoKeyringError

    def refuse(*_args, **_kwargs):
        raise NoKeyringError("no backend")

    monkeypatch.setattr(keyring, "set_password", refuse)
    monkeypatch.setattr(keyring, "delete_password", refuse)
    store = McpConfigStore(SettingsRepository(db), get_secret_fn=lambda _n: None,
                           set_secret_fn=secrets.set_secret)
    with pytest.raises(McpConfigError) as info:
        store.save({"ev": McpServerConfig("ev", command="x", env={"API_KEY": "s3cret"})})
    text = str(info.value)
    assert "MCP:" not in text and "mcp:" not in text
    assert '"API_KEY": "${API_KEY}"' in text  # the way to write it so that API_KEY is read
    assert "keyring" in text and "GNOME Keyring" in text and "keyrings.alt" not in text
    assert "s3cret" not in text
    # And the advice works: the reference is saved without a keyring and read at start.
    store.save({"ev": McpServerConfig("ev", command="x", env={"API_KEY": "${API_KEY}"})})
    loaded = store.load()["ev"]
    assert expand_server_config(loaded, {"API_KEY": "v"}).env == {"API_KEY": "v"}


# -- 5. a hanging initialize never blocks apply_config -------------------------------------------

HANGING = {"command": sys.executable,
           "args": ["-c", "import sys, time; sys.stderr.write('hanging\\n'); sys.stderr.flush(); "
                          "time.sleep(120)"]}


async def _until_starting(provider: McpProvider, name: str) -> None:
    for _ in range(500):
        if name in provider.server_names() and provider.status(name)[0] == "starting":
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"{name} never started")


async def test_apply_config_does_not_wait_for_a_hanging_initialize():
    provider = McpProvider(startup_timeout_s=60.0)
    first = asyncio.create_task(provider.apply_config(_configs(mute=HANGING)))
    try:
        await _until_starting(provider, "mute")
        began = time.monotonic()
        # Another server added while "mute" hangs: it starts and runs at once.
        await asyncio.wait_for(provider.apply_config(
            _configs(mute=HANGING, demo=demo_server_entry())), 20)
        assert provider.status("demo")[0] == "running"
        assert provider.status("mute")[0] == "starting"
        # Removing the hanging server stops it promptly, and the first call returns too.
        await asyncio.wait_for(provider.apply_config(_configs(demo=demo_server_entry())), 10)
        await asyncio.wait_for(first, 10)
        assert time.monotonic() - began < 20
        assert provider.server_names() == ["demo"]
    finally:
        first.cancel()
        await provider.aclose()


async def test_replacing_a_hanging_server_starts_the_new_config_promptly():
    provider = McpProvider(startup_timeout_s=60.0)
    first = asyncio.create_task(provider.apply_config(_configs(srv=HANGING)))
    try:
        await _until_starting(provider, "srv")
        await asyncio.wait_for(provider.apply_config(_configs(srv=demo_server_entry())), 20)
        assert provider.status("srv")[0] == "running"
        await asyncio.wait_for(first, 10)
    finally:
        first.cancel()
        await provider.aclose()


def test_config_and_rules_agree_on_every_code_point_in_a_name():
    """The class, not the example: no single character makes a name the config accepts but a
    rule refuses (the BMP and a sample beyond it)."""
    points = [*range(0x10000), *range(0x1F000, 0x1F700), 0xE0001, 0xF0000, 0x10FFFD]
    for cp in points:
        if 0xD800 <= cp <= 0xDFFF:
            continue  # lone surrogates cannot be encoded in JSON text anyway
        name = f"a{chr(cp)}b"
        try:
            parsed = parse_mcp_config({"mcpServers": {name: {"command": "x"}}})
        except McpConfigError:
            continue
        assert _rule_accepts(parsed.servers[name].name), f"U+{cp:04X}"


def test_saving_warns_about_a_variable_that_is_not_set(monkeypatch):
    monkeypatch.delenv("TEBIKI_TEST_UNSET", raising=False)
    parsed = parse_mcp_config({"mcpServers": {"srv": {
        "command": "run", "args": ["--token", "Bearer ${TEBIKI_TEST_UNSET}"]}}})
    assert any("'srv'" in w and "args[1]" in w and "TEBIKI_TEST_UNSET" in w
               for w in parsed.warnings), parsed.warnings
