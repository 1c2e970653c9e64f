"""The first instance's window comes to the front when a second start on the same data folder
asks (app.core.instance_lock holds the folder; this is the message between the two).

A unix socket of the standard library, watched by a ``QSocketNotifier``, rather than
QtNetwork's local sockets: the bundle leaves QtNetwork out, and this needs one byte string.
Where unix sockets are missing (old Windows), a second start simply says that Tebiki runs.
"""

from __future__ import annotations

import contextlib
import os
import socket
import tempfile

from PySide6.QtCore import QObject, QSocketNotifier
from PySide6.QtWidgets import QWidget

RAISE = b"raise\n"
_CONNECT_S = 1.0


def channel_path(channel: str) -> str:
    """Where the socket of ``channel`` lives (the temporary folder: short enough for a unix
    socket's path, one per user and data folder by the channel's name)."""
    return os.path.join(tempfile.gettempdir(), f"{channel}.sock")


def ask_first_to_raise(channel: str) -> bool:
    """Ask the running instance to show its window; False when it did not answer."""
    if not hasattr(socket, "AF_UNIX"):
        return False
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as peer:
            peer.settimeout(_CONNECT_S)
            peer.connect(channel_path(channel))
            peer.sendall(RAISE)
    except OSError:
        return False
    return True


class RaiseOnRequest(QObject):
    """Listens on ``channel``; a second start's request brings ``window`` to the front."""

    def __init__(self, window: QWidget, channel: str) -> None:
        super().__init__(window)
        self._window = window
        self._path = channel_path(channel)
        self._server: socket.socket | None = None
        self._readers: dict[socket.socket, QSocketNotifier] = {}
        if not hasattr(socket, "AF_UNIX"):
            return
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            # A socket file left by a crashed instance: we hold the data folder's lock, so it
            # is not a live one's.
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self._path)
            server.bind(self._path)
            server.listen(4)
            server.setblocking(False)
        except OSError:
            server.close()
            return
        self._server = server
        self._notifier = QSocketNotifier(server.fileno(), QSocketNotifier.Type.Read, self)
        self._notifier.activated.connect(self._accept)
        window.destroyed.connect(self.close)

    def is_listening(self) -> bool:
        return self._server is not None

    def close(self) -> None:
        for conn, notifier in list(self._readers.items()):
            self._drop(conn, notifier)
        if self._server is not None:
            self._notifier.setEnabled(False)
            self._server.close()
            self._server = None
            with contextlib.suppress(OSError):
                os.unlink(self._path)

    def _accept(self) -> None:
        assert self._server is not None
        while True:
            try:
                conn, _ = self._server.accept()
            except (BlockingIOError, OSError):
                return
            conn.setblocking(False)
            # Read when the peer has written: never wait for it on the GUI thread.
            notifier = QSocketNotifier(conn.fileno(), QSocketNotifier.Type.Read, self)
            notifier.activated.connect(lambda *_, c=conn, n=notifier: self._read(c, n))
            self._readers[conn] = notifier

    def _read(self, conn: socket.socket, notifier: QSocketNotifier) -> None:
        try:
            data = conn.recv(64)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        self._drop(conn, notifier)
        if data.startswith(RAISE.strip()):
            window = self._window
            if window.isMinimized():
                window.showNormal()
            window.show()
            window.raise_()
            window.activateWindow()

    def _drop(self, conn: socket.socket, notifier: QSocketNotifier) -> None:
        notifier.setEnabled(False)
        notifier.deleteLater()
        self._readers.pop(conn, None)
        conn.close()
