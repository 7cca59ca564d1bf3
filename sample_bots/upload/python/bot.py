"""An entrant's bot as a web arena takes it: the standard library only (the sandbox shows the system's Python, not
the referee's packages), the protocol's four messages, the first legal action, and a line of stderr per request,
which only its author reads (durak serve shows it in their bot's seat view)."""

import json
import sys

for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "hello":
        print(json.dumps({"type": "hello", "protocol": 2, "name": "firstbot"}), flush=True)
    elif message["type"] == "request":
        sys.stderr.write(f"firstbot ponders {len(message['legal'])} moves\n")
        print(json.dumps({"type": "action", "id": message["id"], "action": message["legal"][0]}), flush=True)
    elif message["type"] == "shutdown":
        break
