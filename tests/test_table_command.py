"""``bunco-pi table``: its argument handling, its one-line errors, and a whole standalone
run in a subprocess fed by a pty speaking the dice sensor protocol."""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
import tty
from pathlib import Path

import pytest

from bunco_pi.commands import table as table_command
from bunco_pi.errors import UserError
from bunco_pi.table.config import load_config

ROOT = Path(__file__).resolve().parent.parent


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bunco-pi")
    table_command.register(parser.add_subparsers(dest="command"))
    return parser.parse_args(["table", *argv])


def run_error(*argv: str) -> str:
    args = parse(*argv)
    with pytest.raises(UserError) as err:
        args.func(args)
    message = str(err.value)
    assert "\n" not in message
    return message


def test_flags():
    args = parse("--standalone", "--emulate", "--rules", "core", "--dice-port", "loop://",
                 "--record", "night.json")
    assert (args.standalone, args.emulate, args.rules, args.dice_port, args.record) == (
        True, True, "core", "loop://", Path("night.json"))
    assert args.func is table_command.run


def test_networked_mode_says_what_to_do_instead():
    assert "--standalone" in run_error()


def write_config(tmp_path: Path, text: str) -> str:
    path = tmp_path / "table.toml"
    path.write_text(text)
    return str(path)


def test_pin_used_twice(tmp_path):
    config = write_config(tmp_path, "[buttons]\nundo = 5\n")
    message = run_error("--standalone", "--config", config)
    assert "GPIO5 is used by both 'point' and 'undo'" in message and config in message


def test_unknown_display_type(tmp_path):
    config = write_config(tmp_path, '[display]\ntype = "ssd1309"\n')
    assert "unknown display type 'ssd1309'" in run_error("--standalone", "--config", config)


def test_display_that_does_not_answer(tmp_path, mock_factory):
    config = write_config(tmp_path, '[display]\ntype = "sh1106"\nport = 99\n')
    message = run_error("--standalone", "--config", config, "--journal", str(tmp_path / "j"))
    assert "i2c-99" in message


def test_missing_serial_device(tmp_path, mock_factory):
    config = write_config(tmp_path, '[display]\ntype = "none"\n')
    message = run_error("--standalone", "--config", config, "--journal",
                        str(tmp_path / "j.db"), "--dice-port", str(tmp_path / "ttyNOPE"))
    assert "ttyNOPE" in message and "plug the sensor in" in message


def test_camera_flags_and_mistakes(tmp_path, mock_factory):
    args = parse("--standalone", "--camera", "opencv:0", "--camera-calibration", "tray.json")
    assert (args.camera, args.camera_calibration) == ("opencv:0", Path("tray.json"))
    config = write_config(tmp_path, '[display]\ntype = "none"\n')
    base = ("--standalone", "--config", config, "--journal", str(tmp_path / "j.db"))
    assert "expected picamera" in run_error(*base, "--camera", "webcam")
    assert "not a folder" in run_error(*base, "--camera", f"folder:{tmp_path / 'none'}")
    missing = str(tmp_path / "tray.json")
    assert "tray.json" in run_error(*base, "--camera", "opencv:0", "--camera-calibration", missing)


def test_a_sensor_and_a_camera_together_is_one_line_naming_both(tmp_path, mock_factory):
    journal = ("--journal", str(tmp_path / "j.db"))
    message = run_error("--standalone", *journal, "--dice-port", "loop://", "--camera",
                        "opencv:0")
    assert "--dice-port 'loop://' and --camera 'opencv:0'" in message and "not both" in message
    config = write_config(tmp_path, '[display]\ntype = "none"\n[camera]\nsource = "picamera"\n')
    message = run_error("--standalone", "--config", config, *journal, "--dice-port", "loop://")
    assert f"--dice-port 'loop://' and {config} [camera] source 'picamera'" in message
    # A flag set to "" leaves the config's camera out: the sensor alone is used.
    args = parse("--standalone", "--config", config, *journal, "--dice-port", "loop://",
                 "--camera", "")
    table_command._one_dice_reader(args, load_config(args.config))  # no error


