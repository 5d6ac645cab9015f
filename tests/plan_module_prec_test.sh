#!/bin/bash
# tesselctl plan --module-precision / --te-precision-config-file (request field
# module_precision, PlanRequest 148): every FP8 plan the search weighs runs those linears at
# their own precision. The plan found with the flag differs from the one found without and
# prices as eval --no-search of the same plan with the same --module-precision; the YAML file
# reads to the same request as the list; a bf16 plan carries none; what the search cannot
# weigh is refused naming the field (eval's rules: docs/tesselctl.md "plan").
set -u
# shellcheck source=tests/eval_lib.sh
. "$(dirname "$0")/eval_lib.sh" "$1" # ctl, root, hf, fail, tmp

g="--model GPT2-345M --cluster 8xH100-80G --batch 64 --no-baselines"
list="linear_proj=bf16,linear_fc2=bf16"
# pure DP (one strategy for every layer), so that eval's flags give the same plan
dp="--no-tp --no-sdp --no-pp --no-ckpt --no-zero --fp8-recipe tensorwise"
flags="--tp 1 --pp 1 --dp 8 --sdp 1 --mbs 8 --ckpt none --zero 0 --fp8 tensorwise"
# shellcheck disable=SC2086
"$ctl" plan --local --json $g $dp >"$tmp/all.json" &&
    "$ctl" plan --local --json $g $dp --module-precision "$list" >"$tmp/own.json" &&
    "$ctl" eval --local --no-search --json --model GPT2-345M --cluster 8xH100-80G --batch 64 \
        $flags --module-precision "$list" >"$tmp/eval.json" || fail=1
if python3 - "$tmp/all.json" "$tmp/own.json" "$tmp/eval.json" <<'PY'; then
import json, sys
a, o, e = (json.load(open(f)) for f in sys.argv[1:4])
assert o["request"]["module_precision"] == "linear_proj=bf16,linear_fc2=bf16", o["request"]
a, o, e = a["plan"], o["plan"], e["plan"]
assert "module_precision" not in a and o["module_precision"] == 0x1010, o.get("module_precision")
assert o["fp8_recipe"] == 2 and o["pp"] == 1 and o["n_micro"] == 1, (o["fp8_recipe"], o["pp"])
assert [r["strategy"] for r in o["stages"][0]["runs"]] == ["dp8"], o["stages"][0]["runs"]
# GPT-2 345M's FP8 casts cost more than its small GEMMs gain: two linears kept bf16 run faster
assert o["iter_time_s"] < a["iter_time_s"], (o["iter_time_s"], a["iter_time_s"])
assert e["module_precision"] == o["module_precision"], e.get("module_precision")
assert abs(e["iter_time_s"] - o["iter_time_s"]) <= 1e-9 * o["iter_time_s"], (e["iter_time_s"], o["iter_time_s"])
assert e["peak_bytes"] == o["peak_bytes"], (e["peak_bytes"], o["peak_bytes"])
PY
    echo "ok plan --module-precision: its plan differs from the plan without and prices as eval's"
else
    echo "FAIL plan --module-precision: figures"
    fail=1
fi

# the plan's output names the modules' precision: FP8 plans theirs, a bf16 plan none
# shellcheck disable=SC2086
"$ctl" plan --local $g --fp8-recipe tensorwise --module-precision "$list" >"$tmp/out" 2>&1 &&
    grep -q "stack:     linears at their own precision: linear_proj=bf16,linear_fc2=bf16" "$tmp/out" &&
    echo "ok plan --module-precision: the FP8 plan's stack line" ||
    { echo "FAIL plan --module-precision: no stack line: $(head -c 600 "$tmp/out")"; fail=1; }
# without --fp8-recipe the search weighs bf16 (faster here) and delayed FP8 plans
# shellcheck disable=SC2086
"$ctl" plan --local --json $g --module-precision "$list" >"$tmp/mixed.json" &&
    "$ctl" plan --local $g --module-precision "$list" >"$tmp/out" 2>&1 || fail=1
if python3 - "$tmp/mixed.json" <<'PY' && grep -q "precision: bf16, every linear (module_precision" "$tmp/out"; then
import json, sys
p = json.load(open(sys.argv[1]))["plan"]
assert not p.get("fp8_recipe") and "module_precision" not in p, p.get("module_precision")
PY
    echo "ok plan --module-precision: a bf16 plan carries none and says so"
else
    echo "FAIL plan --module-precision on a bf16 plan: $(head -c 600 "$tmp/out")"
    fail=1
fi

# --te-precision-config-file: the same request as the list (megatron_te_prec.c)
cat >"$tmp/te.yaml" <<'YAML'
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
  fc2:
    config: "bf16"
    type: "glob"
    pattern: "*.mlp.linear_fc2"
    enabled: true
YAML
# shellcheck disable=SC2086
"$ctl" plan --local --json $g $dp --te-precision-config-file "$tmp/te.yaml" \
    >"$tmp/file.json" || fail=1
if python3 - "$tmp/own.json" "$tmp/file.json" <<'PY'; then
import json, sys
o, f = (json.load(open(x)) for x in sys.argv[1:3])
assert f["fingerprint"] == o["fingerprint"], (f["fingerprint"], o["fingerprint"])
assert f["plan"]["module_precision"] == o["plan"]["module_precision"]
assert f["plan"]["iter_time_s"] == o["plan"]["iter_time_s"]
PY
    echo "ok plan --te-precision-config-file: the list's request, plan and fingerprint"
