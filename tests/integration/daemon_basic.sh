#!/usr/bin/env bash
# daemon_basic.sh — one tesseld on a private unix socket and database, driven by
# an independent Python gRPC client: the search threads' priority, health, Plan (progress events, then the
# plan), the cached second call, force, list (filters, paging), get, export,
# delete, malformed messages, unknown methods, Trials/GetTrial without an id,
# the socket's mode, /healthz over HTTP, --check-config and start-up refusals.
#
# usage: daemon_basic.sh TESSELD PROTO_DIR
source "$(dirname "$0")/lib.sh"

SOCK=$TMPD/tesseld.sock
T=unix:$SOCK
rpc() { rpc_to "$T" "$@"; }
HTTP_PORT=$(free_port)

start_daemon d --unix-socket "$SOCK" --database "$TMPD/t.db" --pool-size 2 \
    --http "127.0.0.1:$HTTP_PORT"
wait_healthy "$T" || { fail "tesseld did not become healthy"; finish; }
ok "tesseld is up"

# The two search threads run below the daemon (search_nice = 19, SCHED_BATCH = 3);
# every other thread keeps nice 0.
low=0
for _ in $(seq 1 20); do
    low=$("$PY" - "$DPID" <<'PY'
import glob, sys
n = 0
for f in glob.glob("/proc/%s/task/*/stat" % sys.argv[1]):
    try:
        fields = open(f).read().rsplit(")", 1)[1].split()
    except OSError:
        continue
    nice, policy = int(fields[16]), int(fields[38])
    n += nice == 19 and policy == 3
print(n)
PY
)
    [ "$low" = 2 ] && break
    sleep 0.1
done
[ "$low" = 2 ] && ok "2 search threads at nice 19 under SCHED_BATCH" ||
    fail "$low search threads at nice 19 / SCHED_BATCH, want 2"

# ---- health -------------------------------------------------------------------
rpc health
expect "Health/Check ''" status SERVING
rpc health tessel.v1.Planner
expect "Health/Check tessel.v1.Planner" status SERVING
rpc health no.such.Service
expect "Health/Check of an unknown service" code NOT_FOUND

mode=$(stat -c %a "$SOCK")
[ "$mode" = 660 ] && ok "socket mode 0660" || fail "socket mode $mode, want 660"
[ -f "$SOCK.lock" ] && [ "$(cat "$SOCK.lock")" = "$DPID" ] && ok "lock file holds the pid" ||
    fail "lock file $SOCK.lock does not hold pid $DPID"

body=$("$PY" -c 'import sys, urllib.request as u; print(u.urlopen(sys.argv[1], timeout=5).read().decode())' \
    "http://127.0.0.1:$HTTP_PORT/healthz" 2>&1)
[ "$body" = ok ] && ok "HTTP /healthz says ok" || fail "HTTP /healthz: '$body'"

# ---- plan: streamed progress, then the plan; then from the cache ----------------
rpc plan "${QUICK[@]}"
expect "Plan" code OK
expect "Plan is fresh" cached False
expect "Plan model" model GPT2-345M
expect "Plan devices" n_devices 4
expect "first event is progress 'queued'" phases.0 queued
expect "nothing after the plan" events_after_plan 0
n=$(jget "$OUT" progress)
[ "${n:-0}" -ge 1 ] && ok "$n progress event(s) before the plan" || fail "no progress events"
nb=$(jget "$OUT" n_baselines)
[ "${nb:-0}" -ge 5 ] && ok "plan compares $nb baselines" || fail "plan has ${nb:-0} baselines"
stages=$(jget "$OUT" n_stages)
[ "${stages:-0}" -ge 1 ] && ok "plan has $stages stage(s)" || fail "plan has no stages"
FP=$(jget "$OUT" fingerprint)
[[ $FP =~ ^[0-9a-f]{16}$ ]] && ok "fingerprint $FP" || fail "fingerprint '$FP'"

rpc plan "${QUICK[@]}"
expect "second Plan" code OK
expect "second Plan is cached" cached True
expect "cached Plan has the same fingerprint" fingerprint "$FP"
expect "cached Plan sends no progress" progress 0
"$PY" -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))["elapsed_s"] < 1.0 else 1)' "$OUT" &&
    ok "cached Plan answered at once" || fail "cached Plan took $(jget "$OUT" elapsed_s) s"

