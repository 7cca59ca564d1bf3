"""Reading game outcomes from a database or a JSON-lines file of result records (``durak leaderboard``)."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import msgspec

from protocol.records import ResultRecord
from referee.outcomes import Outcomes, outcomes_from_records
from referee.store import Store, StoreError, is_database


class ResultsReadError(ValueError):
    """A results source that cannot be read; the message names the file and line."""


def load_outcomes(source: str | Path) -> Outcomes:
    """The games of ``source`` in columns, for ratings: a database's compact outcome column, or the records
    of a JSON-lines file."""
    path = Path(source)
    if not path.is_file():
        raise ResultsReadError(f"no results at {str(path)!r}")
    try:
        if is_database(path):
            with Store(path, create=False) as store:
                return store.outcomes()
        with _no_gc():
            return outcomes_from_records(_read_json_lines(path))
    except StoreError as exc:
        raise ResultsReadError(str(exc)) from None
    except ResultsReadError:
        raise
    except ValueError as exc:  # a record that is not a consistent result
        raise ResultsReadError(f"{path}: {exc}") from None


def _read_json_lines(path: Path) -> Iterator[ResultRecord]:
    decoder = msgspec.json.Decoder(ResultRecord)
    try:
        with path.open("rb") as file:
            for number, line in enumerate(file, 1):
                if line.strip():
                    try:
                        yield decoder.decode(line)
                    except msgspec.DecodeError as exc:
                        raise ResultsReadError(f"{path}:{number}: not a result record: {exc}") from None
    except OSError as exc:
        raise ResultsReadError(f"cannot read {str(path)!r}: {exc.strerror}") from None


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
