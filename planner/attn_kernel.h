/*
 * attn_kernel.h — which fused attention kernel a stack runs, and the share of the
 * H100's or the A100's peak each reaches by shape (docs/cost-model.md "Flash
 * attention's rate", "Hopper by kernel and shape", "The A100 by kernel").
 *
 *   default  no kernel named: on Hopper the H100 family's one figure (gemm_eff.h
 *            TSL_ATTN_H100_FWD_EFF / _BWD_EFF, 0.35 / 0.18; the backward carried
 *            from its 1,024 measured keys along FlashAttention-2's published
 *            backward since cost model 172: tsl_attn_hopper_default_bwd_keys); on the
 *            A100 FlashAttention-2's shares by shape (below: what Megatron-LM and
 *            TE (FlashAttention-2 on sm80) and PyTorch SDPA run there);
 *   flash2   FlashAttention-2 (PyTorch SDPA's flash backend: torchtitan's rows,
 *            December 2024 nightlies, pytorch#142132);
 *   cudnn    cuDNN's fused SDPA (Transformer Engine's FusedAttention, which TE
 *            prefers on sm90 from v1.7 on: attention.py `get_attention_backend`
 *            and before it DotProductAttention.forward); on the A100, with no
 *            published A100 figure of its own, FlashAttention-2's (assumed);
 *   flash1   FlashAttention (v1, 2022-23), its CUDA kernel (the flash-attention
 *            repo's own training runs): on the A100 its published shares by
 *            shape, causal or not (below, cost model 121); on Hopper, with no
 *            figure of its own, the family's one figure (assumed);
 *   flash1-triton  FlashAttention's Triton port (flash_attn_triton.py, which
 *            llm-foundry copied: attn_impl triton, the MPT rows): on the A100
 *            gemm_eff.h's TSL_ATTN_A100_FWD_EFF / _BWD_EFF at every shape (0.40 /
 *            0.30, cost model 108). Inferred: Fig. 4's "FlashAttention Triton"
 *            bars (50-102 TFLOP/s) are slower than the MPT rows ran, which ran a
 *            later Triton and copy (eff9fe6b on triton-pre-mlir) than the paper's,
 *            so the band stays what the MPT rows support. On Hopper as flash1.
 *
 * The shares: Shah et al. 2024 (FlashAttention-3, arXiv:2407.08608), Figs. 5–6,
 * H100 SXM5, bf16, batch × sequence 16k tokens, hidden 2048, non-causal, the
 * TFLOP/s printed on the bars over 989 (the backward's FLOPs 2.5 × the
 * forward's, as Tessel counts them), at head dimensions 64 and 128 and
 * sequences 512–16k; linear in log2 of the keys between them and flat outside,
 * linear in the head dimension between 64 and 128 and flat outside. The causal
 * and occupancy rules of roofline.c apply on top, as to the one figure.
 *
 * The A100's FlashAttention-2 shares: Dao 2023 (FlashAttention-2, arXiv:2307.08691),
 * Fig. 4, A100 80GB SXM4, bf16, batch × sequence 16k tokens, hidden 2048,
 * non-causal, forward + backward TFLOP/s printed on the bars (the same figure as
 * Dao-AILab/flash-attention assets/flash2_a100_fwd_bwd_benchmark.png; the two labels
 * the legend hides, 151 at head dimension 128 and 512 keys and 153 at 64 and 1k, read
 * from the bars' heights against the printed ones), over the 312 peak, at head
 * dimensions 64 and 128 and sequences 512–16k, interpolated as Hopper's. Split into
 * forward and backward at the ratio of the paper's two maxima, "up to 73%" forward
 * and "up to 63%" backward (Sec. 1): forward r·c, backward c, with
 * 3.5 / fwd+bwd = 1 / (r·c) + 2.5 / c and r = 73/63 — at head dimension 128 and 16k
 * it gives 0.724 and 0.625, the stated maxima. Assumed: that ratio at every shape
 * (the paper's separate forward and backward figures, Figs. 5–6, are images only).
 *
 * flash1 on the A100 (cost model 121): the same Fig. 4's "FlashAttention" bars (v1's
 * CUDA kernel), forward + backward TFLOP/s printed on them, non-causal (panels a, b)
 * for an unmasked core and causal (c, d) for a causal one, over 312 and interpolated
 * as FlashAttention-2's. The causal bars count s²/2 score FLOPs per head (the repo's
 * benchmarks/benchmark_flash_attention.py `flops`), Tessel s·(s + 1)/2: the share is
 * of the FLOPs the mask leaves, and replaces roofline.c's causal rule, which the other
 * kernels keep. Split into forward and backward at the ratio of the midpoints of the
 * paper's ranges for v1, forward "30-50%" and backward "25-35%" of peak (Sec. 1):
 * r = 40/30, the cost model 108 band's. Assumed: that ratio at every shape.
 *
 * Pure: no allocation, no I/O.
 */
#ifndef TSL_ATTN_KERNEL_H
#define TSL_ATTN_KERNEL_H

#include "err.h"

#include <stdbool.h>
#include <stdint.h>

