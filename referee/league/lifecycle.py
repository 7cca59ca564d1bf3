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

import errno
import fcntl
import os
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from referee.bots.errors import BotLaunchError
from referee.bots.launcher import BotCommand, scrubbed_env
from referee.bots.plan import env_refusal
from referee.bots.sandbox.isolation import Isolation, SandboxUnavailable
from referee.games.checkbot import CheckPlan, check_bot, format_report
from referee.league.botstore import (
    SnapshotError,
    prune_staged,
    remove_snapshot,
    remove_staged,
    staged_folder,
    store_root,
    take_snapshot,
)
from referee.league.build import BuildRefused, build_bot
from referee.league.config import LoadedLeague
from referee.league.names import name_problem
from referee.league.uploads import UPLOAD_PATH, UploadRefused, UploadSteps, archive_caps, build_limits, unpack
from referee.results.arena_store import ArenaStore
from referee.results.league_store import LeagueStore, RequestRow, VersionRow
from referee.results.requests import (
    AddBot,
    CarryOutUpload,
    Payload,
    QuarantineBot,
    ReinstateBot,
    RetireBot,
    UpdateBot,
)
from referee.results.rows import TournamentRow
from referee.results.store import StoreError
from referee.text import visible
from referee.tournament.errors import TournamentError
from referee.tournament.worker import BotSpec

#: The most an author's name may hold (as the request's Struct bounds it), shown on the board.
_AUTHOR_CHARS = 64


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
    failed: bool = False  # the referee's own error, not the request's: stored as failed

    @property
    def status(self) -> Literal["done", "refused", "failed"]:
        return "failed" if self.failed else "done" if self.accepted else "refused"


class LockError(TournamentError):
    """The league's lock file cannot be opened: one line."""


