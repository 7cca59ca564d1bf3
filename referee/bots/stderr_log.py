"""A bounded record of what a bot writes to stderr, marked by the move it was written during."""

from __future__ import annotations

import re

from protocol.records import StderrChunk, stderr_text

#: Lines that state a runtime's fatal error, best first: Java's root cause and its uncaught exception, Go's panic
#: (the first one: later ones are re-panics) and fatal error, C++'s uncaught exception (its ``what():`` line,
#: else ``terminate called``). A Python traceback's statement is the first unindented line after its frames.
_STATEMENTS = (
    (re.compile(r"^Caused by: "), "last"),
    (re.compile(r"^Exception in thread "), "last"),
    (re.compile(r"^(panic|fatal error): "), "first"),
    (re.compile(r"^\s*what\(\):"), "last"),
    (re.compile(r"^terminate called "), "last"),
    # node: an uncaught error's first line after the source excerpt, before its stack and "Node.js v20..."
    (re.compile(r"^(Uncaught )?([A-Za-z_$][\w$]*)?(Error|Exception)( \[\w+\])?: "), "last"),
)


class StderrLog:
    """Keeps the first ``cap`` bytes of a stream and its last ``tail_cap``, counting those dropped between.

    The head shows how the bot started; the tail keeps its last words (a traceback) however much it wrote.
    :meth:`mark` notes where in the stream a move began, so :meth:`chunks` can tell what was written when.
    """

    def __init__(self, cap: int = 64 * 1024, tail_cap: int = 4 * 1024) -> None:
        self.cap = cap
        self.tail_cap = tail_cap
        self.dropped = 0
        self._head = bytearray()
        self._tail = bytearray()
        self._marks: list[tuple[int, int]] = [(0, 0)]  # (stream offset, events before it), offsets rising
        self._peeked = 0  # stream offset up to which take_new() has returned the text

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

    def mark(self, after: int) -> None:
        """What is written from now on belongs beside ``events[after:]``; a mark with nothing written since the
        last one replaces it."""
        offset = self.size
        if self._marks[-1][0] == offset:
            self._marks[-1] = (offset, after)
        else:
            self._marks.append((offset, after))

    def text(self) -> str:
        """The log for people: head, a note of what was dropped, tail; bytes that are not UTF-8 replaced."""
        return stderr_text(self.chunks())

    def chunks(self) -> list[StderrChunk]:
        """The kept bytes cut at the marks, each piece with its mark; a note where bytes were dropped."""
        ends = [offset for offset, _ in self._marks[1:]] + [self.size]
        pieces = [(after, self._between(start, end)) for (start, after), end in zip(self._marks, ends, strict=True)]
        return [StderrChunk(after, text) for after, text in pieces if text]

    def take_new(self) -> str:
        """The text written since the last call (for a live view); the record keeps it all the same."""
        text = self._between(self._peeked, self.size)
        self._peeked = self.size
        return text

    def _between(self, start: int, end: int) -> str:
        """The kept bytes of stream offsets [start, end), with a note of the dropped ones if the range starts
        before the gap and reaches past it (so each cut of the stream tells of the gap once)."""
        head_end = len(self._head)
        tail_start = head_end + self.dropped  # the stream offset where the kept tail starts
        head = bytes(self._head[start:min(end, head_end)]).decode(errors="replace")
        note = f"\n[... {self.dropped} bytes dropped ...]\n" if self.dropped and start <= head_end < end else ""
        tail = bytes(self._tail[max(start, tail_start) - tail_start:max(0, end - tail_start)])
        return head + note + tail.decode(errors="replace")

    def error_line(self) -> str | None:
        """The kept line that states why the bot died (:func:`error_statement`), None without stderr."""
        return error_statement(self._last_words())

    def last_lines(self, count: int) -> list[str]:
        """The last ``count`` non-blank lines kept, for crash reports."""
        return [line for line in self._last_words() if line.strip()][-count:]

    def _last_words(self) -> list[str]:
        """The lines kept up to the end: the tail, and the head before it when nothing between was dropped."""
        kept = self._tail if self.dropped else self._head + self._tail
        return kept.decode(errors="replace").splitlines()


def error_statement(lines: list[str]) -> str | None:
    """The line of a dying bot's stderr that states its error: a Python traceback's exception line, Java's last
    ``Caused by:`` (else its ``Exception in thread``), Go's first ``panic:`` or ``fatal error:``, C++'s
    ``what():`` (else ``terminate called``), node's ``Error: ...`` (any ``...Error:`` line); else the last
    non-blank line. None for no text."""
    shown = [line for line in lines if line.strip()]
    if not shown:
        return None
    python = _python_statement(shown)
    if python is not None:
        return python
    for pattern, which in _STATEMENTS:
        found = [line for line in shown if pattern.match(line)]
        if found:
            return (found[0] if which == "first" else found[-1]).strip()
    return shown[-1]


def _python_statement(lines: list[str]) -> str | None:
    """The exception line of the last Python traceback: the first unindented line after its frames."""
    starts = [i for i, line in enumerate(lines) if line.startswith("Traceback (most recent call last):")]
    if not starts:
        return None
    return next((line for line in lines[starts[-1] + 1:] if not line[0].isspace()), None)
