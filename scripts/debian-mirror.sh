# Sourced by the scripts that build a Debian root with debootstrap.
# mirror: the Debian mirror apt already uses (so they work wherever apt does), or DEBIAN_MIRROR.
mirror() {
    local uri
    uri="$(grep -rhoE '^(URIs:|deb) +(\[[^]]*\] +)?https?://[^ ]+/debian/?( |$)' \
        /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null | grep -oE 'https?://[^ ]+' \
        | head -n 1 || true)"
    uri="${DEBIAN_MIRROR:-$uri}"
    if [ -z "$uri" ]; then
        echo "$(basename "$0"): no Debian mirror in apt's sources: set DEBIAN_MIRROR=URL" >&2
        exit 2
    fi
    echo "$uri"
}
