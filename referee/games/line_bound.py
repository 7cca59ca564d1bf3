"""The longest line the referee can write to a bot, derived from the rules (PROTOCOL.md 2, "Length").

Every line is one message of :mod:`protocol.messages`, encoded by ``protocol.messages.encoder``. Its length
is a fixed part (field names, ints, the organizer's strings) plus three variable parts, each bounded here by
encoding its longest possible instance with that same encoder:

- **events** (``request``, ``game_over``). A seat is sent each event of a game once, so no line carries more
  than all the events of one game (redaction only shortens them: ``null`` for drawn or kept cards). A game
  has at most ``max_actions`` decisions (D), and the engine appends per decision one ``action`` event (at
  most ``transfer`` with four cards), and in the bout games at most ``players - 1`` automatic ``pass`` events
  (a throw-in round starts only after a decision and announces each non-defender at most once). A bout ends
  only after two decisions at least (the attack and the defender's answer), so there are at most D // 2
  ``bout_end`` events (12 table cards at most) and 1 + D // 2 ``bout`` events; every ``draw`` takes one
  card or more from the stock (``deck - 6 * players`` cards), and every ``out`` names one seat or more.
  Fool's Fool replays its ladder (one ``place`` or ``keep`` event per card dealt after the first
  ``players``), then per decision one ``action``, at most one ``pile_discard`` (``players`` cards) and at
  most ``players - 1`` ``pile_take`` (the pile holds fewer cards than its size N <= ``players``). Which
  seat receives them all: one that went out early in a long game, since a seat with no cards is never
  asked again, so everything after is queued for its ``game_over``.
- **view** (``game``, ``request``). Every field at its longest (``null`` where that is longer than a seat
  number, chase counts up to 2 D since one lay scores at most 2), six table pairs, and every card of the
  deck named at most twice: in the seat's hand and its known cards, or once in another seat's known cards,
  the table, the pile or the discard (5 bytes a card: ``"2C",``).
- **legal** (``request``). The most actions of one phase: every subset of every rank's four cards
  (``attack``, or ``throw`` plus ``pass``); or six unbeaten cards times the 2 * ranks - 1 cards that can
  beat one, the transfers of one rank and ``take``; in Fool's Fool one ``lead`` or ``beat-top`` per card.

The offender of a forfeit also gets its own verdict's ``reason`` in ``game_over``. A malformed action is
quoted back in it twice (``unknown action 'X' in 'X'``), with ``repr``: the longest a bot may send (its
line of at most 64 KiB, less the 36 bytes of ``{"type":"action","id":0,"action":""}``), every byte a DEL
(0x7F, raw in JSON) that ``repr`` writes ``\\x7f`` and the encoder ``\\\\x7f``: 5 bytes each, twice. Every
other reason quotes less: a bad card word and its action (a part and the whole), a well-formed action (four
cards at most) once, a protocol error 80 characters and at most one unescaped field or type name, a crash
200 characters of stderr.

The fixed part assumes what the game cannot fix: the ints the referee counts or the organizer sets (request
ids, ``time_ms``, ``seed``, ``grace_ms``) are below 2**63 (19 digits); the game id encodes to at most
:data:`GAME_ID_BYTES` bytes and each bot name to at most :data:`NAME_BYTES` (a longer one adds its extra
bytes, in the game id and, for names, in the ``game`` line).

Under the default ``max_actions`` (5000), at 6 players, the events alone may reach 1.79 MB (358 bytes a
decision) and the offender's reason 0.66 MB: :data:`MAX_REFEREE_LINE` is 2.4 MB. The requests' bound is the
same events and far from tight: a seat holding cards is asked at least once a lap of bouts, so a request
carries about a lap's events (measured: under 6 KB, ``bench/bench_line_lengths.py``); no tighter bound is
derived. Measured ``game_over`` lines reach about 100 KB, already past a Go ``bufio.Scanner``'s 64 KiB.

A cap, proposed and not implemented: (1) quote at most 80 characters of a bot's text in a reason, as
``session._quote`` does, which keeps the offender's reason under 1 KB; (2) write a queue of more than 256
events as ``events`` lines of 256 (a new message type needing no reply, before the request or ``game_over``
that would have carried them; 256 events encode to at most 32 KB). Every line would then stay under 64 KiB,
whatever ``max_actions``. But a bot that skips unknown message types (PROTOCOL.md 2) would miss those
events without noticing, so (2) wants a protocol version.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from itertools import combinations
from typing import Any, Final

from protocol.actions import (
    ATTACK,
    BEAT,
    BEAT_TOP,
    LEAD,
    PASS,
    TAKE,
    THROW,
    TRANSFER,
    Action,
    InvalidActionError,
    action_text,
    parse_action,
)
from protocol.events import (
    ActionTaken,
    BoutEnded,
    BoutStarted,
    CardKept,
    CardPlaced,
    CardsDrawn,
    LadderEnded,
    LadderStarted,
    PileDiscarded,
    PileTaken,
    PlayersOut,
)
from protocol.messages import PROTOCOL_VERSION, GameOver, GameStart, Hello, Reply, Request, Shutdown, encoder
from protocol.rules import BOUT_CARD_LIMIT, HAND_SIZE, MAX_PLAYERS, MIN_PLAYERS, VARIANTS, Rules
from protocol.views import GameResult, PlayerView
from referee import __version__
from referee.engine import VERDICTS

#: The longest line a bot may send (``BotProcess``'s ``max_line``; PROTOCOL.md 2).
BOT_LINE_CAP: Final = 64 * 1024
#: Assumed: a bot name (the organizer's, PROTOCOL.md 4.3) encodes to at most this many bytes.
NAME_BYTES: Final = 64
#: Assumed: a game id encodes to at most this many bytes (a tournament's holds its table's names).
GAME_ID_BYTES: Final = 512
#: The longest line the referee can write, under ``max_actions`` 5000, any variant, deck and table size:
#: :func:`max_referee_line`, which the tests hold to this figure and to PROTOCOL.md section 2.
MAX_REFEREE_LINE: Final = 2_444_694

_BIG_INT: Final = 2**63 - 1  # 19 digits: request ids, time_ms, seed, grace_ms
_CARD: Final = "2C"  # every card's name is two ASCII characters
_CARD_BYTES: Final = 5  # a card in a JSON list: "2C" and its comma
_QUOTE_BYTES: Final = 5  # a byte of a bot's text, quoted with repr() in a reason, then encoded: \x7f -> \\x7f
_MALFORMED: Final = "malformed action: "  # referee.games.match: how a malformed action's reason begins


@dataclass(frozen=True)
class LineBounds:
    """The longest line of each message type the referee can write to a seat, in bytes, without the newline."""

    hello: int
    game: int
    request: int
    game_over: int  # to every seat that did not forfeit: its result's reason is null
    game_over_offender: int  # to the seat that forfeited, whose reason may quote its own line back twice
    shutdown: int

    @property
    def longest(self) -> int:
        return max(self.hello, self.game, self.request, self.game_over, self.game_over_offender, self.shutdown)

    def of_type(self, kind: str) -> int:
        """The bound of message type ``kind`` (``game_over``: the offender's, the longer)."""
        return int(getattr(self, "game_over_offender" if kind == "game_over" else kind))

    @classmethod
    def types(cls) -> list[str]:
        return [field.name for field in fields(cls)]


def line_bounds(rules: Rules, players: int, *, game_id_bytes: int = GAME_ID_BYTES, name_bytes: int = NAME_BYTES,
                bot_line: int = BOT_LINE_CAP) -> LineBounds:
    """The longest line of each type in a game of ``rules`` at ``players`` seats (the derivation: this
    module's docstring)."""
    seat = players - 1
    game_id = "g" * game_id_bytes
    view, view_cards = _view_skeleton(rules, players), 2 * rules.deck * _CARD_BYTES
    events = events_bound(rules, players) - 2  # without the brackets of the empty list it replaces
    chases = [2 * rules.max_actions] * players
    result = GameResult(order=[[s] for s in range(players)], fools=list(range(players)), end="action_cap",
                        chases=chases, forfeit_seat=None, verdict=max(VERDICTS, key=len), reason=None)
    game_over = _size(GameOver(game=game_id, result=result, events=[])) + events
    return LineBounds(
        hello=_size(Hello(protocol=PROTOCOL_VERSION, referee=f"durak-referee {__version__}", time_ms=_BIG_INT)),
        game=_size(GameStart(game=game_id, seat=seat, players=players, names=["n" * name_bytes] * players,
                             rules=rules, dealer=seat, view=view, seed=_BIG_INT)) + view_cards,
        request=_size(Request(id=_BIG_INT, game=game_id, view=view, legal=[], time_ms=_BIG_INT, events=[]))
        + view_cards + legal_bound(rules) - 2 + events,
        game_over=game_over,
        game_over_offender=game_over - len("null") + reason_bound(bot_line),
        shutdown=_size(Shutdown(grace_ms=_BIG_INT)),
    )


def max_referee_line(max_actions: int = 5000) -> int:
    """The longest line over every variant, both decks and 2-6 players, with ``max_actions``."""
    return max(line_bounds(Rules(variant=variant, deck=deck, max_actions=max_actions), players).longest
               for variant in VARIANTS for deck in (36, 52) for players in range(MIN_PLAYERS, MAX_PLAYERS + 1))


def events_bound(rules: Rules, players: int) -> int:
    """Bytes of the longest ``events`` list, brackets included: every event one game can have."""
    seat, decisions, deck = players - 1, rules.max_actions, rules.deck
    outs = players * (_size(PlayersOut(seats=[seat], place=players)) + 1)
    if rules.is_bout_game:
        action = _size(ActionTaken(seat=seat, action=_longest_action(rules))) + 1
        passes = (players - 1) * (_size(ActionTaken(seat=seat, action=PASS)) + 1)
        bout = _size(BoutStarted(attacker=seat, defender=seat)) + 1
        bout_end = _size(BoutEnded(outcome="discarded", defender=seat, cards=[_CARD] * 2 * BOUT_CARD_LIMIT)) + 1
        stock = max(0, deck - HAND_SIZE * players)
        draws = stock * (_size(CardsDrawn(seat=seat, count=HAND_SIZE, cards=[_CARD], shown=[_CARD])) + 1)
        body = decisions * (action + passes) + decisions // 2 * bout_end + (1 + decisions // 2) * bout + draws
    else:
        ladder = _size(LadderStarted(piles=[_CARD] * players, starter=seat)) + 1
        step = max(_size(CardPlaced(seat=seat, card=_CARD, onto=seat)), _size(CardKept(seat=seat, card=_CARD))) + 1
        ladder_end = _size(LadderEnded(hand_sizes=[deck] * players)) + 1
        action = _size(ActionTaken(seat=seat, action=_longest_action(rules))) + 1
        discard = _size(PileDiscarded(cards=[_CARD] * players)) + 1
        takes = (players - 1) * (_size(PileTaken(seat=seat, card=_CARD)) + 1)
        body = ladder + (deck - players) * step + ladder_end + decisions * (action + discard + takes)
    return 2 + body + outs


def legal_bound(rules: Rules) -> int:
    """Bytes of the longest ``legal`` list of a request."""
    ranks = rules.deck // 4
    if not rules.is_bout_game:
        return max(_size([action_text(Action(kind, (0,)))] * rules.deck) for kind in (LEAD, BEAT_TOP))
    lead = [action_text(Action(ATTACK, cards)) for rank in range(ranks) for cards in _rank_subsets(rank)]
    throw = [action_text(Action(THROW, cards)) for rank in range(ranks) for cards in _rank_subsets(rank)] + [PASS]
    beats = [action_text(Action(BEAT, (0, 4)))] * (BOUT_CARD_LIMIT * (2 * ranks - 1))
    defend = beats + [action_text(Action(TRANSFER, cards)) for cards in _rank_subsets(0)] + [TAKE]
    return max(_size(lead), _size(throw), _size(defend))


def reason_bound(bot_line: int = BOT_LINE_CAP) -> int:
    """Bytes of the longest encoded ``reason`` (with its quotes): a malformed action of a whole bot line,
    quoted twice at 5 bytes a byte."""
    text = bot_line - _size(Reply(id=0, action=""))
    try:
        parse_action("")
    except InvalidActionError as exc:
        wording = f"{_MALFORMED}{exc}"  # "unknown action '' in '': expected one of ...": the quotes are empty
    return _size(wording) + 2 * _QUOTE_BYTES * text


def _view_skeleton(rules: Rules, players: int) -> PlayerView:
    """A view with every field at its longest but no card in a list (they add ``2 * deck`` cards at most)."""
    return PlayerView(
        seat=players - 1, phase="defend", to_move=None, hand=[], hand_sizes=[rules.deck] * players,
        known=[[] for _ in range(players)], trump_suit="D", trump=_CARD, stock=rules.deck,
        table=[[_CARD, _CARD]] * BOUT_CARD_LIMIT, attacker=None, defender=None, taking=False, bout_limit=None,
        pile=[], pile_limit=None, discard=[], out=[[s] for s in range(players)],
        chases=[2 * rules.max_actions] * players)


def _longest_action(rules: Rules) -> str:
    if not rules.is_bout_game:
        return max((action_text(Action(kind, (0,))) for kind in (LEAD, BEAT_TOP)), key=len)
    return max((action_text(Action(kind, cards)) for kind, cards in
                [(ATTACK, (0, 1, 2, 3)), (THROW, (0, 1, 2, 3)), (TRANSFER, (0, 1, 2, 3)), (BEAT, (0, 4)),
                 (TAKE, ()), (PASS, ())]), key=len)


def _rank_subsets(rank: int) -> list[tuple[int, ...]]:
    """Every non-empty set of the four cards of rank index ``rank``, in card order."""
    cards = [rank * 4 + suit for suit in range(4)]
    return [subset for size in range(1, 5) for subset in combinations(cards, size)]


def _size(value: Any) -> int:
    return len(encoder.encode(value))
