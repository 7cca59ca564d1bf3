"""``durak play --human SEAT BOT...`` through a pseudo-terminal: a scripted person plays every variant against
the sample random bot, at 2 and 4 players; wrong entries, Ctrl-C, the human clock, colours, and a byte test of
everything the terminal was sent before the game's end against the engine's full deal."""

from __future__ import annotations

import os
import shutil
import sys
import threading
import time
from pathlib import Path

import msgspec
import pytest

from protocol.actions import parse_action
from protocol.cards import CARD_NAMES
from protocol.events import ActionTaken, event_for_seat
from protocol.rules import VARIANTS
from referee.cli.exitcodes import ExitCode
from referee.cli.rules_summary import SUMMARIES
from referee.engine import SeededRng, new_game
from referee.engine.rng import derive_seed
from referee.games.play import bot_seat_options
from referee.results.replay import parse_replay
from tests.humanpty import ANSI, CARD, RANDOM_BOT, Session, play_human, random_answers
from tests.sandboxes import BOTS, needs_bwrap

FAST = ["--sandbox", "none", "--human-time", "5", "--human-bank", "0"]
END = b"game over: "  # the person's screen after the game's last event: everything before it is the game


def seen_by(log: Path, seat: int, seed: int) -> tuple[set[bytes], set[bytes]]:
    """Every card the seat's view or its events allowed it to know at some moment of the logged game, and every
    card of the deal: the game dealt again from the human seed domain, and played again action by action."""
    header, events, _ = parse_replay(log.read_bytes())
    players = len(header.names)
    game = new_game(header.rules, players, SeededRng(derive_seed(derive_seed(seed, "human"), "game", 0)),
                    dealer=0)
    assert header.deck == [CARD_NAMES[c] for c in game.deck], "the deal is not from its own seed domain"
    allowed: set[bytes] = set(CARD.findall(msgspec.json.encode(game.view(seat))))
    while game.result is None and len(game.events) < len(events):  # the moves asked; the engine adds the rest
        event = events[len(game.events)]
        if not isinstance(event, ActionTaken):
            break  # a forfeit: the game stopped here
        game.apply(parse_action(event.action))
        allowed |= set(CARD.findall(msgspec.json.encode(game.view(seat))))
    assert game.events == events[:len(game.events)]
    for event in game.events:
        allowed |= set(CARD.findall(msgspec.json.encode(event_for_seat(event, seat))))
    return allowed, {card.encode() for card in header.deck}


def before_end(session: Session) -> bytes:
    screen = ANSI.sub(b"", session.screen)
    assert END in screen, session.text()[-2000:]
    return screen[:screen.index(END)]


@pytest.mark.parametrize("players", [2, 4])
@pytest.mark.parametrize("variant", VARIANTS)
def test_a_person_finishes_a_game_and_the_screen_shows_only_the_seats_view(
        variant: str, players: int, tmp_path: Path) -> None:
    log, seed, seat = tmp_path / "game.jsonl", 11 + players, players - 1
    session = Session()
    play_human(["--human", str(seat), RANDOM_BOT, "--players", str(players), "--variant", variant, "--seed",
                str(seed), "--log", str(log), *FAST], random_answers(players, True, session), session=session)
    text = session.text()
    assert session.code == 0, text[-3000:]
    assert session.prompts >= 3 and "not a legal answer: 'zzz'" in text
    assert f"{variant}: {SUMMARIES[variant]}" in text  # what ? shows
    typed = session.typed[2].decode().strip()
    _, events, _ = parse_replay(log.read_bytes())
    mine = [e.action for e in events if isinstance(e, ActionTaken) and e.seat == seat]
    assert typed == mine[0].upper()  # the first decision, after the wrong entry and ?: typed out in capitals
    # the wrong entry was asked again: the same question follows the one-line refusal
    refused = text.index("not a legal answer: 'zzz'")
    assert text[refused:].splitlines()[1].startswith("your move [")
    header, _, end = parse_replay(log.read_bytes())
    assert header.names[seat] == "human" and end.result.end in {"fool", "draw", "action_cap"}
    # the after-game part: the result and the whole deal, every hand
    after = text[text.index(f"the whole deal, every hand (deal {seed}:human:0: the seed's human domain):"):]
    assert header.deal == f"{seed}:human:0"  # the log says which domain dealt it
    assert after.count(" is dealt ") == players if variant != "fools_fool" else "-- ladder: face up" in after
    allowed, deck = seen_by(log, seat, seed)
    shown = set(CARD.findall(before_end(session)))
    assert shown <= allowed, f"the screen showed {sorted(shown - allowed)} before the end"
    assert deck >= allowed


