/*
 * test_layerdp.c — Galvatron-BMW Algorithm 3 against brute force on random small
 * instances, hand examples, and the workspace limits.
 *
 * Brute force: every assignment of strategies to layers, its exact Eq. 2 peak and
 * its time Σ c + Σ R summed as tsl_layerdp_time_s does; the optimum is the least
 * time among assignments whose peak fits the budget.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "layerdp.h"

#define MAXL 7
#define MAXS 6
#define MAXB 160

/* ---- a portable random stream (64-bit LCG, Knuth's MMIX constants) ---- */
typedef struct {
    uint64_t s;
} lcg_t;

static uint32_t rnd(lcg_t *r)
{
    r->s = r->s * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(r->s >> 33);
}

static uint32_t rnd_below(lcg_t *r, uint32_t n) /* [0, n) */
{
    return n ? rnd(r) % n : 0;
}

static double rnd_unit(lcg_t *r) /* [0, 1) */
{
    return (double)rnd(r) / 2147483648.0;
}

/* ---- one instance with its own storage ---- */
typedef struct inst {
    uint32_t L, S;
    double time[MAXL * MAXS];
    uint64_t f[MAXL * MAXS], b[MAXL * MAXS], ms[MAXL * MAXS];
    uint32_t K; /* layouts; 0 leaves every strategy on layout 0 */
    uint32_t layout[MAXS];
    double pair[MAXL * MAXS * MAXS]; /* [(l·K + a)·K + b]: R from layout a to b */
    double full[MAXL * MAXS * MAXS];
    tsl_layerdp_problem_t p;
} inst_t;

static void bind(inst_t *in, bool full_form, uint64_t budget, uint64_t bucket)
{
    memset(&in->p, 0, sizeof(in->p));
    in->p.n_layers = in->L;
    in->p.n_strategies = in->S;
    in->p.time_s = in->time;
    in->p.fwd_bytes = in->f;
    in->p.bwd_bytes = in->b;
    in->p.ms_bytes = in->ms;
    if (full_form) {
        in->p.trans_full_s = in->full;
    } else {
        in->p.n_layouts = in->K ? in->K : 1;
        in->p.layout = in->layout;
        in->p.trans_pair_s = in->pair;
    }
    in->p.budget_bytes = budget;
    in->p.bucket_bytes = bucket;
}

/* Fills the full matrix from the layout form (the same R written out). */
static void full_from_layout(inst_t *in)
{
    uint32_t S = in->S, K = in->K ? in->K : 1;
    for (uint32_t l = 0; l < in->L; l++)
        for (uint32_t i = 0; i < S; i++)
            for (uint32_t j = 0; j < S; j++)
                in->full[(l * S + i) * S + j] =
                    in->pair[(l * K + in->layout[i]) * K + in->layout[j]];
}

/* R = x between distinct layouts, 0 within one, on every layer. */
static void uniform_pairs(inst_t *in, double x)
{
    for (uint32_t l = 0; l < in->L; l++)
        for (uint32_t a = 0; a < in->K; a++)
            for (uint32_t b = 0; b < in->K; b++)
                in->pair[(l * in->K + a) * in->K + b] = a == b ? 0.0 : x;
}

/* ---- brute force ---- */
typedef struct brute {
    double best; /* least time over assignments with peak ≤ budget */
    uint32_t choice[MAXL];
    double best_guaranteed; /* ... over those with Σ w ≤ e0 too (the DP must match or beat it) */
    uint64_t count;
} brute_t;

typedef struct bctx {
    const tsl_layerdp_problem_t *p;
    uint64_t bucket;
    int64_t e0; /* −1: no guaranteed region */
    uint32_t cur[MAXL];
    brute_t *out;
} bctx_t;

static double r_of(const tsl_layerdp_problem_t *p, uint32_t l, uint32_t i, uint32_t j)
{
    uint32_t S = p->n_strategies;
    if (l == 0)
        return 0.0;
    if (p->trans_full_s)
        return p->trans_full_s[(l * S + i) * S + j];
    uint32_t K = p->n_layouts;
    return p->trans_pair_s[(l * K + p->layout[i]) * K + p->layout[j]];
}

static void dfs(bctx_t *cx, uint32_t l, double t, uint64_t fwd, uint64_t top, uint64_t ms,
                uint64_t wsum)
{
    const tsl_layerdp_problem_t *p = cx->p;
    uint32_t S = p->n_strategies;
    if (l == p->n_layers) {
        cx->out->count++;
        if (!(t < INFINITY))
            return;
        if (top + ms <= p->budget_bytes && t < cx->out->best) {
            cx->out->best = t;
            memcpy(cx->out->choice, cx->cur, sizeof(cx->cur));
        }
        if (cx->e0 >= 0 && wsum <= (uint64_t)cx->e0 && top + ms <= p->budget_bytes &&
            t < cx->out->best_guaranteed)
            cx->out->best_guaranteed = t;
        return;
    }
    for (uint32_t j = 0; j < S; j++) {
        uint32_t k = l * S + j;
        cx->cur[l] = j;
        double r = l ? r_of(p, l, cx->cur[l - 1], j) : 0.0;
        double nt = (t + r) + p->time_s[k];
        uint64_t nf = fwd + p->fwd_bytes[k];
        uint64_t here = nf + p->bwd_bytes[k];
        uint64_t w = (p->fwd_bytes[k] + p->ms_bytes[k] + cx->bucket - 1) / cx->bucket;
        dfs(cx, l + 1, nt, nf, here > top ? here : top, ms + p->ms_bytes[k], wsum + w);
    }
}

static brute_t brute(const tsl_layerdp_problem_t *p)
{
    brute_t b;
    memset(&b, 0, sizeof(b));
    b.best = INFINITY;
    b.best_guaranteed = INFINITY;
    bctx_t cx;
    memset(&cx, 0, sizeof(cx));
    cx.p = p;
    cx.bucket = p->bucket_bytes;
    cx.out = &b;
    /* b_up over the strategies that can be part of some fitting plan at all */
    uint64_t bup = 0;
    for (uint32_t k = 0; k < p->n_layers * p->n_strategies; k++)
        if (p->time_s[k] < INFINITY &&
            p->fwd_bytes[k] + p->ms_bytes[k] + p->bwd_bytes[k] <= p->budget_bytes &&
            p->bwd_bytes[k] > bup)
            bup = p->bwd_bytes[k];
    cx.e0 = p->budget_bytes > bup ? (int64_t)((p->budget_bytes - bup) / cx.bucket) : -1;
    dfs(&cx, 0, 0.0, 0, 0, 0, 0);
    return b;
}

/* ---- random instances ---- */
typedef struct gen {
    bool whole_buckets; /* sizes are whole multiples of the bucket, O_b = 0 */
    bool infinite_r;    /* full form: some transitions cost +INFINITY */
} gen_t;

