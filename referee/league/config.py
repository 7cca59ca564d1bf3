"""The league config: a tournament config's table (``variant``, ``players`` as one size or a list of sizes,
``restart``, ``pause``, ``sandbox``, ``cluster``, ``[rules]``, ``[time]``, ``[limits]``), a ``[league]`` table of
matchmaking, quarantine and refit settings, an ``[arena]`` table of what the web arena allows, and the bots to
start with, if any (each with an ``author``).

``sample_bots/league.toml`` is the annotated contract. The table is checked by the tournament config's own checks
(:func:`referee.tournament.config.check_config`), so each key means the same in both and fails with the same
words. What defines the games (the rules, the clock, the limits, ``pause`` and ``restart``) is fingerprinted: a
league database keeps the config of its first run and refuses a config whose games would differ; the
``[league]`` settings, the table sizes and the sandbox may change between runs.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal

import msgspec

from referee.analysis.evaluate import DEFAULT_PLAYOUTS
from referee.engine.rng import derive_seed
from referee.league.matchmaker import MatchSettings
from referee.tournament.config import (
    CHOICES,
    SEED_KEY_ERROR,
    AtLeastOne,
    BotConfig,
    ConfigError,
    LimitsConfig,
    LoadedConfig,
    Players,
    Restart,
    Sandbox,
    TimeConfig,
    TournamentConfig,
    check_config,
    read_config,
)
from referee.tournament.toml_errors import TomlSchema

NonNegative = Annotated[float, msgspec.Meta(ge=0, description="must not be negative")]
Positive = Annotated[float, msgspec.Meta(gt=0, description="must be positive")]
Count = Annotated[int, msgspec.Meta(ge=0, description="must not be negative")]
Playouts = Annotated[int, msgspec.Meta(ge=2, description="must be at least 2")]


class LeagueSettings(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``[league]``: how tables are formed (:class:`referee.league.matchmaker.MatchSettings`), when a version is
    quarantined, how often the board is refitted, what a new version's gate plays and how many bot processes a
    worker keeps."""

    min_games: Count = 30
    window_min: NonNegative = 100.0
    window_sigmas: NonNegative = 2.0
    widen_step: Positive = 50.0
    max_in_flight: AtLeastOne = MatchSettings.max_in_flight
    max_pool: AtLeastOne = 8
    max_lead: AtLeastOne | None = None  # None: the largest table size
    max_failures: AtLeastOne = 3
    refit_seconds: Positive = 30.0
    gate_games: AtLeastOne = 1
    max_live_bots: AtLeastOne = 64
    finals_games: AtLeastOne = 2000


