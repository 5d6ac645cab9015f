#!/bin/bash
# `tesselctl eval`'s inputs refused naming what is wrong (exit 2), never priced as
# something else: a Megatron-LM line written for another model, a plan document's
# unknown target, a plan file that cannot be read, an empty --server.
set -u
# shellcheck source=cli_lib.sh
source "$(dirname "$0")/cli_lib.sh" "$1"

# ---- a Megatron-LM line's model shape against --model (common/eval_shape.c) ----
# The line `plan --local --model Mixtral-8x7B ... --target megatron --export megatron`
# writes (its parallel part, then the model's shape); a later flag wins, as argparse.
mix="--model Mixtral-8x7B --cluster 4x8xH100-80G:8xib400 --no-search"
mixpar="--tensor-model-parallel-size 1 --pipeline-model-parallel-size 2 --micro-batch-size 1
--global-batch-size 1024 --use-distributed-optimizer --expert-model-parallel-size 8
--expert-tensor-parallel-size 1 --moe-grouped-gemm --moe-token-dispatcher-type alltoall --bf16"
mixshape="--num-layers 32 --hidden-size 4096 --ffn-hidden-size 14336 --num-attention-heads 32
--seq-length 4096 --max-position-embeddings 4096 --group-query-attention --num-query-groups 8
--position-embedding-type rope --swiglu --normalization RMSNorm --disable-bias-linear
--num-experts 8 --moe-router-topk 2 --moe-ffn-hidden-size 14336
--attention-dropout 0 --hidden-dropout 0 --rotary-base 1000000 --norm-epsilon 1e-05
--untie-embeddings-and-output-weights --vocab-size 32000"
mg_mix() { expect "$1" "$2" eval $mix --megatron-args "$mixpar $mixshape $3"; }
mg_mix 0 "" ""
grep -q "dp16+zero1 ×17" "$out" && ok || bad "Mixtral's own line: $(cat "$out")"
# a line without a word (an unset shell variable, blanks, comments alone) named, not
# priced as Megatron-LM's defaults
for empty in "" "   " $'\t\n' "# no flags"; do
    expect 2 "megatron: --megatron-args: no arguments" eval $mix --megatron-args "$empty"
done
# Mixtral's: h 4096, 32 heads of 128 over 8 K/V groups, 8 experts of 14336, top-2,
# vocabulary 32000, rope_theta 1e6 (Mixtral-8x7B's config.json)
mg_mix 2 "megatron: --rotary-base 10000: the model Mixtral-8x7B has 1000000" "--rotary-base 10000"
mg_mix 2 "megatron: --hidden-size 1024: the model Mixtral-8x7B has 4096" \
    "--num-experts 64 --hidden-size 1024 --moe-router-topk 4"
mg_mix 2 "megatron: --num-experts 64: the model Mixtral-8x7B has 8" "--num-experts 64"
mg_mix 2 "megatron: --moe-router-topk 4: the model Mixtral-8x7B has 2" "--moe-router-topk 4"
mg_mix 2 "megatron: --num-attention-heads 64: the model Mixtral-8x7B has 32" "--num-attention-heads 64"
mg_mix 2 "megatron: --num-query-groups 4: the model Mixtral-8x7B has 8" "--num-query-groups 4"
mg_mix 2 "megatron: --kv-channels 64: the model Mixtral-8x7B has 128" "--kv-channels 64"
mg_mix 0 "" "--kv-channels 128"
mg_mix 2 "megatron: --moe-ffn-hidden-size 1408: the model Mixtral-8x7B has 14336" \
    "--moe-ffn-hidden-size 1408"
mg_mix 2 "megatron: --moe-shared-expert-intermediate-size 2816: the model Mixtral-8x7B has none" \
    "--moe-shared-expert-intermediate-size 2816"
mg_mix 2 "megatron: --multi-latent-attention: the model Mixtral-8x7B has none" \
    "--multi-latent-attention"
