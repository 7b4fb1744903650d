from __future__ import annotations

import os

import pytest

from bunco_pi.errors import UserError
from bunco_pi.table.records import write_atomic


def test_write_replaces_whole_file_and_leaves_no_temp(tmp_path):
    path = tmp_path / "night.json"
    write_atomic(path, "first")
    write_atomic(path, "second")
    assert path.read_text() == "second"
    assert sorted(os.listdir(tmp_path)) == ["night.json"]


def test_failed_write_keeps_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "night.json"
    write_atomic(path, "good")

    def broken_replace(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError):
        write_atomic(path, "new")
    assert path.read_text() == "good"
    assert sorted(os.listdir(tmp_path)) == ["night.json"]


def test_unwritable_directory_is_one_line(tmp_path):
    with pytest.raises(UserError, match="cannot write the record"):
        write_atomic(tmp_path / "missing" / "night.json", "x")
