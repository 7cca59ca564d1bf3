"""Benchmark data: a league database as the arena's web server reads it, at a given size, made once and kept.

Run by hand from the project root::

    python bench/arena_data.py [--versions 1000] [--games 1000000] [--history 50] [--cache /tmp/durak-bench]

It prints the database's path, the time it took to make (0 when it was reused) and its size. The database is
``arena-v{versions}-g{games}-h{history}-s{seed}.db`` in the cache folder, reused when a finished one is there
(a ``.done`` file beside it says so; ``--fresh`` makes it again).
A database made or reused is migrated to this checkout's schema, and every public game's replay view (schema 12)
made as the daemon's publisher makes it, in ``--jobs`` processes (about 7 ms of CPU a game), so that a bench's
replays are what a running league serves.

What it holds: ``--versions`` versions of bots (1-3 versions each) owned by authors (1-3 bots each), a few retired
or quarantined; ``--games`` games in complete deal groups of 2-6 versions (bench/bench_league.py's
:func:`deal_groups`), each stored as the daemon stores it (:class:`StoredGame`: the result record JSON, its outcome
text, a valid replay: a real game's deal, events and result, which the replay viewer replays; stderr and move times
compressed); the board and ``--history`` rating points per version, written with :meth:`ArenaStore.save_board` as
the daemon's refits write them. The games are dealt and ended by the engine: real games between random players, a
few hundred per table size, are the templates the synthetic games take their deal, events and result from; one game
in 200 is a template forfeited by its fool (a timeout) part way through.

The games and groups go in with executemany, a transaction per chunk and ``PRAGMA synchronous=OFF`` on this
bench's own connection: bench-only SQL over the store's public schema (GAME_COLUMNS), never the store's way.
bench/bench_web.py imports :func:`group_games` and :func:`board_rows` to stand in for the daemon.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import multiprocessing
import random
import sqlite3
import sys
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import msgspec

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_league import SyntheticGroup, deal_groups  # noqa: E402
from protocol.cards import CARD_NAMES  # noqa: E402
from protocol.events import AnyEvent  # noqa: E402
from protocol.records import SeatTimes, StderrChunk, Verdict  # noqa: E402
from protocol.rules import Rules  # noqa: E402
from protocol.views import GameResult  # noqa: E402
from referee.engine import new_game  # noqa: E402
from referee.engine.rng import SeededRng, derive_seed  # noqa: E402
from referee.results.arena_store import ArenaStore, BoardRow  # noqa: E402
from referee.results.league_store import VersionRow  # noqa: E402
from referee.results.record import GameRecord  # noqa: E402
from referee.results.replay import replay_lines  # noqa: E402
from referee.results.rows import GAME_COLUMNS, StoredGame  # noqa: E402

CHUNK = 20_000  # games per transaction
TIMEOUT = "no reply within 1000 ms"
TEMPLATES_PER_SIZE = 300
SPAN = timedelta(days=30)  # the synthetic games' finishing times are spread over this
CONFIG = 'name = "bench arena"\nplayers = [2, 3, 4, 5, 6]\n[league]\nrefit_seconds = 30.0\n'


@dataclass(frozen=True)
class Params:
    versions: int = 1000
    games: int = 1_000_000
    history: int = 50
    seed: int = 1

    @property
    def file_name(self) -> str:
        return f"arena-v{self.versions}-g{self.games}-h{self.history}-s{self.seed}.db"


@dataclass(frozen=True)
class Template:
    """A real game's deal and result (seats as indices): a synthetic game at that table size takes them."""

    dealer: int
    deck: list[str]
    result: GameResult
    actions: int
    events: list[AnyEvent]
    move_us: list[list[int]]  # per seat, each decision's time: a few hundred microseconds, to 50
    times: list[SeatTimes]


