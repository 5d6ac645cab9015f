/*
 * layerdp.c — Galvatron-BMW Algorithm 3 (Appendix A): per-layer strategies of one
 * stage under a memory budget. See layerdp.h for the contract and
 * docs/search-space.md for the derivation and the guarantees.
 *
 * State: C(l, e, j) = least time of layers 0..l with layer l on strategy j and
 * forward memory (O_f + O_ms, rounded up per layer to whole buckets) of at most e
 * buckets; C(−1, e ≥ 0) = 0, so C is non-increasing in e.
 *
 *   C(0, e, j) = c(0, j)                                           if e ≥ w(0, j)
 *   C(l, e, j) = c(l, j) + min_i [C(l−1, e − w(l, j), i) + R(l, i, j)]
 *
 * Layout form: R(l, i, j) = R_l(λ(i), λ(j)), a cost per pair of layouts, so
 *   min_i [...] = T_λ(j)(l−1, e'),  T_μ(e') = min_λ [ M_λ(l−1, e') + R_l(λ, μ) ]
 * where M_λ is the minimum over the strategies of layout λ (kept per e with its
 * argmin). T is built once per layer for every layout μ — O(Λ²) per e — and each
 * strategy then reads its layout's row: O(L·E·(S + Λ²)); Λ, the distinct layouts,
 * is a few where S is tens (6 layouts of 22 to 63 strategies on an 8-device stage).
 * Full form: the minimum over i is taken explicitly: O(L·E·S²).
 *
 * Memory: the DP values live in two rows (previous layer, current layer). For
 * backtracking, the layout form keeps T's argmin of every layer (a uint16_t per
 * layout and e: the argmin i of cell (l, e, j) is T_λ(j)'s at e − w(l, j)), the
 * full form the argmin i of every evaluated cell (l ≥ 1).
 * Everything is allocated by tsl_layerdp_ws_new; tsl_layerdp_solve allocates
 * nothing.
 *
 * Speed: every inner loop is a run over e on contiguous rows with one strategy
 * (or, for T, one destination layout) fixed (see struct kernels). On x86-64 with AVX2
 * they run 4 cells per step (the two busiest 8 with AVX-512F), elsewhere as plain
 * scalar loops; all give bit-identical results.
 */
#include "layerdp.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define PRED_MAX_STRATEGIES 65536u /* predecessors are stored as uint16_t */
#define FULL_TILE           512u   /* full form: cells per tile (8 KiB of minima) */
#define PAIR_TILE           128u   /* layout form: cells per tile of T (see build_t) */
/* layout form: the most cells a class's strategies relax in registers (the AVX-512
 * kernel's tile; the AVX2 kernel's is RELAX_TILE_AVX2) */
#define RELAX_TILE      32u
#define RELAX_TILE_AVX2 16u

/* AVX-512F and AVX2 kernels on x86-64 with GCC or Clang, the widest the CPU has
 * chosen at run time; elsewhere (and on x86-64 CPUs without AVX2) the portable
 * scalar kernels. */
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define TSL_LAYERDP_AVX2 1
#define TSL_TARGET_AVX2  __attribute__((target("avx2")))
#endif

typedef struct kernels kernels_t;

struct tsl_layerdp_ws {
    uint32_t max_layers, max_strategies, max_buckets;
    /* for l ≥ 1, full form: [((l−1)·S + j)·E1 + e], the argmin i of cell (l, e, j);
     * layout form: [((l−1)·K + μ)·E1 + e'], T_μ's argmin at layer l */
    uint16_t *pred;
    uint32_t *w;             /* [l·S + j]: ⌈(O_f + O_ms) / bucket⌉ */
    uint16_t *act;           /* [l·S + a]: the usable strategies of layer l, ascending */
    uint32_t *nact;          /* [l] */
    uint32_t *cls;           /* [j]: compact layout class 0..K−1 (layout form) */
    uint32_t *corig;         /* [k]: the caller's layout id of compact class k */
    uint8_t *used;           /* [2·S]: the classes of the previous / current layer */
    const double **rows;     /* [S]: the rows one T_μ takes its minimum over */
    const int64_t **rowargs; /* [S]: their argmins */
    double *rowr;            /* [S]: R from each of them to μ */
    uint32_t *srcs;          /* [2·S]: the classes the previous layer used, ascending;
                                the last cell of T each class's strategies read */
    double *srcr;            /* [S, rounded up to 4]: R from each of them to the μ being built */
    uint32_t *keep;          /* [S + 1]: the rows a tile of T_μ takes (select_rows) */
    double *tile_top, *tile_least; /* [tile·ns + a]: their first and last values per tile */
    /* layout form, one layer: its evaluated strategies by class (class k's are
     * [qoff[k], qoff[k + 1]), ascending), with c, j, the first cell s = ff + w, and w */
    uint32_t *qoff;
    double *qc;
    int64_t *qj;
    uint32_t *qs, *qw;
    double *val[2];  /* layout form: class minima [k·E1 + e]; full form: C [b·E1 + e] */
    int64_t *arg[2]; /* layout form: class argmins [k·E1 + e]; full form: scratch */
    /* layout form: T_μ [μ·(E1 + RELAX_TILE) + e] of the layer being evaluated (its
     * argmins go to pred), each row RELAX_TILE cells after its own padding (from
     * tv_mem); zero: T of layer 0, C(−1, e) = 0, +INFINITY in its padding */
    double *tv, *tv_mem, *zero, *zero_mem;
    double *all[2];     /* [e]: minimum over all strategies of the layer */
    int64_t *allarg[2]; /* [e]: its argmin */
    uint32_t *tmp;      /* [l]: an assignment being checked */
    uint32_t *minw;     /* [l]: min_j w(l, j) over the usable j */
    uint32_t *maxw;     /* [l]: max_j w(l, j) over the usable j */
    uint32_t *hi;       /* [l]: the largest e layer l evaluates */
    uint32_t *need;     /* [l]: layout form, the least e of layer l an answer reads
                           (needed_cells); the cells below it are left +INFINITY */
    /* layout form: the layout list cls / corig / n_cls were numbered from (its first
     * n_cls_of entries; 0: none yet), so that a solve given the same list again
     * (the engine's stages of one group) reads them instead of numbering again */
    uint32_t *cls_of, n_cls_of, n_cls;
    const kernels_t *k; /* the kernels of this solve */
    int portable;       /* tsl_layerdp_ws_set_portable: 0 the fastest kernels, 1 scalar only,
                     2 none wider than AVX2 */
};

static inline uint64_t sat_add(uint64_t a, uint64_t b)
{
    uint64_t s = a + b;
    return s < a ? UINT64_MAX : s;
}

tsl_layerdp_ws_t *tsl_layerdp_ws_new(uint32_t max_layers, uint32_t max_strategies,
                                     uint32_t max_buckets)
{
    if (max_layers == 0 || max_strategies == 0 || max_strategies > PRED_MAX_STRATEGIES ||
        max_buckets == UINT32_MAX)
        return NULL;
    uint64_t e1 = (uint64_t)max_buckets + 1;
    uint64_t ls = (uint64_t)max_layers * max_strategies;
    uint64_t npred = ls * e1;
    uint64_t nrow = (uint64_t)max_strategies * e1;
    if (npred > SIZE_MAX / sizeof(uint16_t) || nrow > SIZE_MAX / sizeof(double))
        return NULL;

    tsl_layerdp_ws_t *ws = calloc(1, sizeof(*ws));
    if (ws == NULL)
        return NULL;
    ws->max_layers = max_layers;
    ws->max_strategies = max_strategies;
    ws->max_buckets = max_buckets;
    /* calloc: every cell has a defined value even before it is first written */
    ws->pred = calloc((size_t)npred, sizeof(uint16_t));
    ws->w = calloc((size_t)ls, sizeof(uint32_t));
    ws->act = calloc((size_t)ls, sizeof(uint16_t));
    ws->nact = calloc(max_layers, sizeof(uint32_t));
    ws->cls = calloc(max_strategies, sizeof(uint32_t));
    ws->corig = calloc(max_strategies, sizeof(uint32_t));
    ws->used = calloc(2 * (size_t)max_strategies, 1);
    ws->rows = calloc(max_strategies, sizeof(*ws->rows));
    ws->rowargs = calloc(max_strategies, sizeof(*ws->rowargs));
    ws->rowr = calloc(max_strategies, sizeof(*ws->rowr));
    ws->srcs = calloc(2 * (size_t)max_strategies, sizeof(uint32_t));
    const size_t tiles = (size_t)e1 / PAIR_TILE + 1, s4 = ((size_t)max_strategies + 3) & ~(size_t)3;
    ws->srcr = calloc(s4, sizeof(double));
    ws->keep = calloc(s4 + 1, sizeof(uint32_t));
    ws->tile_top = calloc(tiles * s4, sizeof(double));
    ws->tile_least = calloc(tiles * s4, sizeof(double));
    ws->qoff = calloc((size_t)max_strategies + 1, sizeof(uint32_t));
    ws->qc = calloc(max_strategies, sizeof(double));
    ws->qj = calloc(max_strategies, sizeof(int64_t));
    ws->qs = calloc(max_strategies, sizeof(uint32_t));
    ws->qw = calloc(max_strategies, sizeof(uint32_t));
    ws->tv_mem = calloc((size_t)max_strategies * (e1 + RELAX_TILE), sizeof(double));
    ws->zero_mem = calloc((size_t)e1 + RELAX_TILE, sizeof(double));
    ws->tv = ws->tv_mem ? ws->tv_mem + RELAX_TILE : NULL;
    ws->zero = ws->zero_mem ? ws->zero_mem + RELAX_TILE : NULL;
    for (uint32_t i = 0; ws->zero_mem && i < RELAX_TILE; i++)
        ws->zero_mem[i] = INFINITY;
    ws->tmp = calloc(max_layers, sizeof(uint32_t));
    ws->minw = calloc(max_layers, sizeof(uint32_t));
    ws->maxw = calloc(max_layers, sizeof(uint32_t));
    ws->hi = calloc(max_layers, sizeof(uint32_t));
    ws->need = calloc(max_layers, sizeof(uint32_t));
    ws->cls_of = calloc(max_strategies, sizeof(uint32_t));
    bool ok = ws->pred && ws->w && ws->act && ws->nact && ws->cls && ws->corig && ws->used &&
              ws->rows && ws->rowargs && ws->rowr && ws->srcs && ws->srcr && ws->keep &&
              ws->tile_top && ws->tile_least && ws->qoff && ws->qc && ws->qj && ws->qs && ws->qw &&
              ws->tv && ws->zero && ws->tmp && ws->minw && ws->maxw && ws->hi && ws->need &&
              ws->cls_of;
    for (int r = 0; r < 2; r++) {
        ws->val[r] = calloc((size_t)nrow, sizeof(double));
        ws->arg[r] = calloc((size_t)nrow, sizeof(int64_t));
        ws->all[r] = calloc((size_t)e1, sizeof(double));
        ws->allarg[r] = calloc((size_t)e1, sizeof(int64_t));
        ok = ok && ws->val[r] && ws->arg[r] && ws->all[r] && ws->allarg[r];
    }
    if (!ok) {
        tsl_layerdp_ws_free(ws);
        return NULL;
    }
    return ws;
}

