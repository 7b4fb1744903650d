#!/usr/bin/env bash
# Install a bunco-pi box on Raspberry Pi OS (Bookworm or later), one command per role:
#
#   sudo bash install/install.sh head  [--night NAME] [--tables N] [--preset NAME]
#   sudo bash install/install.sh table --table N [--head-host HOST] [--password-file FILE|-]
#
# Running it again changes nothing: passwords and the configs in /etc/bunco-pi are kept
# (delete a config to have it written afresh); unit files and the broker config are ours
# and are rewritten. Every file's content comes from bunco_pi.provision, which takes the
# broker's (credentials, password hashes, ACL, mosquitto.conf) from bunco_pi.net.broker.
# --root DIR writes every file under DIR instead of / and only prints the system commands
# (apt-get, useradd, systemctl, ...) it would run: a dry run for tests.
set -euo pipefail

usage() {
    cat <<'EOF'
usage: install.sh head  [--night NAME] [--tables N] [--port P] [--preset NAME] [--camera]
                        [--root DIR]
       install.sh table --table N [--head-host HOST] [--port P] [--password-file FILE|-]
                        [--night NAME] [--camera] [--root DIR]
       either role also takes [--wheels DIR] [--debs DIR]

head   the head table's Pi: broker, coordinator, and its own table box (table 1).
       Writes a broker password for each of tables 2..N into
       /etc/bunco-pi/secrets/tables/table-K.password for you to hand to table K.
       --preset: the house rules to start from (classic, core, rotate, individual),
       copied to /etc/bunco-pi/rules.toml for you to edit.
table  any other table's Pi. --password-file is that table's password from the head
       (needed the first time; '-' reads it from standard input). --night: the head's
       night, for a network where the table cannot learn it by zeroconf.
--camera   also the dice camera's stack: picamera2 (Raspberry Pi OS), OpenCV and NumPy.
--wheels DIR  install bunco-pi and its Python packages from the wheels in DIR only (no
           internet: `bunco-pi sdcard --offline` puts them on the card).
--debs DIR    install the Debian packages in DIR first (dpkg) and do not update the
           package lists: a venue with no internet.
Needs Raspberry Pi OS (Bookworm or later); on plain Debian it says which packages are
missing (python3-lgpio, python3-picamera2) and installs the rest.
EOF
}

die() { echo "install.sh: $*" >&2; exit 2; }

ROLE="${1:-}"
[ "$ROLE" = "head" ] || [ "$ROLE" = "table" ] || { usage >&2; exit 2; }
shift
ROOT="" NIGHT="bunco-night" TABLES=8 PORT=1883 TABLE="" HEAD_HOST="bunco-head.local"
PASSWORD_FILE="" CAMERA=0 GIVEN="" PRESET="classic" CONSOLE_PORT=8080 WHEELS="" DEBS=""
NIGHT_GIVEN=""
while [ $# -gt 0 ]; do
    case "$1" in
        --root) ROOT="${2:?--root needs a directory}"; shift 2 ;;
        --night) NIGHT="${2:?--night needs a name}"; NIGHT_GIVEN="$NIGHT"; shift 2 ;;
        --tables) TABLES="${2:?--tables needs a number}"; shift 2 ;;
        --port) PORT="${2:?--port needs a number}"; shift 2 ;;
        --table) TABLE="${2:?--table needs a number}"; shift 2 ;;
        --head-host) HEAD_HOST="${2:?--head-host needs a host}"; shift 2 ;;
        --password-file) PASSWORD_FILE="${2:?--password-file needs a file or -}"; shift 2 ;;
        --preset) PRESET="${2:?--preset needs a name}"; shift 2 ;;
        --camera) CAMERA=1; shift ;;
        --wheels) WHEELS="${2:?--wheels needs a directory}"; shift 2 ;;
        --debs) DEBS="${2:?--debs needs a directory}"; shift 2 ;;
        -h|--help) usage; exit 0 ;;
        *) die "unknown option '$1' (see --help)" ;;
    esac
