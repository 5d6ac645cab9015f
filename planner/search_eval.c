/*
 * search_eval.c — costing one (batch, PP degree, micro-batch count)
 * configuration: the per-stage layer DP (Galvatron_Search of Algorithm 1) and the
 * pipeline figures of Eq. 9.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "autopipe.h"
#include "lane_hash.h"
#include "minmax.h" /* the floors' times: finite non-negative figures or +INFINITY */
#include "offload.h"
#include "partition.h"
#include "pipeline.h"
#include "pipesim.h"
#include "search_internal.h"
#include "sim_memo.h"
#include "target.h"

/* A feasible strategy of a zero-bubble floor's run (zb_run_t): its a_ij and each
 * sum's x_ij (zb_x), made once per stage (zb_terms, into tsl_engine_t.zb_term), for
 * no λ changes them: zb_least_sum's dozens of λ read them instead of making them
 * again from the row — the same operations on the same figures, so the same floors
 * to the bit. */
typedef struct zb_term {
    double a, x[3];
} zb_term_t;

static bool same_shape(const tsl_layer_t *a, const tsl_layer_t *b)
{
    uint64_t ka[TSL_LAYER_KEY_LEN], kb[TSL_LAYER_KEY_LEN];
    uint32_t n = tsl_layer_key(a, ka);
    return tsl_layer_key(b, kb) == n && memcmp(ka, kb, n * sizeof(uint64_t)) == 0 &&
           a->fwd_flops == b->fwd_flops && a->extra_fwd_flops == b->extra_fwd_flops;
}

/* Layers with identical shapes cost the same: cost them once per stage. */
static uint32_t classify_layers(const tsl_model_t *m, uint32_t *cls)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < m->n_layers; i++) {
        cls[i] = n;
        for (uint32_t j = 0; j < i; j++) {
            if (cls[j] < n && same_shape(&m->layers[i], &m->layers[j])) {
                cls[i] = cls[j];
                break;
            }
        }
        if (cls[i] == n)
            n++;
    }
    return n;
}

/* Distinct values of layout[0..n): the layouts a group's strategies use. */
static uint32_t count_layouts(const uint32_t *layout, uint32_t n)
{
    uint32_t k = 0;
    for (uint32_t j = 0; j < n; j++) {
        uint32_t q = 0;
        while (q < j && layout[q] != layout[j])
            q++;
        k += q == j;
    }
    return k;
}

static bool space_keeps(const tsl_space_t *sp, const tsl_strategy_t *s)
{
    return !sp->only_one_strategy || tsl_strategy_equal(s, &sp->only);
}

static int enumerate_group(tsl_engine_t *e, uint32_t G, tsl_err_t *err)
{
    tsl_group_strategies_t *g = &e->groups[e->n_groups];
    g->group_size = G;
    g->items = calloc(TSL_STRATEGY_MAX, sizeof(*g->items));
    g->layout = calloc(TSL_STRATEGY_MAX, sizeof(*g->layout));
    e->n_groups++;
    if (g->items == NULL || g->layout == NULL)
        return tsl_err_setc(err, TSL_E_NOMEM, "search: out of memory enumerating strategies");
    int n = tsl_strategy_enumerate(G, &e->space->opts, g->items, g->layout, TSL_STRATEGY_MAX, err);
    if (n < 0)
        return -1;
    uint32_t kept = 0;
    for (int i = 0; i < n; i++) {
        if (!space_keeps(e->space, &g->items[i]))
            continue;
        g->items[kept] = g->items[i];
        g->layout[kept] = g->layout[i];
        kept++;
    }
    g->n = kept;
    if (kept > e->max_strategies)
        e->max_strategies = kept;
    uint32_t nl = count_layouts(g->layout, kept);
    if (nl > e->max_layouts)
        e->max_layouts = nl;
    return 0;
}

/* ---- the layer costs kept across configurations ---- */

/* What a row of S layer costs depends on besides the engine's fixed inputs (model,
 * cluster, request): the group (its index in groups[]), the stage block (its
 * twin's: equal links, and on a cluster of alike nodes equal devices), the
 * micro-batch size, whether a tied head there keeps a copy of the embedding
 * (tsl_cost_env_t.tied_copy), the layer class, and what the env prices it under
 * (knobs: a fingerprint of every cost knob, the mode and the host floor,
 * env_fingerprint): CP and its comm, EP, expert TP, the precision run (FP8 recipe,
 * FP8 experts, dispatch and gathers), the routing, the recompute modules, ... An
 * engine's knobs stay put through a run (tsl_engine_rerun starts the memo afresh),
 * so the knobs only guard: a row made under other knobs is never read. The
 * schedule, interleave and vp_group do not enter a layer's cost: they weigh its
 * stash by the micro-batches held (fill_stage_rows, chunk_held) after the memo. */
typedef struct memo_key {
    uint64_t knobs;
    uint32_t group, stage, mb, cls;
    bool tied;
} memo_key_t;

typedef struct memo_slot {
    memo_key_t key;
    tsl_layer_cost_t *row; /* in one of the chunks; NULL: empty */
} memo_slot_t;

/* Cells per chunk of rows (about 2 MB), or a stage's cells where more. */
#define MEMO_CHUNK_CELLS 16384u

/* The rows live in chunks that never move (a row is read where it was made): the
 * memo grows a chunk at a time, without a reallocation's copy beside the old
 * cells at its peak. */
struct tsl_cost_memo {
    tsl_cost_knobs_t knobs; /* the bytes of the knobs its rows were made under */
    memo_slot_t *slot;      /* open addressing, n_slots a power of two */
    size_t n_slots, n_rows;
    tsl_layer_cost_t **chunk; /* [n_chunks] */
    size_t *chunk_cap;        /* [n_chunks]: cells of each */
    size_t n_chunks, cur;     /* rows go into chunk cur ... */
    size_t used;              /* ... after its first `used` cells */
    size_t n_cells;           /* cells handed out since the memo started afresh */
};

static void memo_free(struct tsl_cost_memo *m)
{
    if (m == NULL)
        return;
    free(m->slot);
    for (size_t i = 0; i < m->n_chunks; i++)
        free(m->chunk[i]);
    free(m->chunk);
    free(m->chunk_cap);
    free(m);
}

/* m's rows forgotten, its chunks and slots kept to be written again: as a memo started
 * afresh (memo_reserve), whatever knobs come next. */
static void memo_forget(struct tsl_cost_memo *m)
{
    m->n_cells = m->n_rows = 0;
    m->cur = m->used = 0;
    for (size_t i = 0; i < m->n_slots; i++)
        m->slot[i].row = NULL;
}

static void memo_free_spare(void *m)
{
    memo_free(m);
}

/* e is done with its memo: left, its rows forgotten, in the search's walk table
 * (e->spares) where none is left there yet (cost.h tsl_cost_walks_t.spare_memo: the
 * next engine writes its rows into the same pages), else freed. */
static void memo_leave(tsl_engine_t *e)
{
    struct tsl_cost_memo *m = e->memo;
    e->memo = NULL;
    if (m == NULL)
        return;
    tsl_cost_walks_t *w = e->spares;
    if (w == NULL || w->spare_memo != NULL) {
        memo_free(m);
        return;
    }
    memo_forget(m);
    w->spare_memo = m;
    w->spare_free = memo_free_spare;
}

/* e's memo: its own, the one another engine left in the search's walk table
 * (memo_leave), or a new empty one; NULL out of memory. */
static struct tsl_cost_memo *memo_take(tsl_engine_t *e)
{
    if (e->memo != NULL)
        return e->memo;
    tsl_cost_walks_t *w = e->spares;
    if (w != NULL && w->spare_memo != NULL) {
        e->memo = w->spare_memo;
        w->spare_memo = NULL;
        return e->memo;
    }
    return e->memo = calloc(1, sizeof(*e->memo));
}

/* e's event-simulator workspace grown to bytes: first the one an engine before left
 * in the search's walk table (sim_leave), then realloc, whose mremap keeps the pages
 * already touched where free and malloc faulted them all in again (the workspace
 * grows with m·P as the sweep doubles the batch). Scratch: nothing in it is read
 * before the simulator writes it, so whose pages they were changes no figure. */
static int sim_grow(tsl_engine_t *e, size_t bytes)
{
    tsl_cost_walks_t *w = e->spares;
    if (e->sim_ws == NULL && w != NULL && w->spare_sim != NULL) {
        e->sim_ws = w->spare_sim;
        e->sim_ws_bytes = w->spare_sim_bytes;
        w->spare_sim = NULL;
        w->spare_sim_bytes = 0;
        if (bytes <= e->sim_ws_bytes)
            return 0;
    }
    void *ws = realloc(e->sim_ws, bytes);
    if (ws == NULL)
        return -1;
    e->sim_ws = ws;
    e->sim_ws_bytes = bytes;
    return 0;
}

/* e is done with its simulator's workspace: left in the search's walk table where
 * that holds none as large (the larger kept), else freed. */
static void sim_leave(tsl_engine_t *e)
{
    tsl_cost_walks_t *w = e->spares;
    if (w != NULL && e->sim_ws != NULL && e->sim_ws_bytes > w->spare_sim_bytes) {
        free(w->spare_sim);
        w->spare_sim = e->sim_ws;
        w->spare_sim_bytes = e->sim_ws_bytes;
    } else {
        free(e->sim_ws);
    }
    e->sim_ws = NULL;
    e->sim_ws_bytes = 0;
}

static void dp_ws_free_spare(void *ws)
{
    tsl_layerdp_ws_free(ws);
}

/* e is done with its layer-DP workspace: left in the search's walk table where that
 * holds none, else freed. */
static void dp_ws_leave(tsl_engine_t *e)
{
    tsl_cost_walks_t *w = e->spares;
    if (w != NULL && e->ws != NULL && w->spare_dp == NULL) {
        w->spare_dp = e->ws;
        w->spare_dp_free = dp_ws_free_spare;
    } else {
        tsl_layerdp_ws_free(e->ws);
    }
    e->ws = NULL;
}

/* A row of n cells, from the chunk that memo_room readied. */
static tsl_layer_cost_t *memo_row(struct tsl_cost_memo *m, uint32_t n)
{
    tsl_layer_cost_t *row = m->chunk[m->cur] + m->used;
    m->used += n;
    m->n_cells += n;
    m->n_rows++;
    return row;
}

/* A chunk with room for `cells` more cells in one run: the current one, the next
 * one kept from before the memo started afresh, or a new one. */
static bool memo_room(struct tsl_cost_memo *m, size_t cells)
{
    if (m->n_chunks > 0 && m->used + cells <= m->chunk_cap[m->cur])
        return true;
    size_t next = m->n_chunks > 0 && m->used > 0 ? m->cur + 1 : m->cur;
    if (next < m->n_chunks && m->chunk_cap[next] >= cells) {
        m->cur = next;
        m->used = 0;
        return true;
    }
    if (next == m->n_chunks) {
        tsl_layer_cost_t **c = realloc(m->chunk, (next + 1) * sizeof(*c));
        if (c != NULL)
            m->chunk = c;
        size_t *cap = c != NULL ? realloc(m->chunk_cap, (next + 1) * sizeof(*cap)) : NULL;
        if (cap == NULL)
            return false;
        m->chunk_cap = cap;
        m->chunk[next] = NULL;
        m->chunk_cap[next] = 0;
        m->n_chunks++;
    }
    size_t want = cells > MEMO_CHUNK_CELLS ? cells : MEMO_CHUNK_CELLS;
    free(m->chunk[next]); /* a kept chunk too small for the stage: no row is read there */
    m->chunk_cap[next] = 0;
    if ((m->chunk[next] = malloc(want * sizeof(**m->chunk))) == NULL)
        return false;
    m->chunk_cap[next] = want;
    m->cur = next;
    m->used = 0;
    return true;
}

static size_t memo_hash(const memo_key_t *k)
{
    uint64_t h = ((uint64_t)k->group << 32 | k->stage) * 0x9e3779b97f4a7c15ull;
    h ^= ((uint64_t)k->mb << 32 | (uint64_t)k->cls << 1 | k->tied) * 0xc2b2ae3d27d4eb4full;
    h ^= k->knobs;
    return (size_t)(h ^ h >> 29);
}

static bool memo_key_eq(const memo_key_t *a, const memo_key_t *b)
{
    return a->knobs == b->knobs && a->group == b->group && a->stage == b->stage && a->mb == b->mb &&
           a->cls == b->cls && a->tied == b->tied;
}

/* The slot of key k: its row, or the empty slot where it goes. */
static memo_slot_t *memo_slot(struct tsl_cost_memo *m, const memo_key_t *k)
{
    size_t i = memo_hash(k) & (m->n_slots - 1);
    while (m->slot[i].row != NULL && !memo_key_eq(&m->slot[i].key, k))
        i = (i + 1) & (m->n_slots - 1);
    return &m->slot[i];
}

static bool memo_slots_alloc(struct tsl_cost_memo *m, size_t n)
{
    memo_slot_t *old = m->slot;
    size_t n_old = m->n_slots;
    m->slot = malloc(n * sizeof(*m->slot));
    if (m->slot == NULL) {
        m->slot = old;
        return false;
    }
    m->n_slots = n;
    for (size_t i = 0; i < n; i++)
        m->slot[i].row = NULL;
    for (size_t i = 0; old != NULL && i < n_old; i++)
        if (old[i].row != NULL)
            *memo_slot(m, &old[i].key) = old[i];
    free(old);
    return true;
}

/* Room for `rows` more rows of `cells` costs in all, made before a stage is
 * costed (rows handed out stay where they are): the cells grow a chunk at a time
 * up to TSL_SEARCH_COST_MEMO_BYTES, beyond which the memo starts afresh.
 * false (out of memory): the stage costs into class_cost as without a memo. */
static bool memo_reserve(tsl_engine_t *e, const tsl_cost_env_t *env, size_t rows, size_t cells)
{
    struct tsl_cost_memo *m = memo_take(e);
    if (m == NULL)
        return false;
    const size_t cap = TSL_SEARCH_COST_MEMO_BYTES / sizeof(tsl_layer_cost_t);
    /* a guard beside the key's fingerprint: knobs that differ in any byte (a knob
     * env_fingerprint does not name) start it afresh; an engine's stay put */
    bool other = memcmp(&m->knobs, &env->knobs, sizeof(m->knobs)) != 0;
    if (other)
        memcpy(&m->knobs, &env->knobs, sizeof(m->knobs));
    if (m->n_cells + cells > cap || m->slot == NULL || other) { /* afresh */
        m->n_cells = m->n_rows = 0;
        m->cur = m->used = 0; /* the chunks kept, to be written again */
        if (!memo_slots_alloc(m, m->n_slots ? m->n_slots : 1024))
            return false;
        for (size_t i = 0; i < m->n_slots; i++)
            m->slot[i].row = NULL;
    }
    if (!memo_room(m, cells))
        return false;
    while (2 * (m->n_rows + rows) > m->n_slots)
        if (!memo_slots_alloc(m, 2 * m->n_slots))
            return false;
    return true;
}

/* ---- the layer DP's answers kept across configurations ---- */

typedef struct dp_memo_slot {
    uint64_t h[2];
    size_t off; /* of its choices in choice[]; SIZE_MAX: empty */
    tsl_layerdp_result_t res;
} dp_memo_slot_t;

struct tsl_dp_memo {
    dp_memo_slot_t *slot; /* open addressing, n_slots a power of two */
    size_t n_slots, n_used;
    uint32_t *choice; /* each answer's strategies, n_layers of them */
    size_t n_choice, cap_choice;
};

static void dp_memo_free(struct tsl_dp_memo *m)
{
    if (m == NULL)
        return;
    free(m->slot);
    free(m->choice);
    free(m);
}

/* The memo key's knobs (memo_key_t): every field of env->knobs, the mode, the
 * host floor and whether sdp_nosync or torch's held logits (step_bytes) hold on the
 * block (env->pipelined: rows of a pipeline of one and of several share the memo
 * otherwise), one at a time (not the struct's
 * bytes, whose padding a copy need not keep). A knob added to tsl_cost_knobs_t
 * enters here; until it does, memo_reserve's guard (the knobs' bytes) starts the memo
 * afresh wherever they differ. */

static uint64_t env_fingerprint(const tsl_cost_env_t *env)
{
    const tsl_cost_knobs_t *k = &env->knobs;
    uint64_t f64[4], h = 0x6b6e6f62735f6670ull;
    memcpy(&f64[0], &k->moe_imbalance, sizeof(double));
    memcpy(&f64[1], &k->moe_capacity, sizeof(double));
    memcpy(&f64[2], &env->host_op_s, sizeof(double));
    memcpy(&f64[3], &env->host_scale, sizeof(double));
    const uint64_t w[] = {
        (uint64_t)k->grad_reduce_bytes << 32 | (uint64_t)k->no_fp32_master << 0 |
            (uint64_t)k->grad_reduce_exposed << 1 | (uint64_t)k->overlap_param_gather << 2 |
            (uint64_t)k->fp8_param_gather << 3 | (uint64_t)k->moe_bf16_experts << 4 |
            (uint64_t)k->moe_fp8_dispatch << 5 | (uint64_t)k->moe_pad << 6 |
            (uint64_t)k->overlap_tp_dgrad << 7 | (uint64_t)k->fb_serial << 8 |
            (uint64_t)k->bf16_moments << 9 | (uint64_t)k->autocast << 10 |
            (uint64_t)k->unfused_grad_accum << 11 | (uint64_t)k->legacy_p2p << 12 |
            (uint64_t)k->double_block_fwd << 13 | (uint64_t)k->eager << 14 |
            (uint64_t)k->tp_comm_overlap << 15 | (uint64_t)k->lazy_grads << 16 |
            (uint64_t)k->moe_alltoall << 18 | (uint64_t)k->tp_sync << 19 |
            (uint64_t)k->ds_pipe_p2p << 20 | (uint64_t)k->moe_flex << 21 |
            (uint64_t)k->moe_a2a_overlap << 22 | (uint64_t)env->mode << 17 |
            (uint64_t)k->grad_buf_bytes << 40 | (uint64_t)k->ds_grad_bucket << 23 |
            (uint64_t)k->ds_bf16_optimizer << 24 | (uint64_t)k->fp32 << 25 |
            (uint64_t)k->sdp_nosync << 26 | (uint64_t)k->attn_kernel << 48 |
            (uint64_t)(k->sdp_nosync && env->pipelined) << 27 | (uint64_t)k->tf32_off << 28 |
            (uint64_t)k->tp_whole_heads << 29 |
            (uint64_t)(tsl_loss_pp_holds_logits(k->loss_impl) && env->pipelined) << 30,
        (uint64_t)k->cp << 32 | k->cp_comm,
        (uint64_t)k->fp8 << 32 | k->recompute_modules,
        (uint64_t)k->ep << 32 | k->etp,
        (uint64_t)k->fp8_impl << 32 | k->cpu_offload_layers,
        (uint64_t)k->loss_impl,
        k->opt_step,
        (uint64_t)k->launch_blocking,
        (uint64_t)k->ds_wall_clock | (uint64_t)k->unfused_elementwise << 1 |
            (uint64_t)k->ds_zero3_v03 << 2 | (uint64_t)k->ds_pipe_engine << 3 |
            (uint64_t)k->norm_impl << 8 | (uint64_t)k->fp8_amax_tp_only << 16 |
            (uint64_t)k->fp8_dpa << 17 | (uint64_t)k->moe_a2a_wgrad_inline << 18,
        (uint64_t)k->async_tp,
        (uint64_t)k->sdp_layer_roots | (uint64_t)k->sdp_keep_weights << 1,
        (uint64_t)k->moe_unfused_permute | (uint64_t)k->moe_fused_mlp << 1 |
            (uint64_t)k->moe_flex_backend << 2 | (uint64_t)k->cuda_graph_modules << 8 |
            (uint64_t)k->module_prec << 16 | (uint64_t)k->moe_fused_srelu << 56,
        (uint64_t)k->fp16,
        (uint64_t)k->stack_unfused_attn,
        (uint64_t)k->ds_bf16_zero0 << 1 | (uint64_t)(k->ds_bf16_zero0 && env->pipelined),
        (uint64_t)k->megatron_fsdp,
        f64[0],
        f64[1],
        f64[2],
        f64[3]};
    for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++)
        h = tsl_lane_mix64(h ^ tsl_lane_mix64(w[i] + i));
    return h;
}

/* Everything tsl_layerdp_solve reads of p (the layout form the engine gives it),
 * fingerprinted (lane_hash.h): the rows of figures as given, with row_at. Two problems
 * alike but for how their rows are shared fingerprint apart: the memo misses and the
 * solve gives the same answer. */
static void dp_fingerprint(const tsl_layerdp_problem_t *p, uint64_t h[2])
{
    const uint32_t rows = p->row_at != NULL ? p->n_rows : p->n_layers;
    const size_t LS = (size_t)rows * p->n_strategies;
    const size_t LK = (size_t)p->n_trans * p->n_layouts * p->n_layouts;
    const uint64_t dims[7] = {p->n_layers,     p->n_strategies, p->n_layouts, p->budget_bytes,
                              p->bucket_bytes, p->n_trans,      rows};
    tsl_lane_hash_t f;
    tsl_lane_hash_init(&f);
    tsl_lane_hash_bytes(&f, dims, sizeof dims);
    if (p->row_at != NULL)
        tsl_lane_hash_bytes(&f, p->row_at, p->n_layers * sizeof(*p->row_at));
    tsl_lane_hash_bytes(&f, p->time_s, LS * sizeof(*p->time_s));
    tsl_lane_hash_bytes(&f, p->fwd_bytes, LS * sizeof(*p->fwd_bytes));
    tsl_lane_hash_bytes(&f, p->bwd_bytes, LS * sizeof(*p->bwd_bytes));
    tsl_lane_hash_bytes(&f, p->ms_bytes, LS * sizeof(*p->ms_bytes));
    tsl_lane_hash_bytes(&f, p->layout, p->n_strategies * sizeof(*p->layout));
    tsl_lane_hash_bytes(&f, p->trans_at, p->n_layers * sizeof(*p->trans_at));
    tsl_lane_hash_bytes(&f, p->trans_pair_s, LK * sizeof(*p->trans_pair_s));
    tsl_lane_hash_final(&f, h);
}

static dp_memo_slot_t *dp_memo_slot(struct tsl_dp_memo *m, const uint64_t h[2])
{
    size_t i = (size_t)h[0] & (m->n_slots - 1);
    while (m->slot[i].off != SIZE_MAX && (m->slot[i].h[0] != h[0] || m->slot[i].h[1] != h[1]))
        i = (i + 1) & (m->n_slots - 1);
    return &m->slot[i];
}

static bool dp_memo_slots(struct tsl_dp_memo *m, size_t n)
{
    dp_memo_slot_t *old = m->slot;
    size_t n_old = m->n_slots;
    if ((m->slot = malloc(n * sizeof(*m->slot))) == NULL) {
        m->slot = old;
        return false;
    }
    m->n_slots = n;
    for (size_t i = 0; i < n; i++)
        m->slot[i].off = SIZE_MAX;
    for (size_t i = 0; old != NULL && i < n_old; i++)
        if (old[i].off != SIZE_MAX)
            *dp_memo_slot(m, old[i].h) = old[i];
    free(old);
    return true;
}

/* Keeps p's answer (res, and choice when one fits) under fingerprint h; nothing
 * when out of memory. Past TSL_SEARCH_DP_MEMO_BYTES the memo starts afresh. */
static void dp_memo_add(tsl_engine_t *e, const uint64_t h[2], uint32_t L,
                        const tsl_layerdp_result_t *res, const uint32_t *choice)
{
    struct tsl_dp_memo *m = e->dp_memo;
    if (m == NULL && (m = e->dp_memo = calloc(1, sizeof(*m))) == NULL)
        return;
    if ((m->n_choice + L) * sizeof(uint32_t) + m->n_slots * sizeof(*m->slot) >
        TSL_SEARCH_DP_MEMO_BYTES) { /* afresh */
        m->n_used = m->n_choice = 0;
        for (size_t i = 0; i < m->n_slots; i++)
            m->slot[i].off = SIZE_MAX;
    }
    if (2 * (m->n_used + 1) > m->n_slots && !dp_memo_slots(m, m->n_slots ? 2 * m->n_slots : 1024))
        return;
    if (m->n_choice + L > m->cap_choice) {
        size_t want = m->cap_choice ? 2 * m->cap_choice : 4096;
        while (want < m->n_choice + L)
            want *= 2;
        uint32_t *c = realloc(m->choice, want * sizeof(*c));
        if (c == NULL)
            return;
        m->choice = c;
        m->cap_choice = want;
    }
    dp_memo_slot_t *slot = dp_memo_slot(m, h);
    slot->h[0] = h[0];
    slot->h[1] = h[1];
    slot->off = m->n_choice;
    slot->res = *res;
    if (isfinite(res->time_s))
        memcpy(m->choice + m->n_choice, choice, L * sizeof(*choice));
    m->n_choice += L;
    m->n_used++;
}

/* The workspace p is solved in: the lent one where it holds p, else e's own (made
 * when first needed); NULL when out of memory. */