# validate_args: max_position_embeddings >= seq_length (4096 here)
mg_mix 2 "megatron: --max-position-embeddings 2048: below the sequence length 4096" \
    "--max-position-embeddings 2048"
mg_mix 0 "" "--max-position-embeddings 32768"
# DeepSeek-V3's 129280 tokens pad (128 x TP 1) to 129280, Mixtral's 32000 to 32000;
# 31999 pads to 32000 as well: the same table
mg_mix 2 "megatron: --vocab-size 129280: the model Mixtral-8x7B has 32000 tokens" "--vocab-size 129280"
mg_mix 0 "" "--vocab-size 31999"
# without --group-query-attention Megatron-LM builds a K/V head per query head
expect 2 "megatron: --group-query-attention not given (Megatron's default, not in the line): Megatron-LM builds 32 K/V heads, one per query head; the model Mixtral-8x7B has 8" \
    eval $mix --megatron-args "$mixpar ${mixshape/--group-query-attention/}"
# a dense model: GPT2-345M (h 1024, f 4096, 16 heads, 1024 learned positions)
gpt="--model GPT2-345M --cluster 8xA100-80G --no-search"
gptpar="--tensor-model-parallel-size 2 --pipeline-model-parallel-size 2 --micro-batch-size 1 --global-batch-size 32 --bf16"
expect 0 "" eval $gpt --megatron-args "$gptpar --num-layers 24 --hidden-size 1024 --ffn-hidden-size 4096 --num-attention-heads 16 --seq-length 1024 --max-position-embeddings 1024"
expect 2 "megatron: --ffn-hidden-size 3072: the model GPT2-345M has 4096" \
    eval $gpt --megatron-args "$gptpar --ffn-hidden-size 3072"
expect 2 "megatron: --num-experts 8: the model GPT2-345M has none" \
    eval $gpt --megatron-args "$gptpar --num-experts 8"
expect 2 "megatron: --max-position-embeddings 2048: the model GPT2-345M has 1024 learned positions" \
    eval $gpt --megatron-args "$gptpar --max-position-embeddings 2048"
expect 2 "hidden-size: missing number" eval $gpt --megatron-args "$gptpar --hidden-size ''"
# a flag the line leaves out takes Megatron-LM's default (d98e8a6 arguments.py,
# TransformerConfig), which must be the model's too: GPT2-345M is Megatron's default
# GPT (4·h FFN, LayerNorm, learned positions, biases, tied output), so its line needs
# no --ffn-hidden-size; a switch the line gives that the model has not is refused
gptline="$gptpar --num-layers 24 --hidden-size 1024 --num-attention-heads 16 --seq-length 1024 --max-position-embeddings 1024"
expect 0 "" eval $gpt --megatron-args "$gptline"
# --swiglu's default width: int(8·1024/3/64)·64 = 42·64 = 2688
expect 2 "megatron: --ffn-hidden-size 2688 (Megatron's default, not in the line) = int(8 x --hidden-size / 3 / 64) x 64 under --swiglu: the model GPT2-345M has 4096" \
    eval $gpt --megatron-args "$gptline --swiglu"
expect 2 "megatron: --swiglu (a gated FFN): the model GPT2-345M has an FFN without a gate" \
    eval $gpt --megatron-args "$gptline --swiglu --ffn-hidden-size 4096"
expect 2 "megatron: --position-embedding-type rope: the model GPT2-345M has 1024 learned positions" \
    eval $gpt --megatron-args "$gptline --position-embedding-type rope"
expect 2 "megatron: --untie-embeddings-and-output-weights: the model GPT2-345M has its output layer tied to the embedding" \
    eval $gpt --megatron-args "$gptline --untie-embeddings-and-output-weights"
