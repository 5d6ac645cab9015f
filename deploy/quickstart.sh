#!/bin/sh
# The main job, from a fresh Debian 12 machine: install what is needed, build,
# start tesseld on a fresh SQLite file in a temporary directory, plan GPT3-15B on
# 4 nodes x 8 A100-80G through it, print the plan, stop the daemon.
set -eu
cd "$(dirname "$0")/.."
sh deploy/install-deps.sh
[ -f build/build.ninja ] || meson setup build
ninja -C build
work=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rm -rf "$work"' EXIT INT TERM
build/daemon/tesseld --unix-socket "$work/tesseld.sock" --database "$work/tessel.db" \
    --log-level warn &
pid=$!
server="unix:$work/tesseld.sock"
tries=0
until build/client/tesselctl --server "$server" health >/dev/null 2>&1; do
    tries=$((tries + 1))
    if [ "$tries" -gt 100 ] || ! kill -0 "$pid" 2>/dev/null; then
        echo "quickstart: tesseld did not start" >&2
        exit 1
    fi
    sleep 0.1
done
build/client/tesselctl --server "$server" plan --model GPT3-15B --cluster 4x8xA100-80G:8xib200 "$@"
