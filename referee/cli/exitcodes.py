"""The referee's exit codes: the README's table is written from this enum."""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0  # the job finished (a game lost by a bot is still a finished game); a league daemon stopped as asked
    INTERNAL = 1  # a bug in the referee: please report it
    USAGE = 2  # bad command-line arguments (unknown option, bad value)
    CONFIG = 3  # bad rules or tournament config: unknown variant or option, bad deal
    BOT_PROGRAM = 4  # a bot program that cannot be started (missing, not executable) or fails its preflight
    SANDBOX = 5  # the requested sandbox is unavailable on this machine
    DATABASE = 6  # the results database cannot be opened or written
    CHECK_FAILED = 7  # check-bot: the bot misbehaved (the reasons are printed)
    CLUSTER = 8  # --cluster: Dask missing, the scheduler unreachable or misconfigured, no worker, a worker's checks
    WORKER_FAILED = 9  # a worker died mid-run; finished results are kept and the printed command resumes
    SPRT_H1 = 10  # sprt: H1 accepted, NEW is at least elo1 stronger than BASE
    SPRT_H0 = 11  # sprt: H0 accepted, NEW is at most elo0 stronger than BASE
    SPRT_TRUNCATED = 12  # sprt: --max-games played without a decision
    ARENA = 13  # submit: the web arena refused the request (a bad token, a quota, a bad upload) or is unreachable
    RESIGNED = 14  # play --human: the person resigned (Ctrl-C); the game is their forfeit, written to --log
    INTERRUPTED = 130  # stopped by Ctrl-C / SIGINT; finished results are kept
    TERMINATED = 143  # stopped by SIGTERM (128 + 15); finished results are kept
