"""The report and the replay viewer in a real browser (headless Chromium, tests/browser.py), over a real
small tournament whose third bot writes HTML and script into everything it controls (tests/hostile/html_bot.py).
"""

from __future__ import annotations

import base64
import json
import re
import shutil
import sqlite3
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

from protocol.records import ResultRecord
from referee.report.tournament_page import PageOptions, ReportWriter
from referee.results.replay import parse_replay, tell
from referee.results.store import Store
from tests.browser import browser, console_errors, open_page, wait_for

__all__ = ["browser"]  # the fixture, used by name

HOSTILE = Path(__file__).parent / "hostile" / "html_bot.py"
SAMPLES = Path(__file__).resolve().parent.parent / "sample_bots" / "python"
CARD = re.compile(r"\b[6-9TJQKA][CDHS]\b")
NAME = "T <script>window.pwned=5</script> & co"


@pytest.fixture(scope="module")
def arena() -> Iterator[Path]:
    """A 12-game round robin (3 bots, 2 deals, both rotations) and its reports, without and with stderr."""
    folder = Path(tempfile.mkdtemp(prefix="durak-test-report-"))
    folder.chmod(0o755)
    shutil.copytree(SAMPLES, folder / "samples")
    (folder / "hostile").mkdir()
    shutil.copy(HOSTILE, folder / "hostile" / "html_bot.py")
    config = folder / "t.toml"
    config.write_text(f'name = "{NAME}"\ndeals = 2\nsandbox = "process"\n'
                      '[[bots]]\nname = "html"\ncommand = "{python} html_bot.py illegal_after=12"\ndir = "hostile"\n'
                      '[[bots]]\nname = "random"\ncommand = "{python} random_bot.py 3"\ndir = "samples"\n'
                      '[[bots]]\nname = "heuristic"\ncommand = "{python} heuristic_bot.py"\ndir = "samples"\n')
    run("tournament", str(config), "--db", str(folder / "t.db"), "--jobs", "1")
    run("report", str(folder / "t.db"), "-o", str(folder / "report.html"))
    run("report", str(folder / "t.db"), "-o", str(folder / "private.html"), "--private")
    yield folder
    shutil.rmtree(folder)


def records(db: Path) -> dict[int, ResultRecord]:
    with closing(sqlite3.connect(db)) as con:
        return {gid: msgspec.json.decode(text, type=ResultRecord)
                for gid, text in con.execute("SELECT id, record FROM games ORDER BY id")}


def datasets(browser: Any, selector: str) -> list[dict[str, str]]:
    return browser.execute_script(  # type: ignore[no-any-return]
        f"return [...document.querySelectorAll({json.dumps(selector)})].map(r => Object.assign({{}}, r.dataset))")


def assert_attributes_are(rows: list[dict[str, Any]], shown: list[dict[str, str]]) -> None:
    """Each element's data attributes hold its JSON row: every field, by its camel-cased name."""
    assert len(shown) == len(rows) > 0
    for row, attributes in zip(rows, shown, strict=True):
        for key, value in row.items():
            text = attributes[re.sub(r"_(\w)", lambda m: m.group(1).upper(), key)]
            if value is None:
                assert text == "", key
            elif isinstance(value, bool):
                assert text == str(value).lower(), key
            elif isinstance(value, int | float):
                assert float(text) == pytest.approx(value), key
            elif isinstance(value, list | dict):
                assert json.loads(text) == value, key
            else:
                assert text == value, key


def test_the_report_loads_cleanly_and_its_leaderboard_is_the_json_one(browser: Any, arena: Path) -> None:
    open_page(browser, arena / "report.html")
    assert console_errors(browser) == []
    expected = json.loads(run("leaderboard", str(arena / "t.db"), "--format", "json", "--h2h", "--stats"))
    assert len(expected["rows"]) == 3 and len(expected["h2h"]) == 6 and len(expected["stats"]) == 3
    assert_attributes_are(expected["rows"], datasets(browser, "tr.lb-row"))
    assert_attributes_are(expected["h2h"], datasets(browser, "#h2h-table td.h2h-pair"))
    assert_attributes_are(expected["stats"], datasets(browser, "#stats-table tr.stats-row"))
    assert browser.execute_script("return document.querySelectorAll('#elo-chart').length") == 1
    hist = browser.find_element("id", "move-time-chart")
    bins = json.loads(hist.get_attribute("data-bots"))
    assert {bot: sum(counts) for bot, counts in bins.items()} == {r["bot"]: r["moves"] for r in expected["stats"]}
    games = browser.execute_script("return document.querySelectorAll('tr.game-row').length")
    assert games == 12
    with Store(arena / "t.db", create=False) as store:
        bots = store.bots(store.tournament().id)
    files = browser.execute_script("return [...document.querySelectorAll('#bots-table tr[data-bot]')].map(r => "
                                   "[r.dataset.bot, r.dataset.sha256, Object.fromEntries([...r.querySelectorAll("
                                   "'li[data-path]')].map(li => [li.dataset.path, li.dataset.sha256]))])")
    assert files == [[name, bots[name].sha256, bots[name].files] for name in sorted(bots)]


