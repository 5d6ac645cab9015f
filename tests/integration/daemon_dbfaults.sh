#!/usr/bin/env bash
# daemon_dbfaults.sh — one daemon per database, and no daemon on a database it
# cannot write:
#  * a second tesseld on the same database but another socket exits 1 naming the
#    first one's pid (the socket lock alone let it start and fail the first's
#    trials), and the first keeps serving;
#  * a stored plan whose text is damaged is searched again, and replaced; one whose
#    figures are not figures (text in iter_time_s) is not listed nor served, and
#    searched again;
#  * a read-only database file makes tesseld exit 1 at start, naming the file,
#    instead of serving and failing every write. As root (who writes any file)
#    the daemon runs as nobody for that check.
#
# usage: daemon_dbfaults.sh TESSELD PROTO_DIR
source "$(dirname "$0")/lib.sh"

D=$TMPD/db
mkdir -p "$D"
SOCK=$D/a.sock
T=unix:$SOCK

start_daemon first --unix-socket "$SOCK" --database "$D/t.db" --pool-size 1
FIRST=$DPID
wait_healthy "$T" || { fail "the first tesseld did not become healthy"; finish; }
[ "$(cat "$D/t.db.lock")" = "$FIRST" ] && ok "t.db.lock holds the pid" ||
    fail "t.db.lock does not hold pid $FIRST: $(cat "$D/t.db.lock" 2>&1)"

start_daemon second --unix-socket "$D/b.sock" --database "$D/t.db" --pool-size 1
if wait_exit "$DPID" 10; then
    [ "$EXIT_STATUS" -eq 1 ] && ok "a second daemon on the same database exits 1" ||
        fail "the second daemon exited $EXIT_STATUS, want 1"
    grep -q "database $D/t.db is in use by another tesseld (pid $FIRST" "$TMPD/second.log" &&
        ok "it names the holder: $(tail -n 1 "$TMPD/second.log")" ||
        fail "unclear message: $(cat "$TMPD/second.log")"
else
    fail "a second daemon on the same database is still running"
fi
rpc_to "$T" health
expect "the first daemon still serves" status SERVING
rpc_to "$T" plan "${QUICK[@]}"
expect "a plan stored before the damage" code OK
FP=$(jget "$OUT" fingerprint)

kill -TERM "$FIRST"
wait_exit "$FIRST" 20 && [ "$EXIT_STATUS" -eq 0 ] && ok "the first daemon stops on SIGTERM" ||
    fail "the first daemon did not stop cleanly"

# A stored plan whose text is damaged (cut short: a disk fault, a hand edit): the
# same request searches again and the new plan replaces the row. Before, every Plan
# for it failed INTERNAL until --force.
"$PY" -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute("UPDATE plans SET result_json = substr(result_json, 1, 100) WHERE fingerprint = ?", (sys.argv[2],)); c.commit()' \
    "$D/t.db" "$FP" && ok "damaged the stored text of $FP" || fail "could not damage $FP"
start_daemon healing --unix-socket "$SOCK" --database "$D/t.db" --pool-size 1
wait_healthy "$T" || { fail "tesseld did not start on the damaged row"; finish; }
rpc_to "$T" plan "${QUICK[@]}"
expect "the request of a damaged row is searched again" code OK
expect "its answer is a new search" cached False
grep -q "plan $FP: the stored plan cannot be read (.*); searching again" "$TMPD/healing.log" &&
    ok "the log names the damaged row" || fail "no log line: $(cat "$TMPD/healing.log")"
rpc_to "$T" plan "${QUICK[@]}"
expect "the new plan replaced the damaged row" cached True
rpc_to "$T" get "$FP"
expect "GetPlan reads it" fingerprint "$FP"
# A stored row whose figures are no longer figures (text in iter_time_s, which SQLite
# keeps as it is given): not served. Before, 'abc' was served as 0 s an iteration by
# GetPlan, ListPlans and a cache hit; now listings leave it out, GetPlan fails naming
# the column, Plan searches again and replaces it, and the log says so.
"$PY" -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute("UPDATE plans SET iter_time_s = ? WHERE fingerprint = ?", ("abc", sys.argv[2])); c.commit()' \
    "$D/t.db" "$FP" && ok "damaged the figures of $FP" || fail "could not damage $FP's figures"
rpc_to "$T" list
"$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["code"] == "OK" and all(p["fingerprint"] != sys.argv[2] for p in d["plans"]), d' \
    "$OUT" "$FP" && ok "ListPlans leaves the damaged row out" || fail "listed: $(head -c 300 "$OUT")"
rpc_to "$T" get "$FP"
expect "GetPlan of the damaged row fails" code INTERNAL
expect_details "it names the column" "plan $FP: the stored row is damaged \(iter_time_s is text, not a real\)"
rpc_to "$T" plan "${QUICK[@]}"
expect "the request of the damaged row is searched again" cached False
rpc_to "$T" get "$FP"
expect "GetPlan reads the replacement" fingerprint "$FP"
grep -q "plan $FP: the stored row is damaged (iter_time_s is text, not a real); not served" \
    "$TMPD/healing.log" && ok "the log names the damaged row" ||
    fail "no log line for the damaged row: $(tail -5 "$TMPD/healing.log")"
kill -TERM "$DPID"
wait_exit "$DPID" 20 || fail "the healing daemon did not stop"

# A read-only database file: refused at start.
chmod 444 "$D/t.db"
AS=()
if [ "$(id -u)" -eq 0 ]; then
    chmod 711 "$TMPD"
    chown -R nobody "$D"
    AS=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
fi
"${AS[@]}" "$TESSELD" --unix-socket "$SOCK" --database "$D/t.db" --pool-size 1 \
    >"$TMPD/readonly.log" 2>&1 &
DPID=$!
DAEMON_PIDS+=("$DPID")
if wait_exit "$DPID" 10; then
    [ "$EXIT_STATUS" -eq 1 ] && ok "a read-only database: tesseld exits 1" ||
        fail "on a read-only database tesseld exited $EXIT_STATUS, want 1"
    grep -q "database $D/t.db is read-only" "$TMPD/readonly.log" &&
        ok "it names the file: $(tail -n 1 "$TMPD/readonly.log")" ||
        fail "unclear message: $(cat "$TMPD/readonly.log")"
else
    fail "tesseld serves a read-only database"
fi
finish
