"""Hidden-information audit of the BYTES the match layer sends to each seat (RULES.md 5b.2, 5b.7, 8.4, 9).

``referee.games.match.play_game`` is driven with in-process clients that duck-type ``BotClient`` and record
``protocol.messages.encoder.encode(message)`` for every message, so what is checked is exactly what would
go on the wire. For every seat the audit derives, from the deck order and the rules alone (RULES.md 8.1,
9), what that seat may know after each engine event: its dealt hand and its own draws (sliced from the
stock order), the trump card, every card named in an action string, the Fool's Fool pile cards, its own
kept cards. Every card string in every message must be in that set at the moment the message is built.
Also checked: the deal seed and the deck order never appear; ``known`` in every view equals the publicly
known cards derived independently (5b.7); every event reaches every seat exactly once, in order.

The pass tests build positions from explicit decks where a seat chooses ``pass`` with a throw-in in hand,
versus the same position where pass is its only move (asked with ``ask_forced_passes``, the default; automatic
without it), and compare what the other seats receive and when each seat is asked.

Counts: ``pytest tests/test_hidden_info_audit.py -s`` prints them; ``python bench/audit_report.py`` runs a larger audit.
``AUDIT_GAMES`` (environment) sets the games per variant (default 1000).
"""

from __future__ import annotations

import itertools
import json
import os
import random
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec
import pytest
from scenario import deal_deck, position

from protocol.cards import CARD_NAMES
from protocol.events import (
    ActionTaken,
    AnyEvent,
    BoutEnded,
    BoutStarted,
    CardKept,
    CardPlaced,
    CardsDrawn,
    LadderStarted,
    PileDiscarded,
    PileTaken,
    event_for_seat,
)
from protocol.messages import GameOver, GameStart, Message, Request, encoder, referee_decoder
from protocol.records import StderrChunk
from protocol.rules import HAND_SIZE, VARIANTS, Rules
from protocol.views import PlayerView
from referee.engine import Game, SeededRng, new_game, next_in_series, parse_deal
from referee.engine.rng import derive_seed
from referee.games.match import play_game

GAMES_PER_VARIANT = int(os.environ.get("AUDIT_GAMES", "1000"))
# A card token anywhere in a line: two characters not glued to letters or digits ("JSON" is no card).
CARD_TOKEN = re.compile(r"\b[2-9TJQKA][CDHS]\b", re.ASCII)  # ASCII: word boundaries as in the bytes
BOGUS_ACTIONS = ("attack {a}", "throw {a}", "beat {a} {b}", "transfer {a}", "lead {a}", "beat-top {a}",
                 "take", "pass", "fold {a}", "attack {b} {a}", "")


# -- recording clients -------------------------------------------------------------------------------


@dataclass
class Wire:
    """Every line the referee sent in the current game, in order: (engine events then, seat, bytes)."""

    game: Game | None = None
    lines: list[tuple[int, int, bytes]] = field(default_factory=list)
    bogus: list[str] = field(default_factory=list)  # action strings that forfeited a seat (public in the reason)

    def record(self, seat: int, message: Message) -> None:
        assert self.game is not None
        self.lines.append((len(self.game.events), seat, encoder.encode(message)))


Chooser = Callable[[int, Request], str]


class RecordingClient:
    """Duck-types ``BotClient``: records the encoded bytes of every message; ``choose`` answers requests."""

    def __init__(self, name: str, seat: int, wire: Wire, choose: Chooser) -> None:
        self.name = name
        self.seat = seat
        self.wire = wire
        self.choose = choose
        self.move_times: list[float] = []
        self.strikes: list[int] = []
        self.stopped = 0
        self._ids = itertools.count(1)

    def new_game(self) -> None:
        self.move_times = []
        self.strikes = []

    def next_request_id(self) -> int:
        return next(self._ids)

    def start(self) -> None:
        return None

    def send_later(self, message: Message) -> None:
        self.wire.record(self.seat, message)

    def time_for_move(self) -> float:
        return 1.0

    def resignation(self) -> str | None:
        return None

    def ask(self, request: Request, **_: object) -> str:  # stderr_mark=
        self.wire.record(self.seat, request)
        self.move_times.append(0.0)
        return self.choose(self.seat, request)

    def game_over(self, message: GameOver, **_: object) -> None:  # e.g. offender=
        self.wire.record(self.seat, message)

    def stop(self, grace: float = 0.5) -> None:
        self.stopped += 1

    def take_stderr(self) -> list[StderrChunk]:
        return []

    def mark_stderr(self, after: int) -> None:
        pass


