#!/usr/bin/env bash
# worker_registry.sh — tesseld and two `sim` tessel-workers as real processes on
# a private unix socket and a temporary database, driven with tesselctl:
#   registration and profiles stored (raw and aggregated, marked simulated);
#   `tesselctl workers` shows both online; a plan on `--cluster registered`
#   (and `--nodes`: PlanRequest.registered) uses their figures — tesseld
#   assembles the cluster and attaches their block times (planner/profile.h) —
#   and logs where they came from and which workers it left out (not named,
#   offline, stopped); an unknown name is INVALID_ARGUMENT naming
#   cluster.registered.nodes, no online worker FAILED_PRECONDITION; a new
#   profile marks that plan stale; a worker killed with SIGKILL goes offline
#   after the timeout and comes back with its identity when restarted; a wrong
#   token is refused (worker and tesselctl); SIGTERM deregisters ("stopped");
#   a report measured while tesseld is down waits in the spool and arrives
#   when it is back. Heartbeats every second, offline after 3 s of silence.
#
# usage: worker_registry.sh TESSELCTL TESSELD TESSEL_WORKER DEVICE_FILE
set -u

CTL=${1:?usage: worker_registry.sh TESSELCTL TESSELD TESSEL_WORKER DEVICE_FILE}
DAEMON=${2:?usage: worker_registry.sh TESSELCTL TESSELD TESSEL_WORKER DEVICE_FILE}
WORKER=${3:?usage: worker_registry.sh TESSELCTL TESSELD TESSEL_WORKER DEVICE_FILE}
DEVICE_FILE=${4:?usage: worker_registry.sh TESSELCTL TESSELD TESSEL_WORKER DEVICE_FILE}
PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3

tmp=$(mktemp -d /tmp/tessel-worker-it.XXXXXX)
sock=$tmp/tesseld.sock
SCHED=wr-scheduler-2b7c1e
OPS=wr-ops-91d0aa
WTOKEN=wr-worker-5e33f0
failures=0
pids=()

# shellcheck source=proc.sh
. "$(dirname "$0")/proc.sh" # ok, fail, stop_pid, stop_pids_and_clean

trap stop_pids_and_clean EXIT
trap 'exit 1' INT TERM

# ctl TOKEN ARGS... — tesselctl on the private socket; stdout $tmp/out, status $rc.
ctl() {
    local token=$1
    shift
    timeout 120 "$CTL" --server "unix:$sock" --token "$token" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
}

# q FILE EXPR — evaluates a Python expression over the JSON document d.
q() {
    "$PY" -c 'import json,sys,re; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2" 2>/dev/null
}

# wait_for SECONDS EXPR — polls `tesselctl workers --json` until EXPR (over d) is True.
wait_for() {
    local i
    for i in $(seq 1 $(($1 * 5))); do
        ctl "$OPS" workers --json
        [ "$rc" -eq 0 ] && [ "$(q "$tmp/out" "$2")" = True ] && return 0
        sleep 0.2
    done
    return 1
}

state_of() { # NODE — from the last workers answer
    q "$tmp/out" "[w['state'] for w in d['workers'] if w['hostname']=='$1'][0]"
}
id_of() {
    q "$tmp/out" "[w['worker_id'] for w in d['workers'] if w['hostname']=='$1'][0]"
}

start_daemon() {
    "$DAEMON" --config "$tmp/tesseld.conf" >>"$tmp/tesseld.log" 2>&1 &
    daemon_pid=$!
    pids+=("$daemon_pid")
    for _ in $(seq 1 75); do
        timeout 5 "$CTL" --server "unix:$sock" health >/dev/null 2>&1 && return 0
        sleep 0.2
    done
    return 1
}

# start_worker NODE [EXTRA FLAGS...] — sets $wpid; log in $tmp/NODE.log.
start_worker() {
    local node=$1
    shift
    "$WORKER" run --config "$tmp/worker.conf" --node-name "$node" --state-dir "$tmp/state-$node" \
        "$@" >>"$tmp/$node.log" 2>&1 &
    wpid=$!
    pids+=("$wpid")
}

