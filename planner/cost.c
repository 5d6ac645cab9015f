/*
 * cost.c — the formulas of cost.h, written out literally (docs/cost-model.md
 * gives each with its source). tsl_cost_layer runs 10^5–10^6 times per search:
 * no allocation, no strings, no bandwidth lookups when the caller passes them.
 */
#include "cost.h"
#include "profile.h"

#include <math.h>
#include <string.h>

/* The strategy's degree and stride, computed here rather than through
 * strategy.c so the hot path inlines them (same definition as strategy.h:
 * level i has stride = product of the degrees below it). */
static inline void dim_shape(const tsl_strategy_t *s, tsl_dim_t d, uint32_t *degree,
                             uint32_t *stride) {
    uint32_t below = 1;
    *degree = 1;
    *stride = 1;
    for (uint32_t i = 0; i < s->n_levels && i < TSL_STRATEGY_MAX_LEVELS; i++) {
        if (s->dim[i] == (uint8_t)d) {
            *degree = s->degree[i];
            *stride = below;
            return;
        }
        below *= s->degree[i];
    }
}

static inline uint32_t dim_degree(const tsl_strategy_t *s, tsl_dim_t d) {
    uint32_t degree, stride;
    dim_shape(s, d, &degree, &stride);
    return degree;
}

static uint32_t group_size(const tsl_strategy_t *s) {
    uint32_t g = 1;
    for (uint32_t i = 0; i < s->n_levels && i < TSL_STRATEGY_MAX_LEVELS; i++)
        g *= s->degree[i];
    return g;
}

/* Slowest device of the block: a collective waits for it (AMP Eq. 3's logic
 * applied to compute). Walks nodes, not devices. */
static double block_flops(const tsl_cluster_t *c, uint32_t first, uint32_t size) {
    double x = INFINITY;
    for (uint32_t dev = first; dev < first + size;) {
        uint32_t node = c->device_node[dev];
        x = fmin(x, tsl_cluster_device_flops(c, dev));
        dev = c->node_first[node] + c->nodes[node].n_gpus;
    }
    return x;
}

int tsl_cost_env_init(tsl_cost_env_t *env, const tsl_cluster_t *c, uint32_t block_first,
                      uint32_t block_size, tsl_err_t *err) {
    memset(env, 0, sizeof(*env));
    if (c == NULL || c->n_devices == 0)
        return tsl_err_set(err, "cost: cluster has no devices (not finished?)");
    if (block_size == 0 || (uint64_t)block_first + block_size > c->n_devices)
        return tsl_err_set(err, "cost: block [%u, %u + %u) is outside the cluster's %u devices",
                           block_first, block_first, block_size, c->n_devices);
    env->cluster = c;
    env->block_first = block_first;
    env->block_size = block_size;
    env->device_flops = block_flops(c, block_first, block_size);
    env->block_bw = tsl_cluster_group_bw(c, block_first, 1, block_size);
    env->overlap_slowdown = c->overlap_slowdown;
    env->profile = tsl_profile_for_block(c, block_first, block_size);   /* issue 8 */
    return 0;
}

static double dim_bw(const tsl_cost_env_t *env, const tsl_strategy_t *s, tsl_dim_t d) {
    uint32_t degree, stride;
    dim_shape(s, d, &degree, &stride);
    if (degree <= 1)
        return INFINITY;
    return tsl_cluster_dim_bw(env->cluster, env->block_first, env->block_size, stride, degree);
}

void tsl_cost_strategy_bw(const tsl_cost_env_t *env, const tsl_strategy_t *s,
                          tsl_strategy_bw_t *out) {
    out->tp_bw = dim_bw(env, s, TSL_DIM_TP);
    out->dp_bw = dim_bw(env, s, TSL_DIM_DP);
    out->sdp_bw = dim_bw(env, s, TSL_DIM_SDP);
}

/* ---- collectives (ring, AMP Eq. 3; nccl-tests bus bandwidth) ---- */

double tsl_cost_allreduce_s(double bytes, uint32_t n, double bw) {
    if (n <= 1 || bytes <= 0)
        return 0;
    return 2.0 * (n - 1) / n * bytes / bw;
}

double tsl_cost_allgather_s(double bytes, uint32_t n, double bw) {
    if (n <= 1 || bytes <= 0)
        return 0;
    return (double)(n - 1) / n * bytes / bw;
}

double tsl_cost_reduce_scatter_s(double bytes, uint32_t n, double bw) {
    return tsl_cost_allgather_s(bytes, n, bw);
}

double tsl_cost_p2p_s(double bytes, double bw) {
    if (bytes <= 0)
        return 0;
    return bytes / bw;
}

/* Both sides run slowed by k while they overlap; the longer finishes alone
 * (Galvatron-BMW Sec. V). k = 1 is the classic max(X, C). */
double tsl_cost_overlap_s(double compute_s, double comm_s, double slowdown) {
    return fmax(compute_s, comm_s) + (slowdown - 1.0) * fmin(compute_s, comm_s);
}

