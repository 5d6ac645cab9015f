/*
 * cuda_graph.c — the CUDA-graphed modules' names (cuda_graph.h).
 */
#include "cuda_graph.h"
#include "name_list.h"

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
    return tsl_err_set(err,
                       "cuda_graph_modules: '%.*s' is not a module Megatron-LM graphs (" NAMES_LIST
                       "; a full-iteration graph is --no-host-floor)",
                       (int)(n > 64 ? 64 : n), w);
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