else
    echo "FAIL plan --te-precision-config-file: not the list's plan"
    fail=1
fi

# a module the model lacks: eval's rule, taken and priced as nothing (no such linear)
# shellcheck disable=SC2086
"$ctl" plan --local --json $g $dp --module-precision "in_proj=bf16" \
    >"$tmp/inproj.json" || fail=1
python3 - "$tmp/all.json" "$tmp/inproj.json" <<'PY' &&
import json, sys
a, i = (json.load(open(x))["plan"] for x in sys.argv[1:3])
assert i["module_precision"] == 0x10000 and i["iter_time_s"] == a["iter_time_s"], i.get("module_precision")
PY
    echo "ok plan --module-precision in_proj=bf16 on a dense GPT: taken, nothing priced" ||
    { echo "FAIL plan --module-precision in_proj on a dense GPT"; fail=1; }

plan_refused() { # EXIT PATTERN SWITCHES...: tesselctl plan --local fails so
    local want=$1 pat=$2 rc
    shift 2
    "$ctl" plan --local "$@" >/dev/null 2>"$tmp/err"
    rc=$?
    if [ "$rc" -eq "$want" ] && grep -qF -- "$pat" "$tmp/err"; then
        echo "ok plan refused: $pat"
    else
        echo "FAIL plan refused ($*): exit $rc, $(cat "$tmp/err")"
        fail=1
    fi
}
# shellcheck disable=SC2086
{
    plan_refused 2 "module_precision: 'qkv' names no module" $g --module-precision qkv=bf16
    plan_refused 2 "module_precision: out_proj: 'fp4' is not a precision" $g --module-precision out_proj=fp4
    plan_refused 2 "module_precision: an empty item" $g --module-precision "linear_qkv=bf16,,out_proj=mxfp8"
    plan_refused 2 "--module-precision and --te-precision-config-file both give" $g \
        --module-precision "$list" --te-precision-config-file "$tmp/te.yaml"
    plan_refused 2 "te-precision-config-file $tmp/missing.yaml: cannot open" $g \
        --te-precision-config-file "$tmp/missing.yaml"
    plan_refused 2 "module_precision: per-module precision overrides FP8 plans' modules (Megatron-core's quantized autocast only), and --no-fp8 weighs none" \
        $g --no-fp8 --module-precision "$list"
    plan_refused 2 "and --fp16 weighs none" $g --fp16 --module-precision "$list"
    plan_refused 2 "and no FP8 plan is weighed on this cluster: drop --module-precision" \
        --model GPT2-345M --cluster 8xA100-80G --batch 64 --module-precision "$list"
    plan_refused 4 "module_precision: torchtitan: linears at their own precision are Megatron-core's" \
        $g --target torchtitan --module-precision "$list"
    plan_refused 4 "module_precision with fp8_param_gather" $g --fp8-param-gather --module-precision "$list"
}
# the YAML file as eval --megatron-args reads it (docs/tesselctl.md "plan"): where it
# overrides nothing (no FP8 plan weighed) noted and planned without it, as eval notes such
# a line; what the search refuses of it refused naming --te-precision-config-file, never
# "--module-precision", which the user did not give (before: "drop --module-precision")
plan_noted() { # PATTERN SWITCHES...: tesselctl plan --local succeeds with that note
    local pat=$1 rc
    shift
    "$ctl" plan --local --json "$@" >"$tmp/noted.json" 2>"$tmp/err"
    rc=$?
    if [ "$rc" -eq 0 ] && grep -qF -- "$pat" "$tmp/err" && ! grep -q -- "--module-precision" "$tmp/err" &&
        python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert not d["plan"].get("module_precision") and not d["request"].get("module_precision"), d["request"]' "$tmp/noted.json"; then
        echo "ok plan noted: $pat"
    else
        echo "FAIL plan noted ($*): exit $rc, $(cat "$tmp/err")"
        fail=1
    fi
}
# shellcheck disable=SC2086
{
    plan_noted "plan: note: --te-precision-config-file: its overrides apply inside a quantized autocast only, and --no-fp8 weighs no FP8 plan, so nothing is overridden" \
        $g ${dp% --fp8-recipe*} --no-fp8 --te-precision-config-file "$tmp/te.yaml"
    plan_noted "and --fp32 weighs no FP8 plan" $g ${dp% --fp8-recipe*} --fp32 \
        --te-precision-config-file "$tmp/te.yaml"
    plan_noted "and no FP8 plan is weighed on this cluster (fp8: the A100-80G has no FP8 tensor cores" \
        --model GPT2-345M --cluster 8xA100-80G --batch 64 --no-baselines --no-tp --no-sdp --no-pp \
        --te-precision-config-file "$tmp/te.yaml"
    plan_refused 4 "module_precision: --te-precision-config-file with --fp8-param-gather: " $g \
        --fp8-param-gather --te-precision-config-file "$tmp/te.yaml"
    plan_refused 4 "module_precision: --te-precision-config-file under --target torchtitan: " $g \
        --target torchtitan --te-precision-config-file "$tmp/te.yaml"
    grep -q -- "--module-precision" "$tmp/err" &&
        { echo "FAIL the file's refusal names --module-precision: $(cat "$tmp/err")"; fail=1; } ||
        echo "ok the file's refusal names the flag given"
}
"$ctl" plan --help | grep -q -- "--module-precision LIST" &&
    "$ctl" plan --help | grep -q -- "--te-precision-config-file PATH" &&
    echo "ok plan --help lists both flags" || { echo "FAIL plan --help"; fail=1; }
exit $fail
