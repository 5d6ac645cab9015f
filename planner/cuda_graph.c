/*
 * cuda_graph.c — the CUDA-graphed modules' names, and what Megatron-LM asserts of them
 * (cuda_graph.h).
 */
#include "cuda_graph.h"
#include "name_list.h"
#include "recompute.h"

#include <string.h>

static const char *const names[TSL_CUDA_GRAPH_COUNT] = {
    "attn", "mlp", "moe", "moe_router", "moe_preprocess", "mamba",
};

#define NAMES_LIST "attn, mlp, moe, moe_router, moe_preprocess, mamba"

static int one_name(const char *w, size_t n, uint32_t *mask, tsl_err_t *err)
{
    for (uint32_t i = 0; i < TSL_CUDA_GRAPH_COUNT; i++)
        if (strlen(names[i]) == n && strncmp(w, names[i], n) == 0) {
            *mask |= 1u << i;
            return 0;
        }
    if (n == 0)
        return tsl_err_set(err, "cuda_graph_modules: an empty item; give module names "
                                "separated by single commas (attn,moe_router)");
    char shown[TSL_ERR_SHOWN_MAX(64)]; /* the item as a message may show it (err.h) */
    return tsl_err_set(err,
                       "cuda_graph_modules: '%s' is not a module Megatron-LM graphs (" NAMES_LIST
                       "; a full-iteration graph is --no-host-floor)",
                       tsl_err_shown(w, n > 64 ? 64 : n, shown, sizeof shown));
}

int tsl_cuda_graph_modules_parse(const char *list, uint32_t *mask, tsl_err_t *err)
{
    *mask = 0;
    if (list == NULL || *list == '\0')
        return tsl_err_set(err, "cuda_graph_modules: an empty list; give one or more of " NAMES_LIST
                                ", comma-separated");
    for (const char *p = list;;) {
        size_t n = strcspn(p, ",");
        if (one_name(p, n, mask, err) != 0)
            return -1;
        if (p[n] == '\0')
            break;
        p += n + 1;
    }
    return tsl_cuda_graph_modules_check(*mask, err);
}

int tsl_cuda_graph_modules_check(uint32_t mask, tsl_err_t *err)
{
    if (mask & ~(uint32_t)TSL_CUDA_GRAPH_ALL)
        return tsl_err_set(
            err,
            "cuda_graph_modules: 0x%x names no module this build prices (bits 0-%u: " NAMES_LIST
            ")",
            mask & ~(uint32_t)TSL_CUDA_GRAPH_ALL, TSL_CUDA_GRAPH_COUNT - 1);
    if ((mask & TSL_CUDA_GRAPH_MOE_PREPROCESS) && !(mask & TSL_CUDA_GRAPH_MOE_ROUTER))
        return tsl_err_set(err, "cuda_graph_modules: moe_preprocess is captured with the router: "
                                "it needs moe_router (Megatron-LM's TransformerConfig)");
    if ((mask & TSL_CUDA_GRAPH_MOE) && (mask & TSL_CUDA_GRAPH_MOE_ROUTER))
        return tsl_err_set(err, "cuda_graph_modules: moe graphs the whole MoE block; moe_router "
                                "beside it names a part of it");
    return 0;
}

size_t tsl_cuda_graph_modules_format(uint32_t mask, char *buf, size_t cap)
{
    return tsl_name_list_format(names, TSL_CUDA_GRAPH_COUNT, mask, buf, cap);
}

const char *tsl_cuda_graph_module_name(uint32_t i)
{
    return i < TSL_CUDA_GRAPH_COUNT ? names[i] : NULL;
}

/* Whether m has a dense FFN block (Megatron-LM's MLP, what the mlp module graphs). */
static bool dense_ffn(const tsl_model_t *m)
{
    for (uint32_t i = 0; i < m->n_layers; i++)
        if (tsl_layer_has_ffn(&m->layers[i]) && m->layers[i].experts == 0)
            return true;
    return false;
}

