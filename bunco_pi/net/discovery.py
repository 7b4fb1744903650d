"""Tables find the head on the LAN without anyone typing an address (mDNS / DNS-SD).

The head advertises ``_bunco-pi._tcp.local.``: its broker's port, and the night's name in the
TXT record. A table browses for it for a few seconds at start and falls back to the address
in its config when nothing answers (a network that drops multicast, a head not yet on).
python-zeroconf does the protocol; its callbacks run on zeroconf's own thread, so they only
hand names to a queue that the browsing thread reads.
"""

from __future__ import annotations

import queue
import socket
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

SERVICE_TYPE = "_bunco-pi._tcp.local."
TXT_VERSION = "1"


@dataclass(frozen=True)
class HeadAddress:
    """Where a table's broker is, and how that was learnt ("zeroconf" or "config")."""

    host: str
    port: int
    night: str | None
    source: str


def instance_name(night: str) -> str:
    """The DNS-SD instance name of a night's head: the night's name, cut to one DNS label."""
    label = night.encode("utf-8")[:63].decode("utf-8", "ignore").strip() or "bunco-pi"
    return f"{label}.{SERVICE_TYPE}"


def local_ipv4_addresses() -> list[str]:
    """This machine's IPv4 addresses other than loopback: where tables can reach the head."""
    import ifaddr  # a dependency of zeroconf

    found = []
    for adapter in ifaddr.get_adapters():
        for ip in adapter.ips:
            if isinstance(ip.ip, str) and not ip.ip.startswith("127."):
                found.append(ip.ip)
    return sorted(set(found))


def service_info(night: str, port: int, addresses: Sequence[str], hostname: str | None = None):
    """The zeroconf ServiceInfo a head advertises."""
    from zeroconf import ServiceInfo

    if not 1 <= port <= 65535:
        raise ValueError(f"broker port {port}: not 1..65535")
    host = (hostname or socket.gethostname()).split(".")[0] or "bunco-head"
    return ServiceInfo(
        SERVICE_TYPE,
        instance_name(night),
        port=port,
        parsed_addresses=list(addresses),
        server=f"{host}.local.",
        properties={"night": night, "version": TXT_VERSION},
    )


class Advertiser:
    """Advertise the head's broker until closed. Use as a context manager."""

    def __init__(self, night: str, port: int, addresses: Sequence[str] | None = None,
                 interfaces: Sequence[str] | None = None, hostname: str | None = None) -> None:
        self._info = service_info(night, port,
                                  addresses if addresses is not None else local_ipv4_addresses(),
                                  hostname)
        self._interfaces = interfaces
        self._zeroconf = None

    @property
    def name(self) -> str:
        return self._info.name

    def start(self) -> Advertiser:
        from zeroconf import InterfaceChoice, IPVersion, Zeroconf

        self._zeroconf = Zeroconf(
            interfaces=list(self._interfaces) if self._interfaces else InterfaceChoice.All,
            ip_version=IPVersion.V4Only,
        )
        # Two heads on one LAN with the same night name get "name (2)", not an error.
        self._zeroconf.register_service(self._info, allow_name_change=True)
        return self

    def close(self) -> None:
        if self._zeroconf is not None:
            try:
                self._zeroconf.unregister_service(self._info)
            finally:
                self._zeroconf.close()
                self._zeroconf = None

    def __enter__(self) -> Advertiser:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()


def browse(timeout: float, night: str | None = None,
           interfaces: Sequence[str] | None = None) -> HeadAddress | None:
    """The first head that answers within ``timeout`` seconds (of ``night``, if given)."""
    from zeroconf import InterfaceChoice, IPVersion, ServiceBrowser, ServiceStateChange, Zeroconf

    names: queue.Queue[str] = queue.Queue()

    def on_change(zeroconf, service_type, name, state_change) -> None:  # zeroconf's thread
        if state_change is not ServiceStateChange.Removed:
            names.put(name)

    deadline = time.monotonic() + timeout
    zc = Zeroconf(interfaces=list(interfaces) if interfaces else InterfaceChoice.All,
                  ip_version=IPVersion.V4Only)
    try:
        browser = ServiceBrowser(zc, SERVICE_TYPE, handlers=[on_change])
        try:
            while (left := deadline - time.monotonic()) > 0:
                try:
                    name = names.get(timeout=left)
                except queue.Empty:
                    break
                left_ms = max(1, int((deadline - time.monotonic()) * 1000))
                info = zc.get_service_info(SERVICE_TYPE, name, timeout=left_ms)
                found = _head_address(info) if info is not None else None
                if found is not None and (night is None or found.night == night):
                    return found
        finally:
            browser.cancel()
    finally:
        zc.close()
    return None


def _head_address(info) -> HeadAddress | None:
    from zeroconf import IPVersion

    addresses = info.parsed_addresses(IPVersion.V4Only)
    if not addresses or not info.port:
        return None
    props = info.decoded_properties if hasattr(info, "decoded_properties") else {
        k.decode(): (v.decode() if v is not None else None) for k, v in info.properties.items()}
    return HeadAddress(host=addresses[0], port=info.port, night=props.get("night"),
                       source="zeroconf")


def find_head(fallback_host: str, fallback_port: int, *, discover: bool = True,
              timeout: float = 3.0, night: str | None = None,
              browser: Callable[..., HeadAddress | None] = browse) -> HeadAddress:
    """The head's broker: found by zeroconf, else the configured address.

    A network that forbids multicast makes zeroconf raise OSError, and an install without
    the ``discovery`` extra lacks zeroconf: each is a reason to fall back, not to stop the table.
    """
    if discover:
        try:
            found = browser(timeout, night=night)
        except (OSError, ImportError):
            found = None
        if found is not None:
            return found
    return HeadAddress(host=fallback_host, port=fallback_port, night=night, source="config")
