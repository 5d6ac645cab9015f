#!/usr/bin/env bash
# daemon_isolation.sh — one client cannot take more than its share (docs/operations.md
# "Hostile clients and exhausted resources"):
#  * a raw HTTP/2 client that opens 100 streams before acknowledging the
#    server's SETTINGS (so gRPC's MAX_CONCURRENT_STREAMS of 16 does not bind
#    yet) gets at most 32 calls held; the rest are answered RESOURCE_EXHAUSTED
#    at once, counted in tessel_refused_total{reason="streams"} and logged;
#  * slow HTTP scrapers — 4 sending "GET /metrics" a byte a second, 4 taking
#    the answer of "GET /" a byte a second — do not delay GetPlan (it answers
#    within its deadline while they hold their connections), and the HTTP
#    server cuts every one of them off (its 30 s request deadline).
#
# usage: daemon_isolation.sh TESSELD PROTO_DIR
source "$(dirname "$0")/lib.sh"

PROBE=$HERE/tsl_probe.py
SCHED=sched-isolation-3e9a
SOCK=$TMPD/i.sock
PORT=$(free_port)
HPORT=$(free_port)
metric() { curl -s "http://127.0.0.1:$HPORT/metrics" | awk -v k="$1" '$1 == k {print $2}'; }
{
    printf '[server]\nunix_socket = %s\ntcp = 127.0.0.1:%s\ninsecure_tcp = true\n' "$SOCK" "$PORT"
    printf 'http = 127.0.0.1:%s\n[store]\ndatabase = %s/i.db\n[search]\npool_size = 1\n' \
        "$HPORT" "$TMPD"
    printf '[tokens]\n%s = scheduler\n' "$SCHED"
} >"$TMPD/i.ini"
start_daemon i --config "$TMPD/i.ini"
wait_healthy "unix:$SOCK" || { fail "tesseld did not become healthy"; finish; }
rpc_to "unix:$SOCK" --token "$SCHED" plan "${QUICK[@]}"
FP=$(jget "$OUT" fingerprint)
[ -n "$FP" ] || { fail "no plan to export: $(cat "$OUT")"; finish; }

# ---- calls in flight per connection, before the SETTINGS are acknowledged -------------------
timeout 60 "$PY" "$PROBE" flood "127.0.0.1:$PORT" 100 "$FP" "$SCHED" >"$OUT" 2>"$TMPD/probe.err" ||
    cat "$TMPD/probe.err"
cat "$OUT"
held=$(jget "$OUT" held)
refused=$(jget "$OUT" refused)
# Before: all 100 were taken (16 binds only once the client acks).
[ "${held:-999}" -le 32 ] && [ "${held:-0}" -ge 16 ] &&
    ok "100 streams before the SETTINGS ack: $held held (at most 32 per connection)" ||
    fail "100 streams before the SETTINGS ack: held '$held', want 16..32: $(cat "$OUT")"
[ $((${held:-0} + ${refused:-0})) -eq 100 ] && ok "the other $refused were answered at once" ||
    fail "held $held + refused $refused != 100: $(cat "$OUT")"
n=$(metric 'tessel_refused_total{reason="streams"}')
[ "${n:-0}" -eq "${refused:-x}" ] && ok "tessel_refused_total{reason=\"streams\"} = $n" ||
    fail "tessel_refused_total{reason=streams} = '$n', want $refused"
[ "$(jget "$OUT" limit_named)" = True ] && ok "the refused calls' status names the limit" ||
    fail "the refused calls' grpc-message does not name the limit"
grep -q 'too many calls in flight on one connection: at most 32' "$TMPD/i.log" &&
    ok "the refusal is logged naming the limit" || fail "no refusal naming the limit in the log"
rpc_to "127.0.0.1:$PORT" --token "$SCHED" get "$FP"
expect "a well-behaved client on its own connection is served meanwhile" code OK

# ---- slow HTTP scrapers do not delay GetPlan, and are cut off --------------------------------
timeout 120 "$PY" "$PROBE" scrapers "127.0.0.1:$HPORT" 4 45 >"$TMPD/scrapers.json" \
    2>"$TMPD/scrapers.err" &
SCRAPERS=$!
sleep 1
calls=0 late=0
while kill -0 "$SCRAPERS" 2>/dev/null; do
    # GetPlan's usual deadline is well under a second; 10 s is only a bound.
    rpc_to "unix:$SOCK" --token "$SCHED" --deadline 10 get "$FP"
    calls=$((calls + 1))
    [ "$(jget "$OUT" code)" = OK ] || { late=$((late + 1)); cat "$OUT"; }
done
wait "$SCRAPERS" || cat "$TMPD/scrapers.err"
cat "$TMPD/scrapers.json"
[ "$calls" -ge 5 ] && [ "$late" -eq 0 ] &&
    ok "GetPlan answered all $calls calls within its deadline while 8 slow scrapers held on" ||
    fail "GetPlan: $late of $calls calls failed or missed the deadline while scrapers held on"
OUT_SAVED=$OUT
OUT=$TMPD/scrapers.json
# Before: libevent's timeout is one of inactivity; a byte a second was never cut off.
expect "every byte-a-second request sender is cut off" senders_cut 4
expect "every byte-a-second answer reader is cut off" readers_cut 4
OUT=$OUT_SAVED
grep -q 'http: closed a connection whose request or answer took over 30 s' "$TMPD/i.log" &&
    ok "the cut is logged" || fail "no 'http: closed a connection' line in the log"
curl -sf "http://127.0.0.1:$HPORT/healthz" >/dev/null && ok "/healthz still answers" ||
    fail "/healthz does not answer after the scrapers"

finish
