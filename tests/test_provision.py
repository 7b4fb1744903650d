"""The files the installer writes: parsed back, and the broker ones run in a real mosquitto."""

import io
import os
import queue
import shutil
import socket
import subprocess
import time
from pathlib import Path

import paho.mqtt.client as mqtt
import pytest

from bunco_pi import provision
from bunco_pi.errors import UserError
from bunco_pi.hardware import pinmap
from bunco_pi.head.config import load_head_config
from bunco_pi.net.broker import Credentials, hash_matches, load_credentials
from bunco_pi.table.config import load_config

MOSQUITTO = shutil.which("mosquitto") or (
    "/usr/sbin/mosquitto" if os.path.exists("/usr/sbin/mosquitto") else None)


def test_table_config_is_what_the_table_box_reads(tmp_path):
    path = tmp_path / "table.toml"
    path.write_text(provision.table_config(3, "bunco-head.local", etc=str(tmp_path)))
    cfg = load_config(path)
    assert (cfg.number, cfg.node_name) == (3, "table-3")
    assert (cfg.broker.host, cfg.broker.port, cfg.broker.discover) == (
        "bunco-head.local", 1883, True)
    assert cfg.broker.credentials == tmp_path / "secrets" / "credentials.json"
    assert cfg.buttons.pins == pinmap.default_button_pins()
    assert cfg.display.address == pinmap.DEFAULT_I2C_ADDRESS and cfg.dice_port == ""
    assert "[camera]" in path.read_text() and cfg.camera.source == ""
    assert cfg.data_dir == Path(provision.DATA_DIR)
    own = tmp_path / "own.toml"
    own.write_text(provision.table_config(1, "127.0.0.1", discover=False))
    assert load_config(own).broker.discover is False


def test_head_config_is_what_the_head_reads(tmp_path):
    (tmp_path / "rules.toml").write_text(
        provision.rules_config(Path(provision.__file__).parent / "rules" / "presets", "core"))
    path = tmp_path / "head.toml"
    path.write_text(provision.head_config("friday-night", 4, port=1884, etc=str(tmp_path)))
    cfg = load_head_config(path)
    assert (cfg.night, cfg.tables, cfg.players, cfg.roster) == ("friday-night", 4, 16, None)
    assert cfg.rules_file == tmp_path / "rules.toml" and cfg.house_rules().name
    assert (cfg.broker.host, cfg.broker.port) == ("127.0.0.1", 1884)
    assert cfg.broker.credentials == tmp_path / "secrets" / "credentials.json"
    pins = pinmap.default_head_pins()
    assert (cfg.bell_pin, cfg.buzzer_pin, cfg.buzzer_kind) == (
        pins["bell"], pins["buzzer"], "TonalBuzzer")
    assert cfg.record == Path(provision.DATA_DIR) / "friday-night.record.json"


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: provision.table_config(0, "h"), "--table 0"),
        (lambda: provision.table_config(2, "bad host!"), "--head-host 'bad host!'"),
        (lambda: provision.table_config(2, "h", port=70000), "--port 70000"),
        (lambda: provision.head_config("x\ny", 4), "--night"),
        (lambda: provision.head_config("Friday night", 4), "--night 'Friday night'"),
        (lambda: provision.head_config("ok", 0), "--tables 0"),
        (lambda: provision.table_credentials(2, "  \n"), "table 2's password: empty"),
        (lambda: provision.table_credentials(501, "pw"), "--table 501"),
        (lambda: provision.head_config("ok", 501), "--tables 501"),
    ],
)
def test_bad_input_names_the_option(call, message):
    with pytest.raises(UserError, match=message):
        call()


def test_rules_config_is_a_loadable_preset(tmp_path):
    from bunco_pi.rules.house import load_rules, preset

    presets = Path(provision.__file__).parent / "rules" / "presets"
    path = tmp_path / "rules.toml"
    path.write_text(provision.rules_config(presets, "rotate"))
    assert load_rules(path) == preset("rotate")
    with pytest.raises(UserError, match="--preset 'house': not a shipped preset .*classic"):
        provision.rules_config(presets, "house")


def test_head_credentials_keep_every_password_and_add_new_tables():
    first = provision.head_credentials(2)
    assert set(first.passwords) == {"head", "table-1", "table-2"}
    assert len(set(first.passwords.values())) == 3
    assert all(len(pw) >= 32 for pw in first.passwords.values())
    grown = provision.head_credentials(3, first)
    assert {u: grown.passwords[u] for u in first.passwords} == dict(first.passwords)
    assert set(grown.passwords) - set(first.passwords) == {"table-3"}


