"""The host password is kept only as a salted scrypt hash; sessions and CSRF tokens are random."""

import os
import stat

import pytest

from bunco_pi.cli import main
from bunco_pi.console.auth import (
    Sessions,
    check_password,
    hash_password,
    read_password_file,
    write_password_file,
)
from bunco_pi.errors import UserError


def test_a_hash_checks_only_its_own_password() -> None:
    stored = hash_password("tables-and-dice")
    assert "tables-and-dice" not in stored and stored.startswith("scrypt$")
    assert check_password("tables-and-dice", stored)
    assert not check_password("tables-and-dicE", stored)
    assert hash_password("tables-and-dice") != stored  # a fresh salt each time
    assert not check_password("x", "garbage") and not check_password("x", "md5$1$1$1$a$b")


def test_the_password_file_is_private_and_one_line_errors(tmp_path) -> None:
    path = tmp_path / "secrets" / "console-password"
    write_password_file(path, "long enough")
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert check_password("long enough", read_password_file(path))
    with pytest.raises(UserError, match="at least 8 characters"):
        write_password_file(path, "short")
    with pytest.raises(UserError, match="missing: cannot read the host password hash"):
        read_password_file(tmp_path / "missing")
    (tmp_path / "plain").write_text("hunter22\n")
    with pytest.raises(UserError, match="plain: not a host password hash"):
        read_password_file(tmp_path / "plain")


def test_the_head_command_sets_the_password_from_stdin(tmp_path, monkeypatch, capsys) -> None:
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO("a fine password\n"))
    path = tmp_path / "console-password"
    assert main(["head", "--set-host-password", str(path)]) == 0
    assert check_password("a fine password", read_password_file(path))


def test_sessions_expire_and_close() -> None:
    now = [0.0]
    sessions = Sessions(lifetime=10, clock=lambda: now[0])
    sid, csrf = sessions.open()
    other, _ = sessions.open()
    assert sessions.csrf(sid) == csrf and sid != other and len(csrf) >= 40
    assert sessions.csrf("forged") is None and sessions.csrf(None) is None
    sessions.close(other)
    assert sessions.csrf(other) is None
    now[0] = 11
    assert sessions.csrf(sid) is None
