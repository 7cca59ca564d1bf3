"""A seat at the table as the match sees it: what :func:`referee.games.match.play_game` asks of each player.

A bot process (:class:`referee.bots.session.BotClient`) is one kind of seat; a person
(:class:`referee.games.human.HumanSeat`, at a terminal or at the web arena's card table) is another. Both get the same
messages (the game start, requests with the seat's own view and the legal actions, game over), so a person
sees exactly what a bot in that seat would: the redaction is the match's, not the seat's.
"""

from __future__ import annotations

from typing import Protocol

from protocol.messages import GameOver, Message, Request
from protocol.records import StderrChunk


class Seat(Protocol):
    """A player the match can ask for decisions; every failure it raises is a ``BotError`` (a forfeit)."""

    name: str
    move_times: list[float]  # seconds per decision in the current game
    strikes: list[int]  # the current game's moves answered inside the grace

    def new_game(self) -> None:
        """Reset the per-game clock and counters."""

    def send_later(self, message: Message) -> None:
        """A message that needs no reply (the game start); delivered no later than the seat's next request."""

    def start(self) -> object:
        """Make the seat ready to be asked (a bot: launch and handshake). :raises BotError:"""

    def next_request_id(self) -> int:
        """The id of the seat's next request."""

    def time_for_move(self) -> float:
        """Seconds the seat may use on its next decision (the request's ``time_ms``)."""

    def ask(self, request: Request, *, stderr_mark: int | None = None) -> str:
        """The action string the seat chose for ``request``. :raises BotError: a timeout, a crash, a resignation."""

    def resignation(self) -> str | None:
        """Why the seat gives up the game now, outside its turn (a person's Ctrl-C); None to play on."""

    def mark_stderr(self, after: int) -> None:
        """What the seat writes to stderr from now on belongs beside ``events[after:]``."""

    def game_over(self, message: GameOver, *, offender: bool = False) -> None:
        """The game's end, with the seat's last events."""

    def stop(self, grace: float = 0.5) -> None:
        """Done with the seat (a bot: shut down); safe to call twice."""

    def take_stderr(self) -> list[StderrChunk]:
        """What the seat wrote to stderr since the last call."""
