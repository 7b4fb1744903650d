"""``bunco-pi sdcard``: make a freshly flashed Raspberry Pi OS card set itself up as a box.

Writes onto the card's boot partition what its first boot needs (``bunco_pi.firstboot`` says
what and why): Wi-Fi, the hostname, a user, ssh only if asked, the night's broker credentials,
and the step that installs bunco-pi for the box's role and starts it. The partition is a
mounted folder, or the partition itself (``/dev/sdb1``) or an image of it, written with mtools
without mounting. The night's passwords are made once, in a secrets folder on this computer,
and each card gets what its box needs.
"""

from __future__ import annotations

import argparse
import getpass
import gzip
import io
import os
import re
import secrets
import shutil
import subprocess
import sys
import tarfile
import tempfile
import tomllib
from collections.abc import Iterator
from pathlib import Path

from bunco_pi import firstboot
from bunco_pi.errors import UserError

DEFAULT_SECRETS = Path("bunco-secrets")
DEFAULT_USER = "bunco-admin"
DEFAULT_TABLES = 8
REPO = Path(__file__).resolve().parents[2]
SOURCE_PARTS = ("bunco_pi", "install", "systemd", "pyproject.toml", "README.md", "LICENSE")
ARM64_PLATFORMS = ("manylinux_2_17_aarch64", "manylinux2014_aarch64", "manylinux_2_28_aarch64",
                   "musllinux_1_1_aarch64", "linux_aarch64")
MECHANISM_NAMES = {firstboot.FIRSTRUN: "Bookworm's firstrun.sh, userconf.txt and cmdline.txt",
                   firstboot.CLOUD_INIT: "cloud-init (user-data, network-config, meta-data)"}


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "sdcard", help="make a freshly flashed Raspberry Pi OS card set itself up as a box",
        description="Write onto a Raspberry Pi OS card's boot partition what its first boot "
                    "needs to become a bunco-pi box: Wi-Fi, hostname, a user, the night's "
                    "broker password, and the install step for its role. No keyboard, screen "
                    "or ssh needed. See docs/install.md.")
    p.add_argument("partition", type=Path, metavar="BOOT_PARTITION",
                   help="the card's boot partition: its mounted folder (/media/$USER/bootfs), "
                        "the partition (/dev/sdb1: written with mtools, not mounted) or an image")
    p.add_argument("--role", required=True, choices=("head", "table"))
    p.add_argument("--table", type=int, metavar="N", help="a table's number (2 or more)")
    p.add_argument("--tables", type=int, metavar="N",
                   help=f"the night's tables (default: as the secrets folder has them, else "
                        f"{DEFAULT_TABLES})")
    p.add_argument("--night", help="the night's name (default bunco-night; a table's card: "
                                   "the one the head's card was written with, from the secrets "
                                   "folder, so a table finds it where zeroconf cannot tell it)")
    p.add_argument("--preset", default="classic", help="the head's house rules to start from")
    p.add_argument("--head-host", default=firstboot.HEAD_HOSTNAME + ".local",
                   help="where a table finds the head when zeroconf does not answer")
    p.add_argument("--wifi", metavar="SSID", help="the venue's Wi-Fi (default: wired only)")
    p.add_argument("--wifi-password-file", type=Path, metavar="FILE",
                   help="its password, first line of FILE (else asked for)")
    p.add_argument("--wifi-open", action="store_true", help="a Wi-Fi without a password")
    p.add_argument("--country", help="the Wi-Fi regulatory country: GB, US, DE, ...")
    p.add_argument("--user", default=DEFAULT_USER,
                   help=f"the login made on the box (default {DEFAULT_USER}; password made and "
                        "shown, and kept in the secrets folder)")
    p.add_argument("--ssh", action="store_true", help="turn the ssh server on (off by default)")
    p.add_argument("--secrets", type=Path, default=DEFAULT_SECRETS, metavar="DIR",
                   help=f"where the night's passwords are kept on this computer (default "
                        f"./{DEFAULT_SECRETS}); use the same folder for every card of a night")
    p.add_argument("--offline", action="store_true",
                   help="also copy bunco-pi and its Python packages for arm64 onto the card "
                        "(downloaded now with pip), so the box installs without internet")
    p.add_argument("--wheels", type=Path, metavar="DIR",
                   help="copy these wheels instead of downloading them (implies --offline)")
    p.add_argument("--debs", type=Path, metavar="DIR",
                   help="copy the Debian packages (.deb) in DIR onto the card, installed with "
                        "dpkg at first boot (docs/install.md says how to gather them)")
    p.set_defaults(func=run)