static tsl_layerdp_ws_t *dp_ws(tsl_engine_t *e, const tsl_layerdp_problem_t *p)
{
    if (tsl_layerdp_ws_holds(e->ws_lent, p->n_layers, p->n_strategies,
                             tsl_layerdp_buckets(p->budget_bytes, p->bucket_bytes)))
        return e->ws_lent;
    return tsl_engine_ws(e) == 0 ? e->ws : NULL;
}

/* tsl_layerdp_solve into e->choice, or its answer to the same problem met before:
 * the same res and choice (and so the same statistics). */
static int dp_solve(tsl_engine_t *e, const tsl_layerdp_problem_t *p, tsl_layerdp_result_t *res)
{
    tsl_layerdp_ws_t *ws = dp_ws(e, p);
    if (ws == NULL)
        return -1;
    if (p->trans_full_s != NULL) /* not the engine's form: not fingerprinted */
        return tsl_layerdp_solve(p, ws, e->choice, res, NULL);
    uint64_t h[2];
    dp_fingerprint(p, h);
    struct tsl_dp_memo *m = e->dp_memo;
    const dp_memo_slot_t *hit = m != NULL && m->n_slots ? dp_memo_slot(m, h) : NULL;
    if (hit != NULL && hit->off != SIZE_MAX) {
        *res = hit->res;
        if (isfinite(res->time_s))
            memcpy(e->choice, m->choice + hit->off, p->n_layers * sizeof(*e->choice));
        return 0;
    }
    int rc = tsl_layerdp_solve(p, ws, e->choice, res, NULL);
    if (rc == 0)
        dp_memo_add(e, h, p->n_layers, res, e->choice);
    return rc;
}

/* Each group's layout numbering (made with its first stage's moves) and room for
 * the moves of every stage block of its size. The figures themselves (moves,
 * collective figures, envs, pairs) are read only once their marks say made: left
 * unwritten (malloc), the pages a block never needs are never touched — a
 * 100k-GPU cluster's groups hold tens of MB of them, most never made (and the
 * sub-layer engine's are replaced by the main one's: tsl_engine_borrow_figures). */
static int alloc_layouts(tsl_engine_t *e)
{
    for (uint32_t i = 0; i < e->n_groups; i++) {
        const tsl_group_strategies_t *g = &e->groups[i];
        tsl_group_layouts_t *gl = &e->glay[i];
        size_t stages = e->cluster->n_devices / g->group_size;
        gl->n = count_layouts(g->layout, g->n);
        size_t cells = stages * gl->n * gl->n;
        gl->of = calloc(g->n ? g->n : 1, sizeof(uint32_t));
        gl->rep = calloc(g->n ? g->n : 1, sizeof(uint32_t));
        gl->moves = malloc((cells ? cells : 1) * sizeof(tsl_relayout_t));
        gl->pair_done = calloc(cells ? cells : 1, 1);
        gl->bw = malloc((stages * g->n + 1) * sizeof(*gl->bw));
        gl->bw_done = calloc(stages ? stages : 1, 1);
        gl->env_at = calloc(stages ? stages : 1, sizeof(uint32_t));
        gl->envs = calloc(1, sizeof(*gl->envs));
        gl->pairs_bw = malloc((2 * stages + 1) * sizeof(*gl->pairs_bw));
        gl->pairs_done = calloc(2 * stages + 1, 1);
        if (!gl->of || !gl->rep || !gl->moves || !gl->pair_done || !gl->bw || !gl->bw_done ||
            !gl->env_at || !gl->envs || !gl->pairs_bw || !gl->pairs_done)
            return -1;
    }
    return 0;
}

static int alloc_tables(tsl_engine_t *e, tsl_err_t *err)
{
    size_t L = e->model->n_layers, S = e->max_strategies ? e->max_strategies : 1;
    size_t K = e->max_layouts ? e->max_layouts : 1;
    e->layer_class = calloc(L, sizeof(*e->layer_class));
    if (e->layer_class == NULL)
        return tsl_err_setc(err, TSL_E_NOMEM, "search: out of memory");
    e->n_classes = classify_layers(e->model, e->layer_class);
    e->time_s = calloc(L * S, sizeof(double));
    e->fwd_bytes = calloc(L * S, sizeof(uint64_t));
    e->bwd_bytes = calloc(L * S, sizeof(uint64_t));
    e->ms_bytes = calloc(L * S, sizeof(uint64_t));
    e->trans_s = calloc(L * K * K, sizeof(double));
    e->trans_at = calloc(L, sizeof(uint32_t));
    e->dp_row = calloc(L, sizeof(uint32_t));
    e->class_slot = malloc((e->n_classes ? e->n_classes : 1) * sizeof(uint32_t));
    for (uint32_t c = 0; e->class_slot != NULL && c < e->n_classes; c++)
        e->class_slot[c] = UINT32_MAX;
    e->class_cost = calloc(e->n_classes * S, sizeof(tsl_layer_cost_t));
    e->class_trans = calloc(e->n_classes * K * K, sizeof(tsl_transition_cost_t));
    e->layout_of = calloc(S, sizeof(uint32_t));
    e->layout_rep = calloc(K, sizeof(uint32_t));
    e->moves_tmp = calloc(K * K, sizeof(tsl_relayout_t));
    e->layout_live = calloc(K, 1);
    e->live_at = calloc(K, sizeof(uint32_t));
    e->relayout_scratch = calloc(3 * (size_t)e->cluster->n_devices, sizeof(uint32_t));
    e->glay = calloc(e->n_groups ? e->n_groups : 1, sizeof(*e->glay));
    e->class_done = calloc(e->n_classes, 1);
    e->class_row = calloc(e->n_classes, sizeof(*e->class_row));
    e->bw = calloc(S, sizeof(tsl_strategy_bw_t));
    e->choice = calloc(L, sizeof(uint32_t));
    e->zb_choice = calloc(L, sizeof(uint32_t));
    e->layer_time_s = calloc(L, sizeof(double));
    e->v_layer_s = calloc(2 * L, sizeof(double));
    e->v_class_s = calloc(3 * (size_t)e->n_classes, sizeof(double));
    e->cut_w = calloc(L, sizeof(double));
    e->ep_layers = calloc(L, sizeof(*e->ep_layers));
    e->recut = malloc(sizeof(*e->recut));
    e->tie_choice = calloc(L, sizeof(uint32_t));
    e->tie_rows = calloc(2 * S, sizeof(double));
    e->zb_term = malloc(L * S * sizeof(*e->zb_term));
    e->alt = malloc(sizeof(*e->alt));
    e->cand = malloc(sizeof(*e->cand));
    if (e->space->target && (e->tview = malloc(sizeof(*e->tview))) == NULL)
        return tsl_err_setc(err, TSL_E_NOMEM, "search: out of memory");
    uint32_t buckets = tsl_layerdp_buckets(e->budget_bytes, e->bucket_bytes);
    if (!e->time_s || !e->fwd_bytes || !e->bwd_bytes || !e->ms_bytes || !e->trans_s ||
        !e->trans_at || !e->dp_row || !e->class_slot || !e->class_cost || !e->class_trans ||
        !e->class_done || !e->class_row || !e->bw || !e->choice || !e->zb_choice ||
        !e->layer_time_s || !e->v_layer_s || !e->v_class_s || !e->cut_w || !e->ep_layers ||
        !e->recut || !e->tie_choice || !e->tie_rows || !e->zb_term || !e->alt || !e->cand ||
        !e->layout_of || !e->layout_rep || !e->moves_tmp || !e->layout_live || !e->live_at ||
        !e->relayout_scratch || !e->glay || alloc_layouts(e) != 0)
        return tsl_err_setc(err, TSL_E_NOMEM,
                            "search: out of memory for %zu layers × %zu strategies × %u "
                            "memory buckets",
                            L, S, buckets);
    return 0;
}

static bool pp_allowed(const tsl_engine_t *e, uint32_t P)
{
    const tsl_request_t *r = e->req;
    /* P − 1 cuts at or before max_cut: the MTP layers and the head share a stage */
    if (e->cluster->n_devices % P != 0 || P > e->max_cut + 1 || P > TSL_PLAN_MAX_STAGES)
        return false;
    if (tsl_target_tied_pp_refused(e->space->target, e->model, P)) /* check_torchtitan's */
        return false;
    if (e->space->fixed_pp)
        return P == e->space->fixed_pp;
    if (r->no_pp && P > 1)
        return false;
    if (e->knobs.cpu_offload_layers && P > 1) /* Megatron-LM offloads without PP only */
        return false;
    if (r->pp && P != r->pp)
        return false;
    return r->max_pp == 0 || P <= r->max_pp;
}

/* What every engine holds: its inputs, the memory budget and the DP's granularity. */
static void engine_base(tsl_engine_t *e, const tsl_model_t *m, const tsl_cluster_t *c,
                        const tsl_request_t *r, const tsl_space_t *space)
{
    memset(e, 0, sizeof(*e));
    e->model = m;
    e->max_cut = tsl_partition_max_cut(m);
    e->cluster = c;
    e->req = r;
    e->space = space;
    tsl_request_knobs(r, &e->knobs);
    tsl_knobs_on_cluster(&e->knobs, e->cluster);
    /* recorded on its plans (the model it prices is already unfused: tsl_search) */
    e->knobs.stack_unfused_attn = tsl_target_unfused_attn(r->target, e->cluster);
    e->uniform_ckpt = -1;
    e->uniform_block_n = 0;
    /* the request's budget (search.h tsl_request_device_budget: the device less the
     * reserve by default), the one a searched plan and a given one (eval) are held to */
    e->budget_bytes = tsl_request_device_budget(r, tsl_cluster_max_device_mem(c));
    e->same_mem = tsl_cluster_min_device_mem(c) == tsl_cluster_max_device_mem(c);
    e->vp_group = r->vp_group;
    e->bucket_bytes = r->bucket_bytes ? r->bucket_bytes : TSL_LAYERDP_DEFAULT_BUCKET_BYTES;
}

int tsl_engine_init(tsl_engine_t *e, const tsl_model_t *m, const tsl_cluster_t *c,
                    const tsl_request_t *r, const tsl_search_hooks_t *hooks,
                    const tsl_space_t *space, tsl_err_t *err)
{
    engine_base(e, m, c, r, space);
    if (hooks != NULL && hooks->stack != NULL) /* eval's comparison: the given plan's stack */
        tsl_plan_stack_knobs(hooks->stack, &e->knobs);
    e->hooks = hooks;
    e->uniform_blocks = -1; /* found at first use, by the search's walks (uniform_blocks) */
    /* no P past the model's cuts or the plan's stages is allowed (pp_allowed): the
     * loop stops there, not at a 100k-GPU cluster's 100,000 */
    uint32_t top = c->n_devices;
    top = top < e->max_cut + 1 ? top : e->max_cut + 1;
    top = top < TSL_PLAN_MAX_STAGES ? top : TSL_PLAN_MAX_STAGES;
    for (uint32_t P = 1; P <= top; P++) {
        if (!pp_allowed(e, P))
            continue;
        if (e->n_groups == TSL_SEARCH_MAX_GROUPS)
            break;
        if (enumerate_group(e, c->n_devices / P, err) != 0)
            return -1;
    }
    /* a searching engine's walks kept (NULL: its envs walk every time); a given
     * plan's (tsl_engine_init_given) walks its few blocks once and has none: the
     * table's pages are not worth touching for them */
    e->walks = tsl_cost_walks_new(c);
    return alloc_tables(e, err);
}

static void free_group_layouts(tsl_group_layouts_t *gl)
{
    free(gl->of);
    free(gl->rep);
    free(gl->moves);
    free(gl->pair_done);
    free(gl->bw);
    free(gl->bw_done);
    free(gl->env_at);
    if (gl->envs)
        free(gl->envs->env);
    free(gl->envs);
    free(gl->pairs_bw);
    free(gl->pairs_done);
}

void tsl_engine_free(tsl_engine_t *e)
{
    for (uint32_t i = 0; i < e->n_groups; i++) {
        free(e->groups[i].items);
        free(e->groups[i].layout);
    }
    free(e->layer_class);
    free(e->time_s);
    free(e->fwd_bytes);
    free(e->bwd_bytes);
    free(e->ms_bytes);
    free(e->trans_s);
    free(e->trans_at);
    free(e->dp_row);
    free(e->class_slot);
    free(e->class_cost);
    free(e->class_trans);
    for (uint32_t i = 0; e->glay != NULL && i < e->n_groups; i++)
        if (!e->glay[i].borrowed)
            free_group_layouts(&e->glay[i]);
    free(e->glay);
    if (!e->walks_borrowed)
        tsl_cost_walks_free(e->walks);
    e->walks = NULL;
    free(e->layout_of);
    free(e->layout_rep);
    free(e->moves_tmp);
    free(e->layout_live);
    free(e->live_at);
    free(e->relayout_scratch);
    free(e->class_done);
    free(e->class_row);
    memo_leave(e);
    dp_memo_free(e->dp_memo);
    free(e->bw);
    free(e->choice);
    free(e->zb_choice);
    free(e->layer_time_s);
    free(e->v_layer_s);
    free(e->v_class_s);
    free(e->cut_w);
    free(e->ep_layers);
    free(e->recut);
    free(e->tie_choice);
    free(e->tie_rows);
    free(e->zb_term);
    free(e->alt);
    free(e->cand);
    free(e->sim);
    sim_leave(e);
    tsl_sim_memo_free(e->sim_memo);
    free(e->tview);
    free(e->partition);
    dp_ws_leave(e);
    memset(e, 0, sizeof(*e));
}

void tsl_engine_rerun(tsl_engine_t *e, const tsl_cost_knobs_t *k)
{
    /* the kept collective figures (bw_done) hang on the groups and on how CP's ranks
     * exchange K/V: its a2a bandwidth is priced by the exchange (tsl_cost_strategy_bw_memo) */
    bool groups = k->cp != e->knobs.cp || k->ep != e->knobs.ep || k->etp != e->knobs.etp ||
                  k->cp_comm != e->knobs.cp_comm;
    bool stack_unfused = e->knobs.stack_unfused_attn; /* the target's and cluster's */
    e->knobs = *k;
    e->knobs.stack_unfused_attn |= stack_unfused;
    tsl_knobs_on_cluster(&e->knobs, e->cluster);
    memset(&e->stats, 0, sizeof(e->stats));
    e->saw_divisible = false;
    e->bar_samples_per_s = 0;
    e->need_samples_per_s = 0;
    e->uniform_ckpt = -1;
    e->uniform_block_n = 0;
    /* priced under the other knobs; and the DP's answers, whose rows they priced
     * (the other precision's rows differ: kept, they only held memory) */
    tsl_engine_drop_memos(e);
    for (uint32_t i = 0; e->glay != NULL && i < e->n_groups; i++) {
        uint32_t stages = e->cluster->n_devices / e->groups[i].group_size;
        memset(e->glay[i].env_at, 0, stages * sizeof(uint32_t)); /* the envs carry the knobs */
        e->glay[i].envs->n = 0;
        if (groups)
            memset(e->glay[i].bw_done, 0, stages);
    }
}

/* e's layer-DP workspace: the one an engine before left in the search's walk table
 * (dp_ws_leave) where it holds e's problems, else a new one (the spare freed first:
 * the peak holds one). Which pages it has changes no answer: a solve reads only what
 * it wrote (a lent workspace, ws_lent, is solved in after another engine's solves
 * too; the layout numbering it keeps is compared by content). */
int tsl_engine_ws(tsl_engine_t *e)
{
    uint32_t L = e->model->n_layers, S = e->max_strategies ? e->max_strategies : 1,
             E = tsl_layerdp_buckets(e->budget_bytes, e->bucket_bytes);
    tsl_cost_walks_t *w = e->spares;
    if (e->ws == NULL && w != NULL && w->spare_dp != NULL) {
        if (tsl_layerdp_ws_holds(w->spare_dp, L, S, E))
            e->ws = w->spare_dp;
        else
            tsl_layerdp_ws_free(w->spare_dp);
        w->spare_dp = NULL;
    }
    if (e->ws == NULL)
        e->ws = tsl_layerdp_ws_new(L, S, E);
    return e->ws != NULL ? 0 : -1;
}

void tsl_engine_drop_memos(tsl_engine_t *e)
{
    memo_leave(e);
    dp_memo_free(e->dp_memo);
    e->dp_memo = NULL;
    tsl_sim_memo_free(e->sim_memo);
    e->sim_memo = NULL;
}

void tsl_engine_share_walks(tsl_engine_t *e, tsl_cost_walks_t *w)
{
    if (w != NULL) /* its spare memo whatever cluster (memo_leave) */
        e->spares = w;
    if (w == NULL || w == e->walks || w->cluster != e->cluster)
        return; /* none, already e's, or another cluster's (e keeps its own) */
    if (!e->walks_borrowed)
        tsl_cost_walks_free(e->walks);
    e->walks = w;
    e->walks_borrowed = true;
}

void tsl_engine_borrow_figures(tsl_engine_t *dst, tsl_engine_t *src)
{
    tsl_engine_share_walks(dst, src->walks); /* they read no knobs */
    if (src->spares != NULL)
        dst->spares = src->spares; /* the search's, where src's walks are its own */
    /* the collective figures carry the EP groups' walk where the model has MoE, and
     * their flex figures the routing of its first MoE layer (tsl_cost_flex_route) */
    if (dst->glay == NULL || src->glay == NULL || dst->cluster != src->cluster ||
        dst->req != src->req ||
        !tsl_cost_route_eq(tsl_cost_flex_route(tsl_model_first_moe(dst->model)),
                           tsl_cost_flex_route(tsl_model_first_moe(src->model))) ||
        memcmp(&dst->knobs, &src->knobs, sizeof(dst->knobs)) != 0)
        return;
    for (uint32_t i = 0; i < dst->n_groups; i++) {
        const tsl_group_strategies_t *g = &dst->groups[i];
        for (uint32_t k = 0; k < src->n_groups; k++) {
            const tsl_group_strategies_t *h = &src->groups[k];
            if (h->group_size != g->group_size || h->n != g->n ||
                memcmp(h->items, g->items, g->n * sizeof(*g->items)) != 0 ||
                memcmp(h->layout, g->layout, g->n * sizeof(*g->layout)) != 0)
                continue;
            if (!dst->glay[i].borrowed)
                free_group_layouts(&dst->glay[i]);
            dst->glay[i] = src->glay[k];
            dst->glay[i].borrowed = true;
            break;
        }
    }
}

void tsl_search_add_stats(tsl_search_stats_t *into, const tsl_search_stats_t *s)
{
    into->dp_runs += s->dp_runs;
    into->dp_states += s->dp_states;
    into->configs += s->configs;
    into->batches_tried += s->batches_tried;
    into->zb_resolves += s->zb_resolves;
    into->zb_resolves_skipped += s->zb_resolves_skipped;
    into->tries_skipped += s->tries_skipped;
    into->reruns_skipped += s->reruns_skipped;
}

const tsl_group_strategies_t *tsl_engine_group(const tsl_engine_t *e, uint32_t group_size)
{
    for (uint32_t i = 0; i < e->n_groups; i++)
        if (e->groups[i].group_size == group_size)
            return &e->groups[i];
    return NULL;
}

/* ---- one configuration ---- */

/* g's distinct layout ids numbered 0..K−1 in order of first appearance into
 * of[] (each one's first strategy into rep[]); returns K. O(S·K). */
static uint32_t number_layouts(const tsl_group_strategies_t *g, uint32_t *of, uint32_t *rep)
{
    uint32_t K = 0;
    for (uint32_t j = 0; j < g->n; j++) {
        uint32_t a = 0;
        while (a < K && g->layout[rep[a]] != g->layout[j])
            a++;
        if (a == K)
            rep[K++] = j;
        of[j] = a;
    }
    return K;
}

/* tsl_relayout_plan on the engine's cluster, the block's links floor made once for
 * every pair of layouts moved on it (the engine's cluster does not change). */
static int relayout_plan(tsl_engine_t *e, const tsl_strategy_t *from, const tsl_strategy_t *to,
                         uint32_t first, tsl_relayout_t *out)
{
    const uint32_t G = tsl_strategy_group_size(from);
    if (e->floor_G != G || e->floor_first != first) {
        if (G == 0 || (uint64_t)first + G > e->cluster->n_devices)
            return tsl_relayout_plan(from, to, e->cluster, first, e->relayout_scratch, out, NULL);
        e->floor_bw = tsl_relayout_links_floor(e->cluster, first, G);
        e->floor_first = first;
        e->floor_G = G;
    }
    /* the engine's walks hold its cluster's moves (tsl_engine_share_walks: the search's) */
    tsl_kept_t *kept =
        e->walks != NULL && e->walks->cluster == e->cluster ? &e->walks->moves : NULL;
    return tsl_relayout_plan_kept(kept, from, to, e->cluster, first, e->floor_bw,
                                  e->relayout_scratch, out, NULL);
}

/* The moves between layouts a and b, both ways, on the block at `first`
 * (relayout.h: the executor's Slice-Gather) into moves[K²]: a → b's backward is
 * b → a's forward (tsl_relayout_plan makes both directions of one pair), and a
 * layout to itself moves nothing. O(G). */
static bool make_pair(tsl_engine_t *e, const tsl_group_strategies_t *g, const uint32_t *rep,
                      uint32_t first, uint32_t K, uint32_t a, uint32_t b, tsl_relayout_t *moves)
{
    tsl_relayout_t *ab = &moves[a * K + b];
    if (a == b) {
        tsl_relayout_move_t none = {TSL_RELAYOUT_NONE, 1, 0, INFINITY};
        *ab = (tsl_relayout_t){none, none};
        return true;
    }
    if (relayout_plan(e, &g->items[rep[a]], &g->items[rep[b]], first, ab) != 0)
        return false;
    moves[b * K + a] = (tsl_relayout_t){ab->bwd, ab->fwd};
    return true;
}

/* Every layout of g and every move between them, at once (a group of the
 * caller's: a uniform pass's one or two strategies). O(S·K + K²·G). */
static bool make_layouts(tsl_engine_t *e, const tsl_group_strategies_t *g, uint32_t first,
                         uint32_t *of, tsl_relayout_t *moves, uint32_t *n_layouts)
{
    uint32_t K = number_layouts(g, of, e->layout_rep);
    *n_layouts = K;
    for (uint32_t a = 0; a < K; a++)
        for (uint32_t b = a; b < K; b++)
            if (!make_pair(e, g, e->layout_rep, first, K, a, b, moves))
                return false;
    return true;
}

/* The move between the stage's layouts a and b (both ways), made on first need:
 * copied from the twin block when made there, else made and given to the twin
 * too (equal links, equal moves). */
static bool need_pair(tsl_engine_t *e, uint32_t a, uint32_t b)
{
    const uint32_t K = e->n_layouts;
    const size_t ab = (size_t)a * K + b, ba = (size_t)b * K + a;
    if (e->pair_done == NULL || e->pair_done[ab])
        return true;
    if (e->twin_done != NULL && e->twin_done[ab]) {
        e->moves[ab] = e->twin_moves[ab];
        e->moves[ba] = e->twin_moves[ba];
    } else {
        if (!make_pair(e, e->pair_group, e->pair_rep, e->pair_first, K, a, b, e->moves))
            return false;
        if (e->twin_done != NULL) {
            e->twin_moves[ab] = e->moves[ab];
            e->twin_moves[ba] = e->moves[ba];
            e->twin_done[ab] = e->twin_done[ba] = 1;
        }
    }
    e->pair_done[ab] = e->pair_done[ba] = 1;
    return true;
}

/* Whether every node is alike, of one GPU type, so that blocks placed alike have the
 * same links (e->uniform_blocks): found at the engine's first need, when it keeps the
 * search's walks (tsl_engine_share_walks), which find it once for every engine over
 * the cluster (tsl_cost_walks_nodes_alike). */
static bool uniform_blocks(tsl_engine_t *e)
{
    if (e->uniform_blocks < 0)
        e->uniform_blocks = tsl_cost_walks_nodes_alike(e->walks, e->cluster, true);
    return e->uniform_blocks > 0;
}

/* The earlier stage whose block of G devices has stage s's links (node
 * boundaries and NVLink domains at the same offsets, every node alike), or s
 * itself: blocks inside one node each, or of whole nodes that cut the NVLink
 * domains alike (the last domain may be short: then every block must lie inside
 * one whole domain or be made of whole ones). */
static uint32_t stage_twin(tsl_engine_t *e, uint32_t G, uint32_t s)
{
    const tsl_cluster_t *c = e->cluster;
    if (s == 0 || c->n_nodes == 0 || !uniform_blocks(e))
        return s;
    uint32_t gpn = c->nodes[0].n_gpus, D = c->nvl_domain_nodes > 1 ? c->nvl_domain_nodes : 1;
    if (gpn % G == 0)
        return 0;
    if (G % gpn != 0)
        return s;
    uint32_t nodes = G / gpn;
    if (D == 1 || (c->n_nodes % D == 0 && (nodes % D == 0 || D % nodes == 0)))
        return 0;
    return s;
}

/* g's index in e->groups, or e->n_groups for a group of the caller's. */
static uint32_t group_index(const tsl_engine_t *e, const tsl_group_strategies_t *g)
{
    uint32_t i = 0;
    while (i < e->n_groups && g != &e->groups[i])
        i++;
    return i;
}

