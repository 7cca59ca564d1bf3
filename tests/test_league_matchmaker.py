"""The league's matchmaker: the anchor rules, the rating window, least-met tables, the table constraints, seeds
and in-flight limits on hand-built states, then the stated fairness on simulated leagues (bench/league_model.py:
20 versions of one speed and known strengths, the board refitted with the project's Bradley-Terry fit)."""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections import Counter

import pytest

from bench.league_model import Entrant, LeagueSim, spearman, spread, top_meetings
from referee.engine.rng import derive_seed
from referee.league.matchmaker import (
    NEVER,
    Group,
    LeagueState,
    MatchSettings,
    VersionState,
    finish,
    issue,
    next_group,
    pair,
    rerate,
    with_versions,
)

PAIRS = MatchSettings(sizes=(2,))


def version(vid: str, games: int = 100, rating: float = 1500.0, error: float = 10.0, last: float = 0.0, *,
            bot: str | None = None, author: str | None = None, active: bool = True, served: int = 0) -> VersionState:
    """A rated version, past min_games (its ``games`` all issued), of its own bot by its own author unless told
    otherwise."""
    return VersionState(vid, bot or vid, author or vid, rating, error, games, last, active, issued=games,
                        served=served)


def league(*versions: VersionState, seed: int = 7, meetings: dict[tuple[str, str], int] | None = None) -> LeagueState:
    return LeagueState(seed=seed, versions=versions, meetings=meetings or {})


def drawn_group(state: LeagueState, settings: MatchSettings) -> Group:
    group = next_group(state, settings)
    assert group is not None
    return group


def play(state: LeagueState, settings: MatchSettings, groups: int) -> tuple[LeagueState, list[Group]]:
    """Issue and finish ``groups`` groups one at a time, at 1000 + the group number (later than any time the
    hand-built states hold)."""
    drawn = []
    for _ in range(groups):
        group = next_group(state, settings)
        assert group is not None
        state = finish(issue(state, group, 1000.0 + state.issued, settings), group)
        drawn.append(group)
    return state, drawn


# ---------------------------------------------------------------------------- the anchor


def test_the_anchor_is_the_fewest_games_version_while_any_is_under_min_games() -> None:
    state = league(version("old", games=200, last=NEVER), version("mid", games=29, last=5.0),
                   version("new", games=3, last=9.0), version("newer", games=0, last=9.0))
    group = next_group(state, PAIRS)
    assert group is not None and group.anchor == "newer"  # fewest games beats idle longest ("old")
    state, drawn = play(state, PAIRS, 40)
    anchors = [g.anchor for g in drawn]
    # each game counts: "newer" and "new" alternate until both pass "mid", then "mid" until 30
    assert set(anchors[:10]) <= {"new", "newer", "mid"}
    assert state.version("newer").issued >= 30 and state.version("new").issued >= 30
    # their entry was not charged: past it, they stand within the span of the version never away ("old")
    served = [v.served for v in state.versions]
    assert max(served) - min(served) <= PAIRS.span


def test_past_min_games_the_anchor_is_the_version_idle_longest() -> None:
    state = league(version("a", last=3.0), version("b", last=1.0), version("c", last=2.0), version("d", last=4.0))
    assert drawn_group(state, PAIRS).anchor == "b"
    never = with_versions(state, version("e", last=NEVER))
    assert drawn_group(never, PAIRS).anchor == "e"
    _, drawn = play(state, PAIRS, 12)
    # the clock moves on with every group, so the next anchor is always one that sat the last group out
    for group, later in itertools.pairwise(drawn):
        assert later.anchor not in group.table


def test_anchor_ties_are_drawn_from_the_league_seed() -> None:
    versions = [version(f"v{i}", last=0.0) for i in range(6)]
    anchors = {drawn_group(league(*versions, seed=seed), PAIRS).anchor for seed in range(40)}
    assert len(anchors) == 6
    assert next_group(league(*versions, seed=3), PAIRS) == next_group(league(*versions, seed=3), PAIRS)


# ---------------------------------------------------------------------------- the window


