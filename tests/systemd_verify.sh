#!/bin/bash
# systemd-analyze verify on both units (skipped where systemd-analyze is absent).
# The units name installed paths; the binaries are replaced by stand-ins in a
# temporary copy so that verify checks the units, not this machine's install.
# Their Documentation= manual pages are looked up in docs/man (a MANPATH of a copy),
# so a unit naming a page the tree does not have fails here (where man is installed).
set -u
root="$1"
command -v systemd-analyze >/dev/null 2>&1 || { echo "SKIP: no systemd-analyze"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
man=--man=no
if command -v man >/dev/null 2>&1; then
    mkdir -p "$tmp/man/man1" "$tmp/man/man8"
    cp "$root"/docs/man/*.1 "$tmp/man/man1/" && cp "$root"/docs/man/*.8 "$tmp/man/man8/"
    export MANPATH="$tmp/man"
    man=--man=yes
fi
for unit in tesseld.service tessel-worker.service; do
    sed -e "s|/usr/sbin/tesseld|/bin/true|; s|/usr/bin/tessel-worker|/bin/true|" \
        "$root/systemd/$unit" >"$tmp/$unit"
    if ! out=$(systemd-analyze verify "$man" "$tmp/$unit" 2>&1) || [ -n "$out" ]; then
        # Lines about this machine (no such user, no journal) are not the unit's fault.
        bad=$(printf '%s\n' "$out" | grep -v -e "^$" -e "Failed to connect" -e "not running" \
            -e "Cannot determine" -e "System has not been booted" || true)
        if [ -n "$bad" ]; then
            echo "FAIL: $unit:"; printf '%s\n' "$bad"; status=1
            continue
        fi
    fi
    echo "ok: $unit"
done
exit $status