static void random_instance(lcg_t *r, const gen_t *g, inst_t *in, uint64_t *budget,
                            uint64_t *bucket)
{
    memset(in, 0, sizeof(*in));
    do {
        in->L = 1 + rnd_below(r, MAXL);
        in->S = 1 + rnd_below(r, MAXS);
    } while (pow(in->S, in->L) > 20000.0);
    static const uint64_t buckets[] = {1, 3, 64, 1000, 4096, 40ull << 20};
    *bucket = buckets[rnd_below(r, 6)];
    uint32_t S = in->S;
    in->K = 1 + rnd_below(r, 3);
    for (uint32_t j = 0; j < S; j++)
        in->layout[j] = rnd_below(r, in->K);
    for (uint32_t l = 0; l < in->L; l++) {
        /* R per pair of layouts: mostly free within a layout, mostly not between;
         * layer 0's R is never used: a huge value there must not matter */
        for (uint32_t a = 0; a < in->K; a++)
            for (uint32_t b = 0; b < in->K; b++) {
                bool pay = a != b ? rnd_below(r, 4) != 0 : rnd_below(r, 5) == 0;
                in->pair[(l * in->K + a) * in->K + b] = l == 0 ? 1e9
                                                        : pay  ? 3.0 * rnd_unit(r)
                                                               : 0.0;
            }
        for (uint32_t j = 0; j < S; j++) {
            uint32_t k = l * S + j;
            in->time[k] = rnd_below(r, 9) == 0 ? INFINITY : 0.1 + 10.0 * rnd_unit(r);
            if (g->whole_buckets) {
                in->f[k] = *bucket * rnd_below(r, 5);
                in->ms[k] = *bucket * rnd_below(r, 4);
                in->b[k] = 0;
            } else {
                /* bucket ≤ 40 MiB: 5 buckets stay below 2^32 */
                in->f[k] = rnd_below(r, (uint32_t)(5 * *bucket));
                in->ms[k] = rnd_below(r, (uint32_t)(3 * *bucket));
                in->b[k] = 1 + rnd_below(r, (uint32_t)(4 * *bucket));
            }
            for (uint32_t i = 0; i < S; i++) {
                double x = rnd_below(r, 4) == 0 ? 0.0 : 3.0 * rnd_unit(r);
                if (g->infinite_r && rnd_below(r, 12) == 0)
                    x = INFINITY;
                in->full[(l * S + i) * S + j] = l == 0 ? 1e9 : x;
            }
        }
    }
    /* budgets from "nothing fits" to "everything fits" */
    uint64_t span = (uint64_t)in->L * 7 + 2;
    *budget = *bucket * rnd_below(r, (uint32_t)span) +
              rnd_below(r, (uint32_t)(*bucket < 1000000 ? *bucket : 1000000));
}

static int solve(inst_t *in, tsl_layerdp_ws_t *ws, uint32_t *choice, tsl_layerdp_result_t *res)
{
    tsl_err_t err = {0};
    int rc = tsl_layerdp_solve(&in->p, ws, choice, res, &err);
    CHECK(rc == 0, "solve: %s", err.msg);
    return rc;
}

/* (1a) O_b = 0, whole buckets: the DP is exact, both R forms. */
static void test_brute_exact(tsl_layerdp_ws_t *ws, const char *kern, int *checked)
{
    lcg_t r = {20240611};
    gen_t g = {.whole_buckets = true, .infinite_r = false};
    static inst_t in;
    int found = 0, none = 0, bad_layout = 0, bad_full = 0, bad_matrix = 0, bad_agree = 0;
    for (int it = 0; it < 2500; it++) {
        uint64_t budget, bucket;
        random_instance(&r, &g, &in, &budget, &bucket);
        uint32_t c1[MAXL], c2[MAXL], c3[MAXL];
        tsl_layerdp_result_t r1, r2, r3;

        /* layout classes with random trans costs */
        bind(&in, false, budget, bucket);
        brute_t b1 = brute(&in.p);
        if (solve(&in, ws, c1, &r1) != 0)
            return;
        if (!(r1.time_s == b1.best))
            bad_layout++;
        if (r1.time_s < INFINITY &&
            (r1.peak_bytes > budget || tsl_layerdp_time_s(&in.p, c1) != r1.time_s))
            bad_layout++;

        /* the same R written as a full matrix: same optimum */
        full_from_layout(&in);
        bind(&in, true, budget, bucket);
        if (solve(&in, ws, c2, &r2) != 0)
            return;
        if (!(r2.time_s == b1.best) || !(r2.time_s == r1.time_s))
            bad_agree++;

        /* a random full matrix (some transitions forbidden) */
        lcg_t r2s = {r.s ^ 0x9e3779b97f4a7c15ull};
        for (uint32_t l = 1; l < in.L; l++)
            for (uint32_t q = 0; q < in.S * in.S; q++) {
                double x = rnd_below(&r2s, 4) == 0 ? 0.0 : 3.0 * rnd_unit(&r2s);
                if (rnd_below(&r2s, 12) == 0)
                    x = INFINITY; /* a forbidden transition */
                in.full[l * in.S * in.S + q] = x;
            }
        brute_t b3 = brute(&in.p);
        if (solve(&in, ws, c3, &r3) != 0)
            return;
        if (!(r3.time_s == b3.best))
            bad_matrix++;
        if (r3.time_s < INFINITY &&
            (r3.peak_bytes > budget || tsl_layerdp_time_s(&in.p, c3) != r3.time_s))
            bad_full++;

        found += b1.best < INFINITY;
        none += !(b1.best < INFINITY);
        *checked += 3;
    }
    CHECK(bad_layout == 0, "layout form differs from brute force on %d instances", bad_layout);
    CHECK(bad_agree == 0, "full form (from layouts) differs on %d instances", bad_agree);
    CHECK(bad_matrix == 0, "random full matrix differs from brute force on %d instances",
          bad_matrix);
    CHECK(bad_full == 0, "full form returned an inconsistent plan on %d instances", bad_full);
    CHECK(found > 500 && none > 100, "instance mix: %d with a plan, %d without", found, none);
    printf("exact (O_b = 0, whole buckets, %s kernels): 3 x 2500 instances, %d with a plan, "
           "%d without\n",
           kern, found, none);
}

/* Whether the layout form's answer (choice, res) to in is the full form's to the same R
 * (full_from_layout), bit for bit: the full form evaluates every cell, the layout form
 * none below need(l) (layerdp.c needed_cells), which no answer reads. Leaves in bound
 * to the layout form. */
static bool full_form_agrees(inst_t *in, tsl_layerdp_ws_t *ws, const uint32_t *choice,
                             const tsl_layerdp_result_t *res)
{
    const uint64_t budget = in->p.budget_bytes, bucket = in->p.bucket_bytes;
    uint32_t c[MAXL];
    memcpy(c, choice, sizeof(c));
    tsl_layerdp_result_t full;
    full_from_layout(in);
    bind(in, true, budget, bucket);
    bool same = solve(in, ws, c, &full) == 0 &&
                memcmp(&full.time_s, &res->time_s, sizeof(double)) == 0 &&
                full.peak_bytes == res->peak_bytes && full.fwd_bytes == res->fwd_bytes &&
                memcmp(c, choice, in->L * sizeof(*c)) == 0;
    bind(in, false, budget, bucket);
    return same;
}

/* (1b) arbitrary sizes, O_b > 0: never over budget, never below the optimum,
 * consistent figures; nothing found exactly when brute force finds nothing in the
 * region Algorithm 3 guarantees. */
static void test_brute_general(tsl_layerdp_ws_t *ws, const char *kern, int *checked)
{
    static inst_t in;
    for (int form = 0; form < 2; form++) {
        lcg_t r = {form ? 777 : 4242};
        gen_t g = {.whole_buckets = false, .infinite_r = form == 1};
        int over = 0, below = 0, incons = 0, phantom = 0, missed = 0, worse_guar = 0;
        int optimal = 0, found = 0, total = 0, disagree = 0;
        for (int it = 0; it < 3000; it++) {
            uint64_t budget, bucket;
            random_instance(&r, &g, &in, &budget, &bucket);
            bind(&in, form == 1, budget, bucket);
            brute_t b = brute(&in.p);
            uint32_t c[MAXL];
            for (uint32_t l = 0; l < MAXL; l++)
                c[l] = 99;
            tsl_layerdp_result_t res;
            if (solve(&in, ws, c, &res) != 0)
                return;
            total++;
            if (res.time_s < INFINITY) {
                found++;
                uint64_t peak = tsl_layerdp_peak_bytes(&in.p, c);
                if (peak > budget || res.peak_bytes != peak)
                    over++;
                if (res.time_s < b.best)
                    below++;
                if (tsl_layerdp_time_s(&in.p, c) != res.time_s)
                    incons++;
                if (!(b.best < INFINITY))
                    phantom++;
                if (res.time_s == b.best)
                    optimal++;
                if (res.time_s > b.best_guaranteed)
                    worse_guar++;
            } else {
                if (c[0] != 99)
                    incons++; /* choice must stay untouched */
                if (b.best_guaranteed < INFINITY)
                    missed++; /* a plan within E − b_up existed */
            }
            if (form == 0)
                disagree += !full_form_agrees(&in, ws, c, &res);
        }
        const char *name = form ? "full matrix" : "layout classes";
        CHECK(over == 0, "%s: %d plans over budget", name, over);
        CHECK(below == 0, "%s: %d times below the brute-force optimum", name, below);
        CHECK(incons == 0, "%s: %d inconsistent results", name, incons);
        CHECK(phantom == 0, "%s: %d plans where brute force has none", name, phantom);
        CHECK(missed == 0, "%s: %d instances missed a plan within E - b_up", name, missed);
        CHECK(worse_guar == 0, "%s: %d plans worse than the best within E - b_up", name,
              worse_guar);
        CHECK(found > 500, "%s: only %d instances with a plan", name, found);
        CHECK(disagree == 0, "%s: %d answers unlike the full form's of the same R", name, disagree);
        printf("general (%s, %s kernels): %d instances, %d with a plan, %d of them optimal\n", name,
               kern, total, found, optimal);
        *checked += total;
    }
}

