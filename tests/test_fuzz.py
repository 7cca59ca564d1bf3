"""Fuzzing the referee's untrusted inputs with hypothesis: bot replies, tournament configs, ``--set`` options.

- Bot replies: lines a bot could send in reply to a request (random JSON of every type, nesting, huge ints
  and strings, NaN/Infinity, escaped surrogates, duplicate keys, wrong types, missing and extra fields,
  invalid UTF-8, empty lines) go through ``BotClient._decode`` in-process, and end to end through a real
  bot process playing ``play_game`` against a correct bot: the referee never crashes, the fuzzed bot gets
  a protocol or illegal verdict unless its line is a valid legal reply, the game ends, no child remains.
- Tournament configs: random TOML (known and unknown keys, wrong types, nested tables, huge numbers,
  unicode, missing required keys, broken syntax): ``load_config`` returns a ``LoadedConfig`` or raises
  ``ConfigError`` with a one-line message; a few go through ``durak tournament`` (exit 3, no traceback).
- Rule options: random ``--set OPTION=VALUE`` to ``durak selfplay --games 1``: exit 0 or 3, one line.

Each bug the fuzzing turned up also has a plain regression test here (deep nesting in a bot's line or in a
``--set`` value, a NUL in a bot's ``dir``, a seed beyond 63 bits). Example counts are at the top
(``FUZZ_SCALE`` in the environment multiplies them); ``-s`` prints the number of inputs each target
received. Runs are derandomized, so a run is reproducible.
"""

from __future__ import annotations

import json
import math
import os
import random
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import msgspec
import pytest
from clirun import Ran, invoke
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from protocol.messages import PROTOCOL_VERSION, BotHello, Reply, bot_decoder
from protocol.rules import OPTIONS, VARIANTS, Rules
from referee.bots.errors import BotProtocolError
from referee.bots.launcher import BotCommand
from referee.bots.limits import TimeControl
from referee.bots.session import BotClient
from referee.engine import SeededRng, new_game
from referee.games.match import play_game
from referee.results.record import GameRecord
from referee.tournament.config import ConfigError, LoadedConfig, load_config

SCALE = float(os.environ.get("FUZZ_SCALE", "1"))
DECODE_EXAMPLES = int(1500 * SCALE)  # each with MUTANTS byte mutants
END_TO_END_EXAMPLES = int(60 * SCALE)
CONFIG_EXAMPLES = int(1500 * SCALE)
CONFIG_CLI_EXAMPLES = int(30 * SCALE)
SET_CLI_EXAMPLES = int(300 * SCALE)
MAX_LINE = 64 * 1024  # BotClient's default
COUNTS: Counter[str] = Counter()  # fuzzed inputs per target, printed at the end of each test


def fuzz_settings(examples: int) -> settings:
    return settings(max_examples=examples, deadline=None, derandomize=True, database=None,
                    suppress_health_check=list(HealthCheck))


def one_line(text: str) -> bool:
    return len(text.strip().splitlines()) == 1


def report(target: str) -> None:
    print(f"\nfuzzed {target}: {COUNTS[target]} inputs")
    for name, count in sorted(COUNTS.items()):
        if name.startswith(f"{target}: "):
            print(f"  {name.removeprefix(target + ': ')}: {count}")


# -- bot reply lines ----------------------------------------------------------------------------------

ID = "@ID@"  # replaced (unquoted) by the bot with the request's id
LEGAL = "@LEGAL@"  # replaced by the bot with the request's first legal action

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(st.characters(codec=None, exclude_categories=()), max_size=30),  # surrogates included
    st.sampled_from(["action", "hello", "take", "pass", "attack 6C", "beat 6C 8C", LEGAL, ID, ""]),
)
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=5), st.dictionaries(st.text(max_size=8), inner, max_size=5)),
    max_leaves=20,
)


def dump(value: object, ascii_only: bool) -> str:
    """JSON text; NaN and Infinity come out as literals, raw lone surrogates only without ``ascii_only``."""
    return json.dumps(value, ensure_ascii=ascii_only, allow_nan=True)


@st.composite
def raw_numbers(draw: st.DrawFn) -> str:
    """Number tokens json.dumps cannot write: 10**400, 4000 digits, exponents, NaN and Infinity literals."""
    return draw(st.sampled_from([
        "1" + "0" * 400, "-" + "9" * draw(st.integers(300, 5000)), "1e400", "-1e-400", "1.0", "-0", "0x10",
        "NaN", "Infinity", "-Infinity", "01", "1_000", "+1", ".5", "1e", "9" * 4300, "9" * 4301,
    ]))


