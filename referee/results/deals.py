"""What a stored game's key says about its deal: how many games the deal has, in a tournament or an SPRT.

Pure helpers over stored keys and a config's table size, rotations and series; the schedules
(:mod:`referee.tournament.schedule`, :mod:`referee.tournament.sprt_schedule`) make the keys and the report reads them.
"""

from __future__ import annotations

import math
import re

#: The arms of an SPRT against a field, by a slot's ``arm``: NEW's games, then BASE's, on the same deals.
ARMS = ("new", "base")
_ARM_KEY = re.compile(r"\|a\d+\|r\d+\|")  # a field group's slot key: ...|d3|a1|r2|...


def rotation_count(players: int, rotations: str) -> int:
    """R: k for cyclic rotations, k! for all permutations."""
    return math.factorial(players) if rotations == "all" else players


def games_of_deal(game_key: str, players: int, rotations: str, series: int) -> int:
    """The games of the deal one of whose games has key ``game_key`` (at a table of ``players``): its rotations
    times the series, twice that for an SPRT's group against a field (both arms share the deal)."""
    arms = len(ARMS) if game_key.startswith("s:") and _ARM_KEY.search(game_key) else 1
    return arms * rotation_count(players, rotations) * series
