"""install/install.sh and uninstall.sh, run for real into scratch roots (--root)."""

import json
import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from bunco_pi.head.config import load_head_config
from bunco_pi.net.broker import load_credentials
from bunco_pi.rules.house import preset
from bunco_pi.table.config import load_config

REPO = Path(__file__).resolve().parents[1]
INSTALL = REPO / "install" / "install.sh"
UNINSTALL = REPO / "install" / "uninstall.sh"


def _run(script: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(script), *args], capture_output=True, text=True,
                          input=stdin, timeout=120, cwd="/")


def _snapshot(root: Path) -> dict[str, tuple[int, bytes | None]]:
    """Every path under root -> (mode, content for files)."""
    tree = {}
    for path in sorted(root.rglob("*")):
        st = path.lstat()
        content = path.read_bytes() if stat.S_ISREG(st.st_mode) else None
        tree[str(path.relative_to(root))] = (stat.S_IMODE(st.st_mode), content)
    return tree


def _install_head(root: Path, *extra: str) -> subprocess.CompletedProcess:
    result = _run(INSTALL, "head", "--root", str(root), "--tables", "3", *extra)
    assert result.returncode == 0, result.stderr
    return result


def test_head_install_twice_changes_nothing(tmp_path):
    root = tmp_path / "root"
    first = _install_head(root)
    before = _snapshot(root)
    second = _install_head(root)
    assert _snapshot(root) == before
    assert "wrote /etc/bunco-pi/secrets/credentials.json" in first.stdout
    assert "wrote" not in second.stdout  # every file already as it should be
    expected = {
        "etc/bunco-pi/head.toml": 0o644, "etc/bunco-pi/table.toml": 0o644,
        "etc/bunco-pi/rules.toml": 0o644, "etc/bunco-pi/secrets": 0o750,
        "etc/bunco-pi/secrets/credentials.json": 0o640,
        "etc/bunco-pi/secrets/tables": 0o700,
        "etc/bunco-pi/secrets/tables/table-2.password": 0o600,
        "etc/bunco-pi/secrets/tables/table-3.password": 0o600,
        "etc/bunco-pi/mosquitto/mosquitto.conf": 0o644, "etc/bunco-pi/mosquitto/acl": 0o644,
        "etc/bunco-pi/mosquitto/passwd": 0o640,
        "etc/systemd/system/bunco-pi-head.service": 0o644,
        "etc/systemd/system/bunco-pi-table.service": 0o644,
        "etc/systemd/system/bunco-pi-broker.service": 0o644,
        "var/lib/bunco-pi": 0o750,
    }
    for path, mode in expected.items():
        assert before[path][0] == mode, path
    preset = REPO / "bunco_pi" / "rules" / "presets" / "classic.toml"
    assert before["etc/bunco-pi/rules.toml"][1] == preset.read_bytes()
    units = {p: c for p, (_, c) in before.items() if p.startswith("etc/systemd/system/")}
    for path, content in units.items():
        assert content == (REPO / "systemd" / Path(path).name).read_bytes()


def test_system_commands_are_only_printed_under_root(tmp_path):
    out = _install_head(tmp_path / "root").stdout
    for command in ("apt-get install", "useradd --system", "usermod -aG gpio bunco",
                    "usermod -aG i2c bunco", "usermod -aG dialout bunco",
                    "systemctl enable --now bunco-pi-broker.service bunco-pi-head.service "
                    "bunco-pi-table.service", "systemctl disable --now mosquitto.service",
                    "python3 -m venv --system-site-packages /opt/bunco-pi"):
        assert f"would run: {command}" in out


def _secrets(root: Path) -> dict[str, str]:
    return json.loads((root / "etc/bunco-pi/secrets/credentials.json").read_text())["users"]


def test_secrets_are_random_and_not_from_the_repo(tmp_path):
    _install_head(tmp_path / "a")
    _install_head(tmp_path / "b")
    a, b = _secrets(tmp_path / "a"), _secrets(tmp_path / "b")
    assert a.keys() == b.keys() == {"head", "table-1", "table-2", "table-3"}
    for n in (2, 3):  # the hand-out files are the credentials' own passwords
        handed = tmp_path / f"a/etc/bunco-pi/secrets/tables/table-{n}.password"
        assert handed.read_text() == a[f"table-{n}"] + "\n"
    values = list(a.values()) + list(b.values())
    assert all(len(v) >= 32 for v in values)
    assert len(set(values)) == len(values)
    for path in REPO.rglob("*"):
        if path.is_file() and not {".git", ".venv"} & set(path.parts) \
                and path.stat().st_size < 1_000_000:
            text = path.read_bytes()
            assert not any(v.encode() in text for v in values), path


