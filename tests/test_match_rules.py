"""The match's forfeit rules (referee/games/match.py, RULES.md 6.2 and 7) with in-memory bots (tests/scripted.py):
a crash, a timeout, a protocol error or an illegal move at decision k, or at the handshake, in a game or a
series. Who becomes the fool, how the others are ranked, which verdict is recorded, who is told what in its
game over, which bot is stopped and restarted. No process is started: each test takes milliseconds."""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import msgspec
import pytest
from scripted import Fault, ScriptedBot

from protocol.events import ActionTaken
from protocol.messages import GameStart, Request
from protocol.records import Verdict
from protocol.rules import Rules
from referee.bots.errors import (
    BotCrashed,
    BotError,
    BotIllegalAction,
    BotOutOfMemory,
    BotProtocolError,
    BotTimeout,
)
from referee.bots.session import BotClient
from referee.engine import SeededRng, new_game
from referee.games.match import Series, play_game, play_series
from referee.results.record import GameRecord

SEED = 7

# (the error, whether the match stops the bot at once: a hung or dead bot is never written to again)
ERRORS = [
    pytest.param(BotCrashed("bot exited: exit code 3"), True, id="crash"),
    pytest.param(BotTimeout("no reply; move 3 had 1000 ms + 50 ms grace"), True, id="timeout"),
    pytest.param(BotProtocolError("expected an action reply to request 5, got a hello"), False, id="protocol"),
    pytest.param(BotIllegalAction("illegal action 'take': not now"), False, id="illegal"),
    pytest.param(BotOutOfMemory("over its 512 MiB"), False, id="memory"),
]


def clients(bots: Sequence[ScriptedBot]) -> list[BotClient]:
    return cast(list[BotClient], list(bots))  # duck-typed: the match uses only what ScriptedBot has


def play(*bots: ScriptedBot, rules: Rules | None = None, seed: int = SEED) -> GameRecord:
    game = new_game(rules or Rules(), len(bots), SeededRng(seed))
    return play_game(game, clients(bots), "t1", deal=f"{seed}:0")


def first_mover(players: int, rules: Rules | None = None, seed: int = SEED) -> int:
    seat = new_game(rules or Rules(), players, SeededRng(seed)).to_move
    assert seat is not None
    return seat


@pytest.mark.parametrize(("error", "killed"), ERRORS)
def test_a_bot_error_at_decision_k_makes_that_bot_the_fool_with_its_verdict(error: BotError, killed: bool) -> None:
    """RULES.md 6.2: the offender is the fool, the game ends there; its verdict and reason are recorded."""
    hostile = ScriptedBot("hostile", faults=[Fault(error, move=3)])
    correct = ScriptedBot("correct")
    record = play(hostile, correct)
    assert record.verdicts == [Verdict(seat=0, bot="hostile", kind=error.verdict, reason=error.reason)]
    result = record.result
    assert (result.end, result.fools, result.forfeit_seat) == ("forfeit", [0], 0)
    assert (result.verdict, result.reason) == (error.verdict, error.reason)
    assert result.order == [[1], [0]], "the other seat keeps a place, the fool is last"
    assert len(hostile.of_type(Request)) == 3 and len(hostile.move_times) == 2, "asked 3 times, answered 2"
    assert sum(isinstance(e, ActionTaken) and e.seat == 0 for e in record.events) == 2
    assert record.times[0] is not None and record.times[0].moves == 2


@pytest.mark.parametrize(("error", "killed"), ERRORS)
def test_only_the_offender_is_told_the_reason_and_a_dead_or_hung_one_is_told_nothing(error: BotError,
                                                                                     killed: bool) -> None:
    """match.py: the reason may quote the offender's stderr or cards, so the others' game over leaves it out.
    A crashed or timed-out bot is stopped at once (never written to again: no game over); another offender
    is told why in its game over, then stopped; the other seat is not stopped (its process persists)."""
    hostile = ScriptedBot("hostile", faults=[Fault(error, move=2)])
    correct = ScriptedBot("correct")
    record = play(hostile, correct)
    assert [m.result for m in correct.game_overs] == [msgspec.structs.replace(record.result, reason=None)]
    if killed:
        assert hostile.game_overs == []
        assert hostile.stops == [0.0, 0.0], "stopped at the forfeit, and again (a no-op) after the game"
    else:
        assert [m.result for m in hostile.game_overs] == [record.result]
        assert hostile.stops == [0.0], "stopped, without grace, after its game over"
    assert correct.stops == [] and correct.running


