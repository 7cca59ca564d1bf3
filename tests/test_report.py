"""The report's data and files without a browser: replays through the engine, the seat view's redaction,
safe embedding, the games a live report may show, the bytes per game, the commands and their errors.
"""

from __future__ import annotations

import base64
import json
import re
import shutil
import sqlite3
import stat
import sys
import tempfile
import time
import zlib
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import msgspec
import pytest
from clirun import run
from hypothesis import given
from hypothesis import strategies as st

from protocol.cards import CARD_NAMES
from protocol.events import ActionTaken, CardsDrawn
from protocol.rules import Rules
from referee import __version__
from referee.engine import SeededRng, new_game
from referee.report.game_data import game_data, view_title
from referee.report.page import script_json
from referee.report.steps import replay_steps
from referee.report.tournament_page import GAME_BYTES_CAP, LiveReport, PageOptions, ReportWriter
from referee.results.record import GameRecord
from referee.results.replay import ReplayError, parse_replay, replay_lines, tell
from referee.results.store import Store

SAMPLES = Path(__file__).resolve().parent.parent / "sample_bots" / "python"
CARD = re.compile(r"\b[6-9TJQKA2-5][CDHS]\b")
VARIANTS = ("podkidnoy", "perevodnoy", "chase", "fools_fool")


def random_game(variant: str, players: int, seed: int, *, forfeit_at: int | None = None,
                deck: int = 36) -> GameRecord:
    """A game of random legal actions, as a record (what ``durak play`` stores), optionally forfeited."""
    rules = Rules(variant=variant, deck=deck)
    rng = SeededRng(seed)
    game = new_game(rules, players, rng)
    actions = 0
    while game.result is None:
        if forfeit_at is not None and actions == forfeit_at:
            game.forfeit(game.to_move or 0, "illegal", "illegal action '<b>x</b>'")
            break
        legal = game.legal_actions()
        game.apply(legal[rng.randbelow(len(legal))])
        actions += 1
    assert game.result is not None
    return GameRecord(game=f"g{seed}", deal=f"{seed}:0", names=[f"p{s}" for s in range(players)], rules=rules,
                      dealer=game.dealer, deck=[CARD_NAMES[c] for c in game.deck], result=game.result,
                      actions=game.actions, verdicts=[], times=[None] * players, events=list(game.events))


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("players", [2, 3, 4])
def test_a_seat_view_holds_only_cards_that_seat_was_told(variant: str, players: int) -> None:
    for seed in range(3):
        data = replay_lines(random_game(variant, players, seed))
        header, _, _ = parse_replay(data)
        for seat in range(players):
            seen = set(CARD.findall("\n".join(tell(data, seat))))
            shown = set(CARD.findall(msgspec.json.encode(game_data(data, seat=seat)).decode()))
            assert shown <= seen, (variant, players, seed, seat, shown - seen)
        everything = set(CARD.findall(msgspec.json.encode(game_data(data)).decode()))
        assert everything == set(header.deck)  # all-seeing: every card is somewhere


@pytest.mark.parametrize(("variant", "players", "deck"), [*((v, 3, 36) for v in VARIANTS), ("perevodnoy", 6, 52)])
def test_the_steps_follow_the_game_to_its_result(variant: str, players: int, deck: int) -> None:
    record = random_game(variant, players, 11, deck=deck)
    header, events, end = parse_replay(replay_lines(record))
    steps = replay_steps(header, events, end).steps
    assert [e for s in steps for e in s.events] == events
    first = next(i for i, s in enumerate(steps) if s.events and isinstance(s.events[0], ActionTaken))
    assert first == (1 if variant != "fools_fool" else len([s for s in steps if "lp" in s.frame]) + 1)
    assert all(isinstance(s.events[0], ActionTaken) for s in steps[first:] if s.events)
    last = steps[-1].frame
    assert last["m"] is None
    for seat in (seat for group in last["o"] for seat in group):
        assert last["n"][seat] == 0 and last["h"][seat] == ""
    for step in steps:  # every card is in a hand, the stock, the discard, on the table or in the pile
        f = step.frame
        if "lp" not in f:
            table = sum(1 for pair in f.get("t", []) for card in pair if card)
            assert sum(f["n"]) + f["s"] + f["x"] + table + len(f.get("p", [])) == deck


