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
[ "$(complete_line plans export --format to)" = "torchtitan" ] && ok "export formats" || fail "--format to"
[ "$(complete_line plan --target m)" = "megatron" ] && ok "target stacks" || fail "--target m"
[ "$(complete_line --server x pl)" = "plan plans" ] && ok "after a global option with a value" ||
    fail "--server x pl"
[ "$(complete_line w)" = "workers" ] && ok "workers command" || fail "w -> '$(complete_line w)'"
[ "$(complete_line pro)" = "profiles" ] && ok "profiles command" || fail "pro -> '$(complete_line pro)'"
[ "$(complete_line profiles --n)" = "--node" ] && ok "profiles options" || fail "profiles --n"
[ "$(complete_line plans export --format tr)" = "trace" ] && ok "export --format trace" ||
    fail "--format tr -> '$(complete_line plans export --format tr)'"
[ "$(complete_line eval --ckpt s)" = "selective" ] && ok "--ckpt values" ||
    fail "--ckpt s -> '$(complete_line eval --ckpt s)'"
[ "$(complete_line hardware --j)" = "--json" ] && ok "hardware --json" || fail "hardware --j"
[ -z "$(complete_line plan --memory-reserve x)" ] && ok "--memory-reserve takes a value" ||
    fail "--memory-reserve x -> '$(complete_line plan --memory-reserve x)'"
bad=
for opt in $(complete_line plan --); do
    case $opt in --server | --token | --timeout | --help) continue ;; esac   # in tesselctl --help
    "$ctl" plan --help | grep -q -- "$opt\b" || bad="$bad $opt"
done
[ -z "$bad" ] && ok "every offered plan option is in plan --help" || fail "unknown to plan:$bad"
bad=
for cmd in eval workers profiles hardware; do
    for opt in $(complete_line "$cmd" --); do
        case $opt in --server | --token | --timeout | --help) continue ;; esac
        "$ctl" "$cmd" --help | grep -q -- "$opt\b" || bad="$bad $cmd:$opt"
    done
done
[ -z "$bad" ] && ok "every offered eval/workers/profiles/hardware option is in its --help" ||
    fail "unknown:$bad"
echo "$fails failed"
[ "$fails" = 0 ]
