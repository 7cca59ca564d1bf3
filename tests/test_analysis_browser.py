"""``durak analyze --html`` in a real browser (headless Chromium, tests/browser.py): the analyzed seat's marks
drawn at its own steps, in the line above the table and in the game's log."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from clirun import run
from test_analysis import logged_game
from test_report import embedded

from tests.browser import browser, console_errors, open_page, wait_for

__all__ = ["browser"]  # the fixture, used by name
pytestmark = pytest.mark.browser


@pytest.fixture
def folder() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="durak-test-analysis-browser-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path)


def test_the_viewer_draws_each_mark_at_the_seats_own_step(browser: Any, folder: Path) -> None:
    log, _ = logged_game(folder)
    page = folder / "marked.html"
    run("analyze", str(log), "--seat", "bob", "--playouts", "4", "--html", str(page))
    steps = embedded(page, "games-data")[0]["steps"]
    marked = {i: step["j"]["m"] for i, step in enumerate(steps) if step.get("j", {}).get("m")}
    assert marked, "the random seat must have a marked decision, or this test could not fail"
    open_page(browser, page)
    for index, step in enumerate(steps):
        if index:
            browser.find_element("id", "viewer").send_keys("\ue014")  # ArrowRight
        wait_for(browser, f"return document.getElementById('viewer').dataset.step === '{index}'")
        shown = browser.execute_script(
            "const j = document.querySelector('#viewer .now .judged'); return j === null ? null : j.dataset.mark")
        if "j" not in step:
            assert shown is None, index
            continue
        assert shown == (step["j"]["m"] or ""), index
    badges = browser.execute_script(
        "return [...document.querySelectorAll('#viewer .log li')].filter(li => li.querySelector('.mark'))"
        ".map(li => [Number(li.dataset.step), li.querySelector('.mark').dataset.mark])")
    assert dict(badges) == marked
    assert console_errors(browser) == []
