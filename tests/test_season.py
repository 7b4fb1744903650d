"""`bunco-pi season` on 20 nights made by `bunco-pi sim --record`: its table adds up the
records, and its CSV reads back to the same numbers."""

import dataclasses
import json
import re
from pathlib import Path

import pytest

from bunco_pi.cli import main
from bunco_pi.errors import UserError
from bunco_pi.season import (
    load_nights,
    points_chart_svg,
    points_over_nights,
    read_season_csv,
    season_csv,
    season_table,
)

NIGHTS = 20


@pytest.fixture(scope="module")
def season_dir(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("nights")
    for i in range(NIGHTS):
        # 8 to 12 players: not everyone comes every night
        players = 8 + i % 5
        assert main(["sim", "--players", str(players), "--seed", str(100 + i),
                     "--record", str(folder / f"2026-{i + 1:02d}-01-club.json")]) == 0
    return folder


def _expected(folder: Path) -> dict[str, dict[str, float]]:
    """The season added up straight from the records, independently of bunco_pi.season."""
    totals: dict[str, dict[str, float]] = {}
    for path in sorted(folder.glob("*.json")):
        record = json.loads(path.read_text())
        names = {p["id"]: p["name"] for p in record["players"]}
        for pid, card in record["cards"].items():
            t = totals.setdefault(names[pid], dict.fromkeys(
                ("nights", "wins", "losses", "buncos", "baby_buncos", "points", "prizes", "money"), 0))
            t["nights"] += 1
            for key in ("wins", "losses", "buncos", "baby_buncos", "points"):
                t[key] += card[key]
        for prize in record["prizes"]:
            if prize["player"]:
                t = totals[names[prize["player"]]]
                t["prizes"] += 1
                t["money"] += prize["amount"] if prize["cash"] else 0
    return totals


def test_the_season_table_adds_up_every_night(season_dir, capsys) -> None:
    capsys.readouterr()
    csv_path = season_dir.parent / "season.csv"
    svg_path = season_dir.parent / "season.svg"
    assert main(["season", str(season_dir), "--csv", str(csv_path), "--chart", str(svg_path)]) == 0
    out = capsys.readouterr().out
    print(out)
    rows = season_table(load_nights(season_dir))
    expected = _expected(season_dir)
    assert {r.name for r in rows} == set(expected)
    for r in rows:
        e = expected[r.name]
        assert (r.nights, r.wins, r.losses, r.buncos, r.baby_buncos, r.points, r.prizes) == \
            tuple(int(e[k]) for k in ("nights", "wins", "losses", "buncos", "baby_buncos",
                                      "points", "prizes")), r.name
        assert r.money == pytest.approx(e["money"])
        assert re.search(rf"\n{r.player} +{r.name} ", out), r
    assert out.startswith(f"Season: {NIGHTS} nights, {len(rows)} players")
    assert max(r.nights for r in rows) == NIGHTS and min(r.nights for r in rows) < NIGHTS
    assert [r.wins for r in rows] == sorted((r.wins for r in rows), reverse=True)
    assert read_season_csv(csv_path.read_text()) == rows  # the CSV reads back to the same numbers
    assert svg_path.read_text().startswith("<svg") and svg_path.read_text().count("<polyline") == 8


def test_the_chart_follows_each_players_points_night_by_night(season_dir) -> None:
    nights = load_nights(season_dir)
    series = points_over_nights(nights)
    rows = {r.player: r for r in season_table(nights)}
    for player, points in series.items():
        assert len(points) == NIGHTS and points == sorted(points)
        assert points[-1] == rows[player].points
    assert "<title>" in points_chart_svg(nights)


def test_the_csv_round_trips_names_that_need_quoting(season_dir) -> None:
    rows = season_table(load_nights(season_dir))
    renamed = [dataclasses.replace(r, name=f'{r.name}, "the elder"') for r in rows]
    assert read_season_csv(season_csv(renamed)) == renamed


def test_a_broken_or_foreign_file_is_one_line_naming_it(tmp_path, capsys) -> None:
    (tmp_path / "2026-01-01-a.json").write_text("{not json")
    assert main(["season", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "2026-01-01-a.json: not a readable night record" in err and err.count("\n") == 1
    (tmp_path / "2026-01-01-a.json").write_text('{"format": "something else"}')
    with pytest.raises(UserError, match="not a bunco-pi night record"):
        load_nights(tmp_path)
    assert main(["season", str(tmp_path / "missing")]) == 2
    assert "no such folder" in capsys.readouterr().err
    with pytest.raises(UserError, match="line 2"):
        read_season_csv("name,nights,wins,losses,buncos,baby_buncos,points,prizes,money\n"
                        "Ann,x,1,1,1,1,1,1,1.00\n")


def test_an_unfinished_night_is_not_in_the_season(tmp_path) -> None:
    assert main(["sim", "--seed", "3", "--record", str(tmp_path / "2026-01-01-a.json")]) == 0
    record = json.loads((tmp_path / "2026-01-01-a.json").read_text())
    record["complete"] = False
    (tmp_path / "2026-02-01-b.json").write_text(json.dumps(record))
    assert [n.label for n in load_nights(tmp_path)] == ["2026-01-01-a"]
