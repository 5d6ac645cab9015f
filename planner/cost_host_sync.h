/*
 * cost_host_sync.h — host loops that read the GPU back: what a stack's blocking reads
 * cost beyond the kernels they wait for.
 *
 * An eager stack normally issues kernels ahead of the GPU (docs/cost-model.md "Host
 * dispatch"): a pass takes max(GPU, ops · H). A loop that reads a result back to the
 * host (`.item()`, `float(tensor)`) empties that queue at every read: the next op
 * is dispatched onto an idle GPU and the short kernels after it run at the host's
 * pace. DeepSpeed's FP16_UnfusedOptimizer (opt_step deepspeed-fp16) does so twice
 * per parameter tensor (docs/cost-model.md "The step as the stack runs it").
 */
#ifndef TSL_COST_HOST_SYNC_H
#define TSL_COST_HOST_SYNC_H

#include <stdint.h>

#include "model.h"

/* The most tensors tsl_ds_step_tensors writes for one layer. */
#define TSL_DS_STEP_MAX_TENSORS 24u

/*
 * A chain of n host ops issued one after the other onto an idle GPU, each taking h of
 * host time, op i's kernel g[i] seconds (0 for a blocking read, the chain's last op
 * as a rule): op i is issued at (i + 1)·h, its kernel starts at max(that, the end of
 * kernel i − 1), and the chain ends when the last kernel (or read) does. Returns what
 * that adds over Σ g, the kernels alone: ≥ h (the first dispatch), n·h − Σ g where every
 * kernel is shorter than the host's op. 0 for n 0 or h ≤ 0.
 */
double tsl_host_chain_s(const double *g, uint32_t n, double h);

/*
 * The parameter tensors of layer l as one rank of TP degree t holds them, in elements
 * (e[0..return)), summing to own (the rank's parameters of the layer as cost.c counts
 * them: the word table's padded rows, a tied head's copy): a dense block's norms, fused
 * QKV and its bias, projection and bias, the FFN's two linears and biases (Megatron's
 * layout, biases unless no_bias; weights and column-parallel biases over t), the rest
 * of own (extra_params) one tensor more; an embedding's word table (the rest), position
 * table and embedding norm; a head's final norm (extra_params, two tensors of half
 * without rms_norm) and its own or tied copy of the table (the rest). 0 for own ≤ 0 and
 * for the layers this does not lay out (MoE, MLA, Mamba, MTP, sub-layer halves).
 */
uint32_t tsl_ds_step_tensors(const tsl_layer_t *l, uint32_t t, double own, double *e);

/*
 * What DeepSpeed's FP16_UnfusedOptimizer (DachengLi1/AMP 72eeea4
 * DeepSpeed/deepspeed/runtime/fp16/unfused_optimizer.py step; runtime/utils.py
 * CheckOverflow.has_overflow_serial, get_grad_norm) adds to the step's device-memory
 * time for layer l's tensors by reading each back to the host twice: per tensor of e
 * elements, two chains from an idle GPU (tsl_host_chain_s, framework op h each):
 *   overflow check  x.float() (6e B), .sum() (4e B), float(): the read
 *   norm            the fp32 .grad of the tensor before (.to(), 6e B: issued after
 *                   that tensor's read, so onto an idle GPU), .float() (6e B),
 *                   .norm() (4e B), .item(): the read
 * every kernel at W bytes/s plus a launch L (their bytes are opt_step's already). 0
 * where h or W is not positive.
 */
double tsl_ds_fp16_step_sync_s(const tsl_layer_t *l, uint32_t t, double own, double h, double W,
                               double L);

/*
 * The tensors of e[0..n) (one layer's, in the unit's flattening order) that the busiest
 * of z ranks holds a piece of, when FSDP1 flattens them into one flat parameter and gives
 * each rank a contiguous 1/z of it (padded to z · ceil(Σe / z); use_orig_params: the
 * rank's optimizer sees each original tensor its chunk intersects, a view of that piece;
 * torch/distributed/fsdp/flat_param.py _init_shard_metadata). Writes the pieces' elements
 * to out (the first rank with the most pieces) and returns their count; z ≤ 1: e itself.
 */
uint32_t tsl_shard_step_tensors(const double *e, uint32_t n, uint32_t z, double *out);

/*
 * What Composer 0.16's DecoupledAdamW (opt_step composer, opt_step.h) adds to its kernels'
 * device-memory time by reading each tensor's step count back (`.item()`) before that
 * tensor's kernels: per piece of e elements, a chain from an idle GPU (tsl_host_chain_s,
 * framework op h each) of the loop body's eight kernels (8, 12, 8, 12, 8, 8, 8, 16 bytes
 * an element at W, plus a launch L each) and the next tensor's read. 0 where h or W is
 * not positive.
 */
double tsl_composer_step_sync_s(const double *e, uint32_t n, double h, double W, double L);

#endif
