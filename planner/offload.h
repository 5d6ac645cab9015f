/*
 * offload.h — activation CPU offloading of the first N Transformer layers, as
 * Megatron-LM runs it (--cpu-offloading --cpu-offloading-num-layers N; activations
 * only, weights not) through TransformerEngine's get_cpu_offload_context with its
 * default scheduling (transformer_engine/pytorch/cpu_offload.py,
 * DefaultOffloadSynchronizer, at release v2.16; docs/cost-model.md "Activation CPU
 * offloading"). A plan-level memory switch beside H3T's per-layer ones (memopt.h):
 * H3T offloads a layer's input hidden state inside its ZeRO-3 segment model; this is
 * the whole saved stash of a layer, in the stack's own schedule.
 *
 * What TE does, per micro-batch, over the L layers of the Transformer block:
 *   - layers 0 .. N−1 offload: every tensor a layer saves for its backward (at least
 *     256 Ki elements, not a parameter) is copied device-to-host on one side stream,
 *     started as the next layer's forward starts;
 *   - layer i's copy must be done before layer L − N + i's forward starts (its GPU
 *     memory is released then; the compute stream waits for it);
 *   - layer i's copy back (host-to-device, the same stream) starts as layer
 *     L − 1 − N + i's backward starts, and layer i's backward waits for it.
 * So at most L − N layers' stashes are on the GPU at once (the reload in flight
 * among them): the stage's peak holds the L − N layers not offloaded.
 *
 * Time: the copies hide under the compute but for what this simulator finds the
 * compute stream waiting (exposed_s). The copy engines take no SMs; the HBM
 * bandwidth they share with the kernels is not priced (TE's documentation: unlikely
 * to affect GEMMs, visible on memory-bound kernels). The embedding and the head sit
 * outside the block and are neither offloaded nor counted here.
 *
 * Pure: no allocation, no I/O; O(L).
 */
#ifndef TSL_OFFLOAD_H
#define TSL_OFFLOAD_H

#include <stdbool.h>
#include <stdint.h>

#include "err.h"
#include "cluster.h"
#include "model.h"
#include "plan.h"

/* One Transformer layer of the block, one micro-batch. */
typedef struct tsl_offload_layer {
    double fwd_s; /* its forward on the compute stream */
    double bwd_s; /* its backward */
    double d2h_s; /* its stash to the host (0 for a layer not offloaded) */
    double h2d_s; /* and back */
} tsl_offload_layer_t;

/* The time the compute stream waits for the copies in one micro-batch's forward and
 * backward of layers[0 .. L) with the first N offloaded (N < L), by the schedule
 * above: the forward's waits before layer L − N + i for copy i, the backward's before
 * layer i for its reload; each wait delays everything after it. 0 for N = 0. */
double tsl_offload_exposed_s(const tsl_offload_layer_t *layers, uint32_t L, uint32_t N);

/* The Transformer layers of m, counted as Megatron-LM counts num_layers
 * (tsl_model_is_block: encoder and decoder layers, a hybrid's blocks; not the
 * embedding, the head or AutoPipe's attention/FFN halves). */
uint32_t tsl_offload_blocks(const tsl_model_t *m);

/* Whether Megatron-LM runs N offloaded layers of m in a plan: m not a hybrid model
 * (Megatron-LM's hybrid stack, HybridBlock / MambaStack, never enters TE's offload
 * context: only TransformerBlock builds it, megatron/core/transformer/
 * transformer_block.py at d98e8a64dd, so --cpu-offloading offloads nothing there),
 * N < its Transformer layers (TE needs one on the GPU; Megatron refuses N >=
 * num_layers), one pipeline stage (Megatron refuses pipeline parallelism with CPU
 * offloading), no full or selective recompute (refused beside it too:
 * recompute_granularity must be None). 0 when it does, else -1 with err naming
 * cpu_offload_layers and the reason. */
int tsl_offload_check(uint32_t N, const tsl_model_t *m, uint32_t pp, bool recompute,
                      tsl_err_t *err);

/* Whether plan p's offloaded activations fit the host memory of c's nodes: one
 * device's (p->cpu_offload_bytes) times each node's GPUs at most its cpu_mem_bytes
 * (cluster.h: the datasheet's, or twice its GPUs' memory when not given; a node
 * with none known passes). The search and eval hold plans to the same test. 0 when
 * they fit, else -1 (TSL_E_NOFIT) with err naming cpu_offload_layers and the node. */
int tsl_offload_host_check(const tsl_cluster_t *c, const tsl_plan_t *p, tsl_err_t *err);

#endif
