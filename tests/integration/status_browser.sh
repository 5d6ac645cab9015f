#!/usr/bin/env bash
# status_browser.sh — the status page in a real browser: a tesseld on a private
# unix socket and a free 127.0.0.1 HTTP port stores one 2-stage plan (tesselctl
# plan --pp 2); headless Chromium (Debian's `chromium`) renders "/" and
# "/plan/FP", and the rendered DOM must hold the tables, the SVG chart with one
# bar group per stage of the stored plan, and Chromium's log (--enable-logging
# --v=0 prints console messages as ":CONSOLE") must hold no console message at
# all: the page has no script, so any (an error, a CSP violation) is a fault.
# With TESSEL_WORKER and a device file, a `sim` tessel-worker (one simulated
# GPU) registers first, and its row and its profile's figures must be on the
# page (read through the HTTP thread's own connection); then a tiny GPT (4
# blocks, hidden 64: seconds on the cpu device ops) planned on `--cluster
# registered` runs as a trial (tesselctl trial start --wait, 2 iterations), and
# "/" must show it done and chosen in the Trials table with its plan linked, and
# "/plan/FP" the trial among the plan's
# (chosen) with its predicted/measured bar pair; the trial (the cpu executor)
# must calibrate nothing.
# The Trials and Calibration tables are there either way. Skips (77) without
# chromium.
#
# usage: status_browser.sh TESSELCTL TESSELD [TESSEL_WORKER DEVICE_FILE]
set -u

CTL=${1:?usage: status_browser.sh TESSELCTL TESSELD [TESSEL_WORKER DEVICE_FILE]}
DAEMON=${2:?usage: status_browser.sh TESSELCTL TESSELD [TESSEL_WORKER DEVICE_FILE]}
WORKER=${3:-}
DEVICE_FILE=${4:-}
SCHED=sb-scheduler-4f1a2c
WTOKEN=sb-worker-77e0d3
PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$CHROMIUM" ]; then
    echo "SKIP: no chromium (apt-get install chromium; deploy/debian-packages.txt lists it)"
    exit 77
fi