def test_fools_fool_shows_its_ladder_card_by_card() -> None:
    record = random_game("fools_fool", 3, 5)
    header, events, end = parse_replay(replay_lines(record))
    steps = replay_steps(header, events, end).steps
    ladder = [s.frame for s in steps if "lp" in s.frame]
    assert [f["s"] for f in ladder] == list(range(33, 33 - len(ladder), -1))
    assert ladder[-1]["s"] == 0
    hands = steps[len(ladder)].frame["n"]
    assert [len(p.split()) + k for p, k in zip(ladder[-1]["lp"], ladder[-1]["ln"], strict=True)] == hands


def test_a_forfeit_ends_on_a_step_of_its_own_and_the_reason_is_the_offenders_alone() -> None:
    record = random_game("podkidnoy", 3, 2, forfeit_at=9)
    data = replay_lines(record)
    everyone = game_data(data)
    assert everyone["result"]["end"] == "forfeit" and everyone["steps"][-1]["f"]["m"] is None
    offender = record.result.forfeit_seat
    assert offender is not None
    assert game_data(data, seat=offender)["result"]["reason"] == "illegal action '<b>x</b>'"
    other = (offender + 1) % 3
    assert game_data(data, seat=other)["result"]["reason"] is None


def test_a_replay_that_breaks_the_rules_is_refused() -> None:
    record = random_game("podkidnoy", 2, 4)
    events = list(record.events)
    draw = next(i for i, e in enumerate(events) if isinstance(e, CardsDrawn) and e.cards)
    cards = events[draw].cards
    assert cards is not None
    events[draw] = msgspec.structs.replace(events[draw], cards=list(reversed(cards)) if len(cards) > 1 else ["AS"])
    header, _, end = parse_replay(replay_lines(record))
    with pytest.raises(ReplayError, match="does not follow the rules at event"):
        replay_steps(header, events, end)
    act = next(i for i, e in enumerate(record.events) if isinstance(e, ActionTaken) and e.action != "pass")
    events = list(record.events)
    events[act] = msgspec.structs.replace(events[act], action="take" if events[act].action != "take" else "pass")
    with pytest.raises(ReplayError):
        replay_steps(header, events, end)


def test_embedded_json_cannot_end_its_script_element() -> None:
    value = {"name": "</script><script>alert(1)</script>", "more": "<!-- & \u2028\u2029 -->"}
    text = script_json(value)
    assert "<" not in text and ">" not in text and "&" not in text
    assert "\u2028" not in text and "\u2029" not in text
    assert json.loads(text) == value


#: Text with the characters that could end a script element, and any other (no lone surrogate: not encodable).
_SCRIPT_TEXT = st.text(alphabet=st.sampled_from("<>&/\u2028\u2029\"\\ a!-") | st.characters(exclude_categories=("Cs",)),
                       max_size=40)


@given(st.lists(_SCRIPT_TEXT, max_size=5))
def test_embedded_json_of_any_text_holds_no_character_that_could_end_its_script(value: list[str]) -> None:
    text = script_json(value)
    assert not set(text) & {"<", ">", "&", "\u2028", "\u2029"}
    assert json.loads(text) == value


_TITLED = st.sampled_from(['"', "\\", '\\"', "a", "é", "\n"]) | _SCRIPT_TEXT


@given(st.lists(_TITLED, max_size=6).map("".join) | st.text(min_size=4000, max_size=5000),
       st.one_of(st.none(), st.integers(-(2**63), 2**63 - 1)), st.booleans())
