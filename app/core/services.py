"""The long-lived objects of one app instance, built once and handed to the UI."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.core.permissions.rules import PermissionRule
from app.core.permissions.service import ToolPermissionService
from app.core.sandbox import Sandbox, machine_sandbox
from app.core.store.audit import AuditRepository
from app.core.store.conversations import ConversationRepository
from app.core.store.profiles import ProfileRepository
from app.core.store.settings import SettingsRepository
from app.core.tools.base import ToolSpec
from app.core.tools.builtin import default_registry
from app.core.tools.providers.cli import CliProvider
from app.core.tools.providers.custom import CustomToolsProvider
from app.core.tools.providers.mcp import McpProvider
from app.core.tools.providers.mcp_config import McpConfigStore
from app.core.tools.registry import ToolRegistry

if TYPE_CHECKING:  # the store opens without sqlite-utils (app.core.store.db.Database)
    import sqlite_utils


@dataclass
class Services:
    db: sqlite_utils.Database
    data_dir: Path
    registry: ToolRegistry
    permissions: ToolPermissionService
    profiles: ProfileRepository
    conversations: ConversationRepository
    audit: AuditRepository
    settings: SettingsRepository
    mcp: McpProvider | None = None
    mcp_config: McpConfigStore | None = None
    # The OS sandbox every program runs in; see app_sandbox.
    sandbox: Sandbox = field(default_factory=Sandbox.off)

    async def start_mcp(self) -> None:
        """Start the configured MCP servers (their tools appear as each one comes up)."""
        if self.mcp is None or self.mcp_config is None:
            return
        configs = await asyncio.to_thread(self.mcp_config.load)  # keyring: off the GUI thread
        await self.mcp.apply_config(configs)

    async def aclose(self) -> None:
        """Quit: stop MCP servers (processes killed and reaped), release tool clients."""
        if self.mcp is not None:
            await self.mcp.aclose()
        await self.registry.aclose()

    def set_sandbox_required(self, required: bool) -> None:
        """The "Require the sandbox" setting: saved, and in force for the next call."""
        self.settings.set(SANDBOX_REQUIRED_KEY, bool(required))
        self.sandbox = replace(self.sandbox, required=bool(required))
        self.permissions.sandbox = self.sandbox
        if self.mcp is not None:
            self.mcp.sandbox = self.sandbox  # from each server's next start

    def set_project_root(self, root: Path | None) -> None:
        self.permissions.working_dir = root.resolve() if root is not None else None
        custom = self.custom_tools
        if custom is not None:
            custom.set_project_root(root)  # the project's .tebiki/tools.toml
            self.registry.refresh()

    @property
    def custom_tools(self) -> CustomToolsProvider | None:
        return next((p for p in self.registry.providers()
                     if isinstance(p, CustomToolsProvider)), None)

    def reload_tools(self) -> list[str]:
        """Re-read tools.toml files and look for rg/fd again; returns problems to show."""
        for provider in self.registry.providers():
            if isinstance(provider, CustomToolsProvider | CliProvider):
                provider.reload()
        self.registry.refresh()
        return self.tool_notices()

    def tool_notices(self) -> list[str]:
        """What the person should know about the tools: broken custom tool files, faster
        tools they could install."""
        notices: list[str] = []
        for provider in self.registry.providers():
            if isinstance(provider, CustomToolsProvider):
                notices += provider.load_errors
            elif isinstance(provider, CliProvider):
                notices += provider.suggestions()
        return notices


def profile_defaults(specs: Iterable[ToolSpec]) -> dict[str, Any]:
    """``ProfileRepository.ensure_default`` arguments from the tools' specs: the store knows no
    tool, each tool declares whether a new profile offers it and with which config."""
    specs = list(specs)
    return {"enabled": [s.name for s in specs if s.default_enabled],
            "configs": {s.name: dict(s.default_config) for s in specs if s.default_config}}


def default_rules(specs: Iterable[ToolSpec]) -> list[PermissionRule]:
    """The permission rules the tools ship with (``ToolSpec.default_rules``)."""
    return [PermissionRule(rule.decision, server_id=spec.server_id, tool_name=spec.name,
                           input_pattern=rule.input_pattern, priority=rule.priority,
                           description=rule.description)
            for spec in specs for rule in spec.default_rules]


# Settings key: refuse to run programs unsandboxed. Unset: on where the sandbox works.
SANDBOX_REQUIRED_KEY = "sandbox.required"


def app_sandbox(settings: SettingsRepository, data_dir: Path) -> Sandbox:
    """The sandbox setting of this app instance: the probe's status (probed once per process,
    a few milliseconds in the start-up worker), whether the person requires it, and the hidden
    paths — the shared sensitive list plus Tebiki's own data folder."""
    sandbox = machine_sandbox(data_dir)
    required = settings.get(SANDBOX_REQUIRED_KEY)
    return replace(sandbox, required=required) if isinstance(required, bool) else sandbox


def build_services(db: sqlite_utils.Database, data_dir: Path,
                   project_root: Path | None = None,
                   registry: ToolRegistry | None = None) -> Services:
    settings = SettingsRepository(db)
    sandbox = app_sandbox(settings, data_dir)  # before the MCP provider, which starts programs
    mcp: McpProvider | None = None
    if registry is None:
        registry = default_registry()
        registry.register_provider(CliProvider())
        registry.register_provider(CustomToolsProvider(data_dir, project_root))
        mcp = McpProvider(on_tools_changed=registry.refresh, sandbox=sandbox)
        registry.register_provider(mcp)
    profiles = ProfileRepository(db)
    specs = registry.specs()
    profiles.ensure_default(**profile_defaults(specs))
    permissions = ToolPermissionService(db, registry=registry, working_dir=project_root,
                                        sandbox=sandbox)
    # Every start, not only the first: a tool added in this version brings its default rules
    # to existing databases (each given once; see RuleRepository.seed_defaults).
    permissions.rules.seed_defaults(default_rules(specs))
    return Services(
        db=db,
        data_dir=data_dir,
        registry=registry,
        permissions=permissions,
        profiles=profiles,
        conversations=ConversationRepository(db),
        audit=AuditRepository(db),
        settings=settings,
        mcp=mcp,
        mcp_config=McpConfigStore(settings) if mcp is not None else None,
        sandbox=sandbox,
    )
