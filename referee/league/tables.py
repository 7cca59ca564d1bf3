"""The web arena's card tables, as the daemon plays them: a person's seat against league versions, each table in a
thread of its own beside the league's games.

The person's seat is a :class:`~referee.games.human.HumanSeat` (the human clock: per move and a bank) whose
:class:`RelayPerson` writes each protocol message the seat is shown into the database (the bytes a bot at that seat
would get), and waits there for the person's answer, which ``durak serve`` writes, until the seat's deadline. The
clock runs whether or not anyone is watching (a closed page, a reload); a missed deadline is a timeout, and the seat
forfeits as a bot's would. The bots are the league's versions, started as a league
worker starts them (sandboxed, frozen between their turns). A table's deal comes from its own seed domain
(``derive_seed(league seed, "tables", table id)``), and its game is stored unrated, with its replay.
"""

from __future__ import annotations

import threading
import time
import traceback
from pathlib import Path

from protocol.messages import Request, encoder
from protocol.rules import Rules
from referee.bots.errors import BotError
from referee.bots.launcher import BotCommand, scrubbed_env
from referee.bots.sandbox.isolation import Isolation
from referee.bots.session import BotClient
from referee.engine import SeededRng, new_game
from referee.engine.rng import derive_seed
from referee.games.human import ClockReading, HumanClock, HumanSeat, SeatMessage
from referee.games.match import play_game
from referee.games.seat import Seat
from referee.league.config import LoadedLeague
from referee.league.private import LeaguePrivate
from referee.results.arena_store import ArenaStore
from referee.results.replay import replay_lines
from referee.results.rows import StoredGame
from referee.results.store import StoreError
from referee.results.table_store import TableRow

#: Seconds between two looks for the person's answer (and for new tables).
POLL = 0.05
#: Why a table that was playing when the daemon stopped ends without a game (a game cannot resume without its bots).
DAEMON_STOPPED = "the daemon stopped during the game"


def table_seed(league_seed: int, table_id: int) -> int:
    """A table's deal seed: a domain of its own, so no table's deal is a league deal."""
    return derive_seed(league_seed, "tables", table_id)


def table_rules(league_rules: Rules, variant: str) -> Rules:
    """The league's rules for its own variant; another variant's defaults for any other."""
    return league_rules if league_rules.variant == variant else Rules(variant=variant)  # type: ignore[arg-type]


class Abandoned(BaseException):
    """The daemon is stopping: the table's game is given up (a BaseException: no handler of a seat's errors may
    take it for a forfeit); the next daemon ends the table (:data:`DAEMON_STOPPED`)."""


class RelayPerson:
    """The person at a card table, as a :class:`~referee.games.human.Person` of the human seat (which owns the
    clock): each message the seat is shown goes to the database with its deadline in wall-clock seconds (for the
    page's clock), and the answer is what ``durak serve`` stored for the request."""

    def __init__(self, table_id: int, store: ArenaStore, stopping: threading.Event) -> None:
        self.table_id, self.store, self.stopping = table_id, store, stopping

    def show(self, message: SeatMessage, clock: ClockReading) -> None:
        deadline = None if clock.deadline is None else time.time() + (clock.deadline - time.monotonic())
        self.store.add_table_message(self.table_id, encoder.encode(message).decode(), deadline)

    def choose(self, request: Request, deadline: float) -> str | None:
        """The stored answer, waited for until the monotonic ``deadline`` (None then). The server stores only a
        legal answer; anything else is waited past, never taken. :raises Abandoned: the daemon is stopping."""
        while time.monotonic() < deadline and not self.store.is_resigned(self.table_id):
            action = self.store.move(self.table_id, request.id)
            if action is not None and action in request.legal:
                return action
            if self.stopping.wait(POLL):
                raise Abandoned()
        return None

    def resigned(self) -> str | None:
        """The table page's resign button (``durak serve`` stores it), asked between moves and in the person's."""
        return "resigned at the table" if self.store.is_resigned(self.table_id) else None