def test_a_views_title_read_from_its_head_is_the_title_its_json_holds(title: str, number: int | None,
                                                                      shaped: bool) -> None:
    """The page's title is read from a view's head, not its whole JSON: for any title (quotes, backslashes before
    them), the same as the JSON decoded; and a view of another shape (keys in another order) decoded whole."""
    view = {"v": 3, "id": number, "title": title, "game": 'g","title":"not it'} if shaped else \
        {"game": '","title":"not it', "title": title}
    encoded = msgspec.json.encode(view)
    assert view_title(encoded) == view_title(msgspec.Raw(encoded)) == title  # as kept, and as a page holds it


# ------------------------------------------------------------------ over a real tournament


@pytest.fixture(scope="module")
def tournament() -> Iterator[Path]:
    """A 3-player round robin of the sample bots (4 deals, 3 rotations each: 12 games)."""
    folder = Path(tempfile.mkdtemp(prefix="durak-test-report-"))
    folder.chmod(0o755)
    shutil.copytree(SAMPLES, folder / "samples")
    config = folder / "t.toml"
    config.write_text('name = "three"\nplayers = 3\ndeals = 4\nsandbox = "process"\n'
                      '[[bots]]\nname = "r1"\ncommand = "{python} random_bot.py 1"\ndir = "samples"\n'
                      '[[bots]]\nname = "r2"\ncommand = "{python} random_bot.py 2"\ndir = "samples"\n'
                      '[[bots]]\nname = "h"\ncommand = "{python} heuristic_bot.py"\ndir = "samples"\n')
    run("tournament", str(config), "--db", str(folder / "t.db"), "--jobs", "1")
    yield folder
    shutil.rmtree(folder)


def embedded(page: Path, element: str) -> Any:
    found = re.search(f'<script type="application/json" id="{element}">(.*?)</script>', page.read_text(), re.S)
    assert found is not None
    return json.loads(found.group(1))


def test_the_report_header_holds_no_seed_and_the_page_is_private(tournament: Path) -> None:
    out = tournament / "r.html"
    told = run("report", str(tournament / "t.db"), "-o", str(out))
    assert told.startswith(f"wrote {out}: 12 games, ")
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    with Store(tournament / "t.db", create=False) as store:
        active = store.active_tournament()
    assert active is not None
    assert str(active.seed) not in out.read_text()
    data = embedded(out, "report-data")
    header = data["header"]
    assert header["name"] == "three" and header["players"] == 3 and header["games"] == header["shown"] == 12
    assert {b["name"] for b in header["bots"]} == {"r1", "r2", "h"} and all(len(b["sha256"]) == 64
                                                                            for b in header["bots"])
    with Store(tournament / "t.db", create=False) as store:
        bots = store.bots(active.id)
    for shown in header["bots"]:  # each bot's identity as issue 11 stores it: the digest and every file's hash
        assert shown["sha256"] == bots[shown["name"]].sha256 and shown["files"] == bots[shown["name"]].files
        assert "random_bot.py" in shown["files"] and "command" not in shown
    assert header["variant"] == "podkidnoy" and header["rules"]["variant"] == "podkidnoy"
    assert header["time"] == {"move": 1.0, "grace": 0.05, "startup": 10.0, "bank": None}
    assert header["referee"] == __version__ and header["id"] == active.id
    assert len(data["games"]["rows"]) == 12 and data["history"]["games"][-1] == 12


def test_the_leaderboard_head_to_head_and_stats_are_the_leaderboard_commands_json(tournament: Path) -> None:
    db = str(tournament / "t.db")
    for mode in ("fool", "order"):
        out = tournament / f"lb-{mode}.html"
        run("report", db, "-o", str(out), "--mode", mode)
        document = json.loads(run("leaderboard", db, "--format", "json", "--h2h", "--stats", "--mode", mode))
        data = embedded(out, "report-data")
        assert data["leaderboard"] == document and document["meta"]["mode"] == mode
        assert "h2h" not in data  # one copy: the leaderboard document's
        assert len(document["h2h"]) == 6 and {s["bot"] for s in document["stats"]} == {"r1", "r2", "h"}
        assert run("leaderboard", db, "--mode", mode).endswith("\n" + data["footer"] + "\n")  # the command's footer
    assert [label for label, _ in data["legend"]][:3] == ["Rank", "Bot", "Elo"]
    assert "usage" in run("report", db, "--mode", "bogus", code=2).lower()


