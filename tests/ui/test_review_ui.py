"""Quorum review in the UI (issue 18): the approval dialog's Reviews panel, the tool card's
"approved / rejected by review", the history's "who decided", the profile switches, the
``review`` rule decision and Settings → Review.

Set REVIEW_SHOTS=/some/folder to save screenshots of what the tests build."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog, QLabel, QWidget

from app.core.agent.events import ApprovalRequest
from app.core.permissions.rules import PermissionRule
from app.core.review import QuorumResult, Review
from app.core.settings_fields import REVIEWERS
from app.core.tools.base import RiskLevel, ToolCategory, ToolSpec
from tests.fakes.anthropic_server import fake_anthropic, fake_anthropic_env  # noqa: F401
from tests.fakes.reviewer_server import reviewer_servers  # noqa: F401  (fixtures)
from tests.ui.conftest import wait_for

APPROVE = Review("sonnet", "claude-sonnet-4-5", "approve", "low",
                 "Writes one doc file inside the project.", (), 820, 900, 60)
REJECT = Review("local", "qwen2.5:14b", "reject", "high",
                "Overwrites the README with unrelated content.",
                ("content does not match the request", "no backup"), 2400, 1200, 90)
TIMEOUT = Review("haiku", "claude-haiku-4-5", "escalate", "high", "No valid verdict: timeout",
                 (), 90000, 0, 0, error="timed out after 90 s")


def _shot(widget: QWidget, name: str) -> None:
    folder = os.environ.get("REVIEW_SHOTS")
    if folder:
        from PySide6.QtWidgets import QApplication

        Path(folder).mkdir(parents=True, exist_ok=True)
        for _ in range(3):  # let queued shows and layout requests land first
            QApplication.processEvents()
        widget.grab().save(str(Path(folder) / f"{name}.png"))


def _texts(widget: QWidget) -> str:
    return "\n".join(label.text() for label in widget.findChildren(QLabel))


# -- approval dialog ----------------------------------------------------------------------------

def _request(services, reviews=(), reason=""):
    spec = ToolSpec("write_file", "d", {"type": "object"}, ToolCategory.FILE_SYSTEM,
                    RiskLevel.HIGH, subjects_fn=lambda i, _wd: [i["path"]], subject_kind="path")
    tool_input = {"path": "README.md", "content": "new"}
    decision = services.permissions.decide("builtin", "write_file", tool_input)
    return ApprovalRequest("tu_1", "write_file", "builtin", tool_input, spec, decision,
                           "--- a/README.md\n+++ b/README.md\n@@ -1 +1 @@\n-old\n+new\n",
                           reviews=tuple(reviews), review_reason=reason)


def test_approval_dialog_shows_reviews_and_reason(qtbot, services, project):
    from app.ui.dialogs.approval import ApprovalDialog

    request = _request(services, (APPROVE, REJECT, TIMEOUT),
                       "The reviewers disagree (1 approve, 1 reject, 1 failed): you decide.")
    dialog = ApprovalDialog(request, None, project)
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.resize(640, 480)  # never squeezed below what the reviews and the call need
    assert dialog.height() >= dialog.layout().minimumSize().height()
    dialog.resize(760, 860)
    _shot(dialog, "approval_reviews")
    panel = dialog.reviews_panel
    assert panel is not None and len(panel.rows) == 3
    assert panel.reason_label.isVisible()
    assert "disagree" in panel.reason_label.text()
    text = _texts(panel)
    for expected in ("sonnet", "claude-sonnet-4-5", "approve", "low risk", "820 ms",
                     "Writes one doc file", "local", "qwen2.5:14b", "reject", "high risk",
                     "2.4 s", "• content does not match the request", "• no backup",
                     "haiku", "escalate", "timed out after 90 s"):
        assert expected in text, expected
    # The verdict badges are coloured by verdict.
    assert "#1a7f37" in panel.rows[0].verdict_badge.styleSheet()
    assert "#cf222e" in panel.rows[1].verdict_badge.styleSheet()
    assert panel.rows[2].error_label is not None


def test_approval_dialog_without_reviews_has_no_panel(qtbot, services, project):
    from app.ui.dialogs.approval import ApprovalDialog

    dialog = ApprovalDialog(_request(services), None, project)
    qtbot.addWidget(dialog)
    assert dialog.reviews_panel is None
    assert "Reviews" not in _texts(dialog)


def test_review_text_is_shown_not_obeyed(qtbot, services, project):
    from app.ui.dialogs.approval import ApprovalDialog

    sneaky = Review("evil", "m", "reject", "high", "<b>bold</b>\x1b[31m red\u202e", ("<i>x</i>",))
    dialog = ApprovalDialog(_request(services, (sneaky,), "r"), None, project)
    qtbot.addWidget(dialog)
    row = dialog.reviews_panel.rows[0]
    assert "<b>bold</b>" in row.rationale_label.text()  # plain text, not markup
    assert "\x1b" not in row.rationale_label.text() and "\u202e" not in \
        row.rationale_label.text()


def test_review_rule_explains_itself_in_dialog(qtbot, services, project):
    from app.ui.dialogs.approval import ApprovalDialog

    services.permissions.rules.add(PermissionRule(decision="review", tool_name="write_file",
                                                  priority=50, description="docs"))
    request = _request(services, (APPROVE, REJECT), "split")
    assert request.decision.kind == "review"
    dialog = ApprovalDialog(request, None, project)
    qtbot.addWidget(dialog)
    assert "sends this call to the reviewers" in _texts(dialog)


# -- tool card ----------------------------------------------------------------------------------

def _card(kind="review"):
    from app.ui.widgets.tool_card import ToolCard

    return ToolCard("tu_1", "write_file", "builtin", {"path": "README.md"}, kind,
                    "rule #3: review write_file")


def test_card_fills_in_reviews_and_says_approved_by_review(qtbot):
    card = _card()
    qtbot.addWidget(card)
    card.resize(640, 120)
    card.show()
    assert card.reviews_section is None
    card.add_review(APPROVE)
    section = card.reviews_section
    assert section is not None and "Reviews (1)" in section.toggle.text()
    assert not section.panel.isVisible()  # collapsed
    second = Review("haiku", "claude-haiku-4-5", "approve", "low", "Fine.", (), 400)
    card.add_review(second)
    card.set_review_result(QuorumResult("approved", (APPROVE, second),
                                        "Both reviewers approved."))
    assert card.decision_badge.text() == "approved by review"
    assert card.review_outcome == "approved"
    assert "Reviews (2)" in section.toggle.text()
    assert "approved by review" in section.toggle.text()
    card.resize(640, card.sizeHint().height())
    _shot(card, "card_approved_collapsed")
    section.toggle.setChecked(True)
    assert section.panel.isVisible()
    assert "Both reviewers approved." in section.panel.reason_label.text()
    card.resize(640, card.sizeHint().height())
    _shot(card, "card_approved_expanded")


def test_card_takes_the_review_events(qtbot):
    from app.core.agent.events import ReviewArrived, ReviewFinished, ToolStarted

    card = _card()
    qtbot.addWidget(card)
    card.handle_review_event(ReviewArrived("tu_1", APPROVE))
    card.handle_review_event(ReviewArrived("tu_1", REJECT))
    assert [row.review.reviewer for row in card.reviews_section.panel.rows] == \
        ["sonnet", "local"]
    assert card.decision_badge.text() == "sent to review"  # not decided yet
    card.handle_review_event(ToolStarted("tu_1", "write_file"))  # not a review event
    card.handle_review_event(ReviewFinished("tu_1", QuorumResult("ask", (APPROVE, REJECT),
                                                                 "They disagree.")))
    assert card.review_outcome == "ask" and len(card.reviews_section.panel.rows) == 2


def test_card_rejected_by_review(qtbot):
    card = _card()
    qtbot.addWidget(card)
    card.set_review_result(QuorumResult("rejected", (REJECT,), "A reviewer rejected the call."))
    assert card.decision_badge.text() == "rejected by review"
    assert "#cf222e" in card.decision_badge.styleSheet()
    assert len(card.reviews_section.panel.rows) == 1
    card.finish("declined", True, 0, "The reviewers rejected this call: …")
    card.reviews_section.toggle.setChecked(True)
    card.resize(640, card.sizeHint().height())
    card.show()
    _shot(card, "card_rejected")


def test_card_ask_then_person_approves(qtbot):
    card = _card()
    qtbot.addWidget(card)
    card.set_review_result(QuorumResult("ask", (APPROVE, REJECT), "They disagree."))
    assert card.decision_badge.text() == "reviewers asked you"
    card.mark_approved()
    assert card.decision_badge.text() == "approved by you"


def test_card_restores_reviews_of_reloaded_call(qtbot):
    card = _card("allow")
    qtbot.addWidget(card)
    result = QuorumResult("approved", (APPROVE,), "All approved.")
    card.restore_reviews(result.to_dict(), "approved by review: All approved.")
    assert card.decision_badge.text() == "approved by review"
    assert len(card.reviews_section.panel.rows) == 1
    other = _card("ask")
    qtbot.addWidget(other)
    other.restore_reviews({"outcome": "bogus"}, "rejected by review: no")
    assert other.decision_badge.text() == "rejected by review"
    plain = _card("allow")
    qtbot.addWidget(plain)
    plain.restore_reviews(None, "rule #1")
    assert plain.decision_badge.text() == "allowed by rule" and plain.reviews_section is None


@pytest.mark.parametrize(("kind", "words"), [("allow", "allowed by rule"), ("ask", "asks you"),
                                             ("deny", "denied by rule")])
def test_card_without_review_is_unchanged(qtbot, kind, words):
    card = _card(kind)
    qtbot.addWidget(card)
    assert card.decision_badge.text() == words  # app.core.outcomes.Verdict
    assert card.reviews_section is None and card.review_outcome is None


# -- profile ------------------------------------------------------------------------------------

def test_profile_dialog_binds_the_review_switches(qtbot, services):
    from app.ui.dialogs.profile import ProfileDialog

    profile = services.profiles.ensure_default()
    assert not profile.review_before_asking and not profile.review_plan
    dialog = ProfileDialog(profile, [profile.model])
    qtbot.addWidget(dialog)
    _shot(dialog, "profile")
    assert dialog.review_before_asking.text() == "Review before asking me"
    assert dialog.review_plan.text() == "Review the plan before the first change"
    assert not dialog.review_before_asking.isChecked() and not dialog.review_plan.isChecked()
    dialog.review_before_asking.setChecked(True)
    dialog._try_accept()
    saved = dialog.profile()
    assert saved is not None and saved.review_before_asking and not saved.review_plan
    services.profiles.update(saved)
    reopened = ProfileDialog(services.profiles.get(profile.id), [profile.model])
    qtbot.addWidget(reopened)
    assert reopened.review_before_asking.isChecked() and not reopened.review_plan.isChecked()
    reopened.review_before_asking.setChecked(False)
    reopened.review_plan.setChecked(True)
    reopened._try_accept()
    assert reopened.profile().review_plan and not reopened.profile().review_before_asking


# -- rules --------------------------------------------------------------------------------------

def test_rule_editor_offers_review_with_its_meaning(qtbot, services):
    from app.ui.dialogs.rule_editor import RuleEditorDialog

    dialog = RuleEditorDialog(services.registry.names())
    qtbot.addWidget(dialog)
    items = [dialog.decision.itemText(i) for i in range(dialog.decision.count())]
    assert set(items) == {"allow", "ask", "deny", "review"}
    index = items.index("review")
    meaning = "Reviewers decide; you are asked if they do not all approve"
    assert meaning in dialog.decision.itemData(index, Qt.ItemDataRole.ToolTipRole)
    dialog.decision.setCurrentText("review")
    assert meaning in dialog.decision_help.text()
    assert not dialog.ignore_flow.isEnabled()  # only an allow rule may ignore the guard
    dialog.tool.setCurrentText("write_file")
    dialog._try_accept()
    rule = dialog.rule()
    assert rule is not None and rule.decision == "review" and rule.tool_name == "write_file"
    _shot(dialog, "rule_editor")


def test_rules_table_shows_and_edits_review(qtbot, services):
    from app.ui.dialogs.rules_tab import RulesTab, _DecisionDelegate
    from app.ui.models.rules_model import RulesTableModel
    from app.ui.tones import Tone, tone

    tab = RulesTab(services)
    qtbot.addWidget(tab)
    model = tab.model
    row = model.add_rule(PermissionRule(decision="review", tool_name="write_file", priority=77))
    index = model.index(row, RulesTableModel.COL_DECISION)
    assert model.data(index) == "review"
    # The review tone (purple), made readable on the palette's window and base.
    assert model.data(index, Qt.ItemDataRole.ForegroundRole) == tone(Tone.REVIEW).text
    assert "Reviewers decide" in model.data(index, Qt.ItemDataRole.ToolTipRole)
    editor = _DecisionDelegate().createEditor(None, None, index)
    assert "review" in [editor.itemText(i) for i in range(editor.count())]
    editor.deleteLater()
    assert model.setData(index, "ask", Qt.ItemDataRole.EditRole)
    assert model.setData(model.index(row, RulesTableModel.COL_DECISION), "review",
                         Qt.ItemDataRole.EditRole)
    assert services.permissions.rules.list()[row].decision == "review"


async def test_tester_explains_a_review_decision(qtbot, services):
    from app.ui.dialogs.rules_tab import RulesTab

    services.permissions.rules.add(PermissionRule(decision="review", tool_name="write_file",
                                                  priority=1000))
    tab = RulesTab(services)
    qtbot.addWidget(tab)
    tab.test_tool.setCurrentText("write_file")
    tab.test_input.setPlainText('{"path": "a.txt", "content": "x"}')
    tab.test_button.click()
    await wait_for(lambda: tab.test_result.text() not in ("", "Deciding…"))
    text = tab.test_result.text()
    assert text.startswith("<b>REVIEW</b>"), text
    assert "Reviewers decide; you are asked if they do not all approve" in text


# -- settings → review --------------------------------------------------------------------------

def _fill_editor(editor, name, provider, model, base_url="", timeout=30, budget=10):
    editor.name.setText(name)
    editor.provider.setCurrentIndex(editor.provider.findData(provider))
    editor.model.setText(model)
    editor.base_url.setText(base_url)
    editor.timeout.setValue(timeout)
    editor.budget.setValue(budget)


def test_review_tab_adds_edits_removes_and_saves(qtbot, services):
    from app.ui.dialogs.review_settings import ReviewSettingsTab

    tab = ReviewSettingsTab(services)
    qtbot.addWidget(tab)
    assert tab.table.rowCount() == 0 and "No reviewer" in tab.status.text()
    assert not tab.edit_button.isEnabled() and not tab.remove_button.isEnabled()

    editor = tab.add_reviewer()
    _fill_editor(editor, "local", "openai_compatible", "qwen2.5:14b")
    editor.ok_button.click()  # an OpenAI-compatible endpoint needs a base URL
    assert editor.isVisible() and editor.error.isVisibleTo(editor)
    assert "base_url" in editor.error.text()
    assert tab.table.rowCount() == 0
    _shot(editor, "reviewer_editor_error")
    editor.base_url.setText("http://localhost:11434/v1")
    editor.ok_button.click()
    assert editor.result() == QDialog.DialogCode.Accepted
    assert tab.table.rowCount() == 1

    editor = tab.add_reviewer()
    _fill_editor(editor, "LOCAL", "anthropic", "claude-sonnet-4-5")
    editor.ok_button.click()  # names must differ
    assert "already exists" in editor.error.text()
    editor.name.setText("sonnet")
    editor.model.setText("  ")
    editor.ok_button.click()
    assert "needs a model" in editor.error.text()
    editor.model.setText("claude-sonnet-4-5")
    editor.ok_button.click()
    assert tab.table.rowCount() == 2
    assert tab.table.item(1, 3).text() == "default"

    tab.table.selectRow(0)
    editor = tab.edit_reviewer()
    assert editor.name.text() == "local" and editor.timeout.value() == 30
    editor.budget.setValue(3)
    editor.ok_button.click()
    assert tab.table.item(0, 5).text() == "3"

    assert services.settings.get(REVIEWERS.key) is None  # nothing stored before Save
    assert tab.save()
    assert services.settings.get(REVIEWERS.key) == [
        {"name": "local", "provider": "openai_compatible", "model": "qwen2.5:14b",
         "base_url": "http://localhost:11434/v1", "timeout_s": 30.0, "max_calls_per_run": 3},
        {"name": "sonnet", "provider": "anthropic", "model": "claude-sonnet-4-5",
         "base_url": None, "timeout_s": 30.0, "max_calls_per_run": 10}]
    tab.resize(820, 520)
    _shot(tab, "review_tab")

    tab.table.selectRow(0)
    tab.remove_button.click()
    assert tab.table.rowCount() == 1 and tab.save()
    assert [e["name"] for e in services.settings.get(REVIEWERS.key)] == ["sonnet"]


def test_saved_reviewers_load_in_the_agent_loop(qtbot, services):
    from app.core.agent.review_step import load_reviewers
    from app.ui.dialogs.review_settings import ReviewSettingsTab

    tab = ReviewSettingsTab(services)
    qtbot.addWidget(tab)
    editor = tab.add_reviewer()
    _fill_editor(editor, "a", "anthropic", "claude-haiku-4-5", timeout=12, budget=4)
    editor.ok_button.click()
    assert tab.save()
    (config,) = load_reviewers(services.settings)
    assert (config.name, config.model, config.timeout_s, config.max_calls_per_run) == \
        ("a", "claude-haiku-4-5", 12.0, 4)


def test_review_tab_flags_a_broken_stored_entry_and_refuses_to_save_it(qtbot, services):
    from app.ui.dialogs.review_settings import ReviewSettingsTab

    services.settings.set(REVIEWERS.key, [{"name": "x", "provider": "openai_compatible",
                                           "model": "m"}])
    tab = ReviewSettingsTab(services)
    qtbot.addWidget(tab)
    assert "not valid" in tab.status.text()
    assert "base_url" in tab.table.item(0, 0).toolTip()
    assert not tab.save() and "Not saved" in tab.status.text()
    tab.table.selectRow(0)
    editor = tab.edit_reviewer()
    editor.base_url.setText("http://127.0.0.1:8080/v1")
    editor.ok_button.click()
    assert tab.save()


def test_settings_dialog_has_a_review_tab_saved_with_save(qtbot, services):
    from app.ui.dialogs.settings import SettingsDialog

    profile = services.profiles.ensure_default()
    dialog = SettingsDialog(services, profile.id)
    qtbot.addWidget(dialog)
    tabs = [dialog.tabs.tabText(i) for i in range(dialog.tabs.count())]
    assert "Review" in tabs
    dialog.review_tab.entries.append({"name": "bad", "provider": "anthropic", "model": ""})
    dialog._save()
    assert dialog.tabs.currentWidget() is dialog.review_tab and dialog.result() == 0
    assert services.settings.get(REVIEWERS.key) is None


def _reviewed_row(services, result: QuorumResult, *, decision="allow", outcome="executed",
                  decided_by=None, when=None):
    row_id = services.audit.record(tool_name="write_file", server_id="builtin",
                                   tool_input={"path": "a"}, decision=decision,
                                   outcome=outcome, output="ok", decided_by=decided_by)
    services.audit.set_reviews(row_id, result.to_dict())
    if when is not None:
        with services.audit.store.transaction() as conn:
            conn.execute("UPDATE tool_executions SET created_at = ? WHERE id = ?",
                         (when, row_id))
    return row_id


def test_review_usage_sums_tokens_per_day(qtbot, services):
    from app.ui.dialogs.review_settings import ReviewSettingsTab

    both = QuorumResult("approved", (APPROVE, APPROVE), "ok")
    _reviewed_row(services, both, when="2026-11-22T10:00:00+00:00")
    _reviewed_row(services, QuorumResult("rejected", (REJECT,), "no"), decision="ask",
                  outcome="declined", when="2026-11-23T09:00:00+00:00")
    _reviewed_row(services, QuorumResult("ask", (APPROVE, TIMEOUT), "split"), decision="ask",
                  when="2026-11-23T11:00:00+00:00")
    services.audit.record(tool_name="read_file", server_id="builtin", tool_input={},
                          decision="allow", outcome="executed")  # not reviewed
    tab = ReviewSettingsTab(services)
    qtbot.addWidget(tab)
    cells = [[tab.usage.item(r, c).text() for c in range(4)]
             for r in range(tab.usage.rowCount())]
    assert cells == [["2026-11-23", "3", "2,100", "150"], ["2026-11-22", "2", "1,800", "120"]]
    assert "3,900 input + 270 output tokens" in tab.usage_status.text()
    # Cost from the price table: sonnet $3 / $15 per million; a local model has no price.
    costs = [tab.usage.item(r, 4).text() for r in range(tab.usage.rowCount())]
    assert costs == ["—", "$0.0072"]


async def test_review_usage_is_read_off_the_gui_thread(qtbot, services):
    from app.ui.dialogs.review_settings import ReviewSettingsTab

    _reviewed_row(services, QuorumResult("approved", (APPROVE,), "ok"))
    tab = ReviewSettingsTab(services)
    qtbot.addWidget(tab)
    assert tab._task is not None
    await tab._task
    assert tab.usage.rowCount() == 1 and tab.usage.item(0, 2).text() == "900"


# -- history ------------------------------------------------------------------------------------

def test_history_says_who_decided_and_shows_the_reviews(qtbot, services):
    from app.core.store.audit import ToolExecution
    from app.ui.models.history_model import HistoryTableModel, who_decided
    from app.ui.widgets.history_view import HistoryView

    approved = QuorumResult("approved", (APPROVE,), "All reviewers approved.")
    _reviewed_row(services, approved, decided_by="approved by review: All reviewers approved.")
    _reviewed_row(services, QuorumResult("ask", (APPROVE, REJECT), "They disagree."),
                  decision="ask", decided_by="rule #4: review write_file")
    view = HistoryView(services.audit, services.registry.names())
    qtbot.addWidget(view)
    model = view.model
    assert model.HEADERS[HistoryTableModel.COL_WHO] == "Who decided"
    who = [model.data(model.index(r, HistoryTableModel.COL_WHO))
           for r in range(model.rowCount())]
    assert who == ["approved by you (after review)", "approved by review"]
    view.table.selectRow(1)
    details = view.details.toPlainText()
    assert "who decided: approved by review" in details
    assert "reviews: approved by review" in details
    assert "sonnet (claude-sonnet-4-5): approve, low risk, 820 ms, 900+60 tokens" in details
    assert "Writes one doc file inside the project." in details
    view.table.selectRow(0)
    details = view.details.toPlainText()
    assert "reviews: reviewers asked you" in details and "• no backup" in details
    view.resize(900, 560)
    _shot(view, "history")

    def row(**kw):
        base = {"id": 1, "tool_name": "t", "server_id": "builtin", "input": {},
                "output": "", "is_error": False, "decision": "allow", "outcome": "executed",
                "rule_id": None, "duration_ms": 1, "conversation_id": None,
                "tool_use_id": None, "created_at": "2026-11-23T10:00:00"}
        base.update(kw)
        return ToolExecution(**base)

    assert who_decided(row(rule_id=3, decided_by="rule #3: allow t")) == "allowed by rule"
    assert who_decided(row(decided_by="auto mode: a read inside the project")) == \
        "allowed by mode"
    assert who_decided(row(decision="deny", outcome="denied",
                           decided_by="plan mode: this call would change something")) == \
        "denied by mode"
    assert who_decided(row(decision="deny", outcome="denied", rule_id=2)) == "denied by rule"
    assert who_decided(row(decision="deny", outcome="denied",
                           decided_by="secret egress check: the input carries a key")) == \
        "denied by guard"
    assert who_decided(row(decision="ask")) == "approved by you"
    assert who_decided(row(decision="ask", outcome="declined", output="no thanks")) == \
        "declined"
    assert who_decided(row(decision="ask", outcome="declined",
                           decided_by="rejected by review: A reviewer rejected the call.")) \
        == "rejected by review"
    assert who_decided(row(decision="ask", outcome="declined", output=(
        "The user stopped the run before approving this tool call, so it was not run."))) == \
        "not answered (stopped)"
    assert who_decided(row(decision="ask", state="pending")) == "waiting for you"
    assert who_decided(row(outcome="invalid")) == "invalid"


# -- end to end: the panel, a real session, loopback reviewers --------------------------------

async def test_e2e_two_reviewers_approving_run_the_call_without_a_dialog(
        qtbot, services, project, fake_anthropic_env, reviewer_servers):  # noqa: F811
    from app.core.store.profiles import ToolSetting
    from tests.fakes.anthropic_server import Response
    from tests.fakes.reviewer_server import Answer
    from tests.ui.conftest import make_ai_panel

    (project / "notes.txt").write_text("hello\n", encoding="utf-8")
    profile = services.profiles.ensure_default()
    services.profiles.set_tool(profile.id, ToolSetting("read_file", True, {}))
    services.permissions.rules.add(PermissionRule("review", server_id="builtin",
                                                  tool_name="read_file", priority=50))
    servers = reviewer_servers(2, Answer.verdict("approve", "low", "Reads a project file."))
    services.settings.set(REVIEWERS.key, [
        {"name": f"r{i}", "provider": "anthropic", "model": "fake-reviewer",
         "base_url": s.base_url, "timeout_s": 5.0} for i, s in enumerate(servers)])
    fake_anthropic_env.script(Response.tool_use("read_file", {"path": "notes.txt"}),
                              Response.text("It says hello."))
    panel = make_ai_panel(qtbot, services, project, size=(800, 600), show=True)
    assert panel.send("read my notes")
    await wait_for(lambda: not panel.running, timeout=20)
    (card,) = panel.tool_cards.by_id.values()
    assert card.decision_badge.text() == "approved by review"
    assert card.review_outcome == "approved"
    assert len(servers[0].requests) == 1 and len(servers[1].requests) == 1
    await panel.shutdown()
