"""The files a command reads or writes (a database, a page, a log, a seed file), checked before any work: a
missing database, a missing folder or one this user may not write is one line and exit code 6
(:data:`referee.cli.exitcodes.ExitCode.DATABASE`), whichever command met it."""

from __future__ import annotations

import os
import shlex
from pathlib import Path


class PathRefused(OSError):
    """A path a command cannot use: no such database, no folder for a file, or a folder it may not write."""


def _folder_problem(folder: Path) -> str | None:
    """Why files cannot be made in ``folder`` by this user; None when they can (SQLite's journal, a page's
    temporary file and a lock all live beside the file, so the folder must be writable, not only the file)."""
    if not folder.exists():
        return f"no folder {str(folder)!r} (create it first: mkdir -p {shlex.quote(str(folder))})"
    if not folder.is_dir():
        return f"{str(folder)!r} is not a folder"
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"the folder {str(folder)!r} is not writable by this user (uid {os.geteuid()})"
    return None


def check_writable(path: str | Path, what: str = "") -> None:
    """Refuse a file to write (``what``: "the database", "the log"; default: the path alone) whose folder is
    missing, is not a folder, or is not this user's to write in.

    :raises PathRefused: in one line, naming the path and why.
    """
    folder = Path(os.path.abspath(path)).parent
    problem = _folder_problem(folder)
    if problem is not None:
        raise PathRefused(f"cannot write {what + ' ' if what else ''}{str(path)!r}: {problem}")


def check_database(path: str | Path, *, what: str = "database", makes_one: str = "") -> None:
    """Refuse a ``what`` to read (a database; "database or log file") that is not there (``makes_one``: the
    command that creates it, for the hint); nothing is created for a mistyped path.

    :raises PathRefused: in one line.
    """
    if os.path.exists(path):
        return
    folder = Path(os.path.abspath(path)).parent
    why = f": no folder {str(folder)!r}" if not folder.is_dir() else ""
    hint = f" ({makes_one} makes one)" if makes_one else ""
    raise PathRefused(f"no {what} at {str(path)!r}{why}{hint}")


def check_league_database(path: str | Path, *, write: bool = True) -> None:
    """A league's database for a command other than ``durak league run`` (which makes one): there, and (``write``)
    in a folder this user may write, as SQLite and the league's lock need.

    :raises PathRefused: in one line.
    """
    check_database(path, makes_one=f"durak league run CONFIG --db {shlex.quote(str(path))}")
    if write:
        check_writable(path, "the database")
