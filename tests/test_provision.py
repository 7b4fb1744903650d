"""The files the installer writes: parsed back, and the broker ones run in a real mosquitto."""

import os
import queue
import shutil
import socket
import subprocess
import time
import tomllib
from pathlib import Path

import paho.mqtt.client as mqtt
import pytest

from bunco_pi import provision
from bunco_pi.errors import UserError
from bunco_pi.hardware import pinmap

MOSQUITTO = shutil.which("mosquitto") or (
    "/usr/sbin/mosquitto" if os.path.exists("/usr/sbin/mosquitto") else None)


def test_table_config_parses_and_carries_the_pin_map():
    cfg = tomllib.loads(provision.table_config(3, "bunco-head.local"))
    assert cfg["table"]["number"] == 3
    assert cfg["broker"] == {
        "discover": True, "host": "bunco-head.local", "port": 1883, "username": "table3",
        "password_file": "/etc/bunco-pi/secrets/table.password"}
    assert cfg["pins"] == pinmap.default_button_pins()
    assert cfg["display"]["i2c_address"] == pinmap.DEFAULT_I2C_ADDRESS


def test_head_config_parses():
    cfg = tomllib.loads(provision.head_config("Friday night", 4, port=1884))
    assert cfg["night"] == {"name": "Friday night", "tables": 4,
                            "rules": "/etc/bunco-pi/rules.toml"}
    assert cfg["pins"] == pinmap.default_head_pins()
    assert cfg["broker"]["port"] == 1884


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: provision.table_config(0, "h"), "--table 0"),
        (lambda: provision.table_config(2, "bad host!"), "--head-host 'bad host!'"),
        (lambda: provision.table_config(2, "h", port=70000), "--port 70000"),
        (lambda: provision.head_config("x\ny", 4), "--night"),
        (lambda: provision.head_config("ok", 0), "--tables 0"),
        (lambda: provision.mosquitto_password_line("a:b", "pw"), "'a:b'"),
    ],
)
def test_bad_input_names_the_option(call, message):
    with pytest.raises(UserError, match=message):
        call()


def test_night_names_with_quotes_are_refused():
    with pytest.raises(UserError, match="--night"):
        provision.head_config('Fri "big" night', 4)


def test_rules_config_is_a_loadable_preset(tmp_path):
    from bunco_pi.rules.house import load_rules, preset

    presets = Path(provision.__file__).parent / "rules" / "presets"
    path = tmp_path / "rules.toml"
    path.write_text(provision.rules_config(presets, "rotate"))
    assert load_rules(path) == preset("rotate")
    with pytest.raises(UserError, match="--preset 'house': not a shipped preset .*classic"):
        provision.rules_config(presets, "house")


def test_secrets_are_long_and_fresh():
    a, b = provision.new_secret(), provision.new_secret()
    assert a != b and len(a) >= 32


def test_password_line_is_mosquittos_pbkdf2_format():
    line = provision.mosquitto_password_line("table2", "pw", salt=b"0123456789ab")
    user, _, rest = line.partition(":")
    kind, rounds, salt, digest = rest.split("$")[1:]
    assert (user, kind, rounds, salt) == ("table2", "7", "101", "MDEyMzQ1Njc4OWFi")
    # Known answer: PBKDF2-HMAC-SHA512("pw", "0123456789ab", 101 rounds), base64.
    import base64
    import hashlib
    expected = base64.b64encode(hashlib.pbkdf2_hmac("sha512", b"pw", b"0123456789ab", 101))
    assert digest == expected.decode()


def test_acl_gives_each_table_only_its_own_topics():
    acl = provision.mosquitto_acl(3)
    assert "user table3\ntopic read bunco/#\ntopic write bunco/+/table/3/events\n" in acl
    assert "user table4" not in acl
    assert "user head\ntopic readwrite bunco/#" in acl


def test_cli_prints_a_config_and_refuses_bad_input(capsys, monkeypatch):
    assert provision.main(["table-config", "--table", "2", "--head-host", "10.0.0.5"]) == 0
    assert 'host = "10.0.0.5"' in capsys.readouterr().out
    assert provision.main(["table-config", "--table", "200", "--head-host", "h"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--table 200" in err


# --- the generated broker files, in a real broker ------------------------------------------

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def broker(tmp_path):
    if MOSQUITTO is None:
        pytest.skip("mosquitto is not installed (Debian package: mosquitto)")
    port = _free_port()
    etc = tmp_path / "etc"
    (etc / "mosquitto").mkdir(parents=True)
    passwords = {"head": provision.new_secret(), "table2": provision.new_secret(),
                 "table3": provision.new_secret()}
    (etc / "mosquitto" / "passwd").write_text(
        "".join(provision.mosquitto_password_line(u, p) + "\n" for u, p in passwords.items()))
    (etc / "mosquitto" / "acl").write_text(provision.mosquitto_acl(3))
    conf = provision.mosquitto_conf(port, etc=str(etc), data_dir=str(tmp_path / "data"))
    # The real config listens on every interface; tests stay on loopback.
    conf = conf.replace(f"listener {port}\n", f"listener {port} 127.0.0.1\n")
    if os.geteuid() == 0:
        conf += "user root\n"  # as root mosquitto would switch to a user who can't read tmp
    (tmp_path / "data").mkdir()
    (tmp_path / "mosquitto.conf").write_text(conf)
    proc = subprocess.Popen([MOSQUITTO, "-c", str(tmp_path / "mosquitto.conf")],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            if proc.poll() is not None:
                pytest.fail(f"mosquitto refused the generated config: {proc.stdout.read()}")
            time.sleep(0.05)
    else:
        proc.kill()
        pytest.fail("mosquitto did not listen within 10 s")
    yield port, passwords
    proc.terminate()
    proc.wait(timeout=10)


def _client(port, user, password, inbox=None):
    done: queue.Queue = queue.Queue()
    client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=f"t-{user}",
                         protocol=mqtt.MQTTv5)
    client.username_pw_set(user, password)
    client.on_connect = lambda c, u, f, rc, p: done.put(rc)
    if inbox is not None:
        client.on_message = lambda c, u, m: inbox.put((m.topic, m.payload))
    client.connect("127.0.0.1", port)
    client.loop_start()
    rc = done.get(timeout=10)
    return client, rc


def test_generated_broker_config_authenticates(broker):
    port, passwords = broker
    good, rc = _client(port, "table2", passwords["table2"])
    assert not rc.is_failure
    good.loop_stop()
    good.disconnect()
    bad, rc = _client(port, "table2", "wrong")
    assert rc.is_failure
    bad.loop_stop()


def test_generated_acl_keeps_a_table_to_its_own_topics(broker):
    port, passwords = broker
    inbox: queue.Queue = queue.Queue()
    head, _ = _client(port, "head", passwords["head"], inbox)
    head.subscribe("bunco/#", qos=1)
    time.sleep(0.3)
    table2, _ = _client(port, "table2", passwords["table2"])
    table2.publish("bunco/n/table/3/events", b"forged", qos=1).wait_for_publish(5)
    table2.publish("bunco/n/table/2/events", b"mine", qos=1).wait_for_publish(5)
    received = [inbox.get(timeout=5)]
    time.sleep(0.3)
    while not inbox.empty():
        received.append(inbox.get_nowait())
    assert received == [("bunco/n/table/2/events", b"mine")]
    for c in (head, table2):
        c.loop_stop()
        c.disconnect()
