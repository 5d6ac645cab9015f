#!/usr/bin/env bash
# cli_trial.sh — `tesselctl trial` and `plans show` against a real tesseld
# with no worker registered: trial start says what the plan needs (exit 4,
# one line), an unknown trial is exit 3, the listings are empty, and `plans
# show` of a cached plan prints the plan (exit 0) without a "measured" section
# or a "trials" key. Trials run for real through the daemon and sim workers in
# trial_workers.sh.
#
# Then, against fake_trials.py (Trials answered from fixed trials, the rest
# forwarded to the real tesseld): trial show/list/start --wait/watch and the
# measured section of plans show, human and --json, and their exit statuses.
#
# usage: cli_trial.sh TESSELCTL TESSELD PROTO_DIR
set -u
CTL=${1:?usage: cli_trial.sh TESSELCTL TESSELD PROTO_DIR}
DAEMON=${2:?usage: cli_trial.sh TESSELCTL TESSELD PROTO_DIR}
PROTO=${3:?usage: cli_trial.sh TESSELCTL TESSELD PROTO_DIR}
tmp=$(mktemp -d /tmp/tessel-cli-trial.XXXXXX)
sock=$tmp/tesseld.sock
daemon_pid=
failures=0
# shellcheck source=proc.sh
. "$(dirname "$0")/proc.sh" # stop_pid
trap 'stop_pid "$daemon_pid"; rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM
ctl() {
    timeout 120 "$CTL" --server "unix:$sock" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
}

start_tesseld "$DAEMON" "$CTL" "$tmp" 1 || exit 1

# a cached plan to start trials of
ctl plan --model GPT2-345M --cluster 4xA100-40G --batch 16 --json
fp=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["fingerprint"])' "$tmp/out")
[ -n "$fp" ] && ok "a cached plan $fp" || fail "no plan: $(cat "$tmp/err")"

