"""What a third-party tool's server says about it (MCP's tool annotations), and when a claim
may count in a call's facts (``app.core.permissions.facts``).

Annotations are the server's word, not facts Tebiki can check. So:

- ``readOnlyHint`` counts only for a tool whose server Tebiki itself runs in the OS sandbox
  without network and without write folders (contained by proof): whatever the server really
  does, it cannot change anything outside its own process, nor send anything out. An HTTP
  server, or a stdio server outside that sandbox, gains nothing from the claim;
- ``destructiveHint`` and ``openWorldHint`` only make a call stricter: a destructive tool is
  never reversible (and its read-only claim never counts), an open-world tool sends data out.

Tebiki's own tools for a server (``read_resource``) are read-only by construction: the spec
says so (``ToolSpec.read_only``), which is Tebiki's word, never a server's.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.core.tools.base import ToolSpec

__all__ = ["SANDBOX_PROOF", "ServerClaims", "server_sandbox_gap"]

# Why a sandboxed server's tool is contained, as the approval dialog and the audit say it.
SANDBOX_PROOF = "sandboxed, no network, no writes"
READ_ONLY_CLAIM = "server's claim"
DESTRUCTIVE = "its server says it may destroy data (destructiveHint)"


@dataclass(frozen=True)
class ServerClaims:
    """The annotations that matter to the permission facts, as the server sent them."""

    read_only: bool = False
    destructive: bool = False
    open_world: bool = False

    @classmethod
    def of(cls, spec: ToolSpec) -> ServerClaims:
        annotations = spec.annotations
        return cls(read_only=annotations.get("readOnlyHint") is True,
                   destructive=annotations.get("destructiveHint") is True,
                   open_world=annotations.get("openWorldHint") is True)

    def read_only_counts(self, contained_because: str) -> bool:
        """Whether the read-only claim counts for a call contained for ``contained_because``:
        only when the sandbox proved it, and never beside a destructive claim."""
        return self.read_only and not self.destructive and contained_because == SANDBOX_PROOF

    def not_counted(self, contained_because: str) -> str:
        """Why a read-only claim does not count ("" when there is none, or it counts)."""
        if not self.read_only or self.read_only_counts(contained_because):
            return ""
        if self.destructive:
            return "its server claims read-only but also destructive, so neither makes it " \
                   "read-only"
        return "its server claims read-only, which counts only for a server in the sandbox " \
               "without network and write folders"


def server_sandbox_gap(spec: ToolSpec) -> str:
    """Why a sandboxed third-party tool's effects may still leave its sandbox ("" when its
    server runs there without write folders; the network is checked before)."""
    folders = spec.sandbox_write_folders
    if folders is None:
        return f"a tool of {spec.server_id}, which Tebiki cannot see into"
    if folders:
        return f"its server may write to {folders[0]}"
    return ""
