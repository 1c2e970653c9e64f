"""MCP annotations are claims: what each makes of a call's facts and of the modes' answers.

readOnlyHint counts only for a server Tebiki runs in a working OS sandbox without network and
write folders; destructiveHint and openWorldHint only make a call stricter; Tebiki's own
read_resource is read-only by construction. The facts say which claim and which proof decided
(the approval dialog and the audit show ``describe()``). The real server behind these facts,
and what its calls can do, is tested in tests/unit/agent/test_mcp_claims_loop.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from app.core.permission_mode import PermissionMode
from app.core.permissions.decision import Decision, DecisionContext
from app.core.permissions.egress import SecretMatcher
from app.core.permissions.facts import CallFacts, call_facts
from app.core.permissions.guards import apply_mode_and_guards
from app.core.sandbox import Sandbox, SandboxStatus
from app.core.sandbox.status import SandboxBackend
from app.core.sensitive_paths import SensitivePaths
from app.core.tools.base import ToolSpec
from app.core.tools.providers.mcp.resources import read_resource_spec
from app.core.tools.providers.mcp.tool_specs import spec_for_tool

WORKING = Sandbox(SandboxStatus(True, SandboxBackend.BUBBLEWRAP, "/usr/bin/bwrap"))
BROKEN = Sandbox.off("bubblewrap is not installed (test)")

READ = {"readOnlyHint": True, "openWorldHint": False}
SANDBOXED = {"runs_programs": True, "sandboxed": True}


def _spec(annotations: dict[str, Any], **server: Any) -> ToolSpec:
    return spec_for_tool("srv", "srv__look", {"name": "look", "annotations": annotations},
                         **server)


def _facts(spec: ToolSpec, project: Path, sandbox: Sandbox = WORKING) -> CallFacts:
    return call_facts(spec, {}, path_subjects=[], project=project, ctx=None, sandbox=sandbox,
                      checkpoints=True, sensitive=None)


def _decide(spec: ToolSpec, project: Path, mode: PermissionMode,
            sandbox: Sandbox = WORKING) -> Decision:
    return apply_mode_and_guards(Decision("ask"), spec, {}, True, [],
                                 DecisionContext(mode=mode, checkpoints=True), project=project,
                                 sandbox=sandbox, sensitive=SensitivePaths(Path("/nonexistent")),
                                 known_secrets=SecretMatcher())


def test_a_read_only_claim_counts_for_a_server_sandboxed_without_network_and_writes(project):
    facts = _facts(_spec(READ, **SANDBOXED), project)
    assert (facts.read_only, facts.contained, facts.reversible, facts.egress) == \
        (True, True, True, False)
    assert facts.describe() == ("read-only (server's claim), contained (sandboxed, no "
                                "network, no writes), sends nothing out")
    auto = _decide(_spec(READ, **SANDBOXED), project, PermissionMode.AUTO)
    assert auto.kind == "allow"
    assert auto.decided_by == f"auto mode: {facts.describe()}"
    assert _decide(_spec(READ, **SANDBOXED), project, PermissionMode.PLAN).kind == "allow"
    # Ask mode asks whatever the facts: it decides nothing by itself.
    assert _decide(_spec(READ, **SANDBOXED), project, PermissionMode.ASK).kind == "ask"


@pytest.mark.parametrize(("server", "sandbox", "why"), [
    ({}, WORKING, "a tool of srv, which Tebiki cannot see into"),  # an HTTP server
    ({"runs_programs": True}, WORKING, "not sandboxed"),
    ({**SANDBOXED, "network": True}, WORKING, "its programs may reach the network"),
    ({**SANDBOXED, "write_folders": ("/var/tmp/notes",)}, WORKING,
     "its server may write to /var/tmp/notes"),
    (SANDBOXED, BROKEN, "not sandboxed: bubblewrap is not installed (test)"),
])
def test_a_read_only_claim_alone_never_grants_autonomy(project, server, sandbox, why):
    spec = _spec(READ, **server)
    facts = _facts(spec, project, sandbox)
    assert not facts.read_only and not facts.contained and not facts.reversible
    assert why in facts.not_contained_because
    assert "its server claims read-only, which counts only for a server in the sandbox" in \
        facts.describe()
    assert _decide(spec, project, PermissionMode.AUTO, sandbox).kind == "ask"
    assert _decide(spec, project, PermissionMode.PLAN, sandbox).kind == "deny"


def test_destructive_beside_read_only_asks_even_when_contained(project):
    spec = _spec({**READ, "destructiveHint": True}, **SANDBOXED)
    facts = _facts(spec, project)
    assert facts.contained and not facts.read_only and not facts.reversible
    assert facts.not_reversible_because == \
        "its server says it may destroy data (destructiveHint)"
    assert "claims read-only but also destructive" in facts.describe()
    assert _decide(spec, project, PermissionMode.AUTO).kind == "ask"
    assert _decide(spec, project, PermissionMode.PLAN).kind == "deny"


def test_an_open_world_claim_sends_data_out_even_from_the_sandbox(project):
    spec = _spec({"readOnlyHint": True, "openWorldHint": True}, **SANDBOXED)
    facts = _facts(spec, project)
    assert facts.read_only and facts.egress
    assert "open world" in facts.destination
    assert _decide(spec, project, PermissionMode.AUTO).kind == "ask"


def test_a_contained_tool_without_a_claim_is_contained_but_not_reversible(project):
    facts = _facts(_spec({}, **SANDBOXED), project)
    assert facts.contained and facts.contained_by == "sandboxed, no network, no writes"
    assert not facts.read_only and not facts.reversible and not facts.egress
    assert _decide(_spec({}, **SANDBOXED), project, PermissionMode.AUTO).kind == "ask"


def test_claims_of_a_tool_tebiki_cannot_see_into_change_nothing(project):
    """A tool of a provider that gives no sandbox facts (a custom tool) stays as it was."""
    spec = ToolSpec(name="x", description="", input_schema={"type": "object"},
                    category=_spec({}).category, risk=_spec({}).risk, server_id="custom",
                    annotations=READ, runs_programs=True, sandboxed=True)
    facts = _facts(spec, project)
    assert not facts.read_only and not facts.contained
    assert facts.not_contained_because == "a tool of custom, which Tebiki cannot see into"


@pytest.mark.parametrize("server", [{"runs_programs": False, "sandboxed": False},
                                    {"runs_programs": True, "sandboxed": False}, SANDBOXED])
def test_read_resource_is_read_only_and_contained_by_construction(project, server):
    spec = read_resource_spec("srv", "srv__read_resource", **server)
    facts = _facts(spec, project)
    assert facts.read_only and not facts.read_only_by  # Tebiki's word, not a claim
    assert facts.contained and facts.contained_by == "it only reads, by construction"
    assert _decide(spec, project, PermissionMode.PLAN).kind == "allow"
    # The URI still goes to the server: only a server that cannot send it on runs unasked.
    expected = "allow" if server == SANDBOXED else "ask"
    assert _decide(spec, project, PermissionMode.AUTO).kind == expected


def test_read_resource_of_a_server_with_network_sends_data_out(project):
    spec = read_resource_spec("srv", "srv__read_resource", network=True, **SANDBOXED)
    assert _facts(spec, project).egress
    assert _decide(spec, project, PermissionMode.AUTO).kind == "ask"


def test_builtin_tools_have_no_claims(project):
    spec = ToolSpec(name="look", description="", input_schema={"type": "object"},
                    category=_spec({}).category, risk=_spec({}).risk,
                    annotations={"readOnlyHint": True})
    facts = _facts(spec, project)
    assert not facts.read_only and not facts.read_only_by and not facts.claim_not_counted
