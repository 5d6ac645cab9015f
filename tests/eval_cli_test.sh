#!/bin/bash
# `tesselctl eval` as a user drives it: a given plan's figures beside the search's,
# the search's own plan given back (same figures), Megatron-LM and torchtitan
# configurations, and plans that cannot run refused with the reason (exit 2).
set -u
# ctl, pass, fail, $dir, $out, $err; ok, bad, expect STATUS PATTERN ARGS...
# shellcheck source=cli_lib.sh
source "$(dirname "$0")/cli_lib.sh" "$1"

m345="--model GPT2-345M --cluster 8xA100-80G"
data="$(dirname "$0")/data/eval"
hf="$(dirname "$0")/data/hf"

# flags: the table and the comparison with the search
expect 0 "" eval $m345 --tp 2 --pp 2 --batch 32 --ckpt full
grep -q "predicted:" "$out" && grep -q "tp2-dp2+ckpt" "$out" && grep -q "given/search throughput" "$out" &&
    ok || bad "eval output lacks the prediction, strategy or comparison: $(cat "$out")"

# the search's best plan given back: the same figures, ratio 1
expect 0 "" plan --local $m345 --batch 32 --no-baselines --json
cp "$out" "$dir/plan.json"
expect 0 "" eval --cluster 8xA100-80G --plan "$dir/plan.json" --json
if python3 - "$dir/plan.json" "$out" <<'PY'; then ok; else bad "eval of the search's plan differs"; fi
import json, sys
s = json.load(open(sys.argv[1]))["plan"]
d = json.load(open(sys.argv[2]))
e = d["plan"]
for k in ("iter_time_s", "samples_per_s", "peak_bytes", "pp", "n_micro", "global_batch"):
    assert e[k] == s[k], (k, e[k], s[k])
for a, b in zip(e["stages"], s["stages"]):
    for k in ("time_s", "peak_bytes", "first_layer", "n_layers"):
        assert a[k] == b[k], (k, a[k], b[k])
assert d["ratio"] == 1.0, d["ratio"]
PY

# node_order, read as given from a document: each of the cluster's nodes once, else
# refused naming the entry (an index past the nodes was read out of bounds)
for o in "[5]:node_order\[0\]: node 5, but the cluster has nodes 0..1" \
    "[1, 1]:node_order\[1\]: node 1 named twice; give each of the 2 nodes once"; do
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["plan"]["node_order"]=json.loads(sys.argv[3]); d["plan"]["node_order"]+=[0]*(2-len(d["plan"]["node_order"])); json.dump(d,open(sys.argv[2],"w"))' \
        "$dir/plan.json" "$dir/order.json" "${o%%:*}"
    expect 2 "${o#*:}" eval --cluster 2x4xA100-80G:ib400 --plan "$dir/order.json" --no-search
done
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["plan"]["node_order"]=[1, 0]; json.dump(d,open(sys.argv[2],"w"))' \
    "$dir/plan.json" "$dir/order.json"
expect 0 "" eval --cluster 2x4xA100-80G:ib400 --plan "$dir/order.json" --no-search

# --no-search: no comparison; --strategy for every layer
expect 0 "" eval $m345 --strategy tp2-dp4+sp+zero1+ckpt --mbs 2 --micro 4 --no-search --json
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert "search" not in d; assert d["plan"]["global_batch"] == 32' "$out" &&
    ok || bad "--no-search --json: $(cat "$out")"
# --strategy gives every layer's degrees, SP, ZeRO and recompute: a flag for one of them
# beside it is refused by name (it was dropped without a word: --tp 2 --strategy dp8
# priced dp8, --ckpt full beside sdp256 priced no recompute)
for f in "--tp 2" "--dp 8" "--sdp 8" "--ckpt full" "--sp" "--zero 1"; do
    expect 2 "eval: ${f% *} with --strategy: the strategy text gives every layer's" \
        eval $m345 $f --strategy dp8 --no-search
done
expect 2 "eval: --recompute-modules core_attn with --strategy" \
    eval $m345 --strategy dp8 --recompute-modules core_attn --no-search
expect 0 "" eval $m345 --strategy dp8+ckpt --pp 1 --mbs 2 --micro 2 --no-search

# Megatron-LM arguments and a torchtitan TOML
expect 0 "" eval --model GPT2-345M --cluster 4x8xA100-80G:ib200 --no-search --megatron-args \
    "--tensor-model-parallel-size 8 --pipeline-model-parallel-size 2 --micro-batch-size 1 --global-batch-size 512 --recompute-granularity full --recompute-method uniform --recompute-num-layers 1 --sequence-parallel --use-distributed-optimizer --bf16"
grep -q "2 stages; global batch 512 = 256 micro-batches of 2" "$out" && grep -q "tp8-dp2+sp+zero1+ckpt" "$out" &&
    ok || bad "megatron args: $(cat "$out")"
# Megatron-LM d98e8a6: a flag that changes the plan is read or refused by name, an
# unknown one is an error, one that does not change it is accepted (bf16 runs: without
# --bf16 or --fp16 Megatron-LM trains in fp32, cost model 69)
mg() { expect "$1" "$2" eval $m345 --no-search --megatron-args "--bf16 $3"; }
mg 2 "cp-comm-type a2a+p2p" "--context-parallel-size 2 --cp-comm-type a2a+p2p"
# context parallelism is read: the plan says its degree and exchange
mg 0 "" "--context-parallel-size 2 --cp-comm-type a2a"
grep -q "context:   cp 2 (a2a" "$out" && ok || bad "megatron cp: $(cat "$out")"
# --attention-backend unfused (Transformer Engine's unfused core, what the megatron export
# writes for an --unfused-attn plan) prices as --unfused-attn does: the s x s scores kept
# (it read as changing nothing, the line priced with the fused kernel); flash a fused one
mgl="--tensor-model-parallel-size 2 --micro-batch-size 1 --global-batch-size 16"
expect 0 "" eval $m345 --no-search --json --megatron-args "--bf16 $mgl --attention-backend unfused"
cp "$out" "$dir/ab_unfused.json"
expect 0 "" eval $m345 --no-search --json --unfused-attn --megatron-args "--bf16 $mgl"
cp "$out" "$dir/flag_unfused.json"
expect 0 "" eval $m345 --no-search --json --megatron-args "--bf16 $mgl --attention-backend flash"
python3 - "$dir/ab_unfused.json" "$dir/flag_unfused.json" "$out" <<'PY' && ok || bad "--attention-backend unfused is not --unfused-attn"
import json, sys
a, b, c = (json.load(open(f))["plan"] for f in sys.argv[1:])
assert a == b, [k for k in a if a[k] != b.get(k)]
assert a["peak_bytes"] > c["peak_bytes"], (a["peak_bytes"], c["peak_bytes"])
PY
mg 2 "'sdpa' is not flash, fused, unfused, local or auto" "$mgl --attention-backend sdpa"
# --transformer-impl local (Megatron-LM's own modules: the unfused DotProductAttention
# core) prices as --attention-backend unfused on any GPU (it read as changing nothing);
# what runs only in Transformer Engine is refused naming it
expect 0 "" eval $m345 --no-search --json --megatron-args "--bf16 $mgl --transformer-impl local"
python3 - "$dir/ab_unfused.json" "$out" <<'PY' && ok || bad "--transformer-impl local is not the unfused core"
import json, sys
a, b = (json.load(open(f))["plan"] for f in sys.argv[1:])
assert a == b, [k for k in a if a[k] != b.get(k)]
PY
mg 4 "megatron: cp runs in Transformer Engine, which --transformer-impl local does not use" \
    "$mgl --transformer-impl local --context-parallel-size 2 --cp-comm-type p2p"
# --fp16 as Megatron-LM d98e8a6 runs it: Megatron-core's step with the loss scaler's
# unscale (opt_step megatron-core-fp16), the plan --target megatron --fp16 prices (it read
# as the 2021-22 step, megatron-fp16)
expect 0 "" eval $m345 --no-search --json --megatron-args \
    "--fp16 --accumulate-allreduce-grads-in-fp32 $mgl"
cp "$out" "$dir/fp16_line.json"
expect 0 "" eval $m345 --no-search --json --target megatron --fp16 --tp 2 --mbs 1 --batch 16
python3 - "$dir/fp16_line.json" "$out" <<'PY' && ok || bad "--megatron-args --fp16 is not --target megatron --fp16"
import json, sys
a, b = (json.load(open(f))["plan"] for f in sys.argv[1:])
assert a["opt_step"] == 5 and a["fp16"] is True, (a.get("opt_step"), a.get("fp16"))
assert a == b, [k for k in a if a[k] != b.get(k)]
PY
# on V100s (no Transformer Engine, no bf16) a line runs Megatron-LM's local impl: the
# unfused core priced as --target megatron prices it there (cost model 91; the line was
# priced with a fused kernel), TE's context parallelism refused; --bf16, which was priced
# as fp16 without a word, refused naming the GPU
v100="--model GPT2-345M --cluster 8xV100-32G"
expect 0 "" eval $v100 --no-search --json --megatron-args "--fp16 --accumulate-allreduce-grads-in-fp32 $mgl"
cp "$out" "$dir/v100_line.json"
expect 0 "" eval $v100 --no-search --json --target megatron --fp16 --tp 2 --mbs 1 --batch 16
python3 - "$dir/v100_line.json" "$out" <<'PY' && ok || bad "a --megatron-args line on V100s is not priced as --target megatron"
import json, sys
a, b = (json.load(open(f))["plan"] for f in sys.argv[1:])
assert b.pop("stack_unfused_attn") is True  # the search's record of why; the figures alike
assert a == b, [k for k in a if a[k] != b.get(k)]
PY
expect 2 "megatron: --bf16, but the V100-32G has no bf16 tensor cores" \
    eval $v100 --no-search --megatron-args "--bf16 $mgl"
expect 4 "megatron: cp: runs in Transformer Engine, which does not run on the V100-32G" \
    eval $v100 --no-search --megatron-args "--fp16 $mgl --context-parallel-size 2"
mg 2 "totally-bogus-flag" "--tensor-model-parallel-size 2 --totally-bogus-flag 7"
mg 2 "checkpoint-activations is no longer valid" "--checkpoint-activations"
mg 2 "use --num-virtual-stages-per-pipeline-rank" "--virtual-pipeline-model-parallel-size 2"
mg 0 "" "--pipeline-model-parallel-size 4 --num-virtual-stages-per-pipeline-rank 2 --global-batch-size 16"
grep -q "interleave: 2 model chunks per stage" "$out" && ok || bad "virtual stages not read: $(cat "$out")"
# the pipeline line names the interleaved schedule (it said "(1F1B)" above the interleave line)
grep -q "^  pipeline: .* (interleaved 1F1B)$" "$out" && ok || bad "pipeline line: $(grep pipeline: "$out")"
# Megatron's micro-batches per group of the interleaved schedule: read, and the same N
# by eval's flag; one Megatron-LM refuses (below pp; a last group smaller than pp) by name
mg 0 "" "--pipeline-model-parallel-size 4 --num-virtual-stages-per-pipeline-rank 2 --global-batch-size 32 --microbatch-group-size-per-virtual-pipeline-stage 8"
grep -q "vp group:  8 micro-batches per group" "$out" && ok || bad "vp group not read: $(cat "$out")"
expect 0 "" eval $m345 --pp 4 --interleave 2 --batch 32 --vp-group 8 --no-search --json
python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["plan"]; assert p["vp_group"] == 8 and p["interleave"] == 2 and p["sim_iter_time_s"] > 0, p.get("vp_group")' "$out" &&
    ok || bad "--vp-group 8: $(cat "$out")"
cp "$out" "$dir/vp.json"
expect 0 "" eval $m345 --pp 4 --interleave 2 --batch 32 --no-search --json
python3 - "$dir/vp.json" "$out" <<'PY' && ok || bad "N 8 holds no more than N = pp 4"
import json, sys
a = json.load(open(sys.argv[1]))["plan"]["stages"][0]
b = json.load(open(sys.argv[2]))["plan"]["stages"][0]
assert a["act_bytes"] > b["act_bytes"] and a["inflight"] > b["inflight"], (a["inflight"], b["inflight"])
PY
# --lazy-grads: the gradients from each chunk's first backward (PyTorch FSDP). GPT-2
# 345M over pp 4 x dp 2, v 2, 4 micro-batches: stage 1 holds 7 layers, chunks of 4
# and 3; its warm-up (4-1-1)*2 + 4 = 8 = m*v runs every forward before the first
# backward, chunk 1's, so at the peak chunk 0's 4 layers have no gradients yet:
# 4 x 12,596,224 parameters x 2 bytes = 100,769,792 off the peak; ms_bytes unchanged;
# and no kept buffer for the wgrad GEMMs to accumulate into (cost model 50): each writes
# a fresh 2-byte gradient, so the iteration is shorter than the default's (beta 1 on
# the 2-byte buffer: 4 bytes per element)
expect 0 "" eval $m345 --pp 4 --interleave 2 --batch 8 --no-search --json
cp "$out" "$dir/grads.json"
expect 0 "" eval $m345 --pp 4 --interleave 2 --batch 8 --no-search --json --lazy-grads
python3 - "$dir/grads.json" "$out" <<'PY' && ok || bad "--lazy-grads: stage 1's peak not 4 layers' gradients lower"
import json, sys
a = json.load(open(sys.argv[1]))["plan"]
b = json.load(open(sys.argv[2]))["plan"]
assert "lazy_grads" not in a and b["lazy_grads"] is True
sa, sb = a["stages"][1], b["stages"][1]
assert sa["n_layers"] == sb["n_layers"] == 7 and sa["ms_bytes"] == sb["ms_bytes"]
assert sa["peak_bytes"] - sb["peak_bytes"] == 4 * 12596224 * 2, sa["peak_bytes"] - sb["peak_bytes"]
assert a["iter_time_s"] > b["iter_time_s"], (a["iter_time_s"], b["iter_time_s"])
PY
expect 0 "" eval $m345 --pp 4 --interleave 2 --batch 8 --no-search --lazy-grads
grep -q "gradients: from each chunk's first backward" "$out" && ok || bad "--lazy-grads not printed: $(cat "$out")"
expect 2 "vp_group 3" eval $m345 --pp 4 --interleave 2 --batch 32 --vp-group 3 --no-search
expect 2 "vp_group 5" eval $m345 --pp 4 --interleave 2 --batch 32 --vp-group 5 --no-search
expect 2 "vp_group 8: micro-batches per group of the interleaved schedule" eval $m345 --pp 4 --batch 32 --vp-group 8 --no-search
mg 2 "microbatch-group-size-per-virtual-pipeline-stage: 2" "--pipeline-model-parallel-size 4 --num-virtual-stages-per-pipeline-rank 2 --global-batch-size 32 --microbatch-group-size-per-virtual-pipeline-stage 2"
mg 0 "" "--recompute-activations"
grep -q "+selckpt" "$out" && ok || bad "--recompute-activations not selective: $(cat "$out")"
mg 0 "" "--use-torch-fsdp2 --tensor-model-parallel-size 2"
grep -q "tp2-sdp4" "$out" && ok || bad "--use-torch-fsdp2 not sdp: $(cat "$out")"
expect 0 "" eval --model GPT2-345M --cluster 5xA100-80G --no-search --megatron-args \
    "--pipeline-model-parallel-size 5 --account-for-embedding-in-pipeline-split --bf16"
grep -qE "^  0 +0-4 " "$out" && grep -qE "^  1 +5-9 " "$out" && ok ||
    bad "--account-for-embedding-in-pipeline-split: the first stage is not the embedding and 4 layers: $(cat "$out")"
# full recompute needs --recompute-method and --recompute-num-layers, as in Megatron-LM
mg 2 "needs --recompute-num-layers" "--recompute-granularity full --recompute-method uniform"
# quoted values; --sequence-parallel at TP 1 switched off with a note, as Megatron does
mg 0 "" "--data-path \"a b\" --split '99,1,0' --tensor-model-parallel-size 2"
mg 0 "switched off, as Megatron-LM does" "--tensor-model-parallel-size 1 --sequence-parallel"
# NVIDIA's own examples/llama/train_llama3_8b_h100_fp8.sh (its argument line, trimmed):
# its --rotary-base 1000000 is not Llama 3's rope_theta 500000, so it builds another
# model than the HF config's and is refused naming the flag; with Llama 3's (a later
# flag wins, as argparse) it is priced. Its peak, 76.7 GiB since cost model 170 (delayed
# scaling: TE's FP8 copy of each projection input beside the fused core's bf16 output,
# 2 GiB over 32 layers), is 80.6 GiB since cost model 186: its --cross-entropy-loss-fusion
# (loss_impl megatron-fused) clones the fp32 softmax in the loss backward, 4 B over
# 8192 x 128256 logits, over the H100's 80 GiB (an open question: NVIDIA ships the
# script for H100s; no measured peak; bench/published/README.md "NVIDIA's Llama 3 8B FP8
# example, term by term" reads every term against the pins). Its import is checked on
# H200s, where it fits
expect 2 "megatron: --rotary-base 1000000: the model llama3_8b has 500000" eval \
    --hf-config "$hf/llama3_8b.json" --cluster 8xH100-80G --no-search \
    --megatron-args "$(cat "$data/megatron_llama3_8b_h100_fp8.args")"
expect 0 "sequence-parallel with tensor-model-parallel-size 1" eval --hf-config "$hf/llama3_8b.json" \
    --cluster 8xH200-141G --no-search \
    --megatron-args "$(cat "$data/megatron_llama3_8b_h100_fp8.args") --rotary-base 500000"
grep -q "global batch 128 = 16 micro-batches of 8" "$out" && grep -q "dp8+zero1" "$out" &&
    ok || bad "NVIDIA's llama3 8B fp8 example: $(cat "$out")"
grep -q "precision: FP8 (delayed scaling)" "$out" && ok ||
    bad "NVIDIA's llama3 8B fp8 example is not priced in FP8: $(cat "$out")"
# the audit's three parts on an H100-80G given 100 GB (the 405B test's device, below):
# states 41.13 GiB (FP8 weights and their transposes, bf16 embedding and head, the bf16
# gradient buffer, the optimizer's fp32 shards), the stash 33.57 (32 layers of 945 MiB,
# the head's fp32 softmax), the loss backward's clone and bf16 gradient 5.87
cat >"$dir/h100-100.json" <<'JS'
{"gpu_types": {"H100-80G": {"memory_gb": 100}}, "nodes": [{"type": "H100-80G", "gpus": 8}]}
JS
expect 0 "" eval --hf-config "$hf/llama3_8b.json" --cluster "$dir/h100-100.json" --memory 100G \
    --no-search --json --megatron-args "$(cat "$data/megatron_llama3_8b_h100_fp8.args") --rotary-base 500000"
python3 - "$out" <<'PY' && ok || bad "NVIDIA's llama3 8B fp8 example, the audit's terms: $(head -c 400 "$out")"
import json, sys
st = json.load(open(sys.argv[1]))["plan"]["stages"][0]
gib = lambda k: round(st[k] / 2**30, 2)
assert (gib("ms_bytes"), gib("act_bytes"), gib("peak_bytes")) == (41.13, 33.57, 80.57), st
PY
# --tp-comm-overlap (TE's userbuffers, docs/cost-model.md "TP communication overlap"):
# the plan prices it, the megatron export writes it, --megatron-args reads it back to the
# same iteration time; without SP, or for another stack, refused naming the field
l8="--model Llama3-8B --cluster 8xH100-80G"
expect 0 "" plan --local $l8 --batch 64 --target megatron --tp-comm-overlap --json
cp "$out" "$dir/ub.json"
expect 0 "" plan --local $l8 --batch 64 --target megatron --tp-comm-overlap --export megatron
grep -v '^#' "$out" >"$dir/ub.args"
grep -qx -- "--tp-comm-overlap" "$dir/ub.args" && grep -qx -- "--sequence-parallel" "$dir/ub.args" &&
    ok || bad "--tp-comm-overlap not exported: $(cat "$out")"
expect 0 "" eval $l8 --no-search --json --megatron-args "$(tr '\n' ' ' <"$dir/ub.args")"
python3 -c 'import json,sys
a=json.load(open(sys.argv[1]))["plan"]; b=json.load(open(sys.argv[2]))["plan"]
assert a.get("tp_comm_overlap") and b.get("tp_comm_overlap"), "field"
assert abs(a["iter_time_s"] - b["iter_time_s"]) <= 1e-9 * a["iter_time_s"], (a["iter_time_s"], b["iter_time_s"])' \
    "$dir/ub.json" "$out" && ok || bad "--tp-comm-overlap round trip: $(head -c 400 "$out")"
# (79.84 GiB on stage 0: held to the whole device, --memory 80G, not plan's 75 GiB default)
expect 0 "" eval $l8 --tp 2 --sp --batch 64 --no-search --json --memory 80G
cp "$out" "$dir/ub-off.json"
expect 0 "" eval $l8 --tp 2 --sp --batch 64 --no-search --json --tp-comm-overlap --memory 80G
python3 -c 'import json,sys
a=json.load(open(sys.argv[1]))["plan"]; b=json.load(open(sys.argv[2]))["plan"]
assert b["stages"][0]["fwd_s"] < a["stages"][0]["fwd_s"], (a["stages"][0]["fwd_s"], b["stages"][0]["fwd_s"])' \
    "$dir/ub-off.json" "$out" && ok || bad "--tp-comm-overlap: the forward not faster"
expect 2 "tp_comm_overlap: .*--no-seq-par" plan --local $l8 --batch 64 --no-seq-par --tp-comm-overlap
expect 4 "tp_comm_overlap: torchtitan" plan --local $l8 --batch 64 --target torchtitan --tp-comm-overlap
# NVFP4 with userbuffers: TE takes no NVFP4 tensors there (Megatron-Bridge turns the
# overlap off under nvfp4): refused by plan, eval and --megatron-args, naming both
b8="--model Llama3-8B --cluster 8xB200"
expect 4 "tp_comm_overlap: with fp8_recipe nvfp4" plan --local $b8 --batch 64 --target megatron \
    --fp8-recipe 5 --tp-comm-overlap
expect 4 "tp_comm_overlap: with fp8_recipe nvfp4" eval $b8 --tp 2 --sp --batch 64 --no-search \
    --fp8 nvfp4 --tp-comm-overlap
expect 4 "megatron: --tp-comm-overlap with --fp4-format e2m1: tp_comm_overlap" eval $b8 --no-search \
    --megatron-args "--tensor-model-parallel-size 2 --sequence-parallel --micro-batch-size 1 --global-batch-size 64 --bf16 --fp4-format e2m1 --tp-comm-overlap"
expect 0 "" eval $b8 --no-search --megatron-args \
    "--tensor-model-parallel-size 2 --sequence-parallel --micro-batch-size 1 --global-batch-size 64 --bf16 --fp4-format e2m1"
# FP8 by flag; refused where the GPU has none, naming it; unknown recipes refused
expect 0 "" eval --model GPT2-345M --cluster 8xH100-80G --tp 2 --batch 32 --no-search --fp8 delayed
grep -q "precision: FP8 (delayed scaling)" "$out" && ok || bad "--fp8 delayed: $(cat "$out")"
expect 2 "the A100-80G has no FP8" eval $m345 --tp 2 --batch 32 --no-search --fp8 tensorwise
# --fp8-param-gather: the given plan's weights in FP8, its ZeRO-3 gathers in 1 byte
h8="--model GPT2-345M --cluster 8xH100-80G --sdp 8 --batch 32 --no-search --json --fp8 delayed"
expect 0 "" eval $h8
cp "$out" "$dir/fp8.json"
expect 0 "" eval $h8 --fp8-param-gather
python3 - "$dir/fp8.json" "$out" <<'PY' && ok || bad "--fp8-param-gather: $(cat "$out")"
import json, sys
a, b = (json.load(open(f))["plan"] for f in sys.argv[1:])
assert b["fp8_param_gather"] is True and "fp8_param_gather" not in a, (a, b)
assert b["iter_time_s"] < a["iter_time_s"] and b["peak_bytes"] < a["peak_bytes"], (a, b)
PY
expect 2 "not a recipe" eval --model GPT2-345M --cluster 8xH100-80G --tp 2 --fp8 fp4
# --fp8-impl: who runs the recipe. torchao's tensorwise casts the weights per use and
# saves bf16 inputs: slower and heavier than TE's on the same plan; torchao has no
# delayed scaling; unknown names refused, the option named
h8w="--model GPT2-345M --cluster 8xH100-80G --tp 2 --batch 32 --no-search --json --fp8 tensorwise"
expect 0 "" eval $h8w
cp "$out" "$dir/te.json"
expect 0 "" eval $h8w --fp8-impl torchao
python3 - "$dir/te.json" "$out" <<'PY' && ok || bad "--fp8-impl torchao: $(cat "$out")"
import json, sys
a, b = (json.load(open(f))["plan"] for f in sys.argv[1:])
assert b["fp8_impl"] == 1 and "fp8_impl" not in a, (a, b)
assert b["iter_time_s"] > a["iter_time_s"] and b["stages"][0]["act_bytes"] > a["stages"][0]["act_bytes"], (a, b)
PY
expect 2 "fp8_impl: torchao runs tensorwise and mxfp8, not delayed" eval --model GPT2-345M \
    --cluster 8xH100-80G --tp 2 --batch 32 --no-search --fp8 delayed --fp8-impl torchao
expect 2 "fp8-impl: 'ao' is not te or torchao" eval --model GPT2-345M --cluster 8xH100-80G \
    --fp8-impl ao
# --fp8-impl names who runs an FP8 recipe: on a plan that runs none (no --fp8, none in
# the plan document, or --no-fp8) it priced nothing and was taken without a word;
# refused naming the field, as --tf32 is without fp32 (a document's fp8_impl too)
expect 2 "fp8_impl: --fp8-impl torchao on a plan without FP8 (no --fp8, and none in the plan)" \
    eval --model GPT2-345M --cluster 8xH100-80G --tp 2 --batch 32 --no-search --fp8-impl torchao
expect 2 "fp8_impl: --fp8-impl te on a plan without FP8 (--no-fp8)" \
    eval --model GPT2-345M --cluster 8xH100-80G --plan "$dir/te.json" --no-search --no-fp8 --fp8-impl te
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); p=d["plan"]; p.pop("fp8_recipe"); p["fp8_impl"]=1; json.dump(d,open(sys.argv[2],"w"))' \
    "$dir/te.json" "$dir/bf16_ao.json"
expect 2 "eval: fp8_impl: 1 (torchao) on a plan without FP8 (no fp8_recipe)" \
    eval --model GPT2-345M --cluster 8xH100-80G --plan "$dir/bf16_ao.json" --no-search
expect 0 "" eval --model GPT2-345M --cluster 8xH100-80G --plan "$dir/bf16_ao.json" --no-search \
    --fp8 tensorwise --json
python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["plan"]; assert p["fp8_impl"] == 1 and p["fp8_recipe"] == 2, p' "$out" &&
    ok || bad "a bf16 document's fp8_impl with --fp8: $(cat "$out")"
# --cp-comm names the attention exchange between CP ranks: at CP 1 it priced nothing
# and was taken without a word; refused naming the field (a document's cp_comm too)
expect 2 "cp_comm: --cp-comm a2a with CP 1: .*give --cp N (N > 1), or drop --cp-comm" \
    eval $m345 --tp 2 --batch 32 --no-search --cp-comm a2a
expect 2 "cp_comm: --cp-comm p2p with CP 1" eval $m345 --tp 2 --cp 1 --batch 32 --no-search --cp-comm p2p
expect 0 "" eval $m345 --tp 2 --cp 2 --batch 32 --no-search --cp-comm a2a --json
python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["plan"]; assert p["cp"] == 2 and p["cp_comm"] == 2, p' "$out" &&
    ok || bad "--cp 2 --cp-comm a2a: $(cat "$out")"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["plan"]["cp_comm"]=2; json.dump(d,open(sys.argv[2],"w"))' \
    "$dir/plan.json" "$dir/cp1_a2a.json"
expect 2 "eval: cp_comm: 2 (a2a) on a plan without CP (cp 0)" \
    eval --cluster 8xA100-80G --plan "$dir/cp1_a2a.json" --no-search

# the LM loss as each stack runs it (docs/cost-model.md "The loss's memory"): GPT-2
# 345M at TP 2, micro-batches of 4: 4 x 1024 x 50257 / 2 logits on a head's rank; the
# executor's 4 kept + 2 transient, torch's under TP loss_parallel's 4 + 12 (+ 10 B
# each; cost model 70), TE's fused 2 + 0 (- 4 B each); the plan carries it. Its time
# is its kernels' bytes per logit (cost model 119, loss_impl.h "The loss's time"):
# torch's loss_parallel 38 + 38 over the executor's 10 + 6, TE's 6 + 4 under it
lw="--model GPT2-345M --cluster 8xA100-80G --tp 2 --mbs 4 --batch 32 --no-search --json"
expect 0 "" eval $lw
cp "$out" "$dir/loss-exec.json"
expect 0 "" eval $lw --loss-impl torch
cp "$out" "$dir/loss-torch.json"
expect 0 "" eval $lw --loss-impl te
python3 - "$dir/loss-exec.json" "$dir/loss-torch.json" "$out" <<'PY' && ok || bad "--loss-impl: $(cat "$out")"
import json, sys
a, b, c = (json.load(open(f))["plan"] for f in sys.argv[1:])
L = 4 * 1024 * 50257 // 2
assert "loss_impl" not in a and b["loss_impl"] == 1 and c["loss_impl"] == 3, (a, b, c)
assert b["iter_time_s"] > a["iter_time_s"] > c["iter_time_s"], (a, b, c)
assert b["peak_bytes"] - a["peak_bytes"] == 10 * L, (b["peak_bytes"] - a["peak_bytes"], 10 * L)
assert a["peak_bytes"] - c["peak_bytes"] == 4 * L, (a["peak_bytes"] - c["peak_bytes"], 4 * L)
PY
# torch's loss under torch.compile (cost model 90): inductor keeps the bf16 logits and
# writes only their bf16 gradient, 2 + 2 B against the executor's 4 + 2; its kernels
# move 4 + 4 B per logit against the executor's 10 + 6 (cost model 119)
expect 0 "" eval $lw --loss-impl torch-compile
python3 - "$dir/loss-exec.json" "$out" <<'PY' && ok || bad "--loss-impl torch-compile: $(cat "$out")"
import json, sys
a, d = (json.load(open(f))["plan"] for f in sys.argv[1:])
L = 4 * 1024 * 50257 // 2
assert d["loss_impl"] in (4, "torch-compile"), d["loss_impl"]
assert a["iter_time_s"] > d["iter_time_s"], (a, d)
assert a["peak_bytes"] - d["peak_bytes"] == 2 * L, (a["peak_bytes"] - d["peak_bytes"], 2 * L)
PY
expect 0 "" plan --local --model GPT2-345M --cluster 8xA100-80G --target torchtitan \
    --loss-impl torch-compile