/* The layouts and moves of stage s of group g: kept per group of the engine's
 * (made on the first visit of each stage block; the numbering is the same every
 * time), made afresh for a group of the caller's (a uniform pass's one layout). */
static bool stage_layouts(tsl_engine_t *e, const tsl_group_strategies_t *g, uint32_t s)
{
    uint32_t first = s * g->group_size, i = 0;
    while (i < e->n_groups && g != &e->groups[i])
        i++;
    if (i == e->n_groups) {
        e->stage_layout = e->layout_of;
        e->moves = e->moves_tmp;
        e->pair_done = e->twin_done = NULL;
        return make_layouts(e, g, first, e->layout_of, e->moves_tmp, &e->n_layouts);
    }
    tsl_group_layouts_t *gl = &e->glay[i];
    if (!gl->numbered) {
        gl->n = number_layouts(g, gl->of, gl->rep);
        gl->numbered = true;
    }
    const size_t K2 = (size_t)gl->n * gl->n;
    uint32_t t = stage_twin(e, g->group_size, s);
    e->n_layouts = gl->n;
    e->stage_layout = gl->of;
    e->moves = gl->moves + s * K2;
    e->pair_done = gl->pair_done + s * K2;
    e->twin_done = t != s ? gl->pair_done + t * K2 : NULL;
    e->twin_moves = gl->moves + t * K2;
    e->pair_rep = gl->rep;
    e->pair_group = g;
    e->pair_first = first;
    return true;
}

/* The layer costs of the class of `layer`, once per stage (from the memo where
 * `key` is given and it has them); marks in e->layout_live the layouts with a
 * strategy feasible there. */
static void cost_class(tsl_engine_t *e, const tsl_cost_env_t *env, const tsl_group_strategies_t *g,
                       const memo_key_t *key, uint32_t layer, uint32_t Bm)
{
    uint32_t cls = e->layer_class[layer], S = e->max_strategies;
    if (e->class_done[cls])
        return;
    const tsl_layer_t *l = &e->model->layers[layer];
    memo_slot_t *slot = NULL;
    tsl_layer_cost_t *row = &e->class_cost[cls * S];
    if (key != NULL) {
        memo_key_t k = *key;
        k.cls = cls;
        slot = memo_slot(e->memo, &k);
        if (slot->row == NULL) { /* a new row: costed below */
            slot->key = k;
            slot->row = row = memo_row(e->memo, g->n);
        } else {
            row = NULL;
        }
    }
    if (row != NULL)
        for (uint32_t j = 0; j < g->n; j++)
            tsl_cost_layer(env, l, &g->items[j], &e->stage_bw[j], Bm, &row[j]);
    const tsl_layer_cost_t *lc = slot != NULL ? slot->row : row;
    for (uint32_t j = 0; j < g->n; j++)
        if (lc[j].feasible)
            e->layout_live[e->stage_layout[j]] = 1;
    e->class_row[cls] = lc;
    e->class_done[cls] = 1;
}

/* Whether the stage's R prices the move between layouts a and b: both live (a
 * strategy some layer of the stage can take has each), or any pair where the
 * group is the caller's (its moves all made: no marks). Between other layouts no
 * layer moves (their strategies cost +INFINITY), and 0 stands. */
static bool pair_live(const tsl_engine_t *e, uint32_t a, uint32_t b)
{
    return e->pair_done == NULL || (e->layout_live[a] && e->layout_live[b]);
}

/* The stage's layouts that pair_live pairs, ascending, into e->live_at (after
 * every class of the stage had cost_class): a stage of the 100k-GPU rows has
 * Λ 28–46 layouts, of which 2–7 live — about a tenth of the K² pairs, which
 * cost_class_trans and fill_stage_trans walked (and zeroed) in full. */
static void live_layouts(tsl_engine_t *e)
{
    uint32_t n = 0;
    for (uint32_t a = 0; a < e->n_layouts; a++)
        if (e->pair_done == NULL || e->layout_live[a])
            e->live_at[n++] = a;
    e->n_live = n;
}

/* The transition costs R of the class of `layer` (after live_layouts): between two
 * live layouts made, in the order of the K² pairs; the other entries are left as
 * they were (readers take 0 there: pair_live). false when a move cannot be made. */
static bool cost_class_trans(tsl_engine_t *e, const tsl_cost_env_t *env, uint32_t layer,
                             uint32_t Bm)
{
    uint32_t cls = e->layer_class[layer], K = e->n_layouts;
    if (e->class_done[cls] != 1)
        return true;
    const tsl_layer_t *l = &e->model->layers[layer];
    tsl_transition_cost_t *tc = &e->class_trans[(size_t)cls * e->max_layouts * e->max_layouts];
    for (uint32_t x = 0; x < e->n_live; x++)
        for (uint32_t y = 0; y < e->n_live; y++) {
            const uint32_t a = e->live_at[x], b = e->live_at[y];
            const size_t q = (size_t)a * K + b;
            if (!need_pair(e, a, b))
                return false;
            tsl_cost_transition(env, l, &e->moves[q], Bm, &tc[q]);
        }
    e->class_done[cls] = 2;
    return true;
}

/* R of the move from the stage's layout a to b for the class whose matrix is tc:
 * made (cost_class_trans) between live layouts, 0 elsewhere. */
static tsl_transition_cost_t class_move(const tsl_engine_t *e, const tsl_transition_cost_t *tc,
                                        uint32_t a, uint32_t b)
{
    if (!pair_live(e, a, b))
        return (tsl_transition_cost_t){0, 0};
    return tc[(size_t)a * e->n_layouts + b];
}

/* Whether the space lets a layer (a Transformer block when `block`,
 * tsl_model_is_block) take item j: a uniform pass gives the blocks item
 * uniform_ckpt (with uniform_block_n, only the blocks before position N of the
 * stage: pos counts the stage's blocks before this one) and the rest item 0; a
 * stack never recomputes the embedding or the head. */
static bool cell_allowed(const tsl_engine_t *e, const tsl_group_strategies_t *g, bool block,
                         uint32_t pos, uint32_t j)
{
    if (e->knobs.cpu_offload_layers && (g->items[j].ckpt || g->items[j].selective))
        return false; /* Megatron-LM offloads without recompute only */
    if (e->uniform_ckpt >= 0) {
        uint32_t want = block ? (uint32_t)e->uniform_ckpt : 0u;
        if (want && e->uniform_block_n && pos >= e->uniform_block_n)
            want = 0;
        return j == want;
    }
    return !(e->space->ckpt_blocks_only && !block && g->items[j].ckpt);
}

/* The model layer that row i of the stage of layers from `first` prices: first + i,
 * or under a V schedule the rank's own list (e->row_at: stage_rows), its two model
 * parts (rank 0: the first layers, then the model's last). */
static uint32_t row_layer(const tsl_engine_t *e, uint32_t first, uint32_t i)
{
    return e->row_at ? e->row_at[i] : first + i;
}

/* The states a layer's row counts at the stage's peak: all of them, less its
 * gradients where they do not exist yet then (live 0; lazy_grads). */
static uint64_t peak_states(const tsl_layer_cost_t *lc, uint8_t live)
{
    return live ? lc->ms_bytes : lc->ms_bytes - lc->grad_bytes;
}

/* The stage's R for the layer DP (layerdp.h trans_pair_s, trans_at): one Λ × Λ
 * matrix per class of its rows, in the order the rows first meet them, each row
 * naming its class's (e->trans_at, e->n_trans) — the rows of one class have the same
 * R, and a stage of 128 blocks at Λ 70 wrote, fingerprinted and checked 627,000
 * entries of it where a few matrices hold them. Every micro-batch moves: forward and
 * backward parts. */
static void fill_stage_trans(tsl_engine_t *e, uint32_t first, uint32_t n, uint32_t m)
{
    const uint32_t K = e->n_layouts, K2 = K * K;
    uint32_t n_trans = 0;
    for (uint32_t i = 0; i < n; i++) {
        const uint32_t cls = e->layer_class[row_layer(e, first, i)];
        if (e->class_slot[cls] == UINT32_MAX) {
            const tsl_transition_cost_t *tr =
                &e->class_trans[(size_t)cls * e->max_layouts * e->max_layouts];
            double *R = &e->trans_s[(size_t)n_trans * K2];
            memset(R, 0, K2 * sizeof(*R)); /* +0.0: m · (0 + 0) of a pair not live */
            for (uint32_t x = 0; x < e->n_live; x++)
                for (uint32_t y = 0; y < e->n_live; y++) {
                    const uint32_t q = e->live_at[x] * K + e->live_at[y];
                    R[q] = m * (tr[q].fwd_s + tr[q].bwd_s);
                }
            e->class_slot[cls] = n_trans++;
        }
        e->trans_at[i] = e->class_slot[cls];
    }
    for (uint32_t i = 0; i < n; i++) /* unmarked for the next stage */
        e->class_slot[e->layer_class[row_layer(e, first, i)]] = UINT32_MAX;
    e->n_trans = n_trans;
}

/* Whether row i of the stage prices as row i − 1 does (fill_stage_rows): the same
 * class (the same costs), both blocks or neither, the same micro-batches held and
 * live states, and no uniform pass that counts the stage's blocks (cell_allowed).
 * A run of a model's blocks then costs one row and copies. */
static bool same_row(const tsl_engine_t *e, uint32_t first, uint32_t i, bool block,
                     const uint32_t *held, const uint8_t *live)
{
    if (i == 0 || (e->uniform_ckpt >= 0 && e->uniform_block_n))
        return false;
    const uint32_t l = row_layer(e, first, i), k = row_layer(e, first, i - 1);
    return e->layer_class[l] == e->layer_class[k] && block == tsl_model_is_block(e->model, k) &&
           held[i] == held[i - 1] && live[i] == live[i - 1];
}

/* Row `to` of the DP figures as row `from`. */
static void copy_row(tsl_engine_t *e, uint32_t S, uint32_t to, uint32_t from)
{
    const size_t at = (size_t)to * S, from_at = (size_t)from * S;
    memcpy(&e->time_s[at], &e->time_s[from_at], S * sizeof(*e->time_s));
    memcpy(&e->fwd_bytes[at], &e->fwd_bytes[from_at], S * sizeof(*e->fwd_bytes));
    memcpy(&e->bwd_bytes[at], &e->bwd_bytes[from_at], S * sizeof(*e->bwd_bytes));
    memcpy(&e->ms_bytes[at], &e->ms_bytes[from_at], S * sizeof(*e->ms_bytes));
}

/* The stage's row that holds torch.distributed.pipelining's receive buffers
 * (add_recv_buffers): its first block's, or its last. */
static uint32_t recv_row(const tsl_engine_t *e, uint32_t first, uint32_t n)
{
    uint32_t i = 0;
    while (i + 1 < n && !tsl_model_is_block(e->model, row_layer(e, first, i)))
        i++;
    return i;
}

/* Whether the stage's row i keeps a row of figures of its own, shared with no other:
 * the rows written after fill_stage_rows one by one — the tied pair's first and last
 * (keep_tie_ok) and the receive buffers' (add_recv_buffers). */
static bool own_row(uint32_t i, uint32_t n, uint32_t recv)
{
    return i == 0 || i + 1 == n || i == recv;
}

/* Fills the DP rows of one stage; the objective of a layer is its share of Eq. 9
 * when the stage is alone: (m − 1) micro-batches without gradient sync plus one
 * with it, then its optimizer step. A cell the space does not allow costs infinity.
 * A row that prices as the one before (same_row) names that one's row of figures
 * (e->dp_row) instead of a copy (a copy where either keeps its own: own_row). */
static void fill_stage_rows(tsl_engine_t *e, const tsl_group_strategies_t *g, uint32_t first,
                            uint32_t n, uint32_t m, const uint32_t *held, const uint8_t *live)
{
    uint32_t pos = 0, rows = 0;
    const uint32_t recv = recv_row(e, first, n);
    fill_stage_trans(e, first, n, m);
    for (uint32_t i = 0; i < n; i++) {
        const uint32_t cls = e->layer_class[row_layer(e, first, i)];
        const tsl_layer_cost_t *lc = e->class_row[cls];
        const bool block = tsl_model_is_block(e->model, row_layer(e, first, i));
        if (same_row(e, first, i, block, held, live)) {
            if (own_row(i, n, recv) || own_row(i - 1, n, recv)) {
                copy_row(e, g->n, rows, e->dp_row[i - 1]);
                e->dp_row[i] = rows++;
            } else {
                e->dp_row[i] = e->dp_row[i - 1];
            }
            pos += block;
            continue;
        }
        e->dp_row[i] = rows;
        for (uint32_t j = 0; j < g->n; j++) {
            size_t k = (size_t)rows * g->n + j;
            e->time_s[k] = lc[j].feasible ? (m - 1) * (lc[j].fwd_s + lc[j].bwd_s) + lc[j].fwd_s +
                                                lc[j].bwd_sync_s + lc[j].opt_s
                                          : INFINITY;
            if (!cell_allowed(e, g, block, pos, j))
                e->time_s[k] = INFINITY;
            e->saw_divisible |= lc[j].feasible;
            e->fwd_bytes[k] = lc[j].fwd_bytes * held[i] + lc[j].step_bytes * m;
            e->bwd_bytes[k] = lc[j].bwd_bytes;
            e->ms_bytes[k] = peak_states(&lc[j], live[i]);
        }
        rows++;
        pos += block;
    }
    e->n_dp_rows = rows;
}

/*
 * The least stage time any interleave of a plain configuration can have
 * (e->least_k_s[s], e->least_obj_s[s]; search_engine.h), by Lagrangian relaxation
 * of the layer DP: an interleaved stage's choice c (each layer's strategy among
 * those that run it) keeps Σ_i a_i,c ≤ M, its budget, where a_ij = the layer's
 * states (less its gradients under lazy_grads, which need not be live) plus h
 * micro-batches of its stash: the DP's peak is at least its states and stashes
 * (layerdp.h tsl_layerdp_peak_bytes) and never above M, and at the end of Megatron's
 * warm-up every chunk of stage s holds at least h = P − s micro-batches (N ≥ P
 * of chunk v − 1, 2(P − s) − 1 of the last; the peak weighs no less:
 * tsl_pipeline_peak_chunks), as plain 1F1B holds. So for every λ ≥ 0
 *
 *   Σ_i x_i,c ≥ Σ_i x_i,c + λ(Σ_i a_i,c − M) ≥ Σ_i min_j (x_ij + λ·a_ij) − λ·M,
 *
 * x the forward and backward time (K; the moves between layouts, never negative,
 * aside) or the layer DP's objective. λ = 0 is each layer's fastest; the λ that
 * keeps the plain plan's own choice j* the cheapest of the faster ones, max over
 * them of (x_j* − x_j)/(a_j − a_j*), prices the memory where the plain plan found
 * it binding. The larger of those. Only where the configuration interleaves.
 */
typedef struct floor_terms {
    double k, obj; /* x: forward + backward, the DP's objective */
    double a;      /* memory held, bytes */
} floor_terms_t;

static floor_terms_t floor_terms(const tsl_layer_cost_t *lc, uint32_t m, uint32_t h, bool lazy)
{
    double fb = lc->fwd_s + lc->bwd_s;
    return (floor_terms_t){fb, (m - 1) * fb + lc->fwd_s + lc->bwd_sync_s + lc->opt_s,
                           (double)(lazy ? lc->ms_bytes - lc->grad_bytes : lc->ms_bytes) +
                               (double)h * (double)lc->fwd_bytes +
                               (double)m * (double)lc->step_bytes};
}

/* Σ_i min_j (x_ij + λ·a_ij) − λ·M over the stage's layers (obj: the objective). */
static double floor_dual(const tsl_engine_t *e, const tsl_group_strategies_t *g, uint32_t first,
                         uint32_t n, uint32_t m, uint32_t h, double M, double lambda, bool obj)
{
    double sum = -lambda * M, run = 0;
    for (uint32_t i = 0; i < n; i++) {
        const tsl_layer_cost_t *lc = e->class_row[e->layer_class[first + i]];
        if (i == 0 || e->layer_class[first + i] != e->layer_class[first + i - 1]) {
            run = INFINITY; /* a run of one class: its least once */
            for (uint32_t j = 0; j < g->n; j++) {
                if (!lc[j].feasible)
                    continue;
                floor_terms_t t = floor_terms(&lc[j], m, h, e->knobs.lazy_grads);
                run = tsl_min(run, (obj ? t.obj : t.k) + lambda * t.a);
            }
        }
        sum += run;
    }
    return sum;
}

/* The λ that keeps choice j* of layer i the cheapest of its faster strategies. */
static double floor_price(const tsl_engine_t *e, const tsl_group_strategies_t *g, uint32_t layer,
                          uint32_t chosen, uint32_t m, uint32_t h, bool obj)
{
    const tsl_layer_cost_t *lc = e->class_row[e->layer_class[layer]];
    floor_terms_t c = floor_terms(&lc[chosen], m, h, e->knobs.lazy_grads);
    double cx = obj ? c.obj : c.k, price = 0;
    for (uint32_t j = 0; j < g->n; j++) {
        if (!lc[j].feasible)
            continue;
        floor_terms_t t = floor_terms(&lc[j], m, h, e->knobs.lazy_grads);
        double x = obj ? t.obj : t.k;
        if (x < cx && t.a > c.a)
            price = tsl_max(price, (cx - x) / (t.a - c.a));
    }
    return price;
}

/* e->least_k_s[s] and e->least_obj_s[s] of the plain stage just solved (e->choice). */
static void floor_stage(tsl_engine_t *e, const tsl_group_strategies_t *g, uint32_t s,
                        uint32_t first, uint32_t n, uint32_t m, uint32_t P, uint64_t budget)
{
    double M = (double)budget, best[2] = {-INFINITY, -INFINITY};
    uint32_t h = P - s < m ? P - s : m;
    for (int obj = 0; obj < 2; obj++) {
        double tried[5];
        uint32_t nt = 0;
        tried[nt++] = 0.0;
        for (uint32_t i = 0; i < n && nt < 5; i++) {
            if (i > 0 && e->layer_class[first + i] == e->layer_class[first + i - 1] &&
                e->choice[i] == e->choice[i - 1])
                continue;
            double lambda = floor_price(e, g, first + i, e->choice[i], m, h, obj);
            bool seen = false;
            for (uint32_t k = 0; k < nt; k++)
                seen |= tried[k] == lambda;
            if (!seen)
                tried[nt++] = lambda;
        }
        for (uint32_t k = 0; k < nt; k++)
            best[obj] = tsl_max(best[obj], floor_dual(e, g, first, n, m, h, M, tried[k], obj));
    }
    e->least_k_s[s] = tsl_max(best[0], 0.0);
    e->least_obj_s[s] = tsl_max(best[1], 0.0);
}

static bool interleave_on(const tsl_engine_t *e, uint32_t P, uint32_t m);

/*
 * The least below_bar's K (time_nosync − p2p − fb_save) can be on stage s of a
 * zero-bubble schedule whatever strategies its layer DP chooses within the stage's
 * budget (e->zb_floor_s[s]; zb_own_choice), from the stage's rows (its layers, a
 * V's rank's: stage_rows), which depend on the stage, never on the choice
 * (memo_key_t).
 *
 * K is the rows' F + B under the chosen strategies plus the moves, boundary, host
 * and offload terms (stage_times, eval_stage_rows; all ≥ 0), less fb_save =
 * max(0, A − fb), A = hide + B, hide = F − min(F, lead) (the EP lead, ≥ 0) and
 * fb ≥ max(c, a), a = min(C, A), c = A − a (tsl_pipesim_fb_save_s, its κ ≥ 1 aside).
 * So K − fb_save ≥ min(F, lead) + max(c, a) ≥ X = max(F + B − C, min(C, F + B)),
 * and X = F + B where no step saves (torchtitan, fb_serial). Where no row has an EP
 * lead under any strategy, hide = F and κ counts too: X is v_fb_least_s's
 * max(c, a) + (κ − 1)·min(c, a) at c = F + B − C, a = min(C, F + B). X grows with
 * each of the sums F + B, C and F + B − C, so each may count at its least.
 *
 * The least of a sum Σ_i x_i,c over the choices c that fit, by Lagrangian
 * relaxation as floor_stage bounds an interleave: a choice the DP returns keeps
 * Σ_i a_i,c ≤ M, its budget (its peak, layerdp.h, is at least its states and
 * stashes: a_ij = the states, less the gradients under lazy_grads, held_i
 * micro-batches of stash and m of step_bytes), so for every λ ≥ 0
 * Σ_i x_i,c ≥ Σ_i min_j (x_ij + λ·a_ij) − λ·M. held is the count this costing
 * holds (after offload_held): the schedule's in-flight count, or on a V the
 * chunks' counts at one moment of tsl_pipeline_v_held's walk, where a choice's own
 * held count is the moment of its largest stash — no fewer bytes. The bound is
 * concave in λ: its slope, the least terms' bytes less M, is followed by
 * bisection, every λ tried a bound.
 */
static double v_fb_least_s(const tsl_engine_t *e, const double sum[3]);

typedef struct zb_run {
    const tsl_layer_cost_t *row; /* the class's row of the stage */
    uint32_t held, n;            /* micro-batches held, rows in the run */
    const zb_term_t *term;       /* its row's feasible strategies, in the row's order */
    uint32_t n_terms;
} zb_run_t;

static double zb_x(const tsl_layer_cost_t *lc, int sum)
{
    double fb = lc->fwd_s + lc->bwd_s;
    return sum == 0 ? fb : sum == 1 ? lc->comm_s : fb - lc->comm_s;
}

/* run's terms into term[0..): one per feasible strategy of its row. */
static uint32_t zb_terms(const tsl_engine_t *e, const tsl_group_strategies_t *g,
                         const zb_run_t *run, uint32_t m, zb_term_t *term)
{
    uint32_t n = 0;
    for (uint32_t j = 0; j < g->n; j++) {
        const tsl_layer_cost_t *lc = &run->row[j];
        if (!lc->feasible)
            continue;
        term[n].a = (double)(e->knobs.lazy_grads ? lc->ms_bytes - lc->grad_bytes : lc->ms_bytes) +
                    (double)run->held * (double)lc->fwd_bytes + (double)m * (double)lc->step_bytes;
        for (int sum = 0; sum < 3; sum++)
            term[n].x[sum] = zb_x(lc, sum);
        n++;
    }
    return n;
}

/* Σ_i min_j (x_ij + λ·a_ij) − λ·M over the runs, and its slope in *slope. */
static double zb_dual(const zb_run_t *run, uint32_t n_runs, double M, double lambda, int sum,
                      double *slope)
{
    double total = -lambda * M, bytes = -M;
    for (uint32_t r = 0; r < n_runs; r++) {
        double least = INFINITY, a_least = 0;
        for (uint32_t k = 0; k < run[r].n_terms; k++) {
            const zb_term_t *t = &run[r].term[k];
            double y = t->x[sum] + lambda * t->a;
            if (y < least) {
                least = y;
                a_least = t->a;
            }
        }
        total += run[r].n * least;
        bytes += run[r].n * a_least;
    }
    *slope = bytes;
    return total;
}

/* The largest Σ_i min_j (x_ij + λ·a_ij) − λ·M found over 0 ≤ λ ≤ most (zb_dual). */
static double zb_least_sum(const zb_run_t *run, uint32_t n_runs, double M, int sum, double most)
{
    double slope, best = zb_dual(run, n_runs, M, 0.0, sum, &slope);
    double lo = 0, hi = 1e-12; /* s per byte: 1 GB at 1 ms */
    for (uint32_t k = 0; slope > 0 && isfinite(best) && hi <= most && k < 24; k++) {
        best = tsl_max(best, zb_dual(run, n_runs, M, hi, sum, &slope));
        if (slope > 0) {
            lo = hi;
            hi *= 8;
        }
    }
    for (uint32_t k = 0; lo > 0 && slope <= 0 && k < 8; k++) {
        double mid = sqrt(lo * hi), sl;
        best = tsl_max(best, zb_dual(run, n_runs, M, mid, sum, &sl));
        if (sl > 0)
            lo = mid;
        else
            hi = mid;
    }
    return best;
}

static void zb_floor_stage(tsl_engine_t *e, const tsl_group_strategies_t *g, uint32_t s,
                           uint32_t first, uint32_t n, uint32_t m, const uint32_t *held,
                           uint64_t budget)
{
    zb_run_t run[TSL_PLAN_MAX_LAYERS];
    uint32_t n_runs = 0;
    for (uint32_t i = 0; i < n; i++) {
        const tsl_layer_cost_t *row = e->class_row[e->layer_class[row_layer(e, first, i)]];
        if (n_runs > 0 && run[n_runs - 1].row == row && run[n_runs - 1].held == held[i])
            run[n_runs - 1].n++;
        else
            run[n_runs++] = (zb_run_t){.row = row, .held = held[i], .n = 1};
    }
    zb_term_t *term = e->zb_term; /* [rows × S_max]: at most g->n a run */
    for (uint32_t r = 0; r < n_runs; r++) {
        run[r].term = term;
        run[r].n_terms = zb_terms(e, g, &run[r], m, term);
        term += run[r].n_terms;
    }
    /* λ·M at most 10^4 times the stage's fastest F + B: the terms' rounding, relative
     * to λ·M, stays far below zb_own_choice's margin of 10^-9 of K */
    double M = (double)budget, slope, sum[3] = {0, 0, 0};
    double most = 1e4 * zb_dual(run, n_runs, M, 0.0, 0, &slope) / M;
    sum[0] = zb_least_sum(run, n_runs, M, 0, most);
    e->zb_floor_fb_s[s] = sum[0];
    e->zb_floor_s[s] = sum[0];
    if (e->space->target == TSL_TARGET_TORCHTITAN || e->knobs.fb_serial)
        return;
    bool lead = false;
    for (uint32_t r = 0; r < n_runs; r++)
        for (uint32_t j = 0; j < g->n; j++)
            lead |= run[r].row[j].ep_lead_s > 0;
    sum[1] = zb_least_sum(run, n_runs, M, 1, most);
    sum[2] = zb_least_sum(run, n_runs, M, 2, most);
    e->zb_floor_s[s] = lead ? tsl_max(sum[2], tsl_min(sum[1], sum[0])) : v_fb_least_s(e, sum);
}

