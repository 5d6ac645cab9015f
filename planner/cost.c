/*
 * cost.c — the formulas of cost.h, written out literally (docs/cost-model.md
 * gives each with its source). tsl_cost_layer runs 10^5–10^6 times per search:
 * no allocation, no strings, no bandwidth lookups when the caller passes them.
 */
#include "cost.h"
#include "module_prec.h"
#include "mamba.h"
#include "norm_impl.h"
#include "profile.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "calibrate.h"
#include "minmax.h"
#include "cost_host_sync.h"
#include "roofline.h"
#include "sdp_roots.h"

/* The strategy's degree and stride, computed here rather than through
 * strategy.c so the hot path inlines them (same definition as strategy.h:
 * level i has stride = product of the degrees below it). */
static inline void dim_shape(const tsl_strategy_t *s, tsl_dim_t d, uint32_t *degree,
                             uint32_t *stride)
{
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

static inline uint32_t dim_degree(const tsl_strategy_t *s, tsl_dim_t d)
{
    uint32_t degree, stride;
    dim_shape(s, d, &degree, &stride);
    return degree;
}

static uint32_t group_size(const tsl_strategy_t *s)
{
    uint32_t g = 1;
    for (uint32_t i = 0; i < s->n_levels && i < TSL_STRATEGY_MAX_LEVELS; i++)
        g *= s->degree[i];
    return g;
}

/* Slowest device of the block: a collective waits for it (AMP Eq. 3's logic
 * applied to compute). Walks nodes, not devices, and reads a GPU type's figures where
 * it differs from the node before's (the same figures leave every minimum as it is;
 * check_gpu: positive and finite, or 0 where a type has none — never NaN, so the
 * minima are comparisons, minmax.h). *slowest: that device's GPU type. */
static double block_flops(const tsl_cluster_t *c, uint32_t first, uint32_t size, double *mem_bw,
                          double *fp8_flops, double *fp4_flops, bool *any_layout,
                          const tsl_gpu_spec_t **slowest)
{
    double x = INFINITY;
    *any_layout = true;
    *mem_bw = INFINITY;
    *fp8_flops = INFINITY;
    *fp4_flops = INFINITY;
    *slowest = tsl_cluster_device_gpu(c, first);
    uint32_t dev = first, seen = UINT32_MAX;
    for (const tsl_gpu_spec_t *gpu; (gpu = tsl_cluster_next_type(c, &dev, first + size, &seen));) {
        double f = tsl_gpu_flops(gpu);
        if (f < x)
            *slowest = gpu;
        x = tsl_min(x, f);
        *mem_bw = tsl_min(*mem_bw, gpu->mem_bw);
        /* FP8 peak × its own e_max (cluster_hw.c; docs/cost-model.md "FP8") */
        *fp8_flops = tsl_min(*fp8_flops, tsl_gpu_fp8_flops(gpu));
        *fp4_flops = tsl_min(*fp4_flops, tsl_gpu_fp4_flops(gpu)); /* docs/cost-model.md "NVFP4" */
        *any_layout = *any_layout && tsl_gpu_is_blackwell(gpu);
    }
    return x;
}

/* The block's host CPU over the x86 host of TSL_ROOFLINE_HOST_OP_S: the largest
 * host_scale of its GPU types (the slowest host sets the pace), a type without one (0)
 * counted as 1 (an x86 host); a cluster file's faster host (below 1) paces a block of it
 * alone.
 * It scales the built-in host op on every use (cost model 171: the floor of every pass,
 * not only the experts after the sync); a request's own host_op_us is not scaled. */
static double block_host_scale(const tsl_cluster_t *c, uint32_t first, uint32_t size)
{
    double x = 0.0;
    uint32_t dev = first, seen = UINT32_MAX;
    for (const tsl_gpu_spec_t *gpu; (gpu = tsl_cluster_next_type(c, &dev, first + size, &seen));) {
        double h = gpu->host_scale > 0 ? gpu->host_scale : 1.0;
        if (h > x)
            x = h;
    }
    return x > 0 ? x : 1.0;
}

/* HybridEP's NVLink figure of a block (tsl_gpu_spec_t.hybridep_nvl_bw): its slowest GPU
 * type's, 0 where any type has none published (NCCL's all-to-all figure then). */
static double block_hybridep_bw(const tsl_cluster_t *c, uint32_t first, uint32_t size)
{
    double x = INFINITY;
    uint32_t dev = first, seen = UINT32_MAX;
    for (const tsl_gpu_spec_t *gpu; (gpu = tsl_cluster_next_type(c, &dev, first + size, &seen));)
        x = fmin(x, gpu->hybridep_nvl_bw);
    return isfinite(x) ? x : 0.0;
}

int tsl_cost_env_init(tsl_cost_env_t *env, const tsl_cluster_t *c, uint32_t block_first,
                      uint32_t block_size, tsl_err_t *err)
{
    memset(env, 0, sizeof(*env));
    if (c == NULL || c->n_devices == 0)
        return tsl_err_set(err, "cost: cluster has no devices (not finished?)");
    if (block_size == 0 || (uint64_t)block_first + block_size > c->n_devices)
        return tsl_err_set(err, "cost: block [%u, %u + %u) is outside the cluster's %u devices",
                           block_first, block_first, block_size, c->n_devices);
    env->cluster = c;
    env->block_first = block_first;
    env->block_size = block_size;
    const tsl_gpu_spec_t *slowest;
    env->device_flops =
        block_flops(c, block_first, block_size, &env->device_mem_bw, &env->device_fp8_flops,
                    &env->device_fp4_flops, &env->device_fp8_any_layout, &slowest);
    if (!isfinite(env->device_fp8_flops))
        env->device_fp8_flops = 0.0;
    if (!isfinite(env->device_fp4_flops))
        env->device_fp4_flops = 0.0;
    tsl_gemm_eff_for_gpu(&env->gemm_shape, slowest->name, slowest->peak_flops, slowest->mem_bw);
    env->slowest = slowest;
    env->device_fp32_flops = tsl_cluster_block_fp32_flops(c, block_first, block_size, false);
    env->device_fp32_fma_flops = tsl_cluster_block_fp32_flops(c, block_first, block_size, true);
    env->host_scale = block_host_scale(c, block_first, block_size);
    /* the stacks Tessel targets run eager PyTorch, at the pace of the block's host CPU */
    env->host_op_s = TSL_ROOFLINE_HOST_OP_S * env->host_scale;
    env->hybridep_nvl_bw = block_hybridep_bw(c, block_first, block_size);
    env->overlap_slowdown = c->overlap_slowdown;
    env->profile = tsl_profile_for_block(c, block_first, block_size); /* measured figures */
    env->calib = tsl_cluster_block_calib(c, block_first, block_size); /* trials' fit */
    /* a measured copy (read + write counted, as the step's 28 B) beats the datasheet */
    env->opt_mem_bw = env->profile != NULL && env->profile->dmem_bw > 0 ? env->profile->dmem_bw
                      : env->device_mem_bw > 0 && isfinite(env->device_mem_bw)
                          ? TSL_ROOFLINE_MEM_EFF * env->device_mem_bw
                          : 0.0;
    return 0;
}

/* A walk's key: its block, the group and the kind of figure (1: the ring's busbw,
 * 2: the all-to-all's). No padding: the table compares its bytes. */
typedef struct walk_key {
    uint32_t block_first, block_size, stride, degree, kind;
} walk_key_t;

tsl_cost_walks_t *tsl_cost_walks_new(const tsl_cluster_t *c)
{
    tsl_cost_walks_t *w = calloc(1, sizeof(*w));
    if (w == NULL)
        return NULL;
    w->cluster = c; /* the slots made at the first walk (kept.h) */
    tsl_kept_init(&w->figures, sizeof(walk_key_t), sizeof(tsl_cost_walk_t), TSL_COST_WALKS_FIRST,
                  TSL_COST_WALKS_MOST);
    tsl_relayout_kept_init(&w->moves, TSL_COST_WALKS_FIRST, TSL_COST_WALKS_MOST);
    return w;
}

void tsl_cost_walks_free(tsl_cost_walks_t *w)
{
    if (w != NULL) {
        tsl_kept_free(&w->figures);
        tsl_kept_free(&w->moves);
        if (w->spare_memo != NULL && w->spare_free != NULL)
            w->spare_free(w->spare_memo);
        free(w->spare_sim);
        if (w->spare_dp != NULL && w->spare_dp_free != NULL)
            w->spare_dp_free(w->spare_dp);
    }
    free(w);
}

#define NODES_FOUND    1u /* tsl_cost_walks_t.nodes_alike */
#define NODES_ALIKE    2u
#define NODES_ONE_TYPE 4u

static uint8_t find_nodes_alike(const tsl_cluster_t *c)
{
    if (!tsl_cluster_is_homogeneous(c))
        return NODES_FOUND;
    for (uint32_t i = 1; i < c->n_nodes; i++)
        if (c->nodes[i].gpu_type != c->nodes[0].gpu_type)
            return NODES_FOUND | NODES_ALIKE;
    return NODES_FOUND | NODES_ALIKE | NODES_ONE_TYPE;
}

bool tsl_cost_walks_nodes_alike(tsl_cost_walks_t *w, const tsl_cluster_t *c, bool one_type)
{
    uint8_t found;
    if (w == NULL || w->cluster != c)
        found = find_nodes_alike(c);
    else if ((found = w->nodes_alike) == 0)
        found = w->nodes_alike = find_nodes_alike(c);
    return (found & (one_type ? NODES_ONE_TYPE : NODES_ALIKE)) != 0;
}

/* tsl_cluster_dim_busbw (kind 1) or tsl_cluster_dim_a2a_busbw (kind 2) over env's block. */
static double walk_now(const tsl_cost_env_t *env, uint32_t stride, uint32_t degree, uint32_t kind,
                       tsl_coll_lat_t *lat)
{
    return kind == 1 ? tsl_cluster_dim_busbw(env->cluster, env->block_first, env->block_size,
                                             stride, degree, lat)
                     : tsl_cluster_dim_a2a_busbw(env->cluster, env->block_first, env->block_size,
                                                 stride, degree, lat);
}

/* walk_now, read from env->walks where it was walked before: the same figure and α's. */
static double kept_walk(const tsl_cost_env_t *env, uint32_t stride, uint32_t degree, uint32_t kind,
                        tsl_coll_lat_t *lat)
{
    tsl_cost_walks_t *w = env->walks;
    if (w == NULL || w->cluster != env->cluster)
        return walk_now(env, stride, degree, kind, lat);
    const walk_key_t k = {env->block_first, env->block_size, stride, degree, kind};
    const tsl_cost_walk_t *kept = tsl_kept_find(&w->figures, &k);
    if (kept == NULL) { /* not walked yet: walked into its slot */
        tsl_cost_walk_t *made = tsl_kept_put(&w->figures, &k);
        if (made == NULL) /* out of memory: not kept */
            return walk_now(env, stride, degree, kind, lat);
        made->bw = walk_now(env, stride, degree, kind, &made->lat);
        kept = made;
    }
    if (lat != NULL)
        *lat = kept->lat;
    return kept->bw;
}

/* A group of `degree` ranks at `stride` inside the block, by the env's mode: the
 * paper prices it by the slowest link it spans, alone on it and with no latency
 * (AMP Eq. 3); the stacks run NCCL over shared NICs (cluster.h). */
static double walk_bw(const tsl_cost_env_t *env, uint32_t stride, uint32_t degree,
                      tsl_coll_lat_t *lat)
{
    memset(lat, 0, sizeof(*lat));
    if (degree <= 1)
        return INFINITY;
    if (env->mode == TSL_COST_PAPER)
        return tsl_cluster_dim_bw(env->cluster, env->block_first, env->block_size, stride, degree);
    double bw = kept_walk(env, stride, degree, 1, lat);
    if (env->knobs.nccl_no_tree) /* the stack's NCCL_ALGO=^tree: rings only */
        tsl_cluster_coll_lat_no_tree(lat);
    return bw;
}

/* walk_bw, each group's figures walked once per memo (NULL: every time). */
static double mode_bw(const tsl_cost_env_t *env, uint32_t stride, uint32_t degree,
                      tsl_coll_lat_t *lat, tsl_cost_bw_memo_t *memo)
{
    if (degree <= 1) /* no group: nothing to walk */
        return walk_bw(env, stride, degree, lat);
    for (uint32_t i = 0; memo != NULL && i < memo->n; i++)
        if (memo->g[i].stride == stride && memo->g[i].degree == degree) {
            *lat = memo->g[i].lat;
            return memo->g[i].bw;
        }
    double bw = walk_bw(env, stride, degree, lat);
    if (memo != NULL && memo->n < TSL_COST_BW_MEMO)
        memo->g[memo->n++] =
            (tsl_group_bw_t){stride, degree, bw, *lat, NAN, {0, 0, 0}, {0, 0, 0, 0}};
    return bw;
}

/* A strategy's own dimension (its levels tile the block). */
static double dim_bw(const tsl_cost_env_t *env, const tsl_strategy_t *s, tsl_dim_t d,
                     tsl_coll_lat_t *lat, tsl_cost_bw_memo_t *memo)
{
    uint32_t degree, stride;
    dim_shape(s, d, &degree, &stride);
    return mode_bw(env, stride, degree, lat, memo);
}

/* Whether a group the strategy does not name (CP, EP, expert DP) of `degree` ranks
 * at `stride` is one: more than one rank, its groups tiling the block. */
static bool group_tiles(const tsl_cost_env_t *env, uint32_t stride, uint32_t degree)
{
    return degree > 1 && env->block_size % ((uint64_t)stride * degree) == 0;
}

/* Such a group's figures: none where it is not one (group_tiles). */
static double group_bw_memo(const tsl_cost_env_t *env, uint32_t stride, uint32_t degree,
                            tsl_coll_lat_t *lat, tsl_cost_bw_memo_t *memo)
{
    memset(lat, 0, sizeof(*lat));
    if (!group_tiles(env, stride, degree))
        return INFINITY;
    return mode_bw(env, stride, degree, lat, memo);
}

static double group_bw(const tsl_cost_env_t *env, uint32_t stride, uint32_t degree,
                       tsl_coll_lat_t *lat)
{
    return group_bw_memo(env, stride, degree, lat, NULL);
}

/* The same group's all-to-all figure: the paper's slowest link, as for any of its
 * collectives (AMP Eq. 3); the stacks' NCCL all-to-all, each domain's NVLink at its
 * part's all-to-all ratio and its NICs carrying what leaves it
 * (tsl_cluster_dim_a2a_busbw; docs/cost-model.md "All-to-all"). Its α is the group's. */
static double group_a2a_bw(const tsl_cost_env_t *env, uint32_t stride, uint32_t degree)
{
    if (!group_tiles(env, stride, degree))
        return INFINITY;
    if (env->mode == TSL_COST_PAPER)
        return tsl_cluster_dim_bw(env->cluster, env->block_first, env->block_size, stride, degree);
    return kept_walk(env, stride, degree, 2, NULL);
}

/* The EP group's flex-dispatcher figures for layer l's routing
 * (tsl_cluster_dim_flex_bw) where the plan runs one (knobs.moe_flex, or an FP8
 * dispatch: Megatron-LM runs it only through the flex dispatcher's ncclep backend,
 * which its export writes and its line reads back as moe_flex; not in PAPER mode),
 * else none (domains 0). */
static void group_flex_bw(const tsl_cost_env_t *env, const tsl_layer_t *l, uint32_t stride,
                          uint32_t degree, tsl_cluster_flex_bw_t *out)
{
    memset(out, 0, sizeof(*out));
    bool flex = env->knobs.moe_flex || env->knobs.moe_fp8_dispatch;
    if (l == NULL || !l->experts || !flex || env->mode == TSL_COST_PAPER ||
        !group_tiles(env, stride, degree))
        return;
    tsl_cluster_dim_flex_bw(env->cluster, env->block_first, env->block_size, stride, degree,
                            tsl_cost_flex_hit, l, out);
}

/* ---- context parallelism (docs/cost-model.md "Context parallelism") ---- */

static const char *const cp_comm_names[TSL_CP_COMM_COUNT] = {"p2p", "allgather", "a2a",
                                                             "torch-allgather"};

const char *tsl_cp_comm_name(uint32_t comm)
{
    return comm < TSL_CP_COMM_COUNT ? cp_comm_names[comm] : NULL;
}

int tsl_cp_comm_parse(const char *name)
{
    for (int i = 0; name != NULL && i < TSL_CP_COMM_COUNT; i++)
        if (strcmp(name, cp_comm_names[i]) == 0)
            return i;
    return -1;
}

/* How the attention core runs under CP (roofline.h): as the ring's c kernels per
 * rank where the ring's blocks are the kernels — TransformerEngine's p2p (with its
 * corrections and accumulations), torch's context_parallel (with its fp32 merges) —
 * else as priced without CP: TE's all-gather runs one causal kernel per local chunk
 * over the keys up to its end, the same time as one causal kernel over s at n = B_m/w
 * (docs/cost-model.md), and Ulysses the whole sequence on a/c heads. */
static void cp_core(const tsl_cost_env_t *env, tsl_roofline_dev_t *dev)
{
    uint32_t c = env->knobs.cp, comm = env->knobs.cp_comm;
    if (c <= 1 || env->mode == TSL_COST_PAPER || (comm != TSL_CP_P2P && comm != TSL_CP_TORCH_AG))
        return;
    dev->cp_ring = c;
    dev->cp_merge = comm == TSL_CP_TORCH_AG;
    dev->cp_te = comm == TSL_CP_P2P;
}

bool tsl_cost_cp_group(const tsl_strategy_t *s, uint32_t cp, uint32_t *stride)
{
    uint32_t below = 1;
    *stride = 1;
    if (cp <= 1)
        return true;
    for (uint32_t i = 0; i < s->n_levels && i < TSL_STRATEGY_MAX_LEVELS; i++) {
        if (s->dim[i] == TSL_DIM_DP || s->dim[i] == TSL_DIM_SDP) {
            *stride = below;
            return s->degree[i] % cp == 0;
        }
        below *= s->degree[i];
    }
    return false;
}

uint32_t tsl_cost_cp_chunks(const tsl_layer_t *l, uint32_t cp)
{
    /* Megatron's Mamba CP (mamba_context_parallel.py: all-to-alls of the heads around
     * the conv and the scan) is not priced: no plan puts a Mamba layer under CP */
    if (l->kind == TSL_LAYER_MAMBA)
        return 0;
    return tsl_layer_has_attention(l) ? 2 * cp : cp; /* two per rank: causal load balancing */
}

bool tsl_cost_cp_fits(const tsl_layer_t *l, const tsl_strategy_t *s, uint32_t cp, uint32_t comm)
{
    uint32_t stride;
    if (cp <= 1)
        return true;
    if (!tsl_cost_cp_group(s, cp, &stride) || comm >= TSL_CP_COMM_COUNT)
        return false;
    uint32_t chunks = tsl_cost_cp_chunks(l, cp);
    if (chunks == 0 || l->seq_len % chunks != 0)
        return false;
    if (!tsl_layer_has_attention(l))
        return true;
    if (l->cross_seq_len != 0) /* no cross attention split */
        return false;
    if (comm != TSL_CP_A2A)
        return true;
    uint32_t t = dim_degree(s, TSL_DIM_TP), kv = l->kv_heads ? l->kv_heads : l->heads;
    return (l->heads / t) % cp == 0 && (kv / t) % cp == 0;
}

/* The CP group's bandwidth: cp ranks at the data level's stride (tsl_cost_cp_group). */
static double cp_bw(const tsl_cost_env_t *env, const tsl_strategy_t *s, tsl_coll_lat_t *lat,
                    tsl_cost_bw_memo_t *memo)
{
    uint32_t c = env->knobs.cp, stride;
    memset(lat, 0, sizeof(*lat));
    if (c <= 1 || !tsl_cost_cp_group(s, c, &stride))
        return INFINITY;
    return group_bw_memo(env, stride, c, lat, memo);
}

/* ---- expert parallelism (docs/cost-model.md "Mixture of experts") ---- */

bool tsl_cost_ep_fits(const tsl_layer_t *l, uint32_t group, uint32_t ep, uint32_t etp)
{
    ep = ep > 1 ? ep : 1;
    etp = etp > 1 ? etp : 1;
    if (l->experts == 0)
        return true;
    return l->experts % ep == 0 && group % ((uint64_t)ep * etp) == 0 && l->ffn_hidden % etp == 0;
}

void tsl_cost_moe_rows(const tsl_cost_knobs_t *k, double *busy, double *moved)
{
    double imb = k->moe_imbalance >= 1.0 ? k->moe_imbalance : TSL_COST_MOE_IMBALANCE;
    double c = k->moe_capacity;
    if (c > 0 && k->moe_pad) { /* every expert runs exactly its capacity */
        *busy = *moved = c;
    } else if (c > 0) { /* the tokens over capacity dropped before the dispatch */
        *busy = fmin(imb, c);
        *moved = fmin(1.0, c);
    } else {
        *busy = imb;
        *moved = 1.0;
    }
}

int tsl_cost_moe_check(const tsl_cost_knobs_t *k, tsl_err_t *err)
{
    if (!(k->moe_capacity >= 0) || !(k->moe_capacity <= TSL_COST_MOE_MAX_FACTOR))
        return tsl_err_set(err,
                           "moe_capacity_factor: %g is not a capacity factor; give 0 < C <= %g "
                           "(none for dropless routing)",
                           k->moe_capacity, TSL_COST_MOE_MAX_FACTOR);
    if (k->moe_pad && !(k->moe_capacity > 0))
        return tsl_err_set(err, "moe_pad_to_capacity: pads to a capacity; give a capacity "
                                "factor too (Megatron-LM asserts the same)");
    if (k->moe_imbalance != 0 &&
        !(k->moe_imbalance >= 1.0 && k->moe_imbalance <= TSL_COST_MOE_MAX_IMBALANCE))
        return tsl_err_set(err,
                           "moe_imbalance: %g is not from 1 to %g; it is the busiest expert's "
                           "tokens over the mean (1: an even split)",
                           k->moe_imbalance, TSL_COST_MOE_MAX_IMBALANCE);
    return 0;
}

double tsl_cost_alltoall_s(double bytes, uint32_t n, double bw)
{
    return tsl_cost_allgather_s(bytes, n, bw);
}

double tsl_cost_flex_hit(double share, const void *layer)
{
    const tsl_layer_t *l = layer;
    double U = l->experts, c = l->experts_per_tok, g = l->router_groups * share;
    if (l->router_groups > 1 && l->router_topk_groups > 0 &&
        l->router_topk_groups < l->router_groups && g >= 1.0 && fabs(g - round(g)) < 1e-9) {
        U = l->router_groups; /* the groups lie whole in the domain */
        c = l->router_topk_groups;
    }
    double miss = 1.0; /* C(U − U·share, c)/C(U, c): none of the token's in the domain */
    for (double i = 0; i < c; i++)
        miss *= fmax(U - U * share - i, 0.0) / (U - i);
    return 1.0 - miss;
}

tsl_cost_route_t tsl_cost_flex_route(const tsl_layer_t *l)
{
    if (l == NULL || l->experts == 0)
        return (tsl_cost_route_t){0};
    return (tsl_cost_route_t){.experts = l->experts,
                              .experts_per_tok = l->experts_per_tok,
                              .groups = l->router_groups,
                              .topk_groups = l->router_topk_groups};
}

bool tsl_cost_route_eq(tsl_cost_route_t a, tsl_cost_route_t b)
{
    return a.experts == b.experts && a.experts_per_tok == b.experts_per_tok &&
           a.groups == b.groups && a.topk_groups == b.topk_groups;
}

void tsl_cost_strategy_bw_memo(const tsl_cost_env_t *env, const tsl_strategy_t *s,
                               tsl_cost_bw_memo_t *memo, tsl_strategy_bw_t *out)
{
    out->tp_bw = dim_bw(env, s, TSL_DIM_TP, &out->tp_lat, memo);
    out->dp_bw = dim_bw(env, s, TSL_DIM_DP, &out->dp_lat, memo);
    out->sdp_bw = dim_bw(env, s, TSL_DIM_SDP, &out->sdp_lat, memo);
    /* The measured all-reduce curve (cost model 139) prices one NCCL call by its buffer:
     * a TP all-reduce is one call per activation, but the DP reduce, priced here as the
     * whole gradient, runs as the stack's buckets (torch DDP's 25 MiB, DeepSpeed's,
     * FSDP's per unit), so it keeps the flat figure (docs/cost-model.md "All-reduce by
     * message size"). */
    out->dp_lat.ar_curve = out->sdp_lat.ar_curve = NULL;
    out->cp_bw = cp_bw(env, s, &out->cp_lat, memo);
    uint32_t cp_stride;
    out->cp_a2a_bw = env->knobs.cp_comm == TSL_CP_A2A && env->knobs.cp > 1 &&
                             tsl_cost_cp_group(s, env->knobs.cp, &cp_stride)
                         ? group_a2a_bw(env, cp_stride, env->knobs.cp)
                         : out->cp_bw;
    memset(out->moe, 0, sizeof(out->moe)); /* none made */
}

void tsl_cost_strategy_bw(const tsl_cost_env_t *env, const tsl_strategy_t *s,
                          tsl_strategy_bw_t *out)
{
    tsl_cost_strategy_bw_memo(env, s, NULL, out);
}

void tsl_cost_moe_bw(const tsl_cost_env_t *env, const tsl_layer_t *l, tsl_strategy_bw_t *out)
{
    uint32_t G = env->block_size, ep = env->knobs.ep > 1 ? env->knobs.ep : 1;
    uint32_t etp = env->knobs.etp > 1 ? env->knobs.etp : 1;
    /* moe_terms' groups: EP at stride etp, expert DP at stride ep·etp, expert TP
     * innermost */
    const uint32_t stride[TSL_COST_MOE_GROUPS] = {etp, ep * etp, 1},
                   degree[TSL_COST_MOE_GROUPS] = {ep, G / (ep * etp), etp};
    for (uint32_t i = 0; i < TSL_COST_MOE_GROUPS; i++) {
        tsl_group_bw_t *g = &out->moe[i];
        g->stride = stride[i];
        g->degree = degree[i];
        g->bw = group_bw(env, stride[i], degree[i], &g->lat);
        g->a2a_bw = group_a2a_bw(env, stride[i], degree[i]);
        g->flex_route = i == 0 ? tsl_cost_flex_route(l) : (tsl_cost_route_t){0};
        group_flex_bw(env, g->flex_route.experts ? l : NULL, stride[i], degree[i], &g->flex);
    }
}

/* group_bw, read from bw's made groups where one matches (tsl_cost_moe_bw), else
 * walked: the same figure either way; its all-to-all figure (group_a2a_bw) into *a2a
 * where not NULL. */
static double made_group_bw(const tsl_cost_env_t *env, const tsl_strategy_bw_t *bw, uint32_t stride,
                            uint32_t degree, tsl_coll_lat_t *lat, double *a2a)
{
    for (uint32_t i = 0; i < TSL_COST_MOE_GROUPS; i++) {
        const tsl_group_bw_t *g = &bw->moe[i];
        if (g->degree == degree && g->stride == stride) {
            *lat = g->lat;
            if (a2a != NULL)
                *a2a = g->a2a_bw;
            return g->bw;
        }
    }
    if (a2a != NULL)
        *a2a = group_a2a_bw(env, stride, degree);
    return group_bw(env, stride, degree, lat);
}

/* The EP group's flex figures for layer l, read from bw's made groups where one
 * matches (and was made for l's routing), else walked (group_flex_bw): the same either
 * way. */
static void made_group_flex(const tsl_cost_env_t *env, const tsl_layer_t *l,
                            const tsl_strategy_bw_t *bw, uint32_t stride, uint32_t degree,
                            tsl_cluster_flex_bw_t *out)
{
    const tsl_group_bw_t *g = &bw->moe[0];
    if (g->degree == degree && g->stride == stride &&
        tsl_cost_route_eq(g->flex_route, tsl_cost_flex_route(l))) {
        *out = g->flex;
        return;
    }
    group_flex_bw(env, l, stride, degree, out);
}

/* ---- collectives (ring, AMP Eq. 3; nccl-tests bus bandwidth) ---- */

double tsl_cost_allreduce_s(double bytes, uint32_t n, double bw)
{
    if (n <= 1 || bytes <= 0)
        return 0;
    return 2.0 * (n - 1) / n * bytes / bw;
}

double tsl_cost_allgather_s(double bytes, uint32_t n, double bw)
{
    if (n <= 1 || bytes <= 0)
        return 0;
    return (double)(n - 1) / n * bytes / bw;
}

double tsl_cost_reduce_scatter_s(double bytes, uint32_t n, double bw)
{
    return tsl_cost_allgather_s(bytes, n, bw);
}

double tsl_cost_p2p_s(double bytes, double bw)
{
    if (bytes <= 0)
        return 0;
    return bytes / bw;
}

/* A collective as NCCL runs it (STACK): the least over its algorithms and
 * protocols of α + bytes / that choice's bandwidth (cluster.h,
 * tsl_cluster_coll_allreduce_s); PAPER (no α: lat->n 0) the ring's bandwidth term
 * alone, bit for bit. n = 1 or an empty buffer costs 0. */
static double allreduce_lat_s(double bytes, uint32_t n, double bw, const tsl_coll_lat_t *lat)
{
    if (lat->n <= 1)
        return tsl_cost_allreduce_s(bytes, n, bw);
    return tsl_cluster_coll_allreduce_s(lat, bytes, n, bw, NULL);
}

static double allgather_lat_s(double bytes, uint32_t n, double bw, const tsl_coll_lat_t *lat)
{
    if (lat->n <= 1)
        return tsl_cost_allgather_s(bytes, n, bw);
    return tsl_cluster_coll_allgather_s(lat, bytes, n, bw, NULL);
}

/* An all-to-all: the bytes of the all-gather of the same buffer (tsl_cost_alltoall_s),
 * priced with its protocol choice. */
static double alltoall_lat_s(double bytes, uint32_t n, double bw, const tsl_coll_lat_t *lat)
{
    return allgather_lat_s(bytes, n, bw, lat);
}

/* Both sides run slowed by k while they overlap; the longer finishes alone
 * (Galvatron-BMW Sec. V). k = 1 is the classic max(X, C). */
double tsl_cost_overlap_s(double compute_s, double comm_s, double slowdown)
{
    /* times: finite and non-negative, never NaN (minmax.h) */
    return tsl_max(compute_s, comm_s) + (slowdown - 1.0) * tsl_min(compute_s, comm_s);
}

/* ---- one layer ---- */

static void set_infeasible(tsl_layer_cost_t *out)
{
    memset(out, 0, sizeof(*out));
    out->feasible = false;
    out->fwd_s = out->bwd_s = out->bwd_sync_s = INFINITY;
    out->grad_comm_s = out->compute_s = out->comm_s = INFINITY;
}

static inline uint64_t div_ceil(uint64_t a, uint64_t b)
{
    return (a + b - 1) / b;
}

/* Megatron pads the vocabulary of the token embedding and the LM head to a
 * multiple of 128·t (make-vocab-size-divisible-by 128 per TP rank); patch
 * embeddings and classifier heads keep theirs, and so does every layer under
 * autocast (PyTorch modules as written: the model's vocabulary as given). */
static double padded_vocab(const tsl_layer_t *l, uint32_t t, const tsl_cost_knobs_t *k)
{
    bool lm = (l->kind == TSL_LAYER_EMBEDDING && !l->patch_embed) ||
              (l->kind == TSL_LAYER_HEAD && l->head_tokens == 0) || l->kind == TSL_LAYER_MTP;
    if (!lm || l->vocab == 0 || (k != NULL && k->autocast))
        return (double)l->vocab;
    uint64_t q = 128ull * t;
    return (double)(((uint64_t)l->vocab + q - 1) / q * q);
}

/* Parameters Megatron replicates over the TP group: the learned position table
 * (only the word embedding is vocabulary-parallel), and a layer's extra_params where
 * they are plain torch modules beside the parallel linears (tp_repl_extra: AMP's
 * TransGAN, whose latent projection and position tables each TP rank holds whole). */
static double tp_replicated_params(const tsl_layer_t *l)
{
    double pos = l->kind == TSL_LAYER_EMBEDDING ? (double)l->positions * l->hidden : 0.0;
    return pos + (l->tp_repl_extra ? (double)l->extra_params : 0.0);
}

/* Parameters one TP rank holds: the vocabulary-parallel rest with the padded rows,
 * over t, plus the replicated position table in full. A tied head owns none in its
 * embedding's stage; in a later stage (tied_copy) it keeps a copy of the padded
 * word embedding's rows, as an untied head holds its own (Megatron). So does an
 * MTP depth's entry, whose lookup reads the word embedding (mtp.h; Megatron-LM
 * language_module.py setup_embeddings_and_output_layer at 44151194). */
static double rank_params(const tsl_layer_t *l, uint32_t t, bool tied_copy,
                          const tsl_cost_knobs_t *k)
{
    double repl = tp_replicated_params(l), extra = (padded_vocab(l, t, k) - l->vocab) * l->hidden;
    if ((l->kind == TSL_LAYER_HEAD && l->tied_head) || l->kind == TSL_LAYER_MTP)
        extra = tied_copy ? padded_vocab(l, t, k) * l->hidden : 0.0;
    return ((double)l->params - repl + extra) / t + repl;
}

bool tsl_cost_tp_fits(const tsl_layer_t *l, uint32_t t)
{
    if (t <= 1)
        return true;
    if (l->kind == TSL_LAYER_MAMBA) /* SSM heads and B/C groups (mamba.h) */
        return tsl_mamba_tp_fits(l, t);
    bool attn = tsl_layer_has_attention(l), ffn = tsl_layer_has_ffn(l);
    uint32_t kv = l->kv_heads && !l->kv_lora_rank ? l->kv_heads : l->heads;
    if (attn && (l->heads % t != 0 || kv % t != 0))
        return false;
    /* routed experts follow the expert TP (tsl_cost_ep_fits); shared experts the
     * attention's, as an FFN */
    uint32_t f = l->experts == 0        ? l->ffn_hidden
                 : l->shared_ffn_hidden ? l->shared_ffn_hidden
                 : l->shared_experts    ? l->ffn_hidden
                                        : 0;
    return !ffn || f % t == 0;
}

/* Degrees of a strategy, as the formulas name them. */
typedef struct degrees {
    uint32_t t, d, z;
} degrees_t;

/* Bytes per weight element a step keeps, gathers and computes with: 2 (16-bit), 4
 * under fp32 training (knobs.fp32). */
static inline double weight_elem_bytes(const tsl_cost_knobs_t *k)
{
    return k->fp32 ? 4.0 : TSL_BYTES_PER_PARAM_FP16;
}

/* Bytes per activation element on the wire (TP collectives, CP, the MoE dispatch):
 * TSL_ACT_DTYPE_BYTES, 4 under fp32 training. */
static inline double act_elem_bytes(const tsl_cost_knobs_t *k)
{
    return k->fp32 ? 4.0 : (double)TSL_ACT_DTYPE_BYTES;
}

/* Gradient bytes per element the DP/SDP reduce moves (knobs: 0 = 2; autocast: the
 * fp32 parameters' fp32 .grad, 4; fp32 training: 4). */
static inline double reduce_elem_bytes(const tsl_cost_knobs_t *k)
{
    return k->fp32                ? 4.0
           : k->grad_reduce_bytes ? (double)k->grad_reduce_bytes
           : k->autocast          ? 4.0
                                  : TSL_BYTES_PER_PARAM_FP16;
}

/* Gradient bytes per element the buffer holds (param.grad, main_grad): what the
 * weight gradients accumulate into, the model states keep and the step reads. The
 * reduce's where the stack reduces its buffer as it is (Megatron's grad buffer is
 * grad_reduce_in_fp32's dtype; FSDP2's reduce_dtype); knobs.grad_buf_bytes where it
 * casts a narrower one for the collective (DeepSpeed's fp32_allreduce over fp16
 * .grad: 2). */
static inline double grad_elem_bytes(const tsl_cost_knobs_t *k)
{
    return k->grad_buf_bytes && !k->fp32 ? (double)k->grad_buf_bytes : reduce_elem_bytes(k);
}

double tsl_cost_grad_elem_bytes(const tsl_cost_knobs_t *k)
{
    return grad_elem_bytes(k);
}

/* Optimizer bytes per parameter between steps: the fp32 master and Adam's two
 * moments, 4 + 4 + 4; 4 + 2 + 2 with bf16 moments (Megatron's precision-aware
 * optimizer, --exp-avg-dtype / --exp-avg-sq-dtype bf16; DeepSeek-V3 Sec. 3.3.3);
 * two 16-bit moments alone without a master; fp32 training: the two fp32 moments, 8
 * (the fp32 weight is the master: weight_elem_bytes). */
static double optimizer_bytes(const tsl_cost_knobs_t *k)
{
    if (k->fp32)
        return 8.0;
    if (k->no_fp32_master)
        return 2.0 * TSL_BYTES_PER_PARAM_FP16;
    return k->bf16_moments ? 4.0 + 2.0 * TSL_BYTES_PER_PARAM_FP16 : 12.0;
}

/* Whether the SDP level keeps its weights gathered and its gradients unsharded
 * between micro-batches (knobs.sdp_nosync, torchtitan's FSDP2 under PP; tsl_cost_layer
 * has cleared it where the block is not a pipeline stage): then they are model states,
 * not the backward's transient. */
static inline bool sdp_holds_unsharded(const tsl_cost_knobs_t *k, degrees_t g)
{
    return k->sdp_nosync && g.z > 1;
}

/* Whether the SDP level keeps each layer's gathered weights from its forward to its
 * backward and frees them after it (knobs.sdp_keep_weights: torch FSDP1's SHARD_GRAD_OP
 * with the gradients synced every micro-batch; not where sdp_nosync keeps them the
 * whole iteration): at the end of a forward every layer's are held, so they count at
 * the stage's peak as the states do; its gradients stay the backward's transient. */
static inline bool sdp_keeps_weights(const tsl_cost_knobs_t *k, degrees_t g)
{
    return k->sdp_keep_weights && !k->sdp_nosync && g.z > 1;
}

/* Bytes per parameter DeepSpeed's BF16_Optimizer keeps beside its fp32 buffer
 * (knobs.ds_bf16_optimizer): each backward's bf16 .grad, 2 B, whole on every DP rank.
 * DeepSpeed 56c522386 pipe/engine.py _exec_backward_pass sets every .grad to None
 * before autograd runs (clear_lp_grads) and, after it, adds them into the fp32
 * buffer with update_hp_grads(clear_lp_grads=False): the fresh .grad stays until
 * the next backward starts, through the forwards between, so it is held at every
 * peak of the 1F1B steady state (and from one iteration into the next). */
static double lp_grad_bytes(const tsl_cost_knobs_t *k)
{
    return k->ds_bf16_optimizer ? TSL_BYTES_PER_PARAM_FP16 : 0.0;
}

/* O_ms, O_f, O_b of cost.h for n samples per device; p = the parameters of this
 * TP rank (rank_params). Model states per parameter (Rajbhandari 2020): 2 16-bit
 * weights + g gradient bytes + 12 optimizer bytes (fp32 master, m, v), all
 * divided by z; ZeRO-1 divides the optimizer bytes by d too, ZeRO-2 the
 * gradients. g = 2, or 4 for fp32 main gradients (Megatron-LM's 18 B with
 * --bf16). Without a master the moments are 16-bit: 4 optimizer bytes. Under
 * SDP with fp32 gradients the sharded fp32 parameter is the master and no
 * 16-bit copy stays between steps (FSDP2's MixedPrecisionPolicy): 12 + g.
 * DeepSpeed's BF16_Optimizer keeps the bf16 .grad beside the fp32 buffer
 * (lp_grad_bytes): 2 + 2 + g + 12/d. */
static double states_bytes(const tsl_strategy_t *s, degrees_t g, double p,
                           const tsl_cost_knobs_t *k)
{
    double z = g.z, gb = grad_elem_bytes(k);
    double opt_div = s->zero >= 1 ? g.d : 1, grad_div = s->zero >= 2 ? g.d : 1;
    double opt = optimizer_bytes(k);
    double weights = k->fp32 ? weight_elem_bytes(k) /* the fp32 weight, its own master */
                     : g.z > 1 && gb >= 4 && !k->no_fp32_master ? 0.0
                                                                : TSL_BYTES_PER_PARAM_FP16;
    if (sdp_holds_unsharded(k, g)) /* the gathered weights and the whole gradients */
        return p * (weight_elem_bytes(k) + gb / grad_div) + p / z * (weights + opt / opt_div);
    /* the gathered weights beyond the shard, held from the forward to the backward
     * (transient_bytes counts them otherwise) */
    double kept = sdp_keeps_weights(k, g) ? weight_elem_bytes(k) * p * (z - 1.0) / z : 0.0;
    return kept + p / z * (weights + lp_grad_bytes(k) + gb / grad_div + opt / opt_div);
}

/* The backward's transient bytes beyond the states (layer_memory, the end). */
static double transient_bytes(const tsl_strategy_t *s, degrees_t g, double p, double gb,
                              const tsl_cost_knobs_t *k)
{
    double b = 0.0, z = g.z;
    /* SDP gathers the full (TP-sharded) 16-bit weights and holds unsharded
     * gradients before reduce-scatter: 2 + g bytes per parameter beyond its shard
     * (states already, where the level keeps them: sdp_nosync; the weights alone
     * where it keeps them to the backward: sdp_keep_weights); fp32: 4 + g. */
    if (g.z > 1 && !sdp_holds_unsharded(k, g))
        b += ceil((sdp_keeps_weights(k, g) ? gb : weight_elem_bytes(k) + gb) * p * (g.z - 1) / z);
    /* ZeRO-2 holds a layer's full gradient until it is reduce-scattered */
    if (s->zero >= 2 && g.d > 1)
        b += ceil(gb * p / z * (1.0 - 1.0 / g.d));
    return b;
}

/* The gradient part of states_bytes: g bytes per parameter, ÷ z (not where the SDP
 * level accumulates them unsharded: sdp_nosync), ÷ d under ZeRO-2. */
static double grads_bytes(const tsl_strategy_t *s, degrees_t g, double p, const tsl_cost_knobs_t *k)
{
    double z = sdp_holds_unsharded(k, g) ? 1.0 : g.z;
    return p / z * grad_elem_bytes(k) / (s->zero >= 2 ? g.d : 1);
}

/* Adds d bytes (d < 0: takes them away, down to 0) to *b. */
static void shift_bytes(uint64_t *b, double d)
{
    if (d >= 0)
        *b += (uint64_t)ceil(d);
    else
        *b = (double)*b > -d ? *b - (uint64_t)(-d) : 0;
}

/* An LM head's loss (loss_impl.h) for `samples` samples' logits on this rank (the
 * vocabulary split over TP by every stack's loss): what its implementation keeps
 * beyond the fp32 logits the model's head figure counts (*act; TE's fused loss
 * keeps the bf16 logits instead: less), and its transient (*loss), the larger of
 * the loss forward's and backward's, both at the stage's whole stash: the peak of
 * the head's backward. Under autocast the script's loss is torch's with its bf16
 * logits kept through the backward (TSL_AUTOCAST_LOGITS_KEPT_BYTES), out of the
 * forward's transient. t is the TP degree the vocabulary is split over: torch's
 * loss runs loss_parallel's eager decomposition under t > 1 (loss_impl.h). PAPER:
 * the seeds' head, the fp32 logits alone, whatever loss_impl says (a script's
 * autocast loss stays priced, as before loss_impl). held: the stage holds the
 * micro-batch's bf16 logits to the step's end anyway (pp_logits_held_bytes), so a
 * loss that keeps those very logits (tsl_loss_keeps_logits: torch-compile's saved
 * input) keeps nothing beside them. */
static void loss_bytes(const tsl_layer_t *l, const tsl_cost_knobs_t *k, tsl_cost_mode_t mode,
                       uint32_t t, double samples, bool held, uint64_t *act, double *loss)
{
    if (l->kind != TSL_LAYER_HEAD || l->head_tokens != 0 || l->vocab == 0)
        return;
    if (mode == TSL_COST_PAPER && !k->autocast)
        return;
    double logits = (double)l->seq_len * l->vocab * samples;
    uint32_t impl = k->autocast ? TSL_LOSS_TORCH : k->loss_impl;
    /* a script's autocast loss is ATen's over its whole logits, not loss_parallel's */
    uint32_t split = k->autocast ? 1 : t;
    double kept = (held && tsl_loss_keeps_logits(impl) ? 0.0 : tsl_loss_kept_bytes(impl)) -
                  TSL_LOSS_MODEL_KEPT_BYTES;
    double fwd = tsl_loss_fwd_bytes(impl, split);
    if (k->autocast) {
        kept += TSL_AUTOCAST_LOGITS_KEPT_BYTES;
        fwd -= TSL_AUTOCAST_LOGITS_KEPT_BYTES;
    }
    shift_bytes(act, kept * logits);
    *loss = fmax(fwd, tsl_loss_bwd_bytes(impl, split)) * logits;
}

/* What the head's stage holds per micro-batch until the step ends (tsl_layer_cost_t
 * step_bytes): under torch's loss on a pipelined block, every micro-batch's logits in
 * the activations' dtype. torch.distributed.pipelining appends the last stage's output
 * of each forward to output_chunks and keeps it until step() returns to merge it
 * (stage.py forward_one_chunk, schedules.py step; pytorch/pytorch#159251), and runs
 * the loss inside the schedule (_maybe_compute_loss), so torchtitan's `del pred`
 * (train.py:306-307 at 9dec370, PP off only) has no counterpart: at the last
 * micro-batch's backward the stage holds all m; under the compiled loss
 * (torch-compile) too, the pipelining being the same. Not under autocast (a script's own
 * loop) nor PAPER (the seeds' head). */
static double pp_logits_held_bytes(const tsl_layer_t *l, const tsl_cost_env_t *env, double samples)
{
    const tsl_cost_knobs_t *k = &env->knobs;
    if (l->kind != TSL_LAYER_HEAD || l->head_tokens != 0 || l->vocab == 0 || !env->pipelined ||
        env->mode == TSL_COST_PAPER || k->autocast || !tsl_loss_pp_holds_logits(k->loss_impl))
        return 0.0;
    return act_elem_bytes(k) * (double)l->seq_len * l->vocab * samples;
}

/* Model-state bytes per weight element of a linear the recipe quantises, beyond
 * its bf16 weight: Transformer Engine's two cached copies (rowwise and columnwise,
 * tsl_fp8_copy_bytes each; FP8 2, nvfp4 1.125) kept between steps. With
 * fp8_param_gather the copies are the weight itself, in place of its 2 bf16 bytes
 * (FP8 0, nvfp4 -0.875: Megatron-LM --fp8-param-gather / --fp4-param-gather, "keep
 * the compute param in fp8/fp4"). None under torchao: it keeps no copy (fp8_impl.h). */
static double fp8_weight_bytes(const tsl_cost_knobs_t *k, uint32_t recipe, bool any_layout)
{
    if (!tsl_fp8_impl_caches(k->fp8_impl))
        return 0.0;
    /* one copy where the GEMMs take any layout (Blackwell, per-tensor recipes) */
    double n = tsl_fp8_one_copy(recipe, k->fp8_impl, any_layout) ? 1.0 : 2.0;
    double copies = n * tsl_fp8_copy_bytes(recipe);
    /* a module at its own precision keeps a bf16 weight: TEQuantizationRecipe's
     * fp8_param / fp4_param default false, its fp8_model_init disabled (module_prec.h) */
    return k->fp8_param_gather && recipe == k->fp8 ? copies - TSL_BYTES_PER_PARAM_FP16 : copies;
}

/* The layer's FP8 linears on one TP rank by the recipe each runs at (module_prec.h:
 * the plan's recipe but where knobs.module_prec overrides a module). */
static void fp8_split(const tsl_layer_t *l, uint32_t t, uint32_t mods, const tsl_cost_knobs_t *k,
                      tsl_roofline_fp8_split_t *out)
{
    tsl_roofline_fp8_split(l, t, mods, k->module_prec, k->fp8, out);
}

/* Bytes saved per element of a linear input TE keeps for the backward in the
 * recipe's columnwise copy instead of bf16 (FP8 1, nvfp4 2 − 0.5625). */
static double fp8_stash_save_bytes(uint32_t recipe)
{
    return TSL_ACT_DTYPE_BYTES - tsl_fp8_copy_bytes(recipe);
}

/* Whether the attention output projection's input is held twice under TE's default
 * (cost model 170): a fused core (flash / cuDNN: FlashAttention's backward reads its
 * output O, saved by the core — TE's FusedAttnFunc and flash-attn alike) keeps that
 * bf16 tensor for its own backward, and TE's Linear keeps its own FP8 columnwise copy
 * of the same tensor (linear.py: saved_inputmat = the quantised input): 2 + 1 B per
 * element where the stash counts the copy alone. Not where the core is unfused (its
 * backward reads the probabilities and V, not its output), nor where it is recomputed
 * (+selckpt: core_attn's checkpoint keeps only its inputs), nor under a full CKPT. */
static bool proj_copy_beside_core(const tsl_layer_t *l, const tsl_strategy_t *s)
{
    return !l->unfused_attn && !s->selective && !s->ckpt;
}

/* TE's FP8 weight caches (into *ms) and the activations act less what the FP8 stashes
 * save, each linear at the recipe it runs at (fp8_split). The projection's input:
 * Megatron-core's linear_proj keeps the core's bf16 output, no FP8 copy (cost model
 * 166), and saves nothing; TE's default keeps its FP8 copy beside that output where a
 * fused core saves it (170); a projection kept bf16 (module_prec) neither. */
static uint64_t fp8_stash_act(const tsl_layer_t *l, const tsl_strategy_t *s, degrees_t g,
                              uint64_t mb, uint64_t w, uint64_t split, uint32_t mods,
                              const tsl_cost_knobs_t *k, bool any_layout, uint64_t act,
                              uint64_t *ms)
{
    tsl_roofline_fp8_split_t e;
    fp8_split(l, g.t, mods, k, &e);
    uint32_t pr = tsl_module_prec_recipe(k->module_prec, TSL_MODULE_LINEAR_PROJ, k->fp8);
    double proj = pr != TSL_FP8_NONE ? tsl_roofline_proj_fp8_elems(l, g.t) : 0.0;
    bool orig = tsl_cost_proj_orig_input(k), twice = !orig && proj_copy_beside_core(l, s);
    double save = 0.0, beside = 0.0;
    for (uint32_t r = 1; r < TSL_FP8_COUNT; r++) {
        double shard = e.shard[r] - (r == pr && (orig || twice) ? proj : 0.0);
        shift_bytes(ms, fp8_weight_bytes(k, r, any_layout) * e.weights[r]);
        save += fp8_stash_save_bytes(r) *
                (e.repl[r] * (double)mb / (double)split + shard * (double)mb / (double)w);
        /* FP8 copies kept beside a bf16 one (fc1_latent_proj's input: cost model 175) */
        beside += tsl_fp8_copy_bytes(r) * e.beside[r] * (double)mb / (double)split;
    }
    if (twice && proj > 0)
        beside += tsl_fp8_copy_bytes(pr) * proj * (double)mb / (double)w;
    uint64_t saved = (uint64_t)save;
    act = act > saved ? act - saved : 0;
    return act + (uint64_t)ceil(beside);
}

static void layer_memory(const tsl_layer_t *l, const tsl_strategy_t *s, degrees_t g, uint64_t mb,
                         uint64_t w, uint64_t cp, double p, const tsl_cost_knobs_t *k,
                         tsl_cost_mode_t mode, bool fp8, bool any_layout, bool held,
                         tsl_layer_cost_t *out)
{
    double gb = grad_elem_bytes(k);
    out->ms_bytes = (uint64_t)ceil(states_bytes(s, g, p, k));
    out->grad_bytes = (uint64_t)ceil(grads_bytes(s, g, p, k));
    /* a rank holds mb / w samples' tokens (mb·c / w samples of s / c tokens under
     * CP: activations ÷ c); an unfused core's scores are a block's, (s/c)² per
     * chunk pair, so ÷ c again */
    uint64_t split = (s->sp ? g.t : 1) * w; /* sequence parallelism shards the rest */
    uint64_t score = s->selective ? l->act_score_bytes : 0;
    uint64_t kept_score = cp > 1 ? l->act_score_bytes - score : 0;
    /* the recompute modules' stash (recompute.h), on layers without full CKPT */
    uint32_t mods = s->ckpt ? 0 : k->recompute_modules;
    uint64_t drop_repl, drop_shard;
    tsl_recompute_drop(l, mods, &drop_repl, &drop_shard);
    /* an unfused core that keeps all its heads on each TP rank (knobs.tp_whole_heads:
     * AMP's fork's TransGAN attention) keeps all their scores there too */
    uint64_t whole = k->tp_whole_heads && cp <= 1 ? l->act_score_bytes - score : 0;
    uint64_t rest = l->act_shard_bytes - score - kept_score - whole;
    rest = rest > drop_shard ? rest - drop_shard : 0;
    uint64_t act = div_ceil((l->act_repl_bytes - drop_repl) * mb, split) +
                   div_ceil(rest * mb, g.t * w) + div_ceil(kept_score * mb, g.t * w * cp) +
                   div_ceil(whole * mb, w);
    if (fp8 && tsl_fp8_impl_caches(k->fp8_impl)) { /* TE: FP8 weight caches, FP8 stashes */
        act = fp8_stash_act(l, s, g, mb, w, split, mods, k, any_layout, act, &out->ms_bytes);
    }
    if (k->autocast) { /* fp32 norm inputs, the fp32 softmax beside its bf16 copy */
        double x_repl, x_score;
        tsl_roofline_autocast_act(l, &x_repl, &x_score);
        act += (uint64_t)ceil(x_repl * (double)mb / (double)split);
        if (!s->selective)
            act += (uint64_t)ceil(x_score * (double)mb / ((double)g.t * w * (cp > 1 ? cp : 1)));
        /* transformers' gelu_new keeps its fp32 intermediates (roofline.h) */
        act += (uint64_t)ceil(tsl_roofline_hf_gpt2_act(l) * (double)mb / ((double)g.t * w));
    }
    double loss = 0.0; /* the LM loss's transient (loss_bytes) */
    loss_bytes(l, k, mode, g.t, (double)mb / ((double)g.t * w), held, &act, &loss);
    if (s->ckpt) {
        out->fwd_bytes = div_ceil(l->bnd_act_bytes * mb, split);
        out->bwd_bytes = act;
    } else {
        out->fwd_bytes = act;
        out->bwd_bytes = 0;
    }
    out->bwd_bytes += (uint64_t)ceil(loss);
    if (g.z > 1 && !sdp_holds_unsharded(k, g))
        out->bwd_bytes += (uint64_t)ceil((weight_elem_bytes(k) + gb) * p * (g.z - 1) / g.z);
    if (sdp_holds_unsharded(k, g) && fp8 && k->fp8_param_gather) {
        /* the held weights are what FSDP gathered: FP8 ones 1 byte (torchao's
         * enable_fsdp_float8_all_gather, Megatron-FSDP's FP8 gather); a module at its
         * own precision keeps a bf16 weight (fp8_weight_bytes) */
        tsl_roofline_fp8_split_t e;
        fp8_split(l, g.t, mods, k, &e);
        shift_bytes(&out->ms_bytes, -(TSL_BYTES_PER_PARAM_FP16 - 1.0) * e.weights[k->fp8]);
    }
    if (s->zero >= 2 && g.d > 1)
        out->bwd_bytes += (uint64_t)ceil(gb * p / g.z * (1.0 - 1.0 / g.d));
}

/* The block's rate for the plan's low-precision GEMMs: the FP4 tensor cores'
 * under nvfp4, else the FP8 ones' (docs/cost-model.md "FP8", "NVFP4"). */
static double fp8_recipe_flops(const tsl_cost_env_t *env)
{
    return env->knobs.fp8 == TSL_FP8_NVFP4 ? env->device_fp4_flops : env->device_fp8_flops;
}

/* FP8 is priced where the knobs ask for it and every device of the block has it
 * (a search never asks elsewhere; eval refuses: search.c, eval.c) and no measured
 * (bf16) profile replaces the roofline. */
static bool fp8_priced(const tsl_cost_env_t *env)
{
    return env->knobs.fp8 != TSL_FP8_NONE && env->profile == NULL && fp8_recipe_flops(env) > 0 &&
           env->device_mem_bw > 0 && isfinite(env->device_mem_bw);
}

/* The routed experts' grouped GEMMs in FP8 with the plan's recipe: FP8 priced, the
 * experts not kept bf16 (knobs.moe_bf16_experts), their widths multiples of 16. */
static bool experts_fp8(const tsl_cost_env_t *env, const tsl_layer_t *l)
{
    uint32_t etp = env->knobs.etp > 1 ? env->knobs.etp : 1;
    return fp8_priced(env) && !env->knobs.moe_bf16_experts && tsl_roofline_fp8_experts(l, etp);
}

/* Bytes a ZeRO-3 / ZeRO-1 weight all-gather moves for p weights of which w8 belong
 * to FP8 GEMMs: 2 each, 1 for those with fp8_param_gather (Megatron-LM
 * --fp8-param-gather: "perform the param all-gather in fp8"; torchao's
 * enable_fsdp_float8_all_gather casts the shard before FSDP gathers it), 0.5
 * under nvfp4 (--fp4-param-gather: the packed E2M1 bytes, tsl_fp8_data_bytes). */
static double gather_bytes(const tsl_cost_env_t *env, double p, double w8, bool bf16_ag)
{
    double b = weight_elem_bytes(&env->knobs) * p; /* fp32 training: 4 */
    if (!env->knobs.fp8_param_gather || !fp8_priced(env) || bf16_ag)
        return b;
    return b -
           (TSL_BYTES_PER_PARAM_FP16 - tsl_fp8_data_bytes(env->knobs.fp8)) * fmin(fmax(w8, 0.0), p);
}

/* Whether the distributed optimizer gathers MXFP8 weights in bf16 through the
 * gradient buffer: Megatron-LM's reuse_grad_buf_for_mxfp8_param_ag (44151194
 * param_and_grad_buffer.py: the shared param/grad buffer holds "params in bf16";
 * _post_param_sync copies each gathered bf16 slice into its MXFP8 parameter,
 * `param.data.copy_`, which quantises it, then zeroes the bucket for the gradients),
 * which Megatron-Bridge requires with fp8_param_gather under MXFP8 without
 * Megatron-FSDP (21d102f5e training/config.py: "reuse_grad_buf_for_mxfp8_param_ag
 * must be set to True"; bf16_with_mxfp8_mixed sets it) and Megatron-LM recommends
 * (optimizer_config.py). So with ZeRO-1/2 and no SDP (g.z) an MXFP8 plan's
 * fp8_param_gather gathers 2 bytes per weight and casts every weight once per
 * iteration (fp8_weight_cast_s); Megatron-FSDP (SDP) keeps its MXFP8 gathers. */
static bool mxfp8_bf16_param_ag(const tsl_cost_env_t *env, const tsl_strategy_t *s, degrees_t g)
{
    return fp8_priced(env) && env->knobs.fp8 == TSL_FP8_MXFP8 && env->knobs.fp8_param_gather &&
           tsl_fp8_impl_caches(env->knobs.fp8_impl) && s->zero >= 1 && g.z <= 1;
}

/* The weight elements of the layer's FP8 linears on one TP rank of t (the routed
 * experts apart) by the recipe each runs at (fp8_split); all 0 where FP8 is not
 * priced. */
static void fp8_weights(const tsl_cost_env_t *env, const tsl_layer_t *l, uint32_t t,
                        tsl_roofline_fp8_split_t *out)
{
    if (fp8_priced(env))
        fp8_split(l, t, 0, &env->knobs, out); /* weights: any recompute */
    else
        memset(out, 0, sizeof(*out));
}

/* Transformer Engine's FP8 weight copies are cast once per iteration, not per
 * micro-batch: Megatron-LM passes is_first_microbatch to its TE linears and grouped
 * linears (extensions/transformer_engine.py), which reuse the cached copies after.
 * The cast of this rank's w8 FP8 weight elements, in the step (opt_s): the recipe's
 * bytes and the implementation's kernels (current scaling: amax, scale, cast). None
 * under torchao (it casts per use: in the roofline) or with fp8_param_gather (the
 * weights are FP8 themselves: the optimizer step writes them). The copies of w8
 * elements at `recipe`: a module at its own precision (module_prec.h) keeps a bf16
 * weight (fp8_weight_bytes), whose copies TE casts so under any param gather too. */
static double fp8_weight_cast_s(const tsl_cost_env_t *env, uint32_t recipe, double w8, bool bf16_ag)
{
    bool own = recipe != env->knobs.fp8;
    if (!fp8_priced(env) || !tsl_fp8_impl_caches(env->knobs.fp8_impl) ||
        (env->knobs.fp8_param_gather && !bf16_ag && !own) || !(w8 > 0) || recipe == TSL_FP8_NONE)
        return 0.0;
    tsl_roofline_dev_t dev;
    tsl_roofline_dev_init(&dev, env->device_flops, env->device_mem_bw);
    dev.fp8 = recipe;
    dev.fp8_impl = env->knobs.fp8_impl;
    dev.fp8_any_layout = env->device_fp8_any_layout;
    double t = tsl_roofline_fp8_cast_s(&dev, w8, false, NULL);
    if (bf16_ag && !own) /* the bucket's bf16 view zeroed after the copy: 2 B, a kernel */
        t += tsl_roofline_mem_s(&dev, TSL_BYTES_PER_PARAM_FP16 * w8, 1);
    return t;
}

/* The element bytes g of the kept gradient buffer the linears' weight-gradient GEMMs
 * accumulate into in their epilogue (C read with beta 1, D written: 2·g bytes per
 * element; roofline.h wgrad_acc_bytes), bf16 and FP8 alike: Megatron-LM's
 * gradient_accumulation_fusion (since 83b1e42f30, 2022-02, fp32 main_grad only; a 16-bit
 * main_grad since 07916bf245, 2022-09: megatron/core/tensor_parallel/layers.py
 * wgrad_gemm_accum_fp32 / _fp16 into weight.main_grad, whose dtype is the grad buffer's,
 * fp32 under grad_reduce_in_fp32, else the parameters'), Transformer Engine's
 * fuse_wgrad_accumulation in TELinear / TEGroupedLinear (out = main_grad, its dtype), and
 * Tessel's executor (beta 1 on its bf16 gradient buffer). 0 where the GEMM writes a
 * fresh gradient: the stack adds it by kernels of its own (unfused_grad_accum,
 * autocast), PyTorch FSDP keeps no buffer between backwards (lazy_grads: torchtitan,
 * Llama 3's), torchao's FP8 (torchtitan's). */
static double wgrad_acc_bytes(const tsl_cost_knobs_t *k)
{
    if (k->unfused_grad_accum || k->autocast || k->lazy_grads || k->ds_bf16_optimizer)
        return 0.0;
    if (k->fp8 != TSL_FP8_NONE && k->fp8_impl != TSL_FP8_IMPL_TE)
        return 0.0;
    return grad_elem_bytes(k);
}

/* The LM loss's kernels on the roofline's device (loss_impl.h "The loss's time"):
 * the plan's loss_impl; under autocast the script's own, torch's over its whole
 * logits (as loss_bytes prices its memory); PAPER: the seeds' one figure, torch's
 * eager loss over unsplit ops, whatever loss_impl says. */
static void loss_dev(const tsl_cost_env_t *env, tsl_roofline_dev_t *dev)
{
    bool own = env->knobs.autocast || env->mode == TSL_COST_PAPER;
    dev->loss_impl = own ? TSL_LOSS_TORCH : env->knobs.loss_impl;
    dev->loss_unsplit = own;
}

/* The roofline's device as env prices it: the GPU's rates and shape curve, the
 * stack's host dispatch, the plan's expert layout and routing, its FP8 recipe, the
 * stack's kernels (autocast, eager) and CP's core (cp_core). One description for
 * every roofline call of the cost model, so that a layer's passes, its modules'
 * recompute and its core under CP are priced on the same device. */
static void env_dev(const tsl_cost_env_t *env, tsl_roofline_dev_t *dev)
{
    tsl_roofline_dev_init(dev, env->device_flops, env->device_mem_bw);
    dev->shape = env->gemm_shape;
    dev->host_op_s = env->host_op_s;
    dev->launch_blocking = env->knobs.launch_blocking;
    dev->ep = env->knobs.ep > 1 ? env->knobs.ep : 1;
    dev->etp = env->knobs.etp > 1 ? env->knobs.etp : 1;
    tsl_cost_moe_rows(&env->knobs, &dev->moe_busy, &dev->moe_moved);
    if (fp8_priced(env)) {
        dev->fp8 = env->knobs.fp8;
        dev->fp8_impl = env->knobs.fp8_impl;
        dev->fp8_any_layout = env->device_fp8_any_layout;
        dev->fp8_flops = fp8_recipe_flops(env);
        dev->module_prec = env->knobs.module_prec; /* module_prec.h: its linears' own */
        dev->f8_flops = env->device_fp8_flops;
        dev->f4_flops = env->device_fp4_flops;
        dev->moe_fp8 = !env->knobs.moe_bf16_experts;
        dev->proj_orig_input = tsl_cost_proj_orig_input(&env->knobs);
        dev->shared_orig = tsl_cost_shared_fc1_orig_input(&env->knobs);
        dev->down_orig = tsl_cost_mla_down_orig_input(&env->knobs);
        dev->fp8_dpa = env->knobs.fp8_dpa;
    }
    dev->wgrad_acc_bytes = wgrad_acc_bytes(&env->knobs);
    dev->moe_a2a = env->knobs.moe_alltoall;
    dev->moe_unfused = env->knobs.moe_unfused_permute;
    dev->moe_fused_mlp = env->knobs.moe_fused_mlp;
    dev->moe_fused_srelu = env->knobs.moe_fused_srelu;
    dev->cuda_graphs = env->knobs.cuda_graph_modules;
    /* HybridEP and DeepEP take fp32 probs only (token_dispatcher.py at 44151194) */
    dev->moe_fp32_probs = env->knobs.moe_flex || env->knobs.moe_fp8_dispatch;
    dev->autocast = env->knobs.autocast;
    dev->fp16 = env->knobs.fp16;
    dev->eager = env->knobs.eager;
    dev->tp_whole_heads = env->knobs.tp_whole_heads;
    dev->unfused_elementwise = env->knobs.unfused_elementwise;
    dev->attn_kernel = env->knobs.attn_kernel;
    /* whose fused norm (norm_impl.h); PAPER: the seeds' figures, TE's */
    dev->norm_impl = env->mode == TSL_COST_PAPER ? TSL_NORM_IMPL_TE : env->knobs.norm_impl;
    loss_dev(env, dev);
    if (env->knobs.fp32) { /* the fp32 rate and its curve (TF32 or not); every element 4 bytes */
        bool off = env->knobs.tf32_off;
        dev->gemm_flops = off ? env->device_fp32_fma_flops : env->device_fp32_flops;
        /* the slowest device's curve at its fp32 peak, made here rather than kept in the
         * env: the search caches an env per stage block (a 100k-GPU cluster has some
         * hundred thousand), and only fp32 plans read it */
        tsl_gemm_eff_for_gpu(&dev->shape, env->slowest->name,
                             tsl_gpu_fp32_peak_as(env->slowest, off), env->slowest->mem_bw);
        dev->elem_scale = 2.0;
    }
    cp_core(env, dev);
}

/* What layer_compute_f's roofline passes tell beside their times, for the terms
 * that would otherwise price the same passes again: the forward's GPU time before
 * the host floor and its FP8 TP blocks (fwd), the backward's with the gradient
 * accumulation before the floor (bwd_acc_gpu_s). */
typedef struct layer_kernels {
    tsl_roofline_fwd_t fwd;
    double bwd_s; /* the backward's roofline time, before any measured profile */
    double bwd_acc_gpu_s;
    double bwd_mlp_frac, bwd_mlp_wgrad_frac; /* tsl_roofline_bwd_t's */
} layer_kernels_t;

/* ---- the one place compute time is modelled: a roofline per GEMM with the
 * GPU's shape curve (roofline.h, gemm_eff.h): forward, backward (each GEMM's two
 * gradient GEMMs) and the attention core selective recomputation repeats. A
 * measured profile, where one exists, replaces the first two. ---- */
static void layer_compute_f(const tsl_cost_env_t *env, const tsl_layer_t *l,
                            const tsl_strategy_t *s, double n, uint32_t t, double acc_params,
                            double acc_bytes, double *fwd_s, double *bwd_s, double *acc_s,
                            double *core_s, double *wgrad_frac, double col_frac[2],
                            layer_kernels_t *kern)
{
    tsl_roofline_dev_t dev;
    env_dev(env, &dev);
    dev.grad_acc_bytes = acc_bytes;
    tsl_roofline_layer_fwd(&dev, l, n, t, s->sp, padded_vocab(l, t, &env->knobs), &kern->fwd);
    *fwd_s = kern->fwd.s;
    tsl_roofline_bwd_t b;
    tsl_roofline_layer_bwd(&dev, l, n, t, s->sp, padded_vocab(l, t, &env->knobs), acc_params, &b);
    *bwd_s = kern->bwd_s = b.s;
    /* a later micro-batch's backward adds its gradients into the buffer (acc_bytes) */
    *acc_s = b.acc_s - *bwd_s;
    kern->bwd_acc_gpu_s = b.acc_gpu_s;
    *core_s = s->selective ? tsl_roofline_core_fwd_s(&dev, l, n, t) : 0.0;
    *wgrad_frac = b.wgrad_frac;
    kern->bwd_mlp_frac = b.mlp_frac;
    kern->bwd_mlp_wgrad_frac = b.mlp_wgrad_frac;
    col_frac[0] = b.col_frac[0];
    col_frac[1] = b.col_frac[1];
}

/* The EP collectives of a host-bound MoE pass (docs/cost-model.md "Host dispatch"): NCCL's
 * kernels run on the compute stream while the host goes on dispatching the layer's ops,
 * so a pass whose host floor (fwd; bwd with a later micro-batch's gradient accumulation,
 * acc: the roofline's, floored) is above its kernels' time shows only what of the
 * collectives that lead does not cover: the pass takes max(kernels + collectives,
 * ops · H). GPU-bound passes keep them whole. The kernels' times are the layer's own
 * passes' (kern), priced again only where the dispatcher's host restart sits in them. */
static void ep_host_lead(const tsl_cost_env_t *env, const tsl_layer_t *l, const tsl_strategy_t *s,
                         double n, uint32_t t, double acc_params, double acc_bytes,
                         const layer_kernels_t *kern, double fwd, double bwd, double *ep_f,
                         double *ep_b)
{
    if (!(env->host_op_s > 0) || !(*ep_f + *ep_b > 0))
        return;
    double gf = kern->fwd.gpu_s, gb = kern->bwd_acc_gpu_s; /* the kernels alone */
    if (env->knobs.moe_alltoall) { /* the dispatcher's host restart is in those: without */
        tsl_roofline_dev_t dev;
        env_dev(env, &dev);
        dev.host_op_s = 0.0;
        dev.grad_acc_bytes = acc_bytes;
        double V = padded_vocab(l, t, &env->knobs);
        /* gpt-oss's offset copy drains the stream: its idle hides no collective */
        gf = tsl_roofline_layer_fwd_s(&dev, l, n, t, s->sp, V) +
             tsl_roofline_glu_offset_sync_s(&dev, env->host_op_s, l);
        gb = tsl_roofline_layer_bwd_acc_s(&dev, l, n, t, s->sp, V, acc_params);
    }
    *ep_f = fmax(0.0, *ep_f - fmax(0.0, fwd - gf));
    *ep_b = fmax(0.0, *ep_b - fmax(0.0, bwd - gb));
}

/* The experts after the sync (docs/cost-model.md "The experts after the sync"): a
 * dropless MoE layer's forward reads its per-expert row counts on the host before its
 * grouped GEMMs can be issued (Megatron-LM 44151194 token_dispatcher.py: HybridEP and
 * DeepEP size the dispatch's output from tokens_per_expert, "CPU sync"; the all-to-all
 * dispatcher synchronises before its all-to-all; TEGroupedMLP takes
 * tokens_per_expert.tolist() as m_splits). The stream is then empty: what the host
 * issues after it — the dispatch, TE's per-expert quantize and GEMM calls, the
 * activation, the combine — runs at the slower of the host and the GPU, with no lead
 * from the layers before. Shows max(0, host − GPU) of that stretch: its ops
 * (kern->fwd.expert_ops) at host_op_s (the block's host CPU's: tsl_cost_env_init) against
 * its kernels and the forward's EP collectives (ep_fwd: the dispatch and combine queue
 * behind it), less what a host-bound pass's floor already adds over its kernels beyond
 * what of it hid those collectives (ep_hidden: ep_host_lead's share). None
 * in PAPER mode, without a host floor, with synchronous launches (the
 * host never leads: launch_blocking prices it), with a capacity factor (a fixed budget:
 * HybridEP's setup_metadata, no sync) or under TE's op fuser (expert_ops 0). */
static double moe_sync_stretch(const tsl_cost_env_t *env, const layer_kernels_t *kern,
                               double ep_fwd, double ep_hidden)
{
    if (env->mode == TSL_COST_PAPER || !(env->host_op_s > 0) || env->knobs.launch_blocking ||
        env->knobs.moe_capacity > 0 || !(kern->fwd.expert_ops > 0))
        return 0.0;
    double host = kern->fwd.expert_ops * env->host_op_s;
    /* a host-bound pass's floor charges its ops already: what it adds over the kernels
     * is not charged twice — less what of it already hid the forward's EP collectives
     * (ep_host_lead, ep_hidden): one idle span is not spent twice, so more host time
     * never prices a shorter pass */
    double floor = fmax(0.0, kern->fwd.s - kern->fwd.gpu_s - ep_hidden);
    return fmax(0.0, host - kern->fwd.expert_gpu_s - ep_fwd - floor);
}

/*
 * TP in the backward: the exposed part of the backward's TP collectives, tp_f's
 * ring bytes again (docs/cost-model.md "TP in the backward"). All of it in PAPER
 * mode (Galvatron) and without knobs.overlap_tp_dgrad (Tessel's executor, which
 * sums on the compute stream; Megatron-LM before 2021-09). With it, as Megatron-
 * LM's column-parallel linear runs its backward (tensor_parallel/layers.py,
 * LinearWithGradAccumulationAndAsyncCommunication; Korthikanti et al. 2022, Sec.
 * 4.2.2 and 6.2): the input gradient's all-reduce is launched before the
 * weight-gradient GEMM and runs under it, so only overlap(dW, C) − dW shows;
 * under SP the backward of the forward's reduce-scatter (an all-gather of dY,
 * ag_dy) is exposed, the dX reduce-scatter (half of tp_f) runs under dW, and
 * the input that SP keeps sharded is all-gathered again for dW under the dX GEMM
 * (the paper's "extra all-gather", ag_in). ag_dy and ag_in are half of tp_f in
 * bf16, less where the gathered tensor feeds an FP8 linear (tp_sp_t). dx, dw: the
 * layer's column-parallel dX and dW GEMM times, taken as one span each; k the
 * overlap slowdown. The recomputed forward of full recomputation keeps its
 * collectives exposed, as every forward does.
 */
static double tp_bwd_s(const tsl_cost_env_t *env, bool sp, double tp_f, double ag_in, double ag_dy,
                       double dx, double dw, double k)
{
    double half = tp_f / 2.0;
    if (env->mode == TSL_COST_PAPER || !env->knobs.overlap_tp_dgrad || !(tp_f > 0))
        return sp ? ag_dy + half : tp_f;
    if (!sp)
        return tsl_cost_overlap_s(dw, tp_f, k) - dw;
    return ag_dy + tsl_cost_overlap_s(dx, ag_in, k) - dx + tsl_cost_overlap_s(dw, half, k) - dw;
}

/* FP8 sequence-parallel all-gathers (docs/cost-model.md "FP8 sequence-parallel
 * all-gathers"): under SP the all-gathers of a TP block whose linears run in FP8
 * move the quantised tensor, not bf16 — the input of its column-parallel linear
 * (the forward's gather, the backward's re-gather for dW) and the output gradient
 * of its row-parallel one (dY's gather) — at tsl_fp8_impl_sp_gather_bytes per
 * element; the reduce-scatters stay bf16. The blocks are the layer's userbuffers
 * blocks (roofline.h tsl_roofline_layer_tp_gemms: self-attention, dense MLP,
 * Mamba-2 mixer; the MoE FFN's gather feeds the router and the dispatcher, latent
 * attention's its replicated down projections: bf16). Each gather's time as a
 * share of the bf16 one's, the collective priced at both sizes; n 0 (every share
 * 1) where FP8 is not priced, in PAPER mode, without SP or TP.
 * Under TE current scaling or NVFP4 each of those casts (the column-parallel linear's
 * input forward, the row-parallel one's dY backward) first all-reduces its 4-byte
 * amax over the TP group (fp8_impl.h tsl_fp8_impl_amax_reduced; cost models 163 and
 * 200), each linear at the recipe its module runs (module_prec: col_amax, row_amax):
 * one small all-reduce each, α-bound, on the compute stream's path between the
 * amax and scale kernels — the block's gather cannot start before the cast, so
 * nothing hides it: amax_f_s and amax_b_s, the pass's sum. */
#define TSL_FP8_AMAX_BYTES 4.0 /* one fp32 amax (quantize_impl's amax_buf) */

typedef struct tp_sp {
    uint32_t n;                        /* blocks with shares below */
    double in[TSL_ROOFLINE_TP_BLOCKS]; /* the input's gather */
    double dy[TSL_ROOFLINE_TP_BLOCKS]; /* dY's gather */
    double amax_f_s, amax_b_s;         /* the casts' amax all-reduces, each pass */
} tp_sp_t;

static void tp_sp_shares(const tsl_cost_env_t *env, const tsl_layer_t *l, const tsl_strategy_t *s,
                         double n, uint32_t t, double msg, const tsl_strategy_bw_t *bw,
                         const tsl_roofline_fwd_t *fwd, tp_sp_t *out)
{
    memset(out, 0, sizeof(*out));
    if (env->mode == TSL_COST_PAPER || !s->sp || t < 2 || !fp8_priced(env) || !(msg > 0))
        return;
    /* the blocks' FP8 linears: layer_compute_f's forward pass recorded them, save
     * without a memory bandwidth (FLOP count only), where only tp_gemms walks them */
    tsl_roofline_tp_gemms_t g = {.n = fwd->n};
    memcpy(g.col_fp8, fwd->col_fp8, sizeof(g.col_fp8));
    memcpy(g.row_fp8, fwd->row_fp8, sizeof(g.row_fp8));
    memcpy(g.col_amax, fwd->col_amax, sizeof(g.col_amax));
    memcpy(g.row_amax, fwd->row_amax, sizeof(g.row_amax));
    if (!(env->device_mem_bw > 0)) {
        tsl_roofline_dev_t dev;
        env_dev(env, &dev);
        tsl_roofline_layer_tp_gemms(&dev, l, n, t, s->sp, padded_vocab(l, t, &env->knobs), &g);
    }
    double bf16 = allgather_lat_s(msg, t, bw->tp_bw, &bw->tp_lat);
    if (!(bf16 > 0))
        return;
    double b_in = tsl_fp8_impl_sp_gather_bytes(env->knobs.fp8, env->knobs.fp8_impl, false);
    double b_dy = tsl_fp8_impl_sp_gather_bytes(env->knobs.fp8, env->knobs.fp8_impl, true);
    double in = allgather_lat_s(msg * b_in / 2.0, t, bw->tp_bw, &bw->tp_lat) / bf16;
    double dy = allgather_lat_s(msg * b_dy / 2.0, t, bw->tp_bw, &bw->tp_lat) / bf16;
    double amax = allreduce_lat_s(TSL_FP8_AMAX_BYTES, t, bw->tp_bw, &bw->tp_lat);
    out->n = g.n < l->tp_allreduces ? g.n : l->tp_allreduces;
    for (uint32_t i = 0; i < out->n; i++) {
        out->in[i] = g.col_fp8[i] ? in : 1.0;
        out->dy[i] = g.row_fp8[i] ? dy : 1.0;
        out->amax_f_s += g.col_amax[i] ? amax : 0.0;
        out->amax_b_s += g.row_amax[i] ? amax : 0.0;
    }
}

/* TE delayed scaling's amax bookkeeping (cost model 177; docs/cost-model.md "Delayed
 * scaling's amax reduction"). Each FP8 module appends its amax-history row to one global
 * buffer per pass (TE 7d576ed25 fp8.py add_fp8_tensors_to_global_buffer); at each
 * fp8_autocast exit (Megatron-core wraps each model chunk's TransformerBlock.forward in
 * one, transformer_block.py at 338af5145) and after the first module's backward
 * (linear.py, layernorm_linear.py: reduce_and_update_bwd_fp8_tensors)
 * reduce_and_update_fp8_tensors concatenates them (torch.cat), all-reduces the result
 * (MAX, async_op=False: the compute stream waits) over the autocast's fp8_group — the
 * amax reduction group, every rank of the stage (parallel_state
 * get_amax_reduction_group(with_context_parallel=True)) — and rolls every history and
 * recomputes every scale in one fused kernel
 * (tex.fused_amax_and_scale_update_after_reduction, delayed_scaling.cu kernel_bulk).
 * Per pass and chunk: that all-reduce over the block's G ranks plus two launch floors.
 * Its message, 4 B per amax (3 a GEMM forward, 2 backward) of
 * TSL_FP8_DELAYED_GEMMS a layer (assumed: the dense block's QKV, projection, FC1 and
 * FC2), is α-bound. None under current or block scaling (TE reduces nothing there per
 * pass), torchao, PAPER, or without FP8 priced. Under knobs.fp8_amax_tp_only see
 * amax_tp_only_s. */
#define TSL_FP8_DELAYED_GEMMS   4.0
#define TSL_FP8_DELAYED_KERNELS 2.0 /* torch.cat and the fused update, each pass */

/* TE before v1.6 under NVTE_DP_AMAX_REDUCE_INTERVAL=0 and NVTE_ASYNC_AMAX_REDUCTION=1
 * (knobs.fp8_amax_tp_only, cost model 185; docs/cost-model.md "Delayed scaling's amax
 * reduction over TP"), per chunk: TE da30634a6 global_amax_reduction (fp8.py
 * l.360-386) takes the module's TP group, and at TP 1 returns before its torch.cat; the
 * all-reduce runs async (base.py l.235-236). The forward's is launched at the next
 * fp8_autocast entry (fp8.py l.410-411) and waited by that region's first module before
 * its kernels (base.py l.554-557): exposed. The backward's is launched after the
 * region's last backward module (base.py l.98-107) and waited at the next backward
 * region's first (l.76-79), with a forward, the head's backward or a pipeline wait
 * between: hidden (assumed; its ~10 µs under any of them). The update's launch floor
 * stays each pass (the per-module updates of that TE are not priced apart). */
static void amax_tp_only_s(const tsl_cost_env_t *env, const tsl_strategy_t *s, double amaxes,
                           double launch_s, double *f, double *b)
{
    uint32_t t = s ? tsl_strategy_degree(s, TSL_DIM_TP) : 1;
    *f = *b = launch_s; /* the update */
    if (t <= 1)
        return;
    *f += launch_s; /* torch.cat, each pass */
    *b += launch_s;
    tsl_coll_lat_t lat;
    double bw = dim_bw(env, s, TSL_DIM_TP, &lat, NULL);
    if (isfinite(bw) && bw > 0)
        *f += allreduce_lat_s(3.0 * amaxes * TSL_FP8_AMAX_BYTES, t, bw, &lat);
}

void tsl_cost_fp8_delayed_amax_s(const tsl_cost_env_t *env, const tsl_strategy_t *s,
                                 uint32_t layers, uint32_t chunks, double *fwd_s, double *bwd_s)
{
    *fwd_s = *bwd_s = 0.0;
    if (env->mode == TSL_COST_PAPER || !fp8_priced(env) || env->knobs.fp8 != TSL_FP8_DELAYED ||
        env->knobs.fp8_impl != TSL_FP8_IMPL_TE || layers == 0)
        return;
    double c = chunks > 1 ? chunks : 1;
    double amaxes = TSL_FP8_DELAYED_GEMMS * ceil(layers / c);
    tsl_roofline_dev_t dev;
    env_dev(env, &dev);
    double f = TSL_FP8_DELAYED_KERNELS * dev.launch_s, b = f;
    if (env->knobs.fp8_amax_tp_only) {
        amax_tp_only_s(env, s, amaxes, dev.launch_s, &f, &b);
    } else {
        tsl_coll_lat_t lat;
        double bw = group_bw(env, 1, env->block_size, &lat);
        if (isfinite(bw) && bw > 0) {
            f += allreduce_lat_s(3.0 * amaxes * TSL_FP8_AMAX_BYTES, env->block_size, bw, &lat);
            b += allreduce_lat_s(2.0 * amaxes * TSL_FP8_AMAX_BYTES, env->block_size, bw, &lat);
        }
    }
    *fwd_s = c * f;
    *bwd_s = c * b;
}

/* The layer's SP all-gathers of the inputs (*ag_in) and of dY (*ag_dy) in
 * seconds: half of tp_f each in bf16, each block's FP8 share taken off. */
static void tp_sp_gathers(const tp_sp_t *sp, uint32_t allreduces, double tp_f, double *ag_in,
                          double *ag_dy)
{
    double half = allreduces ? tp_f / allreduces / 2.0 : 0.0;
    *ag_in = *ag_dy = tp_f / 2.0;
    for (uint32_t i = 0; i < sp->n; i++) {
        *ag_in -= half * (1.0 - sp->in[i]);
        *ag_dy -= half * (1.0 - sp->dy[i]);
    }
}

/*
 * An MTP depth's entry (TSL_LAYER_MTP, mtp.h) as Megatron-LM runs its eh_proj in
 * training (transformer/multi_token_prediction.py at d98e8a6, _concat_embeddings):
 * a column-parallel linear 2h -> h/t (gather_output False, TE's
 * TEColumnParallelLinear), its output then all-gathered over TP
 * (gather_from_tensor_model_parallel_region) and, under SP, split along the
 * sequence again (scatter_to_sequence_parallel_region). Not one all-reduce of s·h
 * each way (tp_f, the layer's tp_allreduces 1) but, with U = tp_f / 2 the
 * all-gather of s·h (docs/cost-model.md "Multi-token prediction"):
 *   forward   the output's all-gather U; under SP first the 2h-wide input's
 *             all-gather 2U (at the FP8 share where eh_proj runs FP8: "FP8
 *             sequence-parallel all-gathers")
 *   backward  the gather's backward is a split; the input gradient, 2h wide: an
 *             all-reduce 2·tp_f, under SP a reduce-scatter 2U after the scatter's
 *             backward, an all-gather of dY (U), and for dW the input's re-gather
 *             2U under the dX GEMM where the dX collective runs under dW
 *             (overlap_tp_dgrad: tp_bwd_s with the 2h-wide collectives)
 * Gives the forward's and the backward's exposed TP time and what of the backward's
 * the dW GEMMs hid; false where it does not apply (PAPER keeps the seeds' count of
 * all-reduces; not an entry; no TP). No userbuffers overlap is priced for eh_proj.
 */
static bool mtp_entry_tp(const tsl_cost_env_t *env, const tsl_layer_t *l, const tsl_strategy_t *s,
                         uint32_t t, double act_msg, const tsl_strategy_bw_t *bw, double tp_f,
                         const double col[2], double k, double out[3])
{
    if (env->mode == TSL_COST_PAPER || l->kind != TSL_LAYER_MTP || t < 2 || !(tp_f > 0))
        return false;
    double u = tp_f / 2.0, in = tp_f;
    double h = l->hidden, bf16 = allgather_lat_s(2.0 * act_msg, t, bw->tp_bw, &bw->tp_lat);
    bool fp8 = fp8_priced(env) && fmod(2.0 * h, 16.0) == 0 && fmod(h / t, 16.0) == 0;
    if (s->sp && fp8 && bf16 > 0) { /* eh_proj's FP8 input, gathered in the recipe's bytes */
        double b_in = tsl_fp8_impl_sp_gather_bytes(env->knobs.fp8, env->knobs.fp8_impl, false);
        in *= allgather_lat_s(2.0 * act_msg * b_in / 2.0, t, bw->tp_bw, &bw->tp_lat) / bf16;
    }
    out[0] = s->sp ? in + u : u;
    out[1] = tp_bwd_s(env, s->sp, 2.0 * tp_f, in, u, col[0], col[1], k);
    out[2] = (s->sp ? u + tp_f : 2.0 * tp_f) - out[1];
    return true;
}

/* The SMs TransformerEngine's userbuffers collectives take beside their GEMM, as
 * Megatron-Bridge's FP8 cfgs set them (training/comm_overlap.py at 21d102f5e,
 * userbuffers_fp8_h100_h8192_tp4_mbs1_seqlen8192; docs/cost-model.md "TP
 * communication overlap"): each bulk overlap's kernel (allgather2_userbuff_inplace /
 * reducescatter2_userbuff_*, launched before its GEMM, set_sm_margin false) holds
 * num_sm SMs; a ring exchange moves its shards by cudaMemcpyAsync on the copy
 * engines (use_ce, TE's default: no SMs), and the reduce-scatter rings of the
 * projection and FFN-out keep num_sm 1 off the GEMM (set_sm_margin true:
 * _math_sms = SMs − 1, comm_gemm_overlap.cpp at TE release_v2.16). */
#define TSL_UB_QKV_DGRAD_SMS 4.0  /* bulk: the input's re-gather under QKV's dX */
#define TSL_UB_QKV_WGRAD_SMS 24.0 /* bulk: dX's reduce-scatter under QKV's dW */
#define TSL_UB_FC1_DGRAD_SMS 2.0  /* bulk: under FFN-in's dX */
#define TSL_UB_FC1_WGRAD_SMS 4.0  /* bulk: under FFN-in's dW */
#define TSL_UB_RS_RING_SMS   1.0  /* the projection / FFN-out forward rings' margin */

/* A GEMM of g seconds beside a collective of c seconds that holds a share f of
 * the GPU's SMs: the collective at its own rate, the GEMM at 1 − f of its rate
 * while both run, alone after. Total max(c, g + f·c); exposed beyond g. With no
 * SM figure for the GPU (sms 0) the overlap slowdown k of "Time of one
 * micro-batch" in its place. */
static double ub_share_s(double g, double c, double sms, double comm_sms, double k)
{
    if (!(sms > comm_sms))
        return tsl_cost_overlap_s(g, c, k) - g;
    return fmax(c, g + comm_sms / sms * c) - g;
}

/* One collective of c seconds under a GEMM of g seconds as TransformerEngine's
 * userbuffers ring exchange runs it (comm_gemm_overlap.cpp, CommOverlapP2PBase::
 * split_overlap_ag / split_overlap_rs, release_v2.16): the GEMM in t chunks, one per
 * TP rank's shard, the t − 1 point-to-point transfers each beside one chunk, and one
 * chunk with nothing beside it (the local shard: the all-gather's first, the
 * reduce-scatter's last). Exposed: what the t − 1 chunks do not hide, the GEMM
 * short of comm_sms SMs while they run. */
static double ub_ring_s(double g, double c, uint32_t t, double sms, double comm_sms, double k)
{
    double under = g * (t - 1.0) / t;
    return ub_share_s(under, c, sms, comm_sms, k);
}

/* The kernel that ends TransformerEngine's ring-exchange reduce-scatter
 * (CommOverlapP2PBase::split_overlap_rs, common/comm_gemm_overlap/
 * comm_gemm_overlap.cpp at release_v2.9 and release_v2.16, "Reduce GEMM output
 * chunks"): once the t − 1 sends have landed, reduce_bf16 (userbuffers.cu) sums the
 * t partial output chunks of the rank's shard on the main stream, nothing beside it —
 * it reads the t chunks, msg bytes in all (the whole s·h output at the activations'
 * bytes: the ring's buffer is bf16, initialize_ub keeps fp8_buf for the all-gather
 * buffers alone), and writes the shard, msg/t; one vectorised streaming kernel, at the
 * roofline's streaming share. */
static double ub_rs_reduce_s(const tsl_roofline_dev_t *dev, double msg, uint32_t t)
{
    return tsl_roofline_mem_bytes_s(dev, msg * (1.0 + 1.0 / t), 1);
}

/* The device and a layer's TP GEMMs by block, for the two overlaps that hide each
 * block's TP collectives under its own GEMMs (userbuffers, torch's AsyncTP); gives
 * how many blocks have both a GEMM set and a collective pair. */
static uint32_t tp_overlap_gemms(const tsl_cost_env_t *env, const tsl_layer_t *l,
                                 const tsl_strategy_t *s, double n, uint32_t t,
                                 tsl_roofline_dev_t *dev, tsl_roofline_tp_gemms_t *g)
{
    env_dev(env, dev);
    tsl_roofline_layer_tp_gemms(dev, l, n, t, s->sp, padded_vocab(l, t, &env->knobs), g);
    return g->n < l->tp_allreduces ? g->n : l->tp_allreduces;
}

/* TP communication overlap (Megatron-LM --tp-comm-overlap, knobs.tp_comm_overlap;
 * docs/cost-model.md "TP communication overlap"): each userbuffers block of the
 * layer (roofline.h tsl_roofline_layer_tp_gemms: self-attention, dense MLP) runs its
 * forward all-gather under the column-parallel GEMM and its reduce-scatter under
 * the row-parallel one (ring exchange), and in the backward the all-gather of dY
 * under the row-parallel dX GEMM (ring exchange), the input's re-gather under the
 * column-parallel dX GEMM and dX's reduce-scatter under its dW GEMM (bulk: the
 * overlaps overlap_tp_dgrad prices, block by block). Collectives of other blocks
 * (the MoE FFN's, the embedding's) keep the forward exposed and, in the backward,
 * tp_bwd_s's figure for them under the column-parallel dX and dW GEMMs (col, the
 * layer's, in seconds) the blocks did not use. half = one block's
 * all-gather (or reduce-scatter), tp_f / tp_allreduces / 2. Gives the forward's
 * and the backward's exposed TP time, what of the backward's the dW GEMMs hid and
 * the forward's exposed TP time of the last block (a dense MLP's); false where it
 * does not apply (PAPER, the knob off, no SP: Megatron-LM asserts
 * --sequence-parallel with --tp-comm-overlap, arguments.py). The all-gathers of
 * FP8 blocks at their share of half (sp: the userbuffers are FP8 under an FP8
 * recipe, TE's initialize_ub fp8_buf), the reduce-scatters whole, each forward
 * ring's then summed (ub_rs_reduce_s; act_msg: the activation tensor's bytes, s·h). */
static bool tp_ub_s(const tsl_cost_env_t *env, const tsl_layer_t *l, const tsl_strategy_t *s,
                    double n, uint32_t t, const double pass[2], double tp_f, const double col[2],
                    double k, const tp_sp_t *sp, double act_msg, double out[4])
{
    if (env->mode == TSL_COST_PAPER || !env->knobs.tp_comm_overlap || !s->sp || t < 2 ||
        !(tp_f > 0) || l->tp_allreduces == 0)
        return false;
    tsl_roofline_dev_t dev;
    tsl_roofline_tp_gemms_t g;
    uint32_t m = tp_overlap_gemms(env, l, s, n, t, &dev, &g);
    double half = tp_f / l->tp_allreduces / 2.0, f = pass[0], b = pass[1];
    double rest = tp_f - 2.0 * half * m;
    double fwd = rest, bwd = 0.0, hid = 0.0, dx = col[0], dw = col[1];
    /* the bulk overlaps' SMs by buffer: a self-attention's are qkv's, a dense MLP's
     * and a Mamba-2 mixer's fc1's (the blocks come in that order: roofline.h) */
    const double dx_sms[2] = {TSL_UB_QKV_DGRAD_SMS, TSL_UB_FC1_DGRAD_SMS};
    const double dw_sms[2] = {TSL_UB_QKV_WGRAD_SMS, TSL_UB_FC1_WGRAD_SMS};
    double sms = dev.shape.sms, rs = TSL_UB_RS_RING_SMS;
    double sum = ub_rs_reduce_s(&dev, act_msg, t); /* each forward ring's partials' sum */
    for (uint32_t i = 0; i < m; i++) {
        uint32_t j = tsl_layer_has_attention(l) && i == 0 ? 0 : 1;
        double in = half * (i < sp->n ? sp->in[i] : 1.0), dy = half * (i < sp->n ? sp->dy[i] : 1.0);
        double w = ub_share_s(g.col_dw[i] * b, half, sms, dw_sms[j], k);
        fwd += ub_ring_s(g.col_f[i] * f, in, t, sms, 0.0, k) +
               ub_ring_s(g.row_f[i] * f, half, t, sms, rs, k) + sum;
        bwd += ub_ring_s(g.row_dx[i] * b, dy, t, sms, 0.0, k) +
               ub_share_s(g.col_dx[i] * b, in, sms, dx_sms[j], k) + w;
        hid += half - w;
        dx -= g.col_dx[i] * b; /* these GEMMs hide their own block's collectives */
        dw -= g.col_dw[i] * b;
    }
    /* the rest as "TP in the backward" prices it, under the column-parallel GEMMs
     * no block took */
    double rest_b =
        tp_bwd_s(env, s->sp, rest, rest / 2.0, rest / 2.0, fmax(0.0, dx), fmax(0.0, dw), k);
    out[0] = fwd;
    out[1] = bwd + rest_b;
    out[2] = hid + rest - rest_b;
    /* a dense MLP is the last block recorded (roofline.h): its forward's figure */
    double last_in = half * (m > 0 && m - 1 < sp->n ? sp->in[m - 1] : 1.0);
    out[3] = m > 0 && m == g.n ? ub_ring_s(g.col_f[m - 1] * f, last_in, t, sms, 0.0, k) +
                                     ub_ring_s(g.row_f[m - 1] * f, half, t, sms, rs, k) + sum
                               : 2.0 * half;
    return true;
}

/* The share of the datasheet HBM bandwidth that ATen's reduce_kernel reaches summing
 * a micro-pipelined reduce-scatter's stacked partials: "23-43% of HBM peak" on the
 * op's shapes for a reduction of extent 2-8, instruction-bound (pytorch/pytorch#191803,
 * July 2026, which replaced that torch.sum with a Triton kernel at 82-88%). The middle
 * of the published range: an assumption (the PR gives no figure per shape). */
#define TSL_ASYNC_TP_SUM_HBM_FRAC 0.33

/* The kernel that sums a micro-pipelined reduce-scatter's t partials (torch's
 * _fused_matmul_reduce_scatter_impl / its scaled twin: reduce_fn, torch.sum(dim=0)
 * over stacked_partials after _pipelined_produce_and_all2all, eager ATen inside the
 * op): it reads the t received chunks of the output shard, msg bytes in all (the
 * whole s·h output at the activations' bytes), and writes the shard, msg/t; after
 * the last transfer, at TSL_ASYNC_TP_SUM_HBM_FRAC of the datasheet bandwidth, not
 * the roofline's streaming share (TSL_ROOFLINE_MEM_EFF). NCCL's reduce-scatter
 * sums inside its own kernel, priced in tp_f. */
static double async_tp_reduce_s(const tsl_roofline_dev_t *dev, double msg, uint32_t t)
{
    double stream = tsl_roofline_mem_bytes_s(dev, msg * (1.0 + 1.0 / t), 0);
    return stream * (TSL_ROOFLINE_MEM_EFF / TSL_ASYNC_TP_SUM_HBM_FRAC) +
           tsl_roofline_mem_s(dev, 0, 1);
}

/* torch's micro-pipelined TP (knobs.async_tp: torchtitan's AsyncTP, inductor's
 * micro_pipeline_tp pass over symmetric memory; docs/cost-model.md "torch's
 * micro-pipelined TP"). The pass fuses an all-gather whose result is a GEMM's left
 * operand into fused_all_gather_matmul (the forward's input before the column-
 * parallel linears, the backward's dY before the row-parallel dX GEMM) and a
 * reduce-scatter whose input is one GEMM's output into fused_matmul_reduce_scatter
 * (the forward's row-parallel output). Each runs its GEMM in t chunks, one per TP
 * rank's shard, with t − 1 copy-engine transfers (tensor.copy_ from a peer's
 * symmetric buffer: no SMs), one chunk with none beside it: ub_ring_s's rule, 0 SMs
 * held. The reduce-scatter then sums its t partials (async_tp_reduce_s). The
 * backward's dX reduce-scatter sums several linears' dX (Q, K, V; FFN-in's two)
 * before it, no GEMM's output alone, so the pass leaves it to NCCL: "TP in the
 * backward" prices it, as the collectives outside a block. Under torchtitan's op
 * recompute policy (recompute_modules torchtitan_op) the saved reduce-scatter
 * output breaks the match (pytorch/torchtitan#866, fixed by #965 in 2025): the
 * forward's reduce-scatters stay exposed. msg: the activation tensor's bytes (s·h).
 * Gives out[] as tp_ub_s; false where it does not apply (PAPER, the knob off, no SP,
 * t < 2, no TP collective). */
static bool tp_async_s(const tsl_cost_env_t *env, const tsl_layer_t *l, const tsl_strategy_t *s,
                       double n, uint32_t t, const double pass[2], double tp_f, const double col[2],
                       double k, const tp_sp_t *sp, double msg, double out[4])
{
    if (env->mode == TSL_COST_PAPER || !env->knobs.async_tp || !s->sp || t < 2 || !(tp_f > 0) ||
        l->tp_allreduces == 0)
        return false;
    tsl_roofline_dev_t dev;
    tsl_roofline_tp_gemms_t g;
    uint32_t m = tp_overlap_gemms(env, l, s, n, t, &dev, &g);
    double half = tp_f / l->tp_allreduces / 2.0, f = pass[0], b = pass[1];
    double sms = dev.shape.sms;
    bool rs_fused = !(env->knobs.recompute_modules & TSL_RECOMPUTE_TORCHTITAN_OP);
    double red = rs_fused ? async_tp_reduce_s(&dev, msg, t) : 0.0;
    double ag_in, ag_dy;
    tp_sp_gathers(sp, l->tp_allreduces, tp_f, &ag_in, &ag_dy);
    double fwd = tp_f - 2.0 * half * m, rings_b = 0.0, blk_f = 2.0 * half;
    for (uint32_t i = 0; i < m; i++) {
        double in = half * (i < sp->n ? sp->in[i] : 1.0), dy = half * (i < sp->n ? sp->dy[i] : 1.0);
        double rs = rs_fused ? ub_ring_s(g.row_f[i] * f, half, t, sms, 0.0, k) + red : half;
        blk_f = ub_ring_s(g.col_f[i] * f, in, t, sms, 0.0, k) + rs;
        fwd += blk_f;
        rings_b += ub_ring_s(g.row_dx[i] * b, dy, t, sms, 0.0, k);
        ag_dy -= dy; /* this gather runs in the ring, the rest as before */
    }
    double rest_b = tp_bwd_s(env, s->sp, tp_f, ag_in, ag_dy, col[0], col[1], k);
    out[0] = fwd;
    out[1] = rings_b + rest_b;
    out[2] = ag_dy + tp_f / 2.0 - rest_b; /* what the dW GEMMs hid (overlap_tp_dgrad) */
    /* a dense MLP is the last block recorded (roofline.h): its forward's figure */
    out[3] = m > 0 && m == g.n ? blk_f : 2.0 * half;
    return true;
}

/* The attention core's forward, as the ring's blocks split it: the selective
 * recompute figure where the strategy has one, else the roofline's. */
static double core_fwd_s(const tsl_cost_env_t *env, const tsl_layer_t *l, double n, uint32_t t,
                         double core_f)
{
    if (core_f > 0 || env->knobs.cp <= 1 || !tsl_layer_has_attention(l))
        return core_f;
    tsl_roofline_dev_t dev;
    env_dev(env, &dev);
    return tsl_roofline_core_fwd_s(&dev, l, n, t);
}

/* The knobs' optimizer step (opt_step.h) over the states as the stack keeps them. */
static void opt_step_cost(const tsl_cost_knobs_t *k, tsl_opt_step_cost_t *c)
{
    /* autocast: the fp32 parameters are the master, no 16-bit copy to write
     * (torch.optim.AdamW(fused=True) over fp32: 24 + 4) */
    tsl_opt_step_states_t st = {.grad_bytes = grad_elem_bytes(k),
                                .master = !k->no_fp32_master,
                                .bf16_moments = k->bf16_moments,
                                .weights16 = !k->autocast && !k->fp32,
                                .unfused_grad_accum = k->unfused_grad_accum};
    tsl_opt_step_cost(k->opt_step, &st, c);
}

double tsl_cost_opt_step_cost(const tsl_cost_knobs_t *k, double *local_bytes, uint32_t *kernels)
{
    tsl_opt_step_cost_t c;
    opt_step_cost(k, &c);
    if (local_bytes)
        *local_bytes = c.local_bytes;
    if (kernels)
        *kernels = c.kernels;
    return c.shard_bytes;
}

double tsl_cost_opt_step_bytes(const tsl_cost_knobs_t *k)
{
    return tsl_cost_opt_step_cost(k, NULL, NULL);
}

/* The parameter tensors a per-tensor optimizer loop (opt_step torch-loop) walks for
 * layer l on this rank. Under SDP, the flat parameters of the FSDP units that shard
 * it (fairscale 0.4.5's and torch FSDP1's flatten_parameters: one per unit): a
 * block's attention and its MLP, as Galvatron-BMW wraps them (PKU-DAIR/Hetu df32daa
 * tools/Galvatron/utils/parallel_utils.py wrap_module_fsdp_manually), a decoder's
 * cross-attention one more, any other layer one; the units' root's own leftovers
 * (T5's and Swin's norms) are not counted. Else the tensors in Megatron's layout
 * (cost_host_sync.h tsl_ds_step_tensors: a dense block's 12, which Galvatron's
 * ParallelAttention/ParallelMLP layers hold at any TP degree); one for a layer not
 * laid out (MoE experts, MLA, Mamba). */
static uint32_t step_tensors(const tsl_layer_t *l, degrees_t g, double p)
{
    if (l == NULL)
        return 1;
    if (g.z > 1)
        return l->kind == TSL_LAYER_DECODER ? 3 : l->kind == TSL_LAYER_ENCODER ? 2 : 1;
    double e[TSL_DS_STEP_MAX_TENSORS];
    uint32_t n = tsl_ds_step_tensors(l, g.t, p, e);
    return n ? n : 1;
}

/* The pieces of layer l's tensors that the busiest of the z ranks holds (a loop over the
 * original parameters under FSDP1's use_orig_params, opt_step composer: each tensor its
 * 1/z chunk of the unit's flat parameter intersects; tsl_shard_step_tensors), in elements;
 * one piece of p / z for a layer not laid out (MoE experts, MLA, Mamba). */
static uint32_t orig_step_pieces(const tsl_layer_t *l, degrees_t g, double p, double *piece)
{
    double e[TSL_DS_STEP_MAX_TENSORS];
    uint32_t n = l != NULL ? tsl_ds_step_tensors(l, g.t, p, e) : 0;
    if (n == 0) {
        piece[0] = p / g.z;
        return 1;
    }
    return tsl_shard_step_tensors(e, n, g.z, piece);
}

/* The optimizer step of the parameters this device updates: its TP rank's p,
 * divided by SDP (ZeRO-3) and by DP under ZeRO-1/2 (sharded optimizer states),
 * at the stack's bytes per parameter (opt_step.h), and the stack's zeroing of the
 * gradients it keeps (p / z, / d under ZeRO-2). HBM-bound at W_opt, a launch per
 * pass (the executor: one Adam per layer), per pass and tensor for a per-tensor
 * loop (step_tensors). PAPER: the seeds' one fused kernel
 * whatever the stack. Unknown bandwidth: 0, as the pre-roofline model charged
 * nothing for it. */
static double optimizer_s(const tsl_cost_env_t *env, const tsl_layer_t *l, const tsl_strategy_t *s,
                          degrees_t g, double p)
{
    double div = (double)g.z * (s->zero >= 1 ? g.d : 1);
    if (!(env->opt_mem_bw > 0) || !(p > 0))
        return 0.0;
    tsl_cost_knobs_t k = env->knobs;
    if (env->mode == TSL_COST_PAPER)
        k.opt_step = TSL_OPT_STEP_FUSED;
    tsl_opt_step_cost_t c;
    opt_step_cost(&k, &c);
    /* a per-tensor loop launches its kernels for each of the layer's tensors */
    double kernels = (double)c.kernels * (c.kernels_per_tensor ? step_tensors(l, g, p) : 1u);
    double piece[TSL_DS_STEP_MAX_TENSORS], sync = 0.0;
    if (c.reads_back) { /* Composer's loop: the original tensors' pieces, a read before each */
        uint32_t m = orig_step_pieces(l, g, p, piece);
        kernels = (double)c.kernels * m;
        sync = tsl_composer_step_sync_s(piece, m, env->host_op_s / TSL_ROOFLINE_FRAMEWORK_OPS,
                                        env->opt_mem_bw, TSL_ROOFLINE_LAUNCH_S);
    }
    double kept = p / g.z / (s->zero >= 2 ? g.d : 1); /* gradient elements kept */
    double t = (c.shard_bytes * p / div + c.local_bytes * kept) / env->opt_mem_bw +
               kernels * TSL_ROOFLINE_LAUNCH_S + sync;
    /* DeepSpeed's unfused fp16 step reads every tensor's sum and norm back to the
     * host (cost_host_sync.h): each read's chain runs from an idle GPU at the host's
     * pace, a framework op each (H lumps TSL_ROOFLINE_FRAMEWORK_OPS of them). It runs
     * on unsharded states only (the fork's engine: no ZeRO with it) */
    if (k.opt_step == TSL_OPT_STEP_DEEPSPEED_FP16 && l != NULL && div == 1.0)
        t += tsl_ds_fp16_step_sync_s(l, g.t, p, env->host_op_s / TSL_ROOFLINE_FRAMEWORK_OPS,
                                     env->opt_mem_bw, TSL_ROOFLINE_LAUNCH_S);
    return t;
}

/* Bytes per parameter a micro-batch's weight gradients cost to add into the gradient
 * buffer by kernels of their own (docs/cost-model.md "Gradient accumulation"):
 * PyTorch's AccumulateGrad under autocast (fp32 .grad: 4 + 4 read, 4 written) or
 * with knobs.unfused_grad_accum (Megatron-LM 2021's fp16 param.grad: 2 + 2 + 2;
 * Megatron's main_grad.add_ hook on an fp32 buffer: 4 + 2 + 4) — the buffer read and
 * written at g bytes, the fresh gradient read. Paid by every micro-batch but one
 * (roofline.h tsl_roofline_layer_bwd_acc_s, in bwd_s). 0 where the GEMM
 * accumulates itself (fused), or where nothing unsharded is kept between
 * micro-batches (SDP, ZeRO-2: reduce-scattered every micro-batch).
 * DeepSpeed's BF16_Optimizer (knobs.ds_bf16_optimizer, bf16_optimizer.py
 * update_hp_grads: hp_grad.add_(lp.grad.to(hp_grad.dtype))) casts the fresh
 * gradient into a temporary of the buffer's width before the add: n + g more, where
 * the widths differ (BLOOM's fp32 buffer); into a buffer of the gradient's own bf16
 * (today's engine at ZeRO-0: grad_accum_dtype is the model's, runtime/engine.py
 * get_data_types at edaa722) .to() returns the tensor itself and only the add runs. */
static double grad_accum_bytes(const tsl_cost_knobs_t *k, const tsl_strategy_t *s, degrees_t g)
{
    if (!(k->autocast || k->unfused_grad_accum || k->ds_bf16_optimizer) || g.z > 1 || s->zero >= 2)
        return 0.0;
    double fresh = k->autocast || k->fp32 ? 4.0 : TSL_BYTES_PER_PARAM_FP16; /* fp32 params' grads */
    double gb = grad_elem_bytes(k);
    if (k->ds_bf16_optimizer) { /* the cast (fresh read, gb written), then a gb + gb -> gb add */
        double add = (gb != fresh ? fresh + gb : 0.0) + 3.0 * gb;
        /* today's engine (ds_bf16_zero0, edaa722) zeroes each .grad in place before the
         * backward where 56c522386 set it to None (bf16_optimizer.py clear_lp_grads,
         * set_to_none False since b418cf6c1, 2025-03; pipe/engine.py _exec_backward_pass):
         * the zeroing writes n, and autograd's AccumulateGrad adds the fresh gradient into
         * the kept .grad (n + n read, n written) instead of keeping it */
        return k->ds_bf16_zero0 ? add + 4.0 * fresh : add;
    }
    return 2.0 * gb + fresh;
}

/* Bytes per parameter each micro-batch's weight gradients cost to add into FSDP2's
 * unsharded accumulation where the SDP level keeps it between micro-batches
 * (sdp_nosync under PP, STACK; 0 elsewhere): with the gradient sync off, FSDP2's
 * post_backward moves each fresh 16-bit .grad into an accumulator of the reduce
 * dtype and adds every later one to it (FSDPParam to_accumulated_grad_if_needed /
 * accumulate_unsharded_grad_if_needed, pytorch#125191: "accumulate the unsharded
 * gradients in fp32 across microbatches", for PP) — the accumulator read and
 * written at g bytes, the fresh gradient read: 2·g + 2, 10 B at torchtitan's fp32
 * reduce; with a 16-bit reduce autograd's AccumulateGrad adds into the kept .grad,
 * 2·2 + 2. Over the unsharded parameters of this TP rank, every micro-batch but one
 * (the first's cast, 2 + g, is left out as the other stacks' first is). */
static double sdp_nosync_accum_bytes(const tsl_cost_env_t *env, degrees_t g)
{
    if (env->mode != TSL_COST_STACK || !sdp_holds_unsharded(&env->knobs, g))
        return 0.0;
    double fresh = env->knobs.fp32 ? 4.0 : TSL_BYTES_PER_PARAM_FP16;
    return 2.0 * grad_elem_bytes(&env->knobs) + fresh;
}

/* Bytes per parameter each micro-batch's weight gradients cost to copy into a fresh
 * gradient bucket where the stack reduce-scatters every micro-batch (SDP, ZeRO-2) and
 * its GEMMs do not write the bucket themselves (knobs.unfused_grad_accum):
 * Megatron-FSDP with gradient_accumulation_fusion off (Megatron-LM 44151194
 * megatron_fsdp.py _grad_acc: param.main_grad.copy_(param.grad), then del param.grad),
 * the fresh gradient read (2) and the bucket written at g bytes (docs/cost-model.md
 * "Gradient accumulation"). 0 elsewhere: grad_accum_bytes prices the unsharded
 * buffer's adds. */
static double grad_copy_bytes(const tsl_cost_knobs_t *k, const tsl_strategy_t *s, degrees_t g)
{
    if (!k->unfused_grad_accum || k->autocast || !(g.z > 1 || s->zero >= 2))
        return 0.0;
    return weight_elem_bytes(k) + grad_elem_bytes(k); /* the fresh .grad, the bucket */
}

/* The GPU time of grad_copy_bytes over this rank's `params` (the whole unsharded
 * gradient of its TP shard: the bucket is reduce-scattered after the copy), a kernel
 * per parameter tensor, on every micro-batch's backward; 0 without a copy. bwd: the
 * backward's roofline time (layer_compute_f's), which the copy's pass adds to. */
static double grad_copy_s(const tsl_cost_env_t *env, const tsl_layer_t *l, const tsl_strategy_t *s,
                          degrees_t g, double n, double params, double bwd)
{
    double bytes = grad_copy_bytes(&env->knobs, s, g);
    if (!(bytes > 0))
        return 0.0;
    tsl_roofline_dev_t dev;
    env_dev(env, &dev);
    double V = padded_vocab(l, g.t, &env->knobs);
    dev.grad_acc_bytes = bytes;
    return tsl_roofline_layer_bwd_acc_s(&dev, l, n, g.t, s->sp, V, params) - bwd;
}

/* The casts a gradient buffer of another width than its reduce needs: narrower
 * (knobs.grad_buf_bytes 2 under grad_reduce_bytes 4: DeepSpeed's fp32_allreduce over
 * fp16 .grad, `tensor.float()` before the collective and `copy_` back after it) or
 * wider (grad_buf_bytes 4 under grad_reduce_bytes 2: DeepSpeed's BF16_Optimizer, whose
 * fp32 buffer the engine's allreduce_bucket casts to communication_data_type, bf16 by
 * default under "bf16", `tensor.to(bf16)` before and `tensor.copy_` back after;
 * DeepSpeed 56c522386 runtime/engine.py l.711-721, 2063-2088): each of the rank's
 * `elems` gradient elements read at one width and written at the other, twice, at the
 * device's sustained memory rate, two kernels. 0 where the widths agree. */
static double grad_cast_s(const tsl_cost_env_t *env, double elems)
{
    double b = grad_elem_bytes(&env->knobs), r = reduce_elem_bytes(&env->knobs);
    if (r == b || !(env->opt_mem_bw > 0) || !(elems > 0))
        return 0.0;
    return 2.0 * (b + r) * elems / env->opt_mem_bw + 2.0 * TSL_ROOFLINE_LAUNCH_S;
}

/* What a DP/SDP reduce costs beside the collective itself, paid with it (grad_sync):
 * the casts of a buffer narrower than the reduce (grad_cast_s) and DeepSpeed's bucket
 * (grad_bucket): its kernels on the GPU (bucket_s) and the host's dispatch of them
 * (bucket_host_s), which runs ahead of the GPU and costs only what it exceeds the
 * reduce and the bucket's kernels by — layer by layer, as the reduce is priced: an upper
 * bound where a stage mixes large and small layers (DeepSpeed's one all-reduce a stage
 * hides more of it), kept additive for the layer DP. */
typedef struct grad_extra {
    double cast_s, bucket_s, bucket_host_s;
} grad_extra_t;

/* DeepSpeed's engine's ZeRO-0 DP all-reduce (knobs.ds_grad_bucket; AMP's fork at 72eeea4
 * and DeepSpeed at edaa722, runtime/engine.py buffered_allreduce_fallback ->
 * allreduce_no_retain -> allreduce_and_copy -> allreduce_bucket) around the rank's
 * `elems` gradient elements held in `tensors` .grad tensors, beyond grad_cast_s's casts:
 *   flatten (torch::utils::flatten_dense_tensors: one cat, batched 128 inputs a kernel)
 *       b read + b written
 *   mul_(1/DP) on the reduced tensor (postscale_gradients, gradient_predivide_factor 1,
 *       the defaults)                               r + r
 *   unflatten and buf.copy_(synced), one kernel per tensor     b + b
 * 4b + 2r bytes per parameter (16 for fp16 .grad reduced in fp32, 12 in one width) at
 * W_opt, K + K/128 + 1 kernels; the host issues each tensor's narrow, view and copy_
 * (H's ~3 framework ops: one op each) and the cat's share, K + K/128 ops at host_op_s.
 * Only where that path runs: DP > 1 without ZeRO (ZeRO-1/2 reduce through their own
 * optimizer's buckets; with DP 1 the pipeline engine skips ReduceGrads). */
static void grad_bucket(const tsl_cost_env_t *env, const tsl_strategy_t *s, degrees_t g,
                        double elems, uint32_t tensors, grad_extra_t *x)
{
    x->cast_s = grad_cast_s(env, elems);
    x->bucket_s = x->bucket_host_s = 0.0;
    if (!env->knobs.ds_grad_bucket || s->zero || g.z > 1 || g.d < 2 || !(elems > 0) ||
        !(env->opt_mem_bw > 0))
        return;
    double b = grad_elem_bytes(&env->knobs), r = reduce_elem_bytes(&env->knobs);
    double ops = tensors * (1.0 + 1.0 / 128.0); /* the copies and the cat's batches */
    x->bucket_s =
        (4.0 * b + 2.0 * r) * elems / env->opt_mem_bw + (ops + 1.0) * TSL_ROOFLINE_LAUNCH_S;
    x->bucket_host_s = ops * env->host_op_s;
}

/* Whether the SDP level's one reduce-scatter (sdp_nosync: FSDP2 under torch's
 * pipelining) runs after the stage's last backward, none of it under that
 * backward's compute. torch.distributed.pipelining's stage (stage.py,
 * backward_maybe_with_nosync, torch 2.5-2.6 and the December 2024 nightlies)
 * runs every micro-batch's backward with the gradient sync off, and only once
 * the last one has returned calls post_backward on each of the stage's FSDP
 * parameter groups, which issues that group's reduce-scatter, then the root's
 * final callback, which makes the compute stream wait for them all before the
 * optimizer: the stage's whole reduce-scatter is exposed (docs/cost-model.md
 * "SDP without resharding"). STACK only; PAPER keeps Galvatron's Eq. 9. */
static inline bool sdp_rs_after_backward(tsl_cost_mode_t mode, const tsl_cost_knobs_t *k)
{
    return mode == TSL_COST_STACK && k->sdp_nosync;
}

/* Gradient synchronisation of the DP and SDP levels (grad_bytes: the gradients
 * of this device's TP shard, in the knobs' reduce precision). Plain DP
 * all-reduces once, on the last micro-batch, under the backward (or after it:
 * knobs.grad_reduce_exposed, into *exposed). ZeRO-1 reduce-scatters there
 * instead and all-gathers the updated 16-bit weights (param_bytes) after the
 * optimizer step, where no backward hides it (exposed; *gather_next with
 * knobs.overlap_param_gather: under the next forward). ZeRO-2 also
 * reduce-scatters every micro-batch (per_mb), under its backward. x: what each
 * reduce costs beside the collective (grad_extra_t), paid where the reduce is.
 * DeepSpeed's BF16_Optimizer (knobs.ds_bf16_optimizer) shards only the optimizer:
 * its pipeline engine all-reduces the whole fp32 buffer (_bf16_reduce_grads ->
 * buffered_allreduce_fallback) where ZeRO-1 reduce-scatters, then gathers the
 * weights as ZeRO-1 does (bf16_optimizer.py step: all_gather_dp_groups). */
static void grad_sync(tsl_cost_mode_t mode, const tsl_cost_knobs_t *k, const tsl_strategy_t *s,
                      degrees_t g, const tsl_strategy_bw_t *bw, double grad_bytes,
                      double param_bytes, const grad_extra_t *x, double *per_mb, double *last,
                      double *exposed, double *gather_next)
{
    double shard = grad_bytes / g.z;
    /* a reduce-scatter moves what an all-gather moves, with the same α */
    double rs = allgather_lat_s(shard, g.d, bw->dp_bw, &bw->dp_lat);
    double sdp_rs = allgather_lat_s(grad_bytes, g.z, bw->sdp_bw, &bw->sdp_lat);
    /* ZeRO-3 keeps no unsharded gradient between micro-batches: the executor (and
     * FSDP) reduce-scatter after every backward (STACK); Galvatron's SDP once (PAPER),
     * and so does FSDP kept unsharded between micro-batches (sdp_nosync) */
    bool sdp_every_mb = mode == TSL_COST_STACK && !k->sdp_nosync;
    bool allreduce = s->zero == 0 || (s->zero == 1 && k->ds_bf16_optimizer);
    double dp_last = allreduce      ? allreduce_lat_s(shard, g.d, bw->dp_bw, &bw->dp_lat)
                     : s->zero == 1 ? rs
                                    : 0.0;
    double gather = s->zero ? allgather_lat_s(param_bytes / g.z, g.d, bw->dp_bw, &bw->dp_lat) : 0.0;
    if (g.d * g.z > 1) { /* the casts go with the first reduce of the buffer */
        if (g.z > 1)
            sdp_rs += x->cast_s;
        else if (s->zero >= 2)
            rs += x->cast_s;
        else /* the bucket's host dispatch, ahead of the GPU, shows where it is longer */
            dp_last = fmax(dp_last + x->cast_s + x->bucket_s, x->bucket_host_s);
    }
    bool sdp_after = sdp_rs_after_backward(mode, k);
    *per_mb = (s->zero >= 2 ? rs : 0.0) + (sdp_every_mb ? sdp_rs : 0.0);
    *last = (sdp_every_mb || sdp_after ? 0.0 : sdp_rs) + (k->grad_reduce_exposed ? 0.0 : dp_last);
    *exposed = (k->grad_reduce_exposed ? dp_last : 0.0) + (k->overlap_param_gather ? 0.0 : gather) +
               (sdp_after ? sdp_rs : 0.0);
    *gather_next = k->overlap_param_gather ? gather : 0.0;
}

/*
 * DeepSpeed 0.3's ZeRO-3 (knobs.ds_zero3_v03; docs/cost-model.md "DeepSpeed 0.3's
 * ZeRO-3"): what its stage-3 code (v0.3.13, deepspeed/runtime/zero/stage3.py,
 * partition_parameters.py) issues per layer under DeepSpeedExamples' Megatron ZeRO-3
 * recipe (2cd968f2, examples/ds_zero_stage_3_config.json), over the layer's tensors in
 * Megatron's layout (cost_host_sync.h tsl_ds_step_tensors), each priced with Tessel's
 * own figures: NCCL's α and bandwidth per collective, W and L per kernel.
 *   gathers   one all-gather per weight of at least TSL_DS_PERSIST_ELEMS elements
 *             (_allgather_param), in the forward, again in a full recompute's forward
 *             and in the backward, but for the layer's last weight under a recompute
 *             (its reuse distance 0, under stage3_max_reuse_distance: kept); every
 *             gather exposed (the fetch ends in torch.cuda.synchronize(); under the
 *             recipe's stage3_max_live_parameters 1e8 nothing is prefetched while a
 *             larger weight is live, and a norm's few kernels hide none of the rest)
 *   reduces   one reduce-scatter per tensor, every micro-batch (_reduce_scatter_gradient:
 *             contiguous_gradients true in the recipe), exposed: the next fetch's
 *             synchronize waits on the reduction stream
 *   kernels   the list API's GPU work beside each collective, at L + bytes / W: a gather
 *             zero-fills its full buffer, copies the rank's shard in and copies each of
 *             the z slices back out of ProcessGroupNCCL's flat output (z + 2 kernels,
 *             6 B per element); a reduce divides the gradient in place (average_tensor)
 *             and copies each of z slices into the flat input (z + 1 kernels, 8 B; the
 *             copy's bytes and one kernel are grad_copy_s's under unfused_grad_accum)
 *   step      the small (persistent) tensors, partitioned at the end of every backward,
 *             gathered again after the step by one all-gather of their shards, its z
 *             slices copied out and a copy per tensor and rank (_allgather_params): per
 *             iteration, in *step_s
 * Host work is not priced (no measured figure for PyTorch 1.8's ops on Selene's hosts).
 * Returns false (nothing set) where the knob does not apply: PAPER, no SDP level, a DP
 * level beside it (DeepSpeed shards over the whole data-parallel group), a layer not
 * laid out.
 */
#define TSL_DS_PERSIST_ELEMS 1e5 /* stage3_param_persistence_threshold's default */

typedef struct ds_zero3_terms {
    double fwd_s;  /* the forward's gathers and their kernels */
    double bwd_s;  /* the recompute's and the backward's gathers, every reduce: exposed */
    double step_s; /* the persistent tensors' gather after the step, per iteration */
} ds_zero3_terms_t;

/* A gather of e elements (2 B each) over z ranks with its list-API kernels. */
static double ds_gather_s(double e, degrees_t g, const tsl_strategy_bw_t *bw, double W)
{
    return allgather_lat_s(2.0 * e, g.z, bw->sdp_bw, &bw->sdp_lat) + 6.0 * e / W +
           (g.z + 2.0) * TSL_ROOFLINE_LAUNCH_S;
}

/* A reduce-scatter of e gradient elements (gb bytes each) with its kernels: the
 * division and the z slices' copies, less the copy unfused_grad_accum already prices
 * (grad_copy_s: the same bytes, a kernel per tensor) where `copied`. */
static double ds_reduce_s(double e, double gb, degrees_t g, const tsl_strategy_bw_t *bw, double W,
                          bool copied)
{
    return allgather_lat_s(gb * e, g.z, bw->sdp_bw, &bw->sdp_lat) +
           (copied ? 2.0 : 4.0) * gb * e / W + (g.z + (copied ? 0.0 : 1.0)) * TSL_ROOFLINE_LAUNCH_S;
}

static bool ds_zero3_v03(const tsl_cost_env_t *env, const tsl_layer_t *l, const tsl_strategy_t *s,
                         degrees_t g, const tsl_strategy_bw_t *bw, double own,
                         ds_zero3_terms_t *out)
{
    double e[TSL_DS_STEP_MAX_TENSORS], W = env->opt_mem_bw, gb = reduce_elem_bytes(&env->knobs);
    if (!env->knobs.ds_zero3_v03 || env->mode != TSL_COST_STACK || g.z <= 1 || g.d > 1 || !(W > 0))
        return false;
    uint32_t n = tsl_ds_step_tensors(l, g.t, own, e), last = n;
    bool copied = grad_copy_bytes(&env->knobs, s, g) > 0;
    if (n == 0)
        return false;
    memset(out, 0, sizeof(*out));
    for (uint32_t i = 0; i < n; i++)
        if (e[i] >= TSL_DS_PERSIST_ELEMS)
            last = i;
    double persist = 0.0, persist_n = 0.0;
    for (uint32_t i = 0; i < n; i++) {
        out->bwd_s += ds_reduce_s(e[i], gb, g, bw, W, copied);
        if (e[i] < TSL_DS_PERSIST_ELEMS) {
            persist += e[i];
            persist_n += 1.0;
            continue;
        }
        double ag = ds_gather_s(e[i], g, bw, W);
        out->fwd_s += ag;
        out->bwd_s += s->ckpt ? (i == last ? ag : 2.0 * ag) : ag;
    }
    if (persist_n > 0) /* ProcessGroupNCCL's z slices copied out, then a copy per tensor
                          and rank into the whole tensors: 4 B an element each */
        out->step_s = allgather_lat_s(2.0 * persist, g.z, bw->sdp_bw, &bw->sdp_lat) +
                      8.0 * persist / W + (persist_n + 1.0) * g.z * TSL_ROOFLINE_LAUNCH_S;
    return true;
}

/* compute_scale (by the layer's tokens per micro-batch on one device) on its 4
 * compute times (the gradient accumulation's with them), comm_scale on its 6
 * communication times. */
static void calibrate_times(const struct tsl_calib *k, const tsl_layer_t *l, double n,
                            double *compute[4], double *comm[6])
{
    double kc = tsl_calib_compute_scale(k, l->hidden, (uint32_t)fmin(n * l->seq_len, UINT32_MAX));
    for (int i = 0; i < 4; i++)
        *compute[i] *= kc;
    for (int i = 0; i < 6; i++)
        *comm[i] *= k->comm_scale;
}

/* mem_scale on every byte count of the layer: a calibration fits the peak, which
 * is their sum (calibrate.h). */
static void calibrate_memory(double k, tsl_layer_cost_t *out)
{
    if (!(k > 0) || k == 1.0)
        return;
    out->ms_bytes = (uint64_t)ceil((double)out->ms_bytes * k);
    out->grad_bytes = (uint64_t)ceil((double)out->grad_bytes * k);
    out->fwd_bytes = (uint64_t)ceil((double)out->fwd_bytes * k);
    out->bwd_bytes = (uint64_t)ceil((double)out->bwd_bytes * k);
}

/*
 * The attention exchange of context parallelism for one micro-batch, forward
 * (*fwd) and backward (*bwd), the part the attention core does not hide. T = n·s
 * tokens per rank (two chunks of s/2c per sample, causal load balancing, so every
 * rank's share of the core is core/c), K/V bytes per rank
 *   B_kv = 2 (K, V) · 2 bytes · T · a_kv · d_h / t.
 *   p2p        ring: c − 1 steps each passing B_kv to the next rank, step j under
 *              the core of block j (core_f / c); backward passes K/V and dK/dV:
 *              fwd = (c−1)·overlap(core_f/c, S) + core_f/c − core_f,
 *              bwd = (c−1)·overlap(core_b/c, 2·S) + core_b/c − core_b
 *              S = all-gather(c·B_kv, c) / (c − 1): B_kv/bw plus the gather's α
 *              spread over its steps (PAPER: B_kv/bw); a ring whose every hop
 *              crosses the network slows the core by NCCL's CTAs, not k
 *              (cp_p2p_net_ctas)
 *   allgather  fwd: all-gather(c·B_kv, c); bwd: the gather again (only the chunk
 *              is kept) and a reduce-scatter of dK/dV: 2 · all-gather(c·B_kv, c)
 *   torch-allgather  torch's context_parallel (rotate method allgather): K/V of
 *              all a heads (torchtitan repeats them before SDPA), B_all, gathered
 *              once per pass; the backward gathers again and sends dK/dV in fp32
 *              (2·B_all each) around the ring c times. Eager (AsyncCollectiveTensor:
 *              each wait at the first use) the gather runs under the first step's
 *              kernel, fwd = overlap(core_f/c, AG) − core_f/c, and c − 1 of the sends
 *              under the next step's backward, the last exposed. Compiled (the
 *              block under torch.compile, the ring traced into it) every functional
 *              collective is waited right where it is issued and Inductor does not
 *              move the wait (reorder_for_compute_comm_overlap off): fwd = AG,
 *              bwd = AG + c sends, all exposed
 *   a2a        Ulysses: all-to-all of Q, K, V before the core and O after it,
 *              each (c−1)/c of the rank's bytes: fwd = bwd =
 *              all-to-all(B_q + B_kv, c) + all-to-all(B_o, c) (two collectives)
 * core_b = 2·core_f (flash attention's backward). Every collective is priced as
 * NCCL picks its algorithm and protocol (allgather_lat_s).
 */
/* NCCL's channels for one network peer's send/recv: 2, fewer at scale (NVIDIA/nccl
 * src/graph/paths.cc ncclTopoGetNchannels, "Remote rank, use network": the
 * NCHANNELS_PER_NET_PEER default 2 at v2.19.4, l.669 and l.689-690; from 2, halved
 * with the rank count, or the NICs the GPU needs by bandwidth, at v2.20.5 l.713-728,
 * the same to v2.27.3). */
#define TSL_NCCL_NET_PEER_CHANNELS 2.0

/*
 * The CTAs (one SM each) of NCCL's send/recv kernels for one step of
 * TransformerEngine's p2p CP ring where every CP rank has an NVLink domain of its own
 * (lat->k == lat->n: both ring neighbours over the network); 0 where the price keeps
 * the overlap slowdown k. TE sends K/V (dK/dV) to rank r + 1 and receives from r − 1
 * (attention.py flash_attn_p2p_communicate at da30634a6, l.381-421): at c = 2 one
 * batch_isend_irecv to one peer over the CP group's communicator, else an isend and
 * an irecv (batch_p2p_comm = NVTE_BATCH_MHA_P2P_COMM or cp_size == 2, l.462), each on
 * the two-rank communicator torch makes for the pair (ProcessGroupNCCL::pointToPoint,
 * "For single P2P, preserve the old two-rank behavior", torch 2.1-2.3). Over the
 * network NCCL gives a peer ≤ 2 channels (TSL_NCCL_NET_PEER_CHANNELS; a communicator
 * takes its peers' minimum, ncclTopoComputeP2pChannels, paths.cc l.752-763 at
 * v2.20.5), and a kernel's grid is the channels that hold work (enqueue.cc finishPlan
 * l.565-582, the launch l.1319): ≤ 2 CTAs a peer. Inside an NVLink domain a peer gets 2
 * × the path's NVLinks (up to the communicator's channels, 16-32 on H100), an
 * all-reduce's SMs: k kept, and so for a ring with neighbours on both. PAPER and GPUs
 * without an SM figure keep k. Cost model 192.
 */
static double cp_p2p_net_ctas(const tsl_cost_env_t *env, uint32_t c, const tsl_coll_lat_t *lat)
{
    if (env->mode == TSL_COST_PAPER || c <= 1 || lat->n != c || lat->k != lat->n ||
        !(env->gemm_shape.sms > 0))
        return 0.0;
    return TSL_NCCL_NET_PEER_CHANNELS * (c == 2 ? 1.0 : 2.0);
}

/* One ring step of TE's p2p CP: the core's block of g seconds beside the step's
 * transfer of m seconds, as tsl_cost_overlap_s(g, m, k) prices it, or, with ctas > 0,
 * the transfer at its own rate and the block short of ctas of the GPU's SMs while it
 * runs (ub_share_s, the rule of cost models 37 and 153). */
static double cp_ring_step_s(const tsl_cost_env_t *env, double g, double m, double ctas, double k)
{
    if (ctas > 0)
        return g + ub_share_s(g, m, env->gemm_shape.sms, ctas, k);
    return tsl_cost_overlap_s(g, m, k);
}

static void cp_exchange(const tsl_cost_env_t *env, const tsl_layer_t *l, uint32_t t, double n,
                        double core_f, const tsl_strategy_bw_t *bw, double *fwd, double *bwd)
{
    uint32_t c = env->knobs.cp;
    *fwd = *bwd = 0.0;
    if (c <= 1 || !tsl_layer_has_attention(l))
        return;
    double kv = l->kv_heads ? l->kv_heads : l->heads;
    double hd = (double)(l->attn_dim ? l->attn_dim : l->hidden) / l->heads;
    double T = n * l->seq_len, k = env->overlap_slowdown;
    double b_kv = 2.0 * TSL_ACT_DTYPE_BYTES * T * kv * hd / t;
    double b_q = (double)TSL_ACT_DTYPE_BYTES * T * l->heads * hd / t; /* Q, and O alike */
    double core_b = 2.0 * core_f;
    const tsl_coll_lat_t *lat = &bw->cp_lat;
    switch (env->knobs.cp_comm) {
    case TSL_CP_ALLGATHER: {
        double ag = allgather_lat_s(c * b_kv, c, bw->cp_bw, lat);
        *fwd = ag;
        *bwd = 2.0 * ag;
        break;
    }
    case TSL_CP_TORCH_AG: {
        /* K/V as SDPA sees them (repeated to all a heads): gathered once per pass
         * under the first step's kernel; the backward's dK/dV in fp32 around the
         * ring, each step's under the next step's kernel, the last exposed */
        double b_all = 2.0 * TSL_ACT_DTYPE_BYTES * T * l->heads * hd / t;
        double ag = allgather_lat_s(c * b_all, c, bw->cp_bw, lat);
        double dkv = lat->n > 1 ? allgather_lat_s(2.0 * c * b_all, c, bw->cp_bw, lat) / (c - 1)
                                : 2.0 * b_all / bw->cp_bw;
        if (!env->knobs.eager) { /* compiled: every wait right after its collective */
            *fwd = ag;
            *bwd = ag + c * dkv;
            break;
        }
        *fwd = tsl_cost_overlap_s(core_f / c, ag, k) - core_f / c;
        *bwd = tsl_cost_overlap_s(core_b / c, ag, k) - core_b / c +
               (c - 1) * (tsl_cost_overlap_s(core_b / c, dkv, k) - core_b / c) + dkv;
        break;
    }
    case TSL_CP_A2A: /* Q, K, V before the core; O after it (PAPER: the bytes alone) */
        *fwd = *bwd = lat->n > 1 ? alltoall_lat_s(b_q + b_kv, c, bw->cp_a2a_bw, lat) +
                                       alltoall_lat_s(b_q, c, bw->cp_a2a_bw, lat)
                                 : tsl_cost_allgather_s(2.0 * b_q + b_kv, c, bw->cp_a2a_bw);
        break;
    default: {
        /* one ring step: the all-gather of the c blocks spread over its c − 1 steps
         * (PAPER: one block's bytes alone) */
        double step =
            lat->n > 1 ? allgather_lat_s(c * b_kv, c, bw->cp_bw, lat) / (c - 1) : b_kv / bw->cp_bw;
        double ctas = cp_p2p_net_ctas(env, c, lat);
        *fwd = (c - 1) * cp_ring_step_s(env, core_f / c, step, ctas, k) + core_f / c - core_f;
        *bwd = (c - 1) * cp_ring_step_s(env, core_b / c, 2.0 * step, ctas, k) + core_b / c - core_b;
        break;
    }
    }
}

/*
 * The routed experts of a MoE layer (docs/cost-model.md "Mixture of experts"),
 * priced apart from the rest of the layer: E·p_e / (ep·etp) parameters per rank,
 * their states sharded over the expert-DP group of G/(ep·etp) ranks at stride
 * ep·etp as the layer's data group shards the rest (ZeRO-3 over it where the
 * strategy has SDP, else DP with the strategy's ZeRO level). Per pass (forward,
 * and again backward) the rank's routed rows, B = moved·k·(n·s/t)·h · 2 bytes
 * (tsl_cost_moe_rows), go through a dispatch and a combine all-to-all over the EP
 * group (ep ranks at stride etp; one of the two in FP8 with moe_fp8_dispatch)
 * and, at etp > 1, an all-gather of etp·B bytes before the experts and a
 * reduce-scatter after them over the expert-TP group (the innermost etp ranks;
 * Megatron-LM's MoEAlltoAllTokenDispatcher). The stash holds the gathered rows:
 * the model's k input copies per token times etp·moved, its expert activations
 * (f/etp wide) times moved; FP8 experts (under TE, fp8_impl.h) stash their inputs in 1
 * byte (those the plan's recompute modules keep: none under moe, fc2's not under
 * moe_act) and keep FP8 weight copies as the dense linears do (layer_memory;
 * expert_fp8_cache_bytes).
 */
typedef struct moe_terms {
    double p;              /* routed expert parameters on this rank */
    degrees_t g;           /* the expert data group as degrees: t 1, d or z = G/(ep·etp) */
    double a2a_pass;       /* a pass's two all-to-alls (dispatch and combine), with their α */
    double disp_f, disp_b; /* Megatron-LM's all-to-all dispatcher's own collectives
                              (moe_alltoall): forward, backward */
    double tpc;            /* one expert-TP all-gather or reduce-scatter, with its α */
    double map_f;          /* HybridEP's routing-map gather and scan, each forward
                              (hybridep_metadata_s; 0 under another dispatcher) */
    double gather;         /* ZeRO-3 gather of the expert weights, per pass */
    double per_mb, last, exposed, gather_next;
    double opt_s;
    double stash; /* bytes per sample of the routed stash beyond the model's, per rank
                        (negative when a capacity below 1 drops rows or FP8 halves it) */
    double w8;    /* the FP8 experts' weight elements on this rank (0: bf16 experts) */
} moe_terms_t;

/* Megatron-LM's all-to-all dispatcher's collectives beyond the tokens' (token_dispatcher.py
 * MoEAlltoAllTokenDispatcher at 44151194): the routing weights (bf16, w bytes: one per
 * routed row) go to the experts by an all-to-all of their own each pass (forward, and
 * its gradient back), gathered over expert TP and reduce-scattered back where etp > 1;
 * the forward first all-gathers every rank's tokens per expert (E int64) over the
 * expert-TP × EP group. Each through the NCCL model (α and protocol). */
static void alltoall_dispatcher(const tsl_cost_env_t *env, const tsl_layer_t *l,
                                const tsl_strategy_bw_t *bw, uint32_t ep, uint32_t etp, double w,
                                moe_terms_t *o)
{
    tsl_coll_lat_t lat_ep, lat_etp, lat_tep;
    double a2a_ep;
    made_group_bw(env, bw, etp, ep, &lat_ep, &a2a_ep);
    double bw_etp = made_group_bw(env, bw, 1, etp, &lat_etp, NULL),
           bw_tep = made_group_bw(env, bw, 1, ep * etp, &lat_tep, NULL);
    double probs =
        alltoall_lat_s(w, ep, a2a_ep, &lat_ep) + allgather_lat_s(etp * w, etp, bw_etp, &lat_etp);
    double counts = 8.0 * l->experts * ep * etp;
    o->disp_f = probs + allgather_lat_s(counts, ep * etp, bw_tep, &lat_tep);
    o->disp_b = probs;
}

/* HybridEP's routing map (docs/cost-model.md "HybridEP's routing map"): before each
 * dispatch HybridEP gathers every rank's routing map over the flex dispatcher's group,
 * the TP x EP ranks (w = etp·ep), through NCCL's all_gather_into_tensor (DeepEP hybrid-ep
 * 94a9f8f csrc/hybrid_ep/executor/executor.cu l.23-56: the custom all-gather only when
 * enable_custom_allgather, which HybridEPBuffer defaults off and Megatron-LM 44151194
 * fused_a2a.py init_hybrid_ep_buffer never sets): 1 B per token and column, the columns
 * E·etp (token_dispatcher.py _initialize_metadata widens [tokens, E] to [tokens, w,
 * E/ep]), `tokens` the rows a rank routes — w·tokens·E·etp bytes gathered. Then its
 * scan kernel (backend/hybrid_ep_backend.cuh `scan`, on 108 SMs by default:
 * config.cuh l.365) reads the gathered map whole and writes, per row of it, a
 * sparse_to_dense_map entry (int32), the local experts' routing map (bool) and
 * dense_to_expert_map (int32, the permute fused in: Megatron-LM runs
 * dispatch_with_permute) — one memory-bound kernel at the device's bandwidth. The
 * combine and the backward reuse the handle (fused_a2a.py HybridEPDispatch.backward,
 * HybridEPCombine): no gather there; a recomputed forward gathers again. */
static double hybridep_metadata_s(const tsl_cost_env_t *env, const tsl_layer_t *l,
                                  const tsl_strategy_bw_t *bw, uint32_t ep, uint32_t etp,
                                  double tokens)
{
    uint32_t w = ep * etp;
    tsl_coll_lat_t lat;
    double bw_w = made_group_bw(env, bw, 1, w, &lat, NULL);
    double cols = (double)l->experts * etp, rows = tokens * w, local = (double)l->experts / ep;
    double map = rows * cols; /* the gathered map, 1 B an entry */
    double written = rows * (4.0 + local * (1.0 + 4.0));
    tsl_roofline_dev_t dev;
    env_dev(env, &dev);
    return allgather_lat_s(map, w, bw_w, &lat) + tsl_roofline_mem_bytes_s(&dev, map + written, 1);
}

/* Whether the HybridEP dispatch synchronises the stream after its scan: dropless
 * (no capacity factor: HybridEP sizes its output from tokens_per_expert on the host,
 * executor.cu l.165-167 cudaStreamSynchronize, _HybridEPManager num_permuted_tokens
 * None) with the host issuing each op (a full-iteration graph, no_host_floor, captures
 * no sync: Megatron-Bridge's presets give it a capacity budget). Then the host waits for
 * the gather and the scan: no lead hides them. */
static bool hybridep_syncs(const tsl_cost_env_t *env)
{
    return !(env->knobs.moe_capacity > 0) && env->host_op_s > 0 && !env->knobs.launch_blocking;
}

/* What a flex dispatcher moves over NVLink of the k copies per token an all-to-all
 * of routed rows carries: one copy per token and destination rank that holds one of
 * its experts, not one per expert — HybridEP's dispatch unicasts a token to each rank
 * of the domain whose sparse_to_dense_map entry is set, and its combine sends each
 * rank's sum of its experts' rows back once (DeepEP hybrid-ep 94a9f8f,
 * csrc/hybrid_ep/backend/hybrid_ep_backend.cuh, "Only unicast to this rank if it
 * need the current token"); DeepEP's intranode kernels likewise (is_token_in_rank).
 * A rank holds 1/ep of the experts, reached with chance hit(1/ep) (tsl_cost_flex_hit,
 * a uniform routing): ep·hit(1/ep)/k of the per-expert bytes, ≤ 1. */
static double flex_rank_copies(const tsl_layer_t *l, uint32_t ep)
{
    double k = l->experts_per_tok, n = ep > 1 ? ep : 1;
    if (!(k > 1.0))
        return 1.0;
    return fmin(1.0, n * tsl_cost_flex_hit(1.0 / n, l) / k);
}

/* HybridEP's dispatch or combine kernel inside one NVLink domain (cost model 199;
 * docs/cost-model.md "HybridEP's kernels inside one NVLink domain"): its TMA copies,
 * one-shot, at the part's published kernel figure, B·(n − 1)/n / bw for the B bytes a
 * rank receives, plus TSL_HYBRIDEP_PEER_S for each of its n − 1 peers (cluster_hw.c
 * hybridep_nvl_bw: the fit to HybridEP's GB200 sweep), not NCCL's sends and protocol. */
static double hybridep_nvl_s(double bytes, uint32_t n, double bw)
{
    if (n <= 1 || bytes <= 0)
        return 0.0;
    return tsl_cost_alltoall_s(bytes, n, bw) + (n - 1) * TSL_HYBRIDEP_PEER_S;
}

/* One EP all-to-all (dispatch or combine) of a rank's routed copies, `bytes`: NCCL's at
 * the group's all-to-all figure; a flex dispatcher's across domains (fx from
 * made_group_flex) sends one copy per token and destination domain, bytes / k · net_s
 * through the slowest domain's NICs, and forwards the copies over NVLink inside each
 * domain, pipelined in chunks (DeepEP's normal kernels; HybridEP likewise): the slower
 * of the two, the NVLink part with the group's α (docs/cost-model.md "All-to-all",
 * "Across NVLink domains"). HybridEP inside one domain (hep_bw > 0: its back end on a
 * part with a published figure) at its own kernels' figure (hybridep_nvl_s). */
static double ep_a2a_s(const tsl_layer_t *l, double bytes, uint32_t ep, double a2a_bw,
                       const tsl_coll_lat_t *lat, const tsl_cluster_flex_bw_t *fx, double hep_bw)
{
    if (fx->domains == 0) /* NCCL's all-to-all: one copy per routed expert */
        return alltoall_lat_s(bytes, ep, a2a_bw, lat);
    double nvl = bytes * flex_rank_copies(l, ep);
    if ((fx->domains == 1 || !(fx->net_s > 0)) && hep_bw > 0)
        return hybridep_nvl_s(nvl, ep, hep_bw);
    if (fx->domains == 1 || !(fx->net_s > 0))
        return alltoall_lat_s(nvl, ep, a2a_bw, lat);
    double net = bytes / l->experts_per_tok * fx->net_s;
    return fmax(alltoall_lat_s(nvl, ep, fx->nvl_bw, lat), net);
}

static void moe_terms(const tsl_cost_env_t *env, const tsl_layer_t *l, const tsl_strategy_t *s,
                      const tsl_strategy_bw_t *bw, degrees_t g, double n, moe_terms_t *o)
{
    uint32_t G = env->block_size, ep = env->knobs.ep > 1 ? env->knobs.ep : 1;
    uint32_t etp = env->knobs.etp > 1 ? env->knobs.etp : 1, edp = G / (ep * etp);
    tsl_coll_lat_t lat_ep, lat_edp, lat_etp;
    double a2a_ep;
    made_group_bw(env, bw, etp, ep, &lat_ep, &a2a_ep);
    double bw_edp = made_group_bw(env, bw, ep * etp, edp, &lat_edp, NULL),
           bw_etp = made_group_bw(env, bw, 1, etp, &lat_etp, NULL);
    double busy, moved, k = l->experts_per_tok;
    tsl_cost_moe_rows(&env->knobs, &busy, &moved);
    double r = tsl_layer_expert_width(l); /* a routed row: ℓ under latent MoE (model.h) */
    double bytes = (double)TSL_ACT_DTYPE_BYTES * n * l->seq_len / g.t * k * r * moved;
    tsl_strategy_bw_t bwe = {.tp_bw = INFINITY,
                             .dp_bw = bw_edp,
                             .sdp_bw = bw_edp,
                             .dp_lat = lat_edp,
                             .sdp_lat = lat_edp,
                             .cp_bw = INFINITY,
                             .cp_a2a_bw = INFINITY};
    o->p = tsl_layer_expert_params(l) / ep / etp;
    o->g = (degrees_t){1, g.z > 1 ? 1 : edp, g.z > 1 ? edp : 1};
    bool fp8 = experts_fp8(env, l);
    /* a pass's dispatch and combine; with moe_fp8_dispatch the dispatch (forward)
     * and the combine's gradient (backward) in FP8, the other of each in bf16 */
    double wire = fp8 && env->knobs.moe_fp8_dispatch ? tsl_fp8_wire_bytes(env->knobs.fp8) : 2.0;
    tsl_cluster_flex_bw_t fx;
    made_group_flex(env, l, bw, etp, ep, &fx);
    bool hep = env->mode != TSL_COST_PAPER &&
               tsl_flex_backend_of(env->knobs.moe_flex, env->knobs.moe_flex_backend,
                                   env->knobs.moe_pad) == TSL_FLEX_HYBRIDEP;
    double hep_bw = hep ? env->hybridep_nvl_bw : 0.0; /* HybridEP's own kernels in a domain */
    o->a2a_pass = ep_a2a_s(l, bytes, ep, a2a_ep, &lat_ep, &fx, hep_bw) +
                  ep_a2a_s(l, bytes * wire / 2.0, ep, a2a_ep, &lat_ep, &fx, hep_bw);
    o->tpc = allgather_lat_s(etp * bytes, etp, bw_etp, &lat_etp);
    if (env->knobs.moe_alltoall && ep > 1)
        alltoall_dispatcher(env, l, bw, ep, etp, bytes / r, o);
    if (hep)
        o->map_f = hybridep_metadata_s(env, l, bw, ep, etp, n * l->seq_len / g.t);
    o->w8 = fp8 ? o->p : 0.0;
    double pg = gather_bytes(env, o->p, o->w8, mxfp8_bf16_param_ag(env, s, o->g));
    o->gather = allgather_lat_s(pg, o->g.z, bw_edp, &lat_edp);
    grad_extra_t gx = {.cast_s = grad_cast_s(env, o->p)}; /* no MoE row runs DeepSpeed's bucket */
    grad_sync(env->mode, &env->knobs, s, o->g, &bwe, reduce_elem_bytes(&env->knobs) * o->p, pg, &gx,
              &o->per_mb, &o->last, &o->exposed, &o->gather_next);
    o->opt_s = optimizer_s(env, NULL, s, o->g, o->p); /* the experts: not laid out */
    /* the model's stash (model.c): k input copies of h and k FFN activations of
     * (2g + 2)·f per token, of the T/t tokens a rank routes */
    double gated = l->gated_ffn ? 2.0 : 1.0, per_tok = (double)l->seq_len / g.t * k;
    o->stash = per_tok * ((etp * moved - 1.0) * TSL_ACT_DTYPE_BYTES * r +
                          (moved - 1.0) * (2.0 * gated + 2.0) * l->ffn_hidden);
    /* the recompute modules (recompute.h) on a layer without full CKPT */
    uint32_t mods = s->ckpt ? 0 : tsl_recompute_applies(l, env->knobs.recompute_modules);
    if (fp8 && tsl_fp8_impl_caches(env->knobs.fp8_impl) && !(mods & TSL_RECOMPUTE_MOE)) {
        /* TE's grouped linears as its dense ones (layer_memory): the FP8 copies of fc1's
         * gathered input rows (h) and fc2's (the f/etp-wide activation; not kept under
         * moe_act) in the stash in place of bf16, fp8_stash_save_bytes less each (1;
         * nvfp4 1.4375); moe keeps neither.
         * The weight copies: expert_fp8_cache_bytes */
        double fc2 = (mods & TSL_RECOMPUTE_MOE_ACT) ? 0.0 : (double)l->ffn_hidden;
        o->stash -= fp8_stash_save_bytes(env->knobs.fp8) * per_tok * moved * (etp * r + fc2);
    }
}

/* The routed experts of a layer whose weights another layer holds (mtp.h): their
 * tokens' all-to-alls and stash stay, their weights' gather, sync and step go. */
static void shared_moe(moe_terms_t *o)
{
    o->gather = o->per_mb = o->last = o->exposed = o->gather_next = 0.0;
    o->opt_s = o->w8 = 0.0;
}

/* The routed stash beyond the model's (moe_terms_t.stash) on the bytes that hold
 * the layer's activations: O_f, or O_b under CKPT. */
static void moe_stash(const tsl_strategy_t *s, double stash, uint64_t mb, uint64_t w,
                      tsl_layer_cost_t *out)
{
    uint64_t *act = s->ckpt ? &out->bwd_bytes : &out->fwd_bytes;
    double d = stash * (double)mb / (double)w;
    if (d >= 0)
        *act += (uint64_t)ceil(d);
    else
        *act = (double)*act > -d ? *act - (uint64_t)(-d) : 0;
}

/* ---- recompute of named modules (recompute.h) ---- */

/* The backward's recomputation of the plan's modules on layer l (none under full
 * CKPT, which recomputes everything): their forward compute (*compute: the
 * roofline's, in FP8 where the plan's linears are, calibrated as the layer's
 * compute is) and the communication they repeat (*comm): the MLP's forward TP
 * (mlp_f: one block's all-reduce, tp_f / tp_allreduces, or what of it userbuffers
 * leave exposed under tp_comm_overlap, tp_ub_s), the MoE FFN's TP all-reduce (one
 * block's: no userbuffers there) and its dispatch and combine (ep_f), and under
 * torchtitan's op policy the forward's SP all-gathers (ag_f: tp_sp_gathers). tp_f,
 * ag_f and ep_f are the layer's, calibrated. */
static void module_recompute_s(const tsl_cost_env_t *env, const tsl_layer_t *l,
                               const tsl_strategy_t *s, double n, uint32_t t, double tp_f,
                               double ag_f, double mlp_f, double ep_f, double *compute,
                               double *comm)
{
    uint32_t m = s->ckpt ? 0 : tsl_recompute_applies(l, env->knobs.recompute_modules);
    *compute = *comm = 0.0;
    if (m == 0)
        return;
    tsl_roofline_dev_t dev;
    env_dev(env, &dev); /* the recompute is GPU time: roofline.h, no host floor */
    *compute = tsl_roofline_recompute_fwd_s(&dev, l, n, t, s->sp, m);
    if (env->calib != NULL)
        *compute *= tsl_calib_compute_scale(env->calib, l->hidden,
                                            (uint32_t)fmin(n * l->seq_len, UINT32_MAX));
    double block = l->tp_allreduces ? tp_f / l->tp_allreduces : 0.0;
    if (m & TSL_RECOMPUTE_MLP)
        *comm += mlp_f;
    if (m & TSL_RECOMPUTE_MOE)
        *comm += block + ep_f;
    if (m & TSL_RECOMPUTE_TORCHTITAN_OP) /* its policy saves reduce-scatters, not all-reduces */
        *comm += s->sp ? ag_f : tp_f;
}

/* TransformerEngine's FP8 copies of the routed experts' weights, p of them on
 * the rank: its grouped linears cache them between micro-batches as its linears
 * do (fp8_weight_bytes each: 2 bytes, rowwise and columnwise; none where the
 * experts stay bf16 (experts_fp8: moe_bf16_experts, widths not multiples of 16),
 * under torchao (fp8_impl) or with FP8 weights; nvfp4's are fewer: docs/cost-model.md
 * "FP8", "NVFP4"). */
static double expert_fp8_cache_bytes(const tsl_cost_env_t *env, const tsl_layer_t *l, double p)
{
    if (!experts_fp8(env, l) || !tsl_fp8_impl_caches(env->knobs.fp8_impl))
        return 0.0;
    return fp8_weight_bytes(&env->knobs, env->knobs.fp8, env->device_fp8_any_layout) * p;
}

/*
 * Synchronised TP collectives (knobs.tp_sync; docs/cost-model.md "Synchronised TP
 * collectives"): AMP's fork of Megatron-LM v1.1.5 times every TP all-reduce with a
 * Megatron timer whose start() and stop() call torch.cuda.synchronize()
 * (megatron/mpu/mappings.py _reduce, megatron/global_vars.py _Timer). A pass of G
 * seconds of kernels and N host ops (pass time s = max(G, N·H)) with k such
 * collectives runs as k + 1 pieces, each from an empty queue:
 *   - before each collective the host waits until the GPU has drained, then
 *     dispatches the all-reduce onto the idle GPU: one host op, H, on the critical
 *     path whether the pass is host- or GPU-bound (k·H);
 *   - after each the queue restarts empty: the next kernel waits for its own
 *     dispatch (H), and so does each of the short kernels that follow up to the
 *     next GEMM — the replicated activation's norm, dropout and residual add, n_p
 *     kernels of g_p seconds in all (tsl_roofline_tp_restart_s) — which run at the
 *     host's pace: the GEMM starts (n_p + 1)·H after the restart, not H + g_p, so
 *     each restart costs r = H + max(0, n_p·H − g_p) beyond the kernels.
 * The pass then takes max(G + k·r, s) + k·H (a host-bound pass, N·H ≥ G + k·r,
 * already pays every dispatch but the collectives'); this returns what that adds
 * to s, for the forward (*sf: one run; the caller doubles it for a second run)
 * and the backward with its gradient accumulation (*sb). The collectives' own time
 * is tp_f's as before. k = the layer's tp_allreduces each way (the backward's
 * all-reduces sit in _CopyToModelParallelRegion.backward, the same _reduce). H is
 * the stack's host op (env->host_op_s); 0 (PAPER, no host floor) or t < 2: none.
 * Under synchronous launches alone (knobs.launch_blocking, CUDA_LAUNCH_BLOCKING=1;
 * docs/cost-model.md "Synchronous launches") every kernel already waits for its own
 * dispatch (roofline.c host_floor: G + N·H), so no restart is left to price: each
 * collective adds its dispatch, k·H a pass.
 */
static double sync_pass_s(double gpu, double s, double k, double H, double r)
{
    return fmax(gpu + k * r, s) + k * H - s;
}

/* What one restart of an idle GPU costs a layer's forward (f) and backward (b) pass,
 * r = H + max(0, n_p·H − g_p) (above), made once per layer for tp_sync_s and
 * ds_instr_restart_s, which both restart the same passes. */
typedef struct pass_restarts {
    bool made;
    double f, b;
} pass_restarts_t;

static const pass_restarts_t *restarts(const tsl_cost_env_t *env, const tsl_layer_t *l, double n,
                                       pass_restarts_t *r)
{
    if (r->made)
        return r;
    double H = env->host_op_s;
    tsl_roofline_dev_t dev;
    env_dev(env, &dev);
    uint32_t nf, nb;
    double gf = tsl_roofline_tp_restart_s(&dev, l, n, false, &nf);
    double gb = tsl_roofline_tp_restart_s(&dev, l, n, true, &nb);
    r->f = H + fmax(0.0, nf * H - gf);
    r->b = H + fmax(0.0, nb * H - gb);
    r->made = true;
    return r;
}

static void tp_sync_s(const tsl_cost_env_t *env, const tsl_layer_t *l, uint32_t t, double n,
                      const layer_kernels_t *kern, double fwd, double bwd, pass_restarts_t *rs,
                      double *sf, double *sb)
{
    double H = env->host_op_s, k = l->tp_allreduces;
    *sf = *sb = 0.0;
    if (!(env->knobs.tp_sync || env->knobs.launch_blocking) || t < 2 || !(H > 0) || !(k > 0))
        return;
    if (!env->knobs.tp_sync) { /* synchronous launches (launch_blocking): the passes
                                  already pay every kernel's dispatch beside its time
                                  (roofline.c host_floor); the collectives' k are not
                                  among the roofline's ops, and each is dispatched
                                  onto a GPU that has finished the kernel before it */
        *sf = *sb = k * H;
        return;
    }
    const pass_restarts_t *r = restarts(env, l, n, rs);
    *sf = sync_pass_s(kern->fwd.gpu_s, fwd, k, H, r->f);
    *sb = sync_pass_s(kern->bwd_acc_gpu_s, bwd, k, H, r->b);
}

/*
 * DeepSpeed's synchronising timers (knobs.ds_wall_clock; docs/cost-model.md "DeepSpeed's
 * synchronising timers"): AMP's fork sets "wall_clock_breakdown": true, and its
 * engines wrap every pipeline instruction in SynchronizedWallClockTimer timers whose
 * start() and stop() call torch.cuda.synchronize() (DachengLi1/AMP 72eeea4
 * DeepSpeed/deepspeed/utils/timer.py; runtime/engine.py forward and backward,
 * runtime/pipe/engine.py _exec_backward_pass, _exec_send_*, _exec_recv_*). Each
 * forward and backward instruction therefore starts on an idle GPU, as a pass does
 * after a synchronised TP collective: one restart more, r (pass_restarts_t above),
 * on the instruction's first layer (the forward's first, the backward's last: the
 * stage sums them, search_eval.c stage_times). What it adds to
 * the layer's pass, whose k synchronised collectives (tp_sync) already restart it k
 * times: max(G + (k + 1)·r, s) − max(G + k·r, s), nothing where the host already sets
 * the pace (a host-bound pass pays every dispatch). Under synchronous launches every
 * kernel waits for its dispatch already: nothing.
 */
static double restart_more_s(double gpu, double s, double k, double r)
{
    return fmax(gpu + (k + 1.0) * r, s) - fmax(gpu + k * r, s);
}

static void ds_instr_restart_s(const tsl_cost_env_t *env, const tsl_layer_t *l, uint32_t t,
                               double n, const layer_kernels_t *kern, double fwd, double bwd,
                               pass_restarts_t *rs, double *rf, double *rb)
{
    double H = env->host_op_s;
    *rf = *rb = 0.0;
    if (!env->knobs.ds_wall_clock || env->knobs.launch_blocking || !(H > 0))
        return;
    double k = env->knobs.tp_sync && t >= 2 ? l->tp_allreduces : 0.0;
    const pass_restarts_t *r = restarts(env, l, n, rs);
    *rf = restart_more_s(kern->fwd.gpu_s, fwd, k, r->f);
    *rb = restart_more_s(kern->bwd_acc_gpu_s, bwd, k, r->b);
}

/* A transformer block, or one half of it under sub-layer partitioning: not the
 * embedding or the head. */
static bool block_layer(const tsl_layer_t *l)
{
    return l->kind != TSL_LAYER_EMBEDDING && l->kind != TSL_LAYER_HEAD;
}

/* A layer the stack runs outside the plan's low-precision recipe: a block kept bf16
 * (model.h tsl_model_set_bf16_layers), or under nvfp4 an MTP depth's layer:
 * Megatron-core enters only an FP8 autocast around its MTP layers, never FP4's
 * (transformer/multi_token_prediction.py at 44151194: "currently ignoring FP4 in
 * MTP layers"). docs/cost-model.md "Blocks kept bf16". */
static bool layer_bf16(const tsl_cost_env_t *env, const tsl_layer_t *l)
{
    if (env->knobs.fp8 == TSL_FP8_NONE)
        return false;
    return l->bf16 || (env->knobs.fp8 == TSL_FP8_NVFP4 && l->mtp_depth > 0);
}

bool tsl_cost_ds_bf16_zero0_runs(const tsl_cost_knobs_t *k, const tsl_strategy_t *s, bool pipelined)
{
    return k->ds_bf16_zero0 && pipelined && !k->fp16 && !k->fp32 && s->zero == 0 &&
           dim_degree(s, TSL_DIM_DP) > 1 && dim_degree(s, TSL_DIM_SDP) <= 1;
}

/* BF16_Optimizer partitions its fp32 master and moments over the data-parallel group
 * whatever the config's ZeRO stage (bf16_optimizer.py _setup_for_real_optimizer:
 * partition_count = the DP world size, fp32_groups_flat_partition one DP shard; its
 * step ends in all_gather_dp_groups): a strategy at ZeRO-0 priced with it, as the
 * stage DeepSpeed's pipelines run it at (or by knobs.ds_bf16_zero0 there), is priced as
 * ZeRO-1 is with it. Not under SDP (DeepSpeed runs no ZeRO-3 with it). */
static bool bf16_optimizer_at_zero0(const tsl_cost_env_t *env, const tsl_strategy_t *s)
{
    if (s->zero != 0 || dim_degree(s, TSL_DIM_SDP) > 1)
        return false;
    return env->knobs.ds_bf16_optimizer ||
           tsl_cost_ds_bf16_zero0_runs(&env->knobs, s, env->pipelined);
}

/* FSDP2 as torchtitan runs it keeps its level unsharded between micro-batches only
 * under PP (torchtitan's "default" reshard_after_forward = not pp_enabled; the
 * pipeline schedule turns the gradient sync off but for the last backward): on a
 * block that is the whole pipeline, sdp_nosync prices as ZeRO-3 (docs/cost-model.md
 * "SDP without resharding"). */
static bool sdp_nosync_off_here(const tsl_cost_env_t *env)
{
    return env->knobs.sdp_nosync && !env->pipelined;
}

void tsl_knobs_fp16(tsl_cost_knobs_t *k, const tsl_cluster_t *c)
{
    if (k->fp32) {
        k->fp16 = false;
        return;
    }
    if (tsl_cluster_no_bf16(c) != NULL)
        k->fp16 = true;
    if (k->fp16 && k->opt_step == TSL_OPT_STEP_MEGATRON)
        k->opt_step = TSL_OPT_STEP_MEGATRON_CORE_FP16;
}

void tsl_knobs_on_cluster(tsl_cost_knobs_t *k, const tsl_cluster_t *c)
{
    if (k->fp32 && !k->tf32 && tsl_cluster_tf32_moot(c))
        k->tf32_off = true;
    tsl_knobs_fp16(k, c);
}

/* Whether the SDP level's per-micro-batch gathers are prefetched under compute:
 * overlap_param_gather on an SDP level is Megatron-FSDP (Megatron-LM validate_args:
 * "--overlap-param-gather only supported with distributed optimizer or megatron
 * fsdp"; optim_grads_params forces it on, megatron_fsdp.py). Its AllGatherPipeline
 * issues the next FSDP unit's gather on a side stream while this unit computes, in
 * the forward and (in backward order) in the backward, so the gather joins the
 * pass's overlapped communication instead of running before it (docs/cost-model.md
 * "Megatron-FSDP's prefetched gathers", cost model 74). STACK only: PAPER keeps
 * Galvatron's exposed gathers; none where sdp_nosync gathers once. knobs.megatron_fsdp
 * (target megatron) is Megatron-FSDP too: optim_grads_params turns the overlap on. */
static bool sdp_prefetch(const tsl_cost_env_t *env, degrees_t g)
{
    return env->mode == TSL_COST_STACK &&
           (env->knobs.overlap_param_gather || env->knobs.megatron_fsdp) && g.z > 1 &&
           !env->knobs.sdp_nosync;
}

/* Whether the SDP level runs as fairscale 0.4.5's FSDP with each layer its own root
 * (knobs.sdp_layer_roots, Galvatron-BMW's wrapping; sdp_roots.h): STACK only (PAPER
 * keeps Galvatron's seed formulas), an SDP level resharded every micro-batch. */
static bool sdp_roots(const tsl_cost_env_t *env, degrees_t g)
{
    return env->mode == TSL_COST_STACK && env->knobs.sdp_layer_roots && g.z > 1 &&
           !env->knobs.sdp_nosync;
}

typedef struct roots_ctx {
    const tsl_cost_env_t *env;
    tsl_roofline_dev_t dev; /* env's, made once for all the units */
    double n;
    uint32_t t;
    bool sp;
} roots_ctx_t;

/* A unit's forward on the roofline: what sdp_roots.h splits the layer's compute by. */
static double roots_unit_fwd_s(const tsl_layer_t *l, void *ctx)
{
    const roots_ctx_t *c = ctx;
    tsl_roofline_fwd_t f;
    tsl_roofline_layer_fwd(&c->dev, l, c->n, c->t, c->sp, padded_vocab(l, c->t, &c->env->knobs),
                           &f);
    return f.s;
}

/* The forward of a layer that is its own FSDP root (sdp_roots.h): its units' gathers,
 * the first exposed, each later one under the earlier units' compute (the forward's
 * compute_f and the layer's gather, split by the units' shares). */
static double roots_fwd_s(const tsl_cost_env_t *env, const tsl_layer_t *l, const tsl_strategy_t *s,
                          double n, uint32_t t, double compute_f, double gather, double k)
{
    roots_ctx_t ctx = {.env = env, .n = n, .t = t, .sp = s->sp};
    env_dev(env, &ctx.dev);
    tsl_sdp_units_t u;
    tsl_sdp_root_units(l, roots_unit_fwd_s, &ctx, &u);
    double g[TSL_SDP_UNITS_MAX], c[TSL_SDP_UNITS_MAX];
    for (uint32_t i = 0; i < u.n; i++) {
        g[i] = gather * u.w[i];
        c[i] = compute_f * u.c[i];
    }
    return tsl_sdp_root_fwd_s(g, c, u.n, k);
}

/* A decoder layer's cross-attention under TP (STACK): its K/V projection is column-
 * parallel over the encoder's output (Megatron's ParallelAttention, cross_attn:
 * key_value = ColumnParallelLinear(h, 2·h) applied to encoder_output; PKU-DAIR/Hetu
 * df32daa tools/Galvatron/site-package/megatron_layers/transformer.py l.197-203,
 * 257), so each TP rank holds a partial gradient of those t encoder tokens and the
 * linear's backward all-reduces it (mpu copy_to_tensor_model_parallel_region) — one
 * collective of t·h elements per sample that tp_allreduces (one per block, over the
 * decoder's own s tokens) does not count: 4 collectives in the backward against 3 in
 * the forward. Exposed in the backward (Megatron 2021 sums on the compute stream; an
 * SP plan is priced the same ring bytes). 0 in PAPER mode, at TP 1, for a layer
 * without cross-attention (cross_seq_len 0: AutoPipe's FFN half of a decoder too),
 * and where measured block times hold the TP traffic
 * (docs/cost-model.md "Cross-attention's K/V gradient under TP", cost model 76). */
static double cross_kv_grad_s(const tsl_cost_env_t *env, const tsl_layer_t *l, uint32_t t, double n,
                              const tsl_strategy_bw_t *bw, bool profiled)
{
    if (env->mode != TSL_COST_STACK || t < 2 || l->cross_seq_len == 0 ||
        (profiled && env->profile->tp_comm_in_times))
        return 0.0;
    double msg = act_elem_bytes(&env->knobs) * l->cross_seq_len * l->hidden * n;
    double s = allreduce_lat_s(msg, t, bw->tp_bw, &bw->tp_lat);
    return env->calib != NULL ? s * env->calib->comm_scale : s;
}

void tsl_cost_layer(const tsl_cost_env_t *env, const tsl_layer_t *l, const tsl_strategy_t *s,
                    const tsl_strategy_bw_t *bw, uint32_t mb, tsl_layer_cost_t *out)
{
    /* a layer kept bf16 is priced as under a bf16 plan: its GEMMs at the bf16 rate,
     * its weights without FP8 copies and gathered in bf16, its stashes bf16; without
     * PP, FSDP2 resharded every micro-batch */
    tsl_cost_env_t own_env;
    tsl_strategy_t own_s;
    bool bf16 = layer_bf16(env, l), resync = sdp_nosync_off_here(env);
    bool bf16_opt = bf16_optimizer_at_zero0(env, s);
    if (bf16 || resync || bf16_opt) {
        own_env = *env;
        if (bf16_opt) { /* its own ZeRO-1 (bf16_optimizer_at_zero0) */
            own_env.knobs.ds_bf16_optimizer = true;
            own_s = *s;
            own_s.zero = 1;
            s = &own_s;
        }
        if (bf16) {
            own_env.knobs.fp8 = TSL_FP8_NONE;
            own_env.knobs.fp8_param_gather = false;
            own_env.knobs.moe_fp8_dispatch = false;
        }
        if (resync)
            own_env.knobs.sdp_nosync = false;
        env = &own_env;
    }
    degrees_t g = {dim_degree(s, TSL_DIM_TP), dim_degree(s, TSL_DIM_DP),
                   dim_degree(s, TSL_DIM_SDP)};
    uint32_t w = g.d * g.z, cp = env->knobs.cp > 1 ? env->knobs.cp : 1;
    /* under CP a rank holds n = B_m / w samples' worth of tokens: B_m·c / w samples,
     * s / c tokens each; B_m divides by w / c */
    if (mb == 0 || group_size(s) != env->block_size || !tsl_cost_tp_fits(l, g.t) ||
        !tsl_cost_cp_fits(l, s, cp, env->knobs.cp_comm) || mb % (w / cp) != 0 ||
        !tsl_cost_ep_fits(l, env->block_size, env->knobs.ep, env->knobs.etp)) {
        set_infeasible(out);
        return;
    }
    tsl_strategy_bw_t local;
    if (bw == NULL) {
        tsl_cost_strategy_bw(env, s, &local);
        if (l->experts)
            tsl_cost_moe_bw(env, l, &local);
        bw = &local;
    }
    double n = cp > 1 ? (double)mb / w : (double)(mb / w);
    double p = rank_params(l, g.t, env->tied_copy, &env->knobs); /* this TP rank's */
    moe_terms_t moe = {0};
    if (l->experts) { /* the routed experts are priced apart (moe_terms) */
        moe_terms(env, l, s, bw, g, n, &moe);
        p -= tsl_layer_expert_params(l) / g.t;
    }
    /* weights another layer holds (mtp.h: an MTP head's, a repeated MTP depth's):
     * computed with, never kept, gathered, synced or stepped here */
    double own = l->shared_weights ? 0.0 : p;
    if (l->shared_weights)
        shared_moe(&moe);
    double act_msg = act_elem_bytes(&env->knobs) * l->seq_len * l->hidden * n;

    double compute_f, compute_b, acc_b, core_f, wgrad_frac, col_frac[2];
    layer_kernels_t kern; /* what the passes tell beside their times */
    /* the unsharded accumulation of sdp_nosync, over all p; else the plain stacks' */
    double acc_bytes = sdp_nosync_accum_bytes(env, g), acc_params = p;
    if (acc_bytes == 0.0) {
        acc_bytes = grad_accum_bytes(&env->knobs, s, g);
        acc_params = p / g.z;
    }
    layer_compute_f(env, l, s, n, g.t, acc_params, acc_bytes, &compute_f, &compute_b, &acc_b,
                    &core_f, &wgrad_frac, col_frac, &kern);
    /* measured per-shape block times replace the roofline (not for MoE, latent
     * attention or Mamba layers: a profile measures dense Transformer blocks) */
    bool profiled =
        env->profile != NULL && !l->experts && !l->kv_lora_rank && l->kind != TSL_LAYER_MAMBA;
    if (profiled)
        tsl_profile_layer_s(env->profile, l, n, g.t, env->device_flops, &compute_f, &compute_b);
    /* a per-layer profile's backward is twice its forward; a block timed as a stack
     * that runs its forward twice (double_block_fwd) ran it: twice one run is that */
    if (profiled && env->knobs.double_block_fwd && block_layer(l))
        compute_b *= 0.5;
    compute_b += grad_copy_s(env, l, s, g, n, own, kern.bwd_s); /* SDP's unfused bucket copies */
    /* with SP the all-reduce becomes an all-gather + reduce-scatter: same ring bytes;
     * none where the measured times already hold it */
    double k = env->overlap_slowdown;
    double tp_f = profiled && env->profile->tp_comm_in_times
                      ? 0.0
                      : l->tp_allreduces * allreduce_lat_s(act_msg, g.t, bw->tp_bw, &bw->tp_lat);
    tp_sp_t sp; /* the SP all-gathers of FP8 linears, as shares of bf16's */
    tp_sp_shares(env, l, s, n, g.t, act_msg, bw, &kern.fwd, &sp);
    tsl_roofline_fp8_split_t w8s; /* FP8 weights by recipe (all 0: bf16) */
    fp8_weights(env, l, g.t, &w8s);
    double w8 = l->shared_weights ? 0.0 : w8s.weights[env->knobs.fp8]; /* the recipe's */
    bool bf16_ag = mxfp8_bf16_param_ag(env, s, g);                     /* MXFP8's bf16 gather */
    double pg = gather_bytes(env, own, w8, bf16_ag); /* 2 per weight, FP8 ones 1 */
    double gather = allgather_lat_s(pg, g.z, bw->sdp_bw, &bw->sdp_lat);
    double cp_f, cp_b;
    cp_exchange(env, l, g.t, n, core_fwd_s(env, l, n, g.t, core_f), bw, &cp_f, &cp_b);
    double per_mb, last, exposed, gather_next;
    grad_extra_t gx;
    grad_bucket(env, s, g, own, tsl_roofline_param_tensors(l), &gx);
    grad_sync(env->mode, &env->knobs, s, g, bw, reduce_elem_bytes(&env->knobs) * own, pg, &gx,
              &per_mb, &last, &exposed, &gather_next);
    /* DeepSpeed 0.3's ZeRO-3: its own gathers and reduces in place of the SDP level's */
    ds_zero3_terms_t ds3 = {0};
    bool ds03 = ds_zero3_v03(env, l, s, g, bw, own, &ds3);
    if (ds03) {
        gather = ds3.fwd_s;
        per_mb = gx.cast_s;
    }
    /* dispatch + combine, and at etp > 1 the gather and the reduce-scatter */
    /* HybridEP's routing map: beside the collectives, or after the sync (below) */
    bool map_sync = hybridep_syncs(env);
    double ep_f = moe.a2a_pass + 2.0 * moe.tpc + moe.disp_f + (map_sync ? 0.0 : moe.map_f),
           ep_b = moe.a2a_pass + 2.0 * moe.tpc + moe.disp_b, ep_rf = ep_f, ep_lead = ep_f + ep_b;
    if (l->experts && !profiled)
        ep_host_lead(env, l, s, n, g.t, acc_params, acc_bytes, &kern, compute_f, compute_b + acc_b,
                     &ep_f, &ep_b);
    ep_lead -= ep_f + ep_b;        /* what the host's lead hid (layer_cost_t.ep_lead_s) */
    if (l->experts && !profiled) { /* the stretch the sync leaves without a host lead */
        double stretch = moe_sync_stretch(env, &kern, ep_rf, ep_rf - ep_f);
        ep_f += stretch;
        ep_rf += stretch; /* a recomputed MoE forward syncs again */
    }
    if (map_sync) { /* the host waits on the gather and the scan: exposed whole */
        ep_f += moe.map_f;
        ep_rf += moe.map_f;
    }
    if (l->experts) {
        gather += moe.gather;
        per_mb += moe.per_mb;
        last += moe.last;
        exposed += moe.exposed;
        gather_next += moe.gather_next;
    }
    /* SDP kept unsharded between micro-batches (sdp_nosync): no gather in any
     * micro-batch's forward or backward, one per iteration under the first forward
     * (FSDP2 prefetches the next layer's while this one computes) */
    if (!ds03 && env->mode == TSL_COST_STACK && env->knobs.sdp_nosync && g.z > 1) {
        gather_next += gather;
        gather = 0.0;
    }
    if (env->calib != NULL) { /* corrections fitted from trials (calibrate.h) */
        double *compute[] = {&compute_f, &compute_b, &core_f, &acc_b};
        double *comm[] = {&tp_f, &gather, &per_mb, &last, &exposed, &gather_next};
        calibrate_times(env->calib, l, n, compute, comm);
        cp_f *= env->calib->comm_scale;
        cp_b *= env->calib->comm_scale;
        ep_f *= env->calib->comm_scale;
        ep_b *= env->calib->comm_scale;
        ep_rf *= env->calib->comm_scale;     /* the modules' recompute repeats them */
        ds3.bwd_s *= env->calib->comm_scale; /* DeepSpeed 0.3's backward gathers, reduces */
    }
    /* Megatron-FSDP's prefetched gathers (sdp_prefetch): the SDP gather leaves
     * the exposed terms and joins the pass's overlapped communication */
    double pre = !ds03 && sdp_prefetch(env, g) ? gather : 0.0; /* DeepSpeed 0.3: none */
    gather -= pre;
    /* fairscale's FSDP with a root per layer (sdp_roots): the backward's gathers
     * prefetched as above, beside the reduce-scatters; the forward's priced by unit */
    bool roots = !ds03 && sdp_roots(env, g);
    double fwd_comp = roots ? roots_fwd_s(env, l, s, n, g.t, compute_f, gather, k)
                            : tsl_cost_overlap_s(compute_f, pre, k);
    if (roots) {
        pre = gather;
        gather = 0.0;
    }
    /* the backward's gathers, exposed (gather_b) or prefetched (pre_b): none where
     * the level keeps the forward's (sdp_keep_weights, FSDP1's SHARD_GRAD_OP) */
    bool keep = !ds03 && env->mode == TSL_COST_STACK && sdp_keeps_weights(&env->knobs, g);
    double gather_b = keep ? 0.0 : gather, pre_b = keep ? 0.0 : pre;
    if (ds03) /* the recompute's and the backward's gathers, the reduces, all exposed */
        gather_b = ds3.bwd_s;
    /* ZeRO-1's weight all-gather under the next iteration's first forward: what
     * the forward does not hide (Megatron-LM --overlap-param-gather) */
    double next_s =
        gather_next > 0 ? tsl_cost_overlap_s(compute_f, gather_next, k) - compute_f : 0.0;
    /* the forward's TP exposed, or under its GEMMs (tp_comm_overlap); the
     * backward's, and what of it the dW GEMMs hid (zero-bubble's W gives it up) */
    double ag_in, ag_dy; /* under SP: the all-gathers, FP8 ones at their share */
    tp_sp_gathers(&sp, l->tp_allreduces, tp_f, &ag_in, &ag_dy);
    double tp_fx = s->sp ? ag_in + tp_f / 2.0 : tp_f;
    double mlp_fx = l->tp_allreduces ? tp_f / l->tp_allreduces : 0.0;
    if (sp.n > 0 && sp.n == l->tp_allreduces) /* the last block, a dense MLP's */
        mlp_fx *= (1.0 + sp.in[sp.n - 1]) / 2.0;
    double col[2] = {col_frac[0] * compute_b, col_frac[1] * compute_b};
    double tp_b = tp_bwd_s(env, s->sp, tp_f, ag_in, ag_dy, col[0], col[1], k);
    double dw_hid = (s->sp ? ag_dy + tp_f / 2.0 : tp_f) - tp_b, ub[4];
    double pass[2] = {compute_f, compute_b};
    if (tp_ub_s(env, l, s, n, g.t, pass, tp_f, col, k, &sp, act_msg, ub) ||
        tp_async_s(env, l, s, n, g.t, pass, tp_f, col, k, &sp, act_msg, ub)) {
        tp_fx = ub[0];
        tp_b = ub[1];
        dw_hid = ub[2];
        mlp_fx = ub[3];
    }
    double mtp[3]; /* an MTP entry's eh_proj: its own collectives */
    if (mtp_entry_tp(env, l, s, g.t, act_msg, bw, tp_f, col, k, mtp)) {
        tp_fx = mtp[0];
        tp_b = mtp[1];
        dw_hid = mtp[2];
    }
    tp_fx += sp.amax_f_s; /* TE current scaling's amax all-reduces (tp_sp_shares) */
    tp_b += sp.amax_b_s;
    tp_b += cross_kv_grad_s(env, l, g.t, n, bw, profiled); /* the encoder output's dX */
    /* a stack that runs each block's forward twice (double_block_fwd) pays the first
     * run's compute and forward TP (as the forward runs it) again, in the forward and
     * in a full recompute; a measured profile timed the layer as the stack ran it
     * and holds both */
    double twice_c = 0.0, twice_comm = 0.0;
    if (env->knobs.double_block_fwd && block_layer(l) && !profiled) {
        twice_c = compute_f;
        twice_comm = tp_fx;
    }
    /* full recomputation re-runs the forward with its collectives, exposed as in
     * the forward; selective only the attention core (and CP's exchange for it) */
    double recompute = s->ckpt ? compute_f + tp_fx + cp_f + ep_f : core_f + cp_f * (core_f > 0);
    if (s->ckpt)
        recompute += twice_c + twice_comm;
    double mod_c, mod_comm; /* the recompute modules (recompute.h) */
    module_recompute_s(env, l, s, n, g.t, tp_f, ag_in, mlp_fx, ep_rf, &mod_c, &mod_comm);
    recompute += mod_c + mod_comm;

    /* synchronised TP collectives (tp_sync): their dispatch and the queue's restart,
     * in each forward run; a measured profile timed the layer with them */
    double sync_f = 0.0, sync_b = 0.0;
    pass_restarts_t rs = {0}; /* the restarts tp_sync and ds_wall_clock price, made once */
    if (!profiled)
        tp_sync_s(env, l, g.t, n, &kern, compute_f, compute_b + acc_b, &rs, &sync_f, &sync_b);
    double instr_f = 0.0, instr_b = 0.0; /* ds_wall_clock: on the stage's first / last */
    if (!profiled)                       /* a measured profile timed each layer between two syncs */
        ds_instr_restart_s(env, l, g.t, n, &kern, compute_f, compute_b + acc_b, &rs, &instr_f,
                           &instr_b);
    if (env->knobs.double_block_fwd && block_layer(l))
        sync_f *= 2.0;
    if (s->ckpt) /* a full recompute re-runs the forward and its syncs */
        sync_b += sync_f;
    memset(out, 0, sizeof(*out)); /* padding too: callers may compare whole results */
    out->feasible = true;
    out->fwd_s = fwd_comp + tp_fx + gather + cp_f + ep_f + twice_c + twice_comm + sync_f;
    double bwd_rest = tp_b + gather_b + recompute + cp_b + ep_b + sync_b;
    /* every micro-batch but one accumulates its gradients (acc_b: autocast,
     * unfused_grad_accum): the
     * count is the same whether the one spared is the first or the last */
    out->bwd_s = bwd_rest + tsl_cost_overlap_s(compute_b + acc_b, per_mb + pre_b, k);
    out->grad_comm_s = per_mb + last + exposed + gather_next;
    double under = tsl_cost_overlap_s(compute_b, per_mb + last + pre_b, k);
    out->bwd_sync_s = bwd_rest + under + exposed + next_s;
    /* the DP reduce alone, and what the line above charges for it: a stack that
     * launches it after the backward (Megatron-core's per-chunk reduce under
     * interleaving, pipeline.h tsl_pipeline_chunk_rs_s) pays it there instead */
    out->dp_rs_s = last;
    out->dp_rs_sync_s = under - tsl_cost_overlap_s(compute_b, per_mb + pre_b, k);
    /* a zero-bubble schedule defers W, so B pays its collective unhidden: what the
     * dW GEMMs hid is taken off W (B = bwd_s − W keeps tp_f) */
    out->wgrad_s = fmax(0.0, wgrad_frac * compute_b - fmax(0.0, dw_hid));
    /* (ZeRO-2's and, in STACK, ZeRO-3's last micro-batch reduce-scatter once, as
     * every other: per_mb) */
    out->compute_s = compute_f + compute_b + acc_b + recompute - (s->ckpt ? tp_fx + ep_f : 0.0);
    out->comm_s = tp_fx + tp_b + ((gather + pre) + (gather_b + pre_b)) +
                  (s->ckpt ? tp_fx + ep_f : 0.0) + cp_f + cp_b + ep_f + ep_b;
    out->compute_s -= mod_comm; /* what the modules repeat of the layer's communication */
    out->comm_s += mod_comm;
    /* the second run: compute, its all-reduces communication (a full recompute's
     * share is in recompute above, its all-reduces moved here as tp_f's are) */
    out->compute_s += twice_c - (s->ckpt ? twice_comm : 0.0);
    out->compute_s += sync_f + sync_b; /* the GPU idle around synchronised TP collectives */
    out->comm_s += twice_comm * (s->ckpt ? 2.0 : 1.0);
    out->cp_s = cp_f + cp_b;
    out->ep_s = ep_f + ep_b;
    out->ep_fwd_s = ep_f;
    out->ep_lead_s = ep_lead;
    /* the EP overlap's "mlp" node (ep_overlap.h): the routed experts' (a dense layer's
     * MLP block's) share of each pass's compute; a measured profile's: none (no MoE
     * layer has one) */
    if (!profiled) {
        out->mlp_f_s = kern.fwd.mlp_frac * compute_f;
        out->mlp_b_s = kern.bwd_mlp_frac * compute_b;
        out->mlp_w_s = kern.bwd_mlp_wgrad_frac * compute_b;
    }
    out->instr_f_s = instr_f;
    out->instr_b_s = instr_b;
    out->opt_s = optimizer_s(env, l, s, g, own) + moe.opt_s;
    if (ds03) /* the persistent tensors' gather after the step */
        out->opt_s += ds3.step_s;
    out->opt_s += fp8_weight_cast_s(env, env->knobs.fp8, w8 + moe.w8, bf16_ag);
    for (uint32_t r = 1; r < TSL_FP8_COUNT && !l->shared_weights; r++) /* module_prec's */
        if (r != env->knobs.fp8)
            out->opt_s += fp8_weight_cast_s(env, r, w8s.weights[r], bf16_ag);
    out->step_bytes = (uint64_t)ceil(pp_logits_held_bytes(l, env, (double)mb / ((double)g.t * w)));
    layer_memory(l, s, g, mb, w, cp, own, &env->knobs, env->mode, fp8_priced(env),
                 env->device_fp8_any_layout, out->step_bytes > 0, out);
    if (l->experts && !l->shared_weights) {
        out->ms_bytes += (uint64_t)ceil(states_bytes(s, moe.g, moe.p, &env->knobs));
        out->grad_bytes += (uint64_t)ceil(grads_bytes(s, moe.g, moe.p, &env->knobs));
        shift_bytes(&out->ms_bytes, expert_fp8_cache_bytes(env, l, moe.p));
        out->bwd_bytes +=
            (uint64_t)transient_bytes(s, moe.g, moe.p, grad_elem_bytes(&env->knobs), &env->knobs);
    }
    if (l->experts)
        moe_stash(s, moe.stash, mb, w, out);
    if (env->calib != NULL)
        calibrate_memory(env->calib->mem_scale, out);
}

/* One direction of a layout change: an all-gather of X / width over k ranks. */
static double move_s(const tsl_relayout_move_t *m, double x_bytes)
{
    if (m->kind != TSL_RELAYOUT_GATHER && m->kind != TSL_RELAYOUT_WHOLE)
        return 0.0;
    return tsl_cost_allgather_s(x_bytes / m->width, m->k, m->bw);
}

void tsl_cost_transition(const tsl_cost_env_t *env, const tsl_layer_t *l,
                         const tsl_relayout_t *moves, uint32_t mb, tsl_transition_cost_t *out)
{
    double x = (double)l->bnd_act_bytes * mb;
    double k = env->calib != NULL ? env->calib->comm_scale : 1.0;
    out->fwd_s = k * move_s(&moves->fwd, x);
    out->bwd_s = k * move_s(&moves->bwd, x);
}

/* The sender's calibration corrects its communication. */
static double sender_comm_scale(const tsl_cluster_t *c, uint32_t from_first)
{
    const struct tsl_calib *cal = tsl_cluster_block_calib(c, from_first, 1);
    return cal != NULL ? cal->comm_scale : 1.0;
}

/* Bytes one rank of the sending stage puts on its link per micro-batch (STACK):
 * its data replica's samples, B_m / w, and under SP only its 1/t of the sequence.
 * Megatron-core sends (s/t if SP, mbs, h) from every TP rank and never scatters
 * the unsharded tensor (p2p_communication.py, get_tensor_shapes in schedules.py). */
static double rank_boundary_bytes(const tsl_strategy_t *s, uint64_t bnd, uint32_t mb)
{
    uint32_t t = dim_degree(s, TSL_DIM_TP);
    uint32_t w = dim_degree(s, TSL_DIM_DP) * dim_degree(s, TSL_DIM_SDP);
    double n = (double)mb / w;
    return (double)bnd * n / (s->sp ? t : 1);
}

bool tsl_cost_pp_recv_held(const tsl_cost_env_t *env)
{
    const tsl_cost_knobs_t *k = &env->knobs;
    return env->pipelined && env->mode != TSL_COST_PAPER && !k->autocast &&
           tsl_loss_pp_holds_logits(k->loss_impl);
}

double tsl_cost_pp_recv_bytes(const tsl_cost_env_t *env, const tsl_strategy_t *s,
                              uint64_t bnd_bytes_per_sample, uint32_t mb)
{
    if (s == NULL || !tsl_cost_pp_recv_held(env))
        return 0.0;
    return rank_boundary_bytes(s, bnd_bytes_per_sample, mb);
}

tsl_p2p_proto_t tsl_cost_p2p_proto(const tsl_cost_knobs_t *k)
{
    if (k->ds_pipe_p2p)
        return TSL_P2P_DS_PIPE;
    return k->legacy_p2p ? TSL_P2P_SCATTER_GATHER : TSL_P2P_CORE;
}

bool tsl_cost_vp_blocking(const tsl_cost_knobs_t *k)
{
    return k->legacy_p2p || k->torch_pipelining;
}

bool tsl_cost_proj_orig_input(const tsl_cost_knobs_t *k)
{
    return k->fp8 != TSL_FP8_NONE && k->fp8 != TSL_FP8_DELAYED && k->fp8_impl == TSL_FP8_IMPL_TE &&
           tsl_opt_step_megatron_core(k->opt_step);
}

bool tsl_cost_shared_fc1_orig_input(const tsl_cost_knobs_t *k)
{
    return tsl_cost_proj_orig_input(k) && !(k->recompute_modules & TSL_RECOMPUTE_SHARED_EXPERTS);
}

bool tsl_cost_mla_down_orig_input(const tsl_cost_knobs_t *k)
{
    return tsl_cost_proj_orig_input(k) && (k->recompute_modules & TSL_RECOMPUTE_LAYERNORM);
}

bool tsl_cost_p2p_rendezvous(const tsl_cost_knobs_t *k)
{
    return k->ds_pipe_engine || k->ds_pipe_p2p;
}

uint64_t tsl_cost_ds_mask_bytes(tsl_p2p_proto_t proto, const tsl_layer_t *l)
{
    if (proto != TSL_P2P_DS_PIPE || l == NULL)
        return 0;
    return 2u * (uint64_t)l->seq_len * l->seq_len;
}

/* DeepSpeed's PipelineEngine under AMP's fork (runtime/pipe/engine.py, p2p.py,
 * runtime/utils.py PartitionedTensor; docs/cost-model.md "DeepSpeed's pipeline
 * p2p"): with TP (is_pipe_partitioned) each rank sends its 1/t of the activation,
 * a meta tensor (not priced: a few longs) and the fp16 mask; the receivers
 * all-gather the activation; the gradient goes back whole (is_grad_partitioned
 * false) and the senders all-gather their own output back before the backward.
 * Without TP the whole activation and the mask. Bytes per rank. */
static double ds_pipe_p2p_s(const tsl_cluster_t *c, uint32_t from_first, uint32_t to_first,
                            double bytes, uint32_t t, double pairs_bw, double mask)
{
    double fwd = tsl_cost_p2p_s(bytes / t + mask, pairs_bw);
    double bwd = tsl_cost_p2p_s(bytes, pairs_bw);
    if (t > 1) {
        fwd += tsl_cost_allgather_s(bytes, t, tsl_cluster_link_bw(c, to_first, to_first + 1));
        bwd += tsl_cost_allgather_s(bytes, t, tsl_cluster_link_bw(c, from_first, from_first + 1));
    }
    return fwd + bwd;
}

double tsl_cost_ds_exchange_dispatch_s(const tsl_cost_env_t *env, const tsl_strategy_t *sender)
{
    if (!env->knobs.ds_wall_clock || env->knobs.launch_blocking || !(env->host_op_s > 0) ||
        sender == NULL)
        return 0.0;
    /* the activation's send and receive, the gradient's; under TP the sender's
     * PartitionedTensor.full() all-gather opens its RecvGrad (pipe/engine.py) */
    double ops = 2.0 + (dim_degree(sender, TSL_DIM_TP) > 1 ? 1.0 : 0.0);
    return ops * env->host_op_s;
}

double tsl_cost_stage_p2p_pairs_s(const tsl_cluster_t *c, tsl_cost_mode_t mode, uint32_t from_first,
                                  uint32_t to_first, const tsl_strategy_t *sender,
                                  uint64_t bnd_bytes_per_sample, uint32_t mb, double pairs_bw,
                                  tsl_p2p_proto_t proto, uint64_t mask_bytes)
{
    double k = sender_comm_scale(c, from_first);
    if (mode == TSL_COST_PAPER || sender == NULL) { /* AMP: the whole boundary on one link */
        double bytes = (double)bnd_bytes_per_sample * mb;
        return 2.0 * k * tsl_cost_p2p_s(bytes, tsl_cluster_link_bw(c, from_first, to_first));
    }
    /* every rank sends to its counterpart at once: the pairs share the network */
    double bytes = rank_boundary_bytes(sender, bnd_bytes_per_sample, mb);
    uint32_t t = dim_degree(sender, TSL_DIM_TP);
    if (proto == TSL_P2P_DS_PIPE && !sender->sp)
        return k * ds_pipe_p2p_s(c, from_first, to_first, bytes, t, pairs_bw, (double)mask_bytes);
    if (proto == TSL_P2P_SCATTER_GATHER && !sender->sp && t > 1) {
        /* Megatron-LM 2021-2022: 1/t over the network, then the TP group's
         * all-gather of the whole on the receiving side (p2p_communication.py
         * split_tensor_into_1d_equal_chunks / gather_split_1d_tensor) */
        double gather =
            tsl_cost_allgather_s(bytes, t, tsl_cluster_link_bw(c, to_first, to_first + 1));
        return 2.0 * k * (tsl_cost_p2p_s(bytes / t, pairs_bw) + gather);
    }
    /* activation forward, its gradient backward: two transfers of the same size */
    return 2.0 * k * tsl_cost_p2p_s(bytes, pairs_bw);
}

double tsl_cost_stage_p2p_s(const tsl_cluster_t *c, tsl_cost_mode_t mode, uint32_t from_first,
                            uint32_t to_first, const tsl_strategy_t *sender,
                            uint64_t bnd_bytes_per_sample, uint32_t mb)
{
    double bw = mode == TSL_COST_PAPER || sender == NULL
                    ? 0.0 /* not read */
                    : tsl_cluster_pairs_bw(c, from_first, to_first, group_size(sender));
    return tsl_cost_stage_p2p_pairs_s(c, mode, from_first, to_first, sender, bnd_bytes_per_sample,
                                      mb, bw, TSL_P2P_CORE, 0);
}

double tsl_cost_tied_elem_bytes(const tsl_cost_knobs_t *k)
{
    return k->ds_bf16_optimizer || k->fp32 ? grad_elem_bytes(k) : TSL_BYTES_PER_PARAM_FP16;
}

double tsl_cost_tied_allreduce_elem_s(const tsl_cluster_t *c, const tsl_layer_t *head,
                                      const tsl_strategy_t *s, uint32_t first_a, uint32_t first_b,
                                      uint32_t size_b, double elem_bytes)
{
    uint32_t t = tsl_strategy_degree(s, TSL_DIM_TP), z, stride;
    bool tied = head->kind == TSL_LAYER_HEAD && head->tied_head;
    if (!(tied || head->kind == TSL_LAYER_MTP) || t == 0)
        return 0.0;
    double bytes = elem_bytes * padded_vocab(head, t, NULL) / t * head->hidden;
    const struct tsl_calib *cal = tsl_cluster_block_calib(c, first_a, 1);
    double k = cal != NULL ? cal->comm_scale : 1.0;
    /* every rank of the head's stage sums with its counterpart in the first at the
     * same time (Megatron's embedding groups, DeepSpeed's tied-module groups: one
     * per rank of the stage): the pairs share the network as a boundary's sends do */
    double sum = tsl_cost_allreduce_s(bytes, 2, tsl_cluster_pairs_bw(c, first_a, first_b, size_b));
    /* under SDP each side first all-gathers its shard over its data group (the
     * executor's tie sum), priced as a layer's SDP gather on the head's block */
    dim_shape(s, TSL_DIM_SDP, &z, &stride);
    double gather =
        z > 1 ? tsl_cost_allgather_s(bytes, z, tsl_cluster_dim_bw(c, first_b, size_b, stride, z))
              : 0.0;
    return k * (sum + gather);
}
