"""Help → Keyboard Shortcuts lists the window's shortcuts from the window itself, and the Edit
menu carries the message shortcuts (Edit, Regenerate, Copy)."""

from __future__ import annotations

from PySide6.QtWidgets import QMenu

from app.ui.message_shortcuts import MESSAGE_SHORTCUTS


def test_the_shortcut_list_and_the_menus(qtbot, services, project) -> None:  # type: ignore[no-untyped-def]
    from app.ui.dialogs.shortcuts import ShortcutsDialog, window_shortcuts
    from app.ui.main_window import MainWindow

    window = MainWindow(services=services, project_root=project)
    qtbot.addWidget(window)
    listed = window_shortcuts(window)
    rows = {what: keys for keys, what in listed}
    assert rows["Run › Stop"] == "Ctrl+."
    assert rows["Help › Keyboard Shortcuts"] == "Ctrl+/"
    for keys, name, _method in MESSAGE_SHORTCUTS:
        assert rows[f"Edit › {name}"] == keys
    assert "Send the request (in the prompt)" in rows
    edit = next(a.menu() for a in window.menuBar().actions() if a.text() == "&Edit")
    assert isinstance(edit, QMenu)
    dialog = ShortcutsDialog(window)
    qtbot.addWidget(dialog)
    assert dialog.table.rowCount() == len(listed)
