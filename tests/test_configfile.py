from __future__ import annotations

import pytest

from bunco_pi.configfile import Section, find_line, place, read_toml
from bunco_pi.errors import UserError

TEXT = """# a comment [night]
[night]
name = "n"   # name = "not this"
"tables" = 3

[broker]
port = 1883
name = "other"
"""


def test_find_line_knows_sections_keys_and_comments():
    assert find_line(TEXT, "night", "name") == 3
    assert find_line(TEXT, "night", "tables") == 4  # a quoted key
    assert find_line(TEXT, "broker", "name") == 8  # the same key in another section
    assert find_line(TEXT, "broker", "host") == 6  # absent: the section's header
    assert find_line(TEXT, "data", "dir") == 0
    assert place("f.toml", TEXT, "broker", "port") == "f.toml:7 [broker] port"
    assert place("f.toml", TEXT, "data") == "f.toml [data]"


def test_section_checks_name_the_line(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text(TEXT)
    data, text = read_toml(path)
    broker = Section(data, "broker", str(path), text, ("port", "name"))
    assert broker.integer("port", 1, 1, 65535, "a port") == 1883
    with pytest.raises(UserError, match=r"c.toml:8 \[broker\] name = 'other': must be true"):
        broker.boolean("name", True)
    with pytest.raises(UserError, match=r"c.toml:3 \[night\] name: unknown key \(known: x\)"):
        Section(data, "night", str(path), text, ("x",))
    path.write_text("[a\n")
    with pytest.raises(UserError, match="not valid TOML"):
        read_toml(path)
