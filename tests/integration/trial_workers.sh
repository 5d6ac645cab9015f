#!/usr/bin/env bash
# trial_workers.sh — trials end to end with real processes (docs/api.md "Trials"):
# tesseld and two `sim` tessel-workers (one simulated GPU each) on a private unix
# socket; `tesselctl plan --cluster registered` of a tiny GPT (4 blocks, hidden
# 64) that runs in seconds on the cpu device ops; Trials.StartTrial; GetTrial
# until it ends. Checked:
#   the trial is done, each rank measured (iterations, median within min..max,
#   peak memory, phases) on the worker it was given, measured and predicted
#   shown side by side;
#   through tesselctl: trial start --top-k 2 --wait, plans show's measured
#   section with the chosen plan, trial list; a stale plan tried all the same,
#   plan_stale in the reply, a warning from tesselctl, a line in the daemon's log;
#   the trials (the cpu executor) never calibrate the simulated GPU's figures:
#   the log says so, profiles shows no calibration, a new search is uncalibrated;
#   a second, long trial where one worker is killed (SIGKILL, its ranks die with
#   it) mid-trial fails with a clear reason, and the daemon and the other worker
#   stay up.
#
# usage: trial_workers.sh TESSELD PROTO_DIR TESSELCTL TESSEL_WORKER DEVICE_FILE
. "$(dirname "$0")/lib.sh"
CTL=${3:?usage: trial_workers.sh TESSELD PROTO_DIR TESSELCTL TESSEL_WORKER DEVICE_FILE}
WORKER=${4:?usage}
DEVICE_FILE=${5:?usage}

start_trial_daemon
rpc_to "$T" health >/dev/null # generates the Python stubs in $STUBS

port=$(( 30000 + $$ % 20000 ))
start_sim_workers "$port" trial- trial-a trial-b

# The workers online with a profile (a registered plan needs their figures).
wait_profiled 2
ok "two sim workers registered"

cat >"$TMPD/tiny.json" <<'JSON'
{"model_type": "gpt2", "n_layer": 4, "n_embd": 64, "n_head": 4, "n_positions": 32, "vocab_size": 128}
JSON
# bf16: the executor runs no FP8 GEMMs (an FP8 plan is refused below)
if timeout 120 "$CTL" --server "$T" plan --hf-config "$TMPD/tiny.json" --cluster registered \
    --batch 8 --no-baselines --no-fp8 --json >"$TMPD/plan.json" 2>"$TMPD/plan.log"; then
    ok "a plan on --cluster registered"
else
    fail "tesselctl plan --cluster registered: $(cat "$TMPD/plan.log")"
    finish
fi
FP=$(jget "$TMPD/plan.json" fingerprint)

# a plan the executor would run as another one: refused before any worker is asked,
# the plan field named (planner/plan_scope.c)
timeout 120 "$CTL" --server "$T" plan --hf-config "$TMPD/tiny.json" --cluster registered \
    --batch 8 --no-baselines --fp8-recipe 1 --json >"$TMPD/plan8.json" 2>"$TMPD/plan8.log"
FP8=$(jget "$TMPD/plan8.json" fingerprint)
timeout 60 "$CTL" --server "$T" trial start "$FP8" >"$TMPD/start8.out" 2>&1
rc8=$?
[ "$rc8" -eq 4 ] && grep -q "FP8 linear GEMMs (delayed).*the executor cannot try it" "$TMPD/start8.out" &&
    ok "trial start of an FP8 plan: FAILED_PRECONDITION naming FP8 (exit 4)" ||
    fail "trial start of an FP8 plan: exit $rc8: $(cat "$TMPD/start8.out")"

# a hybrid model's plan: the executor runs no Mamba-2 layer (the document's
# model.mamba_layers; planner/plan_scope.c tsl_exec_scope_mamba)
cat >"$TMPD/hybrid.json" <<'JSON'
{"model_type": "nemotron_h", "hidden_size": 64, "num_hidden_layers": 3, "num_attention_heads": 4,
 "num_key_value_heads": 2, "head_dim": 16, "vocab_size": 128, "max_position_embeddings": 32,
 "hybrid_override_pattern": "M*E", "mamba_num_heads": 4, "mamba_head_dim": 16,
 "ssm_state_size": 16, "n_groups": 2, "chunk_size": 16, "n_routed_experts": 4,
 "num_experts_per_tok": 2, "moe_intermediate_size": 32, "moe_shared_expert_intermediate_size": 32}
