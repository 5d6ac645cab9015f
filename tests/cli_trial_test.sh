#!/bin/bash
# `tesselctl trial` as a user drives it, without a daemon: --help texts name
# every option, bad arguments are refused before any connection with one
# "tesselctl: " line naming the option (exit 2), and a daemon that is not there
# is exit 5. Against a real tesseld: tests/integration/cli_trial.sh.
set -u
# ctl, pass, fail, $dir, $out, $err; ok, bad, expect STATUS PATTERN ARGS...
# shellcheck source=cli_lib.sh
source "$(dirname "$0")/cli_lib.sh" "$1"
none="--server unix:$dir/none.sock"

# --help: the actions and each action's options
expect 0 "" trial --help
for a in start show list watch; do grep -q "$a" "$out" || bad "trial --help lacks $a"; done
expect 0 "" trial start --help
for o in --top-k --iterations --warmup --nodes --timeout --wait --json; do
    grep -q -- "$o" "$out" && ok || bad "trial start --help lacks $o"
done
expect 0 "" trial show --help
grep -q "predicted vs measured" "$out" && ok || bad "trial show --help: $(cat "$out")"
expect 0 "" trial list --help
grep -q -- "--limit" "$out" && ok || bad "trial list --help lacks --limit"
expect 0 "" trial watch --help
expect 0 "" --help
grep -q "trial" "$out" && ok || bad "tesselctl --help does not list trial"
expect 0 "" plans show --help
grep -q "measured" "$out" && ok || bad "plans show --help does not mention the measured section"

# usage errors: exit 2, one line naming what was wrong, no connection tried
expect 2 "give start, show, list, watch or cancel" $none trial
expect 2 "unknown action 'run'" $none trial run
expect 2 "give the FINGERPRINT" $none trial start
expect 2 "unexpected argument 'b'" $none trial start a b
expect 2 "top-k: 0 is out of range" $none trial start --top-k 0 3f2a9c0d11e4b7a8
expect 2 "top-k: 17 is out of range" $none trial start --top-k 17 3f2a9c0d11e4b7a8
expect 2 "iterations" $none trial start --iterations 0 3f2a9c0d11e4b7a8
expect 2 "warmup" $none trial start --warmup x 3f2a9c0d11e4b7a8
expect 2 "nodes: 'a,,b' has an empty hostname" $none trial start --nodes a,,b 3f2a9c0d11e4b7a8
expect 2 "timeout" $none trial start --timeout 0 3f2a9c0d11e4b7a8
expect 2 "needs a value" $none trial start 3f2a9c0d11e4b7a8 --top-k
expect 2 "give the TRIAL_ID" $none trial show
expect 2 "--limit is not an option of trial show" $none trial show --limit 3 t1
expect 2 "--wait is not an option of trial watch" $none trial watch --wait t1
expect 2 "unknown option '--bogus'" $none trial list --bogus
expect 2 "limit" $none trial list --limit 0
expect 2 "unexpected argument 'b'" $none trial list a b
expect 2 "--timeout" $none trial show --timeout abc t1

# no daemon: unavailable (5) for each action
for args in "trial start 3f2a9c0d11e4b7a8" "trial show t1" "trial list" "trial watch t1"; do
    # shellcheck disable=SC2086
    expect 5 "" $none --timeout 5 $args
done

# bash completion offers the command, its actions and each action's options
# (deploy/bash-completion/tesselctl; tests/completion_test.sh checks the rest)
# shellcheck disable=SC1091
source "$(dirname "$0")/../deploy/bash-completion/tesselctl"
complete_line() {
    COMP_WORDS=("$ctl" "$@")
    COMP_CWORD=$#
    COMPREPLY=()
    _tesselctl
    echo "${COMPREPLY[*]}"
}
[ "$(complete_line tri)" = "trial" ] && ok || bad "completion: tri -> '$(complete_line tri)'"
[ "$(complete_line trial s)" = "start show" ] && ok || bad "completion: trial s"
[ "$(complete_line trial start --w)" = "--warmup --wait" ] && ok || bad "completion: trial start --w"
for o in $(complete_line trial start --); do
    "$ctl" trial start --help | grep -q -- "$o" && ok || bad "completion offers $o, unknown to trial start"
done
[ "$(complete_line eval --ser)" = "--server" ] && ok || bad "completion: eval --ser"

echo "cli_trial: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