# The Trials service with no worker registered: start says what is missing
# (FAILED_PRECONDITION, exit 4, one line), an unknown trial is exit 3, the
# listings are empty (exit 0), and nothing was stored.
ctl trial start "$fp"
if [ "$rc" -eq 4 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q "needs 4 GPU" "$tmp/err" &&
    ! [ -s "$tmp/out" ]; then
    ok "trial start with no workers: exit 4, one line saying what the plan needs"
else
    fail "trial start with no workers: exit $rc, stdout $(head -c 200 "$tmp/out"), stderr $(cat "$tmp/err")"
fi
# the fingerprint in capitals is the same plan, as plans show takes it
# (common/fingerprint.h): start answers as for the lowercase one, not "no plan"
FP=$(echo "$fp" | tr a-f A-F)
ctl trial start "$FP"
[ "$rc" -eq 4 ] && grep -q "needs 4 GPU" "$tmp/err" &&
    ok "trial start $FP: the plan found in either case" ||
    fail "trial start $FP: exit $rc: $(cat "$tmp/err")"
# a fingerprint that is not 16 hex digits is refused naming it, not listed as "no trials"
ctl trial list zz
[ "$rc" -eq 2 ] && grep -q "plan_fingerprint: 'zz' is not 16 hex digits" "$tmp/err" &&
    ok "trial list zz: exit 2 naming plan_fingerprint" || fail "trial list zz: exit $rc: $(cat "$tmp/out" "$tmp/err")"
# an id with an escape sequence: refused naming it, shown escaped — the raw ESC went
# back to the caller's terminal in the message
ctl trial show $'t-\e[2J'
[ "$rc" -eq 2 ] && grep -qF "trial_id: 't-\x1b[2J' must be 1 to 39 letters" "$tmp/err" &&
    ! grep -q $'\e' "$tmp/err" && ok "trial show of an id with ESC: shown escaped" ||
    fail "trial show ESC: exit $rc: $(cat -A "$tmp/err")"
for args in "trial show t-nope" "trial watch t-nope" "--json trial show t-nope"; do
    # shellcheck disable=SC2086
    ctl $args
    [ "$rc" -eq 3 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && ! [ -s "$tmp/out" ] &&
        ok "$args: exit 3, one line" || fail "$args: exit $rc: $(cat "$tmp/out" "$tmp/err")"
done
for args in "trial list" "trial list $fp"; do
    # shellcheck disable=SC2086
    ctl $args
    [ "$rc" -eq 0 ] && ! grep -q "^t-" "$tmp/out" && ok "$args: no trials, exit 0" ||
        fail "$args: exit $rc: $(cat "$tmp/out" "$tmp/err")"
done
ctl trial list --json
if [ "$rc" -eq 0 ] && python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert not d.get("trials")' "$tmp/out"; then
    ok "trial list --json: an empty list"
else
    fail "trial list --json: exit $rc: $(cat "$tmp/out" "$tmp/err")"
fi

# plans show: the plan as before, no measured section, no "trials" key
ctl plans show "$fp"
if [ "$rc" -eq 0 ] && grep -q "samples/s" "$tmp/out" && ! grep -q "^Measured" "$tmp/out" &&
    ! [ -s "$tmp/err" ]; then
    ok "plans show of a plan without trials: the plan, no measured section"
else
    fail "plans show: exit $rc: $(tail -3 "$tmp/out") $(cat "$tmp/err")"
fi
ctl plans show --json "$fp"
if [ "$rc" -eq 0 ] && python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert "plan" in d and "trials" not in d' "$tmp/out"; then
    ok "plans show --json: the document without a trials key"
else
    fail "plans show --json: exit $rc"
fi
ctl plans show 0000000000000000
[ "$rc" -eq 3 ] && ok "plans show of an unknown plan: exit 3" || fail "unknown plan: exit $rc"
kill -0 "$daemon_pid" 2>/dev/null && ok "tesseld still running" || fail "tesseld died"

# ---- the printing and following of trials, against fake_trials.py: Trials
# answered from fixed trials, everything else forwarded to this tesseld ----
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
if ! "$PY" -c 'import grpc, grpc_tools' 2>/dev/null; then
    echo "note: $PY lacks grpc / grpc_tools: the fake Trials checks are skipped"
else
    fsock=$tmp/fake.sock
    "$PY" "$(dirname "$0")/fake_trials.py" --proto "$PROTO" --stubs "$tmp/stubs" \
        --listen "unix:$fsock" --upstream "unix:$sock" "$fp" >"$tmp/fake.log" 2>&1 &
    fake_pid=$!
    trap 'stop_pid "$daemon_pid"; stop_pid "$fake_pid"; rm -rf "$tmp"' EXIT
    for _ in $(seq 1 150); do
        timeout 5 "$CTL" --server "unix:$fsock" --timeout 2 health >/dev/null 2>&1 && break
        sleep 0.2
    done
    sock=$fsock # ctl now talks to the fake
    ctl trial show t-done
    if [ "$rc" -eq 0 ] && grep -q "^Trial t-done: done" "$tmp/out" &&
        grep -q "iteration: predicted 0.5000 s, measured 0.6250 s, error -20.0%" "$tmp/out" &&
        grep -q "memory:    predicted 2.0 GiB, measured 2.5 GiB, error -20.0%" "$tmp/out" &&
        grep -q "chosen:    the measured best of batch b-1" "$tmp/out" &&
        grep -Eq "^  1 +sim-b +0 +done +0.6100 s .*fwd 0.1830 bwd 0.3660 comm 0.0305 bubble 0.0305" "$tmp/out"; then
        ok "trial show: predicted vs measured, errors, chosen, the ranks with their phases"
    else
        fail "trial show: exit $rc: $(cat "$tmp/out" "$tmp/err")"
    fi
    ctl trial show --json t-done
    "$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["trial_id"]=="t-done" and d["chosen"] is True and d["ranks"][1]["phase_s"]["bwd"] > 0 and d["measured_peak_bytes"] == 2684354560, d' "$tmp/out" &&
        ok "trial show --json: the Trial message, keys as in the proto" || fail "trial show --json: $(head -c 300 "$tmp/out")"
    ctl trial show t-none
    [ "$rc" -eq 3 ] && ok "trial show of an unknown trial: exit 3" || fail "unknown trial: exit $rc"
    ctl trial list "$fp"
    if [ "$rc" -eq 0 ] && grep -Eq "^t-done +done .*-20.0% .*chosen" "$tmp/out" &&
        grep -Eq "^t-fail +failed " "$tmp/out"; then
        ok "trial list: one row per trial, errors and chosen"
    else
        fail "trial list: $(cat "$tmp/out" "$tmp/err")"
    fi
    ctl trial start --top-k 2 --wait "$fp"
    if [ "$rc" -eq 0 ] && [ "$(head -2 "$tmp/out" | tr '\n' ' ')" = "t-done t-alt " ] &&
        grep -q "^Trial t-done: done" "$tmp/out" && grep -q "^Trial t-alt: done" "$tmp/out" &&
        ! [ -s "$tmp/err" ]; then
        ok "trial start --top-k 2 --wait: the ids, then each result (no progress off a tty)"
    else
        fail "trial start --wait: exit $rc: $(cat "$tmp/out" "$tmp/err")"
    fi
    ctl trial start --wait --json "$fp"
    "$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["trial_ids"]==["t-done"] and d["batch_id"]=="b-1" and d["plan_stale"] is False and d["trials"][0]["status"]=="done", d' "$tmp/out" &&
        ok "trial start --wait --json: ids, batch, plan_stale false and the final trials" || fail "start --wait --json: $(cat "$tmp/out")"
    ctl trial start --nodes fail --wait "$fp"
    if [ "$rc" -eq 4 ] && grep -q "failed:    rank 1 (worker w-1 on sim-b)" "$tmp/out"; then
        ok "a failed trial: its reason printed, exit 4"
    else
        fail "failed trial: exit $rc: $(cat "$tmp/out" "$tmp/err")"
    fi
    ctl trial start --nodes stale "$fp"
    [ "$rc" -eq 0 ] && [ "$(cat "$tmp/out")" = t-done ] &&
        grep -q "^tesselctl: trial start: warning: plan $fp is stale .*stored prediction" "$tmp/err" &&
        ok "trial start of a stale plan: the ids, and a warning on stderr (exit 0)" ||
        fail "trial start of a stale plan: exit $rc: $(cat "$tmp/out" "$tmp/err")"
    ctl trial start --nodes stale --json "$fp"
    "$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["plan_stale"] is True, d' "$tmp/out" &&
        ok "trial start --json of a stale plan: plan_stale true" || fail "start --json stale: $(cat "$tmp/out")"
    # a batch with a plan the executor cannot run and one no online workers fit: the
    # others' ids on stdout, the skipped plans on stderr with their reasons, exit 0;
    # --json has them under "skipped"
    ctl trial start --nodes skip --wait "$fp"
    if [ "$rc" -eq 0 ] && [ "$(head -1 "$tmp/out")" = t-done ] &&
        grep -q "^Trial t-done: done" "$tmp/out" && ! grep -q "t-skip\|t-nofit" "$tmp/out" &&
        grep -qx "tesselctl: trial start: plan #2 (tessel) not run (trial t-skip): skipped: plan 2: plan: schedule zbv: the executor runs 1F1B and interleaved 1F1B; the executor cannot try it" "$tmp/err" &&
        grep -qx "tesselctl: trial start: plan #3 (tessel) not run (trial t-nofit): skipped: plan 3: no online workers fit it: the plan needs 4 GPUs of type A100-40G; online matching simulated workers have 2: w-1 (host sim-a, 1 GPUs), w-2 (host sim-b, 1 GPUs)" "$tmp/err"; then
        ok "trial start with skipped plans: the others run, the skipped ones on stderr with their reasons (exit 0)"
    else
        fail "trial start with a skipped plan: exit $rc: $(cat "$tmp/out" "$tmp/err")"
    fi
    ctl trial start --nodes skip --json "$fp"
    "$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["trial_ids"]==["t-done"] and d["skipped"][0]["trial_id"]=="t-skip" and d["skipped"][0]["status"]=="skipped" and "schedule zbv" in d["skipped"][0]["error"], d' "$tmp/out" &&
        ok "trial start --json: the skipped plans under \"skipped\"" || fail "start --json skipped: $(cat "$tmp/out")"
    ctl trial show t-skip
    [ "$rc" -eq 0 ] && grep -q "^Trial t-skip: skipped" "$tmp/out" &&
        grep -q "^  run:       none (a plan of 2 devices the executor cannot run)" "$tmp/out" &&
        grep -q "^  not run:   skipped: plan 2: plan: schedule zbv" "$tmp/out" &&
        ok "trial show of a skipped trial: why it did not run" || fail "show skipped: exit $rc: $(cat "$tmp/out" "$tmp/err")"
    ctl trial show t-nofit
    [ "$rc" -eq 0 ] && grep -q "^Trial t-nofit: skipped" "$tmp/out" &&
        grep -q "^  run:       none (a plan of 4 devices no online workers fit)" "$tmp/out" &&
        grep -q "^  not run:   skipped: plan 3: no online workers fit it: the plan needs 4 GPUs" "$tmp/out" &&
        ok "trial show of a trial no workers fit: why it did not run" || fail "show nofit: exit $rc: $(cat "$tmp/out" "$tmp/err")"
    ctl trial list "$fp"
    [ "$rc" -eq 0 ] && grep -Eq "^t-skip +skipped +[0-9a-f]{16} +2 +0.4500 s +- " "$tmp/out" &&
        grep -q "^t-skip skipped: plan 2: plan: schedule zbv" "$tmp/out" &&
        grep -q "^t-nofit skipped: plan 3: no online workers fit it: the plan needs 4 GPUs" "$tmp/out" &&
        ok "trial list: a skipped row, its reason under the table" || fail "list skipped: $(cat "$tmp/out" "$tmp/err")"
    ctl trial watch t-fail
    [ "$rc" -eq 4 ] && ok "trial watch of a failed trial: exit 4" || fail "watch failed: exit $rc"
    ctl trial start 0000000000000000
    [ "$rc" -eq 3 ] && ok "trial start of an unknown plan: exit 3" || fail "unknown plan: exit $rc"
    ctl plans show "$fp"
    if [ "$rc" -eq 0 ] && grep -q "samples/s" "$tmp/out" && grep -q "^Measured (trials of this plan" "$tmp/out" &&
        grep -Eq "^t-done +done +0 +0.5000 s +0.6250 s +-20.0% .*chosen" "$tmp/out" &&
        grep -Eq "^t-alt +done +1 +0.5500 s +0.5000 s +\+10.0%" "$tmp/out"; then
        ok "plans show: the plan, then each trial's predicted vs measured and the chosen one"
    else
        fail "plans show with trials: exit $rc: $(tail -6 "$tmp/out") $(cat "$tmp/err")"
    fi
    ctl plans show --json "$fp"
    "$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); assert "plan" in d and [t["trial_id"] for t in d["trials"]] == ["t-done","t-alt","t-fail","t-skip","t-nofit"]' "$tmp/out" &&
        ok "plans show --json: the trials array" || fail "plans show --json with trials: $(head -c 300 "$tmp/out")"
fi
[ "$failures" -eq 0 ] && echo "all checks passed" || echo "$failures check(s) failed"
[ "$failures" -eq 0 ]
