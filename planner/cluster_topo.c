/*
 * cluster_topo.c — collectives and transfers as NCCL runs them over the cluster's
 * topology (cluster.h "Topology"; docs/cost-model.md "Collectives").
 *
 * The paper's model (cluster.c, AMP Eq. 3) gives every group the slowest link it
 * spans as if it had that link to itself. Here the NICs of a node are a shared
 * resource: the groups of one parallel dimension all communicate at once (a TP8 ×
 * DP4 stage's eight DP groups all-reduce together), so the groups crossing a
 * node's NICs split them. NCCL spreads a communicator over its channels, one NIC
 * each, and a rank reaches the NICs near it (one per GPU on rail-optimised
 * DGX/HGX nodes), so a group uses at most as many NICs as it has members there.
 *
 * Everything walks nodes or a node's devices; nothing allocates (the search calls
 * these once per strategy and block, tsl_cost_layer may call them in DP loops). A
 * dimension's walk keeps each node's count of crossing groups on its stack
 * (cross_memo_t) and walks one tile of a block that repeats it (spans_to_walk);
 * tsl_cluster_dim_walk_plain and tsl_cluster_dim_flex_plain walk without either, for
 * tests/test_cluster.c to hold them to.
 */
#include "cluster.h"

#include <math.h>
#include <string.h>

#include "minmax.h" /* bandwidths > 0 or +INFINITY, NIC counts ≥ 1 over sends ≥ 0: never NaN */

/* ---- geometry of one dimension's groups over a block ---- */

/* The groups of a dimension: `count` members `stride` apart, tiled over the block
 * in spans of stride·count devices (the mesh order of strategy.h). Group (q, r)
 * starts at block_first + q·span + r, r < stride. */
typedef struct cross_memo cross_memo_t;

typedef struct dim_shape {
    uint32_t block_first, block_size, stride, count;
    uint64_t span;
    cross_memo_t *memo; /* crossing_on's counts so far; NULL: walk every time */
} dim_shape_t;

static uint64_t group_first(const dim_shape_t *d, uint64_t q, uint64_t r)
{
    return d->block_first + q * d->span + r;
}

static uint64_t group_last(const dim_shape_t *d, uint64_t first)
{
    return first + (uint64_t)(d->count - 1) * d->stride;
}

static uint32_t domain_of_dev(const tsl_cluster_t *c, uint64_t dev)
{
    return tsl_cluster_node_domain(c, c->device_node[dev]);
}

/* Devices are node-major and domains runs of nodes, so a group spans domains
 * exactly when its first and last members lie in different ones. */
static bool group_crosses(const tsl_cluster_t *c, const dim_shape_t *d, uint64_t first)
{
    return domain_of_dev(c, first) != domain_of_dev(c, group_last(d, first));
}

/* Members of the group starting at `first` on node x. */
static uint32_t members_on(const tsl_cluster_t *c, const dim_shape_t *d, uint64_t first, uint32_t x)
{
    uint64_t lo = c->node_first[x], hi = lo + c->nodes[x].n_gpus;
    uint64_t k_lo = lo > first ? (lo - first + d->stride - 1) / d->stride : 0;
    uint64_t k_hi = hi > first ? (hi - first + d->stride - 1) / d->stride : 0;
    k_hi = k_hi < d->count ? k_hi : d->count;
    return k_hi > k_lo ? (uint32_t)(k_hi - k_lo) : 0;
}

/* Groups of the dimension with a member on node x that span domains: the ones
 * that share x's NICs. Every device of the block belongs to one group, so the
 * walk visits at most x's devices. */
static uint32_t crossing_on(const tsl_cluster_t *c, const dim_shape_t *d, uint32_t x)
{
    uint64_t lo = c->node_first[x], hi = lo + c->nodes[x].n_gpus;
    uint64_t b_lo = d->block_first, b_hi = b_lo + d->block_size;
    lo = lo > b_lo ? lo : b_lo;
    hi = hi < b_hi ? hi : b_hi;
    uint32_t n = 0;
    for (uint64_t s = lo; s < hi;) {
        uint64_t q = (s - b_lo) / d->span, span_end = b_lo + (q + 1) * d->span;
        uint64_t e = hi < span_end ? hi : span_end;
        /* the offsets s..e−1 of span q hold the residues (s − b_lo + j) mod stride */
        uint64_t width = e - s < d->stride ? e - s : d->stride;
        for (uint64_t j = 0; j < width; j++) {
            uint64_t r = (s - b_lo + j) % d->stride;
            n += group_crosses(c, d, group_first(d, q, r));
        }
        s = e;
    }
    return n;
}

