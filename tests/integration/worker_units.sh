#!/usr/bin/env bash
# worker_units.sh — `systemd-analyze verify` on systemd/tesseld.service and
# systemd/tessel-worker.service. verify also checks that ExecStart's binary
# exists, which it does not on a build machine: the units are verified as
# copies whose ExecStart points at /bin/true, every other line as shipped.
# Skipped (77) where systemd-analyze is absent (containers without systemd).
#
# usage: worker_units.sh SYSTEMD_DIR
set -u
DIR=${1:?usage: worker_units.sh SYSTEMD_DIR}
if ! command -v systemd-analyze >/dev/null 2>&1; then
    echo "SKIP: systemd-analyze is not installed here"
    exit 77
fi
tmp=$(mktemp -d /tmp/tessel-units.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
failures=0
for unit in tesseld.service tessel-worker.service; do
    if [ ! -f "$DIR/$unit" ]; then
        echo "FAIL: $DIR/$unit is missing"
        failures=$((failures + 1))
        continue
    fi
    sed -E 's|^ExecStart=[^ ]+|ExecStart=/bin/true|' "$DIR/$unit" >"$tmp/$unit"
    # verify prints problems on stderr and may still exit 0; both count.
    if (cd "$tmp" && SYSTEMD_LOG_LEVEL=warning systemd-analyze verify "$tmp/$unit") >"$tmp/out" 2>&1 &&
        ! grep -v -E "Failed to (connect|create)|/bin/true|Cannot add dependency" "$tmp/out" | grep -q .; then
        echo "ok: systemd-analyze verify $unit"
    else
        echo "FAIL: systemd-analyze verify $unit:"
        sed 's/^/  /' "$tmp/out"
        failures=$((failures + 1))
    fi
done
[ "$failures" -eq 0 ] && echo "all checks passed" || exit 1
