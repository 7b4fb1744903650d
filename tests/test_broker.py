import logging
import shutil
import stat
import subprocess

import pytest

from bunco_pi.errors import UserError
from bunco_pi.net import broker as broker_mod
from bunco_pi.net import envelope
from bunco_pi.net.broker import (
    Broker,
    Credentials,
    acl_text,
    credentials_text,
    ensure_credentials,
    hash_matches,
    hash_password,
    load_credentials,
    mosquitto_conf,
    node_users,
    password_file_text,
    with_users,
)
from bunco_pi.net.link import Message
from bunco_pi.net.mqtt import MqttLink
from tests.conftest import collect

# --- files ---------------------------------------------------------------------------------


def test_credentials_are_generated_private_and_kept(tmp_path):
    path = tmp_path / "cred" / "credentials.json"
    first = ensure_credentials(path, node_users(2))
    assert set(first.passwords) == {"head", "table-1", "table-2"}
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert len(set(first.passwords.values())) == 3
    assert all(len(pw) >= 24 for pw in first.passwords.values())
    again = ensure_credentials(path, node_users(3))
    assert {k: again.passwords[k] for k in first.passwords} == dict(first.passwords)
    assert "table-3" in again.passwords
    assert load_credentials(path) == again


def test_broken_credentials_file_is_a_one_line_user_error(tmp_path):
    path = tmp_path / "credentials.json"
    path.write_text('{"users": {"head": 5}}')
    with pytest.raises(UserError, match="credentials file must hold"):
        load_credentials(path)
    with pytest.raises(UserError, match="not found"):
        load_credentials(tmp_path / "missing.json")


def test_password_hash_is_the_one_mosquitto_passwd_makes(tmp_path):
    if shutil.which("mosquitto_passwd") is None:
        pytest.skip("mosquitto_passwd not installed")
    pwfile = tmp_path / "pw"
    subprocess.run(["mosquitto_passwd", "-c", "-b", str(pwfile), "u", "s3cret"], check=True,
                   capture_output=True)
    theirs = pwfile.read_text().strip().split(":", 1)[1]
    _, kind, iterations, salt_b64, _ = theirs.split("$")
    import base64
    ours = hash_password("s3cret", base64.b64decode(salt_b64), int(iterations))
    assert kind == "7" and ours == theirs
    assert hash_password("s3cret", base64.b64decode(salt_b64), int(iterations)) != \
        hash_password("other", base64.b64decode(salt_b64), int(iterations))


def test_password_hash_known_answer():
    # PBKDF2-HMAC-SHA512("pw", "0123456789ab", 101 rounds), base64: mosquitto 2's "$7$".
    import base64
    import hashlib
    digest = base64.b64encode(hashlib.pbkdf2_hmac("sha512", b"pw", b"0123456789ab", 101))
    assert hash_password("pw", b"0123456789ab") == f"$7$101$MDEyMzQ1Njc4OWFi${digest.decode()}"


def test_password_file_keeps_hashes_that_still_match():
    creds = Credentials({"head": "h-pw", "table-1": "t1-pw"})
    first = password_file_text(creds)
    assert [line.split(":")[0] for line in first.splitlines()] == ["head", "table-1"]
    assert password_file_text(creds, first) == first  # same salts: the file does not change
    assert password_file_text(creds) != first  # fresh salts otherwise
    changed = Credentials({"head": "h-pw", "table-1": "new", "table-2": "t2"})
    again = password_file_text(changed, first).splitlines()
    assert again[0] == first.splitlines()[0]
    assert again[1] != first.splitlines()[1] and hash_matches("new", again[1].split(":", 1)[1])
    assert hash_matches("t2", again[2].split(":", 1)[1])
    assert not hash_matches("t2", "$7$101$not base64!$x") and not hash_matches("t2", "plain")


def test_credentials_text_is_stable_and_loads_back(tmp_path):
    creds = with_users(Credentials({"head": "kept"}), node_users(2))
    assert creds.passwords["head"] == "kept" and len(creds.passwords) == 3
    assert credentials_text(creds) == credentials_text(Credentials(dict(creds.passwords)))
    path = tmp_path / "c.json"
    path.write_text(credentials_text(creds))
    assert load_credentials(path) == creds