def test_passwd_has_a_line_per_node_and_grows_with_tables(tmp_path):
    root = tmp_path / "root"
    _install_head(root)
    passwd = root / "etc/bunco-pi/mosquitto/passwd"
    lines = passwd.read_text().splitlines()
    nodes = ["head", "table-1", "table-2", "table-3"]
    # Each node, the doctor of each (who logs in with that node's password), and the head's
    # news connection (with the head's).
    assert [line.split(":")[0] for line in lines] == sorted(
        [*nodes, *(f"doctor-{n}" for n in nodes), "head-news"])
    before = _secrets(root)
    result = _run(INSTALL, "head", "--root", str(root), "--tables", "4")
    assert result.returncode == 0, result.stderr
    grown = passwd.read_text().splitlines()
    assert set(lines) < set(grown)  # existing users keep their hash
    new = sorted(set(grown) - set(lines))
    assert [line.split(":$7$")[0] for line in new] == ["doctor-table-4", "table-4"]
    after = _secrets(root)
    assert {u: after[u] for u in before} == before and "table-4" in after
    acl = (root / "etc/bunco-pi/mosquitto/acl").read_text()
    assert "user table-4\ntopic read bunco/#\ntopic write bunco/+/table/4/events\n" in acl


def test_a_users_config_edit_survives_a_reinstall(tmp_path):
    root = tmp_path / "root"
    _install_head(root)
    table = root / "etc/bunco-pi/table.toml"
    table.write_text(table.read_text().replace("point = 5", "point = 20"))
    out = _install_head(root).stdout
    assert "point = 20" in table.read_text()
    assert "kept /etc/bunco-pi/table.toml" in out


def test_table_install_takes_the_password_from_the_head(tmp_path):
    head, table = tmp_path / "head", tmp_path / "table"
    _install_head(head)
    handed = head / "etc/bunco-pi/secrets/tables/table-3.password"
    result = _run(INSTALL, "table", "--root", str(table), "--table", "3",
                  "--head-host", "10.0.0.2", "--password-file", str(handed))
    assert result.returncode == 0, result.stderr
    assert _secrets(table) == {"table-3": handed.read_text().strip()}
    assert _secrets(head)["table-3"] == handed.read_text().strip()
    config = load_config(table / "etc/bunco-pi/table.toml")
    assert (config.number, config.node_name, config.broker.host) == (3, "table-3", "10.0.0.2")
    assert config.console_url == ""  # only the head table shows the console's code
    assert config.night == ""  # learnt from the head's zeroconf announcement
    assert not (table / "etc/bunco-pi/head.toml").exists()
    assert sorted(p.name for p in (table / "etc/systemd/system").iterdir()) == [
        "bunco-pi-table.service"]
    before = _snapshot(table)
    # Again, without the password: the one it has is kept.
    again = _run(INSTALL, "table", "--root", str(table), "--table", "3",
                 "--head-host", "10.0.0.2")
    assert again.returncode == 0, again.stderr
    assert _snapshot(table) == before
    # Re-installed as another table without its password: refused, nothing changed.
    other = _run(INSTALL, "table", "--root", str(table), "--table", "2")
    assert other.returncode == 2 and "table-2" in other.stderr, other.stderr
    assert len(other.stderr.strip().splitlines()) == 1
    assert _snapshot(table) == before


def test_table_password_from_stdin(tmp_path):
    result = _run(INSTALL, "table", "--root", str(tmp_path), "--table", "2",
                  "--password-file", "-", stdin="s3cret-from-the-head\n")
    assert result.returncode == 0, result.stderr
    assert _secrets(tmp_path) == {"table-2": "s3cret-from-the-head"}
    secret = tmp_path / "etc/bunco-pi/secrets/credentials.json"
    assert stat.S_IMODE(secret.stat().st_mode) == 0o640


def test_a_table_given_the_night_knows_it_without_zeroconf(tmp_path):
    result = _run(INSTALL, "table", "--root", str(tmp_path), "--table", "2", "--night",
                  "friday-night", "--password-file", "-", stdin="s3cret-from-the-head\n")
    assert result.returncode == 0, result.stderr
    assert load_config(tmp_path / "etc/bunco-pi/table.toml").night == "friday-night"


