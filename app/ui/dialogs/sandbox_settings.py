"""Settings → Sandbox: whether programs run contained here, and "Require the sandbox"."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QCheckBox,
    QGroupBox,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.core.app_sandbox import SANDBOX_READ_ONLY_KEY
from app.core.sandbox.view import format_view, project_confinement, sandbox_view
from app.core.services import Services


class SandboxGroup(QGroupBox):
    """The OS sandbox: what the probe found, and whether programs must run in it."""

    HELP = ("Refuse to run programs when the sandbox is not available, instead of running them "
            "unsandboxed.")

    def __init__(self, services: Services, parent: QWidget | None = None) -> None:
        super().__init__("Sandbox", parent)
        self.setObjectName("sandbox-group")
        self.services = services
        status = services.sandbox.status
        self.status = QLabel()
        self.status.setObjectName("sandbox-status")
        self.status.setTextFormat(Qt.TextFormat.PlainText)
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        if status.available:
            where = f" at {status.executable}" if status.executable else ""
            self.status.setText(f"✓ Sandboxed ({status.backend}{where}): the tools marked "
                                "\"sandboxed\" in the tools list run their programs in it.")
            self.status.setStyleSheet("QLabel { color: #1a7f37; }")
        else:
            self.status.setText(f"⚠ {status.summary[:1].upper()}{status.summary[1:]}"
                                .rstrip(".") + ".")
            self.status.setStyleSheet("QLabel { background: #fff1e5; color: #762c00; border: "
                                      "1px solid #fb8f44; border-radius: 6px; padding: 6px; }")
        self.required = QCheckBox("Require the sandbox")
        self.required.setObjectName("sandbox-required")
        self.required.setChecked(services.sandbox.required)
        hint = QLabel(self.HELP)
        hint.setObjectName("sandbox-required-help")
        hint.setWordWrap(True)
        hint.setStyleSheet("QLabel { color: palette(placeholder-text); }")
        self.read_only = QPlainTextEdit()
        self.read_only.setObjectName("sandbox-read-only")
        self.read_only.setPlaceholderText("one folder per line, e.g. ~/datasets")
        self.read_only.setFixedHeight(70)
        saved = services.settings.get(SANDBOX_READ_ONLY_KEY)
        self._saved_folders = [f for f in saved if isinstance(f, str)] if isinstance(
            saved, list) else []
        self.read_only.setPlainText("\n".join(self._saved_folders))
        self.view = QPlainTextEdit()
        self.view.setObjectName("sandbox-view")
        self.view.setReadOnly(True)
        self.view.setVisible(False)
        # Columns of the listing line up only in a fixed-width font.
        self.view.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.view.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.view.setMinimumHeight(260)
        show = QPushButton("Show what programs see")
        show.setObjectName("sandbox-show-view")
        show.clicked.connect(self.show_view)
        layout = QVBoxLayout(self)
        layout.addWidget(self.status)
        layout.addSpacing(6)
        layout.addWidget(self.required)
        layout.addWidget(hint)
        layout.addSpacing(6)
        layout.addWidget(QLabel("Read-only folders: every sandboxed program may read these "
                                "(it sees nothing of your home folder but the project, the "
                                "write folders and the toolchains otherwise)."))
        layout.addWidget(self.read_only)
        layout.addWidget(show)
        layout.addWidget(self.view)

    def folders(self) -> list[str]:
        return [line.strip() for line in self.read_only.toPlainText().splitlines()
                if line.strip()]

    def show_view(self) -> None:
        """The mounts a command tool's program gets in the open project (core's listing)."""
        root = self.services.project_root
        confinement = (project_confinement(self.services.sandbox, root)
                       if root is not None and self.services.sandbox.status.available else None)
        text = (format_view(sandbox_view(confinement)) if confinement is not None else
                "No sandbox here, or no project open: nothing to show.")
        self.view.setPlainText(text)
        self.view.setVisible(True)

    def save(self) -> None:
        """Saved only when changed: an untouched box keeps following the default (on where
        the sandbox works), e.g. after bubblewrap is installed."""
        if self.required.isChecked() != self.services.sandbox.required:
            self.services.set_sandbox_required(self.required.isChecked())
        if self.folders() != self._saved_folders:
            self.services.set_sandbox_read_only(self.folders())
            self._saved_folders = self.folders()


