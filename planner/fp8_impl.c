/*
 * fp8_impl.c — the rules of fp8_impl.h.
 */
#include "fp8_impl.h"
#include "roofline.h"

#include <string.h>

static const char *const impl_names[TSL_FP8_IMPL_COUNT] = {"te", "torchao"};

const char *tsl_fp8_impl_name(uint32_t impl)
{
    return impl < TSL_FP8_IMPL_COUNT ? impl_names[impl] : NULL;
}

int tsl_fp8_impl_parse(const char *name)
{
    for (int i = 0; name != NULL && i < (int)TSL_FP8_IMPL_COUNT; i++)
        if (strcmp(name, impl_names[i]) == 0)
            return i;
    return -1;
}

/* NVTE_DP_AMAX_REDUCE_INTERVAL picks the group delayed scaling's amax histories are
 * reduced over (TE da30634a6 fp8.py global_amax_reduction); no other recipe keeps one. */
int tsl_fp8_amax_tp_only_ok(bool on, uint32_t recipe, tsl_err_t *err)
{
    if (!on || recipe == TSL_FP8_DELAYED)
        return 0;
    return tsl_err_set(err,
                       "fp8_amax_tp_only: TE's amax reduction over TP "
                       "(NVTE_DP_AMAX_REDUCE_INTERVAL=0) is delayed scaling's (--fp8 delayed); "
                       "%s",
                       recipe == TSL_FP8_NONE ? "no FP8 recipe is priced"
                                              : "another recipe is priced");
}

/* TE's fp8_dpa rides on the linears' recipe (Megatron-LM 00225507 fp8_utils.py: delayed,
 * current and MXFP8 scaling take fp8_dpa); TE v2.16's get_attention_backend disables
 * FusedAttention for Float8BlockScaling and NVFP4BlockScaling, and in FP8 every other
 * backend too (NVFP4's attention runs only with NVTE_DPA_FP8_RECIPE switching it). */
int tsl_fp8_dpa_ok(bool on, uint32_t recipe, uint32_t impl, tsl_err_t *err)
{
    if (on && recipe != TSL_FP8_NONE && impl == TSL_FP8_IMPL_TORCHAO)
        return tsl_err_set(err, "fp8_dpa: FP8 attention is Transformer Engine's; torchao "
                                "(fp8_impl torchao) quantises the linears only");
    if (!on || (recipe != TSL_FP8_NONE && recipe != TSL_FP8_BLOCKWISE && recipe != TSL_FP8_NVFP4))
        return 0;
    return tsl_err_set(err, "fp8_dpa: FP8 attention rides on an FP8 recipe (--fp8); %s",
                       recipe == TSL_FP8_NONE
                           ? "no FP8 recipe is priced"
                           : "TE runs no FP8 attention under blockwise or nvfp4");
}

/* torchao's Float8Linear runs dynamic (tensorwise) scaling and its MX linear
 * MXFP8; TE's 1×128 / 128×128 blocks and delayed scaling are TE's. */
int tsl_fp8_impl_ok(uint32_t recipe, uint32_t impl, tsl_err_t *err)
{
    if (impl >= TSL_FP8_IMPL_COUNT)
        return tsl_err_set(err, "fp8_impl: %u is not an implementation (0 te, 1 torchao)", impl);
    if (impl == TSL_FP8_IMPL_TORCHAO && recipe != TSL_FP8_NONE && recipe != TSL_FP8_TENSORWISE &&
        recipe != TSL_FP8_MXFP8)
        return tsl_err_set(err,
                           "fp8_impl: torchao runs tensorwise and mxfp8, not %s (a Transformer "
                           "Engine recipe: fp8_impl te)",
                           recipe == TSL_FP8_DELAYED     ? "delayed"
                           : recipe == TSL_FP8_BLOCKWISE ? "blockwise"
                           : recipe == TSL_FP8_NVFP4     ? "nvfp4"
                                                         : "this recipe");
    return 0;
}

/* TE's current scaling (Float8CurrentScalingQuantizer): the recipe whose casts run
 * the amax, zero-amax and scale kernels and whose amax TE reduces over TP. */