# ---- set-up ---------------------------------------------------------------------------
"$PY" - "$DEVICE_FILE" "$tmp/dev.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["gpus"] = 2
json.dump(d, open(sys.argv[2], "w"))
PY
printf '%s\n' "$WTOKEN" >"$tmp/worker.token"
chmod 600 "$tmp/worker.token"
cat >"$tmp/tesseld.conf" <<EOF
[server]
unix_socket = $sock
[store]
database = $tmp/t.db
[search]
pool_size = 1
[registry]
worker_heartbeat_s = 1
worker_timeout_s = 3
[tokens]
$SCHED = scheduler
$OPS = ops
$WTOKEN = worker
EOF
cat >"$tmp/worker.conf" <<EOF
[daemon]
address = unix:$sock
token_file = $tmp/worker.token
rpc_timeout_s = 5
backoff_base_s = 0.2
backoff_cap_s = 1
[node]
backend = sim
device_file = $tmp/dev.json
heartbeat_s = 1
[profile]
quick = yes
EOF

"$WORKER" --config "$tmp/worker.conf" --check-config >"$tmp/out" 2>&1 &&
    grep -q "configuration OK" "$tmp/out" && ! grep -q -- "$WTOKEN" "$tmp/out" &&
    ok "tessel-worker --check-config: OK, the token masked" ||
    fail "tessel-worker --check-config"
# the address as the transport reads it: a port past 65535 (dialled modulo 2^16)
# fails --check-config, exit 2, as it would fail run
"$WORKER" --config "$tmp/worker.conf" --server 127.0.0.1:99999 --check-config >"$tmp/out" 2>&1
[ $? -eq 2 ] && grep -q "daemon.address: port '99999' in '127.0.0.1:99999' is not a number in 1..65535" "$tmp/out" &&
    ok "tessel-worker --check-config refuses port 99999" ||
    fail "tessel-worker --check-config with port 99999: $(cat "$tmp/out")"
"$WORKER" --help | grep -q "SIGTERM" && ok "tessel-worker --help documents the signals" ||
    fail "tessel-worker --help"

start_daemon || { fail "tesseld did not come up"; exit 1; }
ok "tesseld is up"

# ---- registration, profiles, workers ------------------------------------------------------
start_worker sim-a
wa=$wpid
start_worker sim-b
wb=$wpid
if wait_for 30 "sorted((w['hostname'], w['state'], w['profile_unix'] > 0, w['simulated']) for w in d['workers']) == [('sim-a','online',True,True), ('sim-b','online',True,True)]"; then
    ok "both workers registered, online, simulated, with a profile"
else
    fail "workers did not both come online with a profile: $(cat "$tmp/out")"
fi
id_b=$(id_of sim-b)
[ "$(q "$tmp/out" "[len(w['devices']) for w in d['workers']]")" = "[2, 2]" ] &&
    ok "each registered its 2 GPUs" || fail "devices: $(cat "$tmp/out")"

ctl "$OPS" workers
grep -E '^sim-a .* online' "$tmp/out" >/dev/null && grep -E '^sim-b .* online' "$tmp/out" >/dev/null &&
    ok "tesselctl workers: both online in the table" || fail "workers table: $(cat "$tmp/out")"
# the sim GPUs' long model name ("2 x simulated NVIDIA H100 80GB HBM3 (SXM5) (80.0 GiB)")
# widens the GPUS column: each row's state starts under STATE (it ran one column on)
col=$(awk 'NR == 1 { print index($0, "STATE") }' "$tmp/out")
awk -v c="$col" 'NR > 1 && /^sim-/ && substr($0, c, 6) != "online" { bad = 1 } END { exit bad }' \
    "$tmp/out" && ok "tesselctl workers: the states under STATE (column $col)" ||
    fail "workers table: a state not under STATE (column $col): $(cat "$tmp/out")"

