"""The Pico table box's wiring: the one pin map (GP numbers). hardware/pico-wiring.md is
generated from it (``bunco_pi.hardware.pico_wiring``); the firmware reads it at start."""

# Each button: one leg to its GP pin (internal pull-up), the other to GND. Pressed = low.
BUTTONS = {
    "point": 10,
    "three": 11,
    "bunco": 12,
    "pass": 13,
    "undo": 14,
    "roll": 15,
}
# The OLED on I2C0 (SSD1306 or SH1106, 128x64, address 0x3C).
I2C_ID = 0
SDA = 4
SCL = 5
OLED_ADDRESS = 0x3C
