"""Leaderboard rows and formats on a small hand-built set of records."""

from __future__ import annotations

import csv
import io
import json

import pytest

from protocol.records import ResultRecord
from referee.rating.bradley_terry import rate
from referee.rating.leaderboard import (
    HEADERS,
    Row,
    build_meta,
    build_rows,
    format_csv,
    format_h2h,
    format_json,
    format_table,
)


def record(game: str, deal: str, order: list[list[str]], fools: list[str]) -> ResultRecord:
    players = sorted(p for group in order for p in group)  # seat order does not matter here
    return ResultRecord(game=game, deal=deal, variant="podkidnoy", players=players, order=order,
                        fools=fools, end="fool" if fools else "draw")


# Hand-computed (fool mode):
#   places  A 1,2,1,4 -> 2.00   B 2,1,2,3 -> 2.00   C 2,3,3,2 -> 2.50   D 4,3,3,1 -> 2.75
#   fool    A 1/4  B 0/4  C 1/4  D 2/4;  every bot played the one drawn game (g3)
#   pairwise points / comparisons: A 4.5/9  B 5.5/7  C 4/8  D 3/10 (A is the fool of g4: 0/3)
#   head to head A vs B: draw in g3, B beats A in g4 -> A 25% (2), B 75% (2)
#   head to head C vs D: C beats fool D in g1, co-fools in g2, draw in g3, both out in g4 -> 67% (3)
GAMES = [
    record("g1", "d1", [["A"], ["B", "C"], ["D"]], ["D"]),
    record("g2", "d1", [["B"], ["A"], ["C", "D"]], ["C", "D"]),
    record("g3", "d2", [["A"], ["B"], ["C", "D"]], []),
    record("g4", "d2", [["D"], ["C"], ["B"], ["A"]], ["A"]),
]
EXPECTED = {
    #     games  score%        fool%  avg   draws
    "A": (4, 50.0, 25.0, 2.00, 1),
    "B": (4, 100 * 5.5 / 7, 0.0, 2.00, 1),
    "C": (4, 50.0, 25.0, 2.50, 1),
    "D": (4, 30.0, 50.0, 2.75, 1),
}


@pytest.fixture
def rows() -> list[Row]:
    return build_rows(GAMES, rate(GAMES))


def test_rows_hold_hand_computed_statistics(rows: list[Row]) -> None:
    assert [r.rank for r in rows] == [1, 2, 3, 4]
    assert [r.elo for r in rows] == sorted((r.elo for r in rows), reverse=True)
    for r in rows:
        games, score, fool, place, draws = EXPECTED[r.bot]
        assert (r.games, r.draws) == (games, draws)
        assert r.score_pct == pytest.approx(score)
        assert r.fool_pct == pytest.approx(fool)
        assert r.avg_place == pytest.approx(place)
        assert r.identified and r.bound is None and r.ci95 is not None and r.ci95 > 0
    assert all(r.los_next_pct is not None and 50 <= r.los_next_pct <= 100 for r in rows[:-1])
    assert rows[-1].los_next_pct is None
    assert sum(r.elo for r in rows) / 4 == pytest.approx(1500.0)


def test_rows_use_the_rating_mode_for_score() -> None:
    order_rows = {r.bot: r for r in build_rows(GAMES, rate(GAMES, mode="order"))}
    # order mode, A: g1 3/3, g2 B>A, A>C, A>D -> 2/3, g3 1st of 4 -> 3/3, g4 last -> 0/3
    assert order_rows["A"].score_pct == pytest.approx(100 * 8 / 12)
    assert order_rows["A"].fool_pct == pytest.approx(25.0)  # per game, mode-independent


def test_table_has_columns_values_and_footer(rows: list[Row]) -> None:
    rating = rate(GAMES)
    text = format_table(rows, build_meta(rating))
    lines = text.splitlines()
    for header in HEADERS:
        assert header in lines[0]
    by_bot = {line.split()[1]: line.split() for line in lines[2:6]}
    for r in rows:
        cells = by_bot[r.bot]
        assert cells[0] == str(r.rank)
        assert cells[2] == f"{r.elo:.0f}"
        assert cells[4] == "4"
        assert cells[6] == f"{r.fool_pct:.1f}"
        assert cells[7] == f"{r.avg_place:.2f}"
    assert by_bot["C"][5] == "50.0" and by_bot["D"][5] == "30.0"
    footer = lines[6]
    for part in ("Bradley-Terry MLE, Elo scale", "mode: fool", "pool mean = 1500", "2 deals", "4 games",
                 "cluster-robust"):
        assert part in footer
    # numbers are right-aligned: the Elo and Games cells end where their headers end
    for header, column in (("Elo", 2), ("Games", 4)):
        end = lines[0].index(header) + len(header)
        for line in lines[2:6]:
            cell = line.split()[column]
            assert line.index(f" {cell} ", end - len(cell) - 1) + 1 + len(cell) == end


