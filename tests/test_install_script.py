"""``scripts/install`` (the README's first line) says what it is doing: a line before each step that takes time
(creating the venv; installing, where the engine compiles for about a minute) and one when it is done, never a
minute of silence (issue 38, item 19).

The real script runs on a copy of the checkout, with the pure engine and offline: ``--no-deps
--no-build-isolation --no-use-pep517`` go to pip as the script promises (its arguments), a development install by
setup.py that needs no wheel built, for which the copy's pyproject.toml loses its ``[build-system]`` table (pip
refuses ``--no-use-pep517`` beside one). The steps and their lines are the real ones, in a few seconds."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def checkout_copy(folder: Path) -> Path:
    """The tracked files of this checkout as they are committed (``git archive HEAD``), under ``folder``, with the
    install script as it is now (the one under test)."""
    folder.mkdir(parents=True)
    archive = subprocess.run(["git", "archive", "HEAD"], cwd=ROOT, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    (folder / "scripts" / "install").write_bytes((ROOT / "scripts" / "install").read_bytes())
    project = folder / "pyproject.toml"
    kept, skipping = [], False
    for line in project.read_text().splitlines(keepends=True):
        if line.startswith("["):
            skipping = line.strip() == "[build-system]"
        if not skipping:
            kept.append(line)
    project.write_text("".join(kept))
    return folder


def test_the_install_says_what_it_does_before_each_long_step(tmp_path: Path) -> None:
    copy = checkout_copy(tmp_path / "durak")
    env = {**os.environ, "DURAK_PURE": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    ran = subprocess.run(["bash", "scripts/install", "--no-deps", "--no-build-isolation", "--no-use-pep517"],
                         cwd=copy, env=env, capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)
    lines = ran.stdout.splitlines()
    assert ran.returncode == 0, ran.stderr
    assert len(lines) == 3, lines  # pip itself stays quiet
    assert lines[0].startswith("install: creating .venv with ") and " 3." in lines[0], lines
    assert lines[1] == ("install: installing durak-referee and its dependencies into .venv, "
                        "the pure-Python engine (DURAK_PURE)"), lines
    assert lines[2].startswith("install: done in "), lines  # its durak --version needs the dependencies left out
    assert (copy / ".venv" / "bin" / "durak").exists()