/* ---- hand examples ---- */
#define MIB (1ull << 20)

static void test_one_layer(tsl_layerdp_ws_t *ws)
{
    inst_t in;
    memset(&in, 0, sizeof(in));
    in.L = 1;
    in.S = 3;
    /* j0: t 3, 3 MiB fwd+ms; j1: t 1, 12 MiB (too big); j2: t 2, 6 MiB + 3 MiB backward */
    double t[3] = {3, 1, 2};
    uint64_t f[3] = {2 * MIB, 8 * MIB, 4 * MIB}, ms[3] = {1 * MIB, 4 * MIB, 2 * MIB},
             b[3] = {0, 0, 3 * MIB};
    memcpy(in.time, t, sizeof(t));
    memcpy(in.f, f, sizeof(f));
    memcpy(in.ms, ms, sizeof(ms));
    memcpy(in.b, b, sizeof(b));
    bind(&in, false, 10 * MIB, MIB);
    uint32_t c[1] = {77};
    tsl_layerdp_result_t res;
    solve(&in, ws, c, &res);
    CHECK(c[0] == 2 && res.time_s == 2.0, "one layer: choice %u time %g", (unsigned)c[0],
          res.time_s);
    CHECK(res.peak_bytes == 9 * MIB && res.fwd_bytes == 6 * MIB, "one layer: peak %llu fwd %llu",
          (unsigned long long)res.peak_bytes, (unsigned long long)res.fwd_bytes);
    CHECK(res.states_visited > 0 && res.states_visited <= 11 * 3, "states %llu",
          (unsigned long long)res.states_visited);

    /* budget too small for anything: +INFINITY, choice untouched */
    bind(&in, false, 2 * MIB, MIB);
    c[0] = 77;
    solve(&in, ws, c, &res);
    CHECK(isinf(res.time_s) && res.time_s > 0 && c[0] == 77 && res.peak_bytes == 0,
          "too small: time %g choice %u", res.time_s, (unsigned)c[0]);
    /* 8.99 MiB: j2's 9 MiB peak no longer fits though its forward does */
    bind(&in, false, 9 * MIB - 1, MIB);
    solve(&in, ws, c, &res);
    CHECK(c[0] == 0 && res.time_s == 3.0, "9 MiB - 1: choice %u", (unsigned)c[0]);
    /* a budget of 0 bytes and zero-sized strategies still solves */
    memset(in.f, 0, sizeof(in.f));
    memset(in.ms, 0, sizeof(in.ms));
    memset(in.b, 0, sizeof(in.b));
    bind(&in, false, 0, MIB);
    solve(&in, ws, c, &res);
    CHECK(c[0] == 1 && res.time_s == 1.0 && res.peak_bytes == 0, "zero sizes, zero budget");
}

/* R steers the layers towards one layout. */
static void test_r_steering(tsl_layerdp_ws_t *ws)
{
    inst_t in;
    memset(&in, 0, sizeof(in));
    in.L = 4;
    in.S = 3;
    /* j0: class A, 1.0 everywhere; j1: class B, 0.8 / 1.1 alternating; j2: class C
     * (later class B), 1.1 / 0.8 alternating */
    double c0[4] = {1.0, 1.0, 1.0, 1.0}, c1[4] = {0.8, 1.1, 0.8, 1.1}, c2[4] = {1.1, 0.8, 1.1, 0.8};
    for (uint32_t l = 0; l < 4; l++) {
        in.time[l * 3 + 0] = c0[l];
        in.time[l * 3 + 1] = c1[l];
        in.time[l * 3 + 2] = c2[l];
        for (uint32_t j = 0; j < 3; j++)
            in.f[l * 3 + j] = MIB;
    }
    in.K = 3;
    in.layout[0] = 0;
    in.layout[1] = 1;
    in.layout[2] = 2;
    uniform_pairs(&in, 0.5);
    uint32_t c[4];
    tsl_layerdp_result_t res;

    /* all distinct classes, R = 0.5: best is to stay on one layout:
     * all j0 = 4.0, all j1 = 3.8, all j2 = 3.8 — ties keep the lower index */
    bind(&in, false, 100 * MIB, MIB);
    solve(&in, ws, c, &res);
    CHECK(fabs(res.time_s - 3.8) < 1e-12 && c[0] == c[1] && c[1] == c[2] && c[2] == c[3] &&
              c[0] != 0,
          "steering: %u %u %u %u time %g", (unsigned)c[0], (unsigned)c[1], (unsigned)c[2],
          (unsigned)c[3], res.time_s);

    /* no R: the per-layer minima, 0.8 × 4 */
    uniform_pairs(&in, 0.0);
    solve(&in, ws, c, &res);
    CHECK(fabs(res.time_s - 3.2) < 1e-12, "no R: time %g", res.time_s);

    /* j1 and j2 in one class: switching between them is free, to j0 it costs */
    uniform_pairs(&in, 0.5);
    in.layout[2] = 1;
    solve(&in, ws, c, &res);
    CHECK(fabs(res.time_s - 3.2) < 1e-12 && c[0] == 1 && c[1] == 2 && c[2] == 1 && c[3] == 2,
          "one class: %u %u %u %u time %g", (unsigned)c[0], (unsigned)c[1], (unsigned)c[2],
          (unsigned)c[3], res.time_s);

    /* the same through the full matrix */
    full_from_layout(&in);
    bind(&in, true, 100 * MIB, MIB);
    solve(&in, ws, c, &res);
    CHECK(fabs(res.time_s - 3.2) < 1e-12 && c[0] == 1 && c[1] == 2 && c[2] == 1 && c[3] == 2,
          "full form, one class: time %g", res.time_s);

    /* j0 fastest everywhere and entering its layout free: all j0 */
    in.layout[2] = 2;
    bind(&in, false, 100 * MIB, MIB);
    for (uint32_t l = 0; l < 4; l++)
        in.time[l * 3 + 0] = 0.5;
    for (uint32_t l = 1; l < 4; l++) /* into j0's layout: free */
        in.pair[(l * 3 + 1) * 3 + 0] = in.pair[(l * 3 + 2) * 3 + 0] = 0.0;
    solve(&in, ws, c, &res);
    CHECK(fabs(res.time_s - 2.0) < 1e-12 && c[0] == 0 && c[1] == 0 && c[2] == 0 && c[3] == 0,
          "cheap j0: time %g", res.time_s);
}

