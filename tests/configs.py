"""Tournament configs for tests, written in one place: a header of top-level keys, a move time, the bots."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Bot:
    """One ``[[bots]]`` entry; ``dir`` relative to the config's folder, or absolute."""

    name: str
    command: str
    dir: str | Path
    files: Sequence[str] | None = None


def config_text(bots: Sequence[Bot], *, header: str = 'name = "t"', move: float | None = None) -> str:
    """The TOML of a config: ``header`` (raw TOML lines), a ``[time]`` table when ``move`` is given, the bots."""
    lines = [header.rstrip("\n")]
    if move is not None:
        lines.append(f"[time]\nmove = {move}")
    for bot in bots:
        entry = f"[[bots]]\nname = {json.dumps(bot.name)}\ncommand = {json.dumps(bot.command)}\n" \
                f"dir = {json.dumps(str(bot.dir))}"
        if bot.files is not None:
            entry += f"\nfiles = {json.dumps(list(bot.files))}"
        lines.append(entry)
    return "\n".join(lines) + "\n"


def write_toml(path: Path, bots: Sequence[Bot], *, header: str = 'name = "t"', move: float | None = None) -> Path:
    """Writes :func:`config_text` to ``path`` and returns ``path``."""
    path.write_text(config_text(bots, header=header, move=move))
    return path
