"""The panels' on-demand modules (dialogs, tool cards, the conversation list), imported after
ready on the GUI thread, one per turn of the event loop.

Why not in a worker thread, as they were: a module that defines a Qt widget class builds its
meta-object as it loads, and PySide updates a Python class's meta-object while the GUI thread
paints; the two raced, and about one start in five of the packaged app crashed painting a
button (the smoke test caught it). One module per turn keeps each stall to one import."""

from __future__ import annotations

import importlib
import logging
from collections.abc import Iterable

from PySide6.QtCore import QObject, QTimer

log = logging.getLogger(__name__)

# What the panels open or show on demand: the dialogs (an approval, a tool's Configure…, the
# undo preview and the diff, the runs view), a run's tool cards, the conversation list and a
# reopened conversation's replay. The window is ready without them (tens of ms of imports); they are
# imported after it, before a person can ask for one. Should one be asked for sooner, its first
# use imports it.
DEFERRED_UI_MODULES = ("app.ui.dialogs.approval", "app.ui.dialogs.tool_config",
                       "app.ui.dialogs.restore_preview", "app.ui.widgets.tool_card",
                       "app.ui.widgets.conversation_replay", "app.ui.ai_panel.find_bar",
                       "app.ui.dialogs.remember_choice", "app.ui.dialogs.sampling",
                       "app.ui.dialogs.elicitation", "app.ui.dialogs.url_elicitation",
                       "app.ui.widgets.conversation_list",
                       "app.ui.widgets.markdown_stream", "app.ui.widgets.message_actions",
                       "app.ui.dialogs.runs_view")


def import_in_turns(modules: Iterable[str], context: QObject) -> None:
    """Import ``modules`` one per event-loop turn while ``context`` lives."""
    pending = list(modules)

    def next_one() -> None:
        if not pending:
            return
        name = pending.pop(0)
        try:
            importlib.import_module(name)
        except Exception:  # its first use imports it again and says what is wrong
            log.exception("could not import %s ahead of its use", name)
        if pending:
            QTimer.singleShot(0, context, next_one)

    QTimer.singleShot(0, context, next_one)
