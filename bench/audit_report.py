"""The hidden-information audit of tests/test_hidden_info_audit.py at a chosen size, as a report.

Run by hand from the project root::

    python bench/audit_report.py              # 1,000 games per variant (the test suite's size)
    python bench/audit_report.py -n 5000 --seed 7

Every game is played by ``referee.games.match.play_game`` against recording clients; every byte sent to every
seat is checked against what that seat may know (RULES.md 9). Prints games, messages, bytes, forfeits and
action caps per variant and in total; an assertion error names the first leak found.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from test_hidden_info_audit import AuditCounts, run_audit  # noqa: E402

from protocol.rules import VARIANTS  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", "--games", type=int, default=1000, help="games per variant")
    parser.add_argument("--seed", type=int, default=20260501, help="seed of the random games")
    args = parser.parse_args()
    total = AuditCounts()
    seconds_total = 0.0
    print(f"{'variant':<12} {'games':>7} {'messages':>10} {'MB':>8} {'forfeits':>9} {'caps':>6} {'seconds':>8}")
    for variant in VARIANTS:
        counts, seconds = run_audit(variant, args.games, args.seed)
        total.add(counts)
        seconds_total += seconds
        print(f"{variant:<12} {counts.games:>7} {counts.messages:>10} {counts.bytes / 1e6:>8.1f} "
              f"{counts.forfeits:>9} {counts.capped:>6} {seconds:>8.1f}")
    print(f"{'total':<12} {total.games:>7} {total.messages:>10} {total.bytes / 1e6:>8.1f} "
          f"{total.forfeits:>9} {total.capped:>6} {seconds_total:>8.1f}")
    print("no leak found")


if __name__ == "__main__":
    main()