# flash-attn's xentropy kernel (cost model 119): the saved bf16 logits (2 B), no
# transient (per-row outputs, the gradient written in place), 4 + 4 B per logit in one
# kernel each way, as the compiled loss; under --autocast refused naming the field
expect 0 "" eval $lw --loss-impl torch-compile
cp "$out" "$dir/loss-compile.json"
expect 0 "" eval $lw --loss-impl fused-xentropy
cp "$out" "$dir/loss-xent.json"
python3 - "$dir/loss-exec.json" "$dir/loss-compile.json" "$out" <<'PY' && ok || bad "--loss-impl fused-xentropy: $(cat "$out")"
import json, sys
a, d, x = (json.load(open(f))["plan"] for f in sys.argv[1:])
L = 4 * 1024 * 50257 // 2
assert x["loss_impl"] in (5, "fused-xentropy"), x["loss_impl"]
assert x["iter_time_s"] == d["iter_time_s"] < a["iter_time_s"], (a, d, x)
assert a["peak_bytes"] - x["peak_bytes"] == 4 * L, (a["peak_bytes"] - x["peak_bytes"], 4 * L)
PY
expect 2 "loss_impl: autocast" eval $lw --loss-impl fused-xentropy --autocast
# llm-foundry under Composer (cost model 120): fused-xentropy's kernel with a new bf16
# gradient (2 B transient), and after each micro-batch's backward Composer's two train
# metrics, torch's cross-entropy forward each: 48 B per logit in the backward, not 4
expect 0 "" eval $lw --loss-impl composer
python3 - "$dir/loss-xent.json" "$out" <<'PY' && ok || bad "--loss-impl composer: $(cat "$out")"
import json, sys
x, c = (json.load(open(f))["plan"] for f in sys.argv[1:])
L = 4 * 1024 * 50257 // 2
assert c["loss_impl"] in (6, "composer"), c["loss_impl"]
assert c["iter_time_s"] > x["iter_time_s"], (x, c)
assert c["peak_bytes"] - x["peak_bytes"] == 2 * L, (c["peak_bytes"] - x["peak_bytes"], 2 * L)
PY
expect 2 "loss_impl: autocast" eval $lw --loss-impl composer --autocast
# Megatron-core's native fusion under torch.compile (cost model 186): megatron's steps in
# 22 + 18 B per logit (megatron's eager 38 + 14), and the compiled backward's fp32 clone of
# the softmax beside the bf16 gradient: 6 B transient where megatron allocates 2
expect 0 "" eval $lw --loss-impl megatron
cp "$out" "$dir/loss-megatron.json"
expect 0 "" eval $lw --loss-impl megatron-fused
python3 - "$dir/loss-megatron.json" "$out" <<'PY' && ok || bad "--loss-impl megatron-fused: $(cat "$out")"
import json, sys
m, f = (json.load(open(p))["plan"] for p in sys.argv[1:])
L = 4 * 1024 * 50257 // 2
assert m["loss_impl"] in (2, "megatron") and f["loss_impl"] in (7, "megatron-fused"), (m, f)
assert f["iter_time_s"] < m["iter_time_s"], (m["iter_time_s"], f["iter_time_s"])
assert f["peak_bytes"] - m["peak_bytes"] == 4 * L, (f["peak_bytes"] - m["peak_bytes"], 4 * L)
PY
expect 2 "loss_impl: autocast" eval $lw --loss-impl megatron-fused --autocast
# the stack switches through a plan document: out of range or of the wrong type, refused
# naming the field (never read as 0)
expect 0 "" plan --local $m345 --batch 32 --no-baselines --json
cp "$out" "$dir/sw.json"
sw() { # KEY VALUE(json) STATUS PATTERN
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["plan"][sys.argv[2]]=json.loads(sys.argv[3]); json.dump(d,open(sys.argv[4],"w"))' \
        "$dir/sw.json" "$1" "$2" "$dir/sw-bad.json"
    expect "$3" "$4" eval --cluster 8xA100-80G --plan "$dir/sw-bad.json" --no-search
}
sw loss_impl 9 2 "loss_impl: 9 is not an implementation"
sw loss_impl '"torch"' 2 "eval: plan: loss_impl: expected a whole number, got a string"
sw loss_impl -1 2 "eval: plan: loss_impl: -1 is negative"
sw opt_step 8 2 "opt_step: 8 is not an optimizer step"
sw opt_step '"megatron"' 2 "eval: plan: opt_step: expected a whole number, got a string"
sw opt_step 1.5 2 "eval: plan: opt_step: 1.5 is not a whole number >= 0"
sw moe_alltoall_dispatcher 1 2 "eval: plan: moe_alltoall_dispatcher: expected true or false, got a number"
sw moe_alltoall_dispatcher true 0 ""
sw tp_sync 1 2 "eval: plan: tp_sync: expected true or false, got a number"
sw tp_sync true 2 "tp_sync: .*no sequence parallelism.*: layer 0 runs SP" # its tp2+sp layers
# --tp-sync (AMP's fork: every TP all-reduce between two device synchronisations): the
# plan says so and takes longer at TP 2; at TP 1 there is nothing to synchronise, and a
# note says it changes nothing
expect 0 "" eval $lw
cp "$out" "$dir/sync-off.json"
expect 0 "" eval $lw --tp-sync
cp "$out" "$dir/sync-on.json"
! grep -q "note: tp_sync" "$err" && ok || bad "--tp-sync at TP 2 noted: $(cat "$err")"
expect 0 "note: tp_sync: the plan runs TP 1 on every layer: no TP all-reduce to synchronise, so it changes nothing" \
    eval ${lw/--tp 2/--tp 1} --tp-sync
cp "$out" "$dir/sync-tp1.json"
# the fork has no sequence parallelism: --sp beside it is refused naming tp_sync and the
# first layer with SP (exit 2, as any plan/switch contradiction), and so is a plan
# document with SP layers given --tp-sync
expect 2 "tp_sync: AMP's Megatron-LM v1.1.5 fork.*has no sequence parallelism.*: layer 0 runs SP" \
    eval $lw --sp --tp-sync
expect 2 "tp_sync: .*no sequence parallelism" eval ${lw/--tp 2/--strategy tp2-dp4+sp} --tp-sync
expect 0 "" eval ${lw/--tp 2/--tp 1}
python3 - "$dir/sync-off.json" "$dir/sync-on.json" "$dir/sync-tp1.json" "$out" <<'PY' && ok || bad "--tp-sync: $(cat "$out")"
import json, sys
a, b, c, d = (json.load(open(f))["plan"] for f in sys.argv[1:])
assert "tp_sync" not in a and b["tp_sync"] is True and c["tp_sync"] is True, (a, b, c)
assert b["iter_time_s"] > a["iter_time_s"], (a["iter_time_s"], b["iter_time_s"])
assert c["iter_time_s"] == d["iter_time_s"], (c["iter_time_s"], d["iter_time_s"])
PY
expect 0 "" eval ${lw% --json} --tp-sync
grep -q "^  stack:     every TP all-reduce between two device synchronisations (AMP's Megatron-LM v1.1.5 fork)$" "$out" &&
    ok || bad "--tp-sync not printed: $(cat "$out")"
sw ds_pipe_p2p 1 2 "eval: plan: ds_pipe_p2p: expected true or false, got a number"
sw ds_pipe_p2p true 0 ""
# --ds-pipe-p2p (AMP's DeepSpeed pipeline engine): over 2 nodes of 4 GPUs, PP 2 across
# them at TP 4, the plan says so and takes longer (the mask, the two TP all-gathers,
# the receiving stage holding each exchange); at PP 1 there is no boundary
pw="--model GPT2-345M --cluster 2x4xA100-80G --tp 4 --pp 2 --mbs 1 --batch 32 --no-search --json"
expect 0 "" eval $pw
cp "$out" "$dir/dsp-off.json"
expect 0 "" eval $pw --ds-pipe-p2p
cp "$out" "$dir/dsp-on.json"
expect 0 "" eval ${pw/--pp 2/--pp 1} --ds-pipe-p2p
cp "$out" "$dir/dsp-pp1.json"
expect 0 "" eval ${pw/--pp 2/--pp 1}
python3 - "$dir/dsp-off.json" "$dir/dsp-on.json" "$dir/dsp-pp1.json" "$out" <<'PY' && ok || bad "--ds-pipe-p2p: $(cat "$out")"
import json, sys
a, b, c, d = (json.load(open(f))["plan"] for f in sys.argv[1:])
assert "ds_pipe_p2p" not in a and b["ds_pipe_p2p"] is True, (a, b)
assert b["stages"][0]["p2p_s"] > a["stages"][0]["p2p_s"], (a["stages"], b["stages"])
assert b["iter_time_s"] > a["iter_time_s"], (a["iter_time_s"], b["iter_time_s"])
assert c["iter_time_s"] == d["iter_time_s"], (c["iter_time_s"], d["iter_time_s"])
PY
expect 0 "" eval ${pw% --json} --ds-pipe-p2p
grep -q "^  stack:     stage boundaries by DeepSpeed's pipeline engine" "$out" &&
    ok || bad "--ds-pipe-p2p not printed: $(cat "$out")"
expect 4 "ds_pipe_p2p: a megatron configuration does not run DeepSpeed's pipeline engine" \
    eval $m345 --no-search --megatron-args "--bf16 --tensor-model-parallel-size 2" --ds-pipe-p2p
for t in megatron deepspeed; do
    expect 4 "$t: does not run DeepSpeed's pipeline engine; the plan was priced with ds_pipe_p2p" \
        eval $m345 --no-search --tp 2 --pp 2 --ds-pipe-p2p --target $t
done
sw ds_pipe_engine 1 2 "eval: plan: ds_pipe_engine: expected true or false, got a number"
sw ds_pipe_engine true 0 ""
# --ds-pipe-engine (DeepSpeed's PipelineEngine, BLOOM's and MT-NLG's; cost model 154): the
# same bytes as --legacy-p2p, but the receiving stage sits in every exchange too, so with
# the later stage the slower (11 and 15 layers) its cycle holds its incoming boundary's
# both transfers, where Megatron's duplex exchange holds it for one hop (cost model 161):
# m − 1 = 31 more of half stage 0's p2p, and the event simulator's rendezvous agrees; at
# PP 1 there is no boundary and nothing is recorded
pe="--model GPT2-345M --cluster 2x4xA100-80G --tp 4 --pp 2 --layers-per-stage 11,15 --mbs 1 --batch 32 --no-search --legacy-p2p --json"
expect 0 "" eval $pe
cp "$out" "$dir/dse-off.json"
expect 0 "" eval $pe --ds-pipe-engine
cp "$out" "$dir/dse-on.json"
expect 0 "" eval ${pe/--pp 2 --layers-per-stage 11,15/--pp 1} --ds-pipe-engine
python3 - "$dir/dse-off.json" "$dir/dse-on.json" "$out" <<'PY' && ok || bad "--ds-pipe-engine: $(cat "$out")"
import json, sys
a, b, c = (json.load(open(f))["plan"] for f in sys.argv[1:])
assert "ds_pipe_engine" not in a and b["ds_pipe_engine"] is True and "ds_pipe_engine" not in c, (a, b, c)
p2p = a["stages"][0]["p2p_s"]
assert p2p > 0 and b["stages"][0]["p2p_s"] == p2p, (a["stages"], b["stages"])
assert abs(b["iter_time_s"] - a["iter_time_s"] - 31 * p2p / 2) < 1e-9, (a["iter_time_s"], b["iter_time_s"], p2p)
assert abs(b["sim_iter_time_s"] - b["iter_time_s"]) < 1e-9, (b["sim_iter_time_s"], b["iter_time_s"])
PY
expect 0 "" eval ${pe% --json} --ds-pipe-engine
grep -q "^  stack:     stages by DeepSpeed's PipelineEngine (four blocking one-way transfers" "$out" &&
    ok || bad "--ds-pipe-engine not printed: $(cat "$out")"
expect 2 "ds_pipe_engine: DeepSpeed's PipelineEngine runs plain 1F1B" eval $pe --ds-pipe-engine --interleave 2
expect 4 "ds_pipe_engine: a megatron configuration does not run DeepSpeed's pipeline engine" \
    eval $m345 --no-search --megatron-args "--bf16 --tensor-model-parallel-size 2" --ds-pipe-engine
expect 4 "megatron: does not run DeepSpeed's pipeline engine; the plan was priced with ds_pipe_engine" \
    eval $m345 --no-search --tp 2 --pp 2 --ds-pipe-engine --target megatron
sw nccl_no_tree 1 2 "eval: plan: nccl_no_tree: expected true or false, got a number"
sw nccl_no_tree true 0 ""
# --nccl-no-tree (the stack's NCCL_ALGO=^tree, AMP's fork): since cost model 174 NCCL's
# tree on two nodes runs at up to 2 x the NIC (its speedIntra), so TP 16 over two A100
# nodes of one EDR card all-reduces faster than the ring; with the switch the ring
# prices it as before 174, and the plan records it
nt="--model BERT-Huge-32 --cluster 2x8xA100-40G:1xib100 --tp 16 --mbs 16 --batch 16 --no-search --json"
expect 0 "" eval $nt
cp "$out" "$dir/nt-off.json"
expect 0 "" eval $nt --nccl-no-tree
python3 - "$dir/nt-off.json" "$out" <<'PY' && ok || bad "--nccl-no-tree: $(cat "$out")"
import json, sys
a, b = (json.load(open(f))["plan"] for f in sys.argv[1:])
assert "nccl_no_tree" not in a and b["nccl_no_tree"] is True, (a, b)
assert b["iter_time_s"] > 1.2 * a["iter_time_s"], (a["iter_time_s"], b["iter_time_s"])
PY
sw norm_impl 2 2 "norm_impl: 2 is not a norm implementation"
sw norm_impl '"apex"' 2 "eval: plan: norm_impl: expected a whole number, got a string"
sw norm_impl 1 0 ""
# --norm-impl apex (apex's FusedLayerNorm, Megatron-LM 2021's MixedFusedLayerNorm, cost
# model 184): every norm's backward a third kernel reading dY and X again, so the same
# plan takes longer, the forward unchanged; the plan records it (1), te leaves it out
ni="--model GPT2-345M --cluster 8xA100-80G --tp 1 --mbs 4 --batch 32 --no-search --json"
expect 0 "" eval $ni --norm-impl te
cp "$out" "$dir/ni-te.json"
expect 0 "" eval $ni --norm-impl apex
python3 - "$dir/ni-te.json" "$out" <<'PY' && ok || bad "--norm-impl apex: $(cat "$out")"
import json, sys
a, b = (json.load(open(f))["plan"] for f in sys.argv[1:])
assert "norm_impl" not in a and b["norm_impl"] == 1, (a.get("norm_impl"), b.get("norm_impl"))
assert b["iter_time_s"] > a["iter_time_s"], (a["iter_time_s"], b["iter_time_s"])
assert b["stages"][0]["fwd_s"] == a["stages"][0]["fwd_s"], (a["stages"][0], b["stages"][0])
PY
cp "$out" "$dir/ni-apex.json"
expect 0 "" eval --cluster 8xA100-80G --plan "$dir/ni-apex.json" --no-search --json
python3 - "$dir/ni-apex.json" "$out" <<'PY' && ok || bad "norm_impl read back: $(cat "$out")"
import json, sys
a, b = (json.load(open(f))["plan"] for f in sys.argv[1:])
assert b["norm_impl"] == 1, b.get("norm_impl")
assert b["iter_time_s"] == a["iter_time_s"], (a["iter_time_s"], b["iter_time_s"])
PY
expect 2 "norm-impl: 'torch' is not te or apex" eval $ni --norm-impl torch
sw torch_pipelining 1 2 "eval: plan: torch_pipelining: expected true or false, got a number"
sw torch_pipelining true 0 ""
# --torch-pipelining (the stages by torch.distributed.pipelining, torchtitan's): since cost
# model 168 its interleaved 1F1B's blocking exchanges (162) are keyed on it, not on torch's
# optimizer step: with opt_step torch alone an interleaved plan's hops hide in the steady
# state as before, with the switch each is held; recorded in the plan at PP > 1 only
ti="--model GPT2-345M --cluster 2x4xA100-80G --tp 4 --pp 2 --interleave 2 --mbs 1 --batch 32 --no-search --opt-step torch --json"
expect 0 "" eval $ti
cp "$out" "$dir/tpp-off.json"
expect 0 "" eval $ti --torch-pipelining
cp "$out" "$dir/tpp-on.json"
expect 0 "" eval ${ti/--pp 2 --interleave 2/--pp 1} --torch-pipelining
python3 - "$dir/tpp-off.json" "$dir/tpp-on.json" "$out" <<'PY' && ok || bad "--torch-pipelining: $(cat "$out")"
import json, sys
a, b, c = (json.load(open(f))["plan"] for f in sys.argv[1:])
assert "torch_pipelining" not in a and b["torch_pipelining"] is True and "torch_pipelining" not in c, (a, b, c)
assert b["stages"][0]["p2p_s"] == a["stages"][0]["p2p_s"] > 0, (a["stages"], b["stages"])
assert b["iter_time_s"] > a["iter_time_s"], (a["iter_time_s"], b["iter_time_s"])
PY
expect 4 "torch_pipelining: a megatron configuration does not run torch.distributed.pipelining" \
    eval $m345 --no-search --megatron-args "--bf16 --tensor-model-parallel-size 2" --torch-pipelining
expect 4 "megatron: does not run torch.distributed.pipelining; the plan was priced with torch_pipelining" \
    eval $m345 --no-search --tp 2 --pp 2 --torch-pipelining --target megatron
# the text output names both switches where they are not the executor's
expect 0 "" eval ${lw% --json} --loss-impl te --opt-step megatron
grep -q "^  loss:      the LM head's memory as Transformer Engine's fused cross-entropy keeps it (loss_impl te)$" "$out" &&
    grep -q "^  optimizer: .*after its last backward; opt_step megatron)$" "$out" &&
    ok || bad "loss and step not printed: $(cat "$out")"
expect 0 "" eval ${lw% --json}
! grep -q "^  loss:\|opt_step" "$out" && ok || bad "the executor's printed: $(cat "$out")"
# torch.optim.Adam's per-tensor loop (Galvatron-BMW's PyTorch 1.10): named, recorded as
# 6, and slower than the fused kernel; a value outside the set is refused naming it
expect 0 "" eval ${lw% --json} --opt-step torch-loop
grep -q "^  optimizer: .*after its last backward; opt_step torch-loop)$" "$out" &&
    ok || bad "torch-loop not printed: $(cat "$out")"
expect 0 "" eval $lw
cp "$out" "$dir/fused.json"
expect 0 "" eval $lw --opt-step torch-loop
python3 -c 'import json,sys; a,b=(json.load(open(f))["plan"] for f in sys.argv[1:3]); assert b["opt_step"] == 6 and b["iter_time_s"] > a["iter_time_s"], (b["opt_step"], a["iter_time_s"], b["iter_time_s"])' \
    "$dir/fused.json" "$out" && ok || bad "torch-loop not recorded or not slower: $(cat "$out")"
# Composer's DecoupledAdamW under FSDP1 (llm-foundry): named, recorded as 7, and slower
# than torch's foreach step over the same bytes (a read-back per tensor piece)
expect 0 "" eval $lw --dp 1 --sdp 4 --opt-step torch
cp "$out" "$dir/foreach.json"
expect 0 "" eval $lw --dp 1 --sdp 4 --opt-step composer
python3 -c 'import json,sys; a,b=(json.load(open(f))["plan"] for f in sys.argv[1:3]); assert b["opt_step"] == 7 and b["iter_time_s"] > a["iter_time_s"], (b["opt_step"], a["iter_time_s"], b["iter_time_s"])' \
    "$dir/foreach.json" "$out" && ok || bad "composer not recorded or not slower: $(cat "$out")"
expect 2 "opt-step: 'torch-adam' is not fused, megatron, megatron-fp16, torch, deepspeed-fp16, megatron-core-fp16, torch-loop or composer" \
    eval $lw --opt-step torch-adam
expect 2 "loss-impl: 'nll' is not exec, torch, megatron, te, torch-compile, fused-xentropy, composer or megatron-fused" eval $lw --loss-impl nll
expect 2 "loss_impl: autocast prices a script's own loss" eval $lw --autocast --loss-impl megatron
expect 4 "loss_impl: torchtitan runs its LM loss as torch, not megatron" plan --local \
    --model GPT2-345M --cluster 8xA100-80G --target torchtitan --loss-impl megatron
expect 2 "loss-impl: 'x' is not exec, torch, megatron, te, torch-compile, fused-xentropy, composer or megatron-fused" plan --local $m345 --loss-impl x

cat >"$dir/job.toml" <<'TOML'
[training]
local_batch_size = 8
global_batch_size = 64
seq_len = 1024

[parallelism]
tensor_parallel_degree = 2
data_parallel_shard_degree = -1  # the rest: 4
pipeline_parallel_degree = 1

[activation_checkpoint]
mode = "full"
TOML
expect 0 "" eval --model GPT2-345M --cluster 8xA100-80G --torchtitan "$dir/job.toml" --no-search
grep -q "global batch 64 = 2 micro-batches of 32" "$out" && grep -q "tp2-sdp4+sp+ckpt" "$out" &&
    ok || bad "torchtitan: $(cat "$out")"
# a misspelt key is refused, not priced at its default (TP 1): bad input, exit 2
sed 's/^tensor_parallel_degree/tensor_paralel_degree/' "$dir/job.toml" >"$dir/typo.toml"
expect 2 "line 7: .parallelism. tensor_paralel_degree is not a key of the section (did you mean tensor_parallel_degree?)" \
    eval --model GPT2-345M --cluster 8xA100-80G --torchtitan "$dir/typo.toml" --no-search
printf '[job]\ndescription = """a job\n[parallelism]\ntensor_parallel_degree = 2\n' >"$dir/str.toml"
expect 2 'line 2: a """ string is not closed' \
    eval --model GPT2-345M --cluster 8xA100-80G --torchtitan "$dir/str.toml" --no-search
# eval checks its switches as plan does, for the configuration's stack: torchtitan
# runs neither TE's userbuffers nor Megatron-LM's activation offloading
expect 4 "tp_comm_overlap: torchtitan" eval --model GPT2-345M --cluster 8xA100-80G \
    --torchtitan "$dir/job.toml" --no-search --tp-comm-overlap
expect 4 "cpu_offload_layers: torchtitan" eval --model GPT2-345M --cluster 8xA100-80G \
    --torchtitan "$dir/job.toml" --no-search --cpu-offload-layers 2
# nor another stack's loss or optimizer step (a configuration is its stack's run); the
# stack's own, and the executor's, pass
expect 4 "loss_impl: a torchtitan configuration runs its LM loss as torch, not megatron" eval \
    --model GPT2-345M --cluster 8xA100-80G --torchtitan "$dir/job.toml" --no-search --loss-impl megatron
expect 4 "opt_step: a torchtitan configuration runs its own optimizer step, not megatron" eval \
    --model GPT2-345M --cluster 8xA100-80G --torchtitan "$dir/job.toml" --no-search --opt-step megatron
expect 0 "" eval --model GPT2-345M --cluster 8xA100-80G --torchtitan "$dir/job.toml" --no-search \
    --loss-impl torch --opt-step torch
expect 4 "opt_step: a megatron configuration runs its own optimizer step, not torch" eval $m345 \
    --no-search --megatron-args "--bf16 --tensor-model-parallel-size 2" --opt-step torch
expect 4 "loss_impl: a megatron configuration runs its LM loss as megatron, not torch" eval $m345 \
    --no-search --megatron-args "--bf16 --tensor-model-parallel-size 2" --loss-impl torch
expect 0 "" eval $m345 --no-search --megatron-args "--bf16 --tensor-model-parallel-size 2" \
    --loss-impl te --opt-step megatron-fp16
# nor synchronises the device around its TP collectives (AMP's fork does: --tp-sync)
expect 4 "tp_sync: a torchtitan configuration does not synchronise the device around its TP collectives" \
    eval --model GPT2-345M --cluster 8xA100-80G --torchtitan "$dir/job.toml" --no-search --tp-sync
expect 4 "tp_sync: a megatron configuration does not synchronise the device around its TP collectives" \
    eval $m345 --no-search --megatron-args "--bf16 --tensor-model-parallel-size 2" --tp-sync
# and so under --target (the stack's rules, as for a plan priced with another loss): no
# target's launch synchronises so (deepspeed's TP is AutoTP, without stages)
for t in megatron torchtitan galvatron; do
    expect 4 "$t: does not synchronise the device around its TP collectives" \
        eval $m345 --no-search --strategy tp2-sdp4+sp --tp-sync --target $t
done
expect 4 "deepspeed: does not synchronise the device around its TP collectives" \
    eval $m345 --no-search --tp 2 --tp-sync --target deepspeed
# torchtitan's own presets: TP is sequence-parallel there (31 and 58 GiB, not 103
# and 115; with torch's loss under TP, loss_parallel's, + 12 B per logit on the head's
# rank (cost model 70; 8 before it): 8 x 8192 x 128256 / 8 x 12 B = 11.7 GiB and
# 2 x 8192 x 128256 / 8 x 12 B = 2.9 GiB, 43 and 61 GiB); global_batch_size = -1 is
# local_batch_size x DP; the 405B preset's enable_async_tensor_parallel (with its
# [compile]: torchtitan refuses AsyncTP eager) is async_tp; the Python form of
# torchtitan since 2026-02-23 gives the same plan as its TOML
tt() { expect 0 "" eval --hf-config "$data/llama3_$1.json" --cluster "$2" --no-search --json --torchtitan "$data/torchtitan_llama3_$1.$3"; }
tt 70b 8x8xA100-80G:ib200 toml
cp "$out" "$dir/tt70-toml.json"
tt 70b 8x8xA100-80G:ib200 py
cp "$out" "$dir/tt70-py.json"
tt 405b 16x8xH100-80G:ib400 toml
if python3 - "$dir/tt70-toml.json" "$dir/tt70-py.json" "$out" <<'PY'; then ok; else bad "torchtitan presets"; fi
import json, sys
a, b, c = (json.load(open(f))["plan"] for f in sys.argv[1:4])
G = 2**30
assert 42 * G < a["peak_bytes"] < 44 * G, a["peak_bytes"] / G
assert 59 * G < c["peak_bytes"] < 61 * G, c["peak_bytes"] / G
assert a["loss_impl"] == 1 and c["loss_impl"] == 1, (a.get("loss_impl"), c.get("loss_impl"))
assert c.get("async_tp") is True and "async_tp" not in a, "enable_async_tensor_parallel"
assert a["global_batch"] == 64 and c["global_batch"] == 32, (a["global_batch"], c["global_batch"])
assert a["iter_time_s"] == b["iter_time_s"] and a["peak_bytes"] == b["peak_bytes"], "py != toml"
PY
# no split points: torchtitan's own split, the embedding and the head weighing a
# layer each: 32 layers over 4 stages are [8, 9, 8, 7] (and so with Interleaved1F1B)
ttjob() { printf '[training]\nlocal_batch_size = 4\nglobal_batch_size = -1\n[parallelism]\npipeline_parallel_degree = 4\n%b[activation_checkpoint]\nmode = "%s"\n' "$1" "${2:-none}" >"$dir/tt.toml"; }
ttrun() { expect "$1" "$2" eval --hf-config "$hf/llama3_8b.json" --cluster 8xH100-80G --no-search --torchtitan "$dir/tt.toml"; }
for sched in 1F1B Interleaved1F1B; do
    ttjob "pipeline_parallel_schedule = \"$sched\"\n"
    ttrun 0 ""
    grep -qE "^  0 +0-8 " "$out" && grep -qE "^  1 +9-17 " "$out" && grep -qE "^  2 +18-25 " "$out" &&
        grep -qE "^  3 +26-33 " "$out" && ok || bad "torchtitan split ($sched): $(cat "$out")"
done
grep -q "interleave: 2 model chunks" "$out" && ok || bad "Interleaved1F1B: $(cat "$out")"
ttjob 'pipeline_parallel_schedule = "GPipe"\n'
ttrun 2 'pipeline_parallel_schedule "GPipe"'
ttjob 'pipeline_parallel_layers_per_stage = 5\n'
ttrun 2 "pipeline_parallel_layers_per_stage 5"
ttjob 'pipeline_parallel_layers_per_stage = 9\n'
ttrun 0 ""
ttjob 'context_parallel_degree = 2\n'
ttrun 0 ""
grep -q "context:   cp 2 (torch-allgather: torch's ring, K/V all-gathered under its first step (eager))" "$out" &&
    ok || bad "torchtitan cp, eager (no compile key): $(cat "$out")"
# compiled, each gather and dK/dV send is waited where it is issued (docs/cost-model.md)
ttjob 'context_parallel_degree = 2\n[compile]\nenable = true\n'
ttrun 0 ""
grep -q "context:   cp 2 (torch-allgather: torch's ring, K/V all-gathered once per pass, exposed as compiled)" "$out" &&
    ! grep -q "^  eager:" "$out" && ok || bad "torchtitan cp, compiled: $(cat "$out")"
ttjob 'context_parallel_degree = 2\ncontext_parallel_rotate_method = "ring"\n'
ttrun 2 "context_parallel_rotate_method ring"
# FSDP2 under PP as torchtitan runs it ("default" fsdp_reshard_after_forward: not
# pp_enabled): at PP 4 x FSDP 2 the blocks held unsharded between micro-batches (the stack
# line); "never" is the same there; "always" under PP (gathers every micro-batch with the
# gradients held until the last backward) is not priced, a value not torchtitan's is bad input
ttjob ''
ttrun 0 ""
grep -q "stack:     SDP kept unsharded between micro-batches" "$out" && ok ||
    bad "torchtitan PP 4: no sdp_nosync: $(cat "$out")"
cp "$out" "$dir/tt-reshard-default.txt"
ttjob 'fsdp_reshard_after_forward = "never"\n'
ttrun 0 ""
cmp -s "$out" "$dir/tt-reshard-default.txt" && ok || bad "reshard never under PP: $(cat "$out")"
ttjob 'fsdp_reshard_after_forward = "always"\n'
ttrun 4 'fsdp_reshard_after_forward "always" under pipeline parallelism: a gather every micro-batch beside gradients held unsharded to the last backward, which Tessel does not price'
ttjob 'fsdp_reshard_after_forward = "sometimes"\n'
ttrun 2 'fsdp_reshard_after_forward "sometimes" is not default, always or never'
# without PP "default" and "always" reshard after every block's forward (ZeRO-3, the
# same figures); "never" keeps each block's gathered weights to its backward
# (sdp_keep_weights: no backward gather, so faster; 2 B per parameter beyond the shard
# held, so more memory), which --sdp-keep-weights beside a configuration does not override;
# plan --target torchtitan --sdp-keep-weights exports "never" and reads back to its figures
tt1() { printf '[training]\nlocal_batch_size = 1\nglobal_batch_size = 16\n[parallelism]\ndata_parallel_shard_degree = 8\n%b[activation_checkpoint]\nmode = "full"\n' "$1" >"$dir/tt1.toml"; }
tt1run() {
    local st=$1 pat=$2
    shift 2
    expect "$st" "$pat" eval --hf-config "$hf/llama3_8b.json" --cluster 8xH100-80G --no-search --torchtitan "$dir/tt1.toml" --json "$@"
}
for pol in default always never; do
    tt1 "fsdp_reshard_after_forward = \"$pol\"\n"
    tt1run 0 ""
    cp "$out" "$dir/tt1-$pol.json"
done
python3 -c 'import json,sys; d,a,n=(json.load(open(f))["plan"] for f in sys.argv[1:4]); assert "sdp_keep_weights" not in d and (d["iter_time_s"], d["peak_bytes"]) == (a["iter_time_s"], a["peak_bytes"]) and n["sdp_keep_weights"] is True and n["iter_time_s"] < d["iter_time_s"] and n["peak_bytes"] > d["peak_bytes"], (d["iter_time_s"], n["iter_time_s"], d["peak_bytes"], n["peak_bytes"])' \
    "$dir/tt1-default.json" "$dir/tt1-always.json" "$dir/tt1-never.json" && ok || bad "torchtitan never at PP 1: $(cat "$out")"
tt1run 4 'sdp_keep_weights: a torchtitan configuration runs its own FSDP as its fsdp_reshard_after_forward says' --sdp-keep-weights
expect 0 "" plan --local --hf-config "$hf/llama3_8b.json" --cluster 8xH100-80G --batch 16 --no-baselines --target torchtitan --pp 1 --sdp-keep-weights --export torchtitan-toml
cp "$out" "$dir/tt1-plan.toml"
grep -q '^fsdp_reshard_after_forward = "never"$' "$dir/tt1-plan.toml" && ok || bad "export never: $(cat "$out")"
want=$(sed -n 's/^# 8 GPUs; predicted \([0-9.]*\) s.*/\1/p' "$dir/tt1-plan.toml")
expect 0 "" eval --hf-config "$hf/llama3_8b.json" --cluster 8xH100-80G --no-search --torchtitan "$dir/tt1-plan.toml"
grep -q "predicted: $want s/iteration" "$out" && grep -q "stack:     SDP keeps each layer's gathered weights" "$out" &&
    ok || bad "never read back ($want): $(cat "$out")"
