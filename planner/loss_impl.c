/*
 * loss_impl.c — the figures of loss_impl.h.
 */
#include "loss_impl.h"

#include <string.h>

static const char *const impl_names[TSL_LOSS_IMPL_COUNT] = {
    "exec",          "torch",          "megatron", "te",
    "torch-compile", "fused-xentropy", "composer", "megatron-fused"};

/* kept, fwd, bwd bytes per logit (loss_impl.h says where each comes from) */
static const double impl_bytes[TSL_LOSS_IMPL_COUNT][3] = {
    [TSL_LOSS_EXEC] = {4.0, 2.0, 2.0},          [TSL_LOSS_TORCH] = {4.0, 6.0, 8.0},
    [TSL_LOSS_MEGATRON] = {4.0, 2.0, 2.0},      [TSL_LOSS_TE] = {2.0, 0.0, 0.0},
    [TSL_LOSS_TORCH_COMPILE] = {2.0, 0.0, 2.0}, [TSL_LOSS_FUSED_XENTROPY] = {2.0, 0.0, 0.0},
    [TSL_LOSS_COMPOSER] = {2.0, 0.0, 2.0},      [TSL_LOSS_MEGATRON_FUSED] = {4.0, 2.0, 6.0},
};

/* The loss's time: forward bytes, kernels, backward bytes, kernels per logit
 * (loss_impl.h "The loss's time" says where each comes from); torch under
 * loss_parallel (tp > 1) apart. */
static const double impl_traffic[TSL_LOSS_IMPL_COUNT][4] = {
    [TSL_LOSS_EXEC] = {10.0, 3.0, 6.0, 1.0},
    [TSL_LOSS_TORCH] = {22.0, 2.0, 26.0, 3.0},
    [TSL_LOSS_MEGATRON] = {38.0, 6.0, 14.0, 2.0},
    [TSL_LOSS_TE] = {6.0, 2.0, 4.0, 1.0},
    [TSL_LOSS_TORCH_COMPILE] = {4.0, 1.0, 4.0, 1.0},
    [TSL_LOSS_FUSED_XENTROPY] = {4.0, 1.0, 4.0, 1.0},
    /* fused-xentropy's, and after the backward Composer's two train metrics, each torch's
       cross-entropy forward over the bf16 logits under autocast (22 B: the cast and
       log_softmax) with its nll_loss kernel */
    [TSL_LOSS_COMPOSER] = {4.0, 1.0, 4.0 + 2.0 * 22.0, 1.0 + 2.0 * 3.0},
    /* the compiled steps: max with the fp32 store, exp-sum in place, div_; the softmax's
       clone, then its product stored back with the bf16 gradient */
    [TSL_LOSS_MEGATRON_FUSED] = {6.0 + 8.0 + 8.0, 3.0, 8.0 + 10.0, 2.0},
};
static const double torch_loss_parallel_traffic[4] = {38.0, 6.0, 38.0, 5.0};

const char *tsl_loss_impl_name(uint32_t impl)
{
    return impl < TSL_LOSS_IMPL_COUNT ? impl_names[impl] : NULL;
}

int tsl_loss_impl_parse(const char *name)
{
    for (int i = 0; name != NULL && i < (int)TSL_LOSS_IMPL_COUNT; i++)
        if (strcmp(name, impl_names[i]) == 0)
            return i;
    return -1;
}

int tsl_loss_impl_ok(uint32_t impl, bool autocast, tsl_err_t *err)
{
    if (impl >= TSL_LOSS_IMPL_COUNT)
        return tsl_err_set(
            err,
            "loss_impl: %u is not an implementation (0 exec, 1 torch, 2 megatron, 3 te, "
            "4 torch-compile, 5 fused-xentropy, 6 composer, 7 megatron-fused)",
            impl);
    if (autocast && impl != TSL_LOSS_EXEC && impl != TSL_LOSS_TORCH)
        return tsl_err_set(err,
                           "loss_impl: autocast prices a script's own loss, torch's cross_entropy "
                           "over logits.float() (loss_impl torch), not %s",
                           impl_names[impl]);
    return 0;
}

/* torch's fwd and bwd under loss_parallel (tp > 1; loss_impl.h): the DTensor
 * handlers' eager decomposition, 4 B more of fp32 each way than ATen's kernels */
static const double torch_loss_parallel_bytes[2] = {10.0, 12.0};

static double figure(uint32_t impl, int which)
{
    return impl_bytes[impl < TSL_LOSS_IMPL_COUNT ? impl : TSL_LOSS_EXEC][which];
}

double tsl_loss_kept_bytes(uint32_t impl)
{
    return figure(impl, 0);
}

bool tsl_loss_keeps_logits(uint32_t impl)
{
    return impl == TSL_LOSS_TORCH_COMPILE || impl == TSL_LOSS_FUSED_XENTROPY ||
           impl == TSL_LOSS_COMPOSER;
}

bool tsl_loss_pp_holds_logits(uint32_t impl)
{
    return impl == TSL_LOSS_TORCH || impl == TSL_LOSS_TORCH_COMPILE;
}

double tsl_loss_fwd_bytes(uint32_t impl, uint32_t tp)
{
    return impl == TSL_LOSS_TORCH && tp > 1 ? torch_loss_parallel_bytes[0] : figure(impl, 1);
}

double tsl_loss_bwd_bytes(uint32_t impl, uint32_t tp)
{
    return impl == TSL_LOSS_TORCH && tp > 1 ? torch_loss_parallel_bytes[1] : figure(impl, 2);
}

static const double *traffic_row(uint32_t impl, uint32_t tp)
{
    if (impl == TSL_LOSS_TORCH && tp > 1)
        return torch_loss_parallel_traffic;
    return impl_traffic[impl < TSL_LOSS_IMPL_COUNT ? impl : TSL_LOSS_EXEC];
}

double tsl_loss_traffic_bytes(uint32_t impl, uint32_t tp, bool bwd)
{
    return traffic_row(impl, tp)[bwd ? 2 : 0];
}

uint32_t tsl_loss_kernels(uint32_t impl, uint32_t tp, bool bwd)
{
    return (uint32_t)traffic_row(impl, tp)[bwd ? 3 : 1];
}
