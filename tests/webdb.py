"""A league database for the web tests, written through the store API: authors alice (A), bob (B) and the admin;
bots alpha (A) and beta (B); a complete group (a crash of alpha whose reason quotes its stderr), an open group and
a void one, each with real stored games and stderr; uploads of A and B with logs; a challenge of A's and one of
B's, each with two games; a board with history.

Every string a test looks for in the bytes sent is a constant here."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from protocol.cards import CARD_NAMES
from protocol.records import StderrChunk, Verdict
from protocol.rules import Rules
from referee.engine import SeededRng, new_game
from referee.league.authors import new_author
from referee.results.arena_store import ArenaStore, BoardRow, UploadStep
from referee.results.league_store import GroupRow, VersionRow
from referee.results.record import GameRecord
from referee.results.replay import replay_lines
from referee.results.rows import StoredGame, TournamentRow
from referee.results.table_store import NewTable

A_STDERR = "A-STDERR-MARK-7f3a"
B_STDERR = "B-STDERR-MARK-91c2"
A_REASON = "A-CRASH-REASON-5d1e"  # alpha's crash reason quotes its stderr
OPEN_MARK = "OPEN-GROUP-MARK-3b8c"  # the stderr of the open group's game
A_BUILD_LOG, A_GATE_LOG = "A-BUILD-LOG-2e6f", "A-GATE-LOG-c4d0"
B_BUILD_LOG, B_GATE_LOG = "B-BUILD-LOG-8a17", "B-GATE-LOG-f05b"
A_QUARANTINE = "A-QUARANTINE-WHY-6e2d"
#: A challenge of alice's (alpha against beta, alpha crashing) and one of bob's: each seat's stderr, alpha's crash
#: reason and each challenge's result text.
A_SIDE_STDERR, B_SIDE_STDERR = "A-SIDE-STDERR-0c4e", "B-SIDE-STDERR-7d21"
A_SIDE_REASON = "A-SIDE-REASON-93ab"
A_SIDE_RESULT, B_SIDE_RESULT = "A-SIDE-RESULT-1f6d", "B-SIDE-RESULT-e85a"
A_TABLE = "A-TABLE-SEAT-MARK-0b9e"  # in the messages of alice's card table (her seat's view)
#: What an extra bot writes to stderr: script and markup (the browser test's payload).
EXTRA_STDERR = "<script>window.pwned = 'stderr-script'</script><img src=x onerror=\"window.pwned='stderr-img'\">"

ROOT = Path(__file__).resolve().parents[1]

#: The config a league database keeps (durak serve reads its [arena] quotas).
LEAGUE_CONFIG = 'name = "web test league"\nplayers = [2, 3]\n'



@dataclass(frozen=True)
class WebDb:
    path: Path
    tokens: dict[str, str]  # author -> token
    games: dict[str, int]  # complete0, complete1, open, void -> game number
    uploads: dict[str, int]  # author -> an upload id of theirs
    challenges: dict[str, int]  # author -> a challenge id of theirs (its games numbered 1, 2)
    table: int  # alice's card table (waiting for the daemon; one message stored)


def game(names: list[str], seed: int, deal: str, stderr: list[str], *, crash: str | None = None,
         moves: int = 6) -> GameRecord:
    """A real game between ``names`` (random legal moves), seat 0 crashing with ``crash`` after ``moves``."""
    rules = Rules()
    rng = SeededRng(seed)
    played = new_game(rules, len(names), rng)
    verdicts: list[Verdict] = []
    while played.result is None:
        if crash is not None and played.actions >= moves:
            played.forfeit(0, "crash", crash)
            verdicts = [Verdict(seat=0, bot=names[0], kind="crash", reason=crash)]
            break
        legal = played.legal_actions()
        played.apply(legal[rng.randbelow(len(legal))])
    assert played.result is not None
    return GameRecord(game=f"{deal}|s{seed}", deal=deal, names=names, rules=rules, dealer=played.dealer,
                      deck=[CARD_NAMES[c] for c in played.deck], result=played.result, actions=played.actions,
                      verdicts=verdicts, times=[None] * len(names), events=list(played.events),
                      stderr=[[StderrChunk(0, text)] for text in stderr])


def stored(record: GameRecord, group: int, rotation: int) -> StoredGame:
    return StoredGame(slot_key=f"g{group}|r{rotation}", game_index=0, deal_seed=group, rotation=rotation,
                      record=record.to_result_record(), replay=replay_lines(record), stderr=record.stderr)


def build(folder: Path, *, extra_bots: dict[str, str] | None = None) -> WebDb:
    """The database at ``folder/league.db``; ``extra_bots`` (name -> author) adds versions as they are, unchecked."""
    path = folder / "league.db"
    with ArenaStore(path) as store:
        league = store.create_league("web test league", "league.toml", LEAGUE_CONFIG, "fp", 7)
        tokens = {name: new_author(store, name, admin=name == "admin")[1] for name in ("admin", "alice", "bob")}
        bots = {"alpha": "alice", "beta": "bob", **(extra_bots or {})}
        for bot, author in bots.items():
            store.add_version(league.id, VersionRow(name=f"{bot}@1", bot=bot, number=1, author=author,
                                                    command=["x"], env={}, dir=str(folder), sha256=bot))
        store.set_version(league.id, "alpha@1", quarantined=A_QUARANTINE)
        seats = ("alpha@1", "beta@1")
        for number in range(3):
            store.issue_group(league.id, GroupRow(number=number, deal_seed=number, seats=seats, anchor="alpha@1"))
        games = _games(store, league.id, seats)
        for offset, bot in enumerate(extra_bots or {}):  # a complete group of each extra bot against alpha
            number, pair = 3 + offset, (f"{bot}@1", "alpha@1")
            store.issue_group(league.id, GroupRow(number=number, deal_seed=number, seats=pair, anchor="alpha@1"))
            record = game(list(pair), 20 + offset, f"g{number}", [EXTRA_STDERR, A_STDERR])
            store.save_slots(league.id, [[stored(record, number, 0)]])
            store.close_group(league.id, number, "complete")
            games[bot] = store.count_games(league.id)
        store.close_group(league.id, 0, "complete")
        store.close_group(league.id, 2, "void", "beta retired")
        uploads = {}
        for author, build_log, gate_log in (("alice", A_BUILD_LOG, A_GATE_LOG), ("bob", B_BUILD_LOG, B_GATE_LOG)):
            bot = "alpha" if author == "alice" else "beta"
            row = store.add_upload(league.id, author, bot, b"\x1f\x8barchive", "00")
            store.step_upload(row.id, "refused", UploadStep("build", False, "exit 2", 1.5), build_log=build_log,
                              gate_log=gate_log)
            uploads[author] = row.id
        challenges = _challenges(store, league)
        table = store.open_table(league.id, NewTable("alice", "podkidnoy", 0, ["beta@1"]), per_author=1, total=9)
        store.add_table_message(table.id, f'{{"type":"game","names":["{A_TABLE}"]}}', None)
        store.save_board(league.id, [BoardRow("alpha@1", 1, 20.0, 30.0, 2, "2026-01-01T00:00:00"),
                                     BoardRow("beta@1", 2, -20.0, 30.0, 2, "2026-01-01T00:00:00")])
        store.save_board(league.id, [BoardRow("alpha@1", 1, 25.0, 20.0, 4, "2026-01-02T00:00:00"),
                                     BoardRow("beta@1", 2, -25.0, 20.0, 4, "2026-01-02T00:00:00"),
                                     *[BoardRow(f"{bot}@1", 3 + i, 0.0, None, 0, "2026-01-02T00:00:00")
                                       for i, bot in enumerate(extra_bots or {})]])
    return WebDb(path, tokens, games, uploads, challenges, table.id)


def _challenges(store: ArenaStore, league: TournamentRow) -> dict[str, int]:
    """A done challenge of alice's (two games: alpha crashes in the first) and one of bob's, with their games."""
    ids = {}
    for author, seats, result in (("alice", ("alpha@1", "beta@1"), A_SIDE_RESULT),
                                  ("bob", ("beta@1", "alpha@1"), B_SIDE_RESULT)):
        side = store.start_side(store.add_side(league.id, "challenge", author, seats, 2), league, 99)
        assert side.tournament_id is not None
        stderr = {"alpha@1": A_SIDE_STDERR, "beta@1": B_SIDE_STDERR}
        for rotation in range(2):
            names = list(seats[rotation:] + seats[:rotation])
            crash = f"exit 1; stderr: {A_SIDE_REASON}" if rotation == 0 and names[0] == "alpha@1" else None
            record = game(names, 30 + rotation, f"s{side.id}|d0", [stderr[n] for n in names], crash=crash)
            store.save_slots(side.tournament_id, [[StoredGame(
                slot_key=f"s{side.id}|d0|r{rotation}", game_index=0, deal_seed=99, rotation=rotation,
                record=record.to_result_record(), replay=replay_lines(record), stderr=record.stderr)]])
        store.finish_side(side.id, "done", result)
        ids[author] = side.id
    return ids


def _games(store: ArenaStore, league_id: int, seats: tuple[str, str]) -> dict[str, int]:
    """Group 0 complete (both rotations; alpha crashes in the first), group 1 open (one rotation stored), group 2
    void (one rotation)."""
    a, b = seats
    plan = {
        "complete0": (0, 0, game([a, b], 11, "g0", [A_STDERR, B_STDERR], crash=f"exit 1; stderr: {A_REASON}")),
        "complete1": (0, 1, game([b, a], 12, "g0", [B_STDERR, A_STDERR])),
        "open": (1, 0, game([a, b], 13, "g1", [OPEN_MARK, OPEN_MARK])),
        "void": (2, 0, game([a, b], 14, "g2", [A_STDERR, B_STDERR])),
    }
    for group, rotation, record in plan.values():
        store.save_slots(league_id, [[stored(record, group, rotation)]])
    return {key: number for number, key in enumerate(plan, 1)}  # numbered as stored


def built(prefix: str, *, extra_bots: dict[str, str] | None = None) -> Iterator[WebDb]:
    """A module's league (:func:`build`) in a folder of its own, removed afterwards: a module fixture's body."""
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield build(folder, extra_bots=extra_bots)
    finally:  # a build that failed, or a module whose tests did, leaves nothing behind either
        shutil.rmtree(folder)


def league_copy(base: WebDb, folder: Path) -> WebDb:
    """A copy of a module's league for one test (uploads, requests and sessions change it)."""
    shutil.copy(base.path, folder / "league.db")
    return replace(base, path=folder / "league.db")


def why_nobody_cannot_serve() -> str | None:
    """Why ``durak serve``, started as root, could not run as nobody here (None: it can): it drops root before it
    imports the app, so this checkout and its interpreter must be within nobody's reach (a checkout under /root is
    not; CI's and a developer's under /work are)."""
    if os.geteuid() != 0:
        return "durak serve drops root: run as root to see it"
    probe = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable, "-c",
                            "import referee.web.app"], env={**os.environ, "PYTHONPATH": str(ROOT)},
                           capture_output=True, text=True, check=False)
    if probe.returncode != 0:
        return f"nobody cannot import the web app from this checkout: {probe.stderr.strip().splitlines()[-1:]}"
    return None
