#!/usr/bin/env bash
# daemon_durability.sh — kill -9 in the middle of a search, then restart on
# the same database: every plan completed before is still there, readable, and
# the database passes PRAGMA integrity_check.
#
# usage: daemon_durability.sh TESSELD PROTO_DIR
source "$(dirname "$0")/lib.sh"

SOCK=$TMPD/tesseld.sock
T=unix:$SOCK
DB=$TMPD/t.db
rpc() { rpc_to "$T" "$@"; }

start_daemon d1 --unix-socket "$SOCK" --database "$DB" --pool-size 1
wait_healthy "$T" || { fail "tesseld did not become healthy"; finish; }
FPS=()
for req in QUICK QUICK2 QUICK3; do
    declare -n args=$req
    rpc plan "${args[@]}"
    expect "plan $req before the crash" code OK
    FPS+=("$(jget "$OUT" fingerprint)")
done

BG=$TMPD/long.json.out
timeout 120 "$PY" "$HERE/tsl_rpc.py" --proto "$PROTO_DIR" --stubs "$STUBS" --target "$T" \
    plan "${LONG[@]}" --events-file "$TMPD/events" >"$BG" 2>&1 &
bg=$!
wait_events "$TMPD/events" 'progress queued' 1 30 || fail "the long search was not accepted"
sleep 0.3
kill -KILL "$DPID"
wait_exit "$DPID" 10 && ok "tesseld killed with SIGKILL mid-search" || fail "tesseld survived SIGKILL"
wait $bg
OUT=$BG
code=$(jget "$OUT" code)
[ "$code" = UNAVAILABLE ] && ok "the search in flight was cut off ($code)" ||
    fail "premise: the long search ended with $code before the kill; LONG is not long enough any more"

start_daemon d2 --unix-socket "$SOCK" --database "$DB" --pool-size 1
wait_healthy "$T" && ok "restarted on the same socket and database" ||
    { fail "tesseld did not restart: $(cat "$TMPD/d2.log")"; finish; }
rpc list
count=$("$PY" -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["plans"]))' "$OUT")
[ "$count" = 3 ] && ok "all 3 completed plans listed" || fail "$count plans listed after the crash, want 3"
for fp in "${FPS[@]}"; do
    rpc get "$fp"
    expect "plan $fp readable after the crash" fingerprint "$fp"
done
rpc plan "${QUICK[@]}"
expect "the same request after the crash comes from the cache" cached True

kill -TERM "$DPID"
wait_exit "$DPID" 20 && [ "$EXIT_STATUS" -eq 0 ] && ok "clean stop" || fail "no clean stop"

# An upgrade to another cost model: QUICK's plan as an older tesseld would have
# left it (another cost_model_version; before schema 8 there was none, which the
# except stands for). The new binary must not list or serve it as fresh.
"$PY" - "$DB" "${FPS[0]}" <<'PYEOF'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
try:
    db.execute("UPDATE plans SET cost_model_version = 1 WHERE fingerprint = ?", (sys.argv[2],))
except sqlite3.OperationalError:
    pass
db.commit()
PYEOF
start_daemon d3 --unix-socket "$SOCK" --database "$DB" --pool-size 1
wait_healthy "$T" || { fail "tesseld did not restart: $(cat "$TMPD/d3.log")"; finish; }
grep -q "1 cached plan(s) priced by another cost model" "$TMPD/d3.log" &&
    ok "the start logs the plan of another cost model" ||
    fail "no log line about the other cost model's plan: $(cat "$TMPD/d3.log")"
rpc get "${FPS[0]}"
expect "a plan another cost model priced is reported stale" stale True
rpc get "${FPS[1]}"
expect "this cost model's plans stay fresh" stale False
rpc plan "${QUICK[@]}"
expect "the request searches again instead of serving it" cached False
rpc get "${FPS[0]}"
expect "the new search is stored fresh" stale False
kill -TERM "$DPID"
wait_exit "$DPID" 20 && [ "$EXIT_STATUS" -eq 0 ] && ok "clean stop" || fail "no clean stop"
if command -v sqlite3 >/dev/null; then
    check=$(sqlite3 "$DB" 'PRAGMA integrity_check')
    [ "$check" = ok ] && ok "PRAGMA integrity_check: $check" || fail "PRAGMA integrity_check: $check"
else
    "$PY" -c 'import sqlite3,sys; r=sqlite3.connect(sys.argv[1]).execute("PRAGMA integrity_check").fetchone()[0]; print(r); sys.exit(r!="ok")' "$DB" &&
        ok "PRAGMA integrity_check: ok (python sqlite3)" || fail "PRAGMA integrity_check failed"
fi
finish
