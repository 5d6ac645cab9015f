#!/usr/bin/env bash
# daemon_abuse.sh — tesseld as a cluster scheduler and an ops team misuse it
# (the sixth daemon QA pass); each section names the fault it pins:
#  * a search every caller left: a Plan joins a running search of the same
#    fingerprint, cancels, then the search's first caller cancels too — the
#    search stops (nothing stored, the pool thread free) instead of running to
#    its end for nobody;
#  * a request field the planner checks against the model (bf16_layers_start past
#    its blocks, pp past the MTP cut) is INVALID_ARGUMENT before anything is
#    queued, not the search's OUT_OF_RANGE; a batch no allowed strategy splits,
#    found in the search, is INVALID_ARGUMENT naming global_batch / max_batch;
#  * a 131,072-GPU cluster_spec (max_devices) is decoded and queued at
#    once, the completion-queue thread not held for its 16,384 nodes;
#  * SIGTERM while a 100,000-figure profile report is being stored: it is stored
#    whole and answered OK, and tesseld exits 0 (it aborted in gRPC).
#
# usage: daemon_abuse.sh TESSELD PROTO_DIR
source "$(dirname "$0")/lib.sh"

SOCK=$TMPD/tesseld.sock
T=unix:$SOCK
HPORT=$(free_port)
metric() { curl -s "http://127.0.0.1:$HPORT/metrics" | awk -v k="$1" '$1 == k {print $2}'; }

start_daemon d --unix-socket "$SOCK" --database "$TMPD/t.db" --pool-size 1 --queue-size 2 \
    --http "127.0.0.1:$HPORT"
wait_healthy "$T" || { fail "tesseld did not become healthy"; finish; }

# ---- a search every caller left stops ---------------------------------------------------
# Ordering, not timing: the second call cancels after its "queued" event (it has
# joined), the first after the search is seen running (polled: under load the pool
# thread takes it some time after "queued").
# Before: the joined call's cancel was never watched, so the first caller's
# cancel kept the search going for it, to its end, and stored its plan.
"$PY" - "$HERE/tsl_rpc.py" "$PROTO_DIR" "$STUBS" "$T" "$HPORT" >"$TMPD/abandon.json" \
    2>"$TMPD/abandon.err" <<'PYEOF'
import json, os, sys, urllib.request
rpc_py, proto, stubs, target, hport = sys.argv[1:6]
sys.path.insert(0, os.path.dirname(rpc_py))
import tsl_rpc
tsl_rpc.load_stubs(proto, stubs)
import grpc
from tessel.v1 import planner_pb2 as pb, planner_pb2_grpc as pbg
def running():
    text = urllib.request.urlopen("http://127.0.0.1:%s/metrics" % hport, timeout=10).read()
    return [l.split()[1] for l in text.decode().splitlines() if l.startswith("tessel_searches_running ")][0]
stub = pbg.PlannerStub(grpc.insecure_channel(target))
req = pb.PlanRequest(model_preset="DeepSeek-V3", cluster_spec="256x8xH800-80G:8xib400")
out = {}
first = stub.Plan(req, timeout=600)
out["first"] = next(first).progress.phase
second = stub.Plan(req, timeout=600)
out["second"] = next(second).progress.phase
second.cancel()
# the pool thread may not have taken the search yet (a loaded machine): wait for it
import time
until = time.monotonic() + 120
while running() != "1" and time.monotonic() < until:
    time.sleep(0.2)
out["running"] = running()
first.cancel()
for name, call in (("first_code", first), ("second_code", second)):
    try:
        for _ in call:
            pass
        out[name] = "OK"
    except grpc.RpcError as e:
        out[name] = e.code().name
print(json.dumps(out))
PYEOF
OUT=$TMPD/abandon.json
expect "the first caller is queued" first queued
expect "an identical call joins its search" second queued
expect "premise: the search runs when both cancel" running 1
expect "the joined call cancelled" second_code CANCELLED
expect "the first caller cancelled" first_code CANCELLED
grep -q 'joins the search already running' "$TMPD/d.log" && ok "premise: the log says it joined" ||
    fail "premise: the second call did not join the search"
for i in $(seq 1 600); do
    [ "$(metric tessel_searches_running)" = 0 ] && break
    sleep 0.2