/* Infeasible strategies are never chosen and cost no DP cells. */
static void test_infeasible(tsl_layerdp_ws_t *ws)
{
    inst_t in;
    memset(&in, 0, sizeof(in));
    in.L = 3;
    in.S = 3;
    for (uint32_t l = 0; l < 3; l++) {
        in.time[l * 3 + 0] = 2.0;
        in.time[l * 3 + 1] = INFINITY; /* fast-looking but infeasible: tiny memory */
        in.time[l * 3 + 2] = 3.0;
        in.f[l * 3 + 0] = 4 * MIB;
        in.f[l * 3 + 1] = 0;
        in.f[l * 3 + 2] = 1 * MIB;
    }
    bind(&in, false, 10 * MIB, MIB);
    uint32_t c[3];
    tsl_layerdp_result_t res;
    solve(&in, ws, c, &res);
    /* 10 MiB: at most two of the 4 MiB layers: 2 + 2 + 3 = 7 */
    CHECK(res.time_s == 7.0 && c[0] != 1 && c[1] != 1 && c[2] != 1, "infeasible skipped: %g",
          res.time_s);
    CHECK(res.states_visited <= 3ull * 11 * 2, "infeasible cells not evaluated: %llu",
          (unsigned long long)res.states_visited);

    /* a layer with no feasible strategy: nothing fits */
    in.time[1 * 3 + 0] = in.time[1 * 3 + 2] = INFINITY;
    c[0] = 55;
    solve(&in, ws, c, &res);
    CHECK(isinf(res.time_s) && c[0] == 55, "a layer without a feasible strategy");

    /* a strategy whose own peak (f + b + ms) exceeds the budget never counts in b_up:
     * one layer, j0 fast but O_b 12 > 10, j1 slower and fits */
    memset(&in, 0, sizeof(in));
    in.L = 1;
    in.S = 2;
    in.time[0] = 1.0;
    in.f[0] = 3;
    in.b[0] = 12;
    in.time[1] = 2.0;
    in.f[1] = 5;
    bind(&in, false, 10, 1);
    solve(&in, ws, c, &res);
    CHECK(res.time_s == 2.0 && c[0] == 1 && res.peak_bytes == 5, "hopeless strategy pruned");
}

/* Algorithm 3's walk over E_fwd above E − b_up. */
static void test_walk(tsl_layerdp_ws_t *ws)
{
    inst_t in;
    memset(&in, 0, sizeof(in));
    in.L = 1;
    in.S = 4;
    /* bucket = 1 byte, budget 10:
     *   j0: f 6, b 4, t 1   (peak 10)
     *   j1: f 2, b 0, t 2   (peak 2)
     *   j2: f 1, b 9, t 5   (peak 10) → b_up = 9, E − b_up = 1: only j2
     *   j3: f 8, b 5, t 0.5 (peak 13: over; hopeless, pruned)                       */
    uint64_t f[4] = {6, 2, 1, 8}, b[4] = {4, 0, 9, 5};
    double t[4] = {1, 2, 5, 0.5};
    memcpy(in.f, f, sizeof(f));
    memcpy(in.b, b, sizeof(b));
    memcpy(in.time, t, sizeof(t));
    bind(&in, false, 10, 1);
    uint32_t c[1];
    tsl_layerdp_result_t res;
    solve(&in, ws, c, &res);
    CHECK(c[0] == 0 && res.time_s == 1.0 && res.peak_bytes == 10,
          "walk: from j2 at E - b_up up to j0: choice %u time %g", (unsigned)c[0], res.time_s);

    /* two layers where the walk meets an invalid assignment and stops (bucket 1 B):
     *   layer 0: j0 f 5 t 1;       j1 f 2 t 3;        j2 infeasible
     *   layer 1: j0 f 1 b 6 t 1;   j1 f 1 b 0 t 2;    j2 f 3 b 0 t 0.2
     * budget 10, b_up 6 → E − b_up = 4: (j1, j0) t 4, peak 2 + 1 + 6 = 9.
     * e = 5: (j1, j2) t 3.2, peak 5: valid.
     * e = 6: (j0, j0) t 2, peak 5 + 1 + 6 = 12 > 10: invalid, the walk stops.
     * (e = 8 would give (j0, j2) t 1.2, peak 8 — the brute-force optimum — but
     * Algorithm 3 does not look past the first invalid E_fwd.) */
    memset(&in, 0, sizeof(in));
    in.L = 2;
    in.S = 3;
    uint64_t f2[6] = {5, 2, 0, 1, 1, 3}, b2[6] = {0, 0, 0, 6, 0, 0};
    double t2[6] = {1, 3, INFINITY, 1, 2, 0.2};
    memcpy(in.f, f2, sizeof(f2));
    memcpy(in.b, b2, sizeof(b2));
    memcpy(in.time, t2, sizeof(t2));
    bind(&in, false, 10, 1);
    uint32_t c2[2];
    solve(&in, ws, c2, &res);
    CHECK(c2[0] == 1 && c2[1] == 2 && fabs(res.time_s - 3.2) < 1e-12 && res.peak_bytes == 5 &&
              res.fwd_bytes == 5,
          "walk stops at the first invalid E_fwd: %u %u time %g", (unsigned)c2[0], (unsigned)c2[1],
          res.time_s);
    brute_t bf = brute(&in.p);
    CHECK(fabs(bf.best - 1.2) < 1e-12 && bf.choice[0] == 0 && bf.choice[1] == 2,
          "brute force finds (j0, j2): %g", bf.best);
    /* No cell below need(l) is evaluated (layerdp.c needed_cells): the walk reads
     * layer 1 from e0 = 4 up, so need(1) = 4 and need(0) = 4 − max w(1) = 4 − 3 = 1.
     * Layer 0 (hi 9 = 10 − min w(1)) evaluates j0 on [5, 9] and j1 on [2, 9]: 13
     * cells, need 1 cutting none; layer 1 (first finite cell of layer 0: 2) j0 and j1
     * on [4, 10] where they would start at 3, j2 on [5, 10]: 20. Every cell: 35. */
    CHECK(res.states_visited == 13 + 20, "cells below need evaluated: %llu",
          (unsigned long long)res.states_visited);
    /* the full form evaluates every cell, for the same answer */
    full_from_layout(&in);
    bind(&in, true, 10, 1);
    tsl_layerdp_result_t full;
    uint32_t c3[2];
    solve(&in, ws, c3, &full);
    CHECK(full.states_visited == 35 && full.time_s == res.time_s && c3[0] == 1 && c3[1] == 2,
          "full form: %llu cells, time %g", (unsigned long long)full.states_visited, full.time_s);
}

static void test_figures(void)
{
    /* Eq. 2 by hand: f = 3, 5, 2; b = 4, 1, 7; ms = 10, 20, 30.
     * prefixes + b: 3+4 = 7, 8+1 = 9, 10+7 = 17 → 17 + 60 = 77; E_f = 70. */
    inst_t in;
    memset(&in, 0, sizeof(in));
    in.L = 3;
    in.S = 2;
    uint32_t ch[3] = {1, 0, 1};
    uint64_t f[3] = {3, 5, 2}, b[3] = {4, 1, 7}, ms[3] = {10, 20, 30};
    double t[3] = {1.5, 2.5, 4.0};
    for (uint32_t l = 0; l < 3; l++) {
        uint32_t k = l * 2 + ch[l];
        in.f[k] = f[l];
        in.b[k] = b[l];
        in.ms[k] = ms[l];
        in.time[k] = t[l];
    }
    in.K = 2;
    in.layout[0] = 0;
    in.layout[1] = 1;
    uniform_pairs(&in, 0.25);
    bind(&in, false, 0, 1);
    CHECK(tsl_layerdp_peak_bytes(&in.p, ch) == 77, "peak %llu",
          (unsigned long long)tsl_layerdp_peak_bytes(&in.p, ch));
    /* time: 1.5 + (0.25 + 2.5) + (0.25 + 4.0) = 8.5 (layer 0 pays no R) */
    CHECK(tsl_layerdp_time_s(&in.p, ch) == 8.5, "time %g", tsl_layerdp_time_s(&in.p, ch));
    full_from_layout(&in);
    bind(&in, true, 0, 1);
    CHECK(tsl_layerdp_time_s(&in.p, ch) == 8.5, "time, full form");

    CHECK(tsl_layerdp_buckets(80ull << 30, 0) == 2048, "80 GiB default buckets");
    CHECK(tsl_layerdp_buckets(80ull << 30, TSL_LAYERDP_DEFAULT_BUCKET_BYTES) == 2048, "80 GiB");
    CHECK(tsl_layerdp_buckets(100, 7) == 14 && tsl_layerdp_buckets(6, 7) == 0, "floor");
    CHECK(tsl_layerdp_buckets(UINT64_MAX, 1) == UINT32_MAX, "saturates");
}

