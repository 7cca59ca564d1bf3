"""A hostile entrant that hunts the tournament seed (tests/test_hostile_seed.py).

During its handshake it walks every file it can read (its own folder and the folders above it first, then
/tmp, /work, /root, /home, /etc, /var..., then all of /; never /proc, /sys or /dev; files up to 1 MiB; for
a bounded time) and keeps every integer of 6 to 19 digits below 2**63 as a candidate seed; ``THIEF_HINT``
in its environment adds one more (the test's control). At each game it derives, for every candidate, the
hand it would be dealt (derive.py: the public derivation) and compares it with the hand it was dealt.
It reports on stderr, one JSON line each: ``THIEF {"walk": ...}`` once and ``THIEF {"game": ...}`` per
game; ``THIEF_PROBE`` (a JSON list of paths) asks it to say how opening each one went. It plays the first
legal action. ``THIEF_SECONDS`` (default 4) bounds the walk. Standard library only.
"""
import errno
import json
import os
import re
import stat
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from derive import dealt

SKIPPED = ("/proc", "/sys", "/dev")
MAX_FILE = 1 << 20
NUMBER = re.compile(rb"(?<![0-9])[0-9]{6,19}(?![0-9])")
CHECK_SECONDS = 0.6  # per game: the first move's clock runs meanwhile
candidates: dict[int, list[str]] = {}  # candidate seed -> where it was found, in the order found


def report(**fields: object) -> None:
    print("THIEF " + json.dumps(fields), file=sys.stderr, flush=True)


def roots() -> list[str]:
    here = os.getcwd()
    ups = [here]
    while ups[-1] != "/":
        ups.append(os.path.dirname(ups[-1]))
    extra = [os.environ.get("HOME", ""), os.environ.get("TMPDIR", ""), "/tmp", "/work", "/root", "/home", "/etc",
             "/var", "/opt", "/srv", "/mnt", "/usr", "/"]
    return list(dict.fromkeys(path for path in ups[:-1] + extra if path))


def read_numbers(path: str, seen: set[tuple[int, int]], stats: dict[str, int]) -> None:
    try:
        info = os.lstat(path)
    except OSError:
        return
    if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_FILE:
        return  # only regular files, up to 1 MiB
    if (info.st_dev, info.st_ino) in seen:
        return
    seen.add((info.st_dev, info.st_ino))
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    except OSError:
        stats["denied"] += 1
        return
    try:
        data = os.read(fd, MAX_FILE)
    except OSError:
        stats["denied"] += 1
        return
    finally:
        os.close(fd)
    stats["files"] += 1
    for match in NUMBER.finditer(data):
        value = int(match.group())
        if value < 2**63:
            found = candidates.setdefault(value, [])
            if path not in found:
                found.append(path)


def walk_tree(root: str, deadline: float, seen: set[tuple[int, int]], stats: dict[str, int]) -> bool:
    """Read every file under ``root`` (links not followed, 40 levels at most); False if time ran out."""
    stack = [(root, 0)]
    while stack:
        folder, depth = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                if entry.path not in SKIPPED and depth < 40:
                    stack.append((entry.path, depth + 1))
            else:
                read_numbers(entry.path, seen, stats)
        if time.monotonic() > deadline:
            return False
    return True


def walk(seconds: float) -> None:
    hint = os.environ.get("THIEF_HINT")
    if hint:
        candidates.setdefault(int(hint), []).append("$THIEF_HINT")
    deadline = time.monotonic() + seconds
    seen: set[tuple[int, int]] = set()
    stats = {"files": 0, "denied": 0}
    done: dict[str, int] = {}  # root walked to its end -> candidates found so far
    for root in roots():
        if not walk_tree(root, deadline, seen, stats):
            break
        done[root] = len(candidates)
    probes = {}
    for path in json.loads(os.environ.get("THIEF_PROBE", "[]")):
        try:
            with open(path, "rb") as file:
                file.read(1)
            probes[path] = "read"
        except OSError as exc:
            probes[path] = errno.errorcode.get(exc.errno or 0, str(exc))
    report(walk={"roots_done": done, "candidates": len(candidates), "probes": probes, "uid": os.getuid(), **stats})


def check(game: dict) -> None:
    """Does any candidate reproduce the hand this seat was dealt? Checked in the order found (the hint, then
    the nearest folders first) while the time allows."""
    shown = (sorted(game["view"]["hand"]), game["view"]["trump"], game["dealer"])
    deadline = time.monotonic() + CHECK_SECONDS
    checked, hits = 0, []
    for seed in candidates:
        if time.monotonic() > deadline:
            break
        checked += 1
        if dealt(seed, game["game"], game["seat"], game["players"], game["rules"]["deck"]) == shown:
            hits += candidates[seed]
    report(game={"id": game["game"], "predicted": bool(hits), "sources": hits, "checked": checked,
                 "candidates": len(candidates)})


def send(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main() -> None:
    for line in sys.stdin:
        message = json.loads(line)
        kind = message.get("type")
        if kind == "hello":
            budget = float(os.environ.get("THIEF_SECONDS", "4"))
            walk(max(0.5, min(budget, message["time_ms"] / 1000 - 4.0)))  # well inside the startup time
            send({"type": "hello", "protocol": message["protocol"], "name": "thief", "version": "1"})
        elif kind == "game":
            check(message)
        elif kind == "request":
            send({"type": "action", "id": message["id"], "action": message["legal"][0]})
        elif kind == "shutdown":
            break


if __name__ == "__main__":
    main()
