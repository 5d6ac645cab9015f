#!/usr/bin/env bash
# tls_workers.sh — tesseld on a TLS TCP port of 127.0.0.1 that requires client
# certificates (tls_client_ca), with a throwaway CA made by openssl here:
#   tesselctl --ca (and a client certificate) gets health and a plan through;
#   --tls without --ca (system roots) and --ca of another CA fail in one line
#   with exit 5; without a client certificate the handshake is refused;
#   a sim tessel-worker registers, profiles and heartbeats over mutual TLS.
# Then worker identity: a worker id belongs to the credential that registered
# it (the node certificate's subject over mutual TLS, else the token). Another
# worker token on the unix socket cannot heartbeat, deregister or report a
# profile for it (PERMISSION_DENIED naming both, nothing changed); the owner
# still can, also after tesseld restarts.
#
# usage: tls_workers.sh TESSELCTL TESSELD TESSEL_WORKER DEVICE_FILE PROTO_DIR
set -u

CTL=${1:?usage: tls_workers.sh TESSELCTL TESSELD TESSEL_WORKER DEVICE_FILE PROTO_DIR}
DAEMON=${2:?usage}
WORKER=${3:?usage}
DEVICE_FILE=${4:?usage}
PROTO_DIR=${5:?usage}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3
OPENSSL=/usr/bin/openssl
[ -x "$OPENSSL" ] || { echo "SKIP: no $OPENSSL"; exit 77; }

tmp=$(mktemp -d /tmp/tessel-tls-it.XXXXXX)
sock=$tmp/tesseld.sock
SCHED=tw-scheduler-8a1c77
OPS=tw-ops-2f9e10
WTOKEN=tw-worker-one-4d7b21
WTOKEN2=tw-worker-two-c0e5a9
pids=()

# shellcheck source=proc.sh
. "$HERE/proc.sh" # ok, fail, expect_rc, stop_pid, stop_pids_and_clean

trap stop_pids_and_clean EXIT
trap 'exit 1' INT TERM

port=$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
addr=127.0.0.1:$port

# ---- a throwaway PKI ------------------------------------------------------------------------
# ca NAME — a self-signed CA in $tmp/NAME.{key,pem}
ca() {
    "$OPENSSL" req -x509 -newkey rsa:2048 -nodes -days 1 -subj "/CN=$1" \
        -keyout "$tmp/$1.key" -out "$tmp/$1.pem" >/dev/null 2>&1
}
# leaf NAME CA CN [SAN] — a certificate signed by CA in $tmp/NAME.{key,pem}
leaf() {
    local ext=$tmp/$1.ext
    printf 'basicConstraints=CA:FALSE\n' >"$ext"
    [ -n "${4:-}" ] && printf 'subjectAltName=%s\n' "$4" >>"$ext"
    "$OPENSSL" req -newkey rsa:2048 -nodes -subj "/CN=$3" -keyout "$tmp/$1.key" \
        -out "$tmp/$1.csr" >/dev/null 2>&1 &&
        "$OPENSSL" x509 -req -in "$tmp/$1.csr" -CA "$tmp/$2.pem" -CAkey "$tmp/$2.key" \
            -CAcreateserial -days 1 -extfile "$ext" -out "$tmp/$1.pem" >/dev/null 2>&1
}
ca ca && ca other-ca &&
    leaf server ca localhost "DNS:localhost,IP:127.0.0.1" &&
    leaf node-a ca node-a && leaf ctl ca tesselctl ||
    { fail "openssl could not make the test certificates"; exit 1; }
