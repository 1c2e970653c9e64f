"""Settings → Usage & prices: the per-model price table (shipped prices with their date, the
person's edits stored over them) and the tokens and cost per day, from every model turn."""

from __future__ import annotations

import asyncio
import contextlib

from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.core.pricing import (
    DEFAULT_PRICES,
    PRICES_AS_OF,
    ModelPrice,
    Usage,
    cost,
    prices_from_setting,
)
from app.core.services import Services
from app.core.settings_fields import PRICES
from app.core.store.usage import UsageRepository
from app.ui.tones import Tone, tone_text

PRICE_COLUMNS = ("Model (name starts with)", "Input $ / M tokens", "Output $ / M tokens")
USAGE_COLUMNS = ("Day", "Model", "Input", "Cache write", "Cache read", "Output", "Cost")


def _tokens(n: int) -> str:
    if n >= 1_000_000:
        return f"{n / 1_000_000:.2f}M"
    return f"{n / 1000:.1f}k" if n >= 1000 else str(n)


def format_usage(usage: Usage, dollars: float | None) -> str:
    """"12.3k in · 4.1k out · cache 1.2k written, 40.0k read · $0.0123" — one line a person
    reads (also the AI panel's)."""
    parts = [f"{_tokens(usage.input_tokens)} in", f"{_tokens(usage.output_tokens)} out"]
    if usage.cache_write_tokens or usage.cache_read_tokens:
        parts.append(f"cache {_tokens(usage.cache_write_tokens)} written, "
                     f"{_tokens(usage.cache_read_tokens)} read")
    parts.append(f"${dollars:.4f}" if dollars is not None else "no price for this model")
    return " · ".join(parts)


class UsageTab(QWidget):
    def __init__(self, services: Services, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("usage-tab")
        self.services = services
        self.prices = QTableWidget(0, len(PRICE_COLUMNS))
        self.prices.setObjectName("usage-prices")
        self.prices.setHorizontalHeaderLabels(PRICE_COLUMNS)
        header = self.prices.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.prices.verticalHeader().hide()
        table = prices_from_setting(services.settings.read(PRICES))
        for model, price in sorted(table.items()):
            self._add_row(model, price)
        add, remove = QPushButton("Add model"), QPushButton("Remove")
        add.clicked.connect(lambda: self._add_row("", ModelPrice(0.0, 0.0)))
        remove.clicked.connect(self._remove_selected)
        self.error = QLabel()
        self.error.setObjectName("usage-error")
        tone_text(self.error, Tone.DANGER)
        self.error.hide()
        note = QLabel(f"Shipped prices are list prices as of {PRICES_AS_OF}; edit them here "
                      "when they change. Cache writes cost 1.25× input (2× for the 1-hour "
                      "cache), cache reads 0.1×. A model is priced by the longest entry its "
                      "name starts with.")
        note.setWordWrap(True)
        note.setStyleSheet("QLabel { color: palette(placeholder-text); }")
        self.days = QTableWidget(0, len(USAGE_COLUMNS))
        self.days.setObjectName("usage-days")
        self.days.setHorizontalHeaderLabels(USAGE_COLUMNS)
        self.days.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.days.verticalHeader().hide()
        days_header = self.days.horizontalHeader()
        days_header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        days_header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        buttons = QHBoxLayout()
        buttons.addWidget(add)
        buttons.addWidget(remove)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("<b>Prices</b>"))
        layout.addWidget(self.prices, 2)
        layout.addLayout(buttons)
        layout.addWidget(note)
        layout.addWidget(self.error)
        layout.addWidget(QLabel("<b>Tokens and cost per day</b> (last 30 days)"))
        layout.addWidget(self.days, 3)
        self._load_task: asyncio.Future[None] | None = None
        self.load_days()

    # -- prices ------------------------------------------------------------------------------

    def _add_row(self, model: str, price: ModelPrice) -> None:
        row = self.prices.rowCount()
        self.prices.insertRow(row)
        for column, text in enumerate((model, f"{price.input_per_mtok:g}",
                                       f"{price.output_per_mtok:g}")):
            self.prices.setItem(row, column, QTableWidgetItem(text))

    def _remove_selected(self) -> None:
        for row in sorted({i.row() for i in self.prices.selectedIndexes()}, reverse=True):
            self.prices.removeRow(row)

    def table(self) -> dict[str, tuple[float, float]] | str:
        """The edited table, or an error text naming the row."""
        out: dict[str, tuple[float, float]] = {}
        for row in range(self.prices.rowCount()):
            cells = [(self.prices.item(row, c).text().strip()  # type: ignore[union-attr]
                      if self.prices.item(row, c) is not None else "") for c in range(3)]
            if not any(cells):
                continue
            try:
                values = (float(cells[1]), float(cells[2]))
            except ValueError:
                return f"Row {row + 1}: prices must be numbers."
            if not cells[0] or min(values) < 0:
                return f"Row {row + 1}: a model name and prices of 0 or more are needed."
            out[cells[0]] = values
        return out

    def save(self) -> bool:
        table = self.table()
        if isinstance(table, str):
            self.error.setText(table)
            self.error.show()
            return False
        self.error.hide()
        # Store only what differs from the shipped table, so later shipped prices apply to
        # the models the person never touched.
        edits = {model: list(pair) for model, pair in table.items()
                 if DEFAULT_PRICES.get(model) != ModelPrice(*pair)}
        removed = [m for m in DEFAULT_PRICES if m not in table]
        for model in removed:  # a removed shipped entry: price it at nothing
            edits[model] = [0.0, 0.0]
        self.services.settings.write(PRICES, edits)
        return True

    # -- usage per day ---------------------------------------------------------------------

    def load_days(self) -> None:
        repo = UsageRepository(self.services.db)
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        if loop is None:  # no event loop (a test, a script): read directly
            self._show_days(repo.per_day())
            return

        async def load() -> None:
            rows = await asyncio.to_thread(repo.per_day)
            with contextlib.suppress(RuntimeError):  # the dialog closed meanwhile
                self._show_days(rows)

        self._load_task = asyncio.ensure_future(load())

    def _show_days(self, rows: list[tuple[str, str, Usage]]) -> None:
        table = prices_from_setting(self.services.settings.read(PRICES))
        self.days.setRowCount(len(rows))
        for row, (day, model, usage) in enumerate(rows):
            dollars = cost(model, usage, table)
            cells = (day, model, _tokens(usage.input_tokens), _tokens(usage.cache_write_tokens),
                     _tokens(usage.cache_read_tokens), _tokens(usage.output_tokens),
                     f"${dollars:.4f}" if dollars is not None else "—")
            for column, text in enumerate(cells):
                self.days.setItem(row, column, QTableWidgetItem(text))
