"""The JSON API's answers, one msgspec Struct each (the OpenAPI document at /schema/openapi.json is made from
these). The HTML pages render the same objects, so a page never shows what its API route would not."""

from __future__ import annotations

from typing import Any

import msgspec

from protocol.views import PlayerView
from referee.report.game_data import view_title
from referee.results.requests import FinalsBudget, FinalsTop


class RatingPointOut(msgspec.Struct, frozen=True):
    version: str
    fitted: str
    elo: float
    sd: float | None
    games: int


class BoardLine(msgspec.Struct, frozen=True):
    rank: int
    version: str
    bot: str
    author: str
    elo: float
    sd: float | None  # None until the fit pins it
    games: int
    state: str  # active, retired or quarantined
    change: float | None = None  # Elo since the last fit a day or more before this one (None: none that old)


class EnteredLine(msgspec.Struct, frozen=True):
    """A version entered and not yet on the board (the daemon has not refitted since it was added)."""

    version: str
    bot: str
    author: str
    added: str
    state: str


class Board(msgspec.Struct, frozen=True):
    """The board as the daemon last fitted it, and the versions entered since (all kept until the next refit or
    version change). ``history``: the rating points of ``leaders`` (the top active versions), for the chart.
    What changes as games are played (each version's last game, the last hour's games, what plays now) is
    :class:`BoardLive`, fetched by the page's script."""

    league: str
    fitted: str | None  # when the daemon last refitted (None before its first fit)
    lines: list[BoardLine]
    entered: list[EnteredLine] = []
    leaders: list[str] = []
    history: list[RatingPointOut] = []
    live: str = ""  # the address of its live part (:class:`BoardLive`)


class LiveLine(msgspec.Struct, frozen=True):
    version: str
    playing: bool  # it sits in a deal group in flight (which games, with whom, is not shown until it ends)
    games_last_hour: int = 0  # its games of the hour the viewer may see
    last_game: int | None = None  # its latest game the viewer may see
    last_played: str | None = None  # when that game ended
    last_url: str | None = None


class BoardLive(msgspec.Struct, frozen=True):
    """The board's live part, read afresh at each request: games shown in the hour before ``now`` (a group's
    games once it is complete or void, as everywhere), how many deal groups are in flight, and per version its
    latest game and whether it is playing."""

    now: str
    games_last_hour: int
    groups_playing: int
    lines: list[LiveLine]


class VersionOut(msgspec.Struct, frozen=True):
    name: str
    number: int
    added: str
    state: str
    quarantine_reason: str | None = None  # the owner's and the admin's only


class HeadToHead(msgspec.Struct, frozen=True):
    """Games shared with one opponent bot, and how often each was a fool in them."""

    opponent: str
    games: int
    fool: int
    opponent_fool: int


class VerdictOut(msgspec.Struct, frozen=True):
    seat: int
    bot: str
    kind: str
    reason: str | None = None  # the verdict's own bot's author and the admin only


class GameLine(msgspec.Struct, frozen=True):
    number: int
    game: str
    status: str  # the deal group's: complete or void (open: the admin only)
    players: list[str]
    fools: list[str]
    end: str
    verdicts: list[VerdictOut]
    url: str


class GamesPage(msgspec.Struct, frozen=True):
    """A page of the games list. ``after`` and ``before`` are the numbers of its newest and oldest games: the next
    page newer is ``page - 1`` with ``after``, the next older ``page + 1`` with ``before`` (both None: no games);
    ``older``: whether there is one. ``total`` and ``pages`` count the games the filter picks on a page asked for by
    number; a page reached by a neighbour's link (``before`` or ``after``) is not counted (None): uncounted, a page
    of games that no longer change is the same bytes for good, which a crowd can be sent without a query."""

    games: list[GameLine]
    total: int | None
    page: int
    pages: int | None
    older: bool = False
    after: int | None = None
    before: int | None = None


class BotOut(msgspec.Struct, frozen=True):
    name: str
    author: str
    versions: list[VersionOut]
    history: list[RatingPointOut]
    head_to_head: list[HeadToHead]
    verdict_kinds: dict[str, int]
    games: list[GameLine]  # the latest ones shown


class AnalysisOut(msgspec.Struct, frozen=True):
    """A post-game analysis of one seat, as far as the viewer may see it: its status (``pending``, ``running``,
    ``done``, ``failed`` with ``result`` saying why), its settings, and once done the seat's summary (its mean loss
    per decision with a choice and the marks counted); the marks themselves are on the seat's view of the replay."""

    id: int
    seat: int
    bot: str
    status: str
    playouts: int
    seed: int
    created: str
    result: str = ""
    finished: str | None = None
    mean_loss: float | None = None
    marks: dict[str, int] | None = None
    url: str = ""


class GameOut(msgspec.Struct, frozen=True):
    """A game for the replay viewer: ``views`` are its data (referee.report.game_data), every hand first, then
    each of the viewer's own seats' views (with that seat's stderr); a seat's view carries the marks of its analysis
    where the viewer may see one (``analyses``). ``can_analyze``: the seats the viewer may ask an analysis of."""

    number: int
    status: str
    views: list[dict[str, Any]]
    analyses: list[AnalysisOut] = []
    can_analyze: list[int] = []

    @property
    def title(self) -> str:
        """The page's title: its first view's."""
        return str(self.views[0]["title"]) if self.views else f"Game {self.number}"


