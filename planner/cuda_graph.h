/*
 * cuda_graph.h — Megatron-core's per-layer CUDA graphs: the modules a plan replays as
 * captured graphs (TransformerConfig.cuda_graph_modules under cuda_graph_impl "local"
 * or "transformer_engine"; megatron/core/transformer/enums.py CudaGraphModule,
 * transformer_config.py, Megatron-LM at d98e8a64dd).
 *
 * A graphed module's kernels run as one graph launch per micro-batch and pass (TE's
 * make_graphed_callables captures the forward and the backward graph of each callable):
 * its ops leave the host's eager dispatch, a launch takes their place
 * (roofline.h TSL_ROOFLINE_GRAPH_LAUNCH_OPS; docs/cost-model.md "CUDA-graphed modules").
 * The GPU's kernels are the same.
 *
 * One bit per module, in CudaGraphModule's order (the plan field cuda_graph_modules,
 * tessel.v1 field 146; the knob tsl_cost_knobs_t.cuda_graph_modules):
 *   attn            TransformerLayer._forward_attention: the input norm, the attention
 *                   block, its residual add (Tessel: attention_s, a Transformer layer's
 *                   self-attention block)
 *   mlp             _forward_mlp of a dense layer (Tessel: a dense FFN block)
 *   moe             _forward_mlp of a MoE layer, drop-and-pad only (the whole MoE block)
 *   moe_router      _forward_mlp up to MoELayer.router(): the pre-MLP norm, the router,
 *                   the shared experts when not overlapped with the EP exchange
 *   moe_preprocess  MoELayer.preprocess() (the dispatcher's metadata), in the router's
 *                   graph; needs moe_router. Tessel counts no op of its own there: it
 *                   changes nothing priced
 *   mamba           a Mamba mixer layer whole
 * The full-iteration graph (cuda_graph_impl full_iteration) is not a module: it is
 * the request's no_host_floor.
 */
#ifndef TSL_CUDA_GRAPH_H
#define TSL_CUDA_GRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "model.h"
#include "plan.h"

enum {
    TSL_CUDA_GRAPH_ATTN = 1u << 0,
    TSL_CUDA_GRAPH_MLP = 1u << 1,
    TSL_CUDA_GRAPH_MOE = 1u << 2,
    TSL_CUDA_GRAPH_MOE_ROUTER = 1u << 3,
    TSL_CUDA_GRAPH_MOE_PREPROCESS = 1u << 4,
    TSL_CUDA_GRAPH_MAMBA = 1u << 5,
    TSL_CUDA_GRAPH_COUNT = 6,
    TSL_CUDA_GRAPH_ALL = (1u << 6) - 1,
};

/* Parse a comma-separated list of the names above into *mask (replaced). 0, or -1 with
 * err naming the field (cuda_graph_modules) and the item: an unknown or empty name,
 * an empty list, or a mask tsl_cuda_graph_modules_check refuses. */
int tsl_cuda_graph_modules_parse(const char *list, uint32_t *mask, tsl_err_t *err);

/* 0, or -1 with err: a bit no module has; moe_preprocess without moe_router
 * (Megatron-LM's TransformerConfig asserts the same); moe beside moe_router (the MoE
 * block is one graph or the router's part is). */
int tsl_cuda_graph_modules_check(uint32_t mask, tsl_err_t *err);

/* The names of mask's modules, comma-separated, into buf (snprintf's contract); the
 * length the whole list needs. */
size_t tsl_cuda_graph_modules_format(uint32_t mask, char *buf, size_t cap);

/* Module i's name ("attn", ... in the order above); NULL past TSL_CUDA_GRAPH_COUNT. */
const char *tsl_cuda_graph_module_name(uint32_t i);

/* The modules of one graph of a whole layer (Megatron-LM's per-layer impl without
 * cuda_graph_modules) on m: attn where m has self-attention, mlp where it has a dense
 * FFN, moe where it has routed experts, mamba where it has Mamba layers. Tessel prices
 * them as one graph each: a launch per module and pass, where Megatron-LM launches one
 * per layer (a launch's host time is one op's: roofline.h). */
uint32_t tsl_cuda_graph_whole_layer(const tsl_model_t *m);

/* How the Megatron-LM line that runs the graphs is launched, beside the plan's fields:
 * what tsl_cuda_graph_megatron_check reads that a plan does not carry. */
typedef struct tsl_cuda_graph_line {
    bool full_recompute; /* --recompute-granularity full (a layer under CKPT) */
    bool te_impl;        /* --cuda-graph-impl transformer_engine (else local) */
    bool delay_wgrad;    /* --delay-wgrad-compute (the megatron export writes it with the EP
                            all-to-all overlap: tsl_plan_ep_overlap_runs) */
} tsl_cuda_graph_line_t;

/* What Megatron-LM asserts of per-layer graphs of plan p's cuda_graph_modules on model m
 * (TransformerConfig.__post_init__ at d98e8a64dd, transformer_config.py "Check cuda graph
 * scopes for per-layer implementations" and the overlap_moe_expert_parallel_comm block;
 * megatron/training/arguments.py validate_args, delay_wgrad_compute), for a line
 * Megatron-LM would refuse to be refused rather than priced or exported: moe, moe_router
 * or moe_preprocess on a model without routed experts; mlp on a MoE model without a
 * dense FFN layer; moe without drop-and-pad (moe_capacity with moe_pad); moe_preprocess
 * under the all-to-all dispatcher with a capacity factor but no padding (its preprocess
 * copies to the host); graphs beside full recompute (line->full_recompute: "only
 * supported with full iteration CUDA graph") or beside activation offloading
 * (cpu_offload_layers); under line->te_impl moe_router beside the moe module's
 * recompute, and moe or mlp beside the EP all-to-all overlap (moe_a2a_overlap where it
 * runs); on a model with dropout, attn beside the attention core's recompute (+selckpt)
 * and mlp / moe beside their own recompute; under line->delay_wgrad with the DP reduce
 * overlapped (no grad_reduce_exposed, or an SDP level) and a weight gradient inside a
 * graph (attn, or moe_router on a model with shared experts, which Tessel prices not
 * overlapped with the dispatcher): the wgrad GEMMs' fused accumulation
 * (unfused_grad_accum refused) and, with attn graphed, attention without linear biases.
 * Megatron-LM's TE-version asserts are not checked (no field). 0 for a plan without
 * graphs; else -1 (TSL_E_UNSUPPORTED) with err naming the module and rule. */
int tsl_cuda_graph_megatron_check(const tsl_plan_t *p, const tsl_model_t *m,
                                  const tsl_cuda_graph_line_t *line, tsl_err_t *err);

#endif
