"""main.py of a Pico 2 W table box (``bunco-pi pico flash`` copies it as main.py)."""

from bunco_box import pico, run

try:
    config_display = run.box.load_config(run.CONFIG)["display"]
except Exception:  # a missing or bad config is said by run.main, on the OLED too
    config_display = "ssd1306"
board = pico.PicoBoard(config_display)
if board.screen_problem:
    board.log(board.screen_problem)
run.main(board)
