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
# The Trials and Calibration tables are there either way.
# The layout (issue 20, item 16): Chromium also screenshots both pages at
# 1280x900 and in a 1280x6000 window (paths and sizes printed; TESSEL_SCREENSHOTS=DIR
# keeps copies); png_height.py reads the rendered height off the tall one, and
# "/" must stay under 4000 px (the old page, every profile figure a row: 10,640 px
# with this data). The overview (workers online, alerts, recent plans linked) must
# come before the profiles, which are one collapsed <details> per GPU model whose
# attention_bwd rows are each labelled with a distinct shape; every table has the
# fixed layout (no script, so no scrollWidth: the DOM and CSS are checked
# instead); no figure reads "0.0x GiB"; and each stage row of "/plan/FP" names its
# runs' strategies and its memory in units. Skips (77) without chromium.
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
. "$(dirname "$0")/proc.sh" # ok, fail, stop_pid
cleanup() {
    stop_pid "$worker_pid"
    stop_pid "$daemon_pid"
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

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

# shot URL NAME — Chromium's screenshots of the page: NAME.png at 1280x900 (what an
# operator sees first) and NAME-tall.png in a 1280x6000 window, whose last
# non-blank row (png_height.py) is the rendered page's height. Prints the paths,
# sizes and height; sets $height. Without script, the document's height is read
# this way rather than from scrollHeight.
shot() {
    local out
    for geo in 1280,900:"$2" 1280,$TALL:"$2-tall"; do
        timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-background-networking \
            --disable-component-update --disable-sync --no-first-run --hide-scrollbars \
            --user-data-dir="$(mktemp -d -p "$tmp")" --window-size="${geo%%:*}" \
            --screenshot="$tmp/${geo#*:}.png" "$1" >"$tmp/${geo#*:}.shot.log" 2>&1
        [ -s "$tmp/${geo#*:}.png" ] || die "chromium --screenshot of $1" "$tmp/${geo#*:}.shot.log"
    done
    out=$("$PY" "$(dirname "$0")/png_height.py" "$tmp/$2-tall.png") || die "png_height.py $2-tall.png"
    height=${out##* }
    printf 'screenshot: %s (%s bytes, 1280x900)\n' "$tmp/$2.png" "$(stat -c %s "$tmp/$2.png")"
    printf 'screenshot: %s (%s bytes, %s): page height %s px\n' "$tmp/$2-tall.png" \
        "$(stat -c %s "$tmp/$2-tall.png")" "${out% *}" "$height"
    if [ -n "${TESSEL_SCREENSHOTS:-}" ]; then
        mkdir -p "$TESSEL_SCREENSHOTS" && cp "$tmp/$2.png" "$tmp/$2-tall.png" "$TESSEL_SCREENSHOTS/"
    fi
}

# tables: every <table> of the DOM in $1 has the fixed-layout class (CSS
# table-layout: fixed; width: 100%; overflow-wrap: anywhere), so none can be
# wider than the 1280 px window: the page has no script to read scrollWidth with.
tables_fit() {
    local all fixed
    all=$(grep -o '<table[ >][^>]*>\?' "$tmp/$1.html" | wc -l)
    fixed=$(grep -oE '<table [^>]*class="[^"]*\bfixed\b' "$tmp/$1.html" | wc -l)
    if [ "$all" -gt 0 ] && [ "$fixed" -eq "$all" ] && grep -q 'table.fixed{[^}]*table-layout:fixed' "$tmp/$1.html" &&
        grep -q 'overflow-wrap:anywhere' "$tmp/$1.html"; then
        ok "$1: all $all tables fixed-layout, wrapped to the window"
    else
        fail "$1: $fixed of $all tables have the fixed layout (or its CSS is missing)"
    fi
}

# No figure below 0.1 of a unit that has a smaller one ("0.001317 GiB", "0.00 GiB").
units_readable() {
    local bad
    bad=$(grep -oE '[^0-9.]0\.0[0-9]* ?(GiB|MiB|KiB|s|ms)\b' "$tmp/$1.html" | head -3 | tr '\n' ' ')
    [ -z "$bad" ] && ok "$1: figures in readable units" || fail "$1: unreadable figures: $bad"
}

TALL=${TESSEL_TALL_WINDOW:-6000}
# The bound: the overview, the workers, one collapsed <details> per GPU model,
# two plans, a trial and a calibration, each table row one or two lines: some
# 1500 px at 1280 wide. 4000 leaves room for wrapped rows and is still well under
# the window (6000), so a page of one row per profile figure (the old one: every
# figure of every GPU model open) fails it.
MAX_HEIGHT=4000
render "http://127.0.0.1:$port/" status
shot "http://127.0.0.1:$port/" status
[ "$height" -gt 0 ] && [ "$height" -le "$MAX_HEIGHT" ] && ok "status: page height $height px <= $MAX_HEIGHT" ||
    fail "status: page height $height px > $MAX_HEIGHT"
tables_fit status
units_readable status
ov=$(grep -bo '<section id="overview">' "$tmp/status.html" | head -1 | cut -d: -f1)
pr=$(grep -bo '<section id="profiles">' "$tmp/status.html" | head -1 | cut -d: -f1)
[ -n "$ov" ] && [ -n "$pr" ] && [ "$ov" -lt "$pr" ] && ok "status: the overview above the profiles" ||
    fail "status: overview at ${ov:-none}, profiles at ${pr:-none}"
grep -q '<td id="workers-online">' "$tmp/status.html" && grep -q '<ul id="alerts">' "$tmp/status.html" &&
    grep -q "<table id=\"recent-plans\"" "$tmp/status.html" &&
    grep -q "<a href=\"/plan/$fp\"" "$tmp/status.html" &&
    ok "status: overview: workers, recent plans linked, alerts" || fail "status: overview incomplete"
for t in daemon workers plans trials calibration; do
    grep -Eq "<table id=\"$t\"( class=\"[^\"]*\")?>" "$tmp/status.html" && ok "status: table $t" ||
        fail "status: no table $t"
done
grep -q "<a href=\"/plan/$fp\">$fp</a>" "$tmp/status.html" && ok "status: plan linked" ||
    fail "status: no link to /plan/$fp"
grep -q 'class="error"' "$tmp/status.html" && fail "status: a table could not be read: $(grep 'class="error"' "$tmp/status.html")"
if [ -n "$WORKER" ]; then
    grep -q '<td>sim-&lt;a&gt;</td>' "$tmp/status.html" && grep -q '<td>online</td>' "$tmp/status.html" &&
        ok "status: the sim worker, escaped, online" || fail "status: no online worker sim-<a>"
    grep -q '<td>gemm_fwd</td>' "$tmp/status.html" && grep -q '<td>simulated</td>' "$tmp/status.html" &&
        ok "status: its simulated profile" || fail "status: no profile rows"
    # One collapsed <details> per GPU model; every block-time row labelled with its
    # shape, no two alike (the old page: a dozen indistinguishable attention_bwd rows).
    n_det=$(grep -o '<details class="profile"[^>]*>' "$tmp/status.html" | wc -l)
    n_open=$(grep -o '<details class="profile"[^>]*\bopen\b[^>]*>' "$tmp/status.html" | wc -l)
    [ "$n_det" -eq 1 ] && [ "$n_open" -eq 0 ] && ok "status: one collapsed <details> for the sim GPU model" ||
        fail "status: $n_det profile <details> ($n_open open), expected 1 collapsed"
    shapes=$(grep -o '<td>attention_bwd</td><td class="shape">[^<]*</td>' "$tmp/status.html")
    n_rows=$(printf '%s\n' "$shapes" | grep -c 'tokens/micro-batch [0-9].*TP [0-9].*hidden [0-9]')
    n_uniq=$(printf '%s\n' "$shapes" | sort -u | grep -c .)
    [ "$n_rows" -ge 1 ] && [ "$n_rows" -eq "$n_uniq" ] &&
        ok "status: $n_rows attention_bwd rows, each labelled with a distinct shape" ||
        fail "status: attention_bwd rows: $n_rows labelled, $n_uniq distinct: ${shapes:-(none)}"
fi
if [ -n "$trial_id" ]; then
    # The trial's row: its id, the plan linked to its trials, done, chosen.
    row=$(grep -o "<tr class=\"chosen\"><td class=\"id\" title=\"$trial_id\">.*</tr>" "$tmp/status.html")
    case $row in
    *"<a href=\"/plan/$tfp#trials\">$tfp</a>"*"<td>done</td>"*"<td>chosen</td>"*)
        ok "status: the trial done and chosen, its plan linked" ;;
    *) fail "status: no chosen done row for $trial_id: ${row:-(none)}" ;;
    esac
    grep -q '<td class="n">1/1</td>' "$tmp/status.html" && ok "status: its rank done" ||
        fail "status: ranks done not 1/1"
    # a trial of the cpu executor on a sim worker never calibrates GPU figures
    grep -Eq '<tr[^>]*><td>[^<]+</td><td>simulated</td><td class="n">1</td>' "$tmp/status.html" &&
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
grep -Eq '<table id="stages"( class="[^"]*")?>' "$tmp/plan.html" && ok "plan: stage table" ||
    fail "plan: no stage table"
