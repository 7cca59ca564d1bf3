"""The league's matchmaker: the next deal group as a pure function of the league's state and settings.

A *deal group* is one deal played at every cyclic rotation of one table: k games for k seats, every version in
every seat once, so the luck of the cards cancels. :func:`next_group` forms one from a :class:`LeagueState`.

**Fair means equal games per version, whatever its speed.** Each version's ``served`` counts the games issued to
it (at issue, not when played, so a slow version's games in flight count already). A version's first
``min_games`` (30) issued games are its *entry*: it is anchored before anyone else and is not charged for them;
it then starts about the floor (below). After its entry every version is held within ``max_lead`` games
(default: the largest table size) of the league's *floor*, the lowest standing of the active versions past their
entry: a version ``max_lead`` or more above it anchors no table, and sits at one only when it cannot be filled
without it (at most one group past the lead). A slow version keeps up by sitting in up to ``max_in_flight`` (4)
groups at once; when even that is not enough, the fast versions wait (:func:`next_group` returns None and a
worker idles) rather than pull ahead, unless nothing is in flight (then no limit holds: the league never
stalls). A version that comes back (reinstated) stands at ``top - span`` if it is further behind (``top``: the
most served of any version past its entry; ``span``: the lead and two groups of the largest size): it catches
up that much, not its whole absence; one ending its entry starts at ``top - lead - max(sizes)``.

1. *Eligible*: active versions in fewer than ``max_in_flight`` groups in flight, within the lead (or in entry)
   to anchor, within a group past it to fill a table (:class:`_Field`).
2. *Anchor*: versions in entry first, fewest issued games first; then the lowest standing; ties: idle longest
   (``last_seated``), then the seeded draw. An anchor with whom no size can be filled gives way to the next.
3. *Size*: among the sizes that can be filled around the anchor (k-1 eligible others, no two versions of one bot
   nor two bots of one author: versions that know each other by name could collude), the size the anchor is most
   short of: each version's groups are split over ``sizes`` as configured (a repeated size is weighted), so every
   version plays every size in the same proportion and pooling sizes on one board biases no comparison. Ties:
   the size the league is most short of (so every size is played from the first groups), then the seeded draw.
   An anchor two groups short of a size it cannot fill now gives way to the next; a version two groups over its
   share of the size is not seated; a version one group over only fills a table no one else can.
4. *Window*: the others whose rating lies within ``max(window_min, window_sigmas * error)`` Elo of the anchor's
   (100 Elo, 2.0; ``error`` is the anchor's standard error, infinite before it is rated, so a newcomer's
   window holds everyone), widened by ``widen_step`` (50) Elo at a time until a table of k can be filled.
5. *Seats* (:mod:`.seats`): the window's ``max_pool`` (8) cheapest, lowest standing candidates (ties: those that
   met the anchor least, then idle longest; more if they cannot fill the table) are searched exhaustively: of
   their fillable (k-1)-sets, the one with the fewest games past the lead, then the fewest a group over their
   share of the size, then the fewest meetings at size k summed over every pair at the table (one meeting per
   group, counted when the group is issued), then at every size, then the lowest standing, then the longest
   idle, then a seeded draw. At most C(8, 4) = 70 sets of up to 15 pairs: about 1.2 ms of CPU a call at 20-200
   versions (bench/bench_matchmaker.py).
6. *Seeds*: the group's ``number`` counts every group issued; its deal seed is
   ``derive_seed(seed, "league", "deal", number)`` (SHA-256, :mod:`referee.engine.rng`) and every draw above,
   and the seat order of rotation 0 (a shuffle), comes from ``derive_seed(seed, "league", "draw", number)``.
   A state gives the same group on every machine; the number only grows and :func:`issue` refuses a stale
   group, so no deal seed is issued twice and the k rotations of a deal are always issued, and in flight,
   together.

Everything the matchmaker counts (served, issued, groups per size, meetings, last seated) follows from the
groups issued, in order, through :func:`issue`: :func:`replay` rebuilds it after a restart exactly as it was.
Ratings are on one scale: each version's rating and error come from one board. :func:`issue`, :func:`finish`,
:func:`rerate`, :func:`with_versions` and :func:`replay` are the one way the simulation and the daemon change
the state.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace

from protocol.rules import MAX_PLAYERS, MIN_PLAYERS
from referee.engine.rng import SeededRng, derive_seed
from referee.league.seats import Pair, Seating, best_set, largest_table, pair, pool_of, rating_window

NEVER = -math.inf  # ``last_seated`` of a version never seated: idle longer than any other

__all__ = ["NEVER", "Group", "LeagueState", "MatchSettings", "Pair", "VersionState", "finish", "issue",
           "league_floor", "next_group", "pair", "replay", "rerate", "standing", "top_served", "with_versions"]


@dataclass(frozen=True)
class VersionState:
    """One version of one bot as the matchmaker sees it."""

    id: str  # unique in the league, e.g. "alice/shark@3"
    bot: str  # the bot it is a version of: no two versions of one bot share a table
    author: str  # no two bots of one author share a table
    rating: float = 1500.0  # Elo on the league's board
    error: float = math.inf  # the rating's standard error in Elo (the board's sd); infinite while unrated
    games: int = 0  # rated games, of every table size (the board's; the matchmaker counts ``issued``)
    last_seated: float = NEVER  # when its latest group was issued: a time or a sequence number, never falling
    active: bool = True  # retired versions keep their record but are never seated
    issued: int = 0  # games issued to it: complete, void or in flight (its entry ends at ``min_games``)
    served: int = 0  # its place in the fair share: games issued since its entry, lifted when it comes back
    by_size: tuple[int, ...] = ()  # groups issued to it by table size (index k; missing sizes: none)

    def groups_at(self, k: int) -> int:
        return self.by_size[k] if k < len(self.by_size) else 0


@dataclass(frozen=True)
class MatchSettings:
    """How groups are formed (module docstring)."""

    sizes: tuple[int, ...] = (2, 3, 4, 5, 6)  # table sizes, each version's groups split as listed (repeat to weight)
    min_games: int = 30  # games issued to a version as its entry: anchored first, not charged to its share
    window_min: float = 100.0  # Elo: the narrowest window around the anchor's rating
    window_sigmas: float = 2.0  # the window is at least this many of the anchor's standard errors
    widen_step: float = 50.0  # Elo added to the window until it can fill the table
    max_in_flight: int = 4  # groups in flight a version may sit in at once: how a slow version keeps up
    max_pool: int = 8  # the window's lowest standing candidates searched for the seats
    max_lead: int | None = None  # games a version may stand above the league's floor and still be seated;
    # None: the largest size (one group of it)

    def __post_init__(self) -> None:
        if not self.sizes or not all(MIN_PLAYERS <= k <= MAX_PLAYERS for k in self.sizes):
            raise ValueError(f"table sizes must be {MIN_PLAYERS}-{MAX_PLAYERS}, not {self.sizes}")
        if self.min_games < 0 or self.window_min < 0 or self.window_sigmas < 0 or self.widen_step <= 0:
            raise ValueError("min_games, window_min and window_sigmas must be >= 0 and widen_step > 0")
        if self.max_in_flight < 1 or self.max_pool < 1 or (self.max_lead is not None and self.max_lead < 1):
            raise ValueError("max_in_flight, max_pool and max_lead must be >= 1")

    @property
    def lead(self) -> int:
        """``max_lead``, or the largest size when it is None."""
        return max(self.sizes) if self.max_lead is None else self.max_lead

    @property
    def span(self) -> int:
        """How far below the top a version may stand: the lead, and two groups of the largest size (a version
        seated to fill a table may be one group past the lead, and then take a group)."""
        return self.lead + 2 * max(self.sizes)


@dataclass(frozen=True)
class Group:
    """One deal at every cyclic rotation of one table: what the league plays, issued whole."""

    number: int  # the league's groups issued before this one
    table: tuple[str, ...]  # version ids in seat order for rotation 0
    deal_seed: int
    anchor: str  # the version the table was formed around (logs say why a table was drawn)

    @property
    def size(self) -> int:
        return len(self.table)

    def seats(self, rotation: int) -> tuple[str, ...]:
        """Seat order of rotation r, ``table[r:] + table[:r]``: over the k rotations each version sits once in
        each seat."""
        return (*self.table[rotation:], *self.table[:rotation])

    def pairs(self) -> Iterator[Pair]:
        return (pair(a, b) for a, b in itertools.combinations(self.table, 2))


@dataclass(frozen=True)
class LeagueState:
    """Everything the matchmaker reads. Change it only through :func:`issue`, :func:`finish`, :func:`rerate`,
    :func:`with_versions` and :func:`replay`, which return a new state (``meetings`` is never changed in place)."""

    seed: int  # the league's seed: deal seeds and draws derive from it
    versions: tuple[VersionState, ...] = ()
    meetings: Mapping[Pair, int] = field(default_factory=dict)  # groups issued with both at the table
    #: size k -> groups issued with both at a table of k: seats balance these first, so that two versions meet
    #: the same others at each size (a bot's strength may differ by size: pooled on one board, unbalanced
    #: opponents per size would separate two versions of identical code)
    sized_meetings: Mapping[int, Mapping[Pair, int]] = field(default_factory=dict)
    in_flight: tuple[Group, ...] = ()  # issued, not finished
    issued: int = 0  # groups issued so far: the next group's number

    def __post_init__(self) -> None:
        ids = [v.id for v in self.versions]
        if len(set(ids)) != len(ids):
            raise ValueError(f"version ids repeat: {sorted(i for i, n in Counter(ids).items() if n > 1)}")

    def version(self, version_id: str) -> VersionState:
        for v in self.versions:
            if v.id == version_id:
                return v
        raise KeyError(version_id)


# ---------------------------------------------------------------------------- the fair share


def top_served(versions: Iterable[VersionState], min_games: int) -> int:
    """The most served of any version past its entry (0 before any is): retired versions count too, so that a
    replay of the groups, which cannot know who was active when, reaches the same numbers."""
    return max((v.served for v in versions if v.issued >= min_games), default=0)


def standing(version: VersionState, top: int, settings: MatchSettings) -> int:
    """A version's place in the fair share: its served, lifted to ``top - span`` (a version that was away, or
    has just ended its entry, catches up that far and no further)."""
    return max(version.served, top - settings.span)


def league_floor(state: LeagueState, settings: MatchSettings, top: int) -> int | None:
    """The lowest standing of the active versions past their entry (busy ones too: their games in flight are
    served already), or None when there are none."""
    return min((standing(v, top, settings) for v in state.versions if v.active and v.issued >= settings.min_games),
               default=None)


# ---------------------------------------------------------------------------- the next group


def next_group(state: LeagueState, settings: MatchSettings) -> Group | None:
    """The next deal group of the league, or None when none may be formed now: every eligible version shares a
    bot or an author with the rest, or the versions that could fill a table are in flight or ahead by the lead
    (wait for a group to finish)."""
    rng = SeededRng(derive_seed(state.seed, "league", "draw", state.issued))
    busy = Counter(v for group in state.in_flight for v in group.table)
    free = [v for v in state.versions if v.active and busy[v.id] < settings.max_in_flight]
    top = top_served(state.versions, settings.min_games)
    floor = league_floor(state, settings, top)
    ahead = {} if floor is None else {  # games past the lead (none while no version is past its entry)
        v.id: max(0, standing(v, top, settings) - (floor + settings.lead) + 1) for v in free
        if v.issued >= settings.min_games}
    active = [v for v in state.versions if v.active]
    field = _Field(anchors=[v for v in free if not ahead.get(v.id)],
                   partners=[v for v in free if ahead.get(v.id, 0) <= max(settings.sizes)], ahead=ahead,
                   active=active, sizes=_possible(settings.sizes, active))
    group = _form(state, settings, field, top, rng)
    if group is None and not state.in_flight:  # nothing in flight to wait for: no limit
        group = _form(state, settings, replace(field, anchors=free, partners=free, waits=False), top, rng)
    return group


def _possible(sizes: Sequence[int], versions: Sequence[VersionState]) -> tuple[int, ...]:
    """``sizes`` (repeats kept) less those ``versions`` could not fill even all free: the shares are of these (a
    size the field cannot fill yet is owed to nobody)."""
    most = largest_table(versions)
    return tuple(k for k in sizes if k <= most)


@dataclass(frozen=True)
class _Field:
    """Who may sit now: ``anchors`` (within the lead), ``partners`` (at most one group past it, by ``ahead``
    games: they sit only when the table cannot be filled without them); an anchor two groups short of a size that
    cannot be filled now ``waits`` (gives way to the next anchor) rather than drift further from its share, and a
    partner two groups over its share of the size waits for another; with nothing in flight nobody waits."""

    anchors: Sequence[VersionState]
    partners: Sequence[VersionState]
    ahead: Mapping[str, int]
    active: Sequence[VersionState]  # every active version, free or not
    sizes: tuple[int, ...]  # the configured sizes the active versions can fill (:func:`_possible`)
    waits: bool = True


def _form(state: LeagueState, settings: MatchSettings, field: _Field, top: int, rng: SeededRng) -> Group | None:
    """The group around the first of the field's anchors (in anchor order) with whom a size can be filled from
    its partners (:class:`_Field`)."""
    standings = {v.id: standing(v, top, settings) for v in (*field.partners, *field.anchors)}
    seats: Counter[int] = Counter()
    for v in state.versions:
        seats.update({k: n for k, n in enumerate(v.by_size) if n})
    played = {k: n // k for k, n in seats.items()}  # groups issued per size: a size-k group seats k versions
    for anchor in _anchors(field.anchors, standings, settings.min_games, rng):
        others = [v for v in field.partners if v.bot != anchor.bot and v.author != anchor.author]
        most = largest_table(others) + 1
        sizes = sorted({k for k in field.sizes if k <= most})
        if not sizes:
            continue
        if field.waits:  # its shares are of the sizes it could sit at were everyone free
            own = _possible(field.sizes, [anchor, *(v for v in field.active if v.bot != anchor.bot
                                                    and v.author != anchor.author)])
            if _short(anchor, own, most):
                continue
        k = _size_for(anchor, sizes, field.sizes, played, rng)
        if field.waits:  # a version two groups over its share of size k waits for another size
            kept = [v for v in others if _excess(v, k, field.sizes) < 2]
            if largest_table(kept) < k - 1:
                continue
            others = kept
        window = rating_window(anchor, others, k, settings)
        cost = {v.id: (field.ahead.get(v.id, 0), int(_is_over(v, k, field.sizes))) for v in window}
        seating = Seating(anchor, k, state.meetings, state.sized_meetings.get(k, {}), standings, cost)
        table = [anchor.id, *(v.id for v in best_set(seating, pool_of(seating, window, settings.max_pool), rng))]
        rng.shuffle(table)
        deal_seed = derive_seed(state.seed, "league", "deal", state.issued)
        return Group(state.issued, tuple(table), deal_seed, anchor.id)
    return None


def _anchors(eligible: Sequence[VersionState], standings: Mapping[str, int], min_games: int,
             rng: SeededRng) -> Iterator[VersionState]:
    """Eligible versions in anchor order: those in entry, fewest issued games first, then the lowest standing;
    ties: idle longest, then the seeded draw."""
    def key(v: VersionState) -> tuple[float, ...]:
        if v.issued < min_games:
            return (0, v.issued, v.last_seated)
        return (1, standings[v.id], v.last_seated)

    rest = list(eligible)
    while rest:
        best = min(key(v) for v in rest)
        tied = [v for v in rest if key(v) == best]
        chosen = tied[rng.randbelow(len(tied))] if len(tied) > 1 else tied[0]
        yield chosen
        rest.remove(chosen)


def _size_for(anchor: VersionState, fillable: Sequence[int], sizes: Sequence[int], played: Mapping[int, int],
              rng: SeededRng) -> int:
    """The fillable size the anchor is most short of: its groups split over ``sizes`` as listed (after this
    group, size k should hold ``share_k * (groups + 1)`` of them). Ties (a new anchor is short of every size) go
    to the size the league is most short of, ``played`` (groups per size) against ``share_k / k`` of its groups
    (each of a size-k group's k versions counts it: equal shares per version mean fewer groups of the larger
    sizes), so that every size is played from the first groups on; then the seeded draw."""
    weight = Counter(sizes)
    total = sum(anchor.groups_at(k) for k in weight) + 1
    need = {k: weight[k] * total / len(sizes) - anchor.groups_at(k) for k in fillable}
    per_group = {k: weight[k] / k for k in weight}
    groups = sum(played.get(k, 0) for k in weight) + 1
    league_need = {k: per_group[k] / sum(per_group.values()) * groups - played.get(k, 0) for k in fillable}
    key = {k: (round(need[k], 9), round(league_need[k], 9)) for k in fillable}
    most = max(key.values())
    tied = [k for k in fillable if key[k] == most]
    return tied[rng.randbelow(len(tied))] if len(tied) > 1 else tied[0]


def _excess(version: VersionState, k: int, sizes: Sequence[int]) -> float:
    """How many groups at size k ``version`` would be over its share with one more (negative: short)."""
    total = sum(version.groups_at(size) for size in set(sizes)) + 1
    return version.groups_at(k) + 1 - sizes.count(k) * total / len(sizes)


def _short(anchor: VersionState, sizes: Sequence[int], most: int) -> bool:
    """Whether the anchor is two groups or more short of a size larger than ``most`` (which cannot be filled
    around it now)."""
    return any(_excess(anchor, k, sizes) <= -1 for k in set(sizes) if k > most)


def _is_over(version: VersionState, k: int, sizes: Sequence[int]) -> bool:
    """Whether one more group at size k would put ``version`` a whole group over its share: it takes a seat there
    only when no one else can, so that its share follows the configured one whoever anchors its tables."""
    return _excess(version, k, sizes) > 1


# ---------------------------------------------------------------------------- changing the state


def _seated(version: VersionState, k: int, now: float, top: int, settings: MatchSettings) -> VersionState:
    """``version`` once seated at a table of k: k more games issued, one more group at size k and, past its
    entry, k more served from its standing. In entry it is not charged: it stands where it will start, a group
    of the largest size past the lead below the top, about the floor (the versions past their entry span at most
    the lead and two groups: it then catches up or waits at most a group)."""
    if version.issued < settings.min_games:
        served = max(version.served, top - settings.lead - max(settings.sizes))
    else:
        served = standing(version, top, settings) + k
    by_size = list(version.by_size) + [0] * max(0, k + 1 - len(version.by_size))
    by_size[k] += 1
    return replace(version, last_seated=now, issued=version.issued + k, served=served, by_size=tuple(by_size))


def issue(state: LeagueState, group: Group, now: float, settings: MatchSettings) -> LeagueState:
    """The state once ``group`` is issued at ``now`` (a time or a sequence number, never falling): its versions
    were last seated now and are charged its games (:func:`standing`), every pair at its table met once more,
    it is in flight and the counter moves on.

    :raises ValueError: ``group`` is not the state's next group (stale or from another state: issuing it would
        repeat a deal seed), or names a version the league does not hold.
    """
    if group.number != state.issued:
        raise ValueError(f"group {group.number} is stale: the league has issued {state.issued} groups")
    seated = set(group.table)
    missing = seated - {v.id for v in state.versions}
    if missing:
        raise ValueError(f"group {group.number} seats unknown versions {sorted(missing)}")
    meetings = dict(state.meetings)
    at_k = dict(state.sized_meetings.get(group.size, {}))
    for key in group.pairs():
        meetings[key] = meetings.get(key, 0) + 1
        at_k[key] = at_k.get(key, 0) + 1
    sized = {**state.sized_meetings, group.size: at_k}
    top = top_served(state.versions, settings.min_games)
    versions = tuple(_seated(v, group.size, now, top, settings) if v.id in seated else v for v in state.versions)
    return replace(state, versions=versions, meetings=meetings, sized_meetings=sized,
                   in_flight=(*state.in_flight, group),
                   issued=group.number + 1)


def replay(state: LeagueState, groups: Iterable[tuple[Group, bool]], settings: MatchSettings) -> LeagueState:
    """``state`` after ``groups`` (each with whether it is still open, in the order issued, numbered on from
    ``state.issued``), each issued at its number as :func:`issue` would: a restart's state is the state the
    league had. One pass with the state's tuples built once (a league of a million groups)."""
    versions = {v.id: v for v in state.versions}
    meetings: Counter[Pair] = Counter(state.meetings)
    sized = {k: Counter(at_k) for k, at_k in state.sized_meetings.items()}
    in_flight = list(state.in_flight)
    issued = state.issued
    top = top_served(versions.values(), settings.min_games)
    for group, is_open in groups:
        if group.number != issued:
            raise ValueError(f"the league's groups skip from {issued - 1} to {group.number}")
        issued += 1
        meetings.update(group.pairs())
        sized.setdefault(group.size, Counter()).update(group.pairs())
        at = top
        for vid in group.table:
            seated = versions[vid] = _seated(versions[vid], group.size, group.number, at, settings)
            if seated.issued >= settings.min_games:
                top = max(top, seated.served)
        if is_open:
            in_flight.append(group)
    return replace(state, versions=tuple(versions.values()), meetings=dict(meetings),
                   sized_meetings={k: dict(at_k) for k, at_k in sized.items()},
                   in_flight=tuple(in_flight),
                   issued=issued)


