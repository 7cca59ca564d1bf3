"""The human seat below the terminal: same messages as a bot, the human clock enforced, resigning.

Every game here is between scripted persons in-process (no bot processes), on a fake monotonic clock."""

from __future__ import annotations

import random

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from protocol.events import ActionTaken, event_for_seat
from protocol.messages import GameOver, GameStart, Request
from protocol.rules import VARIANTS, rules_from_options
from referee.engine import Game, SeededRng, new_game
from referee.games.human import ClockReading, HumanClock, HumanSeat, SeatMessage
from referee.games.match import play_game


class FakeClock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


class Scripted:
    """A person who thinks ``think[i]`` seconds (default 1) on decision i and picks at random (or ``answers``)."""

    def __init__(self, clock: FakeClock, seed: int = 0, think: list[float] | None = None,
                 answers: list[str] | None = None, resign_at: int | None = None) -> None:
        self.clock = clock
        self.rng = random.Random(seed)
        self.think = think or []
        self.answers = answers or []
        self.resign_at = resign_at
        self.shown: list[tuple[SeatMessage, ClockReading]] = []
        self.chosen = 0
        self.asked = 0
        self.gave_up: str | None = None

    def show(self, message: SeatMessage, clock: ClockReading) -> None:
        self.shown.append((message, clock))

    def choose(self, request: Request, deadline: float) -> str | None:
        self.asked += 1
        if self.resign_at is not None and self.chosen == self.resign_at:
            self.gave_up = "Ctrl-C"
            return None
        self.clock.t += self.think[self.chosen] if self.chosen < len(self.think) else 1.0
        if self.answers:
            return self.answers.pop(0)
        self.chosen += 1
        return self.rng.choice(request.legal)

    def resigned(self) -> str | None:
        return self.gave_up


def _game(variant: str = "podkidnoy", players: int = 2, seed: int = 3) -> Game:
    return new_game(rules_from_options(variant, {}), players, SeededRng(seed))


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("players", [2, 4])
def test_a_person_is_shown_exactly_what_a_bot_in_the_seat_would_be(variant: str, players: int) -> None:
    clock = FakeClock()
    persons = [Scripted(clock, seed=s) for s in range(players)]
    seats = [HumanSeat(f"p{s}", persons[s], HumanClock(60, 300), now=clock) for s in range(players)]
    game = _game(variant, players)
    record = play_game(game, seats, "g1", "d")
    assert record.result.end in {"fool", "draw", "action_cap"}
    for seat, person in enumerate(persons):
        kinds = [type(m) for m, _ in person.shown]
        assert kinds[0] is GameStart and kinds[-1] is GameOver and kinds.count(Request) == person.asked
        start = person.shown[0][0]
        assert isinstance(start, GameStart) and start.seat == seat
        assert start.view == _game(variant, players).view(seat)  # the deal as the seat sees it, nothing more
        told = [event for message, _ in person.shown if isinstance(message, Request | GameOver)
                for event in message.events]
        assert told == [event_for_seat(event, seat) for event in game.events]  # the match's redaction
        for message, _ in person.shown:
            if isinstance(message, Request):
                assert message.view.seat == seat


def test_a_wrong_answer_is_asked_again_and_the_legal_one_played() -> None:
    clock = FakeClock()
    game = _game()
    mover = game.to_move
    assert mover is not None
    first = str(game.legal_actions()[0])
    persons = [Scripted(clock, seed=s) for s in range(2)]
    persons[mover].answers = ["nonsense", "take", first]
    seats = [HumanSeat(f"p{s}", persons[s], now=clock) for s in range(2)]
    record = play_game(game, seats, "g1", "d")
    assert persons[mover].asked >= 3 and record.result.end != "forfeit"
    played = next(e for e in game.events if isinstance(e, ActionTaken))
    assert (played.seat, played.action) == (mover, first)


def test_a_person_past_move_time_and_bank_times_out_like_a_bot() -> None:
    clock = FakeClock()
    game = _game()
    mover = game.to_move
    assert mover is not None
    persons = [Scripted(clock, seed=s) for s in range(2)]
    persons[mover].think = [1.5, 2.2]  # 0.5 s of the bank, then 1.2 s over the second move's 1 + 0.5 - 0.5
    seats = [HumanSeat(f"p{s}", persons[s], HumanClock(1.0, 1.0), now=clock) for s in range(2)]
    record = play_game(game, seats, "g1", "d")
    assert record.result.forfeit_seat == mover and record.result.verdict == "timeout"
    (verdict,) = record.verdicts
    assert verdict.kind == "timeout" and "move 2 had 1 s + 0.5 s of bank" in verdict.reason
    requests = [reading for message, reading in persons[mover].shown if isinstance(message, Request)]
    assert [r.bank for r in requests] == [1.0, 0.5]  # the person is shown the bank left
    assert requests[1].deadline is not None and requests[1].left(clock.t) == 0.0