def test_a_game_opens_from_the_list_and_its_last_step_shows_the_stored_result(browser: Any, arena: Path) -> None:
    """The list's numbers are `durak games`' numbers: game N of the page is `durak replay DB N`."""
    listed = [json.loads(line) for line in run("games", str(arena / "t.db"), "--format", "json").splitlines()]
    stored = {g["number"]: msgspec.convert({k: v for k, v in g.items() if k not in ("number", "tournament")},
                                           ResultRecord) for g in listed}
    open_page(browser, arena / "report.html")
    row = browser.find_elements("css selector", "tr.game-row")[4]
    gid = int(row.get_attribute("data-number"))
    title = f"Game {gid}: " + " vs ".join(stored[gid].players)
    link = row.find_elements("css selector", "td")[1].find_element("css selector", "a")  # who played, a link
    assert link.text == " vs ".join(stored[gid].players) and link.get_attribute("href").endswith(f"#game={gid}")
    assert link.value_of_css_property("text-decoration-line") == "underline"
    assert stored[gid].game not in browser.execute_script("return document.getElementById('games').innerText")
    assert run("replay", str(arena / "t.db"), str(gid)).startswith(f"game {stored[gid].game} ")
    row.click()
    wait_for(browser, f"return document.getElementById('viewer').dataset.game === {json.dumps(stored[gid].game)}")
    assert browser.current_url.endswith(f"#game={gid}&step=0")
    assert browser.find_element("css selector", "#viewer .vtitle").text == title
    viewer = browser.find_element("id", "viewer")
    viewer.send_keys("\ue010")  # End
    wait_for(browser, "return document.getElementById('viewer').dataset.atEnd === '1'")
    result = browser.find_element("css selector", "#viewer .result")
    assert result.get_attribute("data-fools") == ",".join(stored[gid].fools)
    assert result.get_attribute("data-end") == stored[gid].end
    viewer.send_keys("\ue012")  # ArrowLeft
    steps = int(viewer.get_attribute("data-steps"))
    assert viewer.get_attribute("data-step") == str(steps - 2)
    assert browser.current_url.endswith(f"#game={gid}&step={steps - 2}")
    open_game(browser, arena / "report.html", gid, 3)  # a linked step
    assert console_errors(browser) == []


def open_game(browser: Any, page: Path, number: int, step: int = 0) -> None:
    """Open game ``number`` of a report at ``step`` and wait until the viewer draws it. The page may already be
    open (a fragment's change, no reload): the game before stays drawn until this one has loaded."""
    open_page(browser, page, f"#game={number}&step={step}")
    wait_for(browser, f"const panel = document.getElementById('viewer-panel');"
                      f"return panel.dataset.game === '{number}' && "
                      f"document.getElementById('viewer').dataset.step === '{step}'")


def test_keys_drive_the_game_opened_last_not_the_one_before(browser: Any, arena: Path) -> None:
    """Each game opened in the report's panel is a new viewer over the same element: the one before must let go
    of its keys (it took them first and, having handled them, left them to nobody: the arrows did nothing)."""
    open_game(browser, arena / "report.html", 2)
    open_game(browser, arena / "report.html", 3)  # the same page: a fragment's change opens another game
    viewer = browser.find_element("id", "viewer")
    viewer.send_keys("\ue014")  # ArrowRight
    assert viewer.get_attribute("data-step") == "1"
    assert browser.current_url.endswith("#game=3&step=1")
    viewer.send_keys("\ue010")  # End
    assert viewer.get_attribute("data-at-end") == "1"
    assert console_errors(browser) == []


