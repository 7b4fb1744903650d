"""Printable table cards for a hall: one page per table with its number big enough to find
across the room, a QR code to the board, and the night's rules in one paragraph.

The paragraph is made from the house rules the head plays. Where the rules file quotes the
group's own rule text beside a key (``bunco_points = 21  # "three of a kind of the number you
are rolling ... (21 points)"``), the card says it in the group's words when they read as a
sentence; else it says what the key's value means. Pure: rules and text in, HTML out. The QR
code is an SVG in a ``data:`` address, drawn here by segno: nothing comes from elsewhere.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from html import escape

from bunco_pi.rules.house import HouseRules

_QUOTE = re.compile(r'"([^"]{12,})"')
_SECTION = re.compile(r"^\s*\[\[?\s*([\w.]+)\s*\]\]?\s*$")
_KEY = re.compile(r"^\s*([\w]+)\s*=([^#]*)#(.*)$")


def group_words(text: str) -> dict[tuple[str, str], str]:
    """Each key's quotation of the group's rule text, from its line's comment, by (section,
    key); top-level keys are in section ""."""
    words: dict[tuple[str, str], str] = {}
    section = ""
    for line in text.splitlines():
        header = _SECTION.match(line)
        if header:
            section = header.group(1)
            continue
        key = _KEY.match(line)
        if key:
            quote = _QUOTE.search(key.group(3))
            if quote and (section, key.group(1)) not in words:
                words[(section, key.group(1))] = quote.group(1).strip()
    return words


def _sentence(quote: str | None) -> str | None:
    """The group's words as a sentence of the card, or None when they are a fragment (they
    start in lower case, or leave words out with an ellipsis)."""
    if not quote or not quote[0].isupper() or "..." in quote or "…" in quote:
        return None
    quote = " ".join(quote.split())
    return quote if quote[-1] in ".!?" else quote + "."


def _targets(rules: HouseRules) -> str:
    targets = [str(t) for t in rules.night.targets]
    return ", ".join(targets[:-1]) + " and " + targets[-1] if len(targets) > 1 else targets[0]


_SCHEME = {
    "head-stays": "After each round the head table's winners stay and its losers move down; "
                  "the other tables' winners move up.",
    "head-losers-to-low": "After each round the head table's winners stay and its losers go to "
                          "the lowest table; the other tables' winners move up.",
    "winners-rotate": "After each round the winners move to the next table.",
    "lowest-moves": "After each round the lowest scorer at each table moves on.",
}


def _generated(rules: HouseRules) -> list[tuple[tuple[str, str], Callable[[], str | None]]]:
    """Each sentence of the paragraph in order, by the key whose quote may say it instead."""
    s, r = rules.scoring, rules.round
    team = rules.team_play
    rounds = len(rules.night.targets)
    return [
        (("night", "sets"), lambda: (
            f"We play {rules.night.sets} set{'s' if rules.night.sets != 1 else ''} of "
            f"{rounds} rounds, rolling for {_targets(rules)} in turn"
            + (f", with a break after set {', '.join(map(str, rules.night.break_after_sets))}"
               if rules.night.break_after_sets else "") + ".")),
        (("", "play"), lambda: (
            "Four to a table, two teams of two: partners sit across from each other."
            if team else "Four to a table, each player for herself.")),
        (("scoring", "points_per_target_die"), lambda: (
            f"Each die showing the round's number scores {s.points_per_target_die} point"
            f"{'s' if s.points_per_target_die != 1 else ''}, and the roller rolls again "
            + ("while she scores." if s.turn_continues == "any-points"
               else "while the round's number shows."))),
        (("scoring", "bunco_points"), lambda: (
            f"Three of the round's number is a Bunco: {s.bunco_points} points.")),
        (("scoring", "three_of_a_kind_points"), lambda: (
            f"Three of a kind of another number scores {s.three_of_a_kind_points} points"
            + (" (a baby bunco on the card)." if s.baby_bunco else "."))),
        (("wipeout", "enabled"), lambda: (
            "Three 1s wipe out the roller's points for the round"
            + (" and end her turn." if rules.wipeout.ends_turn else ".")
            if rules.wipeout.enabled else None)),
        (("round", "target_score"), lambda: (
            f"The round ends when {'the head table' if r.ends_at == 'head' else 'any table'} "
            f"reaches {r.target_score}" + (" or rolls a Bunco" if r.bunco_ends_round else "")
            + " and rings the bell.")),
        (("round", "after_bell"), lambda: {
            "finish-turn": "At the bell, whoever is rolling finishes her turn.",
            "finish-if-target": "At the bell, a roller who has just rolled the round's number "
                                "finishes her turn; everyone else stops.",
            "stop": "At the bell everyone stops at once."}.get(r.after_bell)),
        (("traveler", "enabled"), lambda: (
            "The fuzzy die goes to whoever rolls a Bunco"
            if rules.traveler.trigger == "bunco" else "The fuzzy die goes to whoever rolls "
            "all twos") + "; whoever holds it at the end wins a prize."
            if rules.traveler.enabled else None),
        (("rotation", "scheme"), lambda: _SCHEME.get(rules.rotation.scheme)),
        (("ghost", "points"), lambda: (
            "An empty seat is a ghost: her partner rolls for her and her points count for the team."
            if rules.ghost.points == "team" and team else
            "An empty seat is a ghost: her partner rolls for her.")),
    ]


def rules_paragraph(rules: HouseRules, text: str) -> str:
    """The night's rules in one paragraph, in the group's words where the file quotes them."""
    words = group_words(text)
    out: list[str] = []
    for key, make in _generated(rules):
        generated = make()
        if generated is None:
            continue  # a rule this group does not play
        out.append(_sentence(words.get(key)) or generated)
    return " ".join(out)


def qr_data_uri(url: str) -> str:
    import segno

    return segno.make_qr(url, error="m").svg_data_uri(scale=1, border=2)


def table_cards_html(table_count: int, board_url: str, rules: HouseRules, text: str,
                     night: str) -> str:
    """One card a page: the table's number, a QR code to the board, the rules."""
    paragraph = escape(rules_paragraph(rules, text))
    qr = qr_data_uri(board_url)
    cards = []
    for n in range(1, table_count + 1):
        label = "Head table" if n == 1 else "Table"
        cards.append(
            f'<section class="table-card" id="table-card-{n}"><div class="top">'
            f'<div class="number"><span>{label}</span><b>{n}</b></div>'
            f'<figure><img src="{qr}" alt="QR code: {escape(board_url)}" class="qr">'
            f"<figcaption>Scores and your table: scan, or open {escape(board_url)}"
            "</figcaption></figure></div>"
            f'<h2>{escape(rules.name.capitalize())} rules tonight</h2>'
            f'<p class="rules">{paragraph}</p></section>')
    return ("<!doctype html><html lang=en><head><meta charset=utf-8>"
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>Table cards: {escape(night)}</title>"
            '<link rel="stylesheet" href="/static/table-cards.css">'
            '<script src="/static/cards.js" defer></script></head><body>'
            '<p class="print-note">One card a page: print it, or save it as PDF. '
            '<button id="print" hidden>Print</button></p>'
            f'{"".join(cards)}</body></html>')