ctl "$OPS" profiles --json
[ "$(q "$tmp/out" "all(m['simulated'] for m in d['measurements']) and len(d['measurements']) > 10")" = True ] &&
    ok "aggregated profile stored, every figure simulated" || fail "profiles: $(head -c 400 "$tmp/out")"
[ "$(q "$tmp/out" "min(m['n_samples'] for m in d['measurements'] if m['name']=='gemm_fwd')")" = 2 ] &&
    ok "gemm_fwd aggregated over both workers (2 samples)" || fail "n_samples of gemm_fwd"
[ "$(q "$tmp/out" "sorted({m['unit'] for m in d['measurements']}) == ['bytes', 'bytes/s', 'flop', 'ratio', 's']")" = True ] &&
    ok "units stored with the figures" || fail "units: $(q "$tmp/out" "sorted({m['unit'] for m in d['measurements']})")"
ctl "$OPS" profiles --node sim-a --json
[ "$(q "$tmp/out" "len(d['measurements']) > 10 and all(m['hostname']=='sim-a' for m in d['measurements'])")" = True ] &&
    ok "profiles --node sim-a: that node's raw report" || fail "profiles --node"
# the table groups the figures by GPU model; those of no one GPU under a heading that
# says so (it read "(node) (simulated)")
ctl "$OPS" profiles --node sim-a
grep -q '^node-wide figures (simulated)$' "$tmp/out" && ! grep -q '^(node)' "$tmp/out" &&
    ok "profiles --node sim-a: the node-wide figures' heading" ||
    fail "profiles --node headings: $(grep -v '^  ' "$tmp/out")"
# a node (or GPU model) with no report: said of it, not "no profiles reported yet"
# while other nodes' profiles are there
ctl "$OPS" profiles --node nowhere
[ "$rc" -eq 0 ] && grep -q "no profile reported by node 'nowhere'" "$tmp/out" &&
    ok "profiles --node nowhere names the node" || fail "profiles --node nowhere: $(cat "$tmp/out")"
ctl "$OPS" profiles --gpu NoSuchGPU
[ "$rc" -eq 0 ] && grep -q "no profile of GPU model 'NoSuchGPU'" "$tmp/out" &&
    ok "profiles --gpu NoSuchGPU names the model" || fail "profiles --gpu NoSuchGPU: $(cat "$tmp/out")"

# ---- planning on the registered workers ---------------------------------------------------
# one schedule family on both sides: which fields a plan carries (iter_time_1f1b_s,
# interleave, slicer) depends on the schedule the search picks on each cluster and on
# whether the slicer helps its start-up there
# --pp 2 here and in the --local plan below: the stage count the search picks follows
# the figures (the workers' simulated profile against the built-in H100), and a
# pipelined plan carries keys a one-stage one does not (master_stage, tie_s,
# sim_iter_time_s); pinned, the two documents compare, the pipeline's keys included
ctl "$SCHED" plan --model GPT2-345M --cluster registered --batch 16 --no-baselines \
    --no-interleave --no-zero-bubble --no-slicer --pp 2 --json
if [ "$rc" -eq 0 ] && [ "$(q "$tmp/out" "d['cluster']['devices']")" = 4 ]; then
    ok "plan --cluster registered: 4 GPUs of 2 workers"
else
    fail "plan --cluster registered: exit $rc $(head -c 300 "$tmp/out") $(cat "$tmp/err")"
fi
fp=$(q "$tmp/out" "d['fingerprint']")
[ "$(q "$tmp/out" "any(re.search('H100-80G-sim compute: .* gemm_fwd .*simulated', s) for s in d['figures']['details'])")" = True ] &&
    [ "$(q "$tmp/out" "d['figures']['compute']")" = simulated ] &&
    [ "$(q "$tmp/out" "d['figures']['profile']")" = registered ] &&
    ok "the plan names the source of the compute figure tesseld assembled (figures.details)" ||
    fail "figures: $(q "$tmp/out" "d.get('figures')")"
