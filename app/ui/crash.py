"""Unhandled exceptions are logged and shown; the app never dies silently."""

from __future__ import annotations

import asyncio
import logging
import sys
import traceback
from types import TracebackType
from typing import Any

from PySide6.QtWidgets import QApplication, QMessageBox

log = logging.getLogger("tebiki.crash")


def show_error(title: str, text: str, details: str = "") -> None:
    parent = QApplication.activeWindow()
    box = QMessageBox(QMessageBox.Icon.Critical, title, text, QMessageBox.StandardButton.Ok,
                      parent)
    if details:
        box.setDetailedText(details)
    box.setModal(False)
    box.open()  # never block inside a callback or coroutine


def _excepthook(kind: type[BaseException], value: BaseException,
                tb: TracebackType | None) -> None:
    details = "".join(traceback.format_exception(kind, value, tb))
    log.error("unhandled exception\n%s", details)
    if QApplication.instance() is not None:
        show_error("Tebiki hit an unexpected error",
                   f"{kind.__name__}: {value}\n\nYour data is safe; the details are in the log.",
                   details)


def _loop_handler(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    exc = context.get("exception")
    if exc is None:
        log.error("asyncio: %s", context.get("message"))
        return
    _excepthook(type(exc), exc, exc.__traceback__)


def install(loop: asyncio.AbstractEventLoop | None = None) -> None:
    sys.excepthook = _excepthook
    if loop is not None:
        loop.set_exception_handler(_loop_handler)
