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
#include <string.h>

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

/* The data indices of positions 0, 1, 2, … of a strategy in turn: p's digits kept
 * as a counter (the same mixed-radix number as tsl_relayout_data_index, without
 * its divisions: the loops below visit every position of a block, and a 100k-GPU
 * search makes thousands of moves). */
typedef struct didx {
    uint32_t n, d; /* levels; the current position's data index */
    uint32_t deg[TSL_STRATEGY_MAX_LEVELS], mul[TSL_STRATEGY_MAX_LEVELS],
        dig[TSL_STRATEGY_MAX_LEVELS];
} didx_t;

static void didx_init(didx_t *it, const tsl_strategy_t *s)
{
    uint32_t mul = 1;
    it->n = it->d = 0;
    for (uint32_t i = 0; i < s->n_levels && i < TSL_STRATEGY_MAX_LEVELS; i++, it->n++) {
        it->deg[i] = s->degree[i];
        it->dig[i] = 0;
        it->mul[i] = s->dim[i] != TSL_DIM_TP ? mul : 0;
        if (s->dim[i] != TSL_DIM_TP)
            mul *= s->degree[i];
    }
}

/* To the next position. */
static inline void didx_next(didx_t *it)
{
    for (uint32_t i = 0; i < it->n; i++) {
        it->d += it->mul[i];
        if (++it->dig[i] < it->deg[i])
            return;
        it->d -= it->mul[i] * it->deg[i];
        it->dig[i] = 0;
    }
}

/* The data index and the TP index (the mixed-radix number of p's TP digits, the
 * innermost least significant) of positions 0, 1, 2, … in turn, both in one 64-bit
 * counter: the data index in the low half, the TP index in the high half (each below
 * G ≤ 2^32, so neither half carries into the other). gather_walk's held side. */
typedef struct dtidx {
    uint32_t n;
    uint64_t v; /* data index | TP index << 32 */
    uint64_t step[TSL_STRATEGY_MAX_LEVELS], wrap[TSL_STRATEGY_MAX_LEVELS];
    uint32_t deg[TSL_STRATEGY_MAX_LEVELS], dig[TSL_STRATEGY_MAX_LEVELS];
} dtidx_t;

static void dtidx_init(dtidx_t *it, const tsl_strategy_t *s)
{
    uint64_t dmul = 1, tmul = 1;
    it->n = 0;
    it->v = 0;
    for (uint32_t i = 0; i < s->n_levels && i < TSL_STRATEGY_MAX_LEVELS; i++, it->n++) {
        bool tp = s->dim[i] == TSL_DIM_TP;
        it->deg[i] = s->degree[i];
        it->dig[i] = 0;
        it->step[i] = tp ? tmul << 32 : dmul;
        it->wrap[i] = it->step[i] * s->degree[i];
        *(tp ? &tmul : &dmul) *= s->degree[i];
    }
}

static inline void dtidx_next(dtidx_t *it)
{
    for (uint32_t i = 0; i < it->n; i++) {
        it->v += it->step[i];
        if (++it->dig[i] < it->deg[i])
            return;
        it->v -= it->wrap[i];
        it->dig[i] = 0;
    }
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
    didx_t ih, in;
    didx_init(&ih, x->h);
    didx_init(&in, x->n);
    for (uint32_t p = 0; p < x->G && (same || inside); p++, didx_next(&ih), didx_next(&in)) {
        uint32_t hl = ih.d * x->bh, nl = in.d * x->bn;
        same = same && hl == nl;
        inside = inside && nl >= hl && nl + x->bn <= hl + x->bh;
    }
    return same ? TSL_RELAYOUT_NONE : inside ? TSL_RELAYOUT_SLICE : TSL_RELAYOUT_GATHER;
}

/* The piece of its needed range that a position of held data index dh and needed
 * dn holds (by need), or UINT32_MAX when the held range does not sit inside the
 * needed one on a piece boundary. */
