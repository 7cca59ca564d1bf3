"""A league's Bradley-Terry fit from what each complete deal group leaves behind, not from its games: the same ratings
and error bars as :func:`referee.rating.bradley_terry.rate` in fool mode, at a cost that no longer reads a game.

Why this is exact
-----------------
The point estimate, its bounds and the information depend on the games only through the totals per pair of bots
(comparisons, points). The sandwich's middle is ``sum_c g_c g_c^T`` over deals ``c``, and a deal's score
contribution ``g_c = sum_pairs (points_c - comparisons_c * F(theta_lo - theta_hi)) (e_lo - e_hi)`` depends on the
games of the deal only through the same two totals per pair of its own versions. So a deal group is summed up once,
when it completes (:func:`summarize`: its versions, and per pair its comparisons and half points, per version the
seats, fools, places and draws the board's columns show), and a refit needs those summaries alone: one small row per
group in place of its games' records. No coarser statistic is exact: ``g_c g_c^T`` multiplies ``F`` of two pairs of
one table, so the middle needs each table's own totals; groups with the same summary could share a row with a count,
but the matchmaker seats the versions that met least together, so almost every group's versions are a set never
seated before (a million synthetic games of 1,000 versions: 251,819 groups, 250,081 distinct summaries).

The pairs' totals are summed as groups are added, into two versions-sized matrices in name order (the fit's own
order), so that a fit reads them as they are; the sandwich's middle runs over an ``(groups, k)`` array per table
size ``k`` (:class:`Summaries`), appended as groups complete: the one pass over every group a fit makes.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

import msgspec
import numpy as np
import numpy.typing as npt

from referee.rating.bradley_terry import (
    DEFAULT_ELO,
    ELO_PER_NAT,
    SOLVER,
    Z95,
    FloatArray,
    PairTotals,
    RatingTable,
    Solver,
    _expected,
    fit_totals,
    rating_table,
)
from referee.rating.outcomes import parse_outcome

IntArray = npt.NDArray[np.int64]


class GroupSummary(msgspec.Struct, frozen=True, array_like=True):
    """A complete deal group as the fit sees it (stored as a JSON array, one row per group).

    ``versions`` sorted by name; per version (in that order) its ``seats`` (games it sat in), ``fools`` (games it
    was a fool in), ``places`` (sum of its places) and ``draws`` (drawn games it sat in); per pair ``a < b`` of
    versions, in the order of :func:`itertools.combinations`, the ``compared`` count and the ``halves``: twice the
    points of ``a`` (fool mode: every non-fool beats each fool, co-fools and a drawn game's players draw)."""

    versions: tuple[str, ...]
    games: int
    seats: tuple[int, ...]
    fools: tuple[int, ...]
    places: tuple[int, ...]
    draws: tuple[int, ...]
    compared: tuple[int, ...]
    halves: tuple[int, ...]


_ENCODER = msgspec.json.Encoder()
_DECODER = msgspec.json.Decoder(list[GroupSummary])


def encode_summary(summary: GroupSummary) -> str:
    return _ENCODER.encode(summary).decode()


def decode_summaries(texts: list[str]) -> list[GroupSummary]:
    """Many stored summaries at once: joined into one JSON array, decoded in one call (a row at a time costs
    several times more at a quarter million rows)."""
    return _DECODER.decode("[" + ",".join(texts) + "]")


def summarize(outcomes: Iterable[str]) -> GroupSummary:
    """A group's games (their :func:`~referee.rating.outcomes.outcome_text`) summed up as
    :func:`~referee.rating.bradley_terry.pairwise_outcomes` compares them in fool mode.

    :raises ValueError: a version sits twice at one game (as the full fit raises)."""
    games = [parse_outcome(text) for text in outcomes]
    versions = tuple(sorted({name for names, _, _ in games for name in names}))
    index = {name: i for i, name in enumerate(versions)}
    k = len(versions)
    per_version: list[list[int]] = [[0, 0, 0, 0] for _ in range(k)]  # seats, fools, places, draws
    pair_of = {pair: slot for slot, pair in enumerate(itertools.combinations(range(k), 2))}
    compared, halves = [0] * len(pair_of), [0] * len(pair_of)
    for names, places, has_fool in games:
        at = [index[name] for name in names]
        if len(set(at)) != len(at):
            raise ValueError("a bot appears more than once in one game")
        last = max(places)
        level = [int(place == last or not has_fool) for place in places]  # 1: a fool, or any player of a draw
        for v, place, fool in zip(at, places, level, strict=True):
            counts = per_version[v]
            counts[0] += 1
            counts[1] += fool and has_fool
            counts[2] += place
            counts[3] += not has_fool
        for x, y in itertools.combinations(range(len(at)), 2):
            if level[x] == level[y] == 0:
                continue  # two non-fools are not compared
            (a, la), (b, lb) = sorted(((at[x], level[x]), (at[y], level[y])))
            slot = pair_of[a, b]
            compared[slot] += 1
            halves[slot] += 1 + (lb > la) - (la > lb)  # win 2, draw 1, loss 0 for the earlier-named
    seats, fools, place_sums, draws = (tuple(counts[c] for counts in per_version) for c in range(4))
    return GroupSummary(versions, len(games), seats, fools, place_sums, draws, tuple(compared), tuple(halves))


@dataclass
class _Size:
    """The summaries of the groups of ``k`` versions, as arrays: one row per group."""

    k: int
    ids: list[IntArray] = field(default_factory=list)  # version ids, by the order of :attr:`Summaries.names`
    compared: list[IntArray] = field(default_factory=list)
    halves: list[IntArray] = field(default_factory=list)

    def arrays(self) -> tuple[IntArray, IntArray, IntArray]:
        """The rows so far, as one array each (the chunks joined once, kept joined)."""
        if len(self.ids) > 1:
            self.ids, self.compared, self.halves = ([np.concatenate(part)] for part in
                                                    (self.ids, self.compared, self.halves))
        if not self.ids:
            pairs = self.k * (self.k - 1) // 2
            return np.zeros((0, self.k), np.int64), np.zeros((0, pairs), np.int64), np.zeros((0, pairs), np.int64)
        return self.ids[0], self.compared[0], self.halves[0]


@dataclass(frozen=True)
class LeagueFit:
    """A fit of summaries: the table as :func:`~referee.rating.bradley_terry.rate` makes it, each version's board
    columns (seats, fools, sum of places, draws) and the ratings in natural log units (the next fit's start)."""

    table: RatingTable | None  # None before any group
    columns: dict[str, tuple[int, int, int, int]]  # seats, fools, sum of places, draws
    theta: dict[str, float]
    n_games: int


class Summaries:
    """The summaries of a league's complete groups, kept as they come (:meth:`add`), and their fit (:meth:`fit`).
    Not thread-safe: one fit at a time."""

    def __init__(self) -> None:
        self.names: list[str] = []  # version ids in order of first appearance
        self._id: dict[str, int] = {}
        self._sizes: dict[int, _Size] = {}
        self._columns: list[IntArray] = []  # per version id: seats, fools, places, draws
        # Per pair of versions, by their places in name order (the earlier-named's row): its comparisons and half
        # points, summed as groups come, so that a fit reads the pairs' totals from a versions-sized matrix (in the
        # fit's own order), not from every group again.
        self._place = np.zeros(0, np.int64)  # per version id: its place in name order
        self._compared = np.zeros((0, 0))
        self._halves = np.zeros((0, 0))
        self.groups = 0
        self.games = 0

    def add(self, summaries: Iterable[GroupSummary]) -> None:
        by_size: dict[int, list[GroupSummary]] = {}
        for summary in summaries:
            if summary.games:  # a group without a game is no deal of the fit
                by_size.setdefault(len(summary.versions), []).append(summary)
        for k, rows in sorted(by_size.items()):
            ids = np.asarray([[self._id_of(name) for name in row.versions] for row in rows], np.int64).reshape(-1, k)
            size = self._sizes.setdefault(k, _Size(k))
            pairs = k * (k - 1) // 2
            compared = np.asarray([row.compared for row in rows], np.int64).reshape(-1, pairs)
            halves = np.asarray([row.halves for row in rows], np.int64).reshape(-1, pairs)
            size.ids.append(ids)
            size.compared.append(compared)
            size.halves.append(halves)
            columns = np.asarray([[row.seats, row.fools, row.places, row.draws] for row in rows], np.int64)
            self._grow()
            for column in range(4):
                np.add.at(self._columns[column], ids.ravel(), columns[:, column, :].ravel())
            lo, hi = _pair_columns(k)
            cells = (self._place[ids[:, lo]].ravel(), self._place[ids[:, hi]].ravel())
            np.add.at(self._compared, cells, compared.ravel())
            np.add.at(self._halves, cells, halves.ravel())
            self.groups += len(rows)
            self.games += sum(row.games for row in rows)

    def _id_of(self, name: str) -> int:
        found = self._id.get(name)
        if found is None:
            found = self._id[name] = len(self.names)
            self.names.append(name)
        return found

    def _grow(self) -> None:
        if not self._columns:
            self._columns = [np.zeros(0, np.int64) for _ in range(4)]
        missing = len(self.names) - len(self._columns[0])
        if missing > 0:
            self._columns = [np.concatenate((column, np.zeros(missing, np.int64))) for column in self._columns]
            # New versions (rare: a version's first group) take their places in name order, the pairs' rows with them.
            was = self._place
            self._place = np.empty(len(self.names), np.int64)
            self._place[np.argsort(np.asarray(self.names))] = np.arange(len(self.names))
            moved = np.ix_(self._place[:len(was)], self._place[:len(was)])
            for name in ("_compared", "_halves"):
                pairs = np.zeros((len(self.names), len(self.names)))
                pairs[moved] = getattr(self, name)[np.ix_(was, was)] if len(was) else 0.0
                setattr(self, name, pairs)

    def fit(self, *, start: Mapping[str, float] | None = None, solver: Solver = SOLVER,
            extra: Summaries | None = None) -> LeagueFit:
        """The fit of every group added (and those of ``extra``, groups not kept): ratings and sandwich errors
        equal to :func:`~referee.rating.bradley_terry.rate` over the groups' games (fool mode, the pool mean at
        1500, no bootstrap), to rounding. ``start``: ratings to start from, by name (natural log units)."""
        parts = [self] if extra is None else [self, extra]
        columns = {name: (_total(parts, name, 0), _total(parts, name, 1), _total(parts, name, 2),
                          _total(parts, name, 3)) for name in sorted({name for part in parts for name in part.names})}
        bots = tuple(name for name, (seats, *_) in columns.items() if seats > 0)
        n_games = sum(part.games for part in parts)
        if not bots:
            return LeagueFit(None, {}, {}, n_games)
        rank = {name: i for i, name in enumerate(bots)}
        rows = [_rows(size, part.names, rank) for part in parts for size in part._sizes.values()]
        totals = _pair_totals(parts, rank)
        warm = None if start is None else np.asarray([start.get(name, 0.0) for name in bots])
        result = fit_totals(totals, sum(part.groups for part in parts), lambda theta: _meat(rows, theta, totals),
                            solver=solver, start=warm)
        n = len(bots)
        points, counts = np.zeros((n, n)), np.zeros((n, n))
        counts[totals.lo, totals.hi] = counts[totals.hi, totals.lo] = totals.games
        points[totals.lo, totals.hi], points[totals.hi, totals.lo] = totals.points, totals.games - totals.points
        table = rating_table(bots, ("fool", n_games), (points, counts), result,
                             (Z95 * result.sd, f"pool mean = {DEFAULT_ELO:g}", f"{result.errors}, 1.96 sd"))
        theta = {name: float(elo - DEFAULT_ELO) / ELO_PER_NAT for name, elo in zip(bots, result.ratings, strict=True)}
        return LeagueFit(table, {name: columns[name] for name in bots}, theta, n_games)


def _total(parts: list[Summaries], name: str, column: int) -> int:
    return sum(int(part._columns[column][part._id[name]]) for part in parts if name in part._id)


class _Rows(NamedTuple):
    """The groups of one table size with their versions as indices of the fit (sorted names)."""

    k: int
    at: IntArray  # (groups, k): each version's index in the fit
    compared: IntArray
    halves: IntArray


def _rows(size: _Size, names: list[str], rank: Mapping[str, int]) -> _Rows:
    ids, compared, halves = size.arrays()
    to_rank = np.asarray([rank.get(name, -1) for name in names], np.int64)
    return _Rows(size.k, to_rank[ids] if len(ids) else ids, compared, halves)


@functools.cache
def _pair_columns(k: int) -> tuple[IntArray, IntArray]:
    """The columns of each pair of a group of ``k`` versions, the earlier-named first, in the order of a summary's
    pairs (:func:`itertools.combinations`)."""
    pairs = np.asarray(list(itertools.combinations(range(k), 2)), np.int64).reshape(-1, 2)
    return pairs[:, 0], pairs[:, 1]


def _pair_totals(parts: list[Summaries], rank: Mapping[str, int]) -> PairTotals:
    """Comparisons and points per pair ``lo < hi`` of the fit's versions (sorted names), in the order
    :func:`~referee.rating.bradley_terry.fit` sums them (by key ``lo * n + hi``), from each part's totals by pair: a
    pass over a versions-sized matrix, whatever the groups. A part whose versions are the fit's (a league's
    summaries, with no groups beside them) holds them in the fit's order already. Whole and half points: exact in
    any order."""
    n = len(rank)
    if len(parts) == 1 and len(parts[0].names) == n:
        games, halves = parts[0]._compared, parts[0]._halves
    else:
        games, halves = np.zeros((n, n)), np.zeros((n, n))
        for part in parts:
            ordered = sorted(part.names)
            at = np.ix_(*[np.asarray([rank[name] for name in ordered], np.int64)] * 2)
            games[at] += part._compared
            halves[at] += part._halves
    nz = np.flatnonzero(games > 0)  # the earlier-named of a pair is its row: nothing below the diagonal
    return PairTotals(nz // n, nz % n, games.ravel()[nz], 0.5 * halves.ravel()[nz], n)


def _meat(rows: list[_Rows], theta: FloatArray, totals: PairTotals) -> FloatArray:
    """``sum_c g_c g_c^T`` over the groups (natural log units), each group's ``g_c`` over its own k versions: the one
    pass over every group a fit makes (the sandwich's middle has no coarser exact statistic: module docstring). A
    pair's expected score is the same in every group: computed once per pair compared (``totals``), looked up by the
    groups. The matrix is symmetric: a cell per pair of a group's versions and one per version, then mirrored."""
    n = len(theta)
    expected = np.zeros(n * n)
    expected[totals.lo * n + totals.hi] = _expected(theta[totals.lo] - theta[totals.hi])
    cells: list[IntArray] = []
    weights: list[FloatArray] = []
    diagonal = np.zeros(n)
    for part in rows:
        if not len(part.at):
            continue
        lo, hi = _pair_columns(part.k)
        pair = part.at[:, lo] * n + part.at[:, hi]  # the earlier-named's row: a pair's key in the fit
        resid = 0.5 * part.halves - part.compared * expected[pair]
        g = np.zeros(part.at.shape)
        for slot, (a, b) in enumerate(zip(lo, hi, strict=True)):
            g[:, a] += resid[:, slot]
            g[:, b] -= resid[:, slot]
        diagonal += np.bincount(part.at.ravel(), (g * g).ravel(), minlength=n)
        cells.append(pair.ravel())
        weights.append((g[:, lo] * g[:, hi]).ravel())
    if not cells:
        return np.zeros((n, n))
    meat = np.bincount(np.concatenate(cells), np.concatenate(weights), minlength=n * n).astype(np.float64, copy=False)
    meat = meat.reshape(n, n)
    meat += meat.T  # numpy sees the overlap and reads a copy of the transpose
    meat[np.diag_indices(n)] += diagonal
    return meat