# selective: torchtitan's layer frequency is full recompute of every 2nd layer; op-level is
# the recompute module torchtitan_op (recompute.h), no layer checkpointed
ttjob "" selective
ttrun 0 "every N-th Transformer layer, N = 2"
grep -q "layers: 0-1 sdp2 ×2, 2 sdp2+ckpt ×1, 3 sdp2 ×1" "$out" && ok || bad "selective_ac_option 2: $(cat "$out")"
ttjob "" "selective\"
selective_ac_option = \"op"
ttrun 0 ""
grep -q "op-level selective AC (torchtitan_op)" "$out" && grep -q "layers: 0-8 sdp2 ×9" "$out" && ok ||
    bad "selective_ac_option op: $(cat "$out")"

# zero-bubble plans through torchtitan and back: the export's 2·pp model parts in a V
# (part q on rank q and 2·pp − 1 − q) read back as the plan's stages, the same figures
# and schedule from the TOML and the Python; DualPipeV (F&B priced as F + B, as torch
# runs it) read back as a dualpipev plan with the figures of the plan document
# (GPT3-39B's shape with its head untied: torchtitan refuses weight tying with pipeline
# parallelism, cost model 118, so the preset, tied, gets one stage under the target)
untied_gpt() { # NAME HIDDEN HEADS LAYERS SEQ: an untied GPT-2-style config in $dir
    python3 - "$hf/gpt2.json" "$dir/$1.json" "$2" "$3" "$4" "$5" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
h, a, l, s = (int(x) for x in sys.argv[3:7])
d.update(n_embd=h, n_head=a, n_layer=l, n_positions=s, n_ctx=s, tie_word_embeddings=False)
json.dump(d, open(sys.argv[2], "w"))
PY
}
untied_gpt gpt3_39b_untied 8192 64 48 2048
untied_gpt gpt2_345m_untied 1024 16 24 1024
expect 4 "torchtitan: model GPT2-345M ties its output head to the embedding (tied_head) and the plan has pp 2" \
    eval --model GPT2-345M --cluster 2x8xA100-80G --pp 2 --sdp 8 --batch 64 --mbs 1 --no-search --target torchtitan
expect 2 "pp: 2 stages under target torchtitan with model GPT2-345M's head tied to its embedding" \
    plan --local --model GPT2-345M --cluster 2x8xA100-80G --batch 64 --pp 2 --no-baselines --target torchtitan
zb="--hf-config $dir/gpt3_39b_untied.json --cluster 2x8xA100-80G:ib200"
expect 0 "" plan --local $zb --batch 32 --target torchtitan --json
cp "$out" "$dir/zbv.json"
grep -q '"schedule": "zbv"' "$dir/zbv.json" && ok || bad "GPT3-39B (untied) under torchtitan is no zbv plan"
# one default budget (search.h tsl_request_device_budget): eval holds a given plan to the
# budget plan holds its search to, an 80 GiB A100 less 1G + 5% = 75 GiB. GPT2-1.3B with one
# micro-batch of 30 on one A100 needs 76.31 GiB (1.89 GiB a sample): refused without
# --memory (eval's default was the device's 80 GiB, which admitted it beside a search held to
# 75 GiB that cannot find it: given/search above 1); with --memory 80G the given plan and the
# search share that budget, and the search finds the plan itself (ratio 1)
g13="--model GPT2-1.3B --cluster 1xA100-80G --batch 30"
expect 2 "stage 0 (layers 0-25) needs 76.31 GiB per device, over its 75.00 GiB budget" eval $g13 --mbs 30
expect 0 "" eval $g13 --mbs 30 --memory 80G --json
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["plan"]["budget_bytes"] == 80 << 30 and d["ratio"] == 1.0 and d["memory"]["memory_bytes"] == 80 << 30, (d["plan"]["budget_bytes"], d.get("ratio"))' "$out" &&
    ok || bad "--memory 80G: $(head -c 300 "$out")"
expect 0 "" plan --local $g13 --no-baselines --json
cp "$out" "$dir/g13.json"
expect 0 "" eval --cluster 1xA100-80G --plan "$dir/g13.json" --json
python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["plan"]; d=json.load(open(sys.argv[2])); assert p["budget_bytes"] == d["plan"]["budget_bytes"] == 80530636800 and d["ratio"] == 1.0 and d["memory"]["memory_bytes"] == 0, (p["budget_bytes"], d["plan"]["budget_bytes"])' \
    "$dir/g13.json" "$out" && ok || bad "plan's and eval's default budget: $(head -c 300 "$out")"
expect 0 "" eval --cluster 1xA100-80G --plan "$dir/g13.json"
grep -q "of a 75.0 GiB budget (device memory less 1G + 5% reserved" "$out" && ok ||
    bad "eval's budget line: $(grep memory: "$out")"

# "without it" (iter_time_1f1b_s): the plan's own stages and strategies under plain 1F1B,
# the same figure from plan and from eval of its document (planner/search_eval.c
# plain_1f1b_s). GPT3-15B on 4x8 A100 at batch 32 is a zbv plan whose search weighed it
# against interleaved 1F1B (1.1899 s), which plan printed where eval printed plain 1F1B
# (1.4556 s); the figure is what the document with schedule 1F1B evaluates to
zb15="--model GPT3-15B --cluster 4x8xA100-80G:ib200"
expect 0 "" plan --local $zb15 --batch 32 --no-baselines
grep "^  schedule:  ZB-V" "$out" >"$dir/zb15-plan.line" || bad "GPT3-15B at batch 32 is no zbv plan: $(cat "$out")"
expect 0 "" plan --local $zb15 --batch 32 --no-baselines --json
cp "$out" "$dir/zb15.json"
expect 0 "" eval --cluster 4x8xA100-80G:ib200 --plan "$dir/zb15.json" --no-search
grep "^  schedule:  ZB-V" "$out" | cmp -s - "$dir/zb15-plan.line" && ok ||
    bad "zbv 'without it': plan $(cat "$dir/zb15-plan.line"), eval $(grep '^  schedule:' "$out")"
sed 's/"schedule": "zbv"/"schedule": "1F1B"/' "$dir/zb15.json" >"$dir/zb15-1f1b.json"
expect 0 "" eval --cluster 4x8xA100-80G:ib200 --plan "$dir/zb15-1f1b.json" --no-search --json
python3 -c 'import json,sys; a=json.load(open(sys.argv[1]))["plan"]; b=json.load(open(sys.argv[2]))["plan"]; assert b["schedule"] == "1F1B" and "interleave" not in b and a["iter_time_1f1b_s"] == b["iter_time_s"], (a["iter_time_1f1b_s"], b["iter_time_s"])' \
    "$dir/zb15.json" "$out" && ok || bad "zbv iter_time_1f1b_s is not its stages under 1F1B: $(head -c 300 "$out")"
zbsame() { # PLAN-DOC EVAL-OUT SCHEDULE
    python3 - "$1" "$2" "$3" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["plan"]
e = json.load(open(sys.argv[2]))["plan"]
assert e["schedule"] == sys.argv[3], e["schedule"]
for k in ("iter_time_s", "samples_per_s", "peak_bytes", "pp", "n_micro", "global_batch", "schedule"):
    assert e[k] == s[k], (k, e[k], s[k])
for a, b in zip(e["stages"], s["stages"]):
    for k in ("time_s", "peak_bytes", "first_layer", "n_layers"):
        assert a[k] == b[k], (k, a[k], b[k])
PY
}
for form in torchtitan-toml torchtitan; do
    expect 0 "" plan --local $zb --batch 32 --target torchtitan --export $form
    cp "$out" "$dir/zbv.$form"
    expect 0 "" eval $zb --torchtitan "$dir/zbv.$form" --no-search --json
    zbsame "$dir/zbv.json" "$out" zbv && ok || bad "zbv through $form: $(cat "$out")"
    # the zbv plan run as DualPipeV (which the search did not weigh) holds more: since
    # cost model 70 its head's stage, with the logits of every micro-batch held to the
    # step's end, needs 75.5 GiB, over the default 75; both evals get the device's 80
    sed 's/"ZBVZeroBubble"/"DualPipeV"/' "$dir/zbv.$form" >"$dir/dpv.$form"
    grep -q '"DualPipeV"' "$dir/dpv.$form" && ok || bad "no schedule in the $form export"
    expect 0 "" eval $zb --torchtitan "$dir/dpv.$form" --no-search --json --memory 80G
    cp "$out" "$dir/dpv-eval.json"
    sed 's/"schedule": "zbv"/"schedule": "dualpipev"/' "$dir/zbv.json" >"$dir/dpv.json"
    expect 0 "" eval $zb --plan "$dir/dpv.json" --no-search --json --memory 80G
    zbsame "$out" "$dir/dpv-eval.json" dualpipev && ok || bad "DualPipeV through $form: $(cat "$dir/dpv-eval.json")"
done

# mixture of experts through torchtitan and back: a Mixtral plan searched for
# torchtitan (ep > 1) exported in both forms and read back by eval --torchtitan
# with the same ep, strategy and figures; a layout torchtitan runs otherwise than
# Tessel prices is refused naming the rule (exit 2), DeepSpeed refuses MoE (exit 4)
moe="--model Mixtral-8x7B --cluster 2x8xH100-80G:8xib400"
expect 0 "" plan --local $moe --batch 64 --target torchtitan --no-baselines --json
cp "$out" "$dir/moe.json"
for form in torchtitan-toml torchtitan; do
    expect 0 "" plan --local $moe --batch 64 --target torchtitan --export $form
    cp "$out" "$dir/moe.$form"
    grep -q "expert_parallel_degree = [1-9]" "$dir/moe.$form" && ok || bad "no EP in the $form export"
    expect 0 "" eval $moe --torchtitan "$dir/moe.$form" --no-search --json
    if python3 - "$dir/moe.json" "$out" <<'PY'; then ok; else bad "MoE through $form: $(cat "$out")"; fi
import json, sys
s = json.load(open(sys.argv[1]))["plan"]
e = json.load(open(sys.argv[2]))["plan"]
assert s["ep"] > 1 and e["ep"] == s["ep"], (e.get("ep"), s["ep"])
for k in ("iter_time_s", "samples_per_s", "peak_bytes", "pp", "n_micro", "global_batch", "schedule"):
    assert e[k] == s[k], (k, e[k], s[k])
for a, b in zip(e["stages"], s["stages"]):
    for k in ("time_s", "peak_bytes", "first_layer", "n_layers", "runs"):
        assert a[k] == b[k], (k, a[k], b[k])
PY
done
printf '[parallelism]\ntensor_parallel_degree = 2\n[activation_checkpoint]\nmode = "full"\n' >"$dir/moe-tp.toml"
expect 2 "expert parallelism off on Mixtral-8x7B's 32 MoE layers" eval $moe --torchtitan "$dir/moe-tp.toml"
printf '[parallelism]\ndata_parallel_replicate_degree = 2\nexpert_parallel_degree = 8\n' >"$dir/moe-hsdp.toml"
expect 2 "keeps 2 replicas (HSDP)" eval $moe --torchtitan "$dir/moe-hsdp.toml"
expect 4 "DeepSpeed takes experts from the model's code" plan --local $moe --batch 64 --target deepspeed

printf '[parallelism]\ntensor_parallel_degree = two\n' >"$dir/bad.toml"
expect 2 "tensor_parallel_degree" eval $m345 --torchtitan "$dir/bad.toml"

# a hybrid Mamba-2 model (Nemotron 3 Nano): Megatron's --hybrid-layer-pattern checked
# against the config's blocks; a TP degree that splits the SSM heads (64) but not the
# B/C groups (8) refused as Megatron's MambaMixer asserts
nano="--hf-config $hf/nemotron_3_nano.json --seq-len 8192 --cluster 2x8xB200-180G --no-search"
pat='MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME'
mgn="--bf16 --micro-batch-size 1 --global-batch-size 64 --expert-model-parallel-size 8 --num-layers 52"
expect 0 "" eval $nano --megatron-args "$mgn --hybrid-layer-pattern $pat"
expect 2 "layer 1 is 'M' in the configuration, 'E' in the model" eval $nano \
    --megatron-args "$mgn --hybrid-override-pattern MMMEM${pat:5}"
# '|' segments: Megatron-LM's stages (2 segments over PP 2: stage 0 the embedding and 24
# blocks), and its virtual stages (4 over PP 2), which must build the blocks Tessel
# prices on each stage (Nano's pattern does not repeat over the chunks: refused)
expect 2 "2 '|' segments at --pipeline-model-parallel-size 1" eval $nano \
    --megatron-args "$mgn --hybrid-layer-pattern ${pat:0:24}|${pat:24}"
expect 0 "" eval $nano --megatron-args "$mgn --pipeline-model-parallel-size 2 --hybrid-layer-pattern ${pat:0:24}|${pat:24}"
grep -q "^  0     0-24 " "$out" && grep -q "^  1     25-53 " "$out" && ok ||
    bad "Nano's 2 segments as stages: $(cat "$out")"
expect 4 "segment 1 (stage 1's model chunk 0) would build blocks 13..25, block 13 a 'E'" eval $nano \
    --megatron-args "$mgn --pipeline-model-parallel-size 2 --hybrid-layer-pattern ${pat:0:13}|${pat:13:13}|${pat:26:13}|${pat:39}"
expect 2 "model GPT2-345M is not a hybrid" eval $m345 --megatron-args "--hybrid-layer-pattern M*-E"
expect 2 "hybrid-override-pattern: a hybrid pattern is given twice" eval $nano \
    --megatron-args "$mgn --hybrid-layer-pattern $pat --hybrid-override-pattern $pat"
expect 2 "TP degree 16 does not divide its 64 SSM heads and 8 B/C groups" eval $nano --tp 16
# the fused weighted squared ReLU (--moe-fused-srelu, cost model 196; Megatron-LM
# --use-fused-weighted-squared-relu): the experts' eager product and cast not run, so the
# same plan prices faster, the document keeps the field, the table says so, and
# Megatron's flag reads as the switch
nf="$nano --tp 1 --pp 1 --dp 16 --ep 8 --mbs 1 --batch 64 --moe-flex-dispatcher"
expect 0 "" eval $nf --json --moe-fused-srelu
cp "$out" "$dir/nano-srelu.json"
expect 0 "" eval $nf --json
python3 -c 'import json,sys; a,b=(json.load(open(f))["plan"] for f in sys.argv[1:3]); assert a["iter_time_s"] < b["iter_time_s"] and a["moe_fused_srelu"] is True and "moe_fused_srelu" not in b, (a["iter_time_s"], b["iter_time_s"])' "$dir/nano-srelu.json" "$out" &&
    ok || bad "--moe-fused-srelu: $(cat "$dir/nano-srelu.json")"
expect 0 "" eval $nf --moe-fused-srelu
grep -q "moe act:   the routing weights inside the fused squared ReLU" "$out" && ok ||
    bad "the fused squared ReLU line: $(cat "$out")"
expect 0 "" eval $nano --json --megatron-args "$mgn --hybrid-layer-pattern $pat --moe-grouped-gemm --use-fused-weighted-squared-relu"
python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["plan"]["moe_fused_srelu"] is True' "$out" &&
    ok || bad "--use-fused-weighted-squared-relu read: $(cat "$out")"
# TE's op fuser runs squared-ReLU experts only as ScaledSReLU, the weights inside: Megatron-LM
# asserts on --use-transformer-engine-op-fuser without --use-fused-weighted-squared-relu
# (experts.py _is_fused_impl_supported), and so do eval, plan and the Megatron line's reader
expect 2 "moe_fused_mlp: model .*'s routed experts are squared ReLU, which Transformer Engine's op fuser runs only with the routing weights inside it (moe_fused_srelu" \
    eval $nf --moe-fused-mlp
expect 0 "" eval $nf --moe-fused-mlp --moe-fused-srelu
expect 2 "moe_fused_mlp: model .*'s routed experts are squared ReLU" eval $nano \
    --megatron-args "$mgn --hybrid-layer-pattern $pat --moe-grouped-gemm --use-transformer-engine-op-fuser"
expect 2 "moe_fused_mlp: model .*'s routed experts are squared ReLU" \
    plan --local --hf-config $hf/nemotron_3_nano.json --seq-len 4096 --cluster 2x8xH100-80G --batch 64 --no-baselines --moe-fused-mlp

# Nemotron 3 Super: latent MoE and MTP depths (docs/models.md); Megatron's unified pattern's
# MTP part ("/" and a depth's blocks per depth) sets the depths and is checked against the
# config's mtp_hybrid_override_pattern; --mtp-layers and --no-mtp are not given together
sup="--hf-config $hf/nemotron_3_super.json --seq-len 4096 --cluster 8x8xB200-180G --no-search"
spat='MEMEMEM*EMEMEMEM*EMEMEMEM*EMEMEMEMEM*EMEMEMEMEM*EMEMEMEMEM*EMEMEMEMEM*EMEMEMEM*EMEMEMEME'
mgs="--bf16 --micro-batch-size 1 --global-batch-size 512 --expert-model-parallel-size 64 --use-distributed-optimizer --num-layers 88"
expect 0 "" eval $sup --megatron-args "$mgs --hybrid-layer-pattern $spat/*E/*E"
expect 2 "the MTP depth is 'E\*' in the configuration, '\*E' in the model" eval $sup \
    --megatron-args "$mgs --hybrid-layer-pattern $spat/E*/E*"
expect 2 "mtp-layers: 2 with --no-mtp" eval $sup --zero 1 --ep 64 --mtp-layers 2 --no-mtp
expect 2 "mtp-layers" eval $sup --zero 1 --ep 64 --mtp-layers 17

# the MTP depth stays on the head's stage (planner/partition.h max_cut): a searched plan's
# last stage holds it; counts per stage put it there (GPT2-345M with one depth: embedding,
# 24 layers, the depth's 3 layers 25-27, the head 28; 25 + 1 counts leave it with the head);
# a given split that cuts it off the head is refused, naming the layers
expect 0 "" plan --local $m345 --batch 32 --pp 2 --mtp-layers 1 --no-baselines --json
cp "$out" "$dir/mtp_plan.json"
python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["plan"]["stages"]; assert s[-1]["first_layer"] <= 25, s' \
    "$dir/mtp_plan.json" && ok || bad "the searched plan's last stage starts after the MTP entry"
expect 0 "" eval $m345 --mtp-layers 1 --pp 2 --layers-per-stage 25,1 --batch 32 --no-search --json
python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["plan"]["stages"]; assert (s[1]["first_layer"], s[1]["n_layers"]) == (25, 4), s' \
    "$out" && ok || bad "--layers-per-stage 25,1 with one MTP depth: $(cat "$out")"
python3 - "$dir/mtp_plan.json" "$dir/mtp_bad.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
a, b = d["plan"]["stages"]
# the last stage from layer 27 (the depth's head copy): its earlier runs go to stage 0
a["runs"] += [r for r in b["runs"] if r["first_layer"] < 27]
b["runs"] = [r for r in b["runs"] if r["first_layer"] >= 27]
for r in a["runs"][-1:]:
    r["count"] = 27 - r["first_layer"]
a["n_layers"], b["first_layer"], b["n_layers"] = 27, 27, 2
json.dump(d, open(sys.argv[2], "w"))
PY
expect 2 "stage 1 starts at layer 27, after the first MTP layer 25" eval --cluster 8xA100-80G \
    --plan "$dir/mtp_bad.json" --mtp-layers 1
# a stack that trains no MTP by default prices the model without it, with a note (torchtitan:
# 63 layers), megatron with it (66); too little memory either way here, which names the layers
dsv3e="--hf-config $hf/deepseek_v3.json --cluster 32x8xH100-80G --strategy sdp256+ckpt --ep 64 --mbs 256 --micro 1 --no-search"
expect 2 "note: torchtitan: deepseek_v3's 1 MTP depth left out" eval $dsv3e --target torchtitan
grep -q "stage 0 (layers 0-62)" "$err" && ok || bad "torchtitan eval with the MTP depth: $(cat "$err")"
expect 2 "stage 0 (layers 0-65)" eval $dsv3e --target megatron

# Megatron-LM asserts --recompute-num-layers 1 under uniform full recompute where MTP depths
# are recomputed (MultiTokenPredictionLayer._checkpointed_forward): refused naming the flag;
# 1, or a line without MTP depths, runs
mgu="--bf16 --recompute-granularity full --recompute-method uniform --recompute-num-layers"
expect 2 "recompute-num-layers 2 with --recompute-method uniform and 1 MTP depths" eval $m345 \
    --no-search --megatron-args "$mgu 2 --mtp-num-layers 1"
expect 0 "" eval $m345 --no-search --megatron-args "$mgu 1 --mtp-num-layers 1"
expect 0 "" eval $m345 --no-search --megatron-args "$mgu 2"

# a plan searched with MTP switches given back: eval takes the depths from the document's
# request (GPT2-345M with 2 depths has 26 + 2 x 3 = 32 layers; DeepSeek-V3 without its one
# 61 + 2 = 63), so the search's own plan prices the same, ratio 1; a bad depth there is
# refused naming the document's request
for sw in "--model GPT2-345M --mtp-layers 2 --cluster 8xH100-80G|32" \
    "--hf-config $hf/deepseek_v3.json --seq-len 1024 --no-mtp --cluster 16x8xH200-141G|63"; do
    expect 0 "" plan --local ${sw%|*} --batch 128 --no-baselines --no-memopt --json
    cp "$out" "$dir/mtp-plan.json"
    given=${sw%|*} && given=${given/--mtp-layers 2/} && given=${given/--no-mtp/}
    expect 0 "" eval $given --plan "$dir/mtp-plan.json" --json
    python3 - "$dir/mtp-plan.json" "$out" "${sw#*|}" <<'PY' && ok || bad "MTP plan given back ($sw): $(cat "$out")"
import json, sys
s = json.load(open(sys.argv[1]))["plan"]
d = json.load(open(sys.argv[2]))
assert d["model"]["layers"] == int(sys.argv[3]), d["model"]
assert d["plan"]["iter_time_s"] == s["iter_time_s"] and d["ratio"] == 1.0, (d["plan"], d["ratio"])
PY
done
hfv3="--hf-config $hf/deepseek_v3.json --seq-len 1024 --cluster 16x8xH200-141G"
expect 0 "" eval $hfv3 --plan "$dir/mtp-plan.json" --no-search
python3 - "$dir/mtp-plan.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["request"]["no_mtp"] = False
d["request"]["mtp_layers"] = 17
json.dump(d, open(sys.argv[1], "w"))
PY
expect 2 "mtp-plan.json: request.mtp_layers: 17 is out of range; expected 0..16" eval $hfv3 --plan "$dir/mtp-plan.json" \
    --no-search

# blocks kept bf16 (Megatron-LM --first-last-layers-bf16): a Megatron-LM line's counts and
# the flags price the same, printed and carried in the plan document, which gives them
# back; more than the 88 blocks and delayed scaling refused naming the field
mg4="$mgs --fp4-format e2m1 --mtp-num-layers 2"
expect 0 "" eval $sup --megatron-args "$mg4 --first-last-layers-bf16 --num-layers-at-start-in-bf16 0 --num-layers-at-end-in-bf16 14" --json
cp "$out" "$dir/sup-bf16-mg.json"
expect 0 "" eval $sup --megatron-args "$mg4" --bf16-layers-end 14
grep -q "bf16: *the first 0 and the last 14 blocks kept bf16" "$out" && ok || bad "bf16 line: $(cat "$out")"
expect 0 "" eval $sup --megatron-args "$mg4" --bf16-layers-end 14 --json
cp "$out" "$dir/sup-bf16-flag.json"
expect 0 "" eval $sup --megatron-args "$mg4" --json
cp "$out" "$dir/sup-fp4.json"
python3 - "$dir/sup-bf16-mg.json" "$dir/sup-bf16-flag.json" "$dir/sup-fp4.json" >"$dir/sup-plan.json" <<'PY' && ok || bad "bf16 blocks: line, flag, plan fields"
import json, sys
a, b, c = (json.load(open(x)) for x in sys.argv[1:4])
assert a["plan"]["iter_time_s"] == b["plan"]["iter_time_s"] > c["plan"]["iter_time_s"]
assert a["plan"]["bf16_layers_end"] == 14 and "bf16_layers_start" not in a["plan"]
assert "bf16_layers_end" not in c["plan"]
print(json.dumps(a))
PY
expect 0 "" eval $sup --mtp-layers 2 --plan "$dir/sup-plan.json" --json
python3 -c 'import json,sys; a,b=(json.load(open(x)) for x in sys.argv[1:3]); assert a["plan"]["iter_time_s"]==b["plan"]["iter_time_s"] and b["plan"]["bf16_layers_end"]==14' \
    "$dir/sup-plan.json" "$out" && ok || bad "the plan document's bf16 blocks read back"
expect 2 "bf16_layers_start: 80 + bf16_layers_end 14 exceed the 88 blocks" eval $sup \
    --megatron-args "$mg4" --bf16-layers-start 80 --bf16-layers-end 14
expect 2 "delayed scaling does not support first / last layer in BF16" eval $sup \
    --megatron-args "$mgs --fp8-format hybrid --first-last-layers-bf16"

# plans that cannot run: the reason, exit 2
expect 2 "TP degree 3 does not divide its 16 heads" eval --model GPT2-345M --cluster 6xA100-80G --tp 3
expect 2 "stage 0 (layers 0-25) needs" eval --model GPT2-1.3B --cluster 1xA100-80G --memory 8G --batch 8
expect 2 "does not divide a stage's 8 devices" eval $m345 --tp 3
expect 2 "global batch 30 does not divide" eval $m345 --tp 2 --mbs 4 --batch 30
expect 2 "pp: 3 does not divide" eval $m345 --pp 3
expect 2 "add up to 20" eval $m345 --pp 2 --layers-per-stage 10,10
# an empty entry is a slip, not a separator: "13,,13" was read as 13,13
for l in "13,,13" "13,13," ""; do
    expect 2 "layers-per-stage: an empty entry in '$l'" eval $m345 --pp 2 --layers-per-stage "$l" \
        --no-search
done
expect 2 "one way" eval $m345 --tp 2 --plan "$dir/plan.json"
expect 2 "ckpt" eval $m345 --ckpt some

# the optimizer step by hand: a one-layer GPT-2 (h 1024, 16 heads, s 512, vocab 128,
# tied head) on one A100-80G has 128·1024 + 512·1024 (token and position tables) +
# 12h² + 13h (the layer) + 2h (the final LayerNorm) = 13,253,632 parameters; Adam
# streams 28 B of each at 0.8 × 2039 GB/s, one 4 µs launch per layer (3): 239.5 µs,
# added in full (one stage). Causal (the gpt2 default) against "causal": false:
# the same step, a faster fused attention, identical counted parameters. The GPU's
# time alone (--no-host-floor): 4 samples of this layer are host-bound in eager PyTorch.
for c in true false; do
    printf '{"model_type": "gpt2", "n_layer": 1, "n_embd": 1024, "n_head": 16, "n_positions": 512, "vocab_size": 128, "causal": %s}\n' "$c" >"$dir/one-$c.json"
    expect 0 "" eval --hf-config "$dir/one-$c.json" --cluster 1xA100-80G --batch 4 --mbs 4 --no-search --json --no-host-floor
    cp "$out" "$dir/eval-$c.json"
done
if python3 - "$dir/eval-true.json" "$dir/eval-false.json" <<'PY'; then ok; else bad "optimizer or causal by hand"; fi
import json, sys
c, f = (json.load(open(a)) for a in sys.argv[1:3])
h = 1024
params = 128 * h + 512 * h + 12 * h * h + 13 * h + 2 * h
assert c["model"]["params"] == params == 13253632, c["model"]["params"]
opt = 28 * params / (0.8 * 2039e9) + 3 * 4e-6
for d in (c, f):
    p = d["plan"]
    assert abs(p["stages"][0]["opt_s"] - opt) < 1e-12, (p["stages"][0]["opt_s"], opt)
    assert abs(p["opt_tail_s"] - opt) < 1e-12, (p["opt_tail_s"], opt)
assert c["plan"]["iter_time_s"] < f["plan"]["iter_time_s"], "causal attention is not faster"
PY
expect 0 "" eval --hf-config "$dir/one-true.json" --cluster 1xA100-80G --batch 4 --mbs 4 --no-search
grep -q "optimizer: 0.240 ms" "$out" && grep -q "optimizer  peak/device" "$out" &&
    ok || bad "the optimizer line or column: $(cat "$out")"

# the stack's own host figure (--host-op-us, cost model 156): the same one-layer GPT-2,
# 4 samples host-bound on the A100, prices its forward at the given figure per op (the
# stage's forward at 93 us is 93 / 57.2 of the built-in one), the plan records it,
# eval --plan of that document keeps it, the text says so, and a figure out of range is
# refused naming the flag.
expect 0 "" eval --hf-config "$dir/one-true.json" --cluster 1xA100-80G --batch 4 --mbs 4 --no-search --json
cp "$out" "$dir/host-builtin.json"
expect 0 "" eval --hf-config "$dir/one-true.json" --cluster 1xA100-80G --batch 4 --mbs 4 --no-search --json \
    --host-op-us 93
cp "$out" "$dir/host-own.json"
expect 0 "" eval --hf-config "$dir/one-true.json" --cluster 1xA100-80G --no-search --json \
    --plan "$dir/host-own.json"
cp "$out" "$dir/host-again.json"
if python3 - "$dir/host-builtin.json" "$dir/host-own.json" "$dir/host-again.json" <<'PY'; then ok; else bad "--host-op-us"; fi
import json, sys
b, o, a = (json.load(open(x))["plan"] for x in sys.argv[1:4])
assert "host_op_us" not in b, b.get("host_op_us")
assert o["host_op_us"] == 93.0 and a["host_op_us"] == 93.0, (o.get("host_op_us"), a.get("host_op_us"))
fb, fo = b["stages"][0]["fwd_s"], o["stages"][0]["fwd_s"]
assert abs(fo / fb - 93 / 57.2) < 1e-9, (fb, fo)
assert a["iter_time_s"] == o["iter_time_s"], (a["iter_time_s"], o["iter_time_s"])
PY
expect 0 "" eval --hf-config "$dir/one-true.json" --cluster 1xA100-80G --batch 4 --mbs 4 --no-search \
    --host-op-us 93
grep -q "stack:     eager ops at 93.0 us of host time each" "$out" && ok || bad "the host line: $(cat "$out")"
expect 2 "host-op-us: 0.5 is out of range" eval --hf-config "$dir/one-true.json" --cluster 1xA100-80G \
    --batch 4 --mbs 4 --no-search --host-op-us 0.5
expect 2 "host-op-us" eval --hf-config "$dir/one-true.json" --cluster 1xA100-80G --batch 4 --mbs 4 \
    --no-search --host-op-us fast
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["plan"]["host_op_us"]=-5; json.dump(d,open(sys.argv[2],"w"))' \
    "$dir/host-own.json" "$dir/host-neg.json"
expect 2 "host_op_us: -5 is not from 1 to 100000" eval --hf-config "$dir/one-true.json" \
    --cluster 1xA100-80G --no-search --plan "$dir/host-neg.json"