done
[ "$(metric tessel_searches_running)" = 0 ] && ok "the search nobody waits on ended" ||
    fail "the search still runs 120 s after its last caller left"
rpc_to "$T" list
n=$("$PY" -c 'import json,sys; print(len(json.load(open(sys.argv[1])).get("plans", [])))' "$OUT")
[ "$n" = 0 ] && ok "it was cancelled, not run to its end (nothing stored)" ||
    fail "it ran to its end for nobody: $n plan(s) stored"
rpc_to "$T" plan "${QUICK[@]}"
expect "the pool's thread plans the next request" code OK

# ---- request checks that ran inside the search ---------------------------------------------
# Before: bf16_layers_start past the model's blocks was found by the search on the
# pool (queued first) and answered OUT_OF_RANGE, the "nothing fits" code.
rpc_to "$T" plan --model DeepSeek-V3 --cluster 4xA100-40G --set bf16_layers_start=64
expect "bf16_layers_start past the blocks" code INVALID_ARGUMENT
expect_details "it names the field" '^bf16_layers_start: 64 .*61 blocks'
expect "refused before it was queued" progress 0
# Before: a fixed pp past the first MTP layer (the depths share the head's stage)
# passed the checks, the search had no stage count to try and said "batch: ...
# cannot be split evenly", OUT_OF_RANGE, after queueing.
rpc_to "$T" plan --model DeepSeek-V3 --cluster 8x8xH100-80G --set pp=64 --set mtp_layers=1
expect "pp past the MTP cut" code INVALID_ARGUMENT
expect_details "it names pp and the MTP depths" '^pp: 64 stages, .*MTP depths share'
expect "pp refused before it was queued" progress 0
# Before: target deepspeed with a pp that neither divides the model's layers (its
# PipelineModule's 'uniform' partition) nor leaves a block on every stage
# ('type:transformer', uneven since cost model 111: GPT2-345M's 24 blocks over 25
# stages) had every plan refused by the stack's rules and was answered "memory: no
# plan fits", OUT_OF_RANGE, after queueing.
rpc_to "$T" plan --model GPT2-345M --cluster 5x5xA100-40G:ib100 --set target=2 --set pp=25
expect "deepspeed pp past the blocks" code INVALID_ARGUMENT
expect_details "it names pp" '^pp: 25 stages under target deepspeed'
expect "deepspeed pp refused before it was queued" progress 0
# Found in the search only (the strategies a batch splits over): a batch no
# allowed strategy splits is the request's, INVALID_ARGUMENT naming the field,
# not OUT_OF_RANGE, which tells the caller to raise the budget.
rpc_to "$T" plan "${QUICK[@]}" --set global_batch=2 --set no_tp=true --set no_pp=true
expect "a batch no strategy splits" code INVALID_ARGUMENT
expect_details "it names global_batch" '^global_batch: the global batch cannot be split'
rpc_to "$T" plan "${QUICK[@]}" --set max_batch=2 --set no_tp=true --set no_pp=true
expect "a sweep no strategy splits" code INVALID_ARGUMENT
expect_details "it names max_batch" '^max_batch: no batch up to max_batch'

# ---- a 131,072-GPU cluster ------------------------------------------------------------------------
# At [limits] max_devices (131072): decoded (on the completion-queue thread)
# and queued, then cancelled. Before: its nodes were added by as many
# reallocations of a growing array, quadratic copying that held the
# completion-queue thread (every call of every client) for ~170 s under ASan
# before the "queued" event; the client's deadline (60 s) passed first.
"$PY" - "$HERE/tsl_rpc.py" "$PROTO_DIR" "$STUBS" "$T" >"$TMPD/huge.json" 2>"$TMPD/huge.err" <<'PYEOF'
import json, os, sys
rpc_py, proto, stubs, target = sys.argv[1:5]
sys.path.insert(0, os.path.dirname(rpc_py))
import tsl_rpc
tsl_rpc.load_stubs(proto, stubs)
import grpc, health_pb2, health_pb2_grpc
from tessel.v1 import planner_pb2 as pb, planner_pb2_grpc as pbg
ch = grpc.insecure_channel(target)
out = {}
call = pbg.PlannerStub(ch).Plan(pb.PlanRequest(model_preset="GPT2-345M",
                                               cluster_spec="16384x8xH100-80G:8xib400"), timeout=60)
