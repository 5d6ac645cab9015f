/*
 * attn_kernel.h — which fused attention kernel a stack runs on Hopper, and the
 * share of the H100's peak each reaches by shape (docs/cost-model.md "Flash
 * attention's rate", "Hopper by kernel and shape").
 *
 *   default  no kernel named: the H100 family's one figure (gemm_eff.h
 *            TSL_ATTN_H100_FWD_EFF / _BWD_EFF, 0.35 / 0.18), as before;
 *   flash2   FlashAttention-2 (PyTorch SDPA's flash backend: torchtitan's rows,
 *            December 2024 nightlies, pytorch#142132);
 *   cudnn    cuDNN's fused SDPA (Transformer Engine's FusedAttention, which TE
 *            prefers on sm90 from v1.7 on: attention.py `get_attention_backend`
 *            and before it DotProductAttention.forward).
 *
 * The shares: Shah et al. 2024 (FlashAttention-3, arXiv:2407.08608), Figs. 5–6,
 * H100 SXM5, bf16, batch × sequence 16k tokens, hidden 2048, non-causal, the
 * TFLOP/s printed on the bars over 989 (the backward's FLOPs 2.5 × the
 * forward's, as Tessel counts them), at head dimensions 64 and 128 and
 * sequences 512–16k; linear in log2 of the keys between them and flat outside,
 * linear in the head dimension between 64 and 128 and flat outside. The causal
 * and occupancy rules of roofline.c apply on top, as to the one figure.
 *
 * Pure: no allocation, no I/O.
 */
#ifndef TSL_ATTN_KERNEL_H
#define TSL_ATTN_KERNEL_H

#include "err.h"

#include <stdbool.h>
#include <stdint.h>

typedef enum tsl_attn_kernel {
    TSL_ATTN_KERNEL_DEFAULT = 0, /* the GPU family's one figure */
    TSL_ATTN_KERNEL_FLASH2 = 1,  /* FlashAttention-2 */
    TSL_ATTN_KERNEL_CUDNN = 2,   /* cuDNN's fused SDPA (TE FusedAttention) */
    TSL_ATTN_KERNEL_COUNT = 3
} tsl_attn_kernel_t;

/* "flash2" or "cudnn" (or "default"), case-insensitive, or the kernel's number
 * ("1", "2"; "0") → the kernel; -1 for anything else. One rule for plan and eval
 * --attn-kernel. */
int tsl_attn_kernel_parse(const char *name);

/* 0 where `kernel` is one (0 to 2), else -1 and err naming attn_kernel (a plan
 * document's field). */
int tsl_attn_kernel_ok(uint32_t kernel, tsl_err_t *err);

/* The kernel's name ("default", "flash2", "cudnn"); "?" out of range. */
const char *tsl_attn_kernel_name(uint32_t kernel);

/* The kernel's unmasked share of the H100's dense bf16 peak, forward or backward,
 * at head dimension hd and `keys` keys per query (the sequence of the published
 * sweep); 0 for the default kernel or one out of range (the caller keeps the GPU
 * family's figure). */
double tsl_attn_hopper_share(uint32_t kernel, bool bwd, double hd, double keys);

#endif