def test_table_shows_bounds() -> None:
    games = [*GAMES, *(record(f"w{k}", f"w{k}", [["W"], ["A"]], ["A"]) for k in range(6))]
    rating = rate(games)
    text = format_table(build_rows(games, rating), build_meta(rating))
    top = text.splitlines()[2].split()
    assert top[1] == "W" and top[2] == ">"
    assert "virtual draw" in text and "bound" in text


def test_csv_has_machine_columns_and_values(rows: list[Row]) -> None:
    parsed = list(csv.DictReader(io.StringIO(format_csv(rows))))
    assert list(parsed[0]) == ["rank", "bot", "elo", "ci95", "bound", "identified", "games", "score_pct",
                               "fool_pct", "avg_place", "draws", "los_next_pct", "disqualified", "mark"]
    for line, r in zip(parsed, rows, strict=True):
        assert line["bot"] == r.bot and int(line["rank"]) == r.rank
        assert float(line["elo"]) == pytest.approx(r.elo, abs=0.005)
        assert float(line["avg_place"]) == pytest.approx(EXPECTED[r.bot][3])
        assert float(line["fool_pct"]) == pytest.approx(EXPECTED[r.bot][2])
        assert int(line["draws"]) == 1 and line["bound"] == "" and line["disqualified"] == "false"
        assert line["identified"] == "true"
    assert parsed[-1]["los_next_pct"] == ""


def test_json_has_rows_and_meta(rows: list[Row]) -> None:
    doc = json.loads(format_json(rows, build_meta(rate(GAMES))))
    assert doc["meta"] == {
        "model": "Bradley-Terry MLE, Elo scale", "mode": "fool", "anchor": "pool mean = 1500",
        "clusters": 2, "games": 4, "errors": "cluster-robust sandwich by deal, 1.96 sd", "prior": 0.0,
    }
    assert [r["bot"] for r in doc["rows"]] == [r.bot for r in rows]
    first = doc["rows"][0]
    assert set(first) == {"rank", "bot", "elo", "ci95", "bound", "identified", "games", "score_pct",
                          "fool_pct", "avg_place", "draws", "los_next_pct", "disqualified", "mark"}
    d = next(r for r in doc["rows"] if r["bot"] == "D")
    assert (d["games"], d["score_pct"], d["fool_pct"], d["avg_place"]) == (4, 30.0, 50.0, 2.75)
    assert doc["rows"][-1]["los_next_pct"] is None
    assert 50 <= doc["rows"][0]["los_next_pct"] <= 100  # a percentage, like score_pct


def test_json_and_csv_carry_bounds() -> None:
    games = [*GAMES, *(record(f"w{k}", f"w{k}", [["A"], ["L"]], ["L"]) for k in range(6))]
    rating = rate(games)
    rows = build_rows(games, rating)
    last = json.loads(format_json(rows, build_meta(rating)))["rows"][-1]
    assert (last["bot"], last["bound"], last["identified"], last["ci95"]) == ("L", "upper", False, None)
    assert list(csv.DictReader(io.StringIO(format_csv(rows))))[-1]["bound"] == "upper"
    assert "< " in format_table(rows, build_meta(rating)).splitlines()[-3]


def test_h2h_shows_points_and_comparisons() -> None:
    rating = rate(GAMES)
    lines = format_h2h(rating).splitlines()
    names = [b.name for b in rating.bots]
    assert lines[0].split() == ["vs", *names]
    cells = {line.split()[0]: line for line in lines[2:6]}
    col = {name: k for k, name in enumerate(names)}
    # exact cells from the hand-built set
    assert rating.h2h_points[col["A"], col["B"]] == 0.5 and rating.h2h_comparisons[col["A"], col["B"]] == 2
    assert "25% (2)" in cells["A"] and "75% (2)" in cells["B"]
    assert "67% (3)" in cells["C"] and "33% (3)" in cells["D"]
    assert all(line.split().count("-") == 1 for line in cells.values())  # the diagonal
    assert "fool mode" in lines[-1]
