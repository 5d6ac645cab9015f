/*
 * ep_overlap.h — one merged step of Megatron-LM's EP all-to-all overlap as its
 * two streams run it (--overlap-moe-expert-parallel-comm; docs/cost-model.md
 * "EP all-to-all overlap").
 *
 * Megatron-LM's combined 1F1B step (models/common/model_chunk_schedule_plan.py,
 * TransformerModelChunkSchedulePlan.run and TransformerLayerSchedulePlan.run at
 * 00225507) runs forward layer i of one micro-batch beside backward layer n − 1 − i
 * of another. Each layer is five nodes: "attn" (attention, the pre-MLP norm, the
 * shared experts, the router and the dispatch's preprocess) and "mlp" (the routed
 * experts) on the compute stream, "moe_dispatch" and "moe_combine" on the
 * communication stream. Per pair the host issues, in this order:
 *
 *   combine_bwd, attn_fwd, mlp_bwd, dispatch_fwd, [mlp_wgrad], dispatch_bwd,
 *   mlp_fwd, combine_fwd, attn_bwd, [attn_wgrad]
 *
 * Each node waits on its micro-batch's event (one per model chunk, recorded after
 * every node: pipeline_parallel/utils.py ScheduleNode.stream_acquire_context), so a
 * micro-batch's nodes run one after another across the streams, and each stream
 * runs what it was given in order. The bracketed weight-gradient nodes exist under
 * --delay-wgrad-compute (TransformerLayerNode.backward_dw): they wait on nothing
 * and record nothing, so dispatch_bwd may start once mlp_bwd's input gradient is
 * ready and runs under the experts' dW; the last backward layer's attention dW runs
 * after the loop, on the compute stream (TransformerModelChunkSchedulePlan.run).
 * Without it each backward node computes its weight gradients itself, and the event
 * after it waits for them too.
 */
#ifndef TSL_EP_OVERLAP_H
#define TSL_EP_OVERLAP_H

#include <stdbool.h>
#include <stdint.h>

/* One layer's nodes, in seconds (every figure ≥ 0; a layer without routed experts
 * has its dispatch and combine 0: Megatron-LM's NoopScheduleNode, which waits on
 * and records nothing, and its whole MLP in mlp_f, mlp_b). */
typedef struct tsl_ep_layer {
    double attn_f, mlp_f;                  /* forward compute, the two nodes */
    double attn_b, attn_w, mlp_b, mlp_w;   /* backward: each node's dX part and its dW */
    double disp_f, comb_f, disp_b, comb_b; /* the all-to-alls, forward and backward */
} tsl_ep_layer_t;

/* The merged step of n layers' forward (0 … n − 1) beside another micro-batch's
 * backward (n − 1 … 0), from both streams starting idle until both are done, with
 * (delay_wgrad) or without --delay-wgrad-compute, the nodes at the times given (no
 * contention). *exposed (may be NULL): the part of the step the compute stream is
 * not busy, the all-to-alls on the critical path. 0 for n 0. */
double tsl_ep_merged_s(const tsl_ep_layer_t *layers, uint32_t n, bool delay_wgrad, double *exposed);

/* The same step where what overlaps slows by k (the cluster's overlap_slowdown, ≥ 1):
 * C + E + (k − 1)·H, C the compute, E the exposed part above, H = A − E the
 * all-to-alls' hidden part. Where every all-to-all hides under the compute it is
 * paired with this is C + (k − 1)·A, cost model 52's max(C, A) + (k − 1)·min(C, A)
 * at C ≥ A. */
double tsl_ep_merged_k_s(const tsl_ep_layer_t *layers, uint32_t n, bool delay_wgrad, double k);

#endif
