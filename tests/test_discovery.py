import os
import time

import pytest

from bunco_pi.net import discovery
from bunco_pi.net.discovery import SERVICE_TYPE, Advertiser, HeadAddress, browse, find_head

LOOPBACK = ["127.0.0.1"]


def test_service_info_carries_port_night_and_addresses():
    info = discovery.service_info("Friday night", 1884, ["192.168.1.10"], hostname="head.lan")
    assert info.type == SERVICE_TYPE
    assert info.name == "Friday night." + SERVICE_TYPE
    assert info.port == 1884
    assert info.parsed_addresses() == ["192.168.1.10"]
    assert info.server == "head.local."
    assert info.properties[b"night"] == b"Friday night"


def test_instance_name_fits_one_dns_label():
    long_night = "é" * 40  # 80 bytes in UTF-8
    label = discovery.instance_name(long_night).removesuffix("." + SERVICE_TYPE)
    assert len(label.encode()) <= 63 and label == "é" * 31
    assert discovery.instance_name("  ") == "bunco-pi." + SERVICE_TYPE


def test_bad_port_is_refused():
    with pytest.raises(ValueError, match="port 0"):
        discovery.service_info("n", 0, ["10.0.0.1"])


def test_local_addresses_exclude_loopback():
    assert all(not a.startswith("127.") for a in discovery.local_ipv4_addresses())


def test_fallback_when_nothing_answers():
    calls = []

    def silent(timeout, night=None):
        calls.append((timeout, night))
        return None

    got = find_head("10.0.0.2", 1883, timeout=0.5, night="n", browser=silent)
    assert got == HeadAddress("10.0.0.2", 1883, "n", "config")
    assert calls == [(0.5, "n")]


@pytest.mark.parametrize("error", [PermissionError("multicast blocked"),
                                   ImportError("No module named 'zeroconf'")])
def test_fallback_when_discovery_cannot_run(error):
    def broken(timeout, night=None):
        raise error

    assert find_head("head.lan", 1883, browser=broken).source == "config"


def test_no_browse_when_discovery_is_off():
    def must_not_run(*a, **k):
        raise AssertionError("browsed although discover=False")

    assert find_head("h", 1, discover=False, browser=must_not_run).host == "h"


@pytest.fixture(scope="module")
def loopback_mdns():
    """Skip when this machine cannot do multicast DNS on loopback."""
    night = f"probe-{os.getpid()}-{time.monotonic_ns()}"
    try:
        with Advertiser(night, 1999, addresses=LOOPBACK, interfaces=LOOPBACK):
            seen = browse(5.0, night=night, interfaces=LOOPBACK)
    except OSError as exc:
        pytest.skip(f"multicast on loopback is not available here: {exc}")
    if seen is None:
        pytest.skip("multicast on loopback is not delivered here (no answer in 5 s)")


def test_a_table_finds_the_head_on_loopback(loopback_mdns):
    night = f"Friday-{os.getpid()}"
    with Advertiser(night, 18830, addresses=LOOPBACK, interfaces=LOOPBACK):
        found = browse(5.0, night=night, interfaces=LOOPBACK)
    assert found == HeadAddress("127.0.0.1", 18830, night, "zeroconf")


def test_another_nights_head_is_not_taken(loopback_mdns):
    with Advertiser(f"Tuesday-{os.getpid()}", 18831, addresses=LOOPBACK, interfaces=LOOPBACK):
        start = time.monotonic()
        found = browse(2.0, night=f"Friday-{os.getpid()}", interfaces=LOOPBACK)
        elapsed = time.monotonic() - start
    assert found is None
    assert elapsed < 5.0  # bounded by the timeout, plus zeroconf's close


def test_browse_with_nobody_advertising_returns_none(loopback_mdns):
    assert browse(1.0, night=f"nobody-{os.getpid()}", interfaces=LOOPBACK) is None
