/*
 * relayout.c — the moves of an activation between two layers' layouts inside a
 * stage, as worker/exec/exec_layout.c (the runtime these moves price) plans them;
 * see relayout.h. Positions' sample ranges are kept in units of B / G (G the
 * block size, which every data width divides): the executor's tests (inside,
 * equal, tiling) compare ranges only by order and divisibility, which scaling by
 * B / G keeps, so the decision does not depend on the micro-batch.
 */
#include "relayout.h"

#include <math.h>

/* The data index of position p: its data-level digits, innermost least significant. */
static uint32_t data_index(const tsl_strategy_t *s, uint32_t p)
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

/* NONE or SLICE when every position's needed range equals / lies inside its held one. */
static tsl_relayout_kind_t local_kind(const dir_t *x)
{
    bool same = x->bh == x->bn, inside = true;
    for (uint32_t p = 0; p < x->G && (same || inside); p++) {
        uint32_t hl = data_index(x->h, p) * x->bh, nl = data_index(x->n, p) * x->bn;
        same = same && hl == nl;
        inside = inside && nl >= hl && nl + x->bn <= hl + x->bh;
    }
    return same ? TSL_RELAYOUT_NONE : inside ? TSL_RELAYOUT_SLICE : TSL_RELAYOUT_GATHER;
}

/* The piece of its needed range that position p holds (by need), or UINT32_MAX when
 * the held range does not sit inside the needed one on a piece boundary. */
static uint32_t piece_of(const dir_t *x, uint32_t p, uint32_t k)
{
    uint32_t hl = data_index(x->h, p) * x->bh, nl = data_index(x->n, p) * x->bn;
    if (hl < nl || (hl - nl) % x->bh || (hl - nl) / x->bh >= k)
        return UINT32_MAX;
    return (hl - nl) / x->bh;
}

/* Whether the gather by need forms (exec_layout.c by_need): every position holds a
 * piece of its need, and each need's k pieces are held equally often. cnt: wh slots. */
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
        cnt[data_index(x->n, p) * k + piece]++; /* wn · k = wh slots */
    }
    for (uint32_t i = 0; i < x->wh; i++)
        if (cnt[i] != cnt[i - i % k])
            return false;
    return true;
}

/* Group of position p (groups numbered below G): by need, the r-th holder of each
 * piece of one need; whole, the r-th holder of each data index of h. cnt counts
 * the earlier holders, zeroed by the caller. */
static uint32_t group_of(const dir_t *x, tsl_relayout_kind_t kind, uint32_t k, uint32_t p,
                         uint32_t *cnt)
{
    if (kind == TSL_RELAYOUT_GATHER) {
        uint32_t dn = data_index(x->n, p), r = cnt[dn * k + piece_of(x, p, k)]++;
        return r * x->wn + dn;
    }
    return cnt[data_index(x->h, p)]++;
}

/* Slowest ring link over the move's groups (members in position order). */
static double groups_bw(const dir_t *x, tsl_relayout_kind_t kind, uint32_t k,
                        const tsl_cluster_t *c, uint32_t first, uint32_t *scratch)
{
    const uint32_t G = x->G;
    uint32_t *cnt = scratch, *fst = scratch + G, *lst = scratch + 2 * G;
    for (uint32_t i = 0; i < G; i++) {
        cnt[i] = 0;
        lst[i] = UINT32_MAX;
    }
    double bw = INFINITY;
    for (uint32_t p = 0; p < G; p++) {
        uint32_t g = group_of(x, kind, k, p, cnt);
        if (lst[g] == UINT32_MAX)
            fst[g] = p;
        else
            bw = fmin(bw, tsl_cluster_link_bw(c, first + lst[g], first + p));
        lst[g] = p;
    }
    for (uint32_t g = 0; g < G; g++) /* close each ring */
        if (lst[g] != UINT32_MAX && lst[g] != fst[g])
            bw = fmin(bw, tsl_cluster_link_bw(c, first + lst[g], first + fst[g]));
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
        m->bw = groups_bw(x, m->kind, m->k, c, first, scratch);
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
    uint32_t wf = tsl_strategy_data_width(from), wt = tsl_strategy_data_width(to);
    dir_t fwd = {from, to, G, wf, wt, G / wf, G / wt};
    dir_t bwd = {to, from, G, wt, wf, G / wt, G / wf};
    plan_dir(&fwd, c, block_first, scratch, &out->fwd);
    plan_dir(&bwd, c, block_first, scratch, &out->bwd);
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
