#!/usr/bin/env bash
# daemon_deadline.sh — a client deadline or cancel stops its search through the
# planner's cancel flag: the client gets DEADLINE_EXCEEDED (or CANCELLED) at
# once, the daemon logs the search as stopped within moments, the pool's only
# thread is free for the next search, and the daemon keeps serving.
#
# usage: daemon_deadline.sh TESSELD PROTO_DIR
source "$(dirname "$0")/lib.sh"

SOCK=$TMPD/tesseld.sock
T=unix:$SOCK
rpc() { rpc_to "$T" "$@"; }
LOG=$TMPD/d.log

# wait_log PATTERN SECONDS — the daemon log gets a matching line in time.
wait_log() {
    local i
    for i in $(seq 1 $(($2 * 10))); do
        grep -Eq -- "$1" "$LOG" && return 0
        sleep 0.1
    done
    return 1
}

start_daemon d --unix-socket "$SOCK" --database "$TMPD/t.db" --pool-size 1 --queue-size 4
wait_healthy "$T" || { fail "tesseld did not become healthy"; finish; }

rpc --deadline 0.2 plan "${LONG[@]}"
expect "a long search with a 0.2 s deadline" code DEADLINE_EXCEEDED
"$PY" -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))["elapsed_s"] < 1.5 else 1)' "$OUT" &&
    ok "the client heard at once ($(jget "$OUT" elapsed_s) s)" || fail "DEADLINE_EXCEEDED took $(jget "$OUT" elapsed_s) s"
if wait_log 'rpc Planner.Plan .*code=DEADLINE_EXCEEDED' 5; then
    ok "the daemon stopped the search: $(grep -E 'rpc Planner.Plan .*code=DEADLINE_EXCEEDED' "$LOG" | head -1)"
else
    fail "no DEADLINE_EXCEEDED line in the daemon log within 5 s"
fi
rpc plan "${QUICK[@]}" --force
expect "the next search runs on the freed thread" code OK
"$PY" -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))["elapsed_s"] < 5 else 1)' "$OUT" &&
    ok "and did not wait for the cancelled one" || fail "the next search took $(jget "$OUT" elapsed_s) s"

rpc plan "${LONG[@]}" --cancel-after 0.5
expect "a long search the client cancels" code CANCELLED
if wait_log 'rpc Planner.Plan .*code=CANCELLED' 5; then
    ok "the daemon stopped the cancelled search"
else
    fail "no CANCELLED line in the daemon log within 5 s"
fi
rpc health
expect "serving afterwards" status SERVING
rpc list
count=$("$PY" -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["plans"]))' "$OUT")
[ "$count" = 1 ] && ok "cancelled searches stored nothing" || fail "$count plans stored, want 1"
finish