static uint32_t piece_of(const dir_t *x, uint32_t dh, uint32_t dn, uint32_t k)
{
    uint32_t hl = dh * x->bh, nl = dn * x->bn;
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
    didx_t ih, in;
    didx_init(&ih, x->h);
    didx_init(&in, x->n);
    for (uint32_t p = 0; p < x->G; p++, didx_next(&ih), didx_next(&in)) {
        uint32_t piece = piece_of(x, ih.d, in.d, k);
        if (piece == UINT32_MAX)
            return false;
        cnt[in.d * k + piece]++; /* wn · k = wh slots */
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
/* The group number (below G) of the position whose data indices ih and in hold
 * (positions in ascending order; cnt counts the holders so far), its key into *kp. */
static inline uint32_t group_id(const dir_t *x, const tsl_relayout_move_t *m, uint32_t *cnt,
                                const didx_t *ih, const didx_t *in, uint32_t *kp)
{
    if (m->kind == TSL_RELAYOUT_GATHER) {
        uint32_t dn = in->d;
        *kp = piece_of(x, ih->d, dn, m->k);
        return cnt[dn * m->k + *kp]++ * x->wn + dn;
    }
    *kp = ih->d;
    return cnt[*kp]++;
}

static void assign(const dir_t *x, const tsl_relayout_move_t *m, uint32_t *cnt, uint32_t *first,
                   uint32_t *group, uint32_t *key)
{
    for (uint32_t i = 0; i < x->G; i++) {
        cnt[i] = 0;
        first[i] = UINT32_MAX;
    }
    didx_t ih, in;
    didx_init(&ih, x->h);
    didx_init(&in, x->n);
    for (uint32_t p = 0; p < x->G; p++, didx_next(&ih), didx_next(&in)) {
        uint32_t kp, id = group_id(x, m, cnt, &ih, &in, &kp);
        if (first[id] == UINT32_MAX)
            first[id] = p;
        group[p] = first[id];
        if (key != NULL)
            key[p] = kp;
    }
}

/* No link of the block [first, first + G) is slower than this: the slowest node's
 * NVLink figure and the network's, where no pair matrix gives each pair its own
 * (tsl_cluster_link_bw: a node's figure inside it, the slower node's inside a
 * domain, the network's between domains); 0 (no bound) with a matrix. */
double tsl_relayout_links_floor(const tsl_cluster_t *c, uint32_t first, uint32_t G)
{
    if (c->inter_bw_matrix != NULL)
        return 0.0;
    double lo = c->inter_bw;
    for (uint32_t dev = first; dev < first + G;) {
        uint32_t node = c->device_node[dev];
        lo = c->nodes[node].intra_bw < lo ? c->nodes[node].intra_bw : lo;
        dev = c->node_first[node] + c->nodes[node].n_gpus;
    }
    return lo;
}

/* Slowest ring link over the move's groups (members in position order), the
 * groups made as assign makes them, position by position; once a link as slow as
 * the block's links floor (tsl_relayout_links_floor) turns up, no other can be
 * slower and the walk ends. */
static double groups_bw(const dir_t *x, const tsl_relayout_move_t *m, const tsl_cluster_t *c,
                        uint32_t first, double floor, uint32_t *scratch)
{
    const uint32_t G = x->G;
    uint32_t *cnt = scratch, *head = scratch + G, *lst = scratch + 2 * G; /* by group number */
    for (uint32_t i = 0; i < G; i++) {
        cnt[i] = 0;
        head[i] = lst[i] = UINT32_MAX;
    }
    double bw = INFINITY; /* link figures are positive numbers: min as fmin */
    didx_t ih, in;
    didx_init(&ih, x->h);
    didx_init(&in, x->n);
    for (uint32_t p = 0; p < G; p++, didx_next(&ih), didx_next(&in)) {
        uint32_t kp, id = group_id(x, m, cnt, &ih, &in, &kp);
        if (lst[id] != UINT32_MAX) {
            double b = tsl_cluster_link_bw(c, first + lst[id], first + p);
            bw = b < bw ? b : bw;
            if (bw <= floor)
                return bw;
        } else {
            head[id] = p;
        }
        lst[id] = p;
    }
    for (uint32_t g = 0; g < G; g++) /* close each ring: from its last member to its first */
        if (lst[g] != UINT32_MAX && lst[g] != head[g]) {
            double b = tsl_cluster_link_bw(c, first + lst[g], first + head[g]);
            bw = b < bw ? b : bw;
        }
    return bw;
}

/* The fast walks' rings (gather_walk, whole_walk): groups_bw's links, each group's
 * members in position order, the group numbers given by the walk. Once a link as
 * slow as the block's floor turns up no other is looked at (groups_bw returns
 * there). */
typedef struct rings {
    const tsl_cluster_t *c;
    uint32_t first, *head, *lst; /* by group number: first and last member so far */
    double floor, bw;            /* bw: the slowest link so far, +INF at first */
    bool links;                  /* links still wanted */
} rings_t;

static void rings_init(rings_t *r, const tsl_cluster_t *c, uint32_t first, double floor,
                       uint32_t n_groups, uint32_t *head, uint32_t *lst)
{
    *r = (rings_t){c, first, head, lst, floor, INFINITY, c != NULL};
    if (r->links)
        for (uint32_t g = 0; g < n_groups; g++)
            head[g] = lst[g] = UINT32_MAX;
}

/* Position p joins group id: the link from the group's last member to it. */
static inline void rings_add(rings_t *r, uint32_t id, uint32_t p)
{
    if (r->lst[id] != UINT32_MAX) {
        double b = tsl_cluster_link_bw(r->c, r->first + r->lst[id], r->first + p);
        r->bw = b < r->bw ? b : r->bw; /* link figures are positive numbers: min as fmin */
        r->links = r->bw > r->floor;
    } else {
        r->head[id] = p;
    }
    r->lst[id] = p;
}

/* After the walk: where it saw every link, each ring closes, last member to first. */
static double rings_close(rings_t *r, uint32_t n_groups)
{
    if (r->links)
        for (uint32_t g = 0; g < n_groups; g++)
            if (r->lst[g] != r->head[g]) {
                double b = tsl_cluster_link_bw(r->c, r->first + r->lst[g], r->first + r->head[g]);
                r->bw = b < r->bw ? b : r->bw;
            }
    return r->bw;
}

/* The gather by need and its bandwidth in one walk of the block: by_need's test and
 * groups_bw's ring links of the GATHER groups, position by position. False, *bw
 * untouched, where the gather by need does not form. With w_N · k = w_H a position
 * of held data index dh and needed dn holds piece dh − dn·k of its need (piece_of
 * without its divisions: the range offset is a whole number of held ranges). by_need's
 * count test needs no walk of its own: where every position holds a piece of its
 * need, the holders of piece h are exactly the G / w_H positions of held data index
 * h (every data index of a strategy is held G / w times), so every piece is held
 * equally often. And group_id's count of the holders before a position (its r) is
 * the held layout's TP index there: the positions of one data index differ in their
 * TP digits alone, and in position order these count up as a mixed-radix number, so
 * the group number r·w_N + dn comes from the position's digits, no count kept (r
 * below G / w_H: group numbers below G / k). Past the floor (rings_t) the walk goes
 * on for the test alone; tested (the gather known to form, paired_dir): no test, and
 * the walk ends there. c NULL: the test alone, *bw +INF. scratch: head and last
 * (G / k each) at G and 2·G. */
static bool gather_walk(const dir_t *x, uint32_t k, bool tested, const tsl_cluster_t *c,
                        uint32_t first, double floor, uint32_t *scratch, double *bw_out)
{
    if (x->bh >= x->bn || x->bn % x->bh)
        return false;
    const uint32_t G = x->G, n_groups = G / x->wh * x->wn;
    rings_t r;
    rings_init(&r, c, first, floor, n_groups, scratch + G, scratch + 2 * G);
    dtidx_t ih;
    didx_t in;
    dtidx_init(&ih, x->h);
    didx_init(&in, x->n);
    for (uint32_t p = 0; p < G && (r.links || !tested); p++, dtidx_next(&ih), didx_next(&in)) {
        uint32_t piece = (uint32_t)ih.v - in.d * k; /* wraps past k where dh < dn·k */
        if (piece >= k && !tested)
            return false;
        if (r.links) /* group_id's GATHER number */
            rings_add(&r, (uint32_t)(ih.v >> 32) * x->wn + in.d, p);
    }
    *bw_out = rings_close(&r, n_groups);
    return true;
}

/* groups_bw of a WHOLE move: group r is the r-th holder of each data index of h,
 * which (as in gather_walk) is the held layout's TP index, no count kept. The walk
 * ends once a link as slow as the floor turns up. scratch: as gather_walk's. */
static double whole_walk(const dir_t *x, const tsl_cluster_t *c, uint32_t first, double floor,
                         uint32_t *scratch)
{
    const uint32_t G = x->G, n_groups = G / x->wh;
    rings_t r;
    rings_init(&r, c, first, floor, n_groups, scratch + G, scratch + 2 * G);
    dtidx_t ih;
    dtidx_init(&ih, x->h);
    for (uint32_t p = 0; p < G && r.links; p++, dtidx_next(&ih))
        rings_add(&r, (uint32_t)(ih.v >> 32), p);
    return rings_close(&r, n_groups);
}

/* The block's links floor into *floor where negative (not given), kept for the
 * other direction. */
static double need_floor(const tsl_cluster_t *c, uint32_t first, uint32_t G, double *floor)
{
    if (*floor < 0.0)
        *floor = tsl_relayout_links_floor(c, first, G);
    return *floor;
}

/* One direction's move; *floor: the block's links floor, made here on the first
 * need where negative (not given), kept for the other direction. fast: the gather
 * by need tested and priced in one walk (gather_walk), a whole gather priced with
 * no counts (whole_walk); else by_need's walk, then groups_bw's — the plain
 * reference tsl_relayout_plan_plain keeps. */
static void plan_dir(const dir_t *x, const tsl_cluster_t *c, uint32_t first, double *floor,
                     uint32_t *scratch, bool fast, tsl_relayout_move_t *m)
{
    *m = (tsl_relayout_move_t){TSL_RELAYOUT_NONE, 1, 0, INFINITY};
    tsl_relayout_kind_t kind = local_kind(x);
    if (kind != TSL_RELAYOUT_GATHER) {
        m->kind = kind;
        return;
    }
    uint32_t k = x->bn / x->bh; /* by need: w_H / w_N */
    if (fast) {
        double f = c != NULL ? need_floor(c, first, x->G, floor) : 0.0;
        if (gather_walk(x, k, false, c, first, f, scratch, &m->bw)) {
            *m = (tsl_relayout_move_t){TSL_RELAYOUT_GATHER, k, x->wn, m->bw};
            return;
        }
        *m = (tsl_relayout_move_t){TSL_RELAYOUT_WHOLE, x->wh, 1, INFINITY};
        if (c != NULL)
            m->bw = whole_walk(x, c, first, f, scratch);
        return;
    }
    if (by_need(x, k, scratch)) {
        *m = (tsl_relayout_move_t){TSL_RELAYOUT_GATHER, k, x->wn, INFINITY};
    } else {
        *m = (tsl_relayout_move_t){TSL_RELAYOUT_WHOLE, x->wh, 1, INFINITY};
    }
    if (c == NULL)
        return;
    m->bw = groups_bw(x, m, c, first, need_floor(c, first, x->G, floor), scratch);
}

/* The backward move x of a pair whose forward move is fwd, from fwd's kind: the rule's
 * cases pair up (relayout.h) — equal ranges both ways; a forward slice (each needed
 * range inside the held one) is, read backward, each held range inside the needed
 * one on a piece boundary (the held ranges tile the block, so the needed range is a
 * whole number of them): the gather by need, k = w_H / w_N of x; a forward gather by
 * need is a backward slice; and a whole gather one way is one the other (a slice or
 * gather by need backward would make the forward move a gather by need or a slice).
 * Only the bandwidth is walked: the tests plan_dir makes on x would find the kind
 * fwd gives. */
static void paired_dir(const dir_t *x, const tsl_relayout_move_t *fwd, const tsl_cluster_t *c,
                       uint32_t first, double *floor, uint32_t *scratch, tsl_relayout_move_t *m)
{
    switch (fwd->kind) {
    case TSL_RELAYOUT_NONE: *m = (tsl_relayout_move_t){TSL_RELAYOUT_NONE, 1, 0, INFINITY}; return;
    case TSL_RELAYOUT_GATHER:
        *m = (tsl_relayout_move_t){TSL_RELAYOUT_SLICE, 1, 0, INFINITY};
        return;
    case TSL_RELAYOUT_SLICE:
        *m = (tsl_relayout_move_t){TSL_RELAYOUT_GATHER, x->bn / x->bh, x->wn, INFINITY};
        if (c != NULL)
            gather_walk(x, m->k, true, c, first, need_floor(c, first, x->G, floor), scratch,
                        &m->bw);
        return;
    case TSL_RELAYOUT_WHOLE:
        *m = (tsl_relayout_move_t){TSL_RELAYOUT_WHOLE, x->wh, 1, INFINITY};
        if (c != NULL)
            m->bw = whole_walk(x, c, first, need_floor(c, first, x->G, floor), scratch);
        return;
    }
}

/* Both directions of the pair, checked (tsl_relayout_plan_floor's contract). */
static int plan_pair(const tsl_strategy_t *from, const tsl_strategy_t *to, const tsl_cluster_t *c,
                     uint32_t block_first, double floor, uint32_t *scratch, bool fast,
                     tsl_relayout_t *out, tsl_err_t *err)
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
    plan_dir(&fwd, c, block_first, &floor, scratch, fast, &out->fwd);
    if (fast)
        paired_dir(&bwd, &out->fwd, c, block_first, &floor, scratch, &out->bwd);
    else
        plan_dir(&bwd, c, block_first, &floor, scratch, fast, &out->bwd);
    return 0;
}

int tsl_relayout_plan(const tsl_strategy_t *from, const tsl_strategy_t *to, const tsl_cluster_t *c,
                      uint32_t block_first, uint32_t *scratch, tsl_relayout_t *out, tsl_err_t *err)
{
    return tsl_relayout_plan_floor(from, to, c, block_first, -1.0, scratch, out, err);
}

int tsl_relayout_plan_floor(const tsl_strategy_t *from, const tsl_strategy_t *to,
                            const tsl_cluster_t *c, uint32_t block_first, double floor,
                            uint32_t *scratch, tsl_relayout_t *out, tsl_err_t *err)
{
    return plan_pair(from, to, c, block_first, floor, scratch, true, out, err);
}

/* A move's key in a kept table: the block and the two layouts' levels (all a move
 * reads of a strategy: make_dir, the data indices), zeroed past them and in the
 * padding, as the table compares bytes. */
typedef struct move_key {
    uint32_t block_first;
    uint32_t degree[2][TSL_STRATEGY_MAX_LEVELS];
    uint8_t n_levels[2];
    uint8_t dim[2][TSL_STRATEGY_MAX_LEVELS];
} move_key_t;

static move_key_t make_move_key(const tsl_strategy_t *from, const tsl_strategy_t *to,
                                uint32_t block_first)
{
    move_key_t k;
    memset(&k, 0, sizeof(k));
    k.block_first = block_first;
    const tsl_strategy_t *s[2] = {from, to};
    for (int i = 0; i < 2; i++) {
        k.n_levels[i] = s[i]->n_levels;
        for (uint32_t j = 0; j < s[i]->n_levels && j < TSL_STRATEGY_MAX_LEVELS; j++) {
            k.dim[i][j] = s[i]->dim[j];
            k.degree[i][j] = s[i]->degree[j];
        }
    }
    return k;
}

void tsl_relayout_kept_init(tsl_kept_t *kept, uint32_t first, uint32_t most)
{
    tsl_kept_init(kept, sizeof(move_key_t), sizeof(tsl_relayout_t), first, most);
}

int tsl_relayout_plan_kept(tsl_kept_t *kept, const tsl_strategy_t *from, const tsl_strategy_t *to,
                           const tsl_cluster_t *c, uint32_t block_first, double floor,
                           uint32_t *scratch, tsl_relayout_t *out, tsl_err_t *err)
{
    if (kept == NULL || from == NULL || to == NULL || out == NULL)
        return tsl_relayout_plan_floor(from, to, c, block_first, floor, scratch, out, err);
    const move_key_t k = make_move_key(from, to, block_first);
    const tsl_relayout_t *was = tsl_kept_find(kept, &k);
    if (was != NULL) {
        *out = *was;
        return 0;
    }
    if (tsl_relayout_plan_floor(from, to, c, block_first, floor, scratch, out, err) != 0)
        return -1; /* nothing kept: asked again, it fails again */
    tsl_relayout_t *slot = tsl_kept_put(kept, &k);
    if (slot != NULL)
        *slot = *out;
    return 0;
}

int tsl_relayout_plan_plain(const tsl_strategy_t *from, const tsl_strategy_t *to,
                            const tsl_cluster_t *c, uint32_t block_first, double floor,
                            uint32_t *scratch, tsl_relayout_t *out, tsl_err_t *err)
{
    return plan_pair(from, to, c, block_first, floor, scratch, false, out, err);
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
