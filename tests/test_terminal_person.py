"""The terminal's person without a terminal: answers read from a pipe under the seat's deadline, the end of input,
and when colours are used."""

from __future__ import annotations

import io
import os
import time
from collections.abc import Iterator

import pytest

from protocol.messages import Request
from protocol.rules import rules_from_options
from referee.cli.terminal import TerminalPerson, colours_wanted
from referee.engine import SeededRng, new_game


@pytest.fixture
def pipe() -> Iterator[tuple[int, int]]:
    read, write = os.pipe()
    yield read, write
    os.close(read)
    os.close(write)


def _request() -> Request:
    game = new_game(rules_from_options("podkidnoy", {}), 2, SeededRng(1))
    legal = [str(action) for action in game.legal_actions()]
    return Request(id=1, game="g", view=game.view(game.to_move or 0), legal=legal, time_ms=1000)


def test_no_answer_by_the_deadline_returns_none_at_the_deadline(pipe: tuple[int, int]) -> None:
    person = TerminalPerson(io.StringIO(), pipe[0], "rules")
    started = time.monotonic()
    assert person.choose(_request(), started + 0.3) is None
    assert 0.3 <= time.monotonic() - started < 0.6  # the wait ends at the deadline, not at a line


def test_a_number_an_action_and_wrong_entries(pipe: tuple[int, int]) -> None:
    out = io.StringIO()
    person = TerminalPerson(out, pipe[0], "the rules")
    request = _request()
    os.write(pipe[1], f"0\n99\n?\n  {request.legal[-1].upper()}  \n2\n".encode())
    deadline = time.monotonic() + 5
    assert person.choose(request, deadline) == request.legal[-1]
    assert person.choose(request, deadline) == request.legal[1]
    shown = out.getvalue()
    assert shown.count("not a legal answer") == 2 and "the rules\n" in shown


def test_the_end_of_input_resigns(pipe: tuple[int, int]) -> None:
    read, write = os.pipe()
    os.close(write)
    person = TerminalPerson(io.StringIO(), read, "rules")
    assert person.choose(_request(), time.monotonic() + 5) is None
    assert person.resigned() == "end of input"
    os.close(read)


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(("stream", "env", "wanted"), [
    (_Tty(), {"TERM": "xterm"}, True),
    (_Tty(), {"TERM": "xterm", "NO_COLOR": "1"}, False),
    (_Tty(), {"TERM": "xterm", "NO_COLOR": ""}, True),  # no-color.org: set and not empty
    (_Tty(), {"TERM": "dumb"}, False),
    (_Tty(), {}, False),
    (io.StringIO(), {"TERM": "xterm"}, False),  # a file or a pipe
])
def test_colours_only_on_a_terminal_that_wants_them(stream: io.StringIO, env: dict[str, str], wanted: bool) -> None:
    assert colours_wanted(stream, env) is wanted