# --- the partition: a folder, or a FAT partition through mtools -------------------------------

class Folder:
    def __init__(self, path: Path) -> None:
        self.path = path

    def names(self) -> set[str]:
        return {p.name.lower() for p in self.path.iterdir()}

    def read(self, name: str) -> bytes:
        return (self.path / name).read_bytes()

    def free(self) -> int:
        return shutil.disk_usage(self.path).free

    def size_of(self, name: str) -> int:
        path = self.path / name
        return path.stat().st_size if path.is_file() else 0

    def write(self, name: str, data: bytes) -> None:
        target = self.path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)

    def copy(self, source: Path, name: str) -> None:
        target = self.path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)

    def flush(self) -> None:
        os.sync()


class FatImage:
    """A FAT partition or image, read and written with mtools (no mount, no root)."""

    def __init__(self, path: Path) -> None:
        if shutil.which("mcopy") is None:
            raise UserError(f"{path}: not a folder; to write the partition unmounted install "
                            "mtools (`sudo apt install mtools`), or mount it and give its folder")
        self.path = path
        self._dirs: set[str] = set()

    def _m(self, *args: str, data: bytes | None = None) -> bytes:
        env = {**os.environ, "MTOOLS_SKIP_CHECK": "1"}
        out = subprocess.run([args[0], "-i", str(self.path), *args[1:]], input=data,
                             capture_output=True, env=env, timeout=300)
        if out.returncode != 0:
            text = (out.stderr or out.stdout).decode(errors="replace").strip().splitlines()
            raise UserError(f"{self.path}: {args[0]} failed ({text[-1] if text else 'no output'})")
        return out.stdout

    def names(self) -> set[str]:
        try:
            listing = self._m("mdir", "-b", "::/").decode(errors="replace")
        except UserError:
            raise UserError(f"{self.path}: not a Raspberry Pi OS boot partition (not a FAT "
                            "file system): give the card's first partition") from None
        return {line.strip().rstrip("/").rpartition("/")[2].lower()
                for line in listing.splitlines() if line.strip()}

    def read(self, name: str) -> bytes:
        return self._m("mtype", f"::/{name}")

    def free(self) -> int:
        listing = self._m("mdir", "::/").decode(errors="replace")
        match = re.search(r"([\d ]+) bytes free", listing)
        return int(match.group(1).replace(" ", "")) if match else 0

    def size_of(self, name: str) -> int:
        try:
            return len(self.read(name))
        except UserError:
            return 0

    def _mkdirs(self, name: str) -> None:
        parts = name.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            folder = "/".join(parts[:i])
            if folder not in self._dirs:
                if not self._exists(folder):
                    self._m("mmd", f"::/{folder}")
                self._dirs.add(folder)

    def _exists(self, folder: str) -> bool:
        try:
            self._m("mdir", "-b", f"::/{folder}")
            return True
        except UserError:
            return False

    def write(self, name: str, data: bytes) -> None:
        with tempfile.NamedTemporaryFile() as tmp:
            tmp.write(data)
            tmp.flush()
            self.copy(Path(tmp.name), name)

    def copy(self, source: Path, name: str) -> None:
        self._mkdirs(name)
        self._m("mcopy", "-o", str(source), f"::/{name}")

    def flush(self) -> None:
        pass


def open_partition(path: Path) -> Folder | FatImage:
    if path.is_dir():
        return Folder(path)
    if path.exists():
        return FatImage(path)
    raise UserError(f"{path}: no such folder or partition (the card's boot partition, e.g. "
                    "/media/$USER/bootfs or /dev/sdb1)")


# --- the night's secrets, kept on this computer -----------------------------------------------

