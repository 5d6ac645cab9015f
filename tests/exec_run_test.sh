#!/bin/bash
# exec_run_test.sh — tessel-exec-run's model flags, run on the cpu device ops as a user
# would: each changes what runs in a way its JSON report shows, and each bad
# combination gets one line naming the flag and exit status 2.
#   --unfused-attn   the s×s softmax output stashed: a higher peak at seq 512, same loss
#   --attn-chunk N   a smaller workspace with small chunks, same loss
#   --positions P    P·h more parameters in the model states
#   --tied           the head's padded V·h parameters gone; across pp 2 the same loss
#   --gated, --kv-heads, --rms-norm, --no-bias, --llama: the parameters by the formulas
#   --window, --not-causal: another loss; --interleave 2: pp 2's loss, bitwise
# (cpu, Adam: parameter, gradient and two moments in float32, 16 bytes per parameter;
# the vocabulary padded to a multiple of 128 at tp 1 — exec.h.)
#
# usage: exec_run_test.sh TESSEL-EXEC-RUN
set -u
run=$1
fails=0
ok() { echo "ok - $*"; }
bad() { echo "not ok - $*"; fails=$((fails + 1)); }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# field NAME FILE [STAGE]: a number (or null) of the report of stage STAGE (default 0;
# the ranks print in the order they finish)
field() { grep "\"stage\":${3:-0}," "$2" | sed -n "s/.*\"$1\":\([^,}]*\).*/\1/p"; }
# runs NAME ARGS...: the report lines into $tmp/NAME; a failure is a test failure
runs() {
    local name=$1
    shift
    if "$run" --warmup 0 --iters 1 --json "$@" >"$tmp/$name" 2>"$tmp/$name.err"; then
        return 0
    fi
    bad "$name: exit $?: $(cat "$tmp/$name.err")"
    return 1
}
# same_loss A B [STAGE_A STAGE_B]: the two runs' losses within 1e-5 relative (the same
# function)
same_loss() {
    awk -v a="$(field loss "$tmp/$1" "${3:-0}")" -v b="$(field loss "$tmp/$2" "${4:-0}")" \
        'BEGIN { d = a - b; if (d < 0) d = -d; m = a < 0 ? -a : a; exit !(a != "" && d <= 1e-5 * m) }'
}

# ---- attention: fused by the rule, unfused, forced chunks (one encoder, seq 512)
att="--layers 1 --hidden 32 --heads 4 --seq 512 --mbs 1 --micro 1"
# shellcheck disable=SC2086
if runs fused $att && runs unfused $att --unfused-attn && runs chunk64 $att --attn-chunk 64; then
    pf=$(field peak_bytes "$tmp/fused") pu=$(field peak_bytes "$tmp/unfused")
    pc=$(field peak_bytes "$tmp/chunk64")
    # unfused keeps al·s² = 4·512² floats (4 MiB) to backward; fused keeps nothing s²
    [ "$pu" -gt $((pf + 4 * 512 * 512 * 4 / 2)) ] && ok "--unfused-attn: peak $pu > fused $pf" ||
        bad "--unfused-attn: peak $pu, fused $pf (expected the s² stash on top)"
    # the rule's chunk is 256 rows here (its floor); 64 rows: a quarter of the workspace
    # 2·al·c·s = 2·4·256·512 floats, so at least 3/4 of 4 MiB less
    [ "$pc" -le $((pf - 3 * 4 * 512 * 512 * 4 / 4)) ] && ok "--attn-chunk 64: peak $pc < rule's $pf" ||
        bad "--attn-chunk 64: peak $pc, the rule's $pf (expected the workspace / 4)"
    same_loss fused unfused && same_loss fused chunk64 && ok "fused, unfused, chunked: same loss" ||
        bad "losses differ: $(field loss "$tmp/fused") $(field loss "$tmp/unfused") $(field loss "$tmp/chunk64")"
fi
# a chunk of one row and one longer than the sequence (the whole sequence) run too
# shellcheck disable=SC2086
runs chunk1 --layers 1 --hidden 32 --heads 4 --seq 8 --attn-chunk 1 &&
    runs chunk99 --layers 1 --hidden 32 --heads 4 --seq 8 --attn-chunk 99 &&
    same_loss chunk1 chunk99 && ok "--attn-chunk 1 and 99 at seq 8: same loss" ||
    bad "--attn-chunk 1 / 99 at seq 8"