/* Layer cost lc as the EP overlap's nodes (ep_overlap.h): its forward's and backward's
 * all-to-alls halved between dispatch and combine; the routed experts' compute as the
 * "mlp" node (mlp_f_s, mlp_b_s less its dW mlp_w_s), the rest of each pass — TP and
 * every other collective included — as the "attn" node with the layer's other dW
 * (wgrad_s less the experts'); the host lead's idle (ep_lead_s) taken off the forward:
 * it hides nothing (stage_times adds it whole). */
static void ep_nodes(const tsl_layer_cost_t *lc, tsl_ep_layer_t *o)
{
    double ep_f = tsl_min(lc->ep_fwd_s, lc->ep_s), ep_b = lc->ep_s - ep_f;
    double cf = tsl_max(0.0, lc->fwd_s - ep_f - lc->ep_lead_s);
    double cb = tsl_max(0.0, lc->bwd_s - ep_b);
    o->mlp_f = tsl_min(lc->mlp_f_s, cf);
    o->attn_f = cf - o->mlp_f;
    o->mlp_w = tsl_min(lc->mlp_w_s, cb);
    o->mlp_b = tsl_min(tsl_max(0.0, lc->mlp_b_s - lc->mlp_w_s), cb - o->mlp_w);
    o->attn_w = tsl_min(tsl_max(0.0, lc->wgrad_s - o->mlp_w), cb - o->mlp_w - o->mlp_b);
    o->attn_b = cb - o->mlp_w - o->mlp_b - o->attn_w;
    o->disp_f = o->comb_f = ep_f / 2.0;
    o->disp_b = o->comb_b = ep_b / 2.0;
}

/* DualPipeV's F&B contention k (tsl_pipesim_fb_k) on a stage of env with comm seconds
 * of communication, ep of them the EP exchange: a flex dispatcher's all-to-alls run as
 * DeepEP's kernels on TSL_PIPESIM_DEEPEP_SMS of the GPU's SMs (expert TP 1: the
 * exchange is theirs alone; PAPER prices k). Cost model 155. */
static double fb_overlap_k(const tsl_engine_t *e, const tsl_cost_env_t *env, double comm, double ep)
{
    bool deepep = e->knobs.moe_flex && e->knobs.etp <= 1 && env->mode != TSL_COST_PAPER;
    return tsl_pipesim_fb_k(comm, deepep ? ep : 0.0, e->cluster->overlap_slowdown,
                            env->gemm_shape.sms, TSL_PIPESIM_DEEPEP_SMS);
}

/* Per-micro-batch stage times of the chosen strategies (including R); env the stage's. */
static void stage_times(tsl_engine_t *e, const tsl_cost_env_t *env, const tsl_group_strategies_t *g,
                        uint32_t first, uint32_t n, tsl_plan_stage_t *st, uint64_t *act_bytes)
{
    double nosync = 0, sync = 0, fwd = 0, opt = 0, wgrad = 0, f = 0, b = 0, comm = 0, ep = 0;
    double lead = 0;               /* the EP the host-bound passes' own lead hid (ep_lead_s) */
    double alone = 0;              /* under the EP overlap, what runs outside its layers */
    uint32_t n_ep = 0;             /* and the layers it pairs (e->ep_layers) */
    double rs = 0, rs_sync = 0;    /* the DP reduce, and what sync charges for it */
    double f1 = 0, b1 = 0, w1 = 0; /* a V's second chunk: its rows from v_chunk0 on */
    uint64_t act = 0, ms = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t j = e->choice[i], cls = e->layer_class[row_layer(e, first, i)];
        const tsl_layer_cost_t *lc = &e->class_row[cls][j];
        tsl_transition_cost_t r = {0, 0}; /* the first layer's: boundary_relayout */
        if (i > 0)
            r = class_move(e, &e->class_trans[(size_t)cls * e->max_layouts * e->max_layouts],
                           e->stage_layout[e->choice[i - 1]], e->stage_layout[j]);
        nosync += lc->fwd_s + lc->bwd_s + r.fwd_s + r.bwd_s;
        sync += lc->fwd_s + lc->bwd_sync_s + r.fwd_s + r.bwd_s;
        fwd += lc->fwd_s + r.fwd_s; /* the activation's move forward, its gradient's back */
        opt += lc->opt_s;
        rs += lc->dp_rs_s;
        rs_sync += lc->dp_rs_sync_s;
        wgrad += lc->wgrad_s;
        f += lc->fwd_s;
        b += lc->bwd_s;
        comm += lc->comm_s;
        ep += lc->ep_s;
        lead += lc->ep_lead_s;
        act += e->fwd_bytes[(size_t)e->dp_row[i] * g->n + j];
        ms += lc->ms_bytes;
        if (e->v_on && i >= e->v_chunk0) {
            f1 += lc->fwd_s + r.fwd_s;
            b1 += lc->bwd_s + r.bwd_s;
            w1 += lc->wgrad_s;
        }
        /* each layer's time at its own index, whatever row it priced on (a V's
         * ranks run two parts each): the hybrid cut reads the model's order */
        e->layer_time_s[row_layer(e, first, i)] = lc->fwd_s + lc->bwd_s;
        if (e->knobs.moe_a2a_overlap) { /* the overlap's layers; the rest run alone */
            if (tsl_layer_is_body(&e->model->layers[row_layer(e, first, i)]))
                ep_nodes(lc, &e->ep_layers[n_ep++]);
            else
                alone += lc->fwd_s + lc->bwd_s;
        }
    }
    if (e->knobs.ds_wall_clock && n > 0) { /* DeepSpeed's timers: each forward instruction
                                               restarts at the stage's first layer, each
                                               backward at its last (cost.h instr_f_s) */
        const tsl_layer_cost_t *in = e->class_row[e->layer_class[row_layer(e, first, 0)]],
                               *out = e->class_row[e->layer_class[row_layer(e, first, n - 1)]];
        double r = in[e->choice[0]].instr_f_s + out[e->choice[n - 1]].instr_b_s;
        nosync += r;
        sync += r;
        fwd += in[e->choice[0]].instr_f_s;
    }
    st->time_nosync_s = nosync;
    st->time_s = sync;
    st->fwd_s = fwd;
    st->opt_s = opt;
    st->dp_rs_s = rs;
    st->dp_rs_sync_s = rs_sync;
    st->wgrad_s = wgrad;
    st->chunk1_fwd_s = f1;
    st->chunk1_bwd_s = b1;
    st->chunk1_wgrad_s = w1;
    /* DualPipeV's F&B: the layers' TP / ZeRO-3 / EP communication hidden under the
     * partner's compute, DeepEP's all-to-alls at the SMs they hold (fb_overlap_k);
     * torch.distributed.pipelining (torchtitan) runs an OVERLAP_F_B action's forward
     * and backward one after the other. The partner's compute is the passes' less
     * the host lead that hid their own EP collectives already (ep_lead_s): counting
     * that idle twice made more host time price a shorter step (cost model 164) */
    double hide = fmax(0.0, f - lead);
    st->fb_save_s = e->space->target == TSL_TARGET_TORCHTITAN || e->knobs.fb_serial
                        ? 0.0
                        : tsl_pipesim_fb_save_s(hide, b, comm, fb_overlap_k(e, env, comm, ep));
    /* Megatron-LM's EP overlap: its merged step hides the EP all-to-alls alone, node
     * by node as its two streams run them (ep_overlap.h); the host lead's idle stays */
    if (e->knobs.moe_a2a_overlap) {
        bool delay = !e->knobs.moe_a2a_wgrad_inline;
        double merged = lead + alone +
                        tsl_ep_merged_k_s(e->ep_layers, n_ep, delay, e->cluster->overlap_slowdown);
        st->ep_save_s = tsl_max(0.0, f + b - merged);
    } else {
        st->ep_save_s = 0.0;
    }
    st->ms_bytes = ms;
    *act_bytes = act;
}

/* Heterogeneous clusters: a stage cannot use more memory than its smallest device. */
/* The reserve and the budget a device keeps (search.h); here, below every
 * caller in the search's files. */
uint64_t tsl_request_reserve_bytes(const tsl_request_t *r, uint64_t dev_mem)
{
    if (r->mem_budget_bytes)
        return 0;
    uint64_t res = r->mem_reserve_bytes;
    if (res == 0) {
        res = TSL_SEARCH_RESERVE_CONTEXT_BYTES + TSL_SEARCH_RESERVE_NCCL_BYTES +
              dev_mem * TSL_SEARCH_RESERVE_FRAG_PCT / 100;
        if (res > dev_mem / 2) /* small or simulated devices: keep half for the plan */
            res = dev_mem / 2;
    }
    return res < dev_mem ? res : dev_mem;
}

uint64_t tsl_request_device_budget(const tsl_request_t *r, uint64_t dev_mem)
{
    if (r->mem_budget_bytes)
        return r->mem_budget_bytes < dev_mem ? r->mem_budget_bytes : dev_mem;
    return dev_mem - tsl_request_reserve_bytes(r, dev_mem);
}

uint64_t tsl_engine_stage_budget(const tsl_engine_t *e, uint32_t first, uint32_t n)
{
    uint64_t budget = e->budget_bytes;
    const tsl_cluster_t *c = e->cluster;
    if (e->same_mem && n > 0) { /* every node's answer is the first's (100k GPUs: 12,500) */
        uint64_t mem = tsl_request_device_budget(e->req, tsl_cluster_device_mem(c, first));
        return mem < budget ? mem : budget;
    }
    for (uint32_t d = first; d < first + n;) {
        uint32_t node = c->device_node[d];
        uint64_t mem = tsl_cluster_device_mem(c, d);
        mem = tsl_request_device_budget(e->req, mem);
        if (mem < budget)
            budget = mem;
        d = c->node_first[node] + c->nodes[node].n_gpus; /* next node */
    }
    return budget;
}

void tsl_request_knobs(const tsl_request_t *r, tsl_cost_knobs_t *k)
{
    tsl_target_knobs(r->target < TSL_TARGET_COUNT ? r->target : TSL_TARGET_ANY, k);
    if (r->grad_reduce_bytes)
        k->grad_reduce_bytes =
            r->grad_reduce_bytes == TSL_BYTES_PER_PARAM_FP16 ? 0 : r->grad_reduce_bytes;
    if (r->grad_buf_bytes)
        k->grad_buf_bytes = r->grad_buf_bytes;
    if (r->attn_kernel)
        k->attn_kernel = r->attn_kernel;
    if (r->no_fp32_master)
        k->no_fp32_master = true;
    if (r->overlap_grad_reduce)
        k->grad_reduce_exposed = false;
    if (r->no_overlap_grad_reduce)
        k->grad_reduce_exposed = true;
    if (r->overlap_param_gather)
        k->overlap_param_gather = true;
    if (r->overlap_tp_dgrad)
        k->overlap_tp_dgrad = true;
    if (r->no_overlap_tp_dgrad)
        k->overlap_tp_dgrad = false;
    if (r->unfused_grad_accum)
        k->unfused_grad_accum = true;
    if (r->legacy_p2p)
        k->legacy_p2p = true;
    if (r->tp_comm_overlap)
        k->tp_comm_overlap = true;
    if (r->async_tp)
        k->async_tp = true;
    if (r->autocast)
        k->autocast = true;
    if (r->loss_impl) /* 0: the target's (loss_impl.h) */
        k->loss_impl = r->loss_impl;
    if (r->double_block_fwd)
        k->double_block_fwd = true;
    if (r->tp_sync)
        k->tp_sync = true;
    if (r->eager)
        k->eager = true;
    k->cp = r->cp > 1 && !r->no_cp ? r->cp : 0; /* the search sets each degree it tries */
    k->ep = r->ep > 1 && !r->no_ep ? r->ep : 0; /* likewise */
    k->etp = r->etp > 1 ? r->etp : 0;           /* likewise */
    k->moe_capacity = r->moe_capacity > 0 ? r->moe_capacity : 0.0;
    k->moe_pad = k->moe_capacity > 0 && r->moe_pad;
    k->moe_imbalance = r->moe_imbalance;
    k->host_op_s = r->host_op_us * 1e-6; /* 0: the built-in figure (tsl_cost_env_init) */
    if (r->fp8_recipe && !r->no_fp8)
        k->fp8 = r->fp8_recipe;
    if (r->fp8_param_gather) /* the FP8 runs' weights: recorded where FP8 is priced (plan.c) */
        k->fp8_param_gather = true;
    if (r->recompute_modules) /* Megatron's recompute modules, priced on every layer */
        k->recompute_modules = r->recompute_modules;
    if (r->bf16_moments)
        k->bf16_moments = true;
    if (r->lazy_grads)
        k->lazy_grads = true;
    k->bf16_layers_start = r->bf16_layers_start; /* priced through the layers (model.h) */
    k->bf16_layers_end = r->bf16_layers_end;
    if (r->module_prec) /* the FP8 plans' linears at their own precision (module_prec.h) */
        k->module_prec = r->module_prec;
    if (r->moe_bf16_experts)
        k->moe_bf16_experts = true;
    if (r->moe_fp8_dispatch) { /* Megatron-LM's FP8 dispatch runs the flex dispatcher */
        k->moe_fp8_dispatch = true;
        k->moe_alltoall = false;
        k->moe_fused_mlp = true; /* and only through the op fuser (tsl_plan_get_knobs) */
    }
    if (r->moe_alltoall)
        k->moe_alltoall = true;
    if (r->moe_unfused_permute)
        k->moe_unfused_permute = true;
    if (r->moe_fused_mlp)
        k->moe_fused_mlp = true;
    if (r->moe_fused_srelu)
        k->moe_fused_srelu = true;
    if (r->moe_a2a_overlap)
        k->moe_a2a_overlap = true;
    if (r->moe_a2a_wgrad_inline)
        k->moe_a2a_wgrad_inline = true;
    if (r->ds_grad_bucket)
        k->ds_grad_bucket = true;
    if (r->tp_whole_heads)
        k->tp_whole_heads = true;
    if (r->sdp_layer_roots)
        k->sdp_layer_roots = true;
    if (r->sdp_nosync)
        k->sdp_nosync = true;
    if (r->sdp_keep_weights)
        k->sdp_keep_weights = true;
    if (r->ds_bf16_optimizer)
        k->ds_bf16_optimizer = true;
    if (r->launch_blocking)
        k->launch_blocking = true;
    if (r->ds_wall_clock)
        k->ds_wall_clock = true;
    if (r->ds_zero3_v03)
        k->ds_zero3_v03 = true;
    if (r->fp8_amax_tp_only)
        k->fp8_amax_tp_only = true;
    if (r->fp8_dpa)
        k->fp8_dpa = true;
    if (r->unfused_elementwise)
        k->unfused_elementwise = true;
    if (r->fp32)
        k->fp32 = true;
    if (r->fp32 && r->tf32) { /* the stack's script runs them as TF32: not the target's TF32
                                 off (cost.h knobs.tf32) */
        k->tf32 = true;
        k->tf32_off = false;
    }
    if (r->fp16 && !r->fp32) /* fp16 mixed precision (and where no bf16: tsl_knobs_fp16) */
        k->fp16 = true;
    if (r->moe_flex) { /* the flex dispatcher in place of the target's all-to-all one (both
                          asked: refused, tsl_moe_flex_ok) */
        k->moe_flex = true;
        k->moe_alltoall = r->moe_alltoall;
        k->moe_flex_backend = r->moe_flex_backend;
    }
    k->cpu_offload_layers = r->cpu_offload_layers;
}

int tsl_cluster_fp8_ok(const tsl_cluster_t *c, uint32_t r, tsl_err_t *err)
{
    if (r == TSL_FP8_NONE)
        return 0;
    if (r >= TSL_FP8_COUNT)
        return tsl_err_set(err,
                           "fp8_recipe: %u is not a recipe (1 delayed, 2 tensorwise, "
                           "3 blockwise, 4 mxfp8, 5 nvfp4)",
                           r);
    for (uint32_t i = 0; i < c->n_gpu_types; i++) {
        const tsl_gpu_spec_t *g = &c->gpu_types[i];
        if (r == TSL_FP8_NVFP4 && !(g->fp4_peak_flops > 0))
            return tsl_err_set(err,
                               "fp8_recipe: nvfp4 needs FP4 tensor cores (Blackwell: B200, "
                               "GB200); the %s has none (fp4_peak_flops 0): plan it in FP8 "
                               "or bf16",
                               g->name);
        if (!(g->fp8_peak_flops > 0))
            return tsl_err_set(err,
                               "fp8: the %s has no FP8 tensor cores (Hopper, Ada, Blackwell "
                               "and MI300 have; Ampere and older do not): plan it in bf16",
                               g->name);
        if (r == TSL_FP8_MXFP8 && !tsl_gpu_is_blackwell(g))
            return tsl_err_set(err,
                               "fp8: mxfp8 needs Blackwell's MX tensor cores; the %s has none "
                               "(delayed, tensorwise or blockwise run there)",
                               g->name);
    }
    return 0;
}

/* What the plan's 16 bits are kept in: a bf16 (or FP8) switch names bf16, which a GPU
 * without bf16 tensor cores does not run; the stacks without an fp16 path. */
static const char *bf16_switch(const tsl_cost_knobs_t *k)
{
    return k->fp8                 ? "fp8_recipe"
           : k->no_fp32_master    ? "no_fp32_master"
           : k->bf16_moments      ? "bf16_moments"
           : k->ds_bf16_optimizer ? "ds_bf16_optimizer"
                                  : NULL;
}

int tsl_fp16_ok(const tsl_cost_knobs_t *k, uint32_t target, const tsl_cluster_t *c, tsl_err_t *err)
{
    if (!k->fp16)
        return 0;
    const tsl_gpu_spec_t *g = tsl_cluster_no_bf16(c);
    const char *clash = bf16_switch(k);
    if (clash != NULL && g != NULL)
        return tsl_err_set(err,
                           "%s: bf16, and the %s has no bf16 tensor cores (compute capability "
                           "below 8.0: Volta, Turing; bf16 came with Ampere); a cluster with "
                           "it trains in fp16 with a loss scaler, or in fp32 (--fp32)",
                           clash, g->name);
    if (clash != NULL)
        return tsl_err_set(err,
                           "fp16: not with %s, a bf16 (or FP8) switch: fp16 mixed precision "
                           "keeps its 16 bits in fp16",
                           clash);
    if (target == TSL_TARGET_TORCHTITAN)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "fp16: torchtitan trains in bf16 or fp32 "
                            "(TrainingConfig.mixed_precision_param \"bfloat16\" or "
                            "\"float32\", no loss scaler: torchtitan b5bcd76c6 "
                            "config/configs.py)%s%s%s",
                            g ? "; the " : "", g ? g->name : "",
                            g ? " has no bf16: plan it with --fp32" : "");
    if (target == TSL_TARGET_GALVATRON)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "fp16: galvatron's export is its strategy file, which carries no "
                            "precision (the runtime's mixed_precision, default bf16, is a "
                            "launch argument)%s%s%s",
                            g ? "; the " : "", g ? g->name : "",
                            g ? " has no bf16: plan it with --fp32" : "");
    return 0;
}

int tsl_fp8_dispatch_ok(uint32_t r, bool moe_fp8_dispatch, tsl_err_t *err)
{
    if (!moe_fp8_dispatch || r != TSL_FP8_NVFP4)
        return 0;
    return tsl_err_set(err, "moe_fp8_dispatch: Megatron-LM's low-precision dispatch sends "
                            "MXFP8 (--moe-dispatch-fwd-dtype mxfp8), which feeds MXFP8 "
                            "experts; not with fp8_recipe nvfp4");
}

int tsl_moe_flex_ok(bool moe_flex, bool moe_alltoall, tsl_err_t *err)
{
    if (!moe_flex || !moe_alltoall)
        return 0;
    return tsl_err_set(err, "moe_flex_dispatcher: Megatron-LM runs one token dispatcher; not "
                            "with moe_alltoall_dispatcher");
}

/* The first routed-expert layer whose FFN is not gated, or NULL. */
static const tsl_layer_t *plain_expert_layer(const tsl_model_t *m)
{
    for (uint32_t i = 0; i < m->n_layers; i++)
        if (m->layers[i].experts > 0 && !m->layers[i].gated_ffn)
            return &m->layers[i];
    return NULL;
}

int tsl_moe_fused_mlp_ok(const tsl_model_t *m, bool fused_mlp, bool fused_srelu, tsl_err_t *err)
{
    if (!fused_mlp || plain_expert_layer(m) == NULL || (m->relu2 && fused_srelu))
        return 0;
    if (!m->relu2)
        return tsl_err_set(err,
                           "moe_fused_mlp: model %s's routed experts are a plain GeLU FFN; "
                           "Transformer Engine's op fuser runs SwiGLU, quick-GeGLU or the "
                           "weighted squared ReLU only (Megatron-LM asserts)",
                           m->name);
    return tsl_err_set(err,
                       "moe_fused_mlp: model %s's routed experts are squared ReLU, which "
                       "Transformer Engine's op fuser runs only with the routing weights "
                       "inside it (moe_fused_srelu, Megatron-LM "
                       "--use-fused-weighted-squared-relu; Megatron-LM asserts without)",
                       m->name);
}

int tsl_moe_flex_backend_ok(bool moe_flex, uint32_t backend, bool moe_pad, tsl_err_t *err)
{
    if (backend == TSL_FLEX_DEFAULT)
        return 0;
    if (tsl_flex_backend_name(backend) == NULL)
        return tsl_err_set(err, "moe_flex_backend: %u is not 1 (hybridep) or 2 (deepep)", backend);
    if (!moe_flex)
        return tsl_err_set(err,
                           "moe_flex_backend: %s names the flex dispatcher's back end; "
                           "the plan runs no flex dispatcher (moe_flex_dispatcher)",
                           tsl_flex_backend_name(backend));
    if (backend == TSL_FLEX_DEEPEP && moe_pad) /* TransformerConfig raises on it */
        return tsl_err_set(err, "moe_flex_backend: deepep does not pad the experts' input to "
                                "capacity (Megatron-LM TransformerConfig); hybridep does");
    return 0;
}

int tsl_moe_alltoall_ok(bool moe_alltoall, bool moe_fp8_dispatch, tsl_err_t *err)
{
    if (!moe_alltoall || !moe_fp8_dispatch)
        return 0;
    return tsl_err_set(err, "moe_alltoall_dispatcher: Megatron-LM's FP8 dispatch runs the flex "
                            "dispatcher, not the all-to-all one; not with moe_fp8_dispatch "
                            "(--moe-fp8-dispatch)");
}

tsl_cost_mode_t tsl_engine_cost_mode(const tsl_engine_t *e)
{
    return e->req != NULL && e->req->paper_cost ? TSL_COST_PAPER : TSL_COST_STACK;
}

void tsl_engine_env_request(const tsl_engine_t *e, tsl_cost_env_t *env)
{
    env->mode = tsl_engine_cost_mode(e);
    env->knobs = e->knobs;
    env->walks = e->walks;
    /* the stack's own host figure where the request measured one (host_op_us) */
    if (env->knobs.host_op_s > 0) { /* measured on its own host: no host_scale on it */
        env->host_op_s = env->knobs.host_op_s;
        env->host_scale = 1.0;
    }
    /* the papers' formulas have no host floor; a C or CUDA-graph stack none either */
    if (env->mode == TSL_COST_PAPER || (e->req != NULL && e->req->no_host_floor))
        env->host_op_s = 0.0;
    /* nor Megatron-LM's all-to-all dispatcher's own pieces: the seeds' MoE layer is
     * the permutation and two all-to-alls */
    if (env->mode == TSL_COST_PAPER) {
        env->knobs.moe_alltoall = false;
        env->knobs.moe_unfused_permute = false;
        env->knobs.moe_fused_mlp = false;
        env->knobs.moe_fused_srelu = false;
    }
}

/* Stage s's point-to-point time per micro-batch, both directions: its boundary to
 * the next stage, v times under interleaving, where the last stage also sends
 * v − 1 chunk boundaries back to the first. The sender's layout is that of the
 * stage's last layer (`last`). */
