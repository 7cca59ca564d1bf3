"""Feed a running league daemon generated uploads for a while and check that it stays up (issue 35).

    python -m bench.fuzz_daemon [--seconds 600] [--sandbox bwrap|process] [--seed N]

Starts ``durak league run`` on a fresh league of the two sample Python bots in a temporary folder, then, for
``--seconds``, stores uploads as the web server would (an archive and its request in one transaction), at most a
few waiting at a time: manifests that nest thousands of arrays or inline tables, bytes that are no archive, archives
cut short, members that are links, devices, FIFOs or hard links, names with ``..`` or bidi characters, fields of the
wrong type, builds that fail, commands that do not exist. Then it waits for every request to end and prints what
became of them. Exit 0 when the daemon stayed up, kept playing, and every request and upload ended in a final
state with nothing written outside the store; 1 otherwise. Run by hand (tests/test_upload_fuzz.py is CI's slice).
"""

from __future__ import annotations

import argparse
import collections
import io
import os
import random
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from pathlib import Path

from referee.league.authors import new_author
from referee.results.arena_store import ArenaStore

ROOT = Path(__file__).resolve().parents[1]
CONFIG = """name = "fuzzed league"
players = 2
sandbox = "{sandbox}"
[league]
refit_seconds = 5
gate_games = 1
[arena]
build_seconds = 5
uploads_per_hour = 1000000
[[bots]]
name = "random"
command = "{{python}} random_bot.py"
dir = "bots"
author = "organizer-a"
[[bots]]
name = "heuristic"
command = "{{python}} heuristic_bot.py"
dir = "bots"
author = "organizer-b"
"""
#: Uploads waiting at once: the daemon carries them out one by one between batches.
IN_FLIGHT = 4


def manifest(rng: random.Random) -> bytes:
    if rng.random() < 0.4:  # well formed, with a build or a command that fails in its own way
        build = rng.choice(["", "true", "sh -c 'exit 3'", "ln -s /etc/shadow shadow", "sh -c 'yes > f'",
                            "sh -c 'cat /proc/self/status; sleep 60'"])
        command = rng.choice(["python3 bot.py", "./nope", "/bin/false", "/root/x", "cat /etc/shadow"])
        return (f'name = "fuzz"\ncommand = "{command}"\n' + (f'build = "{build}"\n' if build else "")).encode()
    depth = rng.choice([10, 500, 3000, 20000])
    values = ['"fuzz"', '"x"', '["x", "y"]', '""', "[]", "3", '"../../etc/passwd"', '"\\u202e"', '{ a = 1 }',
              "[" * depth + "]" * depth, "{a=" * depth + "1" + "}" * depth, '"' + "x" * rng.choice([10, 5000]) + '"',
              '"sh -c \'exit 1\'"', '["/bin/false"]', '"ln -s /etc/shadow shadow"']
    keys = ["command", "build", "description", "env", "extra", "env.PATH", "env.LD_PRELOAD", "name"]
    lines = ['name = "fuzz"'] + [f"{rng.choice(keys)} = {rng.choice(values)}" for _ in range(rng.randint(0, 5))]
    text = "\n".join(lines).encode()
    if rng.random() < 0.1:
        return bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 300)))
    return text