class LeagueLock:
    """The league's lock (a file beside its database, ``flock``-ed): held by the daemon for as long as it runs, or
    by a lifecycle command that finds no daemon, so that one process at a time carries out requests. The file is
    opened without following a link: its folder is the web server's user's to write, who could plant one."""

    def __init__(self, db_path: Path) -> None:
        self.path = db_path.with_name(db_path.name + ".lock")
        self._fd: int | None = None

    def acquire(self) -> bool:
        """Take the lock if nobody holds it; False if another process does.

        :raises LockError: the lock file cannot be opened (it is a link, say).
        """
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK, 0o600)
        except OSError as exc:
            why = "it is a link, which is never followed (remove it)" if exc.errno == errno.ELOOP else exc.strerror
            raise LockError(f"cannot open the league's lock {self.path}: {why}") from None
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
    """Carries out a league's pending requests (:meth:`apply`), one at a time, in the order asked.

    Every request row is untrusted input (the web server's user may write the database): its payload is decoded
    strictly (:mod:`referee.results.requests`), its bot's name checked, its staged folder or upload looked up in the
    store, and anything that does not hold is refused with one line. A request is marked ``working`` while carried
    out: an error of the referee's own fails that one request and the league goes on; a request found ``working``
    at the next :meth:`apply` was being carried out when its process died, and is failed, never taken again.
    """

    def __init__(self, store: ArenaStore, league: TournamentRow, loaded: LoadedLeague, isolation: Isolation) -> None:
        self.store = store
        self.league = league
        self.loaded = loaded
        self.isolation = isolation
        self.root = store_root(store.path)
        #: Every worker's check of a new version (a cluster's), after the gate passed here; None: none needed.
        self.remote_check: Callable[[BotSpec, str], str | None] | None = None
        #: Each request kind's handler, by its payload's type: a new kind is one Struct and one entry here.
        self._handlers: dict[type[Payload], Callable[[RequestRow, Any], Change]] = {
            AddBot: self._add, UpdateBot: self._update, RetireBot: self._retire, ReinstateBot: self._reinstate,
            QuarantineBot: self._quarantine, CarryOutUpload: self._upload}

    def apply(self) -> list[Change]:
        """Carry out the pending requests but ``finals``, which the daemon alone carries out (:mod:`.daemon`).
        Call it only while holding the league's lock."""
        changes = self._fail_abandoned()
        pending = self.store.pending_requests(self.league.id)
        prune_staged(self.root, {p.staged for r in pending if isinstance(p := r.payload, AddBot | UpdateBot)})
        for request in pending:
            if request.kind == "finals" and not request.problem:
                continue
            if not self.store.take_request(request.id):
                continue
            try:
                change = self.carry_out(request)
            except Exception as exc:
                change = self._failed(request, f"the referee's own error ({type(exc).__name__}: "
                                               f"{visible(str(exc))[:300]}); the league goes on")
            except BaseException:  # Ctrl-C, SIGTERM: asked again at the next start
                self.store.give_back_request(request.id)
                raise
            self.store.finish_request(request.id, change.status, change.result)
            changes.append(change)
        return changes

    def carry_out(self, request: RequestRow) -> Change:
        """The request carried out, or why it is refused."""
        payload = request.payload
        if payload is None or request.problem:
            return Change(request, False, request.problem or "no payload")
        handler = self._handlers.get(type(payload))
        if handler is None:
            return Change(request, False, f"the daemon carries out no {payload.kind!r} request here")
        if (problem := name_problem(request.bot)) is not None:
            return Change(request, False, problem)
        return handler(request, payload)

    def _fail_abandoned(self) -> list[Change]:
        changes = []
        for request in self.store.abandoned_requests(self.league.id):
            changes.append(self._failed(request, "the daemon stopped while carrying it out; it is not taken "
                                                 "again: ask again"))
            self.store.finish_request(request.id, "failed", changes[-1].result)
        return changes

    def _failed(self, request: RequestRow, why: str) -> Change:
        print(f"durak league: request {request.id} ({visible(request.kind)}) failed: {why}", file=sys.stderr)
        if isinstance(request.payload, CarryOutUpload):  # its upload ends too, so its author sees why
            try:
                upload = self.store.upload(request.payload.upload)
                if upload.request_id == request.id and not upload.done:
                    UploadSteps(self.store, upload).refused("referee", why)
            except StoreError:
                pass
        return Change(request, False, why, failed=True)

    # -- the handlers ---------------------------------------------------------------------

    def _versions(self, bot: str) -> list[VersionRow]:
        return [v for v in self.store.versions(self.league.id) if v.bot == bot]

    def _latest(self, bot: str) -> VersionRow | None:
        versions = self._versions(bot)
        return versions[-1] if versions else None

    def _add(self, request: RequestRow, payload: AddBot) -> Change:
        try:
            latest = self._latest(request.bot)
            if latest is not None:
                return Change(request, False, f"the league has a bot {request.bot!r} already: durak league update "
                              "gives it a new version")
            return self._staged_version(request, payload.staged, payload.command, payload.env,
                                        payload.author or request.bot, None)
        finally:
            remove_staged(self.root, payload.staged)

    def _update(self, request: RequestRow, payload: UpdateBot) -> Change:
        try:
            latest = self._latest(request.bot)
            if latest is None:
                return Change(request, False, f"no bot {request.bot!r} in the league: durak league add enters it")
            return self._staged_version(request, payload.staged, payload.command or latest.command,
                                        latest.env if payload.env is None else payload.env, latest.author, latest)
        finally:
            remove_staged(self.root, payload.staged)

    def _staged_version(self, request: RequestRow, staged: str, command: list[str], env: dict[str, str],
                        author: str, latest: VersionRow | None) -> Change:
        try:
            source = staged_folder(self.root, staged)
        except SnapshotError as exc:
            return Change(request, False, str(exc))
        return self._new_version(request, source, command, env, author, latest)

    def _retire(self, request: RequestRow, payload: RetireBot) -> Change:
        versions = self._versions(request.bot)
        if not versions:
            return Change(request, False, f"no bot {request.bot!r} in the league")
        active = [v.name for v in versions if v.retired is None]
        if not active:
            return Change(request, False, f"{request.bot!r} is retired already")
        for name in active:
            self.store.set_version(self.league.id, name, retired=True)
        return Change(request, True, f"retired {', '.join(active)}", stopped=tuple(active))

    def _quarantine(self, request: RequestRow, payload: QuarantineBot) -> Change:
        """The organizer's: as a run of verdicts would, until reinstated."""
        latest = self._latest(request.bot)
        if latest is None:
            return Change(request, False, f"no bot {request.bot!r} in the league")
        if not latest.active:
            return Change(request, False, f"{latest.name} is not playing (retired or quarantined already)")
        why = visible(payload.reason)
        self.store.set_version(self.league.id, latest.name, quarantined=why)
        return Change(request, True, f"quarantined {latest.name}: {why}", stopped=(latest.name,))

    def _reinstate(self, request: RequestRow, payload: ReinstateBot) -> Change:
        latest = self._latest(request.bot)
        if latest is None:
            return Change(request, False, f"no bot {request.bot!r} in the league")
        if latest.active:
            return Change(request, False, f"{latest.name} is neither retired nor quarantined")
        self.store.set_version(self.league.id, latest.name, retired=False, quarantined=None)
        return Change(request, True, f"reinstated {latest.name}", reinstated=latest.name)

    def _new_version(self, request: RequestRow, source: Path, command: list[str], env: dict[str, str], author: str,
                     latest: VersionRow | None) -> Change:
        """A new version of ``request.bot`` from ``source``, a folder in the store (staged or unpacked): copied to
        its own folder of the store, then gated."""
        for name, value in env.items():
            if (why := env_refusal(name, value)) is not None:
                return Change(request, False, visible(why))
        if len(author) > _AUTHOR_CHARS or visible(author) != author or not author:
            return Change(request, False, f"bad author name {visible(author)!r}: one plain line of at most "
                          f"{_AUTHOR_CHARS} characters")
        number = 1 if latest is None else latest.number + 1
        try:
            snapshot = take_snapshot(source, self.root, request.bot, number)
        except (SnapshotError, OSError) as exc:
            return Change(request, False, str(exc))
        if latest is not None and snapshot.sha256 == latest.sha256:
            remove_snapshot(snapshot.dir)
            return Change(request, False, f"the files of {request.bot!r} did not change since {latest.name}")
        version = VersionRow(name=f"{request.bot}@{number}", bot=request.bot, number=number, author=author,
                             command=list(command), env=dict(env), dir=str(snapshot.dir), sha256=snapshot.sha256)
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

    def _upload(self, request: RequestRow, payload: CarryOutUpload) -> Change:
        """An uploaded archive: extracted, built and checked in a staging folder (:mod:`.uploads`), then added or
        updated as its author's version through the gate; every step recorded in the upload's row. The upload
        must be the one this request was stored with, still waiting, and of the request's bot and author."""
        try:
            upload = self.store.upload(payload.upload)
        except StoreError:
            return Change(request, False, f"no upload {payload.upload}")
        if (upload.request_id != request.id or upload.bot != request.bot or upload.author != payload.author
                or upload.done):
            return Change(request, False, f"upload {upload.id} is not this request's to carry out")
        steps = UploadSteps(self.store, upload)
        latest = self._latest(request.bot)
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
            manifest = unpacked.manifest
            change = self._new_version(request, unpacked.folder, manifest.argv,
                                       {"PATH": UPLOAD_PATH, **manifest.env}, upload.author, latest)
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
        if request.status not in ("pending", "working") or time.monotonic() >= deadline:
            return request
        if carry_out is not None and carry_out():
            continue
        time.sleep(step)
