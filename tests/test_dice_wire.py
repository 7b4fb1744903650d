"""The dice sensor line protocol: parsing, formatting, framing and de-duplication."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bunco_pi.hardware.dice_wire import (
    MAX_LINE_BYTES,
    Fault,
    Hello,
    LineAssembler,
    LineParser,
    Rejected,
    Roll,
    Rolling,
    SensorError,
    SeqFilter,
    Unknown,
    checksum,
    crc16,
    format_message,
    parse_line,
)


def signed(body: str) -> bytes:
    """A protocol 1 line with a correct XOR, built independently of format_message."""
    value = 0
    for ch in body.encode("ascii"):
        value ^= ch
    return f"{body}*{value:02X}".encode("ascii")


def crc_signed(body: str) -> bytes:
    """A protocol 2 line: CRC-16/CCITT-FALSE worked bit by bit, not through binascii."""
    crc = 0xFFFF
    for byte in body.encode("ascii"):
        for bit in range(7, -1, -1):
            top = (crc >> 15) ^ (byte >> bit & 1)
            crc = (crc << 1) & 0xFFFF
            if top:
                crc ^= 0x1021
    return f"{body}*{crc:04X}".encode("ascii")


# --- checksum --------------------------------------------------------------------------------


def test_checksum_of_the_documented_example():
    # R^O^L^L^' '^'1'^'7'^' '^'3'^' '^'3'^' '^'5' worked by hand in the protocol doc.
    assert checksum("ROLL 17 3 3 5", protocol=1) == "2E"
    assert checksum("ROLL 17 3 3 5") == "F8D0"  # protocol 2, the default
    assert crc_signed("ROLL 17 3 3 5") == b"ROLL 17 3 3 5*F8D0"


def test_xor_checksum_is_two_uppercase_hex_digits():
    assert checksum(b"", protocol=1) == "00"
    assert checksum(b"\x0a", protocol=1) == "0A"
    assert checksum("HELLO 1.0.0", protocol=1) == "53"


def test_crc_is_crc16_ccitt_false():
    assert crc16(b"123456789") == 0x29B1  # the catalogue's check value for CCITT-FALSE
    assert checksum(b"") == "FFFF"
    assert checksum("123456789") == "29B1"


@given(st.binary(max_size=100))
def test_crc_agrees_with_a_bitwise_crc(data):
    body = data.decode("latin-1")
    if body.isascii():
        assert crc_signed(body)[-4:].decode() == checksum(data)


def test_checksum_of_an_unknown_protocol_is_refused():
    with pytest.raises(ValueError):
        checksum("ROLL 1 1 1 1", protocol=3)


# --- parsing good lines ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (b"ROLL 17 3 3 5*2E", Roll(17, (3, 3, 5))),
        (b"ROLL 17 3 3 5*2e", Roll(17, (3, 3, 5))),  # readers accept lowercase hex
        (b"ROLL 17 3 3 5*2E\r", Roll(17, (3, 3, 5))),
        (signed("ROLL 0 1 1 1"), Roll(0, (1, 1, 1))),
        (signed("ROLL 65535 6 6 6"), Roll(65535, (6, 6, 6))),
        (signed("ROLL 00017 2 4 6"), Roll(17, (2, 4, 6))),
        (signed("ROLL  5  1 2  3"), Roll(5, (1, 2, 3))),  # runs of spaces are one separator
        (signed("HELLO 1.0.0"), Hello("1.0.0")),
        (signed("ROLLING"), Rolling()),
        (signed("ERR flash write failed"), SensorError("flash write failed")),
        (signed("ERR a*b"), SensorError("a*b")),  # the checksum is after the LAST '*'
        (b"ROLL 17 3 3 5*F8D0", Roll(17, (3, 3, 5))),
        (b"ROLL 17 3 3 5*F8D0\r", Roll(17, (3, 3, 5))),
        (crc_signed("HELLO 2.0.0 proto=2"), Hello("2.0.0", (("proto", "2"),))),
        (crc_signed("ROLL 65535 6 6 6 src=cam"), Roll(65535, (6, 6, 6), (("src", "cam"),))),
        (crc_signed("ERR a*b"), SensorError("a*b")),
        (crc_signed("TILT 45"), Unknown("TILT", ("45",))),
    ],
)
def test_parse_good_lines(line, expected):
    assert parse_line(line) == expected


def test_parse_accepts_str():
    assert parse_line("ROLL 17 3 3 5*2E") == Roll(17, (3, 3, 5))


def test_extension_fields_are_kept_and_do_not_break_old_fields():
    assert parse_line(signed("ROLL 9 2 2 6 src=cam conf=0.97")) == Roll(
        9, (2, 2, 6), (("src", "cam"), ("conf", "0.97"))
    )
    assert parse_line(signed("HELLO 2.1 dice=3")) == Hello("2.1", (("dice", "3"),))
    assert parse_line(signed("ROLLING ms=800")) == Rolling((("ms", "800"),))


def test_unknown_message_type_is_ignored_not_rejected():
    assert parse_line(signed("TILT 45 deg")) == Unknown("TILT", ("45", "deg"))
    assert parse_line(signed("roll 1 2 3 4")) == Unknown("roll", ("1", "2", "3", "4"))


# --- parsing bad lines -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "fault"),
    [
        (b"ROLL 17 3 3 5", Fault.NO_CHECKSUM),
        (b"ROLL 17 3 3 5*", Fault.NO_CHECKSUM),
        (b"ROLL 17 3 3 5*2", Fault.NO_CHECKSUM),
        (b"ROLL 17 3 3 5*ZZ", Fault.NO_CHECKSUM),
        (b"ROLL 17 3 3 5 *2E", Fault.BAD_CHECKSUM),
        (b"ROLL 17 3 3 5*2F", Fault.BAD_CHECKSUM),
        (b"ROLL 17 3 3 6*2E", Fault.BAD_CHECKSUM),
        (b"*", Fault.NO_CHECKSUM),
        (b"", Fault.NO_CHECKSUM),
        (signed(""), Fault.BAD_FIELD),
        (signed(" ROLL 1 2 3 4"), Fault.BAD_FIELD),
        (signed("ROLL 17 3 3"), Fault.DICE_COUNT),
        (signed("ROLL 17 3 3 5 4"), Fault.DICE_COUNT),
        (signed("ROLL 17"), Fault.DICE_COUNT),
        (signed("ROLL 17 a=1 3 3 5"), Fault.DICE_COUNT),
        (signed("ROLL 17 0 3 5"), Fault.BAD_FACE),
        (signed("ROLL 17 3 7 5"), Fault.BAD_FACE),
        (signed("ROLL 17 3 3 x"), Fault.BAD_FACE),
        (signed("ROLL 17 3 3 06"), Fault.BAD_FACE),
        (signed("ROLL 17 3 3 -1"), Fault.BAD_FACE),
        (signed("ROLL"), Fault.BAD_SEQ),
        (signed("ROLL 65536 1 2 3"), Fault.BAD_SEQ),
        (signed("ROLL -1 1 2 3"), Fault.BAD_SEQ),
        (signed("ROLL +1 1 2 3"), Fault.BAD_SEQ),
        (signed("ROLL 123456 1 2 3"), Fault.BAD_SEQ),
        (signed("ROLL x 1 2 3"), Fault.BAD_SEQ),
        (signed("ROLL 5 1 2 3 =x"), Fault.BAD_FIELD),
        (signed("HELLO"), Fault.BAD_FIELD),
        (signed("HELLO v=1"), Fault.BAD_FIELD),
        (signed("HELLO 1.0 extra"), Fault.BAD_FIELD),
        (signed("ROLLING now"), Fault.BAD_FIELD),
        (signed("ERR"), Fault.BAD_FIELD),
        (signed("ERR   "), Fault.BAD_FIELD),
        (b"ROLL 17 3 3 5\x00*2E", Fault.GARBAGE),
        (b"ROLL 17 3\t3 5*2E", Fault.GARBAGE),
        (b"\xff\xfe", Fault.GARBAGE),
        (b"A" * (MAX_LINE_BYTES + 1), Fault.TOO_LONG),
        (signed("ROLL 5 1 2 3 a=x*y"), Fault.BAD_FIELD),  # '*' is no token character
        (b"ROLL 17 3 3 5*F8D1", Fault.BAD_CHECKSUM),
        (b"ROLL 17 3 3 6*F8D0", Fault.BAD_CHECKSUM),
        (b"ROLL 17 3 3 5*f8d0", Fault.NO_CHECKSUM),  # protocol 2 is uppercase only
        (b"ROLL 17 3 3 5*F8D", Fault.NO_CHECKSUM),
        (b"ROLL 17 3 3 5*F8D0A", Fault.NO_CHECKSUM),
        (crc_signed("ROLL 17 3 3"), Fault.DICE_COUNT),
        (crc_signed("ROLL 17 3 3 9"), Fault.BAD_FACE),
        (crc_signed("HELLO"), Fault.BAD_FIELD),
    ],
)
def test_parse_bad_lines(line, fault):
    result = parse_line(line)
    assert isinstance(result, Rejected)
    assert result.fault == fault


def test_parse_non_ascii_str_is_garbage():
    assert parse_line("ROLL 1 2 3 é*00").fault == Fault.GARBAGE


def test_longest_allowed_line_parses():
    body = "HELLO " + "v" * (MAX_LINE_BYTES - 3 - len("HELLO "))
    line = signed(body)
    assert len(line) == MAX_LINE_BYTES
    assert isinstance(parse_line(line), Hello)
    line = crc_signed(body[:-2])
    assert len(line) == MAX_LINE_BYTES
    assert isinstance(parse_line(line), Hello)
    assert parse_line(crc_signed(body[:-1])).fault == Fault.TOO_LONG


# --- protocol 1 and 2 on one link ------------------------------------------------------------


def test_hello_announces_the_protocol():
    assert parse_line(crc_signed("HELLO 2.0.0 proto=2")).protocol == 2
    assert parse_line(signed("HELLO 1.0.0")).protocol == 1
    assert Hello("x", (("proto", "junk"),)).protocol == 1


def test_a_link_takes_protocol_1_until_protocol_2_is_heard():
    parser = LineParser()
    assert parser.protocol is None
    assert parser.parse(b"ROLL 17 3 3 5*2E") == Roll(17, (3, 3, 5))  # an old sensor works
    assert parser.protocol == 1
    assert parser.parse(crc_signed("HELLO 2.0.0 proto=2")) == Hello("2.0.0", (("proto", "2"),))
    assert parser.protocol == 2
    # After protocol 2, an XOR line can only be noise: refused even with a correct XOR.
    assert parser.parse(b"ROLL 18 3 3 5*2F") == Rejected(Fault.OLD_CHECKSUM, b"ROLL 18 3 3 5*2F")
    assert parser.parse(crc_signed("ROLL 18 3 3 5")) == Roll(18, (3, 3, 5))
    parser.link_reopened()  # a different sensor may be on the port now
    assert parser.protocol is None
    assert parser.parse(b"ROLL 17 3 3 5*2E") == Roll(17, (3, 3, 5))


def test_a_rejected_line_does_not_lock_the_link():
    parser = LineParser()
    assert isinstance(parser.parse(b"ROLL 17 3 3 5*F8D1"), Rejected)
    assert parser.protocol is None
    assert parser.parse(b"ROLL 17 3 3 5*2E") == Roll(17, (3, 3, 5))


# --- formatting --------------------------------------------------------------------------------


FORMATTED = [
    (Roll(17, (3, 3, 5)), "ROLL 17 3 3 5"),
    (Hello("1.0.0"), "HELLO 1.0.0"),
    (Hello("2.0.0", (("proto", "2"),)), "HELLO 2.0.0 proto=2"),
    (Rolling(), "ROLLING"),
    (SensorError("no display"), "ERR no display"),
    (Roll(1, (1, 2, 3), (("src", "cam"),)), "ROLL 1 1 2 3 src=cam"),
    (Unknown("TILT", ("45",)), "TILT 45"),
]


@pytest.mark.parametrize(("message", "body"), FORMATTED)
def test_format(message, body):
    assert format_message(message) == crc_signed(body) + b"\n"
    assert format_message(message, protocol=1) == signed(body) + b"\n"


def test_format_the_documented_examples():
    assert format_message(Roll(17, (3, 3, 5)), protocol=1) == b"ROLL 17 3 3 5*2E\n"
    assert format_message(Hello("1.0.0"), protocol=1) == b"HELLO 1.0.0*53\n"
    assert format_message(Roll(17, (3, 3, 5))) == b"ROLL 17 3 3 5*F8D0\n"
    assert format_message(Hello("2.0.0", (("proto", "2"),))) == b"HELLO 2.0.0 proto=2*83B3\n"


@pytest.mark.parametrize(
    "message",
    [
        Roll(65536, (1, 2, 3)),
        Roll(-1, (1, 2, 3)),
        Roll(1, (0, 2, 3)),
        Roll(1, (1, 2, 7)),
        Roll(1, (1, 2)),  # type: ignore[arg-type]
        Hello(""),
        Hello("1 0"),
        Hello("v=1"),
        SensorError(""),
        SensorError("a*b"),
        SensorError("tab\there"),
        Hello("x" * 80),
        Roll(1, (1, 2, 3), (("a b", "c"),)),
        Roll(1, (1, 2, 3), (("a", "b c"),)),
        Unknown("TILT", ("4 5",)),
        Unknown("TILT", ("",)),
        Unknown("TI LT", ()),
    ],
)
def test_format_refuses_what_no_reader_would_accept(message):
    with pytest.raises(ValueError):
        format_message(message)


def test_format_refuses_a_non_message():
    with pytest.raises(TypeError):
        format_message("ROLL 1 2 3 4")  # type: ignore[arg-type]


# --- round trips and fuzzing -----------------------------------------------------------------

token = st.text(alphabet=st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=1)
clean_token = token.filter(lambda t: not any(c in t for c in "=*"))
extensions = st.lists(st.tuples(clean_token, token.filter(lambda t: "*" not in t)), max_size=3)
face = st.integers(1, 6)

messages = st.one_of(
    st.builds(
        Roll,
        st.integers(0, 65535),
        st.tuples(face, face, face),
        extensions.map(tuple),
    ),
    st.builds(Hello, clean_token, extensions.map(tuple)),
    st.builds(Rolling, extensions.map(tuple)),
    st.builds(
        SensorError,
        st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), min_size=1)
        .map(str.strip)
        .filter(lambda t: t and "*" not in t),
    ),
)


@given(messages, st.sampled_from((1, 2)))
def test_round_trip(message, protocol):
    try:
        wire = format_message(message, protocol)
    except ValueError:
        return  # too long for one line: format refuses rather than sending it
    assert wire.endswith(b"\n")
    assert parse_line(wire[:-1]) == message


@given(st.binary(max_size=200))
def test_random_bytes_never_raise(data):
    result = parse_line(data)
    assert isinstance(result, Rejected | Hello | Rolling | Roll | SensorError | Unknown)


@given(st.binary(max_size=400), st.lists(st.integers(1, 50), max_size=20))
def test_assembler_random_bytes_never_raise_and_stay_bounded(data, cuts):
    assembler = LineAssembler()
    pos = 0
    out = []
    for cut in [*cuts, len(data)]:
        out += assembler.feed(data[pos : pos + cut])
        pos += cut
    out += assembler.feed(data[pos:])
    out += assembler.flush()
    for item in out:
        if isinstance(item, bytes):
            assert 0 < len(item) <= MAX_LINE_BYTES
            assert all(0x20 <= b < 0x7F for b in item)
        else:
            assert len(item.line) <= MAX_LINE_BYTES + 1


@given(st.lists(messages, max_size=20), st.integers(1, 30))
def test_assembler_reassembles_any_chunking(batch, chunk):
    wires = []
    for message in batch:
        try:
            wires.append(format_message(message))
        except ValueError:
            continue
    stream = b"".join(wires)
    assembler = LineAssembler()
    lines = []
    for i in range(0, len(stream), chunk):
        lines += assembler.feed(stream[i : i + chunk])
    assert lines == [w[:-1] for w in wires]
    assert assembler.flush() == []


# --- framing ---------------------------------------------------------------------------------


def test_assembler_splits_lines_and_strips_cr():
    assembler = LineAssembler()
    assert assembler.feed(b"ROLL 1 1 1 1*2") == []
    assert assembler.feed(b"0\r\nHELLO x*00\nROLLI") == [b"ROLL 1 1 1 1*20", b"HELLO x*00"]
    assert assembler.feed(b"NG*19\n") == [b"ROLLING*19"]


def test_assembler_skips_blank_lines():
    assert LineAssembler().feed(b"\n\r\n\nA*41\n") == [b"A*41"]


def test_assembler_rejects_over_long_line_then_recovers():
    assembler = LineAssembler(max_len=10)
    out = assembler.feed(b"x" * 7)
    out += assembler.feed(b"y" * 1000)
    out += assembler.feed(b"z\nok*00\n")
    assert out == [Rejected(Fault.TOO_LONG, b"xxxxxxxyyy"), b"ok*00"]


def test_assembler_line_of_exactly_max_len_with_cr_is_fine():
    assembler = LineAssembler(max_len=5)
    assert assembler.feed(b"abcde\r\nabcdef\n") == [b"abcde", Rejected(Fault.TOO_LONG, b"abcde")]


def test_assembler_rejects_garbage_bytes_in_a_line():
    assembler = LineAssembler()
    assert assembler.feed(b"RO\x00LL*00\nok*00\n\xff\n") == [
        Rejected(Fault.GARBAGE, b"RO\x00LL*00"),
        b"ok*00",
        Rejected(Fault.GARBAGE, b"\xff"),
    ]


def test_flush_reports_a_partial_line_once():
    assembler = LineAssembler()
    assembler.feed(b"ROLL 3 1")
    assert assembler.flush() == [Rejected(Fault.PARTIAL, b"ROLL 3 1")]
    assert assembler.flush() == []
    assert assembler.feed(b"2 3 4*00\n") == [b"2 3 4*00"]


def test_flush_of_an_over_long_partial_is_too_long():
    assembler = LineAssembler(max_len=4)
    assembler.feed(b"abcdefgh")
    assert assembler.flush() == [Rejected(Fault.TOO_LONG, b"abcde")]


# --- de-duplication --------------------------------------------------------------------------


def test_seq_filter_accepts_forward_and_drops_repeats():
    f = SeqFilter()
    assert [f.accept(s) for s in (5, 6, 6, 7, 5, 10, 9, 10, 11)] == [
        True, True, False, True, False, True, False, False, True,
    ]  # fmt: skip
    assert f.last_seq == 11


def test_seq_filter_wraps_around():
    f = SeqFilter(last_seq=65534)
    assert [f.accept(s) for s in (65535, 0, 65535, 1, 0)] == [True, True, False, True, False]


def test_seq_filter_half_window_boundary():
    f = SeqFilter(last_seq=0)
    assert f.accept(32768) is False  # exactly half way round counts as behind
    assert f.accept(32767) is True


def test_seq_filter_hello_allows_a_restart_from_anywhere_but_not_a_repeat():
    f = SeqFilter(last_seq=1234)
    assert f.accept(3) is False  # behind, no HELLO: a stale repeat
    f.sensor_restarted()
    assert f.accept(1234) is False  # the same roll again is still a repeat
    assert f.accept(0) is True  # a wiped sensor counting from 0
    assert f.accept(0) is False
    assert f.accept(65000) is False  # resync used up: behind again means stale
    assert f.accept(1) is True


def test_seq_filter_first_roll_is_always_new():
    f = SeqFilter()
    assert f.last_seq is None
    assert f.accept(40000) is True
    assert f.last_seq == 40000


def test_the_example_session_in_the_protocol_doc_is_valid():
    doc = Path(__file__).resolve().parent.parent / "docs" / "dice-sensor-protocol.md"
    section = doc.read_text().split("## A minute on the wire", 1)[1]
    block = section.split("```", 2)[1]
    lines = [line for line in block.splitlines() if line.strip()]
    assert len(lines) == 5
    parsed = [parse_line(line) for line in lines]
    assert not [p for p in parsed if isinstance(p, Rejected)]
    assert parsed[2] == Roll(17, (3, 3, 5))


# --- line noise against protocol 2 -------------------------------------------------------------

NOISY_LINES = 100_000


def _corrupt(rng: random.Random, line: bytes) -> bytes:
    """Line noise of three kinds: 2..8 scattered bit flips, a burst of 2..24 bits, or 2..4
    picks of a byte replaced by another printable one (noise that passes the garbage filter).
    Always at least two bits differ, or a whole byte."""
    size = len(line)
    random01 = rng.random
    kind = int(random01() * 3)
    if kind == 2:
        data = bytearray(line)
        for _ in range(2 + int(random01() * 3)):
            pos = int(random01() * size)
            other = 0x20 + int(random01() * 94)  # one of the 94 printables that differ
            data[pos] = other + 1 if other >= line[pos] else other
        if data != line:
            return bytes(data)
    bits = size * 8
    if kind == 1:
        length = 2 + int(random01() * 23)
        mask = (rng.getrandbits(length) | 1 | 1 << (length - 1)) << int(random01() * (bits - length))
    else:
        mask = 0
        while mask.bit_count() < 2:
            for _ in range(2 + int(random01() * 7)):
                mask |= 1 << int(random01() * bits)
    return (int.from_bytes(line, "big") ^ mask).to_bytes(size, "big")


def test_no_noisy_protocol_2_line_is_taken_for_a_roll():
    """100,000 valid v2 ROLL lines, each corrupted in 2 or more bits, through the reader's
    framing and parser: not one comes out as a roll."""
    rng = random.Random(20261130)
    originals = []
    for i in range(500):
        extensions = (("src", "cam"), ("conf", "0.97")) if i % 3 == 0 else ()
        dice = (rng.randint(1, 6), rng.randint(1, 6), rng.randint(1, 6))
        originals.append(format_message(Roll(rng.randrange(65536), dice, extensions))[:-1])
    assembler = LineAssembler()
    link = LineParser()
    link.parse(originals[0])  # the sensor has spoken protocol 2 on this link
    fresh_link_rolls = []
    outcomes: dict[str, int] = {}
    for n in range(NOISY_LINES):
        original = originals[n % len(originals)]
        noisy = _corrupt(rng, original)
        assert noisy != original
        for item in assembler.feed(noisy + b"\r\n"):
            parsed = link.parse(item) if isinstance(item, bytes) else item
            assert not isinstance(parsed, Roll), (original, noisy)
            kind = parsed.fault.value if isinstance(parsed, Rejected) else type(parsed).__name__
            outcomes[kind] = outcomes.get(kind, 0) + 1
            # A link that has not heard protocol 2 yet also takes XOR lines; even there a
            # noisy line may only ever give back the roll that was sent (a line cut short
            # by a noise newline whose first two CRC digits happen to be its XOR).
            if isinstance(item, bytes) and isinstance(fresh := parse_line(item), Roll):
                fresh_link_rolls.append(fresh)
                assert fresh == parse_line(original), (original, noisy)
    assert sum(outcomes.values()) >= NOISY_LINES
    assert outcomes["bad_checksum"] > NOISY_LINES // 4  # the CRC, not just the grammar, works
    assert len(fresh_link_rolls) < 10


def test_every_two_bit_error_in_a_protocol_2_line_is_caught():
    """CRC-16/CCITT has a Hamming distance of 4 at these lengths: every 1, 2 and 3-bit
    error fails the check.  All 2-bit errors of one line, exhaustively."""
    line = crc_signed("ROLL 17 3 3 5 src=cam")
    bits = len(line) * 8
    for first in range(bits):
        once = bytearray(line)
        once[first // 8] ^= 0x80 >> first % 8
        assert isinstance(parse_line(bytes(once), accept_v1=False), Rejected)
        for second in range(first + 1, bits):
            twice = bytearray(once)
            twice[second // 8] ^= 0x80 >> second % 8
            assert isinstance(parse_line(bytes(twice), accept_v1=False), Rejected)
