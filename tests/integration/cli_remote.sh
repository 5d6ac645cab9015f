#!/usr/bin/env bash
# cli_remote.sh — tesselctl against a real tesseld on a private unix socket and a
# temporary database: plan (stages and baselines), the cached second call,
# plans list/show/export/delete, health, and the exit codes for an unreachable
# daemon (5), an unknown plan (3), a bad preset (2) and a passed deadline (5);
# a remote plan's JSON (Plan stream and GetPlan) against the local planner's,
# key for key, and `plans show` of a HuggingFace-config plan (layers, parameters);
# then a second tesseld with tokens on loopback TCP: tokens by flag and by
# TESSEL_TOKEN, missing / wrong token and wrong role (4).
#
# usage: cli_remote.sh TESSELCTL TESSELD
set -u

CTL=${1:?usage: cli_remote.sh TESSELCTL TESSELD}
DAEMON=${2:?usage: cli_remote.sh TESSELCTL TESSELD}
PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3

MODEL=GPT2-345M
CLUSTER=4xA100-40G
MODEL2=BERT-Large
HF_CONFIG=$(cd "$(dirname "$0")/../data/hf" && pwd)/gpt2.json

SCHED_TOKEN=cli-remote-scheduler-7d2f91
OPS_TOKEN=cli-remote-ops-4be803

tmp=$(mktemp -d /tmp/tessel-cli-remote.XXXXXX)
sock=$tmp/tesseld.sock
daemon_pid=
tcp_pid=
failures=0

# shellcheck source=proc.sh
. "$(dirname "$0")/proc.sh"   # stop_pid
# shellcheck source=store_db.sh
. "$(dirname "$0")/store_db.sh" # set_stale

