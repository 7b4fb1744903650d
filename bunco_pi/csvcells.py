"""CSV cells a spreadsheet shows as text, never runs as a formula (OWASP's CSV injection rule).

A player's name or a prize's name is typed by a person: one that starts with ``=``, ``+``,
``-``, ``@``, a tab or a carriage return would be run by Excel, LibreOffice or Google Sheets
when the host opens ``cards.csv`` or the public ``season.csv`` (``=HYPERLINK(...)`` sends a
click elsewhere, ``@SUM(...)`` computes). Such a cell is written with a leading ``'``, which the
spreadsheets take as "text" and do not show; ``from_cell`` takes it off again when we read our
own CSV back (a carriage return comes back as a line feed). A cell that already starts with
``'`` before one of them gets one more, so every text reads back as it was written.
"""

from __future__ import annotations

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "\n")


def text_cell(text: str) -> str:
    """``text`` as a CSV cell no spreadsheet runs. A carriage return becomes a line feed: the
    csv module quotes a cell with one only when it ends the CSV's lines, and ours end in LF."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if text.startswith(FORMULA_STARTS) or (text.startswith("'") and
                                          text.lstrip("'").startswith(FORMULA_STARTS)):
        return "'" + text
    return text


def from_cell(cell: str) -> str:
    """What ``text_cell`` was given."""
    if cell.startswith("'") and cell.lstrip("'").startswith(FORMULA_STARTS):
        return cell[1:]
    return cell