void tsl_layerdp_ws_free(tsl_layerdp_ws_t *ws)
{
    if (ws == NULL)
        return;
    free(ws->pred);
    free(ws->w);
    free(ws->act);
    free(ws->nact);
    free(ws->cls);
    free(ws->corig);
    free(ws->used);
    free((void *)ws->rows);
    free((void *)ws->rowargs);
    free(ws->rowr);
    free(ws->srcs);
    free(ws->srcr);
    free(ws->keep);
    free(ws->tile_top);
    free(ws->tile_least);
    free(ws->qoff);
    free(ws->qc);
    free(ws->qj);
    free(ws->qs);
    free(ws->qw);
    free(ws->tv_mem);
    free(ws->zero_mem);
    free(ws->tmp);
    free(ws->minw);
    free(ws->maxw);
    free(ws->hi);
    free(ws->need);
    free(ws->cls_of);
    for (int r = 0; r < 2; r++) {
        free(ws->val[r]);
        free(ws->arg[r]);
        free(ws->all[r]);
        free(ws->allarg[r]);
    }
    free(ws);
}

bool tsl_layerdp_ws_holds(const tsl_layerdp_ws_t *ws, uint32_t max_layers, uint32_t max_strategies,
                          uint32_t max_buckets)
{
    return ws != NULL && max_layers <= ws->max_layers && max_strategies <= ws->max_strategies &&
           max_buckets <= ws->max_buckets;
}

