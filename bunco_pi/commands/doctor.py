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
    parser.add_argument("--interactive", action="store_true",
                        help="walk through the parts with the box in front of you: a test "
                             "pattern on the OLED, each button in turn, the buzzer, the head's "
                             "round trip, then one screen that says whether it is ready (stop "
                             "the box's services first)")
    parser.add_argument("--press-timeout", type=float, default=20.0, metavar="SECONDS",
                        help="--interactive: how long to wait for each button (default 20)")
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
            yield doctor.check_face_reader()
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
    # The doctor logs in as its own user (doctor-table-N, doctor-head) with the box's password
    # from the box's credentials file: as the box itself it would knock the running box off.
    password, problem = doctor.read_password(cfg.credentials, cfg.username)
    yield problem or doctor.check_broker(host, port, _doctor(cfg.username), password, timeout,
                                         found_by)
    if cfg.head_username:
        password, problem = doctor.read_password(cfg.head_credentials, cfg.head_username)
        yield problem or doctor.check_broker(cfg.head_host, cfg.head_port,
                                             _doctor(cfg.head_username), password, timeout)


def _doctor(user: str | None) -> str | None:
    from bunco_pi.net.broker import doctor_user

    return doctor_user(user) if user else None


def run(args: argparse.Namespace, pin_factory=None, i2c_probe=doctor.probe_i2c,
        service_running=doctor.box_service_running, device=None, ask=input, say=None) -> int:
    if getattr(args, "interactive", False):
        return run_interactive(args, pin_factory, service_running, device, ask, say)
    failed = False
    for result in checks(args, pin_factory, i2c_probe, service_running):
        print(result.line(), flush=True)
        failed = failed or result.failed
    if failed:
        print("Some parts need attention (FAIL lines above); run `bunco-pi doctor` again "
              "after fixing them.", file=sys.stderr)
    return 1 if failed else 0


def run_interactive(args: argparse.Namespace, pin_factory=None,
                    service_running=doctor.box_service_running, device=None, ask=input,
                    say=None) -> int:
    """``--interactive``: the walk of ``bunco_pi.doctor_interactive``; ``device`` (a luma
    device), ``ask`` and ``say`` let a test stand in for the OLED and the builder."""
    from bunco_pi.doctor_interactive import InteractiveDoctor

    head_path = args.head_config if args.head_config.is_file() else None
    cfg, config_result = doctor.load_config(args.config, head_path)
    print(config_result.line(), flush=True)
    if service_running():
        print("bunco-pi-table is running and holds the buttons and the screen: stop it first "
              "(`sudo systemctl stop bunco-pi-table`), run `bunco-pi doctor --interactive`, "
              "then start it again", file=sys.stderr)
        return 1
    results = [config_result]
    if device is None and cfg.display:
        device, problem = _open_display(cfg)
        if problem is not None:
            results.append(problem)
    walk = InteractiveDoctor(cfg.pins, device=device if cfg.display else None,
                             broker_check=lambda: next(_broker_checks(cfg, args.broker_timeout)),
                             buzzer_kind=cfg.buzzer_kind, pin_factory=pin_factory,
                             say=say or (lambda line: print(line, flush=True)), ask=ask,
                             press_timeout=args.press_timeout)
    results = walk.run(results)
    print("--- verdict ---")
    for result in results:
        print(result.line(), flush=True)
    failed = [r.part for r in results if r.failed]
    if failed:
        print(f"NOT READY: {len(failed)} part(s) need attention: {', '.join(failed)}",
              file=sys.stderr)
        return 1
    print("READY: every part answered")
    return 0


def _open_display(cfg: doctor.BoxConfig):
    from bunco_pi.errors import UserError
    from bunco_pi.hardware.oled import DisplayConfig, open_device

    try:
        return open_device(DisplayConfig(kind=cfg.display_kind, address=cfg.i2c_address,
                                         port=cfg.i2c_bus, rotation=cfg.display_rotation)), None
    except UserError as exc:
        return None, CheckResult("display", doctor.FAIL, str(exc))
