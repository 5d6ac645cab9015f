#!/bin/bash
# Export fidelity (docs/exports.md "Model fidelity"): the Megatron-LM line `plan --export
# megatron` writes builds the model Tessel priced. Every preset and every HF config of
# tests/data/hf that the exporter takes round-trips through `eval --megatron-args`
# (common/eval_shape.c checks each model flag, given or at Megatron-LM's default); the
# rest are refused naming what Megatron-LM cannot build (exit 4, as the exporters'
# other refusals); each form flag left out or changed is refused naming it (exit 2).
set -u
# shellcheck source=cli_lib.sh
source "$(dirname "$0")/cli_lib.sh" "$1"
hf="$(dirname "$0")/data/hf"

# 256 GPUs: every model fits (DeepSeek-V3, Llama3-405B, GPT3-175B)
cl="--cluster 32x8xH100-80G:8xib400"
# what the exporter refuses, and why (the model cannot be built by a Megatron-LM line)
refused="cross-attention or patch embedding|bidirectional window|attn_chunked:|sandwich_norm:|softcap:|embed_scale:|Megatron-LM builds identical layers|rope_type|parallel_block:|qk_norm:|alibi:|not supported: Tessel reads the experts of|is not what multi-latent attention builds|layers are Gated DeltaNet"
exported=0
roundtrip() { # NAME MODEL-ARGS...
    local name="$1"
    shift
    "$ctl" plan --local "$@" $cl --batch 512 --no-baselines --target megatron \
        --export megatron >"$out" 2>"$err"
    local rc=$?
    if [ $rc -ne 0 ]; then
        grep -Eq -- "$refused" "$err" && { [ $rc -eq 4 ] || [ $rc -eq 2 ]; } && ok ||
            bad "$name: export exited $rc: $(cat "$err")"
        return
    fi
    exported=$((exported + 1))
    local line
    line=$(grep -v '^#' "$out")
    "$ctl" eval "$@" $cl --no-search --megatron-args "$line" >"$dir/eval" 2>"$err" && ok ||
        bad "$name: its exported line does not round-trip: $(cat "$err")"
}
for m in $("$ctl" models | awk '{print $1}'); do
    roundtrip "$m" --model "$m"
done
for f in "$hf"/*.json; do
    case "$f" in */bad_*) continue ;; esac
    roundtrip "$(basename "$f")" --hf-config "$f"
done
# 20 presets and 20 HF configs as of this test (a new refusal would lower it)
[ "$exported" -ge 40 ] && ok || bad "only $exported models exported to Megatron-LM"

# ---- the presets' RoPE and norm epsilon (model_presets.c preset_ropes, their
# config.json's): Megatron-LM's defaults are --rotary-base 10000 and --norm-epsilon
# 1e-5, so a line without them would build Llama 3's RoPE at 10000, not 500000 ----
presetline() { # MODEL: its exported line, one flag a line
    "$ctl" plan --local --model "$1" $cl --batch 512 --no-baselines --target megatron \
        --export megatron >"$out" 2>"$err" || bad "$1: export: $(cat "$err")"
    grep -v '^#' "$out"
}
for want in "Llama3-70B:--rotary-base 500000" "Llama3-70B:--norm-epsilon 1e-05" \
    "Llama3-405B:--rotary-base 500000" "Llama3-405B:--use-rope-scaling" \
    "Llama3-405B:--rope-scaling-factor 8" "Mixtral-8x7B:--rotary-base 1000000" \
    "Llama2-7B:--rotary-base 10000" "DeepSeek-V3:--norm-epsilon 1e-06" \
    "DeepSeek-V3:--rope-type yarn" "DeepSeek-V3:--rotary-scaling-factor 40" \
    "DeepSeek-V3:--mscale-all-dim 1"; do
    presetline "${want%%:*}" | grep -qx -- "${want#*:}" && ok || bad "${want%%:*}'s line lacks ${want#*:}"
done
l70=$(presetline Llama3-70B)
expect 2 "megatron: --rotary-base 10000 (Megatron's default, not in the line): the model Llama3-70B has 500000" \
    eval --model Llama3-70B $cl --no-search --megatron-args "$(grep -vx -- "--rotary-base 500000" <<<"$l70")"

# ---- the form flags, one at a time (Qwen3-30B-A3B: per-head QK RMSNorm, rope_theta
# 1e6, rms_norm_eps 1e-6, no dropout, a softmax router renormalising its top 8) ----
cl="--cluster 2x8xH100-80G:8xib400"
q3="--hf-config $hf/qwen3_30b_a3b.json $cl"
expect 0 "" plan --local $q3 --batch 64 --no-baselines --target megatron --export megatron
q3line=$(grep -v '^#' "$out")
for flag in --qk-layernorm "--rotary-base 1000000" "--norm-epsilon 1e-06" \
    "--attention-dropout 0" "--hidden-dropout 0"; do
    grep -qx -- "$flag" <<<"$q3line" && ok || bad "Qwen3's line lacks $flag: $q3line"
