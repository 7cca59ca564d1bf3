"""The league's rule for a bot's name, in one home: the CLI's lifecycle commands and an upload's manifest
(:mod:`referee.league.manifest`) both check it here.

Versions are written ``NAME@N`` and schedule keys join names with :data:`NAME_SEPARATORS`, so a name holds
neither; it is short and plain ASCII so that it is safe in a folder name, a table and a terminal.
"""

from __future__ import annotations

import re

from referee.tournament.config import NAME_SEPARATORS

#: 1-64 letters, digits and ``. _ + -``, not starting with a dot: a name is a folder of the bot store, where
#: ``.``, ``..`` and the store's own ``.staged`` and ``.uploads`` are not bots.
BOT_NAME = re.compile(r"[A-Za-z0-9_+-][A-Za-z0-9_.+-]{0,63}")


def name_problem(name: str) -> str | None:
    """Why ``name`` cannot be a bot's name in a league (one line naming it), or None."""
    if not BOT_NAME.fullmatch(name) or any(char in name for char in NAME_SEPARATORS):
        return (f"bad bot name {name!r}: 1-64 letters, digits and . _ + -, not starting with a dot (no @: versions "
                "are NAME@N)")
    return None