def test_an_illegal_action_string_is_an_illegal_verdict_that_names_it() -> None:
    """match.py ``_ask``: a well-formed action that is not in the request's list is not applied."""
    mover = first_mover(2)
    hostile = ScriptedBot("hostile", script=["attack 2C"])  # no 2 in a 36-card deck
    correct = ScriptedBot("correct")
    bots = [correct, correct]
    bots[mover] = hostile
    record = play(*bots)
    assert record.result.end == "forfeit" and record.result.fools == [mover]
    (verdict,) = record.verdicts
    assert verdict.kind == "illegal" and verdict.reason.startswith("illegal action 'attack 2C': "), verdict
    assert record.actions == 0 and not any(isinstance(e, ActionTaken) for e in record.events)


def test_a_malformed_action_string_is_an_illegal_verdict_that_says_malformed() -> None:
    mover = first_mover(2)
    hostile = ScriptedBot("hostile", script=[None, None, "attack ZZ"], policy=lambda r: "attack ZZ")
    correct = ScriptedBot("correct")
    bots = [correct, correct]
    bots[mover] = hostile
    record = play(*bots)
    (verdict,) = record.verdicts
    assert (verdict.seat, verdict.kind) == (mover, "illegal")
    assert verdict.reason.startswith("malformed action: "), verdict.reason
    assert len(hostile.move_times) == 1, "its first answer forfeited"


def test_a_failed_handshake_leaves_the_seats_after_it_unstarted_and_untold() -> None:
    """match.py: seats start in order and the first failure ends the game before any move; a seat that
    never started is sent nothing (its queued game line included)."""
    hostile = ScriptedBot("hostile", faults=[Fault(BotTimeout("the handshake had 5000 ms"), move=0)])
    later = ScriptedBot("later")
    record = play(hostile, later)
    assert record.result.fools == [0] and record.result.verdict == "timeout" and record.actions == 0
    assert (hostile.starts, later.starts) == (1, 0)
    assert later.received == [] and not later.running
    assert hostile.received == [], "dead at the handshake: neither its game line nor a game over"


def test_a_game_that_ends_at_a_handshake_is_reported_to_the_seats_already_running() -> None:
    earlier = ScriptedBot("earlier")
    hostile = ScriptedBot("hostile", faults=[Fault(BotCrashed("bot exited: exit code 1"), move=0)])
    record = play(earlier, hostile)
    assert record.result.fools == [1] and record.verdicts[0].kind == "crash"
    assert [type(m).__name__ for m in earlier.received] == ["GameStart", "GameOver"]
    assert earlier.game_overs[0].result.reason is None and earlier.game_overs[0].result.fools == [1]


@pytest.mark.parametrize("offender", [0, 1, 2])
def test_a_forfeit_at_a_table_of_three_ranks_every_other_seat_in_one_shared_place(offender: int) -> None:
    """RULES.md 6.2: nobody is out yet, so everyone but the fool shares one place, the fool last."""
    bots = [ScriptedBot(f"bot{seat}") for seat in range(3)]
    bots[offender] = ScriptedBot("hostile", faults=[Fault(BotProtocolError("not JSON"), move=1)])
    record = play(*bots)
    others = sorted(set(range(3)) - {offender})
    assert record.result.order == [others, [offender]] and record.result.fools == [offender]
    assert [v.seat for v in record.verdicts] == [offender]
    for seat in others:
        assert [m.result.reason for m in bots[seat].game_overs] == [None]


