"""The tournament config: the sample file, one-line errors naming the key, bot resolution, the fingerprint."""

from __future__ import annotations

import hashlib
import math
import re
import sys
from pathlib import Path

import msgspec
import pytest

from referee.bots.limits import ResourceLimits, TimeControl
from referee.tournament.config import (
    CHOICES,
    BotConfig,
    ConfigError,
    LimitsConfig,
    LoadedConfig,
    SprtConfig,
    TimeConfig,
    TournamentConfig,
    bot_files_sha256,
    draw_seed,
    load_config,
    sprt_problem,
)
from referee.tournament.schedule import schedule, schedule_summary
from referee.tournament.sprt_run import SprtError, SprtTest

SAMPLE = Path(__file__).resolve().parent.parent / "sample_bots" / "tournament.toml"

BOTS = """
[[bots]]
name = "a"
command = "prog a"
dir = "."

[[bots]]
name = "b"
command = "prog b"
dir = "."

[[bots]]
name = "c"
command = ["prog", "c"]
dir = "."
"""


def write(tmp_path: Path, top: str = "", after: str = "", bots: str = BOTS, name: str = "t.toml") -> Path:
    """A config: ``name = "t"``, the top-level keys, the bots, then tables such as [rules]."""
    path = tmp_path / name
    path.write_text(f'name = "t"\n{top}\n{bots}\n{after}\n')
    return path


def load(tmp_path: Path, top: str = "", after: str = "", bots: str = BOTS) -> LoadedConfig:
    return load_config(write(tmp_path, top, after, bots))


# --- the sample -------------------------------------------------------------------------------------------


def test_sample_loads() -> None:
    loaded = load_config(SAMPLE)
    config = loaded.config
    assert loaded.path == SAMPLE
    assert [bot.name for bot in loaded.bots] == ["random", "heuristic", "js"]
    random, heuristic, js = loaded.bots
    assert random.argv == [sys.executable, "random_bot.py"]
    assert heuristic.argv == [sys.executable, "heuristic_bot.py"]
    assert js.argv == ["node", "bot.js"]
    assert random.dir == heuristic.dir == SAMPLE.parent / "python"
    assert js.dir == SAMPLE.parent / "js"
    assert (random.dir / "random_bot.py").is_file() and (heuristic.dir / "heuristic_bot.py").is_file()
    assert config.players == 2 and config.format == "round_robin"
    assert "seed" not in msgspec.toml.decode(SAMPLE.read_bytes())  # the seed is never in a config
    assert loaded.rules.variant == "podkidnoy" and loaded.rules.deck == 36
    assert loaded.time_control().time_bank == 2.0
    assert loaded.resource_limits() == ResourceLimits()  # the sample writes out the defaults


def test_sample_is_small() -> None:
    """3 bots, round robin at 2 seats, 20 deals, 2 rotations: 120 games, 80 per bot, 40 per seat."""
    loaded = load_config(SAMPLE)
    summary = schedule_summary(schedule(loaded.config, draw_seed()))
    assert summary["games"] == 120
    assert set(summary["games_per_bot"].values()) == {80}
    assert all(seats == [40, 40] for seats in summary["seats_per_bot"].values())


def test_sample_documents_every_key() -> None:
    """The sample is the contract: every key of every table appears, set or in a comment."""
    text = SAMPLE.read_text()
    for struct in (TournamentConfig, TimeConfig, LimitsConfig, SprtConfig, BotConfig):
        for name in struct.__struct_fields__:
            assert re.search(rf"^[#\s]*{name}\b", text, re.MULTILINE) or f"[{name}]" in text \
                or f"[[{name}]]" in text, name