def archive(rng: random.Random) -> bytes:
    clean = rng.random() < 0.5  # half the archives are well formed, so that the manifest, build and gate are reached
    names = ["bot.py", "a/b/c.txt", "lib/x.py"] if clean else ["bot.py", "a/b/c.txt", "../escape", "/abs", "./x",
                                                                "a/../../y", "x" * 300, "\u202ename", "con"]
    files = {rng.choice(names): os.urandom(rng.randint(0, 200)) for _ in range(rng.randint(0, 4))}
    kind = "tar.gz" if clean else rng.choice(["tar.gz", "tar", "zip", "bytes", "cut"])
    if kind == "bytes":
        return os.urandom(rng.randint(0, 2000))
    buffer = io.BytesIO()
    if kind == "zip":
        with zipfile.ZipFile(buffer, "w") as packed:
            packed.writestr("durak-bot.toml", manifest(rng))
            for name, data in files.items():
                packed.writestr(name, data)
        return buffer.getvalue()
    with tarfile.open(fileobj=buffer, mode="w" if kind == "tar" else "w:gz") as tar:
        for name, data in {"durak-bot.toml": manifest(rng), **files}.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        odd = "none" if clean else rng.choice(["none", tarfile.SYMTYPE, tarfile.LNKTYPE, tarfile.CHRTYPE,
                                                 tarfile.FIFOTYPE])
        if odd != "none":
            info = tarfile.TarInfo("odd")
            info.type, info.linkname = odd, "/etc/shadow"
            tar.addfile(info)
    packed_bytes = buffer.getvalue()
    return packed_bytes[:rng.randint(0, len(packed_bytes))] if kind == "cut" else packed_bytes


def outside(folder: Path) -> set[str]:
    skip = {"league-bots", "league-private"}
    found = set()
    for top, dirs, names in os.walk(folder):
        dirs[:] = [d for d in dirs if not (Path(top) == folder and d in skip)]
        found.update(str(Path(top) / name) for name in names if not name.startswith("league.db"))
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=600.0)
    parser.add_argument("--sandbox", choices=["bwrap", "process"], default="bwrap")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    folder = Path(tempfile.mkdtemp(prefix="durak-fuzz-daemon-"))
    folder.chmod(0o755)
    (folder / "bots").mkdir(mode=0o755)
    for name in ("random_bot.py", "heuristic_bot.py"):
        shutil.copy(ROOT / "sample_bots" / "python" / name, folder / "bots" / name)
    (folder / "league.toml").write_text(CONFIG.format(sandbox=args.sandbox))
    db = folder / "league.db"
    log = open(folder / "daemon.log", "wb")  # noqa: SIM115 (kept open for the daemon's life)
    daemon = subprocess.Popen([sys.executable, "-m", "referee", "league", "run", str(folder / "league.toml"),
                               "--db", str(db), "--jobs", "1"], stdout=log, stderr=subprocess.STDOUT, cwd=ROOT)
    try:
        while not db.exists() or ArenaStore(db).league() is None:
            time.sleep(0.2)
        with ArenaStore(db) as store:
            league = store.league()
            assert league is not None
            new_author(store, "fuzzer")
            before = outside(folder)
            asked: list[int] = []
            deadline = time.monotonic() + args.seconds
            while time.monotonic() < deadline and daemon.poll() is None:
                waiting = sum(1 for r in store.pending_requests(league.id) if r.kind == "upload")
                if waiting < IN_FLIGHT:
                    asked.append(store.add_upload(league.id, "fuzzer", "fuzz", archive(rng), "sha").id)
                    if len(asked) % 50 == 0:
                        print(f"{len(asked)} uploads, {store.count_games(league.id)} games", file=sys.stderr)
                time.sleep(0.05)
            while daemon.poll() is None and store.pending_requests(league.id):
                time.sleep(0.5)
            alive = daemon.poll() is None
            uploads = [store.upload(n) for n in asked]
            requests = [store.request(u.request_id or 0) for u in uploads]
            games = store.count_games(league.id)
            after = outside(folder)
    finally:
        daemon.terminate()
        daemon.wait(60)
        log.close()
    statuses = collections.Counter(r.status for r in requests)
    steps = collections.Counter(u.steps[-1].step if u.steps else "-" for u in uploads)
    print(f"{len(asked)} uploads in {args.seconds:g} s; daemon up: {alive}; games stored meanwhile: {games}")
    print(f"requests: {dict(statuses)}; the step each upload ended at: {dict(steps)}")
    final = all(r.status in ("done", "refused", "failed") for r in requests) and all(u.done for u in uploads)
    print(f"every request and upload final: {final}; files written outside the store: {sorted(after - before)}")
    ok = alive and final and after == before and games > 0
    if ok:
        shutil.rmtree(folder)
    else:
        print(f"kept for a look: {folder}", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
