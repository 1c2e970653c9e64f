"""Priority routing across real providers: custom (75) > cli (50) > builtin (-100)."""

from __future__ import annotations

import itertools
import json
import shlex
import shutil
import sys
from pathlib import Path

import pytest

from app.core.permissions.service import ToolPermissionService
from app.core.tools.base import ToolContext
from app.core.tools.builtin.grep_search import GrepSearchTool
from app.core.tools.default_registry import builtin_provider, cli_provider, custom_tools_provider
from app.core.tools.providers.base import ProviderPriority, StaticProvider, ToolProvider
from app.core.tools.providers.cli import CliGrepSearchTool
from app.core.tools.registry import ToolRegistry

RG = shutil.which("rg")
MISSING = "tebiki-no-such-program"
DUMP = Path(__file__).with_name("argv_dump.py")

SHADOW = f"""
[grep_search]
description = "Project grep that shadows the built-in"
command = {json.dumps(f"{shlex.quote(sys.executable)} {shlex.quote(str(DUMP))} {{pattern}}")}
risk_level = "low"

[grep_search.parameters.pattern]
type = "string"
required = true
"""


def fake_rg(tmp_path: Path) -> Path:
    """A stand-in that passes detection, for routing tests that need no real search."""
    script = tmp_path / "fake-rg"
    script.write_text('#!/bin/sh\necho "ripgrep 13.0.0"\n')
    script.chmod(0o755)
    return script


def test_every_provider_satisfies_the_protocol(fresh_data_dir: Path) -> None:
    providers = [builtin_provider(), cli_provider(), custom_tools_provider(fresh_data_dir)]
    for provider in providers:
        assert isinstance(provider, ToolProvider)
        assert isinstance(provider.display_name, str) and provider.display_name
        assert isinstance(provider.is_available(), bool)
    assert [p.priority for p in providers] == [ProviderPriority.BUILTIN, ProviderPriority.CLI,
                                               ProviderPriority.CUSTOM]


@pytest.mark.parametrize("order", list(itertools.permutations(range(3))))
def test_custom_beats_cli_beats_builtin_in_any_registration_order(
        fresh_data_dir: Path, tmp_path: Path, order: tuple[int, ...]) -> None:
    (fresh_data_dir / "tools.toml").write_text(SHADOW)
    providers = [builtin_provider(),
                 cli_provider({"rg": [str(fake_rg(tmp_path))], "fd": [MISSING]}),
                 custom_tools_provider(fresh_data_dir)]
    registry = ToolRegistry([providers[i] for i in order])
    assert registry.provider_of("grep_search").id == "custom"  # type: ignore[union-attr]
    assert registry.get("grep_search").spec.server_id == "custom"  # type: ignore[union-attr]
    assert registry.provider_of("read_file").id == "builtin"  # type: ignore[union-attr]
    registry.unregister_provider("custom")
    assert registry.provider_of("grep_search").id == "cli"  # type: ignore[union-attr]
    assert isinstance(registry.get("grep_search"), CliGrepSearchTool)
    assert registry.get("grep_search").spec.server_id == "builtin"  # type: ignore[union-attr]
    assert registry.provider_of("glob_search").id == "builtin"  # fd missing here
    registry.unregister_provider("cli")
    assert registry.provider_of("grep_search").id == "builtin"  # type: ignore[union-attr]
    assert isinstance(registry.get("grep_search"), GrepSearchTool)


def test_builtin_serves_when_the_cli_program_is_missing() -> None:
    cli = cli_provider({"rg": [MISSING], "fd": [MISSING]})
    registry = ToolRegistry([builtin_provider(), cli])
    assert cli.is_available() is False
    assert registry.provider_of("grep_search").id == "builtin"  # type: ignore[union-attr]
    assert registry.provider_of("glob_search").id == "builtin"  # type: ignore[union-attr]
    assert sorted(registry.names()) == sorted(ToolRegistry([builtin_provider()]).names())


def test_equal_names_from_static_providers_follow_priority() -> None:
    low, high = GrepSearchTool(), GrepSearchTool()
    registry = ToolRegistry([StaticProvider([high], id="b", priority=60),
                             StaticProvider([low], id="a", priority=10)])
    assert registry.get("grep_search") is high


@pytest.mark.skipif(RG is None, reason="ripgrep (rg) is not installed")
async def test_calls_are_executed_by_the_winning_provider(fresh_data_dir: Path,
                                                          project: Path) -> None:
    (project / "a.txt").write_text("needle\n")
    ctx = ToolContext(project_root=project)
    cli = cli_provider({"fd": [MISSING]})
    registry = ToolRegistry([builtin_provider(), cli])
    builtin_only = ToolRegistry([builtin_provider()])
    via_cli = await registry.execute("grep_search", {"pattern": "needle"}, ctx)
    assert via_cli == await builtin_only.execute("grep_search", {"pattern": "needle"}, ctx)
    assert via_cli.content.endswith("a.txt:1:needle")
    (fresh_data_dir / "tools.toml").write_text(SHADOW)
    custom = custom_tools_provider(fresh_data_dir)
    registry.register_provider(custom)
    via_custom = await registry.execute("grep_search", {"pattern": "; rm -rf ."}, ctx)
    assert json.loads(json.loads(via_custom.content)["stdout"])["argv"] == ["; rm -rf ."]
    # the custom schema applies now: the built-in's optional parameters are unknown to it
    refused = await registry.execute("grep_search", {"pattern": "x", "path": "."}, ctx)
    assert refused.is_error and "path" in refused.content


def test_rules_follow_the_server_id_of_the_serving_tool(db, fresh_data_dir: Path,
                                                        tmp_path: Path) -> None:
    """CLI variants keep server_id "builtin", so the seeded allow rule still applies; a custom
    tool that shadows grep_search is server "custom" and is never approved by builtin rules."""
    cli = cli_provider({"rg": [str(fake_rg(tmp_path))], "fd": [MISSING]})
    registry = ToolRegistry([builtin_provider(), cli])
    from app.core.services import default_rules

    service = ToolPermissionService(db, registry=registry, project_root=tmp_path)
    service.rules.seed_defaults(default_rules(registry.specs()))
    spec = registry.get("grep_search").spec  # type: ignore[union-attr]
    assert registry.provider_of("grep_search") is cli
    assert service.decide(spec.server_id, "grep_search", {"pattern": "x"}).kind == "allow"
    (fresh_data_dir / "tools.toml").write_text(SHADOW)
    registry.register_provider(custom_tools_provider(fresh_data_dir))
    spec = registry.get("grep_search").spec  # type: ignore[union-attr]
    assert spec.server_id == "custom"
    assert service.decide(spec.server_id, "grep_search", {"pattern": "x"}).kind == "ask"


def test_reload_then_refresh_changes_routing(fresh_data_dir: Path) -> None:
    custom = custom_tools_provider(fresh_data_dir)
    registry = ToolRegistry([builtin_provider(), custom])
    assert registry.provider_of("grep_search").id == "builtin"  # type: ignore[union-attr]
    generation = registry.generation
    (fresh_data_dir / "tools.toml").write_text(SHADOW)
    assert custom.reload_if_changed()
    registry.refresh()
    assert registry.generation > generation
    assert registry.provider_of("grep_search").id == "custom"  # type: ignore[union-attr]
    (fresh_data_dir / "tools.toml").write_text("[grep_search\n")
    custom.reload()
    registry.refresh()
    assert registry.provider_of("grep_search").id == "builtin"  # type: ignore[union-attr]
    assert custom.load_errors[0].startswith(f"{fresh_data_dir / 'tools.toml'}:1:")