def test_the_window_is_window_min_or_window_sigmas_errors_around_the_anchor() -> None:
    field = [version("near", rating=1590, last=5.0), version("far", rating=1650, last=1.0),
             version("away", rating=1900, last=2.0)]
    for error, expected in ((10.0, "near"), (60.0, "near"), (80.0, "far")):  # 100, 120, 160 Elo wide
        state = league(version("anchor", rating=1500, error=error, last=0.0), *field)
        group = next_group(state, PAIRS)
        assert group is not None and group.anchor == "anchor"
        assert set(group.table) == {"anchor", expected}  # "far" is idle longer, but only in a wide window


def test_an_unrated_anchor_has_everyone_in_its_window() -> None:
    state = league(version("new", games=0, error=math.inf, last=NEVER), version("a", rating=1000, last=1.0),
                   version("b", rating=2400, last=0.0))
    assert set(drawn_group(state, PAIRS).table) == {"new", "b"}


def test_the_window_widens_by_steps_until_the_table_can_be_filled() -> None:
    anchor = version("anchor", rating=1500, last=0.0)
    others = [version(vid, rating=rating, last=1.0) for vid, rating in (
        ("in", 1560), ("step1", 1640), ("step2", 1690), ("step3", 1730), ("out", 2000))]
    triples = MatchSettings(sizes=(3,))
    seen: Counter[str] = Counter()
    for seed in range(60):
        group = next_group(league(anchor, *others, seed=seed), triples)
        assert group is not None and group.anchor == "anchor"
        seen.update(set(group.table) - {"anchor"})
    # 100 Elo holds one other; 150 holds "step1" too: the two of them, every time
    assert seen == {"in": 60, "step1": 60}
    quads = MatchSettings(sizes=(4,))
    seen.clear()
    for seed in range(60):
        seen.update(drawn_group(league(anchor, *others, seed=seed), quads).table)
    assert seen["out"] == 0 and seen["step2"] == 60  # 200 Elo holds three; "step3" is 230 away
    wide = MatchSettings(sizes=(5,), widen_step=300.0)  # one step to 400 Elo: everyone but "out" (500 away)
    tables = {frozenset(drawn_group(league(anchor, *others, seed=s), wide).table) for s in range(30)}
    assert tables == {frozenset({"anchor", "in", "step1", "step2", "step3"})}


# ---------------------------------------------------------------------------- seats


def test_the_seats_go_to_the_least_met_set_then_the_longest_idle() -> None:
    anchor = version("A", last=0.0)
    others = [version("B", last=1.0), version("C", last=9.0), version("D", last=8.0), version("E", last=7.0)]
    meetings = {pair("A", "B"): 4, pair("A", "C"): 1, pair("A", "D"): 1, pair("A", "E"): 1, pair("C", "D"): 2,
                pair("C", "E"): 0, pair("D", "E"): 0}
    triples = MatchSettings(sizes=(3,))
    # sets: BC 5, BD 5, BE 5, CD 4, CE 2, DE 2; CE and DE tie on meetings and DE is idle longer
    group = next_group(league(anchor, *others, meetings=meetings), triples)
    assert group is not None and set(group.table) == {"A", "D", "E"}
    # meetings count every pair at the table, not only the anchor's: a D-E grudge moves the seat to C-E
    meetings[pair("D", "E")] = 3
    group = next_group(league(anchor, *others, meetings=meetings), triples)
    assert group is not None and set(group.table) == {"A", "C", "E"}


def test_ties_in_meetings_and_idleness_are_drawn() -> None:
    versions = [version("A", last=0.0), *(version(f"v{i}", last=1.0) for i in range(5))]
    tables = {frozenset(drawn_group(league(*versions, seed=s), PAIRS).table) for s in range(60)}
    assert len(tables) == 5


def test_each_anchor_sits_with_a_version_it_has_met_least() -> None:
    state = league(*(version(f"v{i}", last=NEVER) for i in range(6)))
    for _ in range(60):
        group = next_group(state, PAIRS)
        assert group is not None
        (other,) = set(group.table) - {group.anchor}
        floor = min(v.served for v in state.versions)
        met = {v.id: state.meetings.get(pair(group.anchor, v.id), 0) for v in state.versions
               if v.id != group.anchor and v.served < floor + PAIRS.lead}  # those the lead lets sit
        assert met[other] == min(met.values())
        state = finish(issue(state, group, float(state.issued), PAIRS), group)
    assert set(state.meetings.values()) <= {3, 4, 5}  # 60 meetings over 15 pairs: 4 each, give or take one


