"""A bot that plays the first legal action and, at its handshake, writes to stderr one JSON line of what it was
given: HOME and TMPDIR and whether it can write there, its working directory and its cores."""
import json
import os
import sys


def writable(folder):
    if not folder:
        return False
    try:
        with open(os.path.join(folder, "probe"), "w") as probe:
            probe.write("x")
        os.unlink(os.path.join(folder, "probe"))
    except OSError:
        return False
    return True


for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "hello":
        home, tmp = os.environ.get("HOME"), os.environ.get("TMPDIR")
        seen = {"home": home, "tmpdir": tmp, "home_writable": writable(home), "cwd": os.getcwd(),
                "cores": len(os.sched_getaffinity(0))}
        print(json.dumps(seen), file=sys.stderr, flush=True)
        print(json.dumps({"type": "hello", "protocol": 2, "name": "surroundings"}), flush=True)
    elif message["type"] == "request":
        print(json.dumps({"type": "action", "id": message["id"], "action": message["legal"][0]}), flush=True)
    elif message["type"] == "shutdown":
        break
