"""Before any undo, redo or restore: what will be written and deleted, the diff, and the files the
person changed since the agent did (conflicts), each with a choice — keep mine (the default),
take the checkpoint's, or merge the two. Also the read-only diff viewer of a call's changes.

Nothing here touches the disk or runs git: merging is handed to ``merger`` (a coroutine the
controller runs in a worker thread) and the result of the dialog is read with ``resolutions()``
and ``merged_texts()`` (app.ui.controllers.checkpoints carries it out).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QGroupBox,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from app.core.checkpoints import MergeResult, PlannedAction, RestorePlan
from app.core.checkpoints.model import Resolution
from app.ui.tones import Tone, callout_style, text_style
from app.ui.widgets.highlighters import DiffHighlighter

log = logging.getLogger(__name__)

COMMIT_NOTE = "The commit stays in the repository's history; only the files are restored."
COVERAGE_NOTE = ("Checkpoints do not cover files your .gitignore excludes, built-in excludes "
                 "(.venv, node_modules, build, …), files over the size cap, or nested "
                 "repositories.")

KEEP, TAKE, MERGE = "keep", "take", "merge"
_ACTION_TEXT = {"write": "write", "delete": "delete", "symlink": "link", "chmod": "mode"}

Merger = Callable[[PlannedAction], Awaitable[MergeResult]]


@dataclass(frozen=True)
class PreviewWords:
    """What the preview calls the two sides: a restore writes the checkpoint's version over
    the person's; bringing a worktree run's work back (app.ui.dialogs.apply_conflicts) writes
    the run's."""

    doing: str = "Restoring"
    changed_since: str = "changed after the agent"
    conflicts_title: str = "Changed by you after the agent"
    take: str = "Take the checkpoint's"
    theirs_mark: str = "checkpoint"  # the merge's label of the version written
    diff_title: str = "Changes restoring makes (from the files as they are now)"


RESTORE_WORDS = PreviewWords()


def diff_viewer(text: str) -> QPlainTextEdit:
    """A read-only, monospace, highlighted view of a unified diff."""
    view = QPlainTextEdit(text)
    view.setReadOnly(True)
    view.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
    view.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
    view._highlighter = DiffHighlighter(view.document())  # type: ignore[attr-defined]
    return view


class DiffDialog(QDialog):
    """What a call (or a run) changed, as a unified diff."""

    def __init__(self, title: str, diff: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("changes-diff-dialog")
        self.setWindowTitle(title)
        self.resize(820, 560)
        self.diff_view = diff_viewer(diff or "(no differences)")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.diff_view, 1)
        layout.addWidget(buttons)


def _note(text: str, object_name: str, style: str) -> QLabel:
    label = QLabel(text)
    label.setObjectName(object_name)
    label.setWordWrap(True)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setStyleSheet(style)
    return label


