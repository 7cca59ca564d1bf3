"""Entrant text with terminal controls and bidirectional overrides on every page: the web arena's templates (build
and gate logs, step details, reasons, names: the Jinja ``finalize``), the replay viewer's data in the arena and in
the offline report (:func:`referee.report.game_data.game_data`) all show it through one function,
:func:`referee.text.visible`. Checked on the bytes sent and, in headless Chromium, on the text shown; controls
show that the stored text is raw and that a template without the ``finalize`` would send it raw."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jinja2 import Environment, PackageLoader, nodes, select_autoescape
from litestar.testing import TestClient

from referee.report.game_data import SeatTraces, game_data
from referee.report.page import viewer_page
from referee.results.arena_store import ArenaStore, UploadStep
from referee.results.league_store import GroupRow
from referee.results.replay import replay_lines
from referee.text import visible, visible_data, visible_value
from referee.web.app import create_app
from referee.web.auth import SESSION_COOKIE, sign_session
from referee.web.settings import WebSettings
from tests.browser import browser, open_page, wait_for
from tests.liveserver import served
from tests.webdb import WebDb, build, game, stored

__all__ = ["browser"]  # the fixture, used by name

#: What the checks look for: raw, none may reach a page; escaped, each must.
RAW = ("\x1b", "\u202e", "\r", "\x07", "\x85", "\u2028")
ESCAPED = ("\\x1b[31m", "\\u202e", "\\x0d", "\\x07", "\\x85", "\\u2028")


def hostile(tag: str) -> str:
    """Entrant text: an ANSI colour and clear, a right-to-left override, a carriage return, a bell, a C1 control and
    a line separator, around a tag that says where it was put."""
    return f"{tag} \x1b[31mred\x1b[2J \u202etxt.exe\u202c over\rwrite bell\x07 nel\x85 ls\u2028end"


STEP, BUILD, GATE, QUARANTINE = hostile("STEP-9c1"), hostile("BUILD-LOG-4e7") + "\nsecond line", \
    hostile("GATE-LOG-1b2"), hostile("QUARANTINE-6d0")
STDERR, REASON = hostile("STDERR-3fa") + "\n", hostile("REASON-08e")

#: Every value the templates write, as ``template: {expression, ...}``, split into what carries entrant text (or
#: quotes it: a reason, a log, a refusal) and what the referee makes itself. Every one goes through
#: ``visible_value`` (the ``finalize``); a template that writes something new must be listed here.
ENTRANT = {
    "admin.html": {"a.name", "c.author", "c.result", "c.seats|join", "f.finalists|join", "f.result", "v.author",
                   "v.bot", "v.version"},
    "author.html": {"author.name", "bot", "c.result", "c.seats|join", "challenge_error", "idle|join", "s.detail",
                    "u.bot", "u.build_log", "u.gate_log", "u.version"},
    "base.html": {"viewer.author"},
    "board.html": {"board.league", "line.author", "line.bot", "line.version", "s.version"},
    "bot.html": {"bot.author", "bot.name", "p.version", "v.name", "v.quarantine_reason"},
    "game.html": {"title", "a.bot", "a.result"},  # the viewer data's title: the players' names; an analysis's bot,
    # and why it failed (the replay's error may quote the game)
    "challenge.html": {"challenge.author", "challenge.result", "challenge.seats|join", "g.fools|join",
                       "g.players|join", "v.bot", "v.reason"},
    "done.html": {"message"},
    "error.html": {"detail"},
    "games.html": {"wanted.bot", "wanted.verdict"},  # the query, as asked
    "login.html": {"error"},
    "tables.html": {"b", "error", "t.bots", "t.reason", "v"},
    "upload.html": {"error"},
}
#: What the referee writes itself: numbers, ids, states, dates, URLs (and names made URLs: ``urls.*``, whose
#: arguments are listed above where they carry entrant text), CSRF tokens, constants and the Python's own facts.
OURS = {
    "admin.html": {"Const", "a.created", "a.revoked", "action", "c.games", "c.id", "c.played|length", "c.status",
                   "c.url", "csrf", "f.games", "f.request", "finals_budget", "finals_top", "urls.ADMIN_FINALS",
                   "urls.admin_action", "urls.author", "v.state"},
    "author.html": {"Const", "Const|format", "c.games", "c.id", "c.played|length", "c.status", "c.url", "csrf",
                    "s.step", "sizes|join", "u.created", "u.id", "u.size", "u.status", "urls.CHALLENGES",
                    "urls.UPLOAD", "urls.author", "urls.bot"},
    "base.html": {"Const", "csrf", "urls.ADMIN", "urls.LOGIN", "urls.LOGOUT", "urls.TABLES", "urls.UPLOAD",
                  "urls.author", "urls.board", "urls.games", "urls.static"},
    "board.html": {"Const", "Const|format", "board.fitted", "board.live", "chart.first", "chart.height",
                   "chart.last", "chart.left", "chart.width", "ci_legend", "line.added", "line.state", "poll", "s.last",
                   "s.line", "s.slot", "urls.author", "urls.bot", "urls.static", "when"},
    "bot.html": {"Const", "Const|format", "chart.height", "chart.width", "ci_legend", "count", "history_limit", "kind",
                 "p.fitted", "p.games", "s.band", "s.line", "urls.author", "urls.games", "v.added", "v.state"},
    "challenge.html": {"Const", "challenge.created", "challenge.games", "challenge.id", "challenge.status",
                       "g.end", "g.number", "g.url", "urls.author", "v.kind"},
    "done.html": {"urls.ADMIN"},
    "error.html": {"status"},
    "game.html": {"Const", "body|safe", "game.status", "side", "urls.challenge", "urls.static", "Const|format", "a.id",
                  "a.playouts", "a.seat", "a.seed", "a.status", "analyze", "count", "csrf", "mark", "seat"},
    "games.html": {"Const", "found.after", "found.before", "found.page", "found.pages", "found.total", "kind", "n",
                   "urls.games", "wanted.players"},
    "login.html": {"login_csrf", "urls.LOGIN"},
    "table.html": {"Const", "table.id", "urls.static", "csrf", "urls.TABLE_ANALYSIS"},
    "tables.html": {"Const", "choices.max_players", "choices.min_players", "csrf", "k", "s", "t.id", "t.players",
                    "t.replay", "t.status", "t.url", "t.variant", "urls.TABLES"},
    "upload.html": {"bot_name_pattern", "csrf", "urls.UPLOAD"},
}
#: JSON in a ``<script type="application/json">``: built escaped (:func:`visible_data`), written as it is.
BUILT_ESCAPED = {"game.html": {"data|safe"}, "table.html": {"data|safe", "narration|safe"},
                 # the head to head's rows, drawn in Python: each cell made visible and escaped as the templates do
                 # (tests/test_web_long_tables.py holds the two byte for byte)
                 "bot.html": {"head_to_head_rows", "bot.head_to_head"},
                 # the games table's rows, drawn in Python the same way (the same test holds them)
                 "games_table.html": {"game_rows", "games"},
                 # the board's rows, drawn in Python the same way (the same test holds them; z95: a constant)
                 "board.html": {"board_rows", "board.lines", "z95"}}
#: (``BUILT_ESCAPED`` also holds markup drawn in Python from entrant text, escaped there.)
#: The viewer's data fields that carry entrant text (the rest are cards, numbers and the referee's words).
VIEWER_FIELDS = ("names", "shown", "stderr[].[].text", "verdicts[].reason", "result.reason", "told")


def _expression(node: nodes.Node) -> str:
    """An output expression as listed above: names, attributes and the last filter."""
    match node:
        case nodes.Name():
            return node.name
        case nodes.Getattr():
            return f"{_expression(node.node)}.{node.attr}"
        case nodes.Filter():
            return f"{_expression(node.node)}|{node.name}" if node.node is not None else node.name
        case nodes.Const():
            return "Const"
        case nodes.CondExpr():  # the values it may write, not its test
            return " / ".join(_expression(part) for part in (node.expr1, node.expr2) if part is not None)
        case _:  # an operator, a call, a dict: what is in it
            return " / ".join(_expression(part) for part in node.iter_child_nodes()) or type(node).__name__


def written(template: str) -> set[str]:
    """Every ``{{ ... }}`` of ``template`` and the templates it extends, as :func:`_expression` spells it."""
    env = Environment(loader=PackageLoader("referee.web", "templates"))
    source = env.loader.get_source(env, template)[0] if env.loader is not None else ""
    found = set()
    for output in env.parse(source).find_all(nodes.Output):
        for part in output.nodes:
            if not isinstance(part, nodes.TemplateData):
                found |= {name for name in _expression(part).split(" / ")}
    return found


def test_every_value_a_template_writes_is_listed_and_entrant_ones_go_through_visible() -> None:
    env = Environment(loader=PackageLoader("referee.web", "templates"))
    for template in env.list_templates():
        shown = written(template)
        listed = [ENTRANT.get(template, set()), BUILT_ESCAPED.get(template, set()), OURS.get(template, set())]
        assert set().union(*listed) == shown, template  # a new value written: say here what it carries


def test_the_app_writes_every_template_value_through_visible() -> None:
    with tempfile.TemporaryDirectory(prefix="durak-test-hostile-") as folder:
        db = build(Path(folder))
        templates = create_app(db.path, WebSettings()).state["web"].templates
    assert templates.finalize is visible_value
    page = templates.from_string("<pre>{{ log }}</pre>{{ name }}").render(log=BUILD, name=REASON)
    assert not any(char in page for char in RAW) and all(mark in page for mark in ESCAPED)
    assert "red\\x1b[2J" in page and "\nsecond line" in page  # lines kept, controls escaped
    # The control: the same template without the finalize sends the raw characters.
    plain = Environment(autoescape=select_autoescape(default=True, default_for_string=True))
    raw = plain.from_string("<pre>{{ log }}</pre>").render(log=BUILD)
    assert all(char in raw for char in ("\x1b", "\u202e", "\r"))


def test_visible_lines_and_data() -> None:
    assert visible("a\x1b[1m\nb\u202e") == "a\\x1b[1m\\x0ab\\u202e"
    assert visible("a\x1b[1m\nb\u202e\r\n", lines=True) == "a\\x1b[1m\nb\\u202e\\x0d\n"
    data = visible_data({"k\u202e": ["x\x1b", ("y\x85", 3)], "n": None, "f": 1.5})
    assert data == {"k\\u202e": ["x\\x1b", ["y\\x85", 3]], "n": None, "f": 1.5}
    assert visible_value(STEP) == visible(STEP, lines=True) and visible_value(7) == 7


@pytest.fixture(scope="module")
def hostile_db() -> Iterator[tuple[WebDb, int, int]]:
    """The web tests' league, plus entrant text with controls in alice's upload (a step's detail, the build and
    gate logs), alpha's quarantine reason, and a game of a complete group where alpha crashes with a reason that
    quotes its stderr. Yields the database, the upload's id and the game's number."""
    folder = Path(tempfile.mkdtemp(prefix="durak-test-hostile-"))
    db = build(folder)
    with ArenaStore(db.path) as store:
        league = store.league()
        assert league is not None
        upload = store.add_upload(league.id, "alice", "alpha", b"\x1f\x8barchive", "00")
        store.step_upload(upload.id, "refused", UploadStep("build", False, STEP, 1.5), build_log=BUILD,
                          gate_log=GATE)
        store.set_version(league.id, "alpha@1", quarantined=QUARANTINE)
        store.issue_group(league.id, GroupRow(number=7, deal_seed=7, seats=("alpha@1", "beta@1"), anchor="alpha@1"))
        record = game(["alpha@1", "beta@1"], 77, "g7", [STDERR, "beta says hi\n"], crash=REASON)
        store.save_slots(league.id, [[stored(record, 7, 0)]])
        store.close_group(league.id, 7, "complete")
        number = store.count_games(league.id)
        # The control: what is stored is raw.
        kept = store.upload(upload.id)
        assert "\x1b" in (kept.build_log or "") and "\u202e" in (kept.gate_log or "")
    yield db, upload.id, number
    shutil.rmtree(folder)


def _get(client: TestClient, db: WebDb, viewer: str, path: str) -> bytes:  # type: ignore[type-arg]
    client.cookies.clear()
    with ArenaStore(db.path) as store:
        author = store.author(viewer)
        assert author is not None
        client.cookies.set(SESSION_COOKIE, sign_session(store, store.web_key(), author))
    answer = client.get(path)
    assert answer.status_code == 200, path
    return answer.content


def _no_raw(content: bytes, where: str) -> None:
    text = content.decode()
    assert not [char for char in RAW if char in text], where


def test_pages_send_entrant_text_escaped(hostile_db: tuple[WebDb, int, int]) -> None:
    db, _, number = hostile_db
    with TestClient(create_app(db.path, WebSettings(rate_burst=10_000))) as client:
        for viewer in ("admin", "alice"):
            author = _get(client, db, viewer, "/authors/alice").decode()
            _no_raw(author.encode(), f"/authors/alice as {viewer}")
            for text in (STEP, BUILD, GATE):  # each escaped as it was written, lines kept
                assert visible(text, lines=True).replace('"', "&#34;") in author, viewer
            bot = _get(client, db, viewer, "/bots/alpha").decode()
            _no_raw(bot.encode(), f"/bots/alpha as {viewer}")
            assert visible(QUARANTINE) in bot
            games = _get(client, db, viewer, "/games?bot=alpha").decode()
            _no_raw(games.encode(), f"/games as {viewer}")
            assert visible(REASON) in games
            replay = _get(client, db, viewer, f"/games/{number}")
            _no_raw(replay, f"/games/{number} as {viewer}")
            # in the viewer's JSON, the escape's backslash is itself escaped
            assert visible(STDERR, lines=True).replace("\\", "\\\\").replace("\n", "\\n").encode() in replay
            api = _get(client, db, viewer, f"/api/games/{number}")
            _no_raw(api, f"/api/games/{number} as {viewer}")


def test_the_viewers_data_escapes_every_entrant_field(hostile_db: tuple[WebDb, int, int]) -> None:
    record = game(["alpha@1", "beta@1"], 77, "g7", [STDERR, ""], crash=REASON)
    data = game_data(replay_lines(record), SeatTraces(record.stderr), private=True)
    seat = game_data(replay_lines(record), SeatTraces(record.stderr), seat=0)
    for view in (data, seat):
        assert not [char for char in RAW if char in repr_strings(view)]
        assert view["stderr"][0][0]["text"] == visible(STDERR, lines=True)
        assert view["verdicts"][0]["reason"] == visible(REASON, lines=True)
        assert view["result"]["reason"] == visible(REASON, lines=True)
        assert "\\u202e" in view["told"]
    for field in VIEWER_FIELDS:  # each listed field is there
        assert field.split("[")[0].split(".")[0] in data


def repr_strings(value: Any) -> str:
    """Every string in a JSON-like value, joined."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return "".join(repr_strings(k) + repr_strings(v) for k, v in value.items())
    if isinstance(value, list):
        return "".join(repr_strings(item) for item in value)
    return ""


