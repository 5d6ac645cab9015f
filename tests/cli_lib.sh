# cli_lib.sh — the checks the tesselctl shell tests share; source it with the
# binary as $1 (`source cli_lib.sh "$1"`): it sets ctl, pass=0, fail=0, a
# private directory $dir (removed at exit) and the files $out and $err in it.

ctl="$1"
pass=0
fail=0
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
out="$dir/out"
err="$dir/err"

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