@st.composite
def nested(draw: st.DrawFn, max_depth: int = 500) -> str:
    depth = draw(st.integers(1, max_depth))
    opener, closer = draw(st.sampled_from([("[", "]"), ('{"a":', "}"), ('[{"b":', "}]")]))
    core = draw(st.sampled_from(["1", "[]", "{}", '"x"', f'"{LEGAL}"']))
    return opener * depth + core + closer * depth


@st.composite
def field_values(draw: st.DrawFn, name: str) -> str:
    choice = draw(st.integers(0, 9))
    if choice <= 3:  # the right thing
        return {"type": '"action"', "id": ID, "action": f'"{LEGAL}"'}.get(name, '"x"')
    if choice == 4:
        return draw(raw_numbers())
    if choice == 5:
        return draw(nested(max_depth=60))
    if choice == 6:
        return draw(st.sampled_from(['"hello"', f'"{ID}"', f"-{ID}", f"{ID}0", f"{ID}.0", f"{ID}e0", '"take"',
                                     '"pass "', '" pass"', '"PASS"', '"\\ud800"', '"\\udc00\\ud800"', '"\\u0000"',
                                     '"pass\\u0000"', f'"{LEGAL}\\n"', "true", "null", '"' + "x" * 70000 + '"']))
    return dump(draw(json_values), draw(st.booleans()))


id_values = st.one_of(st.just(ID), st.just(ID), st.just(ID),
                      st.sampled_from([f"{ID}0", f"-{ID}", f'"{ID}"', f"{ID}.0", "1", "0", "true", "null"]),
                      raw_numbers())
action_values = st.one_of(
    st.just(f'"{LEGAL}"'), st.just(f'"{LEGAL}"'), st.just(f'"{LEGAL}"'),
    st.sampled_from(['"take"', '"pass"', '"attack 6C"', '"attack 7C 7D"', '"beat 6C 8C"', '"lead 9C"', '"throw 6H"',
                     '"\\u0070ass"', '"t\\u0061ke"', '"attack 6c"', '"attack 10C"', '"attack 7D 7C"', f'"{LEGAL} "',
                     '"fold"', '""', "null", "7", '["pass"]']),
    json_values.map(lambda v: dump(v, True)),
)


@st.composite
def reply_objects(draw: st.DrawFn) -> str:
    """An object shaped like a reply: the right fields or wrong ones, duplicated, reordered, missing, extra."""
    space = draw(st.sampled_from(["", "", " ", "\t", "\r", "  \r\t "]))
    if draw(st.booleans()):  # the three fields of a reply, each value right most of the time
        names = draw(st.permutations(["type", "id", "action"]))
        values = {"type": draw(st.sampled_from(['"action"'] * 4 + ['"hello"', '"Action"', '"action "'])),
                  "id": draw(id_values), "action": draw(action_values)}
        pairs = [f'"{name}"{space}:{space}{values[name]}' for name in names]
    else:
        names = draw(st.lists(st.sampled_from(["type", "id", "action", "protocol", "name", "version", "type", "id"])
                              | st.text(max_size=6), max_size=7))
        if draw(st.booleans()):
            names = ["type", "id", "action", *names]
        names = draw(st.permutations(names))
        pairs = [f"{dump(name, True)}{space}:{space}{draw(field_values(name))}" for name in names]
    return space + "{" + ("," + space).join(pairs) + "}" + space