uint32_t tsl_layerdp_buckets(uint64_t budget_bytes, uint64_t bucket_bytes)
{
    if (bucket_bytes == 0)
        bucket_bytes = TSL_LAYERDP_DEFAULT_BUCKET_BYTES;
    uint64_t n = budget_bytes / bucket_bytes;
    return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

/* Where layer l's figures (c, O_f, O_b, O_ms) start in their arrays: its own row, or
 * the one row_at names. */
static inline size_t row_base(const tsl_layerdp_problem_t *p, uint32_t l)
{
    return (size_t)(p->row_at != NULL ? p->row_at[l] : l) * p->n_strategies;
}

/* Whether layer l > 0 reads the same row of figures as layer l − 1 (row_at). */
static inline bool same_row_as_last(const tsl_layerdp_problem_t *p, uint32_t l)
{
    return p->row_at != NULL && l > 0 && p->row_at[l] == p->row_at[l - 1];
}

/* Layout form: layer l's Λ × Λ matrix of R (its own, or the one trans_at names). */
static inline const double *pair_matrix(const tsl_layerdp_problem_t *p, uint32_t l)
{
    const size_t K = p->n_layouts, at = p->trans_at != NULL ? p->trans_at[l] : l;
    return p->trans_pair_s + at * K * K;
}

/* R(l, i, j); layer 0 takes its input from the previous stage: 0. */
static inline double trans_cost(const tsl_layerdp_problem_t *p, uint32_t l, uint32_t i, uint32_t j)
{
    uint32_t S = p->n_strategies;
    if (l == 0)
        return 0.0;
    if (p->trans_full_s != NULL)
        return p->trans_full_s[((size_t)l * S + i) * S + j];
    size_t K = p->n_layouts;
    return pair_matrix(p, l)[(size_t)p->layout[i] * K + p->layout[j]];
}

uint64_t tsl_layerdp_peak_bytes(const tsl_layerdp_problem_t *p, const uint32_t *choice)
{
    uint64_t fwd = 0, ms = 0, top = 0;
    for (uint32_t l = 0; l < p->n_layers; l++) {
        size_t k = row_base(p, l) + choice[l];
        fwd = sat_add(fwd, p->fwd_bytes[k]);
        ms = sat_add(ms, p->ms_bytes[k]);
        uint64_t here = sat_add(fwd, p->bwd_bytes[k]);
        if (here > top)
            top = here;
    }
    return sat_add(top, ms);
}

/* Eq. 3: Σ O_f + O_ms. */
static uint64_t fwd_total_bytes(const tsl_layerdp_problem_t *p, const uint32_t *choice)
{
    uint64_t f = 0;
    for (uint32_t l = 0; l < p->n_layers; l++) {
        size_t k = row_base(p, l) + choice[l];
        f = sat_add(f, sat_add(p->fwd_bytes[k], p->ms_bytes[k]));
    }
    return f;
}

/* Summed in the DP's own order, C(l) = (C(l−1) + R) + c, so that the DP's value
 * and this one agree to the last bit. */
double tsl_layerdp_time_s(const tsl_layerdp_problem_t *p, const uint32_t *choice)
{
    double t = 0.0;
    for (uint32_t l = 0; l < p->n_layers; l++) {
        double r = l == 0 ? 0.0 : trans_cost(p, l, choice[l - 1], choice[l]);
        t = (t + r) + p->time_s[row_base(p, l) + choice[l]];
    }
    return t;
}

/* ---- kernels: n cells of one strategy, pointers already at the first cell ---- */

/*
 * Every inner loop of the DP is one of these: a run over e on contiguous rows
 * with one strategy fixed. The AVX2 versions process 4 cells per step (the
 * argmins are int64_t so that they share the lanes of the doubles) and finish
 * with the scalar version; both perform the same IEEE additions and strict
 * comparisons per cell, so their results are identical to the bit.
 */
struct kernels {
    /* Layout form, one class of a layer: for each cell e of [x0, x1], from
     * ck[e] = +INFINITY, and each of the class's strategies q < nq in turn
     * (ascending j) with s[q] ≤ e,
     *   v = T[e − w[q]] + c[q], (ck[e], ckarg[e]) = min((ck, ckarg), (v, j[q]));
     * ties keep the earlier strategy (ckarg stays as it was where every v is
     * +INFINITY). T, ck and ckarg are indexed by cell; the RELAX_TILE − 1 cells
     * of T before each s[q] − w[q] are +INFINITY. */
    void (*relax_class)(uint32_t x0, uint32_t x1, uint32_t nq, const double *c, const int64_t *j,
                        const uint32_t *s, const uint32_t *w, const double *T, double *ck,
                        int64_t *ckarg);
    /* (best, arg) = min((best, arg), (c, j)) */
    void (*min_const)(uint32_t n, double c, int64_t j, double *best, int64_t *arg);
    /* (best, arg) = min((best, arg), (src + r, j)) */
    void (*min_row)(uint32_t n, const double *src, double r, int64_t j, double *best, int64_t *arg);
    /* (best, arg) = min((best, arg), (src + r, srcarg)) */
    void (*min_rowarg)(uint32_t n, const double *src, double r, const int64_t *srcarg, double *best,
                       int64_t *arg);
    void (*fill_inf)(double *x, size_t n);
    /* (best[x], arg[x]) = the first least (src[q][off + x] + r[q], srcarg[q][off + x])
     * over q < nq; (+INFINITY, 0) where none is finite. One pass over the rows: T_μ.
     * The argmins (strategy indices) are kept as uint16_t. */
    void (*min_rows)(uint32_t n, uint32_t nq, const double *const *src,
                     const int64_t *const *srcarg, size_t off, const double *r, double *best,
                     uint16_t *arg);
    /* The rows of one tile of T_μ (build_t): μ's own at place 0 (first value u0,
     * last l0), row a < n at place a + 1 (top[a] + r[a], least[a] + r[a]). U = the
     * least first value, place* the first place with it. Keeps place* and every
     * other whose last value is below U, or equal and before place*; writes the
     * kept places into keep[] ascending, returns their count. top, least and r
     * are readable (and +INFINITY in r) up to n rounded up to 4. */
    uint32_t (*select_rows)(uint32_t n, const double *top, const double *least, const double *r,
                            double u0, double l0, uint32_t *keep);
};

static void relax_class_scalar(uint32_t x0, uint32_t x1, uint32_t nq, const double *c,
                               const int64_t *j, const uint32_t *s, const uint32_t *w,
                               const double *T, double *restrict ck, int64_t *restrict ckarg)
{
    for (uint32_t e = x0; e <= x1; e++)
        ck[e] = INFINITY;
    for (uint32_t q = 0; q < nq; q++) {
        const double *restrict pt = T - (ptrdiff_t)w[q];
        for (uint32_t e = s[q] > x0 ? s[q] : x0; e <= x1; e++) {
            double v = pt[e] + c[q];
            bool m2 = v < ck[e];
            ck[e] = m2 ? v : ck[e];
            ckarg[e] = m2 ? j[q] : ckarg[e];
        }
    }
}

static void min_const_scalar(uint32_t n, double c, int64_t j, double *restrict best,
                             int64_t *restrict arg)
{
    for (uint32_t x = 0; x < n; x++) {
        bool m = c < best[x];
        best[x] = m ? c : best[x];
        arg[x] = m ? j : arg[x];
    }
}

static void min_row_scalar(uint32_t n, const double *restrict src, double r, int64_t j,
                           double *restrict best, int64_t *restrict arg)
{
    for (uint32_t x = 0; x < n; x++) {
        double v = src[x] + r;
        bool m = v < best[x];
        best[x] = m ? v : best[x];
        arg[x] = m ? j : arg[x];
    }
}

static void min_rowarg_scalar(uint32_t n, const double *restrict src, double r,
                              const int64_t *restrict srcarg, double *restrict best,
                              int64_t *restrict arg)
{
    for (uint32_t x = 0; x < n; x++) {
        double v = src[x] + r;
        bool m = v < best[x];
        best[x] = m ? v : best[x];
        arg[x] = m ? srcarg[x] : arg[x];
    }
}

static void fill_inf_scalar(double *restrict x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        x[i] = INFINITY;
}

static void min_rows_scalar(uint32_t n, uint32_t nq, const double *const *src,
                            const int64_t *const *srcarg, size_t off, const double *r,
                            double *restrict best, uint16_t *restrict arg)
{
    for (uint32_t x = 0; x < n; x++) {
        double b = INFINITY;
        int64_t a = 0;
        for (uint32_t q = 0; q < nq; q++) {
            double v = src[q][off + x] + r[q];
            bool m = v < b;
            b = m ? v : b;
            a = m ? srcarg[q][off + x] : a;
        }
        best[x] = b;
        arg[x] = (uint16_t)a;
    }
}

static uint32_t select_rows_scalar(uint32_t n, const double *top, const double *least,
                                   const double *r, double u0, double l0, uint32_t *keep)
{
    double U = u0;
    uint32_t star = 0, nk = 0;
    for (uint32_t a = 0; a < n; a++) {
        const double v = top[a] + r[a];
        star = v < U ? a + 1 : star;
        U = v < U ? v : U;
    }
    for (uint32_t pl = 0; pl <= n; pl++) {
        const double v = pl ? least[pl - 1] + r[pl - 1] : l0;
        if (pl != star && (v > U || (v == U && pl > star)))
            continue;
        keep[nk++] = pl;
    }
    return nk;
}

static const kernels_t kernels_scalar = {
    relax_class_scalar, min_const_scalar, min_row_scalar,     min_rowarg_scalar,
    fill_inf_scalar,    min_rows_scalar,  select_rows_scalar,
};

#ifdef TSL_LAYERDP_AVX2

/* Vectors that may sit at any element boundary and alias their element type:
 * loads and stores are plain (unaligned) vector moves. */
typedef double v4d_t __attribute__((vector_size(32), aligned(8), may_alias));
typedef int64_t v4i_t __attribute__((vector_size(32), aligned(8), may_alias));
typedef int16_t v16s_t __attribute__((vector_size(32), aligned(8), may_alias));
typedef uint16_t v4h_t __attribute__((vector_size(8), aligned(2), may_alias));

#define V4D_LOAD(ptr)     (*(const v4d_t *)(const void *)(ptr))
#define V4I_LOAD(ptr)     (*(const v4i_t *)(const void *)(ptr))
#define V4D_STORE(ptr, v) (*(v4d_t *)(void *)(ptr) = (v))
#define V4I_STORE(ptr, v) (*(v4i_t *)(void *)(ptr) = (v))
#define V4H_STORE(ptr, v) (*(v4h_t *)(void *)(ptr) = (v))
/* lane-wise m ? a : b for a mask m of all-ones / all-zeros lanes */
#define V4_SELI(m, a, b) (((m) & (a)) | (~(m) & (b)))
#define V4_SELD(m, a, b) ((v4d_t)V4_SELI((m), (v4i_t)(a), (v4i_t)(b)))

/* RELAX_TILE_AVX2 = 16 cells in four vectors kept in registers while every strategy
 * of the class relaxes them (v < b: min_pd, which keeps b unless v is less, as the
 * scalar select does). A strategy whose first cell falls inside a tile relaxes it
 * whole: the lanes before its first cell read T's +INFINITY before s − w, which
 * changes nothing. */
TSL_TARGET_AVX2
static inline void relax4(__m256d v, __m256d jv, __m256d *b, __m256d *a)
{
    __m256d m = _mm256_cmp_pd(v, *b, _CMP_LT_OQ);
    *a = _mm256_blendv_pd(*a, jv, m);
    *b = _mm256_min_pd(v, *b);
}

TSL_TARGET_AVX2
static void relax_class_avx2(uint32_t x0, uint32_t x1, uint32_t nq, const double *c,
                             const int64_t *j, const uint32_t *s, const uint32_t *w,
                             const double *T, double *restrict ck, int64_t *restrict ckarg)
{
    const __m256d inf = _mm256_set1_pd(INFINITY);
    uint32_t x = x0;
    for (; x + RELAX_TILE_AVX2 - 1 <= x1; x += RELAX_TILE_AVX2) {
        __m256d b0 = inf, b1 = inf, b2 = inf, b3 = inf;
        __m256d a0 = _mm256_loadu_pd((const double *)(const void *)(ckarg + x)),
                a1 = _mm256_loadu_pd((const double *)(const void *)(ckarg + x + 4)),
                a2 = _mm256_loadu_pd((const double *)(const void *)(ckarg + x + 8)),
                a3 = _mm256_loadu_pd((const double *)(const void *)(ckarg + x + 12));
        for (uint32_t q = 0; q < nq; q++) {
            if (s[q] >= x + RELAX_TILE_AVX2)
                continue;
            const double *pt = T + (ptrdiff_t)x - (ptrdiff_t)w[q];
            const __m256d cv = _mm256_set1_pd(c[q]);
            const __m256d jv = _mm256_castsi256_pd(_mm256_set1_epi64x(j[q]));
            relax4(_mm256_add_pd(_mm256_loadu_pd(pt), cv), jv, &b0, &a0);
            relax4(_mm256_add_pd(_mm256_loadu_pd(pt + 4), cv), jv, &b1, &a1);
            relax4(_mm256_add_pd(_mm256_loadu_pd(pt + 8), cv), jv, &b2, &a2);
            relax4(_mm256_add_pd(_mm256_loadu_pd(pt + 12), cv), jv, &b3, &a3);
        }
        _mm256_storeu_pd(ck + x, b0);
        _mm256_storeu_pd(ck + x + 4, b1);
        _mm256_storeu_pd(ck + x + 8, b2);
        _mm256_storeu_pd(ck + x + 12, b3);
        _mm256_storeu_pd((double *)(void *)(ckarg + x), a0);
        _mm256_storeu_pd((double *)(void *)(ckarg + x + 4), a1);
        _mm256_storeu_pd((double *)(void *)(ckarg + x + 8), a2);
        _mm256_storeu_pd((double *)(void *)(ckarg + x + 12), a3);
    }
    if (x <= x1)
        relax_class_scalar(x, x1, nq, c, j, s, w, T, ck, ckarg);
}

TSL_TARGET_AVX2
static void min_const_avx2(uint32_t n, double c, int64_t j, double *restrict best,
                           int64_t *restrict arg)
{
    const v4d_t cv = {c, c, c, c};
    const v4i_t jv = {j, j, j, j};
    uint32_t x = 0;
    for (; x + 4 <= n; x += 4) {
        v4d_t old = V4D_LOAD(best + x);
        v4i_t oarg = V4I_LOAD(arg + x);
        v4i_t m = cv < old;
        v4d_t nv = V4_SELD(m, cv, old);
        v4i_t na = V4_SELI(m, jv, oarg);
        V4D_STORE(best + x, nv);
        V4I_STORE(arg + x, na);
    }
    min_const_scalar(n - x, c, j, best + x, arg + x);
}

TSL_TARGET_AVX2
static void min_row_avx2(uint32_t n, const double *restrict src, double r, int64_t j,
                         double *restrict best, int64_t *restrict arg)
{
    const v4d_t rv = {r, r, r, r};
    const v4i_t jv = {j, j, j, j};
    uint32_t x = 0;
    for (; x + 4 <= n; x += 4) {
        v4d_t v = V4D_LOAD(src + x) + rv, old = V4D_LOAD(best + x);
        v4i_t oarg = V4I_LOAD(arg + x);
        v4i_t m = v < old;
        v4d_t nv = V4_SELD(m, v, old);
        v4i_t na = V4_SELI(m, jv, oarg);
        V4D_STORE(best + x, nv);
        V4I_STORE(arg + x, na);
    }
    min_row_scalar(n - x, src + x, r, j, best + x, arg + x);
}

TSL_TARGET_AVX2
static void min_rowarg_avx2(uint32_t n, const double *restrict src, double r,
                            const int64_t *restrict srcarg, double *restrict best,
                            int64_t *restrict arg)
{
    const v4d_t rv = {r, r, r, r};
    uint32_t x = 0;
    for (; x + 4 <= n; x += 4) {
        v4d_t v = V4D_LOAD(src + x) + rv, old = V4D_LOAD(best + x);
        v4i_t a = V4I_LOAD(srcarg + x), oarg = V4I_LOAD(arg + x);
        v4i_t m = v < old;
        v4d_t nv = V4_SELD(m, v, old);
        v4i_t na = V4_SELI(m, a, oarg);
        V4D_STORE(best + x, nv);
        V4I_STORE(arg + x, na);
    }
    min_rowarg_scalar(n - x, src + x, r, srcarg + x, best + x, arg + x);
}

TSL_TARGET_AVX2
static void fill_inf_avx2(double *restrict x, size_t n)
{
    const v4d_t inf = {INFINITY, INFINITY, INFINITY, INFINITY};
    size_t i = 0;
    for (; i + 4 <= n; i += 4)
        V4D_STORE(x + i, inf);
    fill_inf_scalar(x + i, n - i);
}

/* One vector of T: the first least of the rows' v = src + r (min_pd keeps b unless
 * v is less), its argmin from srcarg. */
TSL_TARGET_AVX2
static inline void min_row4(const double *src, const int64_t *srcarg, __m256d rv, __m256d *b,
                            __m256d *a)
{
    __m256d v = _mm256_add_pd(_mm256_loadu_pd(src), rv);
    __m256d m = _mm256_cmp_pd(v, *b, _CMP_LT_OQ);
    *a = _mm256_blendv_pd(*a, _mm256_loadu_pd((const double *)(const void *)srcarg), m);
    *b = _mm256_min_pd(v, *b);
}

/* The argmins' low 16 bits (each lane's first uint16_t) into arg[0..4). */
TSL_TARGET_AVX2
static inline void store_arg4(uint16_t *arg, __m256d a)
{
    const v16s_t h = (v16s_t)_mm256_castpd_si256(a);
    V4H_STORE(arg, (v4h_t)__builtin_shufflevector(h, h, 0, 4, 8, 12));
}

TSL_TARGET_AVX2
static void min_rows_avx2(uint32_t n, uint32_t nq, const double *const *src,
                          const int64_t *const *srcarg, size_t off, const double *r,
                          double *restrict best, uint16_t *restrict arg)
{
    const __m256d inf = _mm256_set1_pd(INFINITY), zero = _mm256_setzero_pd();
    uint32_t x = 0;
    for (; x + 16 <= n; x += 16) { /* four vectors per pass over the rows */
        __m256d b0 = inf, b1 = inf, b2 = inf, b3 = inf, a0 = zero, a1 = zero, a2 = zero, a3 = zero;
        for (uint32_t q = 0; q < nq; q++) {
            const double *sq = src[q] + off + x;
            const int64_t *aq = srcarg[q] + off + x;
            const __m256d rv = _mm256_set1_pd(r[q]);
            min_row4(sq, aq, rv, &b0, &a0);
            min_row4(sq + 4, aq + 4, rv, &b1, &a1);
            min_row4(sq + 8, aq + 8, rv, &b2, &a2);
            min_row4(sq + 12, aq + 12, rv, &b3, &a3);
        }
        _mm256_storeu_pd(best + x, b0);
        _mm256_storeu_pd(best + x + 4, b1);
        _mm256_storeu_pd(best + x + 8, b2);
        _mm256_storeu_pd(best + x + 12, b3);
        store_arg4(arg + x, a0);
        store_arg4(arg + x + 4, a1);
        store_arg4(arg + x + 8, a2);
        store_arg4(arg + x + 12, a3);
    }
    for (; x + 4 <= n; x += 4) {
        __m256d b = inf, a = zero;
        for (uint32_t q = 0; q < nq; q++)
            min_row4(src[q] + off + x, srcarg[q] + off + x, _mm256_set1_pd(r[q]), &b, &a);
        _mm256_storeu_pd(best + x, b);
        store_arg4(arg + x, a);
    }
    min_rows_scalar(n - x, nq, src, srcarg, off + x, r, best + x, arg + x);
}

/* select_rows four rows at a time: each lane keeps its first least (places a ≡ lane
 * mod 4, ascending), then the lanes' least, ties to the lower place — the
 * sequential first least; the kept places from each vector's mask. */
TSL_TARGET_AVX2
static uint32_t select_rows_avx2(uint32_t n, const double *top, const double *least,
                                 const double *r, double u0, double l0, uint32_t *keep)
{
    __m256d best = _mm256_set1_pd(INFINITY);
    __m256i bidx = _mm256_set1_epi64x(INT64_MAX);
    __m256i idx = _mm256_setr_epi64x(0, 1, 2, 3);
    const __m256i four = _mm256_set1_epi64x(4);
    for (uint32_t a = 0; a < n; a += 4) {
        __m256d v = _mm256_add_pd(_mm256_loadu_pd(top + a), _mm256_loadu_pd(r + a));
        __m256d m = _mm256_cmp_pd(v, best, _CMP_LT_OQ);
        best = _mm256_blendv_pd(best, v, m);
        bidx = _mm256_castpd_si256(
            _mm256_blendv_pd(_mm256_castsi256_pd(bidx), _mm256_castsi256_pd(idx), m));
        idx = _mm256_add_epi64(idx, four);
    }
    double bv[4];
    int64_t bi[4];
    _mm256_storeu_pd(bv, best);
    _mm256_storeu_si256((__m256i *)(void *)bi, bidx);
    double U = INFINITY;
    int64_t at = INT64_MAX;
    for (int k = 0; k < 4; k++)
        if (bv[k] < U || (bv[k] == U && bi[k] < at)) {
            U = bv[k];
            at = bi[k];
        }
    uint32_t star = 0;
    if (U < u0)
        star = (uint32_t)at + 1;
    else
        U = u0;
    uint32_t nk = 0;
    if (star == 0 || !(l0 > U))
        keep[nk++] = 0;
    const __m256d Uv = _mm256_set1_pd(U);
    const __m256i sv = _mm256_set1_epi64x((int64_t)star);
    __m256i pl = _mm256_setr_epi64x(1, 2, 3, 4);
    for (uint32_t a = 0; a < n; a += 4) {
        __m256d v = _mm256_add_pd(_mm256_loadu_pd(least + a), _mm256_loadu_pd(r + a));
        __m256i after = _mm256_cmpgt_epi64(pl, sv), at_star = _mm256_cmpeq_epi64(pl, sv);
        __m256d skip = _mm256_or_pd(
            _mm256_cmp_pd(v, Uv, _CMP_GT_OQ),
            _mm256_and_pd(_mm256_cmp_pd(v, Uv, _CMP_EQ_OQ), _mm256_castsi256_pd(after)));
        skip = _mm256_andnot_pd(_mm256_castsi256_pd(at_star), skip);
        unsigned bits = ~(unsigned)_mm256_movemask_pd(skip) & 0xfu;
        while (bits) {
            const uint32_t k = (uint32_t)__builtin_ctz(bits);
            if (a + k < n)
                keep[nk++] = a + k + 1;
            bits &= bits - 1;
        }
        pl = _mm256_add_epi64(pl, four);
    }
    return nk;
}

static const kernels_t kernels_avx2 = {
    relax_class_avx2, min_const_avx2, min_row_avx2,     min_rowarg_avx2,
    fill_inf_avx2,    min_rows_avx2,  select_rows_avx2,
};

/*
 * AVX-512F: the two kernels that take most of a solve (relax_class and min_rows)
 * eight cells per vector, RELAX_TILE = 32 cells (four vectors) per pass over the
 * strategies or rows, which halves the per-strategy work of loading its c, j, w
 * and s against the AVX2 kernels' 16. The same IEEE additions and strict
 * comparisons per cell (min_pd(v, b) is v < b ? v : b, the mask the same v < b),
 * so the results are those of the scalar kernels to the bit; the cells left after
 * the last whole tile go to the AVX2 kernels.
 */
#define TSL_TARGET_AVX512 __attribute__((target("avx512f")))

TSL_TARGET_AVX512
static inline void relax8(__m512d v, __m512i jv, __m512d *b, __m512i *a)
{
    const __mmask8 m = _mm512_cmp_pd_mask(v, *b, _CMP_LT_OQ);
    *a = _mm512_mask_mov_epi64(*a, m, jv);
    *b = _mm512_min_pd(v, *b);
}

/*
 * relax_tile_beaten: a strategy whose value at the tile's last cell is no less than
 * the tile's running least at its first cell is skipped — the same cells and
 * argmins. T is non-increasing in e (C is: more memory never costs time; a minimum
 * of non-increasing rows, and its +INFINITY before ff, are too; adding c keeps the
 * order, IEEE rounding being monotone), so each strategy's v = T[e − w] + c is
 * non-increasing across the tile, and so is the running least b over the strategies
 * relaxed so far. Then v(e) ≥ v(last) ≥ b(first) ≥ b(e) for every cell e: v is
 * nowhere strictly below b, the only case that moves a cell. One load and compare
 * per strategy where four vectors' loads, adds, compares and blends stood: most of a
 * class's strategies are beaten across a whole tile by an earlier one.
 */
/* The RELAX_TILE cells from x of relax_class_avx512. */
TSL_TARGET_AVX512
static inline void relax_tile_avx512(uint32_t x, uint32_t nq, const double *c, const int64_t *j,
                                     const uint32_t *s, const uint32_t *w, const double *T,
                                     double *restrict ck, int64_t *restrict ckarg)
{
    const __m512d inf = _mm512_set1_pd(INFINITY);
    __m512d b0 = inf, b1 = inf, b2 = inf, b3 = inf;
    __m512i a0 = _mm512_loadu_si512(ckarg + x), a1 = _mm512_loadu_si512(ckarg + x + 8),
            a2 = _mm512_loadu_si512(ckarg + x + 16), a3 = _mm512_loadu_si512(ckarg + x + 24);
    for (uint32_t q = 0; q < nq; q++) {
        if (s[q] >= x + RELAX_TILE)
            continue;
        const double *pt = T + (ptrdiff_t)x - (ptrdiff_t)w[q];
        if (pt[RELAX_TILE - 1] + c[q] >= _mm512_cvtsd_f64(b0))
            continue; /* improves no cell (relax_tile_beaten) */
        const __m512d cv = _mm512_set1_pd(c[q]);
        const __m512i jv = _mm512_set1_epi64(j[q]);
        relax8(_mm512_add_pd(_mm512_loadu_pd(pt), cv), jv, &b0, &a0);
        relax8(_mm512_add_pd(_mm512_loadu_pd(pt + 8), cv), jv, &b1, &a1);
        relax8(_mm512_add_pd(_mm512_loadu_pd(pt + 16), cv), jv, &b2, &a2);
        relax8(_mm512_add_pd(_mm512_loadu_pd(pt + 24), cv), jv, &b3, &a3);
    }
    _mm512_storeu_pd(ck + x, b0);
    _mm512_storeu_pd(ck + x + 8, b1);
    _mm512_storeu_pd(ck + x + 16, b2);
    _mm512_storeu_pd(ck + x + 24, b3);
    _mm512_storeu_si512(ckarg + x, a0);
    _mm512_storeu_si512(ckarg + x + 8, a1);
    _mm512_storeu_si512(ckarg + x + 16, a2);
    _mm512_storeu_si512(ckarg + x + 24, a3);
}

/*
 * relax_tile_overlap: the cells left after the last whole tile of a run of at least
 * RELAX_TILE go in one more tile that ends at x1, over some cells already relaxed —
 * where the AVX2 and scalar kernels took up to 31 cells without the tile skip.
 * Relaxing a cell again changes nothing: its value is the first least of its
 * strategies' values from +INFINITY again, and its argmin the same strategy, or,
 * where no value is finite, the argmin left standing, which the first pass left
 * standing too.
 */
TSL_TARGET_AVX512
static void relax_class_avx512(uint32_t x0, uint32_t x1, uint32_t nq, const double *c,
                               const int64_t *j, const uint32_t *s, const uint32_t *w,
                               const double *T, double *restrict ck, int64_t *restrict ckarg)
{
    uint32_t x = x0;
    for (; x + RELAX_TILE - 1 <= x1; x += RELAX_TILE)
        relax_tile_avx512(x, nq, c, j, s, w, T, ck, ckarg);
    if (x > x1)
        return;
    if (x > x0) /* relax_tile_overlap */
        relax_tile_avx512(x1 - (RELAX_TILE - 1), nq, c, j, s, w, T, ck, ckarg);
    else
        relax_class_avx2(x, x1, nq, c, j, s, w, T, ck, ckarg);
}

/* One vector of T_μ: min_row4's eight-lane form (the argmin read only where taken) */
TSL_TARGET_AVX512
static inline void min_row8(const double *src, const int64_t *srcarg, __m512d rv, __m512d *b,
                            __m512i *a)
{
    const __m512d v = _mm512_add_pd(_mm512_loadu_pd(src), rv);
    const __mmask8 m = _mm512_cmp_pd_mask(v, *b, _CMP_LT_OQ);
    *a = _mm512_mask_loadu_epi64(*a, m, srcarg);
    *b = _mm512_min_pd(v, *b);
}

TSL_TARGET_AVX512
static void min_rows_avx512(uint32_t n, uint32_t nq, const double *const *src,
                            const int64_t *const *srcarg, size_t off, const double *r,
                            double *restrict best, uint16_t *restrict arg)
{
    const __m512d inf = _mm512_set1_pd(INFINITY);
    const __m512i zero = _mm512_setzero_si512();
    uint32_t x = 0;
    for (; x + 32 <= n; x += 32) { /* four vectors per pass over the rows */
        __m512d b0 = inf, b1 = inf, b2 = inf, b3 = inf;
        __m512i a0 = zero, a1 = zero, a2 = zero, a3 = zero;
        for (uint32_t q = 0; q < nq; q++) {
            const double *sq = src[q] + off + x;
            if (sq[31] + r[q] >= _mm512_cvtsd_f64(b0))
                continue; /* improves no cell: the rows are non-increasing too (see
                             relax_tile_beaten) */
            const int64_t *aq = srcarg[q] + off + x;
            const __m512d rv = _mm512_set1_pd(r[q]);
            min_row8(sq, aq, rv, &b0, &a0);
            min_row8(sq + 8, aq + 8, rv, &b1, &a1);
            min_row8(sq + 16, aq + 16, rv, &b2, &a2);
            min_row8(sq + 24, aq + 24, rv, &b3, &a3);
        }
        _mm512_storeu_pd(best + x, b0);
        _mm512_storeu_pd(best + x + 8, b1);
        _mm512_storeu_pd(best + x + 16, b2);
        _mm512_storeu_pd(best + x + 24, b3);
        /* the argmins' low 16 bits (strategy indices below PRED_MAX_STRATEGIES) */
        _mm_storeu_si128((__m128i *)(void *)(arg + x), _mm512_cvtepi64_epi16(a0));
        _mm_storeu_si128((__m128i *)(void *)(arg + x + 8), _mm512_cvtepi64_epi16(a1));
        _mm_storeu_si128((__m128i *)(void *)(arg + x + 16), _mm512_cvtepi64_epi16(a2));
        _mm_storeu_si128((__m128i *)(void *)(arg + x + 24), _mm512_cvtepi64_epi16(a3));
    }
    if (x < n)
        min_rows_avx2(n - x, nq, src, srcarg, off + x, r, best + x, arg + x);
}

static const kernels_t kernels_avx512 = {
    relax_class_avx512, min_const_avx2,  min_row_avx2,     min_rowarg_avx2,
    fill_inf_avx2,      min_rows_avx512, select_rows_avx2,
};
#endif

static const kernels_t *pick_kernels(const tsl_layerdp_ws_t *ws)
{
#ifdef TSL_LAYERDP_AVX2
    if (ws->portable == 0 && __builtin_cpu_supports("avx512f"))
        return &kernels_avx512;
    if (ws->portable != 1 && __builtin_cpu_supports("avx2"))
        return &kernels_avx2;
#endif
    (void)ws;
    return &kernels_scalar;
}

/*
 * Not in layerdp.h (yet): makes solves on ws use the portable scalar kernels
 * (on = 1), the AVX2 ones even where the CPU has AVX-512 (on = 2), or the fastest
 * the CPU has (on = 0, the default). For tests and benchmarks; the results are the
 * same either way. Returns 1 when vector kernels exist in this build.
 */
int tsl_layerdp_ws_set_portable(tsl_layerdp_ws_t *ws, int on)
{
    if (ws != NULL)
        ws->portable = on == 2 ? 2 : on != 0;
#ifdef TSL_LAYERDP_AVX2
    return 1;
#else
    return 0;
#endif
}

/* First finite x[e] for e ∈ [from, to]; to + 1 when none. */
static uint32_t first_finite(const double *x, uint32_t from, uint32_t to)
{
    uint32_t e = from;
    while (e <= to && !(x[e] < INFINITY))
        e++;
    return e;
}

/* ---- the DP ---- */

/*
 * Cell ranges. Layer l only evaluates e ∈ [lo(l), hi(l)]:
 *   lo(l) = first finite e of layer l−1 + min_j w(l, j)   (nothing smaller fits)
 *   hi(l) = E − Σ_{k>l} min_j w(k, j)                        (the layers after l
 *           need at least that much, so larger e are never read)
 * Layer l+1 reads layer l at e − w(l+1, j) ∈ [first finite(l), hi(l+1) − min w(l+1)]
 * and hi(l+1) − min w(l+1) = hi(l): always inside what was evaluated. The last
 * layer has hi = E.
 *
 * The layout form evaluates no cell below need(l) either (needed_cells): no answer
 * reads one. Algorithm 3's walk reads the last layer from e0 up where that cell is
 * finite (tsl_layerdp_solve), and where it is not no cell is below it (C is
 * non-increasing in e); cell e of layer l reads layer l−1 at e − w(l, j) ≥
 * e − max_j w(l, j). So need(L−1) = e0, need(l−1) = need(l) − max_j w(l, j) (at
 * least 0), over the strategies layer l can take. The cells below need(l) stay
 * +INFINITY, as if nothing fit there: the cells from need(l) read only layer l−1's
 * from need(l−1), which are exact, the same values in the same order — the same
 * minima and argmins to the bit, and so the same answer and backtrack. C stays
 * non-increasing in e (+INFINITY, then the exact cells), as the kernels' skips
 * need, and the rows' first finite cells come no lower than need(l).
 */

/* e0 of Algorithm 3's walk (tsl_layerdp_solve): the most buckets of forward memory
 * that no assignment can exceed the budget with, ⌊(E_budget − b_up) / bucket⌋ (≤ E);
 * false where the budget is no more than b_up (no such count: the walk starts at 0). */
static bool walk_floor(const tsl_layerdp_problem_t *p, uint64_t b_up, uint64_t bucket, uint32_t *e0)
{
    if (p->budget_bytes <= b_up)
        return false;
    *e0 = (uint32_t)((p->budget_bytes - b_up) / bucket);
    return true;
}

/* ws->need[0..L): need(l) above from ws->maxw (all 0 where the walk has no e0). */
static void needed_cells(const tsl_layerdp_problem_t *p, tsl_layerdp_ws_t *ws, uint64_t b_up,
                         uint64_t bucket)
{
    const uint32_t L = p->n_layers;
    uint32_t need = 0;
    if (!walk_floor(p, b_up, bucket, &need)) {
        memset(ws->need, 0, L * sizeof(*ws->need));
        return;
    }
    for (uint32_t l = L; l-- > 0;) {
        ws->need[l] = need;
        need = need > ws->maxw[l] ? need - ws->maxw[l] : 0;
    }
}

/*
 * T_μ(e') = min_λ [M_λ(l−1, e') + R_l(λ, μ)] for e' ∈ [from, from + n), for the
 * layouts μ layer l uses, over the layouts λ layer l − 1 used (the others' rows
 * are +INFINITY). μ's own layout goes first so that a tie keeps it (no move).
 *
 * In tiles of PAIR_TILE cells: C is non-increasing in e, so a row's least value in
 * the tile (plus R) is its last cell's and its largest its first cell's. Let U be
 * the least of the rows' largest values, first reached by row λ* (in the order
 * above). Every cell of the tile has a value ≤ U in λ*, so a row whose least
 * value exceeds U, or equals it and comes after λ*, cannot be the first least
 * anywhere in the tile and is left out — the same T, without reading the rows
 * that another beats throughout.
 */
static void build_t(const tsl_layerdp_problem_t *p, tsl_layerdp_ws_t *ws, uint32_t l, uint32_t K,
                    uint32_t e1, int prv, uint32_t from, const uint32_t *to_e, const uint8_t *src,
                    const uint8_t *dst)
{
    const size_t Kc = p->n_layouts;
    const double *R = pair_matrix(p, l);
    const double *M = ws->val[prv];
    uint32_t ns = 0, end = from; /* the classes the previous layer used, ascending */
    for (uint32_t lam = 0; lam < K; lam++) {
        if (src[lam])
            ws->srcs[ns++] = lam;
        if (dst[lam] && to_e[lam] + 1 > end)
            end = to_e[lam] + 1;
    }
    /* each of those rows' first and last values in each tile, read once for every
     * μ (the last at the longest μ's end: no more than a shorter μ's own, so a row
     * left out is still one that cannot win) */
    double *top = ws->tile_top, *least = ws->tile_least;
    const uint32_t ns4 = (ns + 3) & ~3u; /* rows per tile, padded for select_rows */
    for (uint32_t x0 = from, t = 0; x0 < end; x0 += PAIR_TILE, t++) {
        const uint32_t xe = end - x0 < PAIR_TILE ? end - 1 : x0 + PAIR_TILE - 1;
        for (uint32_t a = 0; a < ns; a++) {
            const size_t row = ws->srcs[a] * (size_t)e1;
            top[(size_t)t * ns4 + a] = M[row + x0];
            least[(size_t)t * ns4 + a] = M[row + xe];
        }
        for (uint32_t a = ns; a < ns4; a++)
            top[(size_t)t * ns4 + a] = least[(size_t)t * ns4 + a] = INFINITY;
    }
    double *rr = ws->srcr; /* R from each of them to μ; +INFINITY from μ itself */
    for (uint32_t a = ns; a < ns4; a++)
        rr[a] = INFINITY;
    for (uint32_t mu = 0; mu < K; mu++) {
        if (!dst[mu]) /* no strategy of the layer reads T_μ */
            continue;
        const size_t to = mu * (size_t)e1, col = ws->corig[mu];
        const double rmu = R[col * Kc + col];
        for (uint32_t a = 0; a < ns; a++)
            rr[a] = ws->srcs[a] == mu ? INFINITY : R[ws->corig[ws->srcs[a]] * Kc + col];
        /* kept for backtracking: the cells of layer l read T_μ here */
        uint16_t *keep = ws->pred + ((size_t)(l - 1) * K + mu) * e1;
        for (uint32_t x0 = from, t = 0; x0 <= to_e[mu]; x0 += PAIR_TILE, t++) {
            const uint32_t x1 = to_e[mu] - x0 < PAIR_TILE ? to_e[mu] : x0 + PAIR_TILE - 1;
            /* the rows by place in the order: μ is 0, srcs[a] a + 1 (μ's own there
             * +INFINITY: left out) */
            const bool own = src[mu]; /* else μ's row is +INFINITY, left unwritten */
            const uint32_t nk = ws->k->select_rows(
                ns, top + (size_t)t * ns4, least + (size_t)t * ns4, rr,
                own ? M[to + x0] + rmu : INFINITY, own ? M[to + x1] + rmu : INFINITY, ws->keep);
            uint32_t nq = 0;
            for (uint32_t i = 0; i < nk; i++) {
                const uint32_t pl = ws->keep[i];
                if (pl == 0 && !own)
                    continue;
                const size_t row = (pl ? ws->srcs[pl - 1] : mu) * (size_t)e1;
                ws->rows[nq] = M + row;
                ws->rowargs[nq] = ws->arg[prv] + row;
                ws->rowr[nq++] = pl ? rr[pl - 1] : rmu;
            }
            ws->k->min_rows(x1 - x0 + 1, nq, ws->rows, ws->rowargs, x0, ws->rowr,
                            ws->tv + mu * (size_t)(e1 + RELAX_TILE) + x0, keep + x0);
        }
    }
}

/*
 * Leaves out of a class's strategies [q0, q1) each one an earlier one dominates:
 * no more forward memory (w) and no more time (c). Its v is then no less than
 * the earlier one's at every cell it evaluates (T is non-increasing, and the
 * earlier one's first cell comes no later), so it never wins a cell: the rows,
 * their argmins and every answer are the same without it. Returns how many stay
 * (moved to the front, in order).
 */
static uint32_t drop_dominated(tsl_layerdp_ws_t *ws, uint32_t q0, uint32_t q1)
{
    uint32_t n = 0;
    for (uint32_t q = q0; q < q1; q++) {
        uint32_t p = 0;
        while (p < n && !(ws->qw[q0 + p] <= ws->qw[q] && ws->qc[q0 + p] <= ws->qc[q]))
            p++;
        if (p < n)
            continue;
        ws->qc[q0 + n] = ws->qc[q];
        ws->qj[q0 + n] = ws->qj[q];
        ws->qs[q0 + n] = ws->qs[q];
        ws->qw[q0 + n] = ws->qw[q];
        n++;
    }
    return n;
}

/*
 * Layout form. On return ws->all[r][0..E] (r returned) holds the last layer's
 * minimum over strategies, +INFINITY where nothing fits, with its argmin in
 * ws->allarg[r]. Adds the cells evaluated to *states.
 *
 * Per layer: the strategies with a cell to evaluate (ff + w ≤ hi) by class; T_μ
 * of each class with one, over the cells its strategies read, [ff, hi − min w];
 * each such class's row over [max(lo, need), hi] (+INFINITY below its first
 * strategy's first cell or need; below that range nothing reads it). The others' rows (dst 0) are +INFINITY: they are not written and
 * nothing reads them (T, the first finite cell and M_all go over the classes the
 * layer evaluated; an +INFINITY row never wins a minimum anyway).
 */
static int dp_layout(const tsl_layerdp_problem_t *p, tsl_layerdp_ws_t *ws, uint32_t E, uint32_t K,
                     const uint32_t *minw, const uint32_t *hi, uint64_t *states)
{
    const uint32_t L = p->n_layers, S = p->n_strategies, e1 = E + 1;
    int cur = 0, prv = 1;
    uint64_t st = 0;
    uint32_t ff = 0; /* first finite e of the previous layer; 0 before layer 0 */
    bool dead = false;
    /* the classes the previous / this layer evaluated: a class none did is +INFINITY */
    uint8_t *src = ws->used, *dst = ws->used + S;
    uint32_t *qoff = ws->qoff, *to_e = ws->srcs + S; /* to_e: [K], see build_t */
    memset(src, 0, K);

    for (uint32_t l = 0; l < L; l++) {
        const uint32_t lo = ff + minw[l]; /* ≤ hi[l], checked at the previous layer */
        const uint32_t need = ws->need[l];
        const uint16_t *act = ws->act + (size_t)l * S;
        double *val = ws->val[cur];
        int64_t *arg = ws->arg[cur];
        /* the strategies with a cell to evaluate (ff + w ≤ hi), by class, ascending */
        memset(qoff, 0, (K + 1) * sizeof(*qoff));
        for (uint32_t a = 0; a < ws->nact[l]; a++) {
            const uint32_t j = act[a];
            if (ws->w[(size_t)l * S + j] <= hi[l] - ff)
                qoff[ws->cls[j] + 1]++;
        }
        for (uint32_t k = 0; k < K; k++) {
            dst[k] = qoff[k + 1] > 0;
            to_e[k] = 0;
            qoff[k + 1] += qoff[k];
        }
        for (uint32_t a = 0; a < ws->nact[l]; a++) {
            const uint32_t j = act[a];
            const size_t lj = (size_t)l * S + j;
            const uint32_t w = ws->w[lj];
            if (w > hi[l] - ff) /* ff + w beyond hi: no cell to evaluate */
                continue;
            const uint32_t k = ws->cls[j], q = qoff[k]++;
            ws->qc[q] = p->time_s[row_base(p, l) + j];
            ws->qj[q] = j;
            ws->qs[q] = ff + w;
            ws->qw[q] = w;
            if (hi[l] - w > to_e[k]) /* T_k read up to hi − w */
                to_e[k] = hi[l] - w;
            st += hi[l] - (ff + w > need ? ff + w : need) + 1; /* need ≤ hi (needed_cells) */
        }
        if (l > 0)
            build_t(p, ws, l, K, e1, prv, ff, to_e, src, dst);
        /* qoff[k] is now class k's end: k's strategies are [qoff[k − 1], qoff[k]).
         * Each class's row is +INFINITY from xs to its first relaxed cell x0 and
         * left unwritten below xs, the least x0 of all (the strategy of least w
         * starts at lo): the rows are read from the layer's first finite cell nff
         * on (no lower than any x0) by the next layer's T, and from xs by the last
         * layer's minimum over the classes */
        const uint32_t xs = lo > need ? lo : need;
        uint32_t nff = hi[l] + 1;
        for (uint32_t k = 0; k < K; k++) {
            const uint32_t q0 = k ? qoff[k - 1] : 0, nq = drop_dominated(ws, q0, qoff[k]);
            const size_t koff = (size_t)k * e1;
            if (nq == 0) /* its row is not read (dst[k] is 0) */
                continue;
            uint32_t x0 = hi[l];
            for (uint32_t q = q0; q < q0 + nq; q++)
                x0 = ws->qs[q] < x0 ? ws->qs[q] : x0;
            x0 = x0 > need ? x0 : need; /* below need: +INFINITY (needed_cells) */
            ws->k->fill_inf(val + koff + xs, x0 - xs);
            /* layer 0: C(−1, e) = 0 (its T is the zero row), v = c; T before ff
             * (what a tile's lanes before a strategy's first cell read) +INFINITY */
            double *T = l ? ws->tv + (size_t)k * (e1 + RELAX_TILE) : ws->zero;
            if (l > 0)
                for (uint32_t i = 1; i < RELAX_TILE; i++)
                    T[(ptrdiff_t)ff - (ptrdiff_t)i] = INFINITY;
            ws->k->relax_class(x0, hi[l], nq, ws->qc + q0, ws->qj + q0, ws->qs + q0, ws->qw + q0, T,
                               val + koff, arg + koff);
            if (l + 1 < L && nff > x0)
                nff = first_finite(val + koff, x0, nff - 1);
        }
        /* M_all = min over the classes (ties: the lower class), of the last layer,
         * from xs (below it +INFINITY: the cells before its first finite one are
         * filled so at the end, and nothing reads their argmins); before the last
         * layer only the first finite e is read: the first of any class's (nff) */
        if (l + 1 == L) {
            const uint32_t m = hi[l] + 1 - xs;
            uint32_t k0 = 0; /* the classes the layer evaluated (the others +INFINITY) */
            while (k0 < K && !dst[k0])
                k0++;
            if (k0 == K)
                ws->k->fill_inf(ws->all[cur] + xs, m);
            else {
                memcpy(ws->all[cur] + xs, val + (size_t)k0 * e1 + xs, m * sizeof(double));
                memcpy(ws->allarg[cur] + xs, arg + (size_t)k0 * e1 + xs, m * sizeof(int64_t));
            }
            for (uint32_t k = k0 + 1; k < K; k++)
                if (dst[k])
                    ws->k->min_rowarg(m, val + (size_t)k * e1 + xs, 0.0, arg + (size_t)k * e1 + xs,
                                      ws->all[cur] + xs, ws->allarg[cur] + xs);
            ff = first_finite(ws->all[cur], xs, hi[l]);
        } else {
            ff = nff;
        }
        if (l + 1 < L && (ff > hi[l] || ff + minw[l + 1] > hi[l + 1])) {
            dead = true; /* no finite cell that the next layer can extend */
            break;
        }
        prv = cur;
        cur ^= 1;
        uint8_t *t = src;
        src = dst;
        dst = t;
    }
    *states += st;
    if (dead) {
        ws->k->fill_inf(ws->all[cur], e1);
        return cur;
    }
    /* prv: the last layer written (hi = E); below its first finite e nothing fits */
    ws->k->fill_inf(ws->all[prv], ff);
    return prv;
}

/* Full form: rows ws->val[r][b·E1 + e] over the usable strategies b of the layer. */
static int dp_full(const tsl_layerdp_problem_t *p, tsl_layerdp_ws_t *ws, uint32_t E,
                   const uint32_t *minw, const uint32_t *hi, uint64_t *states)
{
    const uint32_t L = p->n_layers, S = p->n_strategies, e1 = E + 1;
    int cur = 0, prv = 1;
    uint64_t st = 0;
    uint32_t ff = 0, np = 0, n = 0;
    bool dead = false;

    for (uint32_t l = 0; l < L; l++) {
        const uint16_t *actp = l ? ws->act + (size_t)(l - 1) * S : NULL;
        const uint16_t *act = ws->act + (size_t)l * S;
        const double *prow = ws->val[prv];
        double *crow = ws->val[cur];
        int64_t *scratch = ws->arg[cur];
        const uint32_t lo = ff + minw[l];
        uint32_t ffn = hi[l] + 1;
        n = ws->nact[l];
        for (uint32_t b = 0; b < n; b++) {
            const uint32_t j = act[b];
            const size_t lj = (size_t)l * S + j;
            const uint32_t w = ws->w[lj];
            const double c = p->time_s[row_base(p, l) + j];
            double *row = crow + (size_t)b * e1;
            const uint32_t first = w > hi[l] - ff ? hi[l] + 1 : ff + w;
            ws->k->fill_inf(row + lo, hi[l] - lo + 1);
            if (first > hi[l])
                continue;
            const uint32_t cells = hi[l] - first + 1;
            if (l == 0) {
                ws->k->min_const(cells, c, j, row + first, scratch + first);
            } else {
                /* C(l, e, j) = min_a [C(l−1, e − w, a) + R(l, a, j)] + c; the
                 * argmin is kept as the strategy index itself */
                const double *R = p->trans_full_s + (size_t)l * S * S + j;
                /* in tiles of e, so that the running minimum stays in L1 */
                for (uint32_t t0 = 0; t0 < cells; t0 += FULL_TILE) {
                    uint32_t tn = cells - t0 < FULL_TILE ? cells - t0 : FULL_TILE;
                    for (uint32_t a = 0; a < np; a++)
                        ws->k->min_row(tn, prow + (size_t)a * e1 + ff + t0, R[(size_t)actp[a] * S],
                                       actp[a], row + first + t0, scratch + first + t0);
                }
                uint16_t *pred = ws->pred + ((size_t)(l - 1) * S + j) * e1;
                for (uint32_t e = first; e <= hi[l]; e++) {
                    row[e] += c;
                    pred[e] = (uint16_t)scratch[e];
                }
            }
            st += cells;
            uint32_t f = first_finite(row, first, hi[l]);
            ffn = f < ffn ? f : ffn;
        }
        ff = ffn;
        np = n;
        if (l + 1 < L && (ff > hi[l] || ff + minw[l + 1] > hi[l + 1])) {
            dead = true;
            break;
        }
        prv = cur;
        cur ^= 1;
    }

    /* the last layer's minimum over strategies, per e */
    int r = dead ? cur : prv;
    double *all = ws->all[r];
    int64_t *allarg = ws->allarg[r];
    ws->k->fill_inf(all, e1);
    if (!dead && ff <= E) {
        const uint16_t *act = ws->act + (size_t)(L - 1) * S;
        const double *crow = ws->val[r];
        for (uint32_t b = 0; b < n; b++)
            ws->k->min_row(e1 - ff, crow + (size_t)b * e1 + ff, 0.0, act[b], all + ff, allarg + ff);
    }
    *states += st;
    return r;
}

/* The assignment of C(L−1, e, allarg[e]) into out[0..L); K layout classes (the
 * layout form), 0 for the full form. Returns whether it differs from what out held. */
static bool backtrack(const tsl_layerdp_problem_t *p, const tsl_layerdp_ws_t *ws,
                      const int64_t *allarg, uint32_t E, uint32_t K, uint32_t e, uint32_t *out)
{
    const uint32_t L = p->n_layers, S = p->n_strategies, e1 = E + 1;
    uint32_t j = (uint32_t)allarg[e];
    bool moved = false;
    for (uint32_t l = L - 1; l > 0; l--) {
        moved |= out[l] != j;
        out[l] = j;
        const uint32_t w = ws->w[(size_t)l * S + j];
        /* layout form: the argmin of T_λ(j), which cell (l, e, j) read at e − w */
        uint32_t i = K ? ws->pred[((size_t)(l - 1) * K + ws->cls[j]) * e1 + e - w]
                       : ws->pred[((size_t)(l - 1) * S + j) * e1 + e];
        e -= w;
        j = i;
    }
    moved |= out[0] != j;
    out[0] = j;
    return moved;
}

#ifdef TSL_LAYERDP_AVX2
/* all_times four at a time: the ordered x ≥ 0 (false for NaN) of every lane, and-ed;
 * the last n mod 4 by the caller's loop. Returns how many it took. */
TSL_TARGET_AVX2
static size_t all_times_avx2(const double *x, size_t n, bool *ok)
{
    const __m256d zero = _mm256_setzero_pd();
    __m256d acc = _mm256_cmp_pd(zero, zero, _CMP_EQ_OQ); /* every lane true */
    size_t i = 0;
    for (; i + 4 <= n; i += 4)
        acc = _mm256_and_pd(acc, _mm256_cmp_pd(_mm256_loadu_pd(x + i), zero, _CMP_GE_OQ));
    *ok = _mm256_movemask_pd(acc) == 0xf;
    return i;
}
#endif

/* Whether every x[0..n) is a time (≥ 0, +INFINITY included; not NaN): one pass
 * without an early exit, so that it runs as fast as the loads (the caller looks for
 * the first offender only when one is there); four lanes a step with AVX2, where
 * GCC's -O2 left the scalar loop (the solve's input check was 1 % of a search). */
static bool all_times(const double *x, size_t n)
{
    bool ok0 = true, ok1 = true, ok2 = true, ok3 = true;
    size_t i = 0;
#ifdef TSL_LAYERDP_AVX2
    if (__builtin_cpu_supports("avx2"))
        i = all_times_avx2(x, n, &ok1);
#endif
    for (; i + 4 <= n; i += 4) {
        ok0 &= x[i] >= 0.0;
        ok1 &= x[i + 1] >= 0.0;
        ok2 &= x[i + 2] >= 0.0;
        ok3 &= x[i + 3] >= 0.0;
    }
    for (; i < n; i++)
        ok0 &= x[i] >= 0.0;
    return ok0 && ok1 && ok2 && ok3;
}

/* Layer l's R (pair_matrix) ≥ 0 (+INFINITY forbids a change); the first entry that is
 * not named. */
static int check_pair_matrix(const tsl_layerdp_problem_t *p, uint32_t l, tsl_err_t *err)
{
    const uint32_t K = p->n_layouts;
    const double *R = pair_matrix(p, l);
    if (all_times(R, (size_t)K * K))
        return 0;
    for (uint32_t a = 0; a < K; a++)
        for (uint32_t b = 0; b < K; b++) {
            double r = R[(size_t)a * K + b];
            if (!(r >= 0.0))
                return tsl_err_set(err,
                                   "trans_pair_s[l=%u, from=%u, to=%u]: %g is not a time "
                                   "(must be >= 0)",
                                   (unsigned)l, (unsigned)a, (unsigned)b, r);
        }
    return 0;
}

/* Layout form: ids below n_layouts, trans_at's below n_trans, R ≥ 0 of every layer
 * past the first (a matrix the layer before shares checked once). */
static int check_layouts(const tsl_layerdp_problem_t *p, tsl_err_t *err)
{
    const uint32_t K = p->n_layouts;
    if (K == 0)
        return tsl_err_set(err, "n_layouts: 0; the layout form needs at least one layout");
    for (uint32_t j = 0; j < p->n_strategies; j++)
        if (p->layout[j] >= K)
            return tsl_err_set(err, "layout[j=%u]: %u is not below n_layouts %u", (unsigned)j,
                               (unsigned)p->layout[j], (unsigned)K);
    for (uint32_t l = 1; l < p->n_layers; l++) {
        if (p->trans_at != NULL && p->trans_at[l] >= p->n_trans)
            return tsl_err_set(err, "trans_at[l=%u]: %u is not below n_trans %u", (unsigned)l,
                               (unsigned)p->trans_at[l], (unsigned)p->n_trans);
        if (p->trans_at != NULL && l > 1 && p->trans_at[l] == p->trans_at[l - 1])
            continue;
        if (check_pair_matrix(p, l, err) != 0)
            return -1;
    }
    return 0;
}

/* row_at's rows below n_rows (where it is given). */
static int check_rows(const tsl_layerdp_problem_t *p, tsl_err_t *err)
{
    if (p->row_at == NULL)
        return 0;
    if (p->n_rows == 0)
        return tsl_err_set(err, "n_rows: 0; row_at needs at least one row of figures");
    for (uint32_t l = 0; l < p->n_layers; l++)
        if (p->row_at[l] >= p->n_rows)
            return tsl_err_set(err, "row_at[l=%u]: %u is not below n_rows %u", (unsigned)l,
                               (unsigned)p->row_at[l], (unsigned)p->n_rows);
    return 0;
}

/* time_s ≥ 0 (+INFINITY marks a cell infeasible) in every row given (n_rows of them
 * under row_at, else one a layer); the first offender named. */
static int check_times(const tsl_layerdp_problem_t *p, tsl_err_t *err)
{
    const uint32_t rows = p->row_at != NULL ? p->n_rows : p->n_layers;
    const size_t LS = (size_t)rows * p->n_strategies;
    if (all_times(p->time_s, LS))
        return 0;
    for (size_t k = 0; k < LS; k++)
        if (!(p->time_s[k] >= 0.0))
            return tsl_err_set(err,
                               "time_s[%s=%u, j=%u]: %g is not a time (must be >= 0, or "
                               "+INFINITY for infeasible)",
                               p->row_at != NULL ? "row" : "l", (unsigned)(k / p->n_strategies),
                               (unsigned)(k % p->n_strategies), p->time_s[k]);
    return 0;
}

static int check_problem(const tsl_layerdp_problem_t *p, const tsl_layerdp_ws_t *ws,
                         uint32_t *E_out, tsl_err_t *err)
{
    if (p == NULL)
        return tsl_err_set(err, "problem: none given");
    if (ws == NULL)
        return tsl_err_set(err, "workspace: none given (create one with tsl_layerdp_ws_new)");
    const uint32_t L = p->n_layers, S = p->n_strategies;
    if (L == 0)
        return tsl_err_set(err, "n_layers: 0; a stage has at least one layer");
    if (S == 0)
        return tsl_err_set(err, "n_strategies: 0; give at least one strategy");
    if (L > ws->max_layers)
        return tsl_err_set(err, "n_layers: %u exceeds the workspace's max_layers %u", (unsigned)L,
                           (unsigned)ws->max_layers);
    if (S > ws->max_strategies)
        return tsl_err_set(err, "n_strategies: %u exceeds the workspace's max_strategies %u",
                           (unsigned)S, (unsigned)ws->max_strategies);
    uint64_t bucket = p->bucket_bytes ? p->bucket_bytes : TSL_LAYERDP_DEFAULT_BUCKET_BYTES;
    uint64_t E = p->budget_bytes / bucket;
    if (E > ws->max_buckets)
        return tsl_err_set(err,
                           "budget_bytes: %llu bytes is %llu buckets of %llu bytes, beyond the "
                           "workspace's max_buckets %u (use a larger bucket_bytes)",
                           (unsigned long long)p->budget_bytes, (unsigned long long)E,
                           (unsigned long long)bucket, (unsigned)ws->max_buckets);
    if (p->time_s == NULL)
        return tsl_err_set(err, "time_s: missing");
    if (p->fwd_bytes == NULL)
        return tsl_err_set(err, "fwd_bytes: missing");
    if (p->bwd_bytes == NULL)
        return tsl_err_set(err, "bwd_bytes: missing");
    if (p->ms_bytes == NULL)
        return tsl_err_set(err, "ms_bytes: missing");
    if (p->trans_full_s != NULL && (p->layout != NULL || p->trans_pair_s != NULL))
        return tsl_err_set(err, "trans_full_s: give either layout + trans_pair_s or "
                                "trans_full_s, not both");
    if (p->trans_full_s == NULL && p->layout == NULL)
        return tsl_err_set(err, "layout: missing (give layout + trans_pair_s, or trans_full_s)");
    if (p->trans_full_s == NULL && p->trans_pair_s == NULL)
        return tsl_err_set(err,
                           "trans_pair_s: missing (layout needs R per pair of layouts per layer)");
    if (p->trans_full_s != NULL && p->trans_at != NULL)
        return tsl_err_set(err, "trans_at: names matrices of trans_pair_s (the layout form), "
                                "not of trans_full_s");
    if (p->trans_full_s == NULL && check_layouts(p, err) != 0)
        return -1;
    if (check_rows(p, err) != 0 || check_times(p, err) != 0)
        return -1;

    for (uint32_t l = 1; l < L && p->trans_full_s != NULL; l++) {
        for (uint32_t j = 0; j < S; j++) {
            const double *r = p->trans_full_s + ((size_t)l * S) * S;
            for (uint32_t i = 0; i < S; i++)
                if (!(r[(size_t)i * S + j] >= 0.0))
                    return tsl_err_set(err,
                                       "trans_full_s[l=%u, i=%u, j=%u]: %g is not a time "
                                       "(must be >= 0)",
                                       (unsigned)l, (unsigned)i, (unsigned)j, r[(size_t)i * S + j]);
        }
    }
    *E_out = (uint32_t)E;
    return 0;
}

/* ⌈bytes / bucket⌉ where that is at most E, else UINT32_MAX (more than fits). The
 * quotient is then below 2^32: the double division's floor is off by at most one,
 * and the products put it right — the integer quotient, without the 64-bit divide
 * that L·S of them per solve made a tenth of a search's time in this function. */
static inline uint32_t bucket_count(uint64_t bytes, uint64_t bucket, uint32_t E)
{
    if (bytes > (uint64_t)E * bucket) /* E·bucket ≤ the budget: no overflow */
        return UINT32_MAX;
    uint64_t q = (uint64_t)((double)bytes / (double)bucket);
    if (q * bucket > bytes)
        q--;
    else if (q < E && (q + 1) * bucket <= bytes)
        q++;
    return (uint32_t)(q + (q * bucket != bytes));
}

/* Layout form: compact layout classes 0..K−1 into ws->cls / corig, numbered by first
 * appearance (looked up among the K so far, not the j strategies before: O(S·K));
 * returns K. The previous solve's numbering stands where its list was the same. */
static uint32_t number_classes(const tsl_layerdp_problem_t *p, tsl_layerdp_ws_t *ws)
{
    const uint32_t S = p->n_strategies;
    if (ws->n_cls_of == S && memcmp(ws->cls_of, p->layout, S * sizeof(*p->layout)) == 0)
        return ws->n_cls;
    uint32_t K = 0;
    for (uint32_t j = 0; j < S; j++) {
        uint32_t k = 0;
        while (k < K && ws->corig[k] != p->layout[j])
            k++;
        if (k == K)
            ws->corig[K++] = p->layout[j];
        ws->cls[j] = k;
    }
    memcpy(ws->cls_of, p->layout, S * sizeof(*p->layout));
    ws->n_cls_of = S;
    ws->n_cls = K;
    return K;
}

int tsl_layerdp_solve(const tsl_layerdp_problem_t *p, tsl_layerdp_ws_t *ws, uint32_t *choice,
                      tsl_layerdp_result_t *res, tsl_err_t *err)
{
    uint32_t E = 0;
    if (res == NULL)
        return tsl_err_set(err, "res: none given");
    res->time_s = INFINITY;
    res->peak_bytes = 0;
    res->fwd_bytes = 0;
    res->states_visited = 0;
    if (choice == NULL)
        return tsl_err_set(err, "choice: none given");
    if (check_problem(p, ws, &E, err) != 0)
        return -1;
    ws->k = pick_kernels(ws);

    const uint32_t L = p->n_layers, S = p->n_strategies, e1 = E + 1;
    const uint64_t bucket = p->bucket_bytes ? p->bucket_bytes : TSL_LAYERDP_DEFAULT_BUCKET_BYTES;
    const bool full = p->trans_full_s != NULL;

    /* w per (l, j), the feasible strategies per layer, b_up over them (w is read only
     * of the strategies kept: an infeasible one's is left UINT32_MAX uncomputed) */
    uint64_t b_up = 0;
    bool empty_layer = false;
    for (uint32_t l = 0; l < L; l++) {
        if (same_row_as_last(p, l)) { /* the same figures: the same w, strategies, b_up */
            memcpy(ws->w + (size_t)l * S, ws->w + (size_t)(l - 1) * S, S * sizeof(*ws->w));
            memcpy(ws->act + (size_t)l * S, ws->act + (size_t)(l - 1) * S,
                   ws->nact[l - 1] * sizeof(*ws->act));
            ws->nact[l] = ws->nact[l - 1];
            continue;
        }
        uint32_t n = 0;
        const size_t r = row_base(p, l);
        for (uint32_t j = 0; j < S; j++) {
            size_t k = r + j;
            ws->w[(size_t)l * S + j] = UINT32_MAX;
            if (!(p->time_s[k] < INFINITY))
                continue;
            uint64_t bytes = sat_add(p->fwd_bytes[k], p->ms_bytes[k]);
            uint32_t w = ws->w[(size_t)l * S + j] = bucket_count(bytes, bucket, E);
            /* skipped: infeasible, or beyond the budget on its own (its own
             * O_f + O_b + O_ms is a lower bound of the peak of any plan using it) */
            if (w > E || sat_add(bytes, p->bwd_bytes[k]) > p->budget_bytes)
                continue;
            ws->act[(size_t)l * S + n++] = (uint16_t)j;
            if (p->bwd_bytes[k] > b_up)
                b_up = p->bwd_bytes[k];
        }
        ws->nact[l] = n;
        empty_layer |= n == 0;
    }
    if (empty_layer)
        return 0; /* some layer has no strategy that fits at all */

    /* cell ranges (see above): hi(l) = E − Σ_{k>l} min w(k, ·); max w for need(l) */
    uint32_t *minw = ws->minw, *hi = ws->hi;
    uint64_t need = 0;
    for (uint32_t l = 0; l < L; l++) {
        uint32_t m = UINT32_MAX, x = 0;
        for (uint32_t a = 0; a < ws->nact[l]; a++) {
            uint32_t w = ws->w[(size_t)l * S + ws->act[(size_t)l * S + a]];
            m = w < m ? w : m;
            x = w > x ? w : x;
        }
        minw[l] = m;
        ws->maxw[l] = x;
        need += m;
    }
    if (need > E)
        return 0; /* the smallest forward sizes alone exceed the budget */
    uint64_t after = 0;
    for (uint32_t l = L; l-- > 0;) {
        hi[l] = E - (uint32_t)after;
        after += minw[l];
    }

    int r;
    uint32_t K = 0; /* layout classes; 0: the full form */
    if (full) {
        r = dp_full(p, ws, E, minw, hi, &res->states_visited);
    } else {
        K = number_classes(p, ws);
        needed_cells(p, ws, b_up, bucket);
        r = dp_layout(p, ws, E, K, minw, hi, &res->states_visited);
    }
    const double *F = ws->all[r];
    const int64_t *J = ws->allarg[r];

    /*
     * Algorithm 3's walk over E_fwd. Every assignment with forward memory
     * ≤ E − b_up has E_all ≤ E_f + b_up ≤ E, so the largest such bucket count e0
     * is valid without a check. Above it, each backtracked assignment is checked
     * with Eq. 2 in exact bytes; the largest valid E_fwd wins and the first
     * invalid one ends the walk. Without a usable e0 the walk starts at 0. A bucket
     * whose assignment is the last one checked (most are: the 100k-GPU rows of
     * bench/search find a new one at 2 % of the buckets walked) has its peak, which
     * fitted, and is not checked again.
     */
    int64_t best = -1;
    uint32_t from = 0, e0;
    if (walk_floor(p, b_up, bucket, &e0) && F[e0] < INFINITY) {
        best = (int64_t)e0;
        from = e0 + 1;
    }
    bool checked = false; /* ws->tmp holds an assignment that fits */
    for (uint32_t e = from; e < e1; e++) {
        if (!(F[e] < INFINITY))
            continue;
        const bool moved = backtrack(p, ws, J, E, K, e, ws->tmp);
        if ((moved || !checked) && tsl_layerdp_peak_bytes(p, ws->tmp) > p->budget_bytes)
            break;
        checked = true;
        best = e;
    }
    if (best < 0)
        return 0;

    backtrack(p, ws, J, E, K, (uint32_t)best, ws->tmp);
    uint64_t peak = tsl_layerdp_peak_bytes(p, ws->tmp);
    if (peak > p->budget_bytes)
        return 0; /* cannot happen (see above); never hand out a plan over budget */
    memcpy(choice, ws->tmp, (size_t)L * sizeof(uint32_t));
    res->time_s = tsl_layerdp_time_s(p, choice);
    res->peak_bytes = peak;
    res->fwd_bytes = fwd_total_bytes(p, choice);
    return 0;
}