static double stage_p2p_s(const tsl_engine_t *e, const tsl_group_strategies_t *g, uint32_t s,
                          uint32_t P, uint32_t G, const uint32_t *first_layer,
                          const tsl_strategy_t *last, uint32_t Bm, uint32_t v)
{
    tsl_cost_mode_t mode = tsl_engine_cost_mode(e);
    if (s + 1 >= P && v <= 1)
        return 0;
    const bool next = s + 1 < P;
    const uint32_t to = next ? (s + 1) * G : 0;
    /* the pairs' figure of this boundary, kept per group of the engine's */
    uint32_t gi = group_index(e, g);
    double bw = 0.0; /* PAPER: not read */
    if (mode != TSL_COST_PAPER && gi < e->n_groups) {
        tsl_group_layouts_t *gl = &e->glay[gi];
        size_t at = 2 * (size_t)s + !next;
        if (!gl->pairs_done[at]) {
            gl->pairs_bw[at] = tsl_cluster_pairs_bw(e->cluster, s * G, to, G);
            gl->pairs_done[at] = 1;
        }
        bw = gl->pairs_bw[at];
    } else if (mode != TSL_COST_PAPER) {
        bw = tsl_cluster_pairs_bw(e->cluster, s * G, to, G);
    }
    tsl_p2p_proto_t proto = tsl_cost_p2p_proto(&e->knobs);
    const tsl_layer_t *into = &e->model->layers[first_layer[next ? s + 1 : s]];
    double one = tsl_cost_stage_p2p_pairs_s(e->cluster, mode, s * G, to, last, into->bnd_act_bytes,
                                            Bm, bw, proto, tsl_cost_ds_mask_bytes(proto, into));
    return (next ? v : v - 1) * one;
}

/*
 * The layout change at stage s's boundary: the executor sends each rank's
 * output of stage s − 1's last layer to the same local position of stage s, which
 * moves it into its first layer's layout by the Slice-Gather rule (relayout.h) —
 * forward on the activation, the reverse move on its gradient before it goes back.
 * R(held = stage s − 1's last layout, needed = stage s's first) on stage s's
 * devices (its gather groups' links, its calibration), per micro-batch, into
 * stage s's times as R inside a stage is (the forward part in fwd_s too). Added
 * after the layer DP has chosen: the stages are searched one at a time, so it
 * does not steer the DP's choice inside a stage — it changes the stage's time,
 * the plan's prediction and its comparison with other plans. The planner's
 * stages all have G devices (the executor refuses neighbours of different
 * sizes); tsl_relayout_plan refuses strategies of other sizes. Under interleave
 * the same terms: with them every pair of consecutive layers of the model is
 * priced once, on the plan's stage of the later layer (the executor's chunks cut
 * a stage's layers elsewhere, so some of its moves run on another stage).
 */
static bool boundary_relayout(tsl_engine_t *e, const tsl_cost_env_t *env, const tsl_plan_t *plan,
                              const tsl_strategy_t *first_s, uint32_t s, uint32_t first,
                              uint32_t Bm, tsl_plan_stage_t *st)
{
    /* the layer before the stage's first row, on stage s − 1: under a V (stage_rows)
     * the first row is the rank's first part's, which the part before it feeds */
    const uint32_t in = row_layer(e, first, 0), prev = in - 1;
    if (s == 0 || in == 0 || tsl_strategy_same_layout(&plan->layer[prev], first_s))
        return true; /* stage 0: the model's input; equal layouts: nothing moves */
    const tsl_strategy_t *held = &plan->layer[prev];
    tsl_relayout_t mv;
    tsl_transition_cost_t r;
    uint32_t a = 0, b = 0, K = e->n_layouts;
    if (e->pair_done != NULL) { /* the stage's own moves (same layout, same move) */
        while (a < K && !tsl_strategy_same_layout(&e->pair_group->items[e->pair_rep[a]], held))
            a++;
        while (b < K && !tsl_strategy_same_layout(&e->pair_group->items[e->pair_rep[b]], first_s))
            b++;
    }
    if (e->pair_done != NULL && a < K && b < K) {
        if (!need_pair(e, a, b))
            return false;
        mv = e->moves[a * K + b];
    } else if (relayout_plan(e, held, first_s, st->first_device, &mv) != 0) {
        return false;
    }
    tsl_cost_transition(env, &e->model->layers[in], &mv, Bm, &r);
    st->time_nosync_s += r.fwd_s + r.bwd_s;
    st->time_s += r.fwd_s + r.bwd_s;
    st->fwd_s += r.fwd_s;
    return true;
}

/* Whether the stage of layers [first, first + n) ends with the model's tied LM head
 * (which shares layer 0's word embedding): its last row is the model's last layer
 * (under a V rank 0's, beside the embedding, stage_rows). */
static bool holds_tied_head(const tsl_engine_t *e, uint32_t first, uint32_t n)
{
    const tsl_model_t *m = e->model;
    const tsl_layer_t *h = &m->layers[m->n_layers - 1];
    return m->n_layers > 1 && n > 0 && row_layer(e, first, n - 1) == m->n_layers - 1 &&
           h->kind == TSL_LAYER_HEAD && h->tied_head && m->layers[0].kind == TSL_LAYER_EMBEDDING;
}

/* Row `row` of the stage's DP keeps only the strategies that can share emb's table
 * (tsl_strategy_tie_ok: the executor runs no other). */
static void keep_tie_ok(tsl_engine_t *e, const tsl_group_strategies_t *g, uint32_t row,
                        const tsl_strategy_t *emb, bool same_stage)
{
    const uint32_t te = tsl_strategy_degree(emb, TSL_DIM_TP),
                   se = tsl_strategy_stride(emb, TSL_DIM_TP);
    for (uint32_t j = 0; j < g->n; j++) {
        const tsl_strategy_t *h = &g->items[j];
        /* in another stage, the same TP degree at the same stride (or none) ties as
         * tsl_strategy_tie_ok finds by walking every device of the block */
        if (!same_stage && tsl_strategy_degree(h, TSL_DIM_TP) == te &&
            (te == 1 || tsl_strategy_stride(h, TSL_DIM_TP) == se))
            continue;
        if (!tsl_strategy_tie_ok(emb, h, same_stage, g->group_size))
            e->time_s[(size_t)e->dp_row[row] * g->n + j] = INFINITY;
    }
}

/* The tied pair's two rows (the stage's first and last of n) from their saved
 * unconstrained copies (e->tie_rows), then both kept to `pair`'s layout. */
static void keep_tie_pair(tsl_engine_t *e, const tsl_group_strategies_t *g, uint32_t n,
                          const tsl_strategy_t *pair)
{
    memcpy(&e->time_s[(size_t)e->dp_row[0] * g->n], e->tie_rows, g->n * sizeof(double));
    memcpy(&e->time_s[(size_t)e->dp_row[n - 1] * g->n], e->tie_rows + g->n, g->n * sizeof(double));
    keep_tie_ok(e, g, 0, pair, true);
    keep_tie_ok(e, g, n - 1, pair, true);
}

/* The layer DP of a stage, with the tied head's rule: in a later stage than the
 * embedding its row keeps what matches the embedding chosen there; in the
 * embedding's own stage, when the best assignment gives the two different layouts,
 * the pair must share one: the DP runs again with both rows kept to the
 * embedding's layout, and again to the head's, and the faster stands. (Keeping
 * the embedding's alone missed the head's: GPT2-1.3B on 8 A100s, batch 64, took
 * tp2-dp4 for both at 0.345478 s where dp8 for both is 0.345454 s.) Other layouts
 * are not tried: the pair's two choices when free are the likeliest, and each
 * try is a DP run. */
static bool solve_stage(tsl_engine_t *e, const tsl_group_strategies_t *g, tsl_plan_t *plan,
                        uint32_t s, uint32_t first, uint32_t n, tsl_layerdp_problem_t *prob,
                        tsl_layerdp_result_t *res)
{
    bool tied = holds_tied_head(e, first, n);
    if (tied && s > 0)
        keep_tie_ok(e, g, n - 1, &plan->layer[0], false);
    e->stats.dp_runs++;
    if (dp_solve(e, prob, res) != 0 || !isfinite(res->time_s))
        return false;
    e->stats.dp_states += res->states_visited;
    if (!tied || s > 0 ||
        tsl_strategy_same_layout(&g->items[e->choice[0]], &g->items[e->choice[n - 1]]))
        return true;
    const tsl_strategy_t pair[2] = {g->items[e->choice[0]], g->items[e->choice[n - 1]]};
    memcpy(e->tie_rows, &e->time_s[(size_t)e->dp_row[0] * g->n], g->n * sizeof(double));
    memcpy(e->tie_rows + g->n, &e->time_s[(size_t)e->dp_row[n - 1] * g->n], g->n * sizeof(double));
    tsl_layerdp_result_t best = {.time_s = INFINITY};
    int won = -1;
    for (int k = 0; k < 2; k++) {
        keep_tie_pair(e, g, n, &pair[k]);
        tsl_layerdp_result_t r;
        e->stats.dp_runs++;
        if (dp_solve(e, prob, &r) != 0)
            return false;
        e->stats.dp_states += r.states_visited;
        if (isfinite(r.time_s) && r.time_s < best.time_s) {
            best = r;
            won = k;
            memcpy(e->tie_choice, e->choice, n * sizeof(*e->choice));
        }
    }
    if (won < 0)
        return false;
    if (won == 0) /* the rows as the winner had them (an interleaved re-solve reads them) */
        keep_tie_pair(e, g, n, &pair[0]);
    *res = best;
    memcpy(e->choice, e->tie_choice, n * sizeof(*e->choice));
    return true;
}

/* Whether a and b have the same degree and stride in every dimension: then the
 * same collective groups, and so the same figures (tsl_cost_strategy_bw reads
 * nothing else of a strategy; CKPT, SP, ZeRO stage and recomputation twins
 * share them). */
static bool same_groups(const tsl_strategy_t *a, const tsl_strategy_t *b)
{
    for (uint32_t d = 0; d < TSL_DIM_COUNT; d++)
        if (tsl_strategy_degree(a, d) != tsl_strategy_degree(b, d) ||
            tsl_strategy_stride(a, d) != tsl_strategy_stride(b, d))
            return false;
    return true;
}

/* e->stage_bw: the strategies' collective figures on stage s's block, kept per
 * group and stage (the env's mode is the engine's throughout a search) and read
 * where they are kept (a row is S × 1.3 KB: copying it cost more than the rest
 * of a memoised stage's costing); made in e->bw for a group outside groups[]. */
static void stage_bw(tsl_engine_t *e, const tsl_group_strategies_t *g, uint32_t s,
                     const tsl_cost_env_t *env)
{
    uint32_t i = 0;
    while (i < e->n_groups && g != &e->groups[i])
        i++;
    tsl_group_layouts_t *gl = i < e->n_groups ? &e->glay[i] : NULL;
    uint32_t t = gl != NULL ? stage_twin(e, g->group_size, s) : s;
    if (gl != NULL && (gl->bw_done[s] || gl->bw_done[t])) {
        e->stage_bw = gl->bw + (size_t)(gl->bw_done[s] ? s : t) * g->n;
        return;
    }
    tsl_strategy_bw_t moe; /* the EP groups: one walk per block, not per strategy */
    memset(&moe, 0, sizeof(moe));
    const tsl_layer_t *ml = tsl_model_first_moe(e->model);
    if (ml != NULL)
        tsl_cost_moe_bw(env, ml, &moe);
    tsl_cost_bw_memo_t memo; /* and each group of the block's strategies walked once */
    memo.n = 0;
    for (uint32_t j = 0; j < g->n; j++) {
        uint32_t q = 0; /* an earlier strategy of the same groups: its figures */
        while (q < j && !same_groups(&g->items[q], &g->items[j]))
            q++;
        if (q < j)
            e->bw[j] = e->bw[q];
        else
            tsl_cost_strategy_bw_memo(env, &g->items[j], &memo, &e->bw[j]);
        memcpy(e->bw[j].moe, moe.moe, sizeof(moe.moe));
    }
    e->stage_bw = e->bw;
    if (gl != NULL) {
        memcpy(gl->bw + (size_t)s * g->n, e->bw, g->n * sizeof(*e->bw));
        gl->bw_done[s] = 1;
    }
}

/* The memory each layer of stage s holds at the peak: fwd_bytes of its held
 * micro-batches and step_bytes of all m, its states with or without its gradients
 * (the rows' other figures stay). A row that shared the row before's figures
 * (fill_stage_rows: the same class) keeps sharing them where it holds as that one
 * does, else takes a copy of its own (n_dp_rows ≤ n: a copy is made only of a row
 * two of the stage's rows used). */
static void set_stage_act(tsl_engine_t *e, const tsl_group_strategies_t *g, uint32_t first,
                          uint32_t n, uint32_t m, const uint32_t *held, const uint8_t *live)
{
    uint32_t was = UINT32_MAX; /* row i − 1's row of figures before this pass */
    for (uint32_t i = 0; i < n; i++) {
        const uint32_t r = e->dp_row[i];
        const bool shared = i > 0 && r == was;
        was = r;
        if (shared && held[i] == held[i - 1] && live[i] == live[i - 1]) {
            e->dp_row[i] = e->dp_row[i - 1]; /* written for row i − 1 as for this one */
            continue;
        }
        if (shared) {
            copy_row(e, g->n, e->n_dp_rows, r);
            e->dp_row[i] = e->n_dp_rows++;
        }
        const tsl_layer_cost_t *lc = e->class_row[e->layer_class[row_layer(e, first, i)]];
        const size_t at = (size_t)e->dp_row[i] * g->n;
        for (uint32_t j = 0; j < g->n; j++) {
            e->fwd_bytes[at + j] = lc[j].fwd_bytes * held[i] + lc[j].step_bytes * m;
            e->ms_bytes[at + j] = peak_states(&lc[j], live[i]);
        }
    }
}

/* torch.distributed.pipelining's receive buffers on stage s (cost.h
 * tsl_cost_pp_recv_bytes, pipeline.h tsl_pipeline_recv_buffers): m of each buffer the
 * stage keeps, whatever is in flight, on the row of its first block (the boundary a
 * block receives and sends back is a block's input), each strategy at its own shard
 * of it, so that the layer DP weighs them with the strategy. After fill_stage_rows
 * and set_stage_act, which set the rows. */
static void add_recv_buffers(tsl_engine_t *e, const tsl_group_strategies_t *g,
                             const tsl_cost_env_t *env, const tsl_plan_t *plan, uint32_t s,
                             uint32_t first, uint32_t n, uint32_t m, uint32_t Bm)
{
    bool vshape = tsl_pipesim_sched_is_v(plan->schedule);
    uint32_t bufs = tsl_pipeline_recv_buffers(s, plan->pp, plan->interleave, vshape);
    if (bufs == 0 || n == 0 || !tsl_cost_pp_recv_held(env)) /* nothing to add to any row */
        return;
    const uint32_t i = recv_row(e, first, n); /* its own row of figures (own_row) */
    uint64_t bnd = e->model->layers[row_layer(e, first, i)].bnd_act_bytes;
    for (uint32_t j = 0; j < g->n; j++)
        e->fwd_bytes[(size_t)e->dp_row[i] * g->n + j] +=
            (uint64_t)ceil((double)bufs * m * tsl_cost_pp_recv_bytes(env, &g->items[j], bnd, Bm));
}

/* Whether the stage of layers [first, first + n) holds the model's embedding and
 * its head, and the MTP layers there (in the last chunk, with the head:
 * pipeline.h tsl_pipeline_chunk_layers). */
static void stage_ends(const tsl_model_t *md, uint32_t first, uint32_t n, bool *emb, bool *head,
                       uint32_t *mtp)
{
    *emb = first == 0 && md->layers[0].kind == TSL_LAYER_EMBEDDING;
    *head = first + n == md->n_layers && md->layers[first + n - 1].kind == TSL_LAYER_HEAD;
    *mtp = 0;
    for (uint32_t i = first; *head && i + 1 < first + n; i++)
        *mtp += md->layers[i].mtp_depth > 0;
}

/* Interleaved 1F1B, chunk by chunk (pipeline.h tsl_pipeline_peak_chunks): the
 * stage's layers cut into v chunks as Megatron-LM cuts them, each chunk weighing
 * its layers' stash — of the strategies in choice, or before the DP (choice NULL)
 * each layer's smallest, and with lazy_grads their gradients — and held[i] the
 * micro-batches layer i's chunk holds at the stage's peak, live[i] whether its
 * gradients exist then. Returns the stage's micro-batches' worth (the plan's
 * inflight): Σ held × chunk bytes over the stage's bytes, rounded. */
static uint32_t chunk_held(const tsl_engine_t *e, const tsl_group_strategies_t *g,
                           const tsl_plan_t *plan, uint32_t s, uint32_t first, uint32_t n,
                           uint32_t m, uint32_t v, const uint32_t *choice, uint32_t *held,
                           uint8_t *live)
{
    const tsl_model_t *md = e->model;
    uint32_t count[TSL_PIPELINE_MAX_CHUNKS], per[TSL_PIPELINE_MAX_CHUNKS];
    uint8_t glive[TSL_PIPELINE_MAX_CHUNKS];
    double w[TSL_PIPELINE_MAX_CHUNKS] = {0}, gw[TSL_PIPELINE_MAX_CHUNKS] = {0}, all = 0, held_w = 0;
    bool emb, head;
    uint32_t mtp;
    stage_ends(md, first, n, &emb, &head, &mtp);
    tsl_pipeline_chunk_layers(n, emb, head, mtp, v, count);
    for (uint32_t c = 0, i = 0; c < v; c++) {
        for (uint32_t k = 0; k < count[c]; k++, i++) {
            const tsl_layer_cost_t *lc = e->class_row[e->layer_class[first + i]];
            double least = INFINITY, grads = INFINITY;
            if (choice) {
                least = (double)lc[choice[i]].fwd_bytes;
                grads = (double)lc[choice[i]].grad_bytes;
            } else {
                for (uint32_t j = 0; j < g->n; j++)
                    if (lc[j].feasible && (double)lc[j].fwd_bytes < least)
                        least = (double)lc[j].fwd_bytes;
                for (uint32_t j = 0; j < g->n; j++)
                    if (lc[j].feasible && (double)lc[j].grad_bytes < grads)
                        grads = (double)lc[j].grad_bytes;
            }
            w[c] += isfinite(least) ? least : 0.0;
            gw[c] += isfinite(grads) ? grads : 0.0;
        }
        all += w[c];
    }
    uint32_t N = tsl_pipeline_vp_group(plan->pp, e->vp_group);
    uint32_t chunks =
        tsl_pipeline_peak_chunks(m, v, N, tsl_pipeline_vp_warmup(s, plan->pp, m, v, N), w,
                                 e->knobs.lazy_grads ? gw : NULL, per, glive);
    for (uint32_t c = 0, i = 0; c < v; c++) {
        held_w += per[c] * w[c];
        for (uint32_t k = 0; k < count[c]; k++, i++) {
            held[i] = per[c];
            live[i] = glive[c];
        }
    }
    uint32_t worth = all > 0 ? (uint32_t)lround(held_w / all) : (chunks + v - 1) / v;
    return worth ? worth : 1;
}

/* given: NULL runs the layer DP; otherwise the per-layer strategy indices of a
 * given plan (tsl_engine_eval_given), costed as they are. */
/* A stage's peak when the step has one micro-batch under autocast: a script's fp32
 * .grad (tsl_layer_cost_t.grad_bytes) is allocated as its backward reaches each
 * layer, so while layer l's backward runs those of layers ≤ l are not there yet
 * (docs/cost-model.md "Autocast"): Σ ms + max(0, max_l Σ_{i≤l} (O_f − lazy) + O_b(l)),
 * the layer DP's peak (tsl_layerdp_peak_bytes) less what is not yet allocated. The
 * DP itself keeps the whole states: a feasibility judged conservatively. */
static uint64_t lazy_grad_peak(const tsl_engine_t *e, const tsl_group_strategies_t *g,
                               uint32_t first, uint32_t n)
{
    double cum = 0.0, top = 0.0, ms = 0.0;
    for (uint32_t i = 0; i < n; i++) {
        size_t k = (size_t)e->dp_row[i] * g->n + e->choice[i];
        const tsl_layer_cost_t *lc =
            &e->class_row[e->layer_class[row_layer(e, first, i)]][e->choice[i]];
        cum += (double)e->fwd_bytes[k] - (double)lc->grad_bytes;
        top = fmax(top, cum + (double)e->bwd_bytes[k]);
        ms += (double)e->ms_bytes[k];
    }
    return (uint64_t)(ms + top);
}

/* A V's rank s (set_vparts, stage_rows): each of its two chunks holds its own count
 * of micro-batches at the rank's peak (pipeline.h tsl_pipeline_v_held, cost model
 * 118), weighed by the chunks' stash — the rows' strategies in choice (by row) or
 * given (by layer), or before the DP each row's smallest — so held[i] is row i's
 * chunk's count (rank 0's second chunk, the head's: at most one micro-batch, the
 * last virtual stage's; its first, the embedding's, 2P − 1 or 2P). live: all 1 (the
 * V keeps its gradient buffer's count). Returns the rank's micro-batches' worth (the
 * plan's inflight): Σ held × chunk bytes over the rank's, rounded. */
static uint32_t v_held(const tsl_engine_t *e, const tsl_group_strategies_t *g,
                       const tsl_plan_t *plan, uint32_t s, uint32_t first, uint32_t n, uint32_t m,
                       const uint32_t *choice, const uint32_t *given, uint32_t *held, uint8_t *live)
{
    double w[2] = {0, 0};
    uint32_t per[2];
    for (uint32_t i = 0; i < n; i++) {
        const tsl_layer_cost_t *lc = e->class_row[e->layer_class[row_layer(e, first, i)]];
        double least = INFINITY;
        if (choice || given) {
            least = (double)lc[choice ? choice[i] : given[row_layer(e, first, i)]].fwd_bytes;
        } else {
            for (uint32_t j = 0; j < g->n; j++)
                if (lc[j].feasible && (double)lc[j].fwd_bytes < least)
                    least = (double)lc[j].fwd_bytes;
        }
        w[i >= e->v_chunk0] += isfinite(least) ? least : 0.0;
    }
    uint32_t all =
        tsl_pipeline_v_held(plan->schedule == TSL_PIPESIM_SCHED_DUALPIPEV, s, plan->pp, m, w, per);
    for (uint32_t i = 0; i < n; i++) {
        held[i] = per[i >= e->v_chunk0];
        live[i] = 1;
    }
    double bytes = w[0] + w[1];
    uint32_t worth =
        bytes > 0 ? (uint32_t)lround((per[0] * w[0] + per[1] * w[1]) / bytes) : (all + 1) / 2;
    return worth ? worth : 1;
}

/* Activation CPU offloading (knobs.cpu_offload_layers = N, offload.h): the model's
 * first N Transformer layers hold no stash on the GPU at the peak (TransformerEngine
 * keeps at most the other layers' there, the reload in flight among them). */
static void offload_held(const tsl_engine_t *e, uint32_t first, uint32_t n, uint32_t *held)
{
    uint32_t N = e->knobs.cpu_offload_layers, b = 0;
    for (uint32_t i = 0; N && i < first + n; i++) {
        bool block = tsl_model_is_block(e->model, i);
        if (i >= first && block && b < N)
            held[i - first] = 0;
        b += block;
    }
}

/* The compute's waits for the offload copies in one micro-batch of the stage's
 * chosen strategies (tsl_offload_exposed_s over its Transformer layers, each copy its
 * one-micro-batch stash over the block's slowest host link), and the bytes one
 * device's offloaded layers put on the host (*host_bytes); the block is devices
 * [dev_first, dev_first + G). */
static double offload_exposed_s(const tsl_engine_t *e, uint32_t first, uint32_t n,
                                uint32_t dev_first, uint32_t G, uint64_t *host_bytes)
{
    tsl_offload_layer_t ol[TSL_MODEL_MAX_LAYERS];
    const tsl_cluster_t *c = e->cluster;
    uint32_t N = e->knobs.cpu_offload_layers, L = 0, b = 0;
    double link = INFINITY;
    *host_bytes = 0;
    if (N == 0)
        return 0.0;
    for (uint32_t i = 0; i < first; i++)
        b += tsl_model_is_block(e->model, i);
    for (uint32_t d = dev_first; d < dev_first + G; d++)
        link = fmin(link, tsl_cluster_device_gpu(c, d)->pcie_bw);
    for (uint32_t i = 0; i < n; i++) {
        if (!tsl_model_is_block(e->model, first + i))
            continue;
        const tsl_layer_cost_t *lc = &e->class_row[e->layer_class[first + i]][e->choice[i]];
        bool off = b + L < N;
        double out_s = off && link > 0 ? (double)lc->fwd_bytes / link : 0.0;
        ol[L++] = (tsl_offload_layer_t){lc->fwd_s, lc->bwd_s, out_s, out_s};
        *host_bytes += off ? lc->fwd_bytes : 0;
    }
    return tsl_offload_exposed_s(ol, L, N > b ? N - b : 0);
}

