""""Remember in this conversation only" in the approval dialog: the rule is kept for the
current conversation (never written to the rules table); the same call in that conversation
then runs without asking, and in another conversation it asks again."""

from __future__ import annotations

import asyncio

from app.core.agent.events import ApprovalRequest
from app.ui.approval_queue import ApprovalQueue, remember_in_conversation
from app.ui.dialogs.approval import ApprovalDialog
from tests.fakes.anthropic_server import fake_anthropic, fake_anthropic_env  # noqa: F401
from tests.ui.conftest import make_ai_panel, wait_for

WRITE = {"path": "doc/notes.md", "content": "hello\n"}


def _request(services, tool_use_id: str = "t1") -> ApprovalRequest:
    tool = services.registry.get("write_file")
    decision = services.permissions.decide("builtin", "write_file", WRITE)
    return ApprovalRequest(tool_use_id, "write_file", "builtin", dict(WRITE), tool.spec,
                           decision, None)


def _remember_here(dialog: ApprovalDialog) -> None:
    dialog.remember.setChecked(True)
    dialog.remember_scope.setCurrentIndex(dialog.remember_scope.findData("conversation"))


def test_dialog_keeps_conversation_rules_out_of_the_answer(qtbot, services, project):
    dialog = ApprovalDialog(_request(services), None, project)
    qtbot.addWidget(dialog)
    assert [dialog.remember_scope.itemText(i) for i in range(dialog.remember_scope.count())] \
        == ["always", "in this conversation only"]
    assert not dialog.remember_scope.isEnabled()
    _remember_here(dialog)
    assert dialog.remember_scope.isEnabled()
    dialog.accept()
    assert dialog.response().approved
    assert dialog.response().rules_to_remember == ()  # the loop saves nothing
    (rule,) = dialog.conversation_rules()
    assert rule.decision == "allow" and rule.tool_name == "write_file"


def test_the_choices_follow_the_scope(qtbot, services, project):
    dialog = ApprovalDialog(_request(services), None, project)
    qtbot.addWidget(dialog)
    always = dialog.remember_choice.itemText(0)
    assert always.startswith("Always allow")
    _remember_here(dialog)
    assert dialog.remember_choice.itemText(0).startswith("Allow ")
    assert dialog.remember_choice.itemText(0).endswith("in this conversation")
    assert "Only in this conversation" in dialog.also_matches.text()
    dialog.remember_scope.setCurrentIndex(0)
    assert dialog.remember_choice.itemText(0) == always
    assert "Only in this conversation" not in dialog.also_matches.text()


def test_always_still_answers_with_the_rule(qtbot, services, project):
    dialog = ApprovalDialog(_request(services), None, project)
    qtbot.addWidget(dialog)
    dialog.remember.setChecked(True)
    dialog.accept()
    assert len(dialog.response().rules_to_remember) == 1
    assert dialog.conversation_rules() == ()


def test_a_declined_call_remembers_nothing(qtbot, services, project):
    dialog = ApprovalDialog(_request(services), None, project)
    qtbot.addWidget(dialog)
    _remember_here(dialog)
    dialog.reject()
    assert dialog.conversation_rules() == ()


async def test_queue_hands_the_rules_over_before_answering(qtbot, services, project):
    from PySide6.QtWidgets import QWidget

    host = QWidget()
    qtbot.addWidget(host)
    queue = ApprovalQueue(host, lambda: project)
    said: list[str] = []
    queue.remember_for_conversation = remember_in_conversation(services.permissions,
                                                               lambda: 7, said.append)
    stored = services.permissions.rules.list()
    queue.dialog_shown.connect(lambda d: (_remember_here(d), d.approve_button.click()))
    response = await asyncio.wait_for(queue.request(_request(services)), 10)
    assert response.approved and response.rules_to_remember == ()
    assert [r.tool_name for r in services.permissions.conversation_rules.rules_for(7)] == \
        ["write_file"]
    assert said and said[0].startswith("Remembered for this conversation")
    assert services.permissions.rules.list() == stored


def test_without_a_keeper_the_choice_is_not_offered(qtbot, services, project):
    dialog = ApprovalDialog(_request(services), None, project)
    qtbot.addWidget(dialog)
    dialog.set_conversation_scope_available(False)
    _remember_here(dialog)
    dialog.accept()
    assert dialog.conversation_rules() == ()
    assert len(dialog.response().rules_to_remember) == 1  # as "always"


async def test_e2e_remembered_in_one_conversation_asks_again_in_another(
        qtbot, services, project, fake_anthropic_env):  # noqa: F811
    from app.core.store.profiles import ToolSetting
    from tests.fakes.anthropic_server import Response

    profile = services.profiles.ensure_default()
    services.profiles.set_tool(profile.id, ToolSetting("write_file", True,
                                                   {"allowed_write_dirs": ["doc"]}))
    stored = services.permissions.rules.list()
    fake_anthropic_env.script(
        Response.tool_use("write_file", WRITE, id="t1"), Response.text("written"),
        Response.tool_use("write_file", WRITE, id="t2"), Response.text("written again"),
        Response.tool_use("write_file", WRITE, id="t3"), Response.text("not written"))
    panel = make_ai_panel(qtbot, services, project, size=(800, 600), show=True)
    shown: list[ApprovalDialog] = []

    def answer(dialog: ApprovalDialog) -> None:
        shown.append(dialog)
        if len(shown) == 1:
            _remember_here(dialog)
            dialog.approve_button.click()
        else:
            dialog.decline_button.click()

    panel.approvals.dialog_shown.connect(answer)
    assert panel.send("write my notes")
    await wait_for(lambda: not panel.running, timeout=20)
    assert panel.send("write them again")
    await wait_for(lambda: not panel.running, timeout=20)
    assert len(shown) == 1  # the second call of this conversation did not ask
    assert panel.tool_cards.by_id["t2"].decision_badge.text() == "allowed by rule"
    panel.new_conversation()
    assert panel.send("write my notes in a new conversation")
    await wait_for(lambda: not panel.running, timeout=20)
    assert len(shown) == 2  # another conversation asks again
    assert services.permissions.rules.list() == stored  # never a database rule
    await panel.shutdown()