def test_acl_gives_each_table_only_its_own_events_and_status_and_a_reader_nothing():
    text = acl_text(["head", "table-1", "table-2", "viewer"])
    blocks = {b.splitlines()[0]: b.splitlines()[1:] for b in text.split("\n\n")[1:]}
    assert blocks["user head"] == ["topic readwrite bunco/#"]
    assert blocks["user table-2"] == ["topic read bunco/#", "topic write bunco/+/table/2/events",
                                      "topic write bunco/+/node/table-2/status"]
    assert blocks["user viewer"] == ["topic read bunco/#"]
    assert "pattern" not in text.replace("# ", "")  # a %u pattern would let a viewer write


def test_config_sets_every_limit_with_its_reason(tmp_path):
    """docs/network.md, "Limits": the broker's packet limit is the one size limit, above the
    largest message bunco-pi sends; in-flight and queued bounds are decisions, each explained."""
    from bunco_pi.net.broker import MAX_PACKET_BYTES
    from bunco_pi.net.envelope import MAX_BYTES

    conf = mosquitto_conf(host="127.0.0.1", port=1883, password_file=tmp_path / "pw",
                          acl_file=tmp_path / "acl", data_dir=tmp_path).splitlines()
    assert MAX_BYTES < MAX_PACKET_BYTES <= MAX_BYTES + 2048
    for setting in (f"max_packet_size {MAX_PACKET_BYTES}", "max_inflight_messages 20",
                    "max_queued_messages 100000", f"max_queued_bytes {64 * 1024 * 1024}"):
        at = conf.index(setting)
        assert any(line.startswith("#") for line in conf[at - 2:at]), \
            f"{setting}: no comment says why"
    # global settings: above the listener line
    assert conf.index(f"max_packet_size {MAX_PACKET_BYTES}") < conf.index(
        "listener 1883 127.0.0.1")


def test_config_has_the_measured_settings_and_no_secret(tmp_path):
    conf = mosquitto_conf(host="127.0.0.1", port=1883, password_file=tmp_path / "pw",
                          acl_file=tmp_path / "acl", data_dir=tmp_path)
    lines = conf.splitlines()
    for needed in ("persistence true", "set_tcp_nodelay true", "allow_anonymous false",
                   "autosave_interval 2", "listener 1883 127.0.0.1"):
        assert needed in lines
    # A listener setting: above the first listener line mosquitto would open 1883 for it.
    assert lines.index("use_username_as_clientid true") > lines.index("listener 1883 127.0.0.1")
    assert "log_type debug" in lines  # where mosquitto 2.0 logs a denied PUBLISH
    every = mosquitto_conf(host=None, port=1884, password_file=tmp_path / "pw",
                           acl_file=tmp_path / "acl", data_dir=tmp_path)
    assert "listener 1884" in every.splitlines()
    with pytest.raises(UserError, match="autosave_interval 9"):
        mosquitto_conf(host="h", port=1, password_file=tmp_path, acl_file=tmp_path,
                       data_dir=tmp_path, autosave_interval=9)


