#!/usr/bin/env python3
"""te_precision_yaml_test.py — megatron's te_precision.yaml (module_precision) read as
Megatron-LM d98e8a64dd reads it.

The export carries the file as "#| " comment lines (common/export_megatron_prec.c).
Each case's lines are taken out with the sed the export's comment gives, loaded with
yaml.SafeLoader (quantization/quant_config.py RecipeConfig.from_yaml_file) and checked
against that reader's schema: RecipeConfig._build_matchers (enabled, type "glob",
pattern, config), TEQuantizationParams.parse_from_config (exactly
transformer_engine_config_type "TEQuantizationParams" and training_recipe) and
TEQuantizationRecipe.parse_from_config (its dataclass's keys only; Fp8Recipe /
Fp4Recipe values; delayed refused; fp8 and fp4 exclusive). Then Megatron-core's module
paths (gpt_model.py / hybrid_model.py named_modules) are matched first-match-wins with
fnmatch, as get_quant_config_or_none does: each module module_precision names runs its
recipe, and the linears it leaves at the plan's recipe (the routed and shared experts,
the router, MLA's projections, the LM head) match nothing. Without PyYAML it skips
(exit 77).

usage: te_precision_yaml_test.py TEST_EXPORT
"""
import fnmatch
import subprocess
import sys

try:
    import yaml
except ImportError:
    print("SKIP: no PyYAML")
    sys.exit(77)

# transformer_engine.py TEQuantizationRecipe's dataclass fields, enums.py's recipes
RECIPE_KEYS = {"fp8_quantization_recipe", "fp4_quantization_recipe", "custom_recipe_factory",
               "fp8_format", "override_quantized_autocast", "override_nonquantized_autocast",
               "tp_only_amax_red", "fp8_param", "fp4_param"}
FP8 = {"tensorwise", "blockwise", "mxfp8"}  # delayed and custom: not Tessel's
FP4 = {"nvfp4"}

# one module path per module Tessel names, as Megatron-core names them
PATHS = {
    "linear_qkv": ["decoder.layers.3.self_attention.linear_qkv",
                   "mtp.layers.0.mtp_model_layer.self_attention.linear_qkv"],
    "linear_proj": ["decoder.layers.3.self_attention.linear_proj"],
    "linear_fc1": ["decoder.layers.3.mlp.linear_fc1"],
    "linear_fc2": ["decoder.layers.3.mlp.linear_fc2"],
    "in_proj": ["decoder.layers.0.mixer.in_proj"],
    "out_proj": ["decoder.layers.0.mixer.out_proj"],
    "fc1_latent_proj": ["decoder.layers.1.mlp.fc1_latent_proj"],
    "fc2_latent_proj": ["decoder.layers.1.mlp.fc2_latent_proj"],
}
# linears module_precision leaves at the plan's recipe (planner/module_prec.h)
OTHERS = ["decoder.layers.1.mlp.experts.linear_fc1", "decoder.layers.1.mlp.experts.linear_fc2",
          "decoder.layers.1.mlp.experts.local_experts.0.linear_fc1",
          "decoder.layers.1.mlp.shared_experts.linear_fc1",
          "decoder.layers.1.mlp.shared_experts.linear_fc2", "decoder.layers.1.mlp.router",
          "decoder.layers.2.self_attention.linear_q_proj",
          "decoder.layers.2.self_attention.linear_kv_down_proj", "output_layer"]

CASES = [
    ("nvfp4", "linear_qkv=bf16,linear_proj=bf16,out_proj=mxfp8,fc1_latent_proj=bf16,"
              "fc2_latent_proj=bf16"),
    ("tensorwise", "linear_qkv=bf16,linear_proj=tensorwise,linear_fc1=blockwise,"
                   "linear_fc2=mxfp8,in_proj=nvfp4,out_proj=bf16,fc1_latent_proj=mxfp8,"
                   "fc2_latent_proj=blockwise"),
    ("mxfp8", "linear_fc2=bf16"),
]


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def recipe_of(name, cfg):
    """The precision a config runs, checked as TEQuantizationParams reads it."""
    if set(cfg) != {"transformer_engine_config_type", "training_recipe"}:
        fail("config %s: keys %s" % (name, sorted(cfg)))
    if cfg["transformer_engine_config_type"] != "TEQuantizationParams":
        fail("config %s: type %r" % (name, cfg["transformer_engine_config_type"]))
    tr = cfg["training_recipe"]
    if not isinstance(tr, dict) or not set(tr) <= RECIPE_KEYS:
        fail("config %s: training_recipe %r" % (name, tr))
    f8, f4 = tr.get("fp8_quantization_recipe"), tr.get("fp4_quantization_recipe")
    if f8 is not None and f4 is not None:
        fail("config %s: fp8 and fp4 both set" % name)
    if f8 is not None and (f8 not in FP8 or tr.get("fp8_format", "e4m3") not in ("e4m3", "hybrid")):
        fail("config %s: fp8 %r" % (name, tr))
    if f4 is not None and f4 not in FP4:
        fail("config %s: fp4 %r" % (name, f4))
    return f8 or f4 or "bf16"


def check(recipe, mods, text):
    want = dict(item.split("=") for item in mods.split(","))
    lines = [ln[3:] for ln in text.splitlines() if ln.startswith("#| ")]
    if "--te-precision-config-file te_precision.yaml" not in text.splitlines():
        fail("%s: no --te-precision-config-file line" % mods)
    if "#   sed -n 's/^#| //p' THIS_FILE > te_precision.yaml" not in text:
        fail("%s: no sed line" % mods)
    doc = yaml.load("\n".join(lines) + "\n", Loader=yaml.SafeLoader)
    if set(doc) != {"configs", "matchers"}:
        fail("%s: top keys %s" % (mods, sorted(doc)))
    configs = {k: recipe_of(k, v) for k, v in doc["configs"].items()}
    matchers = []  # RecipeConfig._build_matchers, in the file's order
    for name, m in doc["matchers"].items():
        if m.get("enabled", False) is not True or m.get("type") != "glob":
            fail("%s: matcher %s not an enabled glob: %r" % (mods, name, m))
        if set(m) != {"enabled", "type", "pattern", "config"} or m["config"] not in configs:
            fail("%s: matcher %s: %r" % (mods, name, m))
        matchers.append((m["pattern"], m["config"]))

    def match(path):
        return next((configs[c] for p, c in matchers if fnmatch.fnmatch(path, p)), None)

    for mod, paths in PATHS.items():
        for path in paths:
            if match(path) != want.get(mod):
                fail("%s: %s runs %s, the plan %s" % (mods, path, match(path), want.get(mod)))
    for path in OTHERS:
        if match(path) is not None:
            fail("%s: %s matched %s (the plan's recipe)" % (mods, path, match(path)))
    print("ok %s %s: %d configs, %d matchers as Megatron-LM reads them" %
          (recipe, mods, len(configs), len(matchers)))


def main():
    for recipe, mods in CASES:
        out = subprocess.run([sys.argv[1], "--megatron-te-prec", recipe, mods],
                             capture_output=True, text=True)
        if out.returncode != 0:
            fail("%s %s: exit %d: %s" % (recipe, mods, out.returncode, out.stderr))
        check(recipe, mods, out.stdout)


if __name__ == "__main__":
    main()
