"""The first instance's window comes to the front when a second start on the same data folder
asks (app.core.instance_lock holds the folder; this is the message between the two)."""

from __future__ import annotations

from PySide6.QtCore import QObject
from PySide6.QtNetwork import QLocalServer, QLocalSocket
from PySide6.QtWidgets import QWidget

RAISE = b"raise\n"
_CONNECT_MS = 1000


def ask_first_to_raise(channel: str) -> bool:
    """Ask the running instance to show its window; False when it did not answer."""
    socket = QLocalSocket()
    socket.connectToServer(channel)
    if not socket.waitForConnected(_CONNECT_MS):
        return False
    socket.write(RAISE)
    sent = socket.waitForBytesWritten(_CONNECT_MS)
    socket.disconnectFromServer()
    return sent


class RaiseOnRequest(QObject):
    """Listens on ``channel``; a second start's request brings ``window`` to the front."""

    def __init__(self, window: QWidget, channel: str) -> None:
        super().__init__(window)
        self._window = window
        self.server = QLocalServer(self)
        # A socket file left by a crashed instance: we hold the data folder's lock, so it is
        # not a live one's.
        QLocalServer.removeServer(channel)
        self.server.listen(channel)
        self.server.newConnection.connect(self._accept)

    def _accept(self) -> None:
        while (socket := self.server.nextPendingConnection()) is not None:
            socket.readyRead.connect(lambda s=socket: self._read(s))
            socket.disconnected.connect(socket.deleteLater)
            if socket.bytesAvailable():
                self._read(socket)

    def _read(self, socket: QLocalSocket) -> None:
        if bytes(socket.readAll().data()).startswith(RAISE.strip()):
            window = self._window
            if window.isMinimized():
                window.showNormal()
            window.show()
            window.raise_()
            window.activateWindow()
