"""What the approval dialog (app.ui.dialogs.approval) says about the OS sandbox for a tool that
starts programs: whether its programs run contained and what the sandbox lets them do.

Separate from the dialog because it is a reading of the tool's declared settings, its saved
config and the app's ``Sandbox`` (no widgets), and because the window asks it for the sandbox
and config of a pending call (``approval_sandbox``) without building a dialog.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.core.tools.base import GitPermission, ToolSpec
from app.core.tools.containment import program_containment

if TYPE_CHECKING:
    from app.core.agent.events import ApprovalRequest
    from app.core.sandbox import Sandbox
    from app.core.services import Services


def _folder_text(entry: str, project_root: Path | None) -> str:
    """How a write folder of the config reads: "the project folder", "build", "~/cache"."""
    if entry in (".", "./"):
        return "the project folder"
    path = Path(entry).expanduser()
    if not path.is_absolute():
        return entry
    if project_root is not None and path == project_root:
        return "the project folder"
    home = Path.home()
    return f"~/{path.relative_to(home)}" if path.is_relative_to(home) and path != home else entry


def _and_list(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _config_value(spec: ToolSpec, config: Mapping[str, Any], key: str) -> Any:
    """A config field's value as the tool uses it (saved and valid, else its default)."""
    field = next((f for f in spec.config_fields if f.key == key), None)
    if field is None:
        return None
    parsed = field.parse(config[key]) if key in config else None
    return parsed if parsed is not None else field.default


def sandbox_line(spec: ToolSpec | None, tool_input: Mapping[str, Any], sandbox: Sandbox,
                 tool_config: Mapping[str, Any] | None = None,
                 project_root: Path | None = None) -> tuple[str, bool] | None:
    """(the line, contained) for a call to a tool that starts programs; None for any other.

    What it says about writes and the network comes from the tool's declared settings
    (``write_folders``, ``network``, ``git_permission``) and from whether this call can change
    files at all; a tool that declares neither gets no claim it cannot back up."""
    if spec is None:
        return None
    found = program_containment(spec, sandbox)
    if not found.runs_programs:
        return None
    if not found.contained:
        return "⚠ " + found.label[:1].upper() + found.label[1:] + ".", False
    backend = sandbox.status.backend or "OS sandbox"
    config = tool_config or {}
    limits: list[str] = []
    folders = _config_value(spec, config, "write_folders")
    declared = spec.annotations.get("write_folders")
    if not spec.may_change_files(tool_input):
        limits.append("writes nowhere")
    elif folders is not None:
        shown = [_folder_text(str(f), project_root) for f in folders]
        writes = "writes only inside " + _and_list(shown) if shown else "writes nowhere"
        git = _config_value(spec, config, "git_permission")
        if shown and git is not None and git != GitPermission.READ_WRITE.value:
            writes += " (.git stays read-only)"
        limits.append(writes)
    elif isinstance(declared, str) and declared:
        # A custom tool's own sandbox settings (its tools.toml entry), e.g. "(the project
        # folder)" or "(none)". Only reached for a sandboxed tool, never an MCP server's.
        limits.append("writes nowhere" if declared == "(none)" else
                      "writes only inside " + declared.strip("()"))
    network = _config_value(spec, config, "network")
    if network is None:
        network = spec.needs_network
    limits.append("network allowed" if network else "no network")
    return f"Runs in the sandbox ({backend}): " + ", ".join(limits) + ".", True


def approval_sandbox(services: Services, profile_id: int,
                     request: ApprovalRequest) -> dict[str, Any]:
    """The ``sandbox`` and ``tool_config`` keyword arguments of ApprovalDialog for ``request``:
    the app's sandbox and the tool's saved config in the profile the run uses."""
    setting = services.profiles.tool_settings(profile_id).get(request.tool_name)
    return {"sandbox": services.sandbox,
            "tool_config": dict(setting.config) if setting is not None else {}}
