"""What a league keeps from the web server's user: its seeds (the league's and its finals', from which every deal,
gate and card table follows) and its config as the organizer last ran the daemon with it.

The database is shared with the web server, whose user may read and write it; a seed there would hand any flaw
of the web server every future deck, and a config there could be rewritten (its sandbox, its limits) before a
lifecycle command that finds no daemon reads it. So both live in a folder beside the database that only the
daemon's user may enter (``league.db`` keeps them in ``league-private/``, mode 700, one file of mode 600),
checked before every use as the bot store is: this user's own, not a link, no one else's to read or write. The
``tournaments`` rows of a league and its finals hold seed 0.

A league made before this kept its seed in its row: the daemon moves it here at its next start
(:meth:`LeaguePrivate.take_seed_from`) and clears the row.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import stat
from collections.abc import Callable
from pathlib import Path

import msgspec

from referee.league.botstore import SnapshotError, check_own_folder
from referee.results.league_store import LeagueStore
from referee.results.rows import TournamentRow
from referee.tournament.config import draw_seed
from referee.tournament.errors import TournamentError

_FILE = "league.json"
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC


class PrivateError(TournamentError):
    """The private folder cannot be used, or holds no seed for a league that has played: one line."""


class _Kept(msgspec.Struct, forbid_unknown_fields=True):
    seeds: dict[int, int] = msgspec.field(default_factory=dict)  # tournaments row id -> its seed
    config: str = ""  # the league config's text, as the daemon last started with it


class LeaguePrivate:
    """The private folder of the league whose database is ``db_path``."""

    def __init__(self, db_path: Path) -> None:
        self.db_path = db_path
        self.dir = db_path.with_name(f"{db_path.stem}-private")

    # -- seeds ----------------------------------------------------------------------------

    def with_seed(self, row: TournamentRow) -> TournamentRow:
        """``row`` with its seed: the one kept here, else (a league not yet moved) the row's own.

        :raises PrivateError: neither has one, or the folder is not the daemon's own.
        """
        seed = self._read().seeds.get(row.id)
        if seed is None and row.seed == 0:
            raise PrivateError(f"the seed of {row.kind} {row.name!r} is not in {str(self.dir)!r}: every deal follows "
                               "from it; restore the folder from a backup")
        return dataclasses.replace(row, seed=row.seed if seed is None else seed)

    def keep_new_seed(self, row: TournamentRow) -> TournamentRow:
        """Draw a seed for a row that was just made (with seed 0), keep it here, and return the row with it."""
        seed = draw_seed()
        self._update(lambda kept: kept.seeds.__setitem__(row.id, seed))
        return dataclasses.replace(row, seed=seed)

    def take_seed_from(self, store: LeagueStore, row: TournamentRow) -> TournamentRow:
        """``row`` with its seed, moved here from the database if it is still there (a league made before this),
        or drawn if it has none and has played nothing (the daemon stopped between making it and keeping it).

        :raises PrivateError: the folder is not ours, or a league that has played has lost its seed.
        """
        if row.seed != 0:
            seed = row.seed
            self._update(lambda kept: kept.seeds.setdefault(row.id, seed))
            store.forget_seed(row.id)
            return self.with_seed(dataclasses.replace(row, seed=0))
        if row.id not in self._read().seeds and not store.has_played(row.id):
            return self.keep_new_seed(row)
        return self.with_seed(row)

    # -- the config -----------------------------------------------------------------------

    def config(self) -> str:
        """The league config's text as the daemon last started with it ("" if it never did here)."""
        return self._read().config

    def keep_config(self, text: str) -> None:
        if self._read().config != text:
            self._update(lambda kept: setattr(kept, "config", text))

    # -- the file -------------------------------------------------------------------------

    def _folder(self, *, create: bool) -> Path:
        if create:
            with contextlib.suppress(FileExistsError):
                os.mkdir(self.dir, 0o700)
        try:
            check_own_folder(self.dir, "the league's private folder", 0o077)
        except SnapshotError as exc:
            raise PrivateError(str(exc)) from None
        return self.dir

    def _read(self) -> _Kept:
        if not os.path.lexists(self.dir):
            return _Kept()
        folder = self._folder(create=False)
        try:
            fd = os.open(folder / _FILE, _READ_FLAGS)
        except FileNotFoundError:
            return _Kept()
        except OSError as exc:
            raise PrivateError(f"cannot read {str(folder / _FILE)!r}: {exc.strerror}") from None
        with os.fdopen(fd, "rb") as file:
            info = os.fstat(file.fileno())
            if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o077:
                raise PrivateError(f"{str(folder / _FILE)!r} is not this user's own private file: remove it")
            data = file.read()
        try:
            return msgspec.json.decode(data, type=_Kept)
        except msgspec.DecodeError as exc:
            raise PrivateError(f"{str(folder / _FILE)!r} is damaged ({exc}): restore it from a backup") from None

    def _update(self, change: Callable[[_Kept], object]) -> None:
        """Read the file, apply ``change`` to what it keeps, write it anew in one rename."""
        kept = self._read()
        change(kept)
        folder = self._folder(create=True)
        temporary = folder / f".{_FILE}.{os.getpid()}"
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        with os.fdopen(fd, "wb") as file:
            file.write(msgspec.json.encode(kept))
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, folder / _FILE)


def private_config(private: LeaguePrivate, league: TournamentRow) -> str:
    """The config text a command that is not the daemon plays or gates with: the one the daemon last started with,
    never the database's copy (anyone who may write the database may have rewritten it).

    :raises PrivateError: the daemon never started here (``durak league run`` keeps it).
    """
    text = private.config()
    if not text:
        raise PrivateError(f"league {league.name!r} has no config in {str(private.dir)!r}: start its daemon once "
                           "(durak league run CONFIG --db DB keeps it there)")
    return text
