"""The mosquitto broker: credentials, password and ACL files, config, and a process helper.

Security model (docs/network.md tells it at length): no anonymous clients; every node has its
own user name (``head``, ``table-1``, ...) and a random password generated on first start and
kept in a credentials file readable by its owner only (mode 0600); the ACL lets everyone read
the night, lets table *n* write only ``table/<n>/events`` and its own ``node/table-<n>/status``,
lets ``head`` write the rest, and lets any other user (a viewer) write nothing: the head
listens only where tables write. The config's limits (``limit_lines``) say what one message
and one client's queue may cost, each with the reason it is set.
"""

from __future__ import annotations

import base64
import contextlib
import getpass
import hashlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from bunco_pi.errors import UserError
from bunco_pi.net.credentials import Credentials, load_credentials
from bunco_pi.net.envelope import MAX_BYTES
from bunco_pi.net.topics import ROOT, check_node, check_table, doctor_echo, table_node

HEAD_USER = "head"
DEFAULT_EXE = "/usr/sbin/mosquitto"
INSTALL_HINT = "install it with `apt-get install mosquitto`"

# mosquitto 2.0's own password format: $7$<iterations>$<base64 salt>$<base64 PBKDF2-SHA512>.
_PBKDF2_ITERATIONS = 101
_SALT_BYTES = 12
_LOG_TYPES = ("error", "warning", "notice", "information", "debug")


# --- credentials ---------------------------------------------------------------------------


def node_users(tables: int) -> list[str]:
    """The broker users of a night with ``tables`` tables: head, then table-1..table-N."""
    return [HEAD_USER, *(table_node(n) for n in range(1, tables + 1))]


# ``bunco-pi doctor`` logs in as a user of its own: the broker names a session after its user
# (use_username_as_clientid), so a doctor logged in as the box itself would take the running
# box's session and knock it off. Its password is the box's own (a box's credentials file
# holds only that); the ACL lets it read the night and write only its echo, outside every
# night (net/topics.py: doctor_echo), where no head listens.
DOCTOR_PREFIX = "doctor-"


def doctor_user(node: str) -> str:
    """The broker user ``bunco-pi doctor`` logs in as on the box ``node``: ``doctor-table-3``."""
    return check_node(f"{DOCTOR_PREFIX}{node}")


# The head's second connection, for the night's news alone (the state that carries the bell,
# and its parts): a user of its own, because the broker names a session after its user and a
# second login as ``head`` would knock the head off. Its password is the head's; the ACL lets
# it write the state and its parts, nothing else.
HEAD_NEWS_USER = "head-news"


def broker_logins(credentials: Credentials) -> Credentials:
    """``credentials`` plus the logins derived from them, each with its node's password: each
    node's doctor user and the head's news user. The users the broker's password file and ACL
    are written for."""
    passwords = dict(credentials.passwords)
    for user, password in credentials.passwords.items():
        if user == HEAD_USER or user.startswith("table-") and user[6:].isdigit():
            passwords.setdefault(doctor_user(user), password)
        if user == HEAD_USER:
            passwords.setdefault(HEAD_NEWS_USER, password)
    return Credentials(passwords)


def _write_private(path: Path, text: str) -> None:
    # Written beside the target and renamed over it, so a power cut leaves old or new, never half.
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def new_password() -> str:
    """A password from the OS's secure random source: 32 URL-safe characters (192 bits)."""
    return secrets.token_urlsafe(24)


def with_users(credentials: Credentials, users: Iterable[str]) -> Credentials:
    """``credentials`` plus a fresh random password for every user it lacks (others kept)."""
    passwords = dict(credentials.passwords)
    for user in users:
        check_node(user)
        if user not in passwords:
            passwords[user] = new_password()
    return Credentials(passwords)


def credentials_text(credentials: Credentials) -> str:
    """The credentials file's content; the same passwords always give the same text."""
    for user in credentials.passwords:
        check_node(user)
    return json.dumps({"users": dict(credentials.passwords)}, indent=2, sort_keys=True) + "\n"


