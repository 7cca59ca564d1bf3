"""A results database's file and schema: the tables, migrations from older schemas, the owner-only mode the
seed needs, and how a database that may only be read is opened."""

from __future__ import annotations

import contextlib
import errno
import os
import pwd
import sqlite3
import stat
from pathlib import Path

SCHEMA_VERSION = 15
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS tournaments (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    created TEXT NOT NULL,
    config_path TEXT NOT NULL,
    config TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    seed INTEGER NOT NULL,
    active INTEGER NOT NULL DEFAULT 1,
    kind TEXT NOT NULL DEFAULT 'tournament',
    parent INTEGER
);
CREATE TABLE IF NOT EXISTS bots (
    tournament_id INTEGER NOT NULL REFERENCES tournaments(id),
    name TEXT NOT NULL,
    command TEXT NOT NULL,
    dir TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    version TEXT NOT NULL,
    disqualified INTEGER NOT NULL DEFAULT 0,
    settings TEXT NOT NULL DEFAULT '',
    files TEXT NOT NULL DEFAULT '{}',
    reason TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (tournament_id, name)
);
CREATE TABLE IF NOT EXISTS games (
    id INTEGER PRIMARY KEY,
    tournament_id INTEGER NOT NULL REFERENCES tournaments(id),
    slot_key TEXT NOT NULL,
    game_index INTEGER NOT NULL,
    game_key TEXT NOT NULL,
    deal_key TEXT NOT NULL,
    deal_seed INTEGER NOT NULL,
    rotation INTEGER NOT NULL,
    end_reason TEXT NOT NULL,
    outcome TEXT NOT NULL,
    record TEXT NOT NULL,
    replay BLOB NOT NULL,
    stderr BLOB NOT NULL,
    finished TEXT NOT NULL,
    move_us BLOB,
    bot_files TEXT NOT NULL DEFAULT '[]',
    number INTEGER NOT NULL DEFAULT 0,
    UNIQUE (tournament_id, slot_key, game_index)
);
CREATE INDEX IF NOT EXISTS games_by_key ON games (game_key);
CREATE TABLE IF NOT EXISTS superseded_games AS SELECT *, '' AS superseded FROM games WHERE 0;
CREATE UNIQUE INDEX IF NOT EXISTS games_by_number ON games (tournament_id, number);
CREATE INDEX IF NOT EXISTS superseded_by_number ON superseded_games (tournament_id, number);
CREATE TABLE IF NOT EXISTS league_versions (
    tournament_id INTEGER NOT NULL REFERENCES tournaments(id),
    name TEXT NOT NULL,
    bot TEXT NOT NULL,
    number INTEGER NOT NULL,
    author TEXT NOT NULL,
    command TEXT NOT NULL,
    env TEXT NOT NULL,
    dir TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    added TEXT NOT NULL,
    retired TEXT,
    quarantined TEXT,
    PRIMARY KEY (tournament_id, name),
    UNIQUE (tournament_id, bot, number)
);
CREATE TABLE IF NOT EXISTS league_groups (
    tournament_id INTEGER NOT NULL REFERENCES tournaments(id),
    number INTEGER NOT NULL,
    deal_key TEXT NOT NULL,
    deal_seed INTEGER NOT NULL,
    seats TEXT NOT NULL,
    anchor TEXT NOT NULL,
    issued TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'open',
    reason TEXT NOT NULL DEFAULT '',
    finished TEXT,
    PRIMARY KEY (tournament_id, number),
    UNIQUE (tournament_id, deal_key)
);
CREATE TABLE IF NOT EXISTS league_requests (
    id INTEGER PRIMARY KEY,
    tournament_id INTEGER NOT NULL REFERENCES tournaments(id),
    kind TEXT NOT NULL,
    bot TEXT NOT NULL,
    payload TEXT NOT NULL,
    created TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'pending',
    result TEXT NOT NULL DEFAULT '',
    done TEXT
);
CREATE TABLE IF NOT EXISTS league_board (
    tournament_id INTEGER NOT NULL REFERENCES tournaments(id),
    version TEXT NOT NULL,
    rank INTEGER NOT NULL,
    elo REAL NOT NULL,
    sd REAL,
    games INTEGER NOT NULL,
    fitted TEXT NOT NULL,
    PRIMARY KEY (tournament_id, version)
);
CREATE TABLE IF NOT EXISTS league_rating_history (
    tournament_id INTEGER NOT NULL REFERENCES tournaments(id),
    version TEXT NOT NULL,
    fitted TEXT NOT NULL,
    elo REAL NOT NULL,
    sd REAL,
    games INTEGER NOT NULL,
    PRIMARY KEY (tournament_id, version, fitted)
);
CREATE TABLE IF NOT EXISTS arena_authors (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    token_sha256 TEXT NOT NULL,
    admin INTEGER NOT NULL DEFAULT 0,
    created TEXT NOT NULL,
    revoked TEXT,
    epoch INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS arena_uploads (
    id INTEGER PRIMARY KEY,
    tournament_id INTEGER NOT NULL REFERENCES tournaments(id),
    author TEXT NOT NULL,
    bot TEXT NOT NULL,
    created TEXT NOT NULL,
    size INTEGER NOT NULL,
    sha256 TEXT NOT NULL,
    archive BLOB,
    request_id INTEGER,
    status TEXT NOT NULL DEFAULT 'pending',
    steps TEXT NOT NULL DEFAULT '[]',
    build_log TEXT NOT NULL DEFAULT '',
    gate_log TEXT NOT NULL DEFAULT '',
    version TEXT,
    finished TEXT
);
CREATE INDEX IF NOT EXISTS arena_uploads_by_author ON arena_uploads (author, created);
CREATE TABLE IF NOT EXISTS league_seats (
    tournament_id INTEGER NOT NULL,
    version TEXT NOT NULL,
    game_id INTEGER NOT NULL,
    deal_key TEXT NOT NULL,
    fool INTEGER NOT NULL,
    verdict TEXT,
    PRIMARY KEY (tournament_id, version, game_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS league_seats_by_game ON league_seats (game_id);
CREATE INDEX IF NOT EXISTS league_seats_with_verdicts ON league_seats (tournament_id, version, verdict, deal_key)
    WHERE verdict IS NOT NULL;
CREATE TABLE IF NOT EXISTS side_requests (
    id INTEGER PRIMARY KEY,
    league_id INTEGER NOT NULL REFERENCES tournaments(id),
    kind TEXT NOT NULL,
    author TEXT NOT NULL,
    seats TEXT NOT NULL,
    games INTEGER NOT NULL,
    created TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'pending',
    result TEXT NOT NULL DEFAULT '',
    tournament_id INTEGER REFERENCES tournaments(id),
    finished TEXT
);
CREATE INDEX IF NOT EXISTS side_requests_by_author ON side_requests (author, created);
CREATE INDEX IF NOT EXISTS side_requests_by_status ON side_requests (league_id, status, id);
CREATE TRIGGER IF NOT EXISTS league_seats_of_a_game AFTER INSERT ON games
    WHEN (SELECT kind FROM tournaments WHERE id = NEW.tournament_id) = 'league'
    BEGIN INSERT OR IGNORE INTO league_seats {seats_of_new}; END;
CREATE TRIGGER IF NOT EXISTS league_seats_gone AFTER DELETE ON games
    BEGIN DELETE FROM league_seats WHERE game_id = OLD.id; END
"""
#: A league game's seats, one row per version (``g`` a ``games`` row): what a bot's page and the games list filter
#: read through an index instead of decoding every record (a bot page at a million games took 5.5 s so).
_SEATS = ("SELECT {g}.tournament_id, p.value, {g}.id, {g}.deal_key, "
          "EXISTS (SELECT 1 FROM json_each({g}.record, '$.fools') f WHERE f.value = p.value), "
          "(SELECT json_extract(v.value, '$.kind') FROM json_each({g}.record, '$.verdicts') v "
          "WHERE json_extract(v.value, '$.bot') = p.value LIMIT 1) FROM json_each({g}.record, '$.players') p")
_SCHEMA = _SCHEMA.replace("{seats_of_new}", _SEATS.format(g="NEW"))
#: The web arena's card tables (a person against bots, ``durak serve``'s table page), one block so that the step
#: that brings them is easy to renumber. The web server writes a table when an author opens it and the person's
#: answers (``human_moves``) and resignation; the daemon plays it, writes the seat's protocol messages in order
#: (``human_messages``: exactly the lines a bot at that seat would get), the open request's deadline (unix seconds,
#: for the page's clock), and at the end its status and the stored game (of the league's ``tables`` tournament row,
#: never rated).
_HUMAN_TABLES = """
CREATE TABLE IF NOT EXISTS human_tables (
    id INTEGER PRIMARY KEY,
    tournament_id INTEGER NOT NULL REFERENCES tournaments(id),
    author TEXT NOT NULL,
    variant TEXT NOT NULL,
    players INTEGER NOT NULL,
    seat INTEGER NOT NULL,
    bots TEXT NOT NULL,
    created TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'waiting',
    deadline REAL,
    game_id INTEGER,
    reason TEXT NOT NULL DEFAULT '',
    finished TEXT,
    resigned INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS human_tables_by_status ON human_tables (status, author);
CREATE TABLE IF NOT EXISTS human_messages (
    table_id INTEGER NOT NULL REFERENCES human_tables(id),
    n INTEGER NOT NULL,
    line TEXT NOT NULL,
    PRIMARY KEY (table_id, n)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS human_moves (
    table_id INTEGER NOT NULL REFERENCES human_tables(id),
    request INTEGER NOT NULL,
    action TEXT NOT NULL,
    received TEXT NOT NULL,
    PRIMARY KEY (table_id, request)
) WITHOUT ROWID
"""
_SCHEMA = _SCHEMA.rstrip() + ";\n" + _HUMAN_TABLES.strip()
#: The web server's live sessions: a session cookie holds only while its row does. ``durak serve`` writes a row at
#: login (the cookie's nonce, its author, when it was issued and when it expires, unix seconds) and deletes it at
#: logout; revoking an author deletes theirs; an expired row is refused and purged.
_WEB_SESSIONS = """
CREATE TABLE IF NOT EXISTS web_sessions (
    nonce TEXT PRIMARY KEY,
    author_id INTEGER NOT NULL REFERENCES arena_authors(id),
    issued REAL NOT NULL,
    expires REAL NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS web_sessions_by_author ON web_sessions (author_id)
"""
_SCHEMA = _SCHEMA.rstrip() + ";\n" + _WEB_SESSIONS.strip()
#: What the web's pages read instead of counting over every game (schema 9), kept up as games are stored and
#: removed, each league game's row written by a trigger in the transaction that stores it (as ``league_seats``):
#: ``league_games``, a league game's table size and verdicts beside its number and deal (the games list's filters
#: through an index, never a JSON function over every record); ``league_verdicts``, each verdict kind a game has
#: (the verdict filter); ``league_game_counts``, a league's games by table size (the unfiltered list's count);
#: ``league_meetings``, how often each version sat with each other version and who was the fool (a bot page's head
#: to head, which counted over the bot's every game). Games of open groups count in all of them: a page that may
#: not show those subtracts the few of the groups open now, found by ``league_groups_by_status``.
_READ_SIDE = """
CREATE TABLE IF NOT EXISTS league_games (
    game_id INTEGER PRIMARY KEY,
    tournament_id INTEGER NOT NULL,
    number INTEGER NOT NULL,
    deal_key TEXT NOT NULL,
    players INTEGER NOT NULL,
    verdicts INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS league_games_by_size ON league_games (tournament_id, players, number);
CREATE INDEX IF NOT EXISTS league_games_with_verdicts ON league_games (tournament_id, number) WHERE verdicts > 0;
CREATE INDEX IF NOT EXISTS league_games_with_verdicts_by_size ON league_games (tournament_id, players, number)
    WHERE verdicts > 0;
CREATE INDEX IF NOT EXISTS league_games_by_deal ON league_games (tournament_id, deal_key);
CREATE TABLE IF NOT EXISTS league_verdicts (
    tournament_id INTEGER NOT NULL,
    kind TEXT NOT NULL,
    number INTEGER NOT NULL,
    game_id INTEGER NOT NULL,
    PRIMARY KEY (tournament_id, kind, number)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS league_verdicts_by_game ON league_verdicts (game_id, kind);
CREATE TABLE IF NOT EXISTS league_game_counts (
    tournament_id INTEGER NOT NULL,
    players INTEGER NOT NULL,
    games INTEGER NOT NULL,
    PRIMARY KEY (tournament_id, players)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS league_meetings (
    tournament_id INTEGER NOT NULL,
    version TEXT NOT NULL,
    opponent TEXT NOT NULL,
    games INTEGER NOT NULL,
    fool INTEGER NOT NULL,
    opponent_fool INTEGER NOT NULL,
    PRIMARY KEY (tournament_id, version, opponent)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS league_groups_by_status ON league_groups (tournament_id, status);
CREATE TRIGGER IF NOT EXISTS league_games_of_a_game AFTER INSERT ON games
    WHEN (SELECT kind FROM tournaments WHERE id = NEW.tournament_id) = 'league'
    BEGIN
    INSERT OR IGNORE INTO league_games (game_id, tournament_id, number, deal_key, players, verdicts) VALUES (NEW.id,
        NEW.tournament_id, NEW.number, NEW.deal_key, json_array_length(NEW.record, '$.players'),
        json_array_length(NEW.record, '$.verdicts'));
    INSERT OR IGNORE INTO league_verdicts SELECT NEW.tournament_id, json_extract(v.value, '$.kind'), NEW.number,
        NEW.id FROM json_each(NEW.record, '$.verdicts') v;
    INSERT INTO league_game_counts VALUES (NEW.tournament_id, json_array_length(NEW.record, '$.players'), 1)
        ON CONFLICT (tournament_id, players) DO UPDATE SET games = games + 1;
    END;
CREATE TRIGGER IF NOT EXISTS league_games_gone AFTER DELETE ON games
    WHEN EXISTS (SELECT 1 FROM league_games WHERE game_id = OLD.id)
    BEGIN
    UPDATE league_game_counts SET games = games - 1 WHERE tournament_id = OLD.tournament_id
        AND players = (SELECT players FROM league_games WHERE game_id = OLD.id);
    DELETE FROM league_verdicts WHERE game_id = OLD.id;
    DELETE FROM league_games WHERE game_id = OLD.id;
    END;
CREATE TRIGGER IF NOT EXISTS league_meetings_of_a_seat AFTER INSERT ON league_seats
    BEGIN
    INSERT INTO league_meetings SELECT NEW.tournament_id, NEW.version, o.version, 1, NEW.fool, o.fool
        FROM league_seats o WHERE o.game_id = NEW.game_id AND o.version != NEW.version
        UNION ALL SELECT NEW.tournament_id, o.version, NEW.version, 1, o.fool, NEW.fool
        FROM league_seats o WHERE o.game_id = NEW.game_id AND o.version != NEW.version
        ON CONFLICT (tournament_id, version, opponent) DO UPDATE SET games = games + 1,
        fool = fool + excluded.fool, opponent_fool = opponent_fool + excluded.opponent_fool;
    END;
CREATE TRIGGER IF NOT EXISTS league_meetings_gone AFTER DELETE ON league_seats
    BEGIN
    UPDATE league_meetings SET games = games - 1, fool = league_meetings.fool - OLD.fool,
        opponent_fool = opponent_fool - o.fool
        FROM league_seats o WHERE o.game_id = OLD.game_id AND o.version != OLD.version
        AND league_meetings.tournament_id = OLD.tournament_id AND league_meetings.version = OLD.version
        AND league_meetings.opponent = o.version;
    UPDATE league_meetings SET games = games - 1, fool = league_meetings.fool - o.fool,
        opponent_fool = opponent_fool - OLD.fool
        FROM league_seats o WHERE o.game_id = OLD.game_id AND o.version != OLD.version
        AND league_meetings.tournament_id = OLD.tournament_id AND league_meetings.version = o.version
        AND league_meetings.opponent = OLD.version;
    DELETE FROM league_meetings WHERE tournament_id = OLD.tournament_id AND games = 0
        AND (version = OLD.version OR opponent = OLD.version);
    END
"""
_SCHEMA = _SCHEMA.rstrip() + ";\n" + _READ_SIDE.strip()
#: ``read_marks``: a counter per kind of fact the web's pages show, raised by a trigger in the transaction that
#: changes it, whoever writes (the daemon, a lifecycle command with no daemon, a test): the web keeps each page it
#: built under the marks it read, and serves those bytes until one of them moves (:mod:`referee.web.published`).
#: ``versions``: a version added, retired, quarantined...; ``board``: a refit; ``games``: a deal group completed or
#: voided (what a visitor may see of the games); ``bot:NAME``: one of that bot's groups did (its page alone changes);
#: ``gone``: a game deleted (a replay shown once is otherwise never changed: a complete group stays complete);
#: ``authors``: an author added or revoked; ``league``: the league's or a finals' row. ``changed``: unix seconds
#: of the last raise (a page's Last-Modified).
_READ_MARKS = """
CREATE TABLE IF NOT EXISTS read_marks (
    name TEXT PRIMARY KEY,
    value INTEGER NOT NULL,
    changed REAL NOT NULL
) WITHOUT ROWID;
""" + "".join(f"""CREATE TRIGGER IF NOT EXISTS read_mark_{table}_{event.split()[0].lower()} AFTER {event} ON {table}
    BEGIN
    INSERT INTO read_marks VALUES ('{mark}', 1, (julianday('now') - 2440587.5) * 86400.0)
        ON CONFLICT (name) DO UPDATE SET value = value + 1, changed = excluded.changed;
    END;
""" for mark, table, events in (
    ("versions", "league_versions", ("INSERT", "UPDATE", "DELETE")),
    ("board", "league_board", ("INSERT",)),
    ("games", "league_groups", ("UPDATE OF status", "DELETE")),
    ("gone", "games", ("DELETE",)),
    ("authors", "arena_authors", ("INSERT", "UPDATE", "DELETE")),
    ("league", "tournaments", ("INSERT", "UPDATE"))) for event in events) + """
CREATE TRIGGER IF NOT EXISTS read_mark_bots_of_a_group AFTER UPDATE OF status ON league_groups
    BEGIN
    INSERT INTO read_marks SELECT 'bot:' || v.bot, 1, (julianday('now') - 2440587.5) * 86400.0
        FROM json_each(NEW.seats) s JOIN league_versions v ON v.tournament_id = NEW.tournament_id
        AND v.name = s.value WHERE true
        ON CONFLICT (name) DO UPDATE SET value = value + 1, changed = excluded.changed;
    END;
"""
_SCHEMA = _SCHEMA.rstrip() + ";\n" + _READ_MARKS.strip().rstrip(";")
#: ``league_summaries``: each complete deal group summed up as the board's fit needs it
#: (:mod:`referee.rating.summaries`: its versions, per pair their comparisons and points, per version its seats,
#: fools, places and draws), stored by
#: the daemon in the transaction that completes the group, so that a refit reads one small row per group, and only
#: the rows added since its last read (by ``id``), never the games. A game of a summarized group removed (never, in
#: a league: only a tournament's games are superseded) removes the summary, and a refit summarizes the group anew.
_SUMMARIES = """
CREATE TABLE IF NOT EXISTS league_summaries (
    id INTEGER PRIMARY KEY,
    tournament_id INTEGER NOT NULL,
    number INTEGER NOT NULL,
    summary TEXT NOT NULL,
    UNIQUE (tournament_id, number)
);
CREATE TRIGGER IF NOT EXISTS league_summaries_gone AFTER DELETE ON games
    WHEN OLD.deal_key GLOB 'g[0-9]*'
    BEGIN
    DELETE FROM league_summaries WHERE tournament_id = OLD.tournament_id AND number = CAST(substr(OLD.deal_key, 2)
        AS INTEGER);
    END
"""
_SCHEMA = _SCHEMA.rstrip() + ";\n" + _SUMMARIES.strip()
#: ``replay_views``: each public league game's replay as an anonymous visitor's viewer gets it (the JSON of its one
#: view, :func:`referee.report.game_data.public_view`, packed by :mod:`referee.results.packed`), made once by the
#: daemon's publisher (:mod:`referee.report.publisher`) and served by the web as those bytes: a replay is the
#: costliest page to build (the game replayed through the engine, 5-8 ms) and never changes once public. A row with
#: no ``body`` is queued:
#: the trigger queues a group's games (no ``shape`` yet) in the transaction that makes them public (its group
#: complete or void), the publisher fills the queue newest first (its partial index; a game it cannot replay gets
#: ``shape`` -1 and no body: the web builds it, and says why), and a deleted game takes its row with it.
#: ``shape`` is the viewer data's version the body was made in (``GAME_DATA_VERSION``; before ``body``, so that a
#: look at it never reads a body's overflow pages): the web serves a body of its own shape only, and a publisher of
#: another shape than the meta row ``replay_views_shape`` says queues them all again.
_REPLAY_VIEWS = """
CREATE TABLE IF NOT EXISTS replay_views (
    game_id INTEGER PRIMARY KEY,
    shape INTEGER,
    body BLOB
);
CREATE INDEX IF NOT EXISTS replay_views_queued ON replay_views (game_id) WHERE shape IS NULL;
CREATE TRIGGER IF NOT EXISTS replay_views_of_a_group AFTER UPDATE OF status ON league_groups
    WHEN OLD.status = 'open' AND NEW.status != 'open'
    BEGIN
    INSERT OR IGNORE INTO replay_views (game_id) SELECT game_id FROM league_games
        WHERE tournament_id = NEW.tournament_id AND deal_key = NEW.deal_key;
    END;
CREATE TRIGGER IF NOT EXISTS replay_views_gone AFTER DELETE ON games
    BEGIN
    DELETE FROM replay_views WHERE game_id = OLD.id;
    END
"""
_SCHEMA = _SCHEMA.rstrip() + ";\n" + _REPLAY_VIEWS.strip()
#: The games already public in a database of schema 11 or older, queued for the publisher (schema 12).
_REPLAY_VIEWS_BACKFILL = """
INSERT OR IGNORE INTO replay_views (game_id) SELECT x.game_id FROM league_games x JOIN league_groups g
    ON g.tournament_id = x.tournament_id AND g.deal_key = x.deal_key WHERE g.status != 'open'
"""
#: ``analysis_requests``: the post-game analyses authors ask for (``durak serve``'s write) and the daemon carries out
#: (:mod:`referee.league.analyses`): a stored game (``game_id``, a ``games`` row: a league game's or a card table's,
#: ``kind``) judged from one ``seat``'s information with ``playouts`` and ``seed``; ``analysis`` the result (a
#: :class:`~referee.analysis.analyze.GameAnalysis` as JSON), ``cpu_seconds`` what it took (the author's hourly quota).
#: One request per seat of a game. Its end raises the ``analyses`` read mark: a replay kept for anonymous visitors
#: shows the public analyses of its game.
_ANALYSES = """
CREATE TABLE IF NOT EXISTS analysis_requests (
    id INTEGER PRIMARY KEY,
    league_id INTEGER NOT NULL REFERENCES tournaments(id),
    author TEXT NOT NULL,
    kind TEXT NOT NULL,
    game_id INTEGER NOT NULL,
    seat INTEGER NOT NULL,
    playouts INTEGER NOT NULL,
    seed INTEGER NOT NULL,
    created TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'pending',
    result TEXT NOT NULL DEFAULT '',
    analysis TEXT,
    cpu_seconds REAL NOT NULL DEFAULT 0,
    finished TEXT,
    UNIQUE (game_id, seat)
);
CREATE INDEX IF NOT EXISTS analysis_requests_by_author ON analysis_requests (author, created);
CREATE INDEX IF NOT EXISTS analysis_requests_by_status ON analysis_requests (league_id, status, id);
CREATE TRIGGER IF NOT EXISTS read_mark_analysis_requests_update AFTER UPDATE OF status ON analysis_requests
    BEGIN
    INSERT INTO read_marks VALUES ('analyses', 1, (julianday('now') - 2440587.5) * 86400.0)
        ON CONFLICT (name) DO UPDATE SET value = value + 1, changed = excluded.changed;
    END
"""
_SCHEMA = _SCHEMA.rstrip() + ";\n" + _ANALYSES.strip()
#: ``league_bot_meetings`` (schema 13): ``league_meetings`` added up by bot, each version with its bot (a player that
#: is no version of the league counts as a bot of its own), kept by triggers on ``league_meetings`` in the transaction
#: that changes it. A bot's head to head is a row per bot it met, read in its order: summed from its versions' rows,
#: it was a row per version met (626 a bot at 100k games, 2,000 at 1M: every pair of versions has met), a join each
#: and a sum in Python, a third of a bot page's build. Sums of the version pairs, as the page showed them.
_BOT_OF = ("COALESCE((SELECT bot FROM league_versions WHERE tournament_id = {row}.tournament_id AND name = {name}), "
           "{name})")
_BOT_MEETINGS = """
CREATE TABLE IF NOT EXISTS league_bot_meetings (
    tournament_id INTEGER NOT NULL,
    bot TEXT NOT NULL,
    opponent TEXT NOT NULL,
    games INTEGER NOT NULL,
    fool INTEGER NOT NULL,
    opponent_fool INTEGER NOT NULL,
    PRIMARY KEY (tournament_id, bot, opponent)
) WITHOUT ROWID;
CREATE TRIGGER IF NOT EXISTS league_bot_meetings_added AFTER INSERT ON league_meetings
    BEGIN
    INSERT INTO league_bot_meetings VALUES (NEW.tournament_id, {bot_of_new}, {opponent_of_new}, NEW.games, NEW.fool,
        NEW.opponent_fool)
        ON CONFLICT (tournament_id, bot, opponent) DO UPDATE SET games = games + excluded.games,
        fool = fool + excluded.fool, opponent_fool = opponent_fool + excluded.opponent_fool;
    END;
CREATE TRIGGER IF NOT EXISTS league_bot_meetings_moved AFTER UPDATE ON league_meetings
    BEGIN
    UPDATE league_bot_meetings SET games = games + NEW.games - OLD.games, fool = fool + NEW.fool - OLD.fool,
        opponent_fool = opponent_fool + NEW.opponent_fool - OLD.opponent_fool
        WHERE tournament_id = NEW.tournament_id AND bot = {bot_of_new} AND opponent = {opponent_of_new};
    DELETE FROM league_bot_meetings WHERE tournament_id = NEW.tournament_id AND bot = {bot_of_new}
        AND opponent = {opponent_of_new} AND games = 0;
    END;
CREATE TRIGGER IF NOT EXISTS league_bot_meetings_gone AFTER DELETE ON league_meetings
    BEGIN
    UPDATE league_bot_meetings SET games = games - OLD.games, fool = fool - OLD.fool,
        opponent_fool = opponent_fool - OLD.opponent_fool
        WHERE tournament_id = OLD.tournament_id AND bot = {bot_of_old} AND opponent = {opponent_of_old};
    DELETE FROM league_bot_meetings WHERE tournament_id = OLD.tournament_id AND bot = {bot_of_old}
        AND opponent = {opponent_of_old} AND games = 0;
    END
""".format(bot_of_new=_BOT_OF.format(row="NEW", name="NEW.version"),
           opponent_of_new=_BOT_OF.format(row="NEW", name="NEW.opponent"),
           bot_of_old=_BOT_OF.format(row="OLD", name="OLD.version"),
           opponent_of_old=_BOT_OF.format(row="OLD", name="OLD.opponent"))
_SCHEMA = _SCHEMA.rstrip() + ";\n" + _BOT_MEETINGS.strip()
#: ``league_bot_meetings`` filled from ``league_meetings`` (emptied first: a database migrated from schema 8 or older
#: has had it filled by its triggers as ``league_meetings`` was).
_BOT_MEETINGS_BACKFILL = """
DELETE FROM league_bot_meetings;
INSERT INTO league_bot_meetings SELECT m.tournament_id, COALESCE(v.bot, m.version), COALESCE(o.bot, m.opponent),
    SUM(m.games), SUM(m.fool), SUM(m.opponent_fool) FROM league_meetings m
    LEFT JOIN league_versions v ON v.tournament_id = m.tournament_id AND v.name = m.version
    LEFT JOIN league_versions o ON o.tournament_id = m.tournament_id AND o.name = m.opponent
    GROUP BY 1, 2, 3
"""
#: Each version's seats in a league (schema 15), kept by triggers as seats are stored and deleted: a bot's games list
#: counts its versions' rows here, not every seat of them (that range grows with the games: 0.2 ms a version at a
#: million games with its pages cached, 1 ms without, against 26 us at 100k).
_VERSION_SEATS = """
CREATE TABLE IF NOT EXISTS league_version_seats (
    tournament_id INTEGER NOT NULL,
    version TEXT NOT NULL,
    seats INTEGER NOT NULL,
    PRIMARY KEY (tournament_id, version)
) WITHOUT ROWID;
CREATE TRIGGER IF NOT EXISTS league_version_seats_added AFTER INSERT ON league_seats
    BEGIN
    INSERT INTO league_version_seats VALUES (NEW.tournament_id, NEW.version, 1)
        ON CONFLICT (tournament_id, version) DO UPDATE SET seats = seats + 1;
    END;
CREATE TRIGGER IF NOT EXISTS league_version_seats_gone AFTER DELETE ON league_seats
    BEGIN
    UPDATE league_version_seats SET seats = seats - 1 WHERE tournament_id = OLD.tournament_id
        AND version = OLD.version;
    END
"""
_SCHEMA = _SCHEMA.rstrip() + ";\n" + _VERSION_SEATS.strip()
#: ``league_version_seats`` counted from the seats (emptied first: an older database's seats filled at its migration
#: have counted themselves in through the triggers).
_VERSION_SEATS_BACKFILL = """
DELETE FROM league_version_seats;
INSERT INTO league_version_seats SELECT tournament_id, version, COUNT(*) FROM league_seats GROUP BY 1, 2
"""
#: The read side of a database of schema 8 or older filled from its games and seats (the triggers keep it from then
#: on); emptied first, so that it is right whatever an older schema's test left in it.
_READ_SIDE_BACKFILL = """
DELETE FROM league_games;
DELETE FROM league_verdicts;
DELETE FROM league_game_counts;
DELETE FROM league_meetings;
INSERT INTO league_games (game_id, tournament_id, number, deal_key, players, verdicts)
    SELECT g.id, g.tournament_id, g.number, g.deal_key, json_array_length(g.record, '$.players'),
    json_array_length(g.record, '$.verdicts') FROM games g JOIN tournaments t ON t.id = g.tournament_id
    AND t.kind = 'league';
INSERT OR IGNORE INTO league_verdicts SELECT g.tournament_id, json_extract(v.value, '$.kind'), g.number, g.id
    FROM league_games x JOIN games g ON g.id = x.game_id, json_each(g.record, '$.verdicts') v;
INSERT INTO league_game_counts SELECT tournament_id, players, COUNT(*) FROM league_games
    GROUP BY tournament_id, players;
INSERT INTO league_meetings SELECT s.tournament_id, s.version, o.version, COUNT(*), SUM(s.fool), SUM(o.fool)
    FROM league_seats s JOIN league_seats o ON o.game_id = s.game_id AND o.version != s.version
    GROUP BY s.tournament_id, s.version, o.version
"""
#: The seats of the league games a database of schema 4 already holds (the trigger keeps them from then on).
_SEATS_BACKFILL = ("INSERT OR IGNORE INTO league_seats " + _SEATS.format(g="g").replace(
    "FROM json_each(g.record, '$.players') p", "FROM games g JOIN tournaments t ON t.id = g.tournament_id AND "
    "t.kind = 'league', json_each(g.record, '$.players') p"))
#: Each step turns a database of schema N into one of schema N + 1, as that version's code made it.
#: Schema 1 -> 2: bot identity beside the file hash, disqualification reasons, per-move times, the files hash
#: of each game's bots, and the table of superseded games.
#: Schema 2 -> 3: each game's number in its tournament, given when it is stored and never changed (schema 2
#: computed it when read: a game's place among the tournament's games by id, so superseding games renumbered
#: every later one). The games get the numbers schema 2 showed for them, so a number noted before the
#: migration names the same game after it; superseded games, which schema 2 numbered nowhere, follow the
#: tournament's games, in the order they were superseded. (A superseded table's columns keep their order of
#: migration, ``superseded`` before ``number``: the store names the columns it copies.)
#: Schema 3 -> 4: leagues. A tournament row's ``kind`` ("tournament", "league", "finals") and a finals' ``parent``
#: league; the league's versions, deal groups and lifecycle requests have tables of their own (made by the
#: schema), its games are rows of ``games`` like a tournament's.
#: Schema 4 -> 5: the arena (``durak serve``). The league's latest board and its rating history (written by the
#: daemon at each refit, so that a web page never refits), authors (a token's SHA-256, never the token; ``epoch``
#: ends their sessions) and uploads (the archive until the daemon has carried it out, each step's outcome and the
#: build's and gate's output), and each league game's seats (``league_seats``, kept by a trigger on ``games``, its
#: league games' seats filled in at the migration): tables made by the schema.
#: Schema 5 -> 6: unrated side games (an author's challenge of their bot against chosen opponents):
#: ``side_requests`` is their queue (who asked, which versions sit at rotation 0, how many
#: games, what became of it); the daemon plays each one's games into a ``tournaments`` row of kind ``side`` whose
#: ``parent`` is the league, which no rating and no board reads. A table made by the schema.
#: Schema 6 -> 7: the web arena's card tables (:data:`_HUMAN_TABLES`): tables made by the schema.
#: Schema 7 -> 8: the web server's live sessions (:data:`_WEB_SESSIONS`): a table made by the schema. The cookies
#: of schema 7 had no row, so they end at the migration: their authors log in again.
#: Schema 8 -> 9: the web's read side (:data:`_READ_SIDE`): tables, indexes and triggers made by the schema, filled
#: from the games and seats at the migration (:data:`_READ_SIDE_BACKFILL`).
#: Schema 9 -> 10: the marks the web's pages are kept under (:data:`_READ_MARKS`): a table and triggers made by the
#: schema.
#: Schema 10 -> 11: each complete group's summary for the board's fit (:data:`_SUMMARIES`): a table and a trigger made
#: by the schema, left empty by the migration. The daemon fills it at its start, a few thousand groups per
#: transaction (:meth:`~referee.results.league_store.LeagueStore.fill_summaries`), so that no long transaction holds
#: the web's writes; until then a refit summarizes the groups missing from it from their games.
#: Schema 11 -> 12: each public game's replay view as bytes (:data:`_REPLAY_VIEWS`): a table, an index and triggers made
#: by the schema; the games public at the migration are queued (:data:`_REPLAY_VIEWS_BACKFILL`: one integer a game),
#: and the daemon's publisher makes their views, newest first, while the web builds the ones not made yet. And the
#: post-game analyses authors ask for from the web (:data:`_ANALYSES`): a table, its indexes and the trigger of its
#: read mark, made by the schema.
#: Schema 12 -> 13: the head to head by bot (:data:`_BOT_MEETINGS`): a table and triggers made by the schema, filled
#: from ``league_meetings`` (:data:`_BOT_MEETINGS_BACKFILL`).
#: Schema 13 -> 14: the games with verdicts by table size, an index made by the schema: the games list filtered by
#: any verdict and a size counted and paged in that index alone (it looked up each game with a verdict's row for its
#: size: 8.5 ms at a million games, 198 ms with the rows not cached, against 0.34 for the count without a size).
#: Schema 14 -> 15: each version's seats with a verdict, an index made by the schema: a bot page's verdict kinds
#: read those seats alone (they read every seat of the bot's versions for the few with a verdict: 1.2 ms of a bot
#: page's 3 at a million games, 0.14 at 100k); and each version's count of seats (:data:`_VERSION_SEATS`), a table
#: and triggers made by the schema, filled from the seats (:data:`_VERSION_SEATS_BACKFILL`).
_MIGRATIONS = {
    1: """
ALTER TABLE bots ADD COLUMN settings TEXT NOT NULL DEFAULT '';
ALTER TABLE bots ADD COLUMN files TEXT NOT NULL DEFAULT '{}';
ALTER TABLE bots ADD COLUMN reason TEXT NOT NULL DEFAULT '';
ALTER TABLE games ADD COLUMN move_us BLOB;
ALTER TABLE games ADD COLUMN bot_files TEXT NOT NULL DEFAULT '[]';
CREATE TABLE IF NOT EXISTS superseded_games AS SELECT *, '' AS superseded FROM games WHERE 0;
""",
    2: """
ALTER TABLE games ADD COLUMN number INTEGER NOT NULL DEFAULT 0;
ALTER TABLE superseded_games ADD COLUMN number INTEGER NOT NULL DEFAULT 0;
CREATE TEMP TABLE numbered (kind INTEGER NOT NULL, row INTEGER NOT NULL, number INTEGER NOT NULL,
                            PRIMARY KEY (kind, row)) WITHOUT ROWID;
INSERT INTO numbered SELECT 0, id, ROW_NUMBER() OVER (PARTITION BY tournament_id ORDER BY id) FROM games;
INSERT INTO numbered SELECT 1, s.rowid, COALESCE(live.games, 0) + ROW_NUMBER() OVER (PARTITION BY s.tournament_id
                                                                                     ORDER BY s.rowid)
    FROM superseded_games s LEFT JOIN (SELECT tournament_id, COUNT(*) AS games FROM games GROUP BY tournament_id)
    AS live ON live.tournament_id = s.tournament_id;
UPDATE games SET number = (SELECT number FROM numbered WHERE kind = 0 AND row = games.id);
UPDATE superseded_games SET number = (SELECT number FROM numbered WHERE kind = 1 AND row = superseded_games.rowid);
DROP TABLE temp.numbered;
""",
    3: """
ALTER TABLE tournaments ADD COLUMN kind TEXT NOT NULL DEFAULT 'tournament';
ALTER TABLE tournaments ADD COLUMN parent INTEGER;
""",
    4: "",
    5: "",
    6: "",
    7: "",
    8: "",
    9: "",
    10: "",
    11: "",
    12: "",
    13: "",
    14: "",
}


#: The files of a database: SQLite's journals are named after it.
DATABASE_SUFFIXES = ("", "-wal", "-shm", "-journal")


def make_private(path: str | Path) -> None:
    """Clear the other permission bits of a database and its journals, where they are ours, and the group bits
    too unless the file was given to a group on purpose (a group other than its owner's own: ``durak serve``
    shares a league's database with its web server's group that way).

    The folder may be writable by another user (the web server's), who could plant a link named like a journal:
    each name is looked at without following it, and changed only if it is a regular file of ours. Between the
    look and the change no one else can swap it for a link: the shared folder is sticky, so a file of ours there
    can be neither renamed nor removed by another user. (The file is never opened for this: closing a descriptor
    of a database drops every POSIX lock SQLite holds on it in this process.)

    :raises OSError: one of them is a link or no regular file (ELOOP, one line naming it).
    """
    for name, info in database_files(path):
        keep = 0o770 if is_shared_with_group(info) else 0o700
        if info.st_uid == os.geteuid() and info.st_mode & 0o777 & ~keep:
            os.chmod(name, stat.S_IMODE(info.st_mode) & keep)


def refuse_links(path: str | Path) -> None:
    """Check a database and its journals before SQLite opens them (it follows links): none may be a link or
    anything but a regular file. :raises OSError: one is (ELOOP, one line naming it)."""
    database_files(path)


def database_files(path: str | Path) -> list[tuple[str, os.stat_result]]:
    """The database and those of its journals that exist, each as ``lstat`` sees it (a link is not followed).

    :raises OSError: one is a link or no regular file (ELOOP, one line naming it).
    """
    found = []
    for suffix in DATABASE_SUFFIXES:
        name = f"{path}{suffix}"
        try:
            info = os.lstat(name)
        except FileNotFoundError:
            continue
        if not stat.S_ISREG(info.st_mode):
            raise _not_followed(name)
        found.append((name, info))
    return found


def _not_followed(name: str) -> OSError:
    return OSError(errno.ELOOP, f"{name} is a link or no regular file, which is never followed (another user may "
                                "have planted it in the database's folder): remove it")


def is_shared_with_group(info: os.stat_result) -> bool:
    """Whether a file's group is another than its owner's primary group (given to that group on purpose)."""
    try:
        return pwd.getpwuid(info.st_uid).pw_gid != info.st_gid
    except KeyError:  # an owner with no name: nothing to compare with, so nothing is shared
        return False


def is_database(path: str | Path) -> bool:
    """True if ``path`` is an SQLite file (by its magic header)."""
    try:
        with open(path, "rb") as file:
            return file.read(16) == b"SQLite format 3\x00"
    except OSError:
        return False


def open_writer(path: Path) -> sqlite3.Connection:
    """The writer's connection: the file made owner-only (or tightened), WAL mode, the schema created or an
    older one migrated. Rows read by name.

    :raises sqlite3.Error, OSError: the database cannot be made, opened or migrated.
    """
    refuse_links(path)
    if not os.path.lexists(path):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600))
    make_private(path)
    db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    db.row_factory = sqlite3.Row
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.execute("PRAGMA busy_timeout=5000")
    _prepare_schema(db)
    return db


def open_reader(path: Path) -> sqlite3.Connection:
    """A read-only connection (rows read by name), the file tightened to owner-only where it is ours."""
    refuse_links(path)
    with contextlib.suppress(OSError):  # read-only files or folders stay as they are
        make_private(path)
    db = _open_read_only(path)
    db.row_factory = sqlite3.Row
    return db


def schema_version(db: sqlite3.Connection) -> int:
    """The database's schema version; 0 for an empty database, never written."""
    try:
        row = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    except sqlite3.OperationalError:
        return 0  # no meta table
    return int(row[0]) if row else 0


#: What a database older than a schema is filled with once that schema's tables are made, in this order: the schema
#: that brought the table, and the script that fills it from what the database holds.
_BACKFILLS = ((5, _SEATS_BACKFILL), (9, _READ_SIDE_BACKFILL), (12, _REPLAY_VIEWS_BACKFILL),
              (13, _BOT_MEETINGS_BACKFILL), (15, _VERSION_SEATS_BACKFILL))


def _prepare_schema(db: sqlite3.Connection) -> None:
    """Create the tables of a new database, or migrate an older schema (all in one transaction); a newer
    schema is left as it is, for the caller to refuse."""
    version = schema_version(db)
    if version > SCHEMA_VERSION:
        return
    db.execute("BEGIN IMMEDIATE")
    try:
        for step in range(version, SCHEMA_VERSION) if version else ():
            for statement in _statements(_MIGRATIONS[step]):
                db.execute(statement)
        for statement in _statements(_SCHEMA):
            db.execute(statement)
        for schema, backfill in _BACKFILLS if version else ():
            if version < schema:
                for statement in _statements(backfill):
                    db.execute(statement)
        db.execute("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise


def _statements(script: str) -> list[str]:
    """A script's statements, each whole: a trigger's body (statements ending in ``;`` and a newline) stays one."""
    statements, pending = [], ""
    for piece in script.strip().split(";\n"):
        pending += piece + ";\n"
        if sqlite3.complete_statement(pending):
            statements.append(pending.strip().rstrip(";"))
            pending = ""
    if pending.strip().rstrip(";").strip():
        statements.append(pending.strip().rstrip(";"))
    return [statement for statement in statements if statement]


def _open_read_only(path: Path) -> sqlite3.Connection:
    """A read-only connection; where SQLite cannot make the WAL index beside a database it may only read (a
    read-only folder), the file is read as immutable, which is right: nothing can be writing it then."""
    uri = path.resolve().as_uri()
    db = sqlite3.connect(f"{uri}?mode=ro", uri=True, isolation_level=None, check_same_thread=False)
    try:
        db.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
        return db
    except sqlite3.OperationalError:
        db.close()
        return sqlite3.connect(f"{uri}?mode=ro&immutable=1", uri=True, isolation_level=None,
                               check_same_thread=False)


#: What the web server's connection may write (:func:`open_shared`), table by table: the requests it takes (the
#: daemon's queue, uploads, challenges, analyses), the sessions it keeps, the card tables people open, move at and
#: resign, and its own key. Everything else is the daemon's to write (games, groups, the board, versions, an upload's
#: steps, a table's end), and a statement of the web's that tried would be refused by SQLite ("not authorized"),
#: whatever Python code ran it: the web's store class has none of the daemon's writes (``WebStore`` takes the reads
#: and the requests' classes only), and its connection could not make them either.
WEB_WRITES: dict[str, frozenset[int]] = {
    "league_requests": frozenset({sqlite3.SQLITE_INSERT}),
    "arena_uploads": frozenset({sqlite3.SQLITE_INSERT, sqlite3.SQLITE_UPDATE}),
    "side_requests": frozenset({sqlite3.SQLITE_INSERT}),
    "analysis_requests": frozenset({sqlite3.SQLITE_INSERT}),
    "web_sessions": frozenset({sqlite3.SQLITE_INSERT, sqlite3.SQLITE_DELETE}),
    "human_tables": frozenset({sqlite3.SQLITE_INSERT, sqlite3.SQLITE_UPDATE}),
    "human_moves": frozenset({sqlite3.SQLITE_INSERT}),
    "meta": frozenset({sqlite3.SQLITE_INSERT}),  # the web key, made once if missing
}
_WRITES = frozenset({sqlite3.SQLITE_INSERT, sqlite3.SQLITE_UPDATE, sqlite3.SQLITE_DELETE})
#: Statements that change the schema or reach another database: never the web's.
_SCHEMA_CHANGES = frozenset(getattr(sqlite3, name) for name in dir(sqlite3)
                            if name.startswith(("SQLITE_CREATE_", "SQLITE_DROP_"))) | {
    sqlite3.SQLITE_ALTER_TABLE, sqlite3.SQLITE_ATTACH, sqlite3.SQLITE_DETACH}


def web_writes_only(action: int, table: str | None, _column: str | None, _database: str | None,
                    trigger: str | None) -> int:
    """The web connection's authorizer (:data:`WEB_WRITES`). A write made by a trigger is the database's own
    consequence of a write already allowed (a read mark raised), and is let through."""
    if action in _WRITES:
        return sqlite3.SQLITE_OK if trigger is not None or action in WEB_WRITES.get(table or "", ()) \
            else sqlite3.SQLITE_DENY
    return sqlite3.SQLITE_DENY if action in _SCHEMA_CHANGES else sqlite3.SQLITE_OK


def open_shared(path: Path) -> sqlite3.Connection:
    """The web server's connection to a league's database: read-write (it writes requests and uploads; only
    :data:`WEB_WRITES`, the rest refused by SQLite), never created (a missing file is an error, not a new empty
    database), never migrated (the daemon, the owner, migrates) and never ``immutable`` (the daemon writes it all the
    time: an immutable reader would miss that).

    :raises sqlite3.Error: the file cannot be opened read-write.
    """
    refuse_links(path)
    db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=rw", uri=True, isolation_level=None,
                         check_same_thread=False)
    db.row_factory = sqlite3.Row
    db.execute("PRAGMA busy_timeout=5000")
    db.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()  # not a database: fails here, not later
    db.set_authorizer(web_writes_only)
    return db