/* ---- workspace limits and malformed input ---- */
static void test_limits(void)
{
    CHECK(tsl_layerdp_ws_new(0, 4, 4) == NULL, "0 layers");
    CHECK(tsl_layerdp_ws_new(4, 0, 4) == NULL, "0 strategies");
    CHECK(tsl_layerdp_ws_new(4, 70000, 4) == NULL, "more strategies than uint16 predecessors");
    tsl_layerdp_ws_free(NULL);

    tsl_layerdp_ws_t *ws = tsl_layerdp_ws_new(4, 3, 16);
    CHECK(ws != NULL, "small workspace");
    if (ws == NULL)
        return;
    inst_t in;
    memset(&in, 0, sizeof(in));
    in.L = 4;
    in.S = 3;
    for (uint32_t k = 0; k < 12; k++) {
        in.time[k] = 1.0;
        in.f[k] = 1;
    }
    uint32_t c[8];
    tsl_layerdp_result_t res;
    tsl_err_t err = {0};

    bind(&in, false, 16, 1);
    CHECK(tsl_layerdp_solve(&in.p, ws, c, &res, &err) == 0 && res.time_s == 4.0, "fits exactly: %s",
          err.msg);

    in.L = 5;
    bind(&in, false, 16, 1);
    CHECK(tsl_layerdp_solve(&in.p, ws, c, &res, &err) == -1 && strstr(err.msg, "n_layers"),
          "too many layers: %s", err.msg);
    in.L = 4;
    in.S = 4;
    bind(&in, false, 16, 1);
    CHECK(tsl_layerdp_solve(&in.p, ws, c, &res, &err) == -1 && strstr(err.msg, "n_strategies"),
          "too many strategies: %s", err.msg);
    in.S = 3;
    bind(&in, false, 17, 1);
    CHECK(tsl_layerdp_solve(&in.p, ws, c, &res, &err) == -1 && strstr(err.msg, "budget_bytes") &&
              strstr(err.msg, "max_buckets"),
          "too many buckets: %s", err.msg);
    bind(&in, false, 17 * TSL_LAYERDP_DEFAULT_BUCKET_BYTES, 0); /* default bucket */
    CHECK(tsl_layerdp_solve(&in.p, ws, c, &res, &err) == -1 && strstr(err.msg, "budget_bytes"),
          "default bucket, 17 buckets: %s", err.msg);
    bind(&in, false, 16 * TSL_LAYERDP_DEFAULT_BUCKET_BYTES + 5, 0);
    CHECK(tsl_layerdp_solve(&in.p, ws, c, &res, &err) == 0 && res.time_s == 4.0,
          "default bucket, 16 buckets: %s", err.msg);

    in.L = 0;
    bind(&in, false, 16, 1);
    CHECK(tsl_layerdp_solve(&in.p, ws, c, &res, &err) == -1 && strstr(err.msg, "n_layers"),
          "0 layers");
    in.L = 4;

    struct {
        const char *needle;
        int what;
    } miss[] = {{"time_s", 0}, {"fwd_bytes", 1},    {"bwd_bytes", 2},   {"ms_bytes", 3},
                {"layout", 4}, {"trans_pair_s", 5}, {"trans_full_s", 6}};
    for (size_t i = 0; i < sizeof(miss) / sizeof(miss[0]); i++) {
        bind(&in, false, 16, 1);
        switch (miss[i].what) {
        case 0: in.p.time_s = NULL; break;
        case 1: in.p.fwd_bytes = NULL; break;
        case 2: in.p.bwd_bytes = NULL; break;
        case 3: in.p.ms_bytes = NULL; break;
        case 4: in.p.layout = NULL; break;
        case 5: in.p.trans_pair_s = NULL; break;
        case 6: in.p.trans_full_s = in.full; break; /* both forms at once */
        }
        CHECK(tsl_layerdp_solve(&in.p, ws, c, &res, &err) == -1 && strstr(err.msg, miss[i].needle),
              "missing %s: %s", miss[i].needle, err.msg);
    }
    bind(&in, false, 16, 1);
    CHECK(tsl_layerdp_solve(&in.p, ws, NULL, &res, &err) == -1 && strstr(err.msg, "choice"),
          "choice");
    CHECK(tsl_layerdp_solve(&in.p, ws, c, NULL, &err) == -1 && strstr(err.msg, "res"), "res");
    CHECK(tsl_layerdp_solve(&in.p, NULL, c, &res, &err) == -1 && strstr(err.msg, "workspace"),
          "ws");
    CHECK(tsl_layerdp_solve(NULL, ws, c, &res, &err) == -1 && strstr(err.msg, "problem"),
          "problem");

    in.time[5] = -1.0;
    CHECK(tsl_layerdp_solve(&in.p, ws, c, &res, &err) == -1 && strstr(err.msg, "time_s[l=1, j=2]"),
          "negative time: %s", err.msg);
    in.time[5] = NAN;
    CHECK(tsl_layerdp_solve(&in.p, ws, c, &res, &err) == -1 && strstr(err.msg, "time_s[l=1, j=2]"),
          "NaN time: %s", err.msg);
    in.time[5] = 1.0;
    /* two layouts: j0, j1 on 0, j2 on 1 */
    in.K = 2;
    in.layout[2] = 1;
    bind(&in, false, 16, 1);
    in.pair[(2 * 2 + 0) * 2 + 1] = NAN;
    CHECK(tsl_layerdp_solve(&in.p, ws, c, &res, &err) == -1 &&
              strstr(err.msg, "trans_pair_s[l=2, from=0, to=1]"),
          "NaN trans: %s", err.msg);
    in.pair[(2 * 2 + 0) * 2 + 1] = 0.0;
    in.pair[1] = NAN; /* layer 0's R is never used */
    CHECK(tsl_layerdp_solve(&in.p, ws, c, &res, &err) == 0, "layer 0 trans ignored");
    in.pair[1] = 0.0;
    in.layout[2] = 2; /* beyond n_layouts 2 */
    CHECK(tsl_layerdp_solve(&in.p, ws, c, &res, &err) == -1 &&
              strstr(err.msg, "layout[j=2]: 2 is not below n_layouts 2"),
          "layout id out of range: %s", err.msg);
    in.layout[2] = 1;
    in.p.n_layouts = 0;
    CHECK(tsl_layerdp_solve(&in.p, ws, c, &res, &err) == -1 && strstr(err.msg, "n_layouts: 0"),
          "no layouts: %s", err.msg);
    memset(in.full, 0, sizeof(in.full));
    in.full[(3 * 3 + 2) * 3 + 0] = -0.5;
    bind(&in, true, 16, 1);
    CHECK(tsl_layerdp_solve(&in.p, ws, c, &res, &err) == -1 &&
              strstr(err.msg, "trans_full_s[l=3, i=2, j=0]"),
          "negative R: %s", err.msg);
    CHECK(tsl_layerdp_solve(&in.p, ws, c, &res, NULL) == -1, "NULL err is fine");
    tsl_layerdp_ws_free(ws);
}

