"""A bot whose every word is a terminal attack (tests/test_hostile_text.py).

    escaper.py crash|play

Its hello name and version (``ESCAPER_VERSION`` overrides the version) and its stderr carry ANSI escape
sequences, carriage returns, a bell, a C1 CSI and a right-to-left override. ``crash`` writes a forged
result line to stderr at its first request and exits 3; ``play`` plays the first legal action. Standard
library only.
"""
import json
import os
import sys

NAME = "esc\x1b[31mRED\x07\r\x9b2J\u202eevil"
VERSION = os.environ.get("ESCAPER_VERSION", "1\x1b]0;owned\x07")
FORGED = "\r\x1b[2K\x1b[1Afool: random_bot\x1b[8m\x9b8m"


def main() -> None:
    crash = sys.argv[1:2] == ["crash"]
    sys.stderr.write("\x1b[2J\x1b[H\rstartup noise\x07\n")
    sys.stderr.flush()
    for line in sys.stdin:
        message = json.loads(line)
        kind = message.get("type")
        if kind == "hello":
            reply = {"type": "hello", "protocol": message["protocol"], "name": NAME, "version": VERSION}
        elif kind == "request":
            if crash:
                sys.stderr.write(FORGED + "\n")
                sys.stderr.flush()
                sys.exit(3)
            sys.stderr.write("\x1b[1;1Hmove\r\n")
            reply = {"type": "action", "id": message["id"], "action": message["legal"][0]}
        elif kind == "shutdown":
            break
        else:
            continue
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
