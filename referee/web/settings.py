"""The web server's settings: limits, quotas and the proxies it trusts, passed explicitly to :func:`create_app`."""

from __future__ import annotations

from dataclasses import dataclass, field

KIB = 1024
MIB = 1024 * KIB


@dataclass(frozen=True)
class WebSettings:
    """What ``durak serve`` allows. Rate limits are token buckets kept in each worker process, so with
    ``--workers N`` a client may get up to N times the budget (documented in docs/WEB.md)."""

    #: Addresses whose ``X-Forwarded-For`` and ``X-Forwarded-Proto`` are believed (a reverse proxy's).
    trusted_proxies: frozenset[str] = field(default_factory=frozenset)
    session_seconds: int = 8 * 3600  # a session cookie's life (its max age, and checked on its signed issue time)
    rate_per_second: float = 5.0  # the buckets' refill, per address and per author
    rate_burst: int = 60  # the buckets' size: requests allowed at once
    archive_bytes: int = 8 * MIB  # an upload's archive
    form_bytes: int = 64 * KIB  # any other request body (forms, JSON)
    max_bots: int = 5  # bot names per author
    uploads_per_hour: int = 12
    stored_bytes: int = 64 * MIB  # an author's archives still kept
    board_seconds: int = 5  # how often the board page polls /api/board
    games_per_page: int = 50