/* The workspace carries no state from one solve to the next. */
static void test_reuse(tsl_layerdp_ws_t *ws)
{
    lcg_t r = {99};
    gen_t g = {.whole_buckets = false, .infinite_r = false};
    static inst_t a, b;
    int bad = 0;
    tsl_layerdp_ws_t *fresh = tsl_layerdp_ws_new(MAXL, MAXS, MAXB);
    for (int it = 0; it < 200 && fresh; it++) {
        uint64_t ba, ka, bb, kb;
        random_instance(&r, &g, &a, &ba, &ka);
        random_instance(&r, &g, &b, &bb, &kb);
        bind(&a, it & 1, ba, ka);
        bind(&b, !(it & 1), bb, kb);
        uint32_t c1[MAXL] = {0}, c2[MAXL] = {0}, c3[MAXL] = {0};
        tsl_layerdp_result_t r1, r2, r3;
        solve(&a, ws, c1, &r1);
        solve(&b, ws, c3, &r3); /* something else in between */
        solve(&a, ws, c2, &r2);
        if (memcmp(c1, c2, sizeof(c1)) != 0 || memcmp(&r1, &r2, sizeof(r1)) != 0)
            bad++;
        memset(c3, 0, sizeof(c3));
        solve(&a, fresh, c3, &r3);
        if (memcmp(c1, c3, sizeof(c1)) != 0 || memcmp(&r1, &r3, sizeof(r1)) != 0)
            bad++;
    }
    CHECK(fresh != NULL && bad == 0, "reused workspace differs on %d solves", bad);
    tsl_layerdp_ws_free(fresh);
}

/* The vector kernels and the portable ones give the same plans, to the bit,
 * also on problems big enough for the 4- and 8-cell steps to dominate: the widest
 * kernels the CPU has (AVX-512 where it has it), the AVX2 ones, the scalar ones. */
static void test_kernels_agree(void)
{
    enum { BL = 24, BS = 20, BB = 600 };
    tsl_layerdp_ws_t *fast = tsl_layerdp_ws_new(BL, BS, BB), *slow = tsl_layerdp_ws_new(BL, BS, BB),
                     *mid = tsl_layerdp_ws_new(BL, BS, BB);
    CHECK(fast && slow && mid, "workspaces");
    if (!fast || !slow || !mid)
        goto out;
    int has_vec = tsl_layerdp_ws_set_portable(slow, 1);
    tsl_layerdp_ws_set_portable(mid, 2);
    static double time[BL * BS], pair[BL * BS * BS], full[BL * BS * BS];
    static uint64_t f[BL * BS], b[BL * BS], ms[BL * BS];
    static uint32_t layout[BS];
    lcg_t r = {31337};
    int bad = 0, bad_mid = 0, plans = 0;
    for (int it = 0; it < 60; it++) {
        uint32_t L = 1 + rnd_below(&r, BL), S = 1 + rnd_below(&r, BS);
        uint64_t bucket = 1000;
        uint32_t K = 1 + S / 3;
        for (uint32_t j = 0; j < S; j++)
            layout[j] = rnd_below(&r, K);
        for (uint32_t k = 0; k < L * K * K; k++)
            pair[k] = rnd_below(&r, 3) == 0 ? 0.0 : 0.2 * rnd_unit(&r);
        for (uint32_t k = 0; k < L * S; k++) {
            time[k] = rnd_below(&r, 10) == 0 ? INFINITY : 0.5 + rnd_unit(&r);
            f[k] = rnd_below(&r, 40000);
            ms[k] = rnd_below(&r, 20000);
            b[k] = rnd_below(&r, 2) ? 0 : rnd_below(&r, 60000);
        }
        for (uint32_t k = 0; k < L * S * S; k++)
            full[k] = rnd_below(&r, 3) == 0 ? 0.0 : 0.2 * rnd_unit(&r);
        tsl_layerdp_problem_t p = {
            .n_layers = L,
            .n_strategies = S,
            .time_s = time,
            .fwd_bytes = f,
            .bwd_bytes = b,
            .ms_bytes = ms,
            .budget_bytes = bucket * rnd_below(&r, BB + 1),
            .bucket_bytes = bucket,
        };
        for (int form = 0; form < 2; form++) {
            p.n_layouts = K;
            p.layout = form ? NULL : layout;
            p.trans_pair_s = form ? NULL : pair;
            p.trans_full_s = form ? full : NULL;
            uint32_t c1[BL] = {0}, c2[BL] = {0}, c3[BL] = {0};
            tsl_layerdp_result_t r1, r2, r3;
            tsl_err_t err = {0};
            int rc1 = tsl_layerdp_solve(&p, fast, c1, &r1, &err);
            int rc2 = tsl_layerdp_solve(&p, slow, c2, &r2, &err);
            int rc3 = tsl_layerdp_solve(&p, mid, c3, &r3, &err);
            if (rc1 != 0 || rc2 != 0 || memcmp(c1, c2, sizeof(c1)) != 0 ||
                memcmp(&r1, &r2, sizeof(r1)) != 0)
                bad++;
            if (rc3 != 0 || memcmp(c3, c2, sizeof(c3)) != 0 || memcmp(&r3, &r2, sizeof(r3)) != 0)
                bad_mid++;
            plans += r1.time_s < INFINITY;
        }
    }
    CHECK(bad == 0, "vector and portable kernels differ on %d of 120 solves", bad);
    CHECK(bad_mid == 0, "AVX2 and portable kernels differ on %d of 120 solves", bad_mid);
    CHECK(plans > 20, "only %d of 120 solves found a plan", plans);
    printf("kernels: %s vs portable agree on 120 solves (%d with a plan)\n",
           has_vec ? "vector" : "portable (no vector kernels in this build)", plans);
out:
    tsl_layerdp_ws_free(fast);
    tsl_layerdp_ws_free(slow);
    tsl_layerdp_ws_free(mid);
}

/* trans_at: layers that share a matrix of R (a model's blocks) name it instead of
 * repeating it — the same plans and figures, to the bit, as every layer's own copy;
 * a name past n_trans, or trans_at with the full form, is refused naming the field. */