def ensure_credentials(path: Path, users: Iterable[str]) -> Credentials:
    """Load the credentials file, adding a fresh random password for every missing user."""
    existing = load_credentials(path) if path.exists() else Credentials({})
    credentials = with_users(existing, users)
    if credentials != existing or not path.exists():
        _write_private(path, credentials_text(credentials))
    elif path.stat().st_mode & 0o077:
        os.chmod(path, 0o600)
    return credentials


# --- password file and ACL -----------------------------------------------------------------


def hash_password(password: str, salt: bytes | None = None,
                  iterations: int = _PBKDF2_ITERATIONS) -> str:
    """A password hash in mosquitto 2.0's ``$7$`` (PBKDF2-SHA512) format."""
    salt = secrets.token_bytes(_SALT_BYTES) if salt is None else salt
    digest = hashlib.pbkdf2_hmac("sha512", password.encode(), salt, iterations)
    return (f"$7${iterations}${base64.b64encode(salt).decode()}"
            f"${base64.b64encode(digest).decode()}")


def hash_matches(password: str, hashed: str) -> bool:
    """True if ``hashed`` (a ``$7$`` hash) is the hash of ``password``."""
    parts = hashed.split("$")
    if len(parts) != 5 or parts[:2] != ["", "7"] or not parts[2].isdigit():
        return False
    try:
        salt = base64.b64decode(parts[3], validate=True)
    except ValueError:
        return False
    return secrets.compare_digest(hash_password(password, salt, int(parts[2])), hashed)


def password_file_text(credentials: Credentials, previous: str = "") -> str:
    """mosquitto's password file: one ``user:$7$...`` line per user, sorted by name.

    A line of ``previous`` (the file as it is) whose hash still matches the user's password
    is kept as it is: salts are random, so hashing afresh would change the file on every run.
    """
    kept: dict[str, str] = {}
    for line in previous.splitlines():
        user, sep, hashed = line.partition(":")
        if sep and user in credentials.passwords and hash_matches(
                credentials.passwords[user], hashed):
            kept[user] = line
    return "".join(
        (kept.get(user) or f"{user}:{hash_password(pw)}") + "\n"
        for user, pw in sorted(credentials.passwords.items())
    )


def _table_number(user: str) -> int | None:
    return int(user[6:]) if user.startswith("table-") and user[6:].isdigit() else None


def acl_text(users: Iterable[str], bridges: Mapping[str, Iterable[int]] | None = None) -> str:
    """The ACL: everyone reads the night; table-N writes its events and its own status; head
    writes the rest, and head-news the state and its parts; a bridge user
    (``bridge-<name>``, another broker of the hall, in ``bridges`` with the tables behind it)
    writes what those tables write; any other user (a viewer) only reads."""
    bridges = {user: sorted(set(tables)) for user, tables in (bridges or {}).items()}
    lines = [
        "# bunco-pi broker ACL (generated; regenerate rather than edit)",
        "# A user with no write line below writes nothing. The head listens to the tables'",
        "# events and the nodes' status topics, so only the head and the tables write there:",
        "# a read-only user (a viewer) cannot put a single byte in the head's way.",
        "# (Topic lines before the first user would apply to anonymous clients: none here.)",
        "",
        f"user {HEAD_USER}",
        f"topic readwrite {ROOT}/#",
    ]
    for user in sorted(set(users) - {HEAD_USER}):
        check_node(user)
        lines += ["", f"user {user}", f"topic read {ROOT}/#"]
        table = _table_number(user)
        if table is not None:
            lines += [f"topic write {ROOT}/+/table/{table}/events",
                      f"topic write {ROOT}/+/node/{user}/status"]
        elif user in bridges:
            # the tables that log in to that broker: their events and status, nothing else
            for n in bridges[user]:
                lines += [f"topic write {ROOT}/+/table/{n}/events",
                          f"topic write {ROOT}/+/node/{table_node(n)}/status"]
        elif user == HEAD_NEWS_USER:
            lines += [f"topic write {ROOT}/+/state", f"topic write {ROOT}/+/rules",
                      f"topic write {ROOT}/+/seating/+"]
        elif user.startswith(DOCTOR_PREFIX):
            # the doctor's echo, outside every night (net/topics.py: DOCTOR_ECHO_ROOT)
            lines += [f"topic readwrite {doctor_echo(user)}"]
    return "\n".join(lines) + "\n"


