#!/usr/bin/env python3
"""A Durak bot that answers every request with a uniformly random legal action.

Run it with a Python that has durak-referee installed (it decodes and encodes with the protocol's
own msgspec Structs, the single source of truth of the wire format):

    durak play "python sample_bots/python/random_bot.py 42" "python sample_bots/python/random_bot.py"

The optional argument seeds the bot's choices; without it the seed comes from os.urandom.
stdout carries protocol lines only: debug output goes to stderr.
"""

import os
import random
import sys

import msgspec

from protocol.messages import PROTOCOL_VERSION, BotHello, Hello, Reply, Request, Shutdown, encoder, referee_decoder


def send(message: BotHello | Reply) -> None:
    """Write one message as one JSON line and flush it: the referee is waiting for it."""
    sys.stdout.buffer.write(encoder.encode(message) + b"\n")
    sys.stdout.buffer.flush()


def main() -> None:
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else int.from_bytes(os.urandom(8), "big")
    rng = random.Random(seed)
    for line in sys.stdin.buffer:
        try:
            message = referee_decoder.decode(line)
        except msgspec.DecodeError as exc:  # a message type from a newer referee: ignore it
            print(f"random_bot: ignoring {line[:80]!r}: {exc}", file=sys.stderr)
            continue
        match message:
            case Hello():
                send(BotHello(protocol=PROTOCOL_VERSION, name="random", version="1.0"))
            case Request():
                send(Reply(id=message.id, action=rng.choice(message.legal)))
            case Shutdown():
                return
            case _:  # game and game_over need no reply
                pass


if __name__ == "__main__":
    main()
