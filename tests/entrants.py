"""What an entrant uploads, for the upload, web and bench tests: the sample uploads of sample_bots/upload (a Python
bot of the standard library, a C bot the arena builds) under a name of the test's, packed as an archive."""

from __future__ import annotations

import io
import re
import tarfile
from pathlib import Path

SAMPLES = Path(__file__).resolve().parents[1] / "sample_bots"
#: What the sample Python bot writes to stderr at every request (only its author may read it).
STDERR_MARK = "firstbot ponders"


def named(manifest: str, name: str) -> str:
    return re.sub(r'(?m)^name = "[^"]*"', f'name = "{name}"', manifest)


def python_bot(name: str) -> dict[str, str]:
    """The sample Python upload, its manifest naming ``name``."""
    folder = SAMPLES / "upload" / "python"
    manifest = named((folder / "durak-bot.toml").read_text(), name)
    return {"durak-bot.toml": manifest, "bot.py": (folder / "bot.py").read_text()}


def c_bot(name: str) -> dict[str, str]:
    """The sample C upload (its manifest builds it), naming ``name``, with the sample C bot's source."""
    manifest = (SAMPLES / "upload" / "c" / "durak-bot.toml").read_text()
    return {"durak-bot.toml": named(manifest, name), "bot.c": (SAMPLES / "c" / "bot.c").read_text()}


def tar_gz(files: dict[str, str | bytes], top: str = "") -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, content in files.items():
            data = content.encode() if isinstance(content, str) else content
            info = tarfile.TarInfo(f"{top}{name}")
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def crashing_bot(name: str, prefix: str, marker: str) -> str:
    """A standard-library Python bot that plays the first legal action and crashes in every game whose id starts
    with ``prefix`` and holds ``marker`` (a league game's id is ``g<group>|r<rotation>|g1``, a side game's
    ``s<request>|d<deal>|r<rotation>|g1``), so it passes its gate and fails only those games."""
    return f"""\
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "hello":
        print(json.dumps({{"type": "hello", "protocol": 2, "name": "{name}"}}), flush=True)
    elif message["type"] == "request":
        if message["game"].startswith("{prefix}") and "{marker}" in message["game"]:
            sys.exit("{name}: these games are not my thing")
        print(json.dumps({{"type": "action", "id": message["id"], "action": message["legal"][0]}}), flush=True)
    elif message["type"] == "shutdown":
        break
"""
