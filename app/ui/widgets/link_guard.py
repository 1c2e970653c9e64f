"""Links in a rendered message: a click opens the page in the browser only for http, https
and mailto; file:, javascript:, data: and custom schemes a model wrote stay inert (a model's
answer is untrusted text, and the desktop would hand such a URL to whatever handles it).
Hovering a link shows its full URL, so a link's text cannot hide where it goes."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtWidgets import QTextBrowser

if TYPE_CHECKING:  # made by the first link (the ready window makes no PySide6 type it needs not)
    from PySide6.QtCore import QUrl

OPENABLE_SCHEMES = frozenset({"http", "https", "mailto"})


def is_openable(url: QUrl) -> bool:
    return url.isValid() and url.scheme().lower() in OPENABLE_SCHEMES and \
        (url.scheme().lower() == "mailto" or bool(url.host()))


class LinkGuard:
    """Handles ``view``'s link clicks and hovers (the view opens nothing by itself)."""

    def __init__(self, view: QTextBrowser,
                 open_url: Callable[[QUrl], object] | None = None) -> None:
        self.view = view
        self._open_url = open_url
        view.setOpenLinks(False)
        view.setOpenExternalLinks(False)
        view.anchorClicked.connect(self.clicked)
        view.highlighted.connect(self.hovered)

    def clicked(self, url: QUrl) -> None:
        if is_openable(url):
            if self._open_url is None:
                from PySide6.QtGui import QDesktopServices

                self._open_url = QDesktopServices.openUrl
            self._open_url(url)

    def hovered(self, url: QUrl) -> None:
        text = url.toString() if not url.isEmpty() else ""
        if text and not is_openable(url):
            text += "  (not opened: only http, https and mailto links open)"
        self.view.setToolTip(text)