# a tied head across two stages, by hand: a two-layer GPT-2 (vocab 128: V' = 128 at
# t = 1) on two nodes of one A100-80G (ib100: NCCL's measured 12.2 GB/s). The last
# stage keeps a copy of the 128 x 1024 word embedding (16 B each in its model states)
# and, once per iteration, all-reduces its fp16 gradient with stage 0: 2 ranks, ring
# 2·(2 − 1)/2 · 2·128·1024 B / 12.2 GB/s = 21.49 µs, before both steps. pp 1: none.
printf '{"model_type": "gpt2", "n_layer": 2, "n_embd": 1024, "n_head": 16, "n_positions": 512, "vocab_size": 128}\n' >"$dir/two.json"
expect 0 "" eval --hf-config "$dir/two.json" --cluster 2x1xA100-80G:ib100 --pp 2 --batch 4 --mbs 2 --no-search --json
cp "$out" "$dir/tied-pp2.json"
expect 0 "" eval --hf-config "$dir/two.json" --cluster 2x1xA100-80G:ib100 --pp 1 --batch 4 --mbs 2 --no-search --json
if python3 - "$dir/tied-pp2.json" "$out" <<'PY'; then ok; else bad "tied head by hand"; fi
import json, sys
two, one = (json.load(open(a))["plan"] for a in sys.argv[1:3])
tie = 2 * 128 * 1024 / 12.2e9
assert abs(two["tie_s"] - tie) < 1e-9 * tie, (two["tie_s"], tie)  # JSON keeps 10 digits
st = two["stages"]
assert abs(two["opt_tail_s"] - tie - max(st[0]["opt_s"], st[1]["opt_s"])) < 1e-12, two["opt_tail_s"]
assert "tie_s" not in one, one.get("tie_s")
PY
expect 0 "" eval --hf-config "$dir/two.json" --cluster 2x1xA100-80G:ib100 --pp 2 --batch 4 --mbs 2 --no-search
grep -q "tied head: 0.021 ms of that all-reduces" "$out" && ok || bad "the tied head line: $(cat "$out")"

# the figures a plan was searched on: Galvatron's profiles (skipped without ../shared)
gdir="$(dirname "$0")/../../shared/fixtures/galvatron/llama2-7b"
if [ -d "$gdir" ]; then
    g7="--model Llama2-7B --seq-len 2048 --cluster 8xA100-80G --memory 36G"
    expect 0 "" plan --local $g7 --batch 16 --no-baselines --galvatron-profile "$gdir" --json
    cp "$out" "$dir/gal.json"
    # priced on them again: the search's own plan, ratio 1, the figures line
    expect 0 "" eval --cluster 8xA100-80G --memory 36G --plan "$dir/gal.json" --galvatron-profile "$gdir" --json
    if python3 - "$dir/gal.json" "$out" <<'PY'; then ok; else bad "eval on the search's Galvatron figures"; fi
import json, sys
s = json.load(open(sys.argv[1]))["plan"]
d = json.load(open(sys.argv[2]))
assert d["plan"]["iter_time_s"] == s["iter_time_s"], (d["plan"]["iter_time_s"], s["iter_time_s"])
assert d["ratio"] == 1.0, d["ratio"]
assert d["figures"]["compute"] == "measured", d["figures"]
PY
    # priced on the built-in figures: allowed, and said
    expect 0 "" eval --cluster 8xA100-80G --memory 36G --plan "$dir/gal.json" --no-search
    grep -q "note: the plan was searched on measured figures" "$err" && ok ||
        bad "no note on pricing a profiled plan on built-in figures: $(cat "$err")"
else
    echo "skip eval --galvatron-profile: $gdir is absent"
fi
expect 2 "give one of" eval $m345 --tp 2 --profile /x --galvatron-profile /y
expect 2 "give one of" eval $m345 --tp 2 --galvatron-profile /y --amp-profile /z
# a path that is not there is said to be missing (path_kind.h), not searched for files;
# bad input, exit 2 as plan --local says it (3 is tesseld's NOT_FOUND of a fingerprint)
expect 2 "amp profile /nonexistent: No such file or directory" eval $m345 --tp 2 --amp-profile /nonexistent
expect 2 "amp profile /nonexistent: No such file or directory" plan --local $m345 --amp-profile /nonexistent
expect 2 "a directory without a config.json" eval --cluster 8xA100-80G --tp 2 --hf-config "$dir"
expect 2 "a directory without a config.json" plan --local --cluster 8xA100-80G --hf-config "$dir"
# an MoE model_type whose experts Tessel does not read: exit 2, as an unknown model_type
moe_unread="model_type \"deepseek\" is a mixture-of-experts model"
expect 2 "$moe_unread" eval --cluster 8xA100-80G --hf-config "$hf/deepseek_moe.json" --tp 2 --no-search
expect 2 "$moe_unread" eval --cluster 8xA100-80G --hf-config "$hf/deepseek_moe.json" --tp 2
expect 2 "$moe_unread" plan --local --cluster 8xA100-80G --hf-config "$hf/deepseek_moe.json"
# AMP's layer times (synthetic files of its layout): the figures line names them
expect 0 "" eval --model GPT2-345M --cluster 4x4xT4 --tp 1 --pp 2 --mbs 1 --batch 32 \
    --amp-profile "$(dirname "$0")/data/amp" --no-search
grep -q "compute measured (amp-profile .*(G4)" "$out" && ok ||
    bad "no amp-profile figures line: $(cat "$out")"
expect 2 "add --local" eval --server 127.0.0.1:1 $m345 --tp 2 --profile /x
expect 2 "unable to open /nonexistent/p.json" eval $m345 --tp 2 --profile /nonexistent/p.json
expect 2 "unable to open /nonexistent/p.json" plan --local $m345 --profile /nonexistent/p.json

# --unfused-attn: the scores kept, so more activation memory than the flash default
expect 0 "" eval $m345 --tp 2 --batch 32 --no-search --json
cp "$out" "$dir/fused.json"
expect 0 "" eval $m345 --tp 2 --batch 32 --no-search --unfused-attn --json
python3 -c 'import json,sys; f,u=(json.load(open(a))["plan"] for a in sys.argv[1:3]); assert u["peak_bytes"] > f["peak_bytes"], (u["peak_bytes"], f["peak_bytes"])' "$dir/fused.json" "$out" &&
    ok || bad "--unfused-attn did not keep the scores"

# Megatron-LM's recompute modules and bf16 moments, expert parallelism and the
# schedule by flag: an unknown module refused naming it (exit 2), mla_up_proj on
# a model without latent attention refused as Megatron-LM refuses it, an EP that
# does not divide the experts refused; the modules cut memory and add time, the
# moments cut the model states; the Megatron-LM line and the plan document carry
# the same (docs/cost-model.md "Recompute of named modules"); held to the whole device
# (75.65 GiB on stage 0 without the modules: above plan's 75 GiB default budget)
moe8="--model Mixtral-8x7B --cluster 2x8xH100-80G:8xib400 --pp 2 --zero 1 --mbs 1 --batch 64 --no-search --memory 80G"
expect 2 "'bogus' is not a module" eval $moe8 --ep 8 --recompute-modules moe_act,bogus
# a list that names nothing (an unset shell variable) refused, not priced without them
expect 2 "recompute-modules: '' names no module; give one or more of core_attn, moe_act" \
    eval $moe8 --ep 8 --recompute-modules ""
expect 2 "recompute-modules: ',,': item 1 is empty" eval $moe8 --ep 8 --recompute-modules ,,
# an empty item (a name lost: "moe_act,$MORE,mlp") refused naming the option, not priced
# as the names around it
expect 2 "recompute-modules: 'moe_act,,mlp': item 2 is empty; give module names separated by single commas" \
    eval $moe8 --ep 8 --recompute-modules moe_act,,mlp
expect 2 "recompute-modules: 'moe_act,': item 2 is empty" eval $moe8 --ep 8 --recompute-modules moe_act,
expect 2 "mla_up_proj: Mixtral-8x7B has no multi-head latent attention" eval $moe8 --ep 8 --recompute-modules mla_up_proj
expect 2 "ep 3 x etp 1 does not fit its stage of 8 devices (ep must divide its 8 experts" eval $moe8 --ep 3
expect 2 "not 1f1b, interleaved, zbh1, zbv or dualpipev" eval $moe8 --ep 8 --schedule gpipe
expect 0 "" eval $moe8 --ep 8 --json
cp "$out" "$dir/moe8.json"
expect 0 "" eval $moe8 --ep 8 --recompute-modules moe_act,layernorm --bf16-moments --schedule dualpipev --json
cp "$out" "$dir/moe8-mods.json"
if python3 - "$dir/moe8.json" "$dir/moe8-mods.json" <<'PY'; then ok; else bad "modules and moments by flag: $(cat "$dir/moe8-mods.json")"; fi
import json, sys
a, b = (json.load(open(f))["plan"] for f in sys.argv[1:3])
assert b["recompute_modules"] == ["moe_act", "layernorm"] and b["bf16_moments"] is True, b
assert b["schedule"] == "dualpipev" and b["ep"] == 8, (b["schedule"], b["ep"])
for x, y in zip(a["stages"], b["stages"]):
    assert y["ms_bytes"] < x["ms_bytes"], (y["ms_bytes"], x["ms_bytes"])
PY
expect 0 "" eval --model Mixtral-8x7B --cluster 2x8xH100-80G:8xib400 --plan "$dir/moe8-mods.json" --no-search --json
python3 -c 'import json,sys; a,b=(json.load(open(f))["plan"] for f in sys.argv[1:3]); assert a["iter_time_s"] == b["iter_time_s"] and a["peak_bytes"] == b["peak_bytes"] and b["recompute_modules"] == a["recompute_modules"]' "$dir/moe8-mods.json" "$out" &&
    ok || bad "the plan document's modules: $(cat "$out")"
expect 0 "" eval --model Mixtral-8x7B --cluster 2x8xH100-80G:8xib400 --no-search --json --megatron-args \
    "--pipeline-model-parallel-size 2 --micro-batch-size 1 --global-batch-size 64 --expert-model-parallel-size 8 --bf16 --use-distributed-optimizer --use-precision-aware-optimizer --exp-avg-dtype bf16 --exp-avg-sq-dtype bf16 --recompute-granularity selective --recompute-modules moe_act layernorm"
python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["plan"]; assert p["recompute_modules"] == ["moe_act", "layernorm"] and p["bf16_moments"], p' "$out" &&
    ok || bad "the Megatron-LM line's modules and moments: $(cat "$out")"
# Megatron-LM's all-to-all dispatcher (docs/cost-model.md "Mixture of experts"): what the line
# names (--moe-token-dispatcher-type alltoall), priced above the same plan with the flex one
mgx="--pipeline-model-parallel-size 2 --micro-batch-size 1 --global-batch-size 64 --expert-model-parallel-size 8 --bf16 --use-distributed-optimizer --use-precision-aware-optimizer --exp-avg-dtype bf16 --exp-avg-sq-dtype bf16 --recompute-granularity selective --recompute-modules moe_act layernorm"
expect 0 "" eval --model Mixtral-8x7B --cluster 2x8xH100-80G:8xib400 --no-search --json --megatron-args "$mgx --moe-token-dispatcher-type flex"
cp "$out" "$dir/moe-flex.json"
expect 0 "" eval --model Mixtral-8x7B --cluster 2x8xH100-80G:8xib400 --no-search --json --megatron-args "$mgx --moe-token-dispatcher-type alltoall"
python3 -c 'import json,sys; a,b=(json.load(open(f))["plan"] for f in sys.argv[1:3]); assert "moe_alltoall_dispatcher" not in a and a["moe_flex_dispatcher"] is True and "moe_flex_dispatcher" not in b and b["moe_alltoall_dispatcher"] is True and b["iter_time_s"] > a["iter_time_s"], (a["iter_time_s"], b["iter_time_s"])' "$dir/moe-flex.json" "$out" &&
    ok || bad "the all-to-all dispatcher from --moe-token-dispatcher-type: $(cat "$out")"
# the token permutation as the line runs it: unfused without --moe-permute-fusion
# (TransformerConfig's default), priced with moe_unfused_permute above the fused one
cp "$out" "$dir/moe-a2a-unfused.json"
expect 0 "" eval --model Mixtral-8x7B --cluster 2x8xH100-80G:8xib400 --no-search --json --megatron-args "$mgx --moe-token-dispatcher-type alltoall --moe-permute-fusion"
python3 -c 'import json,sys; a,b=(json.load(open(f))["plan"] for f in sys.argv[1:3]); assert a["moe_unfused_permute"] is True and "moe_unfused_permute" not in b and a["iter_time_s"] > b["iter_time_s"], (a.get("moe_unfused_permute"), a["iter_time_s"], b["iter_time_s"])' "$dir/moe-a2a-unfused.json" "$out" &&
    ok || bad "--moe-permute-fusion is not read into moe_unfused_permute: $(cat "$out")"
# a dense model has no permutation: nothing priced, nothing in the plan
expect 0 "" eval $m345 --no-search --json --megatron-args "--bf16 --tensor-model-parallel-size 2"
python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["plan"]; assert "moe_unfused_permute" not in p, p' "$out" &&
    ok || bad "a dense model's line prices an unfused permutation: $(cat "$out")"
# flags that change what runs but have no knob: accepted, each named on stderr as not
# modelled; a Megatron-LM flag Tessel does not read, and a misspelt one, refused
expect 0 "megatron: --optimizer-cuda-graph: not modelled by Tessel" eval $m345 --no-search --megatron-args "--bf16 --optimizer-cuda-graph"
# Megatron-core's CUDA graphs (common/eval_cgraph.c): per-layer modules are the plan's
# cuda_graph_modules, priced as --cuda-graph-modules prices them; full_iteration is
# --no-host-floor; what Megatron-LM refuses refused (exit 2), a whole MoE layer unpriced
# (exit 4). Before, every CUDA-graph flag was noted as not modelled and priced eager.
gb="--model GPT2-345M --cluster 8xGB200 --no-search --json"
cgl="--bf16 --tensor-model-parallel-size 2 --global-batch-size 64"
expect 0 "" eval $gb --megatron-args "$cgl"
cp "$out" "$dir/cg-eager.json"
expect 0 "" eval $gb --megatron-args "$cgl --cuda-graph-impl transformer_engine --cuda-graph-modules attn mlp"
cp "$out" "$dir/cg-flags.json"
python3 -c 'import json,sys; a,b=(json.load(open(f))["plan"] for f in sys.argv[1:3]); assert "cuda_graph_modules" not in a and b["cuda_graph_modules"] == 3 and b["iter_time_s"] <= a["iter_time_s"], (b.get("cuda_graph_modules"), a["iter_time_s"], b["iter_time_s"])' "$dir/cg-eager.json" "$out" &&
    ok || bad "--cuda-graph-modules attn mlp is not read into cuda_graph_modules: $(cat "$out")"
expect 0 "every layer one graph" eval $gb --megatron-args "$cgl --enable-cuda-graph"
python3 -c 'import json,sys; a,b=(json.load(open(f))["plan"] for f in sys.argv[1:3]); assert a["cuda_graph_modules"] == b["cuda_graph_modules"] and a["iter_time_s"] == b["iter_time_s"]' "$dir/cg-flags.json" "$out" &&
    ok || bad "a whole layer is not attn and mlp: $(cat "$out")"
expect 0 "" eval $gb --no-host-floor --megatron-args "$cgl"
cp "$out" "$dir/cg-nhf.json"
expect 0 "priced without the host's eager dispatch (as --no-host-floor)" eval $gb --megatron-args "$cgl --cuda-graph-impl full_iteration --no-check-for-nan-in-loss-and-grad"
python3 -c 'import json,sys; a,b=(json.load(open(f)) for f in sys.argv[1:3]); assert a["plan"]["iter_time_s"] == b["plan"]["iter_time_s"] and "cuda_graph_modules" not in b["plan"], (a["plan"]["iter_time_s"], b["plan"]["iter_time_s"])' "$dir/cg-nhf.json" "$out" &&
    ok || bad "full_iteration is not priced as --no-host-floor: $(cat "$out")"
expect 2 "megatron: --cuda-graph-impl full_iteration needs --no-check-for-nan-in-loss-and-grad" eval $gb --megatron-args "$cgl --cuda-graph-impl full_iteration"
expect 2 "megatron: --cuda-graph-modules: 'router' is not attn, mlp" eval $gb --megatron-args "$cgl --cuda-graph-impl local --cuda-graph-modules router"
expect 2 "moe, moe_router and moe_preprocess need a MoE model" eval $gb --megatron-args "$cgl --cuda-graph-impl local --cuda-graph-modules moe_router"
expect 4 "captures every layer whole" eval --model Mixtral-8x7B --cluster 2x8xH100-80G:8xib400 --no-search --megatron-args "$mgx --cuda-graph-impl transformer_engine"
# no stack but Megatron-LM captures a module: the other targets refuse the graphs by name
# (target_rules.c cuda_graphs_ok); megatron checks Megatron-LM's asserts (before, all
# four priced them)
expect 4 "eval: torchtitan: the plan was priced with Megatron-core's CUDA graphs of attn,mlp (cuda_graph_modules)" eval $gb --target torchtitan --cuda-graph-modules attn,mlp
expect 4 "eval: deepspeed: the plan was priced with Megatron-core's CUDA graphs of attn (cuda_graph_modules)" eval $gb --target deepspeed --cuda-graph-modules attn
expect 4 "eval: galvatron: the plan was priced with Megatron-core's CUDA graphs of mlp (cuda_graph_modules)" eval $gb --target galvatron --cuda-graph-modules mlp
expect 4 "eval: megatron: cuda_graph_modules: moe, moe_router and moe_preprocess need a MoE model" eval $gb --target megatron --cuda-graph-modules attn,moe_router
expect 0 "" eval $gb --target megatron --cuda-graph-modules attn,mlp
# Megatron-core's per-module precision and the blocks Megatron-LM keeps bf16 under FP8:
# torchtitan's converters take one recipe for every linear (target_rules.c module_prec_ok,
# bf16_layers_ok; before, torchtitan priced both and its export converted every linear)
expect 4 "eval: torchtitan: the plan runs linears at their own precision (module_precision linear_qkv=bf16,linear_fc2=mxfp8, " eval $gb --target torchtitan --fp8 tensorwise --module-precision linear_qkv=bf16,linear_fc2=mxfp8
expect 4 "eval: bf16_layers_start: torchtitan: blocks kept bf16 under FP8 are Megatron-LM's --first-last-layers-bf16" eval $gb --target torchtitan --fp8 tensorwise --bf16-layers-start 1 --bf16-layers-end 2
# Megatron-LM's recompute of named modules and bf16 moments under another target
# (target_rules.c megatron_switches_ok, a plan's search.c megatron_switches_target_check;
# before, priced, and the export refused them)
expect 4 "eval: deepspeed: the plan recomputes modules (recompute_modules mlp) as Megatron-LM's --recompute-modules does; it recomputes whole layers" eval $gb --target deepspeed --recompute-modules mlp
expect 4 "eval: torchtitan: the plan recomputes modules (recompute_modules moe_act) .* its own ops (torchtitan_op)" eval $gb --target torchtitan --recompute-modules moe_act
expect 4 "eval: bf16_moments: galvatron: Megatron-LM's precision-aware optimizer" eval $gb --target galvatron --bf16-moments
expect 4 "recompute_modules: deepspeed: Megatron-LM's --recompute-modules" plan --local --model GPT2-345M --cluster 8xGB200 --target deepspeed --recompute-modules mlp --batch 64 --no-baselines
expect 0 "" eval $gb --target megatron --fp8 tensorwise --module-precision linear_qkv=bf16,linear_fc2=mxfp8
expect 0 "megatron: --moe-shared-expert-overlap: not modelled by Tessel" eval --model Mixtral-8x7B --cluster 2x8xH100-80G:8xib400 --no-search --megatron-args "$mgx --moe-token-dispatcher-type alltoall --moe-shared-expert-overlap"
expect 4 "megatron: --moe-use-upcycling: a Megatron-LM flag Tessel does not read" eval $m345 --no-search --megatron-args "--bf16 --moe-use-upcycling"
expect 2 "did you mean --moe-permute-fusion?" eval $m345 --no-search --megatron-args "--bf16 --moe-permute-fuson"
# real launch lines' flags (tests/megatron_lines_test.py runs the lines): a batch-size
# ramp and a checkpoint worker leave the priced iteration alone; the rerun engine's
# default mode too, its report_stats mode (steps run again) is refused; a padded
# vocabulary other than the table Tessel prices (50257 to a multiple of 128 x TP), an
# RL step and fine-grained offloading's settings are refused naming the flag (exit 2, as
# mg_refused's flags)
expect 0 "" eval $m345 --no-search --megatron-args "--bf16 --step-batch-size-schedule '0:16 2.4B:320' --use-persistent-ckpt-worker --rerun-mode validate_results"
grep -q "note:" "$err" && bad "no-effect flags gave a note: $(cat "$err")" || ok
expect 4 "megatron: --rerun-mode report_stats: Megatron-LM runs steps again" eval $m345 --no-search --megatron-args "--bf16 --rerun-mode report_stats"
expect 2 "megatron: --rerun-mode: 'validate' is not disabled, validate_results or report_stats" eval $m345 --no-search --megatron-args "--bf16 --rerun-mode validate"
expect 0 "" eval $m345 --no-search --megatron-args "--bf16 --padded-vocab-size 50304"
expect 4 "megatron: --padded-vocab-size 50432: Tessel prices the model GPT2-345M's 50257 tokens padded to 50304" eval $m345 --no-search --megatron-args "--bf16 --padded-vocab-size 50432"
expect 2 "megatron: --perform-rl-step (Megatron-RL's GRPO step" eval $m345 --no-search --megatron-args "--bf16 --perform-rl-step --grpo-group-size 2"
expect 2 "megatron: --offload-modules belongs to --fine-grained-activation-offloading" eval $m345 --no-search --megatron-args "--bf16 --offload-modules expert_fc1"
# a plan document priced with both the all-to-all dispatcher and an FP8 dispatch: refused
# as the request's flags are, naming the field
python3 - "$dir/moe-flex.json" "$dir/moe-both.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["plan"].update(moe_alltoall_dispatcher=True, moe_fp8_dispatch=True, fp8_recipe=2)
json.dump(d, open(sys.argv[2], "w"))
PY
expect 2 "moe_alltoall_dispatcher: Megatron-LM's FP8 dispatch runs the flex dispatcher" eval \
    --model Mixtral-8x7B --cluster 2x8xH100-80G:8xib400 --no-search --plan "$dir/moe-both.json"
# the flex dispatcher beside the all-to-all one: refused naming the field
expect 2 "moe_flex_dispatcher: Megatron-LM runs one token dispatcher" eval --model Mixtral-8x7B \
    --cluster 2x8xH100-80G:8xib400 --no-search --plan "$dir/moe-flex.json" --moe-alltoall-dispatcher
# the flex dispatcher across two nodes (EP 16 of gpt-oss-20b's 32 experts, top-4): one copy
# per token and node, below NCCL's all-to-all bounded by the NICs
mg16="--pipeline-model-parallel-size 1 --micro-batch-size 1 --global-batch-size 64 --expert-model-parallel-size 16 --bf16 --use-distributed-optimizer"
expect 0 "" eval --model GPT-OSS-20B --cluster 2x8xH100-80G:8xib400 --no-search --json --megatron-args "$mg16 --moe-token-dispatcher-type flex"
cp "$out" "$dir/moe-flex16.json"
expect 0 "" eval --model GPT-OSS-20B --cluster 2x8xH100-80G:8xib400 --no-search --json --megatron-args "$mg16"
python3 -c 'import json,sys; a,b=(json.load(open(f))["plan"] for f in sys.argv[1:3]); assert a["moe_flex_dispatcher"] is True and a["iter_time_s"] < b["iter_time_s"], (a["iter_time_s"], b["iter_time_s"])' "$dir/moe-flex16.json" "$out" &&
    ok || bad "the flex dispatcher across nodes below NCCL's all-to-all: $(cat "$out")"
# Megatron-LM's EP all-to-all overlap at PP 1 (docs/cost-model.md "EP all-to-all overlap"):
# m − 1 = 3 merged steps each save what hides of the stage's EP all-to-alls, at most its
# F&B saving over all its communication (fb_save_s); the line's flag says the same
expect 0 "" eval --model GPT-OSS-20B --cluster 2x8xH100-80G:8xib400 --no-search --json --megatron-args "$mg16 --moe-token-dispatcher-type flex --overlap-moe-expert-parallel-comm --delay-wgrad-compute"
# validate_args: --delay-wgrad-compute with --overlap-grad-reduce and a graphed attn on
# gpt-oss, whose attention has biases: refused (exit 2); without the overlapped reduce not
expect 2 "doesn't support attn bias for now" eval --model GPT-OSS-20B --cluster 2x8xH100-80G:8xib400 --no-search --json --megatron-args "$mg16 --moe-token-dispatcher-type flex --overlap-moe-expert-parallel-comm --delay-wgrad-compute --overlap-grad-reduce --cuda-graph-impl transformer_engine --cuda-graph-modules attn"
expect 0 "" eval --model GPT-OSS-20B --cluster 2x8xH100-80G:8xib400 --no-search --json --megatron-args "$mg16 --moe-token-dispatcher-type flex --overlap-moe-expert-parallel-comm --delay-wgrad-compute --cuda-graph-impl transformer_engine --cuda-graph-modules attn"
python3 -c 'import json,sys; a,b=(json.load(open(f))["plan"] for f in sys.argv[1:3]); d=a["iter_time_s"]-b["iter_time_s"]; m=a["n_micro"]; assert b["moe_a2a_overlap"] is True and "moe_a2a_overlap" not in a and m == 4 and 0 < d <= (m-1)*a["stages"][0]["fb_save_s"]+1e-9, (d, a["stages"][0]["fb_save_s"])' "$dir/moe-flex16.json" "$out" &&
    ok || bad "the EP all-to-all overlap at PP 1: $(cat "$out")"
cp "$out" "$dir/moe-overlap.json"
# the merged step's saving is in the document (stage "ep_save_s", as fb_save_s is): the
# iteration's saving is the 3 merged steps' of it, and the key reads back
python3 -c 'import json,sys; a,b=(json.load(open(f))["plan"] for f in sys.argv[1:3]); d=a["iter_time_s"]-b["iter_time_s"]; e=b["stages"][0].get("ep_save_s", 0); assert "ep_save_s" not in a["stages"][0] and 0 < e and abs(d - 3*e) <= 1e-9 + 1e-6*d, (d, e)' "$dir/moe-flex16.json" "$dir/moe-overlap.json" &&
    ok || bad "ep_save_s in the plan document: $(cat "$dir/moe-overlap.json")"
# the same line without --delay-wgrad-compute (docs/cost-model.md "The EP overlap node by
# node"): the plan says moe_a2a_wgrad_inline, its step is never shorter than the deferred
# dW's, and its document prices the same again
expect 0 "" eval --model GPT-OSS-20B --cluster 2x8xH100-80G:8xib400 --no-search --json --megatron-args "$mg16 --moe-token-dispatcher-type flex --overlap-moe-expert-parallel-comm"
python3 -c 'import json,sys; a,b=(json.load(open(f))["plan"] for f in sys.argv[1:3]); assert b["moe_a2a_wgrad_inline"] is True and "moe_a2a_wgrad_inline" not in a and b["iter_time_s"] >= a["iter_time_s"], (a["iter_time_s"], b["iter_time_s"])' "$dir/moe-overlap.json" "$out" &&
    ok || bad "the overlap without delayed wgrad: $(cat "$out")"
cp "$out" "$dir/moe-inline.json"
expect 0 "" eval --model GPT-OSS-20B --cluster 2x8xH100-80G:8xib400 --no-search --json --plan "$dir/moe-inline.json"
python3 -c 'import json,sys; a,b=(json.load(open(f))["plan"] for f in sys.argv[1:3]); assert b["moe_a2a_wgrad_inline"] is True and a["iter_time_s"] == b["iter_time_s"], (a["iter_time_s"], b["iter_time_s"])' "$dir/moe-inline.json" "$out" &&
    ok || bad "moe_a2a_wgrad_inline round-trips: $(cat "$out")"
# under full recompute Megatron-LM runs no overlap (TransformerConfig asserts
# recompute_granularity != 'full'): its line with the flag is refused, and a plan
# document asking for the overlap beside full recompute is priced without its saving
mgr="$mg16 --moe-token-dispatcher-type flex --recompute-granularity full --recompute-method uniform --recompute-num-layers 1"
expect 2 "--overlap-moe-expert-parallel-comm is refused beside --recompute-granularity full" eval --model GPT-OSS-20B --cluster 2x8xH100-80G:8xib400 --no-search --json --megatron-args "$mgr --overlap-moe-expert-parallel-comm --delay-wgrad-compute"
expect 0 "" eval --model GPT-OSS-20B --cluster 2x8xH100-80G:8xib400 --no-search --json --megatron-args "$mgr"
cp "$out" "$dir/moe-full.json"
expect 0 "" eval --model GPT-OSS-20B --cluster 2x8xH100-80G:8xib400 --no-search --json --plan "$dir/moe-full.json" --moe-a2a-overlap
python3 -c 'import json,sys; a,b=(json.load(open(f))["plan"] for f in sys.argv[1:3]); assert a["iter_time_s"] == b["iter_time_s"] and b["moe_a2a_overlap"] is True, (a["iter_time_s"], b["iter_time_s"])' "$dir/moe-full.json" "$out" &&
    ok || bad "the EP overlap under full recompute: $(cat "$out")"
# ... and the table says so, by the planner's rule (plan.h tsl_plan_ep_overlap_runs): at PP 1
# with EP 16 the printer's own rule (EP > 1, 1F1B, PP 1 or interleaved) had said overlapped
expect 0 "" eval --model GPT-OSS-20B --cluster 2x8xH100-80G:8xib400 --no-search --plan "$dir/moe-full.json" --moe-a2a-overlap
grep -q "overlap:   none priced (moe_a2a_overlap asked): .*this plan runs EP 16, PP 1, not interleaved, full recompute" "$out" &&
    ! grep -q "under another's compute" "$out" && ok ||
    bad "the EP overlap line under full recompute: $(cat "$out")"
# without full recompute the same plan's line says overlapped
expect 0 "" eval --model GPT-OSS-20B --cluster 2x8xH100-80G:8xib400 --no-search --plan "$dir/moe-overlap.json"
grep -q "overlap:   the EP all-to-alls of one micro-batch under another's compute" "$out" && ok ||
    bad "the EP overlap line at PP 1: $(cat "$out")"
# TE's op fuser for the experts (--moe-fused-mlp, cost model 148): gpt-oss's eager clamp,
# its offset's synchronising copy and the per-expert FFN-out bias are not run, so the
# same plan prices faster, the document keeps the field and the table says so
expect 0 "" eval --model GPT-OSS-20B --cluster 2x8xH100-80G:8xib400 --no-search --json --plan "$dir/moe-overlap.json" --moe-fused-mlp
cp "$out" "$dir/moe-fused.json"
expect 0 "" eval --model GPT-OSS-20B --cluster 2x8xH100-80G:8xib400 --no-search --json --plan "$dir/moe-overlap.json"
python3 -c 'import json,sys; a,b=(json.load(open(f))["plan"] for f in sys.argv[1:3]); assert a["iter_time_s"] < b["iter_time_s"] and a["moe_fused_mlp"] is True and "moe_fused_mlp" not in b, (a["iter_time_s"], b["iter_time_s"])' "$dir/moe-fused.json" "$out" &&
    ok || bad "--moe-fused-mlp: $(cat "$dir/moe-fused.json")"
expect 0 "" eval --model GPT-OSS-20B --cluster 2x8xH100-80G:8xib400 --no-search --plan "$dir/moe-overlap.json" --moe-fused-mlp
grep -q "moe mlp:   FC1, activation and FC2 through Transformer Engine's op fuser" "$out" && ok ||
    bad "the fused expert MLP line: $(cat "$out")"