# --- limits: what one message and one client's queue may cost --------------------------------

# The largest packet the broker takes from any client: the largest message bunco-pi itself
# sends (an envelope is at most envelope.MAX_BYTES: the encoder refuses a bigger one)
# plus its topic and header.
MAX_PACKET_BYTES = MAX_BYTES + 1024
# QoS 1 messages on their way to one client and not yet acknowledged by it (mosquitto's own
# default, said here so that it is a decision): the head acknowledges each as it reads it.
MAX_INFLIGHT = 20
# QoS 1 messages the broker keeps for one client beyond those in flight (the head while it is
# away or busy), by count and by bytes: whichever is reached first.
MAX_QUEUED_MESSAGES = 100_000
MAX_QUEUED_BYTES = 64 * 1024 * 1024


def limit_lines() -> list[str]:
    """The config's limits, each with why it is set (docs/network.md, "Limits")."""
    return [
        "# --- limits (docs/network.md, \"Limits\") ---",
        f"# No bunco-pi message is bigger than {MAX_BYTES} bytes (the envelope refuses to",
        "# encode one), so no packet needs more than that plus its topic and header. A bigger",
        "# packet is refused at the door, from any login: the broker disconnects its sender and",
        "# keeps nothing of it. This is the one size limit: the head declares none of its own",
        "# (MQTT v5's Maximum Packet Size), because mosquitto 2.0.11 drops a message bigger",
        "# than a client's declared maximum but never gives back the in-flight slot it took:",
        "# twenty such messages stopped the head's intake for the rest of a night. Every",
        "# message within this limit is delivered to the head, which acknowledges it (so its",
        "# slot comes back) and drops at once, unqueued, anything bigger than a table event.",
        f"max_packet_size {MAX_PACKET_BYTES}",
        "# QoS 1 messages in flight to one client: what the head holds unacknowledged at a",
        "# time; it acknowledges each one as it reads it, whatever it then decides.",
        f"max_inflight_messages {MAX_INFLIGHT}",
        "# A head offline for a while must not lose queued events (the tables' outboxes would",
        "# resend them, but slowly): far above mosquitto's default of 1000. Bounded in bytes",
        "# too, so a flood queued for an absent head costs the Pi at most this much memory;",
        "# what is dropped past it is only delayed (each table resends until acknowledged).",
        f"max_queued_messages {MAX_QUEUED_MESSAGES}",
        f"max_queued_bytes {MAX_QUEUED_BYTES}",
    ]


def mosquitto_conf(*, host: str | None, port: int, password_file: Path, acl_file: Path,
                   data_dir: Path, log_file: Path | None = None, autosave_interval: int = 2,
                   run_as: str | None = None, bridge: Bridge | None = None) -> str:
    """The broker config; ``host=None`` listens on every interface (IPv4 and IPv6)."""
    if not 1 <= autosave_interval <= 5:
        raise UserError(f"autosave_interval {autosave_interval}: must be 1..5 seconds")
    if not 1 <= port <= 65535:
        raise UserError(f"port {port}: a TCP port is 1..65535")
    lines = [
        "# bunco-pi mosquitto config (generated)",
        "per_listener_settings false",
        "allow_anonymous false",
        f"password_file {password_file}",
        f"acl_file {acl_file}",
        "persistence true",
        f"persistence_location {data_dir}/",
        f"autosave_interval {autosave_interval}",
        # Without this (and TCP_NODELAY on each client) a QoS 1 round trip takes ~88 ms.
        "set_tcp_nodelay true",
        *limit_lines(),
        f"listener {port} {host}" if host else f"listener {port}",
        # The broker names every session after the user that logged in, whatever client id the
        # client asked for: a password then reaches only its own node's session, and cannot kick
        # the head (or another table) off and take the messages queued for it. A listener
        # setting: above the listener line mosquitto would open a default one on 1883 for it.
        "use_username_as_clientid true",
    ]
    if run_as:
        lines.append(f"user {run_as}")
    if log_file is not None:
        lines.append(f"log_dest file {log_file}")
    # mosquitto 2.0 logs a publish the ACL denies ("Denied PUBLISH from ...") only at debug
    # level, so debug is on: a forged write must leave a trace on the head.
    lines += [f"log_type {kind}" for kind in _LOG_TYPES]
    lines.append("connection_messages true")
    if bridge is not None:  # after every general setting: a bridge's lines end the file
        lines += bridge_lines(bridge)
    return "\n".join(lines) + "\n"