def test_ctrl_c_resigns_the_game_as_a_forfeit_with_its_exit_code_and_log(tmp_path: Path) -> None:
    log = tmp_path / "game.jsonl"
    session = play_human(["--human", "1", RANDOM_BOT, "--players", "3", "--seed", "4", "--log", str(log), *FAST],
                         random_answers(2), interrupt_at=2)
    text = session.text()
    assert session.code == ExitCode.RESIGNED == 14, text[-2000:]
    assert "you resigned: the game is your forfeit" in text and "Traceback" not in text
    _, _, end = parse_replay(log.read_bytes())
    assert (end.result.forfeit_seat, end.result.verdict) == (1, "resigned")
    assert [(v.seat, v.bot, v.kind, v.reason) for v in end.verdicts] == [(1, "human", "resigned", "Ctrl-C")]
    # the byte check, and its control: the game's screen shows nothing the seat may not know, while the whole
    # deal shown after the end holds cards it never saw (which the same check would catch on a leaky screen)
    allowed, deck = seen_by(log, 1, 4)
    assert set(CARD.findall(before_end(session))) <= allowed
    hidden = deck - allowed
    assert hidden and hidden & set(CARD.findall(ANSI.sub(b"", session.screen)))


SLOW_BOT = """import json, sys, time
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "hello":
        print(json.dumps({"type": "hello", "protocol": 2, "name": "slow"}), flush=True)
    elif message["type"] == "request":
        time.sleep(0.6)
        print(json.dumps({"type": "action", "id": message["id"], "action": message["legal"][0]}), flush=True)
    elif message["type"] == "shutdown":
        break
"""


def test_ctrl_c_while_a_bot_thinks_resigns_before_the_next_move(tmp_path: Path) -> None:
    """Ctrl-C lands while the bots move, not at the person's prompt: the game still ends as the person's forfeit."""
    bot = tmp_path / "slow.py"
    bot.write_text(SLOW_BOT)
    log = tmp_path / "game.jsonl"
    session = Session()

    def answer(index: int, choices: int) -> bytes | None:
        if index == 0:  # answer, then press Ctrl-C while the bot sleeps over its reply
            threading.Timer(0.2, os.write, (session.fd, b"\x03")).start()
            return b"1\n"
        return None  # never answers again: a resignation, not a timeout, must end the game

    play_human(["--human", "0", f"{sys.executable} -S {bot}", "--seed", "1", "--log", str(log), "--sandbox", "none",
                "--move-time", "3", "--human-time", "20"], answer, session=session)
    assert session.code == ExitCode.RESIGNED, session.text()[-2000:]
    _, events, end = parse_replay(log.read_bytes())
    assert (end.result.forfeit_seat, end.result.verdict, end.result.reason) == (0, "resigned", "Ctrl-C")
    assert sum(isinstance(e, ActionTaken) and e.seat == 0 for e in events) == 1
    assert session.prompts == 1  # resigned before the person was asked again: between the bot's moves


def test_a_person_who_does_not_answer_in_time_forfeits_by_timeout(tmp_path: Path) -> None:
    log = tmp_path / "game.jsonl"
    session = play_human(["--human", "0", RANDOM_BOT, "--seed", "3", "--log", str(log), "--sandbox", "none",
                          "--human-time", "0.2", "--human-bank", "0.1"], lambda index, choices: None, timeout=30)
    assert session.code == 0, session.text()[-2000:]
    _, _, end = parse_replay(log.read_bytes())
    assert (end.result.forfeit_seat, end.result.verdict) == (0, "timeout")
    assert "no answer before the deadline; move 1 had 0.2 s + 0.1 s of bank" in end.verdicts[0].reason


@pytest.mark.parametrize(("env", "coloured"), [({}, True), ({"NO_COLOR": "1"}, False), ({"TERM": "dumb"}, False)])
def test_colours_only_on_a_terminal_that_wants_them(env: dict[str, str], coloured: bool) -> None:
    session = play_human(["--human", "0", RANDOM_BOT, "--seed", "2", *FAST], random_answers(3), env=env)
    assert session.code == 0, session.text()[-2000:]
    assert (b"\x1b[" in session.screen) is coloured