# Megatron-LM's MXFP8 dispatch runs only through the op fuser's grouped GEMMs
# (TransformerConfig), so it is priced fused with or without --moe-fused-mlp (cost model
# 150), its plan carries the field, and the table says so
fx="--model GPT-OSS-20B --cluster 8xB200-180G --no-search --tp 1 --pp 1 --dp 8 --ep 8 --mbs 1 --batch 16 --seq-len 4096 --fp8 mxfp8 --moe-fp8-dispatch"
expect 0 "" eval $fx --json --moe-fused-mlp
cp "$out" "$dir/moe-fp8d-fused.json"
expect 0 "" eval $fx --json
python3 -c 'import json,sys; a,b=(json.load(open(f))["plan"] for f in sys.argv[1:3]); assert a["iter_time_s"] == b["iter_time_s"] and b["moe_fused_mlp"] is True, (a["iter_time_s"], b["iter_time_s"])' "$dir/moe-fp8d-fused.json" "$out" &&
    ok || bad "an MXFP8 dispatch priced fused: $(cat "$out")"
expect 0 "" eval $fx
grep -q "moe mlp:   FC1, activation and FC2 through Transformer Engine's op fuser" "$out" && ok ||
    bad "the MXFP8 dispatch's fused expert MLP line: $(cat "$out")"
# interleaved with a group size N other than pp the event simulator prices the
# schedule; it takes the merged steps' saving as the closed form does
mgv="--pipeline-model-parallel-size 2 --num-layers-per-virtual-pipeline-stage 6 --micro-batch-size 1 --global-batch-size 64 --expert-model-parallel-size 8 --bf16 --use-distributed-optimizer --moe-token-dispatcher-type alltoall --microbatch-group-size-per-virtual-pipeline-stage 4"
expect 0 "" eval --model GPT-OSS-20B --cluster 2x8xH100-80G:8xib400 --no-search --json --megatron-args "$mgv"
cp "$out" "$dir/moe-vpn.json"
expect 0 "" eval --model GPT-OSS-20B --cluster 2x8xH100-80G:8xib400 --no-search --json --megatron-args "$mgv --overlap-moe-expert-parallel-comm --delay-wgrad-compute"
python3 -c 'import json,sys; a,b=(json.load(open(f))["plan"] for f in sys.argv[1:3]); assert b["vp_group"] == 4 and b["moe_a2a_overlap"] is True and b["iter_time_s"] < a["iter_time_s"] - 0.01, (a["iter_time_s"], b["iter_time_s"])' "$dir/moe-vpn.json" "$out" &&
    ok || bad "the EP overlap at N != pp: $(cat "$out")"
expect 0 "" eval --model GPT-OSS-20B --cluster 2x8xH100-80G:8xib400 --no-search --json --plan "$dir/moe-overlap.json"
python3 -c 'import json,sys; a,b=(json.load(open(f))["plan"] for f in sys.argv[1:3]); assert a["iter_time_s"] == b["iter_time_s"] and b["moe_a2a_overlap"] is True, (a["iter_time_s"], b["iter_time_s"])' "$dir/moe-overlap.json" "$out" &&
    ok || bad "the overlap round-trips through the plan document: $(cat "$out")"
# what Megatron-LM's TransformerConfig asserts beside --overlap-moe-expert-parallel-comm
# (d98e8a6): refused naming the flag and the reason, as Megatron-LM would stop
gox="--model GPT-OSS-20B --cluster 2x8xH100-80G:8xib400 --no-search --megatron-args"
ovl="--moe-token-dispatcher-type flex --overlap-moe-expert-parallel-comm"
expect 2 "overlap-moe-expert-parallel-comm needs --expert-model-parallel-size > 1" eval $gox \
    "${mg16/--expert-model-parallel-size 16/} $ovl"
expect 2 "overlap-moe-expert-parallel-comm needs --moe-token-dispatcher-type alltoall or flex (the default is allgather)" \
    eval $gox "$mg16 --overlap-moe-expert-parallel-comm"
expect 2 "overlap-moe-expert-parallel-comm at --pipeline-model-parallel-size > 1 needs a virtual pipeline" \
    eval $gox "${mg16/--pipeline-model-parallel-size 1/--pipeline-model-parallel-size 2} $ovl"
expect 2 "overlap-moe-expert-parallel-comm is refused beside --recompute-granularity full" eval $gox \
    "$mg16 $ovl --recompute-granularity full --recompute-method uniform --recompute-num-layers 1"
expect 2 "overlap-moe-expert-parallel-comm is refused with moe recomputed" eval $gox \
    "$mg16 $ovl --recompute-granularity selective --recompute-modules moe"
expect 2 "delay-wgrad-compute needs --overlap-moe-expert-parallel-comm" eval $gox "$mg16 --delay-wgrad-compute"
# at PP 2 without interleaving the overlap saves nothing (Megatron-LM runs it at PP 1 or
# interleaved): the same time as without it, and the plan says none was priced
expect 0 "" eval --model Mixtral-8x7B --cluster 2x8xH100-80G:8xib400 --no-search --plan "$dir/moe-flex.json" --moe-a2a-overlap
grep -q "overlap:   none priced (moe_a2a_overlap asked): .*this plan runs EP 8, PP 2, not interleaved" "$out" &&
    grep -q "$(grep -o 'predicted: [0-9.]* s' <(python3 -c 'import json,sys; print("predicted: %.4f s" % json.load(open(sys.argv[1]))["plan"]["iter_time_s"])' "$dir/moe-flex.json"))" "$out" &&
    ok || bad "the overlap at PP 2 without interleaving: $(cat "$out")"
# --reuse-grad-buf-for-mxfp8-param-ag without --fp8-param-gather: Megatron-LM's
# DistributedDataParallelConfig asserts ("Reuse grad buffer only when keeping params in MXFP8")
expect 2 "megatron: --reuse-grad-buf-for-mxfp8-param-ag needs --fp8-param-gather" eval --model Llama3-8B \
    --cluster 8xB200 --no-search --megatron-args "--bf16 --fp8-format hybrid --fp8-recipe mxfp8 --use-distributed-optimizer --reuse-grad-buf-for-mxfp8-param-ag"
expect 0 "" eval --model Llama3-8B --cluster 8xB200 --no-search --megatron-args \
    "--bf16 --fp8-format hybrid --fp8-recipe mxfp8 --use-distributed-optimizer --fp8-param-gather --reuse-grad-buf-for-mxfp8-param-ag"
# MXFP8 weights under the distributed optimizer without the flag: Megatron-LM maps them
# into its param buffer through TE's replace_raw_data, which MXFP8Tensor does not
# implement (the run stops): refused by the flag's name; without the distributed
# optimizer nothing is gathered and the line runs
expect 2 "needs --reuse-grad-buf-for-mxfp8-param-ag: without it Megatron-LM maps the MXFP8 weights" \
    eval --model Llama3-8B --cluster 8xB200 --no-search --megatron-args \
    "--bf16 --fp8-format hybrid --fp8-recipe mxfp8 --use-distributed-optimizer --fp8-param-gather"
expect 0 "" eval --model Llama3-8B --cluster 8xB200 --no-search --megatron-args \
    "--bf16 --fp8-format hybrid --fp8-recipe mxfp8 --fp8-param-gather"
# --grad-buf-bytes 2 beside an fp32 reduce (DeepSpeed's fp32_allreduce over fp16 .grad):
# the accumulation adds 6 B per parameter, not 10, so no slower than the fp32 buffer; the
# plan document carries the field and prices the same read back (test_export.c: the
# megatron export refuses it by name, Megatron-LM's grad buffer being its reduce's dtype)
ga="--model GPT2-345M --cluster 8xA100-80G --dp 8 --batch 64 --no-search --unfused-grad-accum --grad-reduce-bytes 4"
expect 0 "" eval $ga --json
cp "$out" "$dir/buf4.json"
expect 0 "" eval $ga --grad-buf-bytes 2 --json
cp "$out" "$dir/buf2.json"
expect 0 "" eval --model GPT2-345M --cluster 8xA100-80G --no-search --plan "$dir/buf2.json" --json
python3 -c 'import json,sys; a,b,c=(json.load(open(f))["plan"] for f in sys.argv[1:4]); assert b["grad_buf_bytes"] == 2 and "grad_buf_bytes" not in a and b["grad_reduce_bytes"] == a["grad_reduce_bytes"] == 4 and b["iter_time_s"] < a["iter_time_s"] and c["grad_buf_bytes"] == 2 and c["iter_time_s"] == b["iter_time_s"], (a["iter_time_s"], b["iter_time_s"], c["iter_time_s"])' "$dir/buf4.json" "$dir/buf2.json" "$out" &&
    ok || bad "grad_buf_bytes 2: $(cat "$out")"
expect 2 "grad-buf-bytes: 3 is not 2" eval $ga --grad-buf-bytes 3
# --ds-grad-bucket (DeepSpeed's ZeRO-0 bucket: flatten, 1/DP scale, copy back; AMP's
# fork): + 16 B per parameter with the fp16 buffer under the fp32 reduce, so slower; the
# plan document carries it and prices the same read back; the stack line says it; the
# Megatron-LM configuration and the megatron target refuse it by name (exit 4)
expect 0 "" eval $ga --grad-buf-bytes 2 --ds-grad-bucket --json
cp "$out" "$dir/bucket.json"
expect 0 "" eval --model GPT2-345M --cluster 8xA100-80G --no-search --plan "$dir/bucket.json" --json
python3 -c 'import json,sys; a,b,c=(json.load(open(f))["plan"] for f in sys.argv[1:4]); assert b["ds_grad_bucket"] is True and "ds_grad_bucket" not in a and b["iter_time_s"] > a["iter_time_s"] and c["ds_grad_bucket"] is True and c["iter_time_s"] == b["iter_time_s"], (a["iter_time_s"], b["iter_time_s"], c["iter_time_s"])' "$dir/buf2.json" "$dir/bucket.json" "$out" &&
    ok || bad "ds_grad_bucket: $(cat "$out")"
expect 0 "" eval $ga --ds-grad-bucket
grep -q "stack:     the DP all-reduce through DeepSpeed's gradient bucket" "$out" && ok ||
    bad "ds_grad_bucket stack line: $(cat "$out")"
expect 4 "ds_grad_bucket: a megatron configuration does not reduce its gradients through DeepSpeed's bucket" \
    eval --model GPT2-345M --cluster 8xA100-80G --no-search --megatron-args \
    "--micro-batch-size 1 --global-batch-size 64 --bf16" --ds-grad-bucket
expect 4 "megatron: does not reduce its gradients through DeepSpeed's bucket" \
    eval --model GPT2-345M --cluster 8xA100-80G --no-search --plan "$dir/bucket.json" --target megatron
expect 4 "ds_grad_bucket: DeepSpeed's engine's gradient bucket; torchtitan reduces" \
    plan --local $m345 --batch 32 --no-baselines --target torchtitan --ds-grad-bucket
# --tp-whole-heads (AMP's fork's TransGAN attention: every head on each TP rank, 1/TP
# wide): GPT-2's unfused core at TP 2 moves all its scores, so slower; nothing at TP 1;
# the plan document carries it and prices the same read back (the model's --unfused-attn
# given again: a model switch, not the plan's); the stack line says it; the Megatron-LM
# configuration, the megatron export and a plan --target refuse it by name
tw="--model GPT2-345M --cluster 8xA100-80G --tp 2 --mbs 4 --batch 32 --no-search --unfused-attn"
expect 0 "" eval $tw --json
cp "$out" "$dir/split.json"
expect 0 "" eval $tw --tp-whole-heads --json
cp "$out" "$dir/whole.json"
expect 0 "" eval --model GPT2-345M --cluster 8xA100-80G --no-search --unfused-attn --plan "$dir/whole.json" --json
python3 -c 'import json,sys; a,b,c=(json.load(open(f))["plan"] for f in sys.argv[1:4]); assert b["tp_whole_heads"] is True and "tp_whole_heads" not in a and b["iter_time_s"] > a["iter_time_s"] and c["tp_whole_heads"] is True and c["iter_time_s"] == b["iter_time_s"], (a["iter_time_s"], b["iter_time_s"], c["iter_time_s"])' "$dir/split.json" "$dir/whole.json" "$out" &&
    ok || bad "tp_whole_heads: $(cat "$out")"
expect 0 "" eval ${tw/--tp 2/--tp 1} --json
cp "$out" "$dir/tp1.json"
expect 0 "" eval ${tw/--tp 2/--tp 1} --tp-whole-heads --json
python3 -c 'import json,sys; a,b=(json.load(open(f))["plan"] for f in sys.argv[1:3]); assert b["iter_time_s"] == a["iter_time_s"], (a["iter_time_s"], b["iter_time_s"])' "$dir/tp1.json" "$out" &&
    ok || bad "tp_whole_heads at TP 1: $(cat "$out")"
expect 0 "" eval ${tw} --tp-whole-heads
grep -q "stack:     every attention head on each TP rank" "$out" && ok ||
    bad "tp_whole_heads stack line: $(cat "$out")"
expect 4 "tp_whole_heads: a megatron configuration splits the attention heads over the TP group" \
    eval --model GPT2-345M --cluster 8xA100-80G --no-search --megatron-args \
    "--micro-batch-size 1 --global-batch-size 64 --bf16 --tensor-model-parallel-size 2" --tp-whole-heads
expect 4 "megatron: splits the attention heads over the TP group" \
    eval --model GPT2-345M --cluster 8xA100-80G --no-search --plan "$dir/whole.json" --target megatron
expect 4 "tp_whole_heads: deepspeed splits the attention heads" \
    plan --local $m345 --batch 32 --no-baselines --target deepspeed --tp-whole-heads
# --async-tp (torch's micro-pipelined TP, torchtitan's AsyncTP): at TP 2 with SP the SP
# collectives run under their GEMMs, so faster; the plan document carries it and prices the
# same read back; refused without SP in the plan (exit 2), beside userbuffers or eager, and
# by every target but torchtitan (request and plan document, exit 4)
at="$m345 --tp 2 --mbs 4 --batch 32 --no-search"
expect 0 "" eval $at --sp --json
cp "$out" "$dir/sync_tp.json"
expect 0 "" eval $at --sp --async-tp --json
cp "$out" "$dir/async_tp.json"
expect 0 "" eval $m345 --no-search --plan "$dir/async_tp.json" --json
python3 -c 'import json,sys; a,b,c=(json.load(open(f))["plan"] for f in sys.argv[1:4]); assert b["async_tp"] is True and "async_tp" not in a and b["iter_time_s"] < a["iter_time_s"] and c["async_tp"] is True and c["iter_time_s"] == b["iter_time_s"], (a["iter_time_s"], b["iter_time_s"], c["iter_time_s"])' "$dir/sync_tp.json" "$dir/async_tp.json" "$out" &&
    ok || bad "async_tp: $(cat "$out")"
expect 0 "" eval $at --sp --async-tp
grep -q "stack:     torch's micro-pipelined TP (AsyncTP)" "$out" && ok ||
    bad "async_tp stack line: $(cat "$out")"
expect 2 "async_tp: no layer of the plan runs TP > 1 with SP" eval $at --async-tp
expect 2 "async_tp: beside tp_comm_overlap" eval $at --sp --async-tp --tp-comm-overlap
expect 2 "async_tp: with eager: the micro-pipelining is an inductor pass" eval $at --sp --async-tp --eager
expect 2 "async_tp: torch's micro-pipelined TP overlaps the sequence-parallel collectives" \
    plan --local $m345 --batch 32 --no-baselines --async-tp --no-seq-par
expect 4 "async_tp: megatron: torch's micro-pipelined TP runs under torchtitan" \
    eval $at --sp --async-tp --target megatron
expect 4 "deepspeed: has no micro-pipelined TP; the plan was priced with async_tp" \
    eval $m345 --no-search --plan "$dir/async_tp.json" --target deepspeed
# the torchtitan export writes [parallelism] enable_async_tensor_parallel, and eval
# --torchtitan reads it back to the same plan and time
expect 0 "" plan --local $l8 --batch 64 --target torchtitan --async-tp --json
cp "$out" "$dir/att.json"
expect 0 "" plan --local $l8 --batch 64 --target torchtitan --async-tp --export torchtitan-toml
cp "$out" "$dir/att.toml"
grep -qx "enable_async_tensor_parallel = true" "$dir/att.toml" && ok ||
    bad "enable_async_tensor_parallel not exported: $(cat "$out")"
expect 0 "" eval $l8 --torchtitan "$dir/att.toml" --no-search --json
python3 -c 'import json,sys; a,b=(json.load(open(f))["plan"] for f in sys.argv[1:3]); assert a.get("async_tp") is True and b.get("async_tp") is True and a["iter_time_s"] == b["iter_time_s"], (a.get("async_tp"), a["iter_time_s"], b["iter_time_s"])' "$dir/att.json" "$out" &&
    ok || bad "async_tp through the torchtitan export: $(cat "$out")"
# --sdp-layer-roots (fairscale 0.4.5's FSDP with a root per layer, Galvatron-BMW): BERT-Huge
# at SDP 8 on the TITAN box, fp32: the MLP units' gathers run under the attention's compute
# and the backward's are prefetched, so faster; the plan document carries it and prices the
# same read back; the stack line says it; refused on a plan without SDP, with
# --paper-cost, and under a target (exit 4)
gr="--model BERT-Huge-32 --cluster 8xRTX-TITAN-24G --sdp 8 --batch 64 --mbs 8 --no-search --fp32"
expect 0 "" eval $gr --json
cp "$out" "$dir/zr.json"
expect 0 "" eval $gr --sdp-layer-roots --json
cp "$out" "$dir/roots.json"
expect 0 "" eval --model BERT-Huge-32 --cluster 8xRTX-TITAN-24G --no-search --fp32 --plan "$dir/roots.json" --json
python3 -c 'import json,sys; a,b,c=(json.load(open(f))["plan"] for f in sys.argv[1:4]); assert b["sdp_layer_roots"] is True and "sdp_layer_roots" not in a and b["iter_time_s"] < a["iter_time_s"] and c["sdp_layer_roots"] is True and c["iter_time_s"] == b["iter_time_s"], (a["iter_time_s"], b["iter_time_s"], c["iter_time_s"])' "$dir/zr.json" "$dir/roots.json" "$out" &&
    ok || bad "sdp_layer_roots: $(cat "$out")"
expect 0 "" eval $gr --sdp-layer-roots
grep -q "stack:     SDP as fairscale 0.4.5's FSDP with a root per layer" "$out" && ok ||
    bad "sdp_layer_roots stack line: $(cat "$out")"
expect 2 "sdp_layer_roots: the plan has no SDP (FSDP) level" eval ${gr/--sdp 8/--dp 8} --sdp-layer-roots
# a plan document carrying it from a search whose plan took no SDP level (what a
# `plan --sdp-layer-roots` that picked DP records) is priced as it was, not refused
expect 0 "" eval ${gr/--sdp 8/--dp 8} --json
cp "$out" "$dir/dp8.json"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["plan"]["sdp_layer_roots"]=True; json.dump(d,open(sys.argv[2],"w"))' \
    "$dir/dp8.json" "$dir/dp8_roots.json"
expect 0 "" eval --model BERT-Huge-32 --cluster 8xRTX-TITAN-24G --no-search --fp32 --plan "$dir/dp8_roots.json" --json
python3 -c 'import json,sys; a,b=(json.load(open(f))["plan"] for f in sys.argv[1:3]); assert b.get("sdp_layer_roots") is True and a["iter_time_s"] == b["iter_time_s"], (a["iter_time_s"], b["iter_time_s"])' "$dir/dp8.json" "$out" &&
    ok || bad "sdp_layer_roots from a DP plan document: $(cat "$out")"
# its stack line says the switch changes nothing there (it described fairscale's units
# on a plan without an SDP level), as plan --async-tp's on one GPU (no TP to overlap)
expect 0 "" eval --model BERT-Huge-32 --cluster 8xRTX-TITAN-24G --no-search --fp32 --plan "$dir/dp8_roots.json"
grep -q "^  stack:     sdp_layer_roots (--sdp-layer-roots) changes nothing: no layer of the plan runs an SDP (FSDP) level$" "$out" &&
    ! grep -q "fairscale 0.4.5's FSDP with a root per layer" "$out" && ok ||
    bad "sdp_layer_roots' stack line on a DP plan: $(cat "$out")"
expect 0 "" plan --local --model GPT2-345M --cluster 1xA100-80G --batch 8 --no-baselines --async-tp --tp-whole-heads
grep -q "^  stack:     async_tp (--async-tp) changes nothing: no layer of the plan runs TP > 1 with SP$" "$out" &&
    grep -q "^  stack:     tp_whole_heads (--tp-whole-heads) changes nothing: no layer of the plan runs TP > 1$" "$out" &&
    ! grep -q "AsyncTP" "$out" && ok || bad "async_tp's stack line on one GPU: $(cat "$out")"
expect 2 "sdp_layer_roots: fairscale's FSDP with a root per layer prices the SDP level one way, and paper_cost" \
    eval $gr --sdp-layer-roots --paper-cost
expect 4 "sdp_layer_roots: fairscale 0.4.5's FSDP with a root per layer (Galvatron-BMW's 2022 runtime); galvatron runs its own FSDP" \
    plan --local --model BERT-Huge-32 --cluster 8xRTX-TITAN-24G --batch 64 --no-baselines --target galvatron --sdp-layer-roots
expect 4 "sdp_layer_roots: fairscale 0.4.5's FSDP with a root per layer (Galvatron-BMW's 2022 runtime); megatron runs its own FSDP" \
    eval --model BERT-Huge-32 --cluster 8xRTX-TITAN-24G --no-search --fp32 --plan "$dir/roots.json" --target megatron
# --sdp-keep-weights (torch FSDP1's SHARD_GRAD_OP): the same SDP 8 plan gathers in the
# forward alone, so faster, and holds every layer's gathered weights at the peak, so more
# memory; the plan document carries it and prices the same read back; the stack line says
# it; refused on a plan without SDP, beside --sdp-layer-roots, and under a target (exit 4)
expect 0 "" eval $gr --sdp-keep-weights --json
cp "$out" "$dir/keep.json"
expect 0 "" eval --model BERT-Huge-32 --cluster 8xRTX-TITAN-24G --no-search --fp32 --plan "$dir/keep.json" --json
python3 -c 'import json,sys; a,b,c=(json.load(open(f))["plan"] for f in sys.argv[1:4]); assert b["sdp_keep_weights"] is True and "sdp_keep_weights" not in a and b["iter_time_s"] < a["iter_time_s"] and b["peak_bytes"] > a["peak_bytes"] and c["sdp_keep_weights"] is True and c["iter_time_s"] == b["iter_time_s"], (a["iter_time_s"], b["iter_time_s"], c["iter_time_s"])' "$dir/zr.json" "$dir/keep.json" "$out" &&
    ok || bad "sdp_keep_weights: $(cat "$out")"
expect 0 "" eval $gr --sdp-keep-weights
grep -q "stack:     SDP keeps each layer's gathered weights from its forward to its backward (torch FSDP's SHARD_GRAD_OP)" "$out" && ok ||
    bad "sdp_keep_weights stack line: $(cat "$out")"
expect 2 "sdp_keep_weights: the plan has no SDP (FSDP) level" eval ${gr/--sdp 8/--dp 8} --sdp-keep-weights
expect 2 "sdp_keep_weights: torch FSDP's SHARD_GRAD_OP prices the SDP level one way, and sdp_layer_roots" \
    eval $gr --sdp-keep-weights --sdp-layer-roots
expect 4 "sdp_keep_weights: torch FSDP's SHARD_GRAD_OP; megatron runs its own FSDP" \
    eval --model BERT-Huge-32 --cluster 8xRTX-TITAN-24G --no-search --fp32 --plan "$dir/keep.json" --target megatron
# --sdp-nosync (FSDP2 kept unsharded between micro-batches: torchtitan under PP): at PP 2 x
# SDP 8 with 8 micro-batches the weights are gathered once per iteration and the gradients
# reduce-scattered once, so faster, and the gathered weights and whole gradients are held,
# so more memory; the plan document carries it and prices the same read back; the stack
# line says it
gz="--model GPT2-345M --cluster 2x8xA100-80G --pp 2 --sdp 8 --batch 64 --mbs 1 --no-search --grad-reduce-bytes 4 --lazy-grads"
expect 0 "" eval $gz --json
cp "$out" "$dir/z3.json"
expect 0 "" eval $gz --sdp-nosync --json
cp "$out" "$dir/nosync.json"
expect 0 "" eval --model GPT2-345M --cluster 2x8xA100-80G --no-search --plan "$dir/nosync.json" --json
python3 -c 'import json,sys; a,b,c=(json.load(open(f))["plan"] for f in sys.argv[1:4]); assert b["sdp_nosync"] is True and "sdp_nosync" not in a and b["iter_time_s"] < a["iter_time_s"] and b["peak_bytes"] > a["peak_bytes"] and c["sdp_nosync"] is True and c["iter_time_s"] == b["iter_time_s"] and c["peak_bytes"] == b["peak_bytes"], (a["iter_time_s"], b["iter_time_s"], c["iter_time_s"])' "$dir/z3.json" "$dir/nosync.json" "$out" &&
    ok || bad "sdp_nosync: $(cat "$out")"
expect 0 "" eval $gz --sdp-nosync
grep -q "stack:     SDP kept unsharded between micro-batches" "$out" && ok ||
    bad "sdp_nosync stack line: $(cat "$out")"
expect 4 "megatron: does not keep its sharded data-parallel level unsharded between micro-batches" \
    eval --model GPT2-345M --cluster 2x8xA100-80G --no-search --plan "$dir/nosync.json" --target megatron
# sdp_nosync is FSDP2 as torchtitan runs it (cost model 64): the level kept unsharded only
# under PP ("default" fsdp_reshard_after_forward = not pp_enabled), and --target torchtitan
# sets it. At PP 2 the target alone prices what --sdp-nosync does (it priced ZeRO-3's
# per-micro-batch gathers before); at PP 1 the knob prices as ZeRO-3 and no plan records it
# (GPT2-345M's shape untied: torchtitan refuses weight tying with pipeline parallelism)
gzu=${gz/--model GPT2-345M/--hf-config $dir/gpt2_345m_untied.json}
expect 0 "" eval $gzu --target torchtitan --json
cp "$out" "$dir/tt_pp2.json"
expect 0 "" eval $gzu --target torchtitan --sdp-nosync --json
python3 -c 'import json,sys; a,b=(json.load(open(f))["plan"] for f in sys.argv[1:3]); assert a["sdp_nosync"] is True and (a["iter_time_s"], a["peak_bytes"]) == (b["iter_time_s"], b["peak_bytes"]), (a["iter_time_s"], b["iter_time_s"], a["peak_bytes"], b["peak_bytes"])' "$dir/tt_pp2.json" "$out" &&
    ok || bad "target torchtitan at PP 2: $(cat "$out")"
g1="--model GPT2-345M --cluster 8xA100-80G --sdp 8 --batch 64 --mbs 1 --no-search --grad-reduce-bytes 4 --lazy-grads"
expect 0 "" eval $g1 --json
cp "$out" "$dir/z3_pp1.json"
expect 0 "" eval $g1 --sdp-nosync --json
python3 -c 'import json,sys; a,b=(json.load(open(f))["plan"] for f in sys.argv[1:3]); assert "sdp_nosync" not in b and (a["iter_time_s"], a["peak_bytes"]) == (b["iter_time_s"], b["peak_bytes"]), (a["iter_time_s"], b["iter_time_s"], a["peak_bytes"], b["peak_bytes"])' "$dir/z3_pp1.json" "$out" &&
    ok || bad "sdp_nosync at PP 1: $(cat "$out")"
# the torchtitan-target search prices each PP candidate so: a PP 2 plan with SDP carries
# it and prices the same read back; a PP 1 plan does not
tts="--hf-config $dir/gpt2_345m_untied.json --cluster 2x8xA100-80G --batch 64 --no-baselines --target torchtitan --json"
expect 0 "" plan --local $tts --pp 2
cp "$out" "$dir/tt_search_pp2.json"
expect 0 "" eval --hf-config $dir/gpt2_345m_untied.json --cluster 2x8xA100-80G --no-search --plan "$dir/tt_search_pp2.json" --json
python3 -c 'import json,sys; a,b=(json.load(open(f))["plan"] for f in sys.argv[1:3]); assert a["pp"] == 2 and a["sdp_nosync"] is True and any("sdp" in r["strategy"] for s in a["stages"] for r in s["runs"]) and (a["iter_time_s"], a["peak_bytes"]) == (b["iter_time_s"], b["peak_bytes"]), (a["iter_time_s"], b["iter_time_s"])' "$dir/tt_search_pp2.json" "$out" &&
    ok || bad "target torchtitan search at PP 2: $(cat "$out")"
expect 0 "" plan --local $tts --pp 1
python3 -c 'import json,sys; a=json.load(open(sys.argv[1]))["plan"]; assert a["pp"] == 1 and "sdp_nosync" not in a, a.get("sdp_nosync")' "$out" &&
    ok || bad "target torchtitan search at PP 1: $(cat "$out")"
# other targets refuse the switch before searching (their ZeRO-3 reshards every
# micro-batch; a search would have found only PP 1 plans, where it prices nothing)
for t in megatron deepspeed galvatron; do
    expect 4 "sdp_nosync: torchtitan's FSDP2 under PP (the level kept unsharded between micro-batches); $t's ZeRO-3" \
        plan --local --model GPT2-345M --cluster 2x8xA100-80G --batch 64 --no-baselines --target $t --sdp-nosync
done
# --ds-bf16-optimizer (DeepSpeed's BF16_Optimizer under pipeline stages; BLOOM): under
# ZeRO-1 the fp32 buffer all-reduced, the accumulation's cast, the tied gradient in fp32,
# so slower, and each backward's bf16 .grad kept beside the buffer, so more memory (cost
# model 65); the plan document carries it and prices the same read back; the stack line
# says it; the Megatron-LM configuration and every target refuse it by name (exit 4)
gb="--model GPT2-345M --cluster 2x8xA100-80G:ib100 --pp 2 --dp 8 --batch 64 --zero 1 --no-search --grad-reduce-bytes 4 --unfused-grad-accum"
expect 0 "" eval $gb --json
cp "$out" "$dir/zero1.json"
expect 0 "" eval $gb --ds-bf16-optimizer --json
cp "$out" "$dir/bf16opt.json"
expect 0 "" eval --model GPT2-345M --cluster 2x8xA100-80G:ib100 --no-search --plan "$dir/bf16opt.json" --json
python3 -c 'import json,sys; a,b,c=(json.load(open(f))["plan"] for f in sys.argv[1:4]); assert b["ds_bf16_optimizer"] is True and "ds_bf16_optimizer" not in a and b["iter_time_s"] > a["iter_time_s"] and b["tie_s"] > a["tie_s"] and b["peak_bytes"] > a["peak_bytes"] and c["ds_bf16_optimizer"] is True and c["iter_time_s"] == b["iter_time_s"] and c["peak_bytes"] == b["peak_bytes"], (a["iter_time_s"], b["iter_time_s"], c["iter_time_s"], a["peak_bytes"], b["peak_bytes"])' "$dir/zero1.json" "$dir/bf16opt.json" "$out" &&
    ok || bad "ds_bf16_optimizer: $(cat "$out")"
# the fp32 buffer all-reduced in bf16 (DeepSpeed's default communication_data_type):
# --grad-buf-bytes 4 under --grad-reduce-bytes 2 (the default, left out of the plan)
# keeps the buffer's memory and moves half the bytes, with the two casts around them:
# faster here, the same peak
expect 0 "" eval ${gb/--grad-reduce-bytes 4/--grad-reduce-bytes 2 --grad-buf-bytes 4} --ds-bf16-optimizer --json
python3 -c 'import json,sys; b,w=(json.load(open(f))["plan"] for f in sys.argv[1:3]); assert w["grad_buf_bytes"] == 4 and "grad_reduce_bytes" not in w and w["iter_time_s"] < b["iter_time_s"] and w["peak_bytes"] == b["peak_bytes"], (b["iter_time_s"], w["iter_time_s"], b["peak_bytes"], w["peak_bytes"])' "$dir/bf16opt.json" "$out" &&
    ok || bad "ds_bf16_optimizer, bf16 reduce: $(cat "$out")"