# --- bridges: more than one broker in one hall --------------------------------------------

BRIDGE_PREFIX = "bridge-"


def bridge_user(name: str) -> str:
    """The user a hall's second broker ``name`` logs in to the head's broker as."""
    return check_node(f"{BRIDGE_PREFIX}{name}")


@dataclass(frozen=True)
class Bridge:
    """This broker (a satellite: its own tables log in to it) bridged to the head's broker,
    with mosquitto's own bridge: ``name`` names the link and its user on the head's broker
    (``bridge-<name>``, whose password is ``password`` and whose ACL writes only ``tables``'
    events and status), ``tables`` are the tables that log in here."""

    name: str
    host: str
    port: int
    password: str
    tables: tuple[int, ...]

    @property
    def user(self) -> str:
        return bridge_user(self.name)


def bridge_lines(bridge: Bridge) -> list[str]:
    """The ``connection`` section of a satellite broker's config.

    What the tables here write goes out to the head's broker (their events and status, table
    by table: the same topics the head's ACL lets the bridge user write); everything the head
    says comes in (the state, its parts, each table's ack, view and command, the head's
    status). The two lists never overlap, so no message can loop. QoS 1 both ways and a
    persistent session (``cleansession false``): what a table sends while the link is down
    is queued here and delivered when it is back, and each box's outbox resends until the
    head's ack arrives, as on one broker."""
    if not bridge.tables:
        raise UserError(f"bridge {bridge.name}: no tables log in to it")
    if not 1 <= bridge.port <= 65535:
        raise UserError(f"bridge {bridge.name}: port {bridge.port}: a TCP port is 1..65535")
    user = bridge.user
    lines = [
        "# --- bridge to the head's broker (docs/network.md, \"Several brokers\") ---",
        f"connection {user}",
        f"address {bridge.host}:{bridge.port}",
        f"remote_username {user}",
        f"remote_password {bridge.password}",
        f"remote_clientid {user}",
        "bridge_protocol_version mqttv311",
        "try_private true",
        "cleansession false",
        "notifications false",
        "restart_timeout 1 10",
        "keepalive_interval 15",
    ]
    for n in sorted(set(bridge.tables)):
        check_table(n)
        lines += [f"topic {ROOT}/+/table/{n}/events out 1",
                  f"topic {ROOT}/+/node/{table_node(n)}/status out 1"]
    lines += [f"topic {ROOT}/+/{kind} in 1" for kind in ("state", "rules", "control",
                                                          "standings")]
    lines += [f"topic {ROOT}/+/seating/+ in 1"]
    lines += [f"topic {ROOT}/+/table/+/{kind} in 1" for kind in ("ack", "view", "command")]
    lines += [f"topic {ROOT}/+/node/{HEAD_USER}/status in 1"]
    return lines


@dataclass(frozen=True)
class BrokerFiles:
    conf: Path
    password_file: Path
    acl_file: Path
    data_dir: Path
    log_file: Path | None


def write_broker_files(directory: Path, credentials: Credentials, *, host: str | None,
                       port: int, log_file: Path | None = None, autosave_interval: int = 2,
                       run_as: str | None = None, bridge: Bridge | None = None,
                       bridged: Mapping[str, Iterable[int]] | None = None) -> BrokerFiles:
    """Write mosquitto.conf, the password file and the ACL into ``directory``.

    Running it again with the same credentials leaves the password file's hashes as they are.
    ``bridge``: this broker is a satellite bridged to the head's broker. ``bridged``: on the
    head's broker, each bridge user (whose password is in ``credentials``) and its tables.
    """
    directory.mkdir(parents=True, exist_ok=True)
    files = BrokerFiles(
        conf=directory / "mosquitto.conf",
        password_file=directory / "passwd",
        acl_file=directory / "acl",
        data_dir=directory / "data",
        log_file=log_file,
    )
    files.data_dir.mkdir(exist_ok=True)
    try:
        previous = files.password_file.read_text(encoding="utf-8")
    except FileNotFoundError:
        previous = ""
    logins = broker_logins(credentials)
    _write_private(files.password_file, password_file_text(logins, previous))
    _write_private(files.acl_file, acl_text(logins.passwords, bridged))
    _write_private(files.conf, mosquitto_conf(
        host=host, port=port, password_file=files.password_file, acl_file=files.acl_file,
        data_dir=files.data_dir, log_file=log_file, autosave_interval=autosave_interval,
        run_as=run_as, bridge=bridge,
    ))
    return files


