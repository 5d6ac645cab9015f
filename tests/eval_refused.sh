# eval_refused.sh — sourced by the eval shell tests that check refusals: `refused PATTERN
# SWITCHES...` runs `tesselctl eval --local --no-search --json SWITCHES` and expects it to
# fail with PATTERN on stderr. The caller sets ctl (the binary), tmp (a private directory)
# and fail (set to 1 on a failed check).
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