def test_missing_mosquitto_says_how_to_install_it(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(broker_mod, "DEFAULT_EXE", str(tmp_path / "none"))
    with pytest.raises(UserError, match="apt-get install mosquitto"):
        Broker(tmp_path)


def test_generated_files_hold_hashes_not_passwords(broker):
    for path in (broker.files.conf, broker.files.password_file, broker.files.acl_file):
        text = path.read_text()
        assert not any(pw in text for pw in broker.credentials.passwords.values())
        assert stat.S_IMODE(path.stat().st_mode) == 0o600


# --- a real broker -------------------------------------------------------------------------


def test_anonymous_and_wrong_password_clients_are_refused(broker, make_link, topics, caplog):
    head = make_link("head")
    head.subscribe(topics.everything())
    assert head.wait_subscribed(5)
    caplog.set_level(logging.WARNING)
    wrong = make_link("table-1", password="not-the-password", wait=False)
    anon = make_link("table-2", start=False)
    anon._client.username_pw_set(None)  # no user name at all
    anon.start()
    assert not wrong.wait_connected(1.0) and not anon.wait_connected(0.1)
    for link in (wrong, anon):
        link.publish(topics.events(1), envelope.event("table-1", 1, 1, {}))
    # only this night's topics: the broker binds client ids to users, so "head" resumes the
    # session an earlier test's head left, with its subscriptions to that test's night
    assert not [e for e in collect(head.inbox, 0.5)
                if isinstance(e, Message) and e.topic.startswith(topics.prefix + "/")]
    refusals = [r.getMessage() for r in caplog.records
                if "refused the connection" in r.getMessage()]
    # mosquitto 2.0 answers a wrong password with "Not authorized" (v5 reason 0x87).
    assert any("table-1" in m and "Not authorized" in m for m in refusals)
    assert any("table-2" in m for m in refusals)
    assert "disconnected, not authorised" in broker.log_text()


def test_a_table_cannot_write_another_tables_topics(broker, make_link, topics, caplog):
    head = make_link("head")
    head.subscribe(topics.everything())
    assert head.wait_subscribed(5)
    t2 = make_link("table-2")
    caplog.set_level(logging.WARNING)
    forged = [
        (topics.events(3), envelope.event("table-3", 3, 1, {"forged": True}), False),
        (topics.ack(2), envelope.message("head", {"seq": 99}), True),
        (topics.state(), envelope.message("head", {"phase": "ended"}), True),
        (topics.status("table-3"), envelope.message("table-3", {"status": "offline"}), True),
    ]
    receipts = [t2.publish(topic, data, retain=retain) for topic, data, retain in forged]
    own = t2.publish(topics.events(2), envelope.event("table-2", 2, 1, {"own": True}))
    assert own.wait(3) and all(r.wait(3) for r in receipts)
    seen = [e.topic for e in collect(head.inbox, 0.5) if isinstance(e, Message)]
    assert seen == [topics.events(2)]  # only its own events topic got through
    refused = [r for r in caplog.records if "refused publish" in r.getMessage()]
    assert len(refused) == len(forged)
    assert all("Not authorized" in r.getMessage() for r in refused)
    denied = [line for line in broker.log_text().splitlines()
              if "Denied PUBLISH from table-2" in line and topics.night in line]
    assert len(denied) == len(forged)


def test_each_node_may_write_its_own_status(make_link, topics):
    watcher = make_link("table-1")
    watcher.subscribe(topics.all_status())
    assert watcher.wait_subscribed(5)
    t2 = make_link("table-2", status_topic=topics.status("table-2"))
    events = collect(watcher.inbox, 0.5)
    statuses = [envelope.decode(e.topic, e.payload).payload for e in events
                if isinstance(e, Message)]
    assert statuses == [{"status": "online"}]
    assert t2.connected


def test_a_read_only_user_cannot_write_where_the_head_listens(make_link, topics):
    """The head listens to the tables' events and the nodes' status: a viewer writes neither,
    not even a status of its own."""
    head = make_link("head")
    head.subscribe(topics.all_events())
    head.subscribe(topics.all_status())
    assert head.wait_subscribed(5)
    viewer = make_link("watcher")
    for topic in (topics.status("watcher"), topics.events(1), topics.status("table-1")):
        receipt = viewer.publish(topic, envelope.message("watcher", {"status": "online"}))
        assert receipt.wait(5)
    assert [e for e in collect(head.inbox, 0.5) if isinstance(e, Message)] == []


def test_the_heads_news_login_writes_the_state_and_its_parts_and_nothing_else(
        broker, make_link, topics):
    """The head's second connection logs in as head-news with the head's password: it says
    the state, the rules and the seating's pages, and can neither speak for a table nor
    acknowledge one nor hand out views."""
    from bunco_pi.net.broker import HEAD_NEWS_USER

    reader = make_link("table-1")
    reader.subscribe(topics.everything())
    assert reader.wait_subscribed(5)
    news = make_link(HEAD_NEWS_USER, password=broker.credentials.password("head"))
    allowed = [topics.state(), topics.rules(), topics.seating(1)]
    refused = [topics.events(1), topics.ack(1), topics.view(1), topics.status("head"),
               topics.command(1)]
    for topic in allowed + refused:
        assert news.publish(topic, envelope.message("head", {"n": 1})).wait(5)
    # the broker keys a session on its user, so table-1's session may still hold another
    # test's subscriptions: only this night's topics are this test's
    heard = [e.topic for e in collect(reader.inbox, 0.5)
             if isinstance(e, Message) and e.topic.startswith(topics.prefix + "/")]
    assert heard == allowed


@pytest.mark.slow
def test_retained_messages_survive_a_broker_restart(make_private_link, private_broker, topics):
    head = make_private_link("head")
    head.publish(topics.state(), envelope.message("head", {"phase": "ready"}), retain=True).wait(3)
    head.stop()
    private_broker.restart()
    reader = make_private_link("table-1")
    reader.subscribe(topics.state())
    got = [e for e in collect(reader.inbox, 0.5) if isinstance(e, Message)]
    assert [(m.topic, m.retain) for m in got] == [(topics.state(), True)]
    assert envelope.decode(got[0].topic, got[0].payload).payload == {"phase": "ready"}


# --- client ids are bound to user names ----------------------------------------------------


class _Impostor:
    """A raw paho client holding table-1's password but asking for another node's client id,
    resuming that id's persistent session if the broker let it."""

    def __init__(self, b: Broker, client_id: str) -> None:
        import queue

        import paho.mqtt.client as mqtt
        from paho.mqtt.packettypes import PacketTypes
        from paho.mqtt.properties import Properties

        self.got: queue.Queue = queue.Queue()
        self.connack: queue.Queue = queue.Queue()
        self.client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=client_id,
                                  protocol=mqtt.MQTTv5)
        self.client.username_pw_set("table-1", b.credentials.password("table-1"))
        self.client.on_message = lambda c, u, msg: self.got.put(msg.topic)
        self.client.on_connect = lambda c, u, flags, reason, props: self.connack.put(
            (reason, flags.session_present, props))
        props = Properties(PacketTypes.CONNECT)
        props.SessionExpiryInterval = 3600
        self.client.connect(b.host, b.port, keepalive=5, clean_start=False, properties=props)
        self.client.loop_start()

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


