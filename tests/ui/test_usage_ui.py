"""Settings → Usage & prices: the price table saves only edits, a bad row is refused, and the
per-day table shows tokens and cost from the recorded turns."""

from __future__ import annotations

from app.core.pricing import Usage
from app.core.settings_fields import PRICES
from app.core.store.usage import UsageRepository
from app.ui.dialogs.usage_settings import UsageTab, format_usage


def _cells(table, row):
    return [table.item(row, c).text() for c in range(table.columnCount())]


def test_prices_save_only_edits_and_refuse_bad_rows(qtbot, services, tmp_path):
    tab = UsageTab(services)
    qtbot.addWidget(tab)
    models = [tab.prices.item(r, 0).text() for r in range(tab.prices.rowCount())]
    row = models.index("claude-sonnet")
    tab.prices.item(row, 1).setText("2.5")
    assert tab.save()
    assert services.settings.get(PRICES.key) == {"claude-sonnet": [2.5, 15.0]}
    tab.prices.item(row, 2).setText("lots")
    assert not tab.save() and "Row" in tab.error.text()
    assert services.settings.get(PRICES.key) == {"claude-sonnet": [2.5, 15.0]}


def test_days_show_tokens_and_cost(qtbot, services, tmp_path):
    repo = UsageRepository(services.db)
    repo.record(None, "claude-sonnet-5-5", Usage(1_000_000, 100_000, 0, 2_000_000))
    repo.record(None, "local-model", Usage(10, 5))
    tab = UsageTab(services)
    qtbot.addWidget(tab)
    tab.resize(700, 600)
    tab.show()
    tab.grab().save(str(tmp_path / "usage.png"))
    rows = [_cells(tab.days, r) for r in range(tab.days.rowCount())]
    by_model = {r[1]: r for r in rows}
    # $3 × 1M in + $15 × 0.1M out + $0.3 × 2M cache read = 3 + 1.5 + 0.6
    assert by_model["claude-sonnet-5-5"][2:] == ["1.00M", "0", "2.00M", "100.0k", "$5.1000"]
    assert by_model["local-model"][-1] == "—"


def test_format_usage_reads_as_one_line():
    text = format_usage(Usage(12_300, 4_100, 1_200, 40_000), 0.0123)
    assert text == "12.3k in · 4.1k out · cache 1.2k written, 40.0k read · $0.0123"
    assert format_usage(Usage(5, 1), None).endswith("no price for this model")


def test_settings_has_the_usage_tab_and_the_panel_shows_usage(qtbot, services, project):
    from app.ui.dialogs.settings import SettingsDialog
    from tests.ui.conftest import make_ai_panel

    dialog = SettingsDialog(services, services.profiles.ensure_default().id)
    qtbot.addWidget(dialog)
    assert dialog.tabs.tabText(dialog.tabs.indexOf(dialog.usage_tab)) == "Usage && prices"
    panel = make_ai_panel(qtbot, services, project)
    panel.usage.show("claude-sonnet-5-5", Usage(1000, 200),
                     {"claude-sonnet-5-5": Usage(3000, 600, 0, 10_000)})
    text = panel.usage.label.text()
    assert text.startswith("Last turn: 1.0k in · 200 out · $0.0060")
    assert "Conversation: 3.0k in · 600 out · cache 0 written, 10.0k read · $0.0210" in text
