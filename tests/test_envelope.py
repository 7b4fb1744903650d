import json
import logging

import pytest

from bunco_pi.net import envelope
from bunco_pi.net.envelope import MAX_BYTES, Envelope, EnvelopeError, decode, try_decode
from bunco_pi.net.topics import Topics

T = Topics("fri")
EVENTS = T.events(3)


def test_event_round_trips_through_json():
    data = envelope.event("table-3", 3, 17, {"kind": "roll", "dice": [3, 3, 5]})
    assert decode(EVENTS, data) == Envelope("table-3", {"kind": "roll", "dice": [3, 3, 5]}, 3, 17)
    assert json.loads(data)["v"] == 1


def test_plain_message_round_trips_and_carries_no_seq():
    data = envelope.message("head", {"seq": 4})
    env = decode(T.ack(3), data)
    assert env == Envelope("head", {"seq": 4}) and not env.is_event
    assert set(json.loads(data)) == {"v", "sender", "payload"}


def good_event(**changes):
    doc = {"v": 1, "sender": "table-3", "table": 3, "seq": 1, "payload": {}}
    doc.update(changes)
    return json.dumps(doc).encode()


@pytest.mark.parametrize("data, problem", [
    (b"", "not a JSON envelope"),
    (b"\xff\xfe", "not a JSON envelope"),
    (b"{", "not a JSON envelope"),
    (b"[1, 2]", "must be a JSON object"),
    (b'{"v":1,"v":1,"sender":"table-3","table":3,"seq":1,"payload":{}}', "duplicate key"),
    (good_event(v=2), "version 2 not supported"),
    (good_event(v=True), "version True not supported"),
    (good_event(sender="Table 3"), "bad sender"),
    (good_event(sender=7), "bad sender"),
    (good_event(table=4), "names table 4 but the topic is table 3"),
    (good_event(table="3"), "table must be an integer"),
    (good_event(seq=0), "seq must be a positive integer"),
    (good_event(seq=-5), "seq must be a positive integer"),
    (good_event(seq=1.5), "seq must be a positive integer"),
    (good_event(seq=True), "seq must be a positive integer"),
    (good_event(seq=2**53), "seq must be a positive integer"),
    (good_event(payload=[1]), "payload must be a JSON object"),
    (good_event(extra=1), "unknown envelope field(s) extra"),
    (b'{"v":1,"sender":"table-3","table":3,"payload":{}}', "missing envelope field(s) seq"),
    (b'{"v":1,"sender":"table-3","table":3,"seq":1,"payload":{"x":NaN}}', "NaN is not allowed"),
    (b'{"v":1,"sender":"table-3","table":3,"seq":1,"payload":{"x":1e999}}', "too large"),
    (b"[" * 2000 + b"]" * 2000, "not a JSON envelope"),
])
def test_malformed_events_are_rejected_with_one_line_naming_the_topic(data, problem):
    with pytest.raises(EnvelopeError) as err:
        decode(EVENTS, data)
    message = str(err.value)
    assert message.startswith(EVENTS + ": ") and problem in message and "\n" not in message


def test_a_plain_topic_refuses_event_fields():
    with pytest.raises(EnvelopeError, match="unknown envelope field"):
        decode(T.state(), good_event())


def test_oversized_message_is_rejected_before_parsing():
    data = good_event(payload={"pad": "x" * MAX_BYTES})
    with pytest.raises(EnvelopeError, match=f"over the {MAX_BYTES}-byte limit"):
        decode("bunco/n1/state", data)


def test_an_event_is_held_to_its_own_smaller_limit_both_ways():
    from bunco_pi.net.envelope import MAX_EVENT_BYTES

    data = good_event(payload={"pad": "x" * MAX_EVENT_BYTES})
    with pytest.raises(EnvelopeError, match=f"over the {MAX_EVENT_BYTES}-byte limit"):
        decode(EVENTS, data)
    with pytest.raises(EnvelopeError, match=f"over the {MAX_EVENT_BYTES}-byte limit"):
        envelope.event("table-3", 3, 1, {"pad": "x" * MAX_EVENT_BYTES})
    assert decode(EVENTS, good_event(payload={"pad": "x" * (MAX_EVENT_BYTES - 200)}))


def test_encode_refuses_what_a_reader_would_refuse():
    with pytest.raises(EnvelopeError, match="byte limit"):
        envelope.message("head", {"pad": "x" * MAX_BYTES})
    with pytest.raises(EnvelopeError, match="not JSON"):
        envelope.message("head", {"x": float("nan")})
    with pytest.raises(EnvelopeError, match="not JSON"):
        envelope.message("head", {"x": object()})


def test_a_foreign_topic_is_an_envelope_error_too():
    with pytest.raises(EnvelopeError, match="not under bunco"):
        decode("elsewhere/x", good_event())


def test_try_decode_logs_one_line_and_returns_none(caplog):
    with caplog.at_level(logging.WARNING):
        assert try_decode(EVENTS, b"not json") is None
    assert len(caplog.records) == 1
    assert EVENTS in caplog.records[0].getMessage()
    assert try_decode(EVENTS, good_event(seq=9)).seq == 9


@pytest.mark.parametrize("topic", [T.state(), T.control(), T.standings(), T.events(2), T.ack(2),
                                   T.view(2), T.status("table-2")])
@pytest.mark.parametrize("data", [b"", b"\x80", b"null", b'"online"', b"{}",
                                  b"z" * (MAX_BYTES + 1)])
def test_garbage_on_every_topic_is_one_line_naming_that_topic(topic, data):
    with pytest.raises(EnvelopeError) as err:
        decode(topic, data)
    assert str(err.value).startswith(topic + ": ") and "\n" not in str(err.value)


@pytest.mark.parametrize("doc", [
    {"v": 1, "sender": "x" * 60_000, "payload": {}},
    {"v": 1, "sender": [0] * 20_000, "payload": {}},
    {"v": 1, "sender": "head", "payload": {}, "k" * 60_000: 1},
    {"v": "é" * 20_000, "sender": "head", "payload": {}},
])
def test_a_log_line_quotes_at_most_200_bytes_of_a_bad_message(doc, caplog):
    import json
    import logging

    from bunco_pi.net.envelope import MAX_QUOTE, try_decode

    caplog.set_level(logging.WARNING)
    topic = "bunco/n1/state"  # a state may be 64 KB: an event is refused for its size first
    assert try_decode(topic, json.dumps(doc, ensure_ascii=False).encode()) is None
    [line] = [r.getMessage() for r in caplog.records]
    assert line.startswith(f"rejected message: {topic}: ")
    assert "more bytes)" in line
    assert len(line.encode()) <= len(topic) + MAX_QUOTE + 80