rpc plan "${QUICK[@]}" --force
expect "Plan with force searches again" cached False
expect "forced Plan keeps the fingerprint" fingerprint "$FP"

rpc plan "${QUICK2[@]}"
expect "Plan BERT-Large" code OK
FP2=$(jget "$OUT" fingerprint)
rpc plan "${QUICK3[@]}" --batch 64
expect "Plan GPT2-762M batch 64" global_batch 64
FP3=$(jget "$OUT" fingerprint)

# ---- list, get, export, delete ------------------------------------------------------
rpc list
expect "ListPlans" code OK
count=$("$PY" -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["plans"]))' "$OUT")
[ "$count" = 3 ] && ok "ListPlans shows 3 plans" || fail "ListPlans shows $count plans, want 3"
rpc list --model gpt2-345m
expect "ListPlans by model (case-insensitive)" plans.0.fingerprint "$FP"
rpc list --devices 8
count=$("$PY" -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["plans"]))' "$OUT")
[ "$count" = 2 ] && ok "ListPlans by device count" || fail "ListPlans --devices 8 shows $count, want 2"
rpc list --page-size 2
expect "ListPlans page 1" code OK
token=$(jget "$OUT" next_page_token)
[ -n "$token" ] && ok "page 1 has a next_page_token" || fail "page 1 has no next_page_token"
rpc list --page-size 2 --page-token "$token"
count=$("$PY" -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["plans"]))' "$OUT")
[ "$count" = 1 ] && ok "page 2 has the last plan" || fail "page 2 has $count plans, want 1"
expect "page 2 ends the listing" next_page_token ""
rpc list --page-token 'not a token!'
expect "ListPlans with a bad page token" code INVALID_ARGUMENT

rpc get "$FP"
expect "GetPlan" code OK
expect "GetPlan fingerprint" fingerprint "$FP"
expect "GetPlan answers from the store" cached True
rpc get "${FP^^}"
expect "GetPlan with an upper-case fingerprint" fingerprint "$FP"
rpc get 0123456789abcdef
expect "GetPlan of an unknown plan" code NOT_FOUND
rpc get xyz
expect "GetPlan of a malformed fingerprint" code INVALID_ARGUMENT
expect_details "GetPlan malformed fingerprint message" 'fingerprint'

rpc export "$FP"
expect "ExportPlan json" code OK
expect "ExportPlan content type" content_type application/json
"$PY" - "$OUT" "$FP" <<'EOF' && ok "exported JSON parses and names the plan" || fail "exported JSON is wrong"
import json, sys
doc = json.loads(json.load(open(sys.argv[1]))["content"])
assert doc["fingerprint"] == sys.argv[2] and doc["plan"]["stages"], doc.keys()
EOF
rpc export "$FP" --format galvatron
"$PY" - "$OUT" <<'EOF' && ok "ExportPlan galvatron: a strategy JSON or the reason it cannot be one" || fail "ExportPlan galvatron: $(head -c 300 "$OUT")"
import json, sys
r = json.load(open(sys.argv[1]))
if r["code"] == "OK":
    assert r["content_type"] == "application/json", r
    assert "pp_deg" in json.loads(r["content"]), r
else:
    assert r["code"] == "FAILED_PRECONDITION" and r["details"].startswith("galvatron: "), r
EOF
rpc export "$FP" --format bogus
expect "ExportPlan of an unknown format" code INVALID_ARGUMENT
# stale in every format, as the store has it: the stacks' configs cannot carry it
rpc export "$FP" --format trace
expect "ExportPlan of a fresh plan" stale False
set_stale "$TMPD/t.db" "$FP" 1
for f in trace json; do
    rpc export "$FP" --format "$f"
    expect "ExportPlan $f of a plan marked stale: the content" code OK
    expect "ExportPlan $f of a plan marked stale: stale" stale True
done
set_stale "$TMPD/t.db" "$FP" 0

rpc delete "$FP2"
expect "DeletePlan" deleted True
rpc delete "$FP2"
expect "DeletePlan again" deleted False
rpc get "$FP2"
expect "GetPlan after DeletePlan" code NOT_FOUND