uint32_t tsl_cuda_graph_whole_layer(const tsl_model_t *m)
{
    uint32_t g = 0;
    for (uint32_t i = 0; i < m->n_layers; i++) {
        const tsl_layer_t *l = &m->layers[i];
        if (tsl_layer_has_attention(l))
            g |= TSL_CUDA_GRAPH_ATTN;
        if (tsl_layer_has_ffn(l))
            g |= l->experts ? TSL_CUDA_GRAPH_MOE : TSL_CUDA_GRAPH_MLP;
        if (l->kind == TSL_LAYER_MAMBA)
            g |= TSL_CUDA_GRAPH_MAMBA;
    }
    return g;
}

#define MOE_BITS (TSL_CUDA_GRAPH_MOE | TSL_CUDA_GRAPH_MOE_ROUTER | TSL_CUDA_GRAPH_MOE_PREPROCESS)

/* The rules on the MoE modules (transformer_config.py, the per-layer scopes' checks). */
static int moe_rules(const tsl_plan_t *p, const tsl_model_t *m, bool te_impl, tsl_err_t *err)
{
    uint32_t g = p->cuda_graph_modules;
    if (!tsl_model_moe_layers(m))
        return (g & MOE_BITS) ? tsl_err_setc(err, TSL_E_UNSUPPORTED,
                                             "cuda_graph_modules: moe, moe_router and "
                                             "moe_preprocess need a MoE model; %s has no routed "
                                             "experts (Megatron-LM: \"moe cuda graph is only "
                                             "supported for MoE\")",
                                             m->name)
                              : 0;
    if ((g & TSL_CUDA_GRAPH_MLP) && !dense_ffn(m))
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "cuda_graph_modules: mlp graphs a dense layer's MLP; every FFN of %s "
                            "has experts (Megatron-LM: \"mlp cuda graph is only supported for "
                            "dense layers\")",
                            m->name);
    if ((g & TSL_CUDA_GRAPH_MOE) && !(p->moe_capacity > 0 && p->moe_pad))
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "cuda_graph_modules: moe graphs the whole MoE block, which "
                            "Megatron-LM captures with drop-and-pad only (a capacity factor "
                            "and its padding); the plan routes dropless: graph moe_router");
    /* inside Megatron-LM's "not drop-and-pad" branch: a padded capacity passes */
    if ((g & TSL_CUDA_GRAPH_MOE_PREPROCESS) && p->moe_alltoall && p->moe_capacity > 0 &&
        !p->moe_pad)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "cuda_graph_modules: moe_preprocess under the all-to-all dispatcher "
                            "with a capacity factor and no padding, whose preprocess copies to "
                            "the host (Megatron-LM refuses it)");
    if (te_impl && (g & TSL_CUDA_GRAPH_MOE_ROUTER) && (p->recompute_modules & TSL_RECOMPUTE_MOE))
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "cuda_graph_modules: moe_router beside the moe module's recompute "
                            "under cuda_graph_impl transformer_engine (Megatron-LM refuses it)");
    if (te_impl && (g & (TSL_CUDA_GRAPH_MOE | TSL_CUDA_GRAPH_MLP)) && tsl_plan_ep_overlap_runs(p))
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "cuda_graph_modules: %s beside the EP all-to-all overlap "
                            "(moe_a2a_overlap) under cuda_graph_impl transformer_engine "
                            "(Megatron-LM: \"CUDA graph scope on moe and mlp is not supported "
                            "with overlap_moe_expert_parallel_comm\")",
                            (g & TSL_CUDA_GRAPH_MOE) ? "moe" : "mlp");
    return 0;
}

/* Whether a layer of m that recomputes its attention core (the plan's +selckpt) has
 * dropout: Megatron-LM draws no random number inside a graphed recompute. */
static bool core_recompute_dropout(const tsl_plan_t *p, const tsl_model_t *m)
{
    for (uint32_t i = 0; i < p->n_layers && i < m->n_layers; i++)
        if (p->layer[i].selective && tsl_layer_has_attention(&m->layers[i]) &&
            !m->layers[i].no_dropout)
            return true;
    return false;
}

/* TransformerConfig: "Graphed recompute module doesn't accept random number" — attention
 * dropout beside the graphed attention's core_attn recompute, hidden dropout beside the
 * graphed mlp's or moe's own recompute. */
