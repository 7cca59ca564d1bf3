"""The API's answers built from the store for one viewer: every page and route gets its data here, and every
object passes :func:`referee.web.visibility.sight` first. Nothing else reads the store for showing."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

import msgspec

from referee.analysis.analyze import GameAnalysis
from referee.report.analysis_marks import decode_analysis, marked_view, with_marks
from referee.report.game_data import GAME_DATA_VERSION, NO_TRACES, game_data, public_view, stored_traces
from referee.results.analysis_store import AnalysisRow
from referee.results.arena_store import UploadRow
from referee.results.league_store import VersionRow
from referee.results.rows import StoredReplay
from referee.results.side_store import SideRow
from referee.results.stamps import stamp
from referee.results.store import StoreError
from referee.results.web_queries import GameQuery, LeagueGame, WebStore
from referee.web import models, urls
from referee.web.published import LeagueFacts, NotQuick
from referee.web.visibility import (
    AdminSubject,
    AnalysisSubject,
    AuthorSubject,
    GameSubject,
    SideSubject,
    Sight,
    UploadSubject,
    Viewer,
    own_seats,
    reason_shown,
    sight,
)

#: A side request's statuses once nothing more of it will be played.
SIDE_OVER = ("done", "void")
#: How many of the board's top active versions its chart draws.
LEADERS = 5
_ENCODER = msgspec.json.Encoder()
replace_struct = msgspec.structs.replace


@dataclass(frozen=True)
class GameFilter:
    bot: str | None = None
    verdict: str | None = None  # a kind, or "any"
    players: int | None = None
    page: int = 1
    before: int | None = None  # the page after one whose oldest game has this number (its "older" link)
    after: int | None = None  # the page before one whose newest game has this number (its "newer" link)


class Answers:
    """One request's view of the league: the store, the viewer, and the league's row and versions by name (read
    once per change of a version, not per request: :class:`~referee.web.published.LeagueFacts`)."""

    def __init__(self, store: WebStore, viewer: Viewer, facts: LeagueFacts) -> None:
        self.store, self.viewer = store, viewer
        self.league = facts.league
        self.versions: dict[str, VersionRow] = facts.versions
        self._by_bot = facts.by_bot

    # -- the board and bots ---------------------------------------------------------------

    def board(self) -> models.Board:
        """The board as last fitted (each line with its change over a day), the versions entered since, and the
        rating history of the top :data:`LEADERS` active versions."""
        rows = [row for row in self.store.board(self.league.id) if row.version in self.versions]
        fitted = rows[0].fitted if rows else None
        day_before = _day_before(fitted)
        before = {} if day_before is None else self.store.ratings_at(self.league.id, day_before)
        lines = []
        for row in rows:
            then = before.get(row.version)
            line = self._board_line(row.rank, row.version, row.elo, row.sd, row.games)
            lines.append(replace_struct(line, change=None if then is None else row.elo - then))
        rated = {row.version for row in rows}
        entered = [models.EnteredLine(version=v.name, bot=v.bot, author=v.author, added=v.added, state=_state(v))
                   for v in self.versions.values() if v.name not in rated and v.retired is None]
        leaders = [line.version for line in lines if line.state == "active" and line.games][:LEADERS]
        history = [models.RatingPointOut(version=p.version, fitted=p.fitted, elo=p.elo, sd=p.sd, games=p.games)
                   for p in self.store.rating_history(self.league.id, leaders)]
        return models.Board(league=self.league.name, fitted=fitted, lines=lines, entered=entered, leaders=leaders,
                            history=history, live=urls.BOARD_LIVE_API())

    def live(self, now: datetime) -> models.BoardLive:
        """The board's live part at ``now``: what the viewer may see of the games stored in the hour before (in all
        and each version's), each version's latest game, and the groups in flight (only that they are, and who sits
        in one: nothing of their games)."""
        with_open = self._query(None).with_open
        groups = self.store.playing(self.league.id)
        playing = {version for seats in groups for version in seats}
        since = stamp(now - timedelta(hours=1))
        first = self.store.first_game_since(self.league.id, since)
        lines = []
        for name in self.versions:
            last = self.store.last_game(self.league.id, name, with_open=with_open)
            hour = 0 if first is None else self.store.version_games_since(self.league.id, name, first[1],
                                                                           with_open=with_open)
            lines.append(models.LiveLine(version=name, playing=name in playing, games_last_hour=hour,
                                         last_game=last[0] if last else None, last_played=last[1] if last else None,
                                         last_url=urls.game(last[0]) if last else None))
        return models.BoardLive(now=now.isoformat(timespec="seconds"), lines=lines, groups_playing=len(groups),
                                games_last_hour=self.store.games_since(self.league.id, since, with_open=with_open))

    def _board_line(self, rank: int, name: str, elo: float, sd: float | None, games: int) -> models.BoardLine:
        version = self.versions[name]
        return models.BoardLine(rank=rank, version=name, bot=version.bot, author=version.author, elo=elo, sd=sd,
                                games=games, state=_state(version))

    def bot(self, name: str) -> models.BotOut | None:
        """A bot's page (None: no such bot)."""
        versions = self._by_bot.get(name, [])
        if not versions:
            return None
        author = versions[-1].author
        owner = sight(self.viewer, AuthorSubject(author)) is not Sight.PUBLIC
        shown = [models.VersionOut(name=v.name, number=v.number, added=v.added, state=_state(v),
                                   quarantine_reason=v.quarantined if owner else None) for v in versions]
        history = [models.RatingPointOut(p.version, p.fitted, p.elo, p.sd, p.games)  # ~300 points: positional
                   for p in self.store.rating_history(self.league.id, [v.name for v in versions])]
        # Counted in SQL over the seats' index (a page reads its bot's rows, never every game); the games the
        # viewer may not see (open groups, for all but the admin) are left out there too.
        names, with_open = [v.name for v in versions], self._query(None).with_open
        recent = self.store.league_games(self.league.id, replace(self._query(name), newest_first=True, limit=20))
        return models.BotOut(name=name, author=author, versions=shown, history=history,
                             head_to_head=self._head_to_head(name, names, with_open),
                             verdict_kinds=self.store.verdict_counts(self.league.id, names, with_open=with_open),
                             games=[self._line(g) for g in recent if self._sight(g) is not Sight.HIDDEN])

    def _head_to_head(self, bot: str, versions: list[str], with_open: bool) -> list[models.HeadToHead]:
        """The bot's (``versions``') meetings with each other bot (their versions added up), by name."""
        return [models.HeadToHead(opponent=m.opponent, games=m.games, fool=m.fool, opponent_fool=m.opponent_fool)
                for m in self.store.meetings(self.league.id, bot, versions, with_open=with_open)]

    # -- games ----------------------------------------------------------------------------

    def games(self, wanted: GameFilter, per_page: int) -> models.GamesPage:
        query = self._query(wanted.bot, verdict=wanted.verdict, table=wanted.players)
        # A page reached by its neighbour's link reads the games past that neighbour's through the index (a
        # keyset), one more to know whether an older page follows, and counts nothing; a page asked for by number
        # alone counts the games and finds where it begins (OFFSET, or a narrow index).
        if wanted.before is not None or wanted.after is not None:
            total = pages = None
            page = max(1, wanted.page)
            read = self.store.league_games(self.league.id, replace(
                query, newest_first=True, limit=per_page + 1, before=wanted.before, after=wanted.after))
            if wanted.after is not None:  # newest first: the one more is the newest, past this page
                shown, older = read[-per_page:], bool(read)
            else:
                shown, older = read[:per_page], len(read) > per_page
        else:
            total = self.store.count_league_games(self.league.id, query)
            pages = max(1, -(-total // per_page))
            page = min(max(1, wanted.page), pages)
            shown = self.store.league_games(self.league.id, replace(query, newest_first=True, limit=per_page,
                                                                     offset=(page - 1) * per_page))
            older = page < pages
        # The query leaves out open groups for all but the admin; sight() has the last word on each game.
        return models.GamesPage(games=[self._line(g) for g in shown if self._sight(g) is not Sight.HIDDEN],
                                total=total, page=page, pages=pages, older=older,
                                after=shown[0].number if shown else None, before=shown[-1].number if shown else None)

    def _query(self, bot: str | None, **more: Any) -> GameQuery:
        """The SQL side of what this viewer may list: open groups' games for the admin only; ``bot``'s versions."""
        players = None if bot is None else tuple(v.name for v in self._by_bot.get(bot, ()))
        return GameQuery(with_open=sight(self.viewer, AdminSubject()) is Sight.ALL, players=players, **more)

    def game(self, number: int, *, quick: bool = False) -> models.GameOut | models.KeptGameOut | None:
        """A game for the viewer (None: no such game, or one this viewer may not see: the same answer). Its public
        view is the bytes the daemon's publisher kept (:mod:`referee.report.publisher`), where made: only a viewer
        who sees more (an author's own seats, the admin's every stderr) has views built for them. ``quick``: raise
        :class:`~referee.web.published.NotQuick` rather than build a view or an analysis."""
        found = self.store.league_game_shown(self.league.id, number, GAME_DATA_VERSION)
        if found is None:
            return None
        game = found.game
        seen = self._sight(game)
        if seen is Sight.HIDDEN:
            return None
        mine = own_seats(self.viewer, self._authors_of(game))
        own = mine if seen is Sight.OWNER else []  # the seats whose own views (and stderr) the viewer gets
        kept = None if seen is Sight.ALL else found.view
        if kept is not None and not own and not found.analysed:  # what a crowd asks for: the kept bytes alone
            return models.KeptGameOut(number=game.number, status=game.status, views=[msgspec.Raw(kept)])
        if quick:
            raise NotQuick(f"game {number}")
        rows = self.store.analyses_of(game.id)
        stored, = self.store.replays_by_id([game.id])
        views = viewer_views(stored, game.number, seen, own) if kept is None else seat_views(stored, game.number, own)
        analyses, askable = self.analyses(stored, views, Shown(game.number, game.status == "complete", False,
                                                               seen is Sight.ALL), mine, rows)
        if kept is None:
            return models.GameOut(number=game.number, status=game.status, views=views, analyses=analyses,
                                  can_analyze=askable)
        return models.KeptGameOut(number=game.number, status=game.status,
                                  views=[msgspec.Raw(kept), *(msgspec.Raw(_ENCODER.encode(view)) for view in views)],
                                  analyses=analyses, can_analyze=askable)

    def analyses(self, stored: StoredReplay, views: list[dict[str, Any]], shown: Shown, mine: list[int],
                 rows: list[AnalysisRow] | None = None) -> tuple[list[models.AnalysisOut], list[int]]:
        """The analyses of a game this viewer may see (each asked for by a seat's author: the asker alone and the
        admin see it until its game is public, then anyone; a card table's, its person alone), each done one's marks
        drawn on that seat's view in ``views`` (:meth:`_draw`); and the seats of ``mine`` the viewer may still ask
        an analysis of. ``rows``: the game's analyses, if read already."""
        rows = self.store.analyses_of(stored.id) if rows is None else rows
        players = stored.record.players
        url = urls.TABLE_REPLAY(table_id=shown.number) if shown.table else urls.game(shown.number)
        out = []
        for row in rows:
            if sight(self.viewer, AnalysisSubject(row.author, shown.public, shown.table)) is Sight.HIDDEN:
                continue
            analysis = _decoded(row) if row.status == "done" else None
            out.append(analysis_out(row, players[row.seat] if row.seat < len(players) else "", analysis, url))
            if analysis is not None:
                self._draw(stored, views, analysis, shown)
        asked = {row.seat for row in rows}
        return out, [seat for seat in mine if seat not in asked]

    @staticmethod
    def _draw(stored: StoredReplay, views: list[dict[str, Any]], analysis: GameAnalysis, shown: Shown) -> None:
        """An analysis's marks on its seat's view in ``views``, or on that seat's view added (without the seat's
        stderr and reasons, unless the viewer sees all). An analysis that does not fit the game (another game's, or
        its decisions not the seat's: a row written by hand) draws nothing."""
        if analysis.game != stored.record.game:
            return
        own = next((view for view in views if view.get("seat") == analysis.seat), None)
        try:
            if own is not None:
                with_marks(own, analysis)
                return
            traces = stored_traces(stored) if shown.all else NO_TRACES
            views.append(marked_view(stored.replay, analysis, traces, game_id=shown.number, reasons=shown.all))
        except ValueError:
            return

    def _sight(self, game: LeagueGame) -> Sight:
        return sight(self.viewer, GameSubject(game.status, self._authors_of(game)))

    def _line(self, game: LeagueGame) -> models.GameLine:
        seen, mine = self._sight(game), own_seats(self.viewer, self._authors_of(game))
        record = game.record
        verdicts = [models.VerdictOut(seat=v.seat, bot=v.bot, kind=v.kind,
                                      reason=v.reason if reason_shown(seen, v.seat, mine) else None)
                    for v in record.verdicts]
        return models.GameLine(number=game.number, game=record.game, status=game.status, players=record.players,
                               fools=record.fools, end=record.end, verdicts=verdicts, url=urls.game(game.number))

    def _authors_of(self, game: LeagueGame) -> tuple[str, ...]:
        # A player that is no version of the league belongs to nobody (no author sees it as theirs).
        return self._authors(game.record.players)

    # -- authors, uploads, admin ----------------------------------------------------------

    def author(self, name: str) -> models.AuthorOut | None:
        row = self.store.author(name)
        if row is None:
            return None
        bots = sorted({v.bot for v in self.versions.values() if v.author == name})
        if sight(self.viewer, AuthorSubject(name)) is Sight.PUBLIC:
            return models.AuthorOut(name=name, bots=bots)
        uploads = [upload_out(u) for u in self.store.uploads(self.league.id, name)]
        return models.AuthorOut(name=name, bots=bots, uploads=uploads, challenges=self.sides(name))

    def upload(self, upload_id: int) -> models.UploadOut | None:
        try:
            row = self.store.upload(upload_id)
        except StoreError:
            return None
        if sight(self.viewer, UploadSubject(row.author)) is Sight.HIDDEN:
            return None
        return upload_out(row)

    # -- unrated side games (challenges) ---------------------------------------------------

    def sides(self, author: str | None, limit: int = 20) -> list[models.SideOut]:
        """The latest side requests of ``author`` (None: everyone's) this viewer may see, newest first."""
        rows = self.store.sides(self.league.id, author=author, limit=limit)
        return [self._side_out(row, seen) for row in reversed(rows)
                if (seen := sight(self.viewer, SideSubject(row.author))) is not Sight.HIDDEN]

    def side(self, side_id: int) -> models.SideOut | None:
        """A side request (None: no such request, or another author's: the same answer)."""
        found = self._side_row(side_id)
        return None if found is None else self._side_out(*found)

    def side_game(self, side_id: int, number: int) -> models.GameOut | None:
        """One of a side request's games, once its deal is over, from the asker's seats (None: not shown)."""
        found = self._side_row(side_id)
        if found is None:
            return None
        row, seen = found
        stored = self.store.side_game(row, number)
        if stored is None or not self._deal_over(row, stored.record.deal, seen):
            return None
        mine = own_seats(self.viewer, self._authors(stored.record.players))
        return models.GameOut(number=number, status=row.status, views=viewer_views(stored, number, seen, mine))

    def _side_row(self, side_id: int) -> tuple[SideRow, Sight] | None:
        try:
            row = self.store.side(side_id)
        except StoreError:
            return None
        seen = sight(self.viewer, SideSubject(row.author))
        if seen is Sight.HIDDEN or row.league_id != self.league.id:
            return None
        return row, seen

    def _deal_over(self, row: SideRow, deal: str, seen: Sight) -> bool:
        """As a league game's group: a side game is shown (but to the admin) once every rotation of its deal is
        stored, or its request is over."""
        if seen is Sight.ALL or _is_over(row):
            return True
        return sum(g.record.deal == deal for g in self.store.side_games(row)) >= len(row.seats)

    def _side_out(self, row: SideRow, seen: Sight) -> models.SideOut:
        url = urls.challenge(row.id)
        played = []
        for game in self.store.side_games(row):
            record = game.record
            if not self._deal_over(row, record.deal, seen):
                continue
            mine = own_seats(self.viewer, self._authors(record.players))
            verdicts = [models.VerdictOut(seat=v.seat, bot=v.bot, kind=v.kind,
                                          reason=v.reason if reason_shown(seen, v.seat, mine) else None)
                        for v in record.verdicts]
            played.append(models.SideGameLine(number=game.number, players=record.players, fools=record.fools,
                                              end=record.end, verdicts=verdicts,
                                              url=urls.challenge_game(row.id, game.number)))
        return models.SideOut(id=row.id, kind=row.kind, author=row.author, seats=list(row.seats), games=row.games,
                              created=row.created, status=row.status, result=row.result, finished=row.finished,
                              played=played, url=url, over=_is_over(row))

    def _authors(self, players: list[str]) -> tuple[str, ...]:
        return tuple(self.versions[p].author if p in self.versions else "" for p in players)

    def admin(self) -> models.AdminOut | None:
        if sight(self.viewer, AdminSubject()) is Sight.HIDDEN:
            return None
        board = {row.version: row for row in self.store.board(self.league.id)}
        authors = [models.AuthorLine(name=a.name, admin=a.admin, created=a.created, revoked=a.revoked)
                   for a in self.store.authors()]
        versions = [self._board_line(b.rank if (b := board.get(n)) else 0, n, b.elo if b else 0.0,
                                     b.sd if b else None, b.games if b else 0) for n in self.versions]
        return models.AdminOut(authors=authors, versions=versions, challenges=self.sides(None), finals=self._finals())

    def _finals(self) -> models.FinalsOut:
        asked = self.store.latest_request(self.league.id, "finals")
        begun = self.store.finals(self.league)
        finalists: list[str] = []
        games = 0
        if begun:
            finals = msgspec.json.decode(begun[-1].config)
            finalists = [str(name) for name in finals.get("finalists", [])] if isinstance(finals, dict) else []
            games = self.store.count_games(begun[-1].id)
        return models.FinalsOut(request=asked.id if asked else None, status=asked.status if asked else None,
                                result=asked.result if asked else "", begun=bool(begun), finalists=finalists,
                                games=games)


def viewer_views(stored: StoredReplay, number: int, seen: Sight, mine: list[int]) -> list[dict[str, Any]]:
    """A stored game's views for a viewer who sees it as ``seen``: every hand and stderr (the admin), or the public
    view, then the views of the viewer's own seats ``mine``."""
    if seen is Sight.ALL:
        return [game_data(stored.replay, stored_traces(stored), private=True, game_id=number)]
    return [public_view(stored, number), *seat_views(stored, number, mine)]


def seat_views(stored: StoredReplay, number: int, seats: list[int]) -> list[dict[str, Any]]:
    """A stored game's views from ``seats``, each with that seat's stderr."""
    return [game_data(stored.replay, stored_traces(stored), seat=seat, game_id=number) for seat in seats]


@dataclass(frozen=True)
class Shown:
    """The game whose analyses are shown: its ``number`` (a league game's, or a card table's id), whether it is
    ``public`` (a league game of a complete group), a card ``table``'s, and whether the viewer sees ``all`` of it."""

    number: int
    public: bool
    table: bool
    all: bool


def analysis_out(row: AnalysisRow, bot: str, analysis: GameAnalysis | None, url: str) -> models.AnalysisOut:
    summary = analysis.summary if analysis is not None else None
    return models.AnalysisOut(id=row.id, seat=row.seat, bot=bot, status=row.status, playouts=row.playouts,
                              seed=row.seed, created=row.created, result=row.result, finished=row.finished,
                              mean_loss=summary.mean_loss if summary else None,
                              marks=dict(summary.marks) if summary else None, url=url)


def _decoded(row: AnalysisRow) -> GameAnalysis | None:
    """A request's analysis (the daemon's JSON); None if there is none, or it does not decode, or is of another seat
    than the request's (a row written by hand)."""
    if row.analysis is None:
        return None
    try:
        analysis = decode_analysis(row.analysis)
    except msgspec.DecodeError:
        return None
    return analysis if analysis.seat == row.seat else None


def upload_out(row: UploadRow) -> models.UploadOut:
    return models.UploadOut(id=row.id, author=row.author, bot=row.bot, created=row.created, size=row.size,
                            status=row.status, steps=[models.StepOut(s.step, s.ok, s.detail, s.seconds)
                                                      for s in row.steps],
                            build_log=row.build_log, gate_log=row.gate_log, version=row.version, finished=row.finished)


def _state(version: VersionRow) -> str:
    return version.state(why=False)


def _is_over(row: SideRow) -> bool:
    """Whether a side request is over: nothing more of it will be played."""
    return row.status in SIDE_OVER


def _day_before(fitted: str | None) -> str | None:
    """The time stamp a day before ``fitted``, as the store writes one (:func:`~referee.results.stamps.stamp`: so that
    they compare as strings), or None."""
    if fitted is None:
        return None
    try:
        return stamp(datetime.fromisoformat(fitted) - timedelta(days=1))
    except ValueError:
        return None