static bool te_current_scaling(uint32_t recipe, uint32_t impl)
{
    return recipe == TSL_FP8_TENSORWISE && impl == TSL_FP8_IMPL_TE;
}

bool tsl_fp8_impl_caches(uint32_t impl)
{
    return impl == TSL_FP8_IMPL_TE;
}

uint32_t tsl_fp8_impl_scale_kernels(uint32_t recipe, uint32_t impl)
{
    return te_current_scaling(recipe, impl) ? 1u : 0u;
}

bool tsl_fp8_impl_split_per_tensor(uint32_t recipe, uint32_t impl)
{
    return impl == TSL_FP8_IMPL_TE &&
           (recipe == TSL_FP8_TENSORWISE || recipe == TSL_FP8_BLOCKWISE || recipe == TSL_FP8_MXFP8);
}

uint32_t tsl_fp8_impl_zero_amax_kernels(uint32_t recipe, uint32_t impl)
{
    return te_current_scaling(recipe, impl) ? 1u : 0u;
}

bool tsl_fp8_impl_amax_reduced(uint32_t recipe, uint32_t impl)
{
    /* NVFP4's per-tensor FP32 scale needs the amax too: TE's NVFP4Quantizer reduces
     * it as current scaling does (cost model 200) */
    return te_current_scaling(recipe, impl) || (recipe == TSL_FP8_NVFP4 && impl == TSL_FP8_IMPL_TE);
}

double tsl_fp8_impl_fused_amax_bytes(uint32_t recipe, uint32_t impl)
{
    return te_current_scaling(recipe, impl) ? 2.0 : 0.0;
}

uint32_t tsl_fp8_impl_fused_amax_kernels(uint32_t recipe, uint32_t impl)
{
    return te_current_scaling(recipe, impl) ? 1u : 0u;
}

bool tsl_fp8_impl_recasts_input(uint32_t recipe, uint32_t impl)
{
    return impl == TSL_FP8_IMPL_TORCHAO && recipe != TSL_FP8_TENSORWISE;
}

/* torchao tensorwise: the amax pass and the rowwise cast forward, the columnwise
 * cast backward (fp8_impl.h); bytes of bf16 read and FP8 written. */
#define TORCHAO_W_AMAX_BYTES 2.0
#define TORCHAO_W_CAST_BYTES 3.0

double tsl_fp8_impl_weight_cast_bytes(uint32_t recipe, uint32_t impl, bool bwd, uint32_t *kernels)
{
    bool float8_linear = impl == TSL_FP8_IMPL_TORCHAO && recipe == TSL_FP8_TENSORWISE;
    if (kernels)
        *kernels = !float8_linear ? 0u : bwd ? 1u : 2u;
    if (!float8_linear)
        return 0.0;
    return bwd ? TORCHAO_W_CAST_BYTES : TORCHAO_W_AMAX_BYTES + TORCHAO_W_CAST_BYTES;
}

double tsl_fp8_impl_sp_gather_bytes(uint32_t recipe, uint32_t impl, bool grad)
{
    if (recipe == TSL_FP8_NONE || recipe >= TSL_FP8_COUNT)
        return 2.0;
    if (impl == TSL_FP8_IMPL_TORCHAO)
        return recipe == TSL_FP8_TENSORWISE ? 1.0 : 2.0;
    /* one copy with its scales: an fp32 per 1x128, an E8M0 per 32, nvfp4's two E2M1
     * per byte and an E4M3 per 16 (roofline.h tsl_fp8_copy_bytes) */
    double copy = recipe == TSL_FP8_BLOCKWISE ? 1.0 + 4.0 / 128.0
                  : recipe == TSL_FP8_MXFP8   ? 1.0 + 1.0 / 32.0
                  : recipe == TSL_FP8_NVFP4   ? 0.5 + 1.0 / 16.0
                                              : 1.0;
    bool per_tensor = recipe == TSL_FP8_DELAYED || recipe == TSL_FP8_TENSORWISE;
    return grad && !per_tensor ? 2.0 * copy : copy;
}