typedef enum tsl_attn_kernel {
    TSL_ATTN_KERNEL_DEFAULT = 0,       /* the GPU family's one figure */
    TSL_ATTN_KERNEL_FLASH2 = 1,        /* FlashAttention-2 */
    TSL_ATTN_KERNEL_CUDNN = 2,         /* cuDNN's fused SDPA (TE FusedAttention) */
    TSL_ATTN_KERNEL_FLASH1 = 3,        /* FlashAttention (v1), its CUDA kernel */
    TSL_ATTN_KERNEL_FLASH1_TRITON = 4, /* FlashAttention's Triton port (llm-foundry) */
    TSL_ATTN_KERNEL_COUNT = 5
} tsl_attn_kernel_t;

/* "flash2", "cudnn", "flash1" or "flash1-triton" (or "default"), case-insensitive, or
 * the kernel's number ("1" to "4"; "0") → the kernel; -1 for anything else. One rule
 * for plan and eval --attn-kernel. */
int tsl_attn_kernel_parse(const char *name);

/* 0 where `kernel` is one (0 to 4), else -1 and err naming attn_kernel (a plan
 * document's field). */
int tsl_attn_kernel_ok(uint32_t kernel, tsl_err_t *err);

/* The kernel's name ("default", "flash2", "cudnn", "flash1", "flash1-triton"); "?" out
 * of range. */
const char *tsl_attn_kernel_name(uint32_t kernel);

/* FlashAttention v1's CUDA kernel or its Triton port: the kernels with no Hopper
 * figure (the family's one prices them there). */
bool tsl_attn_kernel_is_v1(uint32_t kernel);

/* The head dimension the kernel's code runs a head of hd at (cost model 158): flash1
 * pads a head to its next compiled kernel, 32, 64 or 128 (flash-attn 0.2's
 * fmha_api.cpp dispatches d <= 32, <= 64, <= 128 to the hdim32, hdim64, hdim128
 * kernels, whose gmem tiles predicate the columns past d and whose MMAs run the
 * kernel's whole head dimension over the zeros), flash2 to the next multiple of 32
 * up to 256 (flash-attn 2.0's static_switch.h HEADDIM_SWITCH: kHeadDim 32, 64, 96,
 * ... 256, the same predicated tiles). hd itself for every other kernel (whose
 * padding is not read), a head past the kernel's largest, or hd <= 0. */
double tsl_attn_kernel_run_hd(uint32_t kernel, double hd);

/* The kernel's unmasked share of the H100's dense bf16 peak, forward or backward,
 * at head dimension hd and `keys` keys per query (the sequence of the published
 * sweep), at the clock the kernel holds through a dense step: the published (burst)
 * share × TSL_ATTN_GH100_SETTLED, the clock a GEMM settles at under the part's 700 W
 * limit — except flash2 on a part at its 700 W limit (power_capped false), whose
 * share stays the burst one (tsl_attn_kernel_holds_clock, cost model 188). 0 for the
 * default kernel or one out of range (the caller keeps the GPU family's figure). */
double tsl_attn_hopper_share(uint32_t kernel, bool bwd, double hd, double keys, bool power_capped);

/* Whether the kernel, run back to back as in a training step, draws less than the
 * H100 part's 700 W limit at its boost clock, so that the clock does not settle below
 * the burst clock its published figures were timed at (cost model 188): FlashAttention-2
 * (its tensor cores busy about 37 % of the time, against 0.85 for the GEMMs the 700 W
 * settled clock was measured on; docs/cost-model.md "FlashAttention-2 holds its
 * clock"). Assumed, not measured: no power trace of FlashAttention-2 on an H100 is
 * published. cuDNN's kernel (60 % of peak) and the family's one figure keep the settled
 * clock. */
bool tsl_attn_kernel_holds_clock(uint32_t kernel);

/* The H100 family's one backward figure (gemm_eff.h TSL_ATTN_H100_BWD_EFF, measured
 * at TSL_ATTN_H100_BWD_KEYS keys through PyTorch SDPA, whose flash backend is
 * FlashAttention-2) carried to `keys` keys per query: FlashAttention-2's published
 * backward share at head dimension hd and `keys` over its share at hd and the measured
 * keys (the FA3 paper's Fig. 6, flat past 16k as the table is). 1 at the measured keys,
 * and for keys or hd not above 0. The head dimension stays as flat as before: only the
 * keys move (cost model 172). */
double tsl_attn_hopper_default_bwd_keys(double hd, double keys);

/* The kernel's unmasked share of the A100's dense bf16 peak (312 TFLOP/s, 40 and
 * 80 GB alike), forward or backward, at head dimension hd and `keys` keys per query:
 * flash1-triton TSL_ATTN_A100_FWD_EFF / _BWD_EFF at every shape; flash1 v1's
 * non-causal bars by shape; the default, flash2 and cudnn FlashAttention-2's by
 * shape (above); 0 for a kernel out of range or a shape without keys or head
 * dimension (the caller keeps the GPU family's figure). */
double tsl_attn_ampere_share(uint32_t kernel, bool bwd, double hd, double keys);

/* The kernel's share of the A100's peak under a causal mask over `keys` keys, of the
 * FLOPs the mask leaves, where it has a published causal figure: flash1 (Fig. 4's
 * causal bars, above); 0 for every other kernel or shape, whose caller applies the
 * causal rule (roofline.c) to the unmasked share. */
double tsl_attn_ampere_causal_share(uint32_t kernel, bool bwd, double hd, double keys);

#endif
