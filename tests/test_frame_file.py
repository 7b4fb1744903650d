"""The --frame-file writer: block characters of each new frame, written whole."""

from PIL import Image, ImageDraw

from bunco_pi.table.blocks import to_blocks
from bunco_pi.table.frame_file import FrameFile


def frame(x):
    image = Image.new("1", (128, 64), 0)
    ImageDraw.Draw(image).rectangle((x, 0, x + 3, 3), fill=1)
    return image


def test_each_new_frame_replaces_the_file_and_a_repeat_is_not_written(tmp_path):
    path = tmp_path / "screens" / "table-1.txt"
    write = FrameFile(path)
    write(frame(0))
    assert path.read_text().splitlines() == to_blocks(frame(0))
    write(frame(0))
    assert write.writes == 1
    write(frame(10))
    assert write.writes == 2
    lines = path.read_text().splitlines()
    assert lines == to_blocks(frame(10)) and lines[0][5:7] == "██"
    assert [p.name for p in path.parent.iterdir()] == ["table-1.txt"]  # no temporary left
