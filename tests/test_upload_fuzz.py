"""Generated manifests and archives thrown at the whole upload path, as the daemon carries uploads out (issue 35):
whatever the bytes, the daemon's request loop returns, every request and upload ends in a final state, and nothing
outside the bot store changes.

CI runs a short slice (``DURAK_FUZZ_EXAMPLES``, 40 by default); bench/fuzz_daemon.py feeds a running daemon for
as long as asked (ten minutes by hand).
"""

from __future__ import annotations

import io
import os
import tarfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from referee.league.authors import new_author
from referee.league.config import load_league
from referee.league.daemon import open_league, protected_paths
from referee.league.lifecycle import Lifecycle
from referee.results.arena_store import ArenaStore

EXAMPLES = int(os.environ.get("DURAK_FUZZ_EXAMPLES", "40"))

#: Manifest values: plain, odd, huge, nested, of the wrong type.
_VALUES = st.one_of(
    st.sampled_from(['"fuzz"', '"x"', '["x", "y"]', '""', "[]", "3", "true", '"../../etc/passwd"', '"\\u202e"',
                     '"a\\u0000b"', '{ a = 1 }', '"' + "x" * 5000 + '"']),
    st.integers(1, 3000).map(lambda depth: "[" * depth + "]" * depth),
    st.integers(1, 3000).map(lambda depth: "{a=" * depth + "1" + "}" * depth),
    st.text(max_size=40).map(lambda text: '"' + text.replace("\\", "").replace('"', "") + '"'),
)
_KEYS = st.sampled_from(["name", "command", "build", "description", "env", "extra", "env.PATH", "env.LD_PRELOAD"])
MANIFESTS = st.one_of(
    st.lists(st.tuples(_KEYS, _VALUES), max_size=6).map(
        lambda pairs: 'name = "fuzz"\n' + "".join(f"{key} = {value}\n" for key, value in pairs)),
    st.binary(max_size=300),
    st.text(max_size=300),
)
_NAMES = st.one_of(st.sampled_from(["bot.py", "a/b/c.txt", "../escape", "/abs", "./x", "a/../../y", "dir/",
                                    "x" * 300, "\u202ename", "con", ""]),
                   st.text(min_size=1, max_size=20))
_FILES = st.dictionaries(_NAMES, st.binary(max_size=200), max_size=5)


def _tar(manifest: str | bytes, files: dict[str, bytes], odd: str, gz: bool) -> bytes:
    buffer = io.BytesIO()
    data = manifest.encode() if isinstance(manifest, str) else manifest
    with tarfile.open(fileobj=buffer, mode="w:gz" if gz else "w") as tar:
        for name, content in {"durak-bot.toml": data, **files}.items():
            info = tarfile.TarInfo(name)
            info.size = len(content)
            tar.addfile(info, io.BytesIO(content))
        if odd != "none":  # a link, a device, a FIFO or a hard link member
            info = tarfile.TarInfo(f"odd-{odd}")
            info.type = {"symlink": tarfile.SYMTYPE, "hardlink": tarfile.LNKTYPE, "device": tarfile.CHRTYPE,
                         "fifo": tarfile.FIFOTYPE}[odd]
            info.linkname = "/etc/shadow"
            tar.addfile(info)
    return buffer.getvalue()


def _zip(manifest: str | bytes, files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("durak-bot.toml", manifest)
        for name, content in files.items():
            archive.writestr(name or "empty", content)
    return buffer.getvalue()


@st.composite
def archives(draw: st.DrawFn) -> bytes:
    manifest, files = draw(MANIFESTS), draw(_FILES)
    kind = draw(st.sampled_from(["tar.gz", "tar", "zip", "bytes", "cut"]))
    if kind == "bytes":
        return draw(st.binary(max_size=2000))
    if kind == "zip":
        return _zip(manifest, files)
    packed = _tar(manifest, files, draw(st.sampled_from(["none", "symlink", "hardlink", "device", "fifo"])),
                  gz=kind != "tar")
    return packed[:draw(st.integers(0, len(packed)))] if kind == "cut" else packed


def outside_the_store(folder: Path, db: Path) -> dict[str, tuple[int, int]]:
    """Every file and folder under ``folder`` but the bot store's, the database's and the lock's: size and mode."""
    seen = {}
    skipped = (f"{db.stem}-bots", f"{db.stem}-private", db.name)
    for top, dirs, names in os.walk(folder):
        dirs[:] = [d for d in dirs if not (Path(top) == folder and d in skipped)]
        for name in names + dirs:
            path = Path(top) / name
            if Path(top) == folder and name.startswith(db.name):
                continue
            info = path.lstat()
            seen[str(path)] = (info.st_size, info.st_mode)
    return seen


@pytest.fixture(scope="module")
def arena() -> Iterator[tuple[ArenaStore, Lifecycle]]:
    import shutil
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="durak-fuzz-"))
    folder.chmod(0o755)
    (folder / "other").mkdir()
    (folder / "other" / "keep.txt").write_text("outside the store")
    config = folder / "league.toml"
    config.write_text('name = "fuzz league"\nplayers = 2\nsandbox = "process"\n[league]\ngate_games = 1\n'
                      "[arena]\nbuild_seconds = 5\n")
    loaded = load_league(config)
    with ArenaStore(folder / "league.db") as store:
        league = open_league(store, loaded)
        new_author(store, "alice")
        yield store, Lifecycle(store, league, loaded, loaded.table.isolation(protected_paths(store.path)))
    shutil.rmtree(folder)


@settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                 HealthCheck.data_too_large])
@given(archive=archives())
@example(archive=_tar('name = "deep"\ncommand = "x"\nx = ' + "[" * 3000 + "]" * 3000, {}, "none", gz=True))
@example(archive=_tar('name = "deep"\ncommand = "x"\nx = ' + "{a=" * 3000 + "1" + "}" * 3000, {}, "none", gz=False))
def test_no_upload_stops_the_daemon_or_writes_outside_the_store(arena: tuple[ArenaStore, Lifecycle],
                                                                archive: bytes) -> None:
    store, lifecycle = arena
    before = outside_the_store(store.path.parent, store.path)
    upload = store.add_upload(lifecycle.league.id, "alice", "fuzz", archive, "sha")
    lifecycle.apply()  # returns: whatever the bytes, no exception leaves the daemon's request loop
    done = store.upload(upload.id)
    assert done.status in ("accepted", "refused"), done
    assert store.request(upload.request_id or 0).status in ("done", "refused", "failed")
    assert store.pending_requests(lifecycle.league.id) == []
    assert outside_the_store(store.path.parent, store.path) == before
    assert not os.listdir(lifecycle.root / ".uploads")
