"""The tournament report as files: one HTML page and, for large tournaments, chunks of game data beside it.

The page embeds the report data once; the shown games' viewer data is compressed (zlib, base64) by chunks
of game numbers (``number // CHUNK_GAMES``, the numbers ``durak games`` shows), inline in the page up to
``inline_games`` games, else in ``FILE.files/chunk-K.js`` files the page loads when a game is opened
(``<script src>`` works from ``file://``, where ``fetch`` does not). A chunk changes only when a game in its
range is first shown or leaves (superseded; the others keep their numbers), so a live report, or the next run
(:class:`ReportWriter`), packs and rewrites only those.
"""

from __future__ import annotations

import base64
import hashlib
import logging
import multiprocessing
import threading
import zlib
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

import msgspec

from referee import __version__
from referee.background import as_background
from referee.rating.bradley_terry import Mode
from referee.report.game_data import GAME_DATA_VERSION
from referee.report.page import NARRATION_JSON, PageWriteError, page, script_json, write_private
from referee.report.tournament_data import report_data, viewer_games
from referee.results.league_store import LeagueStore
from referee.results.store import Store, StoreError

LOGGER = logging.getLogger("durak")

#: Games per chunk of viewer data.
CHUNK_GAMES = 250
#: The most packed viewer data (base64 of zlib JSON) one game may take on average: a 2-player game of random
#: bots takes ~2.8 KB, a 3-player one ~4 KB (tests/test_report.py holds a real tournament's games to it).
GAME_BYTES_CAP = 6000
#: Up to this many shown games, the chunks are inline in the page (one file); beyond, files beside it.
INLINE_GAMES = 500

REPORT_BODY = """<main>
<h1 id="title">Durak tournament</h1>
<p id="live" class="warning"></p>
<section id="header"><dl class="kv" id="header-kv"></dl>
<h3>Bots</h3>
<table id="bots-table"><thead><tr><th class="text">bot</th><th class="text">version</th>
<th class="text">file hash (SHA-256 over its files)</th>
<th class="text">files</th></tr></thead><tbody></tbody></table></section>
<section id="leaderboard"><h2>Leaderboard</h2>
<div class="chart"><canvas id="elo-chart" aria-label="Elo with 95% intervals"></canvas></div>
<table id="leaderboard-table"><thead><tr></tr></thead><tbody></tbody></table>
<p class="legend" id="leaderboard-meta"></p><dl class="legend" id="leaderboard-legend"></dl></section>
<section id="head-to-head"><h2>Head to head</h2><table id="h2h-table" class="h2h"><thead></thead><tbody></tbody>
</table><p class="legend" id="h2h-note"></p></section>
<section id="stats"><h2>Per-bot statistics</h2></section>
<section id="ratings-history"><h2>How the ratings settled</h2>
<div class="chart"><canvas id="history-chart" aria-label="Elo against games played"></canvas></div>
<p class="legend">Each point is a fit over the games stored up to it.</p></section>
<section id="games"><h2>Games</h2>
<div class="filters"><select id="filter-bot"></select><select id="filter-fool"></select>
<select id="filter-verdict"></select><select id="filter-end"></select><span id="games-count"></span></div>
<table id="games-table" class="games"><thead><tr><th title="as durak games numbers it: durak replay DB N">#</th>
<th class="text">game (seats in order: click to replay)</th><th class="text">fool</th>
<th class="text">end</th><th class="text">verdicts</th></tr></thead><tbody></tbody></table>
<button type="button" id="more-games" hidden>show more</button><p class="legend" id="games-note"></p></section>
<section id="viewer-panel" hidden><button type="button" id="close-viewer">close</button>
<span id="viewer-status"></span><div id="viewer"></div></section>
</main>"""

SCRIPTS = ["vendor/chart.umd.min.js", "assets/cards.js", "assets/viewer.js", "assets/stats.js", "assets/report.js"]


