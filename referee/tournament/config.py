"""The tournament config: a TOML file decoded with msgspec and validated once; every error is one line naming the key.

``sample_bots/tournament.toml`` is the annotated contract. Its layout: top-level keys first (``name``,
``variant``, ``players``, ``format``, ``deals``, ``rotations``, ``series``, ``tables``,
``challengers``, ``restart``, ``pause``, ``sandbox``, ``max_failures``, ``preflight``, ``cluster``), then the
tables ``[rules]`` (rule options, RULES.md 5c), ``[time]`` (seconds), ``[limits]`` (rlimits), ``[sprt]`` (what
``durak sprt`` tests) and one ``[[bots]]`` table per bot (``name``, ``command``, ``dir``, ``env``, ``files``).
Unknown keys and values of the wrong type are rejected.

Bots: ``command`` is an argv array or a string split like a shell (:func:`shlex.split`); every word that is
exactly ``{python}`` becomes the referee's own interpreter (``sys.executable``), so Python bots that import
``protocol`` run with the Python that has durak-referee installed. The command runs in the bot's ``dir``
(relative to the config file's folder, ``~`` expanded), with a scrubbed environment plus the bot's ``env``.
Every bot needs its ``dir``: there is no default, because the only candidates are guesses (the config's
folder, which would show every bot the config and whatever sits beside it, or a folder read out of the
command, which ``{python} -m pkg`` or ``node bot.js`` do not name) and the folder is what the bot runs in,
what ``bwrap`` shows it and what its files are hashed from.

The tournament seed, from which every deck follows (RULES.md 8), is never in a config: a config is a file the
bots may be able to read (at the weaker isolation levels, or with loose file modes). It is drawn at the first
run and kept only in the results database (mode 600), or given by ``durak tournament --seed-file PATH`` (a
file only its owner can read, :mod:`referee.tournament.secret`); ``durak seed DB`` prints it when asked. A
``seed`` key is an error saying so.

TOML has no null, so a limit of ``0`` means "no limit" (the same as leaving out a limit whose default is
none), and a time bank is set only by writing ``bank``.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import secrets
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal, Protocol, TypeVar, get_args

import msgspec

from protocol.rules import MAX_PLAYERS, MIN_PLAYERS, Rules, RulesError, rules_from_options
from referee.bots.limits import ResourceLimits, TimeControl
from referee.bots.plan import env_refusal
from referee.bots.sandbox.isolation import LEVELS, Isolation, Level, isolation_for
from referee.bots.words import expand_words
from referee.rating.bradley_terry import MODES, Mode
from referee.rating.sprt import bounds
from referee.tournament.botfiles import OUTPUT_PATTERNS, BotFiles, bot_files
from referee.tournament.botfiles import BotFilesError as BotFilesError
from referee.tournament.botfiles import bot_files_sha256 as bot_files_sha256
from referee.tournament.schedule import SCHEDULE_VERSION
from referee.tournament.toml_errors import TomlSchema, describe, one_line

Format = Literal["round_robin", "sampled", "gauntlet"]
Rotations = Literal["cyclic", "all"]
Restart = Literal["never", "game"]
Sandbox = Level
Preflight = Literal["stop", "disqualify"]

#: The allowed values of the keys whose type is a choice, for error messages.
CHOICES: dict[str, tuple[str, ...]] = {
    "format": get_args(Format),
    "rotations": get_args(Rotations),
    "restart": get_args(Restart),
    "sandbox": LEVELS,
    "preflight": get_args(Preflight),
    "sprt.mode": MODES,
}

# Numeric bounds of one field, checked by msgspec as it decodes; each description is the error's wording
# (:mod:`referee.tournament.toml_errors` reads it back). The bounded floats are all seconds (the ``[time]`` table).
Players = Annotated[int, msgspec.Meta(ge=MIN_PLAYERS, le=MAX_PLAYERS,
                                      description=f"must be {MIN_PLAYERS}-{MAX_PLAYERS}")]
AtLeastOne = Annotated[int, msgspec.Meta(ge=1, description="must be at least 1")]
Seconds = Annotated[float, msgspec.Meta(gt=0, description="must be positive")]
SecondsOrZero = Annotated[float, msgspec.Meta(ge=0, description="must not be negative")]
Limit = Annotated[int, msgspec.Meta(ge=0, description="must be positive, or 0 for no limit")]
#: The error for a ``seed`` key: a config is readable by bots at the weak levels, so it holds no secret.
SEED_KEY_ERROR = ("key 'seed': a config must not hold the tournament seed (bots may be able to read it): remove "
                  "the key; the seed is drawn at the first run and kept in the results database, or set with "
                  "durak tournament --seed-file PATH (a file only you can read)")
#: Characters a bot name may not contain: schedule keys are built from names with them.
NAME_SEPARATORS = ",|#"
#: rotations = "all" plays k! seatings per deal; beyond this table size that is absurd (6! = 720).
MAX_ALL_ROTATIONS_PLAYERS = 4


C = TypeVar("C", bound=msgspec.Struct)  # a config's decoded type


class ConfigError(ValueError):
    """A tournament config that cannot be used: one line naming the file and the key."""


class BotConfig(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """One ``[[bots]]`` table. ``dir`` is required: :func:`load_config` says why when it is missing."""

    name: str
    command: str | list[str]
    dir: str | None = None
    env: dict[str, str] = {}
    files: list[str] | None = None  # the files that identify the bot (patterns); None: the folder's


class TimeConfig(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``[time]``: the clock, in seconds (see :class:`TimeControl`)."""

    move: Seconds = 1.0
    grace: SecondsOrZero = 0.05
    startup: Seconds = 10.0
    bank: SecondsOrZero | None = None