done
q3() { expect "$1" "$2" eval $q3 --no-search --megatron-args "$3"; }
q3drop() { q3 "$2" "$3" "$(printf '%s\n' "$q3line" | grep -vx -- "$1")"; }
q3 0 "" "$q3line"
q3drop "--qk-layernorm" 2 "megatron: --qk-layernorm not given, no QK-norm (Megatron's default, not in the line): the model qwen3_30b_a3b has a norm of each head's queries and keys (qk_norm)"
q3 2 "megatron: --qk-l2-norm: the model qwen3_30b_a3b has no L2 QK-norm" "$q3line --qk-l2-norm"
q3drop "--rotary-base 1000000" 2 "megatron: --rotary-base 10000 (Megatron's default, not in the line): the model qwen3_30b_a3b has 1000000"
q3 2 "megatron: --rotary-base 500000: the model qwen3_30b_a3b has 1000000" "$q3line --rotary-base 500000"
q3drop "--norm-epsilon 1e-06" 2 "megatron: --norm-epsilon 1e-05 (Megatron's default, not in the line): the model qwen3_30b_a3b has norm epsilon 1e-06"
q3drop "--hidden-dropout 0" 2 "megatron: --hidden-dropout above 0 (Megatron's default, not in the line): the model qwen3_30b_a3b has no dropout"
q3 2 "megatron: --attention-dropout above 0: the model qwen3_30b_a3b has no dropout" "$q3line --attention-dropout 0.1"
q3 2 "attention-dropout: " "$q3line --attention-dropout 1.5"
q3 2 "megatron: --use-rope-scaling: the model qwen3_30b_a3b has RoPE unscaled" "$q3line --use-rope-scaling"
q3 2 "megatron: --softmax-type learnable: the model qwen3_30b_a3b has no attention sinks" "$q3line --softmax-type learnable"
q3 2 "megatron: --softmax-type off-by-one: the model qwen3_30b_a3b has no fixed sink" "$q3line --softmax-type off-by-one"
q3 2 "megatron: --softmax-type: 'sinks' is not vanilla, off-by-one or learnable" "$q3line --softmax-type sinks"
q3 2 "megatron: --moe-router-score-function sigmoid: the model qwen3_30b_a3b has softmax scores" "$q3line --moe-router-score-function sigmoid"
q3 2 "megatron: --moe-router-pre-softmax (the top k not renormalised): the model qwen3_30b_a3b has its top-k weights renormalised" "$q3line --moe-router-pre-softmax"
q3 2 "megatron: --moe-router-enable-expert-bias: the model qwen3_30b_a3b has no score-correction bias" "$q3line --moe-router-enable-expert-bias"
q3 2 "megatron: --moe-router-topk-scaling-factor 2.5: the model qwen3_30b_a3b has routing weights scaled by 1" "$q3line --moe-router-topk-scaling-factor 2.5"
q3 2 "megatron: --moe-router-num-groups 8: the model qwen3_30b_a3b has none" "$q3line --moe-router-num-groups 8 --moe-router-group-topk 4"
# the request's --no-dropout prices the model without dropout: a line without it agrees
gpt="--model GPT2-345M --cluster 8xA100-80G --no-search"
gptline="--tensor-model-parallel-size 2 --pipeline-model-parallel-size 2 --micro-batch-size 1
--global-batch-size 32 --num-layers 24 --hidden-size 1024 --num-attention-heads 16
--seq-length 1024 --max-position-embeddings 1024"
expect 0 "" eval $gpt --megatron-args "$gptline"
expect 2 "megatron: --attention-dropout 0: the model GPT2-345M has dropout" \
    eval $gpt --megatron-args "$gptline --hidden-dropout 0 --attention-dropout 0"
expect 0 "" eval $gpt --no-dropout --megatron-args "$gptline --hidden-dropout 0 --attention-dropout 0"
expect 2 "megatron: --squared-relu: the model GPT2-345M has a GeLU FFN" \
    eval $gpt --megatron-args "$gptline --squared-relu"

# Llama 3.1's RoPE scaling (rope_type llama3, factor 8) and rope_theta 500000
l31="--hf-config $hf/llama3_1_8b.json $cl"
expect 0 "" plan --local $l31 --batch 64 --no-baselines --target megatron --export megatron
l31line=$(grep -v '^#' "$out")
grep -qx -- "--use-rope-scaling" <<<"$l31line" && grep -qx -- "--rope-scaling-factor 8" <<<"$l31line" &&
    ok || bad "Llama 3.1's line lacks its RoPE scaling: $l31line"
expect 2 "megatron: --use-rope-scaling not given, RoPE unscaled (Megatron's default, not in the line): the model llama3_1_8b has Llama 3's RoPE scaling" \
    eval $l31 --no-search --megatron-args "$(grep -vx -- --use-rope-scaling <<<"$l31line")"
expect 2 "megatron: --rope-scaling-factor 4: the model llama3_1_8b has RoPE scaling factor 8" \
    eval $l31 --no-search --megatron-args "$l31line --rope-scaling-factor 4"

