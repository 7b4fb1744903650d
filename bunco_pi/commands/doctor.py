"""``bunco-pi doctor``: check this box's parts, one line each, and say how to fix what's wrong."""

from __future__ import annotations

import argparse
import contextlib
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from bunco_pi import doctor
from bunco_pi.doctor import CheckResult

DEFAULT_CONFIG = Path("/etc/bunco-pi/table.toml")
DEFAULT_HEAD_CONFIG = Path("/etc/bunco-pi/head.toml")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "doctor", help="check this box's display, buttons, dice sensor or camera, broker, clock and "
             "disk",
        description="Check every part this box needs; one line each, with the fix for what "
                    "is wrong. Exits 1 if the box cannot work as it is.")
    parser.add_argument("--config", type=Path, default=DEFAULT_CONFIG,
                        help=f"the table config (default {DEFAULT_CONFIG})")
    parser.add_argument("--head-config", type=Path, default=DEFAULT_HEAD_CONFIG,
                        help=f"the head config, checked when present (default "
                             f"{DEFAULT_HEAD_CONFIG})")
    parser.add_argument("--hello-timeout", type=float, default=6.0, metavar="SECONDS",
                        help="how long to wait for the dice sensor to speak (default 6: an "
                             "idle tray repeats HELLO every 5 s)")
    parser.add_argument("--broker-timeout", type=float, default=5.0, metavar="SECONDS",
                        help="how long to wait for the broker (default 5)")
    parser.add_argument("--dev", type=Path, default=Path("/dev"), help=argparse.SUPPRESS)
    parser.set_defaults(func=run)


def checks(args: argparse.Namespace, pin_factory=None, i2c_probe=doctor.probe_i2c,
           service_running=doctor.box_service_running) -> Iterator[CheckResult]:
    """Every check, in the order a builder would fix them.

    ``pin_factory``, ``i2c_probe`` and ``service_running`` let a test stand in for the Pi's
    GPIO, its I2C bus and systemd.
    """
    head_path = args.head_config if args.head_config.is_file() else None
    cfg, config_result = doctor.load_config(args.config, head_path)
    yield config_result
    if cfg.rules_file:
        yield doctor.check_rules(Path(cfg.rules_file))
    elif cfg.rules_preset:
        yield CheckResult("rules", doctor.OK, f"the shipped preset {cfg.rules_preset!r}")
    running = service_running()
    if cfg.display:
        yield doctor.check_display(cfg.i2c_bus, cfg.i2c_address, dev_dir=args.dev,
                                   probe=i2c_probe)
    else:
        yield CheckResult("display", doctor.OK, 'none fitted ([display] type = "none")')
    # lgpio makes FIFOs in the working directory, which need not be writable for `bunco`
    # (`sudo -u bunco bunco-pi doctor` from a home directory): claim the pins from a temp dir.
    with tempfile.TemporaryDirectory(prefix="bunco-pi-doctor-") as work, contextlib.chdir(work):
        gpio = doctor.check_gpio(cfg.pins, dev_dir=args.dev, pin_factory=pin_factory,
                                 service_running=running)
    yield gpio
    yield doctor.check_dice(cfg.dice_port, cfg.dice_sensor, hello_timeout=args.hello_timeout,
                            service_running=running)
    if cfg.camera_source:
        stack = doctor.check_camera_stack(cfg.camera_source)
        yield stack
        if not stack.failed:
            yield doctor.check_dice_net()
            yield doctor.check_camera_frame(cfg.camera_source, cfg.camera_calibration,
                                            service_running=running)
    yield from _broker_checks(cfg, args.broker_timeout)
    yield doctor.check_clock()
    yield doctor.check_disk(Path(cfg.data_dir))


def _broker_checks(cfg: doctor.BoxConfig, timeout: float) -> Iterator[CheckResult]:
    host, port, found_by = cfg.broker_host, cfg.broker_port, ""
    if cfg.discover:
        from bunco_pi.net.discovery import find_head

        head = find_head(host, port, timeout=min(timeout, 3.0))
        host, port = head.host, head.port
        found_by = ("found by zeroconf" if head.source == "zeroconf"
                    else "from the config: no head answered on zeroconf")
    # Each node logs in as itself (table-N, head) with its password from its credentials file.
    password, problem = doctor.read_password(cfg.credentials, cfg.username)
    yield problem or doctor.check_broker(host, port, cfg.username, password, timeout, found_by)
    if cfg.head_username:
        password, problem = doctor.read_password(cfg.head_credentials, cfg.head_username)
        yield problem or doctor.check_broker(cfg.head_host, cfg.head_port, cfg.head_username,
                                             password, timeout)


def run(args: argparse.Namespace, pin_factory=None, i2c_probe=doctor.probe_i2c,
        service_running=doctor.box_service_running) -> int:
    failed = False
    for result in checks(args, pin_factory, i2c_probe, service_running):
        print(result.line(), flush=True)
        failed = failed or result.failed
    if failed:
        print("Some parts need attention (FAIL lines above); run `bunco-pi doctor` again "
              "after fixing them.", file=sys.stderr)
    return 1 if failed else 0
