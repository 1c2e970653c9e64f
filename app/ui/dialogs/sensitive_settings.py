"""Settings → Sensitive paths: what counts as a secret for the permission service and the
conversation's flow labels.

The built-in list (app.core.sensitive_paths, plus Tebiki's data folder) is shown read-only and
folded away; below it, the person's additions, one per line, saved with
``Services.set_sensitive_additions`` when the dialog is saved.
"""

from __future__ import annotations

import os

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QGroupBox,
    QLabel,
    QPlainTextEdit,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.core.sensitive_paths import (
    HOME_SECRET_PATHS,
    NOT_SECRET_NAMES,
    SECRET_FILE_NAMES,
    SYSTEM_SECRET_PATHS,
)
from app.core.services import Services
from app.core.settings_fields import SENSITIVE_PATHS
from app.ui.tones import Tone, text_span

HELP = ("Reading a sensitive path asks you first, even inside the project and under a rule "
        "that allows the tool; once a conversation has read one, calls that can send data out "
        "ask too.")


def builtin_text(services: Services) -> str:
    """The built-in list, as the read-only box shows it."""
    lines = ["# Under your home folder", *(f"~/{p}" for p in HOME_SECRET_PATHS), "",
             "# System sockets", *SYSTEM_SECRET_PATHS]
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isabs(runtime):
        lines += ["", "# Your runtime folder (agent and keyring sockets)", runtime]
    lines += ["", "# Tebiki's data folder", str(services.data_dir), "",
              "# File names, anywhere (inside projects too)", *SECRET_FILE_NAMES, "",
              "# Never secrets (templates and public keys)", *NOT_SECRET_NAMES]
    return "\n".join(lines)


def builtin_count() -> int:
    return len(HOME_SECRET_PATHS) + len(SYSTEM_SECRET_PATHS) + len(SECRET_FILE_NAMES) + 1


def entry_problem(entry: str) -> str | None:
    """Why an addition would never match anything, or None."""
    if "/" in entry and not entry.startswith(("/", "~")):
        return (f"{entry!r} is a relative path: write it absolute (/…) or from your home "
                "folder (~/…), or as a file name without a /.")
    return None


class SensitivePathsTab(QWidget):
    def __init__(self, services: Services, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.services = services
        intro = QLabel(HELP)
        intro.setWordWrap(True)

        builtin = QGroupBox("Built in")
        self.builtin_toggle = QToolButton()
        self.builtin_toggle.setObjectName("sensitive-builtin-toggle")
        self.builtin_toggle.setCheckable(True)
        self.builtin_toggle.setAutoRaise(True)
        self.builtin_toggle.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.builtin_toggle.setArrowType(Qt.ArrowType.RightArrow)
        self.builtin_toggle.setText(f"Show the built-in list ({builtin_count()} entries, "
                                    "read-only)")
        self.builtin = QPlainTextEdit(builtin_text(services))
        self.builtin.setObjectName("sensitive-builtin")
        self.builtin.setReadOnly(True)
        self.builtin.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.builtin.setMinimumHeight(160)
        self.builtin.hide()
        builtin_layout = QVBoxLayout(builtin)
        builtin_layout.addWidget(self.builtin_toggle, 0, Qt.AlignmentFlag.AlignLeft)
        builtin_layout.addWidget(self.builtin, 1)
        self.builtin_toggle.toggled.connect(self._show_builtin)

        additions = QGroupBox(SENSITIVE_PATHS.label)
        self.additions = QPlainTextEdit("\n".join(services.sensitive_additions()))
        self.additions.setObjectName("sensitive-additions")
        self.additions.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.additions.setPlaceholderText(SENSITIVE_PATHS.placeholder)
        additions_help = QLabel(SENSITIVE_PATHS.help)
        additions_help.setWordWrap(True)
        additions_help.setStyleSheet("QLabel { color: palette(placeholder-text); }")
        self.error = QLabel()
        self.error.setObjectName("sensitive-error")
        self.error.setWordWrap(True)
        self.error.hide()
        additions_layout = QVBoxLayout(additions)
        additions_layout.addWidget(additions_help)
        additions_layout.addWidget(self.additions, 1)
        additions_layout.addWidget(self.error)

        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(builtin, 0)
        layout.addWidget(additions, 1)
        self._builtin_box = builtin
        self._layout = layout

    def _show_builtin(self, shown: bool) -> None:
        self.builtin.setVisible(shown)
        self.builtin_toggle.setArrowType(Qt.ArrowType.DownArrow if shown
                                         else Qt.ArrowType.RightArrow)
        self.builtin_toggle.setText(("Hide" if shown else "Show") +
                                    f" the built-in list ({builtin_count()} entries, read-only)")
        # Open, the list shares the height with the additions.
        self._layout.setStretchFactor(self._builtin_box, 1 if shown else 0)

    def entries(self) -> list[str]:
        return list(SENSITIVE_PATHS.check_input(self.additions.toPlainText().splitlines()))

    def save(self) -> bool:
        """Save the additions (only when changed); False, with the reason shown, when one of
        them could never match."""
        entries = self.entries()
        problems = [p for p in map(entry_problem, entries) if p is not None]
        if problems:
            self.error.setText(text_span(Tone.DANGER, "Not saved: " + problems[0]))
            self.error.show()
            return False
        self.error.hide()
        if entries != self.services.sensitive_additions():
            self.services.set_sensitive_additions(entries)
        return True
