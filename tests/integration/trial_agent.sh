#!/usr/bin/env bash
# trial_agent.sh — two `sim` tessel-workers take trial assignments from a stand-in
# Registry (fake_registry.py, Python gRPC), so the worker's side of Trials is held
# to the contract (registry.proto) whatever tesseld implements:
#   a pp = 2 plan across the two workers: rank 0's ready report carries its tcp
#   rendezvous, rank 1 joins it, both report measured results (iterations, median
#   within min..max, peak memory, phases; the last stage the loss), after their
#   first reports were refused UNAVAILABLE and retried;
#   a rank past its timeout_s is killed and reported with the reason;
#   an assignment with cancel, and a ReportTrial answered cancelled, stop the rank
#   without a result; a rank that ended on its own before its result was answered
#   cancelled (a cancel racing the rank's end) is logged as having already ended,
#   not "stopping" a pid already reaped; the agents stay up throughout.
#
# usage: trial_agent.sh TESSELCTL TESSEL_WORKER DEVICE_FILE PROTO_DIR
set -u

CTL=${1:?usage: trial_agent.sh TESSELCTL TESSEL_WORKER DEVICE_FILE PROTO_DIR}
WORKER=${2:?usage}
DEVICE_FILE=${3:?usage}
PROTO=${4:?usage}
PY=/usr/bin/python3
"$PY" -c "import grpc, grpc_tools" 2>/dev/null || { echo "skip: python3-grpcio/grpc-tools missing"; exit 77; }
here=$(cd "$(dirname "$0")" && pwd)

tmp=$(mktemp -d /tmp/tessel-trial-agent.XXXXXX)
failures=0
pids=()
# shellcheck source=proc.sh
. "$here/proc.sh"