@pytest.mark.parametrize(("args", "message"), [
    (["--human", "3", RANDOM_BOT], "--human 3 is not a seat at this table of 2"),
    (["--human", "0", RANDOM_BOT, RANDOM_BOT, "--players", "2"], "2 bots and a person do not fit a table of 2"),
    (["--human", "0", RANDOM_BOT, "--verbose"], "--verbose shows every hand as the game goes: not with --human"),
    ([RANDOM_BOT, RANDOM_BOT, "--players", "3"], "--players is for --human"),
    (["--human", "1", RANDOM_BOT, "--env", "1:X=1"], "--env '1:X=1': seat 1 is the person's, not a bot's"),
    (["--human", "1", RANDOM_BOT, "--dir", "2:/tmp"], "--dir '2:/tmp': no seat 2 at this table of 2"),
])
def test_a_table_that_cannot_be_seated_is_one_line_and_exit_2(args: list[str], message: str) -> None:
    session = play_human([*args, "--sandbox", "none"], random_answers(), timeout=30)
    assert session.code == ExitCode.USAGE and message in session.text(), session.text()
    assert "Traceback" not in session.text()


def _paused(pid: int) -> bool:
    """Whether a process is stopped (SIGSTOP) or in a frozen control group (v2, at either mount; or v1's freezer)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        groups = [line.split(":", 2) for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines()]
    except (OSError, IndexError):
        return False
    if state in "Tt":
        return True
    for hierarchy, controllers, path in groups:
        if hierarchy == "0":
            for root in ("/sys/fs/cgroup", "/sys/fs/cgroup/unified"):
                events = Path(f"{root}{path}/cgroup.events")
                if events.exists() and "frozen 1" in events.read_text().splitlines():
                    return True
        if "freezer" in controllers.split(","):
            freezer = Path(f"/sys/fs/cgroup/freezer{path}/freezer.state")
            if freezer.exists() and freezer.read_text().strip() == "FROZEN":
                return True
    return False


def _descendants(root: int) -> list[int]:
    """The living processes below ``root`` (bwrap and the bots under it)."""
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                parents[int(entry)] = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    found, frontier = [], [root]
    while frontier:
        parent = frontier.pop()
        children = [pid for pid, ppid in parents.items() if ppid == parent]
        found += children
        frontier += children
    return found


@needs_bwrap
def test_the_bots_are_sandboxed_and_paused_while_the_person_thinks(open_tmp: Path) -> None:
    """The default sandbox, as in a tournament: while the person is asked, every bot process is frozen."""
    folder = open_tmp / "bot"
    folder.mkdir(mode=0o755)
    shutil.copy(BOTS / "surroundings.py", folder / "bot.py")
    (folder / "bot.py").chmod(0o644)
    session = Session()
    checks: list[bool] = []

    def answer(index: int, choices: int) -> bytes:
        bots = [pid for pid in _descendants(session.pid)
                if Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[:3][-2:] == [b"-S", b"bot.py"]]
        # the freeze is started as the bot's turn ends and the kernel completes it on its own (the referee checks
        # it did, within 2 s, before the bot's next turn): give it that long on a loaded machine
        settle = time.monotonic() + 2.0
        while not (frozen := bool(bots) and all(_paused(pid) for pid in bots)) and time.monotonic() < settle:
            time.sleep(0.02)
        checks.append(frozen)
        return b"1\n"

    play_human(["--human", "0", f"{sys.executable} -S bot.py", "--dir", str(folder), "--seed", "6",
                "--human-time", "5", "--human-bank", "0"], answer, session=session)
    text = session.text()
    assert session.code == 0, text[-2000:]
    assert "each bot: sandbox bwrap" in text and "forfeits" not in text
    assert checks and all(checks), checks


def test_a_seat_number_in_env_and_dir_is_the_tables_seat_with_a_person_seated() -> None:
    """As ``--stderr``'s: with the person at seat 1 of 4, seat 2 is the second bot (bots are numbered apart)."""
    assert bot_seat_options(["0:A=1", "2:B=2", "3:/d", "random#2:C=3", "D=4"], 1, 4, "--env") == \
        ["0:A=1", "1:B=2", "2:/d", "random#2:C=3", "D=4"]
    assert bot_seat_options(["2:B=2"], None, 4, "--env") == ["2:B=2"]  # no person: the bots are the table
