"""The words of a bot's command that the referee gives a meaning: ``{python}``, the referee's own interpreter.

One expansion for every place a command is written (a config's ``command``, ``durak play`` and ``check-bot``'s bot
arguments, ``durak league add/update --command``), so a command means the same wherever it is typed.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Sequence

#: The argv word replaced by the referee's own interpreter (``sys.executable``), which every sandbox shows.
PYTHON_WORD = "{python}"

_PYTHON_NAME = re.compile(r"python[0-9.]*")


def expand_words(argv: Sequence[str]) -> list[str]:
    """``argv`` with every word that is exactly ``{python}`` replaced by the referee's own interpreter: a Python
    bot that imports ``protocol`` (or msgspec) runs with the Python that has durak-referee installed."""
    return [sys.executable if word == PYTHON_WORD else word for word in argv]


def python_hint(program: str) -> str:
    """What to write instead, when a bot's program is a Python named by its name (``python3``, ``python``) and
    cannot be run: "" for any other program."""
    if not _PYTHON_NAME.fullmatch(os.path.basename(program)):
        return ""
    return (f"; write {PYTHON_WORD} for the referee's own interpreter ({sys.executable}), which every sandbox "
            f"shows, rather than {program!r}, which is looked up as the bot's uid in what its sandbox shows and may "
            "be another Python or none")
