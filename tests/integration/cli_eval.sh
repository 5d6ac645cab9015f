#!/usr/bin/env bash
# cli_eval.sh — `tesselctl eval --server` against a real tesseld
# (Planner.EvaluatePlan): for the same inputs (flags, --strategy, Megatron-LM
# arguments, a torchtitan TOML, a plan document, a HuggingFace config), the
# remote answer prints byte for byte what the local one prints, human and
# --json, and fails the same way with the same exit status (a TP degree that
# does not divide the heads; a stage over the memory budget); a passed
# deadline cancels the search (exit 5) and the daemon stays healthy; raw
# EvaluatePlan requests without a request, without or with a broken plan_json,
# or with a bad preset are INVALID_ARGUMENT naming the field.
#
# usage: cli_eval.sh TESSELCTL TESSELD PROTO_DIR
CTL=${1:?usage: cli_eval.sh TESSELCTL TESSELD PROTO_DIR}
shift
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh" # TESSELD, PROTO_DIR, TMPD, rpc_to, expect, ...
DATA=$(cd "$HERE/../data" && pwd)
SOCK=$TMPD/tesseld.sock
S="unix:$SOCK"

cat >"$TMPD/tesseld.ini" <<INI
[server]
unix_socket = $SOCK
[store]
database = $TMPD/tessel.db
[search]
pool_size = 2
[log]
level = info
INI
start_daemon tesseld --config "$TMPD/tesseld.ini"
wait_healthy "$S" || {
    fail "tesseld not healthy"
    finish
}

# same WHAT EXIT ARGS... — eval ARGS here and through tesseld: same stdout,
# stderr and exit status (EXIT).
same() {
    local what=$1 want=$2
    shift 2
    timeout 300 "$CTL" eval "$@" >"$TMPD/l.out" 2>"$TMPD/l.err"
    local lrc=$?
    timeout 300 "$CTL" --server "$S" eval "$@" >"$TMPD/r.out" 2>"$TMPD/r.err"
    local rrc=$?
    if [ "$lrc" -ne "$want" ] || [ "$rrc" -ne "$want" ]; then
        fail "$what: exit local $lrc, remote $rrc, want $want"
        sed 's/^/  remote stderr: /' "$TMPD/r.err" | head -5
    elif ! cmp -s "$TMPD/l.out" "$TMPD/r.out" || ! cmp -s "$TMPD/l.err" "$TMPD/r.err"; then
        fail "$what: remote output differs from local"
        diff "$TMPD/l.out" "$TMPD/r.out" | head -10
        diff "$TMPD/l.err" "$TMPD/r.err" | head -4
    elif [ "$want" -eq 0 ] && ! [ -s "$TMPD/r.out" ]; then
        fail "$what: no output"
    else
        ok "$what: remote = local (exit $rrc)"
    fi
}

M="--model GPT2-345M --cluster 8xA100-80G"
# shellcheck disable=SC2086
{
    same "flags" 0 $M --tp 2 --pp 2 --batch 32 --ckpt full
    same "flags --json" 0 $M --tp 2 --pp 2 --batch 32 --ckpt full --json
    same "--strategy --no-search --json" 0 $M --strategy tp2-dp4+sp+zero1+ckpt --mbs 2 --micro 4 \
        --no-search --json
    same "interleave and a layer split" 0 $M --tp 2 --pp 2 --interleave 2 --batch 32 \
        --layers-per-stage 13,13
    same "--megatron-args" 0 --model GPT2-345M --cluster 4x8xA100-80G:ib200 --megatron-args \
        "--tensor-model-parallel-size 8 --pipeline-model-parallel-size 2 --micro-batch-size 1 --global-batch-size 512 --recompute-granularity full --recompute-method uniform --recompute-num-layers 1 --bf16"
    same "--torchtitan" 0 --model GPT2-345M --cluster 8xA100-80G --json \
        --torchtitan "$DATA/export/gpt2-345m.torchtitan.toml"
    same "--hf-config" 0 --hf-config "$DATA/hf/gpt2.json" --cluster 8xA100-80G --tp 2 --batch 16
    same "a cluster file" 0 --model GPT2-345M --cluster "$DATA/cluster/a100-2x8-ib100.json" \
        --tp 8 --pp 2 --batch 16 --json
}
# a plan document: the local search's plan given back (ratio 1 both ways)
timeout 300 "$CTL" plan --local $M --batch 32 --no-baselines --json >"$TMPD/plan.json"
same "--plan document" 0 --cluster 8xA100-80G --plan "$TMPD/plan.json" --json
if "$PY" -c 'import json,sys; assert json.load(open(sys.argv[1]))["ratio"] == 1.0' "$TMPD/r.out"; then
    ok "the search's plan evaluated by tesseld: ratio 1"