static void test_shared_matrices(void)
{
    enum { BL = 24, BS = 20, BB = 600, BC = 3 };
    tsl_layerdp_ws_t *ws = tsl_layerdp_ws_new(BL, BS, BB), *fresh = tsl_layerdp_ws_new(BL, BS, BB);
    CHECK(ws && fresh, "workspaces");
    if (!ws || !fresh)
        goto out;
    static double time[BL * BS], pair[BL * BS * BS], mats[BC * BS * BS];
    static uint64_t f[BL * BS], b[BL * BS], ms[BL * BS];
    static uint32_t layout[BS], at[BL];
    lcg_t r = {4242};
    int bad = 0, plans = 0;
    for (int it = 0; it < 80; it++) {
        uint32_t L = 1 + rnd_below(&r, BL), S = 1 + rnd_below(&r, BS), K = 1 + S / 3;
        uint32_t C = 1 + rnd_below(&r, BC);
        /* mostly the layouts of the solve before (its numbering kept, where S and K are) */
        for (uint32_t j = 0; j < S; j++)
            layout[j] = it % 8 == 0 ? rnd_below(&r, K) : layout[j] % K;
        for (uint32_t k = 0; k < C * K * K; k++)
            mats[k] = rnd_below(&r, 3) == 0 ? 0.0 : 0.2 * rnd_unit(&r);
        for (uint32_t l = 0; l < L; l++) {
            at[l] = l < 2 ? l % C : rnd_below(&r, 4) == 0 ? rnd_below(&r, C) : at[l - 1];
            memcpy(pair + (size_t)l * K * K, mats + (size_t)at[l] * K * K, K * K * sizeof(double));
        }
        for (uint32_t k = 0; k < L * S; k++) {
            time[k] = rnd_below(&r, 10) == 0 ? INFINITY : 0.5 + rnd_unit(&r);
            f[k] = rnd_below(&r, 40000);
            ms[k] = rnd_below(&r, 20000);
            b[k] = rnd_below(&r, 2) ? 0 : rnd_below(&r, 60000);
        }
        tsl_layerdp_problem_t own = {.n_layers = L,
                                     .n_strategies = S,
                                     .time_s = time,
                                     .fwd_bytes = f,
                                     .bwd_bytes = b,
                                     .ms_bytes = ms,
                                     .n_layouts = K,
                                     .layout = layout,
                                     .trans_pair_s = pair,
                                     .budget_bytes = 1000 * (uint64_t)rnd_below(&r, BB + 1),
                                     .bucket_bytes = 1000},
                              shared = own;
        shared.trans_pair_s = mats;
        shared.trans_at = at;
        shared.n_trans = C;
        uint32_t c1[BL] = {0}, c2[BL] = {0}, c3[BL] = {0};
        tsl_layerdp_result_t r1, r2, r3;
        int rc1 = tsl_layerdp_solve(&own, fresh, c1, &r1, NULL);
        int rc2 = tsl_layerdp_solve(&shared, ws, c2, &r2, NULL);
        int rc3 = tsl_layerdp_solve(&own, ws, c3, &r3, NULL); /* ws's numbering read */
        if (rc1 != 0 || rc2 != 0 || rc3 != 0 || memcmp(c1, c2, sizeof(c1)) != 0 ||
            memcmp(&r1, &r2, sizeof(r1)) != 0 || memcmp(c1, c3, sizeof(c1)) != 0 ||
            memcmp(&r1, &r3, sizeof(r1)) != 0 ||
            (r1.time_s < INFINITY && tsl_layerdp_time_s(&shared, c2) != r1.time_s))
            bad++;
        plans += r1.time_s < INFINITY;
    }
    CHECK(bad == 0, "shared matrices differ from each layer's own on %d of 80 solves", bad);
    CHECK(plans > 20, "only %d of 80 solves found a plan", plans);

    /* bad input: a matrix past n_trans (layer 0's is never read), trans_at with the
     * full form, a NaN in a shared matrix named by the first layer past 0 reading it */
    tsl_layerdp_problem_t p = {.n_layers = 3,
                               .n_strategies = 2,
                               .time_s = time,
                               .fwd_bytes = f,
                               .bwd_bytes = b,
                               .ms_bytes = ms,
                               .n_layouts = 1,
                               .layout = (const uint32_t[]){0, 0},
                               .trans_pair_s = (const double[]){0.0, 0.5},
                               .trans_at = (const uint32_t[]){7, 0, 2},
                               .n_trans = 2,
                               .budget_bytes = 100000,
                               .bucket_bytes = 1000};
    for (uint32_t k = 0; k < 6; k++) {
        time[k] = 1.0;
        f[k] = b[k] = ms[k] = 0;
    }
    tsl_err_t err = {0};
    uint32_t c[3];
    tsl_layerdp_result_t res;
    CHECK(tsl_layerdp_solve(&p, ws, c, &res, &err) == -1 &&
              strstr(err.msg, "trans_at[l=2]: 2 is not below n_trans 2"),
          "trans_at past n_trans: %s", err.msg);
    p.trans_at = (const uint32_t[]){7, 0, 1};
    CHECK(tsl_layerdp_solve(&p, ws, c, &res, &err) == 0 && res.time_s == 3.5,
          "layer 0's matrix unread, layer 2's own: %s", err.msg);
    p.trans_pair_s = (const double[]){0.0, NAN};
    CHECK(tsl_layerdp_solve(&p, ws, c, &res, &err) == -1 &&
              strstr(err.msg, "trans_pair_s[l=2, from=0, to=0]"),
          "NaN in a shared matrix: %s", err.msg);
    p.layout = NULL;
    p.trans_pair_s = NULL;
    p.trans_full_s = pair;
    CHECK(tsl_layerdp_solve(&p, ws, c, &res, &err) == -1 && strstr(err.msg, "trans_at"),
          "trans_at with the full form: %s", err.msg);
    printf("shared matrices: 80 solves agree with each layer's own (%d with a plan)\n", plans);
out:
    tsl_layerdp_ws_free(ws);
    tsl_layerdp_ws_free(fresh);
}

/* row_at: layers whose figures are the same (a model's blocks) name one row of them
 * instead of a copy each — the same plans and figures, to the bit, as every layer's
 * own row, in both forms of R, with runs and rows named again after others; a row past
 * n_rows, n_rows 0, or a bad time in a shared row is refused naming the field. */
static void test_shared_rows(void)
{
    enum { BL = 24, BS = 20, BB = 600, BR = 4 };
    tsl_layerdp_ws_t *ws = tsl_layerdp_ws_new(BL, BS, BB), *fresh = tsl_layerdp_ws_new(BL, BS, BB);
    CHECK(ws && fresh, "workspaces");
    if (!ws || !fresh)
        goto out;
    static double time[BL * BS], rtime[BR * BS], pair[BL * BS * BS], full[BL * BS * BS];
    static uint64_t f[BL * BS], b[BL * BS], ms[BL * BS], rf[BR * BS], rb[BR * BS], rms[BR * BS];
    static uint32_t layout[BS], at[BL];
    lcg_t r = {777};
    int bad = 0, plans = 0;
    for (int it = 0; it < 120; it++) {
        uint32_t L = 1 + rnd_below(&r, BL), S = 1 + rnd_below(&r, BS), K = 1 + S / 3;
        uint32_t R = 1 + rnd_below(&r, BR);
        bool full_form = it % 3 == 2;
        for (uint32_t j = 0; j < S; j++)
            layout[j] = rnd_below(&r, K);
        for (uint32_t k = 0; k < R * S; k++) {
            rtime[k] = rnd_below(&r, 10) == 0 ? INFINITY : 0.5 + rnd_unit(&r);
            rf[k] = rnd_below(&r, 40000);
            rms[k] = rnd_below(&r, 20000);
            rb[k] = rnd_below(&r, 2) ? 0 : rnd_below(&r, 60000);
        }
        for (uint32_t l = 0; l < L; l++) { /* runs of one row, and rows named again */
            at[l] = l == 0 || rnd_below(&r, 3) == 0 ? rnd_below(&r, R) : at[l - 1];
            memcpy(time + (size_t)l * S, rtime + (size_t)at[l] * S, S * sizeof(double));
            memcpy(f + (size_t)l * S, rf + (size_t)at[l] * S, S * sizeof(uint64_t));
            memcpy(b + (size_t)l * S, rb + (size_t)at[l] * S, S * sizeof(uint64_t));
            memcpy(ms + (size_t)l * S, rms + (size_t)at[l] * S, S * sizeof(uint64_t));
        }
        for (uint32_t k = 0; k < L * K * K; k++)
            pair[k] = rnd_below(&r, 3) == 0 ? 0.0 : 0.2 * rnd_unit(&r);
        for (uint32_t l = 0; l < L; l++)
            for (uint32_t i = 0; i < S; i++)
                for (uint32_t j = 0; j < S; j++)
                    full[((size_t)l * S + i) * S + j] =
                        pair[((size_t)l * K + layout[i]) * K + layout[j]];
        tsl_layerdp_problem_t own = {.n_layers = L,
                                     .n_strategies = S,
                                     .time_s = time,
                                     .fwd_bytes = f,
                                     .bwd_bytes = b,
                                     .ms_bytes = ms,
                                     .budget_bytes = 1000 * (uint64_t)rnd_below(&r, BB + 1),
                                     .bucket_bytes = 1000},
                              shared;
        if (full_form) {
            own.trans_full_s = full;
        } else {
            own.n_layouts = K;
            own.layout = layout;
            own.trans_pair_s = pair;
        }
        shared = own;
        shared.time_s = rtime;
        shared.fwd_bytes = rf;
        shared.bwd_bytes = rb;
        shared.ms_bytes = rms;
        shared.row_at = at;
        shared.n_rows = R;
        uint32_t c1[BL] = {0}, c2[BL] = {0};
        tsl_layerdp_result_t r1, r2;
        int rc1 = tsl_layerdp_solve(&own, fresh, c1, &r1, NULL);
        int rc2 = tsl_layerdp_solve(&shared, ws, c2, &r2, NULL);
        if (rc1 != 0 || rc2 != 0 || memcmp(c1, c2, sizeof(c1)) != 0 ||
            memcmp(&r1, &r2, sizeof(r1)) != 0 ||
            (r1.time_s < INFINITY && (tsl_layerdp_time_s(&shared, c2) != r1.time_s ||
                                      tsl_layerdp_peak_bytes(&shared, c2) != r1.peak_bytes)))
            bad++;
        plans += r1.time_s < INFINITY;
    }
    CHECK(bad == 0, "shared rows differ from each layer's own on %d of 120 solves", bad);
    CHECK(plans > 30, "only %d of 120 solves found a plan", plans);

    /* bad input: a row past n_rows, no rows, a NaN time in a shared row */
    tsl_layerdp_problem_t p = {.n_layers = 3,
                               .n_strategies = 2,
                               .time_s = rtime,
                               .fwd_bytes = rf,
                               .bwd_bytes = rb,
                               .ms_bytes = rms,
                               .row_at = (const uint32_t[]){0, 1, 2},
                               .n_rows = 2,
                               .n_layouts = 1,
                               .layout = (const uint32_t[]){0, 0},
                               .trans_pair_s = (const double[]){0.5, 0.5, 0.5},
                               .budget_bytes = 100000,
                               .bucket_bytes = 1000};
    for (uint32_t k = 0; k < 4; k++) {
        rtime[k] = 1.0 + k / 2;
        rf[k] = rb[k] = rms[k] = 0;
    }
    tsl_err_t err = {0};
    uint32_t c[3];
    tsl_layerdp_result_t res;
    CHECK(tsl_layerdp_solve(&p, ws, c, &res, &err) == -1 &&
              strstr(err.msg, "row_at[l=2]: 2 is not below n_rows 2"),
          "row_at past n_rows: %s", err.msg);
    p.n_rows = 0;
    CHECK(tsl_layerdp_solve(&p, ws, c, &res, &err) == -1 && strstr(err.msg, "n_rows: 0"),
          "n_rows 0: %s", err.msg);
    p.row_at = (const uint32_t[]){1, 0, 1};
    p.n_rows = 2;
    CHECK(tsl_layerdp_solve(&p, ws, c, &res, &err) == 0 && res.time_s == 2.0 + 1.0 + 2.0 + 1.0,
          "rows 1, 0, 1 with R 0.5 each move: %s (%g)", err.msg, res.time_s);
    rtime[3] = NAN;
    CHECK(tsl_layerdp_solve(&p, ws, c, &res, &err) == -1 && strstr(err.msg, "time_s[row=1, j=1]"),
          "NaN in a shared row: %s", err.msg);
    printf("shared rows: 120 solves agree with each layer's own (%d with a plan)\n", plans);
out:
    tsl_layerdp_ws_free(ws);
    tsl_layerdp_ws_free(fresh);
}

