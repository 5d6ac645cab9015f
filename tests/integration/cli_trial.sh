#!/usr/bin/env bash
# cli_trial.sh — `tesselctl trial` and `plans show` against a real tesseld
# that does not serve the Trials service yet (UNIMPLEMENTED): each trial
# action fails with one line naming the method and exit 4 (api/status.h's
# table), --json prints nothing on stdout, and `plans show` of a cached plan
# still prints the plan (exit 0) without a "measured" section or a "trials"
# key. The end-to-end trial through the daemon is tests/integration's trial
# test once the service exists.
#
# usage: cli_trial.sh TESSELCTL TESSELD
set -u
CTL=${1:?usage: cli_trial.sh TESSELCTL TESSELD}
DAEMON=${2:?usage: cli_trial.sh TESSELCTL TESSELD}
tmp=$(mktemp -d /tmp/tessel-cli-trial.XXXXXX)
sock=$tmp/tesseld.sock
daemon_pid=
failures=0
# shellcheck source=proc.sh
. "$(dirname "$0")/proc.sh" # stop_pid
trap 'stop_pid "$daemon_pid"; rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM
ok() { printf 'ok: %s\n' "$*"; }
fail() {
    printf 'FAIL: %s\n' "$*"
    failures=$((failures + 1))
}
ctl() {
    timeout 120 "$CTL" --server "unix:$sock" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
}

cat >"$tmp/tesseld.ini" <<INI
[server]
unix_socket = $sock
[store]
database = $tmp/tessel.db
[search]
pool_size = 1
INI
"$DAEMON" --config "$tmp/tesseld.ini" >"$tmp/tesseld.log" 2>&1 &
daemon_pid=$!
for _ in $(seq 1 150); do
    timeout 5 "$CTL" --server "unix:$sock" --timeout 2 health >/dev/null 2>&1 && break
    sleep 0.2
done

# a cached plan to start trials of
ctl plan --model GPT2-345M --cluster 4xA100-40G --batch 16 --json
fp=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["fingerprint"])' "$tmp/out")
[ -n "$fp" ] && ok "a cached plan $fp" || fail "no plan: $(cat "$tmp/err")"

for args in "trial start $fp" "trial start --top-k 2 --wait $fp" "trial show t-1" "trial list" \
    "trial list $fp" "trial watch t-1" "--json trial show t-1" "trial list --json"; do
    # shellcheck disable=SC2086
    ctl $args
    method=$(printf '%s' "$args" | sed -E 's/.*trial (start|show|list|watch).*/\1/')
    case $method in
    start) want=StartTrial ;; show) want=GetTrial ;; list) want=ListTrials ;; watch) want=WatchTrial ;;
    esac
    if [ "$rc" -eq 4 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] &&
        grep -q "^tesselctl: /tessel.v1.Trials/$want is declared in the API but not implemented" "$tmp/err" &&
        ! [ -s "$tmp/out" ]; then
        ok "$args: UNIMPLEMENTED, exit 4, one line naming $want"
    else
        fail "$args: exit $rc, stdout $(head -c 200 "$tmp/out"), stderr $(cat "$tmp/err")"
    fi
done

# plans show: the plan as before, no measured section, no "trials" key
ctl plans show "$fp"
if [ "$rc" -eq 0 ] && grep -q "samples/s" "$tmp/out" && ! grep -q "^Measured" "$tmp/out" &&
    ! [ -s "$tmp/err" ]; then
    ok "plans show without the Trials service: the plan, no measured section"
else
    fail "plans show: exit $rc: $(tail -3 "$tmp/out") $(cat "$tmp/err")"
fi
ctl plans show --json "$fp"
if [ "$rc" -eq 0 ] && python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert "plan" in d and "trials" not in d' "$tmp/out"; then
    ok "plans show --json: the document without a trials key"
else
    fail "plans show --json: exit $rc"
fi
ctl plans show 0000000000000000
[ "$rc" -eq 3 ] && ok "plans show of an unknown plan: exit 3" || fail "unknown plan: exit $rc"
kill -0 "$daemon_pid" 2>/dev/null && ok "tesseld still running" || fail "tesseld died"
[ "$failures" -eq 0 ] && echo "all checks passed" || echo "$failures check(s) failed"
[ "$failures" -eq 0 ]