def finish(state: LeagueState, group: Group, games: int | None = None) -> LeagueState:
    """The state once ``group`` has been played: no longer in flight, and each of its versions has ``games``
    more rated games (default: all k; pass fewer when games were void). Its served games stay served: a void
    group is rare (a version quarantined meanwhile) and its seats are not owed again.

    :raises ValueError: ``group`` is not in flight.
    """
    if group not in state.in_flight:
        raise ValueError(f"group {group.number} is not in flight")
    played = group.size if games is None else games
    seated = set(group.table)
    versions = tuple(replace(v, games=v.games + played) if v.id in seated else v for v in state.versions)
    return replace(state, versions=versions, in_flight=tuple(g for g in state.in_flight if g != group))


def rerate(state: LeagueState, board: Mapping[str, tuple[float, float]]) -> LeagueState:
    """The state with the board's ``{version id: (rating, standard error)}``; versions not on it keep theirs."""
    versions = tuple(replace(v, rating=board[v.id][0], error=board[v.id][1]) if v.id in board else v
                     for v in state.versions)
    return replace(state, versions=versions)


def with_versions(state: LeagueState, *versions: VersionState) -> LeagueState:
    """The state with ``versions`` added, or replacing the versions of the same id (to retire one, say)."""
    new = {v.id: v for v in versions}
    kept = tuple(new.pop(v.id, v) for v in state.versions)
    return replace(state, versions=(*kept, *new.values()))