expect 0 "" eval $gb --ds-bf16-optimizer
grep -q "stack:     DeepSpeed's BF16_Optimizer" "$out" && ok ||
    bad "ds_bf16_optimizer stack line: $(cat "$out")"
expect 4 "ds_bf16_optimizer: a megatron configuration does not run DeepSpeed's BF16_Optimizer" \
    eval --model GPT2-345M --cluster 8xA100-80G --no-search --megatron-args \
    "--micro-batch-size 1 --global-batch-size 64 --bf16" --ds-bf16-optimizer
expect 4 "which DeepSpeed does not run with a 4-byte gradient buffer" \
    eval --model GPT2-345M --cluster 2x8xA100-80G:ib100 --no-search --plan "$dir/bf16opt.json" --target deepspeed
expect 4 "ds_bf16_optimizer: deepspeed prices DeepSpeed's BF16_Optimizer where its engine runs it" \
    plan --local $m345 --batch 32 --no-baselines --target deepspeed --ds-bf16-optimizer
expect 4 "ds_bf16_optimizer: DeepSpeed's BF16_Optimizer under pipeline stages" \
    plan --local $m345 --batch 32 --no-baselines --target megatron --ds-bf16-optimizer
# --target deepspeed at ZeRO-0 with stages and DP > 1 under bf16: DeepSpeed runs its
# BF16_Optimizer there (engine.py _do_optimizer_sanity_check), so the search prices it so
# (cost model 95; it said "no plan fits") and the plan records it; the export writes the
# config DeepSpeed builds it from (bf16 at stage 0, immediate_grad_update false, no
# grad_accum_dtype); the document prices the same read back under the target (without
# it, the 2022 engine BLOOM ran, which set each .grad to None: no longer); under
# fp16 (FP16_Optimizer) no plan records it
dsz0="plan --local --model GPT2-345M --cluster 2x8xA100-80G:ib100 --batch 64 --no-baselines --target deepspeed --no-zero --pp 2"
expect 0 "" $dsz0 --json
cp "$out" "$dir/dsbf16.json"
python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["plan"]; assert p["ds_bf16_optimizer"] is True and p["pp"] == 2 and all("zero" not in r["strategy"] and "dp" in r["strategy"] for s in p["stages"] for r in s["runs"]), p' "$dir/dsbf16.json" &&
    ok || bad "deepspeed ZeRO-0 under stages: $(cat "$out")"
expect 0 "" $dsz0 --export deepspeed
python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); assert c["bf16"] == {"enabled": True, "immediate_grad_update": False} and c["zero_optimization"]["stage"] == 0 and c["pipeline"]["stages"] == 2 and "data_types" not in c, c' "$out" &&
    ok || bad "deepspeed BF16_Optimizer export: $(cat "$out")"
expect 0 "" eval --model GPT2-345M --cluster 2x8xA100-80G:ib100 --no-search --plan "$dir/dsbf16.json" --target deepspeed --json
python3 -c 'import json,sys; a,b=(json.load(open(f))["plan"] for f in sys.argv[1:3]); assert b["ds_bf16_optimizer"] is True and b["iter_time_s"] == a["iter_time_s"] and b["peak_bytes"] == a["peak_bytes"], (a["iter_time_s"], b["iter_time_s"], a["peak_bytes"], b["peak_bytes"])' "$dir/dsbf16.json" "$out" &&
    ok || bad "deepspeed BF16_Optimizer plan read back: $(cat "$out")"
expect 0 "" eval --model GPT2-345M --cluster 2x8xA100-80G:ib100 --no-search --plan "$dir/dsbf16.json" --json
python3 -c 'import json,sys; a,b=(json.load(open(f))["plan"] for f in sys.argv[1:3]); assert b["ds_bf16_optimizer"] is True and b["iter_time_s"] <= a["iter_time_s"] and b["peak_bytes"] == a["peak_bytes"], (a["iter_time_s"], b["iter_time_s"], a["peak_bytes"], b["peak_bytes"])' "$dir/dsbf16.json" "$out" &&
    ok || bad "deepspeed BF16_Optimizer plan, 2022's engine: $(cat "$out")"
# an fp32 buffer there is not what it runs (stage 0 accumulates in bf16): said by name,
# where the search said "no plan fits" — where TP cannot fill a stage alone (--no-tp);
# since cost model 101 a stage of 8 TP ranks (Megatron-DeepSpeed) has one data-parallel
# rank, exported at ZeRO-1, which takes the fp32 buffer
expect 4 "grad_buf_bytes: deepspeed at ZeRO-0 (--no-zero) in 2 pipeline stages" $dsz0 --grad-buf-bytes 4 --no-tp
expect 0 "" $dsz0 --grad-buf-bytes 4 --json
python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["plan"]; assert p["legacy_p2p"] is True and "ds_bf16_optimizer" not in p and all(r["strategy"] == "tp8" for s in p["stages"] for r in s["runs"]), p' "$out" &&
    ok || bad "deepspeed ZeRO-0, 4-byte buffer, TP stages: $(cat "$out")"
# TP beside stages (cost model 101): the export carries Megatron-DeepSpeed's launch
# arguments beside the config; eval under the target refuses what the fork does not run
expect 0 "" $dsz0 --grad-buf-bytes 4 --export deepspeed
python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); a=c["megatron_deepspeed"]["args"]; i=a.index("--tensor-model-parallel-size"); assert a[i+1] == "8" and a[a.index("--pipeline-model-parallel-size")+1] == "2" and a[a.index("--zero-stage")+1] == "1" and c["zero_optimization"]["stage"] == 1 and c["train_batch_size"] == 64 and "tensor_parallel" not in c, c' "$out" &&
    ok || bad "deepspeed TP x PP export: $(cat "$out")"
expect 4 "which Megatron-DeepSpeed (bigscience-workshop) does not run" \
    eval --model GPT2-345M --cluster 2x8xA100-80G:ib100 --no-search --tp 4 --dp 2 --pp 2 --sp --zero 1 --batch 64 --target deepspeed
expect 4 "has RMSNorm (rms_norm)" \
    eval --model Llama2-7B --cluster 2x8xA100-80G:ib100 --no-search --tp 4 --dp 2 --pp 2 --zero 1 --batch 64 --target deepspeed
# DeepSpeed's uneven 'type:transformer' cut (cost model 111; refused before): 5 stages
# divide neither GPT2-345M's 26 layers nor its 24 blocks; partition_balanced lays the
# blocks out 5, 5, 5, 5, 4 (6, 5, 5, 5, 5 layers), which eval prices under the target; the
# same counts the other way round are no cut of DeepSpeed's, refused naming the stage and
# the blocks the cut gives it (exit 4)
ds5="eval --model GPT2-345M --cluster 5x2xA100-40G:ib100 --no-search --tp 2 --pp 5 --batch 40 --legacy-p2p --target deepspeed"
expect 0 "" $ds5 --layers-per-stage 6,5,5,5,5
grep -q "stack:     deepspeed" "$out" && ok || bad "deepspeed's uneven cut priced: $(cat "$out")"
expect 4 "stage 0 holds 4 of 24 Transformer layers, where 'type:transformer' gives it 5" \
    $ds5 --layers-per-stage 5,5,5,5,6
expect 0 "" $dsz0 --fp16 --json
python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["plan"]; assert "ds_bf16_optimizer" not in p and p["fp16"] is True, p' "$out" &&
    ok || bad "deepspeed fp16 ZeRO-0 under stages: $(cat "$out")"
# --launch-blocking (CUDA_LAUNCH_BLOCKING=1; BLOOM's launches): every pass pays its ops'
# host dispatch on top of its GPU time, so slower; the memory the same; the plan document
# carries it and prices the same read back; the stack line says it; the Megatron-LM
# configuration and every target refuse it by name (exit 4)
expect 0 "" eval $gb --launch-blocking --json
cp "$out" "$dir/blocking.json"
expect 0 "" eval --model GPT2-345M --cluster 2x8xA100-80G:ib100 --no-search --plan "$dir/blocking.json" --json
python3 -c 'import json,sys; a,b,c=(json.load(open(f))["plan"] for f in sys.argv[1:4]); assert b["launch_blocking"] is True and "launch_blocking" not in a and b["iter_time_s"] > a["iter_time_s"] and b["peak_bytes"] == a["peak_bytes"] and c["launch_blocking"] is True and c["iter_time_s"] == b["iter_time_s"], (a["iter_time_s"], b["iter_time_s"], c["iter_time_s"])' "$dir/zero1.json" "$dir/blocking.json" "$out" &&
    ok || bad "launch_blocking: $(cat "$out")"
expect 0 "" eval $gb --launch-blocking
grep -q "stack:     every kernel launch synchronous" "$out" && ok ||
    bad "launch_blocking stack line: $(cat "$out")"
expect 4 "launch_blocking: a megatron configuration does not make every kernel launch synchronous" \
    eval --model GPT2-345M --cluster 8xA100-80G --no-search --megatron-args \
    "--micro-batch-size 1 --global-batch-size 64 --bf16" --launch-blocking
expect 4 "deepspeed: its launch does not make every kernel launch synchronous" \
    eval --model GPT2-345M --cluster 2x8xA100-80G:ib100 --no-search --plan "$dir/blocking.json" --target deepspeed
expect 4 "launch_blocking: every kernel launch synchronous (CUDA_LAUNCH_BLOCKING=1)" \
    plan --local $m345 --batch 32 --no-baselines --target deepspeed --launch-blocking
# --ds-wall-clock (DeepSpeed's synchronising timers, AMP's fork): on the T4s of AMP's
# rows (GPU-bound at micro-batch 1) each instruction's restart and each exchange's
# dispatch make a PP 2 plan slower at the same memory; the plan document carries it and
# prices the same read back; the stack line says it; every target refuses it by name
wc="--model GPT2-345M --cluster 2x4xT4-16G:eth50 --tp 1 --pp 2 --mbs 1 --batch 16 --no-search --json"
expect 0 "" eval $wc
cp "$out" "$dir/wc-off.json"
expect 0 "" eval $wc --ds-wall-clock
cp "$out" "$dir/wc-on.json"
expect 0 "" eval --model GPT2-345M --cluster 2x4xT4-16G:eth50 --no-search --plan "$dir/wc-on.json" --json
python3 -c 'import json,sys; a,b,c=(json.load(open(f))["plan"] for f in sys.argv[1:4]); assert b["ds_wall_clock"] is True and "ds_wall_clock" not in a and b["iter_time_s"] > a["iter_time_s"] and b["peak_bytes"] == a["peak_bytes"] and c["ds_wall_clock"] is True and c["iter_time_s"] == b["iter_time_s"], (a["iter_time_s"], b["iter_time_s"], c["iter_time_s"])' "$dir/wc-off.json" "$dir/wc-on.json" "$out" &&
    ok || bad "ds_wall_clock: $(cat "$out")"
expect 0 "" eval ${wc/ --json/} --ds-wall-clock
grep -q "stack:     DeepSpeed's synchronising timers around every pipeline instruction" "$out" && ok ||
    bad "ds_wall_clock stack line: $(cat "$out")"
expect 4 "deepspeed: its configuration does not time every pipeline instruction" \
    eval --model GPT2-345M --cluster 2x4xT4-16G:eth50 --no-search --plan "$dir/wc-on.json" --target deepspeed
expect 4 "ds_wall_clock: DeepSpeed's synchronising timers around every pipeline instruction" \
    plan --local $m345 --batch 32 --no-baselines --target deepspeed --ds-wall-clock
# --ds-zero3-v03 (DeepSpeed 0.3's ZeRO-3, Narayanan 2021 Table 2's ZeRO-3 rows): on an
# SDP 16 plan over two A100 nodes a collective per weight and tensor, all exposed, and the
# list API's copies make the iteration slower at the same memory; the plan document
# carries it and prices the same read back; the stack line says it; a target refuses it
z3="--model GPT2-345M --cluster 2x8xA100-80G:8xib200 --tp 1 --pp 1 --dp 1 --sdp 16 --mbs 1 --batch 16 --ckpt full --no-search --json"
expect 0 "" eval $z3
cp "$out" "$dir/z3-off.json"
expect 0 "" eval $z3 --ds-zero3-v03
cp "$out" "$dir/z3-on.json"
expect 0 "" eval --model GPT2-345M --cluster 2x8xA100-80G:8xib200 --no-search --plan "$dir/z3-on.json" --json
python3 -c 'import json,sys; a,b,c=(json.load(open(f))["plan"] for f in sys.argv[1:4]); assert b["ds_zero3_v03"] is True and "ds_zero3_v03" not in a and b["iter_time_s"] > a["iter_time_s"] and b["peak_bytes"] == a["peak_bytes"] and c["ds_zero3_v03"] is True and c["iter_time_s"] == b["iter_time_s"], (a["iter_time_s"], b["iter_time_s"], c["iter_time_s"])' "$dir/z3-off.json" "$dir/z3-on.json" "$out" &&
    ok || bad "ds_zero3_v03: $(cat "$out")"
expect 0 "" eval ${z3/ --json/} --ds-zero3-v03
grep -q "stack:     DeepSpeed 0.3's ZeRO-3: a collective per weight and tensor" "$out" && ok ||
    bad "ds_zero3_v03 stack line: $(cat "$out")"
expect 4 "deepspeed: its configuration does not run DeepSpeed 0.3's ZeRO-3" \
    eval --model GPT2-345M --cluster 2x8xA100-80G:8xib200 --no-search --plan "$dir/z3-on.json" --target deepspeed
expect 4 "ds_zero3_v03: DeepSpeed 0.3's ZeRO-3" \
    plan --local $m345 --batch 32 --no-baselines --target deepspeed --ds-zero3-v03
# --fp8-amax-tp-only (TE before v1.6 under NVTE_DP_AMAX_REDUCE_INTERVAL=0 and
# NVTE_ASYNC_AMAX_REDUCTION=1, cost model 185): at TP 2 x DP 4 the amax all-reduce spans
# the 2 TP ranks, not the 8, and the backward's is hidden, so the plan is faster, its
# forward too; the document carries it and prices the same read back; the stack line
# says it; another recipe, no FP8, a target and the export refuse it naming the field
at="--model GPT2-345M --cluster 8xH100-80G --tp 2 --dp 4 --batch 32 --no-search --json --fp8 delayed"
expect 0 "" eval $at
cp "$out" "$dir/at-off.json"
expect 0 "" eval $at --fp8-amax-tp-only
cp "$out" "$dir/at-on.json"
expect 0 "" eval --model GPT2-345M --cluster 8xH100-80G --no-search --plan "$dir/at-on.json" --json
python3 - "$dir/at-off.json" "$dir/at-on.json" "$out" <<'PY' && ok || bad "fp8_amax_tp_only: $(cat "$out")"
import json, sys
a, b, c = (json.load(open(f))["plan"] for f in sys.argv[1:4])
assert "fp8_amax_tp_only" not in a and b["fp8_amax_tp_only"] is True, (a, b)
assert b["iter_time_s"] < a["iter_time_s"], (a["iter_time_s"], b["iter_time_s"])
assert b["stages"][0]["fwd_s"] < a["stages"][0]["fwd_s"], (a["stages"][0], b["stages"][0])
assert c["fp8_amax_tp_only"] is True and c["iter_time_s"] == b["iter_time_s"], c
PY
expect 0 "" eval ${at/ --json/} --fp8-amax-tp-only
grep -q "stack:     TE's amax all-reduce over TP only, asynchronous" "$out" && ok ||
    bad "fp8_amax_tp_only stack line: $(cat "$out")"
expect 2 "fp8_amax_tp_only: TE's amax reduction over TP (NVTE_DP_AMAX_REDUCE_INTERVAL=0) is delayed scaling's (--fp8 delayed); another recipe is priced" \
    eval ${at/delayed/tensorwise} --fp8-amax-tp-only
expect 2 "fp8_amax_tp_only: .* no FP8 recipe is priced" eval ${at/ --fp8 delayed/} --fp8-amax-tp-only
expect 4 "megatron: the plan was priced with fp8_amax_tp_only, TE before v1.6 launched with NVTE_DP_AMAX_REDUCE_INTERVAL=0 NVTE_ASYNC_AMAX_REDUCTION=1" \
    eval --model GPT2-345M --cluster 8xH100-80G --no-search --plan "$dir/at-on.json" --target megatron
expect 4 "fp8_amax_tp_only: TE before v1.6 under NVTE_DP_AMAX_REDUCE_INTERVAL=0" \
    plan --local $m345 --batch 32 --no-baselines --target megatron --fp8-amax-tp-only
# --fp8-dpa (FP8 attention, cost model 193): on GB200 gpt-oss's windowed layers' backward
# computes the whole causal square, so the plan is slower; the document carries it and
# prices the same read back; the stack line says it; on the H100 (no window figures) it
# moves nothing; no FP8, blockwise scaling, a target and the export refuse it by name
dpa="--model GPT-OSS-20B --cluster 4xGB200-186G --dp 4 --ep 4 --batch 16 --mbs 4 --zero 1 --no-search --json --fp8 mxfp8"
expect 0 "" eval $dpa
cp "$out" "$dir/dpa-off.json"
expect 0 "" eval $dpa --fp8-dpa
cp "$out" "$dir/dpa-on.json"
expect 0 "" eval --model GPT-OSS-20B --cluster 4xGB200-186G --no-search --plan "$dir/dpa-on.json" --json
cp "$out" "$dir/dpa-back.json"
dph="--model GPT-OSS-20B --cluster 8xH100-80G --dp 8 --ep 8 --batch 16 --mbs 1 --zero 1 --no-search --json --fp8 tensorwise"
expect 0 "" eval $dph
cp "$out" "$dir/dph-off.json"
expect 0 "" eval $dph --fp8-dpa
python3 - "$dir/dpa-off.json" "$dir/dpa-on.json" "$dir/dpa-back.json" "$dir/dph-off.json" "$out" <<'PY' && ok || bad "fp8_dpa: $(cat "$out")"
import json, sys
a, b, c, h0, h1 = (json.load(open(f))["plan"] for f in sys.argv[1:6])
assert "fp8_dpa" not in a and b["fp8_dpa"] is True, (a, b)
assert b["iter_time_s"] > 1.01 * a["iter_time_s"], (a["iter_time_s"], b["iter_time_s"])
assert c["fp8_dpa"] is True and c["iter_time_s"] == b["iter_time_s"], c
assert h1["fp8_dpa"] is True and h1["iter_time_s"] == h0["iter_time_s"], (h0, h1)
PY
expect 0 "" eval ${dpa/ --json/} --fp8-dpa
grep -q "stack:     FP8 attention: cuDNN's FP8 core" "$out" && ok || bad "fp8_dpa stack line: $(cat "$out")"
expect 2 "fp8_dpa: FP8 attention rides on an FP8 recipe (--fp8); no FP8 recipe is priced" \
    eval ${dpa/ --fp8 mxfp8/} --fp8-dpa
expect 2 "fp8_dpa: .*TE runs no FP8 attention under blockwise or nvfp4" eval ${dph/tensorwise/blockwise} --fp8-dpa
expect 2 "fp8_dpa: FP8 attention is Transformer Engine's; torchao (fp8_impl torchao) quantises the linears only" \
    eval $dph --fp8-impl torchao --fp8-dpa
expect 4 "megatron: the plan was priced with fp8_dpa (FP8 attention); no launch line sets it (Megatron-LM's fp8_dot_product_attention has no command-line flag; Megatron-Bridge's config sets it)" \
    eval --model GPT-OSS-20B --cluster 4xGB200-186G --no-search --plan "$dir/dpa-on.json" --target megatron
expect 4 "fp8_dpa: FP8 attention is priced for eval only" \
    plan --local $m345 --batch 32 --no-baselines --target megatron --fp8 tensorwise --fp8-dpa
# --unfused-elementwise (Megatron-LM v1.1.5 without its fusion flags, AMP's fork): the
# biases added apart, the mask by masked_fill_ and the context's copy make the same
# unfused plan slower at the same memory; the plan document carries it and prices the
# same read back; the stack line says it; every target refuses it by name
ue="$wc --unfused-attn"
expect 0 "" eval $ue
cp "$out" "$dir/ue-off.json"
expect 0 "" eval $ue --unfused-elementwise
cp "$out" "$dir/ue-on.json"
expect 0 "" eval --model GPT2-345M --cluster 2x4xT4-16G:eth50 --no-search --unfused-attn --plan "$dir/ue-on.json" --json
python3 -c 'import json,sys; a,b,c=(json.load(open(f))["plan"] for f in sys.argv[1:4]); assert b["unfused_elementwise"] is True and "unfused_elementwise" not in a and b["iter_time_s"] > 1.05 * a["iter_time_s"] and b["peak_bytes"] == a["peak_bytes"] and c["unfused_elementwise"] is True and c["iter_time_s"] == b["iter_time_s"], (a["iter_time_s"], b["iter_time_s"], c["iter_time_s"])' "$dir/ue-off.json" "$dir/ue-on.json" "$out" &&
    ok || bad "unfused_elementwise: $(cat "$out")"
expect 0 "" eval ${ue/ --json/} --unfused-elementwise
grep -q "stack:     Megatron-LM v1.1.5's unfused kernels" "$out" && ok ||
    bad "unfused_elementwise stack line: $(cat "$out")"
expect 4 "deepspeed: its configuration does not run Megatron-LM v1.1.5's unfused" \
    eval --model GPT2-345M --cluster 2x4xT4-16G:eth50 --no-search --unfused-attn --plan "$dir/ue-on.json" --target deepspeed
expect 4 "unfused_elementwise: Megatron-LM v1.1.5 without its fusion flags" \
    plan --local $m345 --batch 32 --no-baselines --target deepspeed --unfused-elementwise
# --fp32 (fp32 training; Galvatron-BMW's runs): on the TITAN RTX the GEMMs at its 16.3
# TFLOP/s fp32 peak and the activations at 4 bytes, so slower under DP 8; the model
# states 16 B per parameter, below the 18 of 16-bit weights beside fp32 gradients; the
# plan document carries it and prices the same read back; the stack and precision lines
# say it; a GPU without an fp32 figure, a 16-bit switch, a Megatron-LM configuration and
# every target refuse it by name
f32="--model BERT-Huge-32 --cluster 8xRTX-TITAN-24G --dp 8 --batch 8 --no-search --unfused-attn --grad-reduce-bytes 4"
expect 0 "" eval $f32 --json
cp "$out" "$dir/mixed.json"
expect 0 "" eval $f32 --fp32 --json
cp "$out" "$dir/fp32.json"
expect 0 "" eval --model BERT-Huge-32 --cluster 8xRTX-TITAN-24G --no-search --unfused-attn --plan "$dir/fp32.json" --json
python3 -c 'import json,sys; a,b,c=(json.load(open(f))["plan"] for f in sys.argv[1:4]); assert b["fp32"] is True and "fp32" not in a and b["iter_time_s"] > 1.1 * a["iter_time_s"] and b["stages"][0]["ms_bytes"] < a["stages"][0]["ms_bytes"] and c["fp32"] is True and c["iter_time_s"] == b["iter_time_s"], (a["iter_time_s"], b["iter_time_s"], c["iter_time_s"])' "$dir/mixed.json" "$dir/fp32.json" "$out" &&
    ok || bad "fp32: $(cat "$out")"
expect 0 "" eval $f32 --fp32
grep -q "stack:     fp32 training" "$out" && grep -q "precision: fp32" "$out" && ok ||
    bad "fp32 stack line: $(cat "$out")"
# cost model 67: every built-in type has a figure (the A10G its TF32 35 TFLOP/s, half its
# bf16 70); a custom type of a cluster file without one is refused naming it
expect 0 "" eval --model BERT-Huge-32 --cluster 8xA10G-24G --dp 8 --batch 8 --no-search --fp32
grep -q "precision: fp32" "$out" && ok || bad "A10G fp32: $(cat "$out")"
cat >"$dir/nofp32.json" <<'JSON'
{"gpu_types": {"X-24G": {"memory_gb": 24, "peak_tflops": 100, "efficiency": 0.5,
                         "intra_gbps": 20, "pcie_gbps": 24}},
 "nodes": [{"type": "X-24G", "gpus": 8}]}
JSON
expect 2 "fp32: the X-24G has no fp32 or TF32 figure; fp32 training is not priced on it: give its gpu_types entry fp32_tflops" \
    eval --model BERT-Huge-32 --cluster "$dir/nofp32.json" --dp 8 --batch 8 --no-search --fp32
# a cluster file's tf32_tflops 0: the A100's fp32 GEMMs at 19.5 TFLOP/s, not TF32's 156
cat >"$dir/notf32.json" <<'JSON'
{"gpu_types": {"A100-80G": {"tf32_tflops": 0}}, "nodes": [{"type": "A100-80G", "gpus": 8}]}
JSON
expect 0 "" eval --model BERT-Huge-32 --cluster 8xA100-80G --dp 8 --batch 8 --no-search --fp32 --json
cp "$out" "$dir/tf32.json"
expect 0 "" eval --model BERT-Huge-32 --cluster "$dir/notf32.json" --dp 8 --batch 8 --no-search --fp32 --json
python3 -c 'import json,sys; a,b=(json.load(open(f))["plan"]["iter_time_s"] for f in sys.argv[1:3]); assert b > 1.5 * a, (a, b)' "$dir/tf32.json" "$out" &&
    ok || bad "tf32_tflops 0: $(cat "$out")"
# the H3T fallback (memopt) under --fp32 prices fp32 too: the 2080 Ti's 13.4 TFLOP/s
# fp32 peak (not its 53.8 fp16 one) and 4-byte gathered parameters; the plan says fp32
h3t="plan --local --model BERT-6B --cluster 8x2080Ti-11G --memory 8G --batch 8 --no-baselines --json"
expect 0 "" $h3t
cp "$out" "$dir/h3t16.json"
expect 0 "" $h3t --fp32
python3 -c 'import json,sys; a,b=(json.load(open(f))["plan"] for f in sys.argv[1:3]); assert a["label"] == b["label"] == "tessel-h3t" and b["fp32"] is True and b["iter_time_s"] > 2 * a["iter_time_s"], (a["iter_time_s"], b["iter_time_s"])' "$dir/h3t16.json" "$out" &&
    ok || bad "h3t fp32: $(cat "$out")"
expect 2 "fp32: not with fp8_recipe" \
    eval --model GPT2-345M --cluster 8xH100-80G --dp 8 --batch 8 --no-search --fp32 --fp8 delayed
expect 4 "fp32: a megatron configuration names its own precision" \
    eval --model GPT2-345M --cluster 8xA100-80G --no-search --megatron-args \
    "--micro-batch-size 1 --global-batch-size 64 --bf16" --fp32
# cost model 67: megatron, deepspeed and torchtitan export fp32 runs; on a GPU without
# TF32 (the TITAN RTX) a targeted fp32 plan is priced as the stack runs it; galvatron's
# strategy file carries no precision
expect 0 "" eval --model BERT-Huge-32 --cluster 8xRTX-TITAN-24G --no-search --unfused-attn --plan "$dir/fp32.json" --target megatron
expect 4 "fp32: galvatron's export is its strategy file, which carries no precision" \
    plan --local --model BERT-Huge-32 --cluster 8xRTX-TITAN-24G --batch 8 --no-baselines --target galvatron --fp32
# cost model 69: where the GPU has TF32 a stack's target prices the fp32 GEMMs without
# it (allow_tf32 False since PyTorch 1.12): the A100 under --target deepspeed costs what
# a cluster file's tf32_tflops 0 costs, slower than the TF32 plan without a target; the
# plan says tf32_off and prints it; a stored TF32 plan re-priced under a target is too
expect 0 "" eval --model BERT-Huge-32 --cluster 8xA100-80G --dp 8 --batch 8 --no-search --fp32 --target deepspeed --json
cp "$out" "$dir/ds32.json"
expect 0 "" eval --model BERT-Huge-32 --cluster "$dir/notf32.json" --dp 8 --batch 8 --no-search --fp32 --target deepspeed --json
python3 -c 'import json,sys; a,b,t=(json.load(open(f))["plan"] for f in sys.argv[1:4]); assert a["fp32"] is True and a["tf32_off"] is True and a["iter_time_s"] == b["iter_time_s"] and a["iter_time_s"] > 1.5 * t["iter_time_s"] and "tf32_off" not in t, (a["iter_time_s"], b["iter_time_s"], t["iter_time_s"])' "$dir/ds32.json" "$out" "$dir/tf32.json" &&
    ok || bad "deepspeed fp32 without TF32: $(cat "$out")"
expect 0 "" eval --model BERT-Huge-32 --cluster 8xA100-80G --dp 8 --batch 8 --no-search --fp32 --target deepspeed
grep -q "precision: fp32 (TF32 off" "$out" && ok || bad "TF32 off line: $(cat "$out")"
expect 0 "" eval --model BERT-Huge-32 --cluster 8xA100-80G --no-search --plan "$dir/tf32.json" --target megatron --json
python3 -c 'import json,sys; a,t=(json.load(open(f))["plan"] for f in sys.argv[1:3]); assert a["tf32_off"] is True and a["iter_time_s"] > 1.5 * t["iter_time_s"], (a["iter_time_s"], t["iter_time_s"])' "$out" "$dir/tf32.json" &&
    ok || bad "stored TF32 plan under a target: $(cat "$out")"
# without a target an fp32 plan stays TF32 (the Galvatron-era default) and re-prices so
expect 0 "" eval --model BERT-Huge-32 --cluster 8xA100-80G --no-search --plan "$dir/tf32.json" --json
python3 -c 'import json,sys; a,t=(json.load(open(f))["plan"] for f in sys.argv[1:3]); assert "tf32_off" not in a and a["iter_time_s"] == t["iter_time_s"], (a["iter_time_s"], t["iter_time_s"])' "$out" "$dir/tf32.json" &&
    ok || bad "TF32 plan re-priced: $(cat "$out")"
# a Megatron-LM line without --bf16 or --fp16 is fp32 training (params_dtype torch.float),
# TF32 off: priced as --fp32 --target megatron at the same plan; with --bf16 not
mg32="--model GPT2-345M --cluster 8xA100-80G --no-search"
expect 0 "" eval $mg32 --megatron-args "--tensor-model-parallel-size 2 --micro-batch-size 1 --global-batch-size 16" --json
cp "$out" "$dir/mg32.json"
expect 0 "" eval $mg32 --megatron-args "--tensor-model-parallel-size 2 --micro-batch-size 1 --global-batch-size 16 --bf16" --json
python3 -c 'import json,sys; a,b=(json.load(open(f))["plan"] for f in sys.argv[1:3]); assert a["fp32"] is True and a["tf32_off"] is True and "fp32" not in b and a["iter_time_s"] > 2 * b["iter_time_s"], (a["iter_time_s"], b["iter_time_s"])' "$dir/mg32.json" "$out" &&
    ok || bad "megatron args without --bf16: $(cat "$out")"
# an fp32 plan for megatron exports without --bf16 and reads back to the same figures;
# the same plan priced without the target (TF32) is refused by the export
p32="--model GPT2-345M --cluster 8xA100-80G --batch 16 --no-baselines --fp32"
expect 0 "" plan --local $p32 --target megatron --json
cp "$out" "$dir/p32.json"
expect 0 "" plan --local $p32 --target megatron --export megatron
grep -v '^#' "$out" >"$dir/p32.args"
grep -qx -- "--bf16" "$dir/p32.args" && bad "fp32 export wrote --bf16" || ok
expect 0 "" eval --model GPT2-345M --cluster 8xA100-80G --no-search --json --megatron-args "$(tr '\n' ' ' <"$dir/p32.args")"
python3 -c 'import json,sys
a=json.load(open(sys.argv[1]))["plan"]; b=json.load(open(sys.argv[2]))["plan"]
assert a["tf32_off"] is True and b["fp32"] is True and b["tf32_off"] is True, "fields"
assert abs(a["iter_time_s"] - b["iter_time_s"]) <= 1e-9 * a["iter_time_s"], (a["iter_time_s"], b["iter_time_s"])' \
    "$dir/p32.json" "$out" && ok || bad "fp32 megatron round trip: $(head -c 400 "$out")"
