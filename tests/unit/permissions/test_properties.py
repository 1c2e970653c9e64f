"""Property tests: decide() never crashes, and a top-priority matching deny always wins."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.core.permissions.repository import RuleRepository
from app.core.permissions.rules import InvalidRuleError, PermissionRule
from app.core.permissions.service import ToolPermissionService
from tests.unit.permissions.helpers import fake_registry

names = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=20)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=30),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8),
                                                                      children, max_size=4),
    max_leaves=12)
tool_inputs = json_values | st.fixed_dictionaries({"command": st.text(max_size=60)}) | \
    st.fixed_dictionaries({"path": st.text(max_size=40)}) | \
    st.fixed_dictionaries({"host": st.text(max_size=20)})
patterns = st.none() | st.text(alphabet="ab*./?[]()^$ _-", max_size=8)
rules = st.builds(
    PermissionRule,
    decision=st.sampled_from(["allow", "ask", "deny"]),
    server_id=st.none() | st.sampled_from(["builtin", "mcp"]),
    tool_name=st.none() | st.sampled_from(["shell", "read_file", "fetch", "x"]),
    tool_pattern=patterns,
    input_pattern=patterns,
    priority=st.integers(-5, 5),
)
known_tools = st.sampled_from(["shell", "read_file", "write_file", "fetch", "git_status"]) | names

# Per test, not a profile: loading a profile here would replace tests/conftest.py's for every
# test collected after this module (and undo CI's derandomization).
property_settings = settings(max_examples=150, deadline=None,
                             suppress_health_check=[HealthCheck.function_scoped_fixture])


def _load(db, rule_list):
    repo = RuleRepository(db)
    valid = []
    for rule in rule_list:
        try:
            valid.append(rule.validated())
        except InvalidRuleError:
            continue
    repo.replace_all(valid)
    return valid


@property_settings
@given(rule_list=st.lists(rules, max_size=8), server=st.sampled_from(["builtin", "mcp", ""]),
       tool=known_tools, tool_input=tool_inputs)
def test_decide_never_crashes(db, project, rule_list, server, tool, tool_input):
    _load(db, rule_list)
    service = ToolPermissionService(db, registry=fake_registry(), project_root=project)
    decision = service.decide(server, tool, tool_input)
    assert decision.kind in ("allow", "ask", "deny")
    assert decision.rule is None or decision.rule.decision == decision.kind or \
        decision.kind == "ask"


@property_settings
@given(rule_list=st.lists(rules, max_size=8), tool=known_tools, tool_input=tool_inputs)
def test_matching_top_priority_deny_always_wins(db, project, rule_list, tool, tool_input):
    valid = _load(db, rule_list)
    top = max([r.priority for r in valid], default=0)
    repo = RuleRepository(db)
    deny = repo.add(PermissionRule(decision="deny", priority=top, tool_pattern="*"))
    service = ToolPermissionService(db, registry=fake_registry(), project_root=project)
    decision = service.decide("builtin", tool, tool_input)
    assert decision.kind == "deny"
    assert decision.rule is not None and decision.rule.priority == top
    repo.delete(deny.id)
