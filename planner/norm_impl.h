/*
 * norm_impl.h — which fused LayerNorm kernels a stack runs (plan field norm_impl).
 *
 * The roofline prices a fused norm (roofline.h "TE norms") as TE's: one kernel
 * forward; backward the fused kernel (read dY and X, write dX, the dγ/dβ partials
 * per CTA) and the partials' finalize, TSL_ROOFLINE_TE_NORM_BWD_KERNELS. Stacks of
 * 2021 ran apex's kernel instead, whose backward splits the weight gradient from
 * the input gradient (docs/cost-model.md "apex's LayerNorm backward"):
 *
 *   te (0)    TE's layernorm_fwd / layernorm_bwd (and rmsnorm_*), apex contrib's
 *             persistent FastLayerNorm, its ancestor (Megatron-LM from a2fdcdf061,
 *             2021-10-08, for the hidden sizes persist_ln_hidden_sizes lists):
 *             what every plan was priced with before.
 *   apex (1)  apex's fused_layer_norm_cuda (NVIDIA/apex 6424da3b
 *             csrc/layer_norm_cuda_kernel.cu HostLayerNormGradient, l.849-945) and
 *             Megatron-LM's copy of it, MixedFusedLayerNorm over
 *             fused_mix_prec_layer_norm_cuda (6985e58938
 *             megatron/fused_kernels/layer_norm_cuda_kernel.cu l.719-783):
 *             forward one kernel (cuApplyLayerNorm), as TE's; backward three —
 *             cuComputePartGradGammaBeta reads dY and X (4 B an element in 16-bit)
 *             into 16 rows of fp32 partials of dγ and dβ, cuComputeGradGammaBeta
 *             sums them, cuComputeGradInput reads dY and X again and writes dX
 *             (6 B). One launch and 4 B an element more than te's; the partials
 *             (2 x 16 x h fp32, written once and read once) are left out, as
 *             TE's are.
 *
 * PyTorch's native layer_norm is not a value: its kernels were not read against
 * the rows here (autocast's norm has its own figures, roofline.h).
 */
#ifndef TSL_NORM_IMPL_H
#define TSL_NORM_IMPL_H

#include "err.h"

#include <stdint.h>

typedef enum tsl_norm_impl {
    TSL_NORM_IMPL_TE = 0,
    TSL_NORM_IMPL_APEX = 1,
    TSL_NORM_IMPL_COUNT = 2
} tsl_norm_impl_t;

/* Kernels an apex LayerNorm's backward launches beyond te's two (cuComputePartGradGammaBeta). */
#define TSL_NORM_APEX_EXTRA_BWD_KERNELS 1u
/* 16-bit bytes an element that kernel reads (dY and X) beyond te's backward. */
#define TSL_NORM_APEX_EXTRA_BWD_BYTES 4.0

/* "te", "apex"; NULL out of range. */
const char *tsl_norm_impl_name(uint32_t impl);
/* The implementation of a name above; -1 for none. */
int tsl_norm_impl_parse(const char *name);
/* 0 when impl names one, else -1 with err naming the field norm_impl. */
int tsl_norm_impl_ok(uint32_t impl, tsl_err_t *err);

#endif
