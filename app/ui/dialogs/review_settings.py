"""Settings → Review: the reviewer models of quorum review (app.core.review), and their usage.

Each reviewer is a name, a provider ("anthropic" or an OpenAI-compatible endpoint such as a
local Ollama), a model, a base URL, a timeout and a budget of calls per run; the list is saved
to the ``REVIEWERS`` setting on Save. The API keys are the providers' keys (Settings → Provider, the
keyring or the environment): none is stored here. Each entry is checked with ``ReviewerConfig``
(the same check the agent loop makes) and its error shown in the editor, so an entry the loop
would skip cannot be saved.

Below the list: the reviewers' tokens per day, summed from the audit log's recorded reviews
with their cost from the price table (app.core.pricing), read in a worker thread.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.core.pricing import prices_from_setting
from app.core.review.usage import review_usage_by_day
from app.core.services import Services
from app.core.settings_fields import PRICES, REVIEWERS
from app.core.visible_text import make_visible
from app.ui.dialogs.reviewer_editor import (
    MUTED_STYLE,
    ReviewerEditor,
    entry_error,
    error_style,
    number_or,
)
from app.ui.tones import Tone, follow_palette, tone

_PROVIDER_LABEL = {"anthropic": "Anthropic", "openai_compatible": "OpenAI-compatible"}
USAGE_ROWS = 5000   # the audit rows the usage totals look at (newest first)
USAGE_DAYS = 14


class ReviewSettingsTab(QWidget):
    """The reviewers (Add / Edit / Remove, saved by ``save``) and their tokens per day."""

    COLUMNS = ("Name", "Provider", "Model", "Base URL", "Timeout", "Budget per run")

    def __init__(self, services: Services, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("review-tab")
        self.services = services
        self.entries: list[dict[str, Any]] = list(services.settings.read(REVIEWERS))
        intro = QLabel(
            "Reviewer models look at a tool call before you are asked: for a permission rule "
            "with the decision <i>review</i>, and for any call that would ask you when the "
            "profile's <i>Review before asking me</i> is on. The call runs only if every "
            "reviewer approves; a rejection goes back to the AI; anything else (disagreement, "
            "an error, a timeout, the budget spent) asks you, with their reviews.")
        intro.setWordWrap(True)
        self.table = QTableWidget(0, len(self.COLUMNS))
        self.table.setObjectName("reviewers-table")
        self.table.setHorizontalHeaderLabels(list(self.COLUMNS))
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(3, QHeaderView.ResizeMode.Stretch)
        self.add_button = QPushButton("Add…")
        self.add_button.setObjectName("reviewer-add")
        self.edit_button = QPushButton("Edit…")
        self.edit_button.setObjectName("reviewer-edit")
        self.remove_button = QPushButton("Remove")
        self.remove_button.setObjectName("reviewer-remove")
        bar = QHBoxLayout()
        for button in (self.add_button, self.edit_button, self.remove_button):
            bar.addWidget(button)
        bar.addStretch(1)
        self.status = QLabel("")
        self.status.setObjectName("reviewers-status")
        self.status.setWordWrap(True)

        usage_box = QGroupBox("Reviewer usage per day")
        self.usage = QTableWidget(0, 5)
        self.usage.setObjectName("review-usage")
        self.usage.setHorizontalHeaderLabels(["Day", "Reviews", "Input tokens",
                                              "Output tokens", "Cost"])
        self.usage.verticalHeader().hide()
        self.usage.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.usage.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.usage_status = QLabel("")
        self.usage_status.setObjectName("review-usage-status")
        self.usage_status.setStyleSheet(MUTED_STYLE)
        usage_layout = QVBoxLayout(usage_box)
        usage_layout.addWidget(self.usage, 1)
        usage_layout.addWidget(self.usage_status)

        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addLayout(bar)
        layout.addWidget(self.table, 2)
        layout.addWidget(self.status)
        layout.addWidget(usage_box, 1)
        self.add_button.clicked.connect(lambda: self.add_reviewer())
        self.edit_button.clicked.connect(lambda: self.edit_reviewer())
        self.remove_button.clicked.connect(self.remove_reviewer)
        self.table.doubleClicked.connect(lambda _index: self.edit_reviewer())
        self.table.itemSelectionChanged.connect(self._sync_buttons)
        self._task: asyncio.Future[None] | None = None
        self._fill()
        self.refresh_usage()

    # -- the list --------------------------------------------------------------------------

    def _fill(self) -> None:
        current = self.table.currentRow()
        self.table.setRowCount(len(self.entries))
        for row, entry in enumerate(self.entries):
            error = entry_error(entry)
            timeout = entry.get("timeout_s", 90.0)
            values = (str(entry.get("name", "?")),
                      _PROVIDER_LABEL.get(str(entry.get("provider")), str(entry.get("provider"))),
                      str(entry.get("model", "")), str(entry.get("base_url") or "default"),
                      f"{number_or(timeout, 90.0):g} s", str(entry.get("max_calls_per_run", 50)))
            for column, value in enumerate(values):
                item = QTableWidgetItem(make_visible(value))
                if error:
                    item.setForeground(tone(Tone.DANGER).text)
                    item.setToolTip(f"Not used: {error}")
                self.table.setItem(row, column, item)
        if self.entries:
            self.table.selectRow(min(max(current, 0), len(self.entries) - 1))
        invalid = [e for e in self.entries if entry_error(e)]
        if not self.entries:
            self.status.setText("No reviewer: a call sent to review asks you.")
            follow_palette(self.status, MUTED_STYLE)
        elif invalid:
            self.status.setText(f"{len(invalid)} entr{'ies are' if len(invalid) > 1 else 'y is'}"
                                " not valid and not used (hover for why): edit or remove it.")
            follow_palette(self.status, error_style)
        else:
            n = len(self.entries)
            self.status.setText(f"{n} reviewer{'s' if n != 1 else ''}: a call runs without "
                                f"asking you only if {'all' if n > 1 else 'it'} approve"
                                f"{'' if n > 1 else 's'}.")
            follow_palette(self.status, MUTED_STYLE)
        self._sync_buttons()

    def _sync_buttons(self) -> None:
        selected = 0 <= self.table.currentRow() < len(self.entries)
        self.edit_button.setEnabled(selected)
        self.remove_button.setEnabled(selected)

    def _names(self, skip: int | None = None) -> list[str]:
        return [str(e.get("name", "")) for i, e in enumerate(self.entries) if i != skip]

    def _open_editor(self, entry: Mapping[str, Any] | None, row: int | None) -> ReviewerEditor:
        dialog = ReviewerEditor(entry, self, taken_names=self._names(row))
        dialog.setWindowModality(Qt.WindowModality.WindowModal)

        def done(code: int) -> None:
            result = dialog.entry()
            if code == QDialog.DialogCode.Accepted and result is not None:
                if row is None:
                    self.entries.append(result)
                    self._fill()
                    self.table.selectRow(len(self.entries) - 1)
                else:
                    self.entries[row] = result
                    self._fill()
            dialog.deleteLater()

        dialog.finished.connect(done)
        dialog.open()
        return dialog

    def add_reviewer(self) -> ReviewerEditor:
        return self._open_editor(None, None)

    def edit_reviewer(self) -> ReviewerEditor | None:
        row = self.table.currentRow()
        if not 0 <= row < len(self.entries):
            return None
        return self._open_editor(self.entries[row], row)

    def remove_reviewer(self) -> None:
        row = self.table.currentRow()
        if 0 <= row < len(self.entries):
            del self.entries[row]
            self._fill()

    def save(self) -> bool:
        """Store the list; False (and the reason shown) while an entry is not valid."""
        for entry in self.entries:
            error = entry_error(entry)
            if error:
                self.status.setText(f"Not saved: {make_visible(error)}. Edit or remove it.")
                follow_palette(self.status, error_style)
                return False
        self.services.settings.write(REVIEWERS, tuple(dict(e) for e in self.entries))
        return True

    # -- usage -----------------------------------------------------------------------------

    def refresh_usage(self) -> asyncio.Future[None] | None:
        """Sum the recorded reviews' tokens per day, in a worker thread when the event loop
        runs (else at once)."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            self.show_usage(self._usage())
            return None
        self.usage_status.setText("Counting…")
        self._task = asyncio.ensure_future(self._load_usage())
        return self._task

    def _usage(self) -> list[tuple[str, int, int, int, float | None]]:
        prices = prices_from_setting(self.services.settings.read(PRICES))
        return review_usage_by_day(self.services.audit.list(limit=USAGE_ROWS), prices)

    async def _load_usage(self) -> None:
        try:
            rows = await asyncio.to_thread(self._usage)
        except Exception as exc:  # say what, never crash the dialog
            self.usage_status.setText(f"Could not read the audit log: {exc}")
            return
        self.show_usage(rows)

    def show_usage(self, rows: list[tuple[str, int, int, int, float | None]]) -> None:
        shown = rows[:USAGE_DAYS]
        self.usage.setRowCount(len(shown))
        for r, (day, reviews, tokens_in, tokens_out, dollars) in enumerate(shown):
            for c, value in enumerate((day, f"{reviews:,}", f"{tokens_in:,}",
                                       f"{tokens_out:,}",
                                       f"${dollars:.4f}" if dollars is not None else "—")):
                item = QTableWidgetItem(value)
                if c:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight |
                                          Qt.AlignmentFlag.AlignVCenter)
                self.usage.setItem(r, c, item)
        if not rows:
            self.usage_status.setText("No call has been reviewed yet.")
        else:
            total_in = sum(r[2] for r in rows)
            total_out = sum(r[3] for r in rows)
            self.usage_status.setText(
                f"Last {len(shown)} day{'s' if len(shown) != 1 else ''} with reviews shown; "
                f"{total_in:,} input + {total_out:,} output tokens in all (the newest "
                f"{USAGE_ROWS:,} calls); cost from Settings → Usage & prices.")
