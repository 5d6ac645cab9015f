#!/usr/bin/env bash
# daemon_hardening.sh — tesseld under hostile clients and local mistakes (docs/operations.md
# "Hostile clients and exhausted resources"):
#  * unauthenticated calls are refused from their metadata before the message is
#    read: a 256 MiB gzip bomb and 3 MiB messages leave the peak RSS small, and
#    tessel_refused_total counts them; compressed requests are refused; 2000
#    ExportPlan streams with a zero receive window hold 16 streams' worth;
#  * out of descriptors (prlimit 256, 300 idle TCP + 300 idle unix connects):
#    health says NOT_SERVING on an old connection and on /healthz while held, and
#    both listeners serve new connections once they are closed — the plaintext
#    TCP listener and, in a second daemon, the TLS one;
#  * over-limit HTTP connections do not make a log flood;
#  * a silent TCP connection is closed after idle_connection_s;
#  * SIGTERM with an idle client connected stops in well under 2 s;
#  * SIGUSR1, SIGUSR2, SIGALRM do not stop the daemon;
#  * a symlinked .lock is refused and its target untouched; the database is 0600;
#  * --check-config names a garbage certificate, a missing key file and a
#    mismatched key; plaintext tcp needs insecure_tcp = true.
#
# usage: daemon_hardening.sh TESSELD PROTO_DIR
source "$(dirname "$0")/lib.sh"

PROBE=$HERE/tsl_probe.py
probe() { timeout 120 "$PY" "$PROBE" "$@" >"$OUT" 2>"$TMPD/probe.err" || cat "$TMPD/probe.err"; }
SCHED=sched-hardening-7c1f
SOCK=$TMPD/h.sock
PORT=$(free_port)
HPORT=$(free_port)
conf() {   # conf FILE [EXTRA LINES...]
    local f=$1
    shift
    {
        printf '[server]\nunix_socket = %s\ntcp = 127.0.0.1:%s\ninsecure_tcp = true\n' "$SOCK" "$PORT"
        printf 'http = 127.0.0.1:%s\n[store]\ndatabase = %s/h.db\n[search]\npool_size = 1\n' \
            "$HPORT" "$TMPD"
        printf '%s\n' "$@"
        printf '[tokens]\n%s = scheduler\n' "$SCHED"
    } >"$f"
}
hwm_kb() { awk '/VmHWM/ {print $2}' "/proc/$1/status"; }
metric() { curl -s "http://127.0.0.1:$HPORT/metrics" | awk -v k="$1" '$1 == k {print $2}'; }

# ---- memory before auth ----------------------------------------------------------------
conf "$TMPD/a.ini"
start_daemon a --config "$TMPD/a.ini"
wait_healthy "unix:$SOCK" || { fail "tesseld did not become healthy"; finish; }
base=$(hwm_kb "$DPID")
probe big "127.0.0.1:$PORT" 256 --gzip
code=$(jget "$OUT" code)
[ "$code" = UNAUTHENTICATED ] || [ "$code" = UNIMPLEMENTED ] &&
    ok "an unauthenticated 256 MiB gzip bomb is refused ($code)" || fail "gzip bomb: $(cat "$OUT")"
for _ in 1 2 3; do probe big "127.0.0.1:$PORT" 3; done
expect "an unauthenticated 3 MiB request is refused" code UNAUTHENTICATED
probe big "127.0.0.1:$PORT" 1 --gzip --token "$SCHED"
expect "a compressed request is refused even with a token" code UNIMPLEMENTED
peak=$(hwm_kb "$DPID")
# Before: the bomb was inflated before auth (peak RSS > 256 MiB).
[ $((peak - base)) -lt 65536 ] && ok "peak RSS grew $(((peak - base) / 1024)) MiB (< 64)" ||
    fail "peak RSS grew from $base kB to $peak kB"
n=$(metric 'tessel_refused_total{reason="unauthenticated"}')
[ "${n:-0}" -ge 4 ] && ok "tessel_refused_total counts the refusals ($n)" ||
    fail "tessel_refused_total{reason=unauthenticated} = '$n', want >= 4"
n=$(grep -c 'refused before reading the request' "$TMPD/a.log")
[ "$n" -ge 1 ] && [ "$n" -le 2 ] && ok "refusals logged, rate-limited ($n line(s))" ||
    fail "$n refusal lines in the log, want 1 or 2"
# 2000 ExportPlan streams on one connection that never opens its receive window.
rpc_to "unix:$SOCK" --token "$SCHED" plan "${QUICK[@]}"
FP=$(jget "$OUT" fingerprint)
before=$(awk '/VmRSS/ {print $2}' "/proc/$DPID/status")
probe streams "127.0.0.1:$PORT" 2000 "$FP" "$SCHED"
n=$(jget "$OUT" answered)
after=$(awk '/VmRSS/ {print $2}' "/proc/$DPID/status")
# Before: all 2000 were answered and their plans held (RSS +70 MB with small plans).
[ "${n:-0}" -le 16 ] && ok "2000 streams with a zero window: $n taken at a time (16 per connection)" ||
    fail "2000 streams with a zero window: $n answered at once: $(cat "$OUT")"