# -- what each seat may know, from the deck order and the rules ----------------------------------------


class PublicModel:
    """What each seat may know after the first n engine events (RULES.md 8.1, 9), derived independently.

    Private cards come from the deck order (the deal, and the stock or ladder sliced by the public draw
    counts and ladder steps), never from the hidden fields of the events; the engine's full log is checked
    against them on the way. ``known`` follows RULES.md 5b.7 from the actions alone.
    """

    def __init__(self, game: Game) -> None:
        self.game = game
        self.players = players = game.players
        self.is_bout = game.rules.is_bout_game
        deck = [CARD_NAMES[c] for c in game.deck]
        dealer = game.dealer
        self.public: set[str] = set()
        self.private: list[set[str]] = [set() for _ in range(players)]
        self.known: list[set[str]] = [set() for _ in range(players)]
        self.trump: str | None = None
        self.stock: list[str] = []
        self.drawn = 0
        if self.is_bout:
            dealt = players * HAND_SIZE
            for k in range(dealt):
                self.private[(dealer + 1 + k) % players].add(deck[k])
            if dealt < len(deck):
                self.trump = deck[dealt]
                self.stock = [*deck[dealt + 1:], deck[dealt]]
            else:  # 36 cards, 6 players: the dealer's last card is shown and stays his (RULES.md 1.3)
                self.trump = deck[dealt - 1]
                self.known[dealer].add(self.trump)
            self.public.add(self.trump)
        self.piles = {(dealer + 1 + i) % players: deck[i] for i in range(players)} if not self.is_bout else {}
        self.ladder = deck[players:] if not self.is_bout else []
        self.ladder_step = 0
        self.table: list[list[str | None]] = []
        self.taker: int | None = None
        self.pile: list[str] = []
        self.done = 0

    def may_know(self, seat: int) -> set[str]:
        return self.public | self.private[seat]

    def advance(self, count: int) -> None:
        for event in self.game.events[self.done:count]:
            self._apply(event)
        self.done = max(self.done, count)

    def _apply(self, event: AnyEvent) -> None:
        if isinstance(event, BoutStarted):
            self.table, self.taker = [], None
        elif isinstance(event, ActionTaken):
            self._action(event.seat, event.action)
        elif isinstance(event, BoutEnded):
            on_table = {card for row in self.table for card in row if card is not None}
            assert set(event.cards) == on_table, f"bout end names {event.cards}, the table held {on_table}"
            assert event.outcome == ("taken" if self.taker is not None else "discarded")
            if self.taker is not None:
                self.known[self.taker] |= on_table
        elif isinstance(event, CardsDrawn):
            cards = self.stock[self.drawn:self.drawn + event.count]
            assert event.count >= 1 and len(cards) == event.count, "a draw beyond the stock"
            assert event.cards == cards, f"seat {event.seat} drew {event.cards}, the stock order gives {cards}"
            self.drawn += event.count
            self.private[event.seat] |= set(cards)
            if self.drawn == len(self.stock):  # the face-up trump card, drawn last, is known in his hand
                assert self.trump is not None
                self.known[event.seat].add(self.trump)
        elif isinstance(event, LadderStarted):
            piles = [self.piles[seat] for seat in range(self.players)]
            assert event.piles == piles
            self.public |= set(piles)
            for seat, card in self.piles.items():
                self.known[seat].add(card)
        elif isinstance(event, CardPlaced | CardKept):
            card = self.ladder[self.ladder_step]
            self.ladder_step += 1
            assert event.card == card, f"ladder step {self.ladder_step}: {event} but the stock gives {card}"
            if isinstance(event, CardPlaced):
                self.public.add(card)
                self.known[event.onto].add(card)
            else:
                self.private[event.seat].add(card)
        elif isinstance(event, PileTaken):
            card = self.pile.pop(0)
            assert event.card == card
            self.known[event.seat].add(card)
        elif isinstance(event, PileDiscarded):
            assert event.cards == self.pile
            self.pile = []

    def _action(self, seat: int, action: str) -> None:
        kind, *cards = action.split(" ")
        self.public |= set(cards)  # every action and its cards are public (RULES.md 9.1)
        self.known[seat] -= set(cards)
        if kind in ("attack", "throw"):
            self.table += [[card, None] for card in cards]
        elif kind == "beat":
            target, card = cards
            row = next(row for row in self.table if row[0] == target)
            assert row[1] is None
            row[1] = card
        elif kind == "transfer":
            if self.game.rules.transfer_beaten_pairs == "discard":
                self.table = [row for row in self.table if row[1] is None]
            self.table += [[card, None] for card in cards]
        elif kind == "take":
            self.taker = seat
        elif kind == "lead":
            assert not self.pile
            self.pile = list(cards)
        elif kind == "beat-top":
            self.pile += cards
        else:
            assert kind == "pass" and not cards, f"unknown action {action!r}"


