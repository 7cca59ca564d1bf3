"""The web server's settings: limits, quotas and the proxies it trusts, passed explicitly to :func:`create_app`."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from referee.league.config import ArenaSettings, LeagueConfig

KIB = 1024
MIB = 1024 * KIB
#: The quotas' defaults are the league config's ``[arena]`` defaults: one home for each number.
_ARENA = ArenaSettings()


@dataclass(frozen=True)
class WebSettings:
    """What ``durak serve`` allows. Rate limits are token buckets kept in each worker process, so with
    ``--workers N`` a client may get up to N times the budget (documented in docs/WEB.md)."""

    #: Addresses whose ``X-Forwarded-For`` and ``X-Forwarded-Proto`` are believed (a reverse proxy's).
    trusted_proxies: frozenset[str] = field(default_factory=frozenset)
    session_seconds: int = 8 * 3600  # a session cookie's life (its max age, and checked on its signed issue time)
    rate_per_second: float = 5.0  # the buckets' refill, per address and per author
    rate_burst: int = 60  # the buckets' size: requests allowed at once
    archive_bytes: int = _ARENA.archive_mb * MIB  # an upload's archive
    form_bytes: int = 64 * KIB  # any other request body (forms, JSON)
    max_bots: int = _ARENA.max_bots_per_author  # bot names per author
    uploads_per_hour: int = _ARENA.uploads_per_hour
    stored_bytes: int = _ARENA.store_mb_per_author * MIB  # an author's archives still kept
    side_games_per_hour: int = _ARENA.side_games_per_hour  # unrated side games an author may ask for
    side_cpu_seconds_per_hour: float = _ARENA.side_cpu_seconds_per_hour  # their bots' measured move times
    table_sizes: tuple[int, ...] = (2,)  # the league's (a side game's table is one of them)
    board_seconds: int = 5  # how often the board page polls /api/board
    tables_per_author: int = _ARENA.tables_per_author  # card tables an author may have open
    tables_total: int = _ARENA.tables_total  # card tables open in the whole arena
    table_bots: str = _ARENA.table_bots  # "any" active version, or the author's "own" only
    analyses_per_hour: int = _ARENA.analyses_per_hour  # post-game analyses an author may ask for
    analysis_cpu_seconds_per_hour: float = _ARENA.analysis_cpu_seconds_per_hour  # what the daemon spent on them
    analysis_playouts: int = _ARENA.analysis_playouts  # worlds per decision of each
    moves_per_second: float = 2.0  # a person's moves at the card tables: their own bucket's refill per author
    moves_burst: int = 6
    games_per_page: int = 50
    public_seconds: int = 5  # how long a browser or a reverse proxy may reuse an anonymous page without asking
    kept_bytes: int = 256 * MIB  # the anonymous pages each worker keeps (least recently used out first; 0: none)
    #: How long a worker trusts its reading of the read marks before it reads them again: an anonymous page may be
    #: that much older than the database (well inside public_seconds); 0: the marks are read at every request.
    marks_seconds: float = 0.5
    #: How long a worker trusts its reading of the marks that move at every deal group the league completes (the
    #: games lists', each bot's): such a page is built at most once in that time however many groups complete, so
    #: a games list or a bot page may be that much older than the database (the board's live part is not); the
    #: board's ratings are as old, at the league's default refit_seconds.
    games_seconds: float = 30.0
    table_streams_per_author: int = 4  # a card table's event streams an author may hold open (tabs, a reload)
    table_streams_total: int = 64  # event streams open in all (each worker process: like the rate limits)
    table_stream_seconds: float = 300.0  # a stream's longest life: then it ends and the browser reconnects
    table_stream_look_seconds: float = 0.15  # how often a stream looks at the database for new messages
    table_stream_heartbeat_seconds: float = 15.0  # a comment sent on a quiet stream (keeps proxies from closing it)
    table_stream_recheck_seconds: float = 5.0  # how often a stream checks its viewer is still signed in

    def for_league(self, config: LeagueConfig) -> WebSettings:
        """These settings with the quotas of a league's ``[arena]`` table (the daemon reads the same table) and its
        table sizes."""
        arena = config.arena
        return replace(self, archive_bytes=arena.archive_mb * MIB, max_bots=arena.max_bots_per_author,
                       uploads_per_hour=arena.uploads_per_hour, stored_bytes=arena.store_mb_per_author * MIB,
                       side_games_per_hour=arena.side_games_per_hour,
                       side_cpu_seconds_per_hour=arena.side_cpu_seconds_per_hour,
                       table_sizes=tuple(sorted(set(config.sizes))),
                       tables_per_author=arena.tables_per_author, tables_total=arena.tables_total,
                       table_bots=arena.table_bots, analyses_per_hour=arena.analyses_per_hour,
                       analysis_cpu_seconds_per_hour=arena.analysis_cpu_seconds_per_hour,
                       analysis_playouts=arena.analysis_playouts)
