#!/bin/bash
# Per-module precision (cost model 173, docs/cost-model.md "Per-module precision"):
# Megatron-Bridge's Nemotron 3 Super NVFP4 plan with te_quant.cfg's overrides (attention
# QKV / projection and the latent projections bf16, Mamba out_proj MXFP8) prices another
# iteration and a larger peak than every linear in NVFP4, records module_precision in its
# document and reads it back to the same figures; bad lists and documents are refused
# naming the field. A --megatron-args line reads the same overrides from
# --te-precision-config-file (a file, relative to the current directory, or the "#| "
# lines of an --export megatron text) to the same figures; a bad file is refused naming
# the file, the line and the field.
set -u
# shellcheck source=tests/eval_lib.sh
. "$(dirname "$0")/eval_lib.sh" "$1" # ctl, root, hf, fail, tmp; refused

model="--hf-config $hf/nemotron_3_super.json --name Nemotron-3-Super-120B-A12B --seq-len 8192
 --mtp-layers 2 --cluster 16x4xGB200-186G:nvl72:4xib400 --memory 186G"
plan="--tp 2 --pp 1 --dp 32 --sdp 1 --mbs 1 --batch 512 --ckpt none --zero 1 --sp --ep 64
 --bf16-layers-end 14 --attn-kernel cudnn --grad-reduce-bytes 2 --opt-step megatron
 --overlap-grad-reduce --overlap-param-gather --overlap-tp-dgrad --fp8 nvfp4 --loss-impl te
 --moe-flex-dispatcher --cuda-graph-modules attn,mamba,moe_router,moe_preprocess"
cfg="linear_qkv=bf16,linear_proj=bf16,out_proj=mxfp8,fc1_latent_proj=bf16,fc2_latent_proj=bf16"
# shellcheck disable=SC2086
"$ctl" eval --local --no-search --json $model $plan >"$tmp/all.json" &&
    "$ctl" eval --local --no-search --json $model $plan --module-precision "$cfg" >"$tmp/own.json" &&
    "$ctl" eval --local --no-search --json $model --plan "$tmp/own.json" >"$tmp/back.json" || fail=1
if python3 - "$tmp/all.json" "$tmp/own.json" "$tmp/back.json" <<'PY'; then
import json, sys
a, o, b = (json.load(open(f))["plan"] for f in sys.argv[1:4])
assert "module_precision" not in a and o["module_precision"] == 0x11500011, o.get("module_precision")
# moved by less than the overridden linears could (a few per cent); either way since
# cost model 198: the MoE forwards are host-bound at Grace's pace, where a bf16 linear
# issues no cast ops and an NVFP4 one does, while its GEMM runs slower
assert o["iter_time_s"] != a["iter_time_s"], (a["iter_time_s"], o["iter_time_s"])
assert abs(o["iter_time_s"] - a["iter_time_s"]) < 0.05 * a["iter_time_s"], (a["iter_time_s"], o["iter_time_s"])
assert a["peak_bytes"] < o["peak_bytes"], (a["peak_bytes"], o["peak_bytes"])
assert b["module_precision"] == o["module_precision"], b.get("module_precision")
assert abs(b["iter_time_s"] - o["iter_time_s"]) <= 1e-9 * o["iter_time_s"], (b["iter_time_s"], o["iter_time_s"])
assert b["peak_bytes"] == o["peak_bytes"], (b["peak_bytes"], o["peak_bytes"])
PY
    echo "ok super-gb200-nvfp4: te_quant.cfg's overrides priced, recorded and read back"
else
    echo "FAIL super-gb200-nvfp4: module_precision"
    fail=1
fi
# shellcheck disable=SC2086
refused "module_precision: 'qkv' names no module" $model $plan --module-precision qkv=bf16
# shellcheck disable=SC2086
refused "module_precision: out_proj: 'fp4' is not a precision" $model $plan --module-precision out_proj=fp4
# shellcheck disable=SC2086
refused "delayed scaling is not one" $model $plan --module-precision out_proj=delayed
# shellcheck disable=SC2086
refused "module_precision: an empty item" $model $plan --module-precision "linear_qkv=bf16,,out_proj=mxfp8"
# shellcheck disable=SC2086
refused "module_precision: per-module precision on a plan without FP8" $model ${plan/--fp8 nvfp4/} --module-precision "$cfg"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["plan"]["module_precision"]=7; json.dump(d, open(sys.argv[2], "w"))' "$tmp/own.json" "$tmp/bad.json"
# shellcheck disable=SC2086
refused "module_precision: 0x7: linear_qkv's value 7 is no precision" $model --plan "$tmp/bad.json"

# ---- --megatron-args with --te-precision-config-file (common/megatron_te_prec.c) ----
g="--model GPT2-345M --cluster 8xB200-180G"
line="--tensor-model-parallel-size 2 --micro-batch-size 1 --global-batch-size 64 --bf16
 --fp8-format hybrid --fp8-recipe tensorwise"
