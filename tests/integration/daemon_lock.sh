#!/usr/bin/env bash
# daemon_lock.sh — one daemon per socket and per port: a second tesseld on the
# same unix socket fails with a clear message instead of stealing it (gRPC
# would unlink it), one on the same TCP port fails too (SO_REUSEPORT is off),
# the first keeps serving, and after it stops a new one takes over the stale
# socket and lock files.
#
# usage: daemon_lock.sh TESSELD PROTO_DIR
source "$(dirname "$0")/lib.sh"

SOCK=$TMPD/tesseld.sock
T=unix:$SOCK
PORT=$(free_port)
printf '[tokens]\nops-1c2d3e = ops\n' >"$TMPD/tokens.conf"

start_daemon first --config "$TMPD/tokens.conf" --unix-socket "$SOCK" --database "$TMPD/t.db" \
    --pool-size 1 --tcp "127.0.0.1:$PORT" --insecure-tcp true
FIRST=$DPID
wait_healthy "$T" || { fail "the first tesseld did not become healthy"; finish; }
# a 10-character token is accepted, and said to be guessable
grep -q "tokens: 1 of 1 shorter than 16 characters" "$TMPD/first.log" &&
    ok "a short token is warned about at start" || fail "no short-token warning: $(head -5 "$TMPD/first.log")"

start_daemon second --unix-socket "$SOCK" --database "$TMPD/t2.db" --pool-size 1
if wait_exit "$DPID" 10; then
    [ "$EXIT_STATUS" -eq 1 ] && ok "a second daemon on the same socket exits 1" ||
        fail "the second daemon exited $EXIT_STATUS, want 1"
    grep -q "already serving unix:$SOCK" "$TMPD/second.log" &&
        ok "it says why: $(cat "$TMPD/second.log")" || fail "unclear message: $(cat "$TMPD/second.log")"
else
    fail "a second daemon on the same socket is still running"
fi
[ -S "$SOCK" ] && ok "the socket is still there" || fail "the socket is gone"
rpc_to "$T" health
expect "the first daemon still answers on its socket" status SERVING

start_daemon third --config "$TMPD/tokens.conf" --unix-socket "$TMPD/other.sock" \
    --database "$TMPD/t3.db" --pool-size 1 --tcp "127.0.0.1:$PORT" --insecure-tcp true
if wait_exit "$DPID" 10; then
    [ "$EXIT_STATUS" -eq 1 ] && ok "a daemon on the same TCP port exits 1: $(tail -n 1 "$TMPD/third.log")" ||
        fail "the daemon on the same TCP port exited $EXIT_STATUS, want 1"
else
    fail "a second daemon bound the same TCP port"
fi
rpc_to "127.0.0.1:$PORT" health
expect "the first daemon still answers on its port" status SERVING

kill -TERM "$FIRST"
wait_exit "$FIRST" 20 && [ "$EXIT_STATUS" -eq 0 ] && ok "the first daemon stops on SIGTERM" ||
    fail "the first daemon did not stop cleanly"
start_daemon fourth --unix-socket "$SOCK" --database "$TMPD/t.db" --pool-size 1
wait_healthy "$T" && ok "a new daemon takes over the socket after a clean stop" ||
    fail "no daemon could start after the first stopped: $(cat "$TMPD/fourth.log")"
finish
