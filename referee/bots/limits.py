"""What a bot may use: operating-system resource limits and the clock it plays against."""

from __future__ import annotations

from dataclasses import dataclass, fields


def mib_bytes(mib: int | None) -> int | None:
    """A limit of ``mib`` MiB in bytes; None (no limit) stays None."""
    return None if mib is None else mib << 20


@dataclass(frozen=True, slots=True)
class ResourceLimits:
    """What a bot may use, applied at launch; ``None`` leaves a limit as the referee's own."""

    #: MiB for the bot's whole process tree, its tmpfs included: its memory control group's cap (bots at the
    #: ``process`` and ``bwrap`` levels, where the machine has one). Otherwise RLIMIT_DATA per process: heap and
    #: private mappings; not RLIMIT_AS, which counts address space that runtimes reserve but never touch (node
    #: dies at 256 MiB of it).
    memory_mb: int | None = 1024
    #: RLIMIT_NPROC. The kernel counts every task (threads included) of the bot's real uid, the
    #: referee's and other bots' too, and exempts root; so it bounds a fork bomb only once bots run
    #: under their own uid, and a small value breaks thread-hungry runtimes. Off by default.
    max_processes: int | None = None
    #: RLIMIT_FSIZE in MiB: the largest file the bot may write (beyond it the bot gets SIGXFSZ).
    file_size_mb: int | None = 64
    #: RLIMIT_NOFILE: open file descriptors, the three pipes included.
    open_files: int | None = 256
    #: RLIMIT_CPU in whole seconds (SIGXCPU then SIGKILL). Off by default: it accumulates over a
    #: persistent bot's whole life, so per-move budgets belong to TimeControl.
    cpu_seconds: int | None = None

    def __post_init__(self) -> None:
        for field in fields(self):
            value = getattr(self, field.name)
            if value is not None and value <= 0:
                raise ValueError(f"{field.name} must be positive or None, not {value}")


@dataclass(frozen=True, slots=True)
class TimeControl:
    """The clock a bot plays against, in seconds of wall time on the referee's monotonic clock."""

    #: Time allowed for each move, from the request written to the reply's newline read.
    move_time: float = 1.0
    #: Slack added to every deadline for scheduling jitter and pipe latency; not the bot's to spend:
    #: a reply inside it is a strike, and the ``strikes``-th strike in one game is a timeout.
    grace: float = 0.05
    #: Time allowed from launch to the bot's first reply (interpreters and JITs start slowly).
    startup_time: float = 10.0
    #: Extra time shared by all moves of a game, drawn on when a move overruns; None for none.
    time_bank: float | None = None
    #: Replies inside the grace (after the move time and any bank) that make a timeout, in one game.
    strikes: int = 3
    #: Freeze the bot between its turns, so that it cannot think on the others' time (the config's ``pause``).
    pause: bool = True

    def __post_init__(self) -> None:
        if self.move_time <= 0 or self.startup_time <= 0:
            raise ValueError("move_time and startup_time must be positive")
        if self.strikes < 1:
            raise ValueError(f"strikes must be at least 1, not {self.strikes}")
        if self.grace < 0 or (self.time_bank or 0.0) < 0:
            raise ValueError("grace and time_bank must not be negative")
