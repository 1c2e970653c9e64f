"""The long-lived objects of one app instance, built once and handed to the UI.

Two parts, so the window is ready before the tools are loaded: the store (settings, profiles,
conversations; the tool-call history on its first use) is built on the start path
(``build_store_services``); the tools part (the registry with the built-in, CLI, custom and MCP
tools, the permission service and the sandbox, ``ToolServices``) is built right after, in a
worker thread (``Services.build_tools``). Whatever needs the tools part before then builds it on
first use, so nothing ever sees it missing; ``build_services`` builds both at once (tests,
benchmarks).

New services that only a run or a tool call needs belong in the tools part: a field of
``ToolServices``, built in ``Services._build_tools``, with a property on ``Services``.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.core.app_sandbox import app_sandbox, app_sensitive_paths, sandbox_folders
from app.core.settings_fields import (
    CHECKPOINT_MAX_FILE,
    CHECKPOINT_RETENTION_DAYS,
    CHECKPOINT_RETENTION_MB,
    CHECKPOINTS_ENABLED,
    MB,
    PENDING_NOTICES,
    SANDBOX_READ_ONLY,
    SANDBOX_REQUIRED,
    SENSITIVE_PATHS,
    TRUSTED_PROJECTS,
)
from app.core.store.conversations import ConversationRepository
from app.core.store.profiles import ProfileRepository, ToolSetting
from app.core.store.settings import SettingsRepository
from app.core.tool_services import (
    ProjectToolsReloader,
    ToolServices,
    apply_project_root,
    custom_tools,
)

if TYPE_CHECKING:  # only annotations name the store
    from app.core.agent.checkpointing import Checkpointer
    from app.core.permissions.rules import PermissionRule
    from app.core.permissions.service import ToolPermissionService
    from app.core.sandbox import Sandbox
    from app.core.store.audit import AuditRepository
    from app.core.store.db import Database
    from app.core.tools.base import ToolSpec
    from app.core.tools.providers.custom import CustomToolsProvider
    from app.core.tools.providers.mcp.config.store import McpConfigStore
    from app.core.tools.providers.mcp.provider import McpProvider
    from app.core.tools.registry import ToolRegistry


@dataclass
class Services:
    db: Database
    data_dir: Path
    profiles: ProfileRepository
    conversations: ConversationRepository
    settings: SettingsRepository
    # The project folder the tools work in (set_project_root); read when the tools are built.
    project_root: Path | None = None
    # A registry of the caller's own (tests, benchmarks) instead of the app's tools.
    _given_registry: ToolRegistry | None = field(default=None, repr=False)
    # The default profile this start created without its tools' defaults: the tools part
    # gives them (they come from the tools' specs, which the store path does not load).
    _new_profile_id: int | None = field(default=None, repr=False)
    _tools: ToolServices | None = field(default=None, repr=False)
    _build_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    # Guards project_root against a build finishing in another thread.
    _root_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _project_tools: ProjectToolsReloader = field(default_factory=ProjectToolsReloader,
                                                 repr=False)
    # One checkpointer per project folder (see checkpointer_for).
    _checkpointers: dict[Path, Checkpointer] = field(default_factory=dict, repr=False)

    @cached_property
    def audit(self) -> AuditRepository:
        """The tool-call history; built by its first use (the tool history, a run's first
        call): the ready window does not read it, and its module is ~2 ms of start-up."""
        from app.core.store.audit import AuditRepository

        return AuditRepository(self.db)

    # -- the tools part ------------------------------------------------------------------------

    @property
    def tools_built(self) -> bool:
        return self._tools is not None

    def build_tools(self) -> ToolServices:
        """The tools part, built on the first call (in whichever thread makes it; a second
        caller waits for the first one's build)."""
        tools = self._tools
        if tools is not None:
            return tools
        with self._build_lock:
            if self._tools is None:
                built = self._build_tools()
                with self._root_lock:  # a project opened meanwhile: the tools follow it
                    self._tools = built
                    apply_project_root(built, self.project_root, reread=False)
            return self._tools

    def _build_tools(self) -> ToolServices:
        # Here, not at the top: ~150 ms of imports the ready window does not need.
        from app.core.permissions.service import ToolPermissionService
        from app.core.store.orchestration import OrchestrationRepository
        from app.core.tools.default_registry import (
            cli_provider,
            custom_tools_provider,
            default_registry,
        )
        from app.core.tools.providers.mcp.config.store import McpConfigStore
        from app.core.tools.providers.mcp.oauth.sign_in import McpOAuth
        from app.core.tools.providers.mcp.provider import McpProvider

        # Sub-agents that were working when the app stopped are gone with it: they read as
        # failed; a run paused for the person's approval stays paused (app.core.agent.
        # sub_agents). Here, before the tools that would resume them, not on the start path
        # (the store module and the write are ~2 ms before ready).
        OrchestrationRepository(self.db).interrupt_unfinished()
        sandbox = app_sandbox(self.settings, self.data_dir)  # before MCP, which starts programs
        mcp: McpProvider | None = None
        registry = self._given_registry
        if registry is None:
            registry = default_registry()
            registry.register_provider(cli_provider())
            registry.register_provider(custom_tools_provider(self.data_dir, self.project_root))
            mcp = McpProvider(on_tools_changed=registry.refresh, sandbox=sandbox,
                              roots=[self.project_root] if self.project_root is not None
                              else [])
            mcp.oauth = McpOAuth()  # stored sign-ins are used from the servers' first start
            registry.register_provider(mcp)
        specs = registry.specs()
        if self._new_profile_id is not None and \
                not self.profiles.tool_settings(self._new_profile_id):
            defaults = profile_defaults(specs)
            for name in sorted(set(defaults["enabled"]) | set(defaults["configs"])):
                self.profiles.set_tool(self._new_profile_id, ToolSetting(
                    name, name in defaults["enabled"], dict(defaults["configs"].get(name, {}))))
        permissions = ToolPermissionService(
            self.db, registry=registry, project_root=self.project_root, sandbox=sandbox,
            sensitive=app_sensitive_paths(sandbox, self.settings.read(SENSITIVE_PATHS)))
        # Every start, not only the first: a tool added in this version brings its default
        # rules to existing databases (each given once; see RuleRepository.seed_defaults).
        permissions.rules.seed_defaults(default_rules(specs))
        return ToolServices(registry=registry, permissions=permissions, sandbox=sandbox,
                            mcp=mcp, mcp_config=McpConfigStore(self.settings)
                            if mcp is not None else None)

    @property
    def registry(self) -> ToolRegistry:
        return self.build_tools().registry

    @property
    def permissions(self) -> ToolPermissionService:
        return self.build_tools().permissions

    @property
    def mcp(self) -> McpProvider | None:
        return self.build_tools().mcp

    @property
    def mcp_config(self) -> McpConfigStore | None:
        return self.build_tools().mcp_config

    @property
    def sandbox(self) -> Sandbox:
        return self.build_tools().sandbox

    @sandbox.setter
    def sandbox(self, sandbox: Sandbox) -> None:
        self.build_tools().sandbox = sandbox

    async def start_mcp(self) -> None:
        """Start the configured MCP servers (their tools appear as each one comes up)."""
        import asyncio

        tools = await asyncio.to_thread(self.build_tools)  # imports: off the GUI thread
        if tools.mcp is None or tools.mcp_config is None:
            return
        configs = await asyncio.to_thread(tools.mcp_config.load)  # keyring: off the GUI thread
        await tools.mcp.apply_config(configs)

    async def aclose(self) -> None:
        """Quit: stop MCP servers (processes killed and reaped), release tool clients."""
        tools = self._tools
        if tools is None:  # quit before the tools were built: nothing was started
            return
        if tools.mcp is not None:
            await tools.mcp.aclose()
        await tools.registry.aclose()

    def set_sandbox_read_only(self, folders: Iterable[str]) -> None:
        """Settings → Sandbox's read-only folders: saved, and shown to every program from the
        next call (MCP servers from their next start)."""
        kept = SANDBOX_READ_ONLY.check_input(list(folders))
        self.settings.write(SANDBOX_READ_ONLY, kept)
        self.sandbox = replace(self.sandbox, read_only=sandbox_folders(kept))
        self.permissions.sandbox = self.sandbox
        if self.mcp is not None:
            self.mcp.sandbox = self.sandbox

    def set_sandbox_required(self, required: bool) -> None:
        """The "Require the sandbox" setting: saved, and in force for the next call."""
        self.settings.write(SANDBOX_REQUIRED, bool(required))
        self.sandbox = replace(self.sandbox, required=bool(required))
        self.permissions.sandbox = self.sandbox
        if self.mcp is not None:
            self.mcp.sandbox = self.sandbox  # from each server's next start

    def checkpointer_for(self, project_root: Path) -> Checkpointer | None:
        """The checkpoints of a project folder (None when switched off in Settings). Creating
        one does no I/O; the shadow repository appears with the first checkpoint."""
        # Here, not at the top: start-up builds services before any project is open.
        from app.core.agent.checkpointing import Checkpointer

        if not self.settings.read(CHECKPOINTS_ENABLED):
            return None
        root = Path(project_root).resolve()
        max_file = self.settings.read(CHECKPOINT_MAX_FILE)
        current = self._checkpointers.get(root)
        if current is None or current.store.max_file_bytes != max_file:
            current = self._checkpointers[root] = Checkpointer(self.data_dir, root,
                                                               max_file_bytes=max_file)
        return current

    def checkpoint_retention(self) -> tuple[float | None, int | None]:
        """(days, bytes) to keep checkpoints for; None: no limit of that kind."""
        days = self.settings.read(CHECKPOINT_RETENTION_DAYS)
        megabytes = self.settings.read(CHECKPOINT_RETENTION_MB)
        return (float(days) if days > 0 else None, megabytes * MB if megabytes > 0 else None)

    def set_project_root(self, project_root: Path | None) -> None:
        """The project folder the tools work in; before the tools are built, their build
        reads it."""
        with self._root_lock:
            self.project_root = project_root
            if self._tools is not None:
                apply_project_root(self._tools, project_root)

    async def open_project(self, project_root: Path | None) -> None:
        """``set_project_root`` for File → Open Folder: the project's tools.toml is read in a
        worker thread; of folders opened in quick succession the last one's tools win."""
        with self._root_lock:
            self.project_root, tools = project_root, self._tools
        if tools is not None:
            await self._project_tools.follow(tools, project_root, lambda: self.project_root)

    # -- what is secret, what is trusted -----------------------------------------------------

    def sensitive_additions(self) -> list[str]:
        """The person's additions to the sensitive paths (Settings → Permissions)."""
        return list(self.settings.read(SENSITIVE_PATHS))

    def set_sensitive_additions(self, entries: Iterable[str]) -> None:
        """Save the additions (paths, or file-name patterns such as ``*.secret``) and use
        them from the next decision on."""
        cleaned = SENSITIVE_PATHS.check_input(list(entries))
        self.settings.write(SENSITIVE_PATHS, cleaned)
        self.permissions.sensitive = app_sensitive_paths(self.sandbox, cleaned)

    def is_trusted(self, project_root: Path) -> bool:
        """Whether the person marked this project folder trusted (its files are then not
        untrusted content for the conversation's flow labels)."""
        return str(Path(project_root).resolve()) in self.settings.read(TRUSTED_PROJECTS)

    def set_trusted(self, project_root: Path, trusted: bool) -> None:
        root = str(Path(project_root).resolve())
        current = [v for v in self.settings.read(TRUSTED_PROJECTS) if v != root]
        self.settings.write(TRUSTED_PROJECTS, (*current, *([root] if trusted else [])))

    def take_notices(self) -> list[str]:
        """Notices the app shows once (e.g. what a migration changed), removed as read."""
        notices = self.settings.read(PENDING_NOTICES)
        if notices:
            self.settings.delete(PENDING_NOTICES.key)
        return list(notices)

    @property
    def custom_tools(self) -> CustomToolsProvider | None:
        return custom_tools(self.registry)

    def reload_tools(self) -> list[str]:
        """Re-read tools.toml files and look for rg/fd again; returns problems to show."""
        from app.core.tools.providers.cli import CliProvider
        from app.core.tools.providers.custom import CustomToolsProvider

        for provider in self.registry.providers():
            if isinstance(provider, CustomToolsProvider | CliProvider):
                provider.reload()
        self.registry.refresh()
        return self.tool_notices()

    def tool_notices(self) -> list[str]:
        """What the person should know about the tools: broken custom tool files, faster
        tools they could install."""
        from app.core.tools.providers.cli import CliProvider
        from app.core.tools.providers.custom import CustomToolsProvider

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
    from app.core.permissions.rules import PermissionRule

    return [PermissionRule(rule.decision, server_id=spec.server_id, tool_name=spec.name,
                           input_pattern=rule.input_pattern, priority=rule.priority,
                           description=rule.description)
            for spec in specs for rule in spec.default_rules]


def build_store_services(db: Database, data_dir: Path,
                         project_root: Path | None = None,
                         registry: ToolRegistry | None = None) -> Services:
    """The start path's part: the store's repositories and the default profile. The tools part
    is built by ``Services.build_tools`` (or by the first use of one of its members)."""
    profiles = ProfileRepository(db)
    new_profile_id = None
    if not profiles.list():  # first start: the tools' defaults come with the tools part
        new_profile_id = profiles.ensure_default().id
    return Services(
        db=db,
        data_dir=data_dir,
        profiles=profiles,
        conversations=ConversationRepository(db),
        settings=SettingsRepository(db),
        project_root=project_root,
        _given_registry=registry,
        _new_profile_id=new_profile_id,
    )


def build_services(db: Database, data_dir: Path,
                   project_root: Path | None = None,
                   registry: ToolRegistry | None = None) -> Services:
    """Both parts at once."""
    services = build_store_services(db, data_dir, project_root, registry)
    services.build_tools()
    return services