/* Stage block s's env kept in its group's pool; out of memory: not kept (made again). */
static void keep_env(tsl_group_layouts_t *gl, uint32_t s, const tsl_cost_env_t *env)
{
    tsl_env_pool_t *p = gl->envs;
    if (p->n == p->cap) {
        uint32_t cap = p->cap ? 2 * p->cap : 16;
        tsl_cost_env_t *grown = realloc(p->env, cap * sizeof(*grown));
        if (grown == NULL)
            return;
        p->env = grown;
        p->cap = cap;
    }
    p->env[p->n] = *env;
    gl->env_at[s] = ++p->n;
}

/* Stage s's rows (e->row_at): under a V (set_vparts) rank s runs model parts s and
 * 2P − 1 − s, its first chunk then its second (e->v_chunk0 rows in the first).
 * Returns the rows' count (span without a V, and row_at NULL: the stage's layers in
 * order). */
static uint32_t stage_rows(tsl_engine_t *e, uint32_t s, uint32_t P, uint32_t span, uint32_t *rows)
{
    uint32_t n = 0;
    e->row_at = NULL;
    e->v_chunk0 = span;
    if (!e->v_on)
        return span;
    for (uint32_t l = e->v_part[s]; l < e->v_part[s + 1]; l++)
        rows[n++] = l;
    e->v_chunk0 = n;
    for (uint32_t l = e->v_part[2 * P - 1 - s]; l < e->v_part[2 * P - s]; l++)
        rows[n++] = l;
    e->row_at = rows;
    return n;
}

static bool eval_stage_rows(tsl_engine_t *e, const tsl_group_strategies_t *g, tsl_plan_t *plan,
                            uint32_t s, const uint32_t *first_layer, uint32_t Bm, uint32_t m,
                            const uint32_t *given, uint32_t n);

/* Stage s of plan: its layers' strategies by the layer DP (given: as given), its
 * peak, times and boundary, in its rows (stage_rows). */
static bool eval_stage(tsl_engine_t *e, const tsl_group_strategies_t *g, tsl_plan_t *plan,
                       uint32_t s, const uint32_t *first_layer, uint32_t Bm, uint32_t m,
                       const uint32_t *given)
{
    uint32_t rows[TSL_PLAN_MAX_LAYERS], first = first_layer[s];
    uint32_t n = stage_rows(e, s, plan->pp, first_layer[s + 1] - first, rows);
    bool ok = eval_stage_rows(e, g, plan, s, first_layer, Bm, m, given, n);
    e->row_at = NULL;
    return ok;
}

/* eval_stage in n rows (row_layer). */
static bool eval_stage_rows(tsl_engine_t *e, const tsl_group_strategies_t *g, tsl_plan_t *plan,
                            uint32_t s, const uint32_t *first_layer, uint32_t Bm, uint32_t m,
                            const uint32_t *given, uint32_t n)
{
    /* ZBV's two chunks cross the boundaries as interleave 2's do */
    uint32_t P = plan->pp, G = g->group_size,
             v = plan->schedule ? tsl_pipesim_sched_chunks(plan->schedule, 0) : plan->interleave;
    uint32_t first = first_layer[s];
    tsl_cost_env_t env;
    uint32_t gi = group_index(e, g);
    tsl_group_layouts_t *gl = gi < e->n_groups ? &e->glay[gi] : NULL;
    if (gl && gl->env_at[s]) { /* made at the block's first costing */
        env = gl->envs->env[gl->env_at[s] - 1];
    } else {
        if (tsl_cost_env_init(&env, e->cluster, s * G, G, NULL) != 0)
            return false;
        tsl_engine_env_request(e, &env);
        if (gl)
            keep_env(gl, s, &env);
    }
    env.tied_copy = first > 0; /* a tied head here copies layer 0's word embedding */
    env.pipelined = P > 1;     /* where sdp_nosync holds (FSDP2 under PP) */
    stage_bw(e, g, s, &env);
    if (!stage_layouts(e, g, s))
        return false;
    uint32_t classes = 0;
    for (uint32_t i = 0; i < n; i++)
        e->class_done[e->layer_class[row_layer(e, first, i)]] = 0;
    for (uint32_t i = 0; i < n; i++) {
        classes += !e->class_done[e->layer_class[row_layer(e, first, i)]];
        e->class_done[e->layer_class[row_layer(e, first, i)]] = 1;
    }
    for (uint32_t i = 0; i < n; i++)
        e->class_done[e->layer_class[row_layer(e, first, i)]] = 0;
    memset(e->layout_live, 0, e->n_layouts);
    /* the memo keeps the rows of the engine's groups (not a uniform pass's own) */
    memo_key_t key = {env_fingerprint(&env), gi, gi < e->n_groups ? stage_twin(e, G, s) : s, Bm, 0,
                      env.tied_copy};
    bool memo = gi < e->n_groups && memo_reserve(e, &env, classes, (size_t)classes * g->n);
    for (uint32_t i = 0; i < n; i++)
        cost_class(e, &env, g, memo ? &key : NULL, row_layer(e, first, i), Bm);
    live_layouts(e);
    for (uint32_t i = 0; i < n; i++)
        if (!cost_class_trans(e, &env, row_layer(e, first, i), Bm))
            return false;
    uint32_t held[TSL_PLAN_MAX_LAYERS], held2[TSL_PLAN_MAX_LAYERS];
    uint8_t live[TSL_PLAN_MAX_LAYERS], live2[TSL_PLAN_MAX_LAYERS];
    bool chunked = !plan->schedule && v > 1, vshape = e->v_on;
    uint32_t inflight =
        vshape ? v_held(e, g, plan, s, first, n, m, NULL, given, held, live)
        : plan->schedule == TSL_PIPESIM_SCHED_DUALPIPEV ? tsl_pipeline_inflight_dualpipev(P, m)
        : plan->schedule                                ? tsl_pipeline_inflight_zb(P, m)
        : chunked
            ? chunk_held(e, g, plan, s, first, n, m, v, given ? given + first : NULL, held, live)
            : tsl_pipeline_inflight(s, P, m);
    if (!chunked && !vshape) /* one chunk: its first backward comes with the peak's stash held */
        for (uint32_t i = 0; i < n; i++) {
            held[i] = inflight;
            live[i] = 1;
        }
    offload_held(e, first, n, held);
    if (given && plan->schedule) /* what zb_own_choice's re-solve could reach */
        zb_floor_stage(e, g, s, first, n, m, held, tsl_engine_stage_budget(e, s * G, G));
    fill_stage_rows(e, g, first, n, m, held, live);
    add_recv_buffers(e, g, &env, plan, s, first, n, m, Bm);

    tsl_layerdp_problem_t prob = {.n_layers = n,
                                  .n_strategies = g->n,
                                  .time_s = e->time_s,
                                  .fwd_bytes = e->fwd_bytes,
                                  .bwd_bytes = e->bwd_bytes,
                                  .ms_bytes = e->ms_bytes,
                                  .row_at = e->dp_row,
                                  .n_rows = e->n_dp_rows,
                                  .n_layouts = e->n_layouts,
                                  .layout = e->stage_layout,
                                  .trans_pair_s = e->trans_s,
                                  .trans_at = e->trans_at,
                                  .n_trans = e->n_trans,
                                  .budget_bytes = tsl_engine_stage_budget(e, s * G, G),
                                  .bucket_bytes = e->bucket_bytes};
    tsl_layerdp_result_t res;
    if (given) {
        /* the caller judges the peak against the budget and names the stage */
        for (uint32_t i = 0; i < n; i++)
            e->choice[i] = given[row_layer(e, first, i)];
        res.peak_bytes = tsl_layerdp_peak_bytes(&prob, e->choice);
    } else if (!solve_stage(e, g, plan, s, first, n, &prob, &res)) {
        return false;
    }
    /* interleaved or a V: the chunks weighed by the strategies chosen, whose peak may
     * fall elsewhere than the smallest stashes' did; the DP again on that count
     * while it moves and the peak is over the budget */
    for (uint32_t round = 0; (chunked || vshape) && !given; round++) {
        inflight = chunked ? chunk_held(e, g, plan, s, first, n, m, v, e->choice, held2, live2)
                           : v_held(e, g, plan, s, first, n, m, e->choice, NULL, held2, live2);
        if (memcmp(held, held2, n * sizeof(*held)) == 0 && memcmp(live, live2, n) == 0)
            break;
        memcpy(held, held2, n * sizeof(*held));
        memcpy(live, live2, n);
        set_stage_act(e, g, first, n, m, held, live);
        prob.n_rows = e->n_dp_rows; /* rows that held apart took their own */
        add_recv_buffers(e, g, &env, plan, s, first, n, m, Bm);
        res.peak_bytes = tsl_layerdp_peak_bytes(&prob, e->choice);
        if (res.peak_bytes <= prob.budget_bytes)
            break;
        if (round == 2 || !solve_stage(e, g, plan, s, first, n, &prob, &res))
            return false;
    }

    if (v <= 1 && !plan->schedule && !given && interleave_on(e, P, m))
        floor_stage(e, g, s, first, n, m, P, prob.budget_bytes);
    tsl_plan_stage_t *st = &plan->stages[s];
    st->first_layer = first;
    st->n_layers = first_layer[s + 1] - first;
    st->first_device = s * G;
    st->n_devices = G;
    st->inflight = inflight;
    if (m == 1 && env.knobs.autocast)
        res.peak_bytes = lazy_grad_peak(e, g, first, n);
    st->peak_bytes = res.peak_bytes;
    stage_times(e, &env, g, first, n, st, &st->act_bytes);
    double amax_f, amax_b; /* TE delayed scaling's amax reduction, each chunk and pass */
    tsl_cost_fp8_delayed_amax_s(&env, &g->items[e->choice[0]], n, v, &amax_f, &amax_b);
    st->time_s += amax_f + amax_b;
    st->time_nosync_s += amax_f + amax_b;
    st->fwd_s += amax_f;
    if (e->knobs.cpu_offload_layers) { /* one stage (pp_allowed, eval's check) */
        double wait = offload_exposed_s(e, first, n, s * G, G, &plan->cpu_offload_bytes);
        st->time_s += wait;
        st->time_nosync_s += wait;
        plan->cpu_offload_s = wait * m;
        plan->cpu_offload_layers = e->knobs.cpu_offload_layers;
        if (!given && tsl_offload_host_check(e->cluster, plan, NULL) != 0)
            return false; /* the host cannot hold it: eval refuses it too */
    }
    if (!boundary_relayout(e, &env, plan, &g->items[e->choice[0]], s, first, Bm, st))
        return false;
    if (s + 1 < P || v > 1) {
        st->p2p_s = stage_p2p_s(e, g, s, P, G, first_layer, &g->items[e->choice[n - 1]], Bm, v);
        st->p2p_s += tsl_cost_ds_exchange_dispatch_s(&env, &g->items[e->choice[n - 1]]);
        st->time_s += st->p2p_s;
        st->time_nosync_s += st->p2p_s;
    }
    for (uint32_t i = 0; i < n; i++)
        plan->layer[row_layer(e, first, i)] = g->items[e->choice[i]];
    return true;
}

/* Under a V (set_vparts): the rank whose parts hold layer l. */
static uint32_t v_rank_of(const tsl_engine_t *e, uint32_t P, uint32_t l)
{
    uint32_t q = 0;
    while (q + 1 < 2 * P && e->v_part[q + 1] <= l)
        q++;
    return tsl_pipeline_v_rank(q, P);
}

/* A tied head in the last stage (the executor's rule: the model's last layer, in
 * another stage than layer 0) sums its copy's gradient with the first stage's; so
 * does an MTP depth's embedding copy in a later stage (mtp.h; Megatron-LM
 * finalize_model_grads.py _allreduce_word_embedding_grads: one all-reduce of the
 * embedding group, the tied head's and the MTP's being the same table). */
static double tied_allreduce_s(const tsl_engine_t *e, tsl_plan_t *plan)
{
    /* under a V the head sits on rank 0 (every stage holds 2 layers or more, so part
     * 2P − 1 holds it at least): no pair; an MTP depth before it may fall on rank 1,
     * priced with rank 1's devices and timed by the simulator between ranks 0 and 1
     * (tie_stage; before cost model 118 between 0 and P − 1) */
    const tsl_model_t *m = e->model;
    uint32_t last = m->n_layers - 1, P = plan->pp, at = last, st = P - 1;
    plan->tie_stage = 0;
    if (P < 2 || m->n_layers == 0)
        return 0.0;
    if (!m->layers[last].tied_head) /* the first MTP entry, where there is one */
        for (uint32_t i = 0; i < m->n_layers; i++)
            if (m->layers[i].kind == TSL_LAYER_MTP && !m->layers[i].shared_weights) {
                at = i;
                break;
            }
    if (e->v_on) /* a V: the rank that runs it (rank 0: beside the embedding, no pair) */
        st = v_rank_of(e, P, at);
    else
        while (st > 0 && plan->stages[st].first_layer > at)
            st--;
    if (st == 0)
        return 0.0;
    plan->tie_stage = st < P - 1 ? st : 0;
    return tsl_cost_tied_allreduce_elem_s(e->cluster, &m->layers[at], &plan->layer[at],
                                          plan->stages[0].first_device,
                                          plan->stages[st].first_device, plan->stages[st].n_devices,
                                          tsl_cost_tied_elem_bytes(&e->knobs));
}

/* A zero-bubble schedule has no closed form over unequal stages: the event
 * simulator prices it (pipesim.h), with the stacks' sync after each stage's last W
 * (or Eq. 9's inside it under PAPER). */
static int zb_iter(tsl_engine_t *e, const tsl_plan_t *plan, tsl_pipeline_out_t *t)
{
    if (e->sim == NULL && (e->sim = malloc(sizeof(*e->sim))) == NULL)
        return -1;
    tsl_plan_sim_t *sim = e->sim;
    tsl_plan_sim_input(plan, tsl_engine_cost_mode(e) == TSL_COST_PAPER, sim);
    size_t bytes = tsl_pipesim_in_ws_bytes(&sim->in);
    if (bytes == 0)
        return -1;
    uint64_t h[2];
    double flush_s, iter_s;
    tsl_sim_memo_key(&sim->in, h);
    if (!tsl_sim_memo_get(e->sim_memo, h, &flush_s, &iter_s)) {
        tsl_pipesim_out_t out;
        if ((bytes > e->sim_ws_bytes && sim_grow(e, bytes) != 0) ||
            tsl_pipesim_run(&sim->in, e->sim_ws, bytes, &out, NULL) != 0)
            return -1;
        flush_s = out.flush_s;
        iter_s = out.iter_s;
        tsl_sim_memo_put(&e->sim_memo, h, flush_s, iter_s);
    }
    t->flush_s = flush_s;
    t->opt_tail_s = iter_s - flush_s;
    return 0;
}

/*
 * Megatron-LM's EP all-to-all overlap (knobs.moe_a2a_overlap; docs/cost-model.md "EP
 * all-to-all overlap"): in the steady state its schedule runs a micro-batch's forward
 * and another's backward as one step (combined_1f1b), each one's EP all-to-alls under
 * the other's compute, saving ep_save_s per merged step of a whole micro-batch. Stage s
 * saves tsl_pipeline_ep_overlap_s per micro-batch in the closed form. Megatron runs it
 * at PP 1 or interleaved only, and never beside full recompute (TransformerConfig
 * asserts recompute_granularity != 'full'; the export writes no flag then); DualPipeV's
 * F&B holds the overlap already and the zero-bubble schedules are priced exposed.
 */
static void ep_overlap(const tsl_plan_t *plan, double *nosync, double *sync)
{
    for (uint32_t s = 0; s < plan->pp; s++) {
        double save = tsl_plan_ep_overlap_s(plan, s); /* the simulator's input likewise */
        nosync[s] -= save;
        sync[s] -= save;
    }
}

/* Whether DeepSpeed's rule (knobs.ds_bf16_zero0) priced any of plan's layers with
 * BF16_Optimizer: the plan then records ds_bf16_optimizer, so that its document prices
 * the same read back under any target and its export is checked as that optimizer. */
static bool ds_bf16_zero0_priced(const tsl_engine_t *e, const tsl_plan_t *plan)
{
    for (uint32_t i = 0; i < plan->n_layers && e->knobs.ds_bf16_zero0; i++)
        if (tsl_cost_ds_bf16_zero0_runs(&e->knobs, &plan->layer[i], plan->pp > 1))
            return true;
    return false;
}

/* Whether plan runs TP beside pipeline stages, where the deepspeed target's legacy_p2p
 * (DeepSpeed's PartitionedTensor p2p under Megatron-DeepSpeed, tsl_target_knobs) prices
 * its boundaries; elsewhere that knob prices nothing (TP 1 sends the whole boundary, and
 * the target runs plain 1F1B) and the plan does not record it, so that a TP-free plan's
 * document and export stay as before cost model 101. */
static bool ds_tp_beside_stages(const tsl_plan_t *plan)
{
    for (uint32_t i = 0; i < plan->n_layers && plan->pp > 1; i++)
        if (tsl_strategy_degree(&plan->layer[i], TSL_DIM_TP) > 1)
            return true;
    return false;
}

/* Whether the engine's stack reduces gradients per model chunk under interleaving
 * (pipeline.h tsl_pipeline_chunk_rs_s): Megatron-core's optimizer step with
 * overlap_grad_reduce (align_grad_reduce its default), not Megatron-LM 2021's
 * legacy_p2p schedule, which reduces after the whole backward; STACK only (Eq. 9
 * keeps its sync). The plan's schedule decides the rest (chunk_rs_priced). */
static bool chunk_rs_stack(const tsl_engine_t *e)
{
    return tsl_engine_cost_mode(e) == TSL_COST_STACK &&
           tsl_opt_step_megatron_core(e->knobs.opt_step) && !e->knobs.grad_reduce_exposed &&
           !e->knobs.legacy_p2p;
}

/* 1F1B at PP > 1, plain or interleaved in Megatron's group N = P, priced by the
 * closed form (another N and the zero-bubble schedules go to the event simulator,
 * which keeps the reduce under the last backward). */
static bool chunk_rs_priced(const tsl_engine_t *e, const tsl_plan_t *plan)
{
    return chunk_rs_stack(e) && plan->pp > 1 && !plan->schedule && !plan->vp_group;
}

/* Each stage's sync with its DP reduce taken from under its last backward and run
 * per chunk as Megatron-core launches it, what runs beside the drain's backwards at
 * the cluster's overlap slowdown k as it paid under the last backward
 * (tsl_pipeline_chunk_rs_cost_s). Plain 1F1B is one chunk: under align_grad_reduce
 * only the first stage lifts no_sync for its last backward (schedules.py
 * grad_sync_first_stage), bucketed under it as priced; every other stage launches its
 * whole reduce after its last backward. The move is written into the stage's time_s,
 * not only into the closed form's sync: the event simulator (tsl_plan_sim_input), the
 * trace and the plan document read time_s, so every reader of the plan takes the one
 * rule priced here (cost model 161; dp_rs_sync_s keeps what the layers charged). */
static void chunk_rs_sync(tsl_plan_t *plan, const double *nosync, const double *fwd,
                          const double *p2p, double k, double *sync)
{
    uint32_t v = plan->interleave > 1 ? plan->interleave : 1;
    for (uint32_t s = v > 1 ? 0 : 1; s < plan->pp; s++) {
        tsl_plan_stage_t *st = &plan->stages[s];
        double beta = (nosync[s] - fwd[s] - p2p[s] / 2.0) / v; /* a chunk's backward */
        double moved =
            tsl_pipeline_chunk_rs_cost_s(st->dp_rs_s, beta, s, plan->pp, v, k) - st->dp_rs_sync_s;
        sync[s] += moved;
        st->time_s += moved;
    }
}

static void finish_plan(tsl_engine_t *e, tsl_plan_t *plan)
{
    double nosync[TSL_PLAN_MAX_STAGES], sync[TSL_PLAN_MAX_STAGES], mem[TSL_PLAN_MAX_STAGES],
        fwd[TSL_PLAN_MAX_STAGES], p2p[TSL_PLAN_MAX_STAGES], opt[TSL_PLAN_MAX_STAGES];
    uint64_t peak = 0;
    for (uint32_t s = 0; s < plan->pp; s++) {
        nosync[s] = plan->stages[s].time_nosync_s;
        sync[s] = plan->stages[s].time_s;
        fwd[s] = plan->stages[s].fwd_s;
        p2p[s] = plan->stages[s].p2p_s;
        opt[s] = plan->stages[s].opt_s;
        mem[s] = (double)plan->stages[s].peak_bytes;
        if (plan->stages[s].peak_bytes > peak)
            peak = plan->stages[s].peak_bytes;
    }
    /* Megatron's group size N, kept where it is not the default P; the bubble of
     * another N (the order of its table) is the event simulator's */
    plan->vp_group = plan->interleave > 1 && !plan->schedule &&
                             tsl_pipeline_vp_group(plan->pp, e->vp_group) != plan->pp
                         ? e->vp_group
                         : 0;
    plan->tie_s = tied_allreduce_s(e, plan);
    if (ds_bf16_zero0_priced(e, plan))
        plan->ds_bf16_optimizer = true;
    if (e->space->target == TSL_TARGET_DEEPSPEED && !ds_tp_beside_stages(plan))
        plan->legacy_p2p = false;
    if (plan->pp <= 1) { /* no stage boundary: the engine's p2p prices nothing */
        plan->ds_pipe_engine = false;
        plan->torch_pipelining = false; /* nor torch's pipelining */
    }
    ep_overlap(plan, nosync, sync);
    if (chunk_rs_priced(e, plan))
        chunk_rs_sync(plan, nosync, fwd, p2p, e->cluster->overlap_slowdown, sync);
    tsl_pipeline_in_t in = {.n_stages = plan->pp,
                            .n_micro = plan->n_micro,
                            .interleave = plan->interleave,
                            .paper = tsl_engine_cost_mode(e) == TSL_COST_PAPER,
                            .fwd_s = fwd,
                            .nosync_s = nosync,
                            .sync_s = sync,
                            .p2p_s = p2p,
                            .opt_s = opt,
                            .tie_s = plan->tie_s,
                            .p2p_blocking = tsl_cost_vp_blocking(&e->knobs),
                            .p2p_both = tsl_cost_p2p_rendezvous(&e->knobs)};
    tsl_pipeline_out_t t;
    tsl_pipeline_iter(&in, &t);
    if ((plan->schedule || plan->vp_group) && zb_iter(e, plan, &t) != 0)
        t.flush_s = INFINITY;
    plan->opt_tail_s = t.opt_tail_s;
    plan->iter_time_s = t.flush_s + t.opt_tail_s;
    plan->samples_per_s = plan->global_batch / plan->iter_time_s;
    plan->tokens_per_s = plan->samples_per_s * e->model->tokens_per_sample;
    plan->peak_bytes = peak;
    plan->alpha_t = tsl_pipeline_balance(plan->pp, sync);
    plan->alpha_m = tsl_pipeline_balance(plan->pp, mem);
    plan->valid = isfinite(plan->iter_time_s) && plan->iter_time_s > 0;
}

/* Whether the space weighs interleaving for (P, m) at all: several stages, and
 * Megatron's schedule runs the request's N (0: P, m a multiple of P; pipeline.h
 * tsl_pipeline_vp_check). */
static bool interleave_on(const tsl_engine_t *e, uint32_t P, uint32_t m)
{
    return e->space->interleave && P >= 2 && tsl_pipeline_vp_check(P, m, e->vp_group) == 0;
}

/* The most chunk micro-batches m·v the space weighs interleaving at for P stages:
 * under Megatron's default group N = P the closed form prices it (finish_plan:
 * tsl_pipeline_iter, O(P) whatever m·v; the memory's walk, chunk_held, O(m·v) a
 * stage), so up to what eval takes (TSL_PIPESIM_MAX_MICRO); another N the event
 * simulator prices (zb_iter, 2·m·v ops a stage), so up to TSL_SEARCH_SIM_MAX_MICRO,
 * for search time. */
static uint64_t interleave_reach(const tsl_engine_t *e, uint32_t P)
{
    return tsl_pipeline_vp_group(P, e->vp_group) == P ? TSL_PIPESIM_MAX_MICRO
                                                      : TSL_SEARCH_SIM_MAX_MICRO;
}

/* Whether v chunks per stage are weighed on this partition: v up to
 * TSL_SEARCH_MAX_INTERLEAVE, m·v chunk micro-batches within interleave_reach and a
 * layer per chunk on every stage; past the doubling's 2 and 4 (which take
 * any stage of v layers, cut as tsl_pipeline_chunk_layers cuts it), every stage
 * must also cut into v chunks of one size (tsl_pipeline_chunks_even), the split
 * T_v's bubble / v holds for: 3 chunks of a 24-layer stage, not of a 25-layer one.
 * Its Transformer layers divide by v — the cut Tessel's executor makes too
 * (worker/exec/exec_rank.c chunk_plan: the embedding with the first chunk, the
 * head with the last) —, or, under --target megatron, do with the embedding and/or
 * the head counted as a layer (--account-for-embedding/loss-in-pipeline-split,
 * which the executor does not cut). A stack's own rules (Megatron-LM's splits) the
 * target check adds (admits). */