def test_the_statistics_table_fits_its_box_at_1400_px(browser: Any, arena: Path) -> None:
    """Every column of the per-bot statistics (the verdict kinds and "disqualified" last) is inside its section."""
    browser.set_window_size(1400, 900)
    try:
        open_page(browser, arena / "report.html")
        edges = browser.execute_script(
            "const box = document.getElementById('stats').getBoundingClientRect();"
            "const wrap = document.querySelector('#stats .wide');"
            "const heads = [...document.querySelectorAll('#stats-table thead th')];"
            "return {right: box.right, wrap: [wrap.scrollWidth, wrap.clientWidth], "
            "heads: heads.map(th => [th.textContent, th.getBoundingClientRect().right])}")
    finally:
        browser.set_window_size(1280, 900)
    labels = [label for label, _ in edges["heads"]]
    assert labels[-1] == "Disqualified" and "protocol" in labels
    assert edges["wrap"][0] <= edges["wrap"][1]  # nothing to scroll to
    assert all(right <= edges["right"] for _, right in edges["heads"]), edges


def test_every_decision_shows_its_stored_time_in_the_step_and_the_log(browser: Any, arena: Path) -> None:
    with Store(arena / "t.db", create=False) as store:
        game = store.replay("3")
    assert game.move_us is not None
    open_game(browser, arena / "report.html", 3)
    viewer = browser.find_element("id", "viewer")
    decided = [0] * len(game.move_us)
    for _ in range(int(viewer.get_attribute("data-steps")) - 1):
        viewer.send_keys("\ue014")  # ArrowRight
        seat = browser.execute_script("return [...document.querySelectorAll('#viewer .seat.chose')]"
                                      ".map(s => Number(s.dataset.seat))")
        times = browser.execute_script("return [...document.querySelectorAll('#viewer .now .move-time')]"
                                       ".map(t => [Number(t.dataset.us), t.textContent])")
        logged = browser.execute_script("return [...document.querySelectorAll('#viewer .log li.current "
                                        ".move-time')].map(t => Number(t.dataset.us))")
        if not seat:  # the forfeit's own step: nobody chose
            assert times == [] and logged == []
            continue
        us = game.move_us[seat[0]][decided[seat[0]]]
        decided[seat[0]] += 1
        assert times == [[us, times[0][1]]] and times[0][1].endswith(" ms") and logged == [us]
        assert float(times[0][1].split()[0]) == pytest.approx(us / 1000, rel=0.01, abs=0.001)
    assert sum(decided) > 10
    assert console_errors(browser) == []


def test_replay_html_shows_the_stored_strikes(browser: Any, arena: Path) -> None:
    db = arena / "struck.db"
    shutil.copy(arena / "t.db", db)
    with closing(sqlite3.connect(db)) as con:
        gid, text = con.execute("SELECT id, record FROM games ORDER BY id LIMIT 1").fetchone()
        record = json.loads(text)
        record["strikes"] = [2, 0, 0][:len(record["players"])]
        con.execute("UPDATE games SET record = ? WHERE id = ?", (json.dumps(record), gid))
        con.commit()
    page = arena / "struck.html"
    run("replay", str(db), "1", "--html", str(page))
    open_page(browser, page)
    shown = browser.execute_script("return [...document.querySelectorAll('#viewer .seat')].map(s => "
                                   "[Number(s.dataset.seat), s.querySelector('.times').textContent])")
    assert sorted(shown)[0][1].endswith("2 strike(s)")
    assert all("strike" not in text for seat, text in shown if seat != 0)
    assert console_errors(browser) == []


def test_a_seat_view_shows_no_card_that_seat_did_not_see(browser: Any, arena: Path) -> None:
    db = arena / "t.db"
    with Store(db, create=False) as store:
        data = store.replay("1").replay
    header, _, _ = parse_replay(data)
    seat = 0
    seen = set(CARD.findall("\n".join(tell(data, seat))))
    hidden = set(header.deck) - seen
    assert hidden, "the game must leave some card unseen by the seat, or this test could not fail"
    page = arena / "seat.html"
    run("replay", str(db), "1", "--seat", header.names[seat], "--html", str(page))
    embedded = re.search(r'<script type="application/json" id="games-data">(.*?)</script>', page.read_text(), re.S)
    assert embedded is not None
    assert set(CARD.findall(embedded.group(1))) <= seen
    open_page(browser, page)
    viewer = browser.find_element("id", "viewer")
    steps = int(viewer.get_attribute("data-steps"))
    for step in range(steps):
        shown = browser.execute_script(
            "return [...document.querySelectorAll('#viewer [data-card]')].map(c => c.dataset.card)")
        assert not set(shown) & hidden, f"step {step} shows {set(shown) & hidden}"
        viewer.send_keys("\ue014")  # ArrowRight
    assert viewer.get_attribute("data-step") == str(steps - 1)
    assert console_errors(browser) == []