expect 4 "megatron: runs fp32 matmuls without TF32 .*plan it again with --target megatron" \
    plan --local $p32 --export megatron
# on GPUs without TF32 (V100, TITAN RTX) the same plan without a target is priced as with
# TF32 off, records tf32_off, and every stack's export takes it; a cluster that mixes
# them with a TF32 GPU (the A100) prices otherwise: refused
n32="--model GPT2-345M --batch 8 --no-baselines --fp32"
for c in 1xV100-32G 1xRTX-TITAN-24G; do
    for f in megatron deepspeed torchtitan; do
        expect 0 "" plan --local $n32 --cluster $c --export $f
    done
done
expect 0 "" plan --local $n32 --cluster 1xV100-32G --json
python3 -c 'import json,sys; a=json.load(open(sys.argv[1]))["plan"]; assert a["fp32"] is True and a["tf32_off"] is True, a' "$out" &&
    ok || bad "fp32 on a V100 records tf32_off: $(head -c 400 "$out")"
expect 0 "" plan --local $n32 --cluster 1xV100-32G
grep -q "precision: fp32 (TF32 off: .*GPUs without TF32" "$out" && ok || bad "no-TF32 line: $(cat "$out")"
cat >"$dir/mix32.json" <<'JSON'
{"inter_gbps": 100, "nodes": [{"type": "A100-80G", "gpus": 1}, {"type": "V100-32G", "gpus": 1}]}
JSON
expect 4 "deepspeed: runs fp32 matmuls without TF32" plan --local $n32 --cluster "$dir/mix32.json" --export deepspeed
# --tf32: the stack's script runs fp32 matmuls as TF32 (allow_tf32 True): under a target
# priced as without one (the TF32 path), recorded, exported with the comment (megatron)
# or a note (deepspeed); refused without fp32 and where no GPU has TF32; another
# fingerprint than the same request without it
expect 0 "" eval --model BERT-Huge-32 --cluster 8xA100-80G --dp 8 --batch 8 --no-search --fp32 --target deepspeed --tf32 --json
python3 -c 'import json,sys; a,t=(json.load(open(f))["plan"] for f in sys.argv[1:3]); assert a["tf32"] is True and "tf32_off" not in a and t["iter_time_s"] <= a["iter_time_s"] < json.load(open(sys.argv[3]))["plan"]["iter_time_s"] / 1.5, (a["iter_time_s"], t["iter_time_s"])' "$out" "$dir/tf32.json" "$dir/ds32.json" &&
    ok || bad "deepspeed --tf32 (TF32 GEMMs, DeepSpeed's reduce): $(grep -m1 iter_time_s "$out")"
cp "$out" "$dir/ds-tf32.json"
expect 0 "" eval --model BERT-Huge-32 --cluster 8xA100-80G --no-search --plan "$dir/ds-tf32.json" --target megatron --json
python3 -c 'import json,sys; a=json.load(open(sys.argv[1]))["plan"]; assert a["tf32"] is True and "tf32_off" not in a, a' "$out" &&
    ok || bad "a stored --tf32 plan keeps TF32 under another target: $(head -c 400 "$out")"
expect 0 "" plan --local $p32 --target megatron --tf32 --export megatron
grep -q "^# TF32: the plan runs fp32 matmuls as TF32 (--tf32), which no setting of this stack turns on" "$out" &&
    ok || bad "megatron --tf32 comment: $(cat "$out")"
expect 0 "" plan --local $p32 --target deepspeed --tf32 --export deepspeed
grep -q "^tesselctl: plan: note: deepspeed: TF32: " "$err" && ok || bad "deepspeed --tf32 note: $(cat "$err")"
expect 0 "" plan --local $p32 --tf32 --json
cp "$out" "$dir/t32a.json"
expect 0 "" plan --local $p32 --json
python3 -c 'import json,sys; a,b=(json.load(open(f)) for f in sys.argv[1:3]); assert a["plan"]["tf32"] is True and "tf32" not in b["plan"] and a["fingerprint"] != b["fingerprint"] and a["plan"]["iter_time_s"] == b["plan"]["iter_time_s"], (a["fingerprint"], b["fingerprint"])' "$dir/t32a.json" "$out" &&
    ok || bad "--tf32 without a target: $(head -c 300 "$out")"
# without a stack's target the fp32 GEMMs run as TF32 already: the same figures, and
# the printout says --tf32 changes nothing there (it described TF32 as turned on);
# under --target megatron it is what turns TF32 on
expect 0 "" plan --local $p32 --tf32
grep -q "stack:     tf32 (--tf32) changes nothing: without a --target megatron, deepspeed or torchtitan" "$out" &&
    ! grep -q "TF32 on: fp32 GEMMs" "$out" && ok || bad "plan --tf32 without a target: $(cat "$out")"
expect 0 "" eval --model BERT-Huge-32 --cluster 8xA100-80G --dp 8 --batch 8 --no-search --fp32 --tf32
grep -q "tf32 (--tf32) changes nothing" "$out" && ok || bad "eval --tf32 without a target: $(cat "$out")"
expect 0 "" eval --model BERT-Huge-32 --cluster 8xA100-80G --dp 8 --batch 8 --no-search --fp32 --tf32 --target megatron
grep -q "stack:     TF32 on: fp32 GEMMs at the TF32 rate" "$out" && ! grep -q "changes nothing" "$out" &&
    ok || bad "eval --tf32 --target megatron: $(cat "$out")"
# a 16-bit plan document with tf32 (which Tessel never writes: the flag is refused
# there) was priced in bf16 without a word; refused naming the field, unless --fp32
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["plan"]["tf32"]=True; json.dump(d,open(sys.argv[2],"w"))' \
    "$dir/plan.json" "$dir/bf16_tf32.json"
expect 2 "eval: tf32: true on a 16-bit plan (no fp32): its GEMMs are bf16 or fp16, never TF32" \
    eval --cluster 8xA100-80G --plan "$dir/bf16_tf32.json" --no-search
expect 0 "" eval --cluster 8xA100-80G --plan "$dir/bf16_tf32.json" --no-search --fp32
# each refusal says why and what to do (drop --tf32 / train in fp32)
expect 2 "tf32: the stack's fp32 matmuls as TF32 need fp32 training" \
    plan --local --model GPT2-345M --cluster 8xA100-80G --batch 16 --no-baselines --tf32
grep -q "drop --tf32, or train in fp32" "$err" && ok || bad "tf32 without fp32: what to do: $(cat "$err")"
expect 2 "tf32: no GPU of the cluster has TF32 (the V100-32G runs fp32 GEMMs at the fp32 peak" \
    plan --local $n32 --cluster 1xV100-32G --tf32
grep -q "TF32 tensor cores came with Ampere): drop --tf32" "$err" && ok || bad "tf32 on V100: $(cat "$err")"
# a mixed cluster without TF32 names every GPU type (named the first node's alone)
printf '{"link": "ib100", "nodes": [{"type": "V100-32G", "gpus": 8}, {"type": "T4", "gpus": 8}]}' >"$dir/vt.json"
expect 2 "tf32: no GPU of the cluster has TF32 (the V100-32G and T4" \
    plan --local $n32 --cluster "$dir/vt.json" --tf32
expect 2 "tf32: no GPU of the cluster has TF32" \
    eval --model BERT-Huge-32 --cluster 8xRTX-TITAN-24G --dp 8 --batch 8 --no-search --fp32 --tf32
expect 0 "" eval --model GPT2-345M --cluster 8xA100-80G --no-search --megatron-args "--tensor-model-parallel-size 2 --micro-batch-size 1 --global-batch-size 16" --tf32 --json
python3 -c 'import json,sys; a=json.load(open(sys.argv[1]))["plan"]; assert a["fp32"] is True and a["tf32"] is True and "tf32_off" not in a, a' "$out" &&
    ok || bad "megatron fp32 line with --tf32: $(head -c 400 "$out")"
expect 2 "tf32: the stack's fp32 matmuls as TF32 need fp32 training" \
    eval --model GPT2-345M --cluster 8xA100-80G --no-search --megatron-args "--tensor-model-parallel-size 2 --micro-batch-size 1 --global-batch-size 16 --bf16" --tf32
# --attn-kernel on Hopper (attn_kernel.h): cuDNN's published share at GPT-2 medium's
# head dimension 64 and 1K keys (373 / 989 = 0.38 forward, 348 / 989 = 0.35 backward)
# prices its fused core faster than the H100's one figure (0.35 / 0.18); the plan document carries the kernel and prices
# the same read back (one micro-batch of 16: GPU-bound); on an A100 the default is FlashAttention-2's
# (cost model 114), so flash2 changes nothing there; FlashAttention's Triton port (flash1-triton,
# 4: the flat 0.40 / 0.30) is slower, and v1's CUDA kernel (flash1: Fig. 4's causal bar at head
# dimension 64 and 1K, 70 TFLOP/s over both passes against the band's 76) slower still (cost model 121)
ak="--model GPT2-345M --cluster 1xH100-80G --dp 1 --batch 16 --mbs 16 --no-search"
expect 0 "" eval $ak --json
cp "$out" "$dir/ak0.json"
expect 0 "" eval $ak --attn-kernel cudnn --json
cp "$out" "$dir/ak2.json"
expect 0 "" eval --model GPT2-345M --cluster 1xH100-80G --no-search --plan "$dir/ak2.json" --json
python3 -c 'import json,sys; a,b,c=(json.load(open(f))["plan"] for f in sys.argv[1:4]); assert "attn_kernel" not in a and b["attn_kernel"] == 2 and b["iter_time_s"] < a["iter_time_s"] and c["attn_kernel"] == 2 and c["iter_time_s"] == b["iter_time_s"], (a["iter_time_s"], b["iter_time_s"], c["iter_time_s"])' "$dir/ak0.json" "$dir/ak2.json" "$out" &&
    ok || bad "attn_kernel cudnn: $(cat "$out")"
expect 0 "" eval --model GPT2-345M --cluster 1xA100-80G --dp 1 --batch 16 --mbs 16 --no-search --json
cp "$out" "$dir/aka0.json"
expect 0 "" eval --model GPT2-345M --cluster 1xA100-80G --dp 1 --batch 16 --mbs 16 --no-search --attn-kernel flash2 --json
python3 -c 'import json,sys; a,b=(json.load(open(f))["plan"] for f in sys.argv[1:3]); assert a["iter_time_s"] == b["iter_time_s"], (a["iter_time_s"], b["iter_time_s"])' "$dir/aka0.json" "$out" &&
    ok || bad "attn_kernel on A100: $(cat "$out")"
expect 0 "" eval --model GPT2-345M --cluster 1xA100-80G --dp 1 --batch 16 --mbs 16 --no-search --attn-kernel flash1 --json
cp "$out" "$dir/aka3.json"
expect 0 "" eval --model GPT2-345M --cluster 1xA100-80G --dp 1 --batch 16 --mbs 16 --no-search --attn-kernel flash1-triton --json
cp "$out" "$dir/aka4.json"
python3 -c 'import json,sys; a,b,c=(json.load(open(f))["plan"] for f in sys.argv[1:4]); assert b["attn_kernel"] == 3 and c["attn_kernel"] == 4 and b["iter_time_s"] > c["iter_time_s"] > a["iter_time_s"], (a["iter_time_s"], b["iter_time_s"], c["iter_time_s"])' "$dir/aka0.json" "$dir/aka3.json" "$dir/aka4.json" &&
    ok || bad "attn_kernel flash1, flash1-triton on A100: $(cat "$out")"
# the plan document carries 4 and prices the same read back
expect 0 "" eval --model GPT2-345M --cluster 1xA100-80G --no-search --plan "$dir/aka4.json" --json
python3 -c 'import json,sys; a,b=(json.load(open(f))["plan"] for f in sys.argv[1:3]); assert b["attn_kernel"] == 4 and a["iter_time_s"] == b["iter_time_s"], (a["iter_time_s"], b["iter_time_s"])' "$dir/aka4.json" "$out" &&
    ok || bad "attn_kernel 4 read back: $(cat "$out")"
# the text output names the kernel in a stack line, and on a GPU without its table says
# it prices as the GPU's one figure (plan and eval alike); none without --attn-kernel
expect 0 "" eval $ak --attn-kernel cudnn
grep -q "^  stack:     fused attention by cuDNN's fused SDPA (attn_kernel cudnn), at its published rate by head dimension and keys$" "$out" &&
    ok || bad "eval attn_kernel stack line: $(cat "$out")"
expect 0 "" eval --model GPT2-345M --cluster 1xA100-80G --dp 1 --batch 16 --mbs 16 --no-search --attn-kernel flash2
grep -q "^  stack:     fused attention by FlashAttention-2 (attn_kernel flash2), at its published rate by head dimension and keys$" "$out" &&
    ok || bad "eval attn_kernel on A100: $(cat "$out")"
expect 0 "" eval --model GPT2-345M --cluster 1xA100-80G --dp 1 --batch 16 --mbs 16 --no-search --attn-kernel flash1
grep -q "^  stack:     fused attention by FlashAttention (v1) (attn_kernel flash1), at its published rate by head dimension and keys, causal or not$" "$out" &&
    ok || bad "eval attn_kernel flash1 on A100: $(cat "$out")"
expect 0 "" eval --model GPT2-345M --cluster 1xA100-80G --dp 1 --batch 16 --mbs 16 --no-search --attn-kernel 4
grep -q "^  stack:     fused attention by FlashAttention's Triton port (v1) (attn_kernel flash1-triton), at the A100 band 0.40 / 0.30 of peak (inferred from llm-foundry's MPT runs)$" "$out" &&
    ok || bad "eval attn_kernel flash1-triton on A100: $(cat "$out")"
expect 0 "" eval $ak --attn-kernel flash1
grep -q "^  stack:     fused attention by FlashAttention (v1) (attn_kernel flash1): H100-80G has no published share for it (FlashAttention-2 and cuDNN on H100, H200, H800; every kernel on A100), priced as the GPU's one figure$" "$out" &&
    ok || bad "eval attn_kernel flash1 on H100: $(cat "$out")"
expect 0 "" eval $ak --attn-kernel flash1-triton
grep -q "^  stack:     fused attention by FlashAttention's Triton port (v1) (attn_kernel flash1-triton): H100-80G has no published share for it" "$out" &&
    ok || bad "eval attn_kernel flash1-triton on H100: $(cat "$out")"
printf '{"nodes": [{"type": "H100-80G", "gpus": 8}, {"type": "A100-80G", "gpus": 8}], "inter_gbit": 100}\n' >"$dir/h100-a100.json"
expect 0 "" plan --local --model GPT2-345M --cluster "$dir/h100-a100.json" --batch 32 --no-baselines --attn-kernel flash1
grep -q "^  stack:     fused attention by FlashAttention (v1) (attn_kernel flash1): H100-80G has no published share for it" "$out" &&
    ok || bad "plan attn_kernel, mixed cluster: $(cat "$out")"
expect 0 "" plan --local --model GPT2-345M --cluster 8xH200-141G --batch 32 --no-baselines --attn-kernel 2
grep -q "^  stack:     fused attention by cuDNN's fused SDPA (attn_kernel cudnn), at its published" "$out" &&
    ok || bad "plan attn_kernel on H200: $(cat "$out")"
expect 0 "" eval $ak
! grep -q "attn_kernel" "$out" && ok || bad "attn_kernel line without the flag: $(cat "$out")"
expect 2 "attn-kernel: 'flash3' is not flash2 (1), cudnn (2), flash1 (3) or flash1-triton (4)" eval $ak --attn-kernel flash3
expect 2 "attn-kernel: '0' is not flash2 (1), cudnn (2), flash1 (3) or flash1-triton (4)" eval $ak --attn-kernel 0
# by its number as plan takes it (docs/tesselctl.md: flash2 or 1, cudnn or 2): the same plan
expect 0 "" eval $ak --attn-kernel 2 --json
python3 -c 'import json,sys; a,b=(json.load(open(f))["plan"] for f in sys.argv[1:3]); assert a == b, (a, b)' "$dir/ak2.json" "$out" &&
    ok || bad "attn_kernel 2 as cudnn: $(cat "$out")"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["plan"]["attn_kernel"]=7; json.dump(d,open(sys.argv[2],"w"))' "$dir/ak2.json" "$dir/ak7.json"
expect 2 "attn_kernel: 7 is not 1 (flash2), 2 (cudnn), 3 (flash1) or 4 (flash1-triton)" eval --model GPT2-345M --cluster 1xH100-80G --no-search --plan "$dir/ak7.json"
expect 2 "attn-kernel: 'flash3' is not 1 (flash2), 2 (cudnn), 3 (flash1) or 4 (flash1-triton)" plan --local $m345 --batch 32 --attn-kernel flash3
expect 2 "attn-kernel: 5 is out of range" plan --local $m345 --batch 32 --attn-kernel 5
# the switches where they change nothing: noted, not refused (search.h tsl_moe_switch_note)
expect 0 "note: moe_flex_dispatcher: the model has no MoE layer, so it changes nothing" plan \
    --local $m345 --batch 32 --no-baselines --moe-flex-dispatcher
expect 0 "note: moe_a2a_overlap: --no-ep leaves the experts unsplit" plan --local \
    --model Mixtral-8x7B --cluster 2x8xH100-80G:8xib400 --batch 64 --no-baselines --no-ep --moe-a2a-overlap
# no stack but megatron runs the flex dispatcher or the overlap as priced: refused by name
expect 4 "moe_flex_dispatcher: .*torchtitan's export runs its standard all-to-all" plan --local \
    --model Mixtral-8x7B --cluster 2x8xH100-80G:8xib400 --batch 64 --target torchtitan --moe-flex-dispatcher
# the flex back end (moe_flex_backend): by name, only with the flex dispatcher; hybridep
# prices its routing-map gather over deepep's plan
expect 2 "moe-flex-backend: 'nccl' is not hybridep or deepep" plan --local --model Mixtral-8x7B \
    --cluster 2x8xH100-80G:8xib400 --batch 64 --no-baselines --moe-flex-dispatcher --moe-flex-backend nccl
expect 2 "moe_flex_backend: hybridep names the flex dispatcher's back end; the plan runs no flex dispatcher" \
    plan --local --model Mixtral-8x7B --cluster 2x8xH100-80G:8xib400 --batch 64 --no-baselines --moe-flex-backend hybridep
expect 0 "" plan --local --model Mixtral-8x7B --cluster 2x8xH100-80G:8xib400 --batch 64 --no-baselines \
    --moe-flex-dispatcher --moe-flex-backend hybridep --json
cp "$out" "$dir/flex-hybridep.json"
expect 0 "" eval --model Mixtral-8x7B --cluster 2x8xH100-80G:8xib400 --no-search --plan "$dir/flex-hybridep.json" \
    --moe-flex-backend deepep --json
python3 -c 'import json,sys; a,b=(json.load(open(f))["plan"] for f in sys.argv[1:3]); assert a["moe_flex_backend"] == 1 and b["moe_flex_backend"] == 2 and a["iter_time_s"] > b["iter_time_s"], (a.get("moe_flex_backend"), b.get("moe_flex_backend"), a["iter_time_s"], b["iter_time_s"])' "$dir/flex-hybridep.json" "$out" &&
    ok || bad "hybridep over deepep: $(head -c 400 "$out")"
expect 2 "moe_flex_backend: hybridep names the flex dispatcher's back end" eval --model Mixtral-8x7B \
    --cluster 2x8xH100-80G:8xib400 --no-search --megatron-args "$mgx" --moe-flex-backend hybridep
expect 4 "moe_a2a_overlap: .*torchtitan runs none" plan --local --model Mixtral-8x7B \
    --cluster 2x8xH100-80G:8xib400 --batch 64 --target torchtitan --moe-a2a-overlap
expect 4 "eval: torchtitan: runs its standard all-to-all (the plan priced a flex dispatcher, moe_flex_dispatcher)" eval --model GPT-OSS-20B \
    --cluster 2x8xH100-80G:8xib400 --no-search --plan "$dir/moe-overlap.json" --target torchtitan
# the PAPER mode keeps the seeds' MoE layer: the dispatcher's pieces are not priced there
expect 0 "" eval --model Mixtral-8x7B --cluster 2x8xH100-80G:8xib400 --no-search --json --paper-cost --megatron-args "$mgx"
cp "$out" "$dir/moe-paper.json"
expect 0 "" eval --model Mixtral-8x7B --cluster 2x8xH100-80G:8xib400 --no-search --json --paper-cost --megatron-args "$mgx" --moe-alltoall-dispatcher
python3 -c 'import json,sys; a,b=(json.load(open(f))["plan"] for f in sys.argv[1:3]); assert b["moe_alltoall_dispatcher"] is True and b["iter_time_s"] == a["iter_time_s"], (a["iter_time_s"], b["iter_time_s"])' "$dir/moe-paper.json" "$out" &&
    ok || bad "PAPER prices the all-to-all dispatcher: $(cat "$out")"
expect 2 "megatron: --moe-token-dispatcher-type: 'a2a' is not allgather, alltoall or flex" eval --model Mixtral-8x7B --cluster 2x8xH100-80G:8xib400 --no-search --megatron-args "$mgx --moe-token-dispatcher-type a2a"
expect 4 "Tessel prices both moments in fp32 or both in 16 bits" eval $m345 --no-search --megatron-args \
    "--bf16 --use-distributed-optimizer --use-precision-aware-optimizer --exp-avg-dtype bf16"

# Megatron-LM's activation CPU offloading (--cpu-offloading-num-layers; docs/cost-model.md
# "Activation CPU offloading"): the first 12 layers' stashes leave the peak, the host holds
# them, and what Megatron-LM refuses beside it is refused naming the field
expect 0 "" eval $m345 --no-search --json --megatron-args "--micro-batch-size 2 --global-batch-size 16 --bf16"
cp "$out" "$dir/nooff.json"
expect 0 "" eval $m345 --no-search --json --megatron-args \
    "--micro-batch-size 2 --global-batch-size 16 --bf16 --cpu-offloading-num-layers 12"
python3 -c 'import json,sys; a,b=(json.load(open(f))["plan"] for f in sys.argv[1:3]); assert "cpu_offload_layers" not in a and b["cpu_offload_layers"] == 12 and a["peak_bytes"] - b["peak_bytes"] == b["cpu_offload_bytes"] > 0 and b["cpu_offload_s"] > 0, (a, b)' "$dir/nooff.json" "$out" &&
    ok || bad "offloaded layers leave the peak: $(cat "$out")"
expect 0 "" eval $m345 --no-search --mbs 2 --batch 16 --cpu-offload-layers 12
grep -q "offload:   the first 12 Transformer layers' activations" "$out" && ok || bad "the offload line: $(cat "$out")"
expect 2 "cpu_offload_layers: with pipeline parallelism (pp 2)" eval $m345 --no-search --megatron-args \
    "--micro-batch-size 2 --global-batch-size 16 --bf16 --pipeline-model-parallel-size 2 --cpu-offloading-num-layers 12"
expect 2 "cpu_offload_layers: with activation recompute" eval $m345 --no-search --ckpt full --mbs 2 --batch 16 --cpu-offload-layers 4
expect 2 "cpu_offload_layers: 24 of the model's 24" eval $m345 --no-search --mbs 2 --batch 16 --cpu-offload-layers 24
expect 2 "cpu-offloading-weights" eval $m345 --no-search --megatron-args "--bf16 --cpu-offloading-weights"

# --target STACK: the plan priced with the stack's defaults, refused where the stack
# cannot run it (exit 4, naming the rule), the comparison searched in its space
expect 0 "" eval $m345 --tp 2 --pp 2 --batch 32 --no-search --json
cp "$out" "$dir/notarget.json"
expect 0 "" eval $m345 --tp 2 --pp 2 --batch 32 --no-search --json --target megatron
python3 -c 'import json,sys; a,b=(json.load(open(f)) for f in sys.argv[1:3]); assert "target" not in a and b["target"] == "megatron", b.get("target"); p=b["plan"]; assert p["opt_step"] == 1 and p["loss_impl"] == 2 and p["iter_time_s"] != a["plan"]["iter_time_s"], (p["opt_step"], p["loss_impl"], p["iter_time_s"])' "$dir/notarget.json" "$out" &&
    ok || bad "eval --target megatron: the stack's defaults: $(cat "$out")"
expect 0 "" eval $m345 --tp 2 --pp 2 --batch 32 --target megatron
grep -q "stack:     megatron" "$out" && grep -q "cluster, within megatron" "$out" &&
    ok || bad "eval --target prints the stack: $(cat "$out")"
# a plan document searched with plan --target STACK: eval takes the stack from its
# request, as plan priced and compared it (before, without --target the comparison
# searched Tessel's whole space and reported a plan Megatron-LM cannot run as faster:
# ratio 0.907 here); --target any asks for that comparison
expect 0 "" plan --local $m345 --batch 32 --target megatron --no-baselines --json
cp "$out" "$dir/megatron-plan.json"
expect 0 "" eval --cluster 8xA100-80G --plan "$dir/megatron-plan.json" --json
python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["plan"]; d=json.load(open(sys.argv[2])); assert d["target"] == "megatron" and d["ratio"] == 1.0, (d.get("target"), d["ratio"]); assert d["plan"]["iter_time_s"] == d["search"]["plan"]["iter_time_s"] == s["iter_time_s"], (d["plan"]["iter_time_s"], d["search"]["plan"]["iter_time_s"], s["iter_time_s"])' "$dir/megatron-plan.json" "$out" &&
    ok || bad "eval --plan of a megatron plan: compared within megatron: $(head -c 400 "$out")"
expect 0 "" eval --cluster 8xA100-80G --plan "$dir/megatron-plan.json"
grep -q "stack:     megatron" "$out" && grep -q "cluster, within megatron" "$out" &&
    ok || bad "eval --plan of a megatron plan prints the stack: $(cat "$out")"
expect 0 "" eval --cluster 8xA100-80G --plan "$dir/megatron-plan.json" --json --target any
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert "target" not in d and d["ratio"] < 1.0, (d.get("target"), d["ratio"])' "$out" &&
    ok || bad "eval --plan --target any: Tessel's whole space: $(head -c 400 "$out")"
expect 4 "eval: megatron: sdp4-dp2 replicates over 2 data-parallel ranks beside its sharded level" eval $m345 --dp 2 --sdp 4 --batch 32 --no-search --target megatron
# an SDP level under megatron is Megatron-FSDP (cost model 94): priced with its gathers
# prefetched, as --overlap-param-gather prices them on SDP, and recorded so
expect 0 "" eval $m345 --sdp 8 --batch 32 --no-search --json --target megatron
cp "$out" "$dir/mfsdp-target.json"
expect 0 "" eval $m345 --sdp 8 --batch 32 --no-search --json --overlap-param-gather --overlap-grad-reduce --grad-reduce-bytes 4 --opt-step megatron --loss-impl megatron --overlap-tp-dgrad
python3 -c 'import json,sys; a=json.load(open(sys.argv[1]))["plan"]; b=json.load(open(sys.argv[2]))["plan"]; assert a["overlap_param_gather"] is True and a.get("grad_reduce_exposed", False) is False, a; assert a["iter_time_s"] == b["iter_time_s"], (a["iter_time_s"], b["iter_time_s"])' "$dir/mfsdp-target.json" "$out" &&
    ok || bad "eval --sdp 8 --target megatron prices Megatron-FSDP as the switches do: $(head -c 400 "$out")"
expect 0 "" eval $m345 --sdp 8 --batch 32 --no-search --json
python3 -c 'import json,sys; a=json.load(open(sys.argv[1]))["plan"]; b=json.load(open(sys.argv[2]))["plan"]; assert a["iter_time_s"] < b["iter_time_s"], (a["iter_time_s"], b["iter_time_s"])' "$dir/mfsdp-target.json" "$out" &&
    ok || bad "Megatron-FSDP's prefetched gathers are faster than the executor's exposed ones"
expect 4 "eval: megatron: sdp64 shards a mixture-of-experts model (Megatron-FSDP)" eval --model Mixtral-8x7B --cluster 8x8xH100-80G:ib400 --sdp 64 --batch 64 --no-search --target megatron
expect 4 "eval: torchtitan: tp2-dp4 replicates the model (DDP) together with tensor parallelism" eval $m345 --tp 2 --batch 32 --no-search --target torchtitan
expect 2 "target: 'stack' is not one of megatron" eval $m345 --tp 2 --batch 32 --no-search --target stack
expect 2 "target: megatron: the plan comes from a torchtitan configuration" eval --model GPT2-345M --cluster 8xA100-80G --torchtitan "$dir/job.toml" --no-search --target megatron

# --autocast under a stack's target: the target's default loss (megatron's) gives way
# to the script's torch loss, as plan --autocast --target megatron does; only a named
# megatron or te loss is refused (exit 2, naming loss_impl)
expect 0 "" eval $m345 --tp 2 --batch 32 --no-search --json --autocast --target megatron
python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["plan"]; assert p["autocast"] is True and p["loss_impl"] == 1, (p.get("loss_impl"),)' "$out" &&
    ok || bad "eval --autocast --target megatron: $(cat "$out")"
expect 0 "" eval $m345 --tp 2 --batch 32 --no-search --autocast --target deepspeed
expect 2 "loss_impl: autocast prices a script's own loss" eval $m345 --tp 2 --batch 32 --no-search --autocast --target megatron --loss-impl te

# a hand-edited plan document: each field's kind and range checked, naming the key
# (exit 2), not read as absent or as another number
expect 0 "" eval $m345 --tp 2 --pp 2 --batch 32 --no-search --json
cp "$out" "$dir/doc.json"
docset() { # KEY JSON-VALUE: the plan document with plan[KEY] = VALUE in $dir/edit.json
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["plan"][sys.argv[2]]=json.loads(sys.argv[3]); json.dump(d, open(sys.argv[4], "w"))' \
        "$dir/doc.json" "$1" "$2" "$dir/edit.json"
}
for kv in 'fp8_recipe "5"|plan: fp8_recipe: expected a whole number, got a string' \
    'cpu_offload_layers -1|plan: cpu_offload_layers: -1 is negative' \
    'opt_step 1.5|plan: opt_step: 1.5 is not a whole number' \
    'loss_impl 4294967296|plan: loss_impl: 4294967296 is out of range' \
    'tp_comm_overlap 1|plan: tp_comm_overlap: expected true or false, got a number' \
    'moe_alltoall_dispatcher "yes"|plan: moe_alltoall_dispatcher: expected true or false, got a string' \
    'moe_imbalance "2"|plan: moe_imbalance: expected a number, got a string' \
    'grad_reduce_bytes 3|grad_reduce_bytes: 3 is not 2 (bf16) or 4 (fp32)' \
    'schedule 2|plan: schedule: expected a schedule'"'"'s name (1F1B, interleaved, zbh1, zbv, dualpipev), got a number' \
    'granularity "Sublayer"|plan: granularity: expected "layer" or "sublayer", got Sublayer' \
    'recompute_modules "mlp"|plan: recompute_modules: expected an array of module names' \
    'recompute_modules 4294967304|plan: recompute_modules: 4294967304 is not a module bitmask' \
    'recompute_modules [1099511627776]|plan: recompute_modules\[0\]: 1099511627776 is not a module bitmask' \
    'recompute_modules ["mlp", null]|plan: recompute_modules\[1\]: expected a module'"'"'s name, got null' \
    'recompute_modules [1.5]|plan: recompute_modules\[0\]: expected a module'"'"'s name, got a number' \
    'recompute_modules [""]|plan: recompute_modules\[0\]: an empty name' \
    'cp_comm 99|eval: cp_comm: 99 is not 0 (p2p), 1 (allgather), 2 (a2a) or 3 (torch-allgather)' \
    'node_order ["1"]|plan: node_order\[0\]: expected a node index 0..1023' \
    'label 7|plan: label: expected a string, got a number' \
    'slicer []|plan: slicer: expected an object, got an array' \
    'stages {}|plan: stages: expected an array, got an object'; do
    docset "${kv%% *}" "$(v=${kv#* }; echo "${v%%|*}")"
    expect 2 "${kv#*|}" eval --cluster 8xA100-80G --plan "$dir/edit.json" --no-search