/*
 * crossing_on's counts, kept for one dimension's walk: a node's count depends only
 * on the dimension and the node, and every group with a member on the node asks for
 * it (the eight groups of a stride-8 dimension on 8-GPU nodes each walk the same
 * nodes, each node's count a walk of its devices). Direct-mapped by node: a slot
 * holds the last node that landed there, so a collision only walks again. On the
 * stack of the walk that owns it; nothing allocates.
 */
#define CROSS_MEMO_SLOTS 1024u
struct cross_memo {
    uint32_t node[CROSS_MEMO_SLOTS]; /* UINT32_MAX: empty */
    uint32_t n[CROSS_MEMO_SLOTS];
};

static void cross_memo_init(cross_memo_t *m)
{
    memset(m->node, 0xff, sizeof(m->node));
}

/* crossing_on through d's memo where it has one: the same count. */
static uint32_t crossing_on_memo(const tsl_cluster_t *c, const dim_shape_t *d, uint32_t x)
{
    if (d->memo == NULL)
        return crossing_on(c, d, x);
    uint32_t slot = x % CROSS_MEMO_SLOTS;
    if (d->memo->node[slot] != x) {
        d->memo->n[slot] = crossing_on(c, d, x);
        d->memo->node[slot] = x;
    }
    return d->memo->n[slot];
}

/* One NIC's path from node a to node b: the pair's inter-node figure, capped by
 * either node's NIC where the node names one. */
static double rail_bw(const tsl_cluster_t *c, uint32_t a, uint32_t b)
{
    double bw = tsl_cluster_node_pair_bw(c, a, b);
    if (c->nodes[a].nic_bw > 0)
        bw = fmin(bw, c->nodes[a].nic_bw);
    if (c->nodes[b].nic_bw > 0)
        bw = fmin(bw, c->nodes[b].nic_bw);
    return bw;
}

/* The node after the one holding member `k` of the group, as a member index. */
static uint32_t next_member_off_node(const tsl_cluster_t *c, const dim_shape_t *d, uint64_t first,
                                     uint32_t k, uint32_t *node)
{
    uint64_t dev = first + (uint64_t)k * d->stride;
    *node = c->device_node[dev];
    return k + members_on(c, d, first, *node);
}

/* Slowest one-NIC path between nodes of different domains the group touches
 * (AMP's slowest link, over the network part only): O(nodes touched) without a
 * matrix, O(nodes touched²) with one. */
static double group_rail_bw(const tsl_cluster_t *c, const dim_shape_t *d, uint64_t first)
{
    double bw = INFINITY;
    uint32_t a, b;
    for (uint32_t i = 0; i < d->count;) {
        uint32_t i_next = next_member_off_node(c, d, first, i, &a);
        if (c->inter_bw_matrix == NULL) {
            bw = fmin(bw,
                      c->nodes[a].nic_bw > 0 ? fmin(c->inter_bw, c->nodes[a].nic_bw) : c->inter_bw);
            i = i_next;
            continue;
        }
        for (uint32_t j = i_next; j < d->count;) {
            j = next_member_off_node(c, d, first, j, &b);
            if (tsl_cluster_node_domain(c, a) != tsl_cluster_node_domain(c, b))
                bw = fmin(bw, rail_bw(c, a, b));
        }
        i = i_next;
    }
    return bw;
}

/* What one group of the dimension gets: intra (NVLink hops of domains holding ≥ 2
 * of its members, at the all-to-all's share of the ring where a2a) and, when it
 * spans domains, the slowest domain's share of its NICs: a ring's cap_D, an
 * all-to-all's (n − 1)·cap_D / (m_D·(n − m_D)) — each domain sends m_D·(n − m_D)/n
 * of a rank's buffer off it (cluster.h, tsl_cluster_dim_a2a_busbw). *domains = NVLink
 * domains touched. */
static double node_intra_bw(const tsl_cluster_t *c, uint32_t x, bool a2a)
{
    const tsl_node_t *nd = &c->nodes[x];
    return a2a ? nd->intra_bw * tsl_gpu_a2a_ratio(&c->gpu_types[nd->gpu_type]) : nd->intra_bw;
}

/* An all-to-all's share of the domain's NICs: the bound above at what a NIC carries of
 * NCCL's all-to-all (tsl_cluster_inter_a2a_ratio of the ring's, cost model 129). */
