/*
 * offload.c — TransformerEngine's default offload schedule, simulated (offload.h).
 */
#include "offload.h"

#include <math.h>

double tsl_offload_exposed_s(const tsl_offload_layer_t *layers, uint32_t L, uint32_t N)
{
    /* done[i]: when layer i's copy (out, then back) ends on the copy stream */
    double done[TSL_MODEL_MAX_LAYERS];
    if (layers == NULL || N == 0 || N >= L || L > TSL_MODEL_MAX_LAYERS)
        return 0.0;
    double t = 0.0, s = 0.0, busy = 0.0; /* compute clock, copy-stream clock */
    for (uint32_t j = 0; j < L; j++) {   /* forward */
        if (j >= 1 && j - 1 < N) {       /* the previous layer's stash leaves */
            s = fmax(s, t) + layers[j - 1].d2h_s;
            done[j - 1] = s;
        }
        if (j >= L - N) /* layer j − (L − N)'s memory is released: its copy must be done */
            t = fmax(t, done[j - (L - N)]);
        t += layers[j].fwd_s;
        busy += layers[j].fwd_s;
    }
    for (uint32_t j = L; j-- > 0;) {       /* backward, last layer first */
        if (j + 1 < L && j + N + 1 >= L) { /* j = L − 1 − N + i: layer i's reload */
            uint32_t i = j + N + 1 - L;
            s = fmax(s, t) + layers[i].h2d_s;
            done[i] = s;
        }
        if (j < N) /* layer j's backward needs its stash back */
            t = fmax(t, done[j]);
        t += layers[j].bwd_s;
        busy += layers[j].bwd_s;
    }
    return t > busy ? t - busy : 0.0;
}

uint32_t tsl_offload_blocks(const tsl_model_t *m)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < m->n_layers; i++)
        n += tsl_model_is_block(m, i);
    return n;
}

int tsl_offload_check(uint32_t N, const tsl_model_t *m, uint32_t pp, bool recompute, tsl_err_t *err)
{
    if (N == 0)
        return 0;
    if (m->hybrid)
        return tsl_err_set(err,
                           "cpu_offload_layers: %s is a hybrid (Mamba) model: "
                           "Megatron-LM's hybrid stack does not run TransformerEngine's "
                           "CPU offloading (only its Transformer block enters the "
                           "offload context)",
                           m->name);
    uint32_t blocks = tsl_offload_blocks(m);
    if (N >= blocks)
        return tsl_err_set(err,
                           "cpu_offload_layers: %u of the model's %u Transformer layers: "
                           "Megatron-LM offloads fewer than all (TransformerEngine keeps one "
                           "on the GPU)",
                           N, blocks);
    if (pp > 1)
        return tsl_err_set(err,
                           "cpu_offload_layers: with pipeline parallelism (pp %u): Megatron-LM "
                           "refuses CPU offloading beside it",
                           pp);
    if (recompute)
        return tsl_err_set(err, "cpu_offload_layers: with activation recompute (ckpt, selective "
                                "or recompute modules): Megatron-LM refuses CPU offloading "
                                "beside it");
    return 0;
}

int tsl_offload_host_check(const tsl_cluster_t *c, const tsl_plan_t *p, tsl_err_t *err)
{
    const double gib = 1024.0 * 1024.0 * 1024.0;
    for (uint32_t k = 0; p->cpu_offload_bytes && k < c->n_nodes; k++) {
        const tsl_node_t *node = &c->nodes[k];
        double need = (double)p->cpu_offload_bytes * node->n_gpus;
        if (node->cpu_mem_bytes && need > (double)node->cpu_mem_bytes)
            return tsl_err_setc(err, TSL_E_NOFIT,
                                "cpu_offload_layers %u: node %u's %u devices offload %.2f GiB "
                                "of activations, over its %.2f GiB of host memory",
                                p->cpu_offload_layers, k, node->n_gpus, need / gib,
                                node->cpu_mem_bytes / gib);
    }
    return 0;
}