chmod 600 "$tmp"/*.key

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
tcp = $addr
tls_cert = $tmp/server.pem
tls_key = $tmp/server.key
tls_client_ca = $tmp/ca.pem
[store]
database = $tmp/t.db
[search]
pool_size = 1
[registry]
worker_heartbeat_s = 1
worker_timeout_s = 5
[tokens]
$SCHED = scheduler
$OPS = ops
$WTOKEN = worker
$WTOKEN2 = worker
EOF

# ctl TOKEN ARGS... — tesselctl to the TLS port; stdout $tmp/out, stderr $tmp/err, status $rc
ctl() {
    local token=$1
    shift
    timeout 60 "$CTL" --server "$addr" --token "$token" --timeout 10 "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
}
MTLS=(--ca "$tmp/ca.pem" --cert "$tmp/ctl.pem" --key "$tmp/ctl.key")

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

start_daemon || { fail "tesseld did not come up"; exit 1; }
grep -q "client certificates required" "$tmp/tesseld.log" &&
    ok "tesseld says its TLS port requires client certificates" ||
    fail "tesseld's log does not say the TLS port requires client certificates"

# ---- tesselctl over TLS ---------------------------------------------------------------------
ctl "$OPS" "${MTLS[@]}" health
expect_rc 0 "tesselctl --ca --cert --key health over mutual TLS"
ctl "$SCHED" "${MTLS[@]}" plan --model GPT2-345M --cluster 1x4xA100-40G --batch 8 --json
expect_rc 0 "tesselctl plan over mutual TLS"
ctl "$OPS" health --tls --cert "$tmp/ctl.pem" --key "$tmp/ctl.key"
expect_rc 5 "--tls without --ca (system roots) is refused"
[ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q "^tesselctl: .*unavailable" "$tmp/err" &&
    ok "one line: $(cat "$tmp/err")" || fail "--tls without --ca: stderr $(cat "$tmp/err")"
ctl "$OPS" --ca "$tmp/other-ca.pem" --cert "$tmp/ctl.pem" --key "$tmp/ctl.key" health
expect_rc 5 "--ca of another CA is refused"
[ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q -- "--ca" "$tmp/err" &&
    ok "one line naming --ca: $(cat "$tmp/err")" || fail "wrong CA: stderr $(cat "$tmp/err")"
ctl "$OPS" --ca "$tmp/ca.pem" health
expect_rc 5 "without a client certificate the mutual-TLS port refuses"
[ "$(wc -l <"$tmp/err")" -eq 1 ] && ok "one line: $(cat "$tmp/err")" ||
    fail "no client certificate: stderr $(cat "$tmp/err")"
ctl "$OPS" health
expect_rc 5 "plaintext to the TLS port fails"
ctl "$OPS" --ca "$tmp/missing.pem" health
expect_rc 2 "an unreadable --ca is a usage error"
grep -q -- "--ca: cannot open" "$tmp/err" && ok "it names --ca" || fail "stderr: $(cat "$tmp/err")"
ctl "$OPS" --cert "$tmp/ctl.pem" health
expect_rc 2 "--cert without --key is a usage error"

# ---- a worker over mutual TLS ----------------------------------------------------------------
# wait_for SECONDS EXPR — polls `tesselctl workers --json` until EXPR (over d) is True.
q() {
    "$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2" 2>/dev/null
}
wait_for() {
    local i
    for i in $(seq 1 $(($1 * 5))); do
        ctl "$OPS" "${MTLS[@]}" workers --json
        [ "$rc" -eq 0 ] && [ "$(q "$tmp/out" "$2")" = True ] && return 0
        sleep 0.2
    done
    return 1
}
cat >"$tmp/worker.conf" <<EOF
[daemon]
address = $addr
token_file = $tmp/worker.token
ca_file = $tmp/ca.pem
cert_file = $tmp/node-a.pem
key_file = $tmp/node-a.key
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
    grep -q "^ca_file = $tmp/ca.pem" "$tmp/out" && ok "tessel-worker --check-config shows ca_file" ||
    fail "tessel-worker --check-config: $(cat "$tmp/out")"
"$WORKER" run --config "$tmp/worker.conf" --node-name node-a --state-dir "$tmp/state-a" \
    >>"$tmp/node-a.log" 2>&1 &
wpid=$!
pids+=("$wpid")
if wait_for 40 "[(w['hostname'], w['state'], w['profile_unix'] > 0) for w in d['workers']] == [('node-a', 'online', True)]"; then
    ok "a sim worker registered, profiled and is online over mutual TLS"
else
    fail "the worker did not come online over mutual TLS: $(cat "$tmp/out")"
fi
id_a=$(q "$tmp/out" "d['workers'][0]['worker_id']")

# ---- a worker id is bound to the credential that registered it ------------------------------
# act TOKEN WORKER_ID [keep] — the five worker calls for WORKER_ID with TOKEN on the
# unix socket (deregister last, not with keep); "Method=CODE: details" in $tmp/act.
cat >"$tmp/act.py" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import tsl_rpc
tsl_rpc.load_stubs(sys.argv[2], sys.argv[3])
import grpc
from tessel.v1 import registry_pb2 as pb, registry_pb2_grpc as rg
target, token, wid = sys.argv[4:7]
stub = rg.RegistryStub(grpc.insecure_channel(target))
md = [("authorization", "Bearer " + token)]
m = pb.Measurement(name="gemm_fwd", unit="s", value=1e-3, per_device=True)
m.labels["shape"] = "h=1024,s=1024,a=16"
calls = [
    ("Heartbeat", lambda: stub.Heartbeat(pb.HeartbeatRequest(worker_id=wid), metadata=md, timeout=10)),
    ("ReportProfile", lambda: stub.ReportProfile(pb.ReportProfileRequest(
        worker_id=wid, report_id="imp-" + token[-6:], measurements=[m]), metadata=md, timeout=10)),
    ("Assignments", lambda: list(stub.Assignments(pb.AssignmentsRequest(worker_id=wid, wait_s=1),
                                                  metadata=md, timeout=10))),
    ("ReportTrial", lambda: stub.ReportTrial(pb.ReportTrialRequest(
        trial_id="t-0000000000000000", worker_id=wid, rank=0), metadata=md, timeout=10)),
    ("Deregister", lambda: stub.Heartbeat(pb.HeartbeatRequest(worker_id=wid, deregister=True),
                                          metadata=md, timeout=10)),
]
for name, fn in calls:
    if name == "Deregister" and len(sys.argv) > 7:
        continue
    try:
        fn()
        print("%s=OK" % name)
    except grpc.RpcError as e:
        print("%s=%s: %s" % (name, e.code().name, e.details()))
PY
act() {
    "$PY" "$tmp/act.py" "$HERE" "$PROTO_DIR" "$tmp/stubs" "unix:$sock" "$@" >"$tmp/act" 2>&1
}
# all_denied WHAT — every line of $tmp/act is PERMISSION_DENIED naming the binding
all_denied() {
    if [ "$(grep -c '=PERMISSION_DENIED: worker_id: .* is bound to the credential' "$tmp/act")" -eq 5 ]; then
        ok "$1: all five calls PERMISSION_DENIED ($(head -n 1 "$tmp/act"))"
    else
        fail "$1: $(cat "$tmp/act")"
    fi
}

# node-b registers with the first worker token on the unix socket (no certificate)
cat >"$tmp/worker-b.conf" <<EOF
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
"$WORKER" run --config "$tmp/worker-b.conf" --node-name node-b --state-dir "$tmp/state-b" \
    >>"$tmp/node-b.log" 2>&1 &
pids+=("$!")
wait_for 40 "sorted((w['hostname'], w['state'], w['profile_unix'] > 0) for w in d['workers']) == [('node-a', 'online', True), ('node-b', 'online', True)]" &&
    ok "node-b registered with the first worker token" || fail "node-b: $(cat "$tmp/out")"
id_b=$(q "$tmp/out" "[w['worker_id'] for w in d['workers'] if w['hostname']=='node-b'][0]")
profile_b=$(q "$tmp/out" "[w['profile_unix'] for w in d['workers'] if w['hostname']=='node-b'][0]")

act "$WTOKEN2" "$id_b"
all_denied "the second worker token acting as node-b"
grep -q "this caller is token:" "$tmp/act" && ok "the message names both credentials" ||
    fail "message: $(head -n 1 "$tmp/act")"
act "$WTOKEN2" "$id_a"
all_denied "the second worker token acting as node-a (bound to its certificate)"
act "$WTOKEN" "$id_a"
all_denied "the first worker token without node-a's certificate"
ctl "$OPS" "${MTLS[@]}" workers --json
[ "$(q "$tmp/out" "sorted((w['hostname'], w['state']) for w in d['workers'])")" = "[('node-a', 'online'), ('node-b', 'online')]" ] &&
    [ "$(q "$tmp/out" "[w['profile_unix'] for w in d['workers'] if w['hostname']=='node-b'][0]")" = "$profile_b" ] &&
    ok "nothing changed: both online, node-b's profile as before" ||
    fail "after the refused calls: $(cat "$tmp/out")"
act "$WTOKEN" "$id_b" keep
grep -q "^Heartbeat=OK" "$tmp/act" && grep -q "^ReportProfile=OK" "$tmp/act" &&
    grep -q "^Assignments=OK" "$tmp/act" &&
    ok "the first worker token still heartbeats, reports and polls as node-b" ||
    fail "owner: $(cat "$tmp/act")"

# a worker credential reads the raw figures of its own host only
cat >"$tmp/getprof.py" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import tsl_rpc
tsl_rpc.load_stubs(sys.argv[2], sys.argv[3])
import grpc
from tessel.v1 import registry_pb2 as pb, registry_pb2_grpc as rg
target, token, host = sys.argv[4:7]
stub = rg.RegistryStub(grpc.insecure_channel(target))
try:
    r = stub.GetProfile(pb.GetProfileRequest(hostname=host),
                        metadata=[("authorization", "Bearer " + token)], timeout=10)
    print("OK %d" % len(r.measurements))
except grpc.RpcError as e:
    print("%s: %s" % (e.code().name, e.details()))
PY
getprof() { "$PY" "$tmp/getprof.py" "$HERE" "$PROTO_DIR" "$tmp/stubs" "unix:$sock" "$@" 2>&1; }
out=$(getprof "$WTOKEN2" node-b)
case $out in
"PERMISSION_DENIED: hostname: the raw figures of node-b"*) ok "another worker token cannot read node-b's raw profile" ;;
*) fail "raw profile of node-b with the second token: $out" ;;
esac
out=$(getprof "$WTOKEN" node-b)
case $out in
"OK "[1-9]*) ok "node-b's own token reads its raw profile ($out)" ;;
*) fail "raw profile of node-b with its own token: $out" ;;
esac
out=$(getprof "$OPS" node-b)
case $out in
"OK "[1-9]*) ok "ops reads any host's raw profile" ;;
*) fail "raw profile of node-b as ops: $out" ;;
esac

# the binding is stored: after a restart the second token is still refused
stop_pid "$daemon_pid"
start_daemon || { fail "tesseld did not come back"; exit 1; }
act "$WTOKEN2" "$id_b"
all_denied "after a restart, the second worker token acting as node-b"
act "$WTOKEN" "$id_b" keep
grep -q "^Heartbeat=OK" "$tmp/act" && ok "after a restart the owner still heartbeats" ||
    fail "owner after restart: $(cat "$tmp/act")"

if [ "$failures" -ne 0 ]; then
    echo "$failures check(s) failed"
    exit 1
fi
echo "all checks passed"
