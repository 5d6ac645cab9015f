# proc.sh — process helpers shared by the integration scripts (sourced).

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
