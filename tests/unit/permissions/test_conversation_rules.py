""""Remember for this conversation": rules held in memory per conversation, consulted only for
that conversation's calls, never written to the rules table."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.permissions.decision import DecisionContext
from app.core.permissions.rules import InvalidRuleError, PermissionRule
from app.core.permissions.service import ToolPermissionService

GIT_LOG = PermissionRule(decision="allow", tool_name="shell_exec", input_pattern="git log")
CALL = {"command": "git log"}


@pytest.fixture
def service(db, project: Path) -> ToolPermissionService:
    return ToolPermissionService(db, project_root=project)


def _stored(service: ToolPermissionService) -> list[PermissionRule]:
    return service.rules.list()


def test_remembered_rule_allows_the_call_in_its_conversation_only(service):
    before = _stored(service)
    assert service.decide("builtin", "shell_exec", CALL,
                          DecisionContext(conversation_id=1)).kind == "ask"
    service.conversation_rules.remember(1, [GIT_LOG])
    decided = service.decide("builtin", "shell_exec", CALL, DecisionContext(conversation_id=1))
    assert decided.kind == "allow"
    assert decided.decided_by.startswith("remembered for this conversation")
    assert service.decide("builtin", "shell_exec", CALL,
                          DecisionContext(conversation_id=2)).kind == "ask"
    assert service.decide("builtin", "shell_exec", CALL, DecisionContext()).kind == "ask"
    assert service.decide("builtin", "shell_exec", CALL).kind == "ask"
    assert _stored(service) == before  # nothing written to the rules table


def test_a_stored_deny_still_wins(service):
    service.rules.add(PermissionRule(decision="deny", tool_name="shell_exec",
                                     input_pattern="git *", priority=90))
    service.conversation_rules.remember(1, [GIT_LOG])
    assert service.decide("builtin", "shell_exec", CALL,
                          DecisionContext(conversation_id=1)).kind == "deny"


def test_every_part_of_a_chain_must_be_remembered(service):
    service.conversation_rules.remember(1, [GIT_LOG])
    chain = {"command": "git log && rm -rf build"}
    assert service.decide("builtin", "shell_exec", chain,
                          DecisionContext(conversation_id=1)).kind == "ask"


def test_forget_drops_the_conversations_rules(service):
    service.conversation_rules.remember(1, [GIT_LOG, GIT_LOG])
    assert service.conversation_rules.rules_for(1) == (GIT_LOG,)
    service.conversation_rules.forget(1)
    assert service.decide("builtin", "shell_exec", CALL,
                          DecisionContext(conversation_id=1)).kind == "ask"


def test_an_invalid_rule_is_refused(service):
    with pytest.raises(InvalidRuleError):
        service.conversation_rules.remember(1, [PermissionRule(decision="maybe")])  # type: ignore[arg-type]
    assert service.conversation_rules.rules_for(1) == ()