def test_within_the_bank_a_slow_person_plays_on() -> None:
    clock = FakeClock()
    game = _game()
    mover = game.to_move
    assert mover is not None
    persons = [Scripted(clock, seed=s) for s in range(2)]
    persons[mover].think = [1.9]  # 0.9 of a 1 s bank
    seats = [HumanSeat(f"p{s}", persons[s], HumanClock(1.0, 1.0), now=clock) for s in range(2)]
    record = play_game(game, seats, "g1", "d")
    assert record.result.end != "forfeit"


def test_resigning_on_ones_turn_forfeits_with_its_own_verdict() -> None:
    clock = FakeClock()
    game = _game()
    persons = [Scripted(clock, seed=s, resign_at=2) for s in range(2)]
    persons[1].resign_at = None
    seats = [HumanSeat(f"p{s}", persons[s], now=clock) for s in range(2)]
    record = play_game(game, seats, "g1", "d")
    assert record.result.forfeit_seat == 0 and record.result.verdict == "resigned"
    assert [(v.seat, v.kind, v.reason) for v in record.verdicts] == [(0, "resigned", "Ctrl-C")]
    # the other seat is told the verdict, never the reason; the resigner its own
    over = {s: next(m for m, _ in persons[s].shown if isinstance(m, GameOver)) for s in range(2)}
    assert over[1].result.verdict == "resigned" and over[1].result.reason is None
    assert over[0].result.reason == "Ctrl-C"


def test_resigning_while_others_move_forfeits_before_the_next_move() -> None:
    clock = FakeClock()
    game = _game(players=3)
    persons = [Scripted(clock, seed=s) for s in range(3)]
    seats = [HumanSeat(f"p{s}", persons[s], now=clock) for s in range(3)]

    class Quitter(Scripted):  # seat 2 gives up while seat 1 is thinking
        def choose(self, request: Request, deadline: float) -> str | None:
            if self.chosen == 1:
                persons[2].gave_up = "Ctrl-C"
            return super().choose(request, deadline)

    persons[1] = Quitter(clock, seed=1)
    seats[1] = HumanSeat("p1", persons[1], now=clock)
    record = play_game(game, seats, "g1", "d")
    assert record.result.forfeit_seat == 2 and record.result.verdict == "resigned"
    assert persons[2].asked <= 2


def test_a_bad_clock_is_refused() -> None:
    with pytest.raises(ValueError, match="positive"):
        HumanClock(0, 10)
    with pytest.raises(ValueError, match="negative"):
        HumanClock(1, -1)


@settings(max_examples=60, deadline=None)
@given(move=st.floats(0.1, 5), bank=st.floats(0, 10), thinks=st.lists(st.floats(0, 8), min_size=1, max_size=12))
def test_the_clock_spends_only_overruns_and_times_out_exactly_past_move_time_plus_bank(
        move: float, bank: float, thinks: list[float]) -> None:
    """Property: each move may take move + bank left; the bank pays only what a move takes over the move time."""
    clock = FakeClock()
    person = Scripted(clock, think=thinks)
    seat = HumanSeat("p", person, HumanClock(move, bank), now=clock)
    seat.new_game()
    left = bank
    game = _game()
    legal = [str(a) for a in game.legal_actions()]
    view = game.view(game.to_move or 0)
    for index, think in enumerate(thinks):
        request = Request(id=index + 1, game="g", view=view, legal=legal, time_ms=0)
        assert seat.time_for_move() == pytest.approx(move + left)
        assume(abs(think - (move + left)) > 1e-6)  # not on the deadline itself, where float rounding decides
        if think > move + left:
            with pytest.raises(Exception, match="no answer before the deadline") as caught:
                seat.ask(request)
            assert getattr(caught.value, "verdict", None) == "timeout"
            return
        assert seat.ask(request) in legal
        left = max(0.0, left - max(0.0, think - move))
        assert seat.bank == pytest.approx(left)
