#!/usr/bin/env bash
# daemon_coalesce.sh — identical concurrent Plan requests share one search:
#  * a long Plan runs; four identical ones sent meanwhile wait on it (a "queued"
#    event each) and all get its plan, cached = true, the same fingerprint;
#  * the first caller cancels while they wait: the search goes on for them;
#  * /metrics counts one search, and the log says the calls joined it;
#  * force still runs its own search.
# Ordering, not timing: the cancel comes after the four have joined (their
# "queued" events), and the search is checked to have still been running then.
#
# usage: daemon_coalesce.sh TESSELD PROTO_DIR
source "$(dirname "$0")/lib.sh"

SOCK=$TMPD/tesseld.sock
T=unix:$SOCK
HPORT=$(free_port)
metric() { curl -s "http://127.0.0.1:$HPORT/metrics" | awk -v k="$1" '$1 == k {print $2}'; }
client() { timeout 300 "$PY" "$HERE/tsl_rpc.py" --proto "$PROTO_DIR" --stubs "$STUBS" --target "$T" "$@"; }

start_daemon d --unix-socket "$SOCK" --database "$TMPD/t.db" --pool-size 2 --queue-size 4 \
    --http "127.0.0.1:$HPORT"
wait_healthy "$T" || { fail "tesseld did not become healthy"; finish; }

# The first caller: it cancels once the others have joined (a file appears).
"$PY" - "$HERE/tsl_rpc.py" "$PROTO_DIR" "$STUBS" "$T" "$TMPD/go" "$TMPD/long.json" \
    >"$TMPD/lead.json" 2>"$TMPD/lead.err" <<'PYEOF' &
import json, os, sys, time
rpc_py, proto, stubs, target, go, long_json = sys.argv[1:7]
sys.path.insert(0, os.path.dirname(rpc_py))
import tsl_rpc
tsl_rpc.load_stubs(proto, stubs)
import grpc
from tessel.v1 import planner_pb2 as pb, planner_pb2_grpc as pbg
ch = grpc.insecure_channel(target)
req = pb.PlanRequest(hf_config_json=open(long_json).read(), cluster_spec="16x8xA100-80G:ib100")
call = pbg.PlannerStub(ch).Plan(req, timeout=240)
out = {"events": 0}
try:
    for ev in call:
        out["events"] += 1
        if out["events"] == 1:
            open(go + ".queued", "w").close()
        while not os.path.exists(go):
            time.sleep(0.05)
        call.cancel()
except grpc.RpcError as e:
    out["code"] = e.code().name
print(json.dumps(out))
PYEOF
lead=$!
for i in $(seq 1 300); do [ -e "$TMPD/go.queued" ] && break; sleep 0.1; done
[ -e "$TMPD/go.queued" ] && ok "the first Plan is queued" || fail "the first Plan never started"

client --deadline 240 plans 4 "${LONG[@]}" --events-file "$TMPD/events" >"$TMPD/four.json" \
    2>"$TMPD/four.err" &
four=$!
wait_events "$TMPD/events" 'progress queued' 4 60 && ok "four identical Plans joined" ||
    fail "the four did not all get a queued event"
running=$(metric tessel_searches_running)
touch "$TMPD/go"
wait $lead
OUT=$TMPD/lead.json
expect "the first caller cancelled" code CANCELLED
[ "$running" = 1 ] && ok "one search was running when it cancelled" ||
    fail "premise: tessel_searches_running=$running when the first caller cancelled, want 1"

wait $four
OUT=$TMPD/four.json
expect "the four got a plan" codes.OK 4
for i in 0 1 2 3; do
    expect "call $i: answered from the shared search" "results.$i.cached" True
done
n=$("$PY" -c 'import json,sys; print(len({r.get("fingerprint") for r in json.load(open(sys.argv[1]))["results"]}))' "$OUT")
[ "$n" = 1 ] && ok "one fingerprint for all" || fail "$n fingerprints"
searches=$(metric tessel_search_seconds_count)
[ "$searches" = 1 ] && ok "/metrics: one search ran for five calls" ||
    fail "/metrics: tessel_search_seconds_count=$searches, want 1"
[ "$(grep -c 'joins the search already running' "$TMPD/d.log")" = 4 ] &&
    ok "the log says four calls joined" || fail "the log does not say four calls joined"

rpc_to "$T" plan "${QUICK[@]}" --force
rpc_to "$T" plan "${QUICK[@]}" --force
expect "force still plans" code OK
searches=$(metric tessel_search_seconds_count)
[ "$searches" = 3 ] && ok "force runs its own searches" ||
    fail "tessel_search_seconds_count=$searches after two forced plans, want 3"
finish
