"""Which choices of a tool's settings only make sense inside a working OS sandbox, and turning
them off in a choice box where there is none.

Separate from the generic Configure dialog (app.ui.dialogs.tool_config), which renders any
tool's config fields: this is the one place that knows a particular tool's choice gives up a
limit because the sandbox is the wall (shell_exec's "Any program, sandboxed").
"""

from __future__ import annotations

import html

from PySide6.QtGui import QStandardItemModel
from PySide6.QtWidgets import QComboBox

from app.core.sandbox import SandboxStatus
from app.core.tools.builtin.shell_exec import LEVEL_ANY_SANDBOXED

# CHOICE values that give up another limit because the sandbox is the wall: only selectable
# where a working sandbox exists.
NEEDS_SANDBOX = frozenset({LEVEL_ANY_SANDBOXED})


def limit_to_sandbox(combo: QComboBox, sandbox: SandboxStatus) -> str | None:
    """Disable the choices that need a sandbox when there is none; the returned line says
    why (None when nothing is disabled)."""
    if sandbox.available:
        return None
    model = combo.model()
    assert isinstance(model, QStandardItemModel)
    disabled = []
    for index in range(combo.count()):
        if combo.itemData(index) in NEEDS_SANDBOX:
            item = model.item(index)
            item.setEnabled(False)
            item.setToolTip("<qt>" + html.escape(
                f"Needs a working sandbox; here: {sandbox.summary}") + "</qt>")
            disabled.append(combo.itemText(index))
    if not disabled:
        return None
    names = ", ".join(f"\u201c{name}\u201d" for name in disabled)
    note = (f"{names} needs a working sandbox, and there is none here: "
            f"{sandbox.reason.rstrip('.')}.")
    if combo.currentData() in NEEDS_SANDBOX:
        note += " Until there is, this tool runs nothing: choose another option."
    return note