def first_legal_until_someone_is_out(rules: Rules, players: int) -> tuple[int, int, list[list[int]]]:
    """Replays the first-legal game to the first decision after a seat went out: the seat to move, how many
    decisions it had made, and the places of those out."""
    game = new_game(rules, players, SeededRng(SEED))
    asked = [0] * players
    while game.result is None and not game.out:
        seat = game.to_move
        assert seat is not None
        asked[seat] += 1
        game.apply_unchecked(game.legal_actions()[0])
    assert game.result is None and game.to_move is not None, "nobody went out before the game ended"
    return game.to_move, asked[game.to_move], [list(place) for place in game.out]


@pytest.mark.parametrize("players", [3, 4])
def test_a_forfeit_after_a_seat_went_out_keeps_its_place(players: int) -> None:
    """RULES.md 6.2: those already out keep their going-out order, everyone else still in shares one
    place ahead of the fool."""
    rules = Rules(variant="podkidnoy", deck=36)
    mover, asked, out = first_legal_until_someone_is_out(rules, players)
    bots = [ScriptedBot(f"bot{seat}") for seat in range(players)]
    bots[mover] = ScriptedBot("hostile", faults=[Fault(BotCrashed("bot exited: signal 9"), move=asked + 1)])
    record = play(*bots, rules=rules)
    gone = {seat for place in out for seat in place}
    rest = sorted(set(range(players)) - gone - {mover})
    assert record.result.order == [*out, rest, [mover]]
    assert record.result.fools == [mover]


def test_a_series_restarts_the_offender_and_the_fool_deals_next() -> None:
    """RULES.md 7: after a forfeit the forfeiter is the fool: it deals the next game and its left neighbour
    leads (``from_under_fool``). The offender is started again for the next game; the other bot's process
    persists, and every game of the series is played and reported to both."""
    hostile = ScriptedBot("hostile", faults=[Fault(BotCrashed("bot exited: exit code 3"), move=2, game=1)])
    correct = ScriptedBot("correct")
    records = play_series(Series(Rules(), 3, SEED), clients([hostile, correct]))
    assert [r.game for r in records] == ["g1", "g2", "g3"]
    assert [v.kind for v in records[0].verdicts] == ["crash"] and records[0].result.fools == [0]
    assert [r.verdicts for r in records[1:]] == [[], []]
    assert all(r.result.end in ("fool", "draw") for r in records[1:])
    assert (hostile.starts, correct.starts) == (2, 1)
    assert records[1].dealer == 0, "the forfeiter deals"
    first = next(e for e in records[1].events if isinstance(e, ActionTaken))
    assert first.seat == 1, "the fool's left neighbour leads"
    assert [m.game for m in correct.game_starts] == [m.game for m in correct.game_overs] == ["g1", "g2", "g3"]
    assert [m.game for m in hostile.game_starts] == ["g1", "g2", "g3"]
    assert [m.game for m in hostile.game_overs] == ["g2", "g3"], "killed in g1: no game over there"


def test_a_fault_in_a_later_game_of_a_series_forfeits_only_that_game() -> None:
    hostile = ScriptedBot("hostile", faults=[Fault(BotTimeout("no reply"), move=1, game=2)])
    correct = ScriptedBot("correct")
    records = play_series(Series(Rules(), 3, SEED), clients([correct, hostile]))
    assert [[v.kind for v in r.verdicts] for r in records] == [[], ["timeout"], []]
    assert records[1].result.fools == [1] and records[1].verdicts[0].bot == "hostile"
    assert records[2].dealer == 1, "the forfeiter of game 2 deals game 3"
    assert hostile.starts == 2 and correct.starts == 1


def test_every_seat_gets_its_game_line_before_its_first_request() -> None:
    """match.py queues the game line and delivers it with the seat's first request (or its game over)."""
    bots = [ScriptedBot("a"), ScriptedBot("b")]
    record = play(*bots)
    assert record.result.end in ("fool", "draw") and record.verdicts == []
    for seat, bot in enumerate(bots):
        assert isinstance(bot.received[0], GameStart) and bot.received[0].seat == seat
        assert isinstance(bot.received[1], Request)
        assert [type(m).__name__ for m in bot.received].count("GameOver") == 1
