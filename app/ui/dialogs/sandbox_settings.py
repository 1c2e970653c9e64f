"""Settings → Sandbox: whether programs run contained here, and "Require the sandbox"."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QGroupBox,
    QLabel,
    QVBoxLayout,
    QWidget,
)

from app.core.services import (
    Services,
)


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
        layout = QVBoxLayout(self)
        layout.addWidget(self.status)
        layout.addSpacing(6)
        layout.addWidget(self.required)
        layout.addWidget(hint)

    def save(self) -> None:
        """Saved only when changed: an untouched box keeps following the default (on where
        the sandbox works), e.g. after bubblewrap is installed."""
        if self.required.isChecked() != self.services.sandbox.required:
            self.services.set_sandbox_required(self.required.isChecked())


