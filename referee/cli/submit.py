"""``durak submit URL DIR``: upload a bot folder to a web arena (``durak serve``) from a terminal, and follow its
steps (extract, build, check, gate) to the outcome, as the upload page shows them.

The token comes from ``--token-file`` or the ``DURAK_TOKEN`` environment variable, never from an argument (which
``ps`` shows every user), and is sent only over https, or plain http to this machine's own loopback.
"""

from __future__ import annotations

import io
import os
import tarfile
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Annotated

import msgspec
import typer

from referee.cli.app import app
from referee.cli.errors import SubmitError, UsageError, reported_errors
from referee.cli.exitcodes import ExitCode
from referee.league.botstore import folder_problem
from referee.league.manifest import Manifest, ManifestError, read_manifest
from referee.text import visible
from referee.web.models import UploadAccepted, UploadOut
from referee.web.privileges import is_loopback

#: Seconds between two looks at the upload's progress.
POLL_SECONDS = 0.5
#: Seconds one request may take.
REQUEST_SECONDS = 60.0


@app.command("submit")
def submit_command(
    url: Annotated[str, typer.Argument(help="The arena's address (https://arena.example, or http://127.0.0.1:8000).")],
    folder: Annotated[Path, typer.Argument(help="The bot's folder, with its durak-bot.toml manifest.")],
    token_file: Annotated[Path | None, typer.Option("--token-file", help="A file holding your token (default: the "
                                                    "DURAK_TOKEN environment variable).")] = None,
    wait: Annotated[float, typer.Option("--wait", min=0, help="Seconds to follow the upload's steps (0: do not "
                                        "wait).")] = 600.0,
) -> None:
    """Upload a bot folder to a web arena and follow its extract, build, check and gate steps to the outcome
    (exit 0 accepted, 7 refused); the token comes from --token-file or DURAK_TOKEN, never an argument."""
    with reported_errors():
        base = _arena_url(url)
        token = _token(token_file)
        manifest = _manifest(folder)
        archive = pack_folder(folder)
        typer.echo(f"uploading {visible(manifest.name)}: {len(archive)} bytes packed", err=True)
        answer = msgspec.json.decode(_request(f"{base}/api/uploads?bot={urllib.parse.quote(manifest.name)}", token,
                                              archive), type=UploadAccepted)
        typer.echo(f"upload {answer.upload}: {visible(answer.status)}", err=True)
        if wait > 0:
            _follow(urllib.parse.urljoin(base + "/", answer.url.lstrip("/")), token, wait)


def pack_folder(folder: Path) -> bytes:
    """The folder as a .tar.gz: regular files and folders only (a link is refused, as the league refuses it),
    owner and times left out, names relative to the folder."""
    problem = folder_problem(folder)
    if problem is not None:
        raise UsageError(problem)
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for path in sorted(folder.rglob("*")):
            info = tar.gettarinfo(str(path), arcname=path.relative_to(folder).as_posix())
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            info.mtime = 0
            if info.isdir():
                tar.addfile(info)
            else:
                with open(path, "rb") as file:
                    tar.addfile(info, file)
    return buffer.getvalue()


def _follow(url: str, token: str, wait: float) -> None:
    """Print each new step of the upload until it is accepted (exit 0) or refused (exit 7), or ``wait`` runs out."""
    deadline = time.monotonic() + wait
    shown = 0
    while True:
        state = msgspec.json.decode(_request(url, token), type=UploadOut)
        for step in state.steps[shown:]:
            typer.echo(f"{visible(step.step)}: {'ok' if step.ok else 'FAILED'} ({step.seconds:.1f} s): "
                       f"{visible(step.detail)}")
        shown = len(state.steps)
        if state.status in ("accepted", "refused"):
            break
        if time.monotonic() >= deadline:
            typer.echo(f"still {visible(state.status)} after {wait:g} s: the arena's upload page shows what comes "
                       "of it", err=True)
            raise typer.Exit(int(ExitCode.CHECK_FAILED))
        time.sleep(POLL_SECONDS)
    for title, log in (("build output", state.build_log), ("gate", state.gate_log)):
        if log and (state.status == "refused" or title == "gate"):
            typer.echo(f"--- {title} ---")
            # Entrant text: only its newlines are kept; a carriage return, a NEL or U+2028 is shown escaped, not
            # taken for a line break (str.splitlines would), and so are ANSI sequences and bidi overrides.
            typer.echo(visible(log.rstrip("\n"), lines=True))
    if state.status == "refused":
        typer.echo("refused", err=True)
        raise typer.Exit(int(ExitCode.CHECK_FAILED))
    typer.echo(f"accepted: {visible(state.version or '')}")


def _request(url: str, token: str, body: bytes | None = None) -> bytes:
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json"}
    if body is not None:
        headers["Content-Type"] = "application/gzip"
    request = urllib.request.Request(url, data=body, headers=headers, method="POST" if body is not None else "GET")
    try:
        with urllib.request.urlopen(request, timeout=REQUEST_SECONDS) as answer:
            data: bytes = answer.read()
            return data
    except urllib.error.HTTPError as error:
        raise SubmitError(f"the arena answered {error.code}: {_detail(error.read())}") from None
    except (urllib.error.URLError, OSError) as error:
        reason = getattr(error, "reason", error)
        raise SubmitError(f"cannot reach the arena at {url.split('?')[0]}: {reason}") from None


def _detail(body: bytes) -> str:
    """The server's one-line reason (Litestar answers ``{"detail": ...}``), shown escaped."""
    try:
        detail = msgspec.json.decode(body).get("detail", "")
    except (msgspec.DecodeError, AttributeError):
        detail = body[:200].decode("utf-8", "replace")
    return visible(str(detail)) or "no reason given"


def _arena_url(url: str) -> str:
    parsed = urllib.parse.urlsplit(url)
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        raise UsageError(f"bad arena address {url!r}: give https://HOST[:PORT] (or http:// to this machine)")
    if parsed.scheme == "http" and not is_loopback(parsed.hostname):
        raise UsageError(f"{url!r} is plain http to another machine: the token would cross the network in clear; "
                         "use https (the arena behind a TLS proxy)")
    return url.rstrip("/")


def _token(token_file: Path | None) -> str:
    if token_file is not None:
        try:
            token = token_file.read_text().strip()
        except OSError as exc:
            raise UsageError(f"cannot read --token-file {str(token_file)!r}: {exc.strerror}") from None
    else:
        token = os.environ.get("DURAK_TOKEN", "").strip()
    if not token:
        raise UsageError("no token: put it in a file (--token-file FILE) or in DURAK_TOKEN, never on the command line")
    return token


def _manifest(folder: Path) -> Manifest:
    try:
        return read_manifest(folder)
    except ManifestError as exc:
        raise UsageError(f"{folder}: {exc}") from None
