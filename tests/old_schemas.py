"""Databases as older schemas left them, for the migration tests: what each schema added, dropped again."""

from __future__ import annotations

import sqlite3

#: Schema 5's objects (the arena's tables, the seats' index and the triggers that keep it).
SCHEMA_5_TRIGGERS = ("league_seats_of_a_game", "league_seats_gone")
SCHEMA_5_TABLES = ("league_board", "league_rating_history", "arena_authors", "arena_uploads", "league_seats")


def drop_schema_5(con: sqlite3.Connection) -> None:
    """Back to schema 4: the triggers first (they name columns an older schema lacks), then the tables."""
    drop_schema_9(con)
    for trigger in SCHEMA_5_TRIGGERS:
        con.execute(f"DROP TRIGGER {trigger}")
    for table in SCHEMA_5_TABLES:
        con.execute(f"DROP TABLE {table}")


#: Schema 6's objects (the queue of unrated side games).
SCHEMA_6_TABLES = ("side_requests",)


def drop_schema_6(con: sqlite3.Connection) -> None:
    """Back to schema 5: the side games' queue dropped, its indexes with it (its rows of kind ``side`` are schema
    6's too)."""
    for table in SCHEMA_6_TABLES:
        con.execute(f"DROP TABLE {table}")
    con.execute("DELETE FROM games WHERE tournament_id IN (SELECT id FROM tournaments WHERE kind = 'side')")
    con.execute("DELETE FROM tournaments WHERE kind = 'side'")


#: Schema 7's objects (the card tables: a person's seat relayed through the database).
SCHEMA_7_TABLES = ("human_moves", "human_messages", "human_tables")


def drop_schema_7(con: sqlite3.Connection) -> None:
    """Back to schema 6: the card tables dropped (their games' row, of kind ``tables``, is schema 7's too)."""
    for table in SCHEMA_7_TABLES:
        con.execute(f"DROP TABLE {table}")
    con.execute("DELETE FROM games WHERE tournament_id IN (SELECT id FROM tournaments WHERE kind = 'tables')")
    con.execute("DELETE FROM tournaments WHERE kind = 'tables'")


#: Schema 8's objects (the web server's live sessions).
SCHEMA_8_TABLES = ("web_sessions",)


def drop_schema_8(con: sqlite3.Connection) -> None:
    """Back to schema 7: the live sessions dropped (its index with it)."""
    drop_schema_9(con)
    for table in SCHEMA_8_TABLES:
        con.execute(f"DROP TABLE {table}")


#: Schema 9's objects (the web's read side, kept by triggers; the groups' index by status).
SCHEMA_9_TRIGGERS = ("league_games_of_a_game", "league_games_gone", "league_meetings_of_a_seat", "league_meetings_gone")
SCHEMA_9_TABLES = ("league_games", "league_verdicts", "league_game_counts", "league_meetings")


def drop_schema_9(con: sqlite3.Connection) -> None:
    """Back to schema 8 (if not there already): the triggers first, the tables, the groups' index."""
    drop_schema_12(con)  # its trigger reads schema 9's games
    for trigger in SCHEMA_9_TRIGGERS:
        con.execute(f"DROP TRIGGER IF EXISTS {trigger}")
    for table in SCHEMA_9_TABLES:
        con.execute(f"DROP TABLE IF EXISTS {table}")
    con.execute("DROP INDEX IF EXISTS league_groups_by_status")


#: Schema 12's objects: each public game's replay view (made by the daemon's publisher) and the queue of post-game
#: analyses (its indexes and its read mark's trigger go with the table).
SCHEMA_12_TRIGGERS = ("replay_views_of_a_group", "replay_views_gone")
SCHEMA_12_TABLES = ("replay_views", "analysis_requests")


def drop_schema_12(con: sqlite3.Connection) -> None:
    """Back to schema 11 (if not there already): the triggers, then the tables."""
    drop_schema_13(con)
    for trigger in SCHEMA_12_TRIGGERS:
        con.execute(f"DROP TRIGGER IF EXISTS {trigger}")
    for table in SCHEMA_12_TABLES:
        con.execute(f"DROP TABLE IF EXISTS {table}")
    con.execute("DELETE FROM meta WHERE key = 'replay_views_shape'")


#: Schema 13's objects: the head to head by bot, kept by triggers on schema 9's ``league_meetings``.
SCHEMA_13_TRIGGERS = ("league_bot_meetings_added", "league_bot_meetings_moved", "league_bot_meetings_gone")
SCHEMA_13_TABLES = ("league_bot_meetings",)


def drop_schema_13(con: sqlite3.Connection) -> None:
    """Back to schema 12 (if not there already): the triggers, then the table."""
    drop_schema_14(con)
    for trigger in SCHEMA_13_TRIGGERS:
        con.execute(f"DROP TRIGGER IF EXISTS {trigger}")
    for table in SCHEMA_13_TABLES:
        con.execute(f"DROP TABLE IF EXISTS {table}")


#: Schema 14's objects: an index of schema 9's ``league_games``.
SCHEMA_14_INDEXES = ("league_games_with_verdicts_by_size",)


def drop_schema_14(con: sqlite3.Connection) -> None:
    """Back to schema 13 (if not there already): the index."""
    drop_schema_15(con)
    for index in SCHEMA_14_INDEXES:
        con.execute(f"DROP INDEX IF EXISTS {index}")


#: Schema 15's objects: an index of ``league_seats``, and each version's count of seats kept by triggers on them.
SCHEMA_15_INDEXES = ("league_seats_with_verdicts",)
SCHEMA_15_TRIGGERS = ("league_version_seats_added", "league_version_seats_gone")
SCHEMA_15_TABLES = ("league_version_seats",)


def drop_schema_15(con: sqlite3.Connection) -> None:
    """Back to schema 14 (if not there already): the index, the triggers, then the table."""
    for index in SCHEMA_15_INDEXES:
        con.execute(f"DROP INDEX IF EXISTS {index}")
    for trigger in SCHEMA_15_TRIGGERS:
        con.execute(f"DROP TRIGGER IF EXISTS {trigger}")
    for table in SCHEMA_15_TABLES:
        con.execute(f"DROP TABLE IF EXISTS {table}")
