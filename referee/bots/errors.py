"""Errors of the bot process layer: every verdict against a bot derives from ``BotError``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar


class BotError(RuntimeError):
    """A bot failed; ``verdict`` names how, ``reason`` says so in one line."""

    verdict: ClassVar[str]  # "crash", "memory", "timeout", "protocol" or "illegal": set by each subclass

    @property
    def reason(self) -> str:
        """The message on a single line, fit for a results table."""
        return " ".join(str(self).split())


class BotCrashed(BotError):
    """The bot exited (the message gives the exit code or signal); ``stderr_tail`` holds its last words."""

    verdict = "crash"

    def __init__(self, message: str, stderr_tail: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.stderr_tail = tuple(stderr_tail)


class BotOutOfMemory(BotError):
    """The kernel killed a process of the bot's tree for going over the bot's memory limit."""

    verdict = "memory"


class BotLaunchError(BotError):
    """The bot could not be started (program or directory missing); judged like a crash."""

    verdict = "crash"


class BotTimeout(BotError):
    """The bot did not answer, or did not read its input, before the deadline."""

    verdict = "timeout"


class BotProtocolError(BotError):
    """The bot broke the line protocol: a line too long, its output closed, text that does not decode..."""

    verdict = "protocol"


class BotIllegalAction(BotError):
    """The bot's message was well formed but not a legal action; raised by the layers above."""

    verdict = "illegal"


class LauncherError(RuntimeError):
    """The referee's machine cannot run bots at all; not a verdict against any bot."""
