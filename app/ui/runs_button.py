"""The status bar button of parallel runs: "Runs: 2", hidden until a run has started; it opens
the runs view (app.ui.dialogs.runs_view), imported by its first opening or after ready
(app.ui.deferred_imports): the ready window has the button, not the view's table and dialog."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtWidgets import QToolButton, QWidget

if TYPE_CHECKING:
    from app.ui.ai_panel.run_switch import RunSwitch
    from app.ui.dialogs.runs_view import RunsView


class RunsButton(QToolButton):
    """"Runs: 2" in the status bar; opens the view. Hidden until a run has started."""

    def __init__(self, runs: RunSwitch, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("runs-button")
        self.setAutoRaise(True)
        self.setToolTip("Conversations running or waiting for you (Run → Runs…, Ctrl+Shift+J)")
        self._runs = runs
        self.view: RunsView | None = None
        self.clicked.connect(self.show_view)
        self.hide()

    def refresh(self) -> None:
        """Called on each change of a run: the count, and the view when it is open."""
        count = self._runs.active_count()
        self.setText(f"Runs: {count}")
        self.setVisible(bool(self._runs.rows()))
        if self.view is not None and self.view.isVisible():
            self.view.refresh()

    def show_view(self) -> RunsView:
        if self.view is None:
            from app.ui.dialogs.runs_view import RunsView

            self.view = RunsView(self._runs, self.window())
        self.view.show()
        self.view.raise_()
        self.view.activateWindow()
        return self.view