static bool interleave_fits(const tsl_engine_t *e, uint32_t P, uint32_t m,
                            const uint32_t *first_layer, uint32_t v)
{
    if (v < 2 || v > TSL_SEARCH_MAX_INTERLEAVE || (uint64_t)m * v > interleave_reach(e, P))
        return false;
    bool any = v <= TSL_SEARCH_DOUBLE_INTERLEAVE && (v & (v - 1)) == 0;
    for (uint32_t s = 0; s < P; s++) {
        uint32_t n = first_layer[s + 1] - first_layer[s], mtp;
        bool emb, head;
        if (n < v)
            return false;
        stage_ends(e->model, first_layer[s], n, &emb, &head, &mtp);
        if (!any && !tsl_pipeline_chunks_even(n, emb, head, mtp, v,
                                              e->space->target == TSL_TARGET_MEGATRON))
            return false;
    }
    return true;
}

/* What bounds every interleave v of one configuration from below: each stage's
 * least time per micro-batch K and stage 0's least layer-DP objective under any
 * interleave (floor_stage: search_engine.h least_k_s, least_obj_s), made by its
 * plain costing. */
typedef struct chunk_floor {
    bool none;     /* no bound known: 0 (interleave_bound_s) */
    bool closed;   /* priced in the closed form (N = P), not by the event simulator */
    bool chunk_rs; /* the stack reduces per chunk (chunk_rs_stack): stage 0's sync moves */
    uint32_t P, m;
    double k_s[TSL_PLAN_MAX_STAGES];
    double obj0_s;
} chunk_floor_t;

/* f from the plain plan p, just costed. Megatron-LM's EP all-to-all overlap, where
 * priced, runs interleaved and not in plain 1F1B at PP > 1
 * (tsl_plan_ep_overlap_runs), taking from the stage times what no layer's cost
 * shows: no bound then. */
static void chunk_floor_init(const tsl_engine_t *e, const tsl_plan_t *p, chunk_floor_t *f)
{
    f->none = p->moe_a2a_overlap && p->ep > 1;
    f->closed = tsl_pipeline_vp_group(p->pp, e->vp_group) == p->pp;
    f->chunk_rs = chunk_rs_stack(e);
    f->P = p->pp;
    f->m = p->n_micro;
    memcpy(f->k_s, e->least_k_s, p->pp * sizeof(f->k_s[0]));
    f->obj0_s = e->least_obj_s[0];
}

/* The fastest interleave v could be, from f: every stage at its least K, no
 * sync, p2p nor step, the bubble divided by v. An interleaved stage's time per
 * micro-batch is its layers' forward and backward under strategies that run them
 * within its budget (floor_stage), with the moves between layouts and its p2p on
 * top; the stacks' form and Eq. 9 (pipeline.h) grow with each stage's time, so
 * T_v is no less. (Not the plain plan's own stage times: the layer DP, with its
 * final peak check, is not monotone in the memory held — BERT-Huge-32 at PP 2,
 * m 64 has v = 4's stage 0 faster than 1F1B's, 0.18188 against 0.18238 s.) */
static double interleave_bound_s(const tsl_engine_t *e, const chunk_floor_t *f, uint32_t v)
{
    double zero[TSL_PLAN_MAX_STAGES];
    if (f->none)
        return 0.0;
    for (uint32_t s = 0; s < f->P; s++)
        zero[s] = 0;
    tsl_pipeline_in_t in = {.n_stages = f->P,
                            .n_micro = f->m,
                            .interleave = v,
                            .paper = tsl_engine_cost_mode(e) == TSL_COST_PAPER,
                            .fwd_s = zero,
                            .nosync_s = f->k_s,
                            .sync_s = f->k_s,
                            .p2p_s = zero,
                            .opt_s = zero};
    tsl_pipeline_out_t t;
    tsl_pipeline_iter(&in, &t);
    return t.flush_s;
}

/* The same with stage 0's end: its backward ends last, so its sync and step are
 * never hidden (pipeline.h: tail_0 = 0), and its m micro-batches run before them
 * while each other stage adds at least its time over v to the fill and drain:
 *
 *   T_v + opt ≥ m·K_0 + sync_0 + opt_0 + Σ_{s>0} K_s / v
 *
 * under both forms (m·max K + (ΣK − max K)/v ≥ m·K_0 + (ΣK − K_0)/v). Stage 0's
 * m·K_0 + sync_0 + opt_0 is its layer DP's objective (search_eval.c
 * fill_stage_rows, the moves aside; no boundary move on stage 0), at least
 * floor_stage's. Only in the closed form: the event simulator, which
 * prices another group size N (finish_plan), lets a chunk's sync start before
 * stage 0's last backward (Llama2-7B on 16 A100 at N 8: v = 2 priced 3.42097 s
 * where this form says 3.43396). Nor where the stack reduces per chunk
 * (chunk_rs_sync): the objective's sync_0 holds the DP reduce under the last
 * backward, which that stack runs elsewhere, so it bounds nothing. */
static double interleave_end_bound_s(const chunk_floor_t *f, uint32_t v)
{
    double rest = 0;
    if (f->none || !f->closed || f->chunk_rs)
        return 0.0;
    for (uint32_t s = 1; s < f->P; s++)
        rest += f->k_s[s];
    return f->obj0_s + rest / v;
}

/* No schedule runs a stage's m micro-batches in less than m·K, K its time per
 * micro-batch without p2p less what DualPipeV's overlapped F&B steps save
 * (fb_save_s, subtracted whatever the schedule: a smaller K bounds no less):
 * Eq. 9 and the stacks' form are at least (m − 1)·max + Σ of the stages' times
 * (pipeline.h), interleaving m·max, the zero-bubble schedules zb_bound_s, and the
 * sync, the optimizer tail and the p2p only add. So once one stage has
 * m·K ≥ B / bar_samples_per_s, the configuration cannot beat the bar, whatever
 * its other stages and its schedule: the later stages' DPs are skipped.
 *
 * K is the stage's own for the schedules that keep its layer strategies (this
 * one, the zero-bubble ones). Where interleaves follow this plain configuration
 * (chunks: eval_group), they solve the layer DP again and may run the stage
 * faster than 1F1B does (interleave_bound_s: BERT-Huge-32 at PP 2, m 64), so K is
 * at most floor_stage's least_k_s, which holds for every v; with no floor known
 * (chunk_floor_init's none) nothing bounds them and the stage prunes nothing. */
static bool below_bar(const tsl_engine_t *e, const tsl_plan_t *plan, uint32_t s, uint32_t B,
                      double bar, bool chunks)
{
    const tsl_plan_stage_t *st = &plan->stages[s];
    if (bar <= 0 || (chunks && plan->moe_a2a_overlap && plan->ep > 1))
        return false;
    double k = st->time_nosync_s - st->p2p_s - st->fb_save_s;
    if (chunks)
        k = tsl_min(k, e->least_k_s[s]);
    if (e->v_next) /* a V follows, its ranks other rows: its bound too (v_floor_stage) */
        k = tsl_min(k, e->v_floor_s);
    return plan->n_micro * k * bar >= B;
}

static bool tail_layer(const tsl_model_t *md, uint32_t i);
static uint32_t zb_schedules(const tsl_engine_t *e, uint32_t P, uint32_t m,
                             const uint32_t *first_layer);

/*
 * The least time per micro-batch of a V's busiest rank, the V that follows the plain
 * configuration being costed (eval_zero_bubble: ZBV, DualPipeV on the plain plan's
 * cut and layer strategies, e->zb_choice), from the stages the plain configuration
 * has costed so far — what below_bar holds the plain configuration to beside its own
 * stages, so that pruning it (and so the V, which needs its strategies) loses no V
 * that would have beaten the bar.
 *
 * Proof. Rank r of the V runs the blocks of its parts (set_vparts: v_next_part here,
 * the same tsl_pipeline_v_parts of the same cut), each at the strategy the plain
 * stage holding it chose. Its stage time is K_r = Σ (F + B) of its rows plus the moves
 * between rows, its ends' and its boundary's terms (all >= 0), and below_bar's
 * premise gives T_V >= m·(K_r − p2p − save_r) for every r, where save_r, DualPipeV's
 * F&B saving (stage_times: tsl_pipesim_fb_save_s over the rank's sums F, B, C of
 * forward, backward and comm_s), is at most min(c, a), a = min(C, F + B), c = F + B − a:
 * so K_r − save_r >= X_r = max(F + B − C, min(C, F + B)) where a DualPipeV may save
 * (v_less_comm), X_r = F + B where none does. X_r only grows with each block's F + B
 * and C and with its F + B − C, so a block whose stage is not costed yet may count
 * at its class's least of each over the group's strategies (the V's choice is one of
 * them). Both hold only where every rank prices a block at a strategy as every other
 * does: a cluster of alike nodes whose stage blocks are all stage 0's twins
 * (stage_twin: the same links, the same memo row; env.tied_copy moves only a tied
 * head). The ends (embedding, head, MTP) count 0, and a rank with a block of a class
 * no stage has costed yet proves nothing (its terms may be any size). So
 * T_V >= m·max_r X_r, and m·max_r X_r·bar >= B proves every V below the bar.
 */
static bool v_floor_start(tsl_engine_t *e, const tsl_group_strategies_t *g, uint32_t P, uint32_t m,
                          const uint32_t *first_layer)
{
    uint32_t count[TSL_PLAN_MAX_STAGES], L = e->model->n_layers;
    e->v_floor_s = 0;
    if (!uniform_blocks(e) || stage_twin(e, g->group_size, 1) != 0)
        return false;
    e->v_less_comm = (zb_schedules(e, P, m, first_layer) & TSL_SPACE_DUALPIPEV) &&
                     e->space->target != TSL_TARGET_TORCHTITAN && !e->knobs.fb_serial;
    for (uint32_t s = 0; s < P; s++)
        count[s] = first_layer[s + 1] - first_layer[s];
    tsl_pipeline_v_parts(P, count, e->v_next_part);
    for (uint32_t i = 0; i < 2 * L; i++)
        e->v_layer_s[i] = NAN;
    for (uint32_t i = 0; i < 3 * e->n_classes; i++)
        e->v_class_s[i] = NAN;
    return true;
}

/* X_r's sums over the blocks of layers [from, to) (v_floor_start): F + B, C and
 * F + B − C; false where a block's class has no figures yet. */
static bool v_part_sums(const tsl_engine_t *e, uint32_t from, uint32_t to, double sum[3])
{
    for (uint32_t l = from; l < to; l++) {
        if (!tsl_model_is_block(e->model, l) || tail_layer(e->model, l))
            continue;
        const double *lay = &e->v_layer_s[2 * l], *cls = &e->v_class_s[3 * e->layer_class[l]];
        if (!isnan(lay[0])) {
            sum[0] += lay[0];
            sum[1] += lay[1];
            sum[2] += lay[0] - lay[1];
        } else if (!isnan(cls[0])) {
            for (uint32_t k = 0; k < 3; k++)
                sum[k] += cls[k];
        } else {
            return false;
        }
    }
    return true;
}

/* DualPipeV's F&B per micro-batch on a rank of sums sum (v_part_sums) at least:
 * tsl_pipesim_fb_save_s's max(c, a) + (κ − 1)·min(c, a), κ >= 1 the overlap
 * slowdown, grows with c and with a, which are at least F + B − C and min(C, F + B)
 * (where C > F + B, a = F + B and c = 0: the form at those is at most F + B). */
static double v_fb_least_s(const tsl_engine_t *e, const double sum[3])
{
    double c = sum[2], a = tsl_min(sum[1], sum[0]);
    /* a flex dispatcher's k (fb_overlap_k) may fall below the cluster's, never below 1 */
    double k = e->knobs.moe_flex && e->knobs.etp <= 1 && tsl_engine_cost_mode(e) != TSL_COST_PAPER
                   ? 1.0
                   : e->cluster->overlap_slowdown;
    return tsl_max(c, a) + (tsl_max(k, 1.0) - 1.0) * tsl_min(c, a);
}

/* After the plain configuration's stage s (its rows in model order, e->choice and
 * e->class_row as eval_stage left them): its blocks' figures, its classes' least,
 * and v_floor_s = max_r X_r again (v_floor_start). */
static void v_floor_stage(tsl_engine_t *e, const tsl_group_strategies_t *g, uint32_t P,
                          const uint32_t *first_layer, uint32_t s)
{
    for (uint32_t l = first_layer[s]; l < first_layer[s + 1]; l++) {
        const tsl_layer_cost_t *row = e->class_row[e->layer_class[l]], *c;
        double *cls = &e->v_class_s[3 * e->layer_class[l]];
        if (isnan(cls[0])) {
            cls[0] = cls[1] = cls[2] = INFINITY;
            for (uint32_t j = 0; j < g->n; j++) { /* fmin: an infeasible row's ∞ − ∞ is NaN */
                c = &row[j];
                cls[0] = fmin(cls[0], c->fwd_s + c->bwd_s);
                cls[1] = fmin(cls[1], c->comm_s);
                cls[2] = fmin(cls[2], c->fwd_s + c->bwd_s - c->comm_s);
            }
        }
        c = &row[e->choice[l - first_layer[s]]];
        e->v_layer_s[2 * l] = c->fwd_s + c->bwd_s;
        e->v_layer_s[2 * l + 1] = c->comm_s;
    }
    double most = 0;
    const uint32_t *part = e->v_next_part;
    for (uint32_t r = 0; r < P; r++) {
        double sum[3] = {0, 0, 0};
        if (!v_part_sums(e, part[r], part[r + 1], sum) ||
            !v_part_sums(e, part[2 * P - 1 - r], part[2 * P - r], sum))
            continue;
        most = tsl_max(most, e->v_less_comm ? v_fb_least_s(e, sum) : sum[0]);
    }
    e->v_floor_s = most;
}

/* The bar below_bar holds a configuration to (0: none): under prune_below_bar
 * every schedule's; else the engine's need, for the plain configuration only —
 * the one costed first, whose stages (the zero-bubble schedules keep them) and
 * floors (floor_stage, for every interleave) bound every schedule of it, so that
 * none of them is costed either. Never in a stack's space: its uniform
 * passes tell a configuration that fits from one that does not (eval_uniform). */
static double prune_bar(const tsl_engine_t *e, uint32_t v, uint32_t sched, const uint32_t *given)
{
    if (e->prune_below_bar)
        return e->bar_samples_per_s;
    if (e->space->target || e->space->uniform_strategy)
        return 0.0;
    return v == 1 && sched == 0 && given == NULL ? e->need_samples_per_s : 0.0;
}

/* A plan with an SDP level under knobs.megatron_fsdp (target megatron) runs as
 * Megatron-FSDP, whose optim_grads_params turns --overlap-param-gather and
 * --overlap-grad-reduce on itself (megatron_fsdp.py at d98e8a6): the plan says so,
 * so that its document prices as searched without the target and its export
 * writes both (cost.h knobs.megatron_fsdp). */
static void record_megatron_fsdp(const tsl_engine_t *e, tsl_plan_t *plan)
{
    if (!e->knobs.megatron_fsdp || !tsl_plan_has_sdp(plan))
        return;
    plan->overlap_param_gather = true;
    plan->grad_reduce_exposed = false;
}

/* Whether layer i belongs to the model's tail that runs with its head: the head
 * itself and the MTP depths before it (pipeline.h tsl_pipeline_chunk_layers). */
static bool tail_layer(const tsl_model_t *md, uint32_t i)
{
    const tsl_layer_t *l = &md->layers[i];
    return l->kind == TSL_LAYER_HEAD || l->kind == TSL_LAYER_MTP || l->mtp_depth > 0;
}

/*
 * Where a V schedule (ZBV, DualPipeV: torch's style="v", DeepSeek's DualPipeV) runs
 * each layer: rank r holds virtual stages r and 2P − 1 − r, so rank 0 holds the
 * first (the embedding) and the last (the head with its loss, and the MTP depths
 * DeepSeek-V3 keeps beside them, Sec. 3.2.3), and rank P − 1 the two middle ones.
 * The plan's stages stay cut in model order, each rank running as many layers as
 * its stage counts; the parts are the torchtitan export's (pipeline.h
 * tsl_pipeline_v_parts: each stage's count, the first half rounded up in its first
 * chunk), and each rank prices the layers it runs, in its chunks' order (stage_rows)
 * — on a model of uneven blocks (DeepSeek-V3's three dense layers first) the blocks
 * the export places, whatever their kind. A tied head there sits beside its
 * embedding on rank 0 (one table, no copy, no all-reduce; tied_allreduce_s). Each
 * chunk's layers hold their own count of micro-batches (v_held): rank 0's second, the
 * head's, at most one.
 */
static void set_vparts(tsl_engine_t *e, uint32_t P, uint32_t sched, const uint32_t *first_layer)
{
    uint32_t count[TSL_PLAN_MAX_STAGES];
    e->v_on = false;
    e->row_at = NULL;
    if (!tsl_pipesim_sched_is_v(sched) || P < 2)
        return;
    for (uint32_t s = 0; s < P; s++)
        count[s] = first_layer[s + 1] - first_layer[s];
    tsl_pipeline_v_parts(P, count, e->v_part);
    e->v_on = true;
}

/* One configuration at one interleave v. */
static void eval_config(tsl_engine_t *e, const tsl_group_strategies_t *g, uint32_t B, uint32_t P,
                        uint32_t m, uint32_t v, uint32_t sched, const uint32_t *first_layer,
                        const uint32_t *given, tsl_plan_t *plan)
{
    plan->valid = false;
    e->stats.configs++;
    snprintf(plan->label, sizeof(plan->label), "%s", e->space->label);
    tsl_plan_set_knobs(plan, &e->knobs);
    if (!plan->fp8_recipe) /* a bf16 plan weighed beside the FP8 ones runs every linear bf16:
                              the overrides apply in a quantized autocast only (module_prec.h) */
        plan->module_prec = 0;
    if (plan->moe_alltoall && tsl_model_moe_layers(e->model) == 0)
        plan->moe_alltoall = false; /* no MoE layer runs a dispatcher (target megatron's default) */
    if (plan->moe_flex && tsl_model_moe_layers(e->model) == 0)
        plan->moe_flex = false;
    if (plan->moe_unfused_permute && tsl_model_moe_layers(e->model) == 0)
        plan->moe_unfused_permute = false;
    if (plan->moe_fused_mlp && tsl_model_moe_layers(e->model) == 0)
        plan->moe_fused_mlp = false;
    if (plan->moe_fused_srelu && tsl_model_moe_layers(e->model) == 0)
        plan->moe_fused_srelu = false;
    if (plan->moe_a2a_overlap && tsl_model_moe_layers(e->model) == 0)
        plan->moe_a2a_overlap = false;
    if (P <= 1) /* FSDP2 reshards every micro-batch without PP: priced so (cost.h) */
        plan->sdp_nosync = false;
    else if (plan->sdp_nosync) /* held the whole iteration: keeping to the backward is moot */
        plan->sdp_keep_weights = false;
    plan->n_devices = e->cluster->n_devices;
    plan->n_layers = e->model->n_layers;
    plan->pp = P;
    plan->global_batch = B;
    plan->n_micro = m;
    plan->micro_batch = B / m;
    plan->interleave = sched ? 0 : v;
    plan->schedule = sched;
    plan->budget_bytes = e->budget_bytes;
    if (e->node_order) {
        plan->n_nodes = e->cluster->n_nodes;
        memcpy(plan->node_order, e->node_order, plan->n_nodes * sizeof(uint16_t));
    }
    double bar = prune_bar(e, v, sched, given);
    /* interleaves follow this one (eval_group): floor_stage bounds its stages */
    bool chunks = v <= 1 && !sched && !given && interleave_on(e, P, m);
    set_vparts(e, P, sched, first_layer);
    plan->v_chunks = e->v_on;
    e->v_next = bar > 0 && !sched && !given && v <= 1 &&
                (zb_schedules(e, P, m, first_layer) & (TSL_SPACE_ZBV | TSL_SPACE_DUALPIPEV));
    bool v_floor = e->v_next && v_floor_start(e, g, P, m, first_layer);
    e->v_floor_s = 0;
    uint32_t s = 0;
    while (s < P && eval_stage(e, g, plan, s, first_layer, B / m, m, given) &&
           (!v_floor || (v_floor_stage(e, g, P, first_layer, s), true)) &&
           !below_bar(e, plan, s, B, bar, chunks))
        s++;
    if (s == P) {
        record_megatron_fsdp(e, plan);
        finish_plan(e, plan);
    }
    e->v_on = false; /* the rows of every other caller: the model's order */
    e->v_next = false;
}

/* Whether the space's stack runs plan (always, without a target). */
static bool admits(const tsl_engine_t *e, const tsl_plan_t *plan)
{
    return !e->space->target ||
           tsl_target_check(e->space->target, plan, e->model, e->tview, NULL) == 0;
}

/* The zero-bubble schedules the space weighs for this partition: ZB-H1, and ZBV and
 * DualPipeV where every stage has a layer per chunk (DualPipeV: m >= 2P). */
static uint32_t zb_schedules(const tsl_engine_t *e, uint32_t P, uint32_t m,
                             const uint32_t *first_layer)
{
    uint32_t mask = P >= 2 && m <= TSL_SEARCH_SIM_MAX_MICRO ? e->space->zero_bubble : 0;
    if (m < 2 * P)
        mask &= ~TSL_SPACE_DUALPIPEV;
    if ((uint64_t)m * 2 > TSL_SEARCH_SIM_MAX_MICRO) /* a V's two chunks */
        mask &= ~(TSL_SPACE_ZBV | TSL_SPACE_DUALPIPEV);
    for (uint32_t s = 0; s < P && (mask & (TSL_SPACE_ZBV | TSL_SPACE_DUALPIPEV)); s++)
        if (first_layer[s + 1] - first_layer[s] < 2)
            mask &= ~(TSL_SPACE_ZBV | TSL_SPACE_DUALPIPEV);
    return mask;
}

/* A stage cannot start before the first micro-batch's forward reached it, then
 * runs m micro-batches' F, B and W at best back to back: under ZB-H1 (p's own
 * stages) no iteration is shorter than max_s (m·K_s + Σ_{k<s} f_k / 2), K_s the
 * stage's time without p2p (half the forward: the bound ZBV's even chunks had; a V
 * is not bounded by p's stages, eval_zero_bubble). */
static double zb_bound_s(const tsl_plan_t *p)
{
    double bound = 0, reach = 0;
    for (uint32_t s = 0; s < p->pp; s++) {
        const tsl_plan_stage_t *st = &p->stages[s];
        bound = fmax(bound, p->n_micro * (st->time_nosync_s - st->p2p_s) + reach);
        reach += st->fwd_s / 2;
    }
    return bound;
}

/* plan's layer strategies as indices into g (into e->zb_choice); false when one
 * is not there. */
static bool plan_choices(tsl_engine_t *e, const tsl_group_strategies_t *g, const tsl_plan_t *plan)
{
    for (uint32_t i = 0; i < plan->n_layers; i++) {
        uint32_t j = 0;
        while (j < g->n && !tsl_strategy_equal(&g->items[j], &plan->layer[i]))
            j++;
        if (j == g->n)
            return false;
        e->zb_choice[i] = j;
    }
    return true;
}

/* Every stage's peak within its budget. */
static bool fits(const tsl_engine_t *e, const tsl_plan_t *p)
{
    for (uint32_t s = 0; s < p->pp; s++)
        if (p->stages[s].peak_bytes >
            tsl_engine_stage_budget(e, p->stages[s].first_device, p->stages[s].n_devices))
            return false;
    return true;
}

/* What a zero-bubble plan's own stages and layer strategies (choice) take under plain
 * 1F1B: its iter_time_1f1b_s (plan.h), the schedule's reason and what a trial of a
 * ZB-H1 plan, run as 1F1B over its stages, is held to. One figure for a searched plan
 * and a given one (eval), so that plan and eval print the same "without it"; costed
 * in scratch, with no bar to prune it and not counted among the configurations weighed
 * (the figure is recorded, not compared). 0 where it has no finite time. */
static double plain_1f1b_s(tsl_engine_t *e, const tsl_group_strategies_t *g, uint32_t B, uint32_t P,
                           uint32_t m, const uint32_t *first_layer, const uint32_t *choice,
                           tsl_plan_t *scratch)
{
    bool prune = e->prune_below_bar;
    uint64_t configs = e->stats.configs;
    e->prune_below_bar = false;
    tsl_plan_init(scratch);
    eval_config(e, g, B, P, m, 1, 0, first_layer, choice, scratch);
    e->prune_below_bar = prune;
    e->stats.configs = configs;
    return scratch->valid ? scratch->iter_time_s : 0;
}

/* A zero-bubble schedule on the plain configuration's strategies (e->alt, just
 * costed) that is over the memory budget: the schedule holds more in flight than
 * 1F1B did (a V: up to 2P + 1 micro-batches on rank 0, pipeline.h), so the
 * strategies 1F1B chose with room to spare may not fit it while leaner ones do.
 * Then the layer DP solves the schedule's own strategies under its own held counts
 * (eval_stage: v_held, tsl_pipeline_inflight_zb) into e->alt. GPT3-65B on 8x8 A100
 * at PP 4, m 128: at cost model 174 the DP-4 all-reduce over two nodes takes NCCL's
 * tree, plain DP beats ZeRO-1 under 1F1B by 0.06 % at 74 GiB, and DualPipeV on those
 * strategies needs 81 GiB; on its own ZeRO-1 strategies it fits at 64 GiB. True
 * where it did. */