shot "http://127.0.0.1:$port/plan/$fp" plan
tables_fit plan
# Each stage's row names the strategies of its layers (the plan's runs) and its
# memory, peak and model states, in readable units.
"$PY" - "$tmp/plan.json" "$tmp/plan.html" <<'PYEOF' && ok "plan: every stage's strategies and memory in its row" ||
import json, re, sys
plan = json.load(open(sys.argv[1]))["plan"]
html = open(sys.argv[2]).read()
rows = re.findall(r'<tr class="stage">(.*?)</tr>', html, re.S)
if len(rows) != len(plan["stages"]):
    sys.exit("%d stage rows for %d stages" % (len(rows), len(plan["stages"])))
for i, (st, row) in enumerate(zip(plan["stages"], rows)):
    for run in st.get("runs", []):
        if "<code>%s</code>" % run["strategy"] not in row:
            sys.exit("stage %d: strategy %s not in its row: %s" % (i, run["strategy"], row))
    if len(re.findall(r'<td class="n mem">[0-9.]+ (?:GiB|MiB|KiB|B)</td>', row)) < 2:
        sys.exit("stage %d: no memory figure: %s" % (i, row))
PYEOF
    fail "plan: strategies or memory missing from the stage rows (above)"
grep -Eq '<table id="plan-trials"( class="[^"]*")?>' "$tmp/plan.html" && grep -q 'Not run for real yet' "$tmp/plan.html" &&
    ok "plan: a trials table, empty" || fail "plan: no empty trials table on /plan/$fp"

if [ -n "$trial_id" ]; then
    render "http://127.0.0.1:$port/plan/$tfp" tplan
    grep -q "<tr class=\"chosen\"><td class=\"id\" title=\"$trial_id\">" "$tmp/tplan.html" &&
        grep -q "answer: <b>$trial_id</b>" "$tmp/tplan.html" &&
        ok "plan $tfp: its trial, chosen" || fail "plan $tfp: trial $trial_id not listed as chosen"
    units_readable tplan # a tiny plan: its peak in MiB, not "0.00 GiB"
    [ "$(grep -o '<g class="trial">' "$tmp/tplan.html" | wc -l)" -eq 1 ] &&
        ok "plan $tfp: a predicted/measured bar pair for the trial" || fail "plan $tfp: no trial chart"
fi

if [ "$failures" -ne 0 ]; then
    echo "$failures check(s) failed"
    exit 1
fi
echo "all checks passed"
