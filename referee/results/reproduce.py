"""A stored or logged game as ``durak play`` options that play it again: its deal (the deck order, top first, as
``--deal`` takes it), the dealer, the seat that moved first where the deal alone would not name it, the rule
options that differ from the variant's defaults, and the seeds its bots were given.

The deal is every card of the game: it belongs to the all-seeing views only (``durak replay`` without
``--seat``, ``durak export``), which are the organizer's; a seat's view never shows it.

**Who moves first.** ``durak play --deal`` lets the lowest trump lead (Fool's Fool: the lowest diamond). A
later game of a series is led from the previous game's fool (``first_move``), and a first attack drawn by lot
(RULES.md 5b.6) follows the series' random stream: neither follows from the deal, so the options then name the
seat with ``--leader``. The dealer is always named: ``durak play`` deals from seat 0 by default, a tournament
draws its first dealer, and a series' later dealers follow its fools.

**The bots' seeds.** Each game message gives its bot a seed for its own randomness (PROTOCOL.md 4.3); a bot that
reseeds from it plays a game again the same way only with the same seed. ``--seed`` cannot carry a tournament
game's seeds: ``durak play --seed S`` gives seat s of game g ``bot_seed_for(derive_seed(S, "bots"), g, s)``
and a tournament ``bot_seed_for(derive_seed(deal_seed, "bots", rotation), g, s)``, with ``deal_seed`` derived
from the tournament seed; no S gives those (it would take a SHA-256 preimage), and showing the tournament seed
or a deal seed would show decks (every deck of the tournament, or every game of the deal in every rotation, some
perhaps still to be played). The options name the per-game seeds themselves instead (``--bot-seeds``). Those
are safe to show the organizer: SHA-256 derived, they tell neither seed above nor any card, and each bot was
told its own.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass

import msgspec

from protocol.cards import parse_cards
from protocol.events import ActionTaken, AnyEvent, BoutStarted
from protocol.rules import Rules
from referee.engine import InvalidDealError, new_game
from referee.engine.deal import first_after_fool
from referee.engine.rng import derive_seed
from referee.results.replay import ReplayError, ReplayHeader, ReplayResult, decode_replay_line
from referee.results.rows import SlotSeeds, StoredDeal, decode_record
from referee.text import visible


def bot_seed_for(bot_seed: int, game: int, seat: int) -> int:
    """The seed in the ``game`` message of game ``game`` of a series, at ``seat``: SHA-256 derived
    (:func:`derive_seed`), so it reveals neither ``bot_seed`` nor the deal seed it came from."""
    return derive_seed(bot_seed, "game", game, "seat", seat)


def slot_bot_seed(deal_seed: int, rotation: int) -> int:
    """The ``bot_seed`` of a tournament slot's series (its deal seed and seat rotation): each rotation's bots get
    seeds of their own, on the same deals."""
    return derive_seed(deal_seed, "bots", rotation)


def tournament_bot_seeds(seeds: SlotSeeds, players: int) -> list[int]:
    """Per seat, the seed a stored tournament game's bots were given, from its stored columns."""
    bot_seed = slot_bot_seed(seeds.deal_seed, seeds.rotation)
    return [bot_seed_for(bot_seed, seeds.game_index, seat) for seat in range(players)]


def previous_fool(rules: Rules, leader: int, players: int) -> int:
    """The fool of a previous game after whom ``rules`` have ``leader`` move first (the engine's ``fool``)."""
    return next(fool for fool in range(players) if first_after_fool(rules, fool, players) == leader)


def first_mover(events: Sequence[AnyEvent]) -> int | None:
    """The seat that moved first: the first bout's attacker, or (Fool's Fool) the first to act."""
    for event in events:
        if isinstance(event, BoutStarted):
            return event.attacker
        if isinstance(event, ActionTaken):
            return event.seat
    return None