@pytest.mark.parametrize(("old", "new"), [
    ('format = "round_robin"', 'format = "sampled"\ntables = 200'),
    ('format = "round_robin"', 'format = "gauntlet"\nchallengers = ["heuristic"]'),
])
def test_sample_commented_keys_work(tmp_path: Path, old: str, new: str) -> None:
    """The commented-out format keys of the sample are valid when the format asks for them."""
    text = SAMPLE.read_text()
    assert old in text
    path = tmp_path / "tournament.toml"
    path.write_text(text.replace(old, new))
    (tmp_path / "python").mkdir()
    (tmp_path / "js").mkdir()
    assert load_config(path).config.format == new.split('"')[1]


def test_config_defaults_match_the_dataclasses(tmp_path: Path) -> None:
    """Leaving out [time] and [limits] gives exactly TimeControl() and ResourceLimits()."""
    loaded = load(tmp_path)
    assert loaded.time_control() == TimeControl()
    assert loaded.resource_limits() == ResourceLimits()
    config = loaded.config
    assert (config.variant, config.players, config.format, config.deals, config.rotations, config.series,
            config.tables, config.challengers, config.restart, config.pause,
            config.max_failures, config.rules) == (
        "podkidnoy", 2, "round_robin", 10, "cyclic", 1, None, [], "never", True, 3, {})


# --- errors -------------------------------------------------------------------------------------------------

BOT_C = '[[bots]]\nname = "c"\ncommand = "p"\ndir = "."'  # a valid second bot