cleanup() {
    stop_pid "$daemon_pid"
    stop_pid "$tcp_pid"
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

note() { printf '%s\n' "$*"; }
fail() {
    note "FAIL: $*"
    failures=$((failures + 1))
}
ok() { note "ok: $*"; }

# ctl ARGS... — runs tesselctl on the private socket with a bounded time;
# stdout in $tmp/out, stderr in $tmp/err, exit status in $rc.
ctl() {
    timeout 300 "$CTL" --server "unix:$sock" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
}

expect_grep() { # FILE REGEX WHAT
    if grep -Eqi -- "$2" "$1"; then
        ok "$3"
    else
        fail "$3: no /$2/ in $(basename "$1")"
        sed 's/^/  | /' "$1" | head -30
    fi
}


json_field() { # FILE KEY — prints doc[KEY] of a JSON document
    "$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"
}

# same_doc LOCAL REMOTE — "same" when the two documents have the same keys at
# every depth, with the same values, apart from the search statistics and time
# and the answer's cached / created_unix (keys compared, values not: the remote
# one may come from the store, made at another time); else the differences.
same_doc() {
    "$PY" - "$1" "$2" <<'PY'
import json, sys
local, remote = (json.load(open(f)) for f in sys.argv[1:3])
diffs = []
def walk(a, b, path, values=True):
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                diffs.append("%s/%s: only %s" % (path, k, "remote" if k in b else "local"))
                continue
            top_stats = path == "" and k in ("stats", "search_time_s", "cached", "created_unix")
            walk(a[k], b[k], "%s/%s" % (path, k), values and not top_stats)
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            diffs.append("%s: %d items local, %d remote" % (path, len(a), len(b)))
        for i, (x, y) in enumerate(zip(a, b)):
            walk(x, y, "%s[%d]" % (path, i), values)
    elif type(a) is not type(b) or (values and a != b):
        diffs.append("%s: local %r, remote %r" % (path, a, b))
print("same" if not diffs else "; ".join(diffs[:8]) + " (%d in all)" % len(diffs))
PY
}

wait_serving() { # PID SERVER LOG [TOKEN]
    for _ in $(seq 1 150); do
        if ! kill -0 "$1" 2>/dev/null; then
            note "tesseld exited at start-up:"
            cat "$3"
            exit 1
        fi
        if TESSEL_TOKEN=${4:-} timeout 5 "$CTL" --server "$2" --timeout 2 health >/dev/null 2>&1; then
            ok "tesseld serving on $2"
            return
        fi
        sleep 0.2
    done
    note "tesseld not serving on $2 within 30 s:"
    cat "$3"
    exit 1
}

start_daemon() {
    cat >"$tmp/tesseld.ini" <<INI
[server]
unix_socket = $sock
[store]
database = $tmp/tessel.db
[search]
pool_size = 2
[log]
level = info
INI
    "$DAEMON" --config "$tmp/tesseld.ini" >"$tmp/tesseld.log" 2>&1 &
    daemon_pid=$!
    wait_serving "$daemon_pid" "unix:$sock" "$tmp/tesseld.log"
}

# A second daemon with tokens and a TCP listener on a free loopback port.
start_tcp_daemon() {
    port=$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    cat >"$tmp/tcp.ini" <<INI
[server]
unix_socket = $tmp/tcp.sock
tcp = 127.0.0.1:$port
insecure_tcp = true
[store]
database = $tmp/tcp.db
[search]
pool_size = 2
[tokens]
$SCHED_TOKEN = scheduler
$OPS_TOKEN = ops
INI
    "$DAEMON" --config "$tmp/tcp.ini" >"$tmp/tcp.log" 2>&1 &
    tcp_pid=$!
    wait_serving "$tcp_pid" "127.0.0.1:$port" "$tmp/tcp.log" "$OPS_TOKEN"
}

# tcp_ctl TOKEN ARGS... — tesselctl on the TCP daemon with TESSEL_TOKEN=TOKEN.
tcp_ctl() {
    local token=$1
    shift
    TESSEL_TOKEN=$token timeout 300 "$CTL" --server "127.0.0.1:$port" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
}

start_daemon

# ---- plan, then the cached answer ------------------------------------------
ctl plan --model "$MODEL" --cluster "$CLUSTER" --batch 32
expect_rc 0 "plan $MODEL on $CLUSTER"
expect_grep "$tmp/out" 'stage' "plan output shows the stages"
expect_grep "$tmp/out" 'baseline|megatron|ddp|zero' "plan output compares with the baselines"
if [ -s "$tmp/err" ]; then fail "plan wrote to stderr when piped: $(head -c 200 "$tmp/err")"; else ok "plan quiet on a piped stderr"; fi

ctl plan --model "$MODEL" --cluster "$CLUSTER" --batch 32
expect_rc 0 "second identical plan"
expect_grep "$tmp/out" 'cached' "second plan reports the cached answer"

ctl plan --model "$MODEL" --cluster "$CLUSTER" --batch 32 --json
expect_rc 0 "plan --json"
if "$PY" -m json.tool "$tmp/out" >/dev/null 2>&1; then ok "plan --json is JSON"; else fail "plan --json is not JSON"; fi
fp=$(json_field "$tmp/out" fingerprint 2>/dev/null)
cached=$(json_field "$tmp/out" cached 2>/dev/null)
[[ "$fp" =~ ^[0-9a-f]{16}$ ]] && ok "fingerprint $fp" || fail "no fingerprint in plan --json ('$fp')"
[ "$cached" = "True" ] && ok "plan --json says cached" || fail "plan --json cached = '$cached'"

ctl plan --model "$MODEL2" --cluster "$CLUSTER" --batch 16 --no-baselines
expect_rc 0 "plan $MODEL2 (a second cached plan)"

# ---- plans list / show / export / delete ---------------------------------------
ctl plans list
expect_rc 0 "plans list"
expect_grep "$tmp/out" "$fp" "plans list shows $fp"
expect_grep "$tmp/out" "$MODEL2" "plans list shows $MODEL2"

ctl plans list --model "$MODEL" --json
expect_rc 0 "plans list --model --json"
n=$("$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(len(d["plans"]), all(p["model_name"]==sys.argv[2] for p in d["plans"]))' "$tmp/out" "$MODEL" 2>&1)
[ "$n" = "1 True" ] && ok "list --model filters ($n)" || fail "list --model: '$n', want '1 True'"

ctl plans list --page-size 1 --all --json
expect_rc 0 "plans list --page-size 1 --all"
n=$("$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(len(d["plans"]), d["next_page_token"]=="")' "$tmp/out" 2>&1)
[ "$n" = "2 True" ] && ok "--all follows the page tokens ($n)" || fail "--all: '$n', want '2 True'"

ctl plans list --page-size 1
expect_rc 0 "plans list --page-size 1"
expect_grep "$tmp/err" 'page-token' "one page: the next token is offered on stderr"

ctl plans show "$fp"
expect_rc 0 "plans show"
expect_grep "$tmp/out" 'stage' "plans show prints the plan table"
if grep -q STALE "$tmp/out"; then fail "a fresh plan shown as stale"; else ok "a fresh plan is not called stale"; fi
# marked stale behind the daemon's back, as a new profile or a cost-model upgrade does
set_stale "$tmp/tessel.db" "$fp" 1
ctl plans show "$fp"
expect_rc 0 "plans show of a stale plan"
expect_grep "$tmp/out" "fingerprint $fp \\(cached\\) STALE" "plans show says the plan is stale"
ctl plans export "$fp" --format json
st=$("$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["stale"], d["cached"])' "$tmp/out" 2>&1)
[ "$st" = "True True" ] && ok "plans export --format json of a stale plan says stale and cached" ||
    fail "plans export --format json of a stale plan: stale, cached = $st, want True True"
expect_grep "$tmp/err" "^tesselctl: plans export: warning: plan $fp is stale" \
    "plans export of a stale plan warns on stderr"
# the stacks' formats have no place for it: ExportPlanResponse.stale, the same warning,
# the file written all the same (a scheduler may want it); --fresh refuses, writes nothing.
# Megatron's on a plan searched for it (this one's layer-wise plan no stack takes), and
# the trace of this one.
ctl plan --model "$MODEL" --cluster "$CLUSTER" --batch 32 --target megatron --no-baselines --json
fpm=$(json_field "$tmp/out" fingerprint 2>/dev/null)
set_stale "$tmp/tessel.db" "$fpm" 1
for f in megatron trace; do
    p=$fp
    [ "$f" = megatron ] && p=$fpm
    ctl plans export "$p" --format "$f" -o "$tmp/stale.$f"
    [ "$rc" = 0 ] && [ -s "$tmp/stale.$f" ] &&
        grep -q "^tesselctl: plans export: warning: plan $p is stale" "$tmp/err" &&
        ok "plans export --format $f of a stale plan: written, with the warning" ||
        fail "plans export --format $f of a stale plan: exit $rc, file $(wc -c <"$tmp/stale.$f" 2>&1), stderr $(cat "$tmp/err")"
done
ctl plans delete "$fpm"
ctl plans export "$fp" --format json --fresh -o "$tmp/fresh.json"
[ "$rc" = 4 ] && ! [ -e "$tmp/fresh.json" ] && ! [ -e "$tmp/fresh.json.tmp" ] &&
    grep -q "plan $fp is stale .*nothing written (--fresh)" "$tmp/err" &&
    ok "plans export --fresh of a stale plan: exit 4, nothing written" ||
    fail "plans export --fresh of a stale plan: exit $rc, $(ls "$tmp" | grep fresh) $(cat "$tmp/err")"
set_stale "$tmp/tessel.db" "$fp" 0

ctl plans export "$fp" --format json --fresh
expect_rc 0 "plans export --format json"
if [ -s "$tmp/err" ]; then fail "plans export of a fresh plan wrote to stderr: $(cat "$tmp/err")"; else ok "plans export --fresh of a fresh plan: no warning"; fi
if "$PY" -m json.tool "$tmp/out" >/dev/null 2>&1; then ok "export is valid JSON"; else fail "export is not valid JSON"; head -c 300 "$tmp/out"; fi

ctl plans export "$fp" -o "$tmp/plan.json"
expect_rc 0 "plans export -o FILE"
if "$PY" -m json.tool "$tmp/plan.json" >/dev/null 2>&1; then ok "export -o wrote valid JSON"; else fail "export -o: no valid JSON in the file"; fi
# -o onto what is not a regular file is written through, not replaced: the rename
# made a symbolic link a regular file (its target untouched) and, as root, put a
# regular file in place of /dev/null (tested here on a link and a FIFO only)
echo old >"$tmp/real.json"
ln -s real.json "$tmp/link.json"
ctl plans export "$fp" -o "$tmp/link.json"
expect_rc 0 "plans export -o a symbolic link"
[ -L "$tmp/link.json" ] && "$PY" -m json.tool "$tmp/real.json" >/dev/null 2>&1 &&
    ok "the link stays a link, its target holds the plan" ||
    fail "-o a link: $(ls -la "$tmp/link.json" "$tmp/real.json")"
mkfifo "$tmp/fifo"
timeout 20 cat "$tmp/fifo" >"$tmp/from_fifo" &
reader=$!
ctl plans export "$fp" -o "$tmp/fifo"
expect_rc 0 "plans export -o a FIFO"
wait "$reader"
[ -p "$tmp/fifo" ] && "$PY" -m json.tool "$tmp/from_fifo" >/dev/null 2>&1 &&
    ok "the FIFO stays a FIFO, its reader got the plan" || fail "-o a FIFO: $(ls -la "$tmp/fifo")"

ctl plans export "$fp" --format no-such-format
expect_rc 2 "export with an unknown format"
# the daemon's list names what ExportPlan takes: the parser's formats, json and trace
grep -q "is not one of megatron, deepspeed, torchtitan, galvatron, torchtitan-toml (or json, trace)" "$tmp/err" &&
    ok "unknown format: the formats listed once each" || fail "unknown format: $(cat "$tmp/err")"

# The stacks' formats: the daemon's export of the stored plan is the local one's,
# byte for byte, or the same refusal (exit 4, the same reason).
for f in megatron deepspeed torchtitan galvatron; do
    timeout 300 "$CTL" plan --local --model "$MODEL" --cluster "$CLUSTER" --batch 32 \
        --export "$f" >"$tmp/local.$f" 2>"$tmp/local.$f.err"; lrc=$?
    ctl plans export "$fp" --format "$f"
    if [ "$rc" = "$lrc" ] && cmp -s "$tmp/out" "$tmp/local.$f" && cmp -s "$tmp/err" "$tmp/local.$f.err" &&
        { [ "$rc" = 0 ] || { [ "$rc" = 4 ] && grep -q "^tesselctl: $f: " "$tmp/err"; }; }; then
        ok "plans export --format $f = plan --local --export $f (exit $rc)"
    else
        fail "plans export --format $f: exit $rc, local $lrc"; head -c 400 "$tmp/out" "$tmp/err" "$tmp/local.$f.err"
    fi
done

# What the JSON formats cannot carry travels beside them (ExportPlanResponse.notes): a
# --tf32 plan's allow_tf32 note, on stderr as plan --local --export notes it.
tf=(--model "$MODEL" --cluster "$CLUSTER" --batch 32 --fp32 --tf32 --target deepspeed)
ctl plan "${tf[@]}" --json
expect_rc 0 "plan --fp32 --tf32 --target deepspeed"
fp_tf32=$(json_field "$tmp/out" fingerprint 2>/dev/null)
ctl plans export "$fp_tf32" --format deepspeed
expect_rc 0 "plans export --format deepspeed of a --tf32 plan"
expect_grep "$tmp/err" "^tesselctl: plans export: note: deepspeed: TF32: .*allow_tf32 = True" \
    "plans export notes the TF32 setting beside the deepspeed JSON"
timeout 300 "$CTL" plan --local "${tf[@]}" --export deepspeed >"$tmp/local.tf32" 2>"$tmp/local.tf32.err"
if cmp -s "$tmp/out" "$tmp/local.tf32" &&
    sed 's/^tesselctl: plan: note:/tesselctl: plans export: note:/' "$tmp/local.tf32.err" | cmp -s - "$tmp/err"; then
    ok "the --tf32 export and its note are plan --local --export's"
else
    fail "the --tf32 export differs from the local one: $(head -c 300 "$tmp/err" "$tmp/local.tf32.err")"
fi

ctl plans delete "$fp"
expect_rc 0 "plans delete"
ctl plans show "$fp"
expect_rc 3 "plans show after delete"
expect_grep "$tmp/err" '^tesselctl: ' "not found reported as one 'tesselctl:' line"
ctl plans delete "$fp"
expect_rc 3 "plans delete again"

# ---- the remote document is the local one ----------------------------------------
same_args=(--model "$MODEL" --cluster 8xA100-40G --batch 32)
timeout 300 "$CTL" plan --local --json "${same_args[@]}" >"$tmp/local.json" 2>"$tmp/err"
rc=$?
expect_rc 0 "plan --local --json ${same_args[*]}"
ctl plan --json "${same_args[@]}"
expect_rc 0 "plan --json ${same_args[*]} (remote)"
cp "$tmp/out" "$tmp/remote.json"
d=$(same_doc "$tmp/local.json" "$tmp/remote.json" 2>&1)
[ "$d" = "same" ] && ok "remote plan --json = local plan --json" || fail "remote vs local plan --json: $d"
same_fp=$(json_field "$tmp/remote.json" fingerprint 2>/dev/null)
ctl plans show "$same_fp" --json
expect_rc 0 "plans show --json $same_fp"
d=$(same_doc "$tmp/local.json" "$tmp/out" 2>&1)
[ "$d" = "same" ] && ok "GetPlan document = local plan --json" || fail "GetPlan vs local plan --json: $d"

# ---- MTP depths: tesseld builds the model with the request's depths as --local does
# (the same fingerprint and document: GPT2-345M with 2 depths, 26 + 2 x 3 = 32 layers),
# and exports the stored plan with them (--mtp-num-layers 2) -------------------------
mtp_args=(--model GPT2-345M --cluster 8xA100-40G --batch 32 --mtp-layers 2 --target megatron)
timeout 300 "$CTL" plan --local --json "${mtp_args[@]}" >"$tmp/local.json" 2>"$tmp/err"
ctl plan --json "${mtp_args[@]}"
expect_rc 0 "plan --json ${mtp_args[*]} (remote)"
d=$(same_doc "$tmp/local.json" "$tmp/out" 2>&1)
[ "$d" = "same" ] && ok "--mtp-layers 2: remote --json = local --json (fingerprint, 32 layers)" ||
    fail "--mtp-layers 2, remote vs local: $d"
mtp_fp=$(json_field "$tmp/out" fingerprint 2>/dev/null)
ctl plans export "$mtp_fp" --format megatron
expect_rc 0 "plans export --format megatron of a plan with 2 MTP depths"
expect_grep "$tmp/out" "^--mtp-num-layers 2$" "the stored plan's export trains its 2 MTP depths"

# ---- per-module precision (module_precision, PlanRequest 148): tesseld searches with it
# as --local does (the same fingerprint and document), and keys its store by it: another
# list, or none, is its own search, never the cached plan of another ------------------
mp_base=(--model GPT2-345M --cluster 8xH100-80G --batch 32 --fp8-recipe tensorwise --no-baselines)
timeout 300 "$CTL" plan --local --json "${mp_base[@]}" --module-precision linear_proj=bf16 \
    >"$tmp/local.json" 2>"$tmp/err"
ctl plan --json "${mp_base[@]}" --module-precision linear_proj=bf16
expect_rc 0 "plan --json --module-precision linear_proj=bf16 (remote)"
d=$(same_doc "$tmp/local.json" "$tmp/out" 2>&1)
[ "$d" = "same" ] && ok "--module-precision: remote --json = local --json" ||
    fail "--module-precision, remote vs local: $d"
mp_fp=$(json_field "$tmp/out" fingerprint 2>/dev/null)
mp_prec=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["plan"].get("module_precision"))' "$tmp/out" 2>&1)
[ "$mp_prec" = "16" ] && ok "the stored plan runs linear_proj bf16 (module_precision 16)" ||
    fail "module_precision of the remote plan: '$mp_prec', want 16"
for other in "--module-precision linear_fc2=bf16" ""; do
    # shellcheck disable=SC2086
    ctl plan --json "${mp_base[@]}" $other
    expect_rc 0 "plan --json ${other:-without --module-precision} (remote)"
    o_fp=$(json_field "$tmp/out" fingerprint 2>/dev/null)
    o_cached=$(json_field "$tmp/out" cached 2>/dev/null)
    if [ -n "$o_fp" ] && [ "$o_fp" != "$mp_fp" ] && [ "$o_cached" = "False" ]; then
        ok "${other:-no --module-precision}: its own search ($o_fp), not $mp_fp's cached plan"
    else
        fail "${other:-no --module-precision}: fingerprint '$o_fp' (linear_proj=bf16's $mp_fp), cached '$o_cached'"
    fi
done

# Under --target torchtitan the HF config's own MTP depth is left out (target.h): tesseld
# builds DeepSeek-V3 without it as --local does (63 layers, not 66: the same fingerprint
# and document; it searched 63 and stored 66 with another fingerprint), and the stored
# plan exports as the local one (its request's target rebuilds the model without it)
# (its NICs stated, so that the one-NIC note, checked below, stays out of these notes)
v3_base=(--hf-config "$(dirname "$HF_CONFIG")/deepseek_v3.json" --seq-len 1024
    --cluster 16x8xH200-141G:8xib400 --batch 128 --no-baselines --no-memopt)
v3_args=("${v3_base[@]}" --target torchtitan)
timeout 300 "$CTL" plan --local --json "${v3_args[@]}" >"$tmp/local.json" 2>"$tmp/err"
expect_grep "$tmp/err" "note: torchtitan: deepseek_v3's 1 MTP depth left out" "--local notes the depth left out"
cp "$tmp/err" "$tmp/local.err"
ctl plan --json "${v3_args[@]}"
expect_rc 0 "plan --json DeepSeek-V3 --target torchtitan (remote)"
# ... and so does the remote plan: tesseld sends the note in Plan.notes (field 29) and
# tesselctl prints it on stderr in --local's words (both documents carry it in "notes")
grep "note:" "$tmp/local.err" >"$tmp/local.notes"
grep "note:" "$tmp/err" >"$tmp/remote.notes"
[ -s "$tmp/local.notes" ] && cmp -s "$tmp/local.notes" "$tmp/remote.notes" &&
    ok "the remote plan prints --local's note: $(head -c 80 "$tmp/remote.notes")" ||
    fail "remote plan's notes: $(cat "$tmp/remote.notes") vs --local's: $(cat "$tmp/local.notes")"
d=$(same_doc "$tmp/local.json" "$tmp/out" 2>&1)
v3_layers=$(json_field "$tmp/out" model 2>/dev/null)
[ "$d" = "same" ] && [[ "$v3_layers" == *"'layers': 63,"* ]] &&
    ok "torchtitan without the MTP depth: remote --json = local --json (63 layers)" ||
    fail "DeepSeek-V3 --target torchtitan, remote vs local: $d; model $v3_layers"
v3_fp=$(json_field "$tmp/out" fingerprint 2>/dev/null)
# stored with the plan: the cached answer and GetPlan (plans show) print it too
ctl plan "${v3_args[@]}"
grep "note:" "$tmp/err" >"$tmp/remote.notes"
[ "$rc" = 0 ] && grep -q "(cached)" "$tmp/out" && cmp -s "$tmp/local.notes" "$tmp/remote.notes" &&
    ok "the cached answer prints the stored note" ||
    fail "cached DeepSeek-V3 plan: exit $rc, notes: $(cat "$tmp/remote.notes")"
ctl plans show "$v3_fp"
grep "note:" "$tmp/err" >"$tmp/remote.notes"
[ "$rc" = 0 ] && cmp -s "$tmp/local.notes" "$tmp/remote.notes" &&
    ok "plans show prints the stored note" ||
    fail "plans show $v3_fp: exit $rc, notes: $(cat "$tmp/remote.notes")"
# The same config without its MTP depth (num_nextn_predict_layers 0) builds the same model
# under torchtitan, so the same fingerprint and the stored plan; the note is the request's
# own: none here (--local prints none), and the stored row's request keeps its note (the
# file keeps its name, which names the model in exports)
mkdir -p "$tmp/nomtp"
"$PY" -c 'import json,sys; c=json.load(open(sys.argv[1])); c["num_nextn_predict_layers"]=0
json.dump(c, open(sys.argv[2], "w"))' "$(dirname "$HF_CONFIG")/deepseek_v3.json" "$tmp/nomtp/deepseek_v3.json"
v3_nomtp=(--hf-config "$tmp/nomtp/deepseek_v3.json" "${v3_base[@]:2}" --target torchtitan)
timeout 300 "$CTL" plan --local "${v3_nomtp[@]}" >/dev/null 2>"$tmp/local0.err"
ctl plan --json "${v3_nomtp[@]}"
[ "$rc" = 0 ] && [ "$(json_field "$tmp/out" fingerprint)" = "$v3_fp" ] &&
    [ "$(json_field "$tmp/out" cached)" = True ] && ! grep -q "note:" "$tmp/local0.err" &&
    ! grep -q "note:" "$tmp/err" && ! grep -q '"notes"' "$tmp/out" &&
    ok "the cached plan of a request without the depth carries no note (--local prints none)" ||
    fail "DeepSeek-V3 without MTP, cached: exit $rc, notes: $(grep note: "$tmp/err" "$tmp/local0.err")"
ctl plans show "$v3_fp"
grep "note:" "$tmp/err" >"$tmp/remote.notes"
[ "$rc" = 0 ] && cmp -s "$tmp/local.notes" "$tmp/remote.notes" &&
    ok "plans show still prints the note of the request stored with the plan" ||
    fail "plans show $v3_fp after the request without MTP: notes: $(cat "$tmp/remote.notes")"
# ... and the other way round: stored (--force) from the request without the depth, the
# request with it still gets its note from the cache, and plans show has none
ctl plan "${v3_nomtp[@]}" --force
rc0=$rc
ctl plan "${v3_args[@]}"
grep "note:" "$tmp/err" >"$tmp/remote.notes"
[ "$rc0" = 0 ] && [ "$rc" = 0 ] && grep -q "(cached)" "$tmp/out" &&
    cmp -s "$tmp/local.notes" "$tmp/remote.notes" &&
    ok "a cached plan stored without a note answers the request with the depth with its note" ||
    fail "DeepSeek-V3 cached after --force without MTP: exit $rc0/$rc, notes: $(cat "$tmp/remote.notes")"
ctl plans show "$v3_fp"
[ "$rc" = 0 ] && ! grep -q "note:" "$tmp/err" &&
    ok "plans show of the plan stored without the depth prints no note" ||
    fail "plans show $v3_fp after --force without MTP: exit $rc: $(grep note: "$tmp/err")"
timeout 300 "$CTL" plan --local "${v3_args[@]}" --export torchtitan >"$tmp/local.tt" 2>/dev/null
ctl plans export "$v3_fp" --format torchtitan
[ "$rc" = 0 ] && cmp -s "$tmp/out" "$tmp/local.tt" &&
    ok "the stored torchtitan plan exports as plan --local --export torchtitan" ||
    fail "plans export --format torchtitan of the DeepSeek-V3 plan: exit $rc: $(head -c 300 "$tmp/err")"
# The one-NIC trap (planner/cluster.h tsl_cluster_nic_warning): tesseld notes a DGX/HGX
# spec without NICSx in Plan.notes as --local prints it, beside another note (an MoE
# switch on a dense model), a line each; ':1xib400' prices the same cluster (the same
# fingerprint, answered from the store) and carries the MoE note alone
nic_args=(--model GPT2-345M --batch 32 --no-baselines --no-memopt --moe-flex-dispatcher)
timeout 300 "$CTL" plan --local "${nic_args[@]}" --cluster 2x8xH100-80G:ib400 >/dev/null 2>"$tmp/local.err"
grep "note:" "$tmp/local.err" >"$tmp/local.notes"
ctl plan --json "${nic_args[@]}" --cluster 2x8xH100-80G:ib400
grep "note:" "$tmp/err" >"$tmp/remote.notes"
nic_fp=$(json_field "$tmp/out" fingerprint 2>/dev/null)
[ "$rc" = 0 ] && [ "$(wc -l <"$tmp/remote.notes")" = 2 ] && cmp -s "$tmp/local.notes" "$tmp/remote.notes" &&
    grep -q "note: cluster: '2x8xH100-80G:ib400' is ONE ib400 NIC per node" "$tmp/remote.notes" &&
    [ "$("$PY" -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["notes"]))' "$tmp/out")" = 2 ] &&
    ok "the remote plan notes one NIC per node as --local does, beside the MoE note" ||
    fail "one-NIC note, remote: exit $rc, notes: $(cat "$tmp/remote.notes") vs --local's: $(cat "$tmp/local.notes")"
ctl plan --json "${nic_args[@]}" --cluster 2x8xH100-80G:1xib400
[ "$rc" = 0 ] && [ "$(json_field "$tmp/out" fingerprint)" = "$nic_fp" ] &&
    [ "$(json_field "$tmp/out" cached)" = True ] && [ "$(grep -c "note:" "$tmp/err")" = 1 ] &&
    ! grep -q "NIC" "$tmp/err" && [ "$(json_field "$tmp/out" notes | grep -c NIC)" = 0 ] &&
    ok "1xib400: the same plan from the store, without the NIC note" ||
    fail "1xib400 after ib400: exit $rc, fingerprint $(json_field "$tmp/out" fingerprint 2>&1) vs $nic_fp: $(grep note: "$tmp/err")"
ctl plans show "$nic_fp"
grep "note:" "$tmp/err" >"$tmp/remote.notes"
[ "$rc" = 0 ] && cmp -s "$tmp/local.notes" "$tmp/remote.notes" &&
    ok "plans show prints the two notes stored with the plan" ||
    fail "plans show $nic_fp: exit $rc, notes: $(cat "$tmp/remote.notes")"
# tp_sync where no layer may run TP (--no-tp): tesseld notes it as --local does, and a
# request beside --tp-comm-overlap is refused naming tp_sync (the shared validation)
sync_args=(--model GPT2-345M --cluster 4xA100-40G --batch 16 --no-tp --tp-sync --no-baselines)
timeout 300 "$CTL" plan --local "${sync_args[@]}" >/dev/null 2>"$tmp/local.err"
ctl plan "${sync_args[@]}"
grep "note:" "$tmp/local.err" >"$tmp/local.notes"
grep "note:" "$tmp/err" >"$tmp/remote.notes"
[ "$rc" = 0 ] && grep -q "note: tp_sync: --no-tp leaves every layer at TP 1" "$tmp/remote.notes" &&
    cmp -s "$tmp/local.notes" "$tmp/remote.notes" &&
    ok "plan --no-tp --tp-sync: tesseld's note is --local's" ||
    fail "plan --no-tp --tp-sync: exit $rc, notes $(cat "$tmp/remote.notes") vs $(cat "$tmp/local.notes")"
ctl plan --model GPT2-345M --cluster 4xA100-40G --batch 16 --tp-sync --tp-comm-overlap
[ "$rc" = 2 ] && grep -q "tp_sync: .*no sequence parallelism.*tp_comm_overlap" "$tmp/err" &&
    ok "plan --tp-sync --tp-comm-overlap: refused naming tp_sync" ||
    fail "plan --tp-sync --tp-comm-overlap: exit $rc: $(cat "$tmp/err")"
# the MoE dispatch switches on a dense model: tesseld notes they change nothing as --local
# does, and the request with one has its own fingerprint (no cached plan without it served)
moe_args=(--model GPT2-345M --cluster 4xA100-40G --batch 16 --no-baselines)
timeout 300 "$CTL" plan --local "${moe_args[@]}" --moe-a2a-overlap >/dev/null 2>"$tmp/local.err"
ctl plan "${moe_args[@]}" --moe-a2a-overlap
grep "note:" "$tmp/local.err" >"$tmp/local.notes"
grep "note:" "$tmp/err" >"$tmp/remote.notes"
[ "$rc" = 0 ] && grep -q "note: moe_a2a_overlap: the model has no MoE layer, so it changes nothing" \
    "$tmp/remote.notes" && cmp -s "$tmp/local.notes" "$tmp/remote.notes" &&
    ok "plan --moe-a2a-overlap on a dense model: tesseld's note is --local's" ||
    fail "plan --moe-a2a-overlap on GPT2-345M: exit $rc, notes $(cat "$tmp/remote.notes") vs $(cat "$tmp/local.notes")"
ctl plan "${moe_args[@]}" --json
fp_off=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["fingerprint"])' "$tmp/out")
ctl plan "${moe_args[@]}" --moe-flex-dispatcher --json
fp_flex=$("$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["fingerprint"], d.get("cached", False))' "$tmp/out")
[ "$rc" = 0 ] && [ -n "$fp_off" ] && [ "${fp_flex%% *}" != "$fp_off" ] && [ "${fp_flex##* }" = False ] &&
    ok "plan --moe-flex-dispatcher: its own fingerprint, not the plan stored without it" ||
    fail "plan --moe-flex-dispatcher: exit $rc, fingerprint $fp_flex against $fp_off"
# FP8 weights gathered in FP8 (plan --fp8-param-gather, PlanRequest 135): the request
# carries it to tesseld, which answers it under its own fingerprint (not the FP8 plan
# stored without it) with the local document, the plan recording it; refused there as
# locally, naming the field
pg_args=(--model GPT2-1.3B --cluster 4xH100-80G --batch 32 --no-baselines --target megatron --fp8-recipe tensorwise)
ctl plan "${pg_args[@]}" --json
fp_nopg=$(json_field "$tmp/out" fingerprint 2>/dev/null)
timeout 300 "$CTL" plan --local --json "${pg_args[@]}" --fp8-param-gather >"$tmp/local.json" 2>"$tmp/err"
ctl plan --json "${pg_args[@]}" --fp8-param-gather
d=$(same_doc "$tmp/local.json" "$tmp/out" 2>&1)
pg=$("$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["fingerprint"], d.get("cached", False), d["plan"].get("fp8_param_gather", False), d["request"]["fp8_param_gather"])' "$tmp/out")
[ "$rc" = 0 ] && [ "$d" = "same" ] && [ -n "$fp_nopg" ] && [ "${pg%% *}" != "$fp_nopg" ] &&
    [ "${pg#* }" = "False True True" ] &&
    ok "plan --fp8-param-gather through tesseld: its own fingerprint, the plan records it, as --local's" ||
    fail "plan --fp8-param-gather (remote): exit $rc, $d; fingerprint/cached/plan/request $pg against $fp_nopg"
ctl plan --model GPT2-1.3B --cluster 4xH100-80G --batch 32 --fp8-param-gather --no-fp8
[ "$rc" = 2 ] && grep -q "fp8_param_gather: FP8 weights belong to FP8 plans" "$tmp/err" &&
    ok "plan --fp8-param-gather with FP8 off: refused by tesseld naming the field" ||
    fail "plan --fp8-param-gather --no-fp8 (remote): exit $rc: $(cat "$tmp/err")"
# Blocks kept bf16 with MTP depths, --target megatron: DeepSeek-V3 in FP8 (blockwise) with
# its last 14 blocks bf16 and 2 depths (61 + 2 + 2 x 3 = 69 layers) is the local document
# through tesseld, and the stored plan exports Megatron-LM's flags for both (the megatron
# target refused it: the bf16 blocks keyed as another layer shape)
bf_args=("${v3_base[@]}" --target megatron --fp8-recipe blockwise --bf16-layers-end 14 --mtp-layers 2)
timeout 300 "$CTL" plan --local --json "${bf_args[@]}" >"$tmp/local.json" 2>"$tmp/err"
ctl plan --json "${bf_args[@]}"
expect_rc 0 "plan --json DeepSeek-V3 megatron FP8 --bf16-layers-end 14 --mtp-layers 2 (remote)"
d=$(same_doc "$tmp/local.json" "$tmp/out" 2>&1)
bf_layers=$(json_field "$tmp/out" model 2>/dev/null)
[ "$d" = "same" ] && [[ "$bf_layers" == *"'layers': 69,"* ]] &&
    ok "bf16 blocks and 2 MTP depths: remote --json = local --json (69 layers)" ||
    fail "bf16 blocks and MTP depths, remote vs local: $d; model $bf_layers"
bf_fp=$(json_field "$tmp/out" fingerprint 2>/dev/null)
timeout 300 "$CTL" plan --local "${bf_args[@]}" --export megatron >"$tmp/local.mg" 2>/dev/null
ctl plans export "$bf_fp" --format megatron
[ "$rc" = 0 ] && cmp -s "$tmp/out" "$tmp/local.mg" &&
    grep -q "^--mtp-num-layers 2$" "$tmp/out" &&
    tr '\n' ' ' <"$tmp/out" | grep -q -- "--first-last-layers-bf16 --num-layers-at-start-in-bf16 0 --num-layers-at-end-in-bf16 14 " &&
    ok "the stored plan's megatron export: --mtp-num-layers 2, the last 14 blocks bf16, as --local's" ||
    fail "plans export --format megatron of the bf16 plan: exit $rc: $(head -c 300 "$tmp/err")"
# Nemotron 3 Super (a Mamba hybrid with an MTP depth) under --target torchtitan: tesseld
# checks the model the target trains, without the depth, as --local does: the same
# refusal, its Mamba blocks (it refused the depth instead: validated before the rule)
sup_args=(--hf-config "$(dirname "$HF_CONFIG")/nemotron_3_super.json" --seq-len 2048 --cluster 8x8xB200-180G
    --batch 256 --no-baselines --fp8-recipe nvfp4 --bf16-layers-end 14 --target torchtitan)
timeout 300 "$CTL" plan --local "${sup_args[@]}" >/dev/null 2>"$tmp/local.err"; lrc=$?
ctl plan "${sup_args[@]}"
lmsg=$(grep -v ': note: ' "$tmp/local.err" | head -1)
[ "$rc" = 4 ] && [ "$lrc" = 4 ] && [[ "$lmsg" == *"layer 1 of nemotron_3_super is a mamba block"* ]] &&
    [ "$(head -1 "$tmp/err")" = "$lmsg" ] &&
    ok "Super under torchtitan: exit 4 and the same reason, local and remote" ||
    fail "Super under torchtitan: local exit $lrc '$lmsg', remote exit $rc '$(head -1 "$tmp/err")'"

# ---- refusals: the same exit status and message, --local or through tesseld --------
# (no plan fits is exit 2 both ways: the daemon's OUT_OF_RANGE; bad input
# INVALID_ARGUMENT, whose message the daemon may prefix with the request field)
same_refusal() { # WHAT ARGS...
    local what=$1
    shift
    timeout 300 "$CTL" plan --local "$@" >/dev/null 2>"$tmp/local.err"
    local lrc=$?
    ctl plan "$@"
    local lmsg rmsg
    lmsg=$(head -1 "$tmp/local.err")
    rmsg=$(head -1 "$tmp/err")
    if [ "$rc" = 2 ] && [ "$lrc" = 2 ] && [ -n "$lmsg" ] &&
        [[ "$rmsg" == "tesselctl: "*"${lmsg#tesselctl: }" ]]; then
        ok "$what: exit 2 and the same message, local and remote"
    else
        fail "$what: local exit $lrc '$lmsg', remote exit $rc '$rmsg'"
    fi
}
same_refusal "no plan fits" --model GPT3-65B --cluster 8xA100-40G --memory 4G --batch 8
same_refusal "an unknown GPU type" --model GPT2-345M --cluster 8xA200-80G --batch 8
same_refusal "more stages than devices" --model GPT2-345M --cluster 8xA100-40G --batch 7 --pp 16

# ---- --target: the request field travels; the document is the local one ----------
t_args=(--model "$MODEL" --cluster 8xA100-40G --batch 32 --target megatron)
timeout 300 "$CTL" plan --local --json "${t_args[@]}" >"$tmp/local.json" 2>"$tmp/err"
ctl plan --json "${t_args[@]}"
expect_rc 0 "plan --json ${t_args[*]} (remote)"
d=$(same_doc "$tmp/local.json" "$tmp/out" 2>&1)
[ "$d" = "same" ] && ok "--target megatron: remote --json = local --json (target object included)" ||
    fail "--target megatron, remote vs local: $d"
t_fp=$(json_field "$tmp/out" fingerprint 2>/dev/null)
[ -n "$t_fp" ] && [ "$t_fp" != "$same_fp" ] && ok "the target is part of the fingerprint" ||
    fail "--target fingerprint '$t_fp' vs unrestricted '$same_fp'"
ctl plans export "$t_fp" --format megatron
expect_rc 0 "plans export --format megatron of a plan searched for megatron"
ctl plan "${t_args[@]}"
expect_grep "$tmp/out" "target megatron: .* samples/s, .*× the unrestricted plan" "the table's target line"

# ---- a HuggingFace config: the model's shape comes back from the daemon ------------
hf_args=(--hf-config "$HF_CONFIG" --cluster "$CLUSTER" --batch 16 --no-baselines)
timeout 300 "$CTL" plan --local --json "${hf_args[@]}" >"$tmp/local.json" 2>"$tmp/err"
hf_layers=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["model"]["layers"])' "$tmp/local.json" 2>&1)
ctl plan --json "${hf_args[@]}"
expect_rc 0 "plan --hf-config $(basename "$HF_CONFIG")"
d=$(same_doc "$tmp/local.json" "$tmp/out" 2>&1)
[ "$d" = "same" ] && ok "HF-config plan: remote --json = local --json" || fail "HF-config plan, remote vs local: $d"
hf_fp=$(json_field "$tmp/out" fingerprint 2>/dev/null)
ctl plans show "$hf_fp"
expect_rc 0 "plans show of the HF-config plan"
[[ "$hf_layers" =~ ^[1-9][0-9]*$ ]] && ok "the local planner counts $hf_layers layers" || fail "local layer count '$hf_layers'"
expect_grep "$tmp/out" "^Plan for .* \\($hf_layers layers, 0\\.1[0-9]B parameters\\)" \
    "plans show prints the HF model's $hf_layers layers and its parameters"
expect_grep "$tmp/out" '^Search: .* [1-9][0-9]* configurations, [1-9][0-9]* batch sizes' \
    "plans show prints the search statistics"
# A config in a directory: the daemon names the model as --local does (the
# directory), not by its model_type.
mkdir -p "$tmp/my-gpt2" && cp "$HF_CONFIG" "$tmp/my-gpt2/config.json"
ctl plan --json --hf-config "$tmp/my-gpt2/config.json" --cluster "$CLUSTER" --batch 8 --no-baselines
hf_name=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["model"]["name"])' "$tmp/out" 2>&1)
[ "$hf_name" = my-gpt2 ] && ok "an HF model planned through tesseld keeps the name --local gives" ||
    fail "HF model name through tesseld: '$hf_name', want my-gpt2"
# The directory itself (DIR/config.json), and a directory without one.
ctl plan --json --hf-config "$tmp/my-gpt2" --cluster "$CLUSTER" --batch 8 --no-baselines
hf_name=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["model"]["name"])' "$tmp/out" 2>&1)
[ "$rc" = 0 ] && [ "$hf_name" = my-gpt2 ] && ok "--hf-config DIR through tesseld reads DIR/config.json" ||
    fail "--hf-config DIR through tesseld: exit $rc, name '$hf_name'"
# The same model under another --name: the plan is the cached one (the name is
# not part of the fingerprint), answered under the name this request gave, as
# --local would print it, not the earlier request's.
ctl plan --json --hf-config "$tmp/my-gpt2" --name other-gpt2 --cluster "$CLUSTER" --batch 8 --no-baselines
hf_named=$("$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["model"]["name"], d["cached"])' "$tmp/out" 2>&1)
[ "$rc" = 0 ] && [ "$hf_named" = "other-gpt2 True" ] &&
    ok "a cache hit is answered under the name its request gave" ||
    fail "cache hit under --name other-gpt2: exit $rc, name and cached '$hf_named'"
mkdir -p "$tmp/no-config"
ctl plan --hf-config "$tmp/no-config" --cluster "$CLUSTER" --batch 8
expect_rc 2 "--hf-config of a directory without config.json"
expect_grep "$tmp/err" "a directory without a config.json" "the directory without config.json is named"
timeout 300 "$CTL" plan --local "${hf_args[@]}" --export galvatron >"$tmp/local.hf" 2>&1; lrc=$?
ctl plans export "$hf_fp" --format galvatron
[ "$rc" = "$lrc" ] && { [ "$rc" = 4 ] || cmp -s "$tmp/out" "$tmp/local.hf"; } &&
    ok "plans export of an HF-config plan rebuilds its model (exit $rc)" ||
    fail "plans export --format galvatron of the HF-config plan: exit $rc, local $lrc"

# ---- health, addresses, environment ---------------------------------------------
ctl health
expect_rc 0 "health"
expect_grep "$tmp/out" '^SERVING$' "health prints SERVING"
ctl health --json
expect_rc 0 "health --json"
expect_grep "$tmp/out" '"status": "SERVING"' "health --json"

TESSEL_SERVER="unix://$sock" timeout 60 "$CTL" health >"$tmp/out" 2>"$tmp/err"; rc=$?
expect_rc 0 "TESSEL_SERVER=unix:///path"

timeout 60 "$CTL" --server "unix:$tmp/no-such.sock" health >"$tmp/out" 2>"$tmp/err"; rc=$?
expect_rc 5 "health on a socket nobody listens on"
expect_grep "$tmp/err" '^tesselctl: .*unavailable' "unavailable reported on stderr"
timeout 60 "$CTL" --server "unix:$tmp/no-such.sock" plan --model "$MODEL" --cluster "$CLUSTER" \
    >"$tmp/out" 2>"$tmp/err"; rc=$?
expect_rc 5 "plan on a socket nobody listens on"
expect_grep "$tmp/err" '^tesselctl: .*unavailable.*--local plans in-process' \
    "plan without a daemon points at --local"

# ---- invalid input ----------------------------------------------------------------
ctl plan --model No-Such-Model --cluster "$CLUSTER"
expect_rc 2 "plan with an unknown preset"
expect_grep "$tmp/err" '^tesselctl: .*model' "the message names the model field"
if [ "$(wc -l <"$tmp/err")" -eq 1 ]; then ok "one line on stderr"; else fail "stderr has $(wc -l <"$tmp/err") lines"; fi

ctl plans list --page-size 0
expect_rc 2 "plans list --page-size 0"
ctl plans frobnicate
expect_rc 2 "plans with an unknown action"
ctl plans show
expect_rc 2 "plans show without a fingerprint"

for sub in "plans --help" "plans list --help" "plans show --help" "plans delete --help" \
           "plans export --help" "health --help"; do
    # shellcheck disable=SC2086
    ctl $sub
    expect_rc 0 "$sub"
    expect_grep "$tmp/out" '^usage: tesselctl' "$sub prints a usage line"
done

# ---- deadline -------------------------------------------------------------------
ctl --timeout 0.3 plan --model GPT3-65B --cluster 16x8xA100-80G:ib100 --max-batch 65536 --force
expect_rc 5 "plan past its --timeout"
expect_grep "$tmp/err" '^tesselctl: .*(deadline|within 0.3 s)' "deadline reported on stderr"

# ---- TCP with tokens ---------------------------------------------------------------
start_tcp_daemon
tcp_ctl "$OPS_TOKEN" health
expect_rc 0 "health over TCP with the ops token"
tcp_ctl "" plans list
expect_rc 4 "plans list over TCP without a token"
expect_grep "$tmp/err" '^tesselctl: ' "missing token reported on stderr"
tcp_ctl "not-a-token" plans list
expect_rc 4 "plans list over TCP with a wrong token"
tcp_ctl "$OPS_TOKEN" plan --model "$MODEL" --cluster "$CLUSTER" --batch 32
expect_rc 4 "plan with the ops token (wrong role)"
tcp_ctl "$SCHED_TOKEN" plan --model "$MODEL" --cluster "$CLUSTER" --batch 32
expect_rc 0 "plan over TCP with the scheduler token (TESSEL_TOKEN)"
TESSEL_TOKEN=not-a-token timeout 60 "$CTL" --server "127.0.0.1:$port" --token "$OPS_TOKEN" \
    plans list >"$tmp/out" 2>"$tmp/err"; rc=$?
expect_rc 0 "--token wins over TESSEL_TOKEN"
expect_grep "$tmp/out" "$MODEL" "plans list over TCP shows the plan"

# plans list's columns stay in line under a model name longer than the MODEL
# column's 18 characters (an HF directory's name pushed them out)
tcp_ctl "$SCHED_TOKEN" plan --hf-config "$HF_CONFIG" --name Meta-Llama-3.1-70B-Instruct-tiny \
    --cluster "$CLUSTER" --batch 8 --no-baselines
expect_rc 0 "plan under a 32-character name"
tcp_ctl "$OPS_TOKEN" plans list
n=$(awk 'NR == 1 { col = index($0, "DEVICES") + length("DEVICES") }
         NR > 1 && (substr($0, col - 1, 1) !~ /[0-9]/ || substr($0, col, 1) != " ") { bad++ }
         END { print NR - 1, bad + 0 }' "$tmp/out")
[ "${n#* }" = 0 ] && ok "plans list: every row's DEVICES under its header ($n)" ||
    fail "plans list columns out of line: $(cat "$tmp/out")"

if [ "$failures" -ne 0 ]; then
    note "---- tesseld logs (tail) ----"
    tail -30 "$tmp/tesseld.log"
    [ -f "$tmp/tcp.log" ] && tail -30 "$tmp/tcp.log"
    note "$failures check(s) failed"
    exit 1
fi
note "PASS"
