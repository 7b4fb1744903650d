"""Under MicroPython's unix port: draw views with the Pico box's own drawing code (layout.py,
bitfont.py and framebuf, as on the Pico) and print each frame's bytes as hex, one a line.

argv: the font file, a file of views (layout.py's dicts), one JSON a line."""

import binascii
import gc
import json
import sys

import bitfont
import framebuf
import layout

font = bitfont.BitFont(sys.argv[1])
buffer = bytearray(128 * 64 // 8)
fb = framebuf.FrameBuffer(buffer, 128, 64, framebuf.MONO_VLSB)  # the SSD1306's and SH1106's
with open(sys.argv[2]) as f:
    for line in f:
        fb.fill(0)
        bitfont.paint(fb, layout.ops(json.loads(line), font), font)
        print(binascii.hexlify(buffer).decode())
        gc.collect()
