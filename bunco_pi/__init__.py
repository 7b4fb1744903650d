"""bunco-pi: scoreboard boxes and a head-table coordinator for Bunco nights."""

__version__ = "0.1.0"
