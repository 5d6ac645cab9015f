/*
 * eval_cgraph.c — a Megatron-LM line's CUDA-graph flags (eval_cgraph.h).
 */
#include "eval_cgraph.h"

#include <string.h>

#include "args.h"
#include "cuda_graph.h"
#include "model.h"

static const char *const impls[] = {"none", "local", "transformer_engine", "full_iteration"};

/* One word of --cuda-graph-modules / --cuda-graph-scope (arguments.py
 * _parse_cuda_graph_modules_arg: a CudaGraphModule name or a deprecated value). */
static int module_word(const char *key, const char *w, size_t n, tsl_eval_cgraph_t *g,
                       tsl_err_t *err)
{
    if (n == 4 && strncmp(w, "full", 4) == 0) {
        g->full = true;
        return 0;
    }
    if (n == 14 && strncmp(w, "full_iteration", 14) == 0) {
        g->full_iteration = true;
        return 0;
    }
    if (n == 24 && strncmp(w, "full_iteration_inference", 24) == 0)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "megatron: --%s full_iteration_inference: an inference graph "
                            "scope (--inference-cuda-graph-scope block); Tessel prices training",
                            key);
    for (uint32_t i = 0; i < TSL_CUDA_GRAPH_COUNT; i++) {
        const char *name = tsl_cuda_graph_module_name(i);
        if (strlen(name) == n && strncmp(w, name, n) == 0) {
            g->modules |= 1u << i;
            return 0;
        }
    }
    return tsl_err_set(err,
                       "megatron: --%s: '%.*s' is not attn, mlp, moe, moe_router, "
                       "moe_preprocess, mamba, full or full_iteration (Megatron-LM's "
                       "CudaGraphModule)",
                       key, (int)(n > 40 ? 40 : n), w);
}

static int modules_read(const char *key, const char *all, tsl_eval_cgraph_t *g, tsl_err_t *err)
{
    bool *given = key[11] == 'm' ? &g->modules_set : &g->scope_set;
    if (all == NULL || all[0] == '\0') /* nargs '+' */
        return tsl_err_set(err, "megatron: --%s needs one or more modules", key);
    *given = true;
    for (const char *p = all; *p;) {
        size_t n = strcspn(p, " ");
        if (module_word(key, p, n, g, err) != 0)
            return -1;
        p += n;
        p += strspn(p, " ");
    }
    return 0;
}

int tsl_eval_cgraph_read(const char *key, const char *val, const char *all, tsl_eval_cgraph_t *g,
                         tsl_err_t *err)
{
    size_t i;
    bool *flag = strcmp(key, "enable-cuda-graph") == 0                   ? &g->enable
                 : strcmp(key, "external-cuda-graph") == 0               ? &g->external
                 : strcmp(key, "no-check-for-nan-in-loss-and-grad") == 0 ? &g->no_nan_check
                                                                         : NULL;
    if (flag) {
        if (val)
            return tsl_err_set(err, "megatron: --%s takes no value ('%s')", key, val);
        *flag = true;
        return 0;
    }
    if (strcmp(key, "cuda-graph-impl") == 0) {
        if (tsl_parse_choice("megatron: --cuda-graph-impl", val, impls, 4, &i, err) != 0)
            return -1;
        g->impl = (uint8_t)i;
        return 0;
    }
    if (strcmp(key, "cuda-graph-modules") == 0 || strcmp(key, "cuda-graph-scope") == 0)
        return modules_read(key, all, g, err);
    if (strcmp(key, "cuda-graph-warmup-steps") == 0) { /* eager steps before the capture */
        uint32_t n;
        return tsl_parse_u32(key, val ? val : "", 0, 1u << 24, &n, err);
    }
    return 1;
}

/* The impl the line asks for, as validate_args resolves it: the deprecated flags
 * (refused beside --cuda-graph-impl and together), then the deprecated module
 * "full_iteration" (cuda_graph_config.py: not with transformer_engine). */
static int resolve_impl(const tsl_eval_cgraph_t *g, uint8_t *impl, tsl_err_t *err)
{
    *impl = g->impl;
    if (g->enable || g->external) {
        if (g->impl != TSL_EVAL_CGRAPH_NONE)
            return tsl_err_set(err,
                               "megatron: --%s with --cuda-graph-impl %s: Megatron-LM refuses "
                               "the deprecated flag beside it",
                               g->enable ? "enable-cuda-graph" : "external-cuda-graph",
                               impls[g->impl]);
        if (g->enable && g->external)
            return tsl_err_set(err, "megatron: --enable-cuda-graph and --external-cuda-graph "
                                    "cannot be enabled at the same time (Megatron-LM)");
        *impl = g->enable ? TSL_EVAL_CGRAPH_LOCAL : TSL_EVAL_CGRAPH_TE;
    }
    if (g->modules_set && g->scope_set)
        return tsl_err_set(err, "megatron: --cuda-graph-scope and --cuda-graph-modules cannot be "
                                "used together (Megatron-LM)");
    if (g->full && (g->modules || g->full_iteration))
        return tsl_err_set(err, "megatron: --cuda-graph-modules full cannot be used with other "
                                "scopes (Megatron-LM)");
    if (g->full_iteration) {
        if (*impl == TSL_EVAL_CGRAPH_TE)
            return tsl_err_set(err, "megatron: --cuda-graph-modules full_iteration cannot be "
                                    "combined with --cuda-graph-impl transformer_engine "
                                    "(Megatron-LM)");
        *impl = TSL_EVAL_CGRAPH_FULL_ITERATION;
    }
    return 0;
}

