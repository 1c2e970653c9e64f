"""The approval dialog says which of an MCP server's claims counted and which facts decided
(app.core.permissions.server_claims): "read-only (server's claim)", "contained (sandboxed, no
network, no writes)", or why a claim did not count."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app.core.agent.events import ApprovalRequest
from app.core.permission_mode import PermissionMode
from app.core.permissions.decision import Decision, DecisionContext
from app.core.permissions.egress import SecretMatcher
from app.core.permissions.guards import apply_mode_and_guards
from app.core.sandbox import Sandbox, SandboxStatus
from app.core.sandbox.status import SandboxBackend
from app.core.sensitive_paths import SensitivePaths
from app.core.tools.providers.mcp.tool_specs import spec_for_tool
from app.ui.dialogs.approval import ApprovalDialog

WORKING = Sandbox(SandboxStatus(True, SandboxBackend.BUBBLEWRAP, "/usr/bin/bwrap"))


def _dialog(qtbot: Any, project: Path, annotations: dict[str, Any], mode: PermissionMode,
            **server: Any) -> ApprovalDialog:
    spec = spec_for_tool("notes", "notes__look", {"name": "look", "annotations": annotations},
                         **server)
    decision = apply_mode_and_guards(
        Decision("ask"), spec, {}, True, [], DecisionContext(mode=mode, checkpoints=True),
        project=project, sandbox=WORKING, sensitive=SensitivePaths(Path("/nonexistent")),
        known_secrets=SecretMatcher())
    assert decision.kind == "ask"
    request = ApprovalRequest("tu_1", spec.name, "notes", {}, spec, decision, None)
    dialog = ApprovalDialog(request, None, project)
    qtbot.addWidget(dialog)
    return dialog


def test_an_uncounted_read_only_claim_is_named(qtbot, project: Path) -> None:
    dialog = _dialog(qtbot, project, {"readOnlyHint": True}, PermissionMode.ASK,
                     runs_programs=True)
    text = dialog.decided_by.text()
    assert text.startswith("Decided by: no rule matched")
    assert "not contained (not sandboxed" in text
    assert "its server claims read-only, which counts only for a server in the sandbox " \
           "without network and write folders" in text


def test_the_proof_and_a_stricter_claim_are_named(qtbot, project: Path) -> None:
    dialog = _dialog(qtbot, project, {"readOnlyHint": True, "destructiveHint": True},
                     PermissionMode.AUTO, runs_programs=True, sandboxed=True)
    text = dialog.decided_by.text()
    assert text.startswith("Decided by: auto mode: contained (sandboxed, no network, no "
                           "writes)")
    assert "not reversible (its server says it may destroy data (destructiveHint))" in text
