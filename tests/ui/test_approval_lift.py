"""A call its tool's configuration refused: the approval dialog says what approving changes,
and keeps the change only when the person ticks it (and approves)."""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtWidgets import QDialog

from app.core.agent.events import ApprovalRequest
from app.core.tools.capability_lift import CapabilityLift
from app.ui.dialogs.approval import ApprovalDialog

LIFT = CapabilityLift("allowed_write_dirs", ("doc", "src"), "add “src” to Write folders",
                      "src/a.py is outside the write folders (doc)")


def _request(services, lift: CapabilityLift | None) -> ApprovalRequest:
    tool_input = {"path": "src/a.py", "content": "x"}
    decision = services.permissions.decide("builtin", "write_file", tool_input)
    return ApprovalRequest("tu_1", "write_file", "builtin", tool_input, None, decision,
                           lift=lift)


def test_the_dialog_names_the_change_and_keeps_it_only_when_ticked(qtbot, services, project):
    dialog = ApprovalDialog(_request(services, LIFT), None, project)
    qtbot.addWidget(dialog)
    assert dialog.lift_note is not None
    text = dialog.lift_note.text.text()
    assert "add “src” to Write folders" in text and "outside the write folders" in text
    assert not dialog.lift_note.keep.isChecked()  # this call only, unless the person says so
    dialog.done(QDialog.DialogCode.Accepted)
    assert dialog.response().approved and not dialog.response().keep_lift

    dialog.lift_note.keep.setChecked(True)
    assert dialog.response().keep_lift
    dialog.done(QDialog.DialogCode.Rejected)  # a decline keeps nothing, ticked or not
    assert not dialog.response().approved and not dialog.response().keep_lift


def test_no_note_without_a_lift(qtbot, services, project):
    dialog = ApprovalDialog(_request(services, None), None, project)
    qtbot.addWidget(dialog)
    assert dialog.lift_note is None
    dialog.done(QDialog.DialogCode.Accepted)
    assert not dialog.response().keep_lift


def test_markup_in_the_lift_is_shown_as_text(qtbot, services, project):
    hostile = replace(LIFT, summary="add “<img src=x>” to Write folders",
                      refusal="<b>bold</b> path")
    dialog = ApprovalDialog(_request(services, hostile), None, project)
    qtbot.addWidget(dialog)
    assert dialog.lift_note is not None
    assert "&lt;img src=x&gt;" in dialog.lift_note.text.text()
    assert "&lt;b&gt;bold" in dialog.lift_note.text.text()