def encode_line(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")  # a raw lone surrogate becomes invalid UTF-8


@st.composite
def reply_lines(draw: st.DrawFn) -> bytes:
    """One line a bot could send in reply to a request (no newline: the line ends where the bot's does)."""
    kind = draw(st.integers(0, 9))
    if kind <= 3:
        line = encode_line(draw(reply_objects()))
    elif kind == 4:
        line = encode_line(dump(draw(json_values), draw(st.booleans())))
    elif kind == 5:
        line = encode_line(draw(nested()))
    elif kind == 6:
        line = draw(st.binary(max_size=300))
    elif kind == 7:
        valid = encode_line(draw(reply_objects()))
        line = valid[:draw(st.integers(0, len(valid)))]  # cut short
    elif kind == 8:
        line = draw(st.sampled_from([b"", b" ", b"\r", b"null", b"NaN", b"Infinity", b"-Infinity", b"[]", b"{}",
                                     b'"action"', b"\xef\xbb\xbf{}", b"\x00", b"\xff\xfe\xfd", b"\xed\xa0\x80",
                                     b'{"type":"action","id":@ID@,"action":"@LEGAL@"}\x00',
                                     b'{"type":"action","id":@ID@,"action":"@LEGAL@"} x',
                                     b'{"type":"action","id":@ID@,"action":"@LEGAL@"}{}',
                                     b'{"type":"action","id":@ID@,"action":"@LEGAL@"}\r',
                                     b'{"type":"action","id":@ID@,"action":"\\u0070ass"}']))
    else:
        size = draw(st.sampled_from([1000, MAX_LINE - 100, MAX_LINE - 40, MAX_LINE + 10, 100_000]))
        line = b'{"type":"action","id":@ID@,"action":"' + b"p" * size + b'"}'
    return line.replace(b'"@ID@"', b"@ID@") if draw(st.integers(0, 3)) else line


MUTANTS = 7  # byte-level mutants decoded per generated line
SPLICES = (b'"', b"{", b"}", b"[", b"]", b",", b":", b"\\", b"\\u", b"\\ud800", b"0", b"-", b"e", b" ", b"\x00",
           b"\xff", b"\xc3", b"\xed\xa0\x80", b"NaN", b'"id":1', b'"type":"action"')


def mutants(line: bytes, seed: int) -> list[bytes]:
    """``MUTANTS`` variants of ``line`` with 1-3 bytes deleted, replaced or inserted, or tokens spliced in."""
    rng = random.Random(seed)
    out = []
    for _ in range(MUTANTS):
        data = bytearray(line)
        for _ in range(rng.randint(1, 3)):
            pos = rng.randint(0, len(data))
            op = rng.randrange(4)
            if op == 0 and pos < len(data):
                del data[pos]
            elif op == 1 and pos < len(data):
                data[pos] = rng.randrange(256)
            elif op == 2:
                data[pos:pos] = bytes([rng.randrange(256)])
            else:
                data[pos:pos] = rng.choice(SPLICES)
        out.append(bytes(data))
    return out


def fill(line: bytes, request_id: int, legal: str) -> bytes:
    """What the bot actually sends: the placeholders replaced as the fuzz bot does."""
    return line.replace(ID.encode(), str(request_id).encode()).replace(LEGAL.encode(), legal.encode())


def valid_reply(line: bytes, request_id: int, legal: list[str]) -> bool:
    """Whether ``line`` is a correct reply, by the protocol's own decoder (protocol/messages.py)."""
    try:
        reply = bot_decoder.decode(line)
    except (msgspec.DecodeError, RecursionError):
        return False
    return isinstance(reply, Reply) and reply.id == request_id and reply.action in legal


def independent_verdict(line: bytes, request_id: int, legal: list[str]) -> str | None:
    """PROTOCOL.md by hand, for lines without duplicate keys: None (valid legal), "protocol" or "illegal"."""
    def reject(token: str) -> None:
        raise ValueError(token)

    def no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        keys = [key for key, _ in pairs]
        if len(set(keys)) != len(keys):
            raise ValueError("duplicate key")
        return dict(pairs)

    try:
        obj = json.loads(line.decode("utf-8"), parse_constant=reject, object_pairs_hook=no_duplicates)
    except (ValueError, RecursionError):
        return "protocol"
    if not isinstance(obj, dict) or obj.get("type") != "action" or set(obj) != {"type", "id", "action"}:
        return "protocol"
    if type(obj["id"]) is not int or type(obj["action"]) is not str or obj["id"] != request_id:
        return "protocol"
    if any(0xD800 <= ord(char) <= 0xDFFF for char in obj["action"]):
        return "protocol"  # an escaped lone surrogate is not text (msgspec rejects it)
    return None if obj["action"] in legal else "illegal"


def has_duplicate_keys(line: bytes) -> bool:
    found = False

    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        nonlocal found
        found |= len({key for key, _ in pairs}) != len(pairs)
        return dict(pairs)

    try:
        json.loads(line.decode("utf-8", "replace"), object_pairs_hook=hook)
    except (ValueError, RecursionError):
        return False
    return found


@fuzz_settings(DECODE_EXAMPLES)
@given(reply_lines(), st.integers(1, 10**9), st.integers(0, 2**32))
def test_decode_raises_only_protocol_errors(line: bytes, request_id: int, seed: int) -> None:
    """``BotClient._decode`` returns a hello or a reply, or raises BotProtocolError with a one-line reason;
    it agrees with a by-hand reading of PROTOCOL.md. Each generated line is decoded with its byte mutants."""
    for data in [line, *mutants(line, seed)]:
        COUNTS["BotClient._decode"] += 1
        check_decode(fill(data, request_id, "pass"), request_id)


def check_decode(line: bytes, request_id: int) -> None:
    try:
        message = BotClient._decode(line)
    except BotProtocolError as exc:
        assert exc.verdict == "protocol" and "\n" not in exc.reason
        assert independent_verdict(line, request_id, ["pass"]) == "protocol" or has_duplicate_keys(line), \
            "the decoder rejected a well-formed reply"
        COUNTS["BotClient._decode: rejected"] += 1
        return
    assert isinstance(message, BotHello | Reply)
    COUNTS[f"BotClient._decode: {type(message).__name__}"] += 1
    if isinstance(message, Reply) and not has_duplicate_keys(line):
        assert independent_verdict(line, message.id, [message.action]) is None, "accepted a malformed reply"


def test_decode_report() -> None:
    report("BotClient._decode")


NESTINGS = [
    ("id before the tag", lambda d: b'{"id":' + b"[" * d + b"]" * d + b',"type":"action"}'),
    ("objects", lambda d: b'{"a":' * d + b"1" + b"}" * d),
    ("field before the tag", lambda d: b'{"x":' + b'{"a":' * d + b"1" + b"}" * d + b',"type":"action"}'),
    ("arrays", lambda d: b"[" * d + b"]" * d),
]


def test_decode_deep_nesting_is_a_protocol_error() -> None:
    """Lines of at most 64 KiB nested deeper than Python's recursion limit: a protocol error, not a
    RecursionError escaping the referee (msgspec raises it when it skips or buffers a value met before
    the ``type`` tag, or inside an object it must read)."""
    escaped = []
    for shape, build in NESTINGS:
        for depth in (1_000, 5_000, 10_000):
            line = build(depth)
            assert len(line) <= MAX_LINE
            try:
                BotClient._decode(line)
            except BotProtocolError:
                continue
            except RecursionError:
                escaped.append(f"{shape} ({depth} deep)")
            else:
                raise AssertionError(f"{shape} ({depth} deep) was accepted")
    assert escaped == [], f"RecursionError escaped BotClient._decode for: {', '.join(escaped)}"


# -- bot replies end to end ------------------------------------------------------------------------------

FUZZ_BOT = r'''
"""Answers the handshake, then sends the bytes of LINE_FILE (placeholders filled) at its chosen moment."""
import json
import sys

line_file, log_file, moment = sys.argv[1], sys.argv[2], sys.argv[3]
armed = line_file != "-"


def send(data):
    sys.stdout.buffer.write(data + b"\n")
    sys.stdout.buffer.flush()


def fuzzed(message):
    global armed
    armed = False
    with open(log_file, "wb") as log:
        log.write(json.dumps(message).encode())
    with open(line_file, "rb") as source:
        line = source.read()
    legal = message.get("legal", ["pass"])[0]
    return line.replace(b"@ID@", str(message.get("id", 0)).encode()).replace(b"@LEGAL@", legal.encode())


for raw in sys.stdin.buffer:
    message = json.loads(raw)
    if message["type"] == "hello":
        if armed and moment == "hello":
            send(fuzzed(message))
        else:
            send(json.dumps({"type": "hello", "protocol": message["protocol"], "name": "fuzz"}).encode())
    elif message["type"] == "request":
        if armed and moment == "request":
            send(fuzzed(message))
        else:
            send(json.dumps({"type": "action", "id": message["id"], "action": message["legal"][0]}).encode())
    elif message["type"] == "shutdown":
        break
'''

CLOCK = TimeControl(move_time=10.0, startup_time=15.0)  # a verdict here must never be a timeout


def children() -> list[int]:
    """This process's children, zombies included (from /proc)."""
    me = str(os.getpid()).encode()
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = Path(f"/proc/{entry}/stat").read_bytes().rpartition(b")")[2].split()
            except OSError:
                continue
            if fields[1] == me:
                found.append(int(entry))
    return found


@pytest.fixture(scope="module")
def bot_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("fuzzbots")
    (folder / "bot.py").write_text(FUZZ_BOT)
    return folder


def run_fuzzed_game(folder: Path, line: bytes, moment: str, fuzz_seat: int, seed: int) -> tuple[GameRecord, Path]:
    """``play_game`` between the fuzz bot (at ``fuzz_seat``) and a correct bot; every process stopped after."""
    line_file, log_file = folder / f"line{seed}", folder / f"log{seed}"
    line_file.write_bytes(line)
    log_file.unlink(missing_ok=True)
    script = str(folder / "bot.py")
    fuzz = BotClient("fuzz", BotCommand([sys.executable, "-S", script, str(line_file), str(log_file), moment]),
                     time_control=CLOCK)
    correct = BotClient("correct", BotCommand([sys.executable, "-S", script, "-", "-", "-"]), time_control=CLOCK)
    clients = [fuzz, correct] if fuzz_seat == 0 else [correct, fuzz]
    before = set(children())
    try:
        game = new_game(Rules(), 2, SeededRng(seed))
        record = play_game(game, clients, "fuzz", deal="fuzz")
    finally:
        fuzz.stop(grace=0.0)
        correct.stop(grace=0.0)
    assert set(children()) - before == set(), "a bot process outlived its game"
    return record, log_file


def check_fuzzed_record(record: GameRecord, line_sent: bytes, request: dict[str, Any] | None, fuzz_seat: int,
                        moment: str) -> None:
    result = record.result
    assert result.end in ("fool", "draw", "forfeit", "action_cap")
    assert sorted(seat for group in result.order for seat in group) == [0, 1]
    verdicts = [(v.seat, v.kind) for v in record.verdicts]
    if request is None:  # the fuzz bot was never asked (the game ended first): nothing to judge
        assert verdicts == []
        return
    if moment == "hello":
        ok = (not len(line_sent) > MAX_LINE and isinstance(_decoded(line_sent), BotHello)
              and _decoded(line_sent).protocol == PROTOCOL_VERSION)  # type: ignore[union-attr]
    else:
        ok = len(line_sent) <= MAX_LINE and valid_reply(line_sent, request["id"], request["legal"])
    if ok:
        assert verdicts == [], f"a valid reply {line_sent[:100]!r} drew {record.verdicts}"
        assert result.end != "forfeit"
        COUNTS["play_game (bot process): valid reply"] += 1
        return
    COUNTS[f"play_game (bot process): {record.verdicts[0].kind if record.verdicts else 'no'} verdict"] += 1
    assert len(verdicts) == 1 and verdicts[0][0] == fuzz_seat, record.verdicts
    assert verdicts[0][1] in ("protocol", "illegal"), record.verdicts
    if moment == "request" and len(line_sent) <= MAX_LINE and not has_duplicate_keys(line_sent):
        assert verdicts[0][1] == (independent_verdict(line_sent, request["id"], request["legal"]) or "none")
    assert "\n" not in record.verdicts[0].reason
    assert result.end == "forfeit" and result.fools == [fuzz_seat]


def _decoded(line: bytes) -> object:
    try:
        return bot_decoder.decode(line)
    except (msgspec.DecodeError, RecursionError):
        return None


def end_to_end(folder: Path, line: bytes, moment: str, fuzz_seat: int, seed: int) -> None:
    record, log_file = run_fuzzed_game(folder, line, moment, fuzz_seat, seed)
    request = json.loads(log_file.read_bytes()) if log_file.exists() else None
    sent = fill(line, request.get("id", 0), request.get("legal", ["pass"])[0]) if request else line
    check_fuzzed_record(record, sent, request, fuzz_seat, moment)


@fuzz_settings(END_TO_END_EXAMPLES)
@given(reply_lines().map(lambda line: line.replace(b"\n", b" ")), st.integers(0, 1), st.integers(0, 10**6))
def test_fuzzed_reply_end_to_end(bot_dir: Path, line: bytes, fuzz_seat: int, seed: int) -> None:
    """A real bot process sends the fuzzed line as its first reply: no exception escapes ``play_game``, the
    bot gets a protocol or illegal verdict unless the line is a valid legal reply, the game has a result,
    and no child process remains."""
    COUNTS["play_game (bot process)"] += 1
    end_to_end(bot_dir, line, "request", fuzz_seat, seed)


def test_end_to_end_report() -> None:
    report("play_game (bot process)")


@pytest.mark.parametrize("moment", ["request", "hello"])
def test_deeply_nested_line_end_to_end(bot_dir: Path, moment: str) -> None:
    """A 10 KiB line nested 5,000 deep, as the handshake reply or the first reply: a protocol verdict against
    that bot, not a RecursionError out of ``play_game`` (at the handshake the bot is not even stopped)."""
    end_to_end(bot_dir, NESTINGS[0][1](5_000), moment, fuzz_seat=1, seed=11)


# -- tournament configs -------------------------------------------------------------------------------------

TOP_KEYS = ["name", "variant", "players", "format", "deals", "rotations", "series", "seed", "tables", "challengers",
            "restart", "pause", "max_failures"]
TOML_BARE = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


def toml_string(text: str) -> str:
    out = []
    for char in text:
        if char in '"\\':
            out.append("\\" + char)
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def toml_key(key: str) -> str:
    return key if key and set(key) <= TOML_BARE else toml_string(key)


def toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf") if math.isinf(value) else repr(value)
    if isinstance(value, str):
        return toml_string(value)
    if isinstance(value, RawToml):
        return value.text
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(item) for item in value) + "]"
    assert isinstance(value, dict)
    return "{" + ", ".join(f"{toml_key(k)} = {toml_value(v)}" for k, v in value.items()) + "}"


