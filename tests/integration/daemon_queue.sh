#!/usr/bin/env bash
# daemon_queue.sh — the bounded search pool: with pool_size 1 and queue_size 1,
# three long searches at once give one running, one queued (it runs next) and
# one RESOURCE_EXHAUSTED at once; cheap reads are answered while they run.
#
# usage: daemon_queue.sh TESSELD PROTO_DIR
source "$(dirname "$0")/lib.sh"

SOCK=$TMPD/tesseld.sock
T=unix:$SOCK
rpc() { rpc_to "$T" "$@"; }

start_daemon d --unix-socket "$SOCK" --database "$TMPD/t.db" --pool-size 1 --queue-size 1
wait_healthy "$T" || { fail "tesseld did not become healthy"; finish; }
rpc plan "${QUICK[@]}"
expect "a quick plan first" code OK
FP=$(jget "$OUT" fingerprint)

BG=$TMPD/three.json
timeout 300 "$PY" "$HERE/tsl_rpc.py" --proto "$PROTO_DIR" --stubs "$STUBS" --target "$T" \
    --deadline 240 plans 3 "${LONG[@]}" --force --events-file "$TMPD/events" \
    >"$BG" 2>"$TMPD/three.err" &
bg=$!
wait_events "$TMPD/events" 'progress queued' 2 30 || fail "two searches were not accepted"
sleep 0.3

# While the searches run (the CQ thread never runs one), reads come back at once.
for what in health list "get $FP"; do
    # shellcheck disable=SC2086
    rpc $what
    expect "$what during the searches" code OK
    "$PY" -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))["elapsed_s"] < 0.5 else 1)' "$OUT" &&
        ok "$what answered in $(jget "$OUT" elapsed_s) s" || fail "$what took $(jget "$OUT" elapsed_s) s"
done
kill -0 $bg 2>/dev/null && ok "the searches were still running during the reads" ||
    fail "premise: the long searches ended within a second; LONG is not long enough any more"

wait $bg
OUT=$BG
expect "two searches done" codes.OK 2
expect "one refused" codes.RESOURCE_EXHAUSTED 1
"$PY" - "$BG" <<'PYEOF' && ok "the refusal came at once and said why; the queued one ran after" || fail "see $BG"
import json, sys
d = json.load(open(sys.argv[1]))["results"]
full = [r for r in d if r["code"] == "RESOURCE_EXHAUSTED"]
done = sorted((r for r in d if r["code"] == "OK"), key=lambda r: r["elapsed_s"])
assert full and full[0]["elapsed_s"] < 1.0, full
assert "queue full" in full[0]["details"], full[0]["details"]
print("  refusal: %s (%.3f s)" % (full[0]["details"], full[0]["elapsed_s"]))
assert len(done) == 2 and all(r["phases"][0] == "queued" for r in done), done
assert "search" in done[1]["phases"], done[1]
for r in done:  # progress is rate-limited: no second holds more than 10 events
    t = r["times"]
    worst = max(sum(1 for u in t if s <= u < s + 1.0) for s in t)
    assert worst <= 10, ("%d progress events within one second" % worst, t)
    assert r["fractions"] == sorted(r["fractions"]), r["fractions"]
print("  searches took %.2f s and %.2f s" % (done[0]["elapsed_s"], done[1]["elapsed_s"]))
PYEOF
rpc health
expect "serving afterwards" status SERVING
kill -TERM "$DPID"
wait_exit "$DPID" 20 || fail "tesseld did not stop"

# ---- callers that gave up while queued free their places ------------------------------
# pool 1, queue 2: one long search runs; two more wait with a 1 s deadline and
# time out; a new Plan must then be queued, not refused with "queue full".
start_daemon q --unix-socket "$SOCK" --database "$TMPD/q.db" --pool-size 1 --queue-size 2
wait_healthy "$T" || { fail "tesseld (queue 2) did not become healthy"; finish; }
timeout 300 "$PY" "$HERE/tsl_rpc.py" --proto "$PROTO_DIR" --stubs "$STUBS" --target "$T" \
    --deadline 120 plan "${LONGER[@]}" --force --events-file "$TMPD/run.events" \
    >"$TMPD/run.json" 2>&1 &
runner=$!
wait_events "$TMPD/run.events" 'progress search' 1 30 || fail "the long search did not start"
rpc --deadline 1 plans 2 "${LONGER[@]}" --force
expect "two queued searches time out" codes.DEADLINE_EXCEEDED 2
rpc --deadline 2 plan "${QUICK2[@]}" --force --events-file "$TMPD/new.events"
kill -0 $runner 2>/dev/null && ok "the long search was still running" ||
    fail "premise: the long search ended; LONGER is not long enough any more"
code=$(jget "$OUT" code)
[ "$code" != RESOURCE_EXHAUSTED ] && grep -q 'progress queued' "$TMPD/new.events" &&
    ok "a new Plan is queued once the queued callers gave up (code $code)" ||
    fail "a new Plan after the queued callers gave up: $code $(jget "$OUT" details)"
kill $runner 2>/dev/null
finish
