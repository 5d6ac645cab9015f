# lib.sh — shared by the daemon integration tests (sourced, not run).
#
# Each test script is started by meson as: SCRIPT TESSELD PROTO_DIR. It gets a
# private temporary directory ($TMPD) for sockets, databases and logs, every
# daemon it starts is killed by the EXIT trap, every wait is bounded, and the
# only network used is unix sockets and 127.0.0.1. The RPC client is
# tsl_rpc.py on Debian's /usr/bin/python3 (python3-grpcio, python3-grpc-tools).

set -u

TESSELD=${1:?usage: $0 TESSELD PROTO_DIR}
PROTO_DIR=${2:?usage: $0 TESSELD PROTO_DIR}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
# shellcheck source=store_db.sh
. "$HERE/store_db.sh" # set_stale
TMPD=$(mktemp -d /tmp/tessel-it.XXXXXX)
STUBS=$TMPD/stubs
DAEMON_PIDS=()
FAILURES=0

cleanup() {
    for pid in "${DAEMON_PIDS[@]}"; do
        kill -KILL "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
    done
    if [ "$FAILURES" -ne 0 ]; then
        for log in "$TMPD"/*.log; do
            [ -f "$log" ] || continue
            echo "---- $log (last 40 lines)"
            tail -n 40 "$log"
        done
    fi
    rm -rf "$TMPD"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

if ! "$PY" -c 'import grpc, grpc_tools' 2>/dev/null; then
    echo "SKIP: $PY lacks grpc / grpc_tools (python3-grpcio, python3-grpc-tools)"
    exit 77
fi

ok() { printf 'ok: %s\n' "$*"; }
fail() {
    printf 'FAIL: %s\n' "$*"
    FAILURES=$((FAILURES + 1))
}
finish() {
    # A daemon built with -Db_sanitize=... reports into its log.
    if grep -lE 'ERROR: (Address|Leak|Thread)Sanitizer|runtime error:' "$TMPD"/*.log 2>/dev/null; then
        fail "a sanitizer reported an error (log above)"
    fi
    if [ "$FAILURES" -ne 0 ]; then
        echo "$FAILURES check(s) failed"
        exit 1
    fi
    echo "all checks passed"
    exit 0
}

# start_daemon NAME ARGS... — starts tesseld in the background (log in
# $TMPD/NAME.log); sets $DPID. Does not wait; see wait_healthy.
start_daemon() {
    local name=$1
    shift
    "$TESSELD" "$@" >"$TMPD/$name.log" 2>&1 &
    DPID=$!
    DAEMON_PIDS+=("$DPID")
}

# wait_healthy TARGET [TOKEN] — up to 15 s for Health/Check to answer SERVING.
wait_healthy() {
    local target=$1 token=${2:-} i
    for i in $(seq 1 75); do
        if [ -n "$token" ]; then
            rpc_to "$target" --token "$token" --deadline 2 health >/dev/null 2>&1
        else
            rpc_to "$target" --deadline 2 health >/dev/null 2>&1
        fi
        if [ "$(jget "$OUT" status)" = SERVING ]; then
            return 0
        fi
        sleep 0.2
    done
    return 1
}

# wait_exit PID SECONDS — 0 when the process ended in time; its status in $EXIT_STATUS.
wait_exit() {
    local pid=$1 secs=$2 i
    for i in $(seq 1 $((secs * 10))); do
        if ! kill -0 "$pid" 2>/dev/null; then
            wait "$pid" 2>/dev/null
            EXIT_STATUS=$?
            return 0
        fi
        sleep 0.1
    done
    return 1
}

# rpc_to TARGET [CLIENT OPTIONS] COMMAND ... — one call; JSON result in $OUT
# (a file), also echoed to the test log. Bounded by timeout(1).
OUT=$TMPD/out.json
rpc_to() {
    local target=$1
    shift
    timeout 300 "$PY" "$HERE/tsl_rpc.py" --proto "$PROTO_DIR" --stubs "$STUBS" \
        --target "$target" "$@" >"$OUT" 2>"$TMPD/rpc.err"
    local rc=$?
    if [ $rc -ne 0 ]; then
        echo "{\"code\": \"CLIENT_FAILED_$rc\"}" >"$OUT"
        sed 's/^/  client: /' "$TMPD/rpc.err" | tail -n 5
    fi
    return 0
}

# jget FILE KEY[.KEY...] — a value from a JSON file ("" when absent).
jget() {
    "$PY" - "$1" "$2" <<'EOF'
import json, sys
try:
    v = json.load(open(sys.argv[1]))
    for k in sys.argv[2].split("."):
        v = v[int(k)] if isinstance(v, list) else v.get(k, "")
except Exception:
    v = ""
print(json.dumps(v) if isinstance(v, (dict, list)) else ("" if v is None else v))
EOF
}

# expect WHAT KEY WANT — compares a value of the last answer.
expect() {
    local what=$1 key=$2 want=$3 got
    got=$(jget "$OUT" "$key")
    if [ "$got" = "$want" ]; then
        ok "$what ($key=$got)"
    else
        fail "$what: $key=$got, want $want"
        head -c 600 "$OUT" | sed 's/^/  answer: /'
        echo
    fi
}

# expect_details WHAT PATTERN — the error message of the last answer matches.
expect_details() {
    local what=$1 pattern=$2 got
    got=$(jget "$OUT" details)
    if printf '%s' "$got" | grep -Eq -- "$pattern"; then
        ok "$what (message: $got)"
    else
        fail "$what: message '$got' does not match /$pattern/"
    fi
}

# wait_events FILE PATTERN COUNT SECONDS — a --events-file has COUNT lines matching.
wait_events() {
    local i n
    for i in $(seq 1 $(($4 * 10))); do
        n=$(grep -c -- "$2" "$1" 2>/dev/null)
        [ "${n:-0}" -ge "$3" ] && return 0
        sleep 0.1
    done
    return 1
}

# free_port — a TCP port on 127.0.0.1 that was free a moment ago.
free_port() {
    "$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# start_trial_daemon — tesseld "d" on $TMPD/tesseld.sock ($SOCK, target $T) with a
# 3 s worker timeout for the trial tests; finishes the test when it is not healthy.
start_trial_daemon() {
    SOCK=$TMPD/tesseld.sock
    T=unix:$SOCK
    start_daemon d --unix-socket "$SOCK" --database "$TMPD/t.db" --pool-size 1 --worker-timeout 3
    wait_healthy "$T" || { fail "tesseld did not become healthy"; finish; }
    ok "tesseld is up"
}

# start_sim_workers PORT PREFIX NODE... — one sim `tessel-worker run` ($WORKER,
# $DEVICE_FILE) per NODE on the tesseld at $T, quick profile, trial ports PORT,
# PORT+10, ...; its log is $TMPD/NODE.log and pid_SUFFIX (NODE less PREFIX) its pid.
start_sim_workers() {
    local port=$1 prefix=$2 node
    shift 2
    for node in "$@"; do
        "$WORKER" run --server "$T" --backend sim --device-file "$DEVICE_FILE" --gpus 0 \
            --node-name "$node" --state-dir "$TMPD/state-$node" --heartbeat 1 \
            --profile-quick yes --trial-address 127.0.0.1 --trial-port "$port" --trial-poll 2 \
            --backoff-base 0.2 --backoff-cap 2 >"$TMPD/$node.log" 2>&1 &
        DAEMON_PIDS+=("$!")
        eval "pid_${node#"$prefix"}=\$!"
        port=$((port + 10))
    done
}

# wait_profiled N — waits (bounded, 150 tries) until N workers on $T are online
# with a profile; 1 when they never were.
wait_profiled() {
    for _ in $(seq 1 150); do
        timeout 20 "$CTL" --server "$T" workers --json >"$TMPD/workers.json" 2>/dev/null &&
            "$PY" -c 'import json,sys; w=json.load(open(sys.argv[1]))["workers"]; sys.exit(0 if len([x for x in w if x["state"]=="online" and x.get("profile_unix")]) == int(sys.argv[2]) else 1)' \
                "$TMPD/workers.json" "$1" 2>/dev/null && return 0
        sleep 0.2
    done
    return 1
}

# Requests used by several tests. QUICK plans in well under a second; LONG
# searches for seconds (a 200-layer Llama-style model over 128 GPUs) so that
# it is still running when a test cancels it, kills the daemon or fills the
# queue; tests that rely on that check it and say so when it was not.
QUICK=(--model GPT2-345M --cluster 4xA100-40G)
QUICK2=(--model BERT-Large --cluster 8xA100-40G)
QUICK3=(--model GPT2-762M --cluster 8xA100-80G)
cat >"$TMPD/long.json" <<'JSON'
{"model_type": "llama", "hidden_size": 4096, "intermediate_size": 11008,
 "num_hidden_layers": 200, "num_attention_heads": 32, "vocab_size": 32000,
 "max_position_embeddings": 4096}
JSON
LONG=(--hf-config "$TMPD/long.json" --cluster 16x8xA100-80G:ib100)
# LONGER searches for several seconds even with the search's kept work (DeepSeek-V3
# over 2048 H800, ~7 s on one core of the development VM), for a test whose long
# search must outlast two 1 s and one 2 s deadline (daemon_queue.sh).
LONGER=(--model DeepSeek-V3 --cluster 256x8xH800-80G:8xib400)