ERRORS = [
    # (top-level keys, tables after the bots, bots (None: the default three), expected text)
    ("dealz = 3", "", None, "unknown key 'dealz'"),
    ('deals = "x"', "", None, "key 'deals': expected int, got str"),
    ("deals = 0", "", None, "key 'deals': must be at least 1, not 0"),
    ("series = 0", "", None, "key 'series': must be at least 1"),
    ("max_failures = 0", "", None, "key 'max_failures': must be at least 1"),
    ("players = 1", "", None, "key 'players': must be 2-6, not 1"),
    ("players = 7", "", None, "key 'players': must be 2-6, not 7"),
    ("players = true", "", None, "key 'players': expected int, got bool"),
    ("players = 4", "", None, "key 'bots': tables of 4 players need at least 4 bots, not 3"),
    ('format = "swiss"', "", None,
     "key 'format': invalid value 'swiss': expected one of round_robin, sampled, gauntlet"),
    ('rotations = "some"', "", None, "key 'rotations': invalid value 'some': expected one of cyclic, all"),
    ('restart = "always"', "", None, "key 'restart': invalid value 'always': expected one of never, game"),
    ("pause = 1", "", None, "key 'pause': expected bool, got int"),
    ("seed = 20261129", "", None, "key 'seed': a config must not hold the tournament seed (bots may be able to "
     "read it): remove the key; the seed is drawn at the first run and kept in the results database, or set "
     "with durak tournament --seed-file PATH (a file only you can read)"),
    ("seed = 1.5", "", None, "key 'seed': a config must not hold the tournament seed"),
    ("tables = 5", "", None, "key 'tables': only for format = \"sampled\""),
    ('format = "sampled"', "", None, "key 'tables': format = \"sampled\" needs"),
    ('format = "sampled"\ntables = 0', "", None, "key 'tables': must be at least 1"),
    ('challengers = ["a"]', "", None, "key 'challengers': only for format = \"gauntlet\""),
    ('format = "gauntlet"', "", None, "key 'challengers': format = \"gauntlet\" needs at least one"),
    ('format = "gauntlet"\nchallengers = ["zed"]', "", None, "key 'challengers[0]': no bot is named 'zed'"),
    ('format = "gauntlet"\nchallengers = ["a", "a"]', "", None, "key 'challengers[1]': 'a' is listed twice"),
    ('format = "gauntlet"\nplayers = 3\nchallengers = ["a", "b"]', "", None,
     "key 'challengers': tables of 3 players need at least 2 bots that are not challengers, not 1"),
    ('challengers = "a"', "", None, "key 'challengers': expected array, got str"),
    ('variant = "bridge"', "", None, "key 'variant': unknown variant 'bridge'"),
    ("", "[rules]\ndeck = 40", None, "key 'rules.deck': invalid enum value 40"),
    ("", "[rules]\ntransfer_after_beat = false", None,
     "key 'rules.transfer_after_beat': option 'transfer_after_beat' does not apply to variant 'podkidnoy'"),
    ("", "[rules]\nfoo = 1", None, "key 'rules.foo': unknown option 'foo'"),
    ("", "[rules]\nfirst_bout_limit = 9", None, "key 'rules.first_bout_limit': option 'first_bout_limit' must be"),
    ("", "[rules]\ndeck = [36]", None, "key 'rules.deck': expected bool | int | str, got array"),
    ("", "[rules]\nmax_actions = true", None, "key 'rules.max_actions': expected `int`, got `bool`"),
    ("rules = 3", "", None, "key 'rules': expected table, got int"),
    ("", "[time]\nmove = 0", None, "key 'time.move': must be positive, not 0.0"),
    ("", '[time]\nmove = "1"', None, "key 'time.move': expected float, got str"),
    ("", "[time]\nmoves = 1", None, "unknown key 'time.moves'"),
    ("", "[time]\nstartup = inf", None, "key 'time.startup': must be a finite number"),
    ("", "[time]\ngrace = -0.1", None, "key 'time.grace': must not be negative"),
    ("", "[time]\nmove = nan", None, "key 'time.move': must be a finite number of seconds, not nan"),
    ("", "[time]\ngrace = -inf", None, "key 'time.grace': must be a finite number of seconds, not -inf"),
    ("", "[time]\nmove = -2", None, "key 'time.move': must be positive, not -2.0"),
    ("", "[limits]\nopen_files = -2", None, "key 'limits.open_files': must be positive, or 0 for no limit, not -2"),
    ("", "[sprt]\nelo0 = inf", None, "key 'sprt.elo0': must be a finite number, not inf"),
    ("", "[sprt]\nmax_games = 0", None, "key 'sprt.max_games': must be at least 1, not 0"),
    ("", "[time]\nbank = -1.0", None, "key 'time.bank': must not be negative"),
    ("", "[limits]\nmemory_mb = -1", None, "key 'limits.memory_mb': must be positive, or 0 for no limit"),
    ("", "[limits]\nmemory_mb = 1.5", None, "key 'limits.memory_mb': expected int, got float"),
    ("", "[limits]\nram = 1", None, "unknown key 'limits.ram'"),
    ('rotations = "all"\nplayers = 5', "", BOTS + '[[bots]]\nname = "d"\ncommand = "p"\ndir = "."\n'
     '[[bots]]\nname = "e"\ncommand = "p"\ndir = "."\n',
     "key 'rotations': \"all\" is only for tables of at most 4 players"),
    ("", "", "", "missing key 'bots'"),
    ("", "", 'bots = []', "key 'bots': tables of 2 players need at least 2 bots, not 0"),
    ("", "", '[[bots]]\nname = "a"\ncommand = "p"\ndir = "."\n[[bots]]\nname = "a"\ncommand = "p"\ndir = "."',
     "key 'bots[1].name': duplicate name 'a' (also bots[0])"),
    ("", "", '[[bots]]\nname = "a b"\ncommand = "p"\ndir = "."\n' + BOT_C,
     "key 'bots[0].name': 'a b': a bot name may not contain whitespace"),
    ("", "", '[[bots]]\nname = "a,b"\ncommand = "p"\ndir = "."\n' + BOT_C,
     "key 'bots[0].name': 'a,b': a bot name may not contain"),
    ("", "", '[[bots]]\nname = "a#2"\ncommand = "p"\ndir = "."\n' + BOT_C,
     "key 'bots[0].name': 'a#2'"),
    ("", "", '[[bots]]\nname = ""\ncommand = "p"\ndir = "."\n' + BOT_C,
     "key 'bots[0].name': must not be empty"),
    ("", "", '[[bots]]\nname = "a"\ncommand = "p"\ndir = "."\n[[bots]]\nname = "c"\ncommand = ""',
     "key 'bots[1].command' (bot 'c'): the command is empty"),
    ("", "", '[[bots]]\nname = "a"\ncommand = "p"\ndir = "."\n[[bots]]\nname = "c"\ncommand = []',
     "key 'bots[1].command' (bot 'c'): the command is empty"),
    ("", "", '[[bots]]\nname = "a"\ncommand = "p \'x"\n' + BOT_C,
     "key 'bots[0].command' (bot 'a'): cannot split"),
    ("", "", '[[bots]]\nname = "a"\ncommand = 5\n' + BOT_C,
     "key 'bots[0].command' (bot 'a'): expected str | array, got int"),
    ("", "", '[[bots]]\nname = "a"\ncommand = ["p", 1]\n' + BOT_C,
     "key 'bots[0].command[1]' (bot 'a'): expected str, got int"),
    ("", "", '[[bots]]\nname = "a"\ncommand = "p"\n' + BOT_C,
     "key 'bots[0].dir' (bot 'a'): missing: every bot needs a folder of its own (its command runs there and its "
     "files identify it); the config's folder is no default"),
    ("", "", '[[bots]]\nname = "a"\ncommand = "p"\ndir = "nope"\n' + BOT_C,
     "key 'bots[0].dir' (bot 'a'): folder "),
    ("", "", '[[bots]]\nname = "a"\ncommand = "p"\ndir = "."\nenv = { X = "1", Y = 2 }\n' + BOT_C,
     "key 'bots[0].env.Y' (bot 'a'): expected str, got int"),
    ("", "", '[[bots]]\nname = "a"\ncommand = "p"\ndir = "."\n[bots.env]\n"A B" = 2\n' + BOT_C,
     "key 'bots[0].env.\"A B\"' (bot 'a'): expected str, got int"),
    ("", "", '[[bots]]\nname = "a"\ncommand = "p"\ndir = "."\nenv = { "X=Y" = "1" }\n' + BOT_C,
     "key 'bots[0].env' (bot 'a'): bad environment variable 'X=Y'"),
    ("", "", '[[bots]]\nname = "a"\ncmd = "p"\n' + BOT_C,
     "unknown key 'bots[0].cmd' (bot 'a')"),
    ("", "", '[[bots]]\nname = "a"\n' + BOT_C,
     "missing key 'bots[0].command' (bot 'a')"),
    ("", "", '[[bots]]\ncommand = "p"\ndir = "."\n' + BOT_C, "missing key 'bots[0].name'"),
    ("deals = ", "", None, "not valid TOML: "),
    ("deals = 3\ndeals = 4", "", None, "not valid TOML: "),
]


