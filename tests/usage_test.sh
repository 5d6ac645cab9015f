#!/bin/bash
# usage_test.sh — an option a program does not know, or one given without its value,
# is said as tesselctl says it: one line naming the option as typed (dashes and all)
# and where the help is, exit status 2, which each manual page's EXIT STATUS gives for
# a bad option. tesseld and tessel-worker said "unknown option 'bogus'"; tessel-exec-run
# said getopt's "unrecognized option" and then printed its whole usage.
#
# usage: usage_test.sh MANDIR TESSELD TESSEL-WORKER TESSEL-EXEC-RUN
set -u
mandir=$1 tesseld=$2 worker=$3 execrun=$4
fails=0
ok() { echo "ok - $*"; }
bad() { echo "not ok - $*"; fails=$((fails + 1)); }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# refused PROG WANT ARGS...: exit 2, exactly the line WANT on standard error, nothing on
# standard output
refused() {
    local prog=$1 want=$2
    shift 2
    timeout 20 "$prog" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
    local rc=$?
    if [ "$rc" -eq 2 ] && [ "$(cat "$tmp/err")" = "$want" ] && [ ! -s "$tmp/out" ]; then
        ok "$(basename "$prog") $* -> $want"
    else
        bad "$(basename "$prog") $*: exit $rc, '$(cat "$tmp/err")' (expected '$want')"
    fi
}

for pair in "tesseld:$tesseld" "tessel-worker:$worker" "tessel-exec-run:$execrun"; do
    name=${pair%%:*} prog=${pair#*:}
    see="; see $name --help"
    refused "$prog" "$name: unknown option '--bogus'$see" --bogus
    refused "$prog" "$name: unknown option '-q'$see" -q
    # tessel-exec-run's --seq takes a value; tesseld's and tessel-worker's flags all do
    [ "$name" = tessel-exec-run ] && flag=--seq || flag=--log-level
    refused "$prog" "$name: option '$flag' needs a value$see" "$flag"
done
# with a value after it (the daemon's and the agent's --KEY VALUE), and --KEY=VALUE
refused "$tesseld" "tesseld: unknown option '--bogus'; see tesseld --help" --bogus 1
refused "$tesseld" "tesseld: unknown option '--bogus'; see tesseld --help" --bogus=1
refused "$worker" "tessel-worker: unknown option '--bogus'; see tessel-worker --help" --bogus 1

# each page's EXIT STATUS gives 2 for a bad option (tessel-worker: "bad usage")
for page in tesseld.8 tessel-worker.8 tessel-exec-run.1; do
    sed -n '/^\.SH EXIT STATUS/,/^\.SH /p' "$mandir/$page" | grep -Eq '2 (for a bad (option|flag)|bad usage)' &&
        ok "$page: EXIT STATUS 2 for a bad option" || bad "$page: EXIT STATUS names no 2 for a bad option"
done

[ "$fails" -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "all usage errors passed"
