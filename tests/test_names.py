"""The one rule for players' names (bunco_pi.rules.names), case by case."""

from __future__ import annotations

import pytest

from bunco_pi.rules.names import MAX_NAME, BadName, check_names, clean_name, looks_like_ghost


@pytest.mark.parametrize("raw, kept", [
    ("Ann", "Ann"),
    ("  Ann   Lee ", "Ann Lee"),
    ("O\u2019Brien", "O\u2019Brien"),  # the phone's apostrophe stays as typed
    ("Zoe\u0308", "Zo\u00eb"),  # NFC: one way to spell each name
    ("Nguye\u0302\u0303n", "Nguy\u1ec5n"),
    ("王秀英", "王秀英"),
    ("👩\u200d👧 Mai", "👩\u200d👧 Mai"),  # the joiner inside an emoji sequence stays
    ("می\u200cخواهم", "می\u200cخواهم"),  # Persian's non-joiner stays
    ("שרה", "שרה"),
    ("Ghosty", "Ghosty"),
    ("Ghost Rider", "Ghost Rider"),
    ("x" * MAX_NAME, "x" * MAX_NAME),
])
def test_names_kept(raw, kept):
    assert clean_name(raw) == kept


@pytest.mark.parametrize("raw, problem", [
    ("", "cannot be empty"),
    ("   ", "cannot be empty"),
    ("x" * (MAX_NAME + 1), f"at most {MAX_NAME} characters"),
    ("Ghost 1", "reads as a ghost's name"),
    ("ghost1", "reads as a ghost's name"),
    ("GHOST 12", "reads as a ghost's name"),
    ("g h o s t 3", "reads as a ghost's name"),
    ("Gh0st 1", "reads as a ghost's name"),
    ("Gho5t 1", "reads as a ghost's name"),
    ("Ｇｈｏｓｔ １", "reads as a ghost's name"),  # full-width
    ("Gһоѕt 1", "reads as a ghost's name"),  # Cyrillic һ о ѕ
    ("Ghοst 1", "reads as a ghost's name"),  # Greek ο
    ("Ghöst 1", "reads as a ghost's name"),
    ("Ghost ١", "reads as a ghost's name"),  # an Arabic-Indic digit
    ("Ghost", "reads as a ghost's name"),
    ("Ann\u202e", "U+202E (RIGHT-TO-LEFT OVERRIDE)"),
    ("\u202dAnn", "U+202D (LEFT-TO-RIGHT OVERRIDE)"),
    ("An\u2067n", "U+2067 (RIGHT-TO-LEFT ISOLATE)"),
    ("An\u200fn", "U+200F (RIGHT-TO-LEFT MARK)"),
    ("An\u200bn", "U+200B (ZERO WIDTH SPACE) is an invisible formatting character"),
    ("Ann\x00", "U+0000"),
    ("Ann\x1b[31m", "U+001B"),
    ("Ann\u2028Bea", "line separator"),
    ("Ann\ue000", "private-use"),
    ("\u0301Ann", "cannot start with an accent"),
    ("...", "at least one letter"),
    ("\u200dAnn", "must join two characters"),
])
def test_names_refused(raw, problem):
    with pytest.raises(BadName, match=problem.replace("(", r"\(").replace(")", r"\)")
                       .replace("+", r"\+")):
        clean_name(raw)


def test_a_refusal_is_one_line():
    for raw in ("Ghost 1", "Ann\u202e", "x" * 99, "\x07"):
        with pytest.raises(BadName) as err:
            clean_name(raw)
        assert "\n" not in str(err.value)


def test_the_ghosts_own_names_are_what_the_rule_refuses():
    """Every name the head gives a ghost ("Ghost 1" to "Ghost 2000") reads as a ghost's."""
    from bunco_pi.head.service import make_players
    from bunco_pi.rules.limits import MAX_TABLES

    ghosts = [p.name for p in make_players([], None, MAX_TABLES) if p.ghost]
    assert len(ghosts) == 4 * MAX_TABLES and all(looks_like_ghost(g) for g in ghosts)


def test_a_roster_refuses_two_names_that_read_alike():
    assert check_names(["Ann", "Bea"]) == ["Ann", "Bea"]
    with pytest.raises(BadName, match="entry 3: 'ANN' is entry 1 already"):
        check_names(["Ann", "Bea", " ANN "])
    with pytest.raises(BadName, match="entry 2: 'Ghost 4' reads"):
        check_names(["Ann", "Ghost 4"])