@pytest.mark.parametrize(("top", "after", "bots", "expected"), ERRORS)
def test_errors_are_one_line_naming_the_key(tmp_path: Path, top: str, after: str, bots: str | None,
                                            expected: str) -> None:
    path = write(tmp_path, top, after, BOTS if bots is None else bots)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"{path}: ")
    assert expected.replace("`", "") in message


def test_name_is_required_and_not_blank(tmp_path: Path) -> None:
    path = tmp_path / "t.toml"
    path.write_text(BOTS)
    with pytest.raises(ConfigError, match=r"missing key 'name'"):
        load_config(path)
    path.write_text('name = "  "\n' + BOTS)
    with pytest.raises(ConfigError, match=r"key 'name': must not be empty"):
        load_config(path)


def test_unreadable_files(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"missing\.toml: cannot read the config: No such file"):
        load_config(tmp_path / "missing.toml")
    with pytest.raises(ConfigError, match=r"cannot read the config: Is a directory"):
        load_config(tmp_path)
    binary = tmp_path / "binary.toml"
    binary.write_bytes(b"name = \"\xff\"\n")
    with pytest.raises(ConfigError, match=r"binary\.toml: not valid TOML"):
        load_config(binary)


# --- bots ---------------------------------------------------------------------------------------------------


def test_python_word_is_the_referees_interpreter(tmp_path: Path) -> None:
    bots = ('[[bots]]\nname = "a"\ncommand = "{python} -u a.py {python}x"\ndir = "."\n'
            '[[bots]]\nname = "b"\ncommand = ["nice", "{python}", "b.py"]\ndir = "."\n')
    a, b = load(tmp_path, bots=bots).bots
    assert a.argv == [sys.executable, "-u", "a.py", "{python}x"]
    assert b.argv == ["nice", sys.executable, "b.py"]


