"""The matchmaker's guarantees as properties (hypothesis) on leagues simulated on a clock (bench/league_model.py:
the daemon's coordinator, ``workers`` games at once, each version as slow as drawn): every pair meets within a
bounded number of groups, every size is played from the start and each version's groups split over the sizes as
configured, games stay equal whatever the speeds, and a restart's replay of the groups is the state it left."""

from __future__ import annotations

import itertools
import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.league_model import Entrant, LeagueSim
from referee.league.matchmaker import Group, LeagueState, MatchSettings, VersionState, replay

FAST = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def leagues(draw: st.DrawFn) -> LeagueSim:
    """3-8 versions of their own bots and authors, move times 1-300 ms (a game-seat of 20 decisions: 0.02-6 s),
    1-4 workers, 1-4 sizes drawn from those the field can fill, min_games 0, 10 or 30; every pair in every
    window (the properties are about the pairs the window allows)."""
    n = draw(st.integers(3, 8))
    seconds = draw(st.lists(st.floats(0.02, 6.0), min_size=n, max_size=n))
    sizes = tuple(draw(st.lists(st.integers(2, min(n, 6)), min_size=1, max_size=4)))
    field = [Entrant(VersionState(f"v{i}", f"bot{i}", f"author{i}"), 1500.0, seconds=s) for i, s in enumerate(seconds)]
    match = MatchSettings(sizes=sizes, window_min=1e9, min_games=draw(st.sampled_from([0, 10, 30])))
    return LeagueSim(match, field, seed=draw(st.integers(0, 2**16)), workers=draw(st.integers(1, 4)),
                     refit_every=10**9)


def pairs_bound(n: int) -> int:
    """Groups within which every pair meets, and meets again: six rounds of every pair, and ten groups."""
    return 6 * math.comb(n, 2) + 10


@FAST
@given(leagues())
def test_every_pair_meets_within_a_bounded_number_of_groups_and_every_size_from_the_start(sim: LeagueSim) -> None:
    sim.run(300)
    n, bound = len(sim.entrants), pairs_bound(len(sim.entrants))
    last = dict.fromkeys(itertools.combinations(sorted(e.version.id for e in sim.entrants), 2), -1)
    for group, _ in sim.issued:
        for key in itertools.combinations(sorted(group.table), 2):
            assert group.number - last[key] <= bound, (key, last[key], group.number, n)
            last[key] = group.number
    assert all(300 - at <= bound for at in last.values()), last
    sizes = sorted(set(sim.settings.sizes))
    first = {k: next(g.number for g, _ in sim.issued if g.size == k) for k in sizes}
    assert max(first.values()) < len(sizes) + 3, first  # every size within the first few groups


@FAST
@given(leagues())
def test_each_version_s_groups_split_over_the_sizes_as_configured(sim: LeagueSim) -> None:
    sim.run(300)
    sizes = sim.settings.sizes
    for version in sim.state.versions:
        groups = sum(version.groups_at(k) for k in set(sizes))
        for k in set(sizes):
            target = sizes.count(k) / len(sizes) * groups
            assert abs(version.groups_at(k) - target) <= 3.0, (version.id, version.by_size, sizes)


@FAST
@given(leagues())
def test_games_stay_equal_whatever_the_speeds(sim: LeagueSim) -> None:
    sim.settings = MatchSettings(sizes=sim.settings.sizes, window_min=1e9, min_games=0)
    sim.run(300)  # drained: every issued game is played
    games = [v.games for v in sim.state.versions]
    assert max(games) - min(games) < sim.settings.span, games
    mean = sum(games) / len(games)
    assert min(games) >= 0.67 * mean and max(games) <= 1.5 * mean, games


def test_a_slow_version_holds_more_groups_in_flight_so_the_workers_stay_busy() -> None:
    speeds = [4.2, 1.4, 0.4, 0.012, 0.008, 0.01]  # mix (a): the search bot at 250, 80, 20 playouts; fast bots
    busy = {}
    for in_flight in (1, MatchSettings.max_in_flight):
        field = [Entrant(VersionState(f"v{i}", f"bot{i}", f"author{i}"), 1500.0, seconds=s)
                 for i, s in enumerate(speeds)]
        sim = LeagueSim(MatchSettings(sizes=(2, 3), max_in_flight=in_flight, min_games=0), field, seed=3,
                        workers=2, refit_every=10**9)
        sim.run(600)
        busy[in_flight] = sim.busy_seconds / (2 * sim.clock)
        games = [v.games for v in sim.state.versions]
        assert max(games) - min(games) < sim.settings.span  # fair either way
    assert busy[MatchSettings.max_in_flight] > 0.97 > busy[1] + 0.15, busy  # the fast ones wait only with 1


@FAST
@given(leagues())
def test_a_replay_of_the_groups_is_the_state_the_league_left(sim: LeagueSim) -> None:
    sim.run(120, drain=False)
    open_numbers = {group.number for group in sim.state.in_flight}
    # the daemon stamps a group with its number; the simulation with its clock: compare all but that
    blank = tuple(VersionState(v.id, v.bot, v.author) for v in sim.state.versions)
    groups: list[tuple[Group, bool]] = [(group, group.number in open_numbers) for group, _ in sim.issued]
    rebuilt = replay(LeagueState(seed=sim.seed, versions=blank), groups, sim.settings)
    assert rebuilt.meetings == sim.state.meetings and rebuilt.in_flight == sim.state.in_flight
    assert rebuilt.sized_meetings == sim.state.sized_meetings
    assert [(v.issued, v.served, v.by_size) for v in rebuilt.versions] == \
        [(v.issued, v.served, v.by_size) for v in sim.state.versions]


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 2**16), workers=st.integers(1, 4))
def test_two_versions_of_identical_code_meet_the_same_others_at_each_size(seed: int, workers: int) -> None:
    """What keeps one board fair across sizes when a bot's strength differs by size: two copies get the same
    share of each size (above) and meet each other version about as often at each size."""
    speeds = {"slow": 4.0, "mid": 1.2, "quick": 0.1, "fast": 0.01, "copy": 0.05, "twin": 0.05, "a": 0.2, "b": 0.02}
    field = [Entrant(VersionState(name, name, name), 1500.0, seconds=s) for name, s in speeds.items()]
    sim = LeagueSim(MatchSettings(sizes=(2, 3), window_min=1e9), field, seed=seed, workers=workers,
                    refit_every=10**9)
    sim.run(400)
    for k, met in sim.state.sized_meetings.items():
        for other in speeds.keys() - {"copy", "twin"}:
            copy, twin = met.get(tuple(sorted(("copy", other))), 0), met.get(tuple(sorted(("twin", other))), 0)
            assert abs(copy - twin) <= 4, (k, other, copy, twin)


def test_a_size_the_field_cannot_fill_is_owed_to_nobody() -> None:
    """Five authors cannot fill a table of 6: no version is short of it, so nobody waits for it."""
    field = [Entrant(VersionState(f"v{i}", f"bot{i}", f"author{min(i, 4)}"), 1500.0, seconds=0.1 + i)
             for i in range(6)]  # v4 and v5 share an author
    sim = LeagueSim(MatchSettings(sizes=(2, 6, 3)), field, seed=5, workers=2, refit_every=10**9)
    sim.run(300)
    assert {group.size for group, _ in sim.issued} == {2, 3}
    assert sim.busy_seconds / (2 * sim.clock) > 0.97
    for version in sim.state.versions:
        assert abs(version.groups_at(2) - version.groups_at(3)) <= 3, version
