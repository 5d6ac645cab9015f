#!/usr/bin/env bash
# daemon_cqload.sh — nothing heavy on the completion-queue thread: while a
# 100,000-figure ReportProfile is decoded, checked and stored (seconds), Health
# calls keep being answered: Health calls are sent one after another while the
# report is in flight, and at least 50 complete before it does (on the CQ thread
# the handling blocked them all: 5 got through, during the upload). Latencies
# are printed, never asserted (bench figures).
#
# usage: daemon_cqload.sh TESSELD PROTO_DIR
source "$(dirname "$0")/lib.sh"

SOCK=$TMPD/tesseld.sock
T=unix:$SOCK
start_daemon d --unix-socket "$SOCK" --database "$TMPD/t.db" --pool-size 1
wait_healthy "$T" || { fail "tesseld did not become healthy"; finish; }
rpc_to "$T" health # makes the stubs
OUT=$TMPD/cq.json
timeout 300 "$PY" "$HERE/daemon_cqload.py" "$PROTO_DIR" "$STUBS" "$T" >"$OUT" 2>"$TMPD/cq.err" ||
    { fail "the client failed: $(tail -n 5 "$TMPD/cq.err")"; finish; }
echo "figures: $(cat "$OUT")"
expect "the report stored every figure" stored 100000
during=$(jget "$OUT" health_done_during_report)
# With the report on the CQ thread only the calls during its upload got through
# (5 of them here), then none for its whole handling.
[ "${during:-0}" -ge 50 ] && ok "$during Health calls answered while the report was in flight" ||
    fail "only ${during:-0} Health call(s) answered while the report was in flight"
grep -q "profile cq-1 stored (100000 measurements)" "$TMPD/d.log" && ok "the log says it stored" ||
    fail "the report is not in the log"
finish
