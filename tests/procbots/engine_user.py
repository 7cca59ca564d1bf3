"""A bot that imports the engine and the protocol, as a search bot would, and reports what it could see.

For each line on stdin: one JSON line with the engine build, a determinized search step's legal actions
matching the real ones, and what it finds of the referee package beside the engine.
"""

import json
import os
import random
import sys

import protocol.messages  # noqa: F401  (the wire Structs: msgspec must be importable too)
import referee
from protocol.events import event_for_seat
from protocol.rules import Rules
from referee.engine import SeededRng, determinize, engine_build, new_game


def report() -> dict[str, object]:
    game = new_game(Rules(), 2, SeededRng(1))
    seat = game.to_move
    view, events = game.view(seat), [event_for_seat(e, seat) for e in game.events]
    twin = determinize(game.rules, view, events, random.Random(1)).copy()
    package = os.path.dirname(referee.__file__)
    return {"build": engine_build(), "same_legal": twin.legal_actions() == game.legal_actions(),
            "referee": sorted(os.listdir(package)), "cli": os.path.exists(os.path.join(package, "cli.py"))}


for _ in sys.stdin:
    print(json.dumps(report()), flush=True)
