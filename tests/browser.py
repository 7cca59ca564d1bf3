"""Headless Chromium for the report's tests: Debian's ``chromium`` driven by its ``chromedriver`` through
selenium, never a browser downloaded at run time. Missing, the tests skip, except under ``CI=true``
(``.ci/run`` installs both), where they fail.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = ("chromium", "chromium-browser", "google-chrome")
READY = "return document.body && document.body.dataset.ready === '1'"


def _found(names: tuple[str, ...]) -> str | None:
    return next((path for name in names if (path := shutil.which(name)) is not None), None)


def missing(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason} (CI installs it: .ci/run)")
    pytest.skip(reason)


class NoBrowser(RuntimeError):
    """Chromium, chromedriver or selenium is missing."""


#: How long one script a test runs in the page may take (selenium's default is 30 s).
SCRIPT_SECONDS = 240


def start_chromium(width: int = 1280, height: int = 900) -> Any:
    """A headless Chromium (as root it needs --no-sandbox) driven by Debian's chromedriver, keeping the
    page's console log. Also used by bench/bench_report.py and scripts/report_screenshots.py."""
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        raise NoBrowser("selenium is not installed (pip install -e '.[test]')") from None
    binary, driver_path = _found(CHROMIUM), _found(("chromedriver",))
    if binary is None or driver_path is None:
        raise NoBrowser("Chromium and chromedriver are not installed (apt-get install chromium chromium-driver)")
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--hide-scrollbars", f"--window-size={width},{height}"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=driver_path), options=options)
    # A test may walk every step of a replay in one script (a few seconds on a quiet machine): beside six CPU hogs
    # one took past selenium's 30 s. A script that truly hangs is still stopped, by pytest's faulthandler_timeout.
    driver.set_script_timeout(SCRIPT_SECONDS)
    return driver


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    try:
        driver = start_chromium()
    except NoBrowser as exc:
        missing(str(exc))
    try:
        yield driver
    finally:
        driver.quit()


def open_page(driver: Any, path: Path, fragment: str = "", timeout: float = 20.0) -> None:
    """Load ``path`` from file:// and wait for its ``data-ready`` marker."""
    driver.get(path.resolve().as_uri() + fragment)
    wait_for(driver, READY, timeout)


def wait_for(driver: Any, script: str, timeout: float = 10.0) -> Any:
    """Poll a script until it returns something true; its value."""
    deadline = time.monotonic() + timeout
    while True:
        value = driver.execute_script(script)
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for: {script}")
        time.sleep(0.05)


def console_errors(driver: Any) -> list[str]:
    """The page's console errors (and uncaught exceptions) since the last call."""
    return [entry["message"] for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