# --- a broker process (tests, benchmarks, demo) --------------------------------------------


def find_mosquitto() -> str:
    exe = shutil.which("mosquitto") or (DEFAULT_EXE if os.access(DEFAULT_EXE, os.X_OK) else None)
    if exe is None:
        raise UserError(f"mosquitto (the MQTT broker) is not installed: {INSTALL_HINT}")
    return exe


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


class Broker:
    """A private mosquitto on a free loopback port, with its own config and data directory.

    ``with Broker(tables=3) as broker: broker.port, broker.credentials`` ... Data (retained
    messages, persistent sessions) survives :meth:`restart`; :meth:`kill` is a crash (SIGKILL:
    whatever was not yet autosaved is lost, as on a power cut).
    """

    def __init__(self, workdir: Path | None = None, *, tables: int = 3, host: str = "127.0.0.1",
                 port: int | None = None, autosave_interval: int = 1,
                 start_timeout: float = 10.0, readers: Iterable[str] = (),
                 bridge: Bridge | None = None,
                 bridged: Mapping[str, Iterable[int]] | None = None) -> None:
        self.exe = find_mosquitto()
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        if workdir is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="bunco-broker-")
            workdir = Path(self._tmp.name)
        self.workdir = workdir
        self.host = host
        self.port = port or free_port(host)
        self.start_timeout = start_timeout
        # ``readers``: extra users who may only read the night (a demo's viewer): each
        # connection needs a user of its own, since the user name is the client id.
        self.credentials = ensure_credentials(workdir / "credentials.json",
                                              [*node_users(tables), *readers, *(bridged or {})])
        # mosquitto started as root drops to user "mosquitto", who could not read our 0600 files.
        run_as = getpass.getuser() if os.geteuid() == 0 else None
        self.files = write_broker_files(
            workdir / "broker", self.credentials, host=host, port=self.port,
            log_file=workdir / "mosquitto.log", autosave_interval=autosave_interval,
            run_as=run_as, bridge=bridge, bridged=bridged,
        )
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def log_file(self) -> Path:
        assert self.files.log_file is not None
        return self.files.log_file

    def log_text(self) -> str:
        try:
            return self.log_file.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return ""

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def start(self) -> Broker:
        if self.running:
            return self
        self._proc = subprocess.Popen(
            [self.exe, "-c", str(self.files.conf)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                err = (self._proc.stderr.read() if self._proc.stderr else b"").decode(
                    errors="replace").strip().splitlines()
                tail = (err or self.log_text().strip().splitlines() or ["no output"])[-1]
                self._proc = None
                raise UserError(f"mosquitto on {self.host}:{self.port} exited at start: {tail}")
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
                probe.settimeout(0.2)
                if probe.connect_ex((self.host, self.port)) == 0:
                    return self
            time.sleep(0.02)
        self.stop()
        raise UserError(f"mosquitto on {self.host}:{self.port} did not accept connections "
                        f"within {self.start_timeout:.0f} s")

    def stop(self, timeout: float = 5.0) -> None:
        """A clean stop: mosquitto saves its persistence file first."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout)
        if proc.stderr:
            proc.stderr.close()

    def kill(self) -> None:
        """A crash: SIGKILL, no final save."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        proc.kill()
        proc.wait(5)
        if proc.stderr:
            proc.stderr.close()

    def restart(self) -> None:
        self.stop()
        self.start()

    def close(self) -> None:
        self.stop()
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def __enter__(self) -> Broker:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()