# Qwen1.5-MoE: softmax over all 60 experts, top 4 not renormalised (norm_topk_prob
# false: --moe-router-pre-softmax) and a sigmoid gate on its shared expert
qm="--hf-config $hf/qwen1_5_moe_a2_7b.json $cl"
expect 0 "" plan --local $qm --batch 64 --no-baselines --target megatron --export megatron
qmline=$(grep -v '^#' "$out")
for flag in --moe-router-pre-softmax --moe-shared-expert-gate --add-qkv-bias; do
    grep -qx -- "$flag" <<<"$qmline" && ok || bad "Qwen1.5-MoE's line lacks $flag: $qmline"
done
expect 2 "megatron: --moe-router-pre-softmax not given, the top k renormalised (Megatron's default, not in the line): the model qwen1_5_moe_a2_7b has its top-k weights not renormalised" \
    eval $qm --no-search --megatron-args "$(grep -vx -- --moe-router-pre-softmax <<<"$qmline")"
expect 2 "megatron: --moe-shared-expert-gate not given, an ungated shared expert (Megatron's default, not in the line): the model qwen1_5_moe_a2_7b has a gate on the shared experts" \
    eval $qm --no-search --megatron-args "$(grep -vx -- --moe-shared-expert-gate <<<"$qmline")"

# DeepSeek-V2-Lite's YaRN under MLA (factor 40, mscale and mscale_all_dim 0.707,
# original 4096, betas 32 / 1: what MLATransformerConfig fixes) and its softmax over
# all 64 experts, top 6 not renormalised
v2="--hf-config $hf/deepseek_v2_lite.json $cl"
expect 0 "" plan --local $v2 --batch 64 --no-baselines --target megatron --export megatron
v2line=$(grep -v '^#' "$out")
for flag in "--rope-type yarn" "--rotary-scaling-factor 40" "--mscale 0.707" \
    "--mscale-all-dim 0.707" --qk-layernorm --moe-router-pre-softmax; do
    grep -qx -- "$flag" <<<"$v2line" && ok || bad "DeepSeek-V2-Lite's line lacks $flag: $v2line"
done
expect 2 "megatron: --rotary-scaling-factor 1 (Megatron's default, not in the line): the model deepseek_v2_lite has YaRN factor 40" \
    eval $v2 --no-search --megatron-args "$(grep -vx -- "--rotary-scaling-factor 40" <<<"$v2line")"
expect 2 "megatron: --mscale-all-dim 0 (Megatron's default, not in the line): the model deepseek_v2_lite has YaRN mscale_all_dim 0.707" \
    eval $v2 --no-search --megatron-args "$(grep -vx -- "--mscale-all-dim 0.707" <<<"$v2line")"
expect 2 "megatron: --rope-type rope: the model deepseek_v2_lite scales RoPE by YaRN" \
    eval $v2 --no-search --megatron-args "$v2line --rope-type rope"
# what Megatron-LM cannot build: refused by the exporter (exit 4) and by eval (exit 2)
expect 4 "megatron: qk_norm: olmo2_7b normalises Q and K over the whole projection" \
    plan --local --hf-config "$hf/olmo2_7b.json" $cl --batch 64 --no-baselines --target megatron --export megatron
expect 2 "megatron: --qk-layernorm: the model olmo2_7b normalises Q and K over the whole projection" \
    eval --hf-config "$hf/olmo2_7b.json" $cl --no-search --megatron-args "--qk-layernorm"
expect 4 "megatron: parallel_block: gpt_neox runs attention and FFN in parallel" \
    plan --local --hf-config "$hf/gpt_neox.json" $cl --batch 64 --no-baselines --target megatron --export megatron
expect 4 "megatron: alibi: bloom_560m biases its scores with ALiBi and normalises its embedding" \
    plan --local --hf-config "$hf/bloom_560m.json" $cl --batch 64 --no-baselines --target megatron --export megatron
# a line for the GPT-NeoX of gpt_neox.json (6 layers, h 512, 8 heads), by hand
expect 2 "megatron: the model gpt_neox runs attention and FFN in parallel on one input" \
    eval --hf-config "$hf/gpt_neox.json" $cl --no-search \
    --megatron-args "--num-layers 6 --hidden-size 512 --num-attention-heads 8"
# a bidirectional encoder is exported with the note that pretrain_bert.py builds it
expect 0 "" plan --local --model BERT-Large $cl --batch 64 --no-baselines --target megatron --export megatron
grep -q "^# a bidirectional encoder: run these with examples/bert/pretrain_bert.py" "$out" && ok ||
    bad "BERT's line does not say pretrain_bert.py: $(head -8 "$out")"

