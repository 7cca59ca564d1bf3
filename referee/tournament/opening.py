"""Opening a run: the database's tournament (resumed, checked, or new) and its bots (checked against their stored
rows, then preflighted), before the coordinator plays a game.

A bot's *identity* (:class:`BotIdentity`) is what makes it the same bot as its stored games': its config
settings and its files. Its version (from its handshake) is recorded, never part of it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import msgspec

from referee.bots.errors import BotError
from referee.bots.sandbox.isolation import Isolation
from referee.bots.session import BotClient
from referee.results.store import BotRow, Store, TournamentRow
from referee.tournament.botfiles import BotFiles, bot_files_sha256
from referee.tournament.config import LoadedConfig, ResolvedBot, draw_seed
from referee.tournament.course import TournamentKey
from referee.tournament.errors import PreflightError, TournamentError
from referee.tournament.worker import bot_command

#: What ``--changed-bots`` may say to do with a bot whose identity changed since its stored games.
CHANGED_POLICIES = ("replay", "keep")


@dataclass(frozen=True)
class BotIdentity:
    """A bot as the config and its folder define it now."""

    bot: ResolvedBot
    settings: str  # JSON of ResolvedBot.settings()
    files: BotFiles


def identify_bot(bot: ResolvedBot, protected: list[str]) -> BotIdentity:
    """``bot``'s identity: its settings and its files hashed (less the run's ``protected`` paths)."""
    return BotIdentity(bot, msgspec.json.encode(bot.settings(), order="sorted").decode(), bot.hashed_files(protected))


def open_tournament(store: Store, loaded: LoadedConfig, fresh: bool, seed: int | None,
                    key: TournamentKey | None = None) -> TournamentRow:
    """The database's active tournament, checked against the config, or a new one. ``key``: an SPRT's name
    and fingerprint (:mod:`referee.tournament.sprt_run`), in place of the config's."""
    active = store.active_tournament()
    name, fingerprint = key or (loaded.config.name, loaded.schedule_fingerprint())
    if active is not None and not fresh:
        # a database made while configs held seeds stored the fingerprint of `seed = <its seed>`
        legacy = () if key else (loaded.schedule_fingerprint(legacy_seed=active.seed),)
        if active.fingerprint not in (fingerprint, *legacy):
            changed = ("another SPRT (its bots, Elo bounds, alpha, beta, mode, variant, rules, rotations or "
                       "series differ)") if key else ("a different schedule (variant, rules, table size, format, "
                                                     "rotations or series changed)")
            kind = "test" if key else "tournament"
            raise TournamentError(f"{store.path} holds {kind} {active.name!r} with {changed}; use --fresh to start a "
                                  f"new {kind} in it (the old games are kept), or another --db")
        if seed is not None and seed != active.seed:
            raise TournamentError(f"{store.path} holds tournament {active.name!r} with another seed than the "
                                  "seed file's; leave out --seed-file to resume it, or use --fresh or another --db")
        return active
    seed = seed if seed is not None else draw_seed()
    return store.create_tournament(name, str(loaded.path), loaded.path.read_text(), fingerprint, seed)


def check_bots(store: Store, tournament: TournamentRow, identities: list[BotIdentity],
               changed_bots: str | None) -> tuple[dict[str, BotRow], int]:
    """Compare each bot with its stored row; a bot that changed since its stored games is refused, naming
    what changed, unless ``changed_bots`` says what to do. Returns the rows to play with, and the stored games
    moved to history (``--changed-bots replay``)."""
    stored_rows = store.bots(tournament.id)
    with_games = store.bots_with_games(tournament.id)
    rows: dict[str, BotRow] = {}
    refused: list[str] = []
    superseded = 0
    for identity in identities:
        bot = identity.bot
        row = BotRow(bot.name, list(bot.argv), str(bot.dir), identity.files.sha256, "",
                     settings=identity.settings, files=identity.files.manifest)
        old = stored_rows.get(bot.name)
        changes = [] if old is None else _changes(old, identity)
        if old is not None and not changes:
            row = replace(row, version=old.version, disqualified=old.disqualified, reason=old.reason)
        elif old is not None and bot.name in with_games:
            if changed_bots is None:
                refused.append(f"bot {bot.name!r} changed since its stored games ({'; '.join(changes)})")
            elif changed_bots == "replay":
                superseded += store.supersede(tournament.id, [bot.name], f"bot {bot.name} replaced")
        rows[bot.name] = row
    if refused:
        raise TournamentError(
            f"{'; '.join(refused)}. Say what to do: --changed-bots replay (its stored games are played again "
            "with the new version; the old ones are kept as history, not rated) or --changed-bots keep (its "
            "stored games stay rated); or --fresh for a new tournament, or another --db")
    for row in rows.values():
        if stored_rows.get(row.name) != row:
            store.save_bot(tournament.id, row)
    return rows, superseded


def _changes(old: BotRow, identity: BotIdentity) -> list[str]:
    """What makes ``identity`` another bot than the stored ``old`` row: settings and files, each named."""
    if not old.settings:  # a row of schema 1 kept only the digest over the whole folder
        legacy = bot_files_sha256(identity.bot.dir, bot=identity.bot.name)
        return [] if legacy == old.sha256 else ["its files changed (an older database lists none)"]
    changes = []
    was, now = msgspec.json.decode(old.settings), msgspec.json.decode(identity.settings)
    for key in sorted(set(was) | set(now)):
        if was.get(key) != now.get(key):
            changes.append(f"its {key} changed: {_short(was.get(key))} -> {_short(now.get(key))}")
    return changes + identity.files.changes(old.files)


def _short(value: object) -> str:
    text = msgspec.json.encode(value).decode()
    return text if len(text) <= 80 else text[:77] + "..."


def preflight_bots(store: Store, tournament: TournamentRow, loaded: LoadedConfig, isolation: Isolation,
                   rows: dict[str, BotRow]) -> None:
    """Start and handshake every bot once, in its sandbox, before any game; record each one's version.

    A bot that fails stops the run (:class:`PreflightError`), or with ``preflight = "disqualify"`` is
    disqualified, its games forfeits."""
    failures = []
    for bot in loaded.bots:
        row = rows[bot.name]
        if row.disqualified:
            continue
        client = BotClient(bot.name, bot_command(bot), limits=loaded.resource_limits(),
                           time_control=loaded.time_control(), isolation=isolation)
        try:
            version = client.start().version
        except BotError as exc:
            client.stop(grace=0.0)
            failure = _preflight_failure(exc, "".join(chunk.text for chunk in client.take_stderr()))
            if loaded.config.preflight == "stop":
                failures.append(f"bot {bot.name!r} {failure}")
            else:
                store.disqualify(tournament.id, bot.name, failure)
            continue
        finally:
            client.stop()
        if version != row.version:  # recorded, never part of the bot's identity
            rows[bot.name] = replace(row, version=version)
            store.save_bot(tournament.id, rows[bot.name])
    if failures:
        raise PreflightError(f"{'; '.join(failures)}; no game was played (preflight = \"disqualify\" in the "
                             "config plays on without such bots)")


def _preflight_failure(exc: BotError, stderr: str) -> str:
    tail = [line for line in stderr.splitlines() if line.strip()][-3:]
    shown = f"; its stderr ends: {' | '.join(tail)}" if tail and tail[-1][:60] not in exc.reason else ""
    return f"failed its preflight (started once before any game): {exc.verdict}: {exc.reason}{shown}"