def test_command_string_is_split_like_a_shell(tmp_path: Path) -> None:
    bots = ('[[bots]]\nname = "a"\ncommand = "prog \'two words\' \\"x y\\" z\\\\ w"\ndir = "."\n'
            '[[bots]]\nname = "b"\ncommand = ["prog", "two words"]\ndir = "."\n')
    a, b = load(tmp_path, bots=bots).bots
    assert a.argv == ["prog", "two words", "x y", "z w"]
    assert b.argv == ["prog", "two words"]


def test_dir_is_relative_to_the_config_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "conf" / "bots" / "a").mkdir(parents=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    absolute = tmp_path / "abs"
    absolute.mkdir()
    bots = (f'[[bots]]\nname = "a"\ncommand = "p"\ndir = "bots/a"\nenv = {{ K = "v" }}\n'
            f'[[bots]]\nname = "b"\ncommand = "p"\ndir = "."\n'
            f'[[bots]]\nname = "c"\ncommand = "p"\ndir = "{absolute}"\n')
    (tmp_path / "conf").mkdir(exist_ok=True)
    write(tmp_path / "conf", bots=bots)
    monkeypatch.chdir(elsewhere)
    loaded = load_config(Path("..") / "conf" / "t.toml")
    a, b, c = loaded.bots
    assert a.dir == tmp_path / "conf" / "bots" / "a"
    assert b.dir == tmp_path / "conf"  # "." is the config file's folder (written out: there is no default)
    assert c.dir == absolute
    assert a.env == {"K": "v"} and b.env == {}
    assert loaded.path.is_absolute() and loaded.path.resolve() == (tmp_path / "conf" / "t.toml")


def test_limits_zero_means_none_and_time_maps(tmp_path: Path) -> None:
    loaded = load(tmp_path, after="[time]\nmove = 0.5\ngrace = 0\nstartup = 3\nbank = 1.5\n"
                  "[limits]\nmemory_mb = 0\nmax_processes = 50\nfile_size_mb = 0\nopen_files = 64\ncpu_seconds = 30")
    assert loaded.time_control() == TimeControl(move_time=0.5, grace=0.0, startup_time=3.0, time_bank=1.5)
    assert loaded.resource_limits() == ResourceLimits(memory_mb=None, max_processes=50, file_size_mb=None,
                                                      open_files=64, cpu_seconds=30)


def test_rules_options_are_applied(tmp_path: Path) -> None:
    loaded = load(tmp_path, 'variant = "perevodnoy"', "[rules]\ndeck = 52\ntransfer_beaten_pairs = \"discard\"")
    assert loaded.rules.variant == "perevodnoy"
    assert loaded.rules.deck == 52 and loaded.rules.transfer_beaten_pairs == "discard"


# --- the schedule fingerprint ----------------------------------------------------------------------------


def fingerprint(tmp_path: Path, top: str = "", after: str = "", bots: str = BOTS) -> str:
    return load(tmp_path, top, after, bots).schedule_fingerprint()


def base_fingerprint(tmp_path: Path) -> str:
    """The fingerprint of the default config, written to a folder of its own."""
    folder = tmp_path / "base"
    folder.mkdir(exist_ok=True)
    return fingerprint(folder)


def test_fingerprint_is_stable(tmp_path: Path) -> None:
    first = fingerprint(tmp_path)
    assert re.fullmatch(r"[0-9a-f]{64}", first)
    assert fingerprint(tmp_path) == first
    other = tmp_path / "other"
    other.mkdir()
    assert fingerprint(other) == first  # not the file's place


def test_fingerprint_of_a_database_made_while_configs_held_seeds(tmp_path: Path) -> None:
    """Such a database stored the fingerprint of ``seed = N``: the same as ``legacy_seed=N``, a different one
    for each seed; configs without a seed had a null seed, which is what the fingerprint now always holds."""
    loaded = load(tmp_path)
    assert loaded.schedule_fingerprint(legacy_seed=None) == loaded.schedule_fingerprint()
    legacy = {loaded.schedule_fingerprint(legacy_seed=seed) for seed in (5, 6)}
    assert len(legacy) == 2 and loaded.schedule_fingerprint() not in legacy


EXTRA_BOT = '[[bots]]\nname = "d"\ncommand = "p"\ndir = "."\n'


@pytest.mark.parametrize(("top", "after", "bots"), [
    ("deals = 30", "", BOTS),
    ("", "", BOTS + EXTRA_BOT),
    ("", "", BOTS.replace('"prog a"', '"other a"')),
    ('restart = "game"\npause = false\nmax_failures = 9', "", BOTS),
    ("", "[time]\nmove = 3.0\n[limits]\nmemory_mb = 2048", BOTS),
    ("", "[rules]\ndeck = 36\nthrow_in_after_take = true", BOTS),  # the defaults, written out
])
def test_fingerprint_ignores_what_may_extend_or_does_not_deal(tmp_path: Path, top: str, after: str,
                                                             bots: str) -> None:
    assert fingerprint(tmp_path, top, after, bots) == base_fingerprint(tmp_path)


@pytest.mark.parametrize(("top", "after"), [
    ('variant = "perevodnoy"', ""),
    ("", "[rules]\ndeck = 52"),
    ("", "[rules]\nfirst_bout_limit = 5"),
    ("players = 3", ""),
    ('format = "gauntlet"\nchallengers = ["a"]', ""),
    ('format = "sampled"\ntables = 3', ""),
    ('rotations = "all"', ""),
    ("series = 2", ""),
])
def test_fingerprint_covers_what_defines_the_games(tmp_path: Path, top: str, after: str) -> None:
    assert fingerprint(tmp_path, top, after) != base_fingerprint(tmp_path)


def test_fingerprint_ignores_the_tournament_name(tmp_path: Path) -> None:
    path = write(tmp_path)
    path.write_text(path.read_text().replace('name = "t"', 'name = "renamed"'))
    assert load_config(path).config.name == "renamed"
    assert load_config(path).schedule_fingerprint() == base_fingerprint(tmp_path)


def test_fingerprint_gauntlet_and_sampled_specifics(tmp_path: Path) -> None:
    gauntlet = 'format = "gauntlet"\nchallengers = ["a", "b"]'
    base = fingerprint(tmp_path, gauntlet, bots=BOTS + EXTRA_BOT)
    assert fingerprint(tmp_path, gauntlet.replace('"a", "b"', '"b", "a"'), bots=BOTS + EXTRA_BOT) == base
    assert fingerprint(tmp_path, gauntlet.replace('"a", "b"', '"a"'), bots=BOTS + EXTRA_BOT) != base
    assert fingerprint(tmp_path, gauntlet, bots=BOTS + EXTRA_BOT + EXTRA_BOT.replace('"d"', '"e"')) == base
    sampled = 'format = "sampled"\ntables = 4'
    base = fingerprint(tmp_path, sampled)
    assert fingerprint(tmp_path, sampled.replace("4", "40")) == base  # more tables extend
    assert fingerprint(tmp_path, sampled, bots=BOTS + EXTRA_BOT) != base  # a new bot redraws every table


# --- bot files ----------------------------------------------------------------------------------------------


def test_bot_files_sha256(tmp_path: Path) -> None:
    bot = tmp_path / "bot"
    (bot / "lib").mkdir(parents=True)
    (bot / "main.py").write_bytes(b"print(1)\n")
    (bot / "lib" / "util.py").write_bytes(b"X = 2\n")
    lines = b"".join(hashlib.sha256(content).hexdigest().encode() + b"  " + path + b"\n"
                     for path, content in [(b"lib/util.py", b"X = 2\n"), (b"main.py", b"print(1)\n")])
    first = bot_files_sha256(bot)
    assert first == hashlib.sha256(lines).hexdigest()  # the documented format
    for skipped in ("__pycache__/main.cpython-311.pyc", "lib/other.pyc", ".git/HEAD"):
        (bot / skipped).parent.mkdir(exist_ok=True)
        (bot / skipped).write_bytes(b"ignored")
    assert bot_files_sha256(bot) == first
    (bot / "main.py").write_bytes(b"print(2)\n")
    changed = bot_files_sha256(bot)
    assert changed != first
    (bot / "main.py").rename(bot / "start.py")
    assert bot_files_sha256(bot) not in (first, changed)
    with pytest.raises(FileNotFoundError):
        bot_files_sha256(tmp_path / "nope")


def test_draw_seed_fits_sqlite_and_toml() -> None:
    seeds = {draw_seed() for _ in range(20)}
    assert len(seeds) == 20 and all(0 <= seed < 2**63 for seed in seeds)


def test_structs_are_frozen_and_strict() -> None:
    config = msgspec.toml.decode(b'name = "x"\nbots = []', type=TournamentConfig)
    with pytest.raises(AttributeError):
        config.deals = 3  # type: ignore[misc]
    with pytest.raises(msgspec.ValidationError, match="unknown field"):
        msgspec.convert({"name": "x", "command": "p", "extra": 1}, BotConfig)


def test_choices_are_the_literals_of_the_struct_fields() -> None:
    """The allowed values an error lists are read from the types msgspec decodes with, never a second list."""
    info = msgspec.inspect.type_info(TournamentConfig)
    assert isinstance(info, msgspec.inspect.StructType)
    fields = {field.name: field.type for field in info.fields}
    for key in ("format", "rotations", "restart", "sandbox", "preflight"):
        literal = fields[key]
        assert isinstance(literal, msgspec.inspect.LiteralType)
        assert set(CHOICES[key]) == set(literal.values), key


@pytest.mark.parametrize(("keys", "key", "table", "option"), [
    ({"elo0": 5.0, "elo1": 5.0}, "sprt.elo1", "must be above elo0 (5), not 5",
     "--elo0 must be below --elo1, not 5 and 5"),
    ({"elo0": 0.0, "elo1": math.inf}, "sprt.elo1", "must be a finite number, not inf",
     "--elo0 and --elo1 must be finite numbers, not 0 and inf"),
    ({"alpha": 0.7, "beta": 0.4}, "sprt.alpha", "alpha and beta must be in (0, 1)",
     "--alpha and --beta must be in (0, 1)"),
    ({"max_games": 0}, "sprt.max_games", "must be at least 1, not 0", "--max-games must be at least 1, not 0"),
])
def test_one_sprt_validation_worded_for_the_table_or_the_options(keys: dict[str, float], key: str, table: str,
                                                                 option: str) -> None:
    """The [sprt] table's check and durak sprt's SprtTest run the same validation: the table's message names
    the key, SprtTest's the options."""
    in_table = SprtConfig(**{"elo0": 0.0, "elo1": 10.0, **keys})  # type: ignore[arg-type]
    problem = sprt_problem(in_table, in_config=True)
    assert problem is not None and problem[0] == key and problem[1].startswith(table)
    with pytest.raises(SprtError) as caught:
        SprtTest(**{"elo0": 0.0, "elo1": 10.0, **keys})  # type: ignore[arg-type]
    assert str(caught.value).startswith(option)
    assert sprt_problem(SprtConfig(elo0=0.0, elo1=10.0), in_config=True) is None
