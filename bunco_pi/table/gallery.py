"""One sample of every screen, written as PNGs: the golden images and the docs pictures.

Regenerate both after changing a screen on purpose::

    python3 -m bunco_pi.table.gallery tests/golden docs/screens

The first directory gets 128x64 images exactly as the OLED shows them (what the tests compare
pixel for pixel); the second gets the same frames enlarged 4x for people to read.
"""

from __future__ import annotations

import sys
from pathlib import Path

from PIL import Image

from bunco_pi.table.screens import (
    BreakView,
    EndView,
    ErrorView,
    PlayingView,
    ResultsView,
    View,
    WaitingView,
    render,
)

PLAYERS = ("Ann", "Bea", "Cat", "Dot")

SAMPLES: dict[str, View] = {
    "waiting": WaitingView(table=2, players=PLAYERS),
    "playing": PlayingView(table=1, target=3, score_a=12, score_b=7, roller="Ann",
                           roller_team="A", set_number=2),
    "playing-feedback": PlayingView(table=1, target=3, score_a=13, score_b=7, roller="Ann",
                                    roller_team="A", set_number=2, flash="+1 Ann"),
    "bell": PlayingView(table=1, target=5, score_a=21, score_b=16, roller="Bea",
                        roller_team="B", bell=True, flash="BELL: Bea finishes"),
    "results": ResultsView(table=1, won=True, score_a=23, score_b=16,
                           moves=("Ann, Cat: stay T1", "Bea, Dot: go to T3"),
                           hint="pass: next round"),
    "playing-individual": PlayingView(table=2, target=6, score_a=17, score_b=9, roller="Cat",
                                      roller_team="A", seat_scores=(8, 4, 9, 5), roller_seat=3),
    "results-individual": ResultsView(table=2, won=False, score_a=17, score_b=9,
                                      headline="Bea moves", moves=("Bea: to table 3",),
                                      hint="pass: go on"),
    "break": BreakView(message="break", detail="back after the break"),
    "end": EndView(prizes=(("Most buncos", "Ann"), ("Most wins", "Bea"),
                           ("Most losses", "Cat"), ("Traveler", "Dot"))),
    "error-dice": ErrorView(title="dice sensor",
                            lines=("unplugged or silent:", "keep using buttons")),
    "dice-warning": PlayingView(table=1, target=4, score_a=5, score_b=9, roller="Cat",
                                roller_team="A", warning="dice off: use buttons"),
}


# Names as groups type them, four a script: every screen that shows a name is drawn with them.
NAME_SCRIPTS: dict[str, tuple[str, str, str, str]] = {
    "apostrophe": ("O\u2019Brien", "D\u2019Arcy", "N\u2019Dour", "L\u2019Amour"),
    "cyrillic": ("Наташа", "Ольга", "Юлия", "Светлана"),
    "greek": ("Ελένη", "Σοφία", "Δήμητρα", "Ιωάννα"),
    "polish": ("Małgorzata", "Łucja", "Żaneta", "Jadwiga Ściś"),
    "czech": ("Růžena", "Jiřina", "Květa", "Dagmar Čapková"),
    "vietnamese": ("Nguyễn Thị Hương", "Trần Thu", "Lê Ngọc Ánh", "Phạm Thủy"),
    "cjk": ("王秀英", "李娜", "佐藤花子", "김민지"),
    "emoji": ("Ann 🎲", "🌸 Mai", "Bea 👩\u200d👧", "Dot ✨"),
    "arabic-hebrew": ("فاطمة", "ليلى", "שרה", "רבקה"),
    "combining": ("Fo\u0323la\u0301s\u0323ade\u0301", "Te\u0300mi\u0301to\u0323\u0301pe\u0323\u0301",
                  "Ọ\u0300s\u0323un", "Ado\u0323\u0300"),
}


def name_views(names: tuple[str, str, str, str]) -> dict[str, View]:
    """Every screen that shows a name, drawn with ``names`` (seat 1 first)."""
    a, b, c, d = names
    return {
        "waiting": WaitingView(table=2, players=names),
        "playing": PlayingView(table=1, target=3, score_a=12, score_b=7, roller=a,
                               roller_team="A", set_number=2),
        "playing-feedback": PlayingView(table=1, target=3, score_a=13, score_b=7, roller=a,
                                        roller_team="A", set_number=2, flash=f"+1 {a}"),
        "bell": PlayingView(table=1, target=5, score_a=21, score_b=16, roller=b,
                            roller_team="B", bell=True, flash=f"BELL: {b} finishes"),
        "playing-individual": PlayingView(table=2, target=6, score_a=17, score_b=9, roller=c,
                                          roller_team="A", seat_scores=(8, 4, 9, 5),
                                          roller_seat=3),
        "results": ResultsView(table=1, won=True, score_a=23, score_b=16,
                               moves=(f"{a}, {c}: stay T1", f"{b}, {d}: go to T3"),
                               hint="pass: next round"),
        "results-individual": ResultsView(table=2, won=False, score_a=17, score_b=9,
                                          headline=f"{b} moves", moves=(f"{b}: to table 3",),
                                          hint="pass: go on"),
        "break": BreakView(message="break", detail=f"{d}: back after the break"),
        "end": EndView(prizes=(("Most buncos", a), ("Most wins", b), ("Most losses", c),
                               ("50/50", d))),
    }


def sheet(frames: list[Image.Image], columns: int = 3, gap: int = 2) -> Image.Image:
    """Frames side by side, ``columns`` a row, on a 1-bit sheet with ``gap`` pixels between."""
    rows = (len(frames) + columns - 1) // columns
    out = Image.new("1", (columns * (128 + gap) - gap, rows * (64 + gap) - gap), 1)
    for i, frame in enumerate(frames):
        out.paste(frame, ((i % columns) * (128 + gap), (i // columns) * (64 + gap)))
    return out


def name_sheet(script: str) -> Image.Image:
    return sheet([render(v) for v in name_views(NAME_SCRIPTS[script]).values()])


def write(golden_dir: Path, docs_dir: Path | None = None) -> list[Path]:
    written = []
    golden_dir.mkdir(parents=True, exist_ok=True)
    for name, view in SAMPLES.items():
        image = render(view)
        path = golden_dir / f"{name}.png"
        image.save(path)
        written.append(path)
        if docs_dir is not None:
            docs_dir.mkdir(parents=True, exist_ok=True)
            big = image.convert("L").resize((image.width * 4, image.height * 4),
                                            Image.Resampling.NEAREST)
            big.save(docs_dir / f"{name}.png")
            written.append(docs_dir / f"{name}.png")
    for script in NAME_SCRIPTS:
        image = name_sheet(script)
        path = golden_dir / f"names-{script}.png"
        image.save(path)
        written.append(path)
        if docs_dir is not None:
            big = image.convert("L").resize((image.width * 2, image.height * 2),
                                            Image.Resampling.NEAREST)
            big.save(docs_dir / f"names-{script}.png")
            written.append(docs_dir / f"names-{script}.png")
    return written


def main(argv: list[str]) -> int:
    if not argv or len(argv) > 2:
        print("usage: python3 -m bunco_pi.table.gallery GOLDEN_DIR [DOCS_DIR]", file=sys.stderr)
        return 2
    for path in write(Path(argv[0]), Path(argv[1]) if len(argv) > 1 else None):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
