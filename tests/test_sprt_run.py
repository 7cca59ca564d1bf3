"""The SPRT on the runner: groups counted in schedule order only, stored and resumed to the same decision."""

from __future__ import annotations

import io
import random
from pathlib import Path

import pytest
from configs import Bot, write_toml

from referee.rating.sprt import Hypotheses, sprt_state
from referee.results.store import Store
from referee.tournament import worker
from referee.tournament.config import load_config
from referee.tournament.runner import RunRequest, TournamentError, run_tournament
from referee.tournament.sprt_run import GroupTracker, SprtCourse, SprtError, SprtTest, placing, sprt_setup
from referee.tournament.sprt_schedule import SprtPlan

SAMPLES = Path(__file__).resolve().parent.parent / "sample_bots" / "python"
SEED = 11


def sample_config(folder: Path, *, extra: str = "") -> Path:
    """heuristic, random and a second random, at the process level (quick to start)."""
    bots = [Bot(name, f"{{python}} {script}", SAMPLES, files=[script])
            for name, script in (("heur", "heuristic_bot.py"), ("rand", "random_bot.py"), ("rand2", "random_bot.py"))]
    return write_toml(folder / "ab.toml", bots, header=f'name = "ab"\nsandbox = "process"\n{extra}', move=2.0)


def outcome(table: tuple[str, ...], winner: str | None) -> str:
    """A game's outcome text: ``winner`` out first, everyone else a fool sharing the last place (None: drawn)."""
    if winner is None:
        return f"{' '.join(table)}|{' '.join('1' for _ in table)}|0"
    return f"{' '.join(table)}|{' '.join('1' if name == winner else '2' for name in table)}|1"


def test_placing_reads_an_outcome_from_the_bots_seat() -> None:
    assert placing("rand heur f|1 3 2|1", "heur").seat == 1
    game = placing("a b|1 1|0", "b")
    assert game.drawn and game.places == (1, 1) and game.seat == 1


def test_a_group_completed_out_of_order_waits_for_the_earlier_ones() -> None:
    plan = SprtPlan("new", "base")
    test = SprtTest(-50, 50)
    rng = random.Random(3)
    results, group_scores = {}, []
    for group in range(40):
        won = 0
        for slot in plan.group(SEED, group):
            winner = "new" if rng.random() < 0.7 else "base"
            results[slot.key] = [outcome(slot.table, winner)]
            won += winner == "new"
        group_scores.append(won / 2)
    ordered = GroupTracker(plan, test, SEED)
    states = []
    for key, texts in results.items():
        ordered.add(key, texts)
        states.append(ordered.advance())
    shuffled = GroupTracker(plan, test, SEED)
    keys = list(results)
    first = plan.group(SEED, 0)[0].key
    for key in [k for k in keys if k != first]:  # everything but group 0's first slot: nothing counts
        shuffled.add(key, results[key])
        assert shuffled.advance().groups == 0
    shuffled.add(first, results[first])
    decided = next(state for state in states if state.decision != "continue")
    assert shuffled.advance() == decided  # the first decision in order, not the state over all 40 groups
    assert decided.groups < 40
    assert decided == sprt_state(group_scores[:decided.groups], Hypotheses(-50, 50), games_per_group=2)


def test_field_groups_score_both_arms() -> None:
    plan = SprtPlan("new", "base", ("f1", "f2"))
    tracker = GroupTracker(plan, SprtTest(-50, 50), SEED)
    for slot in plan.group(SEED, 0):  # NEW out first in every game, f1 in every game of BASE's arm
        tracker.add(slot.key, [outcome(slot.table, "new" if slot.arm == 0 else "f1")])
    state = tracker.advance()
    assert state.groups == 1 and state.games == 6
    # NEW beats both fools: 1; BASE loses to f1 and draws with its co-fool f2: 1/4; the group 1/2 + (1 - 1/4) / 2
    assert tracker.scores.counts == {0.875: 1} and tracker.base_total == 0.25