# -- the audit ------------------------------------------------------------------------------------------


@dataclass
class AuditCounts:
    games: int = 0
    messages: int = 0
    bytes: int = 0
    forfeits: int = 0
    capped: int = 0

    def add(self, other: AuditCounts) -> None:
        for name in ("games", "messages", "bytes", "forfeits", "capped"):
            setattr(self, name, getattr(self, name) + getattr(other, name))


def cards_in(data: bytes) -> set[str]:
    """Every card token in a line (decoded once: the tokens are ASCII, and a line that is no UTF-8 fails)."""
    return set(CARD_TOKEN.findall(data.decode()))


def check_view(view: PlayerView, seat: int, model: PublicModel) -> None:
    assert view.seat == seat
    for other, known in enumerate(view.known):
        shown = set(known)
        assert shown <= model.public, f"seat {seat} is told {shown - model.public} are known in {other}'s hand"
        assert shown == model.known[other], (
            f"seat {seat}: known[{other}] = {sorted(shown)}, publicly known: {sorted(model.known[other])}")


def audit_game(game: Game, wire: Wire, secrets: Sequence[int]) -> AuditCounts:
    """Check every line ``wire`` recorded for ``game`` against what its seat may know at that moment."""
    model = PublicModel(game)
    deck = [CARD_NAMES[c] for c in game.deck]
    forbidden = [str(seed).encode() for seed in secrets]
    forbidden += [" ".join(deck).encode(), encoder.encode(deck)[1:-1]]
    bogus_cards = {word for text in wire.bogus for word in text.split() if word in CARD_NAMES}
    told: list[list[AnyEvent]] = [[] for _ in range(game.players)]
    kinds: list[list[str]] = [[] for _ in range(game.players)]
    counts = AuditCounts(games=1)
    for events_then, seat, data in wire.lines:
        counts.messages += 1
        counts.bytes += len(data)
        model.advance(events_then)
        for secret in forbidden:
            assert secret not in data, f"seat {seat} was sent the seed or the deck order: {data[:200]!r}"
        message = referee_decoder.decode(data)
        kinds[seat].append(type(message).__name__)
        allowed = model.may_know(seat)
        if isinstance(message, GameOver):
            allowed = allowed | bogus_cards  # the forfeit reason quotes the bot's own (public) words
        leaked = cards_in(data) - allowed
        assert not leaked, f"seat {seat} was sent {sorted(leaked)} it may not know, in {data[:300]!r}"
        if isinstance(message, GameStart | Request):
            check_view(message.view, seat, model)
        if isinstance(message, Request | GameOver):
            for event in message.events:
                if isinstance(event, CardsDrawn) and event.seat != seat:
                    assert event.cards is None and event.shown in ([], [model.trump]), event
                    assert not event.shown or model.drawn == len(model.stock)
                if isinstance(event, CardKept) and event.seat != seat:
                    assert event.card is None, event
            told[seat] += message.events
    model.advance(len(game.events))
    for seat in range(game.players):
        assert kinds[seat][0] == "GameStart" and kinds[seat][-1] == "GameOver"
        assert kinds[seat].count("GameStart") == kinds[seat].count("GameOver") == 1
        expected = [event_for_seat(event, seat) for event in game.events]
        assert told[seat] == expected, f"seat {seat} was not told every event exactly once, in order"
    assert game.result is not None
    counts.forfeits += game.result.end == "forfeit"
    counts.capped += game.result.end == "action_cap"
    return counts


