# SH1106 128x64 OLED over I2C for MicroPython, in the shape of micropython-lib's ssd1306
# driver (a framebuf.FrameBuffer with show()), so the table box draws on either the same way.
# The SH1106 has 132 columns of RAM for 128 pixels (the picture starts at column 2) and no
# horizontal addressing mode: show() writes each of the 8 pages on its own.

import framebuf
from micropython import const

_SET_PAGE = const(0xB0)
_COL_LOW = const(0x00)
_COL_HIGH = const(0x10)
_OFFSET = const(2)

_INIT = (
    0xAE,  # display off
    0xD5, 0x80,  # clock
    0xA8, 0x3F,  # multiplex 64
    0xD3, 0x00,  # display offset
    0x40,  # start line 0
    0xAD, 0x8B,  # charge pump on
    0xA1,  # segment remap
    0xC8,  # COM scan descending
    0xDA, 0x12,  # COM pins
    0x81, 0x80,  # contrast
    0xD9, 0x22,  # pre-charge
    0xDB, 0x35,  # VCOM deselect
    0xA4,  # follow RAM
    0xA6,  # normal (not inverted)
    0xAF,  # display on
)


class SH1106_I2C(framebuf.FrameBuffer):
    def __init__(self, width, height, i2c, addr=0x3C):
        self.width, self.height, self.i2c, self.addr = width, height, i2c, addr
        self.pages = height // 8
        self.buffer = bytearray(self.pages * width)
        super().__init__(self.buffer, width, height, framebuf.MONO_VLSB)
        for command in _INIT:
            self.write_cmd(command)
        self.fill(0)
        self.show()

    def write_cmd(self, command):
        self.i2c.writeto(self.addr, bytes((0x80, command)))

    def show(self):
        for page in range(self.pages):
            self.write_cmd(_SET_PAGE | page)
            self.write_cmd(_COL_LOW | (_OFFSET & 0x0F))
            self.write_cmd(_COL_HIGH | (_OFFSET >> 4))
            start = page * self.width
            self.i2c.writeto(self.addr, b"\x40" + self.buffer[start:start + self.width])