def test_each_arm_has_processes_of_its_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Against a field, the field bot's process of NEW's arm never plays BASE's arm's games: none meets a deal
    twice, though both arms replay every deal with it."""
    loaded, plan = sprt_setup(load_config(sample_config(tmp_path)), "heur", "rand", ["rand2"])
    seen: dict[int, list[str]] = {}
    real = worker.play_series

    def recording(series, clients, **hooks):  # type: ignore[no-untyped-def]
        for client in clients:
            seen.setdefault(id(client), []).append(series.deal_key)
        return real(series, clients, **hooks)

    monkeypatch.setattr(worker, "play_series", recording)
    player = worker.SlotPlayer(loaded, loaded.isolation([]))
    try:
        for slot in plan.groups(SEED, 0, 2):
            player.play(slot, {})
    finally:
        player.close()
    assert len(seen) == 2 * 2 + 2 * 2  # NEW's and BASE's instances, and the field bot's per arm, per rotation
    assert all(len(deals) == len(set(deals)) == 2 for deals in seen.values())


def test_bad_arguments_are_sprt_errors(tmp_path: Path) -> None:
    loaded = load_config(sample_config(tmp_path))
    with pytest.raises(SprtError, match="no bot named 'nobody'"):
        sprt_setup(loaded, "heur", "nobody")
    with pytest.raises(SprtError, match="different bots"):
        sprt_setup(loaded, "heur", "rand", ["heur"])
    with pytest.raises(SprtError, match="--elo0 must be below --elo1"):
        SprtTest(5, 5)
    with pytest.raises(SprtError, match="--alpha and --beta"):
        SprtTest(0, 5, alpha=0.7, beta=0.4)
    narrowed, plan = sprt_setup(loaded, "heur", "rand")
    assert [bot.name for bot in narrowed.bots] == ["heur", "rand"] and plan.players == 2


def test_heuristic_against_random_reaches_h1_and_a_resume_reproduces_it(tmp_path: Path) -> None:
    loaded, plan = sprt_setup(load_config(sample_config(tmp_path)), "heur", "rand")
    db = tmp_path / "ab.db"
    course = SprtCourse(loaded, plan, SprtTest(0, 100, max_games=200))
    stream = io.StringIO()
    summary = run_tournament(loaded, RunRequest(db, jobs=2), stream, course=course)
    state = course.state
    assert state.decision == "H1" and state.score is not None and state.score > 0.5
    assert state.games == 2 * state.groups and summary.played >= state.games
    assert "sprt: LLR" in stream.getvalue() and "H1 accepted" in stream.getvalue()
    with Store(db, create=False) as store:
        active = store.active_tournament()
        assert active is not None and active.name == "ab: sprt heur against rand"
        stored = store.slot_outcomes(active.id)
    assert {s.key for s in plan.groups(active.seed, 0, state.groups)} <= set(stored)
    again = SprtCourse(loaded, plan, SprtTest(0, 100, max_games=200))
    resumed = run_tournament(loaded, RunRequest(db, jobs=2), io.StringIO(), course=again)
    assert resumed.played == 0 and again.state == state
    other = SprtCourse(loaded, plan, SprtTest(0, 50, max_games=200))
    with pytest.raises(TournamentError, match="another SPRT"):
        run_tournament(loaded, RunRequest(db, jobs=2), io.StringIO(), course=other)


def test_max_games_truncates_and_a_larger_one_goes_on(tmp_path: Path) -> None:
    loaded, plan = sprt_setup(load_config(sample_config(tmp_path)), "rand", "rand2")
    db = tmp_path / "ab.db"
    course = SprtCourse(loaded, plan, SprtTest(-5, 5, max_games=6))
    summary = run_tournament(loaded, RunRequest(db, jobs=1), io.StringIO(), course=course)
    assert course.state.decision == "truncated" and course.state.games == 6 and summary.played == 6
    longer = SprtCourse(loaded, plan, SprtTest(-5, 5, max_games=10))
    more = run_tournament(loaded, RunRequest(db, jobs=1), io.StringIO(), course=longer)
    assert longer.state.decision == "truncated" and longer.state.groups == 5 and more.played == 4
