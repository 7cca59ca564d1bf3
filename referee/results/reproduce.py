"""What a game's dealing and seeding follow, for ``durak play`` to play a game again: the seat that moves first
after a previous game's fool, and the seeds a tournament game's bots were given.

**The bots' seeds.** Each game message gives its bot a seed for its own randomness (PROTOCOL.md 4.3); a bot that
reseeds from it plays a game again the same way only with the same seed. ``--seed`` cannot carry a tournament
game's seeds: ``durak play --seed S`` gives seat s of game g ``bot_seed_for(derive_seed(S, "bots"), g, s)``
and a tournament ``bot_seed_for(derive_seed(deal_seed, "bots", rotation), g, s)``, with ``deal_seed`` derived
from the tournament seed; no S gives those (it would take a SHA-256 preimage), and showing the tournament seed
or a deal seed would show decks (every deck of the tournament, or every game of the deal in every rotation, some
perhaps still to be played). ``durak play --bot-seeds`` takes the per-game seeds themselves instead. Those are
safe to show the organizer: SHA-256 derived, they tell neither seed above nor any card, and each bot was told
its own.
"""

from __future__ import annotations

from protocol.rules import Rules
from referee.engine.deal import first_after_fool
from referee.engine.rng import derive_seed


def bot_seed_for(bot_seed: int, game: int, seat: int) -> int:
    """The seed in the ``game`` message of game ``game`` of a series, at ``seat``: SHA-256 derived
    (:func:`derive_seed`), so it reveals neither ``bot_seed`` nor the deal seed it came from."""
    return derive_seed(bot_seed, "game", game, "seat", seat)


def slot_bot_seed(deal_seed: int, rotation: int) -> int:
    """The ``bot_seed`` of a tournament slot's series (its deal seed and seat rotation): each rotation's bots get
    seeds of their own, on the same deals."""
    return derive_seed(deal_seed, "bots", rotation)


def previous_fool(rules: Rules, leader: int, players: int) -> int:
    """The fool of a previous game after whom ``rules`` have ``leader`` move first (the engine's ``fool``)."""
    return next(fool for fool in range(players) if first_after_fool(rules, fool, players) == leader)
