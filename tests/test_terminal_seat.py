"""The terminal seat as a new player finds it (issue 38): the table drawn once, after the events that dealt it; the
seats numbered, in turn order, at every table size; a single legal action said plainly; the clock counting down,
with warnings before the move time runs into the bank and before the forfeit; bots named after something better
than ``bot``. Unit tests on a pipe and a fake clock, then through a pseudo-terminal."""

from __future__ import annotations

import io
import os
import re
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest

import referee.cli.terminal as terminal
from protocol.messages import GameStart, Request
from protocol.rules import rules_from_options
from referee.cli.terminal import TerminalPerson
from referee.engine import SeededRng, new_game
from referee.games.botargs import default_name
from referee.games.human import ClockReading
from tests.humanpty import RANDOM_BOT, ROOT, Session, play_human

FAST = ["--sandbox", "none", "--human-time", "5", "--human-bank", "0"]
RULE = "-" * 60


@pytest.fixture
def pipe() -> Iterator[tuple[int, int]]:
    read, write = os.pipe()
    yield read, write
    os.close(read)
    os.close(write)


def _start_and_request(players: int = 2, legal: list[str] | None = None) -> tuple[GameStart, Request]:
    game = new_game(rules_from_options("podkidnoy", {}), players, SeededRng(1))
    seat = game.to_move or 0
    start = GameStart(game="g", seat=seat, players=players, names=[f"b{i}" for i in range(players)],
                      rules=game.rules, dealer=game.dealer, view=game.view(seat), seed=0)
    request = Request(id=1, game="g", view=game.view(seat),
                      legal=legal if legal is not None else [str(a) for a in game.legal_actions()], time_ms=1000)
    return start, request


class _FakeTime:
    """A monotonic clock that moves only while the person's wait for input sleeps (select's timeout)."""

    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t

    def select(self, read: list[int], write: list[int], error: list[int], timeout: float) -> tuple[list[int], ...]:
        self.t += timeout
        return [], [], []


def test_the_clock_counts_down_and_warns_before_the_bank_and_before_the_forfeit(
        pipe: tuple[int, int], monkeypatch: pytest.MonkeyPatch) -> None:
    """60 s a move and a 300 s bank, nobody answering: the marks are said at their moments, each followed by the
    prompt with the time then left, and the wait ends at the deadline."""
    clock = _FakeTime()
    monkeypatch.setattr(terminal, "select", SimpleNamespace(select=clock.select))
    out = io.StringIO()
    person = TerminalPerson(out, pipe[0], "rules", now=clock)
    start, request = _start_and_request()
    person.show(start, ClockReading(move_time=60, bank=300))
    deadline = clock.t + 360
    person.show(request, ClockReading(move_time=60, bank=300, deadline=deadline))
    assert person.choose(request, deadline) is None and clock.t == deadline
    said = [line.split("your move [", 1) for line in out.getvalue().split("\n") if "your move [" in line]
    prompts = [re.search(r"; ([^;\]]+)\]: ", "your move [" + p).group(1) for _, p in said]  # type: ignore[union-attr]
    marks = re.findall(r"^! (.+)$", out.getvalue(), re.MULTILINE)
    assert marks == ["10 s of move time left, then your bank (300 s)",
                     "move time up: your bank runs, 300 s before a timeout forfeit",
                     "60 s left before a timeout forfeit", "30 s left before a timeout forfeit",
                     "10 s left before a timeout forfeit"]
    assert prompts == ["60 s + bank 300 s", "10 s + bank 300 s", "bank: 300 s left", "bank: 60 s left",
                       "bank: 30 s left", "bank: 10 s left"]


