"""The web tests leave no folder behind: each module's league (:func:`tests.webdb.built`) is removed after its
last test, and a test's copy lives in pytest's own ``tmp_path``. Each module fixture that made a league of its own
in the temporary folder, and left it there, is run here through its life with a temporary folder of its own,
which must be empty once the fixture ends."""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests import test_query_plans, test_web_games_pages, test_web_table_stream, test_web_tables


def raw(fixture: Any) -> Callable[..., Iterator[Any]]:
    """The function under a pytest fixture (pytest refuses a fixture called directly)."""
    function: Callable[..., Iterator[Any]] = fixture.__wrapped__
    return function


@pytest.mark.parametrize("module", [test_web_games_pages, test_query_plans, test_web_table_stream, test_web_tables])
def test_a_web_modules_leagues_leave_no_folder(module: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    own = tmp_path / "tmp"
    own.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(own))
    lived = []
    for name in ("web", "traced", "arena", "base"):  # the module's own league, as pytest sets it up and tears it down
        if hasattr(module, name):
            life = raw(getattr(module, name))()
            league = next(life)
            assert list(own.iterdir())  # the control: the league is in the temporary folder while it lives
            if name == "base" and hasattr(module, "db"):  # a test's copy: in pytest's tmp_path (pytest's to remove)
                (tmp_path / "copy").mkdir()
                assert tmp_path / "copy" in raw(module.db)(league, tmp_path / "copy").path.parents
            life.close()
            lived.append(name)
    assert lived and list(own.iterdir()) == []
