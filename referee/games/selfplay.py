"""In-process games between random legal players: the engine's smoke test and benchmark."""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field

from protocol.rules import Rules
from referee.engine import engine_build, new_game
from referee.engine.rng import SeededRng, derive_seed


@dataclass
class SelfplayStats:
    """What ``durak selfplay`` reports."""

    variant: str
    players: int
    deck: int
    games: int = 0
    actions: int = 0
    seconds: float = 0.0
    draws: int = 0
    capped: int = 0
    fools: list[int] = field(default_factory=list)  # per seat: games in which it was a fool
    engine: str = field(default_factory=engine_build)  # the engine build that played: compiled or pure

    @property
    def games_per_second(self) -> float:
        return self.games / self.seconds if self.seconds else 0.0

    @property
    def mean_actions(self) -> float:
        return self.actions / self.games if self.games else 0.0

    def to_dict(self) -> dict[str, object]:
        return {
            "variant": self.variant, "players": self.players, "deck": self.deck, "games": self.games,
            "seconds": round(self.seconds, 4), "games_per_second": round(self.games_per_second, 1),
            "mean_actions": round(self.mean_actions, 2), "draws": self.draws, "action_caps": self.capped,
            "fool_rate": [round(f / self.games, 4) if self.games else 0.0 for f in self.fools],
            "engine": self.engine,
        }


def selfplay(rules: Rules, players: int, games: int, seed: int) -> SelfplayStats:
    """Play ``games`` independent games; game i deals from ``derive_seed(seed, "selfplay", i)``.

    The players choose uniformly among the legal actions with ``random.Random(seed)``.
    """
    stats = SelfplayStats(rules.variant, players, rules.deck, fools=[0] * players)
    choose = random.Random(seed).random
    start = time.perf_counter()
    for i in range(games):
        game = new_game(rules, players, SeededRng(derive_seed(seed, "selfplay", i)))
        while game.result is None:
            legal = game.legal_actions()
            game.apply_unchecked(legal[int(choose() * len(legal))])
        result = game.result
        stats.actions += game.actions
        stats.draws += not result.fools
        stats.capped += result.end == "action_cap"
        for seat in result.fools:
            stats.fools[seat] += 1
    stats.games = games
    stats.seconds = time.perf_counter() - start
    return stats
