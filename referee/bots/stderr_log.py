"""A bounded record of what a bot writes to stderr."""

from __future__ import annotations


class StderrLog:
    """Keeps the first ``cap`` bytes of a stream and its last ``tail_cap``, counting those dropped between.

    The head shows how the bot started; the tail keeps its last words (a traceback) however much it wrote.
    """

    def __init__(self, cap: int = 64 * 1024, tail_cap: int = 4 * 1024) -> None:
        self.cap = cap
        self.tail_cap = tail_cap
        self.dropped = 0
        self._head = bytearray()
        self._tail = bytearray()

    @property
    def size(self) -> int:
        """Bytes written so far, kept or not."""
        return len(self._head) + self.dropped + len(self._tail)

    def append(self, data: bytes) -> None:
        """Record a chunk of the stream."""
        room = self.cap - len(self._head)
        self._head += data[:room]
        self._tail += data[room:]
        excess = len(self._tail) - self.tail_cap
        if excess > 0:
            del self._tail[:excess]
            self.dropped += excess

    def text(self) -> str:
        """The log for people: head, a note of what was dropped, tail; bytes that are not UTF-8 replaced."""
        if not self.dropped:
            return (self._head + self._tail).decode(errors="replace")
        head, tail = self._head.decode(errors="replace"), self._tail.decode(errors="replace")
        return f"{head}\n[... {self.dropped} bytes dropped ...]\n{tail}"

    def last_lines(self, count: int) -> list[str]:
        """The last ``count`` non-blank lines kept, for crash reports."""
        kept = self._tail if self.dropped else self._head + self._tail
        lines = kept.decode(errors="replace").splitlines()
        return [line for line in lines if line.strip()][-count:]