class RawToml:
    """A value written as is: dates, times, odd literals."""

    def __init__(self, text: str) -> None:
        self.text = text


def toml_document(config: dict[str, object], tables: bool) -> str:
    """TOML text for ``config``: scalars first, then ``[table]`` and ``[[array]]`` sections (or all inline)."""
    lines = []
    later = []
    for key, value in config.items():
        if tables and isinstance(value, dict):
            later.append(f"[{toml_key(key)}]\n" + "".join(f"{toml_key(k)} = {toml_value(v)}\n"
                                                          for k, v in value.items()))
        elif tables and isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            for item in value:
                assert isinstance(item, dict)
                later.append(f"[[{toml_key(key)}]]\n" + "".join(f"{toml_key(k)} = {toml_value(v)}\n"
                                                               for k, v in item.items()))
        else:
            lines.append(f"{toml_key(key)} = {toml_value(value)}\n")
    return "".join(lines) + "\n".join(later)


toml_text = st.text(st.characters(codec="utf-8"), max_size=12)
odd_values = st.one_of(
    st.integers(), st.integers(min_value=-(2**80), max_value=2**80), st.floats(), st.booleans(), toml_text,
    st.sampled_from([RawToml("1979-05-27"), RawToml("07:32:00"), RawToml("1979-05-27T07:32:00Z"),
                     RawToml("0x7fffffffffffffff"), RawToml("1e400"), RawToml("-0.0"), RawToml("9223372036854775808"),
                     RawToml("-9223372036854775809"), RawToml("[]"), RawToml("{}")]),
    st.lists(st.integers() | toml_text, max_size=3),
    st.dictionaries(toml_text, st.integers() | toml_text, max_size=3),
)


