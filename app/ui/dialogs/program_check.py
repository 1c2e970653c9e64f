"""The allowed-programs box's check as the person types: each name is looked up on the PATH
programs get (``minimal_env``), off the GUI thread, and those not found are named in a warning
line under the box. A warning only: a program installed later, or only inside the sandbox's
toolchains, may still be meant, so saving stays allowed."""

from __future__ import annotations

import logging
import shutil
from collections.abc import Iterable

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtWidgets import QLabel, QPlainTextEdit

from app.core.sandbox.environment import minimal_env
from app.ui.widgets.db_worker import DatabaseWorker

log = logging.getLogger(__name__)

# Run by shell_exec itself, never looked up on PATH.
_SHELL_OWN = frozenset({"cd", "pwd"})
# Typing pauses this long before the names are looked up again.
_TYPING_PAUSE_MS = 300


def missing_programs(names: Iterable[str]) -> list[str]:
    """The names not found on the PATH a program started by a tool gets (blocking: it reads
    folders, which may be on a slow network drive)."""
    path = minimal_env()["PATH"]
    return [name for name in names
            if name not in _SHELL_OWN and shutil.which(name, path=path) is None]


class ProgramCheck(QObject):
    """Looks up the names in ``edit`` (one per line) and shows the missing ones in
    ``warning``; ``checked`` is emitted each time the warning shows a finished lookup."""

    checked = Signal()

    def __init__(self, edit: QPlainTextEdit, warning: QLabel) -> None:
        super().__init__(edit)
        self._edit = edit
        self._warning = warning
        self._worker = DatabaseWorker(self)
        self._asked = 0  # the latest lookup; an older answer is dropped
        self.missing: list[str] = []
        self._pause = QTimer(self)
        self._pause.setSingleShot(True)
        self._pause.setInterval(_TYPING_PAUSE_MS)
        self._pause.timeout.connect(self._look_up)
        edit.textChanged.connect(self._pause.start)
        warning.hide()
        self._answered = 0
        self._look_up()

    @property
    def pending(self) -> bool:
        """A lookup is waiting for the typing to pause or for its answer."""
        return self._pause.isActive() or self._answered != self._asked

    def _look_up(self) -> None:
        names = list(dict.fromkeys(line.strip() for line in self._edit.toPlainText().splitlines()
                                   if line.strip()))
        self._asked += 1
        asked = self._asked
        self._worker.submit(lambda: missing_programs(names),
                            lambda missing: self._show(asked, missing),
                            lambda error: self._failed(asked, error))

    def _failed(self, asked: int, error: BaseException) -> None:
        log.warning("looking up the allowed programs failed: %s", error)
        self._answered = asked

    def _show(self, asked: int, missing: list[str]) -> None:
        self._answered = asked
        if asked != self._asked:
            return
        self.missing = missing
        if missing:
            names = ", ".join(missing)
            self._warning.setText(
                f"Not found on PATH: {names}. Check the spelling, or install "
                f"{'it' if len(missing) == 1 else 'them'}; a program that is not found "
                "cannot run (saving is still allowed).")
        self._warning.setVisible(bool(missing))
        self.checked.emit()