static double domain_nic_bw(const tsl_cluster_t *c, double cap, uint32_t m, uint32_t n, bool a2a)
{
    return a2a ? (double)(n - 1) * cap * tsl_cluster_inter_a2a_ratio(c) / ((double)m * (n - m))
               : cap;
}

/* One domain's run of a group's members, from member *k on (members are node-major
 * and domains runs of nodes): its members, its NICs' share for the crossing groups
 * (cap_D; 0 where the group stays in one domain) and its slowest node's intra figure.
 * false past the last member. */
typedef struct dom_run {
    uint32_t members;
    double cap, intra;
} dom_run_t;

static bool next_domain(const tsl_cluster_t *c, const dim_shape_t *d, uint64_t first, double rail,
                        bool a2a, uint32_t *k, dom_run_t *out)
{
    if (*k >= d->count)
        return false;
    uint32_t x, k_next = next_member_off_node(c, d, first, *k, &x);
    uint32_t dom = tsl_cluster_node_domain(c, x);
    *out = (dom_run_t){0, 0.0, INFINITY};
    for (;;) {
        uint32_t m = k_next - *k;
        out->members += m;
        out->intra = tsl_min(out->intra, node_intra_bw(c, x, a2a));
        if (rail > 0) /* x's NICs split between the crossing groups, ≤ m each */
            out->cap +=
                rail * tsl_min((double)m, (double)c->nodes[x].n_nics / crossing_on_memo(c, d, x));
        *k = k_next;
        if (*k >= d->count)
            return true;
        uint32_t y, after = next_member_off_node(c, d, first, *k, &y);
        if (tsl_cluster_node_domain(c, y) != dom)
            return true;
        x = y;
        k_next = after;
    }
}

static double group_busbw(const tsl_cluster_t *c, const dim_shape_t *d, uint64_t first, bool a2a,
                          uint32_t *domains, double *tree)
{
    bool crosses = group_crosses(c, d, first);
    double rail = crosses ? group_rail_bw(c, d, first) : 0.0, bw = INFINITY;
    uint32_t k = 0;
    dom_run_t r;
    *domains = 0;
    *tree = INFINITY;
    while (next_domain(c, d, first, rail, a2a, &k, &r)) {
        (*domains)++;
        if (r.members >= 2) {
            bw = tsl_min(bw, r.intra);
            *tree = tsl_min(*tree, r.intra);
        }
        if (crosses) {
            bw = tsl_min(bw, domain_nic_bw(c, r.cap, r.members, d->count, a2a));
            *tree = tsl_min(*tree, 2.0 * r.cap);
        }
    }
    if (*domains != 2)
        *tree = bw;
    return bw;
}

/* The flex dispatcher's figures of one group into fx (cluster.h, tsl_cluster_dim_flex_bw):
 * a domain D of m_D of the n members receives (n − m_D)·hit(m_D/n) token copies per token
 * of a rank and sends m_D·Σ_{D' ≠ D} hit(m_D'/n), both through cap_D at what a NIC carries
 * of the dispatcher's RDMA (tsl_cluster_inter_flex_ratio of the ring's, cost model 136:
 * DeepEP's and HybridEP's kernels, not NCCL's ring). */
static void group_flex(const tsl_cluster_t *c, const dim_shape_t *d, uint64_t first,
                       tsl_cluster_hit_fn hit, const void *ctx, tsl_cluster_flex_bw_t *fx)
{
    bool crosses = group_crosses(c, d, first);
    double rail = crosses ? group_rail_bw(c, d, first) : 0.0, all = 0.0;
    double share = tsl_cluster_inter_flex_ratio(c);
    uint32_t k = 0, n = 0;
    dom_run_t r;
    while (next_domain(c, d, first, rail, true, &k, &r)) {
        n++;
        if (r.members >= 2)
            fx->nvl_bw = fmin(fx->nvl_bw, r.intra);
        all += hit((double)r.members / d->count, ctx);
    }
    fx->domains = n > fx->domains ? n : fx->domains;
    for (k = 0; crosses && next_domain(c, d, first, rail, true, &k, &r);) {
        double h = hit((double)r.members / d->count, ctx);
        double in = (d->count - r.members) * h, out = r.members * (all - h);
        fx->net_s = fmax(fx->net_s, fmax(in, out) / (r.cap * share));
    }
}