done
for n in "$TABLES" "$PORT" ${TABLE:+"$TABLE"}; do
    [[ "$n" =~ ^[0-9]+$ ]] || die "'$n' is not a number"
done
for dir in ${WHEELS:+"$WHEELS"} ${DEBS:+"$DEBS"}; do
    [ -d "$dir" ] || die "$dir: no such directory"
done
if [ -n "$WHEELS" ] && ! compgen -G "$WHEELS/bunco_pi-*.whl" >/dev/null; then
    die "--wheels $WHEELS: no bunco_pi-*.whl there (\`bunco-pi sdcard --offline\` puts it on the card)"
fi

REPO_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [ -n "$ROOT" ]; then
    mkdir -p "$ROOT"
    ROOT="$(cd "$ROOT" && pwd)"
elif [ "$(id -u)" != 0 ]; then
    die "run as root (sudo bash install/install.sh $ROLE ...), or use --root DIR for a dry run"
fi

ETC="$ROOT/etc/bunco-pi"
UNITS="$ROOT/etc/systemd/system"
VENV="/opt/bunco-pi"
DATA="$ROOT/var/lib/bunco-pi"

# A system command: run it, or under --root only say what would run.
run() {
    if [ -n "$ROOT" ]; then echo "would run: $*"; else "$@"; fi
}
# The file contents come from bunco_pi.provision, which needs only the standard library: it
# runs from this checkout before the venv exists, and -S (no site-packages) starts it fast.
provision() { PYTHONPATH="$REPO_DIR" python3 -S -m bunco_pi.provision "$@"; }

# put PATH MODE OWNER: write stdin to PATH if its content differs; then set mode and owner.
put() {
    local path="$1" mode="$2" owner="$3" tmp
    mkdir -p "$(dirname "$path")"
    tmp="$(mktemp "$path.XXXXXX")"
    cat >"$tmp"
    if [ -f "$path" ] && cmp -s "$tmp" "$path"; then
        rm -f "$tmp"
    else
        mv -f "$tmp" "$path"
        echo "wrote ${path#"$ROOT"}"
    fi
    chmod "$mode" "$path"
    own "$owner" "$path"
}

# keep PATH MODE OWNER: like put, but an existing file is the user's and is left alone.
keep() {
    local path="$1"
    if [ -e "$path" ]; then
        cat >/dev/null
        echo "kept ${path#"$ROOT"}"
        chmod "$2" "$path"
        own "$3" "$path"
    else
        put "$@"
    fi
}

own() {
    if [ -n "$ROOT" ]; then return 0; fi
    chown "$1" "$2"
}

# secret PATH MODE OWNER VALUE: put a secret; the temporary file is private from the start.
# The value is generated and checked before anything is written, so a failure leaves no
# half-written secret behind.
secret() {
    (umask 077; printf '%s\n' "$4" | put "$1" "$2" "$3")
}

mkdir_owned() {
    mkdir -p "$1"; chmod "$2" "$1"; own "$3" "$1"
}

# --- validate everything before touching the system -------------------------------------
if [ "$ROLE" = head ]; then
    TABLE=1
    HEAD_CONFIG="$(provision head-config --night "$NIGHT" --tables "$TABLES" --port "$PORT")"
    # The head table's box shows the web console's address as a QR code: this Pi's mDNS name.
    CONSOLE_URL="http://$(hostname).local:$CONSOLE_PORT/"
    TABLE_CONFIG="$(provision table-config --table 1 --head-host 127.0.0.1 --port "$PORT" \
        --no-discover --console-url "$CONSOLE_URL")"
    BROKER_CONF="$(provision mosquitto-conf --port "$PORT")"
    # Every node's password: the ones already made are kept, new tables get a fresh one.
    CREDENTIALS="$(provision credentials --tables "$TABLES" --file "$ETC/secrets/credentials.json")"