# ---- malformed, unknown, unimplemented -------------------------------------------------
rpc raw /tessel.v1.Planner/GetPlan ffffffffff
expect "GetPlan with bytes that are not a protobuf" code INVALID_ARGUMENT
rpc raw /tessel.v1.Planner/Plan 0a05
expect "Plan with a truncated protobuf" code INVALID_ARGUMENT
rpc raw /tessel.v1.Planner/ListPlans 08
expect "ListPlans with a truncated varint" code INVALID_ARGUMENT
rpc raw /grpc.health.v1.Health/Check 0aff
expect "Health/Check with a bad length" code INVALID_ARGUMENT
rpc unknown
expect "an unknown method" code UNIMPLEMENTED
rpc registry
expect "Registry/Heartbeat of an unknown worker" code NOT_FOUND
rpc trials
expect "Trials/GetTrial without a trial_id" code INVALID_ARGUMENT
rpc health
expect "still serving after malformed calls" status SERVING
rpc get "$FP3"
expect "GetPlan still works" code OK

# ---- invalid requests: named fields, before any search ------------------------------------
rpc plan --model NoSuchModel --cluster 4xA100-40G
expect "unknown preset" code INVALID_ARGUMENT
expect_details "unknown preset message" 'model_preset'
rpc plan --model GPT2-345M --cluster 4xNoSuchGPU
expect "bad cluster spec" code INVALID_ARGUMENT
expect_details "bad cluster spec message" 'cluster_spec'
rpc plan --cluster 4xA100-40G
expect "no model" code INVALID_ARGUMENT
expect_details "no model message" 'model'
rpc plan --model GPT2-345M
expect "no cluster" code INVALID_ARGUMENT
rpc plan "${QUICK[@]}" --batch 100000
expect "global_batch above the limit" code INVALID_ARGUMENT
expect_details "global_batch message" 'global_batch.*max_batch=65536'
rpc plan "${QUICK[@]}" --top-k 99
expect "top_k above the limit" code INVALID_ARGUMENT
rpc plan "${QUICK[@]}" --seq-len 512
expect "seq_len with a preset" code OK
expect "the preset planned at that length" tokens_per_sample 512
rpc plan --hf-config-text '{"model_type": "gpt2"' --cluster 4xA100-40G
expect "hf_config_json that is not JSON" code INVALID_ARGUMENT
expect_details "hf_config_json message" 'hf_config_json'
printf '{"nodes": "many"}' >"$TMPD/bad-cluster.json"
rpc plan --model GPT2-345M --cluster-json "$TMPD/bad-cluster.json"
expect "bad cluster_json" code INVALID_ARGUMENT
expect_details "cluster_json message" 'cluster_json'
rpc plan --model GPT3-65B --cluster 2xA100-40G --batch 8
expect "a model that fits nowhere: a status of its own" code OUT_OF_RANGE
expect_details "no-fit message" 'memory|fit'

# ---- configuration checks ------------------------------------------------------------------
out=$("$TESSELD" --check-config --unix-socket "$TMPD/x.sock" --database "$TMPD/x.db" 2>&1)
rc=$?
[ $rc -eq 0 ] && printf '%s' "$out" | grep -q 'configuration OK' &&
    printf '%s' "$out" | grep -q "unix_socket = $TMPD/x.sock" &&
    ok "--check-config prints the configuration and OK" || fail "--check-config: rc $rc: $out"
out=$("$TESSELD" --check-config --pool-size lots 2>&1)
rc=$?
[ $rc -eq 2 ] && ok "--check-config with a bad value exits 2 ($out)" || fail "--check-config bad value: rc $rc"
out=$("$TESSELD" --unix-socket "$TMPD/y.sock" --database "$TMPD/y.db" --tcp 127.0.0.1:1 2>&1)
rc=$?
[ $rc -eq 2 ] && printf '%s' "$out" | grep -q 'token' && ok "TCP without tokens refused ($out)" ||
    fail "TCP without tokens: rc $rc: $out"
out=$("$TESSELD" --unix-socket "$TMPD/no/such/dir/s.sock" --database "$TMPD/z.db" 2>&1)
rc=$?
[ $rc -eq 1 ] && printf '%s' "$out" | grep -q 'does not exist' && ok "missing socket directory refused" ||
    fail "missing socket directory: rc $rc: $out"
"$TESSELD" --help | grep -q 'SIGNALS' && ok "--help is a manual" || fail "--help lacks SIGNALS"

grep -q 'rpc Planner.Plan peer=unix.* role=trusted code=OK' "$TMPD/d.log" &&
    ok "one log line per request" || fail "no request log line for Plan"
finish
