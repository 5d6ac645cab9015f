#!/usr/bin/env bash
# daemon_coalesce.sh — identical concurrent Plan requests share one search:
#  * a long Plan runs; four identical ones sent meanwhile wait on it (a "queued"
#    event each) and all get its plan, cached = true, the same fingerprint;
#  * the first caller cancels while they wait: the search goes on for them;
#  * /metrics counts one search, and the log says the calls joined it;
#  * force still runs its own search;
#  * a call that joins a search gets its own request's notes: DeepSeek-V3's HF config
#    with its MTP depth and without it build one model under torchtitan (one
#    fingerprint), the first noted, the second not.
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

# Notes follow the request (docs/plan-format.md "notes"): the config with its MTP depth
# leads a search under torchtitan (3, tessel.v1.Target), which leaves the depth out with a
# note; the same config without it (num_nextn_predict_layers 0: the same fingerprint)
# joins the search once the first is queued and gets no note
V3=$HERE/../data/hf/deepseek_v3.json
mkdir -p "$TMPD/nomtp"
"$PY" -c 'import json,sys; c=json.load(open(sys.argv[1])); c["num_nextn_predict_layers"]=0
json.dump(c, open(sys.argv[2], "w"))' "$V3" "$TMPD/nomtp/deepseek_v3.json"
V3ARGS=(--cluster 32x8xH100-80G:8xib400 --stack 3)
joined=$(grep -c 'joins the search already running' "$TMPD/d.log")
client --deadline 240 plan --hf-config "$V3" "${V3ARGS[@]}" --events-file "$TMPD/v3ev" \
    >"$TMPD/v3a.json" 2>"$TMPD/v3a.err" &
lead=$!
wait_events "$TMPD/v3ev" 'progress queued' 1 60 || fail "the DeepSeek-V3 search was not queued"
client --deadline 240 plan --hf-config "$TMPD/nomtp/deepseek_v3.json" "${V3ARGS[@]}" \
    >"$TMPD/v3b.json" 2>"$TMPD/v3b.err"
wait $lead
[ "$(grep -c 'joins the search already running' "$TMPD/d.log")" = $((joined + 1)) ] &&
    ok "premise: the call without the depth joined the running search" ||
    fail "premise: the call without the depth did not join the search (answered from the store?)"
"$PY" - "$TMPD/v3a.json" "$TMPD/v3b.json" <<'PY' && ok "each coalesced call has its own request's notes" ||
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
assert a["code"] == b["code"] == "OK", (a["code"], b["code"])
assert a["fingerprint"] == b["fingerprint"] and b["cached"], (a["fingerprint"], b["fingerprint"])
assert len(a["notes"]) == 1 and "1 MTP depth left out" in a["notes"][0], a["notes"]
assert b["notes"] == [], b["notes"]
PY
    fail "notes of the coalesced calls: $(head -c 300 "$TMPD/v3a.json") / $(head -c 300 "$TMPD/v3b.json")"
finish