done
docset grad_reduce_bytes 4
expect 0 "" eval --cluster 8xA100-80G --plan "$dir/edit.json" --no-search
# (the hand-built keys were read as absent: a schedule of 2 as 1F1B, "Sublayer" as
# whole layers, "mlp" as no module; a stage's runs of another type as no strategy)
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["plan"]["stages"][0]["runs"]={}; json.dump(d, open(sys.argv[2], "w"))' \
    "$dir/doc.json" "$dir/edit.json"
expect 2 "plan: stages\[0\].runs: expected an array, got an object" eval --cluster 8xA100-80G --plan "$dir/edit.json" --no-search

# --fp8-impl te and --opt-step fused are a plan document's 0, which --target prices as
# its own: where the target's differs they are refused naming the field, not dropped
expect 4 "fp8_impl: torchtitan runs FP8 through torchao, not Transformer Engine" eval --model GPT2-345M \
    --cluster 8xH100-80G --tp 2 --sdp 4 --sp --fp8 tensorwise --fp8-impl te --batch 32 --no-search --target torchtitan
expect 2 "opt_step: fused under --target megatron, which prices its own step (megatron)" eval $m345 --tp 2 \
    --batch 32 --no-search --opt-step fused --target megatron
expect 0 "" eval $m345 --tp 2 --batch 32 --no-search --opt-step fused --target deepspeed --json
python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["plan"]; assert "opt_step" not in p, p["opt_step"]' "$out" &&
    ok || bad "--opt-step fused --target deepspeed: $(cat "$out")"
expect 0 "" eval --model GPT2-345M --cluster 8xH100-80G --tp 2 --batch 32 --no-search --fp8 tensorwise \
    --fp8-impl te --target megatron

# a Megatron-LM line's switches that do nothing alone are noted, not dropped silently
b200="--model GPT2-345M --cluster 8xB200-180G --no-search"
expect 0 "" eval $b200 --json --megatron-args "--bf16 --tensor-model-parallel-size 2 --fp4-recipe nvfp4"
grep -q "note: megatron: --fp4-recipe without --fp4-format: bf16" "$err" &&
    python3 -c 'import json,sys; assert "fp8_recipe" not in json.load(open(sys.argv[1]))["plan"]' "$out" &&
    ok || bad "--fp4-recipe alone: $(cat "$err")"
expect 0 "" eval $b200 --json --megatron-args "--bf16 --tensor-model-parallel-size 2 --cross-entropy-fusion-impl te"
grep -q "note: megatron: --cross-entropy-fusion-impl te without --cross-entropy-loss-fusion" "$err" &&
    python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["plan"]["loss_impl"] == 2' "$out" &&
    ok || bad "--cross-entropy-fusion-impl te alone: $(cat "$err")"
# the native fusion alone: megatron-fused (cost model 186; 185 read it as megatron)
expect 0 "" eval $b200 --json --megatron-args "--bf16 --tensor-model-parallel-size 2 --cross-entropy-loss-fusion"
python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["plan"]["loss_impl"] == 7' "$out" &&
    ok || bad "--cross-entropy-loss-fusion: $(cat "$out")"
# a hybrid pattern shorter than the model's blocks is a count, not a wrong letter
expect 2 "hybrid-layer-pattern: 3 layers in the configuration, 52 in the model" eval $nano \
    --megatron-args "$mgn --hybrid-layer-pattern MEM"

# Megatron-LM's own switches carried in a plan document are refused by another target
# as their flags are (exit 4), not priced under it
expect 0 "" eval $m345 --mbs 2 --batch 16 --no-search --json
cp "$out" "$dir/doc.json" # one stage: offloading's own rule (pp 1) holds
for kv in 'tp_comm_overlap true' 'cpu_offload_layers 4'; do
    docset "${kv%% *}" "${kv#* }"
    expect 4 "eval: torchtitan: the plan runs Megatron-LM's ${kv%% *}" eval --cluster 8xA100-80G \
        --plan "$dir/edit.json" --no-search --target torchtitan
done
# the all-to-all dispatcher: refused beside a MoE model's experts; a dense model has
# none to dispatch (no key in its plan, no dispatch: line, even under target megatron)
h200="--model Mixtral-8x7B --cluster 2x8xH200-141G:8xib400 --no-search"
expect 0 "" eval $h200 --pp 2 --sdp 8 --mbs 1 --batch 64 --ep 8 --moe-alltoall-dispatcher --json
cp "$out" "$dir/a2a.json"
expect 4 "eval: torchtitan: the plan runs Megatron-LM's moe_alltoall_dispatcher" eval \
    --cluster 2x8xH200-141G:8xib400 --plan "$dir/a2a.json" --no-search --target torchtitan
expect 0 "" eval $m345 --tp 2 --batch 32 --no-search --target megatron
! grep -q "dispatch:" "$out" && ok || bad "a dense plan prints a dispatcher: $(cat "$out")"
expect 0 "" plan --local $m345 --batch 32 --no-baselines --target megatron --json
python3 -c 'import json,sys; assert "moe_alltoall_dispatcher" not in json.load(open(sys.argv[1]))["plan"]' "$out" &&
    ok || bad "a dense plan under target megatron has moe_alltoall_dispatcher"

# a hybrid config's real-valued key out of range says the value, not its type
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["routed_scaling_factor"]=0; json.dump(d, open(sys.argv[2], "w"))' \
    "$hf/nemotron_3_nano.json" "$dir/nano-rsf.json"
expect 2 "routed_scaling_factor: 0 is not valid; expected a positive number" eval --hf-config "$dir/nano-rsf.json" \
    --seq-len 8192 --cluster 2x8xB200-180G --ep 8 --batch 64 --no-search

# a torchtitan model converter Tessel does not price (a misspelt Float8 one) is noted,
# not dropped without a word, in both forms; the known ones are not
printf '[parallelism]\ndata_parallel_shard_degree = 8\n[activation_checkpoint]\nmode = "full"\n[model]\nconverters = ["quantize.linear.flaot8"]\n' >"$dir/conv.toml"
expect 0 "" eval --model Llama3-8B --cluster 8xH100-80G --no-search --torchtitan "$dir/conv.toml"
grep -q 'note: torchtitan: model converter "quantize.linear.flaot8" is not one Tessel prices' "$err" &&
    grep -q "precision: bf16" "$out" && ok || bad "misspelt converter: $(cat "$err")"
sed 's/model_registry("70B")/model_registry("70B", converters=[Float8LinearConvertr.Config()])/' \
    "$data/torchtitan_llama3_70b.py" >"$dir/conv.py"
expect 0 "" eval --model Llama3-70B --cluster 8x8xH100-80G:8xib400 --no-search --torchtitan "$dir/conv.py"
grep -q 'model converter "Float8LinearConvertr"' "$err" && ok || bad "misspelt Python converter: $(cat "$err")"
sed 's/Convertr/Converter/' "$dir/conv.py" >"$dir/conv-ok.py"
expect 0 "" eval --model Llama3-70B --cluster 8x8xH100-80G:8xib400 --no-search --torchtitan "$dir/conv-ok.py"
! grep -q "converter" "$err" && grep -q "precision: FP8 (tensorwise" "$out" && ok || bad "Float8LinearConverter: $(cat "$err")"

# plan --tp-sync (AMP's fork: every TP all-reduce between two device synchronisations)
# searches for that stack, without sequence parallelism, which the fork has not.
# GPT2-345M with TP 4 forced (no DP, SDP or PP) on 4 A100s: tp4+sp without, plain tp4
# with each all-reduce's dispatch and the queue's restart priced (docs/cost-model.md
# "Synchronised TP collectives"), over 5 % longer; the plan document records it, in its
# request and its plan
tp4="--model GPT2-345M --cluster 4xA100-80G --batch 16 --no-dp --no-sdp --no-pp --no-baselines --top-k 1 --json"
expect 0 "" plan --local $tp4
cp "$out" "$dir/tp4.json"
expect 0 "" plan --local $tp4 --tp-sync
/usr/bin/python3 - "$dir/tp4.json" "$out" <<'PY' && ok || bad "plan --tp-sync: $(head -c 400 "$out")"
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
assert [r["strategy"] for r in a["plan"]["stages"][0]["runs"]] == ["tp4+sp"], a["plan"]["stages"]
assert [r["strategy"] for r in b["plan"]["stages"][0]["runs"]] == ["tp4"], b["plan"]["stages"]
assert not a["plan"].get("tp_sync") and not a["request"].get("tp_sync"), a["request"]
assert b["plan"]["tp_sync"] is True and b["request"]["tp_sync"] is True, b["request"]
assert b["plan"]["iter_time_s"] > a["plan"]["iter_time_s"] * 1.05, (a["plan"]["iter_time_s"], b["plan"]["iter_time_s"])
assert a["fingerprint"] != b["fingerprint"]
PY
# eval --plan prices the document as searched: the given plan's figures, and the search
# at its batch with the plan's tp_sync too, so the search's own best comes back at
# ratio 1 (GPT3-15B on 8 A100s at batch 16: the tp_sync search's best, 1.8979 s, beats
# the tp2-dp4 plan the search without it finds, 1.9027 s priced without syncs)
expect 0 "" plan --local --model GPT3-15B --cluster 8xA100-80G --batch 16 --no-baselines --top-k 1 --tp-sync --json
cp "$out" "$dir/tp-sync.json"
expect 0 "" eval --cluster 8xA100-80G --plan "$dir/tp-sync.json" --json
/usr/bin/python3 - "$dir/tp-sync.json" "$out" <<'PY' && ok || bad "eval --plan of a --tp-sync plan: $(head -c 400 "$out")"
import json, sys
p, e = (json.load(open(f)) for f in sys.argv[1:])
assert e["plan"]["tp_sync"] is True, e["plan"]
assert e["plan"]["iter_time_s"] == p["plan"]["iter_time_s"], (e["plan"]["iter_time_s"], p["plan"]["iter_time_s"])
assert e["ratio"] == 1.0, e["ratio"]
PY
# the SP plan searched without it, given back with --tp-sync, is refused naming tp_sync
expect 2 "tp_sync: .*no sequence parallelism.*: layer 0 runs SP" eval --cluster 4xA100-80G \
    --plan "$dir/tp4.json" --no-search --tp-sync
# nothing to synchronise where no layer may run TP: a note (in the document's notes too);
# beside --tp-comm-overlap (userbuffers under SP's collectives) refused naming tp_sync
expect 0 "note: tp_sync: --no-tp leaves every layer at TP 1: no TP all-reduce to synchronise" \
    plan --local $m345 --batch 16 --no-tp --no-baselines --tp-sync --json
/usr/bin/python3 -c 'import json,sys; n=json.load(open(sys.argv[1]))["notes"]; assert len(n) == 1 and n[0].startswith("tp_sync: --no-tp"), n' \
    "$out" && ok || bad "plan --no-tp --tp-sync notes: $(head -c 300 "$out")"
expect 2 "tp_sync: .*no sequence parallelism.*tp_comm_overlap" \
    plan --local $m345 --batch 16 --tp-comm-overlap --tp-sync
# refused under any --target, as eval --tp-sync is (no target's launch synchronises so)
for t in megatron torchtitan deepspeed galvatron; do
    expect 4 "tp_sync: $t does not synchronise the device around its TP collectives" \
        plan --local --model GPT2-345M --cluster 4xA100-80G --batch 16 --target $t --tp-sync
done

# torchtitan keeps no gradient buffer for the weight-gradient GEMMs to accumulate into
# (FSDP2: a fresh gradient per backward, docs/cost-model.md "The wgrad epilogue under
# gradient-accumulation fusion"): the target prices as --lazy-grads does
expect 0 "" plan --local $l8 --batch 64 --target torchtitan --no-fp8 --no-baselines --json
cp "$out" "$dir/tt-bf16.json"
expect 0 "" eval $l8 --target torchtitan --no-search --json --plan "$dir/tt-bf16.json"
cp "$out" "$dir/tt-bf16-eval.json"
expect 0 "" eval $l8 --target torchtitan --no-search --json --plan "$dir/tt-bf16.json" --lazy-grads
python3 -c 'import json,sys; a,b=(json.load(open(f))["plan"] for f in sys.argv[1:3]); assert a["iter_time_s"] == b["iter_time_s"], (a["iter_time_s"], b["iter_time_s"])' "$dir/tt-bf16-eval.json" "$out" &&
    ok || bad "torchtitan priced with a kept gradient buffer: $(cat "$out")"
# nor does DeepSpeed's engine: autograd's fresh gradient, added by a kernel of its own
# (AccumulateGrad, or the ZeRO hooks' copy): the target prices as --unfused-grad-accum
expect 0 "" plan --local $m345 --batch 64 --target deepspeed --no-baselines --json
cp "$out" "$dir/ds.json"
expect 0 "" eval $m345 --target deepspeed --no-search --json --plan "$dir/ds.json"
cp "$out" "$dir/ds-eval.json"
expect 0 "" eval $m345 --target deepspeed --no-search --json --plan "$dir/ds.json" --unfused-grad-accum
python3 -c 'import json,sys; a,b=(json.load(open(f))["plan"] for f in sys.argv[1:3]); assert a["iter_time_s"] == b["iter_time_s"], (a["iter_time_s"], b["iter_time_s"])' "$dir/ds-eval.json" "$out" &&
    ok || bad "deepspeed priced with Megatron-LM's fused accumulation: $(cat "$out")"
# a sublayer plan evaluated: its stages in source layers as the search printed them
# ("[25.5, 37.5)", under the heading's "[from, to) in source layers"), not the split
# model's block indices ("50-73"), in the JSON and in the table (batch 32: at 64 the
# re-balancing's local moves find a whole-layer cut faster than the cut inside a layer)
expect 0 "" plan --local --model GPT3-15B --cluster 2x8xA100-80G --batch 32 --no-baselines --json
cp "$out" "$dir/sub.json"
expect 0 "" eval --local --model GPT3-15B --cluster 2x8xA100-80G --plan "$dir/sub.json" --no-search --json
python3 -c 'import json,sys; a,b=(json.load(open(f))["plan"] for f in sys.argv[1:3]); assert a["granularity"] == "sublayer", a["granularity"]; assert [s["layers"] for s in a["stages"]] == [s["layers"] for s in b["stages"]], ([s.get("layers") for s in b["stages"]]); assert any(".5" in s["layers"] for s in b["stages"])' "$dir/sub.json" "$out" &&
    ok || bad "eval of a sublayer plan: the stages' spans: $(head -c 600 "$out")"
expect 0 "" eval --local --model GPT3-15B --cluster 2x8xA100-80G --plan "$dir/sub.json" --no-search
grep -Eq '^  [0-9]+ +\[[0-9.]+, [0-9.]+\) +[0-9]+-[0-9]+ ' "$out" && ! grep -Eq '^  [0-9]+ +[0-9]+-[0-9]+ +[0-9]+-[0-9]+ ' "$out" &&
    ok || bad "eval of a sublayer plan: the table's spans: $(grep -A8 '^  stage ' "$out")"

# fp16 mixed precision (cost model 89): a V100 cluster trains fp16 whatever the document
# says (one without the key, from before, prices the same and records it); --fp16 under
# megatron adds the loss scaler's unscale to the step; refused beside fp32, FP8 and on
# torchtitan, naming the field (the GPU where the cluster forced it)
v100="--model GPT2-345M --cluster 8xV100-32G"
expect 0 "" plan --local $v100 --batch 32 --no-baselines --json
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["plan"]["fp16"] is True; del d["plan"]["fp16"]; json.dump(d,open(sys.argv[2],"w"))' "$out" "$dir/v100_nokey.json" &&
    ok || bad "V100 plan without fp16: $(head -c 400 "$out")"
cp "$out" "$dir/v100.json"
expect 0 "" eval --local --cluster 8xV100-32G --plan "$dir/v100_nokey.json" --no-search --json
python3 -c 'import json,sys; a,b=(json.load(open(f))["plan"] for f in sys.argv[1:3]); assert b.get("fp16") is True; assert a["iter_time_s"] == b["iter_time_s"], (a["iter_time_s"], b["iter_time_s"])' "$dir/v100.json" "$out" &&
    ok || bad "a V100 document without fp16: $(head -c 400 "$out")"
expect 0 "" eval --local $m345 --tp 2 --dp 4 --batch 32 --target megatron --no-search --json
cp "$out" "$dir/bf16_mg.json"
expect 0 "" eval --local $m345 --tp 2 --dp 4 --batch 32 --target megatron --fp16 --no-search --json
python3 -c 'import json,sys; a,b=(json.load(open(f))["plan"] for f in sys.argv[1:3]); assert b["fp16"] is True and b["opt_step"] == 5, b.get("opt_step"); assert b["stages"][0]["opt_s"] > a["stages"][0]["opt_s"]' "$dir/bf16_mg.json" "$out" &&
    ok || bad "--fp16 under megatron: the scaler's unscale: $(head -c 400 "$out")"
expect 2 "fp32: not with fp16" eval --local $m345 --tp 2 --dp 4 --batch 32 --fp16 --fp32 --no-search
expect 4 "fp16: torchtitan trains in bf16 or fp32" eval --local $v100 --dp 8 --batch 32 --target torchtitan --no-search
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["plan"]["fp8_recipe"]=1; json.dump(d,open(sys.argv[2],"w"))' "$dir/v100.json" "$dir/v100_fp8.json"
expect 2 "" eval --local --model GPT2-345M --cluster 8xH100-80G --plan "$dir/v100_fp8.json" --no-search
grep -q "fp16: not with fp8_recipe" "$err" && ok || bad "an fp16 document with FP8: $(cat "$err")"

# Attention on GPUs older than Ampere (cost model 91): Megatron-LM runs there without
# Transformer Engine (--transformer-impl local), whose DotProductAttention keeps the s×s
# scores, so --target megatron on a V100 prices the unfused core as --unfused-attn does
# (the same figures; more memory than the fused core without a target), records
# stack_unfused_attn, and the export writes the local impl (and RoPE's fusion off);
# an A100 plan has neither; TE's switches (cp) refused naming the GPU
expect 0 "" eval --local $v100 --tp 2 --dp 4 --batch 32 --no-search --json
cp "$out" "$dir/v100_any.json"
expect 0 "" eval --local $v100 --tp 2 --dp 4 --batch 32 --target megatron --no-search --json
cp "$out" "$dir/v100_mg.json"
expect 0 "" eval --local $v100 --tp 2 --dp 4 --batch 32 --target megatron --unfused-attn --no-search --json
python3 -c '
import json,sys
a,m,u=(json.load(open(f))["plan"] for f in sys.argv[1:4])
assert m.get("stack_unfused_attn") is True and "stack_unfused_attn" not in a, (m.get("stack_unfused_attn"), a.get("stack_unfused_attn"))
assert m["peak_bytes"] == u["peak_bytes"] and m["iter_time_s"] == u["iter_time_s"], (m["peak_bytes"], u["peak_bytes"])
# the unfused core keeps 5 B per score (softmax output, its dropout mask): 5·a·s²/t per layer, 24 layers
assert m["stages"][0]["act_bytes"] - a["stages"][0]["act_bytes"] == 24 * 5 * 16 * 1024 * 1024 // 2, m["stages"][0]["act_bytes"] - a["stages"][0]["act_bytes"]
' "$dir/v100_any.json" "$dir/v100_mg.json" "$out" &&
    ok || bad "megatron on V100: the unfused core: $(head -c 400 "$out")"
expect 0 "" plan --local $v100 --batch 32 --target megatron --no-baselines --export megatron
grep -qx -- "--transformer-impl local" "$out" && grep -qx -- "--fp16" "$out" &&
    ! grep -q -- "--no-rope-fusion" "$out" && ok || bad "megatron export on V100: $(cat "$out")"
expect 0 "" plan --local --model Llama2-7B --cluster 2x8xV100-32G --batch 64 --target megatron --no-baselines --export megatron
grep -qx -- "--transformer-impl local" "$out" && grep -qx -- "--no-rope-fusion" "$out" &&
    ok || bad "megatron export of a RoPE model on V100: $(cat "$out")"
expect 0 "" plan --local $m345 --batch 32 --target megatron --no-baselines --json
grep -q '"stack_unfused_attn"' "$out" && bad "an A100 plan under megatron: stack_unfused_attn" || ok
expect 0 "" plan --local $m345 --batch 32 --target megatron --no-baselines --export megatron
grep -q -- "--transformer-impl" "$out" && bad "an A100 export: $(grep -- --transformer "$out")" || ok
# the search likewise: the plan --unfused-attn finds, and selective recomputation offered
# (chosen where the memory is tight)
expect 0 "" plan --local $v100 --batch 32 --target megatron --no-baselines --json
cp "$out" "$dir/v100_mg_plan.json"
expect 0 "" plan --local $v100 --batch 32 --target megatron --unfused-attn --no-baselines --json
python3 -c '
import json,sys
a,b=(json.load(open(f))["plan"] for f in sys.argv[1:3])
assert a["iter_time_s"] == b["iter_time_s"] and a["peak_bytes"] == b["peak_bytes"], (a["iter_time_s"], b["iter_time_s"])
' "$dir/v100_mg_plan.json" "$out" && ok || bad "a V100 search under megatron: not --unfused-attn's plan"
expect 0 "" plan --local --model GPT3-15B --cluster 4x8xV100-32G --batch 128 --memory 20G --target megatron --no-baselines --export megatron
grep -qx -- "--recompute-granularity selective" "$out" && grep -qx -- "--transformer-impl local" "$out" &&
    ok || bad "selective recomputation on V100 under megatron: $(cat "$out")"
expect 4 "cp: runs in Transformer Engine, which does not run on the V100-32G" \
    eval --local $v100 --tp 2 --cp 2 --dp 2 --batch 32 --target megatron --no-search

# the simulated line past the search's m·v 1,024 (interleaved: 2048 × 2), and where the
# event simulator cannot run (plain 1F1B at m 16384, past its 8,192) a line saying why
expect 0 "" eval --local $m345 --pp 2 --dp 4 --batch 8192 --interleave 2 --no-search
grep -Eq "^  simulated: [0-9.]+ s/iteration by the interleaved 1F1B event simulator" "$out" &&
    ok || bad "m·v 4096: no simulated line: $(grep -E "pipeline:|simulated" "$out")"
expect 0 "" eval --local $m345 --pp 2 --dp 4 --batch 65536 --no-search
grep -q "^  simulated: none: m·v = 16384 micro-batch chunks, past the event simulator's 8192" "$out" &&
    ok || bad "m 16384: no line saying why it is not simulated: $(grep -E "pipeline:|simulated" "$out")"

# transformers' GPT2Block (cost model 122, docs/cost-model.md "HF GPT-2's block"): the
# HF config naming activation_function gelu_new (tests/data/hf/gpt2.json) prices its
# eager gelu_new chain and _attn's kernels under --autocast — slower, and more kept by
# the chain's fp32 intermediates — than the same sizes written without it; without
# --autocast the two price alike
python3 - "$hf/gpt2.json" "$dir/gpt2_sizes.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
del d["activation_function"]
json.dump(d, open(sys.argv[2], "w"))
PY
hfg="--cluster 8xA100-80G --dp 8 --mbs 8 --batch 512 --unfused-attn --no-search --json"
for c in gpt2 gpt2_sizes; do
    f="$hf/gpt2.json"
    [ "$c" = gpt2 ] || f="$dir/gpt2_sizes.json"
    expect 0 "" eval --hf-config "$f" $hfg --autocast
    cp "$out" "$dir/$c-ac.json"
    expect 0 "" eval --hf-config "$f" $hfg
    cp "$out" "$dir/$c-plain.json"
done
python3 - "$dir" <<'PY' && ok || bad "hf gpt2 block: $(cat "$dir/gpt2-ac.json")"
import json, os, sys
p = {n: json.load(open(os.path.join(sys.argv[1], n + ".json")))["plan"]
     for n in ("gpt2-ac", "gpt2_sizes-ac", "gpt2-plain", "gpt2_sizes-plain")}
a, b = p["gpt2-ac"], p["gpt2_sizes-ac"]
assert a["iter_time_s"] > 1.1 * b["iter_time_s"], (a["iter_time_s"], b["iter_time_s"])
assert a["peak_bytes"] > b["peak_bytes"], (a["peak_bytes"], b["peak_bytes"])
assert p["gpt2-plain"]["iter_time_s"] == p["gpt2_sizes-plain"]["iter_time_s"]
PY

# Llama 3 405B at Table 4's DP 64 (bench/published/README.md "Llama 3 rows", the
# twenty-second session): the paper's FSDP is torch's SHARD_GRAD_OP. Run under the
# pipeline as torch's stages run it (no_sync until a chunk's last micro-batch, fp32
# gradients from its first backward: --sdp-nosync --lazy-grads) it holds what the
# row's ZeRO-1 with lazy gradients holds, to the byte, and is refused alike; synced
# every micro-batch (--sdp-keep-weights) it fits, at twice that plan's time.
l405="--model Llama3-405B --seq-len 8192 --tp 8 --pp 16 --mbs 1 --batch 2048 --ckpt none --sp
    --interleave 8 --vp-group 16 --layers-per-stage 8,8,8,8,8,8,8,8,8,8,8,8,8,8,8,8
    --grad-reduce-bytes 4 --overlap-grad-reduce --no-search"
for d in "--dp 64 --zero 1 --lazy-grads" "--dp 1 --sdp 64 --sdp-nosync --lazy-grads"; do
    expect 2 "stage 1 (layers 8-15) needs 88.32 GiB per device, over its 80.00 GiB budget" \
        eval $l405 $d --cluster 1024x8xH100-80G:8xroce400 --memory 80G
done
cat >"$dir/h100big.json" <<'JS'
{"gpu_types": {"H100-80G": {"memory_gb": 100}},
 "nodes": [{"type": "H100-80G", "gpus": 8, "count": 1024, "nics": 8}], "link": "roce400"}
JS
expect 0 "" eval $l405 --dp 64 --zero 1 --lazy-grads --cluster "$dir/h100big.json" --memory 100G --json
cp "$out" "$dir/l405-zero1.json"
expect 0 "" eval $l405 --dp 1 --sdp 64 --sdp-keep-weights --cluster 1024x8xH100-80G:8xroce400 \
    --memory 80G --json
python3 - "$dir/l405-zero1.json" "$out" <<'PY' && ok || bad "Llama 3 405B readings: $(cat "$out")"
import json, sys
z, k = (json.load(open(f))["plan"] for f in sys.argv[1:])
assert round(z["peak_bytes"] / 2**30, 2) == 88.32, z["peak_bytes"]
assert k["peak_bytes"] <= 80 * 2**30, k["peak_bytes"]
assert k["iter_time_s"] > 1.8 * z["iter_time_s"], (k["iter_time_s"], z["iter_time_s"])
PY

# torchtitan's interleaved pipeline (cost model 168): plan --target torchtitan interleaves
# Llama3-8B at pp 4 (torch's Interleaved1F1B, blocking exchanges), exports it as
# module_fqns_per_model_part, and eval --torchtitan of the export prices the plan's figure.
# Without the zero-bubble schedules: since the re-balancing weighs the V's balanced
# partition (tsl_partition_v), ZB-V at m 8 (14.36 samples/s) beats the interleaved plan
tt8="--model Llama3-8B --cluster 2x8xH100-80G:8xib400"
expect 0 "" plan --local $tt8 --batch 16 --pp 4 --no-cp --no-baselines --target torchtitan \
    --no-zero-bubble
want=$(awk '/^  predicted:/ {print $2}' "$out")
grep -q "^  interleave: [2-8] model chunks per stage" "$out" && ok ||
    bad "torchtitan does not interleave: $(head -6 "$out")"
expect 0 "" plan --local $tt8 --batch 16 --pp 4 --no-cp --no-baselines --target torchtitan \
    --no-zero-bubble --export torchtitan-toml
cp "$out" "$dir/tt_vp.toml"
grep -q '^pipeline_parallel_schedule = "Interleaved1F1B"$' "$dir/tt_vp.toml" && ok ||
    bad "the export's schedule: $(grep schedule "$dir/tt_vp.toml")"
expect 0 "" eval $tt8 --torchtitan "$dir/tt_vp.toml" --no-search
grep -q "^  predicted: $want s/iteration" "$out" && ok ||
    bad "the interleaved export does not evaluate to its plan ($want s): $(head -5 "$out")"

# A configuration's per-module precision where the plan runs no FP8 overrides nothing
# (Megatron-core overrides a quantized autocast only): a --megatron-args line's
# --te-precision-config-file and a plan document's module_precision under --no-fp8 are
# noted naming what gave them, as plan --te-precision-config-file notes a file that
# weighs no FP8 plan; --module-precision itself is refused, naming that flag (before,
# the line's file under --no-fp8 was refused with "drop --module-precision")
cat >"$dir/te.yaml" <<'YAML'
configs:
  bf16:
    transformer_engine_config_type: "TEQuantizationParams"
    training_recipe: {}
matchers:
  proj:
    config: "bf16"
    type: "glob"
    pattern: "*.self_attention.linear_proj"
    enabled: true
YAML
mgp="--tensor-model-parallel-size 2 --pipeline-model-parallel-size 1 --micro-batch-size 1"
mgp="$mgp --global-batch-size 32 --bf16 --fp8-format hybrid --fp8-recipe tensorwise"
expect 0 "eval: note: --te-precision-config-file: its overrides apply inside a quantized autocast only, and the plan runs no FP8 (--no-fp8), so nothing is overridden" \
    eval --model GPT2-345M --cluster 8xH100-80G --no-search --no-fp8 \
    --megatron-args "$mgp --te-precision-config-file $dir/te.yaml"
grep -q -- "--module-precision" "$err" && bad "the line's file named as --module-precision: $(cat "$err")" || ok
expect 0 "" eval --model GPT2-345M --cluster 8xH100-80G --no-search --tp 2 --batch 32 \
    --fp8 tensorwise --module-precision linear_proj=bf16 --json
cp "$out" "$dir/prec_plan.json"
expect 0 "eval: note: the plan's module_precision: its overrides apply inside a quantized autocast only, and the plan runs no FP8 (--no-fp8)" \
    eval --cluster 8xH100-80G --no-search --plan "$dir/prec_plan.json" --no-fp8 --json
python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["plan"]; assert not p.get("module_precision") and not p.get("fp8_recipe"), p' "$out" &&
    ok || bad "eval --plan --no-fp8 kept module_precision: $(head -c 300 "$out")"
expect 2 "give --fp8 RECIPE, or drop --module-precision" eval --model GPT2-345M \
    --cluster 8xH100-80G --no-search --tp 2 --batch 32 --module-precision linear_proj=bf16
# a word flag's value with an escape sequence is shown escaped, never raw (the
# terminal would act on it; tests/cli_fuzz.py found --attn-kernel, --ckpt, --cp-comm,
# --fp8, --fp8-impl, ... and every number parser echoing it)
for f in --attn-kernel --ckpt --cp-comm --fp8 --fp8-impl --loss-impl --opt-step --norm-impl \
    --schedule --target --tp --memory --moe-imbalance --layers-per-stage; do
    expect 2 "'x\\\\x1b\\[2J'" eval $m345 --no-search "$f" $'x\e[2J'
    grep -q $'\e' "$err" && bad "eval $f echoed the escape byte raw" || ok
done
for f in --fp8-recipe --attn-kernel --loss-impl --target --memory-reserve --top-k; do
    expect 2 "'x\\\\x1b\\[2J'" plan --local $m345 "$f" $'x\e[2J'
    grep -q $'\e' "$err" && bad "plan $f echoed the escape byte raw" || ok
done
expect 2 "unexpected argument 'x\\\\x1b'" eval $m345 --no-search $'x\e'

echo "eval cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