def test_installed_configs_load_with_the_boxes_own_loaders(tmp_path):
    """What the installer writes is what the table box and the head read (paths moved under
    the scratch root), and each finds its own password in the credentials."""
    root = tmp_path / "root"
    _install_head(root, "--night", "friday-night")
    etc = root / "etc/bunco-pi"
    for name in ("table.toml", "head.toml"):
        text = (etc / name).read_text().replace("/etc/bunco-pi", str(etc))
        text = text.replace("/var/lib/bunco-pi", str(root / "var/lib/bunco-pi"))
        (tmp_path / name).write_text(text)
    table = load_config(tmp_path / "table.toml")
    head = load_head_config(tmp_path / "head.toml")
    assert (table.number, table.broker.discover, table.broker.host) == (1, False, "127.0.0.1")
    # The head table's box shows the console's QR code from its config alone (no flag).
    hostname = subprocess.run(["hostname"], capture_output=True, text=True).stdout.strip()
    assert table.console_url == f"http://{hostname}.local:8080/"
    assert table.broker.credentials == head.broker.credentials == etc / "secrets/credentials.json"
    assert table.data_dir == head.data_dir == root / "var/lib/bunco-pi"
    passwords = _secrets(root)
    assert load_credentials(table.broker.credentials).password(table.node_name) == \
        passwords["table-1"]
    assert head.password() == passwords["head"]
    assert (head.night, head.tables, head.players) == ("friday-night", 3, 12)
    assert head.rules_file == etc / "rules.toml" and head.house_rules() == preset("classic")


@pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl absent")
def test_the_head_gets_a_certificate_of_its_own_for_the_hosts_desk(tmp_path):
    """HTTPS with no internet: a self-signed certificate made at install, its key private,
    and the installed head.toml turns HTTPS on for the host's desk."""
    from bunco_pi.console.run import tls_context

    root = tmp_path / "root"
    out = _install_head(root).stdout
    secrets = root / "etc/bunco-pi/secrets"
    cert, key = secrets / "console-tls.crt", secrets / "console-tls.key"
    assert stat.S_IMODE(cert.stat().st_mode) == 0o644
    assert stat.S_IMODE(key.stat().st_mode) == 0o640
    assert "SHA-256 fingerprint" in out and "https://" in out
    tls_context(cert, key)  # loads: a real certificate and its key
    text = (root / "etc/bunco-pi/head.toml").read_text().replace("/etc/bunco-pi",
                                                                  str(root / "etc/bunco-pi"))
    (tmp_path / "head.toml").write_text(text)
    head = load_head_config(tmp_path / "head.toml")
    assert head.console_https_port == 8443
    assert (head.console_certificate, head.console_key) == (cert, key)
    other = tmp_path / "other"
    _install_head(other)
    assert (other / "etc/bunco-pi/secrets/console-tls.key").read_bytes() != key.read_bytes()
    assert key.read_bytes() not in b"".join(
        p.read_bytes() for p in REPO.rglob("*.key") if ".venv" not in p.parts)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["table"], "table needs --table N"),
        (["table", "--table", "1"], "the head is table 1"),
        (["table", "--table", "2"], "needs its broker password the first time"),
        (["table", "--table", "2", "--password-file", "/nonexistent"], "--password-file"),
        (["table", "--table", "x"], "'x' is not a number"),
        (["head", "--tables", "0"], "--tables 0"),
        (["head", "--night", "Friday night"], "--night 'Friday night'"),
        (["head", "--frobnicate"], "unknown option '--frobnicate'"),
        (["head", "--preset", "house"], "--preset 'house': not a shipped preset"),
    ],
)
def test_mistakes_are_one_line_and_write_nothing(tmp_path, args, message):
    root = tmp_path / "root"
    result = _run(INSTALL, *args, "--root", str(root))
    assert result.returncode == 2
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert not (root / "etc").exists()


def test_not_root_without_root_dir_is_refused():
    # The script comes on stdin: a checkout in root's home is not readable by nobody.
    command = ["bash", "-s", "head"]
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("running as root and setpriv (util-linux) is absent")
        command = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *command]
    result = subprocess.run(command, capture_output=True, text=True, timeout=60, cwd="/",
                            input=INSTALL.read_text())
    assert result.returncode == 2 and "run as root" in result.stderr, result.stderr