@dataclass(frozen=True)
class ReportFiles:
    """What a report came to: its games, and the bytes of the page and of its game data."""

    games: int
    page_bytes: int  # the HTML file, with the games' data when it holds them (``inline``)
    game_bytes: int  # packed viewer data of every shown game (inline or in chunk files)
    inline: bool = True  # the games' data is in the page, not in chunk files beside it

    @property
    def bytes_per_game(self) -> float:
        written = self.page_bytes + (0 if self.inline else self.game_bytes)
        return written / self.games if self.games else 0.0


@dataclass(frozen=True)
class PageOptions:
    """What a report page shows: a tournament of the database (None: the active one), rated in ``mode``,
    with every bot's stderr (``private``: the organizer's copy), reloading itself every ``refresh`` seconds
    (a live tournament's page) or never."""

    tournament: int | None = None
    mode: Mode = "fool"
    private: bool = False
    refresh: int | None = None


PAGE_OPTIONS = PageOptions()


class ReportWriter:
    """Writes a database's report, again and again (a live tournament). A chunk of games is packed again only
    when its games change: chunk files are listed in ``manifest.json`` beside them with a key of their game
    numbers and ids (and of what else shapes them), so a later run or a resumed tournament rewrites only new chunks."""

    def __init__(self, db: str | Path, output: str | Path, shown: PageOptions = PAGE_OPTIONS, *,
                 inline_games: int = INLINE_GAMES, jobs: int = 1) -> None:
        self.db, self.output = Path(db), Path(output)
        self.jobs = jobs  # processes that pack chunk files at once
        self.tournament, self.mode, self.private = shown.tournament, shown.mode, shown.private
        self.refresh, self.inline_games = shown.refresh, inline_games
        self._inline: dict[int, tuple[str, str]] = {}  # chunk -> (key, packed), for a page that holds them
        self._manifest: dict[str, str] | None = None  # chunk file -> key

    @property
    def folder(self) -> Path:
        return self.output.with_name(self.output.name + ".files")

    def write(self) -> ReportFiles:
        """Read the database and (re)write the report."""
        by_chunk: dict[int, list[tuple[int, int]]] = {}
        with LeagueStore(self.db, create=False) as store:
            data = report_data(store, self.tournament, mode=self.mode)
            for number, gid in data.shown:
                by_chunk.setdefault(number // CHUNK_GAMES, []).append((number, gid))
            page_data = {**data.page, "chunks": {"size": CHUNK_GAMES, "folder": f"{self.folder.name}/"},
                         "live": self.refresh}
            embedded = {"report-data": script_json(page_data), "narration": NARRATION_JSON}
            if len(data.shown) <= self.inline_games:
                packed = self._packed_inline(store, by_chunk)
                embedded.update({f"chunk-{k}": script_json(text) for k, text in packed.items()})
                game_bytes = sum(map(len, packed.values()))
            else:
                game_bytes = self._write_chunks(by_chunk)
        title = f"Durak tournament: {data.page['header']['name']}"
        text = page(title, REPORT_BODY, embedded, SCRIPTS)
        write_private(self.output, text)
        return ReportFiles(games=len(data.shown), page_bytes=len(text.encode()), game_bytes=game_bytes,
                           inline=len(data.shown) <= self.inline_games)

    def _key(self, games: list[tuple[int, int]]) -> str:
        shape = f"{GAME_DATA_VERSION}|{__version__}|{self.private}|{','.join(f'{n}:{i}' for n, i in games)}"
        return hashlib.sha256(shape.encode()).hexdigest()

    def _packed_inline(self, store: Store, by_chunk: dict[int, list[tuple[int, int]]]) -> dict[int, str]:
        for k, games in by_chunk.items():
            key = self._key(games)
            if self._inline.get(k, ("", ""))[0] != key:
                self._inline[k] = (key, pack_chunk(store, games, self.private))
        return {k: self._inline[k][1] for k in sorted(by_chunk)}

    def _write_chunks(self, by_chunk: dict[int, list[tuple[int, int]]]) -> int:
        """Write the chunk files whose games changed; the bytes of the games' data in all of them."""
        try:
            self.folder.mkdir(mode=0o700, exist_ok=True)
        except OSError as exc:
            raise PageWriteError(f"cannot make {str(self.folder)!r}: {exc.strerror}") from None
        manifest = self._manifest if self._manifest is not None else self._read_manifest()
        self._manifest = manifest
        stale = {k: games for k, games in by_chunk.items()
                 if manifest.get(str(k)) != self._key(games) or not self._chunk_file(k).is_file()}
        if self.jobs > 1 and len(stale) > 1:  # forked: the report's writer runs no threads of its own
            pool = ProcessPoolExecutor(min(self.jobs, len(stale)), mp_context=multiprocessing.get_context("fork"))
            with pool:
                jobs = [pool.submit(write_chunk_file, self.db, games, self.private, self._chunk_file(k), k)
                        for k, games in stale.items()]
                self._note_written((job.result() for job in as_completed(jobs)), by_chunk, manifest)
        else:
            self._note_written((write_chunk_file(self.db, games, self.private, self._chunk_file(k), k)
                                for k, games in stale.items()), by_chunk, manifest)
        return sum(self._chunk_file(k).stat().st_size - len(f'durakChunk({k},"");\n') for k in by_chunk)

    def _chunk_file(self, k: int) -> Path:
        return self.folder / f"chunk-{k}.js"

    def _note_written(self, done: Iterable[int], by_chunk: dict[int, list[tuple[int, int]]],
                      manifest: dict[str, str]) -> None:
        """Keep the manifest up to date as chunks are written (a run stopped half way keeps what it wrote)."""
        for k in done:
            manifest[str(k)] = self._key(by_chunk[k])
            write_private(self.folder / "manifest.json", msgspec.json.encode(manifest))

    def _read_manifest(self) -> dict[str, str]:
        try:
            return msgspec.json.decode((self.folder / "manifest.json").read_bytes(), type=dict[str, str])
        except (OSError, msgspec.DecodeError):
            return {}


def pack_chunk(store: Store, games: list[tuple[int, int]], private: bool) -> str:
    """The ``games`` ((number, id) pairs) as ``{number: viewer data}`` in base64 of zlib-compressed JSON (one
    stream: the games of a chunk share their names and phrases, which compresses them to ~70% of one stream
    each)."""
    packed = {str(number): game for number, game in viewer_games(store, games, private=private)}
    return base64.b64encode(zlib.compress(msgspec.json.encode(packed), 9)).decode()


def write_chunk_file(db: Path, games: list[tuple[int, int]], private: bool, file: Path, k: int) -> int:
    """Pack chunk ``k`` (in a worker process or not) and write it as a script that hands it to the page."""
    with LeagueStore(db, create=False) as store:
        write_private(file, f"durakChunk({k},{script_json(pack_chunk(store, games, private))});\n")
    return k


class LiveReport:
    """While a tournament runs, its report rewritten every ``interval`` seconds from a thread (the page reloads
    itself meanwhile); once it stops, written a last time without reloads. A failed write is a warning."""

    def __init__(self, db: str | Path, output: str | Path, *, interval: float = 5.0, private: bool = False) -> None:
        self.interval = interval
        self._writer = ReportWriter(db, output, PageOptions(private=private, refresh=max(1, round(interval))))
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="durak-report", daemon=True)
        self._warned: set[str] = set()

    def __enter__(self) -> LiveReport:
        self._thread.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._stop.set()
        self._thread.join()
        self._writer.refresh = None
        self._write()

    def _run(self) -> None:
        # The games' workers and their bots are pinned to cores; this thread is not, and must not take their time.
        as_background()
        while not self._stop.wait(self.interval):
            self._write()

    def _write(self) -> None:
        try:
            self._writer.write()
        except (StoreError, PageWriteError, ValueError) as exc:
            message = str(exc)
            if message not in self._warned:
                self._warned.add(message)
                LOGGER.warning("report not written: %s", message)
