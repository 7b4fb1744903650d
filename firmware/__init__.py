"""The dice tray firmware, importable from a checkout so its logic runs on a PC too.

Only ``main.py`` and ``bunco_dice/`` go onto the Pico; this file lets
``python3 -m firmware.host_emulator`` and the tests import them under CPython.
"""
