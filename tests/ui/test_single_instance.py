"""A second start on the same data folder brings the first window to the front, or the person
is told why nothing started."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QWidget

import app.main as app_main
from app.core.config import resolve_paths
from app.core.instance_lock import InstanceLock, instance_channel
from app.ui.single_instance import RaiseOnRequest, ask_first_to_raise


def test_the_first_window_is_raised(qtbot, tmp_path: Path) -> None:
    window = QWidget()
    qtbot.addWidget(window)
    window.showMinimized()
    listener = RaiseOnRequest(window, instance_channel(tmp_path))
    assert listener.is_listening()
    assert ask_first_to_raise(instance_channel(tmp_path))
    qtbot.waitUntil(lambda: window.isVisible() and not window.isMinimized(), timeout=5000)


def test_no_answer_means_a_clear_refusal(qtbot, tmp_path: Path, monkeypatch, capsys) -> None:
    paths = resolve_paths(str(tmp_path))
    held = InstanceLock.acquire(paths.data_dir)
    try:
        assert app_main.claim_data_folder(paths, headless=True) is None
    finally:
        held.release()
    assert "already running with the data folder" in capsys.readouterr().err
    claimed = app_main.claim_data_folder(paths, headless=True)
    assert claimed is not None
    claimed.release()
