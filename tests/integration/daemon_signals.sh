#!/usr/bin/env bash
# daemon_signals.sh — SIGTERM: new calls are refused, a running search may
# finish within grace_s (and is stored), one that would take longer is cancelled
# with UNAVAILABLE, the daemon exits 0; systemd sees READY=1, STOPPING=1 and
# watchdog pings (NOTIFY_SOCKET, WATCHDOG_USEC).
#
# usage: daemon_signals.sh TESSELD PROTO_DIR
source "$(dirname "$0")/lib.sh"

SOCK=$TMPD/tesseld.sock
T=unix:$SOCK
rpc() { rpc_to "$T" "$@"; }

# A stand-in for systemd's notification socket.
NOTIFY=$TMPD/notify.sock
NOTES=$TMPD/notify.txt
"$PY" - "$NOTIFY" "$NOTES" <<'PYEOF' &
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
s.settimeout(0.5)
end = time.monotonic() + 240
with open(sys.argv[2], "a") as f:
    while time.monotonic() < end:
        try:
            f.write(s.recv(4096).decode() + "\n")
            f.flush()
        except socket.timeout:
            pass
PYEOF
DAEMON_PIDS+=($!)
for _ in $(seq 1 50); do [ -S "$NOTIFY" ] && break; sleep 0.1; done

# ---- a search that finishes within the grace period ----------------------------------
NOTIFY_SOCKET=$NOTIFY WATCHDOG_USEC=400000 start_daemon d1 --unix-socket "$SOCK" \
    --database "$TMPD/t.db" --pool-size 1 --grace 120
wait_healthy "$T" || { fail "tesseld did not become healthy"; finish; }
BG=$TMPD/bg1.json
timeout 200 "$PY" "$HERE/tsl_rpc.py" --proto "$PROTO_DIR" --stubs "$STUBS" --target "$T" \
    plan "${LONG[@]}" --events-file "$TMPD/events1" >"$BG" 2>&1 &
bg=$!
wait_events "$TMPD/events1" 'progress queued' 1 30 || fail "the long search was not accepted"
sleep 0.3
T0=$(date +%s.%N)
kill -TERM "$DPID"
sleep 0.3
rpc --deadline 3 health
[ "$(jget "$OUT" code)" != OK ] && ok "no new calls after SIGTERM ($(jget "$OUT" code))" ||
    fail "a new call was served after SIGTERM"
wait $bg
OUT=$BG
expect "the running search finished within the grace period" code OK
# The plan event, the last line of the events file, came after the signal.
grep -q '^plan ' "$TMPD/events1" &&
    "$PY" -c 'import os,sys; sys.exit(os.path.getmtime(sys.argv[1]) <= float(sys.argv[2]))' \
        "$TMPD/events1" "$T0" && ok "it was still running at SIGTERM" ||
    fail "premise: LONG ended before SIGTERM"
if wait_exit "$DPID" 60; then
    [ "$EXIT_STATUS" -eq 0 ] && ok "exit status 0" || fail "exit status $EXIT_STATUS"
else
    fail "tesseld did not exit within 60 s of the search finishing"
fi
grep -q '^INFO stopped' "$TMPD/d1.log" && ok "logged 'stopped'" || fail "no 'stopped' in the log"
grep -q '^READY=1' "$NOTES" && ok "sd_notify READY=1" || fail "no READY=1 (got: $(tr '\n' ' ' <"$NOTES"))"
grep -q '^STOPPING=1' "$NOTES" && ok "sd_notify STOPPING=1" || fail "no STOPPING=1"
grep -q '^WATCHDOG=1' "$NOTES" && ok "watchdog pings ($(grep -c '^WATCHDOG=1' "$NOTES"))" ||
    fail "no WATCHDOG=1"

# ---- the plan survived the stop ----------------------------------------------------------
start_daemon d2 --unix-socket "$SOCK" --database "$TMPD/t.db" --pool-size 1 --grace 0.3
wait_healthy "$T" || { fail "tesseld did not restart"; finish; }
rpc list
count=$("$PY" -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["plans"]))' "$OUT")
[ "$count" = 1 ] && ok "the plan finished during the stop was stored" || fail "$count plans stored, want 1"

# ---- a search longer than the grace period is cancelled -----------------------------------
BG=$TMPD/bg2.json
timeout 200 "$PY" "$HERE/tsl_rpc.py" --proto "$PROTO_DIR" --stubs "$STUBS" --target "$T" \
    plan "${LONG[@]}" --force --events-file "$TMPD/events2" >"$BG" 2>&1 &
bg=$!
wait_events "$TMPD/events2" 'progress queued' 1 30 || fail "the long search was not accepted"
sleep 0.3
kill -TERM "$DPID"
if wait_exit "$DPID" 10; then
    [ "$EXIT_STATUS" -eq 0 ] && ok "exit 0 soon after a 0.3 s grace period" || fail "exit status $EXIT_STATUS"
else
    fail "tesseld still running 10 s after SIGTERM with grace 0.3 s"
fi
wait $bg
OUT=$BG
expect "the cut-off search" code UNAVAILABLE
expect_details "and why" 'shutting down'
grep -q 'cancelling 1 search' "$TMPD/d2.log" && ok "the log says it cancelled the search" ||
    fail "no 'cancelling' line in the log"
finish