else
    [ -n "$TABLE" ] || die "table needs --table N (2 or more; the head is table 1)"
    [ "$TABLE" -ge 2 ] || die "--table $TABLE: the head is table 1; other tables are 2 or more"
    # --night: the head's night, written into table.toml for a network where zeroconf cannot
    # tell it (without it the table learns it from the head's announcement).
    TABLE_CONFIG="$(provision table-config --table "$TABLE" --head-host "$HEAD_HOST" \
        --port "$PORT" --night "$NIGHT_GIVEN")"
    if [ -z "$PASSWORD_FILE" ] && [ ! -s "$ETC/secrets/credentials.json" ]; then
        die "table $TABLE needs its broker password the first time: --password-file FILE," \
            "made on the head as /etc/bunco-pi/secrets/tables/table-$TABLE.password" \
            "(see docs/install.md)"
    fi
    if [ -n "$PASSWORD_FILE" ] && [ "$PASSWORD_FILE" != "-" ] && [ ! -s "$PASSWORD_FILE" ]; then
        die "--password-file $PASSWORD_FILE: no such file, or empty"
    fi
    # Read the password now: apt-get and dpkg below could swallow a piped stdin.
    GIVEN=""
    if [ "$PASSWORD_FILE" = "-" ]; then
        GIVEN="$(head -n 1)"
    elif [ -n "$PASSWORD_FILE" ]; then
        GIVEN="$(head -n 1 "$PASSWORD_FILE")"
    fi
    if [ -n "$PASSWORD_FILE" ] && [ -z "$GIVEN" ]; then
        die "--password-file $PASSWORD_FILE: the first line is empty"
    fi
    if [ -n "$GIVEN" ]; then
        CREDENTIALS="$(printf '%s\n' "$GIVEN" | provision table-credentials --table "$TABLE")"
        unset GIVEN
    else
        # Kept from an earlier install: it must hold this table's user.
        provision password --credentials "$ETC/secrets/credentials.json" \
            --user "table-$TABLE" >/dev/null
        CREDENTIALS=""
    fi
fi
RULES="$(provision rules-config --preset "$PRESET")"