def test_a_chosen_tournament_is_reported_alone_with_its_disqualifications(tournament: Path) -> None:
    """--tournament ID as every reader takes it: one tournament's games, variant and fit, never mixed."""
    db = tournament / "two.db"
    shutil.copy(tournament / "t.db", db)
    config = tournament / "chase.toml"
    config.write_text('name = "chase pair"\nvariant = "chase"\ndeals = 1\nsandbox = "process"\n'
                      '[[bots]]\nname = "r1"\ncommand = "{python} random_bot.py 1"\ndir = "samples"\n'
                      '[[bots]]\nname = "h"\ncommand = "{python} heuristic_bot.py"\ndir = "samples"\n')
    run("tournament", str(config), "--db", str(db), "--fresh", "--jobs", "1")
    with Store(db) as store:
        store.disqualify(1, "r2", "crashed <b>5</b> games in a row")
    for tid, name, variant, games in (("1", "three", "podkidnoy", 12), ("2", "chase pair", "chase", 2)):
        out = tournament / f"two-{tid}.html"
        assert run("report", str(db), "--tournament", tid, "-o", str(out)).startswith(f"wrote {out}: {games} games")
        data = embedded(out, "report-data")
        header = data["header"]
        assert (header["id"], header["name"], header["variant"], header["games"]) == (int(tid), name, variant, games)
        assert data["leaderboard"] == json.loads(run("leaderboard", str(db), "-t", tid, "--format", "json", "--h2h",
                                                     "--stats"))
        assert {b["name"] for b in header["bots"]} == {r["bot"] for r in data["leaderboard"]["rows"]}
        assert data["leaderboard"]["meta"]["games"] == games
    assert data["leaderboard"]["disqualified"] == {}
    one = embedded(tournament / "two-1.html", "report-data")
    assert one["leaderboard"]["disqualified"] == {"r2": "crashed <b>5</b> games in a row"}
    assert "disqualified: r2: crashed <b>5</b> games in a row" in one["footer"].splitlines()
    assert {s["bot"]: s["disqualified"] for s in one["leaderboard"]["stats"]}["r2"] == "crashed <b>5</b> games in a row"
    for tid in ("1", "2"):  # each page lists its own tournament's games only
        lines = run("games", str(db), "-t", tid, "--format", "json").splitlines()
        listed = [json.loads(line)["game"] for line in lines]
        assert [r[1] for r in embedded(tournament / f"two-{tid}.html", "report-data")["games"]["rows"]] == listed


def test_the_games_list_is_durak_games_with_its_numbers(tournament: Path) -> None:
    db = str(tournament / "t.db")
    out = tournament / "numbers.html"
    run("report", db, "-o", str(out))
    data = embedded(out, "report-data")
    listed = [json.loads(line) for line in run("games", db, "--format", "json").splitlines()]
    bots = data["games"]["bots"]
    assert [[r[0], r[1], [bots[b] for b in r[2]], [bots[f] for f in r[3]], r[4]] for r in data["games"]["rows"]] \
        == [[g["number"], g["game"], g["players"], g["fools"], g["end"]] for g in listed]
    chunk = json.loads(zlib.decompress(base64.b64decode(embedded(out, "chunk-0"))))
    for number in ("1", "7", "12"):  # the viewer's game N is `durak replay DB N`
        assert chunk[number]["id"] == int(number)
        assert chunk[number]["game"] == listed[int(number) - 1]["game"]
        assert run("replay", db, number).startswith(f"game {chunk[number]['game']} ")


