/*
 * relayout.c — the moves of an activation between two layers' layouts inside a
 * stage, which the search prices and worker/exec/exec_layout.c runs; see
 * relayout.h. Positions' sample ranges are kept in units of B / G (G the
 * block size, which every data width divides): the tests that decide (inside,
 * equal, tiling) compare ranges only by order and divisibility, which scaling by
 * B / G keeps, so the decision does not depend on the micro-batch.
 */
#include "relayout.h"

#include <math.h>

uint32_t tsl_relayout_data_index(const tsl_strategy_t *s, uint32_t p)
{
    uint32_t d = 0, mul = 1;
    for (uint32_t i = 0; i < s->n_levels && i < TSL_STRATEGY_MAX_LEVELS; i++) {
        uint32_t digit = p % s->degree[i];
        p /= s->degree[i];
        if (s->dim[i] != TSL_DIM_TP) {
            d += digit * mul;
            mul *= s->degree[i];
        }
    }
    return d;
}

/* One direction: held layout h, needed n, on G positions. */
typedef struct dir {
    const tsl_strategy_t *h, *n;
    uint32_t G, wh, wn, bh, bn; /* widths and range lengths (units of B / G) */
} dir_t;

static dir_t make_dir(const tsl_strategy_t *h, const tsl_strategy_t *n)
{
    uint32_t G = tsl_strategy_group_size(h), wh = tsl_strategy_data_width(h),
             wn = tsl_strategy_data_width(n);
    return (dir_t){h, n, G, wh, wn, G / wh, G / wn};
}

/* NONE or SLICE when every position's needed range equals / lies inside its held one. */
static tsl_relayout_kind_t local_kind(const dir_t *x)
{
    bool same = x->bh == x->bn, inside = true;
    for (uint32_t p = 0; p < x->G && (same || inside); p++) {
        uint32_t hl = tsl_relayout_data_index(x->h, p) * x->bh,
                 nl = tsl_relayout_data_index(x->n, p) * x->bn;
        same = same && hl == nl;
        inside = inside && nl >= hl && nl + x->bn <= hl + x->bh;
    }
    return same ? TSL_RELAYOUT_NONE : inside ? TSL_RELAYOUT_SLICE : TSL_RELAYOUT_GATHER;
}

/* The piece of its needed range that position p holds (by need), or UINT32_MAX when
 * the held range does not sit inside the needed one on a piece boundary. */
static uint32_t piece_of(const dir_t *x, uint32_t p, uint32_t k)
{
    uint32_t hl = tsl_relayout_data_index(x->h, p) * x->bh,
             nl = tsl_relayout_data_index(x->n, p) * x->bn;
    if (hl < nl || (hl - nl) % x->bh || (hl - nl) / x->bh >= k)
        return UINT32_MAX;
    return (hl - nl) / x->bh;
}

/* Whether the gather by need forms: every position holds a piece of its need, and
 * each need's k pieces are held equally often. cnt: wh slots. */
static bool by_need(const dir_t *x, uint32_t k, uint32_t *cnt)
{
    if (x->bh >= x->bn || x->bn % x->bh)
        return false;
    for (uint32_t i = 0; i < x->wh; i++)
        cnt[i] = 0;
    for (uint32_t p = 0; p < x->G; p++) {
        uint32_t piece = piece_of(x, p, k);
        if (piece == UINT32_MAX)
            return false;
        cnt[tsl_relayout_data_index(x->n, p) * k + piece]++; /* wn · k = wh slots */
    }
    for (uint32_t i = 0; i < x->wh; i++)
        if (cnt[i] != cnt[i - i % k])
            return false;
    return true;
}

/* Groups and keys of a gather (tsl_relayout_groups): groups are first numbered
 * below G — by need, the r-th holder of each piece of one need (r·w_N + need);
 * whole, the r-th holder of each data index of h — then named by their first
 * member. cnt, first: G each. */
static void assign(const dir_t *x, const tsl_relayout_move_t *m, uint32_t *cnt, uint32_t *first,
                   uint32_t *group, uint32_t *key)
{
    for (uint32_t i = 0; i < x->G; i++) {
        cnt[i] = 0;
        first[i] = UINT32_MAX;
    }
    for (uint32_t p = 0; p < x->G; p++) {
        uint32_t id, kp;
        if (m->kind == TSL_RELAYOUT_GATHER) {
            uint32_t dn = tsl_relayout_data_index(x->n, p);
            kp = piece_of(x, p, m->k);
            id = cnt[dn * m->k + kp]++ * x->wn + dn;
        } else {
            kp = tsl_relayout_data_index(x->h, p);
            id = cnt[kp]++;
        }
        if (first[id] == UINT32_MAX)
            first[id] = p;
        group[p] = first[id];
        if (key != NULL)
            key[p] = kp;
    }
}