[ $((after - before)) -lt 32768 ] && ok "RSS grew $(((after - before) / 1024)) MiB under them" ||
    fail "RSS grew from $before kB to $after kB under 2000 blocked streams"
mode=$(stat -c %a "$TMPD/h.db")
[ "$mode" = 600 ] && ok "the database is created 0600" || fail "database mode $mode, want 600"

# ---- SIGUSR1/SIGUSR2/SIGALRM do not stop it; SIGTERM with an idle client is quick ---------
for s in USR1 USR2 ALRM; do kill -s "$s" "$DPID"; done
sleep 0.5
kill -0 "$DPID" 2>/dev/null && ok "SIGUSR1, SIGUSR2, SIGALRM ignored" || fail "a signal killed tesseld"
"$PY" -c 'import grpc, sys, time
ch = grpc.insecure_channel(sys.argv[1])
ch.unary_unary("/grpc.health.v1.Health/Check")(b"", timeout=5)
time.sleep(20)' "unix:$SOCK" &
IDLE=$!
sleep 1
t0=$(date +%s%N)
kill -TERM "$DPID"
if wait_exit "$DPID" 10; then
    ms=$((($(date +%s%N) - t0) / 1000000))
    # Before: 4.4 s (gRPC waited for the idle client to hang up).
    [ "$ms" -lt 2000 ] && ok "SIGTERM with an idle client connected: stopped in $ms ms" ||
        fail "SIGTERM with an idle client took $ms ms"
else
    fail "tesseld did not stop within 10 s of SIGTERM"
fi
kill "$IDLE" 2>/dev/null

# ---- descriptor exhaustion ---------------------------------------------------------------
conf "$TMPD/b.ini" "[limits]" "idle_connection_s = 60"
"$TESSELD" --check-config --config "$TMPD/b.ini" >/dev/null || fail "b.ini invalid"
prlimit --nofile=256:256 "$TESSELD" --config "$TMPD/b.ini" >"$TMPD/b.log" 2>&1 &
DPID=$!
DAEMON_PIDS+=("$DPID")
wait_healthy "unix:$SOCK" || { fail "tesseld (prlimit 256) did not become healthy"; finish; }
probe exhaust "unix:$SOCK" "127.0.0.1:$PORT" "$SOCK" "127.0.0.1:$HPORT" 300
expect "health on an old connection while descriptors run out" old_channel_during NOT_SERVING
expect "/healthz while descriptors run out" healthz_during 503
expect "both listeners serve new connections once descriptors are free" after SERVING
# Over-limit HTTP connections: a paused accept, not a busy loop writing the log.
"$PY" - "$HPORT" <<'PYEOF'
import socket, sys, time
held = []
for _ in range(400):
    try:
        held.append(socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=1))
    except OSError:
        break
time.sleep(3)
PYEOF
size=$(stat -c %s "$TMPD/b.log")
[ "$size" -lt 100000 ] && ok "HTTP over its descriptor limit: log is $size bytes" ||
    fail "HTTP over its descriptor limit wrote $size bytes of log"
# The flood's connections close when its process ends; the daemon reads their
# EOFs and frees the descriptors, then serves new connections again.
wait_healthy "unix:$SOCK" && ok "still serving after the HTTP flood" ||
    fail "not serving within 15 s of the HTTP flood's end"
kill -TERM "$DPID"
wait_exit "$DPID" 10 || fail "tesseld (prlimit) did not stop"

# ---- descriptor exhaustion on the TLS listener ---------------------------------------------
# Before: TLS kept gRPC's own listener, which one EMFILE ended for good.
if command -v openssl >/dev/null; then
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=localhost \
        -keyout "$TMPD/tk.pem" -out "$TMPD/tc.pem" >/dev/null 2>&1
    prlimit --nofile=256:256 "$TESSELD" --config "$TMPD/b.ini" --tls-cert "$TMPD/tc.pem" \
        --tls-key "$TMPD/tk.pem" >"$TMPD/t.log" 2>&1 &
    DPID=$!
    DAEMON_PIDS+=("$DPID")
    wait_healthy "unix:$SOCK" || { fail "tesseld (tls, prlimit 256) did not become healthy"; finish; }
    probe exhaust "unix:$SOCK" "127.0.0.1:$PORT" "$SOCK" "127.0.0.1:$HPORT" 300 --tls-ca "$TMPD/tc.pem"
    expect "TLS: health on an old connection while descriptors run out" old_channel_during NOT_SERVING
    expect "TLS: the TLS and unix listeners serve new connections once descriptors are free" \
        after SERVING
    grep -q 'listener saturated' "$TMPD/t.log" && ok "TLS: the saturation is logged" ||
        fail "TLS: no 'listener saturated' line in the log"
    kill -TERM "$DPID"
    wait_exit "$DPID" 10 || fail "tesseld (tls, prlimit) did not stop"