@dataclass
class Templates:
    """Real games by table size and fool seat (None: a draw), and games forfeited by that seat."""

    by_fool: dict[tuple[int, int | None], list[Template]] = field(default_factory=dict)
    forfeits: dict[tuple[int, int], list[Template]] = field(default_factory=dict)

    @classmethod
    def play(cls, seed: int, per_size: int = TEMPLATES_PER_SIZE) -> Templates:
        rules, rng, made = Rules(), random.Random(seed), cls()
        choose = rng.random
        for size in range(2, 7):
            for i in range(per_size):
                forfeit = i % 10 == 0  # a tenth of the templates: forfeited by a seat part way through
                game = new_game(rules, size, SeededRng(derive_seed(seed, "arena", size, i)))
                stop = int(choose() * 40) if forfeit else -1
                while game.result is None and stop != 0:
                    legal = game.legal_actions()
                    game.apply_unchecked(legal[int(choose() * len(legal))])
                    stop -= 1
                if game.result is None:
                    assert game.to_move is not None
                    game.forfeit(game.to_move, "timeout", TIMEOUT)
                assert game.result is not None
                fool = game.result.fools[0] if game.result.fools else None
                move_us = [[50 * round(rng.lognormvariate(2, 0.6)) for _ in range(moves)]
                           for moves in _moves(game.actions, size)]
                template = Template(game.dealer, [CARD_NAMES[c] for c in game.deck], game.result, game.actions,
                                    list(game.events), move_us, [_seat_times(us) for us in move_us])
                if game.result.end == "forfeit":
                    assert fool is not None
                    made.forfeits.setdefault((size, fool), []).append(template)
                else:
                    made.by_fool.setdefault((size, fool), []).append(template)
        return made

    def pick(self, rng: random.Random, size: int, fool: int) -> Template:
        """A game at ``size`` seats whose fool sat at ``fool`` (one in 50: a draw, where the size has one)."""
        if rng.random() < 0.02 and (size, None) in self.by_fool:
            return rng.choice(self.by_fool[size, None])
        return rng.choice(self.by_fool.get((size, fool)) or self.by_fool[size, next(
            f for s, f in self.by_fool if s == size and f is not None)])


def stored_game(templates: Templates, rng: random.Random, number: int, rotation: int, seats: list[str],
                fool: str) -> StoredGame:
    """Rotation ``rotation`` of group ``number`` at ``seats`` as the daemon stores it; one in 200 ends by a
    verdict (the fool timed out)."""
    template = templates.pick(rng, len(seats), seats.index(fool))
    if rng.random() < 0.005 and (forfeits := templates.forfeits.get((len(seats), seats.index(fool)))):
        template = rng.choice(forfeits)
    result, verdicts = template.result, []
    if result.forfeit_seat is not None:
        verdicts = [Verdict(seat=result.forfeit_seat, bot=seats[result.forfeit_seat], kind="timeout", reason=TIMEOUT)]
    move_us, times = template.move_us, template.times
    stderr = [[StderrChunk(0, f"{name} ready\n")] if rng.random() < 0.1 else [] for name in seats]
    record = GameRecord(game=f"g{number}|r{rotation}|g1", deal=f"g{number}", names=list(seats), rules=Rules(),
                        dealer=template.dealer, deck=template.deck, result=result, actions=template.actions,
                        verdicts=verdicts, times=list(times), events=template.events, strikes=[0] * len(seats),
                        stderr=stderr,
                        move_us=move_us, bot_seeds=[rng.getrandbits(63) for _ in seats])
    return StoredGame(slot_key=f"g{number}|r{rotation}", game_index=0, deal_seed=derive_seed(number, "deal"),
                      rotation=rotation, record=record.to_result_record(), replay=replay_lines(record),
                      stderr=stderr, move_us=move_us, bot_files=[_digest(name) for name in seats])


