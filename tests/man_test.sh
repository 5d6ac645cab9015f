#!/bin/bash
# man_test.sh — the manual pages in docs/man: they format without a warning
# (groff -ww; mandoc -Tlint too where it is installed), man -l renders their
# sections, and they name every option the programs' --help texts list, so that
# a new flag without a line in its page fails here.
#
# usage: man_test.sh MANDIR TESSELCTL TESSELD [TESSEL-EXEC-RUN [TESSEL-WORKER]]
# Exit 77 (skip) without groff.
set -u
mandir=$1 ctl=$2 tesseld=$3 execrun=${4:-} worker=${5:-}
command -v groff >/dev/null || { echo "SKIP: groff is not installed"; exit 77; }
fails=0
ok() { echo "ok - $*"; }
fail() { echo "not ok - $*"; fails=$((fails + 1)); }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for page in tesselctl.1 tesseld.8 tessel-worker.8 tessel-exec-run.1; do
    f=$mandir/$page
    w=$(groff -man -Tutf8 -ww -z "$f" 2>&1)
    [ -z "$w" ] && ok "$page formats without warnings" || fail "$page: $w"
    if command -v mandoc >/dev/null; then
        w=$(mandoc -Tlint -W warning "$f" 2>&1)
        [ -z "$w" ] && ok "$page passes mandoc -Tlint" || fail "$page: $w"
    fi
    groff -man -Tascii -P-cbou "$f" 2>/dev/null >"$tmp/$page.txt"
    for sec in NAME SYNOPSIS DESCRIPTION "EXIT STATUS" "SEE ALSO"; do
        grep -q "^$sec" "$tmp/$page.txt" || fail "$page has no $sec section"
    done
    if command -v man >/dev/null; then
        MANWIDTH=80 man -l "$f" 2>/dev/null | grep -q '^NAME' && ok "man -l $page" || fail "man -l $page"
    fi
done

# The long options of a --help text on standard input, one a line: an option written
# "--first/second-..." is Megatron-LM's pair, not an option (docs_test.py alike).
help_opts() { grep -oE -- '--[a-z][a-z0-9-]*/?' | grep -v '/$' | sort -u; }
# Whether the rendered page $1 names option $2 whole: "--tp" is not named by
# "--tp-sync" nor "--fp8" by "--fp8-recipe", which let an undocumented one pass.
names_opt() { grep -qE -- "$2([^a-z0-9-]|\$)" "$1"; }

# Every long option of tesselctl's usage texts is in tesselctl(1); each text must be
# the command's own (a subcommand that lost its --help would pass vacuously).
# Options with digits (--fp8-param-gather, --bf16-layers) are matched whole: a
# pattern without digits checked "--fp" alone and let an undocumented one pass.
for cmd in "" plan eval "plans list" "plans show" "plans delete" "plans export" health \
    workers profiles models hardware trial "trial start" "trial show" "trial list" \
    "trial watch" "trial cancel" "trial probe-link"; do
    # shellcheck disable=SC2086
    "$ctl" $cmd --help 2>&1 | head -n 1 | grep -q "^usage: tesselctl $cmd" ||
        echo "(no usage text of 'tesselctl $cmd --help')"
    # shellcheck disable=SC2086
    "$ctl" $cmd --help 2>&1 | help_opts | while read -r opt; do
        names_opt "$tmp/tesselctl.1.txt" "$opt" || echo "$opt"
    done
done >"$tmp/missing"
[ ! -s "$tmp/missing" ] && ok "tesselctl(1) names every option of the --help texts" ||
    fail "tesselctl(1) lacks: $(tr '\n' ' ' <"$tmp/missing")"

# Every long option of tessel-exec-run --help is in tessel-exec-run(1).
if [ -n "$execrun" ]; then
    "$execrun" --help 2>&1 | help_opts | while read -r opt; do
        names_opt "$tmp/tessel-exec-run.1.txt" "$opt" || echo "$opt"
    done >"$tmp/missing"
    [ ! -s "$tmp/missing" ] && ok "tessel-exec-run(1) names every option of its --help" ||
        fail "tessel-exec-run(1) lacks: $(tr '\n' ' ' <"$tmp/missing")"
fi

# Every long option of tessel-worker --help and tessel-worker profile --help is in
# tessel-worker(8).
if [ -n "$worker" ]; then
    for cmd in "" profile; do
        # shellcheck disable=SC2086
        "$worker" $cmd --help 2>&1 | help_opts | while read -r opt; do
            names_opt "$tmp/tessel-worker.8.txt" "$opt" || echo "$opt"
        done
    done >"$tmp/missing"
    [ ! -s "$tmp/missing" ] && ok "tessel-worker(8) names every option of its --help texts" ||
        fail "tessel-worker(8) lacks: $(tr '\n' ' ' <"$tmp/missing")"
fi

# Every configuration key of tesseld --help is in tesseld(8).
"$tesseld" --help 2>&1 | grep -o '\[[a-z]*\] [a-z_]*' | awk '{print $2}' | sort -u | while read -r key; do
    grep -q -- "$key" "$tmp/tesseld.8.txt" || echo "$key"
done >"$tmp/missing"
[ ! -s "$tmp/missing" ] && ok "tesseld(8) names every configuration key" ||
    fail "tesseld(8) lacks: $(tr '\n' ' ' <"$tmp/missing")"
# A flag that is not its key with dashes for underscores (--grace for grace_s) is
# named in tesseld(8): its rule alone gave --grace-s, which tesseld refuses.
"$tesseld" --help 2>&1 | awk '/^  --[a-z]/ {flag = $1; next}
    flag != "" && match($0, /\[[a-z]+\] [a-z_]+/) {
        split(substr($0, RSTART, RLENGTH), kv, " "); key = kv[2]; gsub("_", "-", key)
        if ("--" key != flag) print flag; flag = "" }' | while read -r opt; do
    grep -q -- "$opt" "$tmp/tesseld.8.txt" || echo "$opt"
done >"$tmp/missing"
[ ! -s "$tmp/missing" ] && ok "tesseld(8) names every flag that is not its key's spelling" ||
    fail "tesseld(8) lacks: $(tr '\n' ' ' <"$tmp/missing")"
"$tesseld" --help 2>&1 | grep -q 'tesseld(8)' && ok "tesseld --help points at tesseld(8)" ||
    fail "tesseld --help does not name tesseld(8)"
grep -q '^Documentation=man:tesseld(8)' "$mandir/../../systemd/tesseld.service" &&
    ok "tesseld.service's Documentation= names tesseld(8)" || fail "tesseld.service Documentation="

echo "$fails failed"
[ "$fails" = 0 ]