def _private(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(text)
    os.chmod(path, 0o600)


def night_credentials(folder: Path, tables: int | None) -> tuple[dict[str, str], int]:
    """Every node's broker password for the night (made once, then kept) and its tables."""
    from bunco_pi.net import broker

    path = folder / "credentials.json"
    existing = broker.load_credentials(path) if path.exists() else broker.Credentials({})
    had = sum(1 for u in existing.passwords if u.startswith("table-"))
    count = tables if tables is not None else (had or DEFAULT_TABLES)
    if not 1 <= count <= firstboot.MAX_TABLES:
        raise UserError(f"--tables {count}: a night has 1..{firstboot.MAX_TABLES} tables")
    wanted = broker.with_users(existing, broker.node_users(max(count, had)))
    if wanted != existing or not path.exists():
        _private(path, broker.credentials_text(wanted))
    return dict(wanted.passwords), max(count, had)


def night_name(folder: Path, role: str, given: str | None) -> str:
    """The night: given, else (a table) the head card's, kept in the secrets folder; the
    head's card keeps it there. "" for a table when neither says (zeroconf tells it)."""
    from bunco_pi.net.topics import TopicError, check_night

    kept = folder / "night.txt"
    if given is not None:
        try:
            check_night(given)
        except TopicError:
            raise UserError(f"--night {given!r}: letters, digits, - and _ (it is part of every "
                            "MQTT topic)") from None
    if role == "head":
        night = given or "bunco-night"
        _private(kept, night + "\n")
        return night
    if given:
        return given
    return kept.read_text(encoding="utf-8").strip() if kept.is_file() else ""


def _login_hash(password: str) -> str:
    if shutil.which("openssl") is None:
        raise UserError("openssl is needed to hash the box's login password (`sudo apt install "
                        "openssl`)")
    out = subprocess.run(["openssl", "passwd", "-6", "-stdin"], input=password + "\n",
                         capture_output=True, text=True, timeout=30)
    if out.returncode != 0 or not out.stdout.startswith("$6$"):
        raise UserError(f"openssl passwd failed: {out.stderr.strip() or out.stdout.strip()}")
    return out.stdout.strip()


def _wifi(args: argparse.Namespace) -> firstboot.Wifi | None:
    if not args.wifi:
        if args.wifi_password_file or args.wifi_open:
            raise UserError("--wifi SSID is needed with --wifi-password-file or --wifi-open")
        return None
    password = None
    if args.wifi_password_file is not None:
        try:
            password = args.wifi_password_file.read_text(encoding="utf-8").splitlines()[0]
        except (OSError, IndexError):
            raise UserError(f"--wifi-password-file {args.wifi_password_file}: no such file, "
                            "or empty") from None
    elif not args.wifi_open and sys.stdin.isatty():
        password = getpass.getpass(f"Password of the Wi-Fi {args.wifi}: ")
    return firstboot.check_wifi(args.wifi, password, args.country, args.wifi_open)


# --- what goes on the card besides the configuration ---------------------------------------------

def source_archive() -> bytes:
    """The installer, the units and the package, as firstboot.sh unpacks them (same bytes for
    the same files: no dates, owners or byte-code)."""
    if not (REPO / "install" / "install.sh").is_file():
        raise UserError("bunco-pi sdcard copies the installer onto the card: run it from a "
                        "clone of the repository (install/install.sh is not beside this package)")
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0) as zipped, \
            tarfile.open(fileobj=zipped, mode="w") as tar:
        for path in _source_files():
            info = tar.gettarinfo(str(path), arcname=str(path.relative_to(REPO)))
            info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, "", ""
            with path.open("rb") as data:
                tar.addfile(info, data)
    return buffer.getvalue()


def _source_files() -> Iterator[Path]:
    for name in SOURCE_PARTS:
        path = REPO / name
        if path.is_file():
            yield path
        elif path.is_dir():
            yield from sorted(p for p in path.rglob("*") if p.is_file()
                              and "__pycache__" not in p.parts and p.suffix != ".pyc")


def python_requirements(role: str) -> list[str]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = ["discovery"] + (["console"] if role == "head" else [])
    return [*project["dependencies"],
            *(r for e in extras for r in project["optional-dependencies"][e])]


def download_wheels(role: str, python: str, folder: Path) -> None:
    """The project's wheel and its Python packages for arm64 Linux into ``folder`` (pip)."""
    pip = [sys.executable, "-m", "pip"]
    steps = [
        [*pip, "wheel", "--quiet", "--no-deps", "--wheel-dir", str(folder), str(REPO)],
        [*pip, "download", "--quiet", "--only-binary=:all:", "--implementation", "cp",
         "--python-version", python, *(a for p in ARM64_PLATFORMS for a in ("--platform", p)),
         "--dest", str(folder), *python_requirements(role)],
    ]
    for step in steps:
        out = subprocess.run(step, capture_output=True, text=True, timeout=1800)
        if out.returncode != 0:
            last = (out.stderr.strip() or out.stdout.strip() or "no output").splitlines()[-1]
            raise UserError(f"cannot gather the offline Python packages ({last}); without "
                            "internet here, leave out --offline")


