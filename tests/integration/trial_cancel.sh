#!/usr/bin/env bash
# trial_cancel.sh — cancelling a trial end to end (docs/api.md "CancelTrial"), and
# /metrics' worker gauge and method names: tesseld (with --http) and two `sim`
# tessel-workers on a private unix socket; a tiny GPT planned on --cluster
# registered. Checked:
#   a long trial (100000 iterations) running on both workers, with a short one
#   queued behind it, is cancelled with `tesselctl trial cancel`: it shows
#   cancelled with the reason, the workers stop its ranks, and the queued trial
#   runs to done on them; cancelling again answers the cancelled trial, a done
#   trial is refused (exit 4, naming its state), an unknown id exits 3;
#   /metrics: tessel_workers{state="online"} 2, a cancelled event counted, every
#   method label "Service.Method".
#
# usage: trial_cancel.sh TESSELD PROTO_DIR TESSELCTL TESSEL_WORKER DEVICE_FILE
. "$(dirname "$0")/lib.sh"
CTL=${3:?usage: trial_cancel.sh TESSELD PROTO_DIR TESSELCTL TESSEL_WORKER DEVICE_FILE}
WORKER=${4:?usage}
DEVICE_FILE=${5:?usage}

SOCK=$TMPD/tesseld.sock
T=unix:$SOCK
HPORT=$(free_port)
start_daemon d --unix-socket "$SOCK" --database "$TMPD/t.db" --pool-size 1 --worker-timeout 3 \
    --http "127.0.0.1:$HPORT"
wait_healthy "$T" || { fail "tesseld did not become healthy"; finish; }

port=$(( 30000 + ($$ + 7000) % 20000 ))
start_sim_workers "$port" cancel- cancel-a cancel-b
wait_profiled 2
ok "two sim workers registered"

cat >"$TMPD/tiny.json" <<'JSON'
{"model_type": "gpt2", "n_layer": 4, "n_embd": 64, "n_head": 4, "n_positions": 32, "vocab_size": 128}
JSON
timeout 120 "$CTL" --server "$T" plan --hf-config "$TMPD/tiny.json" --cluster registered \
    --batch 8 --no-baselines --json >"$TMPD/plan.json" 2>"$TMPD/plan.log" ||
    { fail "plan --cluster registered: $(cat "$TMPD/plan.log")"; finish; }
FP=$(jget "$TMPD/plan.json" fingerprint)

show() { timeout 30 "$CTL" --server "$T" --json trial show "$1" 2>/dev/null; }
field() { show "$1" | "$PY" -c 'import json,sys; print(json.load(sys.stdin).get(sys.argv[1], ""))' "$2"; }

LONG=$(timeout 30 "$CTL" --server "$T" trial start --iterations 100000 --warmup 1 --timeout 600 "$FP")
NEXT=$(timeout 30 "$CTL" --server "$T" trial start --iterations 2 --warmup 1 --timeout 240 "$FP")
[ -n "$LONG" ] && [ -n "$NEXT" ] && ok "a long trial and a short one queued behind it" ||
    { fail "trial start: '$LONG' '$NEXT'"; finish; }

# Every rank of the long trial running on its worker.
for _ in $(seq 150); do
    show "$LONG" | "$PY" -c 'import json,sys; t=json.load(sys.stdin); sys.exit(0 if t["status"] == "running" and all(r.get("state") == "running" for r in t["ranks"]) else 1)' && break
    sleep 0.2
done
[ "$(field "$LONG" status)" = running ] && [ "$(field "$NEXT" status)" = pending ] &&
    ok "the long trial runs, the short one waits for its workers" ||
    fail "before the cancel: long $(field "$LONG" status), next $(field "$NEXT" status)"
sleep 1

if timeout 30 "$CTL" --server "$T" trial cancel --reason "mis-sized" "$LONG" >"$TMPD/cancel.out" 2>&1; then
    ok "tesselctl trial cancel: exit 0"
else
    fail "trial cancel: exit $?: $(cat "$TMPD/cancel.out")"
