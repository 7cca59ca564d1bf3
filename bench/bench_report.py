"""Benchmark: the HTML report of a large tournament: its bytes per game, the time to write it, and the time
headless Chromium takes to the page's ``data-ready`` marker (median of 5 loads; target: under 2 s at
10,000 games), then to open a game in the viewer.

Run by hand from the project root::

    python bench/bench_report.py                     # 10,000 games
    python bench/bench_report.py --games 100000 --loads 3

The database is synthetic but real: games of random legal players played by the engine (2 players, 6 bots,
podkidnoy, both seat rotations of every deal), stored as the tournament runner stores them, with a made-up
time for every decision (0.1-5 ms) and a file hash per bot. Needs
Debian's chromium and chromium-driver, and selenium (the test extra).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from protocol.cards import CARD_NAMES
from protocol.events import ActionTaken
from protocol.records import SeatTimes, StderrChunk
from protocol.rules import Rules
from referee.engine import SeededRng, new_game
from referee.report.tournament_page import ReportWriter
from referee.results.record import GameRecord
from referee.results.replay import replay_lines
from referee.results.store import BotRow, Store, StoredGame
from tests.browser import start_chromium

BOTS = [f"bot{k}" for k in range(6)]
CONFIG = 'name = "bench"\ndeals = {deals}\n' + "".join(
    f'[[bots]]\nname = "{b}"\ncommand = "x"\ndir = "d"\n' for b in BOTS)


def build(db: Path, games: int) -> None:
    """``games`` stored games: deals of two rotations between random pairs of bots."""
    rules = Rules(variant="podkidnoy")
    rng = SeededRng(1)
    with Store(db) as store:
        tournament = store.create_tournament("bench", "bench.toml", CONFIG.format(deals=games // 2), "f", 1)
        for name in BOTS:
            store.save_bot(tournament.id, BotRow(name, ["x"], "d", "0" * 64, "1.0",
                                                 files={f"{name}.py": "1" * 64}))
        for deal in range(games // 2):
            pair = [BOTS[rng.randbelow(6)]]
            pair.append(next(b for b in BOTS[rng.randbelow(6):] + BOTS if b != pair[0]))
            deck = None
            for rotation in range(2):
                names = pair if rotation == 0 else pair[::-1]
                game = new_game(rules, 2, SeededRng(deal), deck=deck, dealer=0)
                deck = game.deck
                while game.result is None:
                    legal = game.legal_actions()
                    game.apply(legal[rng.randbelow(len(legal))])
                assert game.result is not None
                decisions = [sum(isinstance(e, ActionTaken) and e.seat == s for e in game.events) for s in (0, 1)]
                move_us = [[100 + rng.randbelow(4900) for _ in range(n)] for n in decisions]
                key = f"t:{','.join(sorted(pair))}|d{deal}|r{rotation}"
                record = GameRecord(game=f"{key}|g1", deal=f"d{deal}", names=names, rules=rules, dealer=0,
                                    deck=[CARD_NAMES[c] for c in game.deck], result=game.result,
                                    actions=game.actions, verdicts=[],
                                    times=[SeatTimes(moves=40, median_ms=0.5, max_ms=3.0)] * 2,
                                    events=list(game.events), strikes=[0, 0])
                store.save_slot(tournament.id, [StoredGame(
                    slot_key=key, game_index=0, deal_seed=deal, rotation=rotation,
                    record=record.to_result_record(), replay=replay_lines(record),
                    stderr=[[StderrChunk(0, "hello\n")], []], move_us=move_us)])


def wait(driver: Any, script: str, timeout: float = 120.0) -> Any:
    deadline = time.monotonic() + timeout
    while not (value := driver.execute_script(script)):
        if time.monotonic() > deadline:
            raise TimeoutError(script)
        time.sleep(0.01)
    return value


def load_times(page: Path, loads: int) -> tuple[list[float], list[float]]:
    """Per load: ms from navigation start to data-ready (the page's own clock), and ms to open game 1."""
    ready, opened = [], []
    driver = start_chromium()
    try:
        for _ in range(loads):
            driver.get("about:blank")
            driver.get(page.resolve().as_uri())
            ready.append(float(wait(driver, "return document.body && document.body.dataset.readyMs")))
            start = time.perf_counter()
            driver.execute_script("document.querySelector('tr.game-row').click()")
            wait(driver, "return document.getElementById('viewer').dataset.steps")
            opened.append((time.perf_counter() - start) * 1000)
    finally:
        driver.quit()
    return ready, opened


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=10_000)
    parser.add_argument("--loads", type=int, default=5)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="Processes packing chunk files.")
    parser.add_argument("--keep", help="Keep the database and report in this folder (a second run reuses both: "
                                       "only the page is written again).")
    args = parser.parse_args()
    folder = Path(args.keep or tempfile.mkdtemp(prefix="durak-bench-report-"))
    folder.mkdir(exist_ok=True)
    db, page = folder / "bench.db", folder / "bench.html"
    try:
        if not db.exists():
            start = time.perf_counter()
            build(db, args.games)
            print(f"built {args.games:,} games in {time.perf_counter() - start:.1f} s")
        start = time.perf_counter()
        files = ReportWriter(db, page, jobs=args.jobs).write()
        written = time.perf_counter() - start
        chunks = sum(f.stat().st_size for f in (folder / "bench.html.files").glob("*")) \
            if (folder / "bench.html.files").is_dir() else 0
        print(f"report: {files.games:,} games written in {written:.1f} s ({args.jobs} jobs); "
              f"page {files.page_bytes:,} bytes, "
              f"game data {files.game_bytes:,} bytes ({files.game_bytes / files.games:,.0f} per game), "
              f"chunk files {chunks:,} bytes, page bytes per game {files.page_bytes / files.games:,.0f}")
        ready, opened = load_times(page, args.loads)
        print(f"data-ready: median {statistics.median(ready):,.0f} ms of {len(ready)} loads "
              f"({', '.join(f'{t:,.0f}' for t in ready)}); a game opens in median "
              f"{statistics.median(opened):,.0f} ms")
        print(f"load average: {os.getloadavg()[0]:.2f}")
    finally:
        if not args.keep:
            shutil.rmtree(folder)


if __name__ == "__main__":
    main()