class TableRunner:
    """Plays the card tables the web server opens, each in a thread, until :meth:`stop`."""

    def __init__(self, db_path: Path, loaded: LoadedLeague, isolation: Isolation) -> None:
        self.db_path, self.loaded, self.isolation = db_path, loaded, isolation
        self.threads: dict[int, threading.Thread] = {}
        self.stopping = threading.Event()
        self._watcher: threading.Thread | None = None

    def start(self) -> None:
        """End the tables a stopped daemon left playing, then watch for new ones in a thread."""
        with ArenaStore(self.db_path) as store:
            league = store.league()
            assert league is not None
            self.league = LeaguePrivate(self.db_path).with_seed(league)  # each table's deal follows from it
            for table in store.tables(league.id, "playing"):
                store.end_table(table.id, None, DAEMON_STOPPED)
        self._watcher = threading.Thread(target=self._watch, name="tables", daemon=True)
        self._watcher.start()

    def stop(self, timeout: float = 10.0) -> None:
        self.stopping.set()
        if self._watcher is not None:
            self._watcher.join(timeout)
        for thread in list(self.threads.values()):
            thread.join(timeout)

    def _watch(self) -> None:
        with ArenaStore(self.db_path) as store:
            while not self.stopping.wait(POLL):
                try:
                    self._start_waiting(store)
                except StoreError:
                    continue  # a busy database: look again
                except Exception:  # a bug, or a row no table can be: the watcher goes on, the league too
                    traceback.print_exc()
                    continue
                for table_id, thread in list(self.threads.items()):
                    if not thread.is_alive():
                        del self.threads[table_id]

    def _start_waiting(self, store: ArenaStore) -> None:
        for table in store.tables(self.league.id, "waiting"):
            if table.id not in self.threads:
                store.start_table(table.id)
                thread = threading.Thread(target=self.play, args=(table,), name=f"table {table.id}", daemon=True)
                self.threads[table.id] = thread
                thread.start()

    def play(self, table: TableRow) -> None:
        """Play ``table`` to its end and store its game (or why it could not be played). A bug ends this table
        with its reason and a traceback on the daemon's stderr; the league and the other tables go on."""
        with ArenaStore(self.db_path) as store:
            try:
                self._play(store, table)
            except Exception as exc:  # a thread's last stop: nothing above it would see the error
                traceback.print_exc()
                store.end_table(table.id, None, f"the table could not be played: internal error "
                                                f"({type(exc).__name__})")

    def _play(self, store: ArenaStore, table: TableRow) -> None:
        clients = self._clients(store, table)
        try:
            seed = table_seed(self.league.seed, table.id)
            game = new_game(table_rules(self.loaded.table.rules, table.variant), table.players,
                            SeededRng(seed))
            record = play_game(game, clients, f"table{table.id}", deal=f"table:{table.id}",
                               bot_seeds=[derive_seed(seed, "bots", s) for s in range(table.players)])
        except (BotError, ValueError, StoreError) as exc:  # a seat that cannot start, a database that fails
            store.end_table(table.id, None, f"the table could not be played: {exc}")
            return
        except Abandoned:
            return
        finally:
            for client in clients:
                client.stop(grace=0.0)
        versions = {v.name: v.sha256 for v in store.versions(self.league.id)}
        store.end_table(table.id, StoredGame(
            slot_key=f"table:{table.id}", game_index=0, deal_seed=seed, rotation=0,
            record=record.to_result_record(), replay=replay_lines(record), stderr=record.stderr,
            move_us=record.move_us, bot_files=[versions.get(name, "") for name in record.names]))

    def _clients(self, store: ArenaStore, table: TableRow) -> list[Seat]:
        """The seats: the person's relay at ``table.seat``, the league's versions (as its workers start them) at
        the others."""
        arena = self.loaded.arena
        versions = {v.name: v for v in store.versions(self.league.id)}
        person_clock = HumanClock(move_time=arena.table_move_seconds, bank=arena.table_bank_seconds)
        bots = iter(table.bots)
        clients: list[Seat] = []
        for seat in range(table.players):
            if seat == table.seat:
                person = RelayPerson(table.id, store, self.stopping)
                clients.append(HumanSeat(table.author, person, person_clock))
                continue
            version = versions[next(bots)]
            clients.append(BotClient(version.name, BotCommand(version.command, cwd=version.dir,
                                                              env=scrubbed_env(version.env)),
                                     limits=self.loaded.table.resource_limits(),
                                     time_control=self.loaded.table.time_control(), isolation=self.isolation))
        return clients
