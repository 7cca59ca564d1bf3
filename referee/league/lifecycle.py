"""Bots coming and going while a league runs: the requests ``durak league add/update/retire/reinstate`` write, carried
out between batches by the daemon (or by the command itself, when no daemon runs: the one that holds the league's
lock carries them out).

An ``add`` or ``update`` becomes a version only through the gate: its folder is copied into the bot store
(:mod:`.botstore`), then the copy must start and shake hands in its sandbox and play a few validation games
against the sample random bot, as ``durak check-bot`` does (on seeds of its own domain, never a league deal's).
A version that fails is refused with its verdict and the end of its stderr, and its copy removed. An update
retires the bot's previous version, whose games and rating stay as history. An ``upload`` (the web arena's) is an
archive, extracted, built and checked first (:mod:`.uploads`), then an add or an update of its author's bot.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from referee.bots.errors import BotLaunchError
from referee.bots.launcher import BotCommand, scrubbed_env
from referee.bots.sandbox.isolation import Isolation, SandboxUnavailable
from referee.games.checkbot import CheckPlan, check_bot, format_report
from referee.league.botstore import SnapshotError, remove_snapshot, store_root, take_snapshot
from referee.league.build import BuildRefused, build_bot
from referee.league.config import LoadedLeague
from referee.league.uploads import UploadRefused, UploadSteps, archive_caps, build_limits, unpack, version_request
from referee.results.arena_store import ArenaStore
from referee.results.league_store import LeagueStore, RequestRow, VersionRow
from referee.results.rows import TournamentRow
from referee.tournament.worker import BotSpec


@dataclass(frozen=True)
class Change:
    """What a carried-out request changed, for the daemon: a version that now plays, one that no longer does."""

    request: RequestRow
    accepted: bool
    result: str
    added: VersionRow | None = None
    stopped: tuple[str, ...] = ()  # versions retired (their open groups are void)
    reinstated: str | None = None
    gate_log: str = ""  # the gate's report, when one ran


class LeagueLock:
    """The league's lock (a file beside its database, ``flock``-ed): held by the daemon for as long as it runs, or
    by a lifecycle command that finds no daemon, so that one process at a time carries out requests."""

    def __init__(self, db_path: Path) -> None:
        self.path = db_path.with_name(db_path.name + ".lock")
        self._fd: int | None = None

    def acquire(self) -> bool:
        """Take the lock if nobody holds it; False if another process does."""
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        self._fd = fd
        return True

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


class Lifecycle:
    """Carries out a league's pending requests (:meth:`apply`), one at a time, in the order asked."""

    def __init__(self, store: ArenaStore, league: TournamentRow, loaded: LoadedLeague, isolation: Isolation) -> None:
        self.store = store
        self.league = league
        self.loaded = loaded
        self.isolation = isolation
        self.root = store_root(store.path)
        #: Every worker's check of a new version (a cluster's), after the gate passed here; None: none needed.
        self.remote_check: Callable[[BotSpec, str], str | None] | None = None

    def apply(self) -> list[Change]:
        """Carry out the pending requests but ``finals``, which the daemon alone carries out (:mod:`.daemon`)."""
        changes = []
        for request in self.store.pending_requests(self.league.id):
            if request.kind == "finals":
                continue
            change = self._carry_out(request)
            self.store.finish_request(request.id, "done" if change.accepted else "refused", change.result)
            changes.append(change)
        return changes

    def _carry_out(self, request: RequestRow) -> Change:
        versions = [v for v in self.store.versions(self.league.id) if v.bot == request.bot]
        latest = versions[-1] if versions else None
        if request.kind in ("add", "update"):
            return self._new_version(request, latest)
        if request.kind == "upload":
            return self._upload(request, latest)
        if latest is None:
            return Change(request, False, f"no bot {request.bot!r} in the league")
        if request.kind == "quarantine":  # the organizer's: as a run of verdicts would, until reinstated
            if not latest.active:
                return Change(request, False, f"{latest.name} is not playing (retired or quarantined already)")
            why = str(request.payload.get("reason") or "by the organizer")
            self.store.set_version(self.league.id, latest.name, quarantined=why)
            return Change(request, True, f"quarantined {latest.name}: {why}", stopped=(latest.name,))
        if request.kind == "retire":
            active = [v.name for v in versions if v.retired is None]
            if not active:
                return Change(request, False, f"{request.bot!r} is retired already")
            for name in active:
                self.store.set_version(self.league.id, name, retired=True)
            return Change(request, True, f"retired {', '.join(active)}", stopped=tuple(active))
        if latest.active:
            return Change(request, False, f"{latest.name} is neither retired nor quarantined")
        self.store.set_version(self.league.id, latest.name, retired=False, quarantined=None)
        return Change(request, True, f"reinstated {latest.name}", reinstated=latest.name)

    def _new_version(self, request: RequestRow, latest: VersionRow | None) -> Change:
        payload = request.payload
        if request.kind == "add" and latest is not None:
            return Change(request, False, f"the league has a bot {request.bot!r} already: durak league update "
                          "gives it a new version")
        if request.kind == "update" and latest is None:
            return Change(request, False, f"no bot {request.bot!r} in the league: durak league add enters it")
        number = 1 if latest is None else latest.number + 1
        try:
            snapshot = take_snapshot(Path(str(payload["dir"])), self.root, request.bot, number)
        except (SnapshotError, OSError) as exc:
            return Change(request, False, str(exc))
        if latest is not None and snapshot.sha256 == latest.sha256:
            remove_snapshot(snapshot.dir)
            return Change(request, False, f"the files of {request.bot!r} did not change since {latest.name}")
        command = [str(word) for word in _list(payload.get("command")) or (latest.command if latest else [])]
        env = {str(k): str(v) for k, v in _dict(payload.get("env") or (latest.env if latest else {})).items()}
        author = str(payload.get("author") or (latest.author if latest else "") or request.bot)
        version = VersionRow(name=f"{request.bot}@{number}", bot=request.bot, number=number, author=author,
                             command=command, env=env, dir=str(snapshot.dir), sha256=snapshot.sha256)
        refusal, gate_log = self.gate(version)
        if refusal is None and self.remote_check is not None:
            refusal = self.remote_check(BotSpec(name=version.name, argv=version.command, dir=version.dir,
                                                env=version.env), version.sha256)
        if refusal is not None:
            remove_snapshot(snapshot.dir)
            return Change(request, False, f"{version.name} failed its gate: {refusal}", gate_log=gate_log)
        added = self.store.add_version(self.league.id, version)
        stopped: tuple[str, ...] = ()
        if latest is not None and latest.retired is None:
            self.store.set_version(self.league.id, latest.name, retired=True)
            stopped = (latest.name,)
        return Change(request, True, f"added {added.name}" + "".join(f" (retired {name})" for name in stopped),
                      added=added, stopped=stopped, gate_log=gate_log)

    def _upload(self, request: RequestRow, latest: VersionRow | None) -> Change:
        """An uploaded archive: extracted, built and checked in a staging folder (:mod:`.uploads`), then added or
        updated as its author's version through the gate; every step recorded in the upload's row."""
        upload = self.store.upload(int(str(request.payload["upload"])))
        steps = UploadSteps(self.store, upload)
        archive = self.store.archive(upload.id)
        if latest is not None and latest.author != upload.author:
            why = f"the bot {request.bot!r} belongs to another author"
        elif archive is None:
            why = "its archive is gone (carried out before)"
        else:
            why = None
        if why is not None or archive is None:
            steps.refused("receive", why or "")
            return Change(request, False, f"upload {upload.id}: {why}")
        steps.status("extracting")
        staging = self.root / ".uploads" / str(upload.id)
        try:
            unpacked = unpack(archive, staging, archive_caps(self.loaded.arena), steps, request.bot, self._build)
            change = self._new_version(version_request(request, unpacked, upload.author, latest), latest)
        except UploadRefused as refused:
            return Change(request, False, f"upload {upload.id} refused at its {refused.step}: {refused}")
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        if change.accepted and change.added is not None:
            steps.done("gate", change.result, "accepted", gate_log=change.gate_log)
            self.store.step_upload(upload.id, "accepted", version=change.added.name)
        else:
            steps.refused("gate", change.result, gate_log=change.gate_log)
        return change

    def _build(self, folder: Path, command: list[str], output_tar: Path) -> tuple[bool, str, str]:
        """Run an upload's build command on ``folder`` in the sandbox, with the league's build limits."""
        try:
            outcome = build_bot(folder, command, self.isolation, build_limits(self.loaded.arena),
                                output_tar=output_tar)
        except BuildRefused as exc:  # a league whose sandbox has no network namespace builds nothing
            return False, str(exc), ""
        return outcome.ok, outcome.summary(), outcome.output

    def gate(self, version: VersionRow) -> tuple[str | None, str]:
        """Why ``version`` may not play (its handshake or validation games failed), or None: it passed; and the
        gate's report, for the author."""
        command = BotCommand(version.command, cwd=version.dir, env=scrubbed_env(version.env))
        table = self.loaded.table
        plan = CheckPlan(rules=[table.rules], players=2, games_per_seat=self.loaded.settings.gate_games,
                         seed=self.loaded.gate_seed(self.league.seed, version.name), clock=table.time_control())
        try:
            report = check_bot(command, plan, self.isolation)
        except (BotLaunchError, SandboxUnavailable) as exc:
            return str(exc), str(exc)
        lines = format_report(report)
        if report.passed:
            return None, "\n".join(lines)
        return " | ".join(line.strip() for line in lines
                          if line.startswith(("FAIL", "       ")) or "warning" in line), "\n".join(lines)


def wait_for(store: LeagueStore, request_id: int, timeout: float, *, step: float = 0.2,
             carry_out: Callable[[], bool] | None = None) -> RequestRow:
    """The request once carried out: by the daemon, or (``carry_out``, called while nobody holds the lock) here.
    Returns it still pending after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        request = store.request(request_id)
        if request.status != "pending" or time.monotonic() >= deadline:
            return request
        if carry_out is not None and carry_out():
            continue
        time.sleep(step)


def _list(value: object) -> list[object]:
    return list(value) if isinstance(value, list) else []


def _dict(value: object) -> dict[object, object]:
    return dict(value) if isinstance(value, dict) else {}
