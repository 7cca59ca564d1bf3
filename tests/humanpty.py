"""A scripted person at ``durak play --human`` through a pseudo-terminal: what the terminal was sent, byte for byte."""

from __future__ import annotations

import os
import pty
import random
import re
import select
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RANDOM_BOT = f"{sys.executable} {ROOT / 'sample_bots' / 'python' / 'random_bot.py'}"
#: The prompt, with its number of choices (none written: the only action, which Enter takes) and the time left.
PROMPT = re.compile(rb"your move \[(?:1-(\d+), an action|Enter or 1 for the only action), \? for the rules; "
                    rb"(\d+ s \+ bank \d+ s|bank: \d+ s left|\d+ s left)\]: $")
ANSI = re.compile(rb"\x1b\[[0-9;]*m")
CARD = re.compile(rb"\b[2-9TJQKA][CDHS]\b")


@dataclass
class Session:
    """What the terminal received (``screen``), the exit code, and the answers typed."""

    screen: bytes = b""
    code: int | None = None
    typed: list[bytes] = field(default_factory=list)
    prompts: int = 0
    pid: int = 0  # the durak process, once started
    fd: int = -1  # the terminal's side the person types into

    def text(self) -> str:
        return ANSI.sub(b"", self.screen).decode("utf-8", "replace")


Answer = Callable[[int, int], bytes | None]  # (prompt number from 0, choices) -> what to type; None: say nothing


LISTED = re.compile(rb"^ +1\. (.+?)\r?$", re.MULTILINE)


def random_answers(seed: int = 0, wrong_first: bool = False, session: Session | None = None) -> Answer:
    """A number at random (Enter for the only action); with ``wrong_first``, first a wrong entry, then ``?``, then
    (given the ``session``) the first listed action typed out as an action string."""
    rng = random.Random(seed)

    def answer(index: int, choices: int) -> bytes | None:
        if wrong_first and index == 0:
            return b"zzz\n"
        if wrong_first and index == 1:
            return b"?\n"
        if session is not None and index == 2:
            return LISTED.findall(ANSI.sub(b"", session.screen))[-1].upper() + b"\n"
        if choices == 1:
            return b"\n"
        return f"{rng.randint(1, choices)}\n".encode()

    return answer


def play_human(args: list[str], answer: Answer, *, env: dict[str, str] | None = None, timeout: float = 90.0,
               interrupt_at: int | None = None, session: Session | None = None) -> Session:
    """``python -m referee play ARGS`` on a pty, answering each prompt with ``answer``; with ``interrupt_at``,
    Ctrl-C (the terminal's ^C, which the line discipline turns into SIGINT) at that prompt instead. ``session``
    (default: a new one) is filled as it goes, so ``answer`` may look at it."""
    environ = {**os.environ, "PYTHONPATH": str(ROOT), "TERM": "xterm", "COLUMNS": "200"}
    environ.pop("NO_COLOR", None)
    environ.update(env or {})
    argv = [sys.executable, "-m", "referee", "play", *args]
    pid, fd = pty.fork()
    if pid == 0:  # the child: the pty is its controlling terminal, its process group the foreground one
        os.chdir(ROOT)
        os.execve(argv[0], argv, environ)
    session = session if session is not None else Session()
    session.pid, session.fd = pid, fd
    stop = time.monotonic() + timeout
    try:
        while time.monotonic() < stop:
            ready, _, _ = select.select([fd], [], [], 0.5)
            if not ready:
                continue
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            session.screen += chunk
            found = PROMPT.search(ANSI.sub(b"", session.screen[-400:]))
            if found is None:
                continue
            index = session.prompts
            session.prompts += 1
            if interrupt_at is not None and index == interrupt_at:
                os.write(fd, b"\x03")
                continue
            typed = answer(index, int(found.group(1) or 1))
            if typed is not None:
                session.typed.append(typed)
                os.write(fd, typed)
        else:
            os.kill(pid, signal.SIGKILL)
            raise AssertionError(f"durak play --human did not finish in {timeout} s:\n{session.text()[-3000:]}")
    finally:
        _, status = os.waitpid(pid, 0)
        os.close(fd)
    session.code = os.waitstatus_to_exitcode(status)
    return session