/* ---- NCCL's tuning model (cluster.h; NVIDIA/nccl v2.30.7-1 src/graph/tuning.cc) ---- */

#define US 1e-6
/* baseLatencies, hwLatencies (NVLink, NET) per protocol LL, LL128, Simple; µs */
static const double ring_base_us[TSL_NCCL_PROTOS] = {6.6, 14.0, 8.4};
static const double tree_base_us[TSL_NCCL_PROTOS] = {6.8, 14.0, 8.4};
static const double ring_nvl_us[TSL_NCCL_PROTOS] = {0.6, 1.9, 3.4};
static const double tree_nvl_us[TSL_NCCL_PROTOS] = {0.6, 1.25, 4.0};
static const double ring_net_us[TSL_NCCL_PROTOS] = {2.7, 4.0, 14.0};
static const double tree_net_us[TSL_NCCL_PROTOS] = {5.0, 8.5, 14.0};
/* getNetOverhead (Intel hosts: 1 µs; × 3 for Simple) */
static const double net_overhead_us[TSL_NCCL_PROTOS] = {1.0, 1.0, 3.0};
#define PAT_BASE_US     8.0 /* PAT's baseLatency (Simple) */
#define PAT_LOG_DIV     3.5 /* PAT: log2(k) · net_t / 3.5 */
#define PAT_PER_RANK_US 2.8 /* PAT's linear part per rank */
#define RING_PLATEAU    1.4 /* ring Simple all-reduce across nodes, sm80 and newer */
/* llMaxBws: Hopper's single-node row; Intel hosts on 2 and on more nodes (GB/s) */
#define LL_CAP_ONE_GBPS  141.0
#define LL_CAP_TWO_GBPS  39.0
#define LL_CAP_MORE_GBPS 20.4
#define LL_FACTOR        0.5             /* ring LL: half the bus bandwidth */
#define LL128_FACTOR     0.92            /* ring LL128 (tuning.cc: "120.0/128.0") */
#define TREE_FACTOR      0.92            /* tree all-reduce, every protocol */
#define TREE_LL_DIV      3.8             /* tree LL */
#define TREE_LL128_ONE   (7.0 / 9.0)     /* tree LL128 inside one node */
#define TREE_LL128_MORE  (120.0 / 128.0) /* tree LL128 across nodes */
#define PAT_FACTOR       0.75
/* treeCorrectionFactor: tree all-reduce bandwidth × f[p][log2(M / 64 B)], M < 512 MiB */
#define TREE_CORR_SIZES 23
static const double tree_corr[TSL_NCCL_PROTOS][TREE_CORR_SIZES] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7,  .7,  .7,  .6, .5,
     .4,  .4,  .5,  .6,  .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7,  .6, .6,
     .6,  .6,  .6,  .6,  .8,  .9, .9, .9, .9, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9}};

static const char *const nccl_algo_names[TSL_NCCL_ALGOS] = {"ring", "tree", "pat"};
static const char *const nccl_proto_names[TSL_NCCL_PROTOS] = {"LL", "LL128", "Simple"};

const char *tsl_nccl_algo_name(unsigned algo)
{
    return algo < TSL_NCCL_ALGOS ? nccl_algo_names[algo] : NULL;
}

const char *tsl_nccl_proto_name(unsigned proto)
{
    return proto < TSL_NCCL_PROTOS ? nccl_proto_names[proto] : NULL;
}

static uint32_t log2_floor(uint32_t v)
{
    uint32_t l = 0;
    while (v >>= 1)
        l++;
    return l;
}