class ArenaSettings(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``[arena]``: what the web arena (``durak serve``) lets an author do, and what an upload may take. The daemon
    and the web server both read it from the league's stored config, so it has one home."""

    max_bots_per_author: AtLeastOne = 3
    uploads_per_hour: AtLeastOne = 10
    store_mb_per_author: AtLeastOne = 256
    archive_mb: AtLeastOne = 64
    build_seconds: Positive = 120.0
    build_memory_mb: AtLeastOne = 1024
    build_scratch_mb: AtLeastOne = 256
    side_games_per_hour: AtLeastOne = 100
    side_cpu_seconds_per_hour: Positive = 600.0
    tables_per_author: AtLeastOne = 1  # card tables (a person against bots) an author may have open at once
    tables_total: AtLeastOne = 4  # card tables open at once in the whole arena (each holds sandboxed bots)
    table_move_seconds: Positive = 30.0  # the person's time for each move at a card table
    table_bank_seconds: NonNegative = 120.0  # extra time a person may draw on over a game (a bot's time bank)
    table_bots: Literal["any", "own"] = "any"  # whom a person may play: any active version, or their own bots only
    analyses_per_hour: AtLeastOne = 20  # post-game analyses an author may ask for in any hour
    analysis_cpu_seconds_per_hour: Positive = 300.0  # CPU seconds the daemon spends on an author's analyses in an hour
    analysis_playouts: Playouts = DEFAULT_PLAYOUTS  # worlds per decision of an analysis (durak analyze --playouts)


class LeagueBotConfig(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """One ``[[bots]]`` table: a tournament bot's keys and its ``author`` (no table seats two bots of one author)."""

    name: str
    command: str | list[str]
    dir: str | None = None
    env: dict[str, str] = {}
    author: str = ""


class LeagueConfig(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """The whole file, as decoded."""

    name: str
    variant: str = "podkidnoy"
    players: Players | list[Players] = 2
    restart: Restart = "never"
    pause: bool = True
    sandbox: Sandbox = "bwrap"
    cluster: str | None = None
    rules: dict[str, bool | int | str | None] = {}
    time: TimeConfig = msgspec.field(default_factory=TimeConfig)
    limits: LimitsConfig = msgspec.field(default_factory=LimitsConfig)
    league: LeagueSettings = msgspec.field(default_factory=LeagueSettings)
    arena: ArenaSettings = msgspec.field(default_factory=ArenaSettings)
    bots: list[LeagueBotConfig] = []

    @property
    def sizes(self) -> tuple[int, ...]:
        """The table sizes groups are drawn from (a repeated size is drawn more often)."""
        return (self.players,) if isinstance(self.players, int) else tuple(self.players)


@dataclass(frozen=True)
class LoadedLeague:
    """A checked league config: its table as a tournament's (rules, time, limits, the config's bots resolved) and
    each of those bots' author."""

    config: LeagueConfig
    table: LoadedConfig
    authors: dict[str, str]
    text: str  # the file's content, kept in the database at the first run

    @property
    def settings(self) -> LeagueSettings:
        return self.config.league

    @property
    def arena(self) -> ArenaSettings:
        return self.config.arena

    def match_settings(self) -> MatchSettings:
        league = self.config.league
        return MatchSettings(sizes=self.config.sizes, min_games=league.min_games, window_min=league.window_min,
                             window_sigmas=league.window_sigmas, widen_step=league.widen_step,
                             max_in_flight=league.max_in_flight, max_pool=league.max_pool, max_lead=league.max_lead)

    def fingerprint(self) -> str:
        """SHA-256 (hex) of what defines the games: the effective rules, the clock, the limits, pause and
        restart. A stored league refuses a config whose fingerprint differs."""
        config = self.config
        document = {"rules": msgspec.to_builtins(self.table.rules), "time": msgspec.to_builtins(config.time),
                    "limits": msgspec.to_builtins(config.limits), "pause": config.pause, "restart": config.restart}
        return hashlib.sha256(msgspec.json.encode(document, order="sorted")).hexdigest()

    def gate_seed(self, league_seed: int, version: str) -> int:
        """The seed of a version's gate games: a domain of its own, never a league deal's."""
        return derive_seed(league_seed, "league", "gate", version)

    def side_seed(self, league_seed: int, author: str, side: int) -> int:
        """The seed of an author's side request's deals (deal d's seed: ``derive_seed(this, d)``): the author's
        own domain, never a league deal's nor a gate's."""
        return derive_seed(league_seed, "league", "side", author, side)


_SCHEMA = TomlSchema(LeagueConfig, {**CHOICES}, {"seed": SEED_KEY_ERROR.replace("tournament seed", "league seed")})


def load_league(path: str | Path, *, sandbox: str | None = None, text: str | None = None,
                with_bots: bool = True) -> LoadedLeague:
    """Read, decode and check a league config; :class:`ConfigError` (one line naming the key) for any problem.
    ``text``: the config's content (a stored league's), read instead of the file; ``path`` still anchors the
    bots' folders. ``with_bots=False`` leaves out its bots (entered at its first run: their folders may be gone
    since)."""
    path = Path(path)
    label = str(path)
    config, data = read_config(path, text, LeagueConfig, _SCHEMA)
    if not with_bots:
        config = msgspec.structs.replace(config, bots=[])
    if not config.sizes:
        raise ConfigError(f"{label}: key 'players': give a table size (2-6) or a list of them")
    table = TournamentConfig(
        name=config.name, variant=config.variant, players=max(config.sizes), restart=config.restart,
        pause=config.pause, sandbox=config.sandbox, max_failures=config.league.max_failures, cluster=config.cluster,
        rules=config.rules, time=config.time, limits=config.limits,
        bots=[BotConfig(name=bot.name, command=bot.command, dir=bot.dir, env=bot.env) for bot in config.bots])
    loaded = check_config(table, path, sandbox=sandbox, label=label, table_only=True)
    if sandbox is not None:
        config = msgspec.structs.replace(config, sandbox=loaded.config.sandbox)
    return LoadedLeague(config, loaded, {bot.name: bot.author or bot.name for bot in config.bots},
                        data.decode("utf-8", "replace"))
