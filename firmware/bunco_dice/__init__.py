"""The dice tray's logic, with no hardware in it: runs under MicroPython and CPython."""