class AnalysisIn(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """An analysis asked for: the seat of the game (the asker's own bot's) whose decisions are judged."""

    seat: int


class AnalysisQueued(msgspec.Struct, frozen=True):
    analysis: int
    status: str
    url: str


class KeptGameOut(msgspec.Struct, frozen=True):
    """A :class:`GameOut` whose views are JSON as made (the public one as the daemon's publisher kept it), never
    decoded: it encodes to the bytes the same GameOut would."""

    number: int
    status: str
    views: list[msgspec.Raw]
    analyses: list[AnalysisOut] = []
    can_analyze: list[int] = []

    @property
    def title(self) -> str:
        """The page's title: its first view's (read from the view's head, not decoded whole)."""
        return view_title(self.views[0]) if self.views else f"Game {self.number}"


class StepOut(msgspec.Struct, frozen=True):
    step: str
    ok: bool
    detail: str
    seconds: float


class UploadOut(msgspec.Struct, frozen=True):
    id: int
    author: str
    bot: str
    created: str
    size: int
    status: str
    steps: list[StepOut]
    build_log: str
    gate_log: str
    version: str | None
    finished: str | None


class UploadAccepted(msgspec.Struct, frozen=True):
    upload: int
    status: str
    url: str


class SideIn(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A challenge: ``games`` unrated games of the asker's bot ``bot`` (its latest version) against the latest
    versions of ``opponents`` (other bots of the league), at a table of 1 + len(opponents)."""

    bot: str
    opponents: list[str]
    games: int


class SideGameLine(msgspec.Struct, frozen=True):
    number: int
    players: list[str]
    fools: list[str]
    end: str
    verdicts: list[VerdictOut]  # a reason for the asker's own seats only (and the admin)
    url: str


class SideOut(msgspec.Struct, frozen=True):
    """An unrated side request and its games so far: its asker's and the admin's only."""

    id: int
    kind: str
    author: str
    seats: list[str]
    games: int
    created: str
    status: str  # pending, playing, done or void
    result: str
    finished: str | None
    played: list[SideGameLine]
    url: str
    over: bool = False  # done or void: nothing more will be played (its page stops reloading)


class SideQueued(msgspec.Struct, frozen=True):
    challenge: int
    status: str
    url: str


class AuthorOut(msgspec.Struct, frozen=True):
    name: str
    bots: list[str]
    uploads: list[UploadOut] | None = None  # the author's own and the admin's only
    challenges: list[SideOut] | None = None  # the author's own and the admin's only


class AuthorLine(msgspec.Struct, frozen=True):
    name: str
    admin: bool
    created: str
    revoked: str | None


class FinalsOut(msgspec.Struct, frozen=True):
    """The finals as the admin sees them: the latest request for them, and the finals' own row once begun."""

    request: int | None  # the latest finals request (None: never asked for)
    status: str | None  # pending (the daemon completes its groups in flight first), done or refused
    result: str  # the final board's text, or why they could not begin
    begun: bool
    finalists: list[str]
    games: int


class AdminOut(msgspec.Struct, frozen=True):
    authors: list[AuthorLine]
    versions: list[BoardLine]
    challenges: list[SideOut]  # every author's latest
    finals: FinalsOut


class ActionIn(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    bot: str


class FinalsIn(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The finals: the board's ``top`` active versions, within ``max_games`` games (None: the config's
    ``[league] finals_games``)."""

    top: FinalsTop
    max_games: FinalsBudget | None = None


class RequestQueued(msgspec.Struct, frozen=True):
    request: int
    kind: str
    bot: str


class TableIn(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A card table to open: the variant, the league versions at the other seats (in seat order) and the person's
    seat (the table's size is one more than the bots)."""

    variant: str
    bots: list[str]
    seat: int = 0


class TableOut(msgspec.Struct, frozen=True):
    id: int
    variant: str
    players: int
    seat: int
    bots: list[str]
    status: str  # waiting (for the daemon), playing, over
    created: str
    reason: str  # why an over table has no game ("" otherwise)
    url: str  # the table page
    messages: str  # the seat's protocol messages (GET with ?since=N)
    events: str  # the same as server-sent events (text/event-stream)
    replay: str | None  # the replay, once the game is stored


class TableMessages(msgspec.Struct, frozen=True):
    """The seat's protocol messages from ``since`` on, each the exact line a bot at that seat would be sent; ``next``
    is the ``since`` to ask next. ``clock_ms``: the time left on the open request (None: nothing asked now)."""

    since: int
    next: int
    messages: list[str]
    status: str
    clock_ms: int | None
    replay: str | None
    reason: str  # why an over table has no game ("" otherwise)
    view: PlayerView | None = None  # the seat's view at the end, once over (the game over message carries none)


class TableState(msgspec.Struct, frozen=True):
    """A card table's ``event: state`` on its event stream, sent after each batch of messages and when the table
    changes: ``next`` is the number of messages sent so far (the ``since`` a poll would ask next), the rest as in
    :class:`TableMessages`."""

    next: int
    status: str
    clock_ms: int | None
    replay: str | None
    reason: str
    view: PlayerView | None = None


class MoveIn(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The person's answer: the open request's ``id`` and one of its legal strings."""

    request: int
    action: str


class MoveAccepted(msgspec.Struct, frozen=True):
    request: int
    action: str


class TableChoices(msgspec.Struct, frozen=True):
    """What an author may open a table with: variants, the versions they may play, table sizes."""

    variants: list[str]
    bots: list[str]
    min_players: int
    max_players: int
    tables: list[TableOut]
