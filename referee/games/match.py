"""Drives the engine with bot clients: one game, or a series at fixed seats.

The order within a move (fastchess ``playMove``): game over? ask the seat to move with its
own view and the legal actions, time it, validate, apply. Any bot failure becomes a forfeit
with a verdict (RULES.md 6.2); nothing a bot does escapes a game. A seat is a bot or a person
(:class:`referee.games.seat.Seat`); a person may also resign between moves.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import msgspec

from protocol.actions import Action, InvalidActionError, parse_action
from protocol.cards import CARD_NAMES
from protocol.events import AnyEvent, event_for_seat
from protocol.messages import GameOver, GameStart, Request
from protocol.records import SeatTimes, Verdict
from protocol.rules import Rules
from referee.bots.errors import BotCrashed, BotError, BotIllegalAction, BotTimeout
from referee.engine import Game, SeededRng, new_game, next_in_series
from referee.engine.rng import derive_seed
from referee.games.seat import Seat
from referee.results.record import GameRecord
from referee.results.reproduce import bot_seed_for, previous_fool

__all__ = ["ActionHook", "Series", "bot_seed_for", "play_game", "play_series"]

ActionHook = Callable[[Game, Sequence[AnyEvent]], None]


def play_game(game: Game, clients: Sequence[Seat], game_id: str, deal: str,
              on_events: ActionHook | None = None, bot_seeds: Sequence[int] | None = None) -> GameRecord:
    """Play ``game`` to its end with ``clients[seat]`` at each seat.

    Args:
        deal: the cluster key of this deal (shared by its seat rotations).
        on_events: called with the new events after each step (progress, ``--verbose``).
        bot_seeds: per seat, the seed its ``game`` message gives the bot for its own randomness (default 0).
    """
    names = [client.name for client in clients]
    verdicts: list[Verdict] = []
    for seat, client in enumerate(clients):
        client.new_game()
        client.send_later(GameStart(game=game_id, seat=seat, players=game.players, names=names,
                                    rules=game.rules, dealer=game.dealer, view=game.view(seat),
                                    seed=bot_seeds[seat] if bot_seeds is not None else 0))
    for seat, client in enumerate(clients):
        try:
            client.start()
        except BotError as exc:
            _forfeit(game, seat, client, exc, verdicts)
            break
    delivered = [0] * game.players
    reported = 0
    if on_events is not None:  # the deal, before any move
        on_events(game, game.events)
        reported = len(game.events)
    while game.result is None:
        if _resigned(game, clients, verdicts):
            break
        mover = game.to_move
        assert mover is not None
        client = clients[mover]
        try:
            action = _ask(game, client, game_id, _take_events(game, mover, delivered))
        except BotError as exc:
            _forfeit(game, mover, client, exc, verdicts)
            break
        game.apply_unchecked(action)
        if on_events is not None:
            on_events(game, game.events[reported:])
            reported = len(game.events)
    if on_events is not None and reported < len(game.events):
        on_events(game, game.events[reported:])
    result = game.result
    assert result is not None
    # The reason may quote the offender's stderr or name its cards: only the offender is told it.
    others_result = msgspec.structs.replace(result, reason=None)
    for seat, client in enumerate(clients):
        client.mark_stderr(len(game.events))
        offender = seat == result.forfeit_seat
        client.game_over(GameOver(game=game_id, result=result if offender else others_result,
                                  events=_take_events(game, seat, delivered)), offender=offender)
    for verdict in verdicts:  # told why in its game over; restarted for its next game
        clients[verdict.seat].stop(grace=0.0)
    return GameRecord(
        game=game_id, deal=deal, names=names, rules=game.rules, dealer=game.dealer,
        deck=[CARD_NAMES[c] for c in game.deck], result=result, actions=game.actions, verdicts=verdicts,
        times=[_seat_times(client.move_times) for client in clients], events=list(game.events),
        strikes=[len(client.strikes) for client in clients],
        stderr=[client.take_stderr() for client in clients],
        move_us=[[round(seconds * 1e6) for seconds in client.move_times] for client in clients],
        bot_seeds=list(bot_seeds) if bot_seeds is not None else [0] * game.players,
    )


def _ask(game: Game, client: Seat, game_id: str, events: list[AnyEvent]) -> Action:
    seat = game.to_move
    assert seat is not None
    legal = game.legal_actions()
    by_text = {str(action): action for action in legal}
    request = Request(id=client.next_request_id(), game=game_id, view=game.view(seat), legal=list(by_text),
                      time_ms=int(client.time_for_move() * 1000), events=events)
    text = client.ask(request, stderr_mark=len(game.events))
    action = by_text.get(text)
    if action is None:
        raise BotIllegalAction(_why_illegal(game, text))
    return action


def _why_illegal(game: Game, text: str) -> str:
    try:
        action = parse_action(text)
    except InvalidActionError as exc:
        return f"malformed action: {exc}"
    return f"illegal action {text!r}: {game.why_illegal(action)}"


def _resigned(game: Game, clients: Sequence[Seat], verdicts: list[Verdict]) -> bool:
    """Forfeit the first seat that resigned since the last move (a person's Ctrl-C while the bots think)."""
    for seat, client in enumerate(clients):
        reason = client.resignation()
        if reason is not None:
            verdicts.append(Verdict(seat=seat, bot=client.name, kind="resigned", reason=reason))
            game.forfeit(seat, "resigned", reason)
            return True
    return False


def _take_events(game: Game, seat: int, delivered: list[int]) -> list[AnyEvent]:
    """The events ``seat`` has not been sent yet, as that seat may see them."""
    fresh = game.events[delivered[seat]:]
    delivered[seat] = len(game.events)
    return [event_for_seat(event, seat) for event in fresh]


def _forfeit(game: Game, seat: int, client: Seat, exc: BotError, verdicts: list[Verdict]) -> None:
    verdicts.append(Verdict(seat=seat, bot=client.name, kind=exc.verdict, reason=exc.reason))
    game.forfeit(seat, exc.verdict, exc.reason)
    if isinstance(exc, BotTimeout | BotCrashed):
        client.stop(grace=0.0)  # killed now: a hung bot is never written to or waited for again


def _seat_times(times: list[float]) -> SeatTimes | None:
    if not times:
        return None
    return SeatTimes(moves=len(times), median_ms=round(statistics.median(times) * 1000, 3),
                     max_ms=round(max(times) * 1000, 3))


@dataclass(frozen=True)
class Series:
    """``games`` games at fixed seats under ``rules``; each next dealer and first move follow the last fool.

    Game i deals from ``derive_seed(seed, "game", i)`` (RULES.md 8), or from ``deck`` (one game), with
    ``dealer`` (None: drawn) dealing the first, and is called ``f"{series_id}{i + 1}"``. Its deal key (the
    rating cluster) is ``deal_key``, or ``f"{seed}:{i}"`` without one. The bot at seat s is given
    :func:`bot_seed_for` ``(bot_seed, i, s)``, with ``bot_seed`` by default ``derive_seed(seed, "bots")``.
    ``leader`` and ``bot_seeds`` replay one game (``durak play --leader``, ``--bot-seeds``): the seat that
    moves first in the first game (None: as the deal says) and the first game's seeds, one per seat.
    """

    rules: Rules
    games: int
    seed: int
    deck: Sequence[int] | None = None
    dealer: int | None = None
    series_id: str = "g"
    deal_key: str | None = None
    bot_seed: int | None = None
    leader: int | None = None
    bot_seeds: Sequence[int] | None = None


def play_series(series: Series, clients: Sequence[Seat], *, on_events: ActionHook | None = None,
                on_game: Callable[[GameRecord], None] | None = None) -> list[GameRecord]:
    """Play ``series`` between ``clients`` (seat order); ``on_events`` sees each step's events, ``on_game``
    each finished game's record."""
    records: list[GameRecord] = []
    players = len(clients)
    fool = None if series.leader is None else previous_fool(series.rules, series.leader, players)
    seed, dealer = series.seed, series.dealer
    bots = series.bot_seed if series.bot_seed is not None else derive_seed(seed, "bots")
    for index in range(series.games):
        rng = SeededRng(derive_seed(seed, "game", index))
        game = new_game(series.rules, players, rng, deck=series.deck, dealer=dealer, fool=fool)
        seeds = series.bot_seeds if index == 0 and series.bot_seeds is not None else \
            [bot_seed_for(bots, index, seat) for seat in range(players)]
        record = play_game(game, clients, f"{series.series_id}{index + 1}",
                           deal=series.deal_key or f"{seed}:{index}", on_events=on_events, bot_seeds=seeds)
        records.append(record)
        if on_game is not None:
            on_game(record)
        dealer, fool = next_in_series(record.result, game.dealer, players)
    return records
