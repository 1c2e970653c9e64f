"""MCP configuration: the Claude Desktop shape, validation errors, import, secrets, tool names."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.core.secrets import SecretStoreError
from app.core.settings_fields import MCP_SERVERS
from app.core.store.settings import SettingsRepository
from app.core.tools.base import RiskLevel, ToolCategory
from app.core.tools.providers.mcp.config.claude import (
    claude_desktop_config_paths,
    merge_servers,
    read_claude_desktop_config,
)
from app.core.tools.providers.mcp.config.expand import resolve_values
from app.core.tools.providers.mcp.config.model import (
    SECRET_PLACEHOLDER,
    McpConfigError,
    McpServerConfig,
    dump_mcp_config,
)
from app.core.tools.providers.mcp.config.schema import parse_mcp_config
from app.core.tools.providers.mcp.config.store import McpConfigStore
from app.core.tools.providers.mcp.tool_specs import (
    VALID_TOOL_NAME,
    assign_tool_names,
    qualified_tool_name,
    spec_for_tool,
)

# -- parsing -----------------------------------------------------------------------------------


def test_parses_stdio_and_http_servers_and_round_trips():
    text = json.dumps({"mcpServers": {
        "files": {"command": "npx", "args": ["-y", "server-fs", "/tmp"],
                  "env": {"DEBUG": "1"}},
        "remote": {"url": "https://mcp.example.com/mcp",
                   "headers": {"Authorization": "Bearer x"}, "timeout": 90},
    }})
    servers = parse_mcp_config(text).servers
    files, remote = servers["files"], servers["remote"]
    assert files.transport == "stdio" and files.command == "npx"
    assert files.args == ("-y", "server-fs", "/tmp") and files.env == {"DEBUG": "1"}
    assert remote.transport == "http" and remote.headers == {"Authorization": "Bearer x"}
    assert remote.timeout_s == 90.0
    assert parse_mcp_config(dump_mcp_config(servers)).servers == servers


def test_invalid_json_names_line_and_column():
    with pytest.raises(McpConfigError) as err:
        parse_mcp_config('{"mcpServers": {\n  "a": {"command": "x",}\n}}')
    assert "not valid JSON" in str(err.value) and "line 2" in str(err.value)


def test_missing_wrapper_gets_a_hint():
    with pytest.raises(McpConfigError) as err:
        parse_mcp_config({"files": {"command": "npx"}})
    assert 'wrap it in {"mcpServers"' in str(err.value)


def test_every_problem_is_reported_with_its_place():
    with pytest.raises(McpConfigError) as err:
        parse_mcp_config({"mcpServers": {
            "a": {"command": "x", "args": "not a list"},
            "b": {"command": "x", "env": {"PORT": 8080}},
            "c": {"command": "x", "url": "https://h/"},
            "d": {},
            "builtin": {"command": "x"},
            "e": {"type": "sse", "command": "x"},
            "f": {"url": "ftp://h/"},
            "g": {"command": "x", "timeout": -1},
            "h": {"command": "x", "args": ["ok", 3]},
            " i": {"command": "x"},
        }})
    errors = err.value.errors
    expected = [
        'mcpServers["a"].args: must be a list of strings',
        'mcpServers["b"].env.PORT: must be a string, not 8080 (quote it)',
        'mcpServers["c"]: has both "command" and "url"',
        'mcpServers["d"]: needs "command"',
        "'builtin' is reserved",
        'mcpServers["e"]: "type": \'sse\' does not match "command"',
        'mcpServers["f"].url: must be an http:// or https:// URL',
        'mcpServers["g"].timeout: must be a number of seconds',
        'mcpServers["h"].args[1]: must be a string',
        "must not start or end with spaces",
    ]
    for fragment in expected:
        assert any(fragment in e for e in errors), (fragment, errors)
    assert len(errors) == len(expected)


def test_a_url_entry_keeps_its_transport_or_leaves_it_to_detection():
    servers = parse_mcp_config({"mcpServers": {
        "legacy": {"type": "sse", "url": "https://h/sse"},
        "stream": {"type": "streamable-http", "url": "https://h/mcp"},
        "plain": {"url": "https://h/any"}}}).servers
    assert [servers[n].url_type for n in ("legacy", "stream", "plain")] == ["sse", "http", None]
    assert all(server.transport == "http" for server in servers.values())
    assert servers["legacy"].to_json()["type"] == "sse"
    assert "type" not in servers["plain"].to_json()  # still detected after a save
    assert parse_mcp_config(dump_mcp_config(servers)).servers == servers


def test_auto_approve_keys_are_dropped_with_a_warning():
    parsed = parse_mcp_config({"mcpServers": {"gh": {"command": "gh-mcp",
                                                     "autoApprove": ["create_issue"]}}})
    assert "gh" in parsed.servers
    assert any("never auto-approves" in w for w in parsed.warnings)
    assert "autoApprove" not in json.dumps(dump_mcp_config(parsed.servers))


def test_names_differing_only_by_case_are_rejected():
    with pytest.raises(McpConfigError, match="only by case"):
        parse_mcp_config({"mcpServers": {"Git": {"command": "a"}, "git": {"command": "b"}}})


# -- ${VAR} references ------------------------------------------------------------------------


def test_env_references_expand_from_tebikis_environment():
    assert resolve_values({"TOKEN": "${GH}", "X": "plain"}, "env", {"GH": "s3cret"}) == \
        {"TOKEN": "s3cret", "X": "plain"}
    with pytest.raises(McpConfigError, match=r"\$\{GH\}, which is not set"):
        resolve_values({"TOKEN": "${GH}"}, "env", {})
    with pytest.raises(McpConfigError, match="could not be read"):
        resolve_values({"TOKEN": SECRET_PLACEHOLDER}, "env", {})


# -- Claude Desktop import ---------------------------------------------------------------------


def test_claude_desktop_paths_per_platform(tmp_path: Path):
    mac = claude_desktop_config_paths("darwin", {}, tmp_path)
    assert mac == [tmp_path / "Library/Application Support/Claude/claude_desktop_config.json"]
    win = claude_desktop_config_paths("win32", {"APPDATA": str(tmp_path / "Roaming")}, tmp_path)
    assert win == [tmp_path / "Roaming" / "Claude" / "claude_desktop_config.json"]
    linux = claude_desktop_config_paths("linux", {"XDG_CONFIG_HOME": str(tmp_path / "xdg")},
                                        tmp_path)
    assert linux == [tmp_path / "xdg/Claude/claude_desktop_config.json",
                     tmp_path / ".config/Claude/claude_desktop_config.json"]


def test_reads_a_claude_desktop_config_ignoring_its_other_keys(tmp_path: Path):
    path = tmp_path / "claude_desktop_config.json"
    path.write_text(json.dumps({
        "globalShortcut": "Ctrl+Space",
        "mcpServers": {"fs": {"command": "npx", "args": ["-y", "fs", "/home"]}},
    }), encoding="utf-8")
    parsed = read_claude_desktop_config(path)
    assert list(parsed.servers) == ["fs"] and parsed.servers["fs"].args[-1] == "/home"

    empty = tmp_path / "empty.json"
    empty.write_text('{"globalShortcut": ""}', encoding="utf-8")
    assert read_claude_desktop_config(empty).servers == {}

    broken = tmp_path / "broken.json"
    broken.write_text('{"mcpServers": {', encoding="utf-8")
    with pytest.raises(McpConfigError, match=r"broken\.json is not valid JSON"):
        read_claude_desktop_config(broken)
    with pytest.raises(McpConfigError, match="cannot read"):
        read_claude_desktop_config(tmp_path / "missing.json")


def test_merge_never_replaces_a_configured_server():
    current = {"fs": McpServerConfig("fs", command="mine")}
    incoming = {"FS": McpServerConfig("FS", command="theirs"),
                "gh": McpServerConfig("gh", command="gh")}
    merged, added, skipped = merge_servers(current, incoming)
    assert merged["fs"].command == "mine" and added == ["gh"] and skipped == ["FS"]


# -- storage and secrets -------------------------------------------------------------------------


class FakeKeyring:
    def __init__(self) -> None:
        self.values: dict[str, str] = {}
        self.broken = False

    def get(self, name: str) -> str | None:
        return self.values.get(name)

    def set(self, name: str, value: str | None) -> None:
        if self.broken:
            raise SecretStoreError("The OS keyring is not available (NoKeyringError).")
        if value:
            self.values[name] = value
        else:
            self.values.pop(name, None)


@pytest.fixture
def keyring_() -> FakeKeyring:
    return FakeKeyring()


@pytest.fixture
def store(db, keyring_: FakeKeyring) -> McpConfigStore:
    return McpConfigStore(SettingsRepository(db), get_secret_fn=keyring_.get,
                          set_secret_fn=keyring_.set)


def _raw_setting(db) -> str:
    return db.conn.execute("SELECT value FROM settings WHERE key = ?",
                           (MCP_SERVERS.key,)).fetchone()[0]


def test_env_and_header_values_go_to_the_keyring_not_sqlite(db, store, keyring_):
    servers = parse_mcp_config({"mcpServers": {
        "gh": {"command": "gh-mcp", "env": {"GITHUB_TOKEN": "ghp_secret", "HOME_DIR": "${HOME}"}},
        "web": {"url": "https://h/mcp", "headers": {"Authorization": "Bearer tok_secret"}},
    }}).servers
    store.save(servers)
    raw = _raw_setting(db)
    assert "ghp_secret" not in raw and "tok_secret" not in raw
    assert SECRET_PLACEHOLDER in raw and "${HOME}" in raw  # references are not secrets
    assert keyring_.values == {"mcp:gh:env:GITHUB_TOKEN": "ghp_secret",
                               "mcp:web:header:Authorization": "Bearer tok_secret"}
    assert store.load() == servers
    assert '"GITHUB_TOKEN": "<stored in keyring>"' in store.editor_text()


def test_placeholder_keeps_the_stored_value_and_removal_deletes_it(store, keyring_):
    store.save(parse_mcp_config({"mcpServers": {"gh": {
        "command": "gh-mcp", "env": {"GITHUB_TOKEN": "one"}}}}).servers)
    edited = parse_mcp_config(store.editor_text()).servers
    edited["gh"] = McpServerConfig("gh", command="gh-mcp", args=("--verbose",),
                                   env=edited["gh"].env)
    store.save(edited)
    assert store.load()["gh"].env == {"GITHUB_TOKEN": "one"}
    assert store.load()["gh"].args == ("--verbose",)
    store.save({})
    assert keyring_.values == {} and store.load() == {}


def test_a_renamed_server_keeps_its_stored_values(store, keyring_):
    store.save({"gh": McpServerConfig("gh", command="x", env={"T": "tok"})})
    renamed = {"github": McpServerConfig("github", command="x", env={"T": SECRET_PLACEHOLDER})}
    store.save(renamed, renamed={"github": "gh"})
    assert store.load()["github"].env == {"T": "tok"}
    assert keyring_.values == {"mcp:github:env:T": "tok"}


def test_placeholder_without_a_stored_value_is_an_error(store):
    servers = {"gh": McpServerConfig("gh", command="x", env={"T": SECRET_PLACEHOLDER})}
    with pytest.raises(McpConfigError, match="no value is stored"):
        store.save(servers)


def test_keyring_failure_explains_the_way_out(store, keyring_):
    keyring_.broken = True
    with pytest.raises(McpConfigError, match=r"\$\{VAR\} reference"):
        store.save({"gh": McpServerConfig("gh", command="x", env={"T": "secret"})})
    # Without secret values nothing needs the keyring.
    store.save({"gh": McpServerConfig("gh", command="x", env={"T": "${GH_TOKEN}"})})
    assert store.load()["gh"].env == {"T": "${GH_TOKEN}"}


# -- tool names and specs ------------------------------------------------------------------------


def test_qualified_names_are_valid_for_the_api():
    assert qualified_tool_name("github", "create_issue") == "github__create_issue"
    assert qualified_tool_name("My Server", "do.thing/now") == "My_Server__do_thing_now"
    long = qualified_tool_name("a-very-long-server-name-" * 2, "and_a_long_tool_name" * 3)
    assert len(long) == 64 and VALID_TOOL_NAME.match(long)
    assert long != qualified_tool_name("a-very-long-server-name-" * 2, "and_a_long_tool_name" * 4)
    for server, tool in [("ü", "ß"), ("", ""), ("x" * 200, "y" * 200), ("a b", "c\nd")]:
        assert VALID_TOOL_NAME.match(qualified_tool_name(server, tool))


def test_colliding_names_get_numbered_in_order():
    names = assign_tool_names([("a.b", "t"), ("a_b", "t"), ("a b", "t"), ("other", "t")])
    assert list(names.values()) == ["a_b__t", "a_b__t_2", "a_b__t_3", "other__t"]


def test_read_only_hint_changes_grouping_and_badge_only():
    tool = {"name": "search", "description": "Search.", "inputSchema": {"type": "object"},
            "annotations": {"readOnlyHint": True, "destructiveHint": False}}
    spec = spec_for_tool("gh", "gh__search", tool)
    assert spec.category == ToolCategory.READ_ONLY and spec.risk == RiskLevel.LOW
    assert spec.server_id == "gh" and spec.annotations == tool["annotations"]
    plain = spec_for_tool("gh", "gh__delete", {"name": "delete", "inputSchema": None})
    assert plain.category == ToolCategory.COMPOSITE and plain.risk == RiskLevel.HIGH
    assert plain.input_schema == {"type": "object"}
    assert "delete" in plain.description