tmp=$(mktemp -d /tmp/tessel-browser.XXXXXX)
sock=$tmp/tesseld.sock
daemon_pid=
worker_pid=
failures=0
# shellcheck source=proc.sh
. "$(dirname "$0")/proc.sh"   # stop_pid
cleanup() {
    stop_pid "$worker_pid"
    stop_pid "$daemon_pid"
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

ok() { printf 'ok: %s\n' "$*"; }
fail() {
    printf 'FAIL: %s\n' "$*"
    failures=$((failures + 1))
}
die() {
    printf 'FAIL: %s\n' "$1"
    [ -f "${2:-}" ] && tail -n 40 "$2"
    exit 1
}

free_port() {
    "$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
port=$(free_port)
cat >"$tmp/tesseld.ini" <<INI
[server]
unix_socket = $sock
http = 127.0.0.1:$port
[store]
database = $tmp/tessel.db
[search]
pool_size = 1
[tokens]
$SCHED = scheduler
$WTOKEN = worker
INI
"$DAEMON" --config "$tmp/tesseld.ini" >"$tmp/tesseld.log" 2>&1 &
daemon_pid=$!
for _ in $(seq 1 150); do
    "$PY" -c "import urllib.request,sys; urllib.request.urlopen('http://127.0.0.1:$port/healthz', timeout=2)" \
        2>/dev/null && break
    kill -0 "$daemon_pid" 2>/dev/null || die "tesseld exited" "$tmp/tesseld.log"
    sleep 0.1
done

if [ -n "$WORKER" ]; then
    printf '%s\n' "$WTOKEN" >"$tmp/worker.token"
    chmod 600 "$tmp/worker.token"
    cat >"$tmp/worker.conf" <<INI
[daemon]
address = unix:$sock
token_file = $tmp/worker.token
[node]
backend = sim
device_file = $DEVICE_FILE
gpus = 0
heartbeat_s = 1
[profile]
quick = yes
[trials]
address = 127.0.0.1
port = $(free_port)
poll_s = 1
INI
    "$WORKER" run --config "$tmp/worker.conf" --node-name "sim-<a>" --state-dir "$tmp/state" \
        >"$tmp/worker.log" 2>&1 &
    worker_pid=$!
    for _ in $(seq 1 300); do
        "$PY" -c "import urllib.request,sys
b = urllib.request.urlopen('http://127.0.0.1:$port/', timeout=2).read().decode()
sys.exit(0 if 'sim-&lt;a&gt;' in b and '>gemm_fwd<' in b else 1)" 2>/dev/null && break
        sleep 0.1
    done
fi

TESSEL_TOKEN=$SCHED timeout 300 "$CTL" --server "unix:$sock" plan --model GPT2-345M --cluster 4xA100-40G --batch 32 \
    --pp 2 --no-baselines --json >"$tmp/plan.json" 2>"$tmp/plan.err" || die "tesselctl plan" "$tmp/plan.err"
read -r fp stages < <("$PY" -c 'import json,sys; d=json.load(open(sys.argv[1]))
print(d["fingerprint"], len(d["plan"]["stages"]))' "$tmp/plan.json")
[ "${stages:-0}" -ge 2 ] || die "expected a plan of 2 or more stages, got '${stages:-}'"
ok "stored plan $fp with $stages stages"

# A trial of a tiny plan on the sim worker: done, and chosen as its batch's best.
tfp=
trial_id=
if [ -n "$WORKER" ]; then
    cat >"$tmp/tiny.json" <<'JSON'
{"model_type": "gpt2", "n_layer": 4, "n_embd": 64, "n_head": 4, "n_positions": 32, "vocab_size": 128}
JSON
    TESSEL_TOKEN=$SCHED timeout 120 "$CTL" --server "unix:$sock" plan --hf-config "$tmp/tiny.json" \
        --cluster registered --batch 8 --no-baselines --json >"$tmp/tiny-plan.json" 2>"$tmp/tiny-plan.err" ||
        die "tesselctl plan --cluster registered" "$tmp/tiny-plan.err"
    tfp=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["fingerprint"])' "$tmp/tiny-plan.json")
    TESSEL_TOKEN=$SCHED timeout 180 "$CTL" --server "unix:$sock" trial start --iterations 2 --warmup 1 \
        --wait --json "$tfp" >"$tmp/trial.json" 2>"$tmp/trial.err" ||
        die "tesselctl trial start --wait (worker log below)" "$tmp/worker.log"
    trial_id=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["trial_ids"][0])' "$tmp/trial.json")
    ok "trial $trial_id of plan $tfp ran on the sim worker"
fi

# render URL NAME — the DOM in $tmp/NAME.html, Chromium's log in $tmp/NAME.log.
render() {
    timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-background-networking \
        --disable-component-update --disable-sync --no-first-run --user-data-dir="$(mktemp -d -p "$tmp")" \
        --enable-logging=stderr --v=0 --dump-dom "$1" >"$tmp/$2.html" 2>"$tmp/$2.log"
    local rc=$?
    [ "$rc" -eq 0 ] && [ -s "$tmp/$2.html" ] || die "chromium on $1 (exit $rc)" "$tmp/$2.log"
    if grep -E ':CONSOLE|CONSOLE\(|Uncaught|Content Security Policy' "$tmp/$2.log"; then
        fail "$2: console errors (above)"
    else
        ok "$2: no console errors"
    fi
}

render "http://127.0.0.1:$port/" status
for t in daemon workers profiles plans trials calibration; do
    grep -q "<table id=\"$t\">" "$tmp/status.html" && ok "status: table $t" || fail "status: no table $t"
done
grep -q "<a href=\"/plan/$fp\">$fp</a>" "$tmp/status.html" && ok "status: plan linked" ||
    fail "status: no link to /plan/$fp"
grep -q 'class="error"' "$tmp/status.html" && fail "status: a table could not be read: $(grep 'class="error"' "$tmp/status.html")"
if [ -n "$WORKER" ]; then
    grep -q '<td>sim-&lt;a&gt;</td>' "$tmp/status.html" && grep -q '<td>online</td>' "$tmp/status.html" &&
        ok "status: the sim worker, escaped, online" || fail "status: no online worker sim-<a>"
    grep -q '<td>gemm_fwd</td>' "$tmp/status.html" && grep -q '<td>simulated</td>' "$tmp/status.html" &&
        ok "status: its simulated profile" || fail "status: no profile rows"
fi
if [ -n "$trial_id" ]; then
    # The trial's row: its id, the plan linked to its trials, done, chosen.
    row=$(grep -o "<tr class=\"chosen\"><td class=\"id\">$trial_id</td>.*</tr>" "$tmp/status.html")
    case $row in
    *"<a href=\"/plan/$tfp#trials\">$tfp</a>"*"<td>done</td>"*"<td>chosen</td>"*)
        ok "status: the trial done and chosen, its plan linked" ;;
    *) fail "status: no chosen done row for $trial_id: ${row:-(none)}" ;;
    esac
    grep -q '<td class="n">1/1</td>' "$tmp/status.html" && ok "status: its rank done" ||
        fail "status: ranks done not 1/1"
    # a trial of the cpu executor on a sim worker never calibrates GPU figures
    grep -Eq '<tr><td>[^<]+</td><td>simulated</td><td class="n">1</td>' "$tmp/status.html" &&
        fail "status: the sim key was calibrated from a cpu-executor trial" ||
        ok "status: the cpu-executor trial calibrated nothing"
