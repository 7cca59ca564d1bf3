"""A Durak bot that plays the first legal action and misbehaves as told (tests/test_match_hostile_bots.py).

    bot.py BEHAVIOUR [after=N] [delay=SECONDS] [log=FILE] [once=FILE] [fork=1] [term=ignore]

It answers the handshake and its first N requests (default 0) correctly, then misbehaves on request N+1
as BEHAVIOUR says (``not_held`` waits for a request that lets it attack). ``play`` and ``crlf`` never
misbehave. ``crash_at_start``, ``mute`` and ``bad_version`` misbehave before or at the handshake;
``quit_after_game`` and ``ack_game_over`` at their first game over.

``log=FILE`` appends every line received. ``once=FILE`` misbehaves only in the first process to create
FILE, so a restarted bot plays correctly. ``fork=1`` first forks a child that sleeps (and prints
"forked PID" to stderr). ``fill=FOLDER`` first writes 1 MiB files there until a write fails; ``deep=N`` first
builds a folder chain N deep in its TMPDIR (both print what they did to stderr). ``term=ignore`` ignores
SIGTERM, so only SIGKILL stops it. ``saw=1`` writes "saw N" to stderr at each request, N the game's events
it has been sent so far (this request's too), and "over N" at game over. ``version=flip`` reports a new version in
every handshake. Standard library
only: it runs under ``python -S``.
"""
import json
import os
import signal
import sys
import time

CARDS = [rank + suit for rank in "6789TJQKA" for suit in "CDHS"]
MIB = 1 << 20
CRLF = sys.argv[1:2] == ["crlf"]  # plays correctly, ending its lines with \r\n
NOT_AT_A_REQUEST = ("play", "crlf", "crash_at_start", "mute", "bad_version", "quit_after_game", "ack_game_over", "fork")


def send(data: bytes) -> None:
    if CRLF:
        data = data.replace(b"\n", b"\r\n")
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()


def message(**fields: object) -> bytes:
    return json.dumps(fields).encode() + b"\n"


def action(request: dict, text: object) -> bytes:
    return message(type="action", id=request["id"], action=text)


def strikes_at(behaviour: str, request: dict) -> bool:
    """Whether ``behaviour`` misbehaves at this request (once the first ``after`` are answered)."""
    if behaviour == "not_held":
        return any(text.startswith("attack") for text in request["legal"])
    return behaviour not in NOT_AT_A_REQUEST


def misbehave(behaviour: str, request: dict, delay: float) -> bytes | None:
    """Act out ``behaviour`` on ``request``; returns the bytes to send, or None to answer correctly."""
    legal = request["legal"]
    if behaviour == "crash":
        print("bot.py: crashing on purpose", file=sys.stderr)
        sys.exit(3)
    if behaviour == "exit0":
        sys.exit(0)
    if behaviour == "hang":
        time.sleep(3600)
    if behaviour == "late":  # answers, but after the deadline
        time.sleep(request["time_ms"] / 1000 + 0.3)
    if behaviour == "slow":  # answers after ``delay`` seconds, whatever the clock says
        time.sleep(delay)
    if behaviour == "sigstop":
        os.kill(os.getpid(), signal.SIGSTOP)
    if behaviour == "segfault":
        os.kill(os.getpid(), signal.SIGSEGV)
    if behaviour == "no_newline":  # the reply, all but its newline
        send(action(request, legal[0]).rstrip(b"\n"))
        time.sleep(3600)
    if behaviour == "close_stdin":  # reads no more (closed before it answers, so no request can slip in), lives on
        os.close(0)
        send(action(request, legal[0]))
        time.sleep(3600)
    if behaviour == "garbage":
        return b"this is not JSON\n"
    if behaviour == "wrong_shape":
        return action(request, 7)
    if behaviour == "string_id":
        return message(type="action", id=str(request["id"]), action=legal[0])
    if behaviour == "float_id":
        return message(type="action", id=float(request["id"]), action=legal[0])
    if behaviour == "missing_field":
        return message(type="action", action=legal[0])
    if behaviour == "empty_line":
        return b"\n"
    if behaviour == "banner":  # a debug print on stdout
        return b"thinking about " + legal[0].encode() + b"\n"
    if behaviour == "not_an_object":
        return b'["action", 1]\n'
    if behaviour == "unknown_type":
        return message(type="resign", id=request["id"])
    if behaviour == "extra_field":
        return message(type="action", id=request["id"], action=legal[0], comment="gg")
    if behaviour == "wrong_id":
        return message(type="action", id=request["id"] + 1000, action=legal[0])
    if behaviour == "hello_again":
        return message(type="hello", protocol=1, name="hostile")
    if behaviour == "illegal":  # well formed, not legal: nobody may take and pass at once
        return action(request, "take" if "take" not in legal else "pass")
    if behaviour == "malformed":
        return action(request, "fold now")
    if behaviour == "not_held":
        hand = request["view"]["hand"]
        return action(request, "attack " + next(card for card in CARDS if card not in hand))
    if behaviour == "double":  # two replies in one write: the second is nobody's
        return action(request, legal[0]) * 2
    if behaviour == "chatter":  # the reply, then a second one a little later, on others' time if it may
        send(action(request, legal[0]))
        time.sleep(0.05)
        return action(request, legal[0])
    if behaviour == "huge_line":  # 1 GiB without a newline, in 1 MiB writes
        for _ in range(1024):
            sys.stdout.buffer.write(b"x" * MIB)
    if behaviour == "close_stdout":
        os.close(1)
        sys.stdin.read()
        os._exit(0)
    if behaviour == "memory_hog":  # until RLIMIT_DATA stops it with a MemoryError
        blocks = []
        while True:
            blocks.append(bytearray(10 * MIB))
    if behaviour == "stderr_flood":
        flood()
    return None