def test_a_short_clock_still_warns_before_the_bank_runs_out(
        pipe: tuple[int, int], monkeypatch: pytest.MonkeyPatch) -> None:
    """--human-time 2 --human-bank 3 (the issue's): no mark of 10 s or more fits, but the bank's start is said."""
    clock = _FakeTime()
    monkeypatch.setattr(terminal, "select", SimpleNamespace(select=clock.select))
    out = io.StringIO()
    person = TerminalPerson(out, pipe[0], "rules", now=clock)
    start, request = _start_and_request()
    person.show(start, ClockReading(move_time=2, bank=3))
    person.show(request, ClockReading(move_time=2, bank=3, deadline=clock.t + 5))
    assert person.choose(request, clock.t + 5) is None
    assert re.findall(r"^! (.+)$", out.getvalue(), re.MULTILINE) == [
        "move time up: your bank runs, 3 s before a timeout forfeit"]
    assert out.getvalue().endswith("; bank: 3 s left]: ")


def test_where_two_marks_fall_together_the_banks_is_said(
        pipe: tuple[int, int], monkeypatch: pytest.MonkeyPatch) -> None:
    clock = _FakeTime()
    monkeypatch.setattr(terminal, "select", SimpleNamespace(select=clock.select))
    out = io.StringIO()
    person = TerminalPerson(out, pipe[0], "rules", now=clock)
    start, request = _start_and_request()
    person.show(start, ClockReading(move_time=30, bank=60))
    person.show(request, ClockReading(move_time=30, bank=60, deadline=clock.t + 90))
    assert person.choose(request, clock.t + 90) is None
    assert re.findall(r"^! (.+)$", out.getvalue(), re.MULTILINE) == [
        "10 s of move time left, then your bank (60 s)", "move time up: your bank runs, 60 s before a timeout forfeit",
        "30 s left before a timeout forfeit", "10 s left before a timeout forfeit"]


def test_a_single_legal_action_is_said_plainly_and_enter_takes_it(pipe: tuple[int, int]) -> None:
    out = io.StringIO()
    person = TerminalPerson(out, pipe[0], "rules")
    start, request = _start_and_request(legal=["take"])
    person.show(start, ClockReading(move_time=60, bank=0))
    person.show(request, ClockReading(move_time=60, bank=0))
    os.write(pipe[1], b"2\n\n")
    assert person.choose(request, terminal.time.monotonic() + 5) == "take"
    shown = out.getvalue()
    assert "1-1" not in shown
    assert "your move [Enter or 1 for the only action, ? for the rules; " in shown
    assert "not a legal answer: '2'; press Enter or type 1 for the only action, or ?" in shown


def test_an_empty_line_is_no_answer_among_several(pipe: tuple[int, int]) -> None:
    out = io.StringIO()
    person = TerminalPerson(out, pipe[0], "rules")
    _, request = _start_and_request()
    assert len(request.legal) > 1
    os.write(pipe[1], b"\n1\n")
    assert person.choose(request, terminal.time.monotonic() + 5) == request.legal[0]
    assert f"not a legal answer: ''; type 1-{len(request.legal)}, an action as listed, or ?" in out.getvalue()


@pytest.mark.parametrize("players", [2, 3, 6])
def test_the_start_names_the_seats_in_turn_and_draws_no_table(players: int) -> None:
    out = io.StringIO()
    person = TerminalPerson(out, 0, "rules")
    start, request = _start_and_request(players)
    person.show(start, ClockReading(move_time=60, bank=0))
    shown = out.getvalue()
    assert RULE not in shown and "your hand" not in shown  # drawn at the first request, after its events
    ring = " -> ".join(f"{s}:b{s}" + (" (you)" if s == start.seat else "") for s in [*range(players), 0])
    assert f"seating: {ring} (play passes to the left: each player attacks the next one with cards)" in shown
    person.show(request, ClockReading(move_time=60, bank=0))
    seats = re.findall(r"^  (\d):b\d", out.getvalue(), re.MULTILINE)
    assert seats == [str(s) for s in range(players)]  # every seat, the person's too, in turn order
    assert re.search(r"^  1:b1( \(you\))?: 6 cards$", out.getvalue(), re.MULTILINE)  # not "card(s)"
    assert out.getvalue().count(RULE) == 1


