"""Screenshots of the report and the replay viewer for the docs (docs/report.png, docs/viewer.png,
docs/viewer-seat.png), taken in headless Chromium from a real tournament of the sample bots.

Run by hand from the project root (needs chromium, chromium-driver and selenium)::

    python scripts/report_screenshots.py
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from typer.testing import CliRunner

from referee.cli import app
from tests.browser import start_chromium

ROOT = Path(__file__).resolve().parent.parent

CONFIG = """name = "sample bots, three at a table"
variant = "perevodnoy"
players = 3
deals = 10
sandbox = "process"
[[bots]]
name = "random"
command = ["{python}", "random_bot.py", "7"]
dir = "python"
[[bots]]
name = "heuristic"
command = "{python} heuristic_bot.py"
dir = "python"
[[bots]]
name = "js"
command = "node bot.js"
dir = "js"
[[bots]]
name = "random-2"
command = ["{python}", "random_bot.py", "8"]
dir = "python"
"""


def run(*args: str) -> None:
    result = CliRunner().invoke(app, list(args))
    if result.exit_code != 0:
        raise SystemExit(result.output)


def shoot(driver: Any, url: str, ready: str, out: Path, height: int) -> None:
    driver.set_window_size(1280, height)
    driver.get(url)
    deadline = time.monotonic() + 30
    while not driver.execute_script(ready):
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out: {url}")
        time.sleep(0.05)
    driver.save_screenshot(str(out))
    print(f"wrote {out}")


def main() -> None:
    folder = Path(tempfile.mkdtemp(prefix="durak-shots-"))
    folder.chmod(0o755)
    try:
        shutil.copytree(ROOT / "sample_bots", folder / "bots")
        (folder / "bots" / "shots.toml").write_text(CONFIG)
        db, page, seat = folder / "t.db", folder / "report.html", folder / "seat.html"
        run("tournament", str(folder / "bots" / "shots.toml"), "--db", str(db))
        run("report", str(db), "-o", str(page))
        run("replay", str(db), "4", "--seat", "heuristic", "--html", str(seat))
        driver = start_chromium()
        try:
            docs = ROOT / "docs"
            shoot(driver, page.as_uri(), "return document.body.dataset.ready === '1'", docs / "report.png", 2900)
            shoot(driver, page.as_uri() + "#game=4&step=18",
                  "return document.getElementById('viewer').dataset.step === '18'", docs / "viewer.png", 900)
            driver.execute_script("document.getElementById('viewer-panel').scrollIntoView()")
            driver.save_screenshot(str(docs / "viewer.png"))
            shoot(driver, seat.as_uri() + "#step=18", "return document.body.dataset.ready === '1'",
                  docs / "viewer-seat.png", 800)
        finally:
            driver.quit()
    finally:
        shutil.rmtree(folder)


if __name__ == "__main__":
    main()
