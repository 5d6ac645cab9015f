/*
 * export_megatron_prec.c — a plan's per-module precision (plan.h module_prec,
 * planner/module_prec.h) as the YAML file Megatron-LM's --te-precision-config-file
 * names (docs/exports.md "megatron").
 *
 * The schema is the reader's at Megatron-LM d98e8a64dd: training/argument_utils.py
 * hands the path to quantization/utils.py load_quantization_recipe, which
 * quant_config.py RecipeConfig.from_yaml_file reads with yaml.SafeLoader: a `configs`
 * mapping of named configs and an ordered `matchers` mapping, each matcher `enabled`
 * (default false: left out, it matches nothing), `type` "glob" (the only one built),
 * `pattern` (fnmatch against the module path named_modules() gives, e.g.
 * decoder.layers.3.self_attention.linear_qkv) and `config`, first match wins.
 * extensions/transformer_engine.py TEQuantizationParams reads a config: exactly the
 * keys transformer_engine_config_type "TEQuantizationParams" and training_recipe,
 * whose TEQuantizationRecipe takes fp8_quantization_recipe (tensorwise, blockwise,
 * mxfp8; delayed refused) or fp4_quantization_recipe (nvfp4), or neither (bf16:
 * autocast off), and fp8_format (default "e4m3"; written "hybrid", as the export's
 * --fp8-format). Unknown keys raise ValueError.
 *
 * The export is one text of launch arguments; the file travels in it as comment
 * lines that start with "#| " (grep -v '^#' leaves them out of the line), with the
 * sed line that writes it in the comment above them.
 */
#include <stdbool.h>

#include "export.h"
#include "module_prec.h"

/* Each module's path under a layer in Megatron-core (named_modules() of GPTModel /
 * HybridModel at d98e8a6): the leaf under its parent, so that a dense MLP's linear_fc1
 * (…mlp.linear_fc1) does not take the shared experts' (…mlp.shared_experts.linear_fc1)
 * or the routed experts' (…mlp.experts.linear_fc1, …mlp.experts.local_experts.0.linear_fc1),
 * which module_prec.h leaves at the recipe; the attributes are transformer_layer.py's
 * self_attention and mlp, mamba_layer.py's mixer and moe_layer.py's latent projections.
 * The file's glob is "*." and the leaf: the leading '*' takes the decoder's layers and
 * the MTP depths' alike. */
static const char *const leaves[TSL_MODULE_COUNT] = {
    [TSL_MODULE_LINEAR_QKV] = "self_attention.linear_qkv",
    [TSL_MODULE_LINEAR_PROJ] = "self_attention.linear_proj",
    [TSL_MODULE_LINEAR_FC1] = "mlp.linear_fc1",
    [TSL_MODULE_LINEAR_FC2] = "mlp.linear_fc2",
    [TSL_MODULE_IN_PROJ] = "mixer.in_proj",
    [TSL_MODULE_OUT_PROJ] = "mixer.out_proj",
    [TSL_MODULE_FC1_LATENT] = "mlp.fc1_latent_proj",
    [TSL_MODULE_FC2_LATENT] = "mlp.fc2_latent_proj",
};

const char *tsl_export_megatron_prec_leaf(uint32_t m)
{
    return m < TSL_MODULE_COUNT ? leaves[m] : NULL;
}

/* One config a recipe, named as the recipe (bf16, tensorwise, ..., nvfp4). */
static void write_config(uint32_t recipe, FILE *out)
{
    const char *name = tsl_fp8_recipe_name(recipe);
    fprintf(out,
            "#|   %s:\n#|     transformer_engine_config_type: \"TEQuantizationParams\"\n"
            "#|     training_recipe:%s\n",
            name, recipe == TSL_FP8_NONE ? " {}" : "");
    if (recipe == TSL_FP8_NVFP4)
        fputs("#|       fp4_quantization_recipe: \"nvfp4\"\n", out);
    else if (recipe != TSL_FP8_NONE)
        fprintf(out, "#|       fp8_quantization_recipe: \"%s\"\n#|       fp8_format: \"hybrid\"\n",
                name);
}

void tsl_export_megatron_prec(const tsl_plan_t *p, FILE *out)
{
    if (!p->module_prec)
        return;
    char list[160];
    tsl_module_prec_format(p->module_prec, list, sizeof list);
    fprintf(out,
            "# per-module precision (module_precision %s):\n"
            "# Megatron-LM reads it from --te-precision-config-file " TSL_EXPORT_TE_PREC_FILE
            ", the lines\n# below that start with '#| '; write it where the run starts with\n"
            "#   sed -n 's/^#| //p' THIS_FILE > " TSL_EXPORT_TE_PREC_FILE "\n#| configs:\n",
            list);
    bool used[TSL_FP8_COUNT] = {false};
    uint32_t r;
    for (uint32_t m = 0; m < TSL_MODULE_COUNT; m++)
        if (tsl_module_prec_override(p->module_prec, m, &r))
            used[r] = true;
    for (r = 0; r < TSL_FP8_COUNT; r++)
        if (used[r])
            write_config(r, out);
    fputs("#| matchers:\n", out);
    for (uint32_t m = 0; m < TSL_MODULE_COUNT; m++)
        if (tsl_module_prec_override(p->module_prec, m, &r))
            fprintf(out,
                    "#|   %s:\n#|     config: \"%s\"\n#|     type: \"glob\"\n"
                    "#|     pattern: \"*.%s\"\n#|     enabled: true\n",
                    tsl_module_name(m), tsl_fp8_recipe_name(r), leaves[m]);
}