void tsl_cluster_coll_lat(uint32_t n, uint32_t k, tsl_coll_lat_t *out)
{
    memset(out, 0, sizeof(*out));
    if (n <= 1)
        return;
    k = k < 1 ? 1 : k > n ? n : k;
    out->n = n;
    out->k = k;
    double cross = k - 1.0, lg = log2_floor(k);
    for (int p = 0; p < TSL_NCCL_PROTOS; p++) {
        /* a ring across nodes posts every step to the network; with one rank per
         * node each step is exposed: the tree's network latency */
        double intra = k > 1 ? fmax(ring_nvl_us[p], net_overhead_us[p]) : ring_nvl_us[p];
        double inter = n == k ? tree_net_us[p] : ring_net_us[p];
        double ring_ar =
            ring_base_us[p] + (2.0 * (n - 1) - 2.0 * cross) * intra + 2.0 * cross * inter;
        if (p == TSL_NCCL_SIMPLE && k > 1)
            ring_ar *= RING_PLATEAU;
        out->ar_s[TSL_NCCL_RING][p] = ring_ar * US;
        out->ar_s[TSL_NCCL_TREE][p] =
            (tree_base_us[p] + 2.0 * ((double)(n / k - 1) * tree_nvl_us[p] + lg * tree_net_us[p])) *
            US;
        out->ar_s[TSL_NCCL_PAT][p] = INFINITY;
        out->ag_s[TSL_NCCL_RING][p] =
            (ring_base_us[p] + ((n - 1.0) - cross) * intra + cross * inter) * US;
        out->ag_s[TSL_NCCL_TREE][p] = INFINITY;
        out->ag_s[TSL_NCCL_PAT][p] = INFINITY;
    }
    if (n == k) /* PAT: one rank per node, Simple */
        out->ag_s[TSL_NCCL_PAT][TSL_NCCL_SIMPLE] =
            (PAT_BASE_US + lg * tree_net_us[TSL_NCCL_SIMPLE] / PAT_LOG_DIV + PAT_PER_RANK_US * n) *
            US;
    out->ll_cap_bw = 1e9 * (k == 1 ? LL_CAP_ONE_GBPS : k == 2 ? LL_CAP_TWO_GBPS : LL_CAP_MORE_GBPS);
}

void tsl_cluster_coll_lat_no_tree(tsl_coll_lat_t *lat)
{
    if (lat->n <= 1)
        return;
    for (int p = 0; p < TSL_NCCL_PROTOS; p++)
        lat->ar_s[TSL_NCCL_TREE][p] = INFINITY;
    lat->tree_gain = 0.0;
}

/* Bus bandwidth of choice (a, p) on a group of bus bandwidth bw, NCCL's factors. */
static double choice_bw(const tsl_coll_lat_t *lat, int a, int p, double bw, double bytes)
{
    if (a == TSL_NCCL_PAT)
        return PAT_FACTOR * bw;
    if (a == TSL_NCCL_RING)
        return p == TSL_NCCL_LL      ? tsl_min(LL_FACTOR * bw, lat->ll_cap_bw)
               : p == TSL_NCCL_LL128 ? LL128_FACTOR * bw
                                     : bw;
    double t = TREE_FACTOR * bw * (lat->tree_gain > 1.0 ? lat->tree_gain : 1.0);
    t = p == TSL_NCCL_LL      ? tsl_min(t / TREE_LL_DIV, lat->ll_cap_bw)
        : p == TSL_NCCL_LL128 ? t * (lat->k == 1 ? TREE_LL128_ONE : TREE_LL128_MORE)
                              : t;
    int size = bytes >= 64.0 ? ilogb(bytes / 64.0) : -1;
    return size >= 0 && size < TREE_CORR_SIZES ? t * tree_corr[p][size] : t;
}

/* The least α + span_a · M / bw over the finite α's of alpha[][]; span: the bus
 * bytes over M of each algorithm. */
static double least_time(const tsl_coll_lat_t *lat, const double alpha[][TSL_NCCL_PROTOS],
                         const double span[TSL_NCCL_ALGOS], double bytes, double bw,
                         tsl_coll_choice_t *choice)
{
    double best = INFINITY;
    tsl_coll_choice_t pick = {TSL_NCCL_RING, TSL_NCCL_SIMPLE};
    for (int a = 0; a < TSL_NCCL_ALGOS; a++)
        for (int p = 0; p < TSL_NCCL_PROTOS; p++) {
            if (!isfinite(alpha[a][p]))
                continue;
            double t = alpha[a][p] + span[a] * bytes / choice_bw(lat, a, p, bw, bytes);
            if (t < best) {
                best = t;
                pick = (tsl_coll_choice_t){(uint8_t)a, (uint8_t)p};
            }
        }
    if (choice != NULL)
        *choice = pick;
    return best;
}

