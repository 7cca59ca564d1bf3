"""The web arena end to end, as a new entrant would use it, in headless Chromium: a league's daemon runs (root, the
sandbox), ``durak serve`` serves it (started as root, serving as nobody); Alice logs in with her token, uploads a
Python bot and a C bot that builds, watches each step's outcome, finds both rated on the live board, opens a replay
of her bot and reads its stderr; Bob cannot reach her stderr, uploads or page; ``durak submit`` uploads a third;
she plays a league bot at a card table that the daemon runs.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from selenium.webdriver.common.by import By

from tests.browser import browser, wait_for
from tests.clirun import invoke
from tests.entrants import STDERR_MARK, c_bot, python_bot, tar_gz
from tests.sandboxes import needs_bwrap
from tests.test_web_tables_browser import in_seats, open_table, play_to_the_end
from tests.webdb import why_nobody_cannot_serve
from tests.webkit import free_port

__all__ = ["browser"]  # the fixture, used by name
pytestmark = needs_bwrap

ROOT = Path(__file__).resolve().parents[1]
CONFIG = """\
name = "arena"
players = 2
[league]
refit_seconds = 0.5
min_games = 4
gate_games = 1
[arena]
analysis_playouts = 8
[[bots]]
name = "house"
command = "{python} random_bot.py"
dir = "house"
author = "organizer"
[[bots]]
name = "guest"
command = "{python} heuristic_bot.py"
dir = "house"
author = "guests"
"""


@dataclass(frozen=True)
class Arena:
    url: str
    db: Path
    folder: Path
    tokens: dict[str, str]


def archive(files: dict[str, str], path: Path) -> Path:
    path.write_bytes(tar_gz(files))
    return path


def started(command: list[str], log: Path) -> subprocess.Popen[bytes]:
    with open(log, "ab") as out:
        return subprocess.Popen(command, stdout=out, stderr=out, stdin=subprocess.DEVNULL, start_new_session=True)


@pytest.fixture(scope="module")
def arena() -> Iterator[Arena]:
    if (why := why_nobody_cannot_serve()) is not None:
        pytest.skip(why)
    folder = Path(os.path.realpath(__import__("tempfile").mkdtemp(prefix="durak-test-arena-")))
    folder.chmod(0o755)
    (folder / "house").mkdir(mode=0o755)
    for name in ("random_bot.py", "heuristic_bot.py"):
        shutil.copy(ROOT / "sample_bots" / "python" / name, folder / "house" / name)
    (folder / "league.toml").write_text(CONFIG)
    db = folder / "league.db"
    daemon = started([sys.executable, "-m", "referee", "league", "run", str(folder / "league.toml"), "--db", str(db),
                      "--jobs", "2"], folder / "daemon.log")
    processes = [daemon]
    try:
        deadline = time.monotonic() + 60
        while not (db.exists() and invoke("league", "status", str(db)).code == 0):
            assert time.monotonic() < deadline and daemon.poll() is None, (folder / "daemon.log").read_text()
            time.sleep(0.2)
        tokens = {name: invoke("league", "author", "add", str(db), name).out.strip() for name in ("alice", "bob")}
        port = free_port()
        server = started([sys.executable, "-m", "referee", "serve", str(db), "--port", str(port)], folder / "web.log")
        processes.append(server)
        url = f"http://127.0.0.1:{port}"
        while True:
            try:
                with closing(socket.create_connection(("127.0.0.1", port), timeout=1)):
                    break
            except OSError:
                assert time.monotonic() < deadline and server.poll() is None, (folder / "web.log").read_text()
                time.sleep(0.1)
        yield Arena(url, db, folder, tokens)
    finally:
        for process in processes:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in processes:
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        if not os.environ.get("DURAK_KEEP_ARENA"):
            shutil.rmtree(folder, ignore_errors=True)


def text(driver: Any) -> str:
    shown: str = driver.execute_script("return document.body.innerText")
    return shown


def log_in(driver: Any, arena: Arena, name: str) -> None:
    driver.delete_all_cookies()
    driver.get(f"{arena.url}/login")
    driver.find_element("name", "token").send_keys(arena.tokens[name])
    driver.find_element("css selector", "form[action='/login'] button").click()
    wait_for(driver, f"return document.body.innerText.includes({name!r}) && !location.pathname.endsWith('/login')")


def upload(driver: Any, arena: Arena, bot: str, path: Path) -> str:
    """Upload through the form; the author's page once the upload is carried out (the page reloads itself till
    then, showing each step as it ends)."""
    driver.get(f"{arena.url}/upload")
    driver.find_element("name", "bot").send_keys(bot)
    driver.find_element("name", "archive").send_keys(str(path))
    driver.find_element("css selector", "form[action='/upload'] button").click()
    wait_for(driver, "return location.pathname.startsWith('/authors/')")
    deadline = time.monotonic() + 120
    while not any(word in text(driver) for word in (f"accepted ({bot}@", "refused")):
        assert time.monotonic() < deadline, text(driver) + (arena.folder / "daemon.log").read_text()[-3000:]
        time.sleep(0.5)
    return text(driver)


def test_an_entrant_uploads_follows_the_board_and_reads_only_their_own_logs(browser: Any, arena: Arena,
                                                                           tmp_path: Path) -> None:
    log_in(browser, arena, "alice")
    page = upload(browser, arena, "pybot", archive(python_bot("pybot"), tmp_path / "pybot.tar.gz"))
    assert "accepted (pybot@1)" in page and "handshake" in page, page
    page = upload(browser, arena, "cbot", archive(c_bot("cbot"), tmp_path / "cbot.tar.gz"))
    section = page[page.index("cbot,"):]
    for step in ("extract\tok", "build\tok", "check\tok", "gate\tok"):
        assert step in section, section

    browser.get(arena.url + "/")  # the live board: both bots appear with rated games, without a reload
    fitted = browser.find_element("id", "board-fitted").text
    wait_for(browser, f"return Number(document.body.dataset.polled || '0') > 0 && "  # redrawn by its poll
                      f"document.getElementById('board-fitted').textContent !== {fitted!r}", timeout=60)
    wait_for(browser, "return ['pybot@1', 'cbot@1'].every((v) => [...document.querySelectorAll('#board-body tr')]"
                      ".some((row) => row.cells[1].textContent === v && Number(row.cells[5].textContent) > 0))",
             timeout=120)

    browser.get(f"{arena.url}/games?bot=pybot")
    game = browser.find_element("css selector", "table.list tbody a").get_attribute("href")
    browser.get(f"{game}#game=2")  # the picker's second view: pybot's own seat, with its stderr
    wait_for(browser, "return document.body.dataset.ready === '1'")
    browser.find_element("tag name", "body").send_keys("\ue010")  # End: the game's last step
    browser.execute_script("document.querySelector('button[title^=\"end\"]')?.click()")
    wait_for(browser, f"return document.body.innerText.includes({STDERR_MARK!r})")

    log_in(browser, arena, "bob")
    browser.get(f"{game}#game=2")
    wait_for(browser, "return document.body.dataset.ready === '1'")
    browser.execute_script("document.querySelector('button[title^=\"end\"]')?.click()")
    time.sleep(0.3)
    assert STDERR_MARK not in browser.page_source and STDERR_MARK not in text(browser)
    browser.get(arena.url + "/authors/alice")  # her bots are public; her uploads and their logs are hers
    assert "pybot" in text(browser) and "Uploads" not in text(browser) and "handshake" not in browser.page_source
    browser.get(arena.url + "/api/uploads/1")
    assert "not found" in browser.page_source.lower() and "handshake" not in browser.page_source


def test_durak_submit_uploads_a_folder_and_follows_it(arena: Arena, tmp_path: Path) -> None:
    folder = tmp_path / "subbot"
    folder.mkdir()
    for name, text in python_bot("subbot").items():
        (folder / name).write_text(text)
    token = tmp_path / "token"
    token.write_text(arena.tokens["alice"])
    done = subprocess.run([sys.executable, "-m", "referee", "submit", arena.url, str(folder), "--token-file",
                           str(token), "--wait", "120"], capture_output=True, text=True, timeout=180, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "extract: ok" in done.stdout and "gate: ok" in done.stdout and "accepted: subbot@1" in done.stdout
    assert arena.tokens["alice"] not in done.stdout + done.stderr
    logs = (arena.folder / "web.log").read_text() + (arena.folder / "daemon.log").read_text()
    assert all(token not in logs for token in arena.tokens.values())


def invoke_json(driver: Any, url: str) -> Any:
    driver.get(url)
    return json.loads(driver.find_element("tag name", "pre").text)


def test_a_person_plays_a_league_bot_at_a_card_table_the_daemon_runs(browser: Any, arena: Arena) -> None:
    """The daemon (the real one: the bot sandboxed and paused) plays Alice's card table; she plays it to the end in
    the page, a reload in the middle, and opens its replay; then asks for her analysis, which the daemon makes and
    the replay marks; Bob cannot reach it."""
    log_in(browser, arena, "alice")
    deadline = time.monotonic() + 60
    while not (bots := invoke_json(browser, f"{arena.url}/api/tables")["bots"]):  # the gate lets the first one in
        assert time.monotonic() < deadline
        time.sleep(0.5)
    open_table(browser, arena.url, "podkidnoy", in_seats(bots[:1]))
    table = browser.current_url
    assert play_to_the_end(browser, reload_at=1, pace=0.6) > 0  # a person's pace: within the move budget
    assert browser.execute_script("return document.querySelector('.result').dataset.end") != "forfeit"
    access = (arena.folder / "web.log").read_text()  # the page followed the event stream, and never polled
    assert f"GET /api/tables/{table.rsplit('/', 1)[-1]}/events?since=0 HTTP/1.1\" 200" in access
    assert "/messages" not in access
    replay = wait_for(browser, "const a = document.querySelector('.result a.replay'); return a && a.href", 20)
    browser.get(replay)
    wait_for(browser, "return document.body.dataset.ready === '1'")
    assert browser.execute_script("return document.getElementById('viewer').dataset.view") == "all"
    browser.get(table)  # after game over, the table asks for her analysis; the daemon makes it (8 worlds)
    wait_for(browser, "return !document.getElementById('analysis-box').hidden")
    browser.find_element(By.ID, "analyze").click()
    wait_for(browser, "return document.querySelector('li.analysis') !== null")
    deadline = time.monotonic() + 240  # the daemon analyzes at nice 19: minutes beside busy cores
    while (status := browser.find_element(By.CSS_SELECTOR, "li.analysis").get_attribute("data-status")) != "done":
        assert status in ("pending", "running") and time.monotonic() < deadline, status
        time.sleep(0.5)
        browser.refresh()
    marked = invoke_json(browser, replay.replace("/tables/", "/api/tables/"))["views"][1]
    assert marked["seat"] is not None and any("j" in step for step in marked["steps"])
    log_in(browser, arena, "bob")
    for url in (table, replay):
        browser.get(url)
        assert "not found" in browser.page_source.lower() and "felt" not in browser.page_source
