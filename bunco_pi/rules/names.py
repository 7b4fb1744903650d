"""What a player's name may be: one rule for every place a name comes in.

A name is typed by a host on a phone, read from a roster file or a table's config, and then
shown on every table's OLED, the console, the score cards and the season. ``clean_name`` takes
what was typed and gives back the name as it is kept (Unicode NFC, spaces trimmed and single),
or raises ``BadName`` whose text says what is wrong, for the caller to prefix with the place
(file and line, roster line, form field).

Refused, and why:
- control and format characters (U+0000-U+001F, U+202E RIGHT-TO-LEFT OVERRIDE, U+2066 isolates,
  zero-width spaces, soft hyphens...): they turn the text around or hide in it, so two names
  that look the same are not, and a name can reverse what is drawn after it;
- unassigned, private-use and surrogate code points: nothing can draw them;
- anything that reads as a ghost's name ("Ghost 1", "gh0st1", "GHOST 1" in Cyrillic or
  full-width letters): ghosts are the empty seats, and a player called so would be taken for one;
- no letter, digit or symbol at all (only dots, or only accents);
- more than ``MAX_NAME`` characters: the box draws about 16 of them on a line.

The zero-width joiner and non-joiner (U+200D, U+200C) stay: emoji sequences and Persian and
Indic names need them; only where they join two visible characters.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

MAX_NAME = 32  # characters, after NFC
_JOINERS = {"\u200c", "\u200d"}
_REFUSED_CATEGORIES = {
    "Cc": "a control character",
    "Cf": "an invisible formatting character",
    "Cs": "a lone surrogate",
    "Co": "a private-use character",
    "Cn": "an unassigned code point",
    "Zl": "a line separator",
    "Zp": "a paragraph separator",
}
_BIDI_CONTROLS = set("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
# Letters that look like the Latin ones of "ghost" in other scripts (Unicode's confusables for
# g, h, o, s, t), and digits that look like letters. NFKC has already folded full-width and
# mathematical letters to plain ones; casefold has folded case.
_LOOKALIKES = str.maketrans({
    "ɡ": "g", "ց": "g", "ԍ": "g", "ǥ": "g", "ğ": "g", "ĝ": "g", "ġ": "g", "ģ": "g",
    "һ": "h", "հ": "h", "ℎ": "h", "ħ": "h", "ĥ": "h",
    "о": "o", "ο": "o", "օ": "o", "σ": "o", "ⲟ": "o", "ჿ": "o", "ö": "o", "ø": "o", "ò": "o",
    "ó": "o", "ô": "o", "õ": "o", "ഠ": "o", "ᴏ": "o",
    "ѕ": "s", "ꜱ": "s", "ś": "s", "š": "s", "ş": "s", "ß": "s", "$": "s",
    "т": "t", "τ": "t", "ţ": "t", "ť": "t", "ŧ": "t", "ᴛ": "t", "+": "t",
})
_DIGIT_LETTERS = str.maketrans({"0": "o", "5": "s", "7": "t"})
_GHOST = re.compile(r"gh+o+s+t+\d*")


class BadName(ValueError):
    """A name the rule refuses; the text names the problem, the caller adds the place."""


def clean_name(raw: str) -> str:
    """The name as kept: NFC, trimmed, each run of spaces one space. Raises BadName."""
    if not isinstance(raw, str):
        raise BadName("a name must be text")
    text = unicodedata.normalize("NFC", raw)
    for ch in text:
        if ch in _BIDI_CONTROLS:
            raise BadName(f"{_code(ch)} is a right-to-left or left-to-right control: it turns "
                          "what is drawn around it, so it is not allowed in a name")
        category = unicodedata.category(ch)
        if ch in _JOINERS or ch in "\t\n\r":
            continue
        if category in _REFUSED_CATEGORIES:
            raise BadName(f"{_code(ch)} is {_REFUSED_CATEGORIES[category]}, not allowed in a name")
    name = " ".join(text.split())
    for i, ch in enumerate(name):
        if ch in _JOINERS and (i == 0 or i == len(name) - 1 or name[i - 1] == " "
                               or name[i + 1] == " "):
            raise BadName(f"{_code(ch)} must join two characters of a name")
    if not name:
        raise BadName("a name cannot be empty")
    if len(name) > MAX_NAME:
        raise BadName(f"a name of at most {MAX_NAME} characters, please ({len(name)} given)")
    if unicodedata.combining(name[0]):
        raise BadName(f"a name cannot start with an accent alone ({_code(name[0])})")
    if not any(unicodedata.category(ch)[0] in "LN" or unicodedata.category(ch) == "So"
               for ch in name):
        raise BadName("a name needs at least one letter, digit or symbol")
    if looks_like_ghost(name):
        raise BadName(f"'{name}' reads as a ghost's name (the empty seats are called "
                      "'Ghost 1', 'Ghost 2'...): give the player her own name")
    return name


def looks_like_ghost(name: str) -> bool:
    """True for "Ghost 3" however it is spelt: any case, spacing, punctuation, width or script
    look-alike letters, or digits of any script."""
    return bool(_GHOST.fullmatch(_skeleton(name)))


def name_key(name: str) -> str:
    """What two names must not share on one roster: "Ann", "ann" and "ANN  " are one person
    to the people reading the screens."""
    return " ".join(unicodedata.normalize("NFC", name).casefold().split())


def check_names(names: Iterable[str]) -> list[str]:
    """Clean every name of a list (a roster), refusing the second of two that read alike.
    BadName's text starts with the 1-based position as "entry N: "."""
    kept: list[str] = []
    seen: dict[str, int] = {}
    for i, raw in enumerate(names, start=1):
        try:
            name = clean_name(raw)
        except BadName as exc:
            raise BadName(f"entry {i}: {exc}") from None
        key = name_key(name)
        if key in seen:
            raise BadName(f"entry {i}: '{name}' is entry {seen[key]} already")
        seen[key] = i
        kept.append(name)
    return kept


def _skeleton(name: str) -> str:
    text = unicodedata.normalize("NFKC", name).casefold()
    out = []
    for ch in unicodedata.normalize("NFD", text):
        if unicodedata.combining(ch):
            continue  # "ğhöst" is still "ghost"
        digit = unicodedata.decimal(ch, None)
        if digit is not None:
            out.append(str(digit))  # Arabic-Indic, Devanagari... digits read as digits
            continue
        mapped = ch.translate(_LOOKALIKES)
        if mapped.isalnum():
            out.append(mapped)
    skeleton = "".join(out)
    # Digits that end the name are the ghost's number ("Ghost 10"); before them 0, 5 and 7
    # read as the letters o, s and t ("Gh0st 1").
    tail = re.search(r"\d*$", skeleton)
    number = tail.group(0) if tail else ""
    letters = skeleton[: len(skeleton) - len(number)]
    return letters.translate(_DIGIT_LETTERS) + number


def _code(ch: str) -> str:
    return f"U+{ord(ch):04X} ({unicodedata.name(ch, 'unnamed')})"


def search_key(text: str) -> str:
    """What "find my table" compares: a name or what a guest typed, without case, accents or
    extra spaces ("ZOE" and "zoé", "Chloe" and "Chloë", "Straße" and "strasse" find each
    other); compatibility forms (full-width letters) fold to their plain letters."""
    folded = unicodedata.normalize("NFKD", text).casefold()
    bare = "".join(ch for ch in folded if not unicodedata.combining(ch))
    return " ".join(unicodedata.normalize("NFKC", bare).split())
