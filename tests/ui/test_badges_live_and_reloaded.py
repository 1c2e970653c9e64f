"""Issue 35: honest badges, the same live and on reload. One run with calls decided every way
(allowed by a rule, approved, declined, denied by a rule, invalid input) against the loopback
model; each card's decision badge, status and rule line read the same when the conversation is
opened again from the store."""

from __future__ import annotations

from app.core.permissions.rules import PermissionRule
from app.core.store.profiles import ToolSetting
from app.ui.widgets.tool_card import ToolCard
from tests.fakes.anthropic_server import (  # noqa: F401  (fixtures)
    Response,
    fake_anthropic,
    fake_anthropic_env,
    tool,
)
from tests.ui.conftest import make_ai_panel, wait_for

WRITE = {"path": "doc/notes.md", "content": "hello\n"}


def _faces(panel) -> dict[str, tuple[str, str, str]]:
    return {w.tool_use_id: (w.decision_badge.text(), w.status_label.text(), w.rule_label.text())
            for w in panel.transcript.items() if isinstance(w, ToolCard)}


async def test_each_card_reads_the_same_live_and_reloaded(
        qtbot, services, project, fake_anthropic_env) -> None:  # noqa: F811
    (project / "a.txt").write_text("text\n")
    profile = services.profiles.ensure_default()
    services.profiles.set_tool(profile.id, ToolSetting("write_file", True,
                                                       {"allowed_write_dirs": ["doc"]}))
    services.permissions.rules.add(PermissionRule(decision="allow", tool_name="read_file",
                                                  priority=500))
    services.permissions.rules.add(PermissionRule(decision="deny", tool_name="glob_search",
                                                  priority=500))
    fake_anthropic_env.script(
        Response.tools(tool("read_file", {"path": "a.txt"}, id="allowed"),
                       tool("write_file", WRITE, id="approved"),
                       tool("write_file", {**WRITE, "content": "again\n"}, id="declined"),
                       tool("glob_search", {"pattern": "*.txt"}, id="denied"),
                       tool("read_file", {"no_path": 1}, id="invalid")),
        Response.text("done"))
    panel = make_ai_panel(qtbot, services, project, size=(800, 700), show=True)
    answers = iter(["approve", "decline"])
    panel.approvals.dialog_shown.connect(
        lambda dialog: getattr(dialog, f"{next(answers)}_button").click())
    assert panel.send("do it all")
    await wait_for(lambda: not panel.running, timeout=30)
    live = _faces(panel)
    assert set(live) == {"allowed", "approved", "declined", "denied", "invalid"}, live
    assert live["approved"][0] == "approved by you" and live["declined"][0] == "declined"
    cid = panel.session.conversation_id

    panel.new_conversation()
    panel.conversations.open(cid)
    await wait_for(lambda: len(_faces(panel)) == 5)
    reloaded = _faces(panel)
    different = {k: (live[k], reloaded[k]) for k in live if live[k] != reloaded[k]}
    assert not different, different
    await panel.shutdown()