# --- system packages, the user, I2C --------------------------------------------------------
PACKAGES=(python3-venv python3-pip python3-lgpio python3-gpiozero i2c-tools procps)
# GNU Unifont: the OLED draws every letter of a name that Pillow's small font lacks with it.
PACKAGES+=(fonts-unifont)
# openssl makes the console's certificate for the host's desk (HTTPS, below).
[ "$ROLE" = head ] && PACKAGES+=(mosquitto openssl)
# The camera: Raspberry Pi OS's picamera2 to take frames, Debian's OpenCV and NumPy to read
# them (the venv sees all three through --system-site-packages).
[ "$CAMERA" = 1 ] && PACKAGES+=(python3-picamera2 python3-opencv python3-numpy)
if [ -n "$DEBS" ]; then
    # The card's own copies; the lists are not updated (no internet at the venue).
    if compgen -G "$DEBS/*.deb" >/dev/null; then
        run dpkg -i --skip-same-version "$DEBS"/*.deb </dev/null
    fi
else
    run apt-get update </dev/null
fi
if [ -z "$ROOT" ]; then
    # python3-lgpio and python3-picamera2 come from Raspberry Pi OS's own archive: plain
    # Debian has neither. Say so once and install the rest (gpiozero then finds no GPIO chip,
    # which `bunco-pi doctor` reports).
    AVAILABLE=() MISSING=()
    for package in "${PACKAGES[@]}"; do
        if apt-cache policy "$package" 2>/dev/null | grep -q 'Candidate: [^(]'; then
            AVAILABLE+=("$package")
        else
            MISSING+=("$package")
        fi
    done
    if [ ${#MISSING[@]} -gt 0 ]; then
        echo "note: ${MISSING[*]} not in this system's package sources (they come with" \
             "Raspberry Pi OS; is this plain Debian?): installing the rest" >&2
    fi
    PACKAGES=("${AVAILABLE[@]}")
fi
run apt-get install -y --no-install-recommends "${PACKAGES[@]}" </dev/null

if ! id bunco >/dev/null 2>&1 || [ -n "$ROOT" ]; then
    run useradd --system --user-group --home-dir /var/lib/bunco-pi --no-create-home \
        --shell /usr/sbin/nologin bunco
fi
for group in gpio i2c dialout video; do
    if getent group "$group" >/dev/null 2>&1 || [ -n "$ROOT" ]; then
        run usermod -aG "$group" bunco
    else
        echo "note: no group '$group' on this system; is this Raspberry Pi OS?" >&2
    fi
done
if command -v raspi-config >/dev/null 2>&1 || [ -n "$ROOT" ]; then
    run raspi-config nonint do_i2c 0   # 0 means enable
fi

# --- the program: a venv that also sees Debian's lgpio and picamera2 -------------------------
run python3 -m venv --system-site-packages "$VENV"
EXTRAS=discovery
[ "$ROLE" = head ] && EXTRAS=discovery,console   # the head serves the web console
if [ -n "$WHEELS" ]; then
    run "$VENV/bin/pip" install --quiet --upgrade --no-index --find-links "$WHEELS" \
        "bunco-pi[$EXTRAS]"
else
    run "$VENV/bin/pip" install --quiet --upgrade "$REPO_DIR[$EXTRAS]"
fi

# --- configs and secrets ------------------------------------------------------------------------
mkdir_owned "$ETC" 0755 root:root
mkdir_owned "$ETC/secrets" 0750 root:bunco
mkdir_owned "$DATA" 0750 bunco:bunco
printf '%s\n' "$RULES" | keep "$ETC/rules.toml" 0644 root:root
printf '%s\n' "$TABLE_CONFIG" | keep "$ETC/table.toml" 0644 root:root

# One credentials file per box, in bunco_pi.net.broker's format: the head's holds every
# node's password (its own table box logs in as table-1 from it), a table's only its own.
CREDENTIALS_FILE="$ETC/secrets/credentials.json"
if [ -n "$CREDENTIALS" ]; then
    secret "$CREDENTIALS_FILE" 0640 root:bunco "$CREDENTIALS"
    unset CREDENTIALS
else
    chmod 0640 "$CREDENTIALS_FILE"; own root:bunco "$CREDENTIALS_FILE"
fi

if [ "$ROLE" = head ]; then
    printf '%s\n' "$HEAD_CONFIG" | keep "$ETC/head.toml" 0644 root:root
    mkdir_owned "$ETC/secrets/tables" 0700 root:root
    for ((n = 2; n <= TABLES; n++)); do
        value="$(provision password --credentials "$CREDENTIALS_FILE" --user "table-$n")"
        secret "$ETC/secrets/tables/table-$n.password" 0600 root:root "$value"
    done
    unset value

    mkdir_owned "$ETC/mosquitto" 0755 root:root
    printf '%s\n' "$BROKER_CONF" | put "$ETC/mosquitto/mosquitto.conf" 0644 root:root
    ACL="$(provision acl --credentials "$CREDENTIALS_FILE")"
    printf '%s\n' "$ACL" | put "$ETC/mosquitto/acl" 0644 root:root
    # Hashes that still match their password are kept (salts are random: hashing afresh
    # would change the file on every run); a new user gets a line.
    PASSWD="$ETC/mosquitto/passwd"
    HASHES="$(provision passwd --credentials "$CREDENTIALS_FILE" --previous "$PASSWD")"
    printf '%s\n' "$HASHES" | put "$PASSWD" 0640 root:mosquitto

    # The host's password for the web console: made once, shown once, kept only as a hash.
    HOST_HASH_FILE="$ETC/secrets/console-password"
    if [ ! -s "$HOST_HASH_FILE" ]; then
        HOST_PASSWORD="$(python3 -S -c 'import secrets; print(secrets.token_urlsafe(9))')"
        HOST_HASH="$(printf '%s\n' "$HOST_PASSWORD" | PYTHONPATH="$REPO_DIR" python3 -S -c \
            'import sys; from bunco_pi.console.auth import hash_password; print(hash_password(sys.stdin.readline().strip()))')"
        secret "$HOST_HASH_FILE" 0640 root:bunco "$HOST_HASH"
        echo "Host password for the web console (stored only hashed; write it down): $HOST_PASSWORD"
        echo "  change it with: sudo -u bunco $VENV/bin/bunco-pi head --set-host-password $HOST_HASH_FILE"
        unset HOST_PASSWORD HOST_HASH
    fi

    # The host's desk answers over HTTPS only (head.toml [console] https): a self-signed
    # certificate for this Pi's mDNS name, made here once, with no internet and no CA. Each
    # phone asks once whether to trust it; the fingerprint printed here is how to tell.
    TLS_CERT="$ETC/secrets/console-tls.crt" TLS_KEY="$ETC/secrets/console-tls.key"
    if [ ! -s "$TLS_CERT" ] || [ ! -s "$TLS_KEY" ]; then
        NAME="$(hostname -s 2>/dev/null || echo bunco-head)"
        SUBJECT=(-subj "/CN=$NAME.local" -addext
                 "subjectAltName=DNS:$NAME.local,DNS:bunco-head.local,DNS:localhost,IP:127.0.0.1")
        if command -v openssl >/dev/null 2>&1; then
            (umask 077; openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 \
                -nodes -days 3650 "${SUBJECT[@]}" -keyout "$TLS_KEY.new" -out "$TLS_CERT.new" \
                2>/dev/null) || die "openssl could not make the console's certificate"
            mv -f "$TLS_KEY.new" "$TLS_KEY"
            mv -f "$TLS_CERT.new" "$TLS_CERT"
            echo "wrote ${TLS_CERT#"$ROOT"} (the host's desk: https://$NAME.local:8443/#host)"
            echo "  its SHA-256 fingerprint, for the host's phone to check once:"
            echo "  $(openssl x509 -noout -fingerprint -sha256 -in "$TLS_CERT" | cut -d= -f2)"
        else
            run openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
                -days 3650 "${SUBJECT[@]}" -keyout "${TLS_KEY#"$ROOT"}" \
                -out "${TLS_CERT#"$ROOT"}"
        fi
    fi
    if [ -e "$TLS_KEY" ]; then
        chmod 0640 "$TLS_KEY"; own root:bunco "$TLS_KEY"
        chmod 0644 "$TLS_CERT"; own root:root "$TLS_CERT"
    fi
fi

# --- services --------------------------------------------------------------------------------
mkdir -p "$UNITS"
SERVICES=(bunco-pi-table.service)
[ "$ROLE" = head ] && SERVICES=(bunco-pi-broker.service bunco-pi-head.service "${SERVICES[@]}")
for unit in "${SERVICES[@]}"; do
    put "$UNITS/$unit" 0644 root:root <"$REPO_DIR/systemd/$unit"
done
run systemctl daemon-reload
if [ "$ROLE" = head ]; then
    # Debian's own mosquitto would hold port 1883; bunco-pi-broker runs the same binary.
    if [ -z "$ROOT" ] && systemctl is-enabled --quiet mosquitto.service 2>/dev/null; then
        touch "$ETC/.mosquitto-was-enabled"
    fi
    if [ -z "$ROOT" ] && [ ! -d /run/systemd/system ]; then
        run systemctl disable mosquitto.service
    else
        run systemctl disable --now mosquitto.service
    fi
fi
if [ -z "$ROOT" ] && [ ! -d /run/systemd/system ]; then
    # Installed into a root systemd does not run (a chroot, an image being prepared): the
    # services are enabled and start at the next boot.
    run systemctl enable "${SERVICES[@]}"
    echo "note: systemd is not running here: ${SERVICES[*]} start at the next boot" >&2
else
    run systemctl enable --now "${SERVICES[@]}"
fi

echo "bunco-pi $ROLE installed${ROOT:+ under $ROOT}. Check the box with: sudo -u bunco $VENV/bin/bunco-pi doctor"
if [ "$ROLE" = head ] && [ "$TABLES" -ge 2 ]; then
    echo "Table passwords for tables 2..$TABLES: /etc/bunco-pi/secrets/tables/ (see docs/install.md)"
fi
