"""A write-capable sub-agent's row offers "Review changes…" once it has ended with changes
waiting in its workspace; the button asks the window to review that child's conversation."""

from __future__ import annotations

from PySide6.QtWidgets import QPushButton

from app.core.agent.events import SubAgentUpdated
from app.ui.widgets.sub_agent_rows import SubAgentRows


class Controls:
    def __init__(self) -> None:
        self.reviewed: list[int | None] = []

    def stop(self, execution_id: int) -> None: ...
    def stop_all(self) -> None: ...
    def open_transcript(self, conversation_id: int | None, title: str) -> None: ...

    def review_changes(self, conversation_id: int | None) -> None:
        self.reviewed.append(conversation_id)


def _review(rows: SubAgentRows, name: str = "sub-agent-review") -> list[QPushButton]:
    return [b for b in rows.findChildren(QPushButton) if b.objectName() == name]


def test_review_button_shows_for_a_child_with_a_workspace(qtbot) -> None:  # type: ignore[no-untyped-def]
    controls = Controls()
    rows = SubAgentRows(controls)
    qtbot.addWidget(rows)
    rows.show()
    rows.update_row(SubAgentUpdated(1, "e1", "reader", "orchestrator › reader", "done",
                                    conversation_id=7))
    rows.update_row(SubAgentUpdated(2, "e2", "editor", "orchestrator › editor", "working",
                                    conversation_id=8, workspace_branch="tebiki/x"))
    first, second = _review(rows)
    assert not first.isVisible()  # a child that changed nothing has nothing to review
    assert second.isVisible() and not second.isEnabled()  # still working
    rows.update_row(SubAgentUpdated(2, "e2", "editor", "orchestrator › editor", "done",
                                    conversation_id=8, workspace_branch="tebiki/x"))
    assert second.isEnabled() and "tebiki/x" in second.toolTip()
    second.click()
    assert controls.reviewed == [8]