def test_a_large_window_is_searched_among_its_longest_idle() -> None:
    anchor = version("A", last=0.0)
    others = [version(f"v{i:02d}", last=1.0 if i >= 30 else 2.0 + i) for i in range(40)]  # v30-v39 idle longest
    met = {pair("A", f"v{i}"): 1 for i in range(30, 37)}  # ... and v37-v39 never met A
    settings = MatchSettings(sizes=(3,), max_pool=4)
    group = drawn_group(league(anchor, *others, meetings=met), settings)
    # the pool: v37-v39 (idle longest, never met A), then one of v30-v36; the least-met pair of them: two of v37-v39
    assert group.anchor == "A" and set(group.table) - {"A"} < {"v37", "v38", "v39"}
    # v00-v29, never met either, are left out: the pool holds the longest idle only
    wide = drawn_group(league(anchor, *others, meetings={}), MatchSettings(sizes=(6,), max_pool=6))
    assert set(wide.table) - {"A"} < {f"v{i}" for i in range(30, 40)}


# ---------------------------------------------------------------------------- who may share a table


def test_no_table_holds_two_versions_of_one_bot_or_two_bots_of_one_author() -> None:
    versions = [version(f"{bot}@{n}", bot=bot, author=author, last=NEVER, games=0)
                for bot, author, count in (("shark", "ann", 3), ("eel", "ann", 2), ("cod", "bo", 2),
                                           ("ray", "cy", 1), ("orc", "di", 2), ("pike", "ed", 1))
                for n in range(count)]
    settings = MatchSettings(sizes=(2, 3, 4, 5, 6))
    state, drawn = play(league(*versions), settings, 300)
    for group in drawn:
        seated = [state.version(vid) for vid in group.table]
        assert len({v.bot for v in seated}) == group.size
        assert len({v.author for v in seated}) == group.size
    assert max(g.size for g in drawn) == 5  # five authors
    assert all(v.games > 0 for v in state.versions)


def test_a_bot_with_versions_by_two_authors_is_matched_not_counted() -> None:
    # x@1 (by a) and y (by a) cannot sit together, but x@2 (by b) and y can: the largest table is 2 of the 3
    versions = [version("x@1", bot="x", author="a", last=NEVER), version("x@2", bot="x", author="b", last=NEVER),
                version("y", bot="y", author="a", last=NEVER)]
    _, drawn = play(league(*versions), MatchSettings(sizes=(2, 3)), 20)
    assert {frozenset(g.table) for g in drawn} == {frozenset({"x@2", "y"})}


def test_a_size_that_cannot_be_filled_is_not_drawn() -> None:
    five = [version(f"v{i}") for i in range(5)]
    _, drawn = play(league(*five), MatchSettings(sizes=(2, 6)), 50)
    assert {g.size for g in drawn} == {2}
    _, drawn = play(league(*five), MatchSettings(sizes=(2, 5)), 100)
    assert {g.size for g in drawn} == {2, 5}
    lone = league(version("a@1", bot="a", author="ann"), version("a@2", bot="a", author="ann"),
                  version("b", author="ann"))
    assert next_group(lone, PAIRS) is None  # every pair shares a bot or an author


# ---------------------------------------------------------------------------- seeds and groups in flight


def test_deal_seeds_derive_from_the_league_seed_and_never_repeat() -> None:
    state = league(*(version(f"v{i}", last=NEVER) for i in range(8)), seed=11)
    state, drawn = play(state, MatchSettings(), 2000)
    assert [g.number for g in drawn] == list(range(2000))
    assert len({g.deal_seed for g in drawn}) == 2000
    assert drawn[5].deal_seed == derive_seed(11, "league", "deal", 5)
    other = next_group(league(*(version(f"v{i}", last=NEVER) for i in range(8)), seed=12), MatchSettings())
    assert other is not None and other.deal_seed == derive_seed(12, "league", "deal", 0) != drawn[0].deal_seed


def test_a_group_is_issued_once() -> None:
    state = league(*(version(f"v{i}") for i in range(4)))
    group = next_group(state, PAIRS)
    assert group is not None
    issued = issue(state, group, 1.0, PAIRS)
    with pytest.raises(ValueError, match="stale"):
        issue(issued, group, 2.0, PAIRS)
    assert drawn_group(issued, PAIRS).deal_seed != group.deal_seed
    with pytest.raises(ValueError, match="not in flight"):
        finish(finish(issued, group), group)