def _copies(args: argparse.Namespace, mechanism: str, work: Path) -> list[tuple[Path, str]]:
    """(local file, path on the card) of every offline copy."""
    copies: list[tuple[Path, str]] = []
    wheels = args.wheels
    if args.offline and wheels is None:
        wheels = work / "wheels"
        wheels.mkdir()
        download_wheels(args.role, firstboot.PYTHON_OF[mechanism], wheels)
    if wheels is not None:
        found = sorted(wheels.glob("*.whl")) if wheels.is_dir() else []
        if not any(p.name.startswith("bunco_pi-") for p in found):
            raise UserError(f"--wheels {wheels}: no bunco_pi-*.whl there (`pip wheel --no-deps "
                            "-w DIR .` in the repository makes it)")
        copies += [(p, f"{firstboot.CARD_DIR}/wheels/{p.name}") for p in found]
    if args.debs is not None:
        debs = sorted(args.debs.glob("*.deb")) if args.debs.is_dir() else []
        if not debs:
            raise UserError(f"--debs {args.debs}: no .deb files there")
        copies += [(p, f"{firstboot.CARD_DIR}/debs/{p.name}") for p in debs]
    return copies


# --- the command ------------------------------------------------------------------------------

def run(args: argparse.Namespace) -> int:
    if args.role == "table" and args.table is None:
        raise UserError("--role table needs --table N (2 or more; the head is table 1)")
    if args.table is not None and args.table > firstboot.MAX_TABLES:
        firstboot.check_box(args.role, args.table, firstboot.MAX_TABLES)
    user = firstboot.check_user(args.user)
    wifi = _wifi(args)
    partition = open_partition(args.partition)
    mechanism = firstboot.detect(partition.names(), str(args.partition))
    cmdline = partition.read("cmdline.txt").decode(errors="replace")

    passwords, tables = night_credentials(args.secrets, args.tables)
    night = night_name(args.secrets, args.role, args.night)
    table = firstboot.check_box(args.role, args.table, tables)
    hostname = firstboot.hostname_for(args.role, table)
    node = "head" if args.role == "head" else f"table-{table}"
    credentials = passwords if args.role == "head" else {node: passwords[node]}

    login = secrets.token_urlsafe(9)
    console_password = console_hash = ""
    if args.role == "head":
        from bunco_pi.console.auth import hash_password

        console_password = secrets.token_urlsafe(9)
        console_hash = hash_password(console_password)
    box = firstboot.Box(role=args.role, table=table, tables=tables, night=night, user=user,
                        user_hash=_login_hash(login), ssh=args.ssh, wifi=wifi,
                        credentials=credentials, console_hash=console_hash,
                        head_host=args.head_host, preset=args.preset,
                        instance=secrets.token_hex(4))
    files = firstboot.card_files(box, mechanism, cmdline)
    files[f"{firstboot.CARD_DIR}/source.tar.gz"] = source_archive()

    with tempfile.TemporaryDirectory(prefix="bunco-sdcard-") as work:
        copies = _copies(args, mechanism, Path(work))
        need = sum(len(d) for d in files.values()) + sum(p.stat().st_size for p, _ in copies)
        have = partition.free() + sum(partition.size_of(n) for n in files)
        if need > have:
            raise UserError(f"{args.partition}: too little room: the card's files and offline "
                            f"copies need {_mb(need)}, its boot partition has {_mb(have)} free "
                            "(leave out --offline/--debs, or use fewer .deb files)")
        for name, data in files.items():
            partition.write(name, data)
        for source, name in copies:
            partition.copy(source, name)
        partition.flush()

    _keep_login(args.secrets, hostname, user, login, console_password)
    offline = f", {len(copies)} offline copies" if copies else ""
    print(f"{args.partition}: {hostname} ({'head' if args.role == 'head' else f'table {table}'}"
          f" of {tables}), first boot by {MECHANISM_NAMES[mechanism]}; "
          f"{len(files) + len(copies)} files written{offline}")
    print(f"  Wi-Fi: {wifi.ssid if wifi else 'none (wired network)'}; "
          f"ssh: {'on' if args.ssh else 'off'}")
    print(f"  login: {user} / {login}  (kept in {args.secrets}/{hostname}.login)")
    if console_password:
        print(f"  web console host password: {console_password}  (kept in "
              f"{args.secrets}/console-password.txt)")
    print("Put the card in the box and power it on: it installs itself (a few minutes) and "
          "starts.")
    return 0


def _keep_login(folder: Path, hostname: str, user: str, login: str, console: str) -> None:
    _private(folder / f"{hostname}.login", f"{user} {login}\n")
    if console:
        _private(folder / "console-password.txt", console + "\n")
    _private(folder / "README.txt", "The night's passwords, made by `bunco-pi sdcard`. Keep "
             "this folder private; use it again for every card of the night.\n")


def _mb(size: int) -> str:
    return f"{size / 1e6:.1f} MB"