cleanup() {
    for p in "${pids[@]}"; do stop_pid "$p"; done
    if [ "$failures" -ne 0 ]; then
        for log in "$tmp"/*.log; do
            echo "---- $log (last 30 lines)"
            tail -n 30 "$log"
        done
    fi
    [ -n "${KEEP:-}" ] || rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM


# A GPT of 4 blocks (hidden 64) on 2 devices, 2 stages: the document the daemon
# would send — the plan document with the request that names the model.
cat >"$tmp/tiny.json" <<'JSON'
{"model_type": "gpt2", "n_layer": 4, "n_embd": 64, "n_head": 4, "n_positions": 32, "vocab_size": 128}
JSON
"$CTL" plan --local --hf-config "$tmp/tiny.json" --cluster 2xH100-80G --batch 8 --pp 2 \
    --no-baselines --json >"$tmp/plan.json" 2>"$tmp/plan.log" || { fail "tesselctl plan"; exit 1; }
"$PY" - "$tmp" <<'PY' || { fail "document"; exit 1; }
import json, sys
t = sys.argv[1]
doc = json.load(open(t + "/plan.json"))
doc["request"]["hf_config"] = json.load(open(t + "/tiny.json"))
assert doc["plan"]["pp"] == 2, doc["plan"]
json.dump(doc, open(t + "/doc.json", "w"))
PY

port=$((30000 + $$ % 20000))
"$PY" "$here/fake_registry.py" --proto "$PROTO" --stubs "$tmp/stubs" --listen "unix:$tmp/reg.sock" \
    --doc "$tmp/doc.json" --out "$tmp/reports.json" >"$tmp/registry.log" 2>&1 &
reg=$!
pids+=("$reg")
for _ in $(seq 1 100); do [ -S "$tmp/reg.sock" ] && break; sleep 0.1; done

for node in a b; do
    "$WORKER" run --server "unix:$tmp/reg.sock" --backend sim --device-file "$DEVICE_FILE" \
        --node-name "$node" --state-dir "$tmp/state-$node" --heartbeat 1 --profile-at-start no \
        --trial-address 127.0.0.1 --trial-port "$port" --trial-poll 2 --backoff-base 0.2 \
        --backoff-cap 1 >>"$tmp/$node.log" 2>&1 &
    pids+=("$!")
    port=$((port + 10))
done
wa=${pids[1]}
wb=${pids[2]}

for _ in $(seq 1 600); do kill -0 "$reg" 2>/dev/null || break; sleep 0.2; done
wait "$reg"
rc=$?
[ "$rc" -eq 0 ] && ok "the stand-in registry played its five trials" ||
    fail "the registry's scenario stopped (status $rc): $(tail -n 3 "$tmp/registry.log")"
[ -f "$tmp/reports.json" ] || { fail "no reports written"; exit 1; }

check() { # check DESCRIPTION PYTHON-EXPR over r (the reports) and by(trial, rank, ready)
    if "$PY" - "$tmp/reports.json" "$2" <<'PY'; then ok "$1"; else fail "$1"; fi
import json, sys
r = json.load(open(sys.argv[1]))
def by(t, k, ready=False):
    return [x for x in r if x["trial_id"] == t and x.get("rank", 0) == k and bool(x.get("ready")) == ready and not x.get("refused")]
ok = eval(sys.argv[2])
if not ok:
    print(json.dumps(r, indent=1)[:3000])
sys.exit(0 if ok else 1)
PY
}

check "t1: rank 0's ready carries its tcp rendezvous" \
    "by('t1', 0, True)[0]['rendezvous'].startswith('127.0.0.1:')"
check "t1: two result reports were refused UNAVAILABLE (tesseld briefly away)" \
    "len([x for x in r if x.get('refused')]) == 2"
check "t1: both ranks report results without error" \
    "all(len(by('t1', k)) == 1 and not by('t1', k)[0].get('error') for k in (0, 1))"
check "t1: measured iterations, median within min..max, peak memory, phases" \
    "all(x['iterations'] == 2 and 0 < x['iter_min_s'] <= x['iter_time_s'] <= x['iter_max_s'] and int(x['peak_bytes']) > 0 and set(x['phase_s']) == {'fwd','bwd','comm','bubble','opt'} and x['phase_s']['fwd'] > 0 for x in by('t1', 0) + by('t1', 1))"
check "t1: the last stage reports the loss" "by('t1', 1)[0]['loss'] > 0 and 'loss' not in by('t1', 0)[0]"
check "t1: the stage boundary shows as pipeline wait (bubble) on a rank" \
    "max(by('t1', 0)[0]['phase_s']['bubble'], by('t1', 1)[0]['phase_s']['bubble']) > 0"
check "t2: a rank past timeout_s fails with the reason" \
    "len(by('t2', 0)) == 1 and any(s in by('t2', 0)[0].get('error', '') for s in ('timed out', 'did not connect in time'))"
check "t3: an assignment with cancel stops the rank: no result" "by('t3', 0) == []"
check "t4: a ReportTrial answered cancelled stops the rank: no result" "by('t4', 0) == []"

cat "$tmp/a.log" "$tmp/b.log" | grep -q "trial report waits: ReportTrial: UNAVAILABLE" &&
    ok "a refused report waited and was sent again" || fail "no report retry logged"
grep -q "trial t3: cancelled: stopping rank 0" "$tmp/a.log" && ok "worker a logged the cancel" ||
    fail "worker a did not log the t3 cancel"
grep -q "trial t4: cancelled: stopping rank 0" "$tmp/a.log" && ok "worker a stopped t4 on the answer" ||
    fail "worker a did not stop t4"
check "t5: the rank's refusal is reported" \
    "len(by('t5', 0)) == 1 and 'cpu pairs with tcp' in by('t5', 0)[0].get('error', '')"
grep -q "trial t5: cancelled: rank 0 had already ended (rank 0: .*cpu pairs with tcp" "$tmp/a.log" &&
    ! grep -q "trial t5: cancelled: stopping" "$tmp/a.log" &&
    ok "t5: a result answered cancelled logs the rank as already ended, stops nothing" ||
    fail "t5: $(grep 't5' "$tmp/a.log")"
kill -0 "$wa" 2>/dev/null && kill -0 "$wb" 2>/dev/null && ok "both agents still run" ||
    fail "an agent died"

for p in "${pids[@]}"; do stop_pid "$p"; done
pids=()
# a build with -Db_sanitize=... reports into the workers' logs
if grep -lE 'ERROR: (Address|Leak|Thread)Sanitizer|runtime error:' "$tmp"/*.log; then
    fail "a sanitizer reported an error (log above)"
else
    ok "no sanitizer report in the workers' logs"
fi

echo "$failures failure(s)"
[ "$failures" -eq 0 ]