def test_superseded_games_take_their_numbers_with_them_as_in_durak_games(tournament: Path) -> None:
    db = tournament / "superseded.db"
    shutil.copy(tournament / "t.db", db)
    with closing(sqlite3.connect(db)) as con:
        deal, = con.execute("SELECT deal_key FROM games ORDER BY id LIMIT 1").fetchone()
        numbers = [n for n, in con.execute("SELECT number FROM games ORDER BY id")]
        gone = {n for n, in con.execute("SELECT number FROM games WHERE deal_key = ?", (deal,))}
        con.execute("DELETE FROM games WHERE deal_key = ?", (deal,))  # as `--changed-bots replay` moves them
        con.commit()
    out = tournament / "superseded.html"
    ReportWriter(db, out, inline_games=5).write()
    data = embedded(out, "report-data")
    listed = [json.loads(line) for line in run("games", str(db), "--format", "json").splitlines()]
    assert [r[:2] for r in data["games"]["rows"]] == [[g["number"], g["game"]] for g in listed]
    assert numbers == list(range(1, 13)) and len(gone) == 3
    assert [r[0] for r in data["games"]["rows"]] == [n for n in numbers if n not in gone]  # the others keep theirs


def test_every_step_carries_its_decisions_stored_time(tournament: Path) -> None:
    """Seat w's i-th decision took move_us[w][i]: the i-th step w chose in shows it."""
    out = tournament / "times.html"
    ReportWriter(tournament / "t.db", out).write()
    games = json.loads(zlib.decompress(base64.b64decode(embedded(out, "chunk-0"))))
    with Store(tournament / "t.db", create=False) as store:
        stored = {row.number: row for row in store.games()}
    for number, game in games.items():
        move_us = stored[int(number)].move_us
        assert move_us is not None
        for seat in range(len(game["names"])):
            shown = [step["u"] for step in game["steps"] if step.get("w") == seat]
            assert shown and shown == move_us[seat][:len(shown)]
            assert len(move_us[seat]) - len(shown) in ((0, 1) if game["result"]["forfeit_seat"] == seat else (0,))
        assert all("u" not in step for step in game["steps"] if "w" not in step)


def test_the_move_time_distribution_counts_every_stored_decision(tournament: Path) -> None:
    out = tournament / "hist.html"
    ReportWriter(tournament / "t.db", out).write()
    data = embedded(out, "report-data")
    hist = data["move_times"]
    moves = {row["bot"]: row["moves"] for row in data["leaderboard"]["stats"]}
    assert {bot: sum(counts) for bot, counts in hist["bots"].items()} == moves and all(moves.values())
    edges = hist["edges_ms"]
    assert edges == sorted(edges) and all(len(counts) == len(edges) - 1 for counts in hist["bots"].values())
    with Store(tournament / "t.db", create=False) as store:
        times = [us / 1000 for row in store.games() for seat in row.move_us or [] for us in seat]
    assert edges[0] <= min(times) and max(times) <= edges[-1]
    assert edges[1] > min(times) and edges[-2] < max(times)  # no empty bin at either end of the scale


def test_a_deal_is_shown_only_once_all_its_rotations_are_stored(tournament: Path) -> None:
    db = tournament / "partial.db"
    shutil.copy(tournament / "t.db", db)
    with closing(sqlite3.connect(db)) as con:
        deal, = con.execute("SELECT deal_key FROM games ORDER BY id LIMIT 1").fetchone()
        con.execute("DELETE FROM games WHERE id = (SELECT MAX(id) FROM games WHERE deal_key = ?)", (deal,))
        con.commit()
        left = [gid for gid, in con.execute("SELECT id FROM games WHERE deal_key = ?", (deal,))]
    assert len(left) == 2
    out = tournament / "partial.html"
    ReportWriter(db, out).write()
    data = embedded(out, "report-data")
    assert data["header"]["games"] == 11 and data["header"]["shown"] == 9
    listed = {row[0] for row in data["games"]["rows"]}
    assert not listed & set(left)
    chunk = json.loads(zlib.decompress(base64.b64decode(embedded(out, "chunk-0"))))
    assert len(chunk) == 9 and not {int(k) for k in chunk} & set(left)