/* One graph for every micro-batch's forward and backward (the optimizer step outside):
 * no eager op is dispatched from the host, the request's no_host_floor (the bench's
 * full-iteration rows are priced so). */
static int full_iteration(const tsl_eval_cgraph_t *g, tsl_eval_cfg_t *c, const char *key,
                          tsl_err_t *err)
{
    if (g->modules)
        return tsl_err_set(err,
                           "megatron: --%s must be empty with --cuda-graph-impl "
                           "full_iteration (Megatron-LM)",
                           key);
    if (!g->no_nan_check)
        return tsl_err_set(err, "megatron: --cuda-graph-impl full_iteration needs "
                                "--no-check-for-nan-in-loss-and-grad (Megatron-LM asserts it for "
                                "training)");
    c->no_host_floor = true;
    tsl_eval_cfg_note(c, "megatron: --cuda-graph-impl full_iteration: one CUDA graph for every "
                         "micro-batch's forward and backward, priced without the host's eager "
                         "dispatch (as --no-host-floor)");
    return 0;
}

int tsl_eval_cgraph_finish(const tsl_eval_cgraph_t *g, tsl_eval_cfg_t *c, tsl_err_t *err)
{
    const char *key = g->scope_set ? "cuda-graph-scope" : "cuda-graph-modules";
    uint8_t impl;
    if (resolve_impl(g, &impl, err) != 0)
        return -1;
    c->cuda_graph_impl = impl;
    if (impl == TSL_EVAL_CGRAPH_NONE) {
        if (g->modules_set || g->scope_set)
            tsl_eval_cfg_note(c,
                              "megatron: --%s without --cuda-graph-impl: no CUDA graph, as "
                              "in Megatron-LM",
                              key);
        return 0;
    }
    if (impl == TSL_EVAL_CGRAPH_FULL_ITERATION)
        return full_iteration(g, c, key, err);
    uint32_t mods = g->modules;
    const uint32_t router = TSL_CUDA_GRAPH_MOE_ROUTER | TSL_CUDA_GRAPH_MOE_PREPROCESS;
    if (impl == TSL_EVAL_CGRAPH_LOCAL && (mods & router)) /* TransformerConfig adds the other */
        mods |= router;
    if (tsl_cuda_graph_modules_check(mods, err) != 0)
        return tsl_err_prefix(err, "megatron: --%s", key);
    c->knobs.cuda_graph_modules = mods;
    c->cuda_graph_whole = mods == 0;
    if (mods == 0)
        tsl_eval_cfg_note(c,
                          "megatron: --cuda-graph-impl %s without --cuda-graph-modules: every "
                          "layer one graph, priced as the attn, mlp and mamba modules it holds "
                          "graphed (a launch each: one more per layer than Megatron-LM's)",
                          impls[impl]);
    return 0;
}

int tsl_eval_cgraph_plan(const tsl_eval_cfg_t *c, const tsl_model_t *m, tsl_plan_t *out,
                         tsl_err_t *err)
{
    if (c->cuda_graph_impl != TSL_EVAL_CGRAPH_LOCAL && c->cuda_graph_impl != TSL_EVAL_CGRAPH_TE)
        return 0;
    if (c->cuda_graph_whole) {
        if (tsl_model_moe_layers(m))
            return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                                "megatron: --cuda-graph-impl %s without --cuda-graph-modules "
                                "captures every layer whole; Tessel prices no MoE layer of %s "
                                "inside one graph: name the modules (--cuda-graph-modules attn "
                                "moe_router moe_preprocess)",
                                impls[c->cuda_graph_impl], m->name);
        out->cuda_graph_modules = tsl_cuda_graph_whole_layer(m);
    }
    tsl_cuda_graph_line_t line = {.full_recompute = c->ckpt == TSL_EVAL_CKPT_FULL,
                                  .te_impl = c->cuda_graph_impl == TSL_EVAL_CGRAPH_TE,
                                  .delay_wgrad = c->delay_wgrad};
    if (tsl_cuda_graph_megatron_check(out, m, &line, err) == 0)
        return 0;
    if (err) /* a line Megatron-LM refuses: bad input, as its other refusals here */
        err->code = TSL_E_INVALID;
    return tsl_err_prefix(err, "megatron");
}