/* ---- one layer ---- */

static void set_infeasible(tsl_layer_cost_t *out) {
    memset(out, 0, sizeof(*out));
    out->feasible = false;
    out->fwd_s = out->bwd_s = out->bwd_sync_s = INFINITY;
    out->grad_comm_s = out->compute_s = out->comm_s = INFINITY;
}

static inline uint64_t div_ceil(uint64_t a, uint64_t b) {
    return (a + b - 1) / b;
}

/* O_ms, O_f, O_b of cost.h for n samples per device. */
static void layer_memory(const tsl_layer_t *l, bool ckpt, uint32_t t, uint32_t z, uint64_t n,
                         tsl_layer_cost_t *out) {
    uint64_t p = l->params;
    out->ms_bytes = div_ceil((uint64_t)TSL_BYTES_PER_PARAM_STATES * p, (uint64_t)t * z);
    uint64_t act = l->act_repl_bytes * n + div_ceil(l->act_shard_bytes * n, t);
    if (ckpt) {
        out->fwd_bytes = l->bnd_act_bytes * n;
        out->bwd_bytes = act;
    } else {
        out->fwd_bytes = act;
        out->bwd_bytes = 0;
    }
    /* SDP gathers the full (TP-sharded) fp16 weights and holds unsharded fp16
     * gradients before reduce-scatter: 2 + 2 bytes per parameter beyond its shard. */
    if (z > 1)
        out->bwd_bytes += div_ceil(4 * p * (z - 1), (uint64_t)t * z);
}

void tsl_cost_layer(const tsl_cost_env_t *env, const tsl_layer_t *l, const tsl_strategy_t *s,
                    const tsl_strategy_bw_t *bw, uint32_t mb, tsl_layer_cost_t *out) {
    uint32_t t = dim_degree(s, TSL_DIM_TP), d = dim_degree(s, TSL_DIM_DP);
    uint32_t z = dim_degree(s, TSL_DIM_SDP), w = d * z;
    if (mb == 0 || mb % w != 0 || group_size(s) != env->block_size) {
        set_infeasible(out);
        return;
    }
    tsl_strategy_bw_t local;
    if (bw == NULL) {
        tsl_cost_strategy_bw(env, s, &local);
        bw = &local;
    }
    double n = (double)(mb / w);
    double p = (double)l->params;
    double act_msg = (double)TSL_ACT_DTYPE_BYTES * l->seq_len * l->hidden * n;

    double compute_f = l->fwd_flops * n / (t * env->device_flops);
    double compute_b = 2.0 * compute_f;
    if (env->profile != NULL)   /* issue 8: measured per-shape block times replace peak × eff. */
        tsl_profile_layer_s(env->profile, l, n, t, env->device_flops, &compute_f, &compute_b);
    double tp_f = l->tp_allreduces * tsl_cost_allreduce_s(act_msg, t, bw->tp_bw);
    double gather = tsl_cost_allgather_s(TSL_BYTES_PER_PARAM_FP16 * p / t, z, bw->sdp_bw);
    double recompute = s->ckpt ? compute_f + tp_f : 0.0;
    double grad_comm =
        tsl_cost_allreduce_s(TSL_BYTES_PER_PARAM_FP16 * p / ((double)t * z), d, bw->dp_bw) +
        tsl_cost_reduce_scatter_s(TSL_BYTES_PER_PARAM_FP16 * p / t, z, bw->sdp_bw);

    out->feasible = true;
    out->fwd_s = compute_f + tp_f + gather;
    out->bwd_s = compute_b + tp_f + gather + recompute;
    out->grad_comm_s = grad_comm;
    out->bwd_sync_s =
        out->bwd_s - compute_b + tsl_cost_overlap_s(compute_b, grad_comm, env->overlap_slowdown);
    out->compute_s = compute_f + compute_b + (s->ckpt ? compute_f : 0.0);
    out->comm_s = 2.0 * tp_f + 2.0 * gather + (s->ckpt ? tp_f : 0.0);
    layer_memory(l, s->ckpt, t, z, mb / w, out);
}

double tsl_cost_transition_s(const tsl_cost_env_t *env, const tsl_layer_t *l,
                             const tsl_strategy_t *to, uint32_t mb) {
    uint32_t w = dim_degree(to, TSL_DIM_DP) * dim_degree(to, TSL_DIM_SDP);
    double bytes = (double)l->bnd_act_bytes * mb / w;
    return tsl_cost_allgather_s(bytes, env->block_size, env->block_bw);
}

double tsl_cost_stage_p2p_s(const tsl_cluster_t *c, uint32_t from_first, uint32_t to_first,
                            uint64_t bnd_bytes_per_sample, uint32_t mb) {
    double bytes = (double)bnd_bytes_per_sample * mb;
    double bw = tsl_cluster_link_bw(c, from_first, to_first);
    /* activation forward, its gradient backward: two transfers of the same size */
    return 2.0 * tsl_cost_p2p_s(bytes, bw);
}
