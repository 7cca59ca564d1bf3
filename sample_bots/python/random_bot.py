#!/usr/bin/env python3
"""A Durak bot that answers every request with a uniformly random legal action.

Run it with a Python that has durak-referee installed (it decodes and encodes with the protocol's
own msgspec Structs, the single source of truth of the wire format):

    .venv/bin/durak play "{python} sample_bots/python/random_bot.py" "{python} sample_bots/python/random_bot.py"

It reseeds its choices from each game's ``seed``, so the same game (deal and seeds) plays the same way
again. stdout carries protocol lines only: debug output goes to stderr.
"""

import random
import sys

import msgspec

from protocol.messages import (
    PROTOCOL_VERSION,
    BotHello,
    GameStart,
    Hello,
    Reply,
    Request,
    Shutdown,
    encoder,
    referee_decoder,
)


def send(message: BotHello | Reply) -> None:
    """Write one message as one JSON line and flush it: the referee is waiting for it."""
    sys.stdout.buffer.write(encoder.encode(message) + b"\n")
    sys.stdout.buffer.flush()


def main() -> None:
    rng = random.Random(0)
    for line in sys.stdin.buffer:
        try:
            message = referee_decoder.decode(line)
        except msgspec.DecodeError as exc:  # a message type from a newer referee: ignore it
            print(f"random_bot: ignoring {line[:80]!r}: {exc}", file=sys.stderr)
            continue
        match message:
            case Hello():
                send(BotHello(protocol=PROTOCOL_VERSION, name="random", version="1.0"))
            case GameStart():
                rng.seed(message.seed)
            case Request():
                send(Reply(id=message.id, action=rng.choice(message.legal)))
            case Shutdown():
                return
            case _:  # game over needs no reply
                pass


if __name__ == "__main__":
    main()
