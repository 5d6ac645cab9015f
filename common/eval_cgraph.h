/*
 * eval_cgraph.h — a Megatron-LM line's CUDA-graph flags (eval_cfg.h tsl_eval_cfg_megatron),
 * as Megatron-LM d98e8a64dd reads them (megatron/training/arguments.py validate_args,
 * TransformerConfig.cuda_graph_impl / cuda_graph_modules in
 * megatron/core/transformer/transformer_config.py, cuda_graph_config.py):
 *
 *   --cuda-graph-impl none|local|transformer_engine|full_iteration
 *   --enable-cuda-graph, --external-cuda-graph   the deprecated spellings of local and
 *                       transformer_engine (refused beside --cuda-graph-impl, and together)
 *   --cuda-graph-modules M...  attn mlp moe moe_router moe_preprocess mamba (cuda_graph.h);
 *                       "full" (deprecated, alone: the whole layer), "full_iteration" (the
 *                       deprecated way to ask for that impl); none given: every layer whole
 *   --cuda-graph-scope M...    the deprecated name of --cuda-graph-modules (not both)
 *   --cuda-graph-warmup-steps N  eager iterations before capture: not the steady state
 *   --no-check-for-nan-in-loss-and-grad   what full_iteration requires
 *
 * A per-layer impl (local, transformer_engine) is the plan's cuda_graph_modules (under
 * local moe_router and moe_preprocess come together, as TransformerConfig adds the other);
 * without modules every layer is one graph, priced as the modules it holds (resolved on
 * the model: tsl_eval_cgraph_plan). full_iteration, one graph for the forward-backward of
 * every micro-batch, is the request's no_host_floor, as the bench prices those rows.
 */
#ifndef TSL_EVAL_CGRAPH_H
#define TSL_EVAL_CGRAPH_H

#include <stdbool.h>
#include <stdint.h>

#include "err.h"
#include "eval_cfg.h"

typedef struct tsl_eval_cgraph {
    uint8_t impl;          /* --cuda-graph-impl (tsl_eval_cgraph_impl_t) */
    bool enable, external; /* --enable-cuda-graph, --external-cuda-graph */
    bool modules_set;      /* --cuda-graph-modules given */
    bool scope_set;        /* --cuda-graph-scope given */
    bool full;             /* "full" named: the whole layer */
    bool full_iteration;   /* "full_iteration" named */
    uint32_t modules;      /* the modules named (cuda_graph.h bits) */
    bool no_nan_check;     /* --no-check-for-nan-in-loss-and-grad */
} tsl_eval_cgraph_t;

/* One flag of a line: key without its dashes, val its first value word (NULL: none),
 * all every value word space-separated. 0 when read, 1 when not one of the flags above,
 * -1 with err naming the flag and value (an unknown module or impl: Megatron-LM's
 * parser refuses it). */
int tsl_eval_cgraph_read(const char *key, const char *val, const char *all, tsl_eval_cgraph_t *g,
                         tsl_err_t *err);

/* Once the line is read (after its recompute and offloading): Megatron-LM's checks of
 * the flags together, then c->cuda_graph_impl, c->cuda_graph_whole, c->no_host_floor and
 * c->knobs.cuda_graph_modules set and what is priced differently noted (c->notes). 0, or
 * -1 with err naming the flags. */
int tsl_eval_cgraph_finish(const tsl_eval_cgraph_t *g, tsl_eval_cfg_t *c, tsl_err_t *err);

/* On the model (tsl_eval_cfg_plan, after the knobs are set on out): a whole-layer
 * capture as m's modules (cuda_graph.h tsl_cuda_graph_whole_layer; refused on a MoE
 * model, whose dropless layer Tessel does not price inside one graph), then what
 * Megatron-LM asserts of them there (tsl_cuda_graph_megatron_check). 0 for a line
 * without per-layer graphs. */
int tsl_eval_cgraph_plan(const tsl_eval_cfg_t *c, const tsl_model_t *m, tsl_plan_t *out,
                         tsl_err_t *err);

#endif