def random_rules(variant: str, rng: random.Random) -> Rules:
    options: dict[str, object] = {"variant": variant, "deck": rng.choice((36, 52))}
    if variant != "fools_fool":
        options["first_bout_limit"] = rng.choice((None, None, 1, 2, 3, 4, 5, 6))
        options["throw_in_after_take"] = rng.random() < 0.7
        options["defender_draws_last"] = rng.random() < 0.3
        options["ask_forced_passes"] = rng.random() < 0.7
    if variant == "perevodnoy":
        options["transfer_after_beat"] = rng.random() < 0.7
        options["transfer_beaten_pairs"] = rng.choice(("stay", "discard"))
    if variant == "chase" and rng.random() < 0.5:
        options["allow_transfer"] = True
        options["transfer_beaten_pairs"] = rng.choice(("stay", "discard"))
    if rng.random() < 0.04:
        options["max_actions"] = rng.randrange(1, 80)  # games that end at the action cap
    return msgspec.convert(options, Rules)


def random_chooser(rng: random.Random, wire: Wire, forfeit_at: int | None) -> Chooser:
    """Random legal play; at decision ``forfeit_at`` a well-formed or malformed action that may be illegal."""
    decisions = [0]

    def choose(seat: int, request: Request) -> str:
        decisions[0] += 1
        if decisions[0] == forfeit_at:
            a, b = rng.sample(CARD_NAMES, 2)
            text = rng.choice(BOGUS_ACTIONS).format(a=a, b=b)
            if text not in request.legal:
                wire.bogus.append(text)
            return text
        return rng.choice(request.legal)

    return choose


def audit_series(variant: str, rng: random.Random) -> AuditCounts:
    """One independent game or a short series (RULES.md 7) of random play, every line audited."""
    rules = random_rules(variant, rng)
    players = rng.randint(2, 6)
    seed = rng.randrange(10**12, 10**18)  # 13-18 digits: no accidental match in a message
    games = 1 if rng.random() < 0.8 else rng.randint(2, 3)
    wire = Wire()
    counts = AuditCounts()
    dealer: int | None = None
    fool: int | None = None
    for index in range(games):
        game_seed = seed if games == 1 else derive_seed(seed, "game", index)
        game = new_game(rules, players, SeededRng(game_seed), dealer=dealer, fool=fool)
        wire.game, wire.lines, wire.bogus = game, [], []
        forfeit_at = rng.randint(1, 60) if rng.random() < 0.05 else None
        choose = random_chooser(rng, wire, forfeit_at)
        clients = [RecordingClient(f"bot{seat}", seat, wire, choose) for seat in range(players)]
        play_game(game, clients, f"audit{index + 1}", deal="audit")  # type: ignore[arg-type]
        counts.add(audit_game(game, wire, [seed, game_seed]))
        assert game.result is not None
        dealer, fool = next_in_series(game.result, game.dealer, players)
    return counts


TOTALS: dict[str, AuditCounts] = {}


def run_audit(variant: str, games: int, seed: int) -> tuple[AuditCounts, float]:
    rng = random.Random(f"{seed}:{variant}")
    counts = AuditCounts()
    started = time.perf_counter()
    while counts.games < games:
        counts.add(audit_series(variant, rng))
    return counts, time.perf_counter() - started


@pytest.mark.parametrize("variant", VARIANTS)
def test_no_seat_is_sent_what_it_may_not_know(variant: str) -> None:
    """RULES.md 9: thousands of random games per variant (2-6 players, 36 and 52 cards, random options,
    short series and forfeits), every byte sent to every seat checked against what it may know."""
    counts, seconds = run_audit(variant, GAMES_PER_VARIANT, seed=20260501)
    TOTALS[variant] = counts
    print(f"\naudit {variant}: {counts.games} games, {counts.messages} messages, {counts.bytes / 1e6:.1f} MB, "
          f"{counts.forfeits} forfeits, {counts.capped} action caps, {seconds:.1f} s")
    assert counts.games >= GAMES_PER_VARIANT
    assert counts.messages > counts.games * 3


def test_audit_totals_are_reported() -> None:
    """Run after the audits (file order): prints the totals; AUDIT_REPORT=path also writes them as JSON."""
    if len(TOTALS) < len(VARIANTS):
        pytest.skip("the per-variant audits did not all run in this session")
    total = AuditCounts()
    for counts in TOTALS.values():
        total.add(counts)
    print(f"\naudit total: {total.games} games, {total.messages} messages, {total.bytes / 1e6:.1f} MB")
    if path := os.environ.get("AUDIT_REPORT"):
        report = {variant: vars(counts) for variant, counts in TOTALS.items()} | {"total": vars(total)}
        with open(path, "w") as handle:
            json.dump(report, handle, indent=2)
    assert total.games >= 4 * GAMES_PER_VARIANT


