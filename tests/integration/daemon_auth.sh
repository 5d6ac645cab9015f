#!/usr/bin/env bash
# daemon_auth.sh — bearer tokens and roles, over TCP on 127.0.0.1 and over the
# unix socket: missing and unknown tokens (UNAUTHENTICATED), a role the method
# does not accept (PERMISSION_DENIED), Health/Check always allowed; then TLS on
# the TCP listener with a self-signed certificate.
#
# usage: daemon_auth.sh TESSELD PROTO_DIR
source "$(dirname "$0")/lib.sh"

SOCK=$TMPD/tesseld.sock
PORT=$(free_port)
TCP=127.0.0.1:$PORT
SCHED=sched-3f9a1c
OPS=ops-77e0b2
WORKER=worker-5d21aa
cat >"$TMPD/tesseld.conf" <<EOF2
[server]
unix_socket = $SOCK
tcp = $TCP
insecure_tcp = true
[store]
database = $TMPD/t.db
[search]
pool_size = 1
[tokens]
$SCHED = scheduler
$OPS = ops
$WORKER = worker
EOF2

start_daemon d --config "$TMPD/tesseld.conf"
wait_healthy "$TCP" || { fail "tesseld did not become healthy on $TCP"; finish; }
ok "tesseld is up on unix:$SOCK and $TCP"

rpc_to "$TCP" health
expect "Health/Check without a token" status SERVING
rpc_to "$TCP" list
expect "ListPlans without a token" code UNAUTHENTICATED
expect_details "missing token message" 'authorization: Bearer'
rpc_to "$TCP" --token not-a-token list
expect "ListPlans with an unknown token" code UNAUTHENTICATED
rpc_to "unix:$SOCK" list
expect "ListPlans on the unix socket without a token" code UNAUTHENTICATED

rpc_to "$TCP" --token "$OPS" plan "${QUICK[@]}"
expect "Plan as ops" code PERMISSION_DENIED
expect_details "wrong role message" "role 'ops' may not call Planner.Plan"
rpc_to "$TCP" --token "$SCHED" plan "${QUICK[@]}"
expect "Plan as scheduler" code OK
FP=$(jget "$OUT" fingerprint)
rpc_to "$TCP" --token "$OPS" list
expect "ListPlans as ops" code OK
rpc_to "$TCP" --token "$OPS" get "$FP"
expect "GetPlan as ops" code OK
rpc_to "$TCP" --token "$OPS" export "$FP"
expect "ExportPlan as ops" code OK
rpc_to "$TCP" --token "$OPS" delete "$FP"
expect "DeletePlan as ops" code PERMISSION_DENIED
rpc_to "$TCP" --token "$WORKER" get "$FP"
expect "GetPlan as worker" code PERMISSION_DENIED
rpc_to "$TCP" --token "$WORKER" registry
expect "Registry/Heartbeat as worker (an unknown worker_id)" code NOT_FOUND
rpc_to "$TCP" --token "$OPS" registry
expect "Registry/Heartbeat as ops" code PERMISSION_DENIED
rpc_to "$TCP" registry
expect "Registry/Heartbeat without a token" code UNAUTHENTICATED
rpc_to "unix:$SOCK" --token "$SCHED" delete "$FP"
expect "DeletePlan as scheduler on the unix socket" deleted True
rpc_to "$TCP" --token "$WORKER" health
expect "Health/Check with any token" status SERVING
grep -q "role=ops code=PERMISSION_DENIED" "$TMPD/d.log" && ok "the log names the caller's role" ||
    fail "no log line with role=ops code=PERMISSION_DENIED"
if grep -q -- "$SCHED" "$TMPD/d.log"; then fail "a token appears in the log"; else ok "no token in the log"; fi

# ---- TLS ------------------------------------------------------------------------------------
if ! command -v openssl >/dev/null; then
    echo "note: openssl not found; TLS checks skipped"
    finish
fi
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=localhost \
    -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" \
    -keyout "$TMPD/key.pem" -out "$TMPD/cert.pem" >/dev/null 2>&1 ||
    { fail "openssl could not make a certificate"; finish; }
PORT2=$(free_port)
start_daemon tls --unix-socket "$TMPD/tls.sock" --database "$TMPD/tls.db" --pool-size 1 \
    --tcp "127.0.0.1:$PORT2" --tls-cert "$TMPD/cert.pem" --tls-key "$TMPD/key.pem" \
    --config "$TMPD/tesseld.conf"
ok=
for _ in $(seq 1 50); do
    rpc_to "127.0.0.1:$PORT2" --tls-ca "$TMPD/cert.pem" --deadline 2 health
    [ "$(jget "$OUT" status)" = SERVING ] && { ok=1; break; }
    sleep 0.2
done
[ -n "$ok" ] && ok "Health/Check over TLS" || fail "no answer over TLS: $(cat "$OUT")"
rpc_to "127.0.0.1:$PORT2" --tls-ca "$TMPD/cert.pem" --token "$OPS" list
expect "ListPlans over TLS as ops" code OK
rpc_to "127.0.0.1:$PORT2" --deadline 3 health
expect "plaintext client on the TLS port" code UNAVAILABLE
finish
