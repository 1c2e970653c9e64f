"""The ready window creates only the PySide6 types it shows: PySide6 makes each Python type on
its first use (0.1-1 ms each), so a dialog's or a popup's types imported with the panel's
modules cost start-up time before anyone opens them.

Runs in a fresh interpreter: the test session itself has created every type."""

from __future__ import annotations

from tests.unit.test_startup_path import START_TO_READY, _run

# Made by what uses them: the runs view's table (app.ui.runs_button opens it), the quit
# question's message box (app.ui.parallel_runs), the "/" completer of MCP prompts
# (app.ui.ai_panel.mcp_prompts), Open of an instructions file (app.ui.ai_panel.instructions_line).
NOT_MADE_AT_READY = ("QtWidgets.QTableWidget", "QtWidgets.QHeaderView", "QtWidgets.QMessageBox",
                     "QtWidgets.QCompleter", "QtWidgets.QListView", "QtGui.QStandardItemModel",
                     "QtCore.QUrl")
# Made when PySide6 wraps a plain QWidget that Qt made (a scroll area's own viewport): it tries
# every QWidget class for the object's type, making each with its enums (~10 ms). The banner
# area makes its viewport itself (app.ui.ai_panel.banner_area).
NOT_SEARCHED_AT_READY = ("QtWidgets.QWizard", "QtWidgets.QMdiArea", "QtWidgets.QGraphicsView",
                         "QtWidgets.QLCDNumber", "QtWidgets.QCalendarWidget",
                         "QtWidgets.QFontDialog")

_MADE = """
import PySide6.QtCore, PySide6.QtGui, PySide6.QtWidgets
def made(names):  # a type PySide6 has not made yet is not in its module's dict
    return sorted(n for n in names
                  if n.split(".")[1] in vars(sys.modules["PySide6." + n.split(".")[0]]))
"""


def test_the_ready_window_does_not_make_the_types_of_what_it_does_not_show(tmp_path):
    result = _run(START_TO_READY + _MADE + f"""
at_ready = made({NOT_MADE_AT_READY!r})
window.ai_panel.mcp_prompts.popup  # the positive control: their first use makes them
window.parallel_runs.button.show_view()
print(json.dumps({{"ready": at_ready, "used": made({NOT_MADE_AT_READY!r})}}))
""", tmp_path)
    assert result["ready"] == []
    assert {"QtWidgets.QCompleter", "QtWidgets.QListView", "QtWidgets.QTableWidget",
            "QtWidgets.QHeaderView", "QtGui.QStandardItemModel"} <= set(result["used"])


def test_the_ready_window_does_not_wrap_a_widget_qt_made(tmp_path):
    result = _run(START_TO_READY + _MADE + f"""
at_ready = made({NOT_SEARCHED_AT_READY!r})
from PySide6.QtWidgets import QScrollArea
QScrollArea().viewport()  # the positive control: wrapping Qt's own viewport makes them
print(json.dumps({{"ready": at_ready, "used": made({NOT_SEARCHED_AT_READY!r})}}))
""", tmp_path)
    assert result["ready"] == []
    assert set(result["used"]) == set(NOT_SEARCHED_AT_READY)


def test_the_panel_makes_the_edit_banner_and_the_context_bar_on_first_use(tmp_path):
    result = _run(START_TO_READY + """
from app.ui.ai_panel.context_bar import ContextBar
from app.ui.ai_panel.conversation_actions import EditBanner
from app.ui.tab_focus import chain_end
from PySide6.QtCore import Qt
panel = window.ai_panel
at_ready = [len(panel.findChildren(kind)) for kind in (ContextBar, EditBanner)]
panel.compaction.set_busy(True)  # a run is going when the first usage arrives
bar, banner = panel.compaction.context_bar, panel.conversation_actions.edit_banner
column = panel.layout()
usage = column.indexOf(panel.usage.label)
chain, node = [], chain_end(panel.attachment_tray).nextInFocusChain()
while node is not panel.mcp_prompts.button and len(chain) < 10:  # after the tray, before it
    if node.focusPolicy() != Qt.FocusPolicy.NoFocus:
        chain.append(node.objectName())
    node = node.nextInFocusChain()
print(json.dumps({"ready": at_ready, "rows": [column.indexOf(bar) - usage,
                                             column.indexOf(banner) - usage],
                  "chain": sorted(chain), "compact_enabled": bar.compact_button.isEnabled()}))
""", tmp_path)
    assert result["ready"] == [0, 0]
    assert result["rows"] == [-1, 1]  # the bar right above the usage line, the banner below
    assert result["chain"] == ["cancel-edit", "compact"]
    assert result["compact_enabled"] is False
