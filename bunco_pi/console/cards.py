"""The night's score cards from its record: a CSV, and a printable page per player (HTML with
print CSS, so any phone or laptop prints or saves it as PDF; nothing to install on the Pi)."""

from __future__ import annotations

import csv
import io
from html import escape
from typing import Any

from bunco_pi.csvcells import text_cell

CARD_COLUMNS = ("name", "wins", "losses", "buncos", "baby_buncos", "wipeouts", "points", "prizes")


def _names(record: dict[str, Any]) -> dict[str, str]:
    return {p["id"]: p["name"] for p in record["players"]}


def _prizes_by_player(record: dict[str, Any]) -> dict[str, list[str]]:
    won: dict[str, list[str]] = {}
    for prize in record["prizes"]:
        if prize.get("player"):
            won.setdefault(prize["player"], []).append(prize["name"])
    return won


def cards_csv(record: dict[str, Any]) -> str:
    names, won = _names(record), _prizes_by_player(record)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CARD_COLUMNS)
    for pid, card in record["cards"].items():
        writer.writerow([text_cell(names[pid]), card["wins"], card["losses"], card["buncos"],
                         card["baby_buncos"], card["wipeouts"], card["points"],
                         text_cell("; ".join(won.get(pid, [])))])
    return out.getvalue()


def _rounds_of(record: dict[str, Any], pid: str) -> list[tuple[str, int, str, int]]:
    """(round label, table, result, own points) for each round ``pid`` played."""
    rows = []
    for r in record["rounds"]:
        for t in r["tables"]:
            if pid in t["seats"]:
                seat = t["seats"].index(pid)
                result = "win" if pid in t["winners"] else "loss" if pid in t["losers"] else "-"
                rows.append((f"set {r['set']} round {r['round']}", t["table"], result,
                             t["seat_scores"][seat]))
    return rows


TOTALS = (("wins", "wins"), ("losses", "losses"), ("buncos", "buncos"),
          ("baby_buncos", "baby buncos"), ("wipeouts", "wipeouts"), ("points", "points"))


def cards_html(record: dict[str, Any]) -> str:
    """A page per player. The console's content policy refuses inline styles, so the look and
    the page breaks come from the Pi's own stylesheet (static/cards.css)."""
    names, won = _names(record), _prizes_by_player(record)
    pages = []
    for pid, card in record["cards"].items():
        rounds = "".join(f"<tr><td>{escape(label)}</td><td>{table}</td><td>{result}</td>"
                         f"<td>{points}</td></tr>"
                         for label, table, result, points in _rounds_of(record, pid))
        totals = "".join(f"<div><b>{card.get(key, 0)}</b><span>{label}</span></div>"
                         for key, label in TOTALS)
        prizes = ", ".join(escape(p) for p in won.get(pid, [])) or "-"
        pages.append(
            f'<section class="card"><h1>{escape(names[pid])}</h1>'
            f'<div class="totals">{totals}</div>'
            f'<p class="won">Prizes: {prizes}</p>'
            f"<table><thead><tr><th>round</th><th>table</th><th>result</th><th>points</th></tr>"
            f"</thead><tbody>{rounds}</tbody></table></section>")
    return ("<!doctype html><html lang=en><head><meta charset=utf-8>"
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            '<title>Score cards</title><link rel="stylesheet" href="/static/cards.css">'
            '<script src="/static/cards.js" defer></script></head><body>'
            '<p class="print-note">One page per player. '
            '<button id="print" type="button" hidden>Print</button> '
            "Print from the browser&#39;s menu, or save as PDF.</p>"
            + "".join(pages) + "</body></html>")
