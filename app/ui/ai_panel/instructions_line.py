"""The instructions line above the transcript: which instructions files (AGENTS.md, CLAUDE.md,
.tebiki/instructions.md and the person's own) the model is given, with their sizes, and a menu
that opens each one. Read with app.core.agent.project_instructions, the function a run uses,
off the GUI thread when a project opens and when a run starts; hidden when there are none.

The loader is imported by the first read (a project opening): the panel is ready without it."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtWidgets import QMenu, QSizePolicy, QToolButton

from app.ui.controllers.checkpoints import loop_running

if TYPE_CHECKING:
    import asyncio  # imported where used: the ready window loads before the event loop

    from app.core.agent.project_instructions import InstructionFile, InstructionsLoader

log = logging.getLogger(__name__)

_TOOLTIP = ("The instructions files the model is given at each run: the project's conventions. "
            "They never grant a permission. Click to open one.")


class InstructionsLine:
    """``button``: "Instructions: AGENTS.md (2.1 KB), CLAUDE.md (cut at 32 KB)", its menu
    opening each file; placed by the panel. ``data_dir`` holds the person's own file;
    ``project_root`` is the open project (None: none)."""

    def __init__(self, data_dir: Path, project_root: Callable[[], Path | None]) -> None:
        self._data_dir = data_dir
        self._project_root = project_root
        self._loader: InstructionsLoader | None = None
        self._reads = 0  # a newer read wins over a slower older one
        self._pending: set[asyncio.Future[None]] = set()
        self.files: tuple[InstructionFile, ...] = ()
        self.button = QToolButton()
        self.button.setObjectName("instructions")
        self.button.setAutoRaise(True)
        self.button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        # Long names are clipped rather than widening the panel.
        self.button.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self.button.setStyleSheet("QToolButton { color: palette(placeholder-text); }")
        self.menu = QMenu(self.button)
        self.button.setMenu(self.menu)
        self.button.hide()

    def on_running(self, running: bool) -> None:
        """A run starts: it reads the files again, so does the line."""
        if running:
            self.refresh()

    def refresh(self) -> None:
        """Read the open project's files off the GUI thread, then show them."""
        self._reads += 1
        root = self._project_root()
        if root is None or not loop_running():
            self.show(())
            return
        import asyncio

        future = asyncio.ensure_future(self._read(root, self._reads))
        self._pending.add(future)
        future.add_done_callback(self._pending.discard)

    async def _read(self, root: Path, read: int) -> None:
        import asyncio

        files = await asyncio.to_thread(self._load, root)
        if read == self._reads:
            self.show(files)

    def _load(self, root: Path) -> tuple[InstructionFile, ...]:
        """In a worker thread: the files a run in ``root`` would be given (none on a failure:
        the line is a convenience, never an error for the person)."""
        from app.core.agent.project_instructions import (
            InstructionsLoader,
            personal_instructions_path,
        )

        if self._loader is None:
            self._loader = InstructionsLoader(personal_instructions_path(self._data_dir))
        try:
            return self._loader.load(root)
        except Exception:
            log.exception("could not list the project's instructions files")
            return ()

    def show(self, files: Sequence[InstructionFile]) -> None:
        """``files`` on the line and in its menu; the line hidden when there are none."""
        self.files = tuple(files)
        self.menu.clear()
        if not self.files:
            self.button.hide()
            return
        from app.core.agent.project_instructions import describe

        text = "Instructions: " + ", ".join(describe(f) for f in self.files)
        self.button.setText(text)
        self.button.setToolTip(f"{text}\n{_TOOLTIP}")
        for file in self.files:
            action = self.menu.addAction(f"Open {file.name}" + (" (personal)" if file.personal
                                                                else ""))
            action.setEnabled(not file.problem)
            action.triggered.connect(lambda _=False, path=file.path: open_file(path))
        self.button.show()


def open_file(path: Path) -> None:
    """``path`` in the person's editor for its type."""
    # Imported by the first opening: creating these PySide6 types is ~1 ms of the ready window.
    from PySide6.QtCore import QUrl
    from PySide6.QtGui import QDesktopServices

    QDesktopServices.openUrl(QUrl.fromLocalFile(str(path)))