/* Each layer's buckets ⌈bytes / bucket⌉ exact at sizes past 2^53, where a double
 * cannot hold the bytes: two layers, budget 2k + 1 buckets less a byte (E = 2k). The
 * DP fits a pair whose buckets sum to 2k and never one of 2k + 1, however few bytes
 * over (Algorithm 3 rounds each layer's forward memory up). */
/* The input check of time_s at every offset of a row (layerdp.c all_times: four
 * lanes a step and a tail): −1 and NaN named where they stand, −0 and +INFINITY
 * taken as times. */
static void test_time_check(tsl_layerdp_ws_t *ws)
{
    static inst_t in;
    memset(&in, 0, sizeof(in));
    in.L = 1;
    int bad = 0, runs = 0;
    for (uint32_t S = 1; S <= MAXS; S++)
        for (uint32_t j = 0; j < S; j++)
            for (int v = 0; v < 4; v++) {
                static const double vals[4] = {-1.0, NAN, -0.0, INFINITY};
                in.S = S;
                for (uint32_t i = 0; i < S; i++)
                    in.time[i] = 1.0 + i;
                in.time[j] = vals[v];
                bind(&in, false, 100, 1);
                uint32_t c[MAXL];
                tsl_layerdp_result_t res;
                tsl_err_t err = {0};
                char want[64];
                snprintf(want, sizeof(want), "time_s[l=0, j=%u]", (unsigned)j);
                const int rc = tsl_layerdp_solve(&in.p, ws, c, &res, &err);
                bad += v < 2 ? rc != -1 || strstr(err.msg, want) == NULL : rc != 0;
                runs++;
            }
    CHECK(bad == 0, "time_s check: %d of %d runs wrong", bad, runs);
}

static void test_bucket_rounding(void)
{
    tsl_layerdp_ws_t *ws = tsl_layerdp_ws_new(2, 1, 160);
    CHECK(ws != NULL, "workspace");
    if (ws == NULL)
        return;
    const uint64_t bucket = (1ull << 50) + 3, k = 80;
    static const struct {
        int64_t d0, d1; /* bytes: k·bucket + d0 and k·bucket + d1 */
        int64_t k0;     /* layer 0 at (k + k0)·bucket + d0 */
        bool fits;
    } cases[] = {{0, 0, 0, true},   {1, 0, 0, false}, {0, 1, 0, false},
                 {-1, 0, 0, true},  {1, 0, -1, true}, {(int64_t)((1ull << 50) + 2), 0, -1, true},
                 {-1, 1, 1, false}, {1, 1, -1, false}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        double time[2] = {1.0, 1.0};
        uint64_t f[2] = {(k + cases[i].k0) * bucket + cases[i].d0, k * bucket + cases[i].d1};
        uint64_t zero[2] = {0, 0};
        tsl_layerdp_problem_t p = {.n_layers = 2,
                                   .n_strategies = 1,
                                   .time_s = time,
                                   .fwd_bytes = f,
                                   .bwd_bytes = zero,
                                   .ms_bytes = zero,
                                   .n_layouts = 1,
                                   .layout = (const uint32_t[]){0},
                                   .trans_pair_s = (const double[]){0.0, 0.0},
                                   .budget_bytes = (2 * k + 1) * bucket - 1,
                                   .bucket_bytes = bucket};
        uint32_t c[2];
        tsl_layerdp_result_t res;
        tsl_err_t err = {0};
        int rc = tsl_layerdp_solve(&p, ws, c, &res, &err);
        CHECK(rc == 0 && (res.time_s < INFINITY) == cases[i].fits,
              "case %zu: %s (time %g, want %s)", i, err.msg, res.time_s,
              cases[i].fits ? "a plan" : "none");
    }
    tsl_layerdp_ws_free(ws);
}

int main(void)
{
    tsl_layerdp_ws_t *ws = tsl_layerdp_ws_new(MAXL, MAXS, MAXB);
    CHECK(ws != NULL, "workspace");
    if (ws == NULL)
        return CHECK_DONE();
    int checked = 0;
    int has_vec = tsl_layerdp_ws_set_portable(ws, 0);
    test_brute_exact(ws, has_vec ? "vector" : "portable", &checked);
    test_brute_general(ws, has_vec ? "vector" : "portable", &checked);
    /* once more with the portable kernels (the same instances) */
    if (has_vec) {
        tsl_layerdp_ws_set_portable(ws, 1);
        test_brute_exact(ws, "portable", &checked);
        test_brute_general(ws, "portable", &checked);
    }
    tsl_layerdp_ws_set_portable(ws, 0);
    test_one_layer(ws);
    test_r_steering(ws);
    test_infeasible(ws);
    test_walk(ws);
    test_figures();
    test_limits();
    test_reuse(ws);
    test_kernels_agree();
    test_shared_matrices();
    test_shared_rows();
    test_bucket_rounding();
    test_time_check(ws);
    tsl_layerdp_ws_free(ws);
    printf("%d random instances checked against brute force\n", checked);
    return CHECK_DONE();
}