# the same document as a plan made in-process: the same keys, figures included
"$CTL" plan --local --model GPT2-345M --cluster 2x2xH100-80G --batch 16 --no-baselines \
    --no-interleave --no-zero-bubble --no-slicer --pp 2 --json >"$tmp/local.json" 2>/dev/null
[ "$("$PY" -c 'import json,sys; a,b=(json.load(open(f)) for f in sys.argv[1:]); print(sorted(a)==sorted(b) and sorted(a["figures"])==sorted(b["figures"]) and sorted(a["plan"])==sorted(b["plan"]))' "$tmp/local.json" "$tmp/out")" = True ] &&
    ok "a registered plan's document has the keys of a --local one" ||
    fail "registered vs local keys: $("$PY" -c 'import json,sys; a,b=(json.load(open(f)) for f in sys.argv[1:]); print(set(a["plan"])^set(b["plan"]), set(a)^set(b), set(a["figures"])^set(b["figures"]))' "$tmp/local.json" "$tmp/out")"
grep -q "H100-80G-sim" "$tmp/out" && ok "the plan's GPU type says simulated" || fail "GPU type name"
grep -q "$fp: H100-80G-sim prices layers by [0-9]* simulated block times" "$tmp/tesseld.log" &&
    ok "tesseld priced the layers by the workers' block times" || fail "no profile attached (tesseld.log)"
# eval on the registered workers: the client fetches the cluster tesseld assembles
# (GetRegisteredCluster), builds the plan on it, and tesseld prices it
ctl "$SCHED" eval --model GPT2-345M --cluster registered --tp 2 --pp 1 --batch 16 --no-search --json
[ "$rc" -eq 0 ] && [ "$(q "$tmp/out" "d['cluster']['devices']")" = 4 ] &&
    [ "$(q "$tmp/out" "'H100-80G-sim' in d['cluster']['description']")" = True ] &&
    ok "eval --cluster registered: the plan built and priced on the 4 registered GPUs" ||
    fail "eval --cluster registered: exit $rc $(head -c 300 "$tmp/out") $(cat "$tmp/err")"
ctl "$SCHED" plan --model GPT2-345M --nodes sim-b --batch 8 --no-baselines
[ "$rc" -eq 0 ] && grep -q "^  H100-80G-sim compute: " "$tmp/out" && grep -q "1 node x 2" "$tmp/out" &&
    ok "plan --nodes sim-b: one node, with the figures' sources under the table" || fail "plan --nodes: $(head -5 "$tmp/out") $(cat "$tmp/err")"
grep -q "^  left out: sim-a (not in cluster.registered.nodes)" "$tmp/out" &&
    ok "plan --nodes sim-b: the answer names sim-a as left out, not named" || fail "no 'left out: sim-a': $(tail -5 "$tmp/out")"
ctl "$SCHED" plan --model GPT2-345M --nodes sim-a,nowhere
[ "$rc" -eq 2 ] && grep -q "cluster.registered.nodes\[1\]: 'nowhere' is not a registered worker" "$tmp/err" &&
    ok "plan --nodes of an unknown node: INVALID_ARGUMENT naming the field and the name (exit 2)" ||
    fail "--nodes nowhere: exit $rc $(cat "$tmp/err")"
ctl "$SCHED" plan --model GPT2-345M --nodes sim-a,sim-a
[ "$rc" -eq 2 ] && grep -q "cluster.registered.nodes\[1\]: 'sim-a' is named twice" "$tmp/err" &&
    ok "plan --nodes naming a worker twice: refused" || fail "--nodes sim-a,sim-a: exit $rc $(cat "$tmp/err")"

kill -USR1 "$wa"
ok_stale=0
for _ in $(seq 1 50); do
    ctl "$OPS" plans list --json
    [ "$(q "$tmp/out" "[p['stale'] for p in d['plans'] if p['fingerprint']=='$fp']")" = "[True]" ] && { ok_stale=1; break; }
    sleep 0.2
done
[ $ok_stale -eq 1 ] && ok "a new profile for the hardware key marks the plan stale" ||
    fail "plan $fp not stale after a new profile"

