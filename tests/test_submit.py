"""durak submit's own checks, before and around the arena: the token's sources, the address, the folder, the
manifest, and an arena that cannot be reached (the round trip through a real server is in the web tests)."""

from __future__ import annotations

import http.server
import io
import json
import os
import re
import tarfile
import threading
from pathlib import Path

import pytest

from referee.cli.submit import pack_folder
from tests.clirun import invoke
from tests.webkit import free_port

MANIFEST = 'name = "mybot"\ncommand = "python3 bot.py"\n'
TOKEN = "durak_1_" + "a" * 43


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    bot = tmp_path / "mybot"
    (bot / "lib").mkdir(parents=True)
    (bot / "durak-bot.toml").write_text(MANIFEST)
    (bot / "bot.py").write_text("print('hi')\n")
    (bot / "lib" / "helper.py").write_text("X = 1\n")
    (bot / "bot.py").chmod(0o755)
    return bot


def test_a_folder_is_packed_with_its_files_only(folder: Path) -> None:
    with tarfile.open(fileobj=io.BytesIO(pack_folder(folder)), mode="r:gz") as tar:
        members = {m.name: m for m in tar.getmembers()}
    assert sorted(members) == ["bot.py", "durak-bot.toml", "lib", "lib/helper.py"]
    assert members["bot.py"].mode & 0o111 and {m.uid for m in members.values()} == {0}
    assert {m.uname for m in members.values()} == {""} and {m.mtime for m in members.values()} == {0}


@pytest.mark.parametrize(("args", "env", "why"), [
    (("http://127.0.0.1:1", "{folder}"), {}, "no token"),
    (("http://arena.example", "{folder}"), {"DURAK_TOKEN": TOKEN}, "plain http to another machine"),
    (("ftp://127.0.0.1", "{folder}"), {"DURAK_TOKEN": TOKEN}, "bad arena address"),
    (("http://127.0.0.1:1", "{folder}", "--token-file", "{folder}/missing"), {}, "cannot read --token-file"),
    (("http://127.0.0.1:1", "{folder}/lib"), {"DURAK_TOKEN": TOKEN}, "durak-bot.toml"),
])
def test_bad_input_is_refused_in_one_line(folder: Path, monkeypatch: pytest.MonkeyPatch, args: tuple[str, ...],
                                          env: dict[str, str], why: str) -> None:
    monkeypatch.delenv("DURAK_TOKEN", raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    ran = invoke("submit", *(arg.format(folder=folder) for arg in args))
    assert ran.code == 2 and why in ran.err and len(ran.err.strip().splitlines()) == 1, ran.output


def test_a_link_in_the_folder_is_refused(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DURAK_TOKEN", TOKEN)
    os.symlink("/etc/passwd", folder / "passwd")
    ran = invoke("submit", "http://127.0.0.1:1", str(folder))
    assert ran.code == 2 and "link" in ran.err, ran.output


def test_an_arena_that_cannot_be_reached_exits_13_without_showing_the_token(folder: Path, tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    ran = invoke("submit", f"http://127.0.0.1:{free_port()}", str(folder), "--token-file", str(token_file))
    assert ran.code == 13 and "cannot reach the arena" in ran.err, ran.output
    assert TOKEN not in ran.output and "a" * 43 not in ran.output


#: An entrant's build log and gate log as a hostile build would leave them: a screen clear, a carriage return that
#: would overwrite the line before, a NEL and U+2028 that str.splitlines takes for line breaks, a bidi override.
HOSTILE_LOG = "compiling\x1b[2J\rACCEPTED\x85fake\u2028line \u202eevil\nlast line\n"


class _Arena(http.server.BaseHTTPRequestHandler):
    """A fake arena: accepts an upload, then answers that it was refused, with :data:`HOSTILE_LOG` as its logs."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        self._answer({"upload": 1, "status": "queued", "url": "/api/uploads/1"})

    def do_GET(self) -> None:
        step = {"step": "build", "ok": False, "detail": "exit 1\r\x1b[32mok", "seconds": 0.5}
        self._answer({"id": 1, "author": "a", "bot": "mybot", "created": "", "size": 1, "status": "refused",
                      "steps": [step], "build_log": HOSTILE_LOG, "gate_log": HOSTILE_LOG, "version": None,
                      "finished": ""})

    def _answer(self, body: object) -> None:
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:
        pass


def test_an_uploads_logs_are_printed_with_their_controls_escaped(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The build and gate logs are the entrant's text: printed with visible(lines=True), every control and bidi
    character escaped and only the newlines kept (color on: click strips nothing)."""
    monkeypatch.setenv("DURAK_TOKEN", TOKEN)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Arena)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        ran = invoke("submit", f"http://127.0.0.1:{server.server_address[1]}", str(folder), color=True)
    finally:
        server.shutdown()
        server.server_close()
    assert ran.code == 7, ran.output
    escaped = r"compiling\x1b[2J\x0dACCEPTED\x85fake\u2028line \u202eevil" + "\nlast line\n"
    assert ran.out == (r"build: FAILED (0.5 s): exit 1\x0d\x1b[32mok" + "\n"
                       f"--- build output ---\n{escaped}--- gate ---\n{escaped}"), ran.out
    assert not re.search("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u202e]", ran.output), ran.output
