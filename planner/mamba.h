/*
 * mamba.h — a Mamba-2 mixer layer (TSL_LAYER_MAMBA) as Megatron-LM's MambaLayer
 * runs it in a hybrid model (Nemotron-H, Nemotron 3): its shape, parameters,
 * forward FLOPs, the activations its kernels keep for the backward, and its
 * tensor-parallel split. docs/cost-model.md "Mamba-2 layers" has each term with
 * its source; docs/models.md how a hybrid model is built.
 *
 * Sources: Megatron-LM megatron/core/ssm/mamba_mixer.py (MambaMixer.__init__,
 * _ssm_training: use_mem_eff_path, the default), mamba_layer.py (pre-norm fused
 * into in_proj: TELayerNormColumnParallelLinear), mamba_ssm
 * ops/triton/ssd_combined.py (MambaSplitConv1dScanCombinedFn: what it saves),
 * ops/triton/layernorm_gated.py (the grouped RMSNorm); the SSD algorithm of Dao &
 * Gu 2024, "Transformers are SSMs" (ICML 2024), Sec. 6 (the chunked algorithm:
 * intra-chunk quadratic part, chunk states, state passing, state-to-output).
 *
 * Shape (the layer's ssm_* fields; h = hidden, s = seq_len):
 *   H = ssm_heads, P = ssm_head_dim, d_i = H·P (the inner width), N = ssm_state,
 *   G = ssm_groups (B and C are shared by the H/G heads of a group), K = ssm_conv
 *   (the causal depthwise convolution's width, 4), Q = ssm_chunk (the SSD chunk,
 *   128). Width of in_proj's output: w_in = 2·d_i + 2·G·N + H (z, x, B, C, dt).
 *
 * Parameters (no linear biases: Megatron asserts bias=False; conv bias on):
 *   h (pre-norm, RMSNorm) + h·w_in (in_proj) + (d_i + 2·G·N)·(K + 1) (conv1d weight
 *   and bias over x, B, C) + 3·H (dt_bias, A_log, D per head) + d_i (the gated
 *   norm's scale) + d_i·h (out_proj)
 *
 * Forward FLOPs per sample (2 per multiply-add):
 *   in_proj   2·s·h·w_in
 *   conv1d    2·s·K·(d_i + 2·G·N)
 *   SSD       Dao & Gu 2024 Sec. 6, per token with chunks of Q:
 *               C·Bᵀ in each chunk, per group       2·Q·N·G
 *               (L ∘ C·Bᵀ)·X in each chunk, per head  2·Q·P·H
 *               chunk states Bᵀ·X, per head        2·N·P·H
 *               state passing over the chunks      2·N·P·H / Q
 *               states to outputs C·h, per head    2·N·P·H
 *             the causal mask's zeros counted (as attention's s·w: the MFU count)
 *   out_proj  2·s·d_i·h
 *   The elementwise work (softplus, exp, D skip, the silu gate, the norms) is not
 *   counted, as attention's softmax is not.
 *
 * Stashed for the backward, bytes per sample (bf16; Megatron's mem-eff path):
 *   replicated  4·s·h: the block input (the fused norm's) and the norm output
 *               in_proj keeps (as attention's; no dropout in these models)
 *   sharded     2·s·w_in (zxbcdt: in_proj's output, which the scan function keeps
 *               and from which its backward recomputes the conv), 2·s·d_i (out_x,
 *               the scan's ungated output), 2·s·d_i (the gated output the grouped
 *               RMSNorm keeps) + 4·s·G (its fp32 rstd per group), 2·s·d_i
 *               (out_proj's input)
 *   Under TP the w_in, d_i and G parts divide by t (heads and groups are split);
 *   the scan's chunk states and dA_cumsum are recomputed, not kept.
 *
 * TP: heads and groups split over the TP group; Megatron asserts nheads % tp == 0
 * and ngroups % tp == 0 (mamba_mixer.py): other degrees have no implementation.
 * One all-reduce of s·h per forward (out_proj, row-parallel), as attention's
 * (a reduce-scatter under sequence parallelism).
 * Recompute: Megatron's selective modules never touch a Mamba layer (the hybrid
 * block has only full recompute, hybrid_block.py); no module applies here.
 */
#ifndef TSL_MAMBA_H
#define TSL_MAMBA_H

#include <stdbool.h>
#include <stdint.h>

#include "err.h"
#include "model.h"

/* The figures above for one Mamba layer at TP 1. */
typedef struct tsl_mamba_figures {
    double params;
    double fwd_flops;   /* per sample, everything */
    double ssd_flops;   /* per sample, the SSD scan alone (part of fwd_flops) */
    double repl_bytes;  /* stash per sample, replicated over TP */
    double shard_bytes; /* stash per sample, divided by the TP degree */
} tsl_mamba_figures_t;

/* The inner width d_i = H·P and in_proj's output width w_in. */
double tsl_mamba_inner(const tsl_layer_t *l);
double tsl_mamba_in_width(const tsl_layer_t *l);

/* Checks the ssm_* fields of a MAMBA layer (kn: the kind's name for messages):
 * every width non-zero, H divisible by G. */
int tsl_mamba_check(const tsl_layer_t *l, const char *kn, tsl_err_t *err);

/* Fills f for l (a checked MAMBA layer). */
void tsl_mamba_figures(const tsl_layer_t *l, tsl_mamba_figures_t *f);

/* Whether a TP degree t splits l as Megatron can: t divides H and G. */
bool tsl_mamba_tp_fits(const tsl_layer_t *l, uint32_t t);

#endif
