"""The row of a tool card that says what the call changed in the project: "3 files changed",
Diff, Undo this call / Redo, and the files the checkpoints did not cover.

Separate from the card (app.ui.widgets.tool_card) because it is its own concern: the card keeps
the call's change set and undo state (which the undo actions read), this row only shows them.
"""

from __future__ import annotations

from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from app.core.agent.checkpointing import CallChanges
from app.ui.tones import Tone, follow_palette, tone_text

_NOT_COVERED_WHY = "over the size cap / nested repositories"
_MAX_TOOLTIP_PATHS = 40


def _link_button(text: str, name: str) -> QPushButton:
    button = QPushButton(text)
    button.setObjectName(name)
    button.setFlat(True)
    button.setStyleSheet("QPushButton { color: palette(link); padding: 0 6px; border: none; }"
                         "QPushButton:hover { text-decoration: underline; }"
                         "QPushButton:disabled { color: palette(placeholder-text); }")
    return button


def _path_list(paths: tuple[str, ...] | list[str]) -> str:
    shown = list(paths[:_MAX_TOOLTIP_PATHS])
    if len(paths) > _MAX_TOOLTIP_PATHS:
        shown.append(f"… and {len(paths) - _MAX_TOOLTIP_PATHS} more")
    return "\n".join(shown)


class ChangesRow(QWidget):
    """What the call changed in the project: "3 files changed", Diff, Undo this call / Redo."""

    def __init__(self) -> None:
        super().__init__()
        self.setObjectName("changes-row")
        self.label = QLabel("")
        self.label.setObjectName("changes-summary")
        self.diff_button = _link_button("Diff", "changes-diff")
        self.diff_button.setToolTip("Show what this call changed")
        self.undo_button = _link_button("Undo this call", "changes-undo")
        self.undo_button.setToolTip("Restore the files this call changed (with a preview)")
        self.redo_button = _link_button("Redo", "changes-redo")
        self.redo_button.setToolTip("Bring the call's changes back (with a preview)")
        self.not_covered = QLabel("")
        self.not_covered.setObjectName("changes-not-covered")
        self.not_covered.setWordWrap(True)
        tone_text(self.not_covered, Tone.WARNING, "font-size: 11px;")
        self.not_covered.hide()
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(2)
        row.addWidget(self.label)
        row.addWidget(self.diff_button)
        row.addWidget(self.undo_button)
        row.addWidget(self.redo_button)
        row.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 2, 0, 0)
        layout.setSpacing(0)
        layout.addLayout(row)
        layout.addWidget(self.not_covered)

    def show_paths(self, changes: CallChanges) -> None:
        """The changed files as the summary's tooltip, and the files not covered, if any."""
        paths = changes.paths
        self.label.setToolTip(_path_list(list(paths)) if paths else "")
        missing = changes.not_covered
        if missing:
            n = len(missing)
            self.not_covered.setText(f"not covered: {n} file{'s' if n != 1 else ''} "
                                     f"({_NOT_COVERED_WHY})")
            self.not_covered.setToolTip(_path_list(list(missing)))
            self.not_covered.show()
        else:
            self.not_covered.hide()

    def show_unavailable(self, reason: str) -> None:
        """A reloaded call whose checkpoints are gone (pruned, another project)."""
        self.label.setText(f"files changed — cannot be undone ({reason})")
        follow_palette(self.label, "color: palette(placeholder-text);")
        for button in (self.diff_button, self.undo_button, self.redo_button):
            button.hide()
        self.show()

    def set_actions_enabled(self, enabled: bool) -> None:
        for button in (self.undo_button, self.redo_button):
            button.setEnabled(enabled)

    def sync(self, changes: CallChanges, *, restorable: bool, undone: bool) -> None:
        """The summary and which of Diff / Undo / Redo show: ``restorable`` when the call's
        checkpoints are at hand, ``undone`` while the call is undone."""
        changed = bool(changes.changes)
        undoable = changed and restorable
        if undone:
            self.label.setText("↶ Undone")
            tone_text(self.label, Tone.WARNING, "font-weight: bold;")
        else:
            self.label.setText(("✎ " if changed else "") + changes.summary())
            follow_palette(self.label, "" if changed else "color: palette(placeholder-text);")
        self.diff_button.setVisible(changed and restorable)
        self.undo_button.setVisible(undoable and not undone)
        self.redo_button.setVisible(undoable and undone)