/* Slowest ring link over the move's groups (members in position order). */
static double groups_bw(const dir_t *x, const tsl_relayout_move_t *m, const tsl_cluster_t *c,
                        uint32_t first, uint32_t *scratch)
{
    const uint32_t G = x->G;
    uint32_t *lst = scratch, *grp = scratch + 2 * G;
    assign(x, m, scratch, scratch + G, grp, NULL);
    for (uint32_t i = 0; i < G; i++)
        lst[i] = UINT32_MAX;
    double bw = INFINITY;
    for (uint32_t p = 0; p < G; p++) {
        uint32_t g = grp[p];
        if (lst[g] != UINT32_MAX)
            bw = fmin(bw, tsl_cluster_link_bw(c, first + lst[g], first + p));
        lst[g] = p;
    }
    for (uint32_t g = 0; g < G; g++) /* close each ring: g is its first member */
        if (lst[g] != UINT32_MAX && lst[g] != g)
            bw = fmin(bw, tsl_cluster_link_bw(c, first + lst[g], first + g));
    return bw;
}

static void plan_dir(const dir_t *x, const tsl_cluster_t *c, uint32_t first, uint32_t *scratch,
                     tsl_relayout_move_t *m)
{
    *m = (tsl_relayout_move_t){TSL_RELAYOUT_NONE, 1, 0, INFINITY};
    tsl_relayout_kind_t kind = local_kind(x);
    if (kind != TSL_RELAYOUT_GATHER) {
        m->kind = kind;
        return;
    }
    uint32_t k = x->bn / x->bh; /* by need: w_H / w_N */
    if (by_need(x, k, scratch)) {
        m->kind = TSL_RELAYOUT_GATHER;
        m->k = k;
        m->width = x->wn;
    } else {
        m->kind = TSL_RELAYOUT_WHOLE;
        m->k = x->wh;
        m->width = 1;
    }
    if (c != NULL)
        m->bw = groups_bw(x, m, c, first, scratch);
}

int tsl_relayout_plan(const tsl_strategy_t *from, const tsl_strategy_t *to, const tsl_cluster_t *c,
                      uint32_t block_first, uint32_t *scratch, tsl_relayout_t *out, tsl_err_t *err)
{
    if (from == NULL || to == NULL || scratch == NULL || out == NULL)
        return tsl_err_set(err, "relayout: from, to, scratch and out are required");
    uint32_t G = tsl_strategy_group_size(from);
    if (G == 0 || tsl_strategy_group_size(to) != G)
        return tsl_err_set(err,
                           "relayout: the layouts span %u and %u devices; a stage's layers "
                           "span the same block",
                           (unsigned)G, (unsigned)tsl_strategy_group_size(to));
    if (c != NULL && (uint64_t)block_first + G > c->n_devices)
        return tsl_err_set(err, "relayout: block [%u, %u + %u) is outside the cluster's %u devices",
                           (unsigned)block_first, (unsigned)block_first, (unsigned)G,
                           (unsigned)c->n_devices);
    dir_t fwd = make_dir(from, to), bwd = make_dir(to, from);
    plan_dir(&fwd, c, block_first, scratch, &out->fwd);
    plan_dir(&bwd, c, block_first, scratch, &out->bwd);
    return 0;
}

void tsl_relayout_groups(const tsl_strategy_t *held, const tsl_strategy_t *needed,
                         const tsl_relayout_move_t *m, uint32_t *scratch, uint32_t *group,
                         uint32_t *key)
{
    dir_t x = make_dir(held, needed);
    if (m->kind == TSL_RELAYOUT_GATHER || m->kind == TSL_RELAYOUT_WHOLE) {
        assign(&x, m, scratch, scratch + x.G, group, key);
        return;
    }
    for (uint32_t p = 0; p < x.G; p++) {
        group[p] = p;
        if (key != NULL)
            key[p] = 0;
    }
}

uint32_t tsl_relayout_offset(const tsl_strategy_t *held, const tsl_strategy_t *needed,
                             const tsl_relayout_move_t *m, uint32_t p, uint32_t mb)
{
    uint32_t wh = tsl_strategy_data_width(held), wn = tsl_strategy_data_width(needed);
    uint32_t need = tsl_relayout_data_index(needed, p) * (mb / wn);
    switch (m->kind) {
    case TSL_RELAYOUT_SLICE: return need - tsl_relayout_data_index(held, p) * (mb / wh);
    case TSL_RELAYOUT_WHOLE: return need;
    case TSL_RELAYOUT_NONE:
    case TSL_RELAYOUT_GATHER: break;
    }
    return 0;
}

const char *tsl_relayout_kind_name(tsl_relayout_kind_t k)
{
    switch (k) {
    case TSL_RELAYOUT_NONE: return "none";
    case TSL_RELAYOUT_SLICE: return "slice";
    case TSL_RELAYOUT_GATHER: return "gather";
    case TSL_RELAYOUT_WHOLE: return "whole";
    }
    return "?";
}
