"""What a button gesture means at a table: shared by the Pi box and the Pico box.

The Pi box's ``TableMachine`` (``bunco_pi/table/machine.py``) and the Pico 2 W table box's
firmware (``firmware/bunco_box/``, copied onto the Pico beside it) both decide here which
entry a tap or a hold of a tally button makes while a round is being played, which buttons
wait for their release, what the screen's flash line says, and how an entry is written on the
wire. So the two boxes cannot drift apart on what a press means.

MicroPython runs this file unchanged: no imports, no typing, no dataclasses, no f-string
features MicroPython lacks. An entry is the table's JSON form (``{"tally": "point"}``,
``{"pass": True}``, ``{"roll": [3, 3, 5]}``, ``{"bell": True}``, ``{"undo": 1}``); its wire form
is the list of ``bunco_pi/rules/entries.py`` (``["tally", "point"]``).
"""

TALLIES = ("point", "three", "bunco")
# A tap of these waits for the release: holding them means something else.
HOLD_ROLES = ("pass", "undo")
FLASH = {"point": "+1", "three": "three of a kind", "bunco": "BUNCO!", "wipeout": "WIPEOUT"}

# What a playing table does for a gesture: enter an entry, or undo (the last entry, or the
# roller's whole turn).
ENTER, UNDO, UNDO_TURN = "enter", "undo", "undo-turn"


def hold_roles(twos_travel):
    """The buttons whose tap waits for release: under the all-twos traveler a held "three"
    is three 2s, so "three" waits too; otherwise it counts at once."""
    return HOLD_ROLES + ("three",) if twos_travel else HOLD_ROLES


def playing_press(role, kind, twos_travel):
    """What a ``tap`` or ``hold`` of ``role`` does while a round is played here:
    ``(ENTER, entry)``, ``(UNDO, None)``, ``(UNDO_TURN, None)`` or ``(None, None)``.
    ``twos_travel``: three 2s pass the traveler in this round."""
    if role == "three" and kind == "hold" and twos_travel:
        return ENTER, {"tally": "three", "face": 2}
    if role in TALLIES:
        return ENTER, {"tally": role}
    if role == "pass":
        return ENTER, ({"tally": "wipeout"} if kind == "hold" else {"pass": True})
    if role == "undo":
        return (UNDO_TURN if kind == "hold" else UNDO), None
    return None, None


def down_flash(role, twos_travel):
    """What the flash line says while a button that waits for its release is held down."""
    if role == "pass":
        return "hold: wipeout"
    if role == "undo":
        return "hold: undo turn"
    return "hold: three 2s" if twos_travel else "three"


def entry_flash(entry, name):
    """The flash line after ``entry`` counted for the roller ``name``."""
    if "tally" in entry:
        if entry.get("face") == 2:
            return "three 2s: travel! " + name
        return FLASH[entry["tally"]] + " " + name
    if "roll" in entry:
        return name + " " + "-".join(str(d) for d in entry["roll"])
    if "pass" in entry:
        return "dice to " + name
    if "bell" in entry:
        return "BELL! finish the turn"
    return "undone"


def wire_entry(entry):
    """The JSON entry as it travels and is logged (``bunco_pi.rules.entries``): a list."""
    if "roll" in entry:
        return ["roll", list(entry["roll"])]
    if "tally" in entry:
        face = entry.get("face")
        return ["tally", entry["tally"]] if face is None else ["tally", entry["tally"], face]
    if "pass" in entry:
        return ["pass"]
    if "bell" in entry:
        return ["bell"]
    if "undo" in entry:
        return ["undo"]
    raise ValueError("not a table entry: " + repr(entry))