def _moves(actions: int, seats: int) -> list[int]:
    """A game's decisions shared out among its seats."""
    return [actions // seats + (seat < actions % seats) for seat in range(seats)]


def _seat_times(move_us: list[int]) -> SeatTimes:
    ordered = sorted(move_us) or [0]
    return SeatTimes(moves=len(move_us), median_ms=ordered[len(ordered) // 2] / 1000, max_ms=ordered[-1] / 1000)


@functools.cache
def _digest(name: str) -> str:
    """A version's files digest, as ``bot_files`` holds it."""
    return hashlib.sha256(name.encode()).hexdigest()


def group_games(templates: Templates, rng: random.Random, group: SyntheticGroup) -> list[StoredGame]:
    """A synthetic group's games, one per rotation."""
    return [stored_game(templates, rng, group.number, rotation, seats, fool)
            for rotation, (seats, fool) in enumerate(zip(group.rotations(), group.fools, strict=True))]


def roster(rng: random.Random, versions: int) -> list[VersionRow]:
    """``versions`` versions: authors own 1-3 bots, bots have 1-3 versions."""
    rows: list[VersionRow] = []
    author, bot = 0, 0
    while len(rows) < versions:
        for _ in range(rng.randint(1, 3)):
            for number in range(1, rng.randint(1, 3) + 1):
                if len(rows) < versions:
                    rows.append(VersionRow(name=f"bot{bot:04d}@{number}", bot=f"bot{bot:04d}", number=number,
                                           author=f"author{author:04d}", command=["python3", "bot.py"], env={},
                                           dir=f"store/bot{bot:04d}/{number}", sha256=f"{rng.getrandbits(256):064x}"))
            bot += 1
        author += 1
    return rows


def add_versions(store: ArenaStore, league_id: int, rng: random.Random, versions: list[VersionRow]) -> None:
    """The authors and versions through the store; one version in 20 retired, one in 50 quarantined."""
    for author in sorted({v.author for v in versions}):
        store.add_author(author, f"{rng.getrandbits(256):064x}")
    for version in versions:
        store.add_version(league_id, version)
        if rng.random() < 0.05:
            store.set_version(league_id, version.name, retired=True)
        elif rng.random() < 0.02:
            store.set_version(league_id, version.name, quarantined="crashed in 10 games in a row")


def bulk_connection(path: Path) -> sqlite3.Connection:
    """BENCH-ONLY: a second connection for bulk inserts, with synchronous=OFF (never the store's way)."""
    connection = sqlite3.connect(path, isolation_level=None)
    connection.execute("PRAGMA synchronous=OFF")
    connection.execute("PRAGMA busy_timeout=5000")
    return connection


def insert_chunk(connection: sqlite3.Connection, group_rows: list[tuple[object, ...]],
                 game_rows: list[tuple[object, ...]]) -> None:
    """BENCH-ONLY: one transaction of complete groups and their games, over the store's public schema."""
    marks = ", ".join("?" * (len(GAME_COLUMNS.split(", ")) + 1))
    connection.execute("BEGIN")
    connection.executemany("INSERT INTO league_groups (tournament_id, number, deal_key, deal_seed, seats, anchor, "
                           "issued, status, finished) VALUES (?, ?, ?, ?, ?, ?, ?, 'complete', ?)", group_rows)
    connection.executemany(f"INSERT INTO games ({GAME_COLUMNS}, number) VALUES ({marks})", game_rows)
    # complete from the start, so no group's update queues its games' replay views (schema 12): queued here
    connection.execute("INSERT OR IGNORE INTO replay_views (game_id) SELECT id FROM games WHERE id > "
                       "(SELECT COALESCE(MAX(game_id), 0) FROM replay_views)")
    connection.execute("COMMIT")


def add_games(path: Path, league_id: int, params: Params, names: list[str], strength: dict[str, float],
              rng: random.Random) -> dict[str, int]:
    """Every group and game, in chunks; returns each version's games."""
    templates = Templates.play(params.seed)
    began = datetime.now(UTC) - SPAN
    played = dict.fromkeys(names, 0)
    connection = bulk_connection(path)
    group_rows: list[tuple[object, ...]] = []
    game_rows: list[tuple[object, ...]] = []
    stored = 0
    for group in deal_groups(rng, names, strength, params.games):
        when = (began + SPAN * (stored / params.games)).isoformat(timespec="seconds")
        stored += len(group.table)
        group_rows.append((league_id, group.number, f"g{group.number}", derive_seed(group.number, "deal"),
                           msgspec.json.encode(group.table).decode(), group.table[0], when, when))
        for game in group_games(templates, rng, group):
            game_rows.append(game.to_values(league_id, when))
        for name in group.table:
            played[name] += len(group.table)
        if len(game_rows) >= CHUNK:
            insert_chunk(connection, group_rows, number_rows(connection, league_id, game_rows))
            group_rows, game_rows = [], []
    if game_rows:
        insert_chunk(connection, group_rows, number_rows(connection, league_id, game_rows))
    connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    connection.close()
    return played


def number_rows(connection: sqlite3.Connection, league_id: int,
                rows: list[tuple[object, ...]]) -> list[tuple[object, ...]]:
    """BENCH-ONLY: the rows with the next game numbers after them."""
    last = connection.execute("SELECT COALESCE(MAX(number), 0) FROM games WHERE tournament_id = ?",
                              (league_id,)).fetchone()[0]
    return [(*row, last + i) for i, row in enumerate(rows, 1)]


def board_rows(elo: dict[str, float], games: dict[str, int], fitted: str) -> list[BoardRow]:
    """A board as a refit leaves it: best first, ``sd`` shrinking with games (None under 30 games)."""
    ranked = sorted(elo, key=lambda name: -elo[name])
    return [BoardRow(version=name, rank=rank, elo=round(elo[name], 1),
                     sd=round(400 / games[name] ** 0.5, 1) if games[name] >= 30 else None, games=games[name],
                     fitted=fitted) for rank, name in enumerate(ranked, 1)]


def add_board(store: ArenaStore, league_id: int, params: Params, strength: dict[str, float],
              played: dict[str, int], rng: random.Random) -> None:
    """``history`` refits through :meth:`ArenaStore.save_board`, each version's games rising to its total and its
    rating settling on its strength; the last is the board."""
    began = datetime.now(UTC) - SPAN
    for point in range(1, params.history + 1):
        share = point / params.history
        elo = {name: 1500 + 200 * s + rng.gauss(0, 150 * (1 - share)) for name, s in strength.items()}
        games = {name: max(1, round(n * share)) for name, n in played.items()}
        store.save_board(league_id, board_rows(elo, games, (began + SPAN * share).isoformat(timespec="seconds")))


def make(path: Path, params: Params) -> None:
    rng = random.Random(params.seed)
    path.unlink(missing_ok=True)
    with ArenaStore(path) as store:
        league = store.create_league("bench arena", "league.toml", CONFIG, "bench", params.seed)
        versions = roster(rng, params.versions)
        add_versions(store, league.id, rng, versions)
    names = [v.name for v in versions]
    strength = {name: rng.gauss(0, 1) for name in names}
    played = add_games(path, league.id, params, names, strength, rng)
    with ArenaStore(path) as store:
        add_board(store, league.id, params, strength, played, rng)


def database(cache: Path, params: Params, *, fresh: bool = False, jobs: int = 2) -> tuple[Path, float]:
    """The database of ``params`` in ``cache`` (made unless a finished one is there, then migrated to this
    checkout's schema with every public game's replay view made) and the seconds making took."""
    cache.mkdir(parents=True, exist_ok=True)
    path = cache / params.file_name
    done = path.with_suffix(".done")
    start = time.perf_counter()
    if not (done.exists() and path.exists() and not fresh):
        done.unlink(missing_ok=True)
        make(path, params)
        done.write_text(f"{time.perf_counter() - start:.1f}\n")
    made = make_views(path, jobs)
    return path, time.perf_counter() - start if made or not done.exists() else 0.0


def make_views(path: Path, jobs: int) -> int:
    """Make every queued replay view as the daemon's publisher does (referee.report.publisher), ahead of a bench, in
    ``jobs`` processes (each its share of the game ids); how many. A cached database of an older schema is migrated
    first (which queues its public games)."""
    with ArenaStore(path) as store:
        queued = store.queued_replay_views(10**9)
    if not queued:
        return 0
    print(f"{path.name}: making {len(queued):,} replay views in {jobs} processes", file=sys.stderr, flush=True)
    with multiprocessing.get_context("spawn").Pool(jobs) as pool:
        done = sum(pool.starmap(_make_views, [(path, queued[k::jobs]) for k in range(jobs)]))
    return done


def _make_views(path: Path, ids: list[int]) -> int:
    from referee.report.game_data import GAME_DATA_VERSION, encode_view, public_view
    from referee.results.league_store import LeagueStore

    with LeagueStore(path) as store:
        for start in range(0, len(ids), 50):
            store.keep_replay_views([(stored.id, encode_view(public_view(stored, stored.number or 0)))
                                     for stored in store.replays_by_id(ids[start:start + 50])], GAME_DATA_VERSION)
    return len(ids)


def size_mib(path: Path) -> float:
    return sum(p.stat().st_size for p in path.parent.glob(path.name + "*")) / 2**20


def add_data_options(parser: argparse.ArgumentParser) -> None:
    """The options that name a database of this module (its parameters and its cache), for every bench using it."""
    parser.add_argument("--versions", type=int, default=1000)
    parser.add_argument("--games", type=int, default=1_000_000)
    parser.add_argument("--history", type=int, default=50)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/durak-bench"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_data_options(parser)
    parser.add_argument("--fresh", action="store_true", help="make the database again even if one is cached")
    parser.add_argument("--jobs", type=int, default=2, help="processes making the replay views")
    args = parser.parse_args()
    params = Params(args.versions, args.games, args.history, args.seed)
    path, seconds = database(args.cache, params, fresh=args.fresh, jobs=args.jobs)
    made = f"made in {seconds:.1f} s" if seconds else "reused (cached)"
    print(f"{path}: {params.versions:,} versions, {params.games:,} games, {params.history} rating points each; "
          f"{made}; {size_mib(path):,.0f} MiB")


if __name__ == "__main__":
    main()
