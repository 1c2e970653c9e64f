"""OutputBuffer: a program's output kept within a byte limit, head and tail."""

from __future__ import annotations

__all__ = ["OutputBuffer"]


class OutputBuffer:
    """Keeps the first and last ``limit/2`` bytes of a stream and counts what was dropped.

    Head and tail because both ends matter to a model: the command's first lines and the
    errors/summary it prints last.
    """

    def __init__(self, limit: int) -> None:
        self.limit = max(0, limit)
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0
        self._overflowed = False

    def feed(self, data: bytes) -> None:
        self.total += len(data)
        if not self._overflowed:
            room = self.limit - len(self.head)
            self.head += data[:room]
            data = data[room:]
            if not data:
                return
            # Over the limit: keep the first half as head, everything after goes to the tail.
            self._overflowed = True
            half = self.limit // 2
            self.tail = self.head[half:]
            del self.head[half:]
        self.tail += data
        keep = self.limit - len(self.head)
        if len(self.tail) > keep:
            del self.tail[:len(self.tail) - keep]

    @property
    def dropped(self) -> int:
        return self.total - len(self.head) - len(self.tail)

    def text(self) -> str:
        head = self.head.decode("utf-8", "replace")
        tail = self.tail.decode("utf-8", "replace")
        if self.dropped <= 0:
            return head + tail
        return (f"{head}\n[... output truncated: {self.dropped} bytes omitted "
                f"({self.total} total, limit {self.limit}) ...]\n{tail}")
