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

#endif