# ---- a killed worker goes offline, and comes back as itself -------------------------------
kill -KILL "$wb"
wait "$wb" 2>/dev/null
if wait_for 20 "[w['state'] for w in d['workers'] if w['hostname']=='sim-b'] == ['offline']"; then
    ok "SIGKILLed worker is offline after the timeout"
else
    fail "sim-b not offline: $(cat "$tmp/out")"
fi
[ "$(state_of sim-a)" = online ] && ok "the other worker stays online" || fail "sim-a: $(state_of sim-a)"
ctl "$SCHED" plan --model GPT2-345M --nodes sim-b
[ "$rc" -eq 4 ] && grep -q "no online worker.*(sim-b (offline since [0-9:]*).*start tessel-worker" "$tmp/err" &&
    ok "plan --nodes on an offline worker alone: FAILED_PRECONDITION saying why (exit 4)" ||
    fail "--nodes offline: exit $rc $(cat "$tmp/err")"
ctl "$SCHED" plan --model GPT2-345M --cluster registered --batch 8 --no-baselines --json
[ "$rc" -eq 0 ] && [ "$(q "$tmp/out" "d['cluster']['devices']")" = 2 ] &&
    [ "$(q "$tmp/out" "any(re.match(r'sim-b \(offline since [0-9:]+\)', w) for w in d['figures']['workers_left_out'])")" = True ] &&
    ok "plan --cluster registered with sim-b offline: 2 GPUs, sim-b named as left out" ||
    fail "registered with one offline: exit $rc $(cat "$tmp/err")"
start_worker sim-b
wb=$wpid
if wait_for 20 "[w['state'] for w in d['workers'] if w['hostname']=='sim-b'] == ['online']"; then
    ok "restarted worker is online again"
else
    fail "sim-b did not come back"
fi
[ "$(id_of sim-b)" = "$id_b" ] && ok "... with its identity ($id_b)" || fail "id changed: $(id_of sim-b) != $id_b"
[ "$(q "$tmp/out" "len(d['workers'])")" = 2 ] && ok "no duplicate worker row" || fail "worker rows: $(q "$tmp/out" "len(d['workers'])")"
grep -q "identity restored" "$tmp/sim-b.log" && ok "the worker logs its restored identity" || fail "no 'identity restored' in sim-b.log"

# ---- wrong tokens ----------------------------------------------------------------------------
printf 'not-the-token\n' >"$tmp/bad.token"
chmod 600 "$tmp/bad.token"
start_worker sim-x --token-file "$tmp/bad.token"
wx=$wpid
st=
for _ in $(seq 1 100); do
    kill -0 "$wx" 2>/dev/null || { wait "$wx"; st=$?; break; }
    sleep 0.1
done
[ "$st" = 1 ] && grep -q UNAUTHENTICATED "$tmp/sim-x.log" &&
    ok "a worker with a wrong token is refused and exits 1" || fail "bad-token worker: status '$st'"
ctl "$WTOKEN" plan --model GPT2-345M --cluster registered
[ "$rc" -eq 4 ] && ok "the worker role may not plan (exit 4)" || fail "worker token planning: exit $rc"
ctl nope workers
[ "$rc" -eq 4 ] && ok "tesselctl workers with a wrong token: exit 4" || fail "bad token workers: exit $rc"

# ---- SIGTERM deregisters ------------------------------------------------------------------------
kill -TERM "$wa"
st=
for _ in $(seq 1 100); do
    kill -0 "$wa" 2>/dev/null || { wait "$wa"; st=$?; break; }
    sleep 0.1
done
[ "$st" = 0 ] && ok "SIGTERM: the worker exits 0" || fail "SIGTERM exit status '$st'"
ctl "$OPS" workers --json
[ "$(state_of sim-a)" = stopped ] && ok "deregistered: sim-a is stopped at once" || fail "sim-a state $(state_of sim-a)"
ctl "$SCHED" plan --model GPT2-345M --cluster registered --batch 8 --no-baselines --json
[ "$rc" -eq 0 ] && [ "$(q "$tmp/out" "any(re.match(r'sim-a \(stopped at [0-9:]+\)', w) for w in d['figures']['workers_left_out'])")" = True ] &&
    ok "a stopped worker is left out of --cluster registered, and named" ||
    fail "registered with sim-a stopped: exit $rc $(cat "$tmp/err")"