try:
    out["first"] = next(call).progress.phase
    r = health_pb2_grpc.HealthStub(ch).Check(health_pb2.HealthCheckRequest(), timeout=30)
    out["health"] = health_pb2.HealthCheckResponse.ServingStatus.Name(r.status)
    call.cancel()
    for _ in call:
        pass
except grpc.RpcError as e:
    out["code"] = e.code().name
print(json.dumps(out))
PYEOF
OUT=$TMPD/huge.json
expect "a 131,072-GPU cluster_spec is queued" first queued
expect "Health is answered while it waits" health SERVING
expect "and it is cancelled" code CANCELLED

# ---- SIGTERM while a profile report is being stored ----------------------------------------------
# A 100,000-figure ReportProfile (seconds of checking and storing on the store
# pool; tens of seconds under ASan), SIGTERM once it was sent: the report is
# stored whole and answered OK, and tesseld exits 0. Before: the stop shut the
# completion queue down after grace + 10 s while the report was still being
# stored; its answer then hit gRPC's assertion (grpc_cq_begin_op) and tesseld
# aborted (exit 134), the worker told UNAVAILABLE for a report that was stored.
RSOCK=$TMPD/report.sock
start_daemon report --unix-socket "$RSOCK" --database "$TMPD/report.db" --grace 1
RPID=$DPID
wait_healthy "unix:$RSOCK" || { fail "the report tesseld did not become healthy"; finish; }
"$PY" - "$HERE/tsl_rpc.py" "$PROTO_DIR" "$STUBS" "unix:$RSOCK" "$RPID" >"$TMPD/report.json" \
    2>"$TMPD/report.err" <<'PYEOF'
import json, os, signal, sys, time
rpc_py, proto, stubs, target, pid = sys.argv[1:6]
sys.path.insert(0, os.path.dirname(rpc_py))
import tsl_rpc
tsl_rpc.load_stubs(proto, stubs)
import grpc
from tessel.v1 import registry_pb2 as rp, registry_pb2_grpc as rpg
ch = grpc.insecure_channel(target, options=[("grpc.max_send_message_length", 64 << 20)])
reg = rpg.RegistryStub(ch)
w = reg.RegisterWorker(rp.RegisterRequest(hostname="term-host", simulated=True, devices=[
    rp.Device(index=0, model="sim NVIDIA A100 80GB", memory_bytes=80 << 30, sm_count=108,
              uuid="u-term")]), timeout=30)
req = rp.ReportProfileRequest(worker_id=w.worker_id, report_id="term-1")
for i in range(100000):
    m = req.measurements.add(name="gemm_fwd", unit="s", value=1e-3 + i * 1e-9, device_index=0,
                             per_device=True)
    m.labels["m"] = str(i)
fut = reg.ReportProfile.future(req, timeout=600)
time.sleep(1.5)  # sent (5 MB on a unix socket) and on the store pool
os.kill(int(pid), signal.SIGTERM)
out = {}
try:
    out["code"], out["stored"] = "OK", fut.result().stored
except grpc.RpcError as e:
    out["code"], out["details"] = e.code().name, e.details()
print(json.dumps(out))
PYEOF
OUT=$TMPD/report.json
expect "a report sent before SIGTERM is answered" code OK
expect "and stored whole" stored 100000
if wait_exit "$RPID" 600; then
    [ "$EXIT_STATUS" = 0 ] && ok "tesseld exits 0 after storing it" ||
        fail "tesseld exited $EXIT_STATUS after SIGTERM during a report (134: gRPC's abort)"
else
    fail "tesseld did not stop within 600 s of SIGTERM"
fi
! grep -q 'assertion failed' "$TMPD/report.log" && ok "no gRPC assertion in its log" ||
    fail "gRPC assertion: $(grep 'assertion failed' "$TMPD/report.log")"
n=$("$PY" -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); print(c.execute("select count(*) from profiles").fetchone()[0], c.execute("pragma integrity_check").fetchone()[0])' "$TMPD/report.db")
[ "$n" = "100000 ok" ] && ok "the database holds its 100000 figures and passes integrity_check" ||
    fail "database after the stop: $n, want '100000 ok'"

finish
