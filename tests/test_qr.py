"""The console's address as a QR code on the head's OLED, through luma.core's dummy device:
every module of the code segno makes is on the screen, dark where it is dark."""

from luma.core.device import dummy

from bunco_pi.table.qr import QUIET, qr_matrix, qr_screen

URL = "http://bunco-head.local:8080/"


def test_every_module_of_the_code_is_on_the_screen() -> None:
    device = dummy(width=128, height=64, mode="1")
    device.display(qr_screen(URL))
    shown = device.image
    matrix = qr_matrix(URL)
    modules = len(matrix) + 2 * QUIET
    scale = 64 // modules
    assert scale >= 2  # two pixels a module: phones read it off a 0.96" screen
    left, top = 128 - modules * scale, (64 - modules * scale) // 2
    for y in range(-QUIET, len(matrix) + QUIET):
        for x in range(-QUIET, len(matrix) + QUIET):
            dark = bool(0 <= y < len(matrix) and 0 <= x < len(matrix) and matrix[y][x])
            for dy in range(scale):
                for dx in range(scale):
                    px = shown.getpixel((left + (x + QUIET) * scale + dx,
                                         top + (y + QUIET) * scale + dy))
                    assert bool(px) is not dark, (x, y)


def test_the_words_beside_the_code_are_drawn() -> None:
    image = qr_screen(URL, ["scan me"])
    words = image.crop((0, 0, 40, 20))
    lit = sum(1 for x in range(40) for y in range(20) if words.getpixel((x, y)))
    assert 20 < lit < 40 * 20 // 2
    assert qr_screen(URL, []).crop((0, 0, 40, 64)).getbbox() is None


def test_a_different_address_draws_a_different_code() -> None:
    assert qr_screen(URL).tobytes() != qr_screen("http://10.0.0.2:8080/").tobytes()


def test_the_head_table_turns_between_its_waiting_screen_and_the_code(mock_factory, tmp_path):
    """A real box (mock pins, dummy OLED) before its round: every QR_SECONDS the screen turns."""
    import io

    from pressing_hands import FakeClock

    from bunco_pi.rules.house import preset
    from bunco_pi.table.box import TableBox
    from bunco_pi.table.config import TableConfig
    from bunco_pi.table.link import InProcessLink
    from bunco_pi.table.node import QR_SECONDS
    from bunco_pi.table.screens import QrView, WaitingView, render

    clock = FakeClock()
    clock.t = 0.0
    device = dummy(width=128, height=64, mode="1")
    box = TableBox(TableConfig(players=("Ann", "Bea", "Cat", "Dot")), preset("classic"),
                   InProcessLink(), tmp_path / "j.db", device=device, clock=clock,
                   log=io.StringIO())
    box.node.console_url = URL
    box.start()
    try:
        assert box.node.sync(5.0)
        assert isinstance(box.node.view(), WaitingView)
        clock.t = QR_SECONDS + 0.1
        assert box.node.view() == QrView(URL)
        assert render(QrView(URL)).tobytes() == qr_screen(URL).tobytes()
        clock.t = 2 * QR_SECONDS + 0.1
        assert isinstance(box.node.view(), WaitingView)
        box.node.console_url = None
        clock.t = QR_SECONDS + 0.1
        assert isinstance(box.node.view(), WaitingView)  # an ordinary table never shows it
    finally:
        box.stop()


def test_the_head_tables_config_alone_turns_on_the_code(mock_factory, tmp_path):
    """[table] console_url in table.toml (the installer writes it on the head): no flag needed."""
    import io

    from pressing_hands import FakeClock

    from bunco_pi.rules.house import preset
    from bunco_pi.table.box import TableBox
    from bunco_pi.table.config import load_config
    from bunco_pi.table.link import InProcessLink
    from bunco_pi.table.node import QR_SECONDS
    from bunco_pi.table.screens import QrView

    path = tmp_path / "table.toml"
    path.write_text(f'[table]\nnumber = 1\nconsole_url = "{URL}"\n')
    clock = FakeClock()
    clock.t = QR_SECONDS + 0.1
    box = TableBox(load_config(path), preset("classic"), InProcessLink(), tmp_path / "j.db",
                   device=dummy(width=128, height=64, mode="1"), clock=clock, log=io.StringIO())
    box.start()
    try:
        assert box.node.sync(5.0)
        assert box.node.view() == QrView(URL)
    finally:
        box.stop()