@pytest.mark.parametrize("victim", ["head", "table-2"])
def test_a_password_cannot_take_another_nodes_client_id(private_broker, make_private_link,
                                                         topics, victim):
    """table-1's password asking for the client id ``head`` (or ``table-2``) gets table-1's own
    session: the real node stays connected, and the messages queued in its session while it
    was away reach the real node, not the impostor."""
    import queue

    # The victim's persistent session, subscribed, then away: QoS 1 messages queue for it.
    real = MqttLink(victim, private_broker.host, private_broker.port, username=victim,
                    password=private_broker.credentials.password(victim), client_id=victim,
                    keepalive=5, reconnect_delay=(0.05, 0.5))
    queued_topic = topics.events(3) if victim == "head" else topics.view(2)
    real.subscribe(queued_topic)
    real.start()
    try:
        assert real.wait_subscribed(5)
        real.stop()
        sender = make_private_link("head" if victim == "table-2" else "table-3")
        payload = (envelope.event("table-3", 3, 1, {"n": 1}) if victim == "head"
                   else envelope.message("head", {"view": 1}))
        assert sender.publish(queued_topic, payload).wait(3)

        impostor = _Impostor(private_broker, victim)
        try:
            reason, session_present, props = impostor.connack.get(timeout=5)
            assert not reason.is_failure
            # Renamed: the broker gave it the client id of its own user, so no session of the
            # victim's, and nothing queued for the victim.
            assert getattr(props, "AssignedClientIdentifier", "table-1") == "table-1"
            with pytest.raises(queue.Empty):
                impostor.got.get(timeout=1.0)

            # The real node comes back while the impostor is still connected: it gets its
            # queued message and is not kicked off by the impostor.
            real = MqttLink(victim, private_broker.host, private_broker.port, username=victim,
                            password=private_broker.credentials.password(victim), client_id=victim,
                            keepalive=5, reconnect_delay=(0.05, 0.5))
            real.start()
            assert real.wait_connected(5)
            got = [e for e in collect(real.inbox, 1.0) if isinstance(e, Message)]
            assert [m.topic for m in got] == [queued_topic]
            again = _Impostor(private_broker, victim)  # a second try while the real node is online
            try:
                assert not again.connack.get(timeout=5)[0].is_failure
                assert real.connected
                assert not [e for e in collect(real.inbox, 1.0)
                            if not isinstance(e, Message)], "the real node was disturbed"
                with pytest.raises(queue.Empty):
                    again.got.get(timeout=0.2)
            finally:
                again.close()
        finally:
            impostor.close()
        log = private_broker.log_text()
        assert "as table-1 (p5, c0, k5, u'table-1')" in log
    finally:
        real.stop()