def test_the_bytes_per_game_stay_under_the_cap(tournament: Path) -> None:
    small, files = tournament / "small.html", tournament / "chunked.html"
    inline = ReportWriter(tournament / "t.db", small).write()
    chunked = ReportWriter(tournament / "t.db", files, inline_games=5, jobs=2).write()
    assert inline.game_bytes == chunked.game_bytes and inline.games == 12
    assert inline.game_bytes / inline.games <= GAME_BYTES_CAP
    rows = embedded(small, "report-data")["games"]["rows"]
    assert len(script_json(rows)) / len(rows) <= 120  # the games list: a row of bot indexes per game
    # beyond the inline limit the games leave the page for chunk files beside it
    assert chunked.page_bytes < inline.page_bytes - inline.game_bytes * 0.9
    chunk = (tournament / "chunked.html.files" / "chunk-0.js").read_text()
    assert chunk.startswith('durakChunk(0,"') and chunk.endswith('");\n')
    assert stat.S_IMODE((tournament / "chunked.html.files").stat().st_mode) == 0o700
    games = json.loads(zlib.decompress(base64.b64decode(json.loads(chunk[len("durakChunk(0,"):-3]))))
    assert len(games) == 12 and all(game["stderr"] == [[], [], []] for game in games.values())


def test_a_live_report_is_rewritten_while_the_tournament_runs_and_settles_at_the_end(tournament: Path) -> None:
    out = tournament / "live.html"
    with LiveReport(tournament / "t.db", out, interval=0.05):
        deadline = time.monotonic() + 20
        while not out.exists():
            assert time.monotonic() < deadline
            time.sleep(0.02)
        assert embedded(out, "report-data")["live"] == 1
        assert stat.S_IMODE(out.stat().st_mode) == 0o600
    assert embedded(out, "report-data")["live"] is None


def test_the_tournament_command_keeps_its_report(tournament: Path) -> None:
    config = tournament / "t.toml"
    out = tournament / "kept.html"
    told = run("tournament", str(config), "--db", str(tournament / "t.db"), "--report", str(out))
    assert "0 games played now" in told
    assert embedded(out, "report-data")["header"]["games"] == 12
    run("tournament", str(config), "--db", str(tournament / "t.db"), "--report", "/no/such/folder/r.html", code=6)


def test_report_errors_are_one_line(tournament: Path) -> None:
    assert run("report", str(tournament / "t.toml"), code=3) == (
        f"durak: error: {str(tournament / 't.toml')!r} is not a results database\n")
    assert "cannot write" in run("report", str(tournament / "t.db"), "-o", "/no/such/folder/r.html", code=6)
    assert "holds no tournament 99" in run("report", str(tournament / "t.db"), "--tournament", "99", code=3)
    empty = tournament / "empty.db"
    Store(empty).close()
    assert "holds no tournament" in run("report", str(empty), code=3)


def test_replay_and_play_write_the_viewer(tournament: Path) -> None:
    db = str(tournament / "t.db")
    seat = tournament / "seat.html"
    assert run("replay", db, "1", "--seat", "h", "--html", str(seat)) == f"wrote {seat}\n"
    games = embedded(seat, "games-data")
    assert len(games) == 1 and games[0]["seat"] == games[0]["names"].index("h")
    with Store(tournament / "t.db", create=False) as store:
        first = next(store.games())
    assert games[0]["id"] == 1 and games[0]["strikes"] == first.record.strikes == [0, 0, 0]
    assert first.move_us is not None
    assert [s["u"] for s in games[0]["steps"] if s.get("w") == 0] == first.move_us[0][:len(
        [s for s in games[0]["steps"] if s.get("w") == 0])]
    assert "bad" in run("replay", db, "1", "--seat", "bad", "--html", str(seat), code=3)
    played = tournament / "played.html"
    bot = f"{sys.executable} {SAMPLES / 'random_bot.py'}"
    run("play", bot, bot, "--games", "2", "--seed", "3", "--sandbox", "process", "--html", str(played))
    games = embedded(played, "games-data")
    assert [g["game"] for g in games] == ["g1", "g2"] and all(g["seat"] is None for g in games)
    assert all(g["strikes"] == [0, 0] and all("u" in s for s in g["steps"] if "w" in s) for g in games)
    assert stat.S_IMODE(played.stat().st_mode) == 0o600