# ---- the vocabulary: positions and a tied head change the model states exactly
voc="--vocab 100 --layers 1 --hidden 32 --seq 32 --mbs 2 --micro 1"
# shellcheck disable=SC2086
if runs vocab $voc && runs pos $voc --positions 48 && runs tied $voc --tied &&
    runs both $voc --positions 32 --tied; then
    sv=$(field state_bytes "$tmp/vocab") sp=$(field state_bytes "$tmp/pos")
    st=$(field state_bytes "$tmp/tied") sb=$(field state_bytes "$tmp/both")
    [ $((sp - sv)) -eq $((48 * 32 * 16)) ] && ok "--positions 48: +48·h parameters" ||
        bad "--positions 48: state bytes $sp - $sv, expected $((48 * 32 * 16))"
    [ $((sv - st)) -eq $((128 * 32 * 16)) ] && ok "--tied: −128·h parameters (V 100 padded)" ||
        bad "--tied: state bytes $sv - $st, expected $((128 * 32 * 16))"
    [ $((sb - st)) -eq $((32 * 32 * 16)) ] && ok "--positions 32 --tied together" ||
        bad "--positions 32 --tied: state bytes $sb, tied alone $st"
fi
# a tied head in another stage keeps a copy of the table, starting equal: the same loss
# shellcheck disable=SC2086
runs tie1 $voc --layers 2 --micro 2 --positions 32 --tied &&
    runs tie2 $voc --layers 2 --micro 2 --positions 32 --tied --pp 2 &&
    [ "$(wc -l <"$tmp/tie2")" -eq 2 ] && same_loss tie1 tie2 0 1 &&
    ok "--tied over pp 2: the last stage's loss is pp 1's" || bad "--tied --pp 2: $(cat "$tmp/tie2")"

# ---- Llama-family layers: parameters by the formulas (h 32, f 128 = 4h, 4 heads of 8)
lla="--layers 1 --hidden 32 --heads 4 --seq 16 --mbs 1 --micro 1"
# shellcheck disable=SC2086
if runs gpt $lla && runs gated $lla --gated && runs kv2 $lla --kv-heads 2 &&
    runs rms $lla --rms-norm && runs nobias $lla --no-bias && runs llama $lla --llama &&
    runs llama3 $lla --rms-norm --no-bias --gated; then
    s0=$(field state_bytes "$tmp/gpt")
    d() { echo $((s0 - $(field state_bytes "$tmp/$1"))); }
    # SwiGLU: the up projection is gate | up, 2f columns: + h·f weights + f biases
    [ "$(d gated)" -eq $((-(32 * 128 + 128) * 16)) ] && ok "--gated: +h·f+f parameters" ||
        bad "--gated: state bytes $(d gated) fewer, expected $((-(32 * 128 + 128) * 16))"
    # 2 K/V heads of 8: K and V 16 wide, not 32: − 2·h·16 weights − 2·16 biases
    [ "$(d kv2)" -eq $(((2 * 32 * 16 + 2 * 16) * 16)) ] && ok "--kv-heads 2: −2·h·(h−e)−2·(h−e)" ||
        bad "--kv-heads 2: state bytes $(d kv2) fewer, expected $(((2 * 32 * 16 + 2 * 16) * 16))"
    # two norms of scale only: − 2·h
    [ "$(d rms)" -eq $((2 * 32 * 16)) ] && ok "--rms-norm: −2·h parameters" ||
        bad "--rms-norm: state bytes $(d rms) fewer, expected $((2 * 32 * 16))"
    # biases of QKV (3h), output (h), FFN up (f) and down (h)
    [ "$(d nobias)" -eq $(((3 * 32 + 32 + 128 + 32) * 16)) ] && ok "--no-bias: −(5h+f) parameters" ||
        bad "--no-bias: state bytes $(d nobias) fewer, expected $(((3 * 32 + 32 + 128 + 32) * 16))"
    [ "$(field state_bytes "$tmp/llama")" -eq "$(field state_bytes "$tmp/llama3")" ] &&
        same_loss llama llama3 && ok "--llama = --rms-norm --no-bias --gated" ||
        bad "--llama: $(cat "$tmp/llama"), the three flags: $(cat "$tmp/llama3")"
