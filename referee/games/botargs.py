"""Bot commands as users write them: ``"python bot.py"`` or ``"name=python bot.py"``."""

from __future__ import annotations

import os
import re
import shlex

from referee.bots.launcher import BotCommand, scrubbed_env
from referee.bots.plan import env_refusal

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


def bot_commands(args: list[str], env: list[str] | None = None) -> list[tuple[str, BotCommand]]:
    """Named commands for ``durak play``-style arguments, names made unique; ``env`` as :func:`seat_env`."""
    parsed = [parse_bot_arg(arg) for arg in args]
    names = unique_names([name or default_name(argv) for name, argv in parsed])
    extra = seat_env(env or [], names)
    return [(name, BotCommand(argv, env=scrubbed_env(extra[seat])))
            for seat, (name, (_, argv)) in enumerate(zip(names, parsed, strict=True))]


def seat_of_bot(names: list[str], which: str) -> int:
    """A seat named by its index (``"0"``) or its bot's name; BotArgError if there is none."""
    if which.isdigit() and int(which) < len(names):
        return int(which)
    if which in names:
        return names.index(which)
    raise BotArgError(f"no seat {which!r}: the seats are 0-{len(names) - 1} ({', '.join(names)})")


def seat_env(options: list[str], names: list[str]) -> list[dict[str, str]]:
    """Per seat, the variables of ``--env`` options: ``NAME=VALUE`` for every seat, ``SEAT:NAME=VALUE`` (a seat
    index or bot name) for one. A variable the loader or a shell reads before the bot runs is refused."""
    env: list[dict[str, str]] = [{} for _ in names]
    for option in options:
        assignment = _ENV.match(option)
        if assignment is None:
            raise BotArgError(f"--env takes NAME=VALUE or SEAT:NAME=VALUE, not {option!r}")
        seat, name, value = assignment.groups()
        if (why := env_refusal(name, value)) is not None:
            raise BotArgError(f"--env {option!r}: {why}")
        for target in range(len(names)) if seat is None else [seat_of_bot(names, seat)]:
            env[target][name] = value
    return env


_ENV = re.compile(r"^(?:([A-Za-z0-9_.+-]+):)?([A-Za-z_][A-Za-z0-9_]*)=(.*)$", re.DOTALL)
