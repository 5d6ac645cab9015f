/*
 * module_prec.h — per-module precision: the linears a plan runs at another precision
 * than its recipe (Megatron-core's per-module quantization config, TransformerConfig
 * quant_recipe: megatron/core/quantization/quant_config.py and
 * extensions/transformer_engine.py TEQuantizationParams at Megatron-LM 44151194).
 *
 * Megatron-core matches each TE linear's module path (hybrid_model.py / gpt_model.py
 * finish_init over named_modules) against the config's glob matchers, first match wins;
 * the matched module enters its own TE autocast around its forward (bf16: autocast
 * off; an FP8 or FP4 recipe: that recipe) and TE's backward runs its dgrad and wgrad
 * at the forward's precision. Only inside a quantized context: TEQuantizationRecipe's
 * override_quantized_autocast (default true) applies, override_nonquantized_autocast
 * (default false) does not, so a block kept bf16 (bf16_layers_start / _end) or an MTP
 * depth outside FP4 stays bf16. Delayed scaling is refused by the config ("not in scope
 * of te per-module quantization config").
 *
 * The modules, by the leaf of the path Megatron-core names them with:
 *   linear_qkv       a self-attention's QKV projection (attention.py)
 *   linear_proj      its output projection (latent attention's too)
 *   linear_fc1       a dense MLP's FFN-in (not the shared or routed experts')
 *   linear_fc2       a dense MLP's FFN-out
 *   in_proj          a Mamba mixer's input projection (ssm/mamba_mixer.py)
 *   out_proj         a Mamba mixer's output projection
 *   fc1_latent_proj  a latent MoE's projection to the latent width (moe_layer.py)
 *   fc2_latent_proj  its projection back to the hidden width
 *
 * Encoding (the plan field module_precision, tessel.v1 PlanFigures 148; the knob
 * tsl_cost_knobs_t.module_prec): four bits a module, module i at bits 4i..4i+3, the
 * value 1 + tsl_fp8_recipe_t of its precision (1 bf16, 3 tensorwise, 4 blockwise,
 * 5 mxfp8, 6 nvfp4); 0: the plan's recipe. Written as the person types it:
 * "linear_qkv=bf16,out_proj=mxfp8".
 */
#ifndef TSL_MODULE_PREC_H
#define TSL_MODULE_PREC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

typedef enum tsl_module {
    TSL_MODULE_LINEAR_QKV = 0,
    TSL_MODULE_LINEAR_PROJ = 1,
    TSL_MODULE_LINEAR_FC1 = 2,
    TSL_MODULE_LINEAR_FC2 = 3,
    TSL_MODULE_IN_PROJ = 4,
    TSL_MODULE_OUT_PROJ = 5,
    TSL_MODULE_FC1_LATENT = 6,
    TSL_MODULE_FC2_LATENT = 7,
    TSL_MODULE_COUNT = 8
} tsl_module_t;

/* The name of module m above; NULL out of range. */
const char *tsl_module_name(uint32_t m);

/* The recipe (tsl_fp8_recipe_t) module m runs at in a layer whose own recipe is
 * `recipe`: the override where prec has one and the layer is quantized (recipe not
 * NONE), else recipe. */
uint32_t tsl_module_prec_recipe(uint32_t prec, uint32_t m, uint32_t recipe);

/* Whether prec sets module m's precision (a nibble 1 .. TSL_FP8_COUNT); that precision
 * into *recipe (tsl_fp8_recipe_t: TSL_FP8_NONE for bf16) where it does. */
bool tsl_module_prec_override(uint32_t prec, uint32_t m, uint32_t *recipe);

/* Parse "module=precision,..." into *prec (replaced). 0, or -1 with err naming the
 * field (module_precision) and the item: an empty list or item, an unknown module or
 * precision, delayed, a module named twice. */
int tsl_module_prec_parse(const char *list, uint32_t *prec, tsl_err_t *err);

/* 0, or -1 with err naming module_precision: a nibble that is no precision (7 and
 * above) or delayed's. */
int tsl_module_prec_check(uint32_t prec, tsl_err_t *err);

/* prec written as tsl_module_prec_parse reads it, into buf (snprintf's contract); the
 * length the whole list needs; "" for 0. */
size_t tsl_module_prec_format(uint32_t prec, char *buf, size_t cap);

#endif