# ---- Megatron-FSDP (cost model 94): an SDP plan of --target megatron exports the flags
# Megatron-LM d98e8a6 takes for it, and the line evaluates to the figures it was
# priced at; what Megatron-LM refuses, or Tessel does not read, is refused by name ----
h8="--model Llama3-8B --cluster 8xH100-80G"
expect 0 "" plan --local $h8 --batch 128 --no-baselines --target megatron --no-pp --no-tp --no-cp --json
cp "$out" "$dir/mfsdp.json"
expect 0 "" plan --local $h8 --batch 128 --no-baselines --target megatron --no-pp --no-tp --no-cp --export megatron
for want in "--use-megatron-fsdp" "--data-parallel-sharding-strategy optim_grads_params" \
    "--use-distributed-optimizer" "--ckpt-format fsdp_dtensor" \
    "--megatron-fsdp-main-grads-dtype fp32" "--overlap-grad-reduce" "--overlap-param-gather"; do
    grep -qx -- "$want" "$out" && ok || bad "the Megatron-FSDP line lacks $want: $(cat "$out")"
done
fsdpline=$(grep -v '^#' "$out")
expect 0 "" eval $h8 --no-search --json --megatron-args "$fsdpline"
python3 -c 'import json,sys; a=json.load(open(sys.argv[1]))["plan"]; b=json.load(open(sys.argv[2]))["plan"]; assert a["iter_time_s"] == b["iter_time_s"] and a["peak_bytes"] == b["peak_bytes"], (a["iter_time_s"], b["iter_time_s"]); assert b["stages"][0]["runs"][0]["strategy"].startswith("sdp8"), b["stages"][0]["runs"]' "$dir/mfsdp.json" "$out" &&
    ok || bad "the Megatron-FSDP line does not evaluate to its plan: $(head -c 600 "$out")"
mf() { expect "$1" "$2" eval $h8 --no-search --megatron-args "$3"; }
mf 2 "megatron: --use-megatron-fsdp needs --ckpt-format fsdp_dtensor" \
    "$(grep -vx -- "--ckpt-format fsdp_dtensor" <<<"$fsdpline")"
mf 2 "megatron: --ckpt-format fsdp_dtensor is only tested with Megatron FSDP" \
    "$(grep -vx -- "--use-megatron-fsdp" <<<"$fsdpline")"
mf 4 "megatron: --data-parallel-sharding-strategy optim_grads: Tessel reads Megatron-FSDP's optim_grads_params" \
    "$fsdpline --data-parallel-sharding-strategy optim_grads"
mf 4 "megatron: --megatron-fsdp-grad-comm-dtype 16-bit with fp32 main gradients" \
    "$fsdpline --megatron-fsdp-grad-comm-dtype bf16"
mf 4 "megatron: --megatron-fsdp-main-params-dtype bf16: Tessel prices an fp32 master" \
    "$fsdpline --megatron-fsdp-main-params-dtype bf16"
mf 2 "megatron: --use-megatron-fsdp and --use-torch-fsdp2: no more than one" \
    "$fsdpline --use-torch-fsdp2"
# a hybrid (Nemotron 3 Super: Mamba-2 mixers, attention, latent-MoE experts, an MTP
# depth): pretrain_hybrid.py's pattern with the depth after '/', the mixers' widths, no
# position embedding; each flag left out is refused by eval naming it
cl="--cluster 32x8xH100-80G:8xib400"
sup="--hf-config $hf/nemotron_3_super.json $cl"
expect 0 "" plan --local $sup --batch 512 --no-baselines --target megatron --export megatron
grep -q "^# a hybrid (Mamba) model: run these with pretrain_hybrid.py" "$out" && ok ||
    bad "the hybrid's line does not say pretrain_hybrid.py: $(head -12 "$out")"