# -- chosen and automatic passes (RULES.md 5b.2, 9.3) -----------------------------------------------------


def scripted(script: dict[int, list[str]]) -> Chooser:
    """Each seat plays its script, then its first legal action."""
    queues = {seat: list(actions) for seat, actions in script.items()}

    def choose(seat: int, request: Request) -> str:
        queue = queues.get(seat)
        if queue:
            action = queue.pop(0)
            assert action in request.legal, f"seat {seat}: {action!r} is not in {request.legal}"
            return action
        return request.legal[0]

    return choose


def play_deal(rules: Rules, deal: str, dealer: int, players: int, script: dict[int, list[str]]) -> tuple[Game, Wire]:
    game = new_game(rules, players, deck=parse_deal(deal, rules.deck), dealer=dealer)
    wire = Wire(game=game)
    choose = scripted(script)
    clients = [RecordingClient(f"bot{seat}", seat, wire, choose) for seat in range(players)]
    play_game(game, clients, "pass", deal="pass")  # type: ignore[arg-type]
    audit_game(game, wire, [])
    return game, wire


def swapped(deal: str, a: str, b: str) -> str:
    words = deal.split()
    i, j = words.index(a), words.index(b)
    words[i], words[j] = words[j], words[i]
    return " ".join(words)


@dataclass(frozen=True)
class PassCase:
    """Seat ``passer`` passes at the throw-in after ``script``; it holds ``throwable`` in the chosen version.

    The automatic version swaps ``throwable`` with ``inert`` (deep in the stock, drawn much later), so the
    two deals differ only in that one card of the passer's hand.
    """

    name: str
    variant: str
    hands: dict[int, str]
    script: dict[int, list[str]]
    passer: int
    throwable: str
    inert: str
    options: tuple[tuple[str, object], ...] = ()

    def deals(self) -> tuple[str, str]:
        words = [CARD_NAMES[c] for c in deal_deck(self.hands, trump="AS", dealer=len(self.hands) - 1)]
        words.remove(self.inert)
        chosen = " ".join([*words, self.inert])  # the stock's last card: drawn just before the trump card
        return chosen, swapped(chosen, self.throwable, self.inert)

    def rules(self, ask: bool) -> Rules:
        return msgspec.convert({"variant": self.variant, **dict(self.options), "ask_forced_passes": ask}, Rules)


# Seat 0 holds the lowest trump (6S) and attacks seat 1 with 7H; 9H beats it: ranks 7 and 9 are on the table.
PASS_CASES = [
    PassCase("primary attacker, after a beat", "podkidnoy",
             {0: "6S 7H 7D JC QC KC", 1: "9H 6C 6D 8C 8H TD", 2: "6H TC TS JD QD KD"},
             {0: ["attack 7H", "pass"], 1: ["beat 7H 9H"]}, passer=0, throwable="7D", inert="8D"),
    PassCase("second in priority, after a beat", "podkidnoy",
             {0: "6S 7H 8D JC QC KC", 1: "9H 6C 6D 8C 8H TD", 2: "6H 9C TS JD QD KD"},
             {0: ["attack 7H"], 1: ["beat 7H 9H"], 2: ["pass"]}, passer=2, throwable="9C", inert="TC"),
    PassCase("primary attacker, after a take", "podkidnoy",
             {0: "6S 7H 7D JC QC KC", 1: "9H 6C 6D 8C 8H TD", 2: "6H TC TS JD QD KD"},
             {0: ["attack 7H", "pass"], 1: ["take"]}, passer=0, throwable="7D", inert="8D"),
    PassCase("chase, second in priority, after a take", "chase",
             {0: "6S 7H 8D JC QC KC", 1: "9H 6C 6D 8C 8H TD", 2: "6H 7C TS JD QD KD"},
             {0: ["attack 7H"], 1: ["take"], 2: ["pass"]}, passer=2, throwable="7C", inert="TC"),
    PassCase("perevodnoy, after a beat, 4 players", "perevodnoy",
             {0: "6S 7H 7D JC QC KC", 1: "9H 6C 6D 8C 8H TD", 2: "6H TC TS JD QD KD", 3: "8S TH JS QS KS AC"},
             {0: ["attack 7H", "pass"], 1: ["beat 7H 9H"]}, passer=0, throwable="7D", inert="AD"),
]