ODD_BOT_VALUES: dict[str, st.SearchStrategy[object]] = {
    "name": st.sampled_from(["", "a b", "a,b", "x|y", "h#", "é", "bot0", "\u2028", "tab\t"]) | toml_text | odd_values,
    "command": st.sampled_from(["", "'unclosed", "a\\", "x\x00y", "{python}", " ", "\"\""])
    | st.lists(toml_text, max_size=3) | toml_text | odd_values,
    "dir": st.sampled_from(["..", "~", "nowhere", "/", "~/x", "a\x00b", "~\x00", "~nobody/x", ""]) | toml_text
    | odd_values,
    "env": st.dictionaries(st.sampled_from(["A", "", "=", "B=C", "\x00", "PATH"]) | toml_text,
                           toml_text | odd_values, max_size=3) | odd_values,
}


@st.composite
def valid_bot(draw: st.DrawFn, index: int) -> dict[str, object]:
    bot: dict[str, object] = {"name": f"bot{index}",
                              "command": draw(st.sampled_from(["{python} bot.py", ["{python}", "-S", "b.py"], "./b"]))}
    if draw(st.booleans()):
        bot["dir"] = "."
    if draw(st.booleans()):
        bot["env"] = {"A": "1"}
    return bot


PLAUSIBLE: dict[str, st.SearchStrategy[object]] = {
    "variant": st.sampled_from([*VARIANTS, "durak"]),
    "players": st.integers(1, 7),
    "format": st.sampled_from(["round_robin", "round_robin", "sampled", "gauntlet", "swiss"]),
    "deals": st.integers(0, 3) | st.just(2**63 - 1),
    "rotations": st.sampled_from(["cyclic", "all", "some"]),
    "series": st.integers(0, 3),
    "seed": st.integers(-1, 2**63 - 1),
    "tables": st.integers(0, 5),
    "challengers": st.lists(st.sampled_from(["bot0", "bot1", "bot9"]), max_size=3),
    "restart": st.sampled_from(["never", "game", "always"]),
    "pause": st.booleans(),
    "max_failures": st.integers(0, 5),
}
PLAUSIBLE_TABLES: dict[str, tuple[list[str], st.SearchStrategy[object]]] = {
    "rules": ([*OPTIONS, "variant"], st.one_of(st.booleans(), st.integers(0, 7),
                                               st.sampled_from([36, 52, "stay", "discard", "under_fool"]))),
    "time": (["move", "grace", "startup", "bank"], st.floats(0.001, 100) | st.integers(0, 5)),
    "limits": (["memory_mb", "max_processes", "file_size_mb", "open_files", "cpu_seconds"], st.integers(0, 4096)),
}


