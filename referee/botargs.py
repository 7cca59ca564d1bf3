"""Bot commands as users write them: ``"python bot.py"`` or ``"name=python bot.py"``."""

from __future__ import annotations

import os
import re
import shlex

from referee.bots.launcher import BotCommand, scrubbed_env

_NAMED = re.compile(r"^([A-Za-z0-9_.+-]+)=(.+)$", re.DOTALL)


class BotArgError(ValueError):
    """A bot argument that cannot be split into a command."""


def parse_bot_arg(text: str) -> tuple[str | None, list[str]]:
    """``"alice=python a.py"`` -> ("alice", ["python", "a.py"]); without a name, the name is None."""
    match = _NAMED.match(text.strip())
    name, command = (match.group(1), match.group(2)) if match else (None, text)
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise BotArgError(f"cannot split bot command {command!r}: {exc}") from None
    if not argv:
        raise BotArgError(f"empty bot command in {text!r}")
    return name, argv


def default_name(argv: list[str]) -> str:
    """A short name from the command: the stem of its last file-like word, else the program's name."""
    for word in reversed(argv):
        if not word.startswith("-") and ("/" in word or "." in word):
            return os.path.splitext(os.path.basename(word))[0] or word
    return os.path.basename(argv[0])


def unique_names(names: list[str]) -> list[str]:
    """Give repeated names a suffix: ``random, random#2, random#3``."""
    seen: dict[str, int] = {}
    unique = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        unique.append(name if seen[name] == 1 else f"{name}#{seen[name]}")
    return unique


def bot_commands(args: list[str]) -> list[tuple[str, BotCommand]]:
    """Named commands for ``durak play``-style arguments, names made unique."""
    parsed = [parse_bot_arg(arg) for arg in args]
    names = unique_names([name or default_name(argv) for name, argv in parsed])
    return [(name, BotCommand(argv, env=scrubbed_env())) for name, (_, argv) in zip(names, parsed, strict=True)]