def test_the_config_camera_is_used_and_its_mistakes_are_one_line(tmp_path, mock_factory):
    base = ("--standalone", "--journal", str(tmp_path / "j.db"))
    config = write_config(tmp_path, '[display]\ntype = "none"\n[camera]\nsource = "folder:none"\n')
    assert f"{tmp_path / 'none'}: not a folder" in run_error(*base, "--config", config)
    config = write_config(tmp_path, '[display]\ntype = "none"\n[camera]\nsource = "opencv:0"\n'
                          'calibration = "tray.json"\n')
    message = run_error(*base, "--config", config)
    assert f"{tmp_path / 'tray.json'}: cannot read calibration" in message


@pytest.mark.filterwarnings("ignore::gpiozero.PinFactoryFallback")
def test_no_gpio_on_this_machine_points_to_emulate(tmp_path, monkeypatch):
    from gpiozero import Device

    monkeypatch.setattr(Device, "pin_factory", None)
    monkeypatch.delenv("GPIOZERO_PIN_FACTORY", raising=False)
    config = write_config(tmp_path, '[display]\ntype = "none"\n')
    try:
        Device._default_pin_factory()
    except Exception:  # noqa: BLE001 - no factory here: the case under test
        pass
    else:
        pytest.skip("this machine has real GPIO")
    message = run_error("--standalone", "--config", config, "--journal", str(tmp_path / "j"))
    assert "--emulate" in message


def classic_points(dice: list[int], target: int) -> int:
    """Classic scoring, written out here on its own so the test does not trust the engine."""
    if dice.count(target) == 3:
        return 21
    if dice[0] == dice[1] == dice[2]:
        return 5
    return dice.count(target)


def checksum_line(body: str) -> bytes:
    value = 0
    for byte in body.encode("ascii"):
        value ^= byte
    return f"{body}*{value:02X}\r\n".encode("ascii")


@pytest.mark.slow
def test_standalone_run_fed_by_a_pty_writes_a_record_scored_right(tmp_path):
    import random

    master, slave = os.openpty()
    tty.setraw(slave)
    config = write_config(tmp_path, '[display]\ntype = "none"\n'
                          '[table]\nplayers = ["Ann", "Bea", "Cat", "Dot"]\n')
    record_path = tmp_path / "night.json"
    env = {**os.environ, "GPIOZERO_PIN_FACTORY": "mock", "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "bunco_pi.cli", "table", "--standalone", "--config", config,
         "--dice-port", os.ttyname(slave), "--record", str(record_path),
         "--journal", str(tmp_path / "journal.db")],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert "running standalone" in proc.stderr.readline()
        rng = random.Random(11)
        sent = [[rng.randint(1, 6) for _ in range(3)] for _ in range(1500)]
        os.write(master, checksum_line("HELLO test-1.0"))
        for seq, dice in enumerate(sent):
            os.write(master, checksum_line(f"ROLL {seq} {dice[0]} {dice[1]} {dice[2]}"))
            if seq % 7 == 0:
                os.write(master, b"ROLL 5 1 1 1*00\r\n")  # bad checksum: never scored
        deadline = time.monotonic() + 30
        rounds = 0
        while rounds < 4 and time.monotonic() < deadline:
            time.sleep(0.1)
            if record_path.exists():
                rounds = len(json.loads(record_path.read_text())["rounds"])
        assert rounds >= 4
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=15) == 0, proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)
        os.close(slave)

    record = json.loads(record_path.read_text())
    assert record["format"] == "bunco-pi night record" and record["source"] == "table"
    # Every roll reached the record once and in order: a prefix of what the pty carried.
    logged = [event[2] for event in record["log"] if event[0] == "roll"]
    assert logged == sent[: len(logged)] and len(logged) > 20
    checked = 0
    for played in record["rounds"]:
        (table,) = played["tables"]  # only this table
        team = [0, 0]
        for roll in table["rolls"]:
            assert roll["points"] == classic_points(roll["dice"], played["target"])
            assert roll.get("bunco", False) == (roll["dice"].count(played["target"]) == 3)
            if not roll["rolloff"]:
                team[table["seats"].index(roll["player"]) % 2] += roll["points"]
            checked += 1
        assert table["score"] == team
        assert max(team) >= 21 or any(r.get("bunco") for r in table["rolls"])
    assert checked > 20


