# Sourced by demo.sh and test.sh: make .venv with the system's python3 and install bunco-pi
# into it with the extras named in $1 (empty for the box itself).
#
# A minimal Debian or Raspberry Pi OS Lite has python3 without its venv module
# (Debian splits it into python3-venv), so that is installed first: as root with apt-get,
# otherwise through sudo, and with one clear line when neither is possible.

as_root() {
    if [ "$(id -u)" = 0 ]; then "$@"
    elif command -v sudo >/dev/null 2>&1; then sudo "$@"
    else return 1
    fi
}

apt_install() {
    command -v apt-get >/dev/null 2>&1 || return 1
    echo "installing Debian packages: $*" >&2
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null \
        && as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

ensure_venv_module() {
    python3 -c 'import ensurepip, venv' >/dev/null 2>&1 && return 0
    if ! apt_install python3-venv; then
        echo "python3 has no venv module: install it (sudo apt-get install python3-venv) and run this again" >&2
        exit 1
    fi
}

make_venv() {
    local extras=$1
    command -v python3 >/dev/null 2>&1 || { echo "python3 is missing: install Python 3.11 or newer" >&2; exit 1; }
    python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
        || { echo "bunco-pi needs Python 3.11 or newer; python3 is $(python3 -V 2>&1)" >&2; exit 1; }
    ensure_venv_module
    echo "installing bunco-pi${extras:+ with [$extras]} into .venv (pip, from PyPI)" >&2
    [ -x .venv/bin/python ] || python3 -m venv .venv
    quiet_pip install --upgrade pip
    quiet_pip install -e ".${extras:+[$extras]}"
}

# pip, showing its output only if it fails: a good install prints nothing (setuptools's notes
# on editable installs would otherwise be a wall of text on every run).
quiet_pip() {
    local log
    log="$(mktemp)"
    if ! .venv/bin/python -m pip -q --disable-pip-version-check "$@" >"$log" 2>&1; then
        cat "$log" >&2
        rm -f "$log"
        echo "pip $* failed (see above)" >&2
        return 1
    fi
    rm -f "$log"
}

# Put a `bunco-pi` command on the user's PATH that runs .venv's, so the README's tour works as
# pasted: /usr/local/bin as root, ~/.local/bin otherwise (Debian's ~/.profile puts it on PATH at
# the next login once it exists). A bunco-pi there that is not such a link is left alone.
install_launcher() {
    local dir target
    target="$(pwd)/.venv/bin/bunco-pi"
    if [ "$(id -u)" = 0 ]; then dir=/usr/local/bin; else dir="$HOME/.local/bin"; fi
    if [ -e "$dir/bunco-pi" ] && [ ! -L "$dir/bunco-pi" ]; then
        echo "left $dir/bunco-pi alone (not a link made here); this checkout's is $target" >&2
        return 0
    fi
    mkdir -p "$dir" && ln -sfn "$target" "$dir/bunco-pi" || return 0
    echo "bunco-pi command: $dir/bunco-pi -> $target" >&2
    case ":$PATH:" in
        *":$dir:"*) ;;
        *) echo "  $dir is not on PATH yet: log in again, or run: export PATH=\"$dir:\$PATH\"" >&2 ;;
    esac
}
