"""Will a tool's programs run contained? One answer for the tools list, the approval dialog
and the permission service (which the permission modes build on)."""

from __future__ import annotations

from dataclasses import dataclass

from app.core.sandbox import Sandbox
from app.core.tools.base import ToolSpec

__all__ = ["ProgramContainment", "program_containment"]


@dataclass(frozen=True)
class ProgramContainment:
    """``contained``: every program the tool starts runs in a working sandbox.
    ``label``: what the UI shows, e.g. "sandboxed (bubblewrap)" or "not sandboxed: …"."""

    runs_programs: bool
    contained: bool
    label: str


def program_containment(spec: ToolSpec, sandbox: Sandbox) -> ProgramContainment:
    if not spec.runs_programs:
        return ProgramContainment(False, True, "starts no programs")
    if not spec.sandboxed:
        return ProgramContainment(True, False, "not sandboxed: this tool's programs run "
                                               "outside the sandbox")
    if not sandbox.status.available:
        refused = " (refused while \"Require the sandbox\" is on)" if sandbox.required else ""
        return ProgramContainment(True, False, f"{sandbox.status.summary}{refused}")
    return ProgramContainment(True, True, sandbox.status.summary)