supline=$(grep -v '^#' "$out")
spat='MEMEMEM*EMEMEMEM*EMEMEMEM*EMEMEMEMEM*EMEMEMEMEM*EMEMEMEMEM*EMEMEMEMEM*EMEMEMEM*EMEMEMEME'
# the pattern's '|' segments: one a stage (cost model 106)
spline=$(grep -- '^--hybrid-layer-pattern ' <<<"$supline")
spp=$(sed -n 's/^--pipeline-model-parallel-size //p' <<<"$supline")
sbars=$(tr -cd '|' <<<"$spline")
[ "$(tr -d '|' <<<"$spline")" = "--hybrid-layer-pattern $spat/*E" ] && [ $((${#sbars} + 1)) = "$spp" ] &&
    ok || bad "Nemotron 3 Super's pattern over $spp stages: $spline"
for flag in "--num-layers 88" "--position-embedding-type none" \
    "--mamba-state-dim 128" "--mamba-head-dim 64" "--mamba-num-groups 8" "--mamba-num-heads 128" \
    "--moe-latent-size 1024" --squared-relu; do
    grep -qxF -- "$flag" <<<"$supline" && ok || bad "Nemotron 3 Super's line lacks $flag: $supline"
done
grep -q -- "--moe-layer-freq\|--rotary-base" <<<"$supline" && bad "a hybrid's line: $supline" || ok
sdrop() { expect 2 "$2" eval $sup --no-search --megatron-args "$(grep -vxF -- "$1" <<<"$supline")"; }
sdrop "--moe-latent-size 1024" "megatron: --moe-latent-size none (Megatron's default, not in the line): the model nemotron_3_super has 1024"
sdrop "$spline" "megatron: --hybrid-layer-pattern not given"
# the other stacks build no Mamba layer; a hybrid interleaves by '|' segments, each
# of which must build the blocks priced (Nano's pattern does not repeat over its chunks)
expect 4 "torchtitan: layer 1 of nemotron_3_super is a mamba block" \
    plan --local $sup --batch 512 --no-baselines --target torchtitan
expect 4 "megatron: --hybrid-layer-pattern: segment 1 (stage 1's model chunk 0) would build blocks" \
    eval --model Nemotron-3-Nano --cluster 2x8xB200-180G --batch 512 --pp 2 --interleave 2 \
    --zero 1 --ep 8 --target megatron
# an interleaved hybrid (cost model 102): Nano's blocks as "MEM*E" eight times, a pattern
# that repeats over the chunks, 40 blocks over PP 4 in 2 chunks of 5 — written as '|'
# segments (segment j·4 + r rank r's chunk j, Megatron-LM select_pipeline_segment),
# without Megatron-LM's other virtual-stage flags, and read back by eval to the figures
# planned; a segment moved is refused naming it
per="$dir/periodic.json"
sed -e 's/"hybrid_override_pattern": "[^"]*"/"hybrid_override_pattern": "MEM*EMEM*EMEM*EMEM*EMEM*EMEM*EMEM*EMEM*E"/' \
    -e 's/"num_hidden_layers": 52/"num_hidden_layers": 40/' "$hf/nemotron_3_nano.json" >"$per"
pcl="--hf-config $per --cluster 4x8xH100-80G"
expect 0 "" plan --local $pcl --batch 512 --pp 4 --no-baselines --target megatron --export megatron
vpline=$(grep -v '^#' "$out")
want=$(sed -n 's/^# predicted \([0-9.]*\) s\/iteration.*/\1/p' "$out")
grep -qxF -- "--hybrid-layer-pattern MEM*E|MEM*E|MEM*E|MEM*E|MEM*E|MEM*E|MEM*E|MEM*E" <<<"$vpline" &&
    ! grep -q -- "virtual-pipeline\|pipeline-num-layers\|in-pipeline-split" <<<"$vpline" && ok ||
    bad "the interleaved hybrid's line: $(head -3 "$out") $vpline"
expect 0 "" eval $pcl --no-search --megatron-args "$vpline"
grep -q "^  predicted: $want s/iteration" "$out" && grep -q "^  interleave: 2 model chunks" "$out" &&
    ok || bad "the interleaved hybrid's line does not evaluate to its plan ($want s): $(head -5 "$out")"
expect 4 "segment 0 (stage 0's model chunk 0) has 6 layers; Tessel prices that chunk with 5" \
    eval $pcl --no-search --megatron-args \
    "$(sed 's/^--hybrid-layer-pattern MEM\*E|MEM\*E|/--hybrid-layer-pattern MEM*EM|EM*E|/' <<<"$vpline")"
# a hybrid's 1F1B stages (cost model 106): one '|' segment a stage, of any length, so the
# search's split balanced over unlike blocks (Nano at PP 4: its stages differ in length,
# 15, 14, 14 and 9 blocks since cost model 161 — its middle two differed before —, which
# Megatron-LM's pipe-free split cannot run) is written as planned, without the split flags
# Megatron-LM asserts against beside '|', and read back by eval to the figures planned
ncl="--model Nemotron-3-Nano --cluster 4x8xH100-80G:8xib400"
expect 0 "" plan --local $ncl --pp 4 --no-baselines --target megatron --export megatron
npline=$(grep -v '^#' "$out")
want=$(sed -n 's/^# predicted \([0-9.]*\) s\/iteration.*/\1/p' "$out")
npat=$(sed -n 's/^--hybrid-layer-pattern //p' <<<"$npline")
IFS='|' read -r -a nseg <<<"$npat"
[ "${#nseg[@]}" = 4 ] && [ "$(printf '%s\n' "${nseg[@]}" | awk '{print length}' | sort -u | wc -l)" -gt 1 ] &&
    ! grep -q -- "pipeline-num-layers\|virtual-pipeline\|in-pipeline-split" <<<"$npline" && ok ||
    bad "Nano's PP 4 line: $(head -3 "$out") $npline"
expect 0 "" eval $ncl --no-search --megatron-args "$npline"
grep -q "^  predicted: $want s/iteration" "$out" && ok ||
    bad "Nano's PP 4 line does not evaluate to its plan ($want s): $(head -5 "$out")"

# ---- gpt-oss (cost model 100): GPTModel's YaRN and the sliding window on the odd 1-based
# layers, as Megatron-Bridge's gpt_oss_bridge.py sets them (window_size (127, 0),
# window_attn_skip_freq 2, the yarn_* fields, quick_gelu with glu_linear_offset 1 and
# activation_func_clamp_value 7); the line evaluates to the plan's figures; each flag
# left out or changed is refused naming it ----
cl="--cluster 2x8xH100-80G:8xib400"
go="--model GPT-OSS-20B $cl"
expect 0 "" plan --local $go --batch 64 --no-baselines --target megatron --json
cp "$out" "$dir/gptoss.json"
expect 0 "" plan --local $go --batch 64 --no-baselines --target megatron --export megatron
goline=$(grep -v '^#' "$out")
for flag in "--position-embedding-type yarn" "--window-size 127,0" "--window-attn-skip-freq 2" \
    --quick-geglu "--glu-linear-offset 1" "--activation-func-clamp-value 7" "--rotary-base 150000" \
    "--rotary-scaling-factor 32" "--yarn-original-max-position-embeddings 4096" \
    "--yarn-beta-fast 32" "--yarn-beta-slow 1" "--mscale 1" "--mscale-all-dim 0" \
    --no-yarn-correction-range-round-to-int "--softmax-type learnable"; do
    grep -qxF -- "$flag" <<<"$goline" && ok || bad "GPT-OSS-20B's line lacks $flag: $goline"
done
grep -q -- "--swiglu\|--rope-type" <<<"$goline" && bad "GPT-OSS-20B's line: $goline" || ok
expect 0 "" eval $go --no-search --json --megatron-args "$goline"
python3 -c 'import json,sys; a=json.load(open(sys.argv[1]))["plan"]; b=json.load(open(sys.argv[2]))["plan"]; assert a["iter_time_s"] == b["iter_time_s"] and a["peak_bytes"] == b["peak_bytes"], (a["iter_time_s"], b["iter_time_s"])' "$dir/gptoss.json" "$out" &&
    ok || bad "GPT-OSS-20B's line does not evaluate to its plan: $(head -c 600 "$out")"
gdrop() { expect 2 "$2" eval $go --no-search --megatron-args "$(grep -vxF -- "$1" <<<"$goline")"; }
gsub() { expect 2 "$3" eval $go --no-search --megatron-args "$(sed "s/^$1\$/$2/" <<<"$goline")"; }
gdrop "--window-attn-skip-freq 2" "megatron: --window-size 127,0 (--window-attn-skip-freq not given: every layer): layer 2 (1-based) has a window in Megatron-LM; the model GPT-OSS-20B attends to the whole sequence there"
gdrop "--window-size 127,0" "megatron: --window-size not given (Megatron's default, not in the line): full attention in every layer; the model GPT-OSS-20B has a 128-key sliding window on 12 of its 24 layers"
gsub "--window-size 127,0" "--window-size 128,0" "megatron: --window-size 128,0: a window of 129 keys; the model GPT-OSS-20B has 128 (--window-size 127,0)"
gsub "--window-attn-skip-freq 2" "--window-attn-skip-freq '([0,1]*12)'" "layer 1 (1-based) attends to the whole sequence in Megatron-LM; the model GPT-OSS-20B has a 128-key window there"
gdrop "--position-embedding-type yarn" "megatron: --position-embedding-type learned_absolute (Megatron's default, not in the line): the model GPT-OSS-20B has no learned position table"
gsub "--position-embedding-type yarn" "--position-embedding-type rope" "megatron: --position-embedding-type rope: the model GPT-OSS-20B scales RoPE by YaRN (factor 32)"
gdrop "--no-yarn-correction-range-round-to-int" "megatron: --yarn-correction-range-round-to-int (Megatron's default, not in the line): the model GPT-OSS-20B has YaRN's correction range unrounded"
expect 2 "megatron: --rope-type yarn: Megatron-LM takes it under --multi-latent-attention only" \
    eval $go --no-search --megatron-args "$goline --rope-type yarn"
gdrop "--rotary-scaling-factor 32" "megatron: --rotary-scaling-factor 1 (Megatron's default, not in the line): the model GPT-OSS-20B has YaRN factor 32"
gsub "--quick-geglu" "--swiglu" "megatron: --swiglu: the model GPT-OSS-20B has gpt-oss's clamped GLU"
gdrop "--activation-func-clamp-value 7" "megatron: --activation-func-clamp-value 0 (Megatron's default, not in the line): the model GPT-OSS-20B has a GLU clamp (0: none) of 7"
# a model without YaRN, window or clamp: the flags are refused
expect 2 "megatron: --position-embedding-type yarn: the model qwen3_30b_a3b has RoPE without YaRN" \
    eval $q3 --no-search --megatron-args "$q3line --position-embedding-type yarn"
expect 2 "megatron: --window-size 4095,0 (--window-attn-skip-freq not given: every layer): layer 1 (1-based) has a window in Megatron-LM; the model qwen3_30b_a3b attends to the whole sequence there" \
    eval $q3 --no-search --megatron-args "$q3line --window-size 4095,0"
expect 2 "megatron: --quick-geglu: the model qwen3_30b_a3b has SwiGLU" \
    eval $q3 --no-search --megatron-args "$(sed 's/^--swiglu$/--quick-geglu/' <<<"$q3line")"
# Mistral's window on every layer: --window-size alone
expect 0 "" plan --local --hf-config "$hf/mistral.json" $cl --batch 64 --no-baselines --target megatron --export megatron
grep -qx -- "--window-size 4095,0" "$out" && ! grep -q -- "--window-attn-skip-freq" "$out" && ok ||
    bad "Mistral's line: $(grep -- '--window' "$out")"
# Llama 4's chunked window and Gemma's norms: Megatron-LM's flags do not build them
expect 4 "megatron: attn_chunked: layer 1 of Llama4-Scout attends within chunks of 8192 tokens" \
    plan --local --model Llama4-Scout $cl --batch 64 --no-baselines --target megatron --export megatron
expect 2 "megatron: --window-size: the model Llama4-Scout attends within chunks of 8192 tokens" \
    eval --model Llama4-Scout $cl --no-search --megatron-args "--window-size 8191,0"
expect 4 "megatron: sandwich_norm: gemma2_9b has norms after attention and FFN as well as before" \
    plan --local --hf-config "$hf/gemma2_9b.json" $cl --batch 64 --no-baselines --target megatron --export megatron

# ---- Megatron-Bridge's three GPT-OSS-120B rows (bench/published rows.json
# mb2604-gptoss-*): the line as Bridge runs them (gpt_oss_bridge.py's model, the perf
# config's parallelism and recompute) evaluates to the figures of the row's own eval
# flags (run.py), iteration time and peak memory ----
gmodel="--num-layers 36 --hidden-size 2880 --ffn-hidden-size 2880 --num-attention-heads 64
--group-query-attention --num-query-groups 8 --kv-channels 64 --seq-length 4096
--max-position-embeddings 131072 --vocab-size 201088 --tokenizer-type NullTokenizer
--normalization RMSNorm --norm-epsilon 1e-5 --position-embedding-type yarn --rotary-base 150000
--rotary-scaling-factor 32 --yarn-original-max-position-embeddings 4096 --yarn-beta-fast 32
--yarn-beta-slow 1 --no-yarn-correction-range-round-to-int --window-size 127,0
--window-attn-skip-freq 2 --softmax-type learnable --add-qkv-bias --quick-geglu
--glu-linear-offset 1.0 --activation-func-clamp-value 7.0 --attention-dropout 0 --hidden-dropout 0
--untie-embeddings-and-output-weights --num-experts 128 --moe-router-topk 4
--moe-ffn-hidden-size 2880 --moe-grouped-gemm --moe-token-dispatcher-type alltoall
--moe-permute-fusion --expert-tensor-parallel-size 1 --bf16 --use-distributed-optimizer
--overlap-grad-reduce --overlap-param-gather --grad-reduce-in-bf16 --recompute-granularity selective
--recompute-modules layernorm moe_act --cross-entropy-loss-fusion --cross-entropy-fusion-impl te
--tensor-model-parallel-size 1 --global-batch-size 1280"
grow="--batch 1280 --ckpt none --zero 1 --recompute-modules layernorm,moe_act --grad-reduce-bytes 2
--opt-step megatron --overlap-grad-reduce --overlap-param-gather --loss-impl te
--moe-alltoall-dispatcher"
bridge_row() { # NAME CLUSTER ROW-FLAGS LINE-FLAGS
    # shellcheck disable=SC2086
    expect 0 "" eval --local --no-search --json --model GPT-OSS-120B --seq-len 4096 $2 $3 $grow
    cp "$out" "$dir/row.json"
    # shellcheck disable=SC2086
    expect 0 "" eval --local --no-search --json --model GPT-OSS-120B --seq-len 4096 $2 \
        --megatron-args "$gmodel $4"
    python3 -c 'import json,sys; a=json.load(open(sys.argv[1]))["plan"]; b=json.load(open(sys.argv[2]))["plan"]; assert a["iter_time_s"] == b["iter_time_s"] and a["peak_bytes"] == b["peak_bytes"], (a["iter_time_s"], b["iter_time_s"])' "$dir/row.json" "$out" &&
        ok || bad "$1: Bridge's line does not evaluate to the row's figures: $(head -c 400 "$out")"
}
bridge_row h100 "--cluster 8x8xH100-80G:8xib400 --memory 80G" \
    "--tp 1 --pp 4 --dp 16 --sdp 1 --mbs 1 --ep 8 --layers-per-stage 10,9,9,10" \
    "--pipeline-model-parallel-size 4 --micro-batch-size 1 --expert-model-parallel-size 8"
bridge_row b200 "--cluster 8x8xB200-180G:8xib400 --memory 180G" \
    "--tp 1 --pp 1 --dp 64 --sdp 1 --mbs 4 --ep 8" \
    "--pipeline-model-parallel-size 1 --micro-batch-size 4 --expert-model-parallel-size 8"
bridge_row gb200 "--cluster 16x4xGB200-186G:nvl72:4xib400 --memory 186G" \
    "--tp 1 --pp 1 --dp 64 --sdp 1 --mbs 4 --ep 64 --moe-a2a-overlap" \
    "--pipeline-model-parallel-size 1 --micro-batch-size 4 --expert-model-parallel-size 64
--overlap-moe-expert-parallel-comm --delay-wgrad-compute"

# ---- FP8 weights gathered in FP8 (plan --fp8-param-gather, cost model 103): the plan
# records it, its megatron line writes the flag beside the distributed optimizer or
# Megatron-FSDP (Megatron-LM refuses it with plain DDP) and evaluates to the plan's
# figures; what no stack runs is refused naming the field ----
h8="--model Llama3-8B --cluster 8xH100-80G"
pgtrip() { # NAME STRATEGY-PREFIX PLAN-FLAGS...: the plan and its exported line agree
    local name="$1" strat="$2"
    shift 2
    expect 0 "" plan --local $h8 --batch 128 --no-baselines --target megatron \
        --fp8-recipe tensorwise --fp8-param-gather "$@" --json
    cp "$out" "$dir/pg.json"
    expect 0 "" plan --local $h8 --batch 128 --no-baselines --target megatron \
        --fp8-recipe tensorwise --fp8-param-gather "$@" --export megatron
    grep -qx -- "--fp8-param-gather" "$out" && grep -qx -- "--use-distributed-optimizer" "$out" &&
        ok || bad "$name: the line lacks --fp8-param-gather or the distributed optimizer: $(cat "$out")"
    expect 0 "" eval $h8 --no-search --json --megatron-args "$(grep -v '^#' "$out")"
    python3 -c 'import json,sys; a=json.load(open(sys.argv[1]))["plan"]; b=json.load(open(sys.argv[2]))["plan"]; assert a.get("fp8_param_gather") and b.get("fp8_param_gather"), "not recorded"; assert a["iter_time_s"] == b["iter_time_s"] and a["peak_bytes"] == b["peak_bytes"], (a["iter_time_s"], b["iter_time_s"], a["peak_bytes"], b["peak_bytes"]); s = a["stages"][0]["runs"][0]["strategy"]; assert s.startswith(sys.argv[3]) and s == b["stages"][0]["runs"][0]["strategy"], s' \
        "$dir/pg.json" "$out" "$strat" && ok ||
        bad "$name: the line does not evaluate to its plan: $(head -c 600 "$out")"
}
pgtrip "Megatron-FSDP" sdp8 --no-pp --no-tp --no-cp
pgtrip "ZeRO-1" dp8+zero1 --no-pp --no-tp --no-cp --no-sdp
pgtrip "no data-parallel rank" tp --no-dp --no-sdp --pp 1 --no-cp
# plain DDP with FP8 weights: Megatron-LM refuses it (validate_args), so does the target
expect 4 "megatron: fp8_param_gather needs the distributed optimizer or Megatron-FSDP" \
    eval --model GPT2-1.3B --cluster 8xH100-80G --no-search --dp 8 --batch 64 --fp8 tensorwise \
    --fp8-param-gather --target megatron
# without FP8, or under a stack that runs none: refused by the field's name
expect 2 "fp8_param_gather: FP8 weights belong to FP8 plans, and --no-fp8 weighs none" \
    plan --local $h8 --batch 128 --no-baselines --no-fp8 --fp8-param-gather
expect 2 "fp8_param_gather: FP8 weights belong to FP8 plans, and no FP8 plan is weighed on this cluster" \
    plan --local --model Llama3-8B --cluster 8xA100-80G --batch 128 --no-baselines --fp8-param-gather
expect 4 "fp8_param_gather: deepspeed runs no FP8 recipe" \
    plan --local $h8 --batch 128 --no-baselines --target deepspeed --fp8-param-gather
expect 4 "fp8_param_gather: torchtitan: torchao's MX linears all-gather their weights in bf16" \
    plan --local --model Llama3-8B --cluster 8xB200-180G --batch 128 --no-baselines \
    --target torchtitan --fp8-recipe mxfp8 --fp8-param-gather
# the printed plan says it
expect 0 "" plan --local $h8 --batch 128 --no-baselines --target megatron --fp8-recipe tensorwise \
    --fp8-param-gather --no-pp --no-tp --no-cp
grep -q "^  precision: FP8 (tensorwise scaling).*; FP8 weights, gathered in FP8" "$out" && ok ||
    bad "the printed plan does not say FP8 weights: $(grep precision "$out")"
# a model too small for FP8 to pay (test_search.c test_fp8): bf16 picked, the switch idle
expect 0 "" plan --local --model GPT2-345M --cluster 8xH100-80G --batch 16 --no-baselines \
    --fp8-param-gather
grep -q "^  precision: bf16 (fp8_param_gather, --fp8-param-gather, changes nothing" "$out" && ok ||
    bad "a bf16 plan beside --fp8-param-gather: $(grep precision "$out")"

echo "export_fidelity_test: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