cat >"$tmp/te.yaml" <<'YAML'
configs:
  bf16:
    transformer_engine_config_type: "TEQuantizationParams"
    training_recipe: {}
  mx:
    transformer_engine_config_type: "TEQuantizationParams"
    training_recipe:
      fp8_quantization_recipe: "mxfp8"
matchers:
  qkv:
    config: "bf16"
    type: "glob"
    pattern: "*.self_attention.linear_qkv"
    enabled: true
  fc2:
    config: "mx"
    type: "glob"
    pattern: "*.mlp.linear_fc2"
    enabled: true
YAML
embedded="$line --te-precision-config-file te_precision.yaml
$(sed 's/^/#| /' "$tmp/te.yaml")"
# shellcheck disable=SC2086
"$ctl" eval --local --no-search --json $g --megatron-args "$line" >"$tmp/line.json" &&
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["plan"]["module_precision"]=0x5001; json.dump(d, open(sys.argv[2], "w"))' "$tmp/line.json" "$tmp/want.json" &&
    "$ctl" eval --local --no-search --json $g --plan "$tmp/want.json" >"$tmp/plan.json" &&
    (cd "$tmp" && "$ctl" eval --local --no-search --json $g --megatron-args \
        "$line --te-precision-config-file te.yaml") >"$tmp/file.json" &&
    "$ctl" eval --local --no-search --json $g --megatron-args "$embedded" >"$tmp/emb.json" || fail=1
if python3 - "$tmp/plan.json" "$tmp/file.json" "$tmp/emb.json" <<'PY'; then
import json, sys
p, f, e = (json.load(open(x))["plan"] for x in sys.argv[1:4])
assert p["module_precision"] == 0x5001, p.get("module_precision")
for b in (f, e):
    assert b.get("module_precision") == 0x5001, b.get("module_precision")
    assert abs(b["iter_time_s"] - p["iter_time_s"]) <= 1e-9 * p["iter_time_s"], (b["iter_time_s"], p["iter_time_s"])
    assert b["peak_bytes"] == p["peak_bytes"], (b["peak_bytes"], p["peak_bytes"])
PY
    echo "ok te-precision-config-file: a file and an export's '#| ' lines read to the plan's figures"
else
    echo "FAIL te-precision-config-file: not read to the plan's module_precision and figures"
    fail=1
fi
tefail() { # EXIT PATTERN LINE-TAIL: --megatron-args "$line LINE-TAIL" fails so, run in $tmp
    local want=$1 pat=$2 rc
    # shellcheck disable=SC2086
    (cd "$tmp" && "$ctl" eval --local --no-search $g --megatron-args "$line $3") >/dev/null 2>"$tmp/err"
    rc=$?
    if [ "$rc" -eq "$want" ] && grep -qF -- "$pat" "$tmp/err"; then
        echo "ok te-precision-config-file refused: $pat"
    else
        echo "FAIL te-precision-config-file: exit $rc, $(cat "$tmp/err")"
        fail=1
    fi
}
tefail 2 "megatron: --te-precision-config-file missing.yaml: cannot open: No such file" \
    "--te-precision-config-file missing.yaml"
sed 's/config: "mx"/config: "mxfp"/' "$tmp/te.yaml" >"$tmp/bad.yaml"
tefail 2 "bad.yaml, line 16: matcher 'fc2': config 'mxfp' is not in configs" \
    "--te-precision-config-file bad.yaml"
sed 's/"mxfp8"/"delayed"/' "$tmp/te.yaml" >"$tmp/bad.yaml"
tefail 2 "bad.yaml, line 8: fp8_quantization_recipe: delayed" "--te-precision-config-file bad.yaml"
sed 's/\*.mlp.linear_fc2/*linear_fc1/' "$tmp/te.yaml" >"$tmp/bad.yaml"
tefail 4 "matcher 'fc2' (pattern '*linear_fc1') gives mxfp8 to decoder.layers.0.mlp.experts.linear_fc1" \
    "--te-precision-config-file bad.yaml"
printf 'configs: {\n' >"$tmp/bad.yaml"
tefail 2 "bad.yaml, line 2: YAML: " "--te-precision-config-file bad.yaml"
# without an FP8 recipe nothing is quantized, so nothing is overridden (noted)
# shellcheck disable=SC2086
(cd "$tmp" && "$ctl" eval --local --no-search --json $g --megatron-args \
    "${line/--fp8-format hybrid --fp8-recipe tensorwise/} --te-precision-config-file te.yaml") \
    >"$tmp/bf16.json" 2>"$tmp/err" &&
    grep -q "note: megatron: --te-precision-config-file without --fp8-format" "$tmp/err" &&
    python3 -c 'import json,sys; assert "module_precision" not in json.load(open(sys.argv[1]))["plan"]' "$tmp/bf16.json" &&
    echo "ok te-precision-config-file without FP8: noted, nothing overridden" ||
    { echo "FAIL te-precision-config-file without FP8: $(cat "$tmp/err")"; fail=1; }
tefail 4 "with --fp8-param-gather" \
    "--use-distributed-optimizer --fp8-param-gather --te-precision-config-file te.yaml"
exit $fail