double tsl_cluster_coll_allreduce_s(const tsl_coll_lat_t *lat, double bytes, uint32_t n, double bw,
                                    tsl_coll_choice_t *choice)
{
    if (choice != NULL)
        *choice = (tsl_coll_choice_t){TSL_NCCL_RING, TSL_NCCL_SIMPLE};
    if (n <= 1 || bytes <= 0)
        return 0;
    if (lat == NULL || lat->n <= 1)
        return 2.0 * (n - 1) / n * bytes / bw;
    const double span[TSL_NCCL_ALGOS] = {2.0 * (n - 1) / n, 2.0, 0.0};
    double t = least_time(lat, lat->ar_s, span, bytes, bw, choice);
    if (lat->ar_curve == NULL || lat->k != 1)
        return t;
    /* measured on the part (cluster.h tsl_gpu_ar_curve): NCCL's own choice and ramp */
    double measured =
        span[TSL_NCCL_RING] * bytes / (bw * tsl_ar_curve_shape(lat->ar_curve, n, bytes));
    return bytes >= tsl_ar_curve_min_bytes(lat->ar_curve) ? measured : fmax(t, measured);
}

double tsl_cluster_coll_allgather_s(const tsl_coll_lat_t *lat, double bytes, uint32_t n, double bw,
                                    tsl_coll_choice_t *choice)
{
    if (choice != NULL)
        *choice = (tsl_coll_choice_t){TSL_NCCL_RING, TSL_NCCL_SIMPLE};
    if (n <= 1 || bytes <= 0)
        return 0;
    if (lat == NULL || lat->n <= 1)
        return (double)(n - 1) / n * bytes / bw;
    const double span[TSL_NCCL_ALGOS] = {(double)(n - 1) / n, 0.0, 1.0};
    return least_time(lat, lat->ag_s, span, bytes, bw, choice);
}

/* ---- one dimension ---- */

