"""Reading results from a database or a JSON-lines file of result records (``durak leaderboard``): game outcomes
for ratings and per-bot statistics.

A JSON-lines file may be several exports joined: a record whose game id and deal were read already is a
repeat, skipped with a warning, so a file concatenated twice counts each game once.
"""

from __future__ import annotations

import gc
import logging
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

import msgspec

from protocol.records import ResultRecord
from referee.rating.outcomes import Outcomes, outcomes_from_records
from referee.rating.stats import BotStats, bot_stats
from referee.results.league_store import LeagueStore
from referee.results.store import Store, StoredGameRow, StoreError, is_database

LOGGER = logging.getLogger("durak")


class ResultsReadError(ValueError):
    """A results source that cannot be read; the message names the file and line."""


def load_outcomes(source: str | Path, tournament: int | None = None) -> Outcomes:
    """The games of ``source`` in columns, for ratings: a database's compact outcome column (of ``tournament``,
    default the active one), or the records of a JSON-lines file."""
    path = _existing(source, tournament)
    try:
        if is_database(path):
            with LeagueStore(path, create=False) as store:
                return store.outcomes(store.tournament(tournament).id)
        with _no_gc():
            return outcomes_from_records(_read_json_lines(path))
    except StoreError as exc:
        raise ResultsReadError(str(exc)) from None
    except ResultsReadError:
        raise
    except ValueError as exc:  # a record that is not a consistent result
        raise ResultsReadError(f"{path}: {exc}") from None


def load_stats(source: str | Path, tournament: int | None = None) -> list[BotStats]:
    """Per-bot statistics of ``source``'s games (:func:`referee.rating.stats.bot_stats`); move times only from a
    database, which stores them."""
    path = _existing(source, tournament)
    try:
        if is_database(path):
            with LeagueStore(path, create=False) as store:
                return database_stats(store, store.tournament(tournament).id)
        return bot_stats((record, None) for record in _read_json_lines(path))
    except StoreError as exc:
        raise ResultsReadError(str(exc)) from None


def database_stats(store: Store, tournament_id: int, games: Iterable[StoredGameRow] | None = None) -> list[BotStats]:
    """Per-bot statistics of a tournament of an open database, over ``games`` (its games, read here if None)."""
    rows = store.games(tournament_id) if games is None else games
    return bot_stats(((g.record, g.move_us) for g in rows), store.disqualified(tournament_id))


def _existing(source: str | Path, tournament: int | None) -> Path:
    path = Path(source)
    if not path.is_file():
        raise ResultsReadError(f"no results at {str(path)!r}")
    if tournament is not None and not is_database(path):
        raise ResultsReadError(f"{str(path)!r} is a results file, not a database: it has no tournaments to choose")
    return path


def _read_json_lines(path: Path) -> Iterator[ResultRecord]:
    """The records of a JSON-lines file, each game once (by game id and deal)."""
    decoder = msgspec.json.Decoder(ResultRecord)
    seen: set[tuple[str, str]] = set()
    repeats: list[str] = []
    try:
        with path.open("rb") as file:
            for number, line in enumerate(file, 1):
                if line.strip():
                    try:
                        record = decoder.decode(line)
                    except msgspec.DecodeError as exc:
                        raise ResultsReadError(f"{path}:{number}: not a result record: {exc}") from None
                    if (record.game, record.deal) in seen:
                        repeats.append(f"{number}")
                        continue
                    seen.add((record.game, record.deal))
                    yield record
    except OSError as exc:
        raise ResultsReadError(f"cannot read {str(path)!r}: {exc.strerror}") from None
    if repeats:
        LOGGER.warning("%s: %d record(s) repeat a game already read (same game id and deal) and were skipped, "
                       "from line %s on", path, len(repeats), repeats[0])


@contextmanager
def _no_gc() -> Iterator[None]:
    """No cyclic GC while loading, and the loaded objects frozen out of its reach afterwards: a million
    records are millions of long-lived objects that every full collection would otherwise rescan."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()