@st.composite
def configs(draw: st.DrawFn) -> dict[str, object]:
    """A plausible config (often valid), then 0-3 mutations: a key wrong, missing or unknown."""
    config: dict[str, object] = {"name": "fuzz"}
    for key in draw(st.lists(st.sampled_from(TOP_KEYS[1:]), max_size=5, unique=True)):
        config[key] = draw(PLAUSIBLE[key])
    for table, (keys, values) in PLAUSIBLE_TABLES.items():
        if draw(st.booleans()):
            config[table] = draw(st.dictionaries(st.sampled_from(keys), values, max_size=2))
    bots = [draw(valid_bot(i)) for i in range(draw(st.integers(2, 4)))]
    config["bots"] = bots
    for _ in range(draw(st.integers(0, 3))):
        mutation = draw(st.integers(0, 5))
        if mutation == 0:
            config[draw(st.sampled_from(TOP_KEYS))] = draw(odd_values)
        elif mutation == 1 and config:
            del config[draw(st.sampled_from(sorted(config)))]
        elif mutation == 2:
            config[draw(toml_text | st.sampled_from(["Name", "bot", "rule"]))] = draw(odd_values)
        elif mutation == 3 and bots:
            bot = draw(st.sampled_from(bots))
            field = draw(st.sampled_from([*ODD_BOT_VALUES, "extra"]))
            if field == "extra":
                bot[draw(toml_text)] = draw(odd_values)
            elif draw(st.integers(0, 4)):
                bot[field] = draw(ODD_BOT_VALUES[field])
            else:
                bot.pop(field, None)
        elif mutation == 4:
            table = draw(st.sampled_from(sorted(PLAUSIBLE_TABLES)))
            keys, _ = PLAUSIBLE_TABLES[table]
            entries = config.get(table)
            entries = dict(entries) if isinstance(entries, dict) else {}
            entries[draw(st.sampled_from(keys) | toml_text)] = draw(odd_values)
            config[table] = entries
        else:
            config[draw(st.sampled_from(sorted(PLAUSIBLE_TABLES)))] = draw(odd_values)
    return config


