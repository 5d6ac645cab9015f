# cli_lib.sh — the checks the tesselctl shell tests share; source it after
# setting ctl (the binary), pass=0, fail=0 and the files out and err.

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }

# expect STATUS PATTERN-ON-STDERR ARGS...
expect() {
    local want="$1" pattern="$2"
    shift 2
    "$ctl" "$@" >"$out" 2>"$err"
    local got=$?
    if [ "$got" -ne "$want" ]; then
        bad "tesselctl $* exited $got, expected $want; stderr: $(cat "$err")"
    elif [ -n "$pattern" ] && ! grep -q -- "$pattern" "$err"; then
        bad "tesselctl $*: stderr lacks '$pattern': $(cat "$err")"
    elif [ "$want" -ne 0 ] && [ "$(wc -l <"$err")" -gt 1 ] && [ "$want" -ne 2 -o -n "$pattern" ] &&
        ! head -1 "$err" | grep -q "^tesselctl: "; then
        bad "tesselctl $*: error is not one 'tesselctl: ' line: $(cat "$err")"
    else
        ok
    fi
}