# Megatron-DeepSpeed's BLOOM flags (arguments.py at 8387ae1; tr11-176B-ml's line):
# --position-embedding-type alibi and --embed-layernorm, checked against the model's
# ALiBi and embedding LayerNorm; its absolute is learned_absolute
bloom="--model BLOOM-7B1 --cluster 8xA100-80G --no-search"
bloomline="$gptpar --num-layers 30 --hidden-size 4096 --num-attention-heads 32 --seq-length 2048 --max-position-embeddings 2048"
expect 0 "" eval $bloom --megatron-args "$bloomline --position-embedding-type alibi --embed-layernorm"
expect 2 "megatron: --embed-layernorm not given (Megatron's default, not in the line): the model BLOOM-7B1 has a LayerNorm on its embedding" \
    eval $bloom --megatron-args "$bloomline --position-embedding-type alibi"
expect 2 "megatron: --position-embedding-type rope: the model BLOOM-7B1 has ALiBi in its attention" \
    eval $bloom --megatron-args "$bloomline --position-embedding-type rope --embed-layernorm"
expect 2 "megatron: --position-embedding-type alibi: the model GPT2-345M has 1024 learned positions" \
    eval $gpt --megatron-args "$gptline --position-embedding-type alibi"
expect 2 "megatron: --embed-layernorm: the model GPT2-345M has no embedding LayerNorm" \
    eval $gpt --megatron-args "$gptline --embed-layernorm"
expect 0 "" eval $gpt --megatron-args "$gptline --position-embedding-type absolute"
expect 2 "megatron: --normalization: 'rmsnorm' is not LayerNorm or RMSNorm" \
    eval $gpt --megatron-args "$gptline --normalization rmsnorm"
expect 2 "megatron: --kv-channels not given and --hidden-size 1000 is not a multiple of --num-attention-heads 16" \
    eval $gpt --megatron-args "$gptline --hidden-size 1000"