else
    fail "the search's plan evaluated by tesseld: $(head -c 300 "$TMPD/r.out")"
fi

# a plan searched under switches (autocast; FP8 with Megatron-LM's loss): tesseld's
# comparison search runs under them too (eval.h tsl_eval_search_request): ratio 1
timeout 300 "$CTL" plan --local $M --batch 32 --no-baselines --json --autocast >"$TMPD/ac.json"
timeout 300 "$CTL" plan --local --model GPT2-345M --cluster 8xH100-80G --batch 32 --no-baselines \
    --json --fp8 tensorwise --loss-impl megatron >"$TMPD/fp8.json"
for p in "ac:8xA100-80G" "fp8:8xH100-80G"; do
    same "--plan document searched with ${p%%:*} switches" 0 --cluster "${p#*:}" \
        --plan "$TMPD/${p%%:*}.json" --json
    if "$PY" -c 'import json,sys; assert json.load(open(sys.argv[1]))["ratio"] == 1.0' "$TMPD/r.out"; then
        ok "tesseld's comparison under the plan's ${p%%:*} switches: ratio 1"
    else
        fail "${p%%:*} plan by tesseld: $(head -c 300 "$TMPD/r.out")"
    fi
done

# MTP depths: a plan document's request decides them (eval --plan without --mtp-layers
# or --no-mtp), and the request the remote mode sends carries them, so tesseld builds
# the layers the plan was split on (GPT2-345M with 2 depths; DeepSeek-V3 without its
# one): ratio 1 both ways
timeout 300 "$CTL" plan --local $M --batch 32 --no-baselines --json --mtp-layers 2 >"$TMPD/mtp.json"
V3="--hf-config $DATA/hf/deepseek_v3.json --seq-len 1024 --cluster 16x8xH200-141G"
timeout 300 "$CTL" plan --local $V3 --batch 128 --no-baselines --no-memopt --json --no-mtp \
    >"$TMPD/nomtp.json"
