import argparse
import json
import stat

import pytest

from bunco_pi.commands import broker as command
from bunco_pi.errors import UserError


def parse(argv):
    parser = argparse.ArgumentParser()
    command.register(parser.add_subparsers())
    return parser.parse_args(["broker", *argv])


def test_writes_credentials_and_broker_files_and_keeps_passwords(tmp_path, capsys):
    args = parse(["--dir", str(tmp_path), "--tables", "2", "--port", "1884"])
    assert args.func(args) == 0
    creds = json.loads((tmp_path / "credentials.json").read_text())["users"]
    assert sorted(creds) == ["head", "table-1", "table-2"]
    assert stat.S_IMODE((tmp_path / "credentials.json").stat().st_mode) == 0o600
    conf = (tmp_path / "broker" / "mosquitto.conf").read_text()
    assert "listener 1884 0.0.0.0" in conf.splitlines()
    assert "user table-2" in (tmp_path / "broker" / "acl").read_text()
    assert "mosquitto -c" in capsys.readouterr().out
    args = parse(["--dir", str(tmp_path), "--tables", "3"])
    args.func(args)
    again = json.loads((tmp_path / "credentials.json").read_text())["users"]
    assert {k: again[k] for k in creds} == creds and "table-3" in again


@pytest.mark.parametrize("argv, problem", [
    (["--tables", "0"], "--tables 0"),
    (["--tables", "2", "--port", "70000"], "--port 70000"),
    (["--tables", "2", "--autosave", "30"], "--autosave 30"),
    (["--tables", "2", "--owner", "no-such-user-here"], "--owner no-such-user-here"),
])
def test_bad_options_are_one_line_user_errors(tmp_path, argv, problem):
    args = parse(["--dir", str(tmp_path), *argv])
    with pytest.raises(UserError, match=problem):
        args.func(args)


def test_the_printed_start_command_runs_the_broker_as_printed(capsys):
    """Run exactly what ``bunco-pi broker`` prints, as whoever runs the tests (root included),
    then log in as a table over MQTT."""
    import os
    import shlex
    import signal
    import subprocess
    import tempfile
    import time
    from pathlib import Path

    import paho.mqtt.client as mqtt

    from bunco_pi.net.broker import free_port, load_credentials

    # Where an installer would put it: a directory the broker's own user can walk into.
    with tempfile.TemporaryDirectory(prefix="bunco-broker-cmd-") as where:
        os.chmod(where, 0o755)
        port = free_port()
        args = parse(["--dir", where, "--tables", "2", "--host", "127.0.0.1",
                      "--port", str(port)])
        assert args.func(args) == 0
        printed = [line for line in capsys.readouterr().out.splitlines()
                   if line.startswith("start it with: ")]
        assert len(printed) == 1
        argv = shlex.split(printed[0].removeprefix("start it with: "))
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE)
        try:
            password = load_credentials(Path(where) / "credentials.json").password("table-1")
            answers = []
            client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="table-1",
                                 protocol=mqtt.MQTTv5)
            client.username_pw_set("table-1", password)
            client.on_connect = lambda c, u, flags, reason, props: answers.append(reason)
            deadline = time.monotonic() + 10
            while not answers and time.monotonic() < deadline:
                assert proc.poll() is None, proc.stderr.read().decode(errors="replace")
                try:
                    client.connect("127.0.0.1", port, keepalive=5)
                except OSError:
                    time.sleep(0.1)
                    continue
                client.loop_start()
                while not answers and time.monotonic() < deadline:
                    time.sleep(0.05)
                client.loop_stop()
            client.disconnect()
            assert answers and not answers[0].is_failure, answers
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(5)
            proc.stderr.close()