fi
# attention's reach: a window of 4 keys at seq 16, and every key, each change the loss
# (the same weights and data: the seed fixes them whatever the flags)
differ() {
    [ "$(field loss "$tmp/$1")" != "$(field loss "$tmp/$2")" ] && [ -n "$(field loss "$tmp/$1")" ]
}
# shellcheck disable=SC2086
runs win4 $lla --window 4 && runs win16 $lla --window 16 && runs full $lla --not-causal && {
    differ gpt win4 && ok "--window 4 at seq 16: another loss" || bad "--window 4: same loss as none"
    same_loss gpt win16 && ok "--window 16 at seq 16: no window's loss" || bad "--window 16: loss differs"
    differ gpt full && ok "--not-causal: another loss" || bad "--not-causal: same loss as causal"
}
# interleaved 1F1B computes the same function in the same reduction order: bitwise
# shellcheck disable=SC2086
runs il1 $lla --layers 4 --pp 2 --micro 4 --interleave 1 &&
    runs il2 $lla --layers 4 --pp 2 --micro 4 --interleave 2 &&
    [ "$(wc -l <"$tmp/il2")" -eq 2 ] && [ -n "$(field loss "$tmp/il1" 1)" ] &&
    [ "$(field loss "$tmp/il1" 1)" = "$(field loss "$tmp/il2" 1)" ] &&
    ok "--interleave 2 at pp 2, 4 micro-batches: --interleave 1's loss, bitwise" ||
    bad "--interleave 2: $(cat "$tmp/il2"); 1: $(cat "$tmp/il1")"

# ---- bad combinations and values: exit 2, one line naming the flag
refuse() {
    local want=$1
    shift
    "$run" "$@" >"$tmp/out" 2>"$tmp/err"
    local rc=$?
    if [ "$rc" -eq 2 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -qF -- "$want" "$tmp/err"; then
        ok "$* -> $(cat "$tmp/err")"
    else
        bad "$*: exit $rc, '$(cat "$tmp/err")' (expected '$want')"
    fi
}
refuse "--tied without --vocab" --tied
refuse "--positions without --vocab" --positions 64
refuse "--positions 16 is fewer than --seq 32" --vocab 50 --positions 16 --seq 32
refuse "--attn-chunk with --unfused-attn" --attn-chunk 64 --unfused-attn
refuse "--attn-chunk 0" --attn-chunk 0
refuse "--attn-chunk '-4'" --attn-chunk -4
refuse "--positions '1k'" --vocab 50 --positions 1k
# a stray positional argument: named, with where help is, as tesseld's and
# tesselctl's "unexpected argument" (it said "'extra': not a flag (see --help)")
refuse "tessel-exec-run: unexpected argument 'extra'; see tessel-exec-run --help" --tied --vocab 50 extra
# a flag getopt refuses: one line naming it as typed, as tesselctl's (getopt's
# "unrecognized option" and the whole usage text followed it)
refuse "tessel-exec-run: unknown option '--bogus'; see tessel-exec-run --help" --bogus
refuse "tessel-exec-run: unknown option '-q'; see tessel-exec-run --help" -q
refuse "tessel-exec-run: option '--tp' needs a value; see tessel-exec-run --help" --tp
refuse "--kv-heads 0" --kv-heads 0
refuse "--kv-heads 3 does not divide --heads 4" --kv-heads 3 --heads 4
refuse "--kv-heads 'x'" --kv-heads x
refuse "--window 0" --window 0
refuse "--interleave 0" --interleave 0
refuse "--interleave 2 needs --pp 2 or more" --interleave 2
# what the executor refuses reaches the user once, in its words
refuse "2 K/V heads do not group 4 query heads and split 4 ways" --kv-heads 2 --heads 4 --tp 4
refuse "does not run a window over non-causal attention" --not-causal --window 4 --seq 32
refuse "n_micro 3 is not a multiple of pp 2" --layers 4 --pp 2 --micro 3 --interleave 2

# the text report: a rank off the last stage has no loss ("-", JSON null), the last
# stage's is a number (it printed "loss nan" for stage 0, which reads as a diverged run)
if "$run" --warmup 0 --iters 1 --layers 4 --hidden 64 --heads 4 --seq 32 --mbs 4 --micro 4 \
    --pp 2 >"$tmp/text" 2>&1; then
    grep -q 'stage 0 .* loss -$' "$tmp/text" && grep -Eq 'stage 1 .* loss [0-9]' "$tmp/text" &&
        ! grep -q nan "$tmp/text" && ok "text report: stage 0 loss -, stage 1 a number" ||
        bad "text report's loss: $(cat "$tmp/text")"
else
    bad "text report: exit $?: $(cat "$tmp/text")"
fi

# --help answers on stdout, exit 0, naming every model flag
if "$run" --help >"$tmp/help" 2>&1; then
    for f in --unfused-attn --attn-chunk --positions --tied --rms-norm --no-bias --gated \
        --kv-heads --window --not-causal --llama --interleave; do
        grep -q -- "$f" "$tmp/help" || bad "--help lacks $f"
    done
    ok "--help"
else
    bad "--help: exit $?"
fi

[ "$fails" -eq 0 ] || { echo "$fails failed"; exit 1; }