JSON
timeout 120 "$CTL" --server "$T" plan --hf-config "$TMPD/hybrid.json" --cluster registered \
    --batch 8 --no-baselines --no-fp8 --json >"$TMPD/planm.json" 2>"$TMPD/planm.log"
FPM=$(jget "$TMPD/planm.json" fingerprint)
timeout 60 "$CTL" --server "$T" trial start "$FPM" >"$TMPD/startm.out" 2>&1
rcm=$?
[ "$rcm" -eq 4 ] && grep -q "1 Mamba-2 mixer layers.*the executor cannot try it" "$TMPD/startm.out" &&
    ok "trial start of a hybrid plan: FAILED_PRECONDITION naming the Mamba layers (exit 4)" ||
    fail "trial start of a hybrid plan: exit $rcm: $(cat "$TMPD/startm.out" "$TMPD/planm.log")"

# ---- through tesselctl: the top 2 run one after the other, the measured best
# becomes the answer, plans show prints measured beside predicted ----
if timeout 240 "$CTL" --server "$T" trial start --top-k 2 --iterations 2 --warmup 1 --wait "$FP" \
    >"$TMPD/cli-start.out" 2>"$TMPD/cli-start.err"; then
    ok "tesselctl trial start --top-k 2 --wait: exit 0"
else
    fail "tesselctl trial start --wait: exit $?: $(cat "$TMPD/cli-start.out" "$TMPD/cli-start.err")"
