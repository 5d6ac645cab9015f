/*
 * megatron_te_prec.h — Megatron-LM's --te-precision-config-file read back into a
 * plan's per-module precision (planner/module_prec.h), for --megatron-args
 * (eval_cfg.c). The writer is export_megatron_prec.c; docs/tesselctl.md
 * "--megatron-args" states the rules.
 *
 * Megatron-LM d98e8a64dd reads the file with PyYAML's SafeLoader
 * (quantization/quant_config.py RecipeConfig.from_yaml_file): a `configs` mapping of
 * named configs and an ordered `matchers` mapping; each module Megatron-core builds
 * takes the config of the first enabled glob matcher whose pattern matches its path
 * (fnmatch over named_modules(): decoder.layers.3.self_attention.linear_qkv), none
 * where no matcher does (the run's recipe). Read here the same way, over the paths of
 * every layer index below TSL_MODEL_MAX_LAYERS and, where the line has MTP depths that
 * run quantized, of those depths (mtp.layers.D.mtp_model_layer[.layers.J]....).
 *
 * Refused, naming the file, the line and the field: a YAML syntax error, a document
 * that is not the schema (an unknown key, a matcher without type, pattern or config,
 * a type other than glob, an enabled that is not a boolean), a config name that
 * `configs` does not hold, a config that extensions/transformer_engine.py
 * TEQuantizationParams refuses (delayed, fp8 and fp4 both), one Tessel cannot price
 * (custom recipes, fp8_param / fp4_param, override_nonquantized_autocast,
 * tp_only_amax_red), a module that takes different precisions in different layers, and
 * a module Tessel prices at the run's recipe only (routed or shared experts, latent
 * attention's projections, the LM head, the MTP projection) that a matcher gives
 * another precision. The check knows no model: a pattern that would take the experts
 * is refused on a dense model too.
 */
#ifndef TSL_MEGATRON_TE_PREC_H
#define TSL_MEGATRON_TE_PREC_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

/* The per-module precision (module_prec.h encoding) the YAML text (len bytes) gives a
 * run whose recipe is `recipe` (tsl_fp8_recipe_t) with mtp_depths MTP depths, into
 * *prec; `what` names the text in messages (a path). A config that keeps the run's
 * recipe (override_quantized_autocast false) sets no nibble. 0, or -1 with err. */
int tsl_megatron_te_prec_parse(const char *text, size_t len, const char *what, uint32_t recipe,
                               uint32_t mtp_depths, uint32_t *prec, tsl_err_t *err);

/* As tsl_megatron_te_prec_parse on the file at path (relative to the current
 * directory); a file that cannot be read fails naming it and why. */
int tsl_megatron_te_prec_read(const char *path, uint32_t recipe, uint32_t mtp_depths,
                              uint32_t *prec, tsl_err_t *err);

/* The lines of an argument text that start with "#| " (an `--export megatron` text's
 * te_precision.yaml, as `sed -n 's/^#| //p'` writes it), without that prefix, into a
 * new string (*out, the caller frees it); *out NULL where there are none. 0, or -1
 * when out of memory. */
int tsl_megatron_te_prec_embedded(const char *args, char **out);

#endif
