"""The host password is kept only as a salted scrypt hash; sessions and CSRF tokens are random."""

import os
import stat

import pytest

from bunco_pi.cli import main
from bunco_pi.console.auth import (
    Guesses,
    Sessions,
    check_password,
    hash_password,
    read_password_file,
    weakness,
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
    with pytest.raises(UserError, match="too weak: it must have at least 10 characters"):
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


@pytest.mark.parametrize("password, why", [
    ("short", "at least 10 characters"),
    ("aaaaaaaaaaaaaaaa", "different characters"),
    ("Password2024!", "common password"),
    ("bunco-night-1", "common password"),
    ("1234567890", "too easy to guess"),
    ("abcdefghijk", "run of characters"),
    ("9876543210", "run of characters"),
    ("0571938264", "too easy to guess"),  # ten digits: 33 bits
])
def test_a_weak_host_password_is_refused_with_its_reason(password, why) -> None:
    assert why in (weakness(password) or "")


@pytest.mark.parametrize("password", ["tables-and-dice", "a fine password", "Zq8-wV3_kP2x",
                                      "correct horse battery staple", "7391846205317"])
def test_a_strong_host_password_passes(password) -> None:
    assert weakness(password) is None


def test_an_install_made_password_is_always_strong_enough() -> None:
    import secrets

    assert all(weakness(secrets.token_urlsafe(9)) is None for _ in range(2000))


def test_sessions_expire_when_idle_or_old_and_close() -> None:
    now = [0.0]
    sessions = Sessions(lifetime=100, idle=10, clock=lambda: now[0])
    sid, csrf = sessions.open()
    assert sessions.valid(sid) and sessions.check(sid, csrf) and len(csrf) >= 40
    assert not sessions.check(sid, "forged") and not sessions.check(sid, None)
    assert not sessions.valid("forged") and not sessions.valid(None)
    for _ in range(9):  # used every 9 s: idle never runs out, but the session's age does
        now[0] += 9
        assert sessions.check(sid, csrf)
    now[0] += 9  # 90 s old, used 9 s ago
    assert sessions.use(sid)
    now[0] += 11  # 101 s old
    assert not sessions.valid(sid) and not sessions.check(sid, csrf)
    sid, csrf = sessions.open()
    now[0] += 9
    assert sessions.valid(sid)  # asking does not keep it alive
    now[0] += 2
    assert not sessions.valid(sid)  # 11 s unused
    sid, csrf = sessions.open()
    sessions.close(sid)
    assert not sessions.valid(sid)


def test_a_new_login_ends_every_older_session() -> None:
    sessions = Sessions()
    first, first_csrf = sessions.open()
    second, second_csrf = sessions.open()
    assert not sessions.valid(first) and not sessions.check(first, first_csrf)
    assert sessions.check(second, second_csrf) and len(sessions) == 1
    assert not sessions.check(second, first_csrf)


def test_wrong_guesses_double_the_wait_of_their_address_only() -> None:
    now = [0.0]
    guesses = Guesses(free=3, first_wait=1.0, longest_wait=8.0, everyone=1000,
                      clock=lambda: now[0])
    for _ in range(3):
        assert guesses.wait("10.0.0.9") == 0
        guesses.failed("10.0.0.9")
    waits = []
    for _ in range(6):
        waits.append(guesses.wait("10.0.0.9"))
        now[0] += waits[-1]
        assert guesses.wait("10.0.0.9") == 0
        guesses.failed("10.0.0.9")
    assert waits == [1.0, 2.0, 4.0, 8.0, 8.0, 8.0]
    assert guesses.wait("10.0.0.10") == 0  # another address is not held up
    guesses.succeeded("10.0.0.9")
    assert guesses.wait("10.0.0.9") == 0


def test_many_addresses_guessing_make_every_guesser_wait_but_not_a_newcomer() -> None:
    now = [0.0]
    guesses = Guesses(free=3, everyone=30, window=60.0, clock=lambda: now[0])
    tried = 0
    for _ in range(3):  # 50 addresses, each trying whenever it is let
        for n in range(50):
            if guesses.wait(f"10.0.1.{n}") == 0:
                guesses.failed(f"10.0.1.{n}")
                tried += 1
        now[0] += 1
    assert tried == 50  # the first wrong try of each; then everyone who guessed waits
    assert guesses.wait("10.0.1.7") > 50
    assert guesses.wait("10.0.2.1") == 0  # the host, from an address that never guessed
    now[0] += 61
    assert guesses.wait("10.0.1.7") == 0  # a minute on, a guesser may try again


def test_the_guessers_table_stays_bounded() -> None:
    now = [0.0]
    guesses = Guesses(max_addresses=100, forget_after=60, clock=lambda: now[0])
    for n in range(1000):
        guesses.failed(f"10.{n // 250}.{n % 250}.1")
    assert len(guesses._wrong) <= 100
    now[0] += 61
    guesses.failed("10.9.9.9")
    assert len(guesses._wrong) == 1