fi
grep -q "<th>uptime</th>" "$tmp/status.html" && grep -q "queued," "$tmp/status.html" &&
    ok "status: uptime and queue" || fail "status: uptime or queue missing"

render "http://127.0.0.1:$port/plan/$fp" plan
n_svg=$(grep -o '<svg id="chart"' "$tmp/plan.html" | wc -l)
n_groups=$(grep -o '<g class="stage" data-stage="[0-9]*">' "$tmp/plan.html" | wc -l)
n_time=$(grep -o '<rect class="time"' "$tmp/plan.html" | wc -l)
n_mem=$(grep -o '<rect class="mem"' "$tmp/plan.html" | wc -l)
[ "$n_svg" -eq 1 ] && ok "plan: one SVG chart" || fail "plan: $n_svg charts"
[ "$n_groups" -eq "$stages" ] && [ "$n_time" -eq "$stages" ] && [ "$n_mem" -eq "$stages" ] &&
    ok "plan: $stages bar groups, a time and a memory bar each" ||
    fail "plan: $n_groups groups, $n_time time and $n_mem memory bars for $stages stages"
grep -q '<table id="stages">' "$tmp/plan.html" && ok "plan: stage table" || fail "plan: no stage table"
grep -q '<table id="plan-trials">' "$tmp/plan.html" && grep -q 'Not run for real yet' "$tmp/plan.html" &&
    ok "plan: a trials table, empty" || fail "plan: no empty trials table on /plan/$fp"

if [ -n "$trial_id" ]; then
    render "http://127.0.0.1:$port/plan/$tfp" tplan
    grep -q "<tr class=\"chosen\"><td class=\"id\">$trial_id</td>" "$tmp/tplan.html" &&
        grep -q "answer: <b>$trial_id</b>" "$tmp/tplan.html" &&
        ok "plan $tfp: its trial, chosen" || fail "plan $tfp: trial $trial_id not listed as chosen"
    [ "$(grep -o '<g class="trial">' "$tmp/tplan.html" | wc -l)" -eq 1 ] &&
        ok "plan $tfp: a predicted/measured bar pair for the trial" || fail "plan $tfp: no trial chart"
fi

if [ "$failures" -ne 0 ]; then
    echo "$failures check(s) failed"
    exit 1
fi
echo "all checks passed"
