# proc.sh — process helpers shared by the integration scripts (sourced).

# ok WHAT / fail WHAT — one line a check; fail counts into $failures.
failures=${failures:-0}
ok() { printf 'ok: %s\n' "$*"; }
fail() {
    printf 'FAIL: %s\n' "$*"
    failures=$((failures + 1))
}

# expect_rc WANT WHAT — checks $rc (set by the script's ctl); on a mismatch the
# call's $tmp/out and $tmp/err are shown.
expect_rc() {
    if [ "$rc" -eq "$1" ]; then
        ok "$2 (exit $rc)"
    else
        fail "$2: exit $rc, want $1"
        sed 's/^/  stdout: /' "$tmp/out" | head -20
        sed 's/^/  stderr: /' "$tmp/err" | head -20
    fi
}

# stop_pid PID — SIGTERM, a bounded wait (10 s), then SIGKILL; reaps it.
stop_pid() {
    [ -n "$1" ] || return 0
    if kill -0 "$1" 2>/dev/null; then
        kill -TERM "$1" 2>/dev/null
        for _ in $(seq 1 100); do
            kill -0 "$1" 2>/dev/null || break
            sleep 0.1
        done
        kill -KILL "$1" 2>/dev/null
    fi
    wait "$1" 2>/dev/null
}

# stop_pids_and_clean — the EXIT trap of a script that started the processes $pids and
# keeps its logs in $tmp: stops them, shows each log's last 25 lines when a check
# failed, and removes $tmp.
stop_pids_and_clean() {
    for p in "${pids[@]}"; do stop_pid "$p"; done
    if [ "$failures" -ne 0 ]; then
        for log in "$tmp"/*.log; do
            echo "---- $log (last 25 lines)"
            tail -n 25 "$log"
        done
    fi
    rm -rf "$tmp"
}

# start_tesseld DAEMON CTL DIR POOL — tesseld on DIR/tesseld.sock with its
# store DIR/tessel.db and log DIR/tesseld.log, POOL search threads; sets
# daemon_pid and waits (30 s at most) until `CTL health` answers. Returns 1,
# with the log printed, when the daemon exits first or never answers.
start_tesseld() {
    local daemon=$1 ctl=$2 dir=$3 pool=$4
    printf '[server]\nunix_socket = %s\n[store]\ndatabase = %s\n[search]\npool_size = %s\n' \
        "$dir/tesseld.sock" "$dir/tessel.db" "$pool" >"$dir/tesseld.ini"
    "$daemon" --config "$dir/tesseld.ini" >"$dir/tesseld.log" 2>&1 &
    daemon_pid=$!
    for _ in $(seq 1 150); do
        kill -0 "$daemon_pid" 2>/dev/null || break
        timeout 5 "$ctl" --server "unix:$dir/tesseld.sock" --timeout 2 health >/dev/null 2>&1 &&
            return 0
        sleep 0.2
    done
    echo "tesseld did not come up:"
    cat "$dir/tesseld.log"
    return 1
}
