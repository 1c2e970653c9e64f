"""Every app setting, declared once: key, kind, default, label (help and limits where a Settings
form shows it), as the fields (app.core.fields) a tool's Configure… dialog shows.

Readers ask the store for a field — ``settings.read(CHECKPOINTS_ENABLED)`` is a bool — and get
the field's default for a value never stored or of the wrong kind (a hand-edited database), so
no reader checks a type or repeats a default; writers use the same field (``settings.write``).
The Settings dialog renders the simple fields (flags, numbers, texts) from here with the inputs
of the Configure… dialog (app.ui.dialogs.setting_form). A complex value (the reviewers, the
price table, the MCP servers) keeps its own editor and reader, which check each entry: its
field guarantees the container (an object, a list of objects) and nothing more.

This module imports only app.core.fields, so every layer may read the table (the store itself:
a migration leaves ``PENDING_NOTICES``, ``SettingsRepository.last_conversation`` keeps
``LAST_CONVERSATIONS``), and so may the start path before the store or any tool is loaded.

Secrets are never settings: the store refuses a key that looks like one (the keyring has them).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Generic, TypeVar

from app.core.fields import Field, FieldKind

__all__ = [
    "CHECKPOINTS_ENABLED",
    "CHECKPOINT_MAX_FILE",
    "CHECKPOINT_RETENTION_DAYS",
    "CHECKPOINT_RETENTION_MB",
    "LAST_CONVERSATIONS",
    "LAYOUT",
    "MCP_SERVERS",
    "PARALLEL_RUNS",
    "PENDING_NOTICES",
    "PERMISSION_MODE_CHOSEN",
    "PRICES",
    "RECENT_FOLDERS",
    "REVIEWERS",
    "SAMPLING_MAX_TOKENS_CAP",
    "SANDBOX_READ_ONLY",
    "SANDBOX_REQUIRED",
    "SENSITIVE_PATHS",
    "SETTINGS",
    "SUB_AGENTS_AT_ONCE",
    "SUB_AGENTS_PER_CONVERSATION",
    "SUB_AGENT_LIMITS",
    "SUB_AGENT_MAX_TURNS",
    "SUB_AGENT_SUMMARY_TOKENS",
    "SUB_AGENT_TIME_LIMIT",
    "TRUSTED_PROJECTS",
    "WINDOW_GEOMETRY",
    "WINDOW_STATE",
    "SettingField",
]

# Covariant: a reader of a tuple[str, ...] field may take it as any Iterable[str].
T_co = TypeVar("T_co", covariant=True)

MB = 1024 * 1024
# A read-only empty object: the default a reader of a MAPPING field gets is shared by all.
_NO_ENTRIES: Mapping[str, Any] = MappingProxyType({})


@dataclass(frozen=True)
class SettingField(Field, Generic[T_co]):
    """One app setting; ``T_co`` is what a reader gets (``SettingsRepository.read``)."""

    default: T_co

    def value_of(self, stored: Any) -> T_co:
        value: T_co = super().value_of(stored)
        return value


# -- checkpoints (app.core.agent.checkpointing): on/off, the per-file size cap, and how long /
# how much to keep per project before old ones are pruned in the background ------------------

CHECKPOINTS_ENABLED = SettingField[bool](
    "checkpoints.enabled", "Checkpoints", FieldKind.FLAG, True,
    help="Take checkpoints around tool calls that can change files (undo / redo)")
CHECKPOINT_MAX_FILE = SettingField[int](
    "checkpoints.max_file_bytes", "Size cap per file", FieldKind.INTEGER, 10 * MB,
    minimum=1, maximum=4096 * MB, unit="MB", unit_size=MB)
# 0: no limit of that kind.
CHECKPOINT_RETENTION_DAYS = SettingField[int](
    "checkpoints.retention_days", "Keep checkpoints for", FieldKind.INTEGER, 30,
    minimum=0, maximum=3650, unit="days", placeholder="no limit")
CHECKPOINT_RETENTION_MB = SettingField[int](
    "checkpoints.retention_mb", "… and at most", FieldKind.INTEGER, 2048,
    minimum=0, maximum=1_000_000, unit="MB per project", placeholder="no limit")

# -- the sandbox and what is secret or trusted (app.core.app_sandbox, Services) ---------------

# None (never saved): on where the sandbox works, so installing bubblewrap turns it on.
SANDBOX_REQUIRED = SettingField[bool | None](
    "sandbox.required", "Require the sandbox", FieldKind.FLAG, None,
    help="Refuse to run programs when the sandbox is not available, instead of running them "
         "unsandboxed.")
SANDBOX_READ_ONLY = SettingField[tuple[str, ...]](
    "sandbox.read_only_folders", "Read-only folders", FieldKind.TEXT_LIST, (),
    help="Every sandboxed program may read these (it sees nothing of your home folder but the "
         "project, the write folders and the toolchains otherwise).",
    placeholder="one folder per line, e.g. ~/datasets")
SENSITIVE_PATHS = SettingField[tuple[str, ...]](
    "permissions.sensitive_paths", "Your additions", FieldKind.TEXT_LIST, (),
    help="One per line. A path (absolute, or starting with ~) covers that file or folder and "
         "everything in it; a name without a / (such as *.secret or token.txt) covers files of "
         "that name anywhere, inside projects too.",
    placeholder="~/work/deploy-keys\n/etc/myapp/secret.conf\n*.secret")
# Resolved folder paths; a trusted project's files are not untrusted content for flow labels.
TRUSTED_PROJECTS = SettingField[tuple[str, ...]](
    "permissions.trusted_projects", "Trusted project folders", FieldKind.TEXT_LIST, ())
# Shown once at start-up, then deleted (a migration adds to it: app.core.store.migrations).
PENDING_NOTICES = SettingField[tuple[str, ...]](
    "notices.pending", "Notices to show once", FieldKind.TEXT_LIST, ())

# -- models and servers -------------------------------------------------------------------

# {name, provider, model, base_url, timeout_s, max_calls_per_run} each; their keys are the
# providers' keys (keyring or environment). Checked by app.core.agent.review_step.
REVIEWERS = SettingField[tuple[dict[str, Any], ...]](
    "review.reviewers", "Reviewer models", FieldKind.RECORDS, ())
# The person's edits of the price table, {model prefix: [input, output]} in dollars per
# million tokens, merged over the shipped one by app.core.pricing.prices_from_setting.
PRICES = SettingField[Mapping[str, Any]](
    "pricing.models", "Model prices", FieldKind.MAPPING, _NO_ENTRIES)
# {"mcpServers": {…}} without secret values (app.core.tools.providers.mcp.config.store).
MCP_SERVERS = SettingField[Mapping[str, Any]](
    "mcp.servers", "MCP servers", FieldKind.MAPPING, _NO_ENTRIES)
# (No "token" in the key: the store refuses keys that look like secrets.)
SAMPLING_MAX_TOKENS_CAP = SettingField[int](
    "mcp.sampling.max_output_cap", "Most output tokens a server's sampling request may get",
    FieldKind.INTEGER, 4096, minimum=1)

# -- sub-agents (app.core.agent.sub_agents): how many, how long, how much they may say -------

SUB_AGENTS_AT_ONCE = SettingField[int](
    "sub_agents.at_once", "Sub-agents running at once", FieldKind.INTEGER, 4,
    minimum=1, maximum=16, unit="per conversation")
SUB_AGENTS_PER_CONVERSATION = SettingField[int](
    "sub_agents.per_conversation", "Sub-agents per conversation", FieldKind.INTEGER, 50,
    minimum=1, maximum=1000)
SUB_AGENT_MAX_TURNS = SettingField[int](
    "sub_agents.max_turns", "Model turns per sub-agent", FieldKind.INTEGER, 25,
    minimum=1, maximum=200)
SUB_AGENT_TIME_LIMIT = SettingField[int](
    "sub_agents.time_limit_s", "Time per sub-agent", FieldKind.INTEGER, 600,
    minimum=10, maximum=24 * 3600, unit="seconds")
SUB_AGENT_SUMMARY_TOKENS = SettingField[int](
    "sub_agents.summary_length", "Longest sub-agent summary", FieldKind.INTEGER, 2000,
    minimum=100, maximum=50_000, unit="tokens",
    help="A longer answer is cut; the full transcript stays viewable.")
PARALLEL_RUNS = SettingField[int](
    "runs.at_once", "Conversations running at once", FieldKind.INTEGER, 4, minimum=1,
    maximum=16, help="More wait until one is done or stopped (app.core.agent.run_board).")
SUB_AGENT_LIMITS = (SUB_AGENTS_AT_ONCE, SUB_AGENTS_PER_CONVERSATION, SUB_AGENT_MAX_TURNS,
                    SUB_AGENT_TIME_LIMIT, SUB_AGENT_SUMMARY_TOKENS)

# -- the window ---------------------------------------------------------------------------

# Whether the person chose a permission mode (the first-run panel is then not shown).
PERMISSION_MODE_CHOSEN = SettingField[bool](
    "ui.permission_mode_chosen", "Permission mode chosen", FieldKind.FLAG, False)
# Most recent first.
RECENT_FOLDERS = SettingField[tuple[str, ...]](
    "ui.recent_folders", "Recent project folders", FieldKind.TEXT_LIST, ())
# Qt's saveGeometry / saveState bytes, base64.
WINDOW_GEOMETRY = SettingField[str]("ui.geometry", "Window size and place", FieldKind.TEXT, "")
WINDOW_STATE = SettingField[str]("ui.state", "Dock layout", FieldKind.TEXT, "")
# What the window restores at start-up, read before the store is open (app.core.store.early).
LAYOUT = (WINDOW_GEOMETRY, WINDOW_STATE)
# {project folder: id of the conversation last open in it}, to reopen it with the folder.
LAST_CONVERSATIONS = SettingField[Mapping[str, Any]](
    "conversations.last_by_project", "Conversation last open per project folder", FieldKind.MAPPING,
    _NO_ENTRIES)

SETTINGS: tuple[SettingField[Any], ...] = (
    CHECKPOINTS_ENABLED, CHECKPOINT_MAX_FILE, CHECKPOINT_RETENTION_DAYS, CHECKPOINT_RETENTION_MB,
    SANDBOX_REQUIRED, SANDBOX_READ_ONLY, SENSITIVE_PATHS, TRUSTED_PROJECTS, PENDING_NOTICES,
    REVIEWERS, PRICES, MCP_SERVERS, SAMPLING_MAX_TOKENS_CAP, *SUB_AGENT_LIMITS, PARALLEL_RUNS,
    PERMISSION_MODE_CHOSEN, RECENT_FOLDERS, WINDOW_GEOMETRY, WINDOW_STATE, LAST_CONVERSATIONS,
)
