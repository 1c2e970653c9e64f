"""What a person reads is what runs: tool cards and the history show hidden characters as
marked escapes (a bidi override, an ANSI colour code), never obey them."""

from __future__ import annotations

from PySide6.QtCore import Qt

from app.ui.models.history_model import HistoryTableModel
from app.ui.widgets.history_view import HistoryView
from app.ui.widgets.tool_card import ToolCard

RESULT = "ok \u202etxt.exe\n\x1b[31mred\x1b[0m done\u200b"
INPUT = {"command": "cat \u202egnp.sh", "note": "\x1b[2Jclear"}


def test_tool_card_shows_markers_in_input_and_result(qtbot):
    card = ToolCard("tu_1", "shell_exec", "builtin", INPUT, "ask", "")
    qtbot.addWidget(card)
    card.finish("executed", False, 3, RESULT)
    card.show()
    result = card.result_section.body.toPlainText()
    assert "⟦U+202E⟧txt.exe" in result and "⟦ESC⟧[31mred⟦ESC⟧[0m" in result
    assert "done⟦U+200B⟧" in result
    assert "\u202e" not in result and "\x1b" not in result and "\u200b" not in result
    assert "\n" in result  # ordinary line breaks stay line breaks
    shown_input = card.input_section.body.toPlainText()
    assert "cat ⟦U+202E⟧gnp.sh" in shown_input and "\u202e" not in shown_input


def test_an_error_result_is_escaped_too(qtbot):
    card = ToolCard("tu_2", "read_file", "builtin", {"path": "x"}, "allow", "")
    qtbot.addWidget(card)
    card.finish("executed", True, 0, "failed: \x1b[1mbold\u2066")
    assert card.result_section.body.toPlainText() == "failed: ⟦ESC⟧[1mbold⟦U+2066⟧"


def test_history_shows_markers_in_the_input_column_and_the_details(qtbot, services):
    services.audit.record(tool_name="shell_exec", server_id="builtin", tool_input=INPUT,
                          decision="ask", outcome="executed", output=RESULT, duration_ms=4)
    model = HistoryTableModel(services.audit)
    shown = model.data(model.index(0, HistoryTableModel.COL_INPUT),
                       Qt.ItemDataRole.DisplayRole)
    assert "⟦U+202E⟧" in shown and "\u202e" not in shown

    view = HistoryView(services.audit, ["shell_exec"])
    qtbot.addWidget(view)
    view.table.selectRow(0)
    details = view.details.toPlainText()
    assert "⟦U+202E⟧txt.exe" in details and "⟦ESC⟧[31mred" in details
    assert "cat ⟦U+202E⟧gnp.sh" in details
    assert "\u202e" not in details and "\x1b" not in details