def events_told(wire: Wire, seat: int) -> list[bytes]:
    """The encoded events ``seat`` received, in order, across all its messages."""
    told: list[bytes] = []
    for _, to, data in wire.lines:
        if to == seat:
            message = referee_decoder.decode(data)
            if isinstance(message, Request | GameOver):
                told += [encoder.encode(event) for event in message.events]
    return told


def requests_at(wire: Wire, seat: int, events_then: int) -> list[list[str]]:
    """The legal lists of the requests ``seat`` got when the engine had logged ``events_then`` events."""
    return [message.legal for n, to, data in wire.lines if to == seat and n == events_then
            and isinstance(message := referee_decoder.decode(data), Request)]


def pass_at(game: Game, seat: int) -> int:
    """The index in the engine's log of ``seat``'s first pass."""
    return next(i for i, event in enumerate(game.events)
                if isinstance(event, ActionTaken) and event.seat == seat and event.action == "pass")


def pass_pair(case: PassCase, ask: bool) -> tuple[tuple[Game, Wire], tuple[Game, Wire]]:
    """The chosen version (a throw-in in hand) and the forced one (pass alone: asked when ``ask``, else
    automatic). In the forced version the passer's scripted pass is dropped: asked, it plays its first
    legal action, which is pass."""
    chosen_deal, automatic_deal = case.deals()
    players = len(case.hands)
    chosen = play_deal(case.rules(ask), chosen_deal, players - 1, players, case.script)
    script = {seat: [a for a in actions if not (seat == case.passer and a == "pass")]
              for seat, actions in case.script.items()}
    automatic = play_deal(case.rules(ask), automatic_deal, players - 1, players, script)
    return chosen, automatic


def request_schedule(wire: Wire, until: int) -> list[tuple[int, int]]:
    """(engine events then, seat) of every request made while the engine had logged at most ``until`` events."""
    return [(n, to) for n, to, data in wire.lines
            if n <= until and isinstance(referee_decoder.decode(data), Request)]


def first_pass_index(events: list[bytes], seat: int) -> int:
    line = b'{"type":"action","seat":%d,"action":"pass"}' % seat
    return events.index(line)


ASK = pytest.mark.parametrize("ask", [True, False], ids=["ask_forced_passes", "automatic_passes"])


@ASK
@pytest.mark.parametrize("case", PASS_CASES, ids=lambda case: case.name)
def test_chosen_and_automatic_pass_are_sent_alike(case: PassCase, ask: bool) -> None:
    """RULES.md 5b.2, 9.3: a chosen pass and a forced one are the same bytes, at the same place of every
    other seat's event stream; everything before them is identical too. With ask_forced_passes the passer is
    asked in both versions, so every seat is asked at the same moments: the timing tells nothing either."""
    (chosen_game, chosen), (auto_game, automatic) = pass_pair(case, ask)
    at = pass_at(chosen_game, case.passer)
    assert at == pass_at(auto_game, case.passer)
    offered = requests_at(chosen, case.passer, at)
    assert len(offered) == 1 and f"throw {case.throwable}" in offered[0] and "pass" in offered[0], \
        "in the chosen version the passer was asked, with a throw-in available"
    if ask:
        assert requests_at(automatic, case.passer, at) == [["pass"]], "asked with pass alone"
        assert request_schedule(chosen, at) == request_schedule(automatic, at), "the same seats asked, in order"
    else:
        assert requests_at(automatic, case.passer, at) == [], "in the automatic version the passer was not asked"
        assert request_schedule(chosen, at) != request_schedule(automatic, at), "off, the asking shows the hand"
    line = b'{"type":"action","seat":%d,"action":"pass"}' % case.passer
    for seat in range(len(case.hands)):
        if seat == case.passer:
            continue
        told_chosen, told_auto = events_told(chosen, seat), events_told(automatic, seat)
        index = first_pass_index(told_chosen, case.passer)
        assert first_pass_index(told_auto, case.passer) == index
        assert told_chosen[:index + 1] == told_auto[:index + 1]
        assert told_chosen[index] == told_auto[index] == line
        raw = [data for _, to, data in chosen.lines + automatic.lines if to == seat]
        assert sum(line in data for data in raw) >= 2, "the pass goes on the wire in exactly this form"