else
    echo "SKIP: no openssl to make a certificate for the TLS listener"
fi

# ---- idle connections time out -------------------------------------------------------------
conf "$TMPD/c.ini" "[limits]" "idle_connection_s = 1"
start_daemon c --config "$TMPD/c.ini"
wait_healthy "unix:$SOCK" || { fail "tesseld (idle 1 s) did not become healthy"; finish; }
probe idle "127.0.0.1:$PORT" 40
expect "a silent TCP connection is closed by the daemon" closed True
kill -TERM "$DPID"
wait_exit "$DPID" 10

# ---- the status page's address ----------------------------------------------------------------
# port 0: the port bound is logged; a non-loopback address is warned about (unauthenticated)
for addr in 127.0.0.1:0 0.0.0.0:0; do
    start_daemon "http-$addr" --unix-socket "$TMPD/h.sock" --database "$TMPD/h.db" --http "$addr"
    wait_healthy "unix:$TMPD/h.sock" || fail "tesseld (--http $addr) did not become healthy"
    log="$TMPD/http-$addr.log"
    grep -qE "http: status page.* on [0-9.]+:[1-9][0-9]* " "$log" &&
        ok "--http $addr: the port bound is logged" || fail "--http $addr: no bound port: $(cat "$log")"
    if [ "$addr" = 0.0.0.0:0 ]; then
        grep -q "is not a loopback address.*unauthenticated" "$log" &&
            ok "--http 0.0.0.0: warned as unauthenticated" || fail "no warning for 0.0.0.0: $(cat "$log")"
    else
        ! grep -q "not a loopback" "$log" && ok "--http 127.0.0.1: no warning" ||
            fail "loopback warned: $(cat "$log")"
    fi
    kill -TERM "$DPID"
    wait_exit "$DPID" 10 || fail "tesseld (--http $addr) did not stop"
done

# ---- local safety ----------------------------------------------------------------------------
echo "precious" >"$TMPD/victim"
ln -s "$TMPD/victim" "$TMPD/l.sock.lock"
out=$("$TESSELD" --unix-socket "$TMPD/l.sock" --database "$TMPD/l.db" 2>&1)
rc=$?
[ $rc -ne 0 ] && [ "$(cat "$TMPD/victim")" = precious ] &&
    ok "a symlinked lock file is refused, its target untouched ($out)" ||
    fail "symlinked lock: rc $rc, victim now '$(cat "$TMPD/victim")'"
out=$("$TESSELD" --check-config --unix-socket "$TMPD/m.sock" --socket-mode 432 2>&1)
[ $? -eq 2 ] && ok "socket_mode 432 refused ($out)" || fail "socket_mode 432 accepted"
out=$("$TESSELD" --check-config --socket-mode 0666 2>&1)
[ $? -eq 2 ] && ok "socket_mode 0666 without tokens refused" || fail "0666 without tokens: $out"
printf '[tokens]\n%s = scheduler\n' "$SCHED" >"$TMPD/tok.ini"
out=$("$TESSELD" --check-config --config "$TMPD/tok.ini" --tcp "127.0.0.1:$PORT" 2>&1)
[ $? -eq 2 ] && printf '%s' "$out" | grep -q insecure_tcp &&
    ok "plaintext tcp without insecure_tcp refused" || fail "plaintext tcp: $out"

# ---- --check-config loads the TLS pair ---------------------------------------------------------
if command -v openssl >/dev/null; then
    for n in 1 2; do
        openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=localhost \
            -keyout "$TMPD/k$n.pem" -out "$TMPD/c$n.pem" >/dev/null 2>&1
    done
    echo garbage >"$TMPD/garbage.pem"
    check_tls() {   # check_tls CERT KEY PATTERN WHAT
        out=$("$TESSELD" --check-config --config "$TMPD/tok.ini" --tcp "127.0.0.1:$PORT" \
            --tls-cert "$1" --tls-key "$2" 2>&1)
        rc=$?
        if [ -z "$3" ]; then
            [ $rc -eq 0 ] && ok "$4" || fail "$4: rc $rc: $out"
        else
            [ $rc -eq 2 ] && printf '%s' "$out" | grep -q -- "$3" && ok "$4 ($out)" ||
                fail "$4: rc $rc: $out"
        fi
    }
    check_tls "$TMPD/c1.pem" "$TMPD/k1.pem" "" "a matching certificate and key pass"
    check_tls "$TMPD/c1.pem" "$TMPD/k2.pem" "is not the key of the certificate" "a mismatched key"
    check_tls "$TMPD/garbage.pem" "$TMPD/k1.pem" "holds no PEM certificate" "a garbage certificate"
    check_tls "$TMPD/c1.pem" "$TMPD/missing.pem" "missing.pem" "a missing key file"
else
    echo "SKIP: no openssl to make certificates"
fi

finish