static uint64_t gcd_u64(uint64_t a, uint64_t b)
{
    while (b) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/*
 * Spans of the block worth walking: all of them, or — when the block is a run of
 * identical tiles — those of the first tile. A tile is lcm(span, domain devices)
 * devices; the block repeats it when it starts on a domain boundary, its length
 * is a whole number of tiles, there is no pair matrix and every node it touches
 * has the first's GPUs, GPU type (the all-to-all's ratio), intra bandwidth, NICs and
 * NIC bandwidth. Then each tile
 * holds whole groups and whole domains, every node's crossing groups lie in its
 * own tile, and tiles differ only by translation: the same slowest group and the
 * same widest. A 16,384-GPU block walks one tile instead of every group (O(tile)
 * rather than O(block), plus O(nodes) for the check).
 */
static uint64_t spans_to_walk(const tsl_cluster_t *c, const dim_shape_t *d)
{
    uint64_t all = d->block_size / d->span;
    if (c->inter_bw_matrix != NULL || all < 2)
        return all;
    uint32_t n_lo = c->device_node[d->block_first];
    uint32_t n_hi = c->device_node[d->block_first + d->block_size - 1];
    const tsl_node_t *a = &c->nodes[n_lo];
    uint32_t dom = c->nvl_domain_nodes > 1 ? c->nvl_domain_nodes : 1;
    if (c->node_first[n_lo] != d->block_first || n_lo % dom != 0)
        return all;
    for (uint32_t x = n_lo + 1; x <= n_hi; x++) {
        const tsl_node_t *b = &c->nodes[x];
        if (b->n_gpus != a->n_gpus || b->gpu_type != a->gpu_type || b->intra_bw != a->intra_bw ||
            b->n_nics != a->n_nics || b->nic_bw != a->nic_bw)
            return all;
    }
    uint64_t dom_devs = (uint64_t)dom * a->n_gpus;
    uint64_t tile = d->span / gcd_u64(d->span, dom_devs) * dom_devs;
    if (d->block_size % tile != 0)
        return all;
    return tile / d->span;
}

/* The GPUs of every node the block touches, or 0 where they differ: node x of the
 * block then starts at node_first[first node] + (x − first node)·that. */
static uint32_t block_node_gpus(const tsl_cluster_t *c, const dim_shape_t *d)
{
    uint32_t n_lo = c->device_node[d->block_first];
    uint32_t n_hi = c->device_node[d->block_first + d->block_size - 1];
    uint32_t gpn = c->nodes[n_lo].n_gpus;
    for (uint32_t x = n_lo + 1; x <= n_hi; x++)
        if (c->nodes[x].n_gpus != gpn)
            return 0;
    return gpn;
}

/*
 * Whether the group starting at `first` has each member on the node of the member
 * before it in the group starting at first − 1 (no member starts a node). Then the
 * two touch the same nodes with the same members on each, and everything a group's
 * figures read (its domains, its rail, each node's members, crossing count and
 * intra figure) is the same: the same figures, bit for bit, which the min and max
 * over the dimension's groups already hold. gpn: block_node_gpus; with a stride
 * it divides, every member sits at the same offset in its node, one test for all.
 */
static bool same_nodes_as_previous(const tsl_cluster_t *c, const dim_shape_t *d, uint32_t gpn,
                                   uint64_t first)
{
    if (gpn != 0 && d->stride % gpn == 0)
        return c->node_first[c->device_node[first]] != first;
    for (uint32_t k = 0; k < d->count; k++) {
        uint64_t dev = first + (uint64_t)k * d->stride;
        if (c->node_first[c->device_node[dev]] == dev)
            return false;
    }
    return true;
}

/* The dimension's groups of `count` at `stride` in the block as *d; false where they
 * do not tile it or the block runs past the cluster. */
static bool dim_tiles(const tsl_cluster_t *c, uint32_t block_first, uint32_t block_size,
                      uint32_t stride, uint32_t count, dim_shape_t *d)
{
    *d = (dim_shape_t){block_first, block_size, stride, count, (uint64_t)stride * count, NULL};
    return stride != 0 && block_size % d->span == 0 &&
           (uint64_t)block_first + block_size <= c->n_devices;
}

/* fast: walk one tile where the block repeats it (spans_to_walk) and keep the
 * nodes' crossing counts (cross_memo_t); else every group, every count walked
 * (tsl_cluster_dim_walk_plain: what tests hold the fast walk to). */
static double dim_walk(const tsl_cluster_t *c, uint32_t block_first, uint32_t block_size,
                       uint32_t stride, uint32_t count, bool a2a, bool fast, tsl_coll_lat_t *lat)
{
    if (lat != NULL)
        memset(lat, 0, sizeof(*lat));
    if (count <= 1)
        return INFINITY;
    dim_shape_t d;
    if (!dim_tiles(c, block_first, block_size, stride, count, &d))
        return 0;
    cross_memo_t memo;
    if (fast) {
        cross_memo_init(&memo);
        d.memo = &memo;
    }
    double bw = INFINITY, tree = INFINITY, t;
    uint32_t widest = 1, domains, gpn = fast ? block_node_gpus(c, &d) : 0;
    uint64_t spans = fast ? spans_to_walk(c, &d) : block_size / d.span;
    for (uint64_t q = 0; q < spans; q++)
        for (uint32_t r = 0; r < stride; r++) {
            uint64_t first = group_first(&d, q, r);
            if (fast && r > 0 && same_nodes_as_previous(c, &d, gpn, first))
                continue; /* the previous group's figures: already in bw, widest */
            bw = fmin(bw, group_busbw(c, &d, first, a2a, &domains, &t));
            tree = fmin(tree, t);
            widest = domains > widest ? domains : widest;
        }
    if (lat != NULL) {
        tsl_cluster_coll_lat(count, widest, lat);
        if (widest == 2 && !a2a && bw > 0 && isfinite(tree) && tree > bw)
            lat->tree_gain = tree / bw;
        if (widest == 1) /* inside one NVLink domain: its part's measured curve, if any */
            lat->ar_curve = tsl_gpu_ar_curve(tsl_cluster_device_gpu(c, block_first));
    }
    return bw;
}

double tsl_cluster_dim_busbw(const tsl_cluster_t *c, uint32_t block_first, uint32_t block_size,
                             uint32_t stride, uint32_t count, tsl_coll_lat_t *lat)
{
    return dim_walk(c, block_first, block_size, stride, count, false, true, lat);
}

double tsl_cluster_dim_a2a_busbw(const tsl_cluster_t *c, uint32_t block_first, uint32_t block_size,
                                 uint32_t stride, uint32_t count, tsl_coll_lat_t *lat)
{
    return dim_walk(c, block_first, block_size, stride, count, true, true, lat);
}

double tsl_cluster_dim_walk_plain(const tsl_cluster_t *c, uint32_t block_first, uint32_t block_size,
                                  uint32_t stride, uint32_t count, bool a2a, tsl_coll_lat_t *lat)
{
    return dim_walk(c, block_first, block_size, stride, count, a2a, false, lat);
}

/* fast as dim_walk's. */
static void flex_walk(const tsl_cluster_t *c, uint32_t block_first, uint32_t block_size,
                      uint32_t stride, uint32_t count, tsl_cluster_hit_fn hit, const void *ctx,
                      bool fast, tsl_cluster_flex_bw_t *out)
{
    *out = (tsl_cluster_flex_bw_t){INFINITY, 0.0, count > 1 ? 1 : 0};
    if (count <= 1)
        return;
    dim_shape_t d;
    if (!dim_tiles(c, block_first, block_size, stride, count, &d)) {
        out->nvl_bw = 0;
        return;
    }
    cross_memo_t memo;
    if (fast) {
        cross_memo_init(&memo);
        d.memo = &memo;
    }
    uint32_t gpn = fast ? block_node_gpus(c, &d) : 0;
    uint64_t spans = fast ? spans_to_walk(c, &d) : block_size / d.span;
    for (uint64_t q = 0; q < spans; q++)
        for (uint32_t r = 0; r < stride; r++) {
            uint64_t first = group_first(&d, q, r);
            if (fast && r > 0 && same_nodes_as_previous(c, &d, gpn, first))
                continue; /* the previous group's figures: already in *out */
            group_flex(c, &d, first, hit, ctx, out);
        }
}

void tsl_cluster_dim_flex_bw(const tsl_cluster_t *c, uint32_t block_first, uint32_t block_size,
                             uint32_t stride, uint32_t count, tsl_cluster_hit_fn hit,
                             const void *ctx, tsl_cluster_flex_bw_t *out)
{
    flex_walk(c, block_first, block_size, stride, count, hit, ctx, true, out);
}

void tsl_cluster_dim_flex_plain(const tsl_cluster_t *c, uint32_t block_first, uint32_t block_size,
                                uint32_t stride, uint32_t count, tsl_cluster_hit_fn hit,
                                const void *ctx, tsl_cluster_flex_bw_t *out)
{
    flex_walk(c, block_first, block_size, stride, count, hit, ctx, false, out);
}

/* ---- a pipeline boundary's concurrent sends ---- */

/* Sends k in [k_lo, k_hi) whose two ends lie in different domains. */
static uint32_t crossing_sends(const tsl_cluster_t *c, uint32_t from_first, uint32_t to_first,
                               uint32_t k_lo, uint32_t k_hi)
{
    uint32_t n = 0;
    for (uint32_t k = k_lo; k < k_hi;) {
        uint32_t a = c->device_node[from_first + k], b = c->device_node[to_first + k];
        /* both ends stay on their nodes until either node ends */
        uint32_t end_a = c->node_first[a] + c->nodes[a].n_gpus - from_first;
        uint32_t end_b = c->node_first[b] + c->nodes[b].n_gpus - to_first;
        uint32_t end = end_a < end_b ? end_a : end_b;
        end = end < k_hi ? end : k_hi;
        if (tsl_cluster_node_domain(c, a) != tsl_cluster_node_domain(c, b))
            n += end - k;
        k = end;
    }
    return n;
}

/* Range of send indices whose device at `first + k` lies on node x, clipped to
 * [0, count). */
static void sends_on_node(const tsl_cluster_t *c, uint32_t first, uint32_t count, uint32_t x,
                          uint32_t *k_lo, uint32_t *k_hi)
{
    uint32_t lo = c->node_first[x], hi = lo + c->nodes[x].n_gpus;
    *k_lo = lo > first ? lo - first : 0;
    *k_hi = hi - first < count ? hi - first : count;
}

double tsl_cluster_pairs_bw(const tsl_cluster_t *c, uint32_t from_first, uint32_t to_first,
                            uint32_t count)
{
    double bw = INFINITY;
    for (uint32_t k = 0; k < count;) {
        uint32_t a = c->device_node[from_first + k], b = c->device_node[to_first + k];
        uint32_t a_lo, a_hi, b_lo, b_hi;
        sends_on_node(c, from_first, count, a, &a_lo, &a_hi);
        sends_on_node(c, to_first, count, b, &b_lo, &b_hi);
        uint32_t end = a_hi < b_hi ? a_hi : b_hi;
        if (tsl_cluster_node_domain(c, a) == tsl_cluster_node_domain(c, b)) {
            /* inside a domain every pair has its own NVLink path */
            for (uint32_t j = k; j < end; j++)
                bw = tsl_min(bw, tsl_cluster_link_bw(c, from_first + j, to_first + j));
        } else {
            double out = crossing_sends(c, from_first, to_first, a_lo, a_hi);
            double in = crossing_sends(c, from_first, to_first, b_lo, b_hi);
            double share = tsl_min(1.0, tsl_min(c->nodes[a].n_nics / out, c->nodes[b].n_nics / in));
            bw = tsl_min(bw, rail_bw(c, a, b) * share);
        }
        k = end;
    }
    return bw;
}