@dataclass(frozen=True)
class PlayAgain:
    """What ``durak play`` needs to deal a game again: ``leader`` is the seat that moved first (None: nobody
    did), ``bot_seeds`` per seat (empty: unknown)."""

    rules: Rules
    deal: str
    dealer: int
    players: int
    leader: int | None
    bot_seeds: list[int]

    @property
    def needs_leader(self) -> bool:
        """Whether the deal alone would have another seat move first (or draw one by lot)."""
        if self.leader is None:
            return False
        rules, players = self.rules, self.players
        try:
            cards = parse_cards(self.deal)
            dealt = new_game(rules, players, deck=cards, dealer=self.dealer)
            led = new_game(rules, players, deck=cards, dealer=self.dealer,
                           fool=previous_fool(rules, self.leader, players))
        except InvalidDealError:  # nobody holds a trump and the lowest cards tie: the first attack is drawn
            return True
        except (ValueError, StopIteration):
            raise ReplayError("the replay's deal cannot be dealt again") from None
        return dealt.to_move != led.to_move

    def options(self) -> list[str]:
        """The options of ``durak play`` after the bots, each value its own item."""
        rules = self.rules
        options = ["--variant", rules.variant, "--deck", str(rules.deck), "--deal", self.deal,
                   "--dealer", str(self.dealer)]
        if self.needs_leader:
            options += ["--leader", str(self.leader)]
        defaults = Rules(variant=rules.variant, deck=rules.deck)
        for name, value in rules.options().items():
            if name != "deck" and value != getattr(defaults, name):
                shown = value if isinstance(value, str) else msgspec.json.encode(value).decode()
                options += ["--set", f"{name}={shown}"]
        if self.bot_seeds:
            options += ["--bot-seeds", ",".join(map(str, self.bot_seeds))]
        return options

    def line(self, names: Sequence[str]) -> str:
        """The command for a reader, each bot's command left to fill in (``<name>``, in its seat)."""
        words = [f'"{word}"' if " " in word else word for word in self.options()]
        bots = " ".join(f"<{visible(name)}>" for name in names)
        return f"deal: durak play {bots} {' '.join(words)}"


def play_again(header: ReplayHeader, events: Sequence[AnyEvent], bot_seeds: Sequence[int] = ()) -> PlayAgain:
    """The options that deal the game of ``header`` again; ``events`` need only reach its first move.
    ``bot_seeds`` stand in where the header has none (a game stored before headers kept them)."""
    return PlayAgain(header.rules, " ".join(header.deck), header.dealer, len(header.names), first_mover(events),
                     list(header.bot_seeds or bot_seeds))


#: Bytes of a compressed replay decompressed at a time while looking for its first move.
_OPENING_STEP = 4096


def replay_opening(compressed: bytes) -> tuple[ReplayHeader, list[AnyEvent]]:
    """A stored (zlib-compressed) replay's header and its events up to the first move, without decompressing
    the rest of it (an export reads the deals of a million games)."""
    stream = zlib.decompressobj()
    data, pending = compressed, b""
    header: ReplayHeader | None = None
    events: list[AnyEvent] = []
    while True:
        try:
            chunk = stream.decompress(data, _OPENING_STEP)
        except zlib.error as exc:
            raise ReplayError(f"not a replay: {exc}") from None
        data = stream.unconsumed_tail
        ended = stream.eof or not (chunk or data)
        *lines, pending = (pending + chunk).split(b"\n")
        for line in [*lines, pending] if ended else lines:
            if not line.strip():
                continue
            decoded = decode_replay_line(line)
            if header is None:
                if not isinstance(decoded, ReplayHeader):
                    break
                header = decoded
            elif isinstance(decoded, ReplayHeader | ReplayResult):
                return header, events  # the game ended (or the next began) before any move
            else:
                events.append(decoded)
                if isinstance(decoded, ActionTaken | BoutStarted):
                    return header, events
        if ended or (header is None and lines):
            break
    if header is None:
        raise ReplayError("not a replay: it needs a game header first")
    return header, events


def export_record(deal: StoredDeal) -> bytes:
    """A stored game's result record as ``durak export`` writes it (JSON, no newline): as stored, with its deal
    (``deck``, ``dealer``, ``leader``, ``bot_seeds``) and, where read, each seat's stderr."""
    header, events = replay_opening(deal.replay)
    again = play_again(header, events, tournament_bot_seeds(deal.seeds, len(header.names)))
    record = msgspec.structs.replace(decode_record(deal.record), deck=again.deal, dealer=again.dealer,
                                     leader=again.leader, bot_seeds=again.bot_seeds or None, stderr=deal.stderr)
    return _encoder.encode(record)


_encoder = msgspec.json.Encoder()