def _stderr_in(page: Path) -> list[Any]:
    """Every stderr chunk in a report's embedded game data (inflated)."""
    text = page.read_text()
    found = []
    for chunk in re.findall(r'<script type="application/json" id="chunk-\d+">(.*?)</script>', text, re.S):
        for game in json.loads(zlib.decompress(base64.b64decode(json.loads(chunk)))).values():
            found += [c for seat in game["stderr"] for c in seat]
    return found


def test_bot_words_render_as_text_and_stderr_only_with_private(browser: Any, arena: Path) -> None:
    assert _stderr_in(arena / "report.html") == []
    assert _stderr_in(arena / "private.html")
    stored = records(arena / "t.db")
    forfeit = next(gid for gid, r in stored.items() if any(v.bot == "html" for v in r.verdicts))
    for page, private in (("report.html", False), ("private.html", True)):
        open_game(browser, arena / page, forfeit)
        browser.find_element("id", "viewer").send_keys("\ue010")
        wait_for(browser, "return document.getElementById('viewer').dataset.atEnd === '1'")
        assert browser.execute_script("return window.pwned") is None
        assert browser.execute_script("return document.querySelectorAll('img, svg, b').length") == 0
        assert browser.find_element("id", "title").text == NAME
        version = browser.execute_script(
            "return document.querySelector('#bots-table tr[data-bot=\"html\"] td:nth-child(2)').textContent")
        assert version == '1</script><script>window.pwned=2</script>'
        reason = browser.execute_script("return document.querySelector('#viewer .reason').textContent")
        assert '<img src=y onerror="window.pwned=4">' in reason
        stderr = browser.execute_script(
            "return [...document.querySelectorAll('#viewer .stderr pre')].map(p => p.textContent).join('')")
        if private:
            assert '<svg onload="window.pwned=3"></svg><b>bold?</b> \\u2028</script>' in stderr  # escaped: visible()
        else:
            assert stderr == ""
        assert console_errors(browser) == []


def test_games_in_chunk_files_beside_the_page_open_from_file_urls(browser: Any, arena: Path) -> None:
    page = arena / "chunked.html"
    files = ReportWriter(arena / "t.db", page, inline_games=3).write()
    assert files.games == 12 and (arena / "chunked.html.files" / "chunk-0.js").is_file()
    assert "chunk-0" not in page.read_text()
    stored = records(arena / "t.db")
    gid = next(gid for gid, r in stored.items() if "html" not in r.players)
    open_page(browser, page, f"#game={gid}&step=2")
    wait_for(browser, "return document.getElementById('viewer').dataset.step === '2'")
    assert browser.find_element("css selector", "#viewer .vtitle").text == \
        f"Game {gid}: " + " vs ".join(stored[gid].players)
    assert console_errors(browser) == []


def test_a_live_report_reloads_itself_but_not_under_an_open_game(browser: Any, arena: Path) -> None:
    page = arena / "live.html"
    ReportWriter(arena / "t.db", page, PageOptions(refresh=1)).write()
    open_page(browser, page)
    # read in one script each: the page reloads every second, which makes a found element stale
    assert "reloads itself every 1 s" in browser.execute_script("return document.getElementById('live').textContent")
    browser.execute_script("window.marker = 1")
    wait_for(browser, "return window.marker === undefined && document.body.dataset.ready === '1'", timeout=60)
    # found and clicked in one script: the page may reload (every second) between two commands
    browser.execute_script("document.querySelector('tr.game-row').click(); window.marker = 2")
    wait_for(browser, "return document.getElementById('viewer').dataset.steps")
    time.sleep(2.5)
    assert browser.execute_script("return window.marker") == 2
    assert console_errors(browser) == []