def paired_messages(chosen: Wire, automatic: Wire, seat: int) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """``seat``'s messages in both versions, paired, as long as every event it was told so far is the same
    (after the pass the two games may part, when the card that differs is played or decides a choice)."""
    pairs = []
    told: tuple[list[object], list[object]] = ([], [])
    for a, b in zip(*([json.loads(data) for _, to, data in wire.lines if to == seat] for wire in (chosen, automatic)),
                    strict=False):
        told[0].extend(a.get("events", []))
        told[1].extend(b.get("events", []))
        if told[0] != told[1]:
            break
        pairs.append((a, b))
    return pairs


def tells_pass(message: dict[str, Any], passer: int) -> bool:
    return {"type": "action", "seat": passer, "action": "pass"} in message.get("events", [])


@ASK
def test_pass_choice_does_not_show_in_the_views(ask: bool) -> None:
    """RULES.md 5b.2 ("the difference would reveal a hand") and 9.3 ("nothing about hands leaks"): as long as
    the public story is the same, another seat's views are the same whether the pass was chosen or automatic.
    (The view's ``actions``, decisions so far, counts a chosen pass but not an automatic one.)"""
    differences = []
    for case in PASS_CASES:
        (_, chosen), (_, automatic) = pass_pair(case, ask)
        reached = False
        for seat in range(len(case.hands)):
            if seat == case.passer:
                continue
            pairs = paired_messages(chosen, automatic, seat)
            reached |= any(tells_pass(a, case.passer) for a, _ in pairs)
            for a, b in pairs:
                if "view" in a and a["view"] != b["view"]:
                    differences.append(f"{case.name}, seat {seat}: " + ", ".join(
                        f"{key} {a['view'][key]!r} (chosen) vs {b['view'][key]!r} (automatic)"
                        for key in a["view"] if a["view"][key] != b["view"][key]))
                    break
        assert reached, f"{case.name}: no seat was told of the pass while the two games agreed"
    assert differences == [], "views tell a chosen pass from an automatic one:\n" + "\n".join(differences)


@ASK
def test_pass_choice_does_not_show_in_request_ids(ask: bool) -> None:
    """As above, for the request ids: the gaps between the ids one seat is sent must not count the requests
    sent to other seats (ids from one global counter tell a chosen pass, which was asked, from an automatic one)."""
    differences = []
    for case in PASS_CASES:
        (_, chosen), (_, automatic) = pass_pair(case, ask)
        for seat in range(len(case.hands)):
            if seat == case.passer:
                continue
            pairs = paired_messages(chosen, automatic, seat)
            gaps = [[b["id"] - a["id"] for a, b in itertools.pairwise(m[k] for m in pairs if "id" in m[k])]
                    for k in (0, 1)]
            if gaps[0] != gaps[1]:
                differences.append(f"{case.name}, seat {seat}: id steps {gaps[0]} (chosen) vs {gaps[1]} (automatic)")
    assert differences == [], "request ids tell a chosen pass from an automatic one:\n" + "\n".join(differences)


def seats_asked_between(game: Game, wire: Wire, first: str, bout_end: int = 0) -> list[int]:
    """The seats asked after the action ``first`` was logged and up to the ``bout_end``-th bout end."""
    start = next(i for i, e in enumerate(game.events) if isinstance(e, ActionTaken) and e.action == first)
    end = [i for i, e in enumerate(game.events) if isinstance(e, BoutEnded)][bout_end]
    return [to for n, to, data in wire.lines if start < n <= end and isinstance(referee_decoder.decode(data), Request)]


@ASK
def test_when_nobody_holds_a_throw_in_every_seat_is_announced_passing_in_priority_order(ask: bool) -> None:
    """RULES.md 5b.2: nobody holds a 7 or an 8, but the table has room. Off: nobody is asked; on: each is
    asked, pass alone. Either way every non-defender with cards is announced as passing, from the primary
    attacker clockwise, skipping the defender; every seat receives those exact lines."""
    hands = {0: "6H TC TS JD QD KD", 1: "9H 6C 6D 9C 9D TD", 2: "6S 7H JC QC KC AC", 3: "8S 9S JS QS KS AD"}
    deal = " ".join(CARD_NAMES[c] for c in deal_deck(hands, trump="AS", dealer=3))
    game, wire = play_deal(Rules(ask_forced_passes=ask), deal, 3, 4, {2: ["attack 7H"], 3: ["beat 7H 8S"]})
    expected = [b'{"type":"action","seat":3,"action":"beat 7H 8S"}',
                *(b'{"type":"action","seat":%d,"action":"pass"}' % seat for seat in (2, 0, 1)),
                b'{"type":"bout_end","outcome":"discarded","defender":3,"cards":["7H","8S"]}']
    assert seats_asked_between(game, wire, "beat 7H 8S") == ([2, 0, 1] if ask else [])
    for seat in range(4):
        told = events_told(wire, seat)
        start = told.index(expected[0])
        assert told[start:start + len(expected)] == expected


