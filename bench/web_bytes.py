"""The bytes of the web's pages on a league database, so that two checkouts can be compared route by route: a
change meant to make pages cheaper must leave them as they were.

Run by hand from the project root::

    python bench/web_bytes.py DB [--code DIR] [--bots 100] [--games 100] > pages.json
    python bench/web_bytes.py --compare OLD.json NEW.json

The first form builds the app of the checkout ``--code`` (default: this one) over ``DB`` (a copy of a database of
bench/arena_data.py, of the schema that checkout serves), asks for the board, ``--bots`` bot pages, ``--games``
replays and the games list (unfiltered, by bot, verdict and table size, and page 2), each as HTML and JSON, as an
anonymous viewer, and prints each URL's status and SHA-256. The games list's page links and its JSON's ``after``
and ``before`` (schema 9's keysets) are left out of the hash. The second form prints the URLs whose bytes differ.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.web_load import checkout_app  # noqa: E402  (no referee import: --code's comes later)


def urls(bots: list[str], games: int, rng: random.Random, bot_pages: int, replays: int) -> list[str]:
    chosen = rng.sample(bots, min(bot_pages, len(bots)))
    numbers = rng.sample(range(1, games + 1), min(replays, games))
    lists = ["", "?page=2", "?verdict=timeout", "?verdict=any", "?players=4", "?verdict=any&players=3",
             *(f"?bot={bot}" for bot in chosen[:10])]
    return ["/", "/api/board", *(f"{p}/bots/{b}" for b in chosen for p in ("", "/api")),
            *(f"{p}/games/{n}" for n in numbers for p in ("", "/api")),
            *(f"{p}/games{q}" for q in lists for p in ("", "/api"))]


def digest(url: str, body: bytes) -> str:
    """The SHA-256 of a page, the games list's keysets left out."""
    if url.startswith("/api/games") and not url.startswith("/api/games/"):
        page = json.loads(body)
        page.pop("after", None)
        page.pop("before", None)
        body = json.dumps(page, sort_keys=True).encode()
    elif url.startswith("/games") and not url.startswith("/games/"):
        body = re.sub(rb"&amp;(?:after|before)=\d+", b"", body)
    return hashlib.sha256(body).hexdigest()


def dump(args: argparse.Namespace) -> None:
    app, bots, games = checkout_app(args.code, args.db)
    from litestar.testing import TestClient

    pages = {}
    with TestClient(app) as client:
        for url in urls(bots, games, random.Random(args.seed), args.bots, args.games):
            answer = client.get(url)
            pages[url] = f"{answer.status_code} {digest(url, answer.content)}"
    print(json.dumps(pages, indent=0))


def compare(old: Path, new: Path) -> None:
    before, after = json.loads(old.read_text()), json.loads(new.read_text())
    differ = [url for url in before if before[url] != after.get(url)]
    print(f"{len(before)} pages, {len(differ)} differ" + "".join(f"\n  {url}" for url in differ))
    if differ or before.keys() != after.keys():
        raise SystemExit(1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("db", type=Path, nargs="?")
    parser.add_argument("--code", type=Path, default=ROOT)
    parser.add_argument("--bots", type=int, default=100)
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--compare", type=Path, nargs=2, metavar=("OLD", "NEW"))
    args = parser.parse_args()
    if args.compare:
        compare(*args.compare)
    else:
        dump(args)


if __name__ == "__main__":
    main()