def test_new_night_sets_the_old_journal_aside(tmp_path):
    journal = tmp_path / "j.db"
    journal.write_text("last night")
    (tmp_path / "j.db-wal").write_text("wal")
    args = parse("--standalone", "--journal", str(journal), "--new-night")
    assert table_command._journal_path(args) == str(journal)
    assert not journal.exists()
    assert (tmp_path / "j.db.1.old").read_text() == "last night"
    assert (tmp_path / "j.db.1.old-wal").read_text() == "wal"
    journal.write_text("second")
    table_command._journal_path(args)
    assert (tmp_path / "j.db.2.old").read_text() == "second"


# --- a table of a night run by a head ----------------------------------------------------------


def test_networked_flags():
    args = parse("--broker", "10.0.0.5:1884", "--table", "3", "--credentials", "c.json",
                 "--night", "2026-11-28", "--simulate", "--seed", "7", "--pace", "fast",
                 "--frame-file", "f.txt", "--data-dir", "d")
    assert (args.broker, args.table, args.night, args.seed, args.pace) == (
        "10.0.0.5:1884", 3, "2026-11-28", 7, "fast")
    assert (args.credentials, args.frame_file, args.data_dir) == (
        Path("c.json"), Path("f.txt"), Path("d"))
    assert table_command.parse_broker("head.local") == ("head.local", 1883)
    assert table_command.parse_broker("10.0.0.5:1884") == ("10.0.0.5", 1884)


def test_networked_mistakes_are_one_line(tmp_path):
    assert "--broker HOST:PORT" in run_error()
    assert "not both" in run_error("--standalone", "--broker", "h:1")
    assert "--night" in run_error("--broker", "h:1", "--credentials", "c")
    assert "--credentials" in run_error("--broker", "h:1", "--night", "n")
    assert "HOST:PORT" in run_error("--broker", "h:x", "--night", "n", "--credentials", "c")
    assert "night name" in run_error("--broker", "h:1", "--night", "a/b", "--credentials", "c")
    assert "a table number is 1 to 500" in run_error("--broker", "h:1", "--table", "0")
    assert "--record is for --standalone" in run_error("--broker", "h:1", "--record", "r.json")
    assert "--new-night is for --standalone" in run_error("--broker", "h:1", "--new-night")
    missing = tmp_path / "nope.json"
    assert "credentials file not found" in run_error(
        "--broker", "h:1", "--night", "n", "--credentials", str(missing))
    creds = tmp_path / "c.json"
    creds.write_text(json.dumps({"users": {"table-1": "x"}}))
    assert "no broker password for user 'table-2'" in run_error(
        "--broker", "h:1", "--night", "n", "--credentials", str(creds), "--table", "2")


@pytest.mark.slow
def test_a_simulated_table_joins_a_head_over_mosquitto_and_draws_its_frames(broker, tmp_path):
    import uuid

    from bunco_pi.net.mqtt import MqttLink
    from bunco_pi.net.topics import Topics
    from bunco_pi.sim.players import make_players
    from tests.fake_head import FakeHead

    topics = Topics(f"cli{uuid.uuid4().hex[:6]}")
    head = FakeHead(lambda sink: MqttLink("head", broker.host, broker.port, username="head",
                                          password=broker.credentials.password("head"),
                                          sink=sink, client_id=f"head-{topics.night}"),
                    topics, tmp_path / "head.sqlite", tables=1)
    frame = tmp_path / "frames" / "table-1.txt"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "bunco_pi.cli", "table", "--broker",
         f"{broker.host}:{broker.port}", "--credentials", str(broker.workdir / "credentials.json"),
         "--night", topics.night, "--table", "1", "--simulate", "--seed", "5", "--pace", "fast",
         "--frame-file", str(frame), "--data-dir", str(tmp_path / "data")],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert "running in night" in proc.stderr.readline()
        head.start_night(make_players(4))
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not (
                frame.exists() and "▀" in frame.read_text()):
            time.sleep(0.05)
        head.bell()
        night = head.wait_until(lambda n: n.phase == "results", timeout=60)
        lines = frame.read_text().splitlines()
        assert len(lines) == 32 and all(len(line) == 64 for line in lines)
        assert night.history[-1].tables[0].rolls  # the virtual scorekeeper played it
        assert (tmp_path / "data" / f"outbox-{topics.night}-table-1.sqlite").exists()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=15) == 0, proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
        head.close()


