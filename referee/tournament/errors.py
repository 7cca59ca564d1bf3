"""The errors that stop a run: each is one line for the CLI to print."""

from __future__ import annotations

import signal


class TournamentError(RuntimeError):
    """The run cannot start or go on (a changed schedule or bot, a failed worker); one line."""


class PreflightError(TournamentError):
    """A bot failed its preflight (started and handshaken once before any game) and the config's ``preflight``
    key is ``"stop"``: no game was played."""


class RunOptionsError(TournamentError):
    """Options of the command line that do not go together (``--jobs`` with ``--cluster``): a usage error."""


class Interrupted(RuntimeError):
    """Ctrl-C or SIGTERM: the finished slots are stored, those in flight abandoned; the message says how many
    are stored. ``signal_number`` is the signal's (the exit code is 128 + it)."""

    def __init__(self, message: str, signal_number: int = signal.SIGINT) -> None:
        super().__init__(message)
        self.signal_number = signal_number
