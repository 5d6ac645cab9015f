/*
 * eval_toml_keys.c — torchtitan's TOML sections and keys (eval_toml_keys.h).
 *
 * The lists are the union over the history of torchtitan/config_manager.py and
 * torchtitan/config/job_config.py (pytorch/torchtitan, every commit up to
 * 9810191bb~1, the last with the TOML form): the dataclass fields under
 * JobConfig and the argparse flags "--section.key" before them, so that a file
 * any of those versions accepted is accepted here.
 */
#include <stdio.h>
#include <string.h>

#include "eval_toml_keys.h"
#include "nearest.h"

typedef struct tt_section_keys {
    const char *section, *keys; /* keys: space-separated */
} tt_section_keys_t;

static const char *const tt_sections[] = {
    "activation_checkpoint",
    "checkpoint",
    "comm",
    "compile",
    "debug",
    "estimate",
    "experimental",
    "fault_tolerance",
    "float8",
    "job",
    "lr_scheduler",
    "memory_estimation",
    "metrics",
    "model",
    "mx",
    "optimizer",
    "parallelism",
    "profiling",
    "quantize",
    "quantize.dense",
    "quantize.dense.float8",
    "quantize.dense.mx",
    "quantize.grouped_mm",
    "quantize.grouped_mm.float8",
    "quantize.grouped_mm.mx",
    "quantize.linear",
    "quantize.linear.float8",
    "quantize.linear.mx",
    "quantize.moe",
    "quantize.moe.float8",
    "quantize.moe.mx",
    "training",
    "training.dataloader",
    "validation",
    "validation.dataloader",
};

static const tt_section_keys_t tt_keys[] = {
    {"activation_checkpoint", "debug determinism_check early_stop memory_budget mode "
                              "per_op_sac_force_recompute_mm_shapes_by_fqns preserve_rng_state "
                              "selective_ac_option visualize_memory_budget_pareto"},
    {"compile", "backend components enable"},
    {"float8", "emulate enable_float8_linear enable_fsdp_float8_all_gather filter_fqns "
               "force_recompute_fp8_weight_in_bwd moe_fqns_prototype "
               "precompute_float8_dynamic_scale_for_fsdp recipe_name scaling_type_grad_output "
               "scaling_type_input scaling_type_weight"},
    {"model", "attn_mask_type converters flavor hf_assets_path name norm_type "
              "print_after_conversion tokenizer_path use_flex_attn"},
    {"parallelism",
     "context_parallel_degree context_parallel_load_balancer context_parallel_rotate_method "
     "data_parallel_replicate_degree data_parallel_shard_degree disable_loss_parallel "
     "enable_async_tensor_parallel enable_compiled_autograd expert_parallel_comm_backend "
     "expert_parallel_degree expert_tensor_parallel_degree fsdp_reshard_after_forward "
     "module_fqns_per_model_part pipeline_parallel_degree "
     "pipeline_parallel_expert_parallel_overlap pipeline_parallel_first_stage_less_layers "
     "pipeline_parallel_last_stage_less_layers pipeline_parallel_layers_per_stage "
     "pipeline_parallel_microbatch_size pipeline_parallel_microbatches pipeline_parallel_schedule "
     "pipeline_parallel_schedule_csv pipeline_parallel_split_points tensor_parallel_degree"},
    {"quantize.grouped_mm.float8", "fqns"},
    {"quantize.grouped_mm.mx", "fqns recipe_name"},
    {"quantize.linear.float8", "emulate enable_fsdp_float8_all_gather filter_fqns "
                               "precompute_float8_dynamic_scale_for_fsdp recipe_name"},
    {"quantize.linear.mx", "filter_fqns mxfp8_dim1_cast_kernel_choice recipe_name"},
    {"training",
     "batch_size compile data_parallel_degree data_parallel_replicate_degree "
     "data_parallel_shard_degree data_parallel_type dataloader dataset dataset_path "
     "debug_moe_force_load_balance deterministic disable_loss_parallel dtype enable_cpu_offload "
     "enable_float8_linear enable_fp8_linear enable_fsdp_float8_all_gather "
     "enable_fsdp_fp8_all_gather enable_loss_parallel float8_scaling_type_grad_output "
     "float8_scaling_type_input float8_scaling_type_weight fp8_linear fsdp_reshard_after_forward "
     "gc_debug gc_freq global_batch_size local_batch_size max_norm mixed_precision_param "
     "mixed_precision_reduce pipeline_parallel_degree precompute_float8_dynamic_scale_for_fsdp "
     "seed seq_len steps tensor_parallel_degree warmup_steps"},
};

int tsl_tt_check_section(const char *section, uint32_t line, tsl_err_t *err)
{
    char all[1024] = "", near[64];
    for (size_t i = 0; i < sizeof tt_sections / sizeof tt_sections[0]; i++) {
        if (strcmp(section, tt_sections[i]) == 0)
            return 0;
        size_t n = strlen(all);
        snprintf(all + n, sizeof all - n, "%s%s", n ? " " : "", tt_sections[i]);
    }
    tsl_nearest_word(section, all, near, sizeof near);
    if (near[0])
        return tsl_err_set(err,
                           "torchtitan: line %u: [%s] is not a torchtitan section (did you "
                           "mean [%s]?)",
                           line, section, near);
    return tsl_err_set(err, "torchtitan: line %u: [%s] is not a torchtitan section (%s)", line,
                       section, all);
}

int tsl_tt_check_key(const char *section, const char *key, uint32_t line, tsl_err_t *err)
{
    for (size_t i = 0; i < sizeof tt_keys / sizeof tt_keys[0]; i++) {
        if (strcmp(section, tt_keys[i].section) != 0)
            continue;
        size_t n = strlen(key);
        for (const char *w = tt_keys[i].keys; *w;) {
            size_t wn = strcspn(w, " ");
            if (wn == n && strncmp(w, key, n) == 0)
                return 0;
            w += wn + (w[wn] == ' ');
        }
        char near[64];
        tsl_nearest_word(key, tt_keys[i].keys, near, sizeof near);
        if (near[0])
            return tsl_err_set(err,
                               "torchtitan: line %u: [%s] %s is not a key of the section (did "
                               "you mean %s?)",
                               line, section, key, near);
        /* the message holds TSL_ERR_MAX bytes: the longest lists are cut */
        return tsl_err_set(err,
                           "torchtitan: line %u: [%s] %s is not a key of the section (its "
                           "keys: %.300s%s)",
                           line, section, key, tt_keys[i].keys,
                           strlen(tt_keys[i].keys) > 300 ? " ..." : "");
    }
    return 0; /* a section Tessel does not read */
}