def test_issue_and_finish_update_seats_meetings_games_and_flight() -> None:
    state = league(*(version(f"v{i}", games=0, last=NEVER) for i in range(4)))
    group = next_group(state, MatchSettings(sizes=(3,)))
    assert group is not None
    issued = issue(state, group, 42.0, MatchSettings(sizes=(3,)))
    assert issued.in_flight == (group,) and issued.issued == 1
    assert dict(issued.meetings) == {p: 1 for p in group.pairs()} and not state.meetings
    assert all(issued.version(vid).last_seated == 42.0 for vid in group.table)
    done = finish(issued, group)
    assert done.in_flight == () and all(done.version(vid).games == 3 for vid in group.table)
    assert finish(issued, group, games=2).version(group.table[0]).games == 2
    assert [group.seats(r) for r in range(3)] == [group.table, (*group.table[1:], group.table[0]),
                                                  (group.table[2], *group.table[:2])]
    moved = rerate(done, {"v0": (1612.0, 25.0)})
    assert (moved.version("v0").rating, moved.version("v0").error) == (1612.0, 25.0)
    assert moved.version("v1") == done.version("v1")


def test_a_version_in_flight_waits_unless_max_in_flight_allows_more() -> None:
    state = league(*(version(f"v{i}", last=float(i)) for i in range(3)))
    one = dataclasses.replace(PAIRS, max_in_flight=1)
    group = next_group(state, one)
    assert group is not None and set(group.table) == {"v0", "v1"}
    busy = issue(state, group, 10.0, one)
    assert next_group(busy, one) is None  # only v2 is free
    second = next_group(busy, dataclasses.replace(PAIRS, max_in_flight=2))
    assert second is not None and second.anchor == "v2"  # v0 and v1, a group ahead, only fill its table


def test_settings_and_states_are_checked() -> None:
    with pytest.raises(ValueError, match="sizes"):
        MatchSettings(sizes=(1, 2))
    with pytest.raises(ValueError, match="sizes"):
        MatchSettings(sizes=())
    with pytest.raises(ValueError, match="widen_step"):
        MatchSettings(widen_step=0.0)
    with pytest.raises(ValueError, match="repeat"):
        league(version("a"), version("a"))
    state = league(version("a"), version("b"))
    with pytest.raises(ValueError, match="unknown"):
        issue(state, Group(0, ("a", "zed"), 1, "a"), 0.0, PAIRS)


# ---------------------------------------------------------------------------- fairness on a simulated league


def simulated(seed: int) -> LeagueSim:
    """20 versions 1200-1800 Elo, a 21st (1510 Elo) joining at group 500; sizes 2-6, two
    groups in flight, the board refitted every 50 groups."""
    entrants = [Entrant(VersionState(f"v{i:02d}", f"bot{i:02d}", f"ann{i:02d}"), 1200 + 600 * i / 19)
                for i in range(20)]
    entrants.append(Entrant(VersionState("late", "late-bot", "late-author"), 1510.0, at=500))
    sim = LeagueSim(MatchSettings(), entrants, seed=seed, workers=2, refit_every=50)
    sim.run(1000)
    return sim


@pytest.fixture(scope="module", params=[1, 2, 3])
def sim(request: pytest.FixtureRequest) -> LeagueSim:
    return simulated(request.param)


def test_games_per_version_stay_within_two_thirds_and_one_and_a_half_of_the_mean(sim: LeagueSim) -> None:
    games = sim.games()
    original = [games[f"v{i:02d}"] for i in range(20)]
    low, high, _ = spread(original)
    assert low >= 0.67 and high <= 1.5, (low, high, sorted(original))


def test_a_late_version_reaches_min_games_before_any_older_one_plays_min_games_more(sim: LeagueSim) -> None:
    reach = sim.reached["late"]
    assert reach.older_most < sim.settings.min_games, reach


def test_the_top_four_meet_each_other_in_every_hundred_groups(sim: LeagueSim) -> None:
    fewest = top_meetings(sim, span=100, top=4)
    assert len(fewest) == 10 and min(fewest) >= 1, fewest


def test_the_simulated_board_orders_the_field(sim: LeagueSim) -> None:
    assert sim.board is not None and spearman(sim.board, sim) > 0.95