# a line of parallel settings alone states no model: only what it gives is checked
expect 0 "" eval $gpt --megatron-args "$gptpar"
# Qwen3-30B-A3B's line as `plan --export megatron` writes it round-trips; each shape flag
# left out takes Megatron's default, refused naming it (h 2048, 32 heads of 128 over 4
# K/V groups, 128 experts of 768, top-8, RMSNorm, RoPE, SwiGLU, no biases, untied output)
q3="--hf-config $(dirname "$0")/data/hf/qwen3_30b_a3b.json --cluster 2x8xH100-80G:8xib400"
expect 0 "" plan --local $q3 --batch 64 --no-baselines --target megatron --export megatron
q3line=$(grep -v '^#' "$out")
expect 0 "" eval $q3 --no-search --megatron-args "$q3line"
q3drop() { # q3drop WHAT EXIT PATTERN: the line without the words WHAT
    expect "$2" "$3" eval $q3 --no-search --megatron-args "$(printf '%s\n' "$q3line" | grep -vx -- "$1")"
}
q3drop "--moe-router-topk 8" 2 "megatron: --moe-router-topk 2 (Megatron's default, not in the line): the model qwen3_30b_a3b has 8"
q3drop "--kv-channels 128" 2 "megatron: --kv-channels 64 (Megatron's default, not in the line) = --hidden-size / --num-attention-heads: the model qwen3_30b_a3b has 128"
q3drop "--num-query-groups 4" 2 "megatron: --num-query-groups 1 (Megatron's default, not in the line) with --group-query-attention: the model qwen3_30b_a3b has 4"
q3drop "--num-experts 128" 2 "megatron: --num-experts none (Megatron's default, not in the line): the model qwen3_30b_a3b has 128"
# the experts' width defaults to --ffn-hidden-size's: 768 either way; without both,
# SwiGLU's default int(8·2048/3/64)·64 = 85·64 = 5440
q3drop "--moe-ffn-hidden-size 768" 0 ""
q3drop "--[a-z-]*ffn-hidden-size 768" 2 "megatron: --moe-ffn-hidden-size 5440 (Megatron's default, not in the line) = --ffn-hidden-size: the model qwen3_30b_a3b has 768"
q3drop "--untie-embeddings-and-output-weights" 2 "megatron: --untie-embeddings-and-output-weights not given, the output layer tied to the embedding (Megatron's default, not in the line): the model qwen3_30b_a3b has an output layer of its own"
q3drop "--normalization RMSNorm" 2 "megatron: --normalization LayerNorm (Megatron's default, not in the line): the model qwen3_30b_a3b has RMSNorm"
q3drop "--position-embedding-type rope" 2 "megatron: --position-embedding-type learned_absolute (Megatron's default, not in the line): the model qwen3_30b_a3b has no learned position table"
q3drop "--swiglu" 2 "megatron: --swiglu not given, a GeLU FFN without a gate (Megatron's default, not in the line): the model qwen3_30b_a3b has a gated FFN (SwiGLU)"
q3drop "--disable-bias-linear" 2 "megatron: --disable-bias-linear not given, biases (Megatron's default, not in the line): the model qwen3_30b_a3b has no linear biases"
# a hybrid (Mamba) model: Nemotron 3 Nano's line (Megatron-Bridge nemotron_3_nano.py at
# 21d102f5e: 64 Mamba heads of 64, state 128, 8 groups; h 2688); the Mamba flags it
# leaves out take Megatron's defaults, 2·2688/64 = 84 heads (MambaMixer: d_inner 2h)
nano="--model Nemotron-3-Nano --cluster 2x8xH100-80G:8xib400 --no-search"
nanoline="--pipeline-model-parallel-size 2 --tensor-model-parallel-size 2 --micro-batch-size 1
--global-batch-size 64 --bf16 --expert-model-parallel-size 4 --num-layers 52 --hidden-size 2688
--ffn-hidden-size 1856 --num-attention-heads 32 --kv-channels 128 --group-query-attention
--num-query-groups 2 --seq-length 4096 --max-position-embeddings 4096
--position-embedding-type none --squared-relu --normalization RMSNorm --disable-bias-linear
--num-experts 128 --moe-router-topk 6 --moe-ffn-hidden-size 1856
--moe-shared-expert-intermediate-size 3712 --untie-embeddings-and-output-weights
--attention-dropout 0.0 --hidden-dropout 0.0 --moe-router-score-function sigmoid
--moe-router-enable-expert-bias --moe-router-topk-scaling-factor 2.5
--hybrid-layer-pattern MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME
--mamba-state-dim 128 --mamba-head-dim 64 --mamba-num-groups 8 --mamba-num-heads 64"
nanodrop() { expect "$2" "$3" eval $nano --megatron-args "$(printf '%s\n' "$nanoline" | sed "s/$1//")"; }
expect 0 "" eval $nano --megatron-args "$nanoline"
nanodrop "--mamba-num-heads 64" 2 "megatron: --mamba-num-heads 84 (Megatron's default, not in the line) = 2 x --hidden-size / --mamba-head-dim: the model Nemotron-3-Nano has 64"
nanodrop "--mamba-state-dim 128" 0 "" # the default is the model's
nanodrop "--mamba-num-groups 8" 0 ""
expect 2 "megatron: --mamba-num-groups 4: the model Nemotron-3-Nano has 8" \
    eval $nano --megatron-args "$nanoline --mamba-num-groups 4"
expect 2 "megatron: --mamba-head-dim 128: the model Nemotron-3-Nano has 64" \
    eval $nano --megatron-args "$nanoline --mamba-head-dim 128"
expect 2 "megatron: --mamba-state-dim 64: the model Nemotron-3-Nano has 128" \
    eval $nano --megatron-args "$nanoline --mamba-state-dim 64"
nanodrop "--hybrid-layer-pattern [MEM*]*" 2 "megatron: --hybrid-layer-pattern not given (Megatron's default, not in the line): a GPT model without Mamba layers; the model Nemotron-3-Nano has 23"
expect 2 "megatron: --mamba-state-dim 128: the model GPT2-345M has none" \
    eval $gpt --megatron-args "$gptpar --mamba-state-dim 128"
expect 2 "megatron: --hybrid-attention-ratio is not a Megatron-LM argument any more" \
    eval $nano --megatron-args "$nanoline --hybrid-attention-ratio 0.08"

# ---- --seq-len beside a configuration's own sequence: the same, or refused (512
# beside --seq-length 1024 was priced at 512 without a word) ----
expect 2 "seq-len: 512, but the configuration says 1024 (Megatron-LM --seq-length); give one" \
    eval $gpt --seq-len 512 --megatron-args "$gptpar --seq-length 1024"
expect 0 "" eval $gpt --seq-len 1024 --megatron-args "$gptpar --seq-length 1024"
printf '[training]\nseq_len = 1024\nlocal_batch_size = 2\n' >"$dir/seq.toml"
expect 2 "seq-len: 2048, but the configuration says 1024 (torchtitan \[training\] seq_len)" \
    eval $gpt --seq-len 2048 --torchtitan "$dir/seq.toml"

# ---- a plan document's request.target (common/eval_doc.c) and --target ----
expect 0 "" plan --local --model GPT2-345M --cluster 8xA100-80G --batch 32 --no-baselines --target megatron --json
cp "$out" "$dir/plan.json"
# the edited document t.json refused by eval (exit 2) with the message given
doc_refused() { expect 2 "$1" eval --cluster 8xA100-80G --plan "$dir/t.json" --no-search; }
settarget() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["request"]["target"]=json.loads(sys.argv[3]); json.dump(d,open(sys.argv[2],"w"))' "$dir/plan.json" "$dir/t.json" "$1"; }
settarget '"megatorn"'
doc_refused "plan: $dir/t.json: request.target: 'megatorn' is not one of any, megatron, deepspeed, torchtitan, galvatron"
# checked under --target too: the document is wrong whichever stack prices it
expect 2 "request.target: 'megatorn' is not one of" \
    eval --cluster 8xA100-80G --plan "$dir/t.json" --no-search --target megatron
settarget '[1]'
doc_refused "request.target: a non-string is not one of any, megatron"
# the names, either case, and the numbers plan --json writes read as before
for t in '"any"' '"Megatron"' '1' 'null'; do
    settarget "$t"
    expect 0 "" eval --cluster 8xA100-80G --plan "$dir/t.json" --no-search
done
# a request that is not an object is not "no request": the target would be lost
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["request"]="megatron"; json.dump(d,open(sys.argv[2],"w"))' "$dir/plan.json" "$dir/t.json"
doc_refused "plan: $dir/t.json: request: not an object"
# the request's MTP keys and the model's sequence are read strictly: -1 was none,
# 2^32 + 512 tokens 512, "512" the preset's own length, each without a word
setkey() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d[sys.argv[3]][sys.argv[4]]=json.loads(sys.argv[5]); json.dump(d,open(sys.argv[2],"w"))' "$dir/plan.json" "$dir/t.json" "$@"; }
setkey request mtp_layers -1
doc_refused "plan: $dir/t.json: request.mtp_layers: -1 is out of range; expected 0..16"
setkey request mtp_layers 4294967297
doc_refused "request.mtp_layers: 4294967297 is out of range"
setkey request mtp_layers '"1"'
doc_refused "request.mtp_layers: expected a whole number 0..16, got a string"
setkey request no_mtp 1
doc_refused "request.no_mtp: expected true or false, got a number"
# every request key by request_fields.h's kind and range (plan_json.h
# tsl_request_json_check), not the MTP keys alone
setkey request host_op_us 1e300
doc_refused "plan: $dir/t.json: request.host_op_us: 1e+300 is not from 1 to 100000 (0: the default)"
setkey request paper_cost '"yes"'
doc_refused "request.paper_cost: expected true or false, got a string"
# a stack's number past the stacks (2^63 - 1 read as no stack), a target's and a
# granularity's control bytes (echoed raw: the message's line ended there)
setkey request target 9223372036854775807
doc_refused "request.target: 9223372036854775807 is not a stack's number (0..4)"
setkey request target '"\u001b[31m\nx"'
doc_refused "request.target: '\\\\x1b\[31m\\\\nx' is not one of"
# a document priced with Megatron-core's per-module precision or blocks kept bf16 under
# FP8 (Megatron-LM's alone) refused by name under the other stacks (target_rules.c
# module_prec_ok, bf16_layers_ok), before their own FP8 rules; megatron prices it
h100="--cluster 8xH100-80G --no-search"
expect 0 "" eval --model GPT2-345M $h100 --json --fp8 tensorwise --module-precision linear_qkv=bf16
cp "$out" "$dir/mp.json"
expect 0 "" eval --model GPT2-345M $h100 --json --fp8 tensorwise --bf16-layers-start 1 --bf16-layers-end 1
cp "$out" "$dir/kb.json"
for t in deepspeed galvatron torchtitan; do
    expect 4 "eval: $t: the plan runs linears at their own precision (module_precision linear_qkv=bf16, " \
        eval $h100 --plan "$dir/mp.json" --target $t
    expect 4 "eval: $t: the plan keeps its first 1 and last 1 blocks in bf16 (bf16_layers_start" \
        eval $h100 --plan "$dir/kb.json" --target $t
done
expect 0 "" eval $h100 --plan "$dir/mp.json" --target megatron
expect 0 "" eval $h100 --plan "$dir/kb.json" --target megatron
# Megatron-LM's recompute of named modules and bf16 moments from a document, likewise
# (target_rules.c megatron_switches_ok; the exports refused them, eval --target priced them)
expect 0 "" eval --model GPT2-345M $h100 --json --recompute-modules mlp --bf16-moments
cp "$out" "$dir/rm.json"
for t in deepspeed galvatron torchtitan; do
    expect 4 "eval: $t: the plan recomputes modules (recompute_modules mlp) as Megatron-LM's" \
        eval $h100 --plan "$dir/rm.json" --target $t
done
expect 0 "" eval $h100 --plan "$dir/rm.json" --target megatron
# a node order past what a plan holds: 1025 nodes were read as no order, node 1024 as
# node 0
setkey plan node_order "$(python3 -c 'print(list(range(1025)))')"
doc_refused "plan: node_order: 1025 nodes; a plan orders at most 1024"
setkey plan node_order '[1024]'
doc_refused "plan: node_order\[0\]: expected a node index 0..1023"
setkey plan granularity '"a\nb"'
doc_refused 'plan: granularity: expected "layer" or "sublayer", got a\\nb'
setkey model tokens_per_sample 4294967808
doc_refused "plan: $dir/t.json: model.tokens_per_sample: 4294967808 is out of range; expected 1..4294967295"
setkey model tokens_per_sample '"512"'
doc_refused "model.tokens_per_sample: expected a whole number >= 1, got a string"
for v in 0 -1; do
    setkey model tokens_per_sample "$v"
    expect 2 "model.tokens_per_sample: $v is out of range" \
        eval --cluster 8xA100-80G --plan "$dir/t.json" --no-search
done
for kv in "model tokens_per_sample 512" "request mtp_layers 0" "request no_mtp false"; do
    # shellcheck disable=SC2086
    setkey $kv
    expect 0 "" eval --cluster 8xA100-80G --plan "$dir/t.json" --no-search
done
# the document's sequence whether its model is named again or not: --model GPT2-345M
# beside a plan searched at --seq-len 512 was priced at the preset's 1024 tokens
expect 0 "" plan --local --model GPT2-345M --cluster 8xA100-80G --batch 32 --no-baselines \
    --seq-len 512 --json
cp "$out" "$dir/plan512.json"
for named in "" "--model GPT2-345M" "--model gpt2-345m"; do
    # shellcheck disable=SC2086
    expect 0 "" eval --cluster 8xA100-80G --plan "$dir/plan512.json" $named --json
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(not (d["model"]["tokens_per_sample"] == 512 and abs(d["ratio"] - 1) < 1e-9))' "$out" &&
        ok || bad "eval $named --plan plan512.json: not the plan's 512 tokens at ratio 1: $(head -c 300 "$out")"
done
# an HF config's too, the model named as the document names it (the directory)
mkdir -p "$dir/tiny"
echo '{"model_type": "llama", "hidden_size": 1024, "intermediate_size": 2816, "num_attention_heads": 16, "num_key_value_heads": 16, "num_hidden_layers": 4, "vocab_size": 32000, "max_position_embeddings": 4096}' >"$dir/tiny/config.json"
expect 0 "" plan --local --hf-config "$dir/tiny" --seq-len 512 --cluster 8xA100-80G --batch 32 --no-baselines --json
cp "$out" "$dir/tiny512.json"
expect 0 "" eval --hf-config "$dir/tiny" --cluster 8xA100-80G --plan "$dir/tiny512.json" --json
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(not (d["model"]["tokens_per_sample"] == 512 and abs(d["ratio"] - 1) < 1e-9))' "$out" &&
    ok || bad "eval --hf-config tiny --plan tiny512.json: not 512 tokens at ratio 1: $(head -c 300 "$out")"
# a ViT's sequence is its image's: its own document given back, --model or not (the
# preset refused the document's 197 as a sequence asked: "seq_len: 197 cannot be used")
expect 0 "" plan --local --model ViT-Huge-32 --cluster 8xA100-80G --batch 64 --no-baselines --json
cp "$out" "$dir/vit.json"
expect 0 "" eval --cluster 8xA100-80G --plan "$dir/vit.json" --no-search
expect 0 "" eval --cluster 8xA100-80G --plan "$dir/vit.json" --model ViT-Huge-32 --no-search
expect 0 "" eval --cluster 8xA100-80G --plan "$dir/plan512.json" --model GPT2-345M --seq-len 1024 --json --no-search
grep -q '"tokens_per_sample": 1024' "$out" && ok || bad "--seq-len 1024 beside the plan's 512: $(head -c 300 "$out")"
# a document without a plan's parts names the part (read "pp and stages[] disagree")
echo '{}' >"$dir/t.json"
expect 2 "plan.stages: missing; a plan document lists its pipeline stages" \
    eval --model GPT2-345M --cluster 8xA100-80G --plan "$dir/t.json" --no-search
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["plan"]["pp"]=len(d["plan"]["stages"])+1; json.dump(d,open(sys.argv[2],"w"))' "$dir/plan.json" "$dir/t.json"
doc_refused "plan.pp: [0-9]*, but stages\[\] holds [0-9]* stages"
# micro_batch x n_micro checked without wrapping 32 bits (65536 x 65536 read as 0)
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["plan"].update(micro_batch=65536, n_micro=65536, global_batch=0); json.dump(d,open(sys.argv[2],"w"))' "$dir/plan.json" "$dir/t.json"
expect 2 "global_batch" eval --cluster 8xA100-80G --plan "$dir/t.json" --no-search
# --target "" is an unset shell variable, as plan refuses it
expect 2 "target: empty; give megatron, deepspeed, torchtitan or galvatron (or leave --target out)" \
    eval --cluster 8xA100-80G --plan "$dir/plan.json" --no-search --target ""
expect 2 "target: empty; give megatron" plan --local --model GPT2-345M --cluster 8xA100-80G --target ""

# ---- a file flag left empty (an unset shell variable): named, not "cannot open : ..." ----
for f in plan torchtitan profile galvatron-profile amp-profile; do
    expect 2 "tesselctl: $f: an empty file name" eval --local $gpt --"$f" ""
done
expect 2 "tesselctl: profile: an empty file name" plan --local --model GPT2-345M --cluster 8xA100-80G --profile ""

# ---- --plan FILE that cannot be read: why, before JSON's complaint ----
expect 2 "tesselctl: eval: plan: cannot open $dir/none.json: No such file or directory" \
    eval --cluster 8xA100-80G --plan "$dir/none.json"
mkdir "$dir/adir"
expect 2 "tesselctl: eval: plan: $dir/adir: is a directory" eval --cluster 8xA100-80G --plan "$dir/adir"
expect 2 "tesselctl: torchtitan: '$dir/adir' is a directory" \
    eval --local --model GPT2-345M --cluster 8xA100-80G --torchtitan "$dir/adir"
printf '{"plan": ' >"$dir/cut.json"
expect 2 "plan: $dir/cut.json: line 1: " eval --cluster 8xA100-80G --plan "$dir/cut.json"
# a key given twice: refused as EvaluatePlan refuses plan_json's, not the last one taken
python3 -c 'import json,sys; t=json.dumps(json.load(open(sys.argv[1]))); open(sys.argv[2],"w").write(t[:-1] + ", \"plan\": {}}")' \
    "$dir/plan.json" "$dir/dup.json"
expect 2 "plan: $dir/dup.json: line 1: duplicate object key" eval --cluster 8xA100-80G --plan "$dir/dup.json"

# ---- --server "": refused by the one parser every subcommand shares, before any
# connection (not the default socket) ----
srv="--server: empty; give unix:/path or host:port"
expect 2 "$srv" --server "" health
expect 2 "$srv" health --server ""
expect 2 "$srv" plan --server "" --model GPT2-345M --cluster 8xA100-80G
expect 2 "$srv" eval --server "" --model GPT2-345M --cluster 8xA100-80G --tp 2
expect 2 "$srv" plans list --server ""
expect 2 "$srv" plans show --server "" 0123456789abcdef
expect 2 "$srv" workers --server ""
expect 2 "$srv" profiles --server ""
expect 2 "$srv" trial list --server ""
# a host:port's port past 65535 was dialled modulo 2^16 (99999: port 34463); 0, a
# name or a sign is no port either: refused before any connection, naming it
expect 2 "server: port '99999' in '127.0.0.1:99999' is not a number in 1..65535" \
    --server 127.0.0.1:99999 health
expect 2 "server: port '0' in '\[::1\]:0'" plans list --server "[::1]:0"
expect 2 "server: port 'http' in 'localhost:http'" plan --server localhost:http \
    --model GPT2-345M --cluster 8xA100-80G
# --nodes with an empty name (an unset variable: --nodes "$NODES") planned on every
# online worker; refused as trial's --nodes refuses it, before any connection
for n in "" "gpu1," "gpu1,,gpu2"; do
    expect 2 "nodes: '$n' has an empty name" plan --server 127.0.0.1:9 --model GPT2-345M --nodes "$n"
done
# a token with a space or control byte matches none of tesseld's (printable, no
# spaces); a CR from a Windows-written file made the call fail as "could not be
# run" (exit 4): refused naming the byte, exit 2, before any connection
expect 2 "token: byte 4 is a space or control character (0x0d)" --server 127.0.0.1:9 \
    --token $'abc\r' health
TESSEL_TOKEN='ab cd' expect 2 "token: byte 3 is a space or control character (0x20)" \
    plans list --server 127.0.0.1:9

# ---- a torchtitan TOML's [model] flavor against --model (common/eval_flavor.c) ----
# torchtitan builds the flavor: an 8B file is not priced as Llama3-70B
printf '[model]\nname = "llama3"\nflavor = "8B"\n[training]\nseq_len = 8192\n' >"$dir/l8.toml"
expect 0 "" eval --model Llama3-8B --cluster 8xH100-80G --no-search --torchtitan "$dir/l8.toml"
expect 2 'line 3: \[model\] flavor "8B" of llama3 is hidden 4096, 32 Transformer layers.*Llama3-70B, is hidden 8192, 80 layers.*give --model Llama3-8B' \
    eval --model Llama3-70B --cluster 8xH100-80G --no-search --torchtitan "$dir/l8.toml"

echo "eval_input_test: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