@st.composite
def config_files(draw: st.DrawFn) -> bytes:
    kind = draw(st.integers(0, 9))
    if kind <= 6:
        return toml_document(draw(configs()), tables=draw(st.booleans())).encode()
    if kind == 7:  # broken syntax: a valid document cut or spliced
        text = toml_document(draw(configs()), tables=True).encode()
        cut = draw(st.integers(0, len(text)))
        return text[:cut] + draw(st.sampled_from([b"", b"=", b"[", b"[[", b'"', b"\xff", b"\x00", b"\n[rules\n"]))
    if kind == 8:
        return draw(st.binary(max_size=200))
    return draw(st.text(max_size=200)).encode("utf-8", "surrogatepass")


@pytest.fixture(scope="module")
def config_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("configs")


def check_load(path: Path) -> LoadedConfig | ConfigError:
    try:
        return load_config(path)
    except ConfigError as exc:
        message = str(exc)
        assert one_line(message), f"a config error of several lines: {message!r}"
        assert message.startswith(f"{path}: ")
        return exc


@fuzz_settings(CONFIG_EXAMPLES)
@given(config_files())
def test_load_config_returns_a_config_or_one_config_error(config_dir: Path, data: bytes) -> None:
    COUNTS["load_config"] += 1
    path = config_dir / "fuzz.toml"
    path.write_bytes(data)
    outcome = check_load(path)
    assert isinstance(outcome, LoadedConfig | ConfigError)
    if isinstance(outcome, LoadedConfig):
        COUNTS["load_config: valid"] += 1


def test_load_config_report() -> None:
    report("load_config")


@fuzz_settings(CONFIG_CLI_EXAMPLES)
@given(config_files())
def test_tournament_cli_rejects_bad_configs_in_one_line(config_dir: Path, data: bytes) -> None:
    """``durak tournament`` on a config that does not load: exit 3 and one error line, no traceback."""
    path = config_dir / "cli.toml"
    path.write_bytes(data)
    try:
        loaded = isinstance(load_config(path), LoadedConfig)
    except Exception:  # any failure: the CLI run below must still report it as exit 3
        loaded = False
    assume(not loaded)  # a valid config would start a tournament
    COUNTS["durak tournament"] += 1
    assert_cli_error(invoke("tournament", str(path), "--db", str(config_dir / "cli.db")), 3)
    assert not (config_dir / "cli.db").exists()


def test_tournament_cli_report() -> None:
    report("durak tournament")


def assert_cli_error(result: Ran, code: int) -> None:
    """Exit ``code`` with one error line. (An exception other than an exit fails in ``invoke`` already.)"""
    assert "Traceback" not in result.output
    assert result.code == code, f"exit {result.code}: {result.output!r}"
    errors = result.err.strip()
    assert one_line(errors) and errors.startswith("durak: error: "), errors