SHOWN = "return document.body.innerText"


def _shown_escaped(text: str, where: str, *tags: str) -> None:
    assert not [char for char in ("\x1b", "\u202e", "\x85", "\u2028") if char in text], where
    for tag in tags:
        assert tag in text, (where, tag)
    assert "\\x1b[31mred\\x1b[2J" in text and "\\u202etxt.exe\\u202c" in text, where


def test_chromium_shows_the_logs_and_stderr_escaped(browser: Any, hostile_db: tuple[WebDb, int, int]) -> None:
    db, _, number = hostile_db
    with served(create_app(db.path, WebSettings(rate_burst=10_000))) as url:
        browser.get(f"{url}/static/web.css")
        with ArenaStore(db.path) as store:
            admin = store.author("admin")
            assert admin is not None
            cookie = sign_session(store, store.web_key(), admin)
            browser.add_cookie({"name": SESSION_COOKIE, "value": cookie, "path": "/"})
        browser.get(f"{url}/authors/alice")
        wait_for(browser, "return document.readyState === 'complete'")
        _shown_escaped(browser.execute_script(SHOWN), "author page", "BUILD-LOG-4e7", "GATE-LOG-1b2", "STEP-9c1")
        browser.get(f"{url}/games/{number}#step=999")
        wait_for(browser, "return document.body.dataset.ready === '1'")
        wait_for(browser, "return document.querySelector('.stderr-seat pre') !== null")
        text = browser.execute_script(SHOWN)
        _shown_escaped(text, "replay", "STDERR-3fa")
        panel = browser.execute_script("return document.querySelector('.stderr-seat pre').textContent")
        assert panel.startswith(visible(STDERR, lines=True))  # the stderr panel, exactly the escaped text


def test_chromium_shows_the_offline_reports_stderr_escaped(browser: Any, tmp_path: Path) -> None:
    record = game(["alpha", "beta"], 78, "g8", [STDERR, ""], crash=REASON)
    page = tmp_path / "replay.html"
    raw = viewer_page([game_data(replay_lines(record), SeatTraces(record.stderr), private=True)])
    page.write_text(raw)
    assert not [char for char in RAW if char in raw]
    open_page(browser, page, "#step=999")
    wait_for(browser, "return document.querySelector('.stderr-seat pre') !== null")
    _shown_escaped(browser.execute_script(SHOWN), "offline replay", "STDERR-3fa")
    # The control: the same page built from the raw stderr shows the raw characters.
    browser.execute_script("document.querySelector('.stderr-seat pre').textContent = arguments[0]", STDERR)
    assert "\u202e" in browser.execute_script(SHOWN)
