"""Under MicroPython's unix port: the table box's own code on the stand-in board, in the
current directory (its flash): box.json, journal.log, state.json."""

from bunco_box import run
from sim_board import SimBoard

run.main(SimBoard())