class LimitsConfig(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``[limits]``: what each bot may use (see :class:`ResourceLimits`: ``memory_mb`` is its process tree's, the
    others are per-process rlimits); 0 means no limit."""

    memory_mb: Limit | None = 1024
    max_processes: Limit | None = None
    file_size_mb: Limit | None = 64
    open_files: Limit | None = 256
    cpu_seconds: Limit | None = None


class SprtConfig(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``[sprt]``: what ``durak sprt CONFIG`` tests when its arguments leave it out (they override each key)."""

    new: str | None = None
    base: str | None = None
    field: list[str] = []
    elo0: float | None = None
    elo1: float | None = None
    alpha: float = 0.05
    beta: float = 0.05
    max_games: int | None = None
    mode: Mode = "fool"


class TournamentConfig(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """The whole file, as decoded (before the checks of :func:`load_config`)."""

    name: str
    variant: str = "podkidnoy"
    players: Players = 2
    format: Format = "round_robin"
    deals: AtLeastOne = 10
    rotations: Rotations = "cyclic"
    series: AtLeastOne = 1
    tables: AtLeastOne | None = None
    challengers: list[str] = []
    restart: Restart = "never"
    pause: bool = True
    sandbox: Sandbox = "bwrap"
    max_failures: AtLeastOne = 3
    preflight: Preflight = "stop"
    cluster: str | None = None  # a Dask scheduler's address (tcp://HOST:8786, tls://...): play there
    rules: dict[str, bool | int | str | None] = {}
    time: TimeConfig = msgspec.field(default_factory=TimeConfig)
    limits: LimitsConfig = msgspec.field(default_factory=LimitsConfig)
    sprt: SprtConfig | None = None
    bots: list[BotConfig]


@dataclass(frozen=True)
class ResolvedBot:
    """A bot ready to launch: argv split and ``{python}`` replaced, an absolute existing dir, the added env."""

    name: str
    argv: list[str]
    dir: Path
    env: dict[str, str]
    files: tuple[str, ...] | None = None  # the ``files`` key: patterns of the files that identify the bot
    words: tuple[str, ...] = ()  # the command as written (``{python}`` kept): part of the bot's identity

    def settings(self) -> dict[str, object]:
        """What of the config defines this bot, beside its files: a change makes it another bot."""
        return {"command": list(self.words), "env": dict(sorted(self.env.items())),
                "files": None if self.files is None else list(self.files)}

    def hashed_files(self, protected: Sequence[str] = ()) -> BotFiles:
        """The files that identify the bot, hashed: its ``files`` patterns, or its whole folder less the referee's
        outputs (and the ``protected`` paths of the run, such as its results database, wherever they are)."""
        exclude = list(OUTPUT_PATTERNS)
        for path in protected:
            relative = os.path.relpath(path, self.dir)
            if not relative.startswith(".."):
                exclude.append(relative)
        return bot_files(self.dir, bot=self.name, include=self.files, exclude=exclude)


@dataclass(frozen=True)
class LoadedConfig:
    """A validated config with its derived values."""

    config: TournamentConfig
    path: Path  # absolute
    rules: Rules
    bots: list[ResolvedBot]
    #: A league's table (``table_only``): its bots are entrants' uploads, whose commands and files name no host
    #: tree for the sandbox to show (:attr:`~referee.bots.sandbox.isolation.Isolation.interpreter_trees`).
    entrants: bool = False

    def isolation(self, protected: Sequence[str | os.PathLike[str]], *, allow_root: bool = False) -> Isolation:
        """The bots' isolation (the ``sandbox`` key); ``protected``: the paths no bot may see (the database);
        ``allow_root``: ``--bots-as-root``. A tournament's bots are the organizer's: the sandbox may show an
        interpreter's tree their commands name; a league's never."""
        return isolation_for(self.config.sandbox, protected, allow_root=allow_root,
                             interpreter_trees=not self.entrants)

    def time_control(self) -> TimeControl:
        time = self.config.time
        return TimeControl(move_time=time.move, grace=time.grace, startup_time=time.startup, time_bank=time.bank,
                           pause=self.config.pause)

    def resource_limits(self) -> ResourceLimits:
        limits = self.config.limits

        def value(limit: int | None) -> int | None:
            return None if limit == 0 else limit

        return ResourceLimits(memory_mb=value(limits.memory_mb), max_processes=value(limits.max_processes),
                              file_size_mb=value(limits.file_size_mb), open_files=value(limits.open_files),
                              cpu_seconds=value(limits.cpu_seconds))

    def schedule_fingerprint(self, legacy_seed: int | None = None) -> str:
        """SHA-256 (hex) of what defines the games, except what may extend a schedule and the seed.

        Covered: the schedule algorithm's version, the effective rules (variant and every option, so writing
        an option's default changes nothing), players, format, rotations, series and the challengers (as a
        set). The seed is the database's (a stored tournament keeps its own); the document still holds a
        ``seed`` entry, null, as configs without a seed had, so their databases resume. ``legacy_seed``
        gives the fingerprint a database made before seeds left the config stored for ``seed = N``.

        Not covered: the bots and ``deals``/``tables``, which may grow (bot identity is checked separately from
        file hashes), nor time controls, limits, restart, pause, max_failures and preflight, which do not change which
        deals are dealt to which seats. Exception: in the ``sampled`` format the tables drawn depend on the
        whole field, so there the sorted bot names are covered too (adding a bot to a sampled tournament is a
        changed schedule; more tables extend it).
        """
        config = self.config
        document: dict[str, object] = {
            "schedule": SCHEDULE_VERSION,
            "rules": msgspec.to_builtins(self.rules),
            "players": config.players,
            "format": config.format,
            "rotations": config.rotations,
            "series": config.series,
            "seed": legacy_seed,
            "challengers": sorted(config.challengers),
        }
        if config.format == "sampled":
            document["bots"] = sorted(bot.name for bot in config.bots)
        return hashlib.sha256(msgspec.json.encode(document, order="sorted")).hexdigest()


#: What the wording of msgspec's errors needs of the config's schema.
_SCHEMA = TomlSchema(TournamentConfig, CHOICES, {"seed": SEED_KEY_ERROR})


def draw_seed() -> int:
    """A tournament seed from the OS (63 bits, so it fits an SQLite integer), for a new tournament."""
    return secrets.randbits(63)


class SprtParameters(Protocol):
    """An SPRT's test as the ``[sprt]`` table (:class:`SprtConfig`, any key may be unset) or ``durak sprt``
    (:class:`referee.tournament.sprt_run.SprtTest`) gives it."""

    @property
    def elo0(self) -> float | None: ...
    @property
    def elo1(self) -> float | None: ...
    @property
    def alpha(self) -> float: ...
    @property
    def beta(self) -> float: ...
    @property
    def mode(self) -> str: ...
    @property
    def max_games(self) -> int | None: ...


def sprt_problem(test: SprtParameters, *, in_config: bool) -> tuple[str, str] | None:
    """The first problem of an SPRT's parameters, the one validation of both the config and ``durak sprt``:
    the ``[sprt]`` key it is about and the message, worded for after that key (``in_config``) or, naming the
    command's options, to stand alone; None when there is none."""
    elo0, elo1 = test.elo0, test.elo1
    for key, value in (("sprt.elo0", elo0), ("sprt.elo1", elo1)):
        if value is not None and not math.isfinite(value):
            return key, (f"must be a finite number, not {value:g}" if in_config else
                         f"--elo0 and --elo1 must be finite numbers, not {elo0:g} and {elo1:g}")
    if elo0 is not None and elo1 is not None and not elo0 < elo1:
        return "sprt.elo1", (f"must be above elo0 ({elo0:g}), not {elo1:g}" if in_config else
                             f"--elo0 must be below --elo1, not {elo0:g} and {elo1:g}")
    try:
        bounds(test.alpha, test.beta)
    except ValueError as exc:
        return "sprt.alpha", str(exc) if in_config else str(exc).replace("alpha and beta", "--alpha and --beta")
    if test.mode not in MODES:
        return "sprt.mode", (f"invalid value {test.mode!r}: expected one of {', '.join(MODES)}" if in_config else
                             f"unknown rating mode {test.mode!r}; expected one of {', '.join(MODES)}")
    if test.max_games is not None and test.max_games < 1:
        return "sprt.max_games", f"{'' if in_config else '--max-games '}must be at least 1, not {test.max_games}"
    return None


def load_config(path: str | Path, *, sandbox: str | None = None, text: str | None = None) -> LoadedConfig:
    """Read, decode and check a tournament config; :class:`ConfigError` (one line) for any problem.

    ``sandbox`` (``--sandbox``) overrides the config's ``sandbox`` key. ``text``: the config's content, sent
    to a cluster's workers, where ``path`` need not exist (its folder still anchors the bots' folders).
    """
    config, _ = read_config(Path(path), text, TournamentConfig, _SCHEMA)
    return check_config(config, path, sandbox=sandbox, label=str(path))


def read_config(path: Path, text: str | None, kind: type[C], schema: TomlSchema) -> tuple[C, bytes]:
    """The TOML of a config file (or ``text``, its content) decoded as ``kind``, and the bytes read.

    :raises ConfigError: one line naming the file, and the key where the content is at fault.
    """
    try:
        data = path.read_bytes() if text is None else text.encode()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the config: {exc.strerror or exc}") from None
    try:
        return msgspec.toml.decode(data, type=kind), data
    except msgspec.ValidationError as exc:
        raise ConfigError(f"{path}: {one_line(describe(str(exc), data, schema))}") from None
    except msgspec.DecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {one_line(str(exc))}") from None


def check_config(config: TournamentConfig, path: str | Path, *, sandbox: str | None = None, label: str | None = None,
                 table_only: bool = False) -> LoadedConfig:
    """The checks of a decoded config (:func:`load_config`); ``path`` anchors its bots' folders, ``label`` names it
    in errors (default: ``path``). ``table_only``: only what a game's table needs (name, rules, time, bots), not
    the schedule's field or the ``[sprt]`` table: a league's table, whose bots come and go.

    :raises ConfigError: one line naming the key.
    """
    if sandbox is not None:
        if sandbox not in CHOICES["sandbox"]:
            raise ConfigError(f"--sandbox must be one of {', '.join(CHOICES['sandbox'])}, not {sandbox!r}")
        config = msgspec.structs.replace(config, sandbox=sandbox)
    return _Checker(config, Path(path), label or str(path)).check(table_only=table_only)


# --- checks --------------------------------------------------------------------------------------------


class _Checker:
    """The checks that msgspec's types cannot express, in file order."""

    def __init__(self, config: TournamentConfig, path: Path, label: str) -> None:
        self.config = config
        self.path = Path(os.path.abspath(path))
        self.folder = self.path.parent
        self.label = label

    def error(self, key: str, message: str, bot: str | None = None) -> ConfigError:
        where = f" (bot {bot!r})" if bot else ""
        return ConfigError(f"{self.label}: key {key!r}{where}: {one_line(message)}")

    def check(self, *, table_only: bool = False) -> LoadedConfig:
        config = self.config
        if not config.name.strip():
            raise self.error("name", "must not be empty")
        if config.rotations == "all" and config.players > MAX_ALL_ROTATIONS_PLAYERS:
            count = math.factorial(config.players)
            raise self.error("rotations", f'"all" is only for tables of at most {MAX_ALL_ROTATIONS_PLAYERS} '
                             f'players: with {config.players} it means {count} seatings per deal and {count} '
                             f'processes of every bot; use "cyclic"')
        rules = self.check_rules()
        self.check_time()
        bots = [self.resolve_bot(index, bot) for index, bot in enumerate(config.bots)]
        if not table_only:
            self.check_field()
            self.check_sprt()
        return LoadedConfig(config=config, path=self.path, rules=rules, bots=bots, entrants=table_only)

    def check_rules(self) -> Rules:
        try:
            return rules_from_options(self.config.variant, dict(self.config.rules))
        except RulesError as exc:
            message = str(exc).replace("`", "")
            if message.startswith("unknown variant"):
                raise self.error("variant", message) from None
            option = re.match(r"(?:unknown )?option '([^']+)'", message)
            if option is None:  # pragma: no cover - every RulesError names the variant or an option
                raise self.error("rules", message) from None
            name = option.group(1)
            raise self.error(f"rules.{name}", message.removeprefix(f"option {name!r}: ")) from None

    def check_time(self) -> None:
        """Infinity, which the bounds of msgspec let through (they refuse -inf and nan)."""
        for name in TimeConfig.__struct_fields__:
            value = getattr(self.config.time, name)
            if value is not None and not math.isfinite(value):
                raise self.error(f"time.{name}", f"must be a finite number of seconds, not {value}")

    def resolve_bot(self, index: int, bot: BotConfig) -> ResolvedBot:
        key = f"bots[{index}]"
        name = bot.name
        self.check_bot_name(index, name)
        argv = self.split_command(f"{key}.command", bot)
        for variable, value in bot.env.items():
            if (why := env_refusal(variable, value)) is not None:
                raise self.error(f"{key}.env", why, name)
        if bot.dir is None:
            raise self.error(f"{key}.dir", "missing: every bot needs a folder of its own (its command runs there "
                             "and its files identify it); the config's folder is no default", name)
        if "\0" in bot.dir:
            raise self.error(f"{key}.dir", "a folder name cannot contain a NUL character", name)
        folder = Path(os.path.abspath(self.folder / os.path.expanduser(bot.dir)))
        if not folder.is_dir():
            raise self.error(f"{key}.dir", f"folder {str(folder)!r} not found", name)
        for pattern in bot.files or ():
            if not pattern or pattern.startswith("/") or "\0" in pattern:
                raise self.error(f"{key}.files", f"{pattern!r}: a pattern names files relative to the bot's dir",
                                 name)
        if bot.files is not None and not bot.files:
            raise self.error(f"{key}.files", "empty: name the files that identify the bot, or leave the key out",
                             name)
        words = shlex.split(bot.command) if isinstance(bot.command, str) else list(bot.command)
        return ResolvedBot(name=name, argv=argv, dir=folder, env=dict(bot.env),
                           files=None if bot.files is None else tuple(bot.files), words=tuple(words))

    def check_bot_name(self, index: int, name: str) -> None:
        key = f"bots[{index}].name"
        if not name:
            raise self.error(key, "must not be empty")
        if any(char.isspace() or not char.isprintable() or char in NAME_SEPARATORS for char in name):
            raise self.error(key, f"{name!r}: a bot name may not contain whitespace, control "
                             f"characters or any of {' '.join(NAME_SEPARATORS)}")
        for other in range(index):
            if self.config.bots[other].name == name:
                raise self.error(key, f"duplicate name {name!r} (also bots[{other}])")

    def split_command(self, key: str, bot: BotConfig) -> list[str]:
        if isinstance(bot.command, str):
            try:
                argv = shlex.split(bot.command)
            except ValueError as exc:
                raise self.error(key, f"cannot split {bot.command!r} like a shell: {exc}", bot.name) from None
        else:
            argv = list(bot.command)
        if not argv or not argv[0]:
            raise self.error(key, "the command is empty: it needs a program", bot.name)
        if any("\0" in word for word in argv):
            raise self.error(key, "a word of the command contains a NUL character", bot.name)
        return expand_words(argv)

    def check_sprt(self) -> None:
        sprt = self.config.sprt
        if sprt is None:
            return
        names = [bot.name for bot in self.config.bots]
        named = [("sprt.new", sprt.new), ("sprt.base", sprt.base),
                 *((f"sprt.field[{index}]", name) for index, name in enumerate(sprt.field))]
        seen: list[str] = []
        for key, name in named:
            if name is None:
                continue
            if name not in names:
                raise self.error(key, f"no bot is named {name!r}")
            if name in seen:
                raise self.error(key, f"{name!r} is named twice: NEW, BASE and the field are different bots")
            seen.append(name)
        if problem := sprt_problem(sprt, in_config=True):
            raise self.error(*problem)

    def check_field(self) -> None:
        config = self.config
        names = [bot.name for bot in config.bots]
        if len(names) < config.players:
            raise self.error("bots", f"tables of {config.players} players need at least {config.players} "
                             f"bots, not {len(names)}")
        if config.format != "sampled" and config.tables is not None:
            raise self.error("tables", f'only for format = "sampled", not {config.format!r}')
        if config.format == "sampled" and config.tables is None:
            raise self.error("tables", 'format = "sampled" needs the number of tables to draw')
        if config.format != "gauntlet" and config.challengers:
            raise self.error("challengers", f'only for format = "gauntlet", not {config.format!r}')
        if config.format == "gauntlet":
            self.check_challengers(names)

    def check_challengers(self, names: list[str]) -> None:
        config = self.config
        if not config.challengers:
            raise self.error("challengers", 'format = "gauntlet" needs at least one challenger')
        for index, name in enumerate(config.challengers):
            if name not in names:
                raise self.error(f"challengers[{index}]", f"no bot is named {name!r}")
            if name in config.challengers[:index]:
                raise self.error(f"challengers[{index}]", f"{name!r} is listed twice")
        field = len(names) - len(config.challengers)
        if field < config.players - 1:
            raise self.error("challengers", f"tables of {config.players} players need at least "
                             f"{config.players - 1} bots that are not challengers, not {field}")
