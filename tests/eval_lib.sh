# shellcheck shell=bash disable=SC2034 # sets the caller's variables
# eval_lib.sh — what the eval shell tests that price one plan and check its refusals
# share (host_monotone_test.sh, module_prec_test.sh); source it with the binary as $1
# (`. "$(dirname "$0")/eval_lib.sh" "$1"`): it sets ctl, root (the source tree), hf
# (tests/data/hf), fail=0 and a private directory $tmp (removed at exit).
ctl=$1
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
hf=$root/tests/data/hf
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# `refused PATTERN SWITCHES...` runs `tesselctl eval --local --no-search --json SWITCHES`
# and expects it to fail with PATTERN on stderr; a failed check sets fail to 1.
refused() { # PATTERN SWITCHES...
    local pat=$1
    shift
    # shellcheck disable=SC2086
    if "$ctl" eval --local --no-search --json "$@" >/dev/null 2>"$tmp/err"; then
        echo "FAIL refused: $* accepted"
        fail=1
    elif grep -q "$pat" "$tmp/err"; then
        echo "ok refused: $pat"
    else
        echo "FAIL refused: $* said $(cat "$tmp/err")"
        fail=1
    fi
}
