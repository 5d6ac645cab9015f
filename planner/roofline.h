/*
 * roofline.h — time of one layer's forward on one device when no measured
 * profile exists: a roofline per GEMM plus the memory-bound elementwise work
 * (docs/cost-model.md, "Compute — a roofline per GEMM").
 *
 *   gemm(m, n, k) × b   max(2·m·n·k·b / F, 2·(m·k + k·n + m·n)·b / W) + L
 *   elementwise bytes   bytes / W + L per kernel
 *
 * F = the device's sustained tensor-core rate (peak × efficiency, FLOP/s),
 * W = a sustained fraction of its datasheet memory bandwidth (bytes/s),
 * L = a per-kernel floor (launch, ramp-up and tail of a kernel: seconds). Inputs
 * and outputs are fp16/bf16 (2 bytes). A thin TP shard or a small micro-batch
 * makes a GEMM memory-bound (weights re-read per micro-batch) and pays L per
 * kernel, so splitting a batch into many micro-batches costs what it costs.
 *
 * Measured profiles (planner/profile.*) replace this where they exist; cost.c
 * calls it in one place (layer_compute_f in cost.c).
 *
 * Causal self-attention (tsl_layer_t.causal): the fused core visits
 * tsl_attn_keys() keys per query ((s + 1)/2 without a window), the FLOP-only
 * fallback drops the same FLOPs; the unfused core computes and masks all of
 * them — all s keys under a sliding window too (the FLOP-only fallback adds those
 * masked FLOPs). The layer's counted FLOPs (fwd_flops) stay s·w.
 *
 * Pure: no allocation, no I/O. W = 0 means "bandwidth unknown": every function
 * then returns the plain FLOP count over F with no floor (the pre-roofline model).
 */
#ifndef TSL_ROOFLINE_H
#define TSL_ROOFLINE_H

#include <stdbool.h>
#include <stdint.h>

#include "model.h"

#define TSL_ROOFLINE_MEM_EFF  0.80 /* sustained / datasheet bandwidth (STREAM-like copy) */
#define TSL_ROOFLINE_LAUNCH_S 4e-6 /* per-kernel floor, seconds (assumed; see docs) */

typedef struct tsl_roofline_dev {
    double gemm_flops; /* F: sustained tensor-core FLOP/s */
    double mem_bw;     /* W: sustained device-memory bytes/s; 0 = unknown */
    double launch_s;   /* L */
} tsl_roofline_dev_t;

/* F = peak × efficiency, W = TSL_ROOFLINE_MEM_EFF × datasheet, L = the default. */
void tsl_roofline_dev_init(tsl_roofline_dev_t *d, double gemm_flops, double datasheet_mem_bw);

/* b independent GEMMs of (m × k)·(k × n). */
double tsl_roofline_gemm_s(const tsl_roofline_dev_t *d, double m, double n, double k, double b);

/* `kernels` elementwise kernels moving `bytes` in all. */
double tsl_roofline_mem_s(const tsl_roofline_dev_t *d, double bytes, uint32_t kernels);

/*
 * Forward time of layer l for `samples` samples on one device of a TP group of
 * t (t divides the layer's heads and FFN: cost.c checks), with sequence
 * parallelism (norm, dropout and residual work divided by t) or without
 * (replicated). vocab is the head's and embedding's padded vocabulary. The
 * layer's FLOPs are exactly l->fwd_flops / t plus the padding's; extra_fwd_flops
 * runs at F.
 */
double tsl_roofline_layer_fwd_s(const tsl_roofline_dev_t *d, const tsl_layer_t *l, double samples,
                                uint32_t t, bool sp, double vocab);

/* The attention core (QKᵀ, softmax, dropout, AV) alone: what selective
 * recomputation repeats in the backward. 0 for layers without attention. */
double tsl_roofline_core_fwd_s(const tsl_roofline_dev_t *d, const tsl_layer_t *l, double samples,
                               uint32_t t);

#endif