fi
# a ZB-H1 plan runs as 1F1B over its own stages and is held to their 1F1B figure
# (handlers_trials.c trial_predicted_s); any other plan to its iteration
T0=$(grep -Eo "^Trial t-[^:]+" "$TMPD/cli-start.out" | head -1 | cut -d' ' -f2)
timeout 60 "$CTL" --server "$T" trial show "$T0" --json >"$TMPD/t0.json" 2>&1
[ "$("$PY" -c '
import json, sys
plan = json.load(open(sys.argv[1]))["plan"]
t = json.load(open(sys.argv[2]))
t = t.get("trial", t)
want = plan["iter_time_1f1b_s"] if plan.get("schedule") == "zbh1" else plan["iter_time_s"]
print(abs(t["predicted_iter_time_s"] - want) <= 1e-12 * want)' "$TMPD/plan.json" "$TMPD/t0.json")" = True ] &&
    ok "the trial is held to the plan's figure (ZB-H1: its 1F1B figure; this plan: $(jget "$TMPD/plan.json" plan.schedule))" ||
    fail "predicted: $(head -c 400 "$TMPD/t0.json") schedule $(jget "$TMPD/plan.json" plan.schedule)"
grep -Eq "^Trial t-[^:]+: done" "$TMPD/cli-start.out" &&
    grep -q "iteration: predicted .* measured .* error" "$TMPD/cli-start.out" &&
    ok "each trial printed done, with predicted, measured and the error" ||
    fail "trial start --wait printed: $(cat "$TMPD/cli-start.out")"
timeout 60 "$CTL" --server "$T" plans show "$FP" >"$TMPD/show.out" 2>&1
grep -q "^Measured (trials of this plan" "$TMPD/show.out" && grep -Eq "chosen" "$TMPD/show.out" &&
    ok "plans show: the measured section marks the chosen plan" ||
    fail "plans show: $(tail -8 "$TMPD/show.out")"
timeout 60 "$CTL" --server "$T" trial list "$FP" >"$TMPD/list.out" 2>&1
[ "$(grep -Ec "^t-[^ ]+ +done" "$TMPD/list.out")" -ge 1 ] && ok "trial list: the done trials" ||
    fail "trial list: $(cat "$TMPD/list.out")"
! grep -q "STALE" "$TMPD/list.out" "$TMPD/cli-start.out" &&
    ok "trial list and show of a fresh plan's trials: no STALE" ||
    fail "a fresh plan's trials marked stale: $(grep STALE "$TMPD/list.out" "$TMPD/cli-start.out")"
! grep -q "stale" "$TMPD/cli-start.err" && ok "trial start of a fresh plan: no stale warning" ||
    fail "trial start of a fresh plan: $(cat "$TMPD/cli-start.err")"

# ---- a stale plan (a new profile or a cost-model upgrade marks it; here behind the
# daemon's back) is tried as stored, and the reply and tesselctl say so: its trials
# are held to the stored prediction. It stays stale for the rest of the script. ----
set_stale "$TMPD/t.db" "$FP" 1
if timeout 240 "$CTL" --server "$T" trial start --iterations 2 --warmup 1 --wait --json "$FP" \
    >"$TMPD/stale.out" 2>"$TMPD/stale.err" &&
    [ "$(jget "$TMPD/stale.out" plan_stale)" = True ] &&
    grep -q "^tesselctl: trial start: warning: plan $FP is stale" "$TMPD/stale.err" &&
    grep -q "plan $FP is stale .*its trials are held to its stored prediction" "$TMPD/d.log"; then
    ok "trial start of a stale plan: runs, plan_stale in the reply, a warning, the daemon logs it"
else
    fail "trial start of a stale plan: $(head -c 300 "$TMPD/stale.out") $(cat "$TMPD/stale.err") $(grep "is stale" "$TMPD/d.log")"
fi
# its trials, those run before it went stale too, are marked by trial show and trial
# list (Trial.plan_stale: the plan's row as it is now)
timeout 60 "$CTL" --server "$T" trial show "$T0" >"$TMPD/show-stale.out" 2>&1
timeout 60 "$CTL" --server "$T" trial show "$T0" --json >"$TMPD/show-stale.json" 2>&1
timeout 60 "$CTL" --server "$T" trial list "$FP" >"$TMPD/list-stale.out" 2>&1
if grep -q "^  plan:      $FP #.* STALE: a profile it was priced from changed since" "$TMPD/show-stale.out" &&
    "$PY" -c 'import json,sys; t=json.load(open(sys.argv[1])); sys.exit(0 if t.get("trial", t)["plan_stale"] is True else 1)' "$TMPD/show-stale.json" &&
    [ "$(grep -Ec "^t-[^ ]+ +done .* STALE$" "$TMPD/list-stale.out")" -ge 2 ] &&
    grep -q "^STALE: the trial's plan is stale now" "$TMPD/list-stale.out"; then
    ok "trial show and trial list mark the stale plan's trials"
else
    fail "stale trials unmarked: $(cat "$TMPD/show-stale.out" "$TMPD/list-stale.out") $(head -c 300 "$TMPD/show-stale.json")"
fi

# ---- calibration: these trials timed the cpu executor on sim workers, not the
# simulated GPU: they never calibrate its figures. The daemon says so for each,
# profiles shows no calibration, and a new search on the registered cluster
# (another batch) is priced as before, without "calibrated from" ----
grep -q "not used for calibration: it timed the cpu executor on simulated workers" "$TMPD/d.log" &&
    ok "tesseld logs that a cpu-executor trial is not used for calibration" ||
    fail "no calibration note in the log: $(grep -i calibrat "$TMPD/d.log" | tail -3)"
timeout 60 "$CTL" --server "$T" profiles >"$TMPD/profiles.out" 2>&1
! grep -q "calib_compute\|calib_iter_error" "$TMPD/profiles.out" &&
    ok "tesselctl profiles: no calibration fitted from cpu-executor trials" ||
    fail "a calibration from sim trials: $(grep calib "$TMPD/profiles.out")"
if timeout 120 "$CTL" --server "$T" plan --hf-config "$TMPD/tiny.json" --cluster registered \
    --batch 4 --no-baselines --json >"$TMPD/plan2.json" 2>"$TMPD/plan2.log" &&
    ! grep -q "calibrated from [0-9]* trial" "$TMPD/plan2.json"; then
    ok "a new search on the registered cluster is not calibrated by them"
else
    fail "re-plan: $(grep -o '"line": "[^"]*"' "$TMPD/plan2.json") $(cat "$TMPD/plan2.log")"
fi
"$PY" -c 'import json,sys; a=json.load(open(sys.argv[1]))["plan"]; b=json.load(open(sys.argv[2]))["plan"]; sys.exit(0 if b["iter_time_s"] < 10 * a["iter_time_s"] else 1)' \
    "$TMPD/plan.json" "$TMPD/plan2.json" &&
    ok "the prediction did not move toward the cpu executor's times" ||
    fail "the prediction moved x10 or more"

cat >"$TMPD/drive.py" <<'PY'
import json, os, signal, sys, time
sys.path.insert(0, sys.argv[1])
import grpc
from tessel.v1 import trials_pb2 as tp, trials_pb2_grpc as tg

target, fp, victim = sys.argv[2], sys.argv[3], int(sys.argv[4])
trials = tg.TrialsStub(grpc.insecure_channel(target))
failures = 0


def check(what, cond, extra=""):
    global failures
    print(("ok: " if cond else "FAIL: ") + what + (" (%s)" % extra if extra and not cond else ""),
          flush=True)
    failures += 0 if cond else 1


def until_over(tid, secs, each=None):
    end = time.time() + secs
    while time.time() < end:
        t = trials.GetTrial(tp.GetTrialRequest(trial_id=tid), timeout=30)
        if t.status in ("done", "failed"):
            return t
        if each:
            each(t)
        time.sleep(0.3)
    return t


# ---- a trial runs to the end ----
r = trials.StartTrial(tp.StartTrialRequest(plan_fingerprint=fp, iterations=3, warmup=1,
                                           timeout_s=240), timeout=30)
t = until_over(r.trial_ids[0], 240)
check("the trial is done", t.status == "done", t.status + " " + t.error)
check("it ran on the sim workers with cpu device ops and tcp",
      t.simulated and t.devops == "cpu" and t.comm == "tcp", "%s %s" % (t.devops, t.comm))
check("every rank measured: 3 iterations' median within min..max, peak memory, phases",
      len(t.ranks) == t.world_size >= 1 and all(
          k.state == "done" and 0 < k.iter_min_s <= k.iter_time_s <= k.iter_max_s and
          k.peak_bytes > 0 and k.phase_s["fwd"] > 0 and k.phase_s["bwd"] > 0 and not k.error
          for k in t.ranks), str(t.ranks))
check("the ranks ran on both workers", len({k.hostname for k in t.ranks}) == min(2, t.world_size),
      str({k.hostname for k in t.ranks}))
check("measured next to predicted, with the error",
      t.measured_iter_time_s > 0 and t.predicted_iter_time_s > 0 and t.measured_peak_bytes > 0 and
      abs(t.time_error - (t.predicted_iter_time_s - t.measured_iter_time_s) /
          t.measured_iter_time_s) < 1e-6,
      "measured %g predicted %g" % (t.measured_iter_time_s, t.predicted_iter_time_s))

# ---- a worker killed mid-trial fails the trial ----
r = trials.StartTrial(tp.StartTrialRequest(plan_fingerprint=fp, iterations=100000, warmup=1,
                                           timeout_s=240), timeout=30)
tid = r.trial_ids[0]
killed = []


def kill_when_running(t):
    if not killed and t.status == "running" and all(k.state == "running" for k in t.ranks):
        time.sleep(1)
        os.kill(victim, signal.SIGKILL)
        killed.append(time.time())


t = until_over(tid, 120, kill_when_running)
check("the worker was killed while its rank ran", bool(killed))
check("the trial failed", t.status == "failed", t.status)
check("with a clear reason", t.error != "" and ("rank" in t.error or "offline" in t.error),
      t.error)
print("reason: " + t.error, flush=True)
sys.exit(1 if failures else 0)
PY
"$PY" "$TMPD/drive.py" "$STUBS" "$T" "$FP" "$pid_b" >"$TMPD/drive.out" 2>&1
rc=$?
cat "$TMPD/drive.out"
[ "$rc" -eq 0 ] || fail "the trials did not go as expected"

timeout 20 "$CTL" --server "$T" workers >/dev/null 2>&1 && ok "tesseld still answers" ||
    fail "tesseld stopped answering"
kill -0 "$pid_a" 2>/dev/null && ok "the other worker still runs" || fail "worker a died"
grep -q "trial .*: rank .* started" "$TMPD/trial-a.log" && ok "worker a ran a rank" ||
    fail "worker a never started a rank"
finish