def strike_game(db: Path, strikes: list[int]) -> None:
    """Game 1 of ``db`` given ``strikes`` in its stored record (the strikes themselves are test_strikes.py's)."""
    with closing(sqlite3.connect(db)) as con:
        gid, text = con.execute("SELECT id, record FROM games ORDER BY id LIMIT 1").fetchone()
        record = json.loads(text)
        record["strikes"] = strikes
        con.execute("UPDATE games SET record = ? WHERE id = ?", (json.dumps(record), gid))
        con.commit()


def test_replay_html_and_the_report_show_the_stored_strikes(tournament: Path) -> None:
    db = tournament / "struck.db"
    shutil.copy(tournament / "t.db", db)
    strike_game(db, [0, 2, 1])
    page = tournament / "struck.html"
    run("replay", str(db), "1", "--html", str(page))
    assert embedded(page, "games-data")[0]["strikes"] == [0, 2, 1]
    report = tournament / "struck-report.html"
    ReportWriter(db, report).write()
    assert json.loads(zlib.decompress(base64.b64decode(embedded(report, "chunk-0"))))["1"]["strikes"] == [0, 2, 1]


def test_chunk_files_are_written_again_only_when_their_games_change(tournament: Path) -> None:
    out = tournament / "again.html"
    ReportWriter(tournament / "t.db", out, inline_games=5).write()
    chunk = tournament / "again.html.files" / "chunk-0.js"
    first = chunk.stat().st_mtime_ns
    chunk.write_text(chunk.read_text())  # same text, new time: a rewrite would change it again
    touched = chunk.stat().st_mtime_ns
    assert ReportWriter(tournament / "t.db", out, inline_games=5).write().games == 12
    assert chunk.stat().st_mtime_ns == touched != first
    ReportWriter(tournament / "t.db", out, PageOptions(private=True), inline_games=5).write()  # stderr in: packed again
    assert chunk.stat().st_mtime_ns != touched


def test_chunk_files_packed_by_worker_processes_hold_every_shown_game(tournament: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from referee.report import tournament_page

    monkeypatch.setattr(tournament_page, "CHUNK_GAMES", 5)
    out = tournament / "pooled.html"
    files = ReportWriter(tournament / "t.db", out, inline_games=5, jobs=2).write()
    folder = tournament / "pooled.html.files"
    chunks = sorted(folder.glob("chunk-*.js"))
    assert [c.name for c in chunks] == ["chunk-0.js", "chunk-1.js", "chunk-2.js"]  # ids 1-4, 5-9, 10-12
    games: dict[str, Any] = {}
    for chunk in chunks:
        text = chunk.read_text()
        games.update(json.loads(zlib.decompress(base64.b64decode(json.loads(text[text.index(",") + 1:-3])))))
    assert sorted(map(int, games)) == list(range(1, 13)) and files.games == 12
    assert set(json.loads((folder / "manifest.json").read_text())) == {"0", "1", "2"}


def test_the_report_lands_beside_its_database_and_says_its_true_size(tournament: Path, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Run from another folder, `durak report DB` writes DB's stem + .html beside DB (not into the current
    folder), and the bytes it prints are the page's on disk (inline game data was counted twice: issue 25)."""
    db = tournament / "beside.db"
    shutil.copy(tournament / "t.db", db)
    monkeypatch.chdir(tmp_path)
    told = run("report", str(db))
    page = tournament / "beside.html"
    assert told == f"wrote {page}: 12 games, {page.stat().st_size:,} bytes\n"
    assert not list(tmp_path.iterdir())
