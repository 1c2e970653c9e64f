"""The main window. A placeholder until the desktop UI issue builds the real one."""

from __future__ import annotations

from pathlib import Path

import sqlite_utils
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QMainWindow

from app.core.config import APP_NAME


class MainWindow(QMainWindow):
    def __init__(self, *, db: sqlite_utils.Database, data_dir: Path,
                 project_root: Path | None = None) -> None:
        super().__init__()
        self.db = db
        self.data_dir = data_dir
        self.project_root = project_root
        title = APP_NAME if project_root is None else f"{project_root.name} — {APP_NAME}"
        self.setWindowTitle(title)
        label = QLabel(f"{APP_NAME}\n\nProject: {project_root or '(none)'}\nData: {data_dir}")
        label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.setCentralWidget(label)
        self.resize(1100, 720)
