#!/bin/bash
# `tesselctl eval`'s comparison runs where the given plan was priced: the search at
# the same batch takes the plan document's recorded stack switches (autocast, CPU
# offloading, FP8 recipe and who runs it, loss, optimizer step, TP comm overlap, ...;
# eval.h tsl_eval_search_request), so the search's own plan given back evaluates to
# ratio 1.0, and the search's plan records the given plan's switches. What the plan
# chose (degrees, pp, micro-batching, checkpointing) the search still chooses.
set -u
# shellcheck source=cli_lib.sh
source "$(dirname "$0")/cli_lib.sh" "$1"

a100="--model GPT2-345M --cluster 8xA100-80G"
h100="--model GPT2-345M --cluster 8xH100-80G"

# searched SWITCHES... -> $dir/plan.json (batch 32, no baselines)
searched() {
    expect 0 "" plan --local "$@" --batch 32 --no-baselines --json
    cp "$out" "$dir/plan.json"
}

# given_back WHAT CLUSTER PYTHON-CHECK [EVAL FLAGS...]: eval --plan of $dir/plan.json;
# the ratio is 1.0 and the search's plan has the given plan's figures, then the check
# (g: the given plan, s: the search's, both as eval printed them)
given_back() {
    local what="$1" cluster="$2" check="$3"
    shift 3
    expect 0 "" eval --local --cluster "$cluster" --plan "$dir/plan.json" --json "$@"
    python3 - "$out" "$check" <<'PY' && ok || bad "$what: $(head -c 400 "$out")"
import json, sys
d = json.load(open(sys.argv[1]))
g, s = d["plan"], d["search"]["plan"]
assert d["ratio"] == 1.0, d["ratio"]
for k in ("samples_per_s", "iter_time_s", "peak_bytes", "pp", "n_micro"):
    assert g[k] == s[k], (k, g[k], s[k])
exec(sys.argv[2])
PY
}

# torch.autocast over fp32 parameters: before, the search priced bf16 parameters and
# the ratio was 0.748 here
searched $a100 --autocast
given_back "autocast" 8xA100-80G 'assert g["autocast"] and s["autocast"], s.get("autocast")'

# activation CPU offloading of 2 layers (Megatron-LM runs it without PP: the search
# keeps pp 1 under it)
searched $a100 --cpu-offload-layers 2
given_back "cpu_offload_layers" 8xA100-80G \
    'assert g["cpu_offload_layers"] == 2 and s["cpu_offload_layers"] == 2 and s["pp"] == 1, s.get("cpu_offload_layers")'

# plan-format.md's numbers: fp8_recipe 2 tensorwise, loss_impl 2 megatron, fp8_impl 1
# torchao, opt_step 1 megatron, 3 torch.
# an FP8 recipe with Megatron-LM's loss: before, the search also tried bf16 and the
# executor's loss (ratio 0.637)
searched $h100 --fp8 tensorwise --loss-impl megatron
given_back "fp8 tensorwise, loss_impl megatron" 8xH100-80G \
    'assert s["fp8_recipe"] == g["fp8_recipe"] == 2 and s["loss_impl"] == g["loss_impl"] == 2, (s["fp8_recipe"], s["loss_impl"])'

# torchtitan's stack: FP8 through torchao, torch's AdamW and loss, DualPipeV's F&B
# serial (the target's defaults, recorded in the plan); evaluated within torchtitan
# (before: 0.528)
searched $h100 --fp8 tensorwise --target torchtitan
given_back "torchtitan fp8_impl torchao, opt_step torch" 8xH100-80G \
    'assert s["fp8_impl"] == g["fp8_impl"] == 1 and s["opt_step"] == g["opt_step"] == 3 and s["fb_serial"], (s["fp8_impl"], s["opt_step"])' \
    --target torchtitan

# TransformerEngine's userbuffers under Megatron-LM (before: 1.065, the search without
# them was slower than the given plan with them)
searched $h100 --tp-comm-overlap --target megatron
given_back "tp_comm_overlap" 8xH100-80G \
    'assert g["tp_comm_overlap"] and s["tp_comm_overlap"] and s["opt_step"] == 1, s.get("tp_comm_overlap")' \
    --target megatron

# a hand-given plan with a switch: the search runs under it too (the ratio is the
# plans' own, whatever it is), and the request's flag over the plan's wins for both
expect 0 "" eval --local $a100 --tp 2 --pp 2 --batch 32 --autocast --json
# (--fp8-impl torchao beside it priced nothing on this bf16 A100 plan: refused since,
# eval_cli_test)
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); s=d["search"]["plan"]; assert s["autocast"] and d["plan"]["autocast"] and 0 < d["ratio"] <= 1.0, d["ratio"]' "$out" &&
    ok || bad "hand-given plan with --autocast: $(head -c 400 "$out")"
searched $h100 --fp8 tensorwise
expect 0 "" eval --local --cluster 8xH100-80G --plan "$dir/plan.json" --json --fp8-impl torchao
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); g=d["plan"]; s=d["search"]["plan"]; assert g["fp8_impl"] == s["fp8_impl"] == 1, (g["fp8_impl"], s["fp8_impl"])' "$out" &&
    ok || bad "--fp8-impl torchao over a TE plan: the search's runs torchao too: $(head -c 400 "$out")"
expect 0 "" eval --local --cluster 8xH100-80G --plan "$dir/plan.json" --json --no-fp8
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); g=d["plan"]; s=d["search"]["plan"]; assert "fp8_recipe" not in g and "fp8_recipe" not in s, (g.get("fp8_recipe"), s.get("fp8_recipe"))' "$out" &&
    ok || bad "--no-fp8 over an FP8 plan: both in bf16: $(head -c 400 "$out")"

echo "eval ratio: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
