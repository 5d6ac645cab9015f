#!/bin/bash
# completion_test.sh — deploy/bash-completion/tesselctl completes commands,
# options, presets (asked from the real binary) and export formats, and every
# option it offers for plan is one tesselctl plan accepts.
# usage: completion_test.sh COMPLETION_FILE TESSELCTL
set -u
# shellcheck disable=SC1090
source "$1"
ctl=$2
fails=0
ok() { echo "ok - $*"; }
fail() { echo "not ok - $*"; fails=$((fails + 1)); }

complete_line() { # WORDS...: completes the last word
    COMP_WORDS=("$ctl" "$@")
    COMP_CWORD=$#
    COMPREPLY=()
    _tesselctl
    echo "${COMPREPLY[*]}"
}
[ "$(complete_line pl)" = "plan plans" ] && ok "commands" || fail "pl -> '$(complete_line pl)'"
[ "$(complete_line plans ex)" = "export" ] && ok "plans actions" || fail "plans ex"
[ "$(complete_line plan --no-s)" = "--no-sdp --no-sublayer --no-slicer" ] && ok "plan options" ||
    fail "plan --no-s -> '$(complete_line plan --no-s)'"
[[ " $(complete_line plan --model GPT3-1) " == *" GPT3-15B "* ]] && ok "presets from tesselctl models" ||
    fail "plan --model GPT3-1 -> '$(complete_line plan --model GPT3-1)'"
[ "$(complete_line plans export --format t)" = "torchtitan" ] && ok "export formats" || fail "--format t"
[ "$(complete_line plan --target m)" = "megatron" ] && ok "target stacks" || fail "--target m"
[ "$(complete_line --server x pl)" = "plan plans" ] && ok "after a global option with a value" ||
    fail "--server x pl"
bad=
for opt in $(complete_line plan --); do
    case $opt in --server | --token | --timeout | --help) continue ;; esac   # in tesselctl --help
    "$ctl" plan --help | grep -q -- "$opt\b" || bad="$bad $opt"
done
[ -z "$bad" ] && ok "every offered plan option is in plan --help" || fail "unknown to plan:$bad"
echo "$fails failed"
[ "$fails" = 0 ]
