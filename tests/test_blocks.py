from PIL import Image

from bunco_pi.table.blocks import QUADRANTS, to_blocks


def test_each_quadrant_maps_to_its_character():
    image = Image.new("1", (4, 2), 0)
    image.putpixel((0, 0), 1)  # top-left of cell 0
    image.putpixel((3, 1), 1)  # bottom-right of cell 1
    assert to_blocks(image) == ["▘▗"]


def test_full_frame_is_64_by_32_and_round_trips():
    image = Image.new("1", (128, 64), 0)
    for x in range(0, 128, 3):
        image.putpixel((x, (x * 7) % 64), 1)
    lines = to_blocks(image)
    assert len(lines) == 32 and all(len(line) == 64 for line in lines)
    back = Image.new("1", (128, 64), 0)
    for row, line in enumerate(lines):
        for col, char in enumerate(line):
            index = QUADRANTS.index(char)
            for bit, (dx, dy) in enumerate(((0, 0), (1, 0), (0, 1), (1, 1))):
                if index >> bit & 1:
                    back.putpixel((col * 2 + dx, row * 2 + dy), 1)
    assert back.tobytes() == image.tobytes()