# ---- the spool: measured while tesseld is down, sent when it is back ------------------------------
stop_pid "$daemon_pid"
start_worker sim-c
wc=$wpid
spooled=0
for _ in $(seq 1 100); do
    ls "$tmp/state-sim-c/spool/"*.report >/dev/null 2>&1 && { spooled=1; break; }
    sleep 0.1
done
[ $spooled -eq 1 ] && ok "with tesseld down the profile waits in the spool" || fail "nothing spooled"
start_daemon || fail "tesseld did not come back"
if wait_for 30 "[w['profile_unix'] > 0 for w in d['workers'] if w['hostname']=='sim-c'] == [True]"; then
    ok "the spooled profile arrived once tesseld was back"
else
    fail "sim-c's profile never arrived"
fi
ls "$tmp/state-sim-c/spool/"*.report >/dev/null 2>&1 && fail "spool not emptied" || ok "spool emptied"
grep -q "next try in" "$tmp/sim-c.log" && ok "the worker retried with backoff" || fail "no retry logged"

# ---- a precision file on registered GPUs without FP8 -------------------------------------------
# plan --local drops --te-precision-config-file's overrides where no FP8 plan is weighed
# (Megatron-core applies them inside a quantized autocast only); on --nodes only tesseld
# knows the GPUs, so its refusal makes tesselctl ask again without them, with plan
# --local's note; the --module-precision switch itself stays refused, naming it
"$PY" - "$(dirname "$DEVICE_FILE")/a100-80g.json" "$tmp/dev-a100.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["gpus"] = 2
json.dump(d, open(sys.argv[2], "w"))
PY
start_worker sim-d --device-file "$tmp/dev-a100.json"
wd=$wpid
wait_for 30 "[w['profile_unix'] > 0 for w in d['workers'] if w['hostname']=='sim-d'] == [True]" ||
    fail "sim-d (A100) never reported a profile"
ctl "$SCHED" plan --model GPT2-345M --nodes sim-d --batch 8 --no-baselines --json \
    --te-precision-config-file "$(dirname "$0")/../data/megatron/te_precision_proj_bf16.yaml"
[ "$rc" -eq 0 ] && [ "$(q "$tmp/out" "d['plan'].get('module_precision', 0)")" = 0 ] &&
    grep -q "note: --te-precision-config-file: its overrides apply inside a quantized autocast only, and no FP8 plan is weighed on the registered cluster (.*), so nothing is overridden" "$tmp/err" &&
    ok "plan --te-precision-config-file on registered A100s: planned without the overrides, as --local" ||
    fail "te-precision file on registered A100s: exit $rc $(cat "$tmp/err")"
ctl "$SCHED" plan --model GPT2-345M --nodes sim-d --batch 8 --no-baselines \
    --module-precision linear_proj=bf16
[ "$rc" -eq 2 ] && grep -q "no FP8 plan is weighed on this cluster: drop --module-precision" "$tmp/err" &&
    ok "plan --module-precision on registered A100s: refused, naming the switch" ||
    fail "--module-precision on registered A100s: exit $rc $(cat "$tmp/err")"

stop_pid "$wb"
stop_pid "$wc"
stop_pid "$wd"
stop_pid "$daemon_pid"
# A build with -Db_sanitize=... reports into the logs.
if grep -lE 'ERROR: (Address|Leak|Thread)Sanitizer|runtime error:' "$tmp"/*.log 2>/dev/null; then
    fail "a sanitizer reported an error (log above)"
fi
if [ "$failures" -ne 0 ]; then
    echo "$failures check(s) failed"
    exit 1
fi
echo "all checks passed"