static bool zb_own_choice(tsl_engine_t *e, const tsl_group_strategies_t *g, uint32_t B, uint32_t P,
                          uint32_t m, const uint32_t *first_layer, uint32_t sched,
                          double best_samples_per_s)
{
    if (!e->alt->valid || fits(e, e->alt))
        return false;
    /* of use only above the configuration's best so far and the sweep's bar: its own
     * stages prune it below them (below_bar, as each V is pruned on its stages) */
    double at = fmax(e->bar_samples_per_s, best_samples_per_s), most = 0, most_fb = 0;
    /* e->alt, just costed in full on the same rows, left each stage's floors
     * (zb_floor_stage). Every stage's K in the re-solve is at least zb_floor_s, so
     * where one stage's reaches the bar below_bar prunes the re-solve on that stage or
     * an earlier one: it ends as e->alt does here, not valid within the budget. And
     * ZB-H1 and ZBV overlap no F with a B: no iteration of theirs is shorter than
     * m·(F + B) of a stage (zb_bound_s, and the V's floor without DualPipeV's saving),
     * so where one stage's least F + B reaches the configuration's best, the re-solve,
     * if valid, is no faster and is not kept — unless Megatron-LM's EP overlap takes
     * from the stage times what no layer shows (tsl_plan_ep_overlap_runs). Either way
     * nothing is lost by not running it. Less a margin for rounding (the floors sum
     * their rows in another order than stage_times). */
    for (uint32_t s = 0; s < P; s++) {
        most = tsl_max(most, e->zb_floor_s[s]);
        most_fb = tsl_max(most_fb, e->zb_floor_fb_s[s]);
    }
    bool no_fb = sched != TSL_PIPESIM_SCHED_DUALPIPEV && !e->knobs.moe_a2a_overlap;
    if (!e->zb_floor_off &&
        ((double)m * (most * (1 - 1e-9)) * at >= B ||
         (no_fb && (double)m * (most_fb * (1 - 1e-9)) * best_samples_per_s >= B))) {
        e->stats.zb_resolves_skipped++;
        return false;
    }
    e->stats.zb_resolves++;
    bool prune = e->prune_below_bar;
    double bar = e->bar_samples_per_s;
    e->prune_below_bar = true;
    e->bar_samples_per_s = at;
    tsl_plan_init(e->alt);
    eval_config(e, g, B, P, m, 1, sched, first_layer, NULL, e->alt);
    e->prune_below_bar = prune;
    e->bar_samples_per_s = bar;
    return true;
}

/* plan (1F1B or interleaved, the fastest so far) against ZB-H1 and ZBV on the same
 * configuration and layer strategies, each with its own memory in flight (min(P, m)
 * on every stage, pipeline.h); the fastest that fits, recording what the same
 * stages take under 1F1B. The layer DP is not run again where the schedule fits: a
 * zero-bubble schedule holds stage 0's 1F1B activations on every stage, so where the
 * later stages have room the 1F1B choice stands (and the search's time stays within
 * 10 %); where it does not fit, zb_own_choice solves the schedule's own. */
static void eval_zero_bubble(tsl_engine_t *e, const tsl_group_strategies_t *g, uint32_t B,
                             uint32_t P, uint32_t m, const uint32_t *first_layer, double v_floor_s,
                             tsl_plan_t *plan)
{
    uint32_t mask = zb_schedules(e, P, m, first_layer);
    /* the V's floor (v_floor_stage over every stage of plan, the plain configuration
     * whose strategies it runs): no V faster than B / (m·v_floor_s) samples/s. One at
     * or below the need changes nothing the sweep keeps (need_samples_per_s), nor,
     * at or below the doubling's best so far, its count of gains (seen_samples_per_s);
     * what eval_more_chunks then costs against plan in its place is below the V, or
     * was costed and kept with it too. So no V that could matter is skipped. */
    double keep = fmin(e->need_samples_per_s, e->seen_samples_per_s);
    if (v_floor_s > 0 && keep > 0 && (double)m * v_floor_s * keep >= B)
        mask &= ~(TSL_SPACE_ZBV | TSL_SPACE_DUALPIPEV);
    if (!mask)
        return;
    double base = plan->iter_time_s, bound = zb_bound_s(plan);
    uint32_t base_v = plan->interleave;
    /* the bound reads plan's stages, which ZB-H1 keeps; a V runs other layers on each
     * rank (set_vparts: rank 0 the head, the last rank none), so its stages may be
     * faster than any of plan's: each V is costed, below_bar pruning it on its own
     * stages (cost model 110; before, a tied head kept the V's stages as plan's) */
    if (bound >= base || bound * e->bar_samples_per_s >= B)
        mask &= ~(1u << TSL_PIPESIM_SCHED_ZBH1);
    if (!mask || !plan_choices(e, g, plan))
        return;
    const uint32_t scheds[] = {TSL_PIPESIM_SCHED_ZBH1, TSL_PIPESIM_SCHED_ZBV,
                               TSL_PIPESIM_SCHED_DUALPIPEV};
    bool own = false; /* plan's strategies its own layer DP's (zb_own_choice) */
    for (uint32_t k = 0; k < 3; k++) {
        if (!(mask & (1u << scheds[k])))
            continue;
        tsl_plan_init(e->alt);
        eval_config(e, g, B, P, m, 1, scheds[k], first_layer, e->zb_choice, e->alt);
        bool solved = zb_own_choice(e, g, B, P, m, first_layer, scheds[k], plan->samples_per_s);
        if (!e->alt->valid || e->alt->samples_per_s <= plan->samples_per_s || !fits(e, e->alt) ||
            !admits(e, e->alt))
            continue;
        *plan = *e->alt;
        own = solved;
    }
    /* the same stages under plain 1F1B: the base itself unless it was interleaved or
     * the schedule chose its own strategies */
    if (plan->schedule && own && plan_choices(e, g, plan))
        plan->iter_time_1f1b_s = plain_1f1b_s(e, g, B, P, m, first_layer, e->zb_choice, e->alt);
    else if (plan->schedule && !own)
        plan->iter_time_1f1b_s =
            base_v > 1 ? plain_1f1b_s(e, g, B, P, m, first_layer, e->zb_choice, e->alt) : base;
}

/* Whether stage cut a is cut b (P stages). */
static bool same_cut(const uint32_t *a, const uint32_t *b, uint32_t P)
{
    return memcmp(a, b, (P + 1) * sizeof(a[0])) == 0;
}

/* Megatron-LM's interleaved splits on cuts other than the configuration's own:
 * for each v up to TSL_SEARCH_MAX_INTERLEAVE, the cut Megatron-LM builds for v
 * chunks (target.h tsl_target_megatron_vp_cut: even, or with the embedding and/or
 * the loss counted as a layer; Qwen3-235B at PP 32: 94 layers + embedding + loss,
 * 3 a rank, v 3). Each is priced on its cut and kept when faster and admitted; the
 * plain plan's bound does not hold for another cut, so none is skipped by it. The
 * own cut's v are eval_group's. */
static void eval_megatron_vp(tsl_engine_t *e, const tsl_group_strategies_t *g, uint32_t B,
                             uint32_t P, uint32_t m, const uint32_t *first_layer, tsl_plan_t *plan)
{
    uint32_t cut[TSL_PLAN_MAX_STAGES + 1];
    if (e->space->target != TSL_TARGET_MEGATRON || !interleave_on(e, P, m) || plan->schedule)
        return;
    for (uint32_t v = 2; v <= TSL_SEARCH_MAX_INTERLEAVE; v++) {
        if (!tsl_target_megatron_vp_cut(e->model, P, v, cut) || same_cut(cut, first_layer, P) ||
            !tsl_partition_cuts_ok(cut, P, e->max_cut) || !interleave_fits(e, P, m, cut, v))
            continue;
        tsl_plan_init(e->alt);
        eval_config(e, g, B, P, m, v, 0, cut, NULL, e->alt);
        if (e->alt->valid && e->alt->samples_per_s > plan->samples_per_s && admits(e, e->alt))
            *plan = *e->alt;
    }
}

/* T_v's lower bound from f: the larger of the two above. */
static double chunk_bound_s(const tsl_engine_t *e, const chunk_floor_t *f, uint32_t v)
{
    return fmax(interleave_bound_s(e, f, v), interleave_end_bound_s(f, v));
}

/* Every other v the configuration's own cut takes (interleave_fits: 3, 5, 6, 7,
 * 8, and 4 where the doubling stopped at 2), after the doubling and the
 * zero-bubble schedules, kept when faster than plan (the best of all those) and
 * admitted. Best first: the v of the lowest bound (interleave_bound_s,
 * interleave_end_bound_s), each skipped only where its bound reaches plan's time
 * or the sweep's bar, which it then beats neither. The doubling's winner stays the
 * zero-bubble schedules' base, so no plan the doubling found is lost. */
static void eval_more_chunks(tsl_engine_t *e, const tsl_group_strategies_t *g, uint32_t B,
                             const uint32_t *first_layer, const chunk_floor_t *f, const bool *tried,
                             tsl_plan_t *plan)
{
    uint32_t P = f->P, m = f->m;
    double bound[TSL_SEARCH_MAX_INTERLEAVE + 1];
    for (uint32_t v = 2; v <= TSL_SEARCH_MAX_INTERLEAVE; v++)
        bound[v] = tried[v] || !interleave_fits(e, P, m, first_layer, v) ? INFINITY
                                                                         : chunk_bound_s(e, f, v);
    for (;;) {
        uint32_t v = 0;
        for (uint32_t w = 2; w <= TSL_SEARCH_MAX_INTERLEAVE; w++)
            if (isfinite(bound[w]) && (v == 0 || bound[w] < bound[v]))
                v = w;
        if (v == 0 || bound[v] >= plan->iter_time_s || bound[v] * e->bar_samples_per_s >= B)
            return; /* the lowest bound beats neither: no v left does */
        bound[v] = INFINITY;
        tsl_plan_init(e->alt);
        eval_config(e, g, B, P, m, v, 0, first_layer, NULL, e->alt);
        if (e->alt->valid && e->alt->samples_per_s > plan->samples_per_s && admits(e, e->alt))
            *plan = *e->alt;
    }
}

/* One configuration over group g: plain 1F1B, then more chunks while faster (2,
 * 4); Megatron-LM's own interleaved splits; the zero-bubble schedules; then the
 * other v (eval_more_chunks). */
static void eval_group(tsl_engine_t *e, const tsl_group_strategies_t *g, uint32_t B, uint32_t P,
                       uint32_t m, const uint32_t *first_layer, tsl_plan_t *plan)
{
    chunk_floor_t plain = {0};
    bool tried[TSL_SEARCH_MAX_INTERLEAVE + 1] = {false};
    eval_config(e, g, B, P, m, 1, 0, first_layer, NULL, plan);
    double v_floor_s = e->v_floor_s; /* its V's, where proved (eval_zero_bubble) */
    if (plan->valid && !admits(e, plan))
        plan->valid = false;
    /* interleaving holds more activations: where plain 1F1B does not fit, it cannot */
    bool on = plan->valid && interleave_on(e, P, m);
    if (on)
        chunk_floor_init(e, plan, &plain);
    for (uint32_t v = 2; on && v <= TSL_SEARCH_DOUBLE_INTERLEAVE; v *= 2) {
        if (!interleave_fits(e, P, m, first_layer, v))
            break;
        if (chunk_bound_s(e, &plain, v) * e->bar_samples_per_s >= B)
            continue;
        tried[v] = true;
        tsl_plan_init(e->alt);
        eval_config(e, g, B, P, m, v, 0, first_layer, NULL, e->alt);
        if (!e->alt->valid || e->alt->samples_per_s <= plan->samples_per_s || !admits(e, e->alt))
            break; /* more chunks: still more memory and p2p for a smaller gain */
        *plan = *e->alt;
    }
    if (plan->valid)
        eval_megatron_vp(e, g, B, P, m, first_layer, plan);
    if (plan->valid) /* the V's floor holds for the plain configuration's strategies */
        eval_zero_bubble(e, g, B, P, m, first_layer, plan->interleave > 1 ? 0.0 : v_floor_s, plan);
    if (plan->valid && on)
        eval_more_chunks(e, g, B, first_layer, &plain, tried, plan);
}

/* ---- a given plan (eval.c) ---- */

/* Index of s among g's strategies, appending it (with its layout class: the
 * first equal-layout strategy's index) when new. */
static uint32_t given_index(tsl_group_strategies_t *g, const tsl_strategy_t *s)
{
    for (uint32_t j = 0; j < g->n; j++)
        if (tsl_strategy_equal(&g->items[j], s))
            return j;
    uint32_t j = g->n++;
    g->items[j] = *s;
    g->layout[j] = j;
    for (uint32_t k = 0; k < j; k++) {
        if (tsl_strategy_same_layout(&g->items[k], s)) {
            g->layout[j] = g->layout[k];
            break;
        }
    }
    return j;
}

int tsl_engine_init_given(tsl_engine_t *e, const tsl_model_t *m, const tsl_cluster_t *c,
                          const tsl_request_t *r, const tsl_space_t *space, uint32_t P,
                          const tsl_strategy_t *layer, uint32_t *choice, tsl_err_t *err)
{
    engine_base(e, m, c, r, space);
    tsl_group_strategies_t *g = &e->groups[0];
    e->n_groups = 1;
    g->group_size = c->n_devices / P;
    g->items = calloc(m->n_layers ? m->n_layers : 1, sizeof(*g->items));
    g->layout = calloc(m->n_layers ? m->n_layers : 1, sizeof(*g->layout));
    if (g->items == NULL || g->layout == NULL)
        return tsl_err_setc(err, TSL_E_NOMEM, "eval: out of memory");
    for (uint32_t i = 0; i < m->n_layers; i++)
        choice[i] = given_index(g, &layer[i]);
    e->max_strategies = g->n;
    e->max_layouts = count_layouts(g->layout, g->n);
    return alloc_tables(e, err);
}

void tsl_engine_eval_given(tsl_engine_t *e, uint32_t B, uint32_t P, uint32_t m, uint32_t v,
                           uint32_t sched, const uint32_t *first_layer, const uint32_t *choice,
                           tsl_plan_t *plan)
{
    plan->valid = false;
    if (e->n_groups != 1 || m == 0 || B % m != 0 ||
        !tsl_partition_cuts_ok(first_layer, P, e->max_cut))
        return;
    eval_config(e, &e->groups[0], B, P, m, v ? v : 1, sched, first_layer, choice, plan);
    if (plan->valid && sched) { /* the reason, as the search records it */
        tsl_plan_t *one = malloc(sizeof(*one));
        if (one)
            plan->iter_time_1f1b_s =
                plain_1f1b_s(e, &e->groups[0], B, P, m, first_layer, choice, one);
        free(one);
    }
}

/* The most Transformer layers a stage of first_layer holds. */
static uint32_t max_stage_blocks(const tsl_engine_t *e, uint32_t P, const uint32_t *first_layer)
{
    uint32_t most = 0;
    for (uint32_t s = 0; s < P; s++) {
        uint32_t n = 0;
        for (uint32_t i = first_layer[s]; i < first_layer[s + 1]; i++)
            n += tsl_model_is_block(e->model, i);
        most = n > most ? n : most;
    }
    return most;
}

/* Megatron-LM's --recompute-method block: the first N blocks of every stage
 * take CKPT. Only worth it where no CKPT does not fit and all does: the
 * smallest N that fits (memory falls and time grows with N), by bisection. */
static void eval_block_n(tsl_engine_t *e, const tsl_group_strategies_t *one, uint32_t B, uint32_t P,
                         uint32_t m, const uint32_t *first_layer, tsl_plan_t *plan)
{
    uint32_t lo = 1, hi = max_stage_blocks(e, P, first_layer); /* N = hi: all */
    e->uniform_ckpt = 1;
    while (lo < hi) {
        e->uniform_block_n = lo + (hi - lo) / 2;
        tsl_plan_init(e->cand);
        eval_group(e, one, B, P, m, first_layer, e->cand);
        if (e->cand->valid && (!plan->valid || tsl_plan_better(e->cand, plan)))
            *plan = *e->cand;
        if (e->cand->valid)
            hi = e->uniform_block_n;
        else
            lo = e->uniform_block_n + 1;
    }
    e->uniform_block_n = 0;
}

/* Whether the search re-cuts a configuration by its priced layer times: a hybrid
 * under Megatron-LM, whose stages (and model chunks) are --hybrid-layer-pattern's '|'
 * segments of any length (target_rules.c megatron_layout), where the starting cut's
 * equal middle stages (tsl_target_partition) hold blocks of unlike cost (a Mamba
 * mixer, attention, an MoE or MLP FFN). */
static bool hybrid_recut_on(const tsl_engine_t *e, uint32_t P)
{
    return e->space->target == TSL_TARGET_MEGATRON && e->model->hybrid && P >= 2;
}

static void layer_times_reset(tsl_engine_t *e)
{
    for (uint32_t l = 0; l < e->model->n_layers; l++)
        e->layer_time_s[l] = NAN;
}

/* The cut of P stages whose largest stage, in the layers' priced forward + backward
 * time of one micro-batch (e->layer_time_s: the strategies the last costing chose;
 * stage_times), is smallest (AutoPipe's exact min-max, tsl_autopipe_minmax), over
 * the units tsl_partition_by_flops takes (the MTP layers with the head). The p2p,
 * the gradient sync and memory are left to the costing of the cut. false where a
 * layer was not costed (a stage pruned below the bar), the min-max fails, or the
 * cut is first_layer itself. */
static bool hybrid_priced_cut(tsl_engine_t *e, uint32_t P, const uint32_t *first_layer,
                              uint32_t *cut)
{
    const tsl_model_t *m = e->model;
    uint32_t L = m->n_layers, U = tsl_partition_max_cut(m) + 1;
    for (uint32_t l = 0; l < L; l++) {
        double t = e->layer_time_s[l];
        if (!isfinite(t))
            return false;
        if (l < U)
            e->cut_w[l] = t;
        else
            e->cut_w[U - 1] += t;
    }
    if (U < P || tsl_autopipe_minmax(e->cut_w, U, P, cut, NULL, NULL) != 0)
        return false;
    cut[P] = L;
    return !same_cut(cut, first_layer, P) && tsl_partition_cuts_ok(cut, P, e->max_cut);
}

/* Whether the search re-cuts a configuration within the target's starting shape: a
 * model that is no hybrid under Megatron-LM or torchtitan, whose starting cut (target.c
 * partition_ends: first and last stages free, the middle ones equal) balances forward
 * FLOPs where the layers' times may not follow them (BERT's head: 2.7 to 4 blocks' time
 * against 1.94 blocks' FLOPs, bench/published README "Extra FLOPs, once"). Megatron-LM
 * runs that shape (--decoder-first/last-pipeline-num-layers), torchtitan any whole-layer
 * cut (module_fqns_per_model_part). Not Galvatron: its plans are per-layer (eval_group
 * alone), and the re-balancing after the engine (search_partition.c, Galvatron-BMW's
 * bi-objective and AMP's assignment, each by the plan's priced layer times) already cuts
 * them freely; a shaped re-cut only moved where that local search starts (BERT-Huge-32
 * on 3x8 A100 at PP 8: 1137.86 -> 1125.48 samples/s). Nor DeepSpeed, whose
 * PipelineModule cuts by its own method (target.c ds_partition). */
static bool ends_recut_on(const tsl_engine_t *e, uint32_t P)
{
    uint32_t t = e->space->target;
    return P >= 2 && !e->model->hybrid && (t == TSL_TARGET_MEGATRON || t == TSL_TARGET_TORCHTITAN);
}

/* The largest stage of first_layer in the layers' priced times (e->layer_time_s). */
static double priced_worst_s(const tsl_engine_t *e, uint32_t P, const uint32_t *first_layer)
{
    double worst = 0;
    for (uint32_t s = 0; s < P; s++) {
        double t = 0;
        for (uint32_t l = first_layer[s]; l < first_layer[s + 1]; l++)
            t += e->layer_time_s[l];
        worst = fmax(worst, t);
    }
    return worst;
}

/* The cut of the starting shape (f, mid, l) whose largest stage in the layers' priced
 * forward + backward time of one micro-batch (e->layer_time_s, as hybrid_priced_cut
 * reads them) is smallest (tsl_target_ends_cut). false where a layer was not costed,
 * or where that stage is not smaller than the starting cut's own by more than rounding
 * (where time follows FLOPs the two cuts tie, and the configuration is not costed
 * twice). */
static bool ends_priced_cut(tsl_engine_t *e, uint32_t P, const uint32_t *first_layer, uint32_t *cut)
{
    double worst_s;
    if (!tsl_target_ends_cut(e->model, P, e->layer_time_s, cut, &worst_s))
        return false;
    return worst_s < priced_worst_s(e, P, first_layer) * (1 - 1e-9) &&
           !same_cut(cut, first_layer, P) && tsl_partition_cuts_ok(cut, P, e->max_cut);
}

/* Whether the search re-cuts a configuration by its priced layer times, and the cut. */
static bool recut_on(const tsl_engine_t *e, uint32_t P)
{
    return hybrid_recut_on(e, P) || ends_recut_on(e, P);
}

static bool priced_cut(tsl_engine_t *e, uint32_t P, const uint32_t *first_layer, uint32_t *cut)
{
    return hybrid_recut_on(e, P) ? hybrid_priced_cut(e, P, first_layer, cut)
                                 : ends_priced_cut(e, P, first_layer, cut);
}

/* Configuration g costed on the priced cut of first_layer (priced_cut) into e->recut,
 * after its costing on first_layer left the layers' times; plan takes it where
 * faster, so no plan of the starting cut is lost. */
static void eval_recut(tsl_engine_t *e, const tsl_group_strategies_t *g, uint32_t B, uint32_t P,
                       uint32_t m, const uint32_t *first_layer, tsl_plan_t *plan)
{
    uint32_t cut[TSL_PLAN_MAX_STAGES + 1];
    if (!priced_cut(e, P, first_layer, cut))
        return;
    tsl_plan_init(e->recut);
    eval_group(e, g, B, P, m, cut, e->recut);
    if (e->recut->valid && (!plan->valid || tsl_plan_better(e->recut, plan)))
        *plan = *e->recut;
}

/* A uniform space (Megatron-LM, DeepSpeed, torchtitan): each strategy of the
 * group for every layer, its blocks without CKPT and all with it (Megatron-LM
 * also the first N of every stage); the best. A configuration that was costed whole
 * on the starting cut is costed again on the cut its priced layer times balance
 * (eval_recut): a Megatron-LM hybrid's any cut (hybrid_priced_cut), uneven middle
 * stages allowed, a Megatron-LM or torchtitan model's within the starting shape
 * (ends_priced_cut); the faster stands. */
static void eval_uniform(tsl_engine_t *e, const tsl_group_strategies_t *g, uint32_t B, uint32_t P,
                         uint32_t m, const uint32_t *first_layer, tsl_plan_t *plan)
{
    tsl_strategy_t items[2];
    uint32_t layout[2] = {0, 0};
    bool recut = recut_on(e, P);
    for (uint32_t j = 0; j < g->n; j++) {
        if (g->items[j].ckpt)
            continue;
        items[0] = items[1] = g->items[j];
        items[1].ckpt = true;
        bool ckpt = e->space->opts.allow_ckpt && !items[0].selective;
        tsl_group_strategies_t one = {
            .group_size = g->group_size, .n = ckpt ? 2 : 1, .items = items, .layout = layout};
        bool fit[2] = {false, false};
        for (int8_t c = 0; c <= (ckpt ? 1 : 0); c++) {
            e->uniform_ckpt = c;
            tsl_plan_init(e->cand);
            if (recut)
                layer_times_reset(e);
            eval_group(e, &one, B, P, m, first_layer, e->cand);
            fit[c] = e->cand->valid;
            if (e->cand->valid && (!plan->valid || tsl_plan_better(e->cand, plan)))
                *plan = *e->cand;
            if (recut && e->cand->valid)
                eval_recut(e, &one, B, P, m, first_layer, plan);
        }
        if (ckpt && !fit[0] && fit[1] && e->space->target == TSL_TARGET_MEGATRON)
            eval_block_n(e, &one, B, P, m, first_layer, plan);
    }
    e->uniform_ckpt = -1;
}

void tsl_engine_eval(tsl_engine_t *e, uint32_t B, uint32_t P, uint32_t m,
                     const uint32_t *first_layer, tsl_plan_t *plan)
{
    plan->valid = false;
    const tsl_group_strategies_t *g = tsl_engine_group(e, e->cluster->n_devices / P);
    /* the partitioners keep the MTP layers with the head; a split that does not
     * is no plan (partition.h max_cut) */
    if (g == NULL || g->n == 0 || m == 0 || B % m != 0 ||
        !tsl_partition_cuts_ok(first_layer, P, e->max_cut))
        return;
    if (e->space->uniform_strategy) {
        eval_uniform(e, g, B, P, m, first_layer, plan);
        return;
    }
    eval_group(e, g, B, P, m, first_layer, plan);
    /* Galvatron: a layer-level plan its JSON cannot hold (e.g. an embedding and a
     * head at two TP degrees) may still run under one strategy */
    if (!plan->valid && e->space->target)
        eval_uniform(e, g, B, P, m, first_layer, plan);
}
