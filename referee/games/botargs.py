"""Bot commands as users write them: ``"python bot.py"`` or ``"name=python bot.py"``."""

from __future__ import annotations

import os
import re
import shlex

from referee.bots.launcher import BotCommand, scrubbed_env
from referee.bots.plan import env_refusal
from referee.bots.words import expand_words

_NAMED = re.compile(r"^([A-Za-z0-9_.+-]+)=(.+)$", re.DOTALL)


class BotArgError(ValueError):
    """A bot argument that cannot be split into a command."""


def parse_bot_arg(text: str) -> tuple[str | None, list[str]]:
    """``"alice=python a.py"`` -> ("alice", ["python", "a.py"]); without a name, the name is None. A word
    ``{python}`` is the referee's own interpreter, as in a config's command
    (:func:`~referee.bots.words.expand_words`)."""
    match = _NAMED.match(text.strip())
    name, command = (match.group(1), match.group(2)) if match else (None, text)
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise BotArgError(f"cannot split bot command {command!r}: {exc}") from None
    if not argv:
        raise BotArgError(f"empty bot command in {text!r}")
    return name, expand_words(argv)


#: File stems that name no bot (``sample_bots/js/bot.js``, the Go bot's ``go/bot``): the folder's name is the bot's.
_GENERIC_STEMS = frozenset({"bot", "main", "index", "run", "__main__"})


def default_name(argv: list[str], folder: str | None = None) -> str:
    """A short name for a bot: its folder's name, else the stem of its first argument that is an existing file
    (relative to the working directory), else of its program named by a path (``./sample_bots/c/bot``), else its
    program's name. A generic stem (``bot``, ``main``) gives way to the name of the file's folder: ``node
    sample_bots/js/bot.js`` is ``js``, not ``bot``."""
    if folder is not None:
        return os.path.basename(os.path.abspath(folder)) or folder
    for word in [*argv[1:], argv[0]] if "/" in argv[0] else argv[1:]:
        if not word.startswith("-") and os.path.isfile(word):
            stem = os.path.splitext(os.path.basename(word))[0] or word
            if stem.lower() in _GENERIC_STEMS:
                return os.path.basename(os.path.dirname(os.path.abspath(word))) or stem
            return stem
    return os.path.basename(argv[0])


def unique_names(names: list[str]) -> list[str]:
    """Give repeated names a suffix: ``random, random#2, random#3``."""
    seen: dict[str, int] = {}
    unique = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        unique.append(name if seen[name] == 1 else f"{name}#{seen[name]}")
    return unique


def bot_commands(args: list[str], env: list[str] | None = None,
                 dirs: list[str] | None = None) -> list[tuple[str, BotCommand]]:
    """Named commands for ``durak play``-style arguments, names made unique; ``env`` as :func:`seat_env`, ``dirs``
    as :func:`seat_dirs` (a bot with a folder runs there, and its sandbox shows it that folder)."""
    parsed = [parse_bot_arg(arg) for arg in args]
    folders = seat_dirs(dirs or [], [name for name, _ in parsed])
    names = unique_names([name or default_name(argv, folder)
                          for (name, argv), folder in zip(parsed, folders, strict=True)])
    extra = seat_env(env or [], names)
    return [(name, BotCommand(argv, cwd=folder, env=scrubbed_env(extra[seat])))
            for seat, (name, (_, argv), folder) in enumerate(zip(names, parsed, folders, strict=True))]


def seat_dirs(options: list[str], given: list[str | None]) -> list[str | None]:
    """Per seat, the folder of ``--dir`` options: ``SEAT:DIR`` (a seat number, or a name given as ``NAME=``) for
    one seat, a bare ``DIR`` for the first bot. The folder must exist; it becomes the bot's working directory.

    :raises BotArgError: an unknown seat, a seat given twice, or a folder that does not exist.
    """
    folders: list[str | None] = [None] * len(given)
    for option in options:
        seat_text, colon, folder = option.partition(":")
        if colon and seat_text.isdigit():
            seat = int(seat_text)
            if seat >= len(given):
                raise BotArgError(f"--dir {option!r}: no seat {seat} at this table of {len(given)}")
        elif colon and seat_text in given:
            seat = given.index(seat_text)
        else:
            seat, folder = 0, option
        if folders[seat] is not None:
            raise BotArgError(f"--dir {option!r}: seat {seat} has a folder already (one --dir per seat; SEAT:DIR "
                              "names the seat)")
        if not os.path.isdir(folder):
            raise BotArgError(f"--dir {option!r}: no folder {folder!r}")
        folders[seat] = os.path.abspath(folder)
    return folders


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
