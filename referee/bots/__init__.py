"""The bot process layer: runs bot programs as children and moves lines of bytes to and from them.

It knows nothing of the game: it enforces limits and deadlines and turns failures into ``BotError``s.
"""

from referee.bots.errors import (
    BotCrashed,
    BotError,
    BotIllegalAction,
    BotLaunchError,
    BotProtocolError,
    BotTimeout,
    LauncherError,
)
from referee.bots.launcher import BotCommand, launch
from referee.bots.limits import ResourceLimits, TimeControl
from referee.bots.process import BotProcess
from referee.bots.stderr_log import StderrLog

__all__ = [
    "BotCommand",
    "BotCrashed",
    "BotError",
    "BotIllegalAction",
    "BotLaunchError",
    "BotProcess",
    "BotProtocolError",
    "BotTimeout",
    "LauncherError",
    "ResourceLimits",
    "StderrLog",
    "TimeControl",
    "launch",
]