static int dropout_rules(const tsl_plan_t *p, const tsl_model_t *m, tsl_err_t *err)
{
    uint32_t g = p->cuda_graph_modules, r = p->recompute_modules;
    bool dropout = false;
    for (uint32_t i = 0; i < m->n_layers; i++)
        dropout |= tsl_layer_has_ffn(&m->layers[i]) && !m->layers[i].no_dropout;
    if ((g & TSL_CUDA_GRAPH_ATTN) && core_recompute_dropout(p, m))
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "cuda_graph_modules: attn beside the attention core's recompute on "
                            "%s, which has dropout (Megatron-LM: \"attention dropout is not "
                            "supported with graphed attention recomputation\")",
                            m->name);
    if (dropout && (((g & TSL_CUDA_GRAPH_MLP) && (r & TSL_RECOMPUTE_MLP)) ||
                    ((g & TSL_CUDA_GRAPH_MOE) && (r & TSL_RECOMPUTE_MOE))))
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "cuda_graph_modules: a graphed mlp or moe beside its own recompute "
                            "on %s, which has dropout (Megatron-LM: \"hidden dropout is not "
                            "supported with graphed MLP/MoE recomputation\")",
                            m->name);
    return 0;
}

/* Whether an attention layer of m has linear biases (Megatron-LM's add_bias_linear or
 * add_qkv_bias). */
static bool attention_bias(const tsl_model_t *m)
{
    for (uint32_t i = 0; i < m->n_layers; i++)
        if (tsl_layer_has_attention(&m->layers[i]) && (!m->layers[i].no_bias || m->qkv_bias))
            return true;
    return false;
}

/* arguments.py validate_args, delay_wgrad_compute with overlap_grad_reduce: a graph that
 * holds a weight gradient TE delays (attn; moe_router with shared experts not
 * overlapped, Tessel's only shared experts) needs the fused wgrad accumulation ("the
 * default gradient accumulation does not use static memory addresses") and, for attn,
 * no attention bias. */
static int delay_wgrad_rules(const tsl_plan_t *p, const tsl_model_t *m, tsl_err_t *err)
{
    uint32_t g = p->cuda_graph_modules;
    bool shared = false;
    for (uint32_t i = 0; i < m->n_layers; i++)
        shared |= m->layers[i].experts > 0 && m->layers[i].shared_experts > 0;
    bool in_graph = (g & TSL_CUDA_GRAPH_ATTN) || ((g & TSL_CUDA_GRAPH_MOE_ROUTER) && shared);
    if (!in_graph || (p->grad_reduce_exposed && !tsl_plan_has_sdp(p)))
        return 0;
    if (p->unfused_grad_accum)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "cuda_graph_modules: %s beside --delay-wgrad-compute and the "
                            "overlapped DP reduce needs the fused weight-gradient accumulation; "
                            "the plan has unfused_grad_accum (Megatron-LM: \"CUDA graph with "
                            "delay_wgrad_compute requires gradient_accumulation_fusion\")",
                            (g & TSL_CUDA_GRAPH_ATTN) ? "attn" : "moe_router");
    if ((g & TSL_CUDA_GRAPH_ATTN) && attention_bias(m))
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "cuda_graph_modules: attn beside --delay-wgrad-compute and the "
                            "overlapped DP reduce on %s, whose attention has linear biases "
                            "(Megatron-LM: \"CUDA graph with delay_wgrad_compute doesn't "
                            "support attn bias for now\")",
                            m->name);
    return 0;
}

int tsl_cuda_graph_megatron_check(const tsl_plan_t *p, const tsl_model_t *m,
                                  const tsl_cuda_graph_line_t *line, tsl_err_t *err)
{
    if (!p->cuda_graph_modules)
        return 0;
    if (line->full_recompute)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "cuda_graph_modules: per-layer CUDA graphs beside full recompute "
                            "(Megatron-LM: \"full recompute is only supported with full "
                            "iteration CUDA graph\")");
    if (p->cpu_offload_layers)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "cuda_graph_modules: per-layer CUDA graphs beside %u layers' "
                            "activations offloaded (Megatron-LM: \"CUDA graphs not supported "
                            "with CPU offloading\")",
                            p->cpu_offload_layers);
    if (moe_rules(p, m, line->te_impl, err) != 0 || dropout_rules(p, m, err) != 0)
        return -1;
    return line->delay_wgrad ? delay_wgrad_rules(p, m, err) : 0;
}