def test_with_no_room_nobody_is_asked_though_every_seat_could_throw_in() -> None:
    """RULES.md 5b.2 (default ask_forced_passes): the defender beat with his last card, so the table has no
    room: nobody is asked, though every other seat holds a 7, and each is announced passing in priority order."""
    game = position({0: "7H 7C", 1: "9H", 2: "7D TC", 3: "7S QD"}, trump="AS", attacker=0)
    wire = Wire(game=game)
    choose = scripted({0: ["attack 7H"], 1: ["beat 7H 9H"]})
    clients = [RecordingClient(f"bot{seat}", seat, wire, choose) for seat in range(4)]
    play_game(game, clients, "room", deal="room")  # type: ignore[arg-type]
    assert seats_asked_between(game, wire, "beat 7H 9H") == []
    expected = [b'{"type":"action","seat":1,"action":"beat 7H 9H"}',
                *(b'{"type":"action","seat":%d,"action":"pass"}' % seat for seat in (0, 2, 3)),
                b'{"type":"bout_end","outcome":"discarded","defender":1,"cards":["7H","9H"]}']
    for seat in range(4):
        told = events_told(wire, seat)
        start = told.index(expected[0])
        assert told[start:start + len(expected)] == expected


def test_a_seat_without_cards_is_not_announced_passing() -> None:
    """RULES.md 5b.2: "every non-defender with cards": the attacker who led his last card does not pass."""
    game = position({0: "7H", 1: "9H 6C 6D", 2: "TC TS", 3: "JD QD"}, trump="AS", attacker=0)
    wire = Wire(game=game)
    choose = scripted({0: ["attack 7H"], 1: ["beat 7H 9H"]})
    clients = [RecordingClient(f"bot{seat}", seat, wire, choose) for seat in range(4)]
    play_game(game, clients, "out", deal="out")  # type: ignore[arg-type]
    for seat in range(4):
        told = events_told(wire, seat)
        start = told.index(b'{"type":"action","seat":1,"action":"beat 7H 9H"}')
        assert told[start + 1:start + 4] == [b'{"type":"action","seat":2,"action":"pass"}',
                                             b'{"type":"action","seat":3,"action":"pass"}',
                                             b'{"type":"bout_end","outcome":"discarded","defender":1,'
                                             b'"cards":["7H","9H"]}']


def test_cards_drawn_by_others_never_reach_a_seat() -> None:
    """RULES.md 9.2 on a fixed deal: seat 1 takes, seat 0 refills; no message to seat 1 names a card seat 0
    drew until seat 0 plays it, though seat 1 is told that seat 0 drew."""
    hands = {0: "6S 7H 7D JC QC KC", 1: "9H 6C 6D 8C 8H TD"}
    deal = " ".join(CARD_NAMES[c] for c in deal_deck(hands, trump="AS", dealer=1))
    game, wire = play_deal(Rules(), deal, 1, 2, {0: ["attack 7H", "pass"], 1: ["take"]})
    first_draw = next(e for e in game.events if isinstance(e, CardsDrawn) and e.seat == 0)
    assert first_draw.cards == deal.split()[13:14], "seat 0 drew the stock's top card"
    checked = 0
    for events_then, to, data in wire.lines:
        if to != 1:
            continue
        so_far = game.events[:events_then]
        played = {w for e in so_far if isinstance(e, ActionTaken) for w in e.action.split()[1:]}
        drawn = {c for e in so_far if isinstance(e, CardsDrawn) and e.seat == 0 for c in e.cards or []}
        hidden = drawn - played - {"AS"}
        assert not hidden & cards_in(data), f"seat 1 was sent {hidden & cards_in(data)}, drawn by seat 0"
        checked += bool(hidden)
    assert checked >= 3
    told_one = b"".join(data for _, to, data in wire.lines if to == 1)
    assert b'{"type":"draw","seat":0,"count":1,"cards":null,"shown":[]}' in told_one