for p in "mtp:$M" "nomtp:$V3"; do
    same "--plan document searched with ${p%%:*}" 0 ${p#*:} --plan "$TMPD/${p%%:*}.json" --json
    if "$PY" -c 'import json,sys; assert json.load(open(sys.argv[1]))["ratio"] == 1.0' "$TMPD/r.out"; then
        ok "the ${p%%:*} plan evaluated by tesseld: ratio 1"
    else
        fail "the ${p%%:*} plan by tesseld: $(head -c 300 "$TMPD/r.out")"
    fi
done
same "--tp-sync" 0 $M --tp 2 --tp-sync --no-search --json
# AMP's fork has no SP: --sp beside --tp-sync is refused naming tp_sync by tesseld as by
# --local (the pricing's check, eval.h); at TP 1 both print the note that it changes nothing
same "--tp-sync with --sp" 2 $M --tp 2 --sp --tp-sync --no-search
grep -q "tp_sync: AMP's Megatron-LM v1.1.5 fork.*has no sequence parallelism.*layer 0 runs SP" \
    "$TMPD/r.err" && ok "--tp-sync with --sp: tesseld names tp_sync" ||
    fail "--tp-sync with --sp, remote: $(cat "$TMPD/r.err")"
same "--tp-sync at TP 1" 0 $M --tp 1 --tp-sync --no-search --json
grep -q "note: tp_sync: the plan runs TP 1 on every layer" "$TMPD/r.err" &&
    ok "--tp-sync at TP 1: the remote eval notes it" || fail "--tp-sync at TP 1, remote: $(cat "$TMPD/r.err")"
# A plan searched under --target torchtitan leaves DeepSeek-V3's own MTP depth out
# (target.h): given back without --target, eval splits it on the 63 layers its request
# was searched with (it refused, 'the plan has 63 layers, the model 66'), both ways;
# with --target torchtitan the comparison is that search's: ratio 1
timeout 300 "$CTL" plan --local $V3 --batch 128 --no-baselines --no-memopt --json \
    --target torchtitan >"$TMPD/tt.json" 2>/dev/null
same "--plan document searched under --target torchtitan" 0 $V3 --plan "$TMPD/tt.json" --json
"$PY" -c 'import json,sys; assert json.load(open(sys.argv[1]))["model"]["layers"] == 63' "$TMPD/r.out" &&
    ok "the torchtitan document priced on its 63 layers" || fail "torchtitan document: $(head -c 300 "$TMPD/r.out")"
same "--plan document under --target torchtitan, with it" 0 $V3 --plan "$TMPD/tt.json" --json \
    --target torchtitan
"$PY" -c 'import json,sys; assert json.load(open(sys.argv[1]))["ratio"] == 1.0' "$TMPD/r.out" &&
    grep -q "note: torchtitan: deepseek_v3's 1 MTP depth left out" "$TMPD/r.err" &&
    ok "the torchtitan plan evaluated by tesseld under its target: ratio 1, the note" ||
    fail "the torchtitan plan by tesseld: $(head -c 300 "$TMPD/r.out") $(cat "$TMPD/r.err")"

# A plan searched under --target megatron, given back without --target: tesseld prices
# and compares it within megatron too (the request's target is the document's), ratio 1
timeout 300 "$CTL" plan --local $M --batch 32 --target megatron --no-baselines --json \
    >"$TMPD/mg.json" 2>/dev/null
same "--plan document searched under --target megatron" 0 --cluster 8xA100-80G \
    --plan "$TMPD/mg.json" --json
"$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["target"] == "megatron" and d["ratio"] == 1.0, (d.get("target"), d["ratio"])' \
    "$TMPD/r.out" && ok "the megatron plan evaluated by tesseld within megatron: ratio 1" ||
    fail "the megatron plan by tesseld: $(head -c 300 "$TMPD/r.out")"

# tesseld reads the target from the plan document it is sent as eval --plan does
# (eval_doc.h tsl_eval_doc_target), not only from the request tesselctl fills in: an
# EvaluatePlan from another client whose request names no target answers what
# `eval --plan` prints (target megatron, ratio 1); with target_given the request's
# TARGET_ANY binds, as `eval --plan --target any`. Before, tesseld priced the document
# under no target and compared it with Tessel's whole space.
# same_doc WHAT LOCAL-JSON — the last rpc answer's result_json is that document (its
# figures as tesselctl --json prints them, to 10 significant digits)
same_doc() {
    if "$PY" - "$OUT" "$2" <<'PY'; then
import json, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
def same(x, y):
    if isinstance(x, dict):
        return isinstance(y, dict) and x.keys() == y.keys() and all(same(x[k], y[k]) for k in x)
    if isinstance(x, list):
        return isinstance(y, list) and len(x) == len(y) and all(map(same, x, y))
    if isinstance(x, float) or isinstance(y, float):
        return abs(x - y) <= 1e-9 * max(abs(x), abs(y))
    return x == y
assert a["code"] == "OK" and a["fits"] and same(a["result"], b), (a["code"], a.get("details"))
PY
        ok "$1"
    else
        fail "$1: $(head -c 400 "$OUT")"
    fi
}
timeout 300 "$CTL" eval --local --cluster 8xA100-80G --plan "$TMPD/mg.json" --json >"$TMPD/mg-local.json"
rpc_to "$S" eval --model GPT2-345M --cluster 8xA100-80G --plan-json "$TMPD/mg.json"
same_doc "EvaluatePlan with no target: the document's (megatron), as eval --plan" "$TMPD/mg-local.json"
expect "the document's target in result_json" result.target megatron
timeout 300 "$CTL" eval --local --cluster 8xA100-80G --plan "$TMPD/mg.json" --target any --json \
    >"$TMPD/mg-any.json"
rpc_to "$S" eval --model GPT2-345M --cluster 8xA100-80G --plan-json "$TMPD/mg.json" --target-given
same_doc "EvaluatePlan with target_given at TARGET_ANY: as eval --plan --target any" "$TMPD/mg-any.json"
expect "no target with target_given" result.target ""
# a document's request.target that none of the stacks has (a typo) is refused naming
# it, by tesseld too, with or without target_given (it was priced with no target)
"$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); d["request"]["target"]="megatorn"; json.dump(d,open(sys.argv[2],"w"))' \
    "$TMPD/mg.json" "$TMPD/typo.json"
same "a plan document's unknown request.target" 2 --cluster 8xA100-80G --plan "$TMPD/typo.json" --no-search
for g in "" --target-given; do
    rpc_to "$S" eval --model GPT2-345M --cluster 8xA100-80G --plan-json "$TMPD/typo.json" $g
    expect "EvaluatePlan, an unknown request.target ${g:-(no target_given)}" code INVALID_ARGUMENT
    expect_details "EvaluatePlan names request.target" "^plan_json: request.target: 'megatorn' is not one of any, megatron"
done
# the model too is built under the document's target: torchtitan leaves DeepSeek-V3's
# MTP depth out, so the plan's 63 layers are the model's (without it, 66: refused)
timeout 300 "$CTL" eval --local $V3 --plan "$TMPD/tt.json" --no-search --json >"$TMPD/tt-local.json" 2>/dev/null
rpc_to "$S" eval --hf-config "$DATA/hf/deepseek_v3.json" --seq-len 1024 --cluster 16x8xH200-141G \
    --plan-json "$TMPD/tt.json" --no-search
same_doc "EvaluatePlan of a torchtitan document: its 63 layers, as eval --plan" "$TMPD/tt-local.json"
expect "the torchtitan document's layers" result.model.layers 63
# MTP depths again: tesseld takes them from a plan document itself where the request
# leaves both mtp_layers and no_mtp out (another client sends the document alone): the plan's
# layers (GPT2-345M with its 2 depths: 32; DeepSeek-V3 without its one: 63), what
# `eval --plan` prints. Before, tesseld built the model's default depths (none; one)
# and refused the plan's layer count.
for p in "mtp:--model GPT2-345M --cluster 8xA100-80G" \
    "nomtp:--hf-config $DATA/hf/deepseek_v3.json --seq-len 1024 --cluster 16x8xH200-141G"; do
    timeout 300 "$CTL" eval --local ${p#*:} --plan "$TMPD/${p%%:*}.json" --json \
        >"$TMPD/${p%%:*}-local.json" 2>/dev/null
    rpc_to "$S" eval ${p#*:} --plan-json "$TMPD/${p%%:*}.json"
    same_doc "EvaluatePlan of the ${p%%:*} document, no MTP fields in the request: the document's" \
        "$TMPD/${p%%:*}-local.json"
done

# the sequence too: a request without seq_len takes the document's tokens_per_sample
# where the document is of the request's model (eval_doc.h tsl_eval_doc_seq_len,
# eval --plan's rule); before, tesseld priced a plan searched at --seq-len 512 at the
# preset's 1024 tokens while `eval --plan` priced it at 512
timeout 300 "$CTL" plan --local --model GPT2-345M --cluster 8xA100-80G --seq-len 512 --batch 32 \
    --no-baselines --json >"$TMPD/s512.json" 2>/dev/null
timeout 300 "$CTL" eval --local --model GPT2-345M --cluster 8xA100-80G --plan "$TMPD/s512.json" \
    --json >"$TMPD/s512-local.json" 2>/dev/null
rpc_to "$S" eval --model gpt2-345m --cluster 8xA100-80G --plan-json "$TMPD/s512.json"
same_doc "EvaluatePlan without seq_len: the document's 512 tokens, as eval --plan" "$TMPD/s512-local.json"
expect "the document's sequence in result_json" result.model.tokens_per_sample 512
rpc_to "$S" eval --model GPT2-345M --seq-len 1024 --cluster 8xA100-80G --plan-json "$TMPD/s512.json"
expect "seq_len set binds" result.model.tokens_per_sample 1024
"$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); d["model"]["tokens_per_sample"]="512"; json.dump(d,open(sys.argv[2],"w"))' \
    "$TMPD/s512.json" "$TMPD/s-str.json"
rpc_to "$S" eval --model GPT2-345M --cluster 8xA100-80G --plan-json "$TMPD/s-str.json"
expect "EvaluatePlan, a tokens_per_sample of another type" code INVALID_ARGUMENT
expect_details "EvaluatePlan names model.tokens_per_sample" \
    "^plan_json: model.tokens_per_sample: expected a whole number >= 1, got a string"

# the stacks' switches (loss_impl, opt_step, Megatron-LM's all-to-all dispatcher): written into
# the plan document or the request the remote mode sends, priced the same both ways; a plan
# document with one of another type refused naming it, both ways
same "--loss-impl --opt-step" 0 $M --tp 2 --mbs 4 --batch 32 --no-search --json \
    --loss-impl torch --opt-step megatron
"$PY" -c 'import json,sys; p=json.load(open(sys.argv[1]))["plan"]; assert p["loss_impl"] == 1 and p["opt_step"] == 1, p' \
    "$TMPD/r.out" && ok "tesseld prices the given loss_impl and opt_step" || fail "switches: $(head -c 300 "$TMPD/r.out")"
same "--plan document with --opt-step" 0 --cluster 8xA100-80G --plan "$TMPD/plan.json" --json --opt-step torch
same "--moe-alltoall-dispatcher" 0 --model Mixtral-8x7B --cluster 2x8xH100-80G:8xib400 --no-search \
    --json --megatron-args "--pipeline-model-parallel-size 2 --micro-batch-size 1 --global-batch-size 64 --expert-model-parallel-size 8 --bf16 --use-distributed-optimizer --use-precision-aware-optimizer --exp-avg-dtype bf16 --exp-avg-sq-dtype bf16 --recompute-granularity selective --recompute-modules moe_act layernorm" \
    --moe-alltoall-dispatcher
"$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); d["plan"]["loss_impl"]="torch"; json.dump(d,open(sys.argv[2],"w"))' \
    "$TMPD/plan.json" "$TMPD/bad-loss.json"
same "a plan document's loss_impl of another type" 2 --cluster 8xA100-80G --plan "$TMPD/bad-loss.json" --no-search
grep -q "plan: loss_impl: expected a whole number, got a string" "$TMPD/r.err" && ok "the field named" || fail "reason: $(cat "$TMPD/r.err")"

# a plan document's node_order is read as given: an index past the cluster's nodes, or
# a node named twice, is refused naming it (it was read as a node: out of bounds, and
# it took tesseld down); the daemon answers the next call
"$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); d["plan"]["node_order"]=[5]; json.dump(d,open(sys.argv[2],"w"))' \
    "$TMPD/plan.json" "$TMPD/bad-order.json"
same "a plan document's node_order past the nodes" 2 --cluster 8xA100-80G --plan "$TMPD/bad-order.json" --no-search
grep -q "node_order\[0\]: node 5, but the cluster has nodes 0..0" "$TMPD/r.err" && ok "the node named" ||
    fail "reason: $(cat "$TMPD/r.err")"
timeout 10 "$CTL" --server "$S" health >/dev/null && ok "tesseld healthy after a bad node_order" ||
    fail "tesseld down after a bad node_order"

# plans that cannot run: the same reason and exit status both ways
same "TP 3 does not divide 16 heads" 2 --model GPT2-345M --cluster 6xA100-80G --tp 3 --batch 12
grep -q "TP degree 3 does not divide its 16 heads" "$TMPD/r.err" &&
    ok "the reason names the degree and the heads" || fail "reason: $(cat "$TMPD/r.err")"
same "too little memory" 2 $M --tp 1 --batch 256 --memory 1G
grep -Eq "stage 0 .* over its 1.00 GiB budget" "$TMPD/r.err" &&
    ok "the reason names the stage and the budget" || fail "reason: $(cat "$TMPD/r.err")"
same "degrees that do not multiply to the devices" 2 $M --tp 3 --pp 2 --dp 1 --batch 12

# a passed deadline cancels the search; the daemon stays healthy (the search
# takes about 1 s here: a deadline of 0.2 s passes well before it ends)
timeout 60 "$CTL" --server "$S" --timeout 0.2 eval "${LONG[@]}" --tp 8 --pp 4 --batch 64 \
    >"$TMPD/out" 2>"$TMPD/err"
rc=$?
[ "$rc" -eq 5 ] && ok "deadline passed: exit 5" || fail "deadline: exit $rc: $(cat "$TMPD/err")"
timeout 30 "$CTL" --server "$S" eval "${LONG[@]}" --tp 8 --pp 4 --batch 64 --no-search \
    >"$TMPD/out" 2>&1 && ok "the same plan with --no-search answers" ||
    fail "--no-search: $(tail -3 "$TMPD/out")"
timeout 10 "$CTL" --server "$S" health >/dev/null && ok "tesseld healthy after the deadline" ||
    fail "tesseld not healthy after the deadline"
# --local runs here even with a server named (an unreachable one)
timeout 60 "$CTL" --server unix:"$TMPD/none.sock" eval $M --tp 2 --batch 16 --no-search --local \
    >"$TMPD/out" 2>&1 && ok "--local ignores --server" || fail "--local: $(cat "$TMPD/out")"
timeout 60 "$CTL" --server unix:"$TMPD/none.sock" eval $M --tp 2 --batch 16 --no-search \
    >"$TMPD/out" 2>&1
rc=$?
[ "$rc" -eq 5 ] && ok "an unreachable server: exit 5" || fail "unreachable: exit $rc"

# raw requests: the daemon's own checks (hex-encoded EvaluatePlanRequest)
pb() { # the request as hex: PRESET SPEC PLAN_JSON (an empty one is left out; "-" no request)
    "$PY" - "$@" <<'PY'
import sys
def ld(field, b):
    n, out = len(b), bytearray([field << 3 | 2])
    while True:
        out.append((n & 0x7f) | (0x80 if n > 0x7f else 0))
        n >>= 7
        if not n:
            return bytes(out) + b
preset, spec, plan = sys.argv[1:4]
req = b"" if preset == "-" else ld(1, preset.encode()) + ld(4, spec.encode())
msg = (ld(1, req) if preset != "-" else b"") + (ld(2, plan.encode()) if plan else b"")
print(msg.hex() or "00")
PY
}
PLAN=$("$PY" -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))["plan"]))' "$TMPD/plan.json")
EV=/tessel.v1.Planner/EvaluatePlan
rpc_to "$S" raw "$EV" "$(pb GPT2-345M 8xA100-80G "$PLAN")"
expect "a raw request with a plan object" code OK
rpc_to "$S" raw "$EV" "$(pb - - "$PLAN")"
expect "no request" code INVALID_ARGUMENT
expect_details "no request" "^request: missing"
rpc_to "$S" raw "$EV" "$(pb GPT2-345M 8xA100-80G "")"
expect "no plan_json" code INVALID_ARGUMENT
expect_details "no plan_json" "^plan_json: missing"
rpc_to "$S" raw "$EV" "$(pb GPT2-345M 8xA100-80G "{not json")"
expect "plan_json not JSON" code INVALID_ARGUMENT
expect_details "plan_json not JSON" "^plan_json: not JSON"
rpc_to "$S" raw "$EV" "$(pb GPT2-345M 8xA100-80G '{"pp": 3, "stages": []}')"
expect "plan_json with no stages" code INVALID_ARGUMENT
expect_details "plan_json with no stages" "^plan_json: plan.stages: must be a non-empty array"
BADSW=$("$PY" -c 'import json,sys; p=json.load(open(sys.argv[1]))["plan"]; p["opt_step"]="megatron"; print(json.dumps(p))' "$TMPD/plan.json")
rpc_to "$S" raw "$EV" "$(pb GPT2-345M 8xA100-80G "$BADSW")"
expect "plan_json with opt_step a name" code INVALID_ARGUMENT
expect_details "plan_json with opt_step a name" "^plan_json: plan: opt_step: expected a whole number, got a string"
BADSW=$("$PY" -c 'import json,sys; p=json.load(open(sys.argv[1]))["plan"]; p["loss_impl"]=99; print(json.dumps(p))' "$TMPD/plan.json")
rpc_to "$S" raw "$EV" "$(pb GPT2-345M 8xA100-80G "$BADSW")"
expect "plan_json with loss_impl 99" code INVALID_ARGUMENT
expect_details "plan_json with loss_impl 99" "loss_impl: 99 is not an implementation"
rpc_to "$S" raw "$EV" "$(pb NoSuchModel 8xA100-80G "$PLAN")"
expect "an unknown preset" code INVALID_ARGUMENT
expect_details "an unknown preset" "^model_preset"
rpc_to "$S" raw "$EV" "$(pb GPT2-345M 6xA100-80G "$PLAN")"
expect "a plan for 8 devices on 6" code INVALID_ARGUMENT
expect_details "a plan for 8 devices on 6" "^eval: "
finish