def test_a_generic_script_name_gives_way_to_its_folder(tmp_path: Path) -> None:
    """The sample bots as `durak play` names them unnamed: js/bot.js is js, the compiled c/bot is c."""
    for folder, file in [("js", "bot.js"), ("c", "bot"), ("go", "bot"), ("python", "heuristic_bot.py"),
                         ("mine", "Main.py")]:
        (tmp_path / folder).mkdir()
        (tmp_path / folder / file).write_text("")
        (tmp_path / folder / file).chmod(stat.S_IRWXU)
    assert default_name(["node", str(tmp_path / "js" / "bot.js")]) == "js"
    assert default_name([str(tmp_path / "c" / "bot")]) == "c"
    assert default_name([str(tmp_path / "go" / "bot"), "--fast"]) == "go"
    assert default_name(["/usr/bin/python3", str(tmp_path / "python" / "heuristic_bot.py")]) == "heuristic_bot"
    assert default_name(["python3", str(tmp_path / "mine" / "Main.py")]) == "mine"
    assert default_name(["java", "-cp", "classes", "Bot"]) == "java"  # no file named: the program's name
    assert default_name([str(tmp_path / "c" / "bot")], str(tmp_path / "go")) == "go"  # --dir names it


# -- through a pseudo-terminal --------------------------------------------------------------------------------------


def _first_screen(session: Session) -> str:
    """What the terminal showed before the first prompt."""
    text = session.text()
    assert "your move [" in text, text[-2000:]
    return text[:text.index("your move [")]


@pytest.mark.parametrize(("variant", "players"), [("fools_fool", 2), ("fools_fool", 4), ("podkidnoy", 3),
                                                  ("perevodnoy", 6)])
def test_the_table_is_drawn_once_after_the_events_and_every_seat_has_its_number(variant: str, players: int) -> None:
    """Issue 38: the table was drawn at the start and again after the first event line; in fools_fool the first
    drawing showed the hands after the ladder deal before the events that explain them."""
    session = play_human(["--human", "0", RANDOM_BOT, "--players", str(players), "--variant", variant,
                          "--seed", "5", *FAST], lambda index, choices: None, interrupt_at=0)
    first = _first_screen(session)
    assert first.count(RULE) == 1, first
    events = [line for line in first.splitlines() if line.startswith(("-- ", "   "))]
    assert events and first.index(events[0]) < first.index(RULE)  # the events that dealt the hands come first
    if variant == "fools_fool":
        assert first.index("-- ladder: face up") < first.index(RULE)
    names = ["0:human (you)", "1:random_bot", *(f"{s}:random_bot#{s}" for s in range(2, players))]
    assert f"seating: {' -> '.join([*names, names[0]])} (play passes to the left" in first
    drawn = first[first.index(RULE):]
    assert [line.split(":")[0].strip() for line in drawn.splitlines() if re.match(r"  \d:.*: \d+ cards?\b", line)] \
        == [str(s) for s in range(players)]
    assert session.code == 14


def test_the_prompt_counts_down_and_warns_before_the_bank_runs_out() -> None:
    """Issue 38: with --human-time 2 --human-bank 3 the forfeit came with no warning (here 2 s and 1 s)."""
    session = play_human(["--human", "0", RANDOM_BOT, "--seed", "3", "--sandbox", "none", "--human-time", "2",
                          "--human-bank", "1"], lambda index, choices: None, timeout=30)
    text = session.text()
    assert session.code == 0, text[-2000:]
    first = re.search(r"; \d s \+ bank 1 s\]: ", text)  # the time left as the question is asked
    warned = re.search(r"\n! move time up: your bank runs, 1 s before a timeout forfeit\r?\n", text)
    again = re.search(r"; bank: \d s left\]: ", text)  # the prompt again, with the bank's time
    assert first and warned and again, text[-2000:]
    assert first.start() < warned.start() < again.start() < text.index("human (you) forfeits (timeout")


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_js_sample_bot_is_called_js() -> None:
    session = play_human(["--human", "0", "node sample_bots/js/bot.js", "--variant", "fools_fool", "--seed", "2",
                          *FAST], lambda index, choices: None, interrupt_at=0)
    first = _first_screen(session)
    assert "1:js" in first and "bot lays" not in first and "1:bot" not in first, first
    assert ROOT.joinpath("sample_bots", "js", "bot.js").is_file()