fi
grep -q "^Trial $LONG: cancelled" "$TMPD/cancel.out" && grep -q "ended: *cancelled: mis-sized" "$TMPD/cancel.out" &&
    ok "it prints the trial cancelled, with the reason" || fail "cancel printed: $(cat "$TMPD/cancel.out")"
[ "$(field "$LONG" status)" = cancelled ] && [ "$(field "$LONG" finished_unix)" != 0 ] &&
    ok "GetTrial: cancelled, with its end time" || fail "after the cancel: $(show "$LONG")"

# The workers were told: each stops its rank (and logs it) and takes the next trial.
# A rank may end on its own first (its tcp peer, stopped already, is gone) and be
# reaped before the cancel reaches its worker: the answer to its report tells the
# worker, which logs that the rank had already ended.
STOPPED="trial $LONG: (rank .* stopped|cancelled: rank .* had already ended)"
for _ in $(seq 100); do
    grep -Eq "$STOPPED" "$TMPD/cancel-a.log" && grep -Eq "$STOPPED" "$TMPD/cancel-b.log" && break
    sleep 0.2
done
grep -Eq "$STOPPED" "$TMPD/cancel-a.log" && grep -Eq "$STOPPED" "$TMPD/cancel-b.log" &&
    ok "both workers stopped their rank of the cancelled trial" ||
    fail "workers not stopped: $(grep "$LONG" "$TMPD"/cancel-*.log | tail -6)"
if timeout 240 "$CTL" --server "$T" trial watch "$NEXT" >"$TMPD/next.out" 2>&1; then
    ok "the queued trial then ran on the freed workers to done"
else
    fail "the next trial: $(cat "$TMPD/next.out")"
fi

timeout 30 "$CTL" --server "$T" trial cancel "$LONG" >"$TMPD/again.out" 2>&1 &&
    grep -q ": cancelled" "$TMPD/again.out" && ok "cancelling again answers the cancelled trial" ||
    fail "second cancel: $(cat "$TMPD/again.out")"
timeout 30 "$CTL" --server "$T" trial cancel "$NEXT" >"$TMPD/done.out" 2>&1
rc=$?
[ "$rc" = 4 ] && grep -q "is done already" "$TMPD/done.out" &&
    ok "a done trial is refused, naming its state (exit 4)" ||
    fail "cancel of a done trial: exit $rc: $(cat "$TMPD/done.out")"
timeout 30 "$CTL" --server "$T" trial cancel t-0000000000000000 >"$TMPD/unknown.out" 2>&1
rc=$?
[ "$rc" = 3 ] && ok "an unknown trial: exit 3" || fail "unknown trial: exit $rc: $(cat "$TMPD/unknown.out")"

# ---- /metrics ----
sleep 1.5 # the housekeeping tick re-counts the workers once a second
"$PY" -c 'import sys, urllib.request as u; print(u.urlopen(sys.argv[1], timeout=5).read().decode())' \
    "http://127.0.0.1:$HPORT/metrics" >"$TMPD/metrics.txt"
grep -qx 'tessel_workers{state="online"} 2' "$TMPD/metrics.txt" &&
    grep -qx 'tessel_workers{state="offline"} 0' "$TMPD/metrics.txt" &&
    grep -qx 'tessel_workers{state="stopped"} 0' "$TMPD/metrics.txt" &&
    ok "/metrics: tessel_workers by state" || fail "/metrics workers: $(grep tessel_workers "$TMPD/metrics.txt")"
grep -qx 'tessel_trials_total{event="cancelled"} 1' "$TMPD/metrics.txt" &&
    ok "/metrics: the cancel counted" || fail "/metrics trials: $(grep tessel_trials_total "$TMPD/metrics.txt")"
bad=$(grep '^tessel_requests_total' "$TMPD/metrics.txt" | grep -Ev 'method="(other|[A-Z][A-Za-z]*\.[A-Z][A-Za-z]*)"')
grep -q 'method="Trials.CancelTrial"' "$TMPD/metrics.txt" && grep -q 'method="Planner.Plan"' "$TMPD/metrics.txt" &&
    [ -z "$bad" ] && ok "/metrics: every method label is Service.Method" ||
    fail "/metrics method labels: $bad $(grep -c 'method=' "$TMPD/metrics.txt")"
finish
