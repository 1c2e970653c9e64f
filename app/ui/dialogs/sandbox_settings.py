"""Settings → Sandbox: whether programs run contained here, "Require the sandbox" and the
read-only folders (both fields of app.core.settings_fields, rendered by its form)."""

from __future__ import annotations

import asyncio

import shiboken6
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

from app.core.sandbox.view import format_view, project_confinement, sandbox_view
from app.core.services import Services
from app.core.settings_fields import SANDBOX_READ_ONLY, SANDBOX_REQUIRED
from app.ui.dialogs.setting_form import SettingsForm
from app.ui.tones import Tone, tone_callout, tone_text


class SandboxGroup(QGroupBox):
    """The OS sandbox: what the probe found, and whether programs must run in it."""

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
            tone_text(self.status, Tone.SUCCESS)
        else:
            self.status.setText(f"⚠ {status.summary[:1].upper()}{status.summary[1:]}"
                                .rstrip(".") + ".")
            tone_callout(self.status, Tone.CAUTION)
        # The box shows the requirement in force: unsaved, it follows the machine.
        self.form = SettingsForm(services.settings, (SANDBOX_REQUIRED, SANDBOX_READ_ONLY),
                                 shown={SANDBOX_REQUIRED.key: services.sandbox.required})
        self.required = self.form.input(SANDBOX_REQUIRED)
        assert isinstance(self.required, QCheckBox)
        self.required.setObjectName("sandbox-required")
        self.read_only = self.form.input(SANDBOX_READ_ONLY)
        assert isinstance(self.read_only, QPlainTextEdit)
        self.read_only.setObjectName("sandbox-read-only")
        self.read_only.setFixedHeight(70)
        self._saved_folders = self.folders()
        self._listing: asyncio.Future[None] | None = None
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
        layout.addLayout(self.form)
        layout.addWidget(show)
        layout.addWidget(self.view)

    def folders(self) -> list[str]:
        return list(self.form.value(SANDBOX_READ_ONLY))

    def show_view(self) -> asyncio.Future[None]:
        """The mounts a command tool's program gets in the open project (core's listing),
        worked out in a worker thread: it walks the project and reads its git and venv
        files, which must never stall the window."""
        self.view.setPlainText("Looking at what programs see…")
        self.view.setVisible(True)
        self._listing = asyncio.ensure_future(self._show_view())
        return self._listing

    async def _show_view(self) -> None:
        sandbox, root = self.services.sandbox, self.services.project_root

        def listing() -> str:
            confinement = (project_confinement(sandbox, root)
                           if root is not None and sandbox.status.available else None)
            return (format_view(sandbox_view(confinement)) if confinement is not None else
                    "No sandbox here, or no project open: nothing to show.")

        try:
            text = await asyncio.to_thread(listing)
        except Exception as exc:  # say so in the box rather than losing it
            text = f"Could not work out what programs see: {type(exc).__name__}: {exc}"
        if shiboken6.isValid(self.view):  # Settings may have been closed meanwhile
            self.view.setPlainText(text)

    def save(self) -> None:
        """Saved only when changed: an untouched box keeps following the default (on where
        the sandbox works), e.g. after bubblewrap is installed."""
        required = self.form.value(SANDBOX_REQUIRED)
        if required != self.services.sandbox.required:
            self.services.set_sandbox_required(required)
        if self.folders() != self._saved_folders:
            self.services.set_sandbox_read_only(self.folders())
            self._saved_folders = self.folders()