def test_uninstall_removes_what_install_created(tmp_path):
    root = tmp_path / "root"
    _install_head(root)
    result = _run(UNINSTALL, "--root", str(root))
    assert result.returncode == 0, result.stderr
    assert "would run: systemctl disable --now bunco-pi-table.service" in result.stdout
    left = {p for p, (_, content) in _snapshot(root).items() if content is not None}
    assert left == set()
    assert not (root / "etc/bunco-pi").exists()
    assert (root / "var/lib/bunco-pi").is_dir()  # the nights' logs are kept by default
    purge = _run(UNINSTALL, "--root", str(root), "--purge")
    assert purge.returncode == 0, purge.stderr
    assert not (root / "var/lib/bunco-pi").exists()
    assert "would run: userdel bunco" in purge.stdout
    assert all("bunco" not in p for p in _snapshot(root))


def test_installed_broker_config_lets_each_node_in(tmp_path):
    """The head's generated mosquitto files, run by a real mosquitto, admit the handed-out
    table password and refuse a wrong one."""
    import socket
    import time

    import paho.mqtt.client as mqtt

    binary = shutil.which("mosquitto") or shutil.which("/usr/sbin/mosquitto")
    if binary is None:
        pytest.skip("mosquitto is not installed (Debian package: mosquitto)")
    root = tmp_path / "root"
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    _install_head(root, "--port", str(port))
    conf = (root / "etc/bunco-pi/mosquitto/mosquitto.conf").read_text()
    conf = conf.replace("/etc/bunco-pi", str(root / "etc/bunco-pi"))
    conf = conf.replace("/var/lib/bunco-pi-broker", str(tmp_path))
    conf = conf.replace(f"listener {port}\n", f"listener {port} 127.0.0.1\n")
    if os.geteuid() == 0:
        conf += "user root\n"
    (tmp_path / "m.conf").write_text(conf)
    proc = subprocess.Popen([binary, "-c", str(tmp_path / "m.conf")],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(200):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
                break
            except OSError:
                time.sleep(0.05)

        def login(user: str, password: str):
            import queue
            replies: queue.Queue = queue.Queue()
            client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
            client.username_pw_set(user, password)
            client.on_connect = lambda c, u, f, rc, p: replies.put(rc)
            client.connect("127.0.0.1", port)
            client.loop_start()
            try:
                return replies.get(timeout=10)
            finally:
                client.disconnect()
                client.loop_stop()

        secrets = root / "etc/bunco-pi/secrets"
        handed = (secrets / "tables/table-3.password").read_text().strip()
        passwords = _secrets(root)
        assert not login("table-3", handed).is_failure
        assert not login("head", passwords["head"]).is_failure
        assert not login("table-1", passwords["table-1"]).is_failure
        assert login("table-3", handed + "x").is_failure
        assert login("table-2", handed).is_failure  # one table's password is not another's
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _apt_install_line(out: str) -> list[str]:
    (line,) = [ln for ln in out.splitlines() if ln.startswith("would run: apt-get install")]
    return line.split()


@pytest.mark.parametrize("role_args", [["head", "--tables", "2"], ["table", "--table", "2"]])
def test_the_camera_option_installs_the_readers_packages(tmp_path, role_args):
    """--camera brings picamera2 to take frames and Debian's OpenCV and NumPy to read them
    (seen by the venv, which is made with --system-site-packages); without it, none of them."""
    extra = ["--password-file", "-"] if role_args[0] == "table" else []
    args = [*role_args, "--root", str(tmp_path / "plain"), *extra]
    plain = _run(INSTALL, *args, stdin="pw" * 20 + "\n")
    assert plain.returncode == 0, plain.stderr
    args = [*role_args, "--root", str(tmp_path / "camera"), "--camera", *extra]
    camera = _run(INSTALL, *args, stdin="pw" * 20 + "\n")
    assert camera.returncode == 0, camera.stderr
    camera_packages = {"python3-picamera2", "python3-opencv", "python3-numpy"}
    assert camera_packages <= set(_apt_install_line(camera.stdout))
    assert not camera_packages & set(_apt_install_line(plain.stdout))
    assert "would run: python3 -m venv --system-site-packages /opt/bunco-pi" in camera.stdout