def test_cli_makes_the_broker_files_from_one_credentials_file(tmp_path, capsys, monkeypatch):
    creds = tmp_path / "credentials.json"
    assert provision.main(["credentials", "--tables", "2", "--file", str(creds)]) == 0
    creds.write_text(capsys.readouterr().out)
    passwords = load_credentials(creds).passwords
    assert provision.main(["credentials", "--tables", "2", "--file", str(creds)]) == 0
    assert capsys.readouterr().out == creds.read_text()  # nothing new: the same text

    assert provision.main(["passwd", "--credentials", str(creds)]) == 0
    passwd = capsys.readouterr().out
    lines = dict(line.split(":", 1) for line in passwd.splitlines())
    # every node, the doctor of each, who logs in with that node's password, and the head's
    # news connection, with the head's
    assert lines.keys() == {*passwords, *(f"doctor-{u}" for u in passwords), "head-news"}
    own = {"head-news": "head"}
    assert all(hash_matches(passwords[own.get(u, u.removeprefix("doctor-"))], h)
               for u, h in lines.items())
    (tmp_path / "passwd").write_text(passwd)
    assert provision.main(["passwd", "--credentials", str(creds),
                           "--previous", str(tmp_path / "passwd")]) == 0
    assert capsys.readouterr().out == passwd

    assert provision.main(["acl", "--credentials", str(creds)]) == 0
    acl = capsys.readouterr().out
    assert "user table-2\ntopic read bunco/#\ntopic write bunco/+/table/2/events\n" in acl

    assert provision.main(["password", "--credentials", str(creds), "--user", "table-2"]) == 0
    assert capsys.readouterr().out == passwords["table-2"] + "\n"
    assert provision.main(["password", "--credentials", str(creds), "--user", "table-9"]) == 2
    assert "table-9" in capsys.readouterr().err

    monkeypatch.setattr("sys.stdin", io.StringIO(passwords["table-2"] + "\n"))
    assert provision.main(["table-credentials", "--table", "2"]) == 0
    (tmp_path / "t2.json").write_text(capsys.readouterr().out)
    assert load_credentials(tmp_path / "t2.json") == Credentials(
        {"table-2": passwords["table-2"]})


def test_cli_prints_a_config_and_refuses_bad_input(capsys):
    assert provision.main(["table-config", "--table", "2", "--head-host", "10.0.0.5"]) == 0
    assert 'host = "10.0.0.5"' in capsys.readouterr().out
    assert provision.main(["table-config", "--table", "501", "--head-host", "h"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--table 501" in err


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
    credentials = provision.head_credentials(3)
    passwords = dict(credentials.passwords)
    from bunco_pi.net.broker import acl_text, password_file_text
    (etc / "mosquitto" / "passwd").write_text(password_file_text(credentials))
    (etc / "mosquitto" / "acl").write_text(acl_text(passwords))
    conf = provision.mosquitto_conf(port, etc=str(etc), data_dir=str(tmp_path / "data"))
    # The real config listens on every interface; tests stay on loopback.
    assert f"listener {port}\n" in conf
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
    good, rc = _client(port, "table-2", passwords["table-2"])
    assert not rc.is_failure
    good.loop_stop()
    good.disconnect()
    bad, rc = _client(port, "table-2", "wrong")
    assert rc.is_failure
    bad.loop_stop()


def test_generated_acl_keeps_a_table_to_its_own_topics(broker):
    port, passwords = broker
    inbox: queue.Queue = queue.Queue()
    head, _ = _client(port, "head", passwords["head"], inbox)
    head.subscribe("bunco/#", qos=1)
    time.sleep(0.3)
    table2, _ = _client(port, "table-2", passwords["table-2"])
    for forged in ("bunco/n/table/3/events", "bunco/n/table/2/ack", "bunco/n/state",
                   "bunco/n/control", "bunco/n/node/table-3/status", "bunco/n/node/head/status"):
        table2.publish(forged, b"forged", qos=1).wait_for_publish(5)
    table2.publish("bunco/n/table/2/events", b"mine", qos=1).wait_for_publish(5)
    table2.publish("bunco/n/node/table-2/status", b"online", qos=1).wait_for_publish(5)
    received = [inbox.get(timeout=5), inbox.get(timeout=5)]
    time.sleep(0.3)
    while not inbox.empty():
        received.append(inbox.get_nowait())
    assert received == [("bunco/n/table/2/events", b"mine"),
                        ("bunco/n/node/table-2/status", b"online")]
    for c in (head, table2):
        c.loop_stop()
        c.disconnect()