def test_a_data_dir_that_cannot_hold_the_outbox_is_one_line(tmp_path):
    creds = tmp_path / "c.json"
    creds.write_text(json.dumps({"users": {"table-1": "x"}}))
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    message = run_error("--broker", "h:1", "--night", "n", "--credentials", str(creds),
                        "--data-dir", str(blocker), "--simulate")
    assert "cannot open the database" in message and str(blocker) in message


@pytest.mark.slow
def test_a_simulated_table_killed_mid_round_resumes_from_its_outbox(broker, tmp_path):
    import uuid

    from bunco_pi.net.mqtt import MqttLink
    from bunco_pi.net.topics import Topics
    from bunco_pi.sim.players import make_players
    from tests.fake_head import FakeHead

    topics = Topics(f"kill{uuid.uuid4().hex[:6]}")
    head = FakeHead(lambda sink: MqttLink("head", broker.host, broker.port, username="head",
                                          password=broker.credentials.password("head"),
                                          sink=sink, client_id=f"head-{topics.night}"),
                    topics, tmp_path / "head.sqlite", tables=1)
    argv = [sys.executable, "-m", "bunco_pi.cli", "table", "--broker",
            f"{broker.host}:{broker.port}", "--credentials",
            str(broker.workdir / "credentials.json"), "--night", topics.night, "--table", "1",
            "--simulate", "--pace", "fast", "--data-dir", str(tmp_path / "data")]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = []
    try:
        head.start_night(make_players(4))
        head.bell()
        procs.append(subprocess.Popen([*argv, "--seed", "1"], env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True))
        head.wait_until(lambda n: len(n.table(1).rolls) >= 4, timeout=30)
        procs[0].kill()            # the power goes, mid-round
        procs[0].wait(timeout=10)
        mid = head.night()
        assert mid.phase == "playing" and not mid.table(1).done
        # Back up as the installed box starts: everything from its config file.
        config = write_config(tmp_path, f"""
[table]
number = 1
[broker]
discover = false
host = "{broker.host}"
port = {broker.port}
credentials = "{broker.workdir / 'credentials.json'}"
[data]
dir = "{tmp_path / 'data'}"
""")
        procs.append(subprocess.Popen(
            [sys.executable, "-m", "bunco_pi.cli", "table", "--config", config, "--night",
             topics.night, "--simulate", "--pace", "fast", "--seed", "2"],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
        night = head.wait_until(lambda n: n.phase == "results", timeout=60)
        applied = [e.seq for e in head.call(lambda h: h.applied)]
        assert applied == list(range(1, len(applied) + 1))   # each entry once, none lost
        assert not [n for n in head.call(lambda h: h.notes) if "refused" in n]
        # The round went on from where it was: what the head had before is its beginning,
        # and the box rebuilt it from its outbox (at least what the head had by then).
        table = night.history[-1].tables[0]
        assert table.rolls[:len(mid.table(1).rolls)] == mid.table(1).rolls
        procs[1].send_signal(signal.SIGTERM)
        assert procs[1].wait(timeout=15) == 0
        log = procs[1].stderr.read()
        resumed = [line for line in log.splitlines() if "from the outbox" in line]
        assert len(resumed) == 1, log
        count = int(resumed[0].split("(")[1].split()[0])
        assert count >= len(mid.table(1).entries)
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
            proc.wait(timeout=10)
        head.close()


def test_a_configured_box_with_no_night_to_find_says_so(tmp_path):
    creds = tmp_path / "c.json"
    creds.write_text(json.dumps({"users": {"table-2": "x"}}))
    config = write_config(tmp_path, f"""
[table]
number = 2
[broker]
discover = false
host = "10.9.8.7"
credentials = "{creds}"
[data]
dir = "{tmp_path / 'data'}"
""")
    message = run_error("--config", config)
    assert "add --night NAME" in message and "10.9.8.7:1883" in message


FIRST_FRAME = """
import os, sys
import bunco_pi.table.frame_file as frame_file
write = frame_file.FrameFile.__call__

def first(self, image):
    write(self, image)
    game = [m for m in ("bunco_pi.table.box", "bunco_pi.rules.house", "bunco_pi.table.machine")
            if m in sys.modules]
    print("loaded before the first frame:", " ".join(game) or "none", flush=True)
    os._exit(0)

frame_file.FrameFile.__call__ = first
from bunco_pi.cli import main
sys.argv = ["bunco-pi", "table", *sys.argv[1:]]
main()
"""


@pytest.mark.parametrize("mode", ["--standalone", "--broker"])
def test_the_first_frame_is_the_seats_and_starting_drawn_before_the_game_loads(tmp_path, mode):
    """A box shows it is alive as soon as its display is up: its seats from the config and
    "starting...", before the rules, the game and the link are imported (the larger part of a
    start-up; a Pi Zero takes seconds over it)."""
    from bunco_pi.table import screens
    from bunco_pi.table.blocks import to_blocks

    frame = tmp_path / "frame.txt"
    if mode == "--standalone":
        argv = ["--standalone", "--journal", str(tmp_path / "j.db")]
    else:  # nothing listens there: the screen must not wait for a broker either
        credentials = tmp_path / "credentials.json"
        credentials.write_text(json.dumps({"users": {"table-1": "x" * 16}}))
        argv = ["--broker", "127.0.0.1:9", "--night", "n1", "--credentials", str(credentials),
                "--data-dir", str(tmp_path / "data")]
    out = subprocess.run(
        [sys.executable, "-c", FIRST_FRAME, *argv, "--simulate", "--frame-file", str(frame)],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True,
        timeout=60)
    assert "loaded before the first frame: none" in out.stdout, out.stdout + out.stderr
    config = load_config(None)
    expected = screens.render(screens.WaitingView(config.number, config.players, "starting..."))
    assert frame.read_text() == "\n".join(to_blocks(expected)) + "\n"


def test_a_frame_file_that_cannot_be_written_is_one_line(tmp_path):
    (tmp_path / "plain-file").write_text("")
    message = run_error("--standalone", "--simulate", "--journal", str(tmp_path / "j.db"),
                        "--frame-file", str(tmp_path / "plain-file" / "frame.txt"))
    assert message.startswith("--frame-file ") and "plain-file" in message


def test_the_head_tables_own_box_takes_the_night_from_head_toml_beside_it(tmp_path):
    """The head's Pi runs its table box as its unit says (`bunco-pi table --config
    /etc/bunco-pi/table.toml`, no --night); its config does not discover: the night is the
    one head.toml beside it names."""
    from bunco_pi import provision

    creds = tmp_path / "secrets" / "credentials.json"
    creds.parent.mkdir()
    creds.write_text(json.dumps({"users": {"table-1": "pw-of-table-1"}}))
    table_toml = tmp_path / "table.toml"
    table_toml.write_text(provision.table_config(1, "127.0.0.1", discover=False,
                                                 etc=str(tmp_path)))
    args = parse("--config", str(table_toml))
    config = load_config(table_toml)
    with pytest.raises(UserError, match="add --night NAME"):
        table_command._find_head_offline(args, config)
    (tmp_path / "head.toml").write_text(provision.head_config("friday-night", 3,
                                                              etc=str(tmp_path)))
    plan = table_command._find_head_offline(args, config)
    assert (plan.host, plan.night, plan.password) == ("127.0.0.1", "friday-night", "pw-of-table-1")


def test_a_table_whose_config_names_the_night_needs_no_zeroconf_to_know_it(tmp_path):
    from bunco_pi import provision

    creds = tmp_path / "secrets" / "credentials.json"
    creds.parent.mkdir()
    creds.write_text(json.dumps({"users": {"table-2": "pw-of-table-2"}}))
    table_toml = tmp_path / "table.toml"
    table_toml.write_text(provision.table_config(2, "10.0.0.2", discover=False,
                                                 etc=str(tmp_path), night="friday-night"))
    config = load_config(table_toml)
    assert config.night == "friday-night"
    plan = table_command._find_head_offline(parse("--config", str(table_toml)), config)
    assert (plan.host, plan.night) == ("10.0.0.2", "friday-night")