def test_bot_dir_with_a_nul_is_a_config_error(config_dir: Path) -> None:
    """A NUL in a bot's ``dir`` after ``~``: a ConfigError naming the key (``os.path.expanduser`` raises
    ValueError on it before the folder check)."""
    path = config_dir / "nul.toml"
    path.write_text('name = "t"\n[[bots]]\nname = "a"\ncommand = "x"\ndir = "~\\u0000"\n'
                    '[[bots]]\nname = "b"\ncommand = "y"\n')
    outcome = check_load(path)
    assert isinstance(outcome, ConfigError) and "bots[0].dir" in str(outcome)
    assert_cli_error(invoke("tournament", str(path), "--db", str(config_dir / "nul.db")), 3)


def test_seed_beyond_63_bits_is_a_config_error(config_dir: Path) -> None:
    """A seed the results database cannot hold (SQLite INTEGER is 64-bit signed; ``draw_seed`` draws 63 bits):
    a ConfigError naming ``seed``. Loaded, it fails later as ``durak: internal error: OverflowError: Python
    int too large to convert to SQLite INTEGER``."""
    path = config_dir / "seed.toml"
    for seed in (2**63, 10**30):
        path.write_text(f'name = "t"\nseed = {seed}\n[[bots]]\nname = "a"\ncommand = "x"\n'
                        '[[bots]]\nname = "b"\ncommand = "y"\n')
        outcome = check_load(path)
        assert isinstance(outcome, ConfigError) and "'seed'" in str(outcome), f"seed {seed} was accepted"


# -- rule options through --set ----------------------------------------------------------------------

option_names = st.sampled_from([*OPTIONS, "variant", "", " deck ", "DECK", "deck.x"]) | st.text(max_size=10)
option_values = st.one_of(
    json_values.map(lambda v: dump(v, True)),
    st.sampled_from(["36", "52", "37", "true", "false", "null", "1", "0", "-1", "6", "7", "5000", "2", "1e999",
                     "1" + "0" * 30, "9" * 5000, "stay", "discard", '"stay"', "under_fool", '"under_fool"', "1.0",
                     "NaN", "[36]", '{"a":1}', "", "=", "[" * 400 + "]" * 400]),
    st.text(max_size=20),
)
VALID_VALUES = {
    "deck": ["36", "52"], "first_move": ["from_under_fool", "under_fool", '"under_fool"'],
    "first_bout_limit": ["null", "1", "3", "6"], "throw_in_after_take": ["true", "false"],
    "defender_draws_last": ["true", "false"], "transfer_after_beat": ["true", "false"],
    "transfer_beaten_pairs": ["stay", "discard"], "allow_transfer": ["true", "false"],
    "max_actions": ["1", "40", "5000", "1" + "0" * 30], "ask_forced_passes": ["true", "false"],
}
valid_pairs = st.sampled_from(sorted(VALID_VALUES)).flatmap(
    lambda name: st.sampled_from(VALID_VALUES[name]).map(lambda value: f"{name}={value}"))
set_pairs = st.one_of(valid_pairs, valid_pairs, st.builds(lambda n, v: f"{n}={v}", option_names, option_values),
                      st.text(max_size=15))


@fuzz_settings(SET_CLI_EXAMPLES)
@given(st.sampled_from(VARIANTS), st.lists(set_pairs, min_size=1, max_size=3), st.integers(2, 6),
       st.sampled_from(["36", "52"]))
def test_selfplay_set_options(variant: str, pairs: list[str], players: int, deck: str) -> None:
    """``durak selfplay --games 1 --set ...``: exit 0, or exit 3 with one error line; never a traceback."""
    COUNTS["durak selfplay --set"] += 1
    args = ["selfplay", "--games", "1", "--variant", variant, "--players", str(players), "--deck", deck]
    args += [f"--set={pair}" for pair in pairs]
    result = invoke(*args)
    COUNTS[f"durak selfplay --set: exit {result.code}"] += 1
    if result.code == 0:
        assert "Traceback" not in result.output
        return
    assert_cli_error(result, 3)


def test_selfplay_report() -> None:
    report("durak selfplay --set")


def test_deeply_nested_set_value_is_a_config_error() -> None:
    """``--set max_actions=[[[...]]]`` nested 3,000 deep: exit 3 with one line, not an internal error
    (``msgspec.json.decode`` raises RecursionError, which ``parse_set_options`` does not catch)."""
    value = "[" * 3000 + "]" * 3000
    assert_cli_error(invoke("selfplay", "--games", "1", "--set", f"max_actions={value}"), 3)