class RestorePreviewDialog(QDialog):
    """The preview of a restore ``plan``; Apply accepts, Cancel rejects."""

    def __init__(self, plan: RestorePlan, title: str, *, commit_note: bool = False,
                 merger: Merger | None = None, parent: QWidget | None = None,
                 words: PreviewWords = RESTORE_WORDS) -> None:
        super().__init__(parent)
        self.setObjectName("restore-preview")
        self.words = words
        self.setWindowTitle(title)
        self.resize(900, 680)
        self.plan = plan
        self._merger = merger
        self._actions = {a.path: a for a in plan.actions}
        self._merged: dict[str, str] = {}
        self._merging: dict[str, asyncio.Future[None]] = {}
        self._shown_merge: str | None = None
        self.choices: dict[str, QComboBox] = {}

        writes = [a for a in plan.actions if a.kind != "delete"]
        deletes = [a for a in plan.actions if a.kind == "delete"]
        if plan.actions:
            parts = []
            if writes:
                parts.append(f"write {len(writes)} file{'s' if len(writes) != 1 else ''}")
            if deletes:
                parts.append(f"delete {len(deletes)} file{'s' if len(deletes) != 1 else ''}")
            summary = f"{words.doing} will {' and '.join(parts)}."
            if plan.conflicts:
                n = len(plan.conflicts)
                summary += (f" {n} of them {'was' if n == 1 else 'were'} "
                            f"{words.changed_since} — choose below what happens to "
                            f"{'it' if n == 1 else 'each'}.")
        else:
            summary = "Nothing to restore: these files are already as the checkpoint has them."
        self.summary = QLabel(summary)
        self.summary.setObjectName("restore-summary")
        self.summary.setWordWrap(True)

        self.files = QListWidget()
        self.files.setObjectName("restore-files")
        for action in plan.actions:
            text = f"{_ACTION_TEXT.get(action.kind, action.kind):<7} {action.path}"
            if action.conflict:
                text += "   ⚠ changed by you since"
            item = QListWidgetItem(text)
            item.setData(Qt.ItemDataRole.UserRole, action.path)
            self.files.addItem(item)
        self.files.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.files.setMaximumHeight(min(26 + 20 * max(len(plan.actions), 1), 150))

        self.diff_view = diff_viewer(plan.preview_diff or "(no differences)")

        top = QWidget()
        top_layout = QVBoxLayout(top)
        top_layout.setContentsMargins(0, 0, 0, 0)
        top_layout.addWidget(self.summary)
        top_layout.addWidget(self.files)
        self.conflicts_box = self._build_conflicts()
        if self.conflicts_box is not None:
            top_layout.addWidget(self.conflicts_box)

        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(top)
        diff_box = QGroupBox(words.diff_title)
        diff_layout = QVBoxLayout(diff_box)
        diff_layout.addWidget(self.diff_view)
        splitter.addWidget(diff_box)
        splitter.setStretchFactor(1, 1)

        layout = QVBoxLayout(self)
        layout.addWidget(splitter, 1)
        if plan.not_restorable:
            listed = ", ".join(plan.not_restorable[:8])
            more = f" and {len(plan.not_restorable) - 8} more" if \
                len(plan.not_restorable) > 8 else ""
            layout.addWidget(_note(
                f"Not restorable (not in the checkpoint; left as they are): {listed}{more}",
                "restore-not-restorable", text_style(Tone.WARNING)))
        self.commit_note: QLabel | None = None
        if commit_note:
            self.commit_note = _note(
                COMMIT_NOTE, "restore-commit-note", callout_style(Tone.WARNING))
            layout.addWidget(self.commit_note)
        layout.addWidget(_note(COVERAGE_NOTE, "restore-coverage-note",
                               "QLabel { color: palette(placeholder-text); }"))
        self.buttons = QDialogButtonBox()
        self.apply_button = QPushButton("Apply")
        self.apply_button.setObjectName("restore-apply")
        self.apply_button.setDefault(True)
        self.cancel_button = QPushButton("Cancel")
        self.buttons.addButton(self.apply_button, QDialogButtonBox.ButtonRole.AcceptRole)
        self.buttons.addButton(self.cancel_button, QDialogButtonBox.ButtonRole.RejectRole)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)

    # -- conflicts -------------------------------------------------------------------------------

    def _build_conflicts(self) -> QGroupBox | None:
        if not self.plan.conflicts:
            return None
        box = QGroupBox(self.words.conflicts_title)
        box.setObjectName("restore-conflicts")
        box.setStyleSheet(text_style(Tone.WARNING, "QGroupBox#restore-conflicts",
                                     "font-weight: bold;"))
        outer = QVBoxLayout(box)
        form = QFormLayout()
        for path in self.plan.conflicts:
            combo = QComboBox()
            combo.setObjectName(f"resolution:{path}")
            for value, text in ((KEEP, "Keep mine"), (TAKE, self.words.take), (MERGE, "Merge")):
                if value == MERGE and not self._can_merge(path):
                    continue
                combo.addItem(text, value)
            combo.setCurrentIndex(0)  # keep mine
            combo.currentIndexChanged.connect(lambda _i, p=path: self._choice_changed(p))
            self.choices[path] = combo
            label = QLabel(path)
            label.setStyleSheet("font-weight: normal;")
            form.addRow(label, combo)
        outer.addLayout(form)
        self.merge_label = QLabel("")
        self.merge_label.setObjectName("merge-label")
        self.merge_label.setWordWrap(True)
        self.merge_label.setStyleSheet("font-weight: normal;")
        self.merge_view = QPlainTextEdit()
        self.merge_view.setObjectName("merge-view")
        self.merge_view.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.merge_view.setStyleSheet("font-weight: normal;")
        self.merge_view.setMinimumHeight(140)
        self.merge_view.textChanged.connect(self._merge_edited)
        self.merge_label.hide()
        self.merge_view.hide()
        outer.addWidget(self.merge_label)
        outer.addWidget(self.merge_view)
        return box

    def _can_merge(self, path: str) -> bool:
        action = self._actions.get(path)
        return (self._merger is not None and action is not None
                and action.current_blob is not None and action.target_blob is not None
                and action.kind == "write")

    def choice(self, path: str) -> str:
        return str(self.choices[path].currentData())

    def set_choice(self, path: str, value: str) -> None:
        combo = self.choices[path]
        combo.setCurrentIndex(combo.findData(value))

    def _choice_changed(self, path: str) -> None:
        if self.choice(path) == MERGE:
            if path in self._merged:
                self._show_merge(path)
            elif path not in self._merging:
                self._merging[path] = asyncio.ensure_future(self._merge(path))
                self._sync_apply()
        elif self._shown_merge == path:
            self._shown_merge = None
            self.merge_label.hide()
            self.merge_view.hide()

    async def _merge(self, path: str) -> None:
        assert self._merger is not None
        self.merge_label.setText(f"Merging {path}…")
        self.merge_label.show()
        try:
            result = await self._merger(self._actions[path])
        except Exception as exc:  # binary files, git missing: say so, fall back to keep
            log.info("merge of %s failed: %s", path, exc)
            self._merging.pop(path, None)
            self.merge_label.setText(f"Cannot merge {path}: {exc}")
            self.merge_view.hide()
            self.set_choice(path, KEEP)
            self.merge_label.show()
            self._sync_apply()
            return
        self._merging.pop(path, None)
        self._merged[path] = result.text
        self._sync_apply()
        if self.choice(path) == MERGE:
            self._show_merge(path, result.conflicts)

    def _show_merge(self, path: str, conflicts: int | None = None) -> None:
        self._shown_merge = None  # no write-back while the text is replaced
        self.merge_view.setPlainText(self._merged[path])
        self._shown_merge = path
        hunks = conflicts if conflicts is not None else \
            self._merged[path].count("\n<<<<<<< ") + self._merged[path].startswith("<<<<<<< ")
        marks = (f" {hunks} conflicting part{'s are' if hunks != 1 else ' is'} marked "
                 f"(<<<<<<< yours … >>>>>>> {self.words.theirs_mark}); edit them out here or "
                 "keep the marks."
                 if hunks else " It merged cleanly.")
        self.merge_label.setText(f"Merged text of {path} — Apply writes it as your version."
                                 + marks)
        self.merge_label.show()
        self.merge_view.show()

    def _merge_edited(self) -> None:
        if self._shown_merge is not None:
            self._merged[self._shown_merge] = self.merge_view.toPlainText()

    def _sync_apply(self) -> None:
        self.apply_button.setEnabled(not self._merging)

    def merging_done(self) -> bool:
        return not self._merging

    # -- the answer ---------------------------------------------------------------------------

    def merged_texts(self) -> dict[str, str]:
        """Paths to write with the merged text (as the person's version) before restoring."""
        return {p: t for p, t in self._merged.items()
                if p in self.choices and self.choice(p) == MERGE}

    def resolutions(self) -> dict[str, Resolution]:
        """Per conflict: "take" the checkpoint's version, else "keep" the person's (a merged
        file is written first and then kept)."""
        out: dict[str, Resolution] = {}
        for path in self.choices:
            out[path] = "take" if self.choice(path) == TAKE else "keep"
        return out