def flood() -> None:
    for _ in range(64):
        sys.stderr.buffer.write(b"thinking..." * 12000 + b"\n")  # 8 MiB in all
    sys.stderr.buffer.flush()


def fill(folder: str) -> str:
    """Write 1 MiB files into ``folder`` until a write fails; how many, and why it stopped."""
    written = 0
    try:
        while written < 1 << 14:
            with open(os.path.join(folder, f"fill{written}"), "wb") as file:
                file.write(b"x" * MIB)
            written += 1
    except OSError as exc:
        return f"{written} MiB then {exc.strerror}"
    return f"{written} MiB"


def deep(depth: int) -> str:
    """A chain of ``depth`` folders in TMPDIR, the last one read-only: cleanup's worst case."""
    fd = os.open(os.environ["TMPDIR"], os.O_RDONLY)
    for _ in range(depth):
        os.mkdir("d", dir_fd=fd)
        child = os.open("d", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = child
    os.fchmod(fd, 0o500)
    os.close(fd)
    return f"{depth} folders"


def main() -> None:
    behaviour = sys.argv[1]
    options = dict(arg.split("=", 1) for arg in sys.argv[2:])
    after, delay = int(options.get("after", 0)), float(options.get("delay", 0))
    log = open(options["log"], "ab", buffering=0) if "log" in options else None  # noqa: SIM115
    armed = behaviour != "play"  # still to misbehave
    if armed and "once" in options:
        try:
            os.close(os.open(options["once"], os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            armed = False
    if armed and behaviour == "crash_at_start":
        print("bot.py: crash_at_start", file=sys.stderr)
        sys.exit(3)
    if options.get("term") == "ignore":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if "fill" in options:
        print(f"filled {fill(options['fill'])}", file=sys.stderr, flush=True)
    if "deep" in options:
        print(f"deep {deep(int(options['deep']))}", file=sys.stderr, flush=True)
    if behaviour == "fork" or options.get("fork") == "1":
        child = os.fork()
        if child == 0:
            time.sleep(3600)
            os._exit(0)
        print(f"forked {child}", file=sys.stderr, flush=True)
    requests = seen = 0
    saw = options.get("saw") == "1"
    for line in sys.stdin.buffer:
        if log is not None:
            log.write(line)
        received = json.loads(line)
        if received["type"] == "hello":
            if armed and behaviour == "mute":
                continue
            version = 99 if armed and behaviour == "bad_version" else received["protocol"]
            named = str(time.time_ns()) if options.get("version") == "flip" else "1"  # a new one every start
            send(message(type="hello", protocol=version, name=behaviour, version=named))
        elif received["type"] == "request":
            requests += 1
            if saw:
                seen += len(received["events"])
                print(f"saw {seen}", file=sys.stderr, flush=True)
            reply = None
            if armed and requests > after and strikes_at(behaviour, received):
                armed = False
                reply = misbehave(behaviour, received, delay)
            send(reply if reply is not None else action(received, received["legal"][0]))
            if behaviour == "stderr_flood" and requests == after + 1:
                flood()  # between turns too, when it may be paused
        elif received["type"] == "game_over" and saw:
            print(f"over {seen + len(received['events'])}", file=sys.stderr, flush=True)
            seen = 0
        elif received["type"] == "game_over" and armed and behaviour == "quit_after_game":
            sys.exit(0)
        elif received["type"] == "game_over" and armed and behaviour == "ack_game_over":
            armed = False
            send(message(type="hello", protocol=1, name="thanks for the game"))
        elif received["type"] == "shutdown":
            return


if __name__ == "__main__":
    main()
