"""Links in a message open in the browser only for http, https and mailto; the URL shows on
hover; images are never fetched (a real HTTP server on 127.0.0.1 sees no request)."""

from __future__ import annotations

import socketserver
import threading

import pytest
from PySide6.QtCore import QObject, Qt, QUrl, Slot
from PySide6.QtGui import QDesktopServices

from app.ui.widgets.transcript_view import MessageView


class _RecordingHandler(socketserver.StreamRequestHandler):
    """An HTTP server's least: notes each request's path and answers 200 with nothing."""

    def handle(self) -> None:
        request_line = self.rfile.readline().decode("latin-1").split()
        self.server.requests.append(request_line[1] if len(request_line) > 1 else "")  # type: ignore[attr-defined]
        self.wfile.write(b"HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n")


@pytest.fixture
def image_server():
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _RecordingHandler)
    server.requests = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", server.requests  # type: ignore[attr-defined]
    server.shutdown()
    server.server_close()
    thread.join()


_SCHEMES = ("http", "https", "mailto", "file", "javascript", "data", "vscode")


class _Desktop(QObject):
    """Stands in for the desktop's URL handlers: records what the app asked to open."""

    def __init__(self) -> None:
        super().__init__()
        self.opened: list[str] = []

    @Slot(QUrl)
    def open(self, url: QUrl) -> None:
        self.opened.append(url.toString())


@pytest.fixture
def desktop():
    recorder = _Desktop()
    for scheme in _SCHEMES:
        QDesktopServices.setUrlHandler(scheme, recorder, "open")
    yield recorder
    for scheme in _SCHEMES:
        QDesktopServices.unsetUrlHandler(scheme)


def _click_link(qtbot, view: MessageView, word: str) -> None:
    view.resize(400, 100)
    view.show()
    qtbot.waitExposed(view)
    cursor = view.textCursor()
    cursor.setPosition(view.document().toPlainText().index(word) + 1)
    point = view.cursorRect(cursor).center()
    assert view.anchorAt(point)
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=point)


@pytest.mark.parametrize("url, opens", [
    ("https://example.com/a", True), ("http://example.com", True),
    ("mailto:someone@example.com", True), ("file:///etc/passwd", False),
    ("javascript:alert(1)", False), ("data:text/html,<b>x</b>", False),
    ("vscode://open?x=1", False)])
def test_only_web_and_mail_links_open(qtbot, desktop, url, opens):
    view = MessageView(f"Go to [thelink]({url}) now.")
    qtbot.addWidget(view)
    _click_link(qtbot, view, "thelink")
    assert desktop.opened == ([QUrl(url).toString()] if opens else [])


def test_hover_shows_the_full_url(qtbot):
    view = MessageView("[short](https://example.com/a/very/long/path?q=1)")
    qtbot.addWidget(view)
    view.highlighted.emit(QUrl("https://example.com/a/very/long/path?q=1"))
    assert view.toolTip() == "https://example.com/a/very/long/path?q=1"
    view.highlighted.emit(QUrl("file:///etc/passwd"))
    assert view.toolTip().startswith("file:///etc/passwd") and "not opened" in view.toolTip()
    view.highlighted.emit(QUrl())
    assert view.toolTip() == ""


def test_images_are_never_fetched(qtbot, image_server):
    base, requests = image_server
    view = MessageView(f"Chart: ![the chart]({base}/chart.png)\n\n"
                       f"<img src=\"{base}/raw.png\">\n\nend")
    qtbot.addWidget(view)
    view.resize(500, 300)
    view.show()
    qtbot.waitExposed(view)
    view.grab()  # paint: an image that would load, loads now
    view.document().setTextWidth(480)
    view.document().size()
    # The server answers on its own thread: a request made above would already be recorded
    # once our own request below (queued after it) is answered.
    import urllib.request
    urllib.request.urlopen(f"{base}/probe").read()
    assert requests == ["/probe"]
    assert "[image: the chart]" in view.document().toPlainText()
