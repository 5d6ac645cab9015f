/*
 * partition.c — time- and memory-balanced pipeline partitions, Galvatron-BMW's
 * bi-objective adjustment (Algorithm 2) and AMP's layer-assignment DP, exact.
 * See partition.h for the contracts and docs/partition.md for the algorithms.
 */
#include "partition.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autopipe.h"
#include "pipeline.h"

#define NONE        UINT32_MAX
#define ALPHA_SLACK 1e-12 /* Eq. 7 comparisons absorb rounding of α */

struct tsl_partition_ws {
    uint32_t max_layers, max_stages;
    double *T, *Y;   /* [L + 1] prefix sums of time_s, sync_s */
    uint64_t *O, *U; /* [L + 1] prefix sums of ms_bytes, act_bytes */
    uint32_t *prev;  /* [P · (L + 1)] start of the stage ending at y */
    double *dp;      /* [P · (L + 1)] min Σ c of stages 0..j ending at y */
    uint32_t *stk;   /* [L + 1] monotone stack of starts */
    double *stk_key; /* [L + 1] their keys */
};

/* Per-call view of the input: per-stage constants and the prefix sums. */
typedef struct ctx {
    const tsl_partition_in_t *in;
    uint32_t L, P, m;
    uint32_t cut; /* the latest stage start (partition.h max_cut) */
    double speed[TSL_PARTITION_MAX_STAGES];
    uint64_t w[TSL_PARTITION_MAX_STAGES]; /* in-flight micro-batches */
    uint64_t budget[TSL_PARTITION_MAX_STAGES];
    tsl_partition_ws_t *ws;
    uint32_t sweeps; /* feasibility sweeps run */
    /* of the last sweep (feasible): the least a_i above its tcap and the least M_i
     * above its mcap among the stages it weighed and refused (+INFINITY, UINT64_MAX:
     * none) — the caps below which no refusal turns, so no sweep's outcome changes */
    double next_time;
    uint64_t next_mem;
    uint32_t dps; /* min-Σ DPs run */
} ctx_t;

/* ------------------------------------------------------------- workspace */

tsl_partition_ws_t *tsl_partition_ws_new(uint32_t max_layers, uint32_t max_stages)
{
    if (max_layers == 0 || max_layers > TSL_PARTITION_MAX_LAYERS || max_stages == 0 ||
        max_stages > TSL_PARTITION_MAX_STAGES)
        return NULL;
    tsl_partition_ws_t *ws = calloc(1, sizeof(*ws));
    if (!ws)
        return NULL;
    size_t n = (size_t)max_layers + 1, grid = n * max_stages;
    ws->max_layers = max_layers;
    ws->max_stages = max_stages;
    ws->T = malloc(n * sizeof(double));
    ws->Y = malloc(n * sizeof(double));
    ws->O = malloc(n * sizeof(uint64_t));
    ws->U = malloc(n * sizeof(uint64_t));
    ws->prev = malloc(grid * sizeof(uint32_t));
    ws->dp = malloc(grid * sizeof(double));
    ws->stk = malloc(n * sizeof(uint32_t));
    ws->stk_key = malloc(n * sizeof(double));
    if (!ws->T || !ws->Y || !ws->O || !ws->U || !ws->prev || !ws->dp || !ws->stk || !ws->stk_key) {
        tsl_partition_ws_free(ws);
        return NULL;
    }
    return ws;
}

void tsl_partition_ws_free(tsl_partition_ws_t *ws)
{
    if (!ws)
        return;
    free(ws->T);
    free(ws->Y);
    free(ws->O);
    free(ws->U);
    free(ws->prev);
    free(ws->dp);
    free(ws->stk);
    free(ws->stk_key);
    free(ws);
}

/* ------------------------------------------------------------- validation */

static int check_time(const double *v, uint32_t n, const char *field, tsl_err_t *err)
{
    for (uint32_t i = 0; i < n; i++)
        if (!isfinite(v[i]) || v[i] < 0)
            return tsl_err_set(err, "%s[%u]: %g is not a valid time; give a finite value >= 0",
                               field, i, v[i]);
    return 0;
}

/* Checks in and fills the per-stage constants (not the prefix sums). */
static int ctx_init(ctx_t *c, const tsl_partition_in_t *in, tsl_partition_ws_t *ws, tsl_err_t *err)
{
    memset(c, 0, sizeof(*c));
    if (!in)
        return tsl_err_set(err, "partition: the input is NULL");
    uint32_t L = in->n_layers, P = in->n_stages;
    uint32_t max_l = ws ? ws->max_layers : TSL_PARTITION_MAX_LAYERS;
    uint32_t max_p = ws ? ws->max_stages : TSL_PARTITION_MAX_STAGES;
    if (L == 0 || L > max_l)
        return tsl_err_set(err, "n_layers: %u is out of range; give 1..%u%s", L, max_l,
                           ws ? " (the workspace's size)" : "");
    if (P == 0 || P > max_p || P > L)
        return tsl_err_set(err,
                           "n_stages: %u is out of range; give 1..%u and no more than the "
                           "%u layers (every stage needs one)",
                           P, max_p, L);
    if (in->n_micro == 0)
        return tsl_err_set(err, "n_micro: 0 micro-batches; give at least 1");
    if (!in->time_s || !in->ms_bytes || !in->act_bytes)
        return tsl_err_set(err, "%s: missing; give one value per layer",
                           !in->time_s     ? "time_s"
                           : !in->ms_bytes ? "ms_bytes"
                                           : "act_bytes");
    if (check_time(in->time_s, L, "time_s", err) ||
        (in->sync_s && check_time(in->sync_s, L, "sync_s", err)) ||
        (in->p2p_s && check_time(in->p2p_s, L, "p2p_s", err)))
        return -1;
    if (in->budget_bytes == 0 && !in->stage_budget_bytes)
        return tsl_err_set(err, "budget_bytes: 0 is not a valid budget; give the bytes per "
                                "device, or TSL_PARTITION_NO_BUDGET for none");
    if (in->max_cut && (in->max_cut >= L || in->max_cut + 1 < P))
        return tsl_err_set(err,
                           "max_cut: %u leaves no partition of %u layers into %u stages; give "
                           "%u..%u (0: any cut)",
                           in->max_cut, L, P, P - 1, L - 1);
    c->in = in;
    c->L = L;
    c->P = P;
    c->cut = in->max_cut ? in->max_cut : L - 1;
    c->m = in->n_micro;
    c->ws = ws;
    uint64_t wmax = 0;
    for (uint32_t i = 0; i < P; i++) {
        double v = in->speed ? in->speed[i] : 1.0;
        if (!isfinite(v) || !(v > 0))
            return tsl_err_set(err,
                               "speed[%u]: %g is not a valid speed; give a finite value > 0 "
                               "(1 = nominal, 0.5 = half as fast)",
                               i, v);
        c->speed[i] = v;
        c->w[i] = tsl_pipeline_inflight(i, P, c->m);
        wmax = c->w[i] > wmax ? c->w[i] : wmax;
        c->budget[i] = in->stage_budget_bytes ? in->stage_budget_bytes[i] : in->budget_bytes;
        if (c->budget[i] == 0)
            return tsl_err_set(err, "stage_budget_bytes[%u]: 0 is not a valid budget", i);
    }
    /* the largest stage memory must fit in 64 bits */
    uint64_t so = 0, su = 0;
    for (uint32_t l = 0; l < L; l++) {
        if (in->ms_bytes[l] > UINT64_MAX - so || in->act_bytes[l] > UINT64_MAX - su)
            return tsl_err_set(err, "ms_bytes/act_bytes: the sums overflow 64 bits at layer %u", l);
        so += in->ms_bytes[l];
        su += in->act_bytes[l];
    }
    if (wmax && su > (UINT64_MAX - so) / wmax)
        return tsl_err_set(err,
                           "act_bytes: %u in-flight micro-batches of %llu bytes overflow "
                           "64 bits",
                           (unsigned)wmax, (unsigned long long)su);
    return 0;
}

static void ctx_prefix(const ctx_t *c)
{
    const tsl_partition_in_t *in = c->in;
    tsl_partition_ws_t *ws = c->ws;
    ws->T[0] = ws->Y[0] = 0;
    ws->O[0] = ws->U[0] = 0;
    for (uint32_t l = 0; l < c->L; l++) {
        ws->T[l + 1] = ws->T[l] + in->time_s[l];
        ws->Y[l + 1] = ws->Y[l] + (in->sync_s ? in->sync_s[l] : 0.0);
        ws->O[l + 1] = ws->O[l] + in->ms_bytes[l];
        ws->U[l + 1] = ws->U[l] + in->act_bytes[l];
    }
}

static int check_first(const ctx_t *c, const uint32_t *first, tsl_err_t *err)
{
    if (!first)
        return tsl_err_set(err, "first: missing; give the P + 1 stage starts");
    if (first[0] != 0)
        return tsl_err_set(err, "first[0]: %u; the first stage must start at layer 0", first[0]);
    if (first[c->P] != c->L)
        return tsl_err_set(err, "first[%u]: %u; the last stage must end at layer %u", c->P,
                           first[c->P], c->L);
    for (uint32_t i = 0; i < c->P; i++)
        if (first[i + 1] <= first[i])
            return tsl_err_set(err,
                               "first[%u]: %u does not follow first[%u] = %u; every stage "
                               "needs at least one layer",
                               i + 1, first[i + 1], i, first[i]);
    if (!tsl_partition_cuts_ok(first, c->P, c->cut))
        return tsl_err_set(err,
                           "first[%u]: %u; the last stage must start at or before layer %u "
                           "(max_cut: the MTP layers stay with the head)",
                           c->P - 1, first[c->P - 1], c->cut);
    return 0;
}

/* ------------------------------------------------------------- stage figures */

/* The one expression for a_i (partition.h): every function goes through it, so
 * figures are bit-identical. Tx, Ty are prefix sums of time_s. */
static inline double stage_time(const ctx_t *c, uint32_t i, double Tx, double Ty, uint32_t y)
{
    double e = (y < c->L && c->in->p2p_s) ? c->in->p2p_s[y - 1] : 0.0;
    return (Ty - Tx) / c->speed[i] + e;
}

static inline uint64_t stage_mem(const ctx_t *c, uint32_t i, uint64_t Ox, uint64_t Oy, uint64_t Ux,
                                 uint64_t Uy)
{
    return (Oy - Ox) + c->w[i] * (Uy - Ux);
}

/* Figures of a (valid) partition; prefix sums are accumulated in the same order
 * as ctx_prefix, so this needs no workspace and agrees with it bit for bit. */
static void eval_partition(const ctx_t *c, const uint32_t *first, tsl_partition_stats_t *out)
{
    const tsl_partition_in_t *in = c->in;
    memset(out, 0, sizeof(*out));
    out->n_stages = c->P;
    double T = 0, Y = 0;
    uint64_t O = 0, U = 0;
    double mem_d[TSL_PARTITION_MAX_STAGES];
    out->fits = true;
    for (uint32_t i = 0; i < c->P; i++) {
        double Tx = T, Yx = Y;
        uint64_t Ox = O, Ux = U;
        for (uint32_t l = first[i]; l < first[i + 1]; l++) {
            T = T + in->time_s[l];
            Y = Y + (in->sync_s ? in->sync_s[l] : 0.0);
            O = O + in->ms_bytes[l];
            U = U + in->act_bytes[l];
        }
        double a = stage_time(c, i, Tx, T, first[i + 1]);
        out->stage_time_s[i] = a;
        out->stage_sync_s[i] = a + (Y - Yx);
        out->stage_mem_bytes[i] = stage_mem(c, i, Ox, O, Ux, U);
        mem_d[i] = (double)out->stage_mem_bytes[i];
        if (i == 0 || a > out->max_time_s) {
            out->max_time_s = a;
            out->slowest_stage = i;
        }
        if (out->stage_mem_bytes[i] > out->max_mem_bytes)
            out->max_mem_bytes = out->stage_mem_bytes[i];
        out->sum_sync_s += out->stage_sync_s[i];
        if (out->stage_mem_bytes[i] > c->budget[i])
            out->fits = false;
    }
    out->alpha_t = tsl_pipeline_balance(c->P, out->stage_time_s);
    out->alpha_m = tsl_pipeline_balance(c->P, mem_d);
    out->pipeline_s = tsl_pipeline_time_s(c->P, out->stage_time_s, out->stage_sync_s, c->m);
}

int tsl_partition_stats(const tsl_partition_in_t *in, const uint32_t *first,
                        tsl_partition_stats_t *out, tsl_err_t *err)
{
    ctx_t c;
    if (ctx_init(&c, in, NULL, err) || check_first(&c, first, err))
        return -1;
    if (!out)
        return tsl_err_set(err, "stats: out is NULL");
    eval_partition(&c, first, out);
    return 0;
}

bool tsl_partition_condition7(const tsl_partition_stats_t *p, const tsl_partition_stats_t *pm,
                              const tsl_partition_stats_t *pt)
{
    if (!p || !pm || !pt || p->n_stages != pm->n_stages || p->n_stages != pt->n_stages)
        return false;
    return pm->alpha_t <= p->alpha_t + ALPHA_SLACK && p->alpha_t <= pt->alpha_t + ALPHA_SLACK &&
           pt->alpha_m <= p->alpha_m + ALPHA_SLACK && p->alpha_m <= pm->alpha_m + ALPHA_SLACK;
}

/* ------------------------------------------------------------- min-max by bisection */

/*
 * Is there a partition with every a_i ≤ tcap, M_i ≤ mcap and (use_budget)
 * M_i ≤ E_i? Both figures only shrink as a stage's start moves right, so a stage
 * ending at y is best started at the latest reachable start x < y: one sweep per
 * stage, O(P·L). Fills ws->prev for backtracking.
 */
static bool feasible(ctx_t *c, double tcap, uint64_t mcap, bool use_budget)
{
    const uint32_t L = c->L, P = c->P;
    tsl_partition_ws_t *ws = c->ws;
    double next_time = INFINITY;
    uint64_t next_mem = UINT64_MAX;
    c->sweeps++;
    for (uint32_t j = 0; j < P; j++) {
        uint32_t *pv = ws->prev + (size_t)j * (L + 1);
        const uint32_t *pp = j ? ws->prev + (size_t)(j - 1) * (L + 1) : NULL;
        uint64_t cap = mcap;
        if (use_budget && c->budget[j] < cap)
            cap = c->budget[j];
        uint32_t last = NONE;
        for (uint32_t y = j + 1; y <= L - (P - 1 - j); y++) {
            uint32_t x = y - 1;
            if (j == 0 ? x == 0 : pp[x] != NONE)
                last = x;
            pv[y] = NONE;
            if (last == NONE || (j + 1 < P && y > c->cut)) /* no cut after max_cut */
                continue;
            const double a = stage_time(c, j, ws->T[last], ws->T[y], y);
            const uint64_t mem = stage_mem(c, j, ws->O[last], ws->O[y], ws->U[last], ws->U[y]);
            if (a <= tcap && mem <= cap) {
                pv[y] = last;
                continue;
            }
            next_time = a > tcap && a < next_time ? a : next_time;
            next_mem = mem > mcap && mem < next_mem ? mem : next_mem;
        }
    }
    c->next_time = next_time;
    c->next_mem = next_mem;
    return ws->prev[(size_t)(P - 1) * (L + 1) + L] != NONE;
}

static void backtrack(const ctx_t *c, uint32_t *first)
{
    uint32_t y = c->L;
    first[c->P] = c->L;
    for (uint32_t j = c->P; j-- > 0;) {
        y = c->ws->prev[(size_t)j * (c->L + 1) + y];
        first[j] = y;
    }
}

static double bits_double(uint64_t b)
{
    double d;
    memcpy(&d, &b, sizeof(d));
    return d;
}

static uint64_t double_bits(double d)
{
    uint64_t b;
    memcpy(&b, &d, sizeof(b));
    return b;
}

/*
 * The bisections below keep hi feasible and lo infeasible. feasible(C) is exact
 * (a stage ending at y reachable iff some partition of the layers before y into
 * that many stages meets the caps) and monotone in each cap, so the answer — the
 * least feasible cap — is one value whatever bracket holds it, and the bracket
 * may close from either side by any step that keeps the two true:
 *  - after a feasible sweep, the partition it found (backtrack) meets the caps
 *    with its own largest a_i (M_i), computed by the sweep's expression: that
 *    figure is feasible and no larger than the cap tried, so hi drops to it;
 *  - after an infeasible sweep at cap C, no cap below the sweep's next figure C'
 *    (c->next_time, c->next_mem) is feasible either: by induction over the
 *    sweep's order, each stage it weighed and took is taken under any larger cap
 *    (a_i, M_i do not depend on it), each it refused on this cap has its figure
 *    at least C' and is refused under any cap below C' (one refused on the other
 *    cap or a budget stays refused), so every `last`, every refusal and the
 *    outcome are the same; lo rises to the pattern just below C'.
 * The same answer, bit for bit, in a few sweeps where the bisection over every
 * double's (every uint64's) pattern took about 64.
 */

/* The largest a_i of the partition the last feasible sweep found. */
static double found_max_time(const ctx_t *c)
{
    uint32_t first[TSL_PARTITION_MAX_STAGES + 1];
    const double *T = c->ws->T;
    double most = 0.0;
    backtrack(c, first);
    for (uint32_t i = 0; i < c->P; i++) {
        double a = stage_time(c, i, T[first[i]], T[first[i + 1]], first[i + 1]);
        most = a > most ? a : most;
    }
    return most;
}

/* The largest M_i of the partition the last feasible sweep found. */
static uint64_t found_max_mem(const ctx_t *c)
{
    uint32_t first[TSL_PARTITION_MAX_STAGES + 1];
    const uint64_t *O = c->ws->O, *U = c->ws->U;
    uint64_t most = 0;
    backtrack(c, first);
    for (uint32_t i = 0; i < c->P; i++) {
        uint32_t x = first[i], y = first[i + 1];
        uint64_t mem = stage_mem(c, i, O[x], O[y], U[x], U[y]);
        most = mem > most ? mem : most;
    }
    return most;
}

/* The smallest cap C with feasible(C, mcap): bisection over the ordered bit
 * patterns of the non-negative doubles, so C is exact (a stage value). false
 * when no partition meets mcap / the budgets at all. */
static bool min_time_cap(ctx_t *c, uint64_t mcap, bool use_budget, double *out)
{
    if (!feasible(c, INFINITY, mcap, use_budget))
        return false;
    uint64_t hi = double_bits(found_max_time(c)); /* lo infeasible, hi feasible */
    if (feasible(c, 0.0, mcap, use_budget)) {
        *out = 0.0;
        return true;
    }
    uint64_t lo = 0;
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (feasible(c, bits_double(mid), mcap, use_budget))
            hi = double_bits(found_max_time(c)); /* ≤ mid */
        else                                     /* > mid, ≤ the answer, so below hi */
            lo = double_bits(c->next_time) - 1;
    }
    *out = bits_double(hi);
    return true;
}

static bool min_mem_cap(ctx_t *c, double tcap, bool use_budget, uint64_t *out)
{
    if (!feasible(c, tcap, UINT64_MAX, use_budget))
        return false;
    uint64_t hi = found_max_mem(c); /* lo infeasible, hi feasible */
    if (feasible(c, tcap, 0, use_budget)) {
        *out = 0;
        return true;
    }
    uint64_t lo = 0;
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (feasible(c, tcap, mid, use_budget))
            hi = found_max_mem(c); /* ≤ mid */
        else                       /* > mid, ≤ the answer, so below hi */
            lo = c->next_mem - 1;
    }
    *out = hi;
    return true;
}

int tsl_partition_time_balanced(const tsl_partition_in_t *in, tsl_partition_ws_t *ws,
                                bool within_budget, uint32_t *first, tsl_partition_stats_t *out,
                                tsl_err_t *err)
{
    ctx_t c;
    if (!ws)
        return tsl_err_set(err, "time_balanced: no workspace; create one with "
                                "tsl_partition_ws_new");
    if (!first)
        return tsl_err_set(err, "time_balanced: first is NULL");
    if (ctx_init(&c, in, ws, err))
        return TSL_PARTITION_ERR;
    ctx_prefix(&c);
    double tcap;
    uint64_t mcap;
    if (!min_time_cap(&c, UINT64_MAX, within_budget, &tcap))
        return TSL_PARTITION_NONE_FITS;
    min_mem_cap(&c, tcap, within_budget, &mcap); /* feasible at mcap = max */
    feasible(&c, tcap, mcap, within_budget);
    backtrack(&c, first);
    if (out)
        eval_partition(&c, first, out);
    return TSL_PARTITION_OK;
}

int tsl_partition_memory_balanced(const tsl_partition_in_t *in, tsl_partition_ws_t *ws,
                                  uint32_t *first, tsl_partition_stats_t *out, tsl_err_t *err)
{
    ctx_t c;
    if (!ws)
        return tsl_err_set(err, "memory_balanced: no workspace; create one with "
                                "tsl_partition_ws_new");
    if (!first)
        return tsl_err_set(err, "memory_balanced: first is NULL");
    if (ctx_init(&c, in, ws, err))
        return -1;
    ctx_prefix(&c);
    double tcap;
    uint64_t mcap;
    min_mem_cap(&c, INFINITY, false, &mcap); /* always feasible without budgets */
    min_time_cap(&c, mcap, false, &tcap);
    feasible(&c, tcap, mcap, false);
    backtrack(&c, first);
    if (out)
        eval_partition(&c, first, out);
    return 0;
}

/* ------------------------------------------------------------- Algorithm 2 */

/* Limits 1–3 for a candidate p' (moved between stages k and nb); on failure
 * writes the reason into why. */
static bool validate_move(const ctx_t *c, const tsl_partition_stats_t *s, uint32_t k, uint32_t nb,
                          double c_max_s, uint64_t pt_max_mem, char *why, size_t why_n)
{
    for (uint32_t i = 0; i < c->P; i++) {
        bool changed = i == k || i == nb;
        double a = s->stage_time_s[i];
        if (changed ? !(a < c_max_s) : !(a <= c_max_s)) {
            snprintf(why, why_n, "limit 1 (stage %u would take %.4g s, C_max %.4g s)", i, a,
                     c_max_s);
            return false;
        }
    }
    for (uint32_t i = 0; i < c->P; i++)
        if (s->stage_mem_bytes[i] > c->budget[i]) {
            snprintf(why, why_n, "limit 2 (stage %u would need %llu bytes, budget %llu)", i,
                     (unsigned long long)s->stage_mem_bytes[i], (unsigned long long)c->budget[i]);
            return false;
        }
    if (s->max_mem_bytes > pt_max_mem) {
        snprintf(why, why_n, "limit 3 (%llu bytes, p_t's max %llu)",
                 (unsigned long long)s->max_mem_bytes, (unsigned long long)pt_max_mem);
        return false;
    }
    return true;
}

static int adjust(const ctx_t *c, const uint32_t *first, const tsl_partition_stats_t *cur,
                  double c_max_s, uint64_t pt_max_mem, uint32_t *next, tsl_partition_step_t *step,
                  tsl_partition_stats_t *next_stats)
{
    const uint32_t P = c->P, k = cur->slowest_stage;
    uint32_t p[TSL_PARTITION_MAX_STAGES + 1];
    memcpy(p, first, (P + 1) * sizeof(uint32_t));
    memset(step, 0, sizeof(*step));
    step->from_stage = k;
    if (P == 1) {
        snprintf(step->why, sizeof(step->why), "a single stage has no neighbour");
        memcpy(next, p, (P + 1) * sizeof(uint32_t));
        return 0;
    }
    if (p[k + 1] - p[k] < 2) {
        snprintf(step->why, sizeof(step->why), "the slowest stage %u has a single layer", k);
        memcpy(next, p, (P + 1) * sizeof(uint32_t));
        return 0;
    }
    uint32_t cand[2][TSL_PARTITION_MAX_STAGES + 1];
    tsl_partition_stats_t cs[2];
    bool ok[2] = {false, false};
    char why[2][96] = {"", ""};
    for (int d = 0; d < 2; d++) {
        if (d == 0 ? k == 0 : k == P - 1)
            continue;
        memcpy(cand[d], p, (P + 1) * sizeof(uint32_t));
        if (d == 0)
            cand[d][k]++; /* its first layer joins stage k − 1 */
        else
            cand[d][k + 1]--; /* its last layer joins stage k + 1 */
        if (!tsl_partition_cuts_ok(cand[d], P, c->cut)) {
            snprintf(why[d], sizeof(why[d]), "max_cut (layer %u stays on the last stage)",
                     cand[d][k + 1]);
            continue;
        }
        eval_partition(c, cand[d], &cs[d]);
        ok[d] = validate_move(c, &cs[d], k, d == 0 ? k - 1 : k + 1, c_max_s, pt_max_mem, why[d],
                              sizeof(why[d]));
    }
    int pick = -1;
    if (ok[0] && ok[1]) {
        pick = 0;
        if (cs[1].max_time_s < cs[0].max_time_s ||
            (cs[1].max_time_s == cs[0].max_time_s && cs[1].max_mem_bytes < cs[0].max_mem_bytes))
            pick = 1;
    } else if (ok[0] || ok[1]) {
        pick = ok[0] ? 0 : 1;
    }
    if (pick < 0) {
        int n = 0;
        if (k > 0)
            n = snprintf(step->why, sizeof(step->why), "stage %u -> %u: %s", k, k - 1, why[0]);
        if (k < P - 1 && n >= 0 && (size_t)n < sizeof(step->why))
            snprintf(step->why + n, sizeof(step->why) - (size_t)n, "%sstage %u -> %u: %s",
                     k > 0 ? "; " : "", k, k + 1, why[1]);
        memcpy(next, p, (P + 1) * sizeof(uint32_t));
        return 0;
    }
    step->moved = true;
    step->to_stage = pick == 0 ? k - 1 : k + 1;
    step->layer = pick == 0 ? p[k] : p[k + 1] - 1;
    step->max_time_s = cs[pick].max_time_s;
    memcpy(next, cand[pick], (P + 1) * sizeof(uint32_t));
    if (next_stats)
        *next_stats = cs[pick];
    return 0;
}

int tsl_partition_adjust(const tsl_partition_in_t *in, const uint32_t *first, double c_max_s,
                         uint64_t pt_max_mem_bytes, uint32_t *next, tsl_partition_step_t *step,
                         tsl_err_t *err)
{
    ctx_t c;
    if (ctx_init(&c, in, NULL, err) || check_first(&c, first, err))
        return -1;
    if (!next || !step)
        return tsl_err_set(err, "adjust: %s is NULL", next ? "step" : "next");
    if (isnan(c_max_s) || c_max_s < 0)
        return tsl_err_set(err,
                           "c_max_s: %g is not a valid time; give the previous max stage "
                           "time, >= 0",
                           c_max_s);
    tsl_partition_stats_t cur;
    eval_partition(&c, first, &cur);
    return adjust(&c, first, &cur, c_max_s, pt_max_mem_bytes, next, step, NULL);
}

/* Keeps cand in out when it fits, passes Eq. 7 (when satisfiable) and is faster. */
static void consider(tsl_partition_biobj_t *out, const uint32_t *first,
                     const tsl_partition_stats_t *s, tsl_partition_source_t src, uint32_t step,
                     uint32_t P)
{
    if (!s->fits)
        return;
    if (out->endpoints_ordered && !tsl_partition_condition7(s, &out->pm, &out->pt))
        return;
    if (out->found && !(s->pipeline_s < out->stats.pipeline_s))
        return;
    out->found = true;
    memcpy(out->first, first, (P + 1) * sizeof(uint32_t));
    out->stats = *s;
    out->source = src;
    out->chosen_step = step;
}

int tsl_partition_bi_objective(const tsl_partition_in_t *in, tsl_partition_ws_t *ws,
                               uint32_t max_steps, bool with_fit, tsl_partition_biobj_t *out,
                               tsl_err_t *err)
{
    ctx_t c;
    if (!ws || !out)
        return tsl_err_set(err, "bi_objective: %s is NULL", ws ? "out" : "the workspace");
    if (ctx_init(&c, in, ws, err))
        return -1;
    memset(out, 0, sizeof(*out));
    if (tsl_partition_memory_balanced(in, ws, out->pm_first, &out->pm, err) ||
        tsl_partition_time_balanced(in, ws, false, out->pt_first, &out->pt, err) !=
            TSL_PARTITION_OK)
        return -1;
    const uint32_t P = c.P;
    if (max_steps == 0)
        max_steps = c.L * P;
    out->endpoints_ordered = out->pm.alpha_t <= out->pt.alpha_t + ALPHA_SLACK &&
                             out->pt.alpha_m <= out->pm.alpha_m + ALPHA_SLACK;

    consider(out, out->pm_first, &out->pm, TSL_PARTITION_FROM_PM, 0, P);
    uint32_t p[TSL_PARTITION_MAX_STAGES + 1];
    tsl_partition_stats_t ps = out->pm;
    memcpy(p, out->pm_first, (P + 1) * sizeof(uint32_t));
    for (;;) {
        if (out->steps >= max_steps) {
            out->step_cap_hit = true;
            snprintf(out->stop_why, sizeof(out->stop_why), "stopped after %u steps (max_steps)",
                     out->steps);
            break;
        }
        tsl_partition_step_t st;
        tsl_partition_stats_t ns;
        adjust(&c, p, &ps, ps.max_time_s, out->pt.max_mem_bytes, p, &st, &ns);
        if (!st.moved) {
            snprintf(out->stop_why, sizeof(out->stop_why), "%s", st.why);
            break;
        }
        out->steps++;
        ps = ns;
        consider(out, p, &ps, TSL_PARTITION_FROM_QUEUE, out->steps, P);
    }
    consider(out, out->pt_first, &out->pt, TSL_PARTITION_FROM_PT, out->steps + 1, P);
    int rc = tsl_partition_time_balanced(in, ws, true, out->fit_first, &out->fit, err);
    if (rc == TSL_PARTITION_ERR)
        return -1;
    out->fit_found = rc == TSL_PARTITION_OK;
    if (with_fit && out->fit_found)
        consider(out, out->fit_first, &out->fit, TSL_PARTITION_FROM_FIT, out->steps + 2, P);
    out->cond7 = out->found && tsl_partition_condition7(&out->stats, &out->pm, &out->pt);
    return 0;
}

/* ------------------------------------------------------------- AMP's DP */

/*
 * min Σ_i c_i over partitions whose stages all take a_i < cap (strict) or
 * a_i ≤ cap, and fit E_i when use_budget. Row j, end y:
 *   dp[j][y] = e_{y−1} + T_y/v_j + Y_y + min_{x ∈ [lo(y), y)} key_j(x),
 *   key_j(x) = dp[j−1][x] − T_x/v_j − Y_x   (dp[−1][0] = 0),
 * lo(y) the first start meeting the cap and the budget (both hold for every
 * later start: binary search). The minimum over [lo, y) is the first entry at or
 * after lo of a stack of suffix minima (indices increasing, keys strictly
 * increasing; a new key pops every key ≥ it, so ties keep the latest start).
 * Fills ws->prev; false when no partition qualifies.
 */
static bool min_sum(ctx_t *c, double cap, bool strict, bool use_budget)
{
    const uint32_t L = c->L, P = c->P;
    tsl_partition_ws_t *ws = c->ws;
    const double *T = ws->T, *Y = ws->Y;
    const double *p2p = c->in->p2p_s;
    c->dps++;
    for (uint32_t j = 0; j < P; j++) {
        double *row = ws->dp + (size_t)j * (L + 1);
        const double *prow = j ? ws->dp + (size_t)(j - 1) * (L + 1) : NULL;
        uint32_t *pv = ws->prev + (size_t)j * (L + 1);
        const double v = c->speed[j];
        uint32_t n = 0;
        for (uint32_t y = j + 1; y <= L - (P - 1 - j); y++) {
            uint32_t x = y - 1;
            bool start_ok = j == 0 ? x == 0 : isfinite(prow[x]);
            if (start_ok) {
                double key = (j ? prow[x] : 0.0) - T[x] / v - Y[x];
                while (n > 0 && ws->stk_key[n - 1] >= key)
                    n--;
                ws->stk[n] = x;
                ws->stk_key[n] = key;
                n++;
            }
            row[y] = INFINITY;
            pv[y] = NONE;
            if (n == 0 || (j + 1 < P && y > c->cut)) /* no cut after max_cut */
                continue;
            /* lo: first x in [xmin, y) whose stage [x, y) meets the cap and budget */
            /* starts before stk[0] have larger keys: searching from there is enough */
            uint32_t a = ws->stk[0], z = y;
            while (a < z) {
                uint32_t mid = a + (z - a) / 2;
                double t = stage_time(c, j, T[mid], T[y], y);
                bool ok = strict ? t < cap : t <= cap;
                if (ok && use_budget)
                    ok =
                        stage_mem(c, j, ws->O[mid], ws->O[y], ws->U[mid], ws->U[y]) <= c->budget[j];
                if (ok)
                    z = mid;
                else
                    a = mid + 1;
            }
            if (a >= y)
                continue;
            /* first stack entry with index ≥ a */
            uint32_t s = 0, e = n;
            while (s < e) {
                uint32_t mid = s + (e - s) / 2;
                if (ws->stk[mid] >= a)
                    e = mid;
                else
                    s = mid + 1;
            }
            if (s == n)
                continue;
            double ey = (y < L && p2p) ? p2p[y - 1] : 0.0;
            row[y] = ws->stk_key[s] + T[y] / v + Y[y] + ey;
            pv[y] = ws->stk[s];
        }
    }
    return ws->prev[(size_t)(P - 1) * (L + 1) + L] != NONE;
}

int tsl_partition_amp(const tsl_partition_in_t *in, tsl_partition_ws_t *ws, bool within_budget,
                      tsl_partition_amp_t *out, tsl_err_t *err)
{
    ctx_t c;
    if (!ws || !out)
        return tsl_err_set(err, "amp: %s is NULL", ws ? "out" : "the workspace");
    if (ctx_init(&c, in, ws, err))
        return TSL_PARTITION_ERR;
    memset(out, 0, sizeof(*out));
    ctx_prefix(&c);
    const uint32_t P = c.P;
    uint32_t p[TSL_PARTITION_MAX_STAGES + 1];
    tsl_partition_stats_t s;

    /* 1. G∞: the least Σ c with no cap */
    if (!min_sum(&c, INFINITY, false, within_budget))
        return TSL_PARTITION_NONE_FITS;
    backtrack(&c, out->first);
    eval_partition(&c, out->first, &out->stats);
    const double g_inf = out->stats.sum_sync_s;
    out->min_sum_s = g_inf;
    double bound = out->stats.max_time_s;

    /* C₀ and π₀, the min-Σ partition among the time-balanced ones */
    double c0 = 0;
    if (!min_time_cap(&c, UINT64_MAX, within_budget, &c0))
        return TSL_PARTITION_NONE_FITS; /* cannot happen: G∞ found one */
    out->min_max_time_s = c0;
    out->bisect_steps = c.sweeps;
    if (c.m > 1) {
        const double lambda = (double)(c.m - 1);
        if (min_sum(&c, c0, false, within_budget)) {
            out->caps_tried++;
            backtrack(&c, p);
            eval_partition(&c, p, &s);
            if (s.pipeline_s < out->stats.pipeline_s) {
                memcpy(out->first, p, (P + 1) * sizeof(uint32_t));
                out->stats = s;
            }
        }
        /* 2. descent over the cap */
        for (;;) {
            double prune = (out->stats.pipeline_s - g_inf) / lambda;
            if (prune < bound)
                bound = prune;
            if (!(bound > c0) || !min_sum(&c, bound, true, within_budget))
                break;
            out->caps_tried++;
            backtrack(&c, p);
            eval_partition(&c, p, &s);
            if (s.pipeline_s < out->stats.pipeline_s) {
                memcpy(out->first, p, (P + 1) * sizeof(uint32_t));
                out->stats = s;
            }
            if (lambda * c0 + s.sum_sync_s >= out->stats.pipeline_s)
                break;
            if (!(s.max_time_s < bound))
                break; /* rounding guard: the cap must fall every round */
            bound = s.max_time_s;
        }
    }
    out->dp_runs = c.dps;
    return TSL_PARTITION_OK;
}

/* ---- the search's starting partitions ---- */

uint32_t tsl_partition_max_cut(const tsl_model_t *m)
{
    uint32_t L = m->n_layers;
    for (uint32_t i = 0; i + 1 < L; i++)
        if (m->layers[i].mtp_depth)
            return i; /* the depths are contiguous, before the head (mtp.h) */
    return L ? L - 1 : 0;
}

bool tsl_partition_cuts_ok(const uint32_t *first, uint32_t P, uint32_t max_cut)
{
    return P < 2 || max_cut == 0 || first[P - 1] <= max_cut;
}

int tsl_partition_mtp_check(const tsl_model_t *m, uint32_t P, uint32_t last_first, tsl_err_t *err)
{
    uint32_t cut = tsl_partition_max_cut(m), cuts[2] = {0, last_first}; /* first[P − 1] */
    if (P < 2 || tsl_partition_cuts_ok(cuts, 2, cut))
        return 0;
    return tsl_err_set(err,
                       "stage %u starts at layer %u, after the first MTP layer %u; Megatron-LM "
                       "builds every MTP depth on the head's stage, so the last stage starts at "
                       "layer %u at the latest",
                       P - 1, last_first, cut, cut);
}

/* Units of m for the starting partitions: a layer each up to max_cut, then the
 * MTP layers and the head as one (the last unit). */
void tsl_partition_by_flops(const tsl_model_t *m, uint32_t P, uint32_t *first)
{
    uint32_t L = m->n_layers, U = tsl_partition_max_cut(m) + 1;
    double *w = malloc((size_t)U * sizeof(double));
    /* a tiny per-layer floor keeps zero-FLOP layers (embeddings) from piling up */
    double floor_flops = tsl_model_fwd_flops(m) / L * 1e-3;
    for (uint32_t l = 0; w && l < L; l++) {
        double f = m->layers[l].fwd_flops + floor_flops;
        if (l < U)
            w[l] = f;
        else
            w[U - 1] += f;
    }
    if (w == NULL || tsl_autopipe_minmax(w, U, P, first, NULL, NULL) != 0)
        for (uint32_t s = 0; s <= P; s++) /* equal unit counts */
            first[s] = (uint32_t)((uint64_t)U * s / P);
    first[P] = L;
    free(w);
}

void tsl_partition_uniform(const tsl_model_t *m, uint32_t P, uint32_t *first)
{
    uint32_t U = tsl_partition_max_cut(m) + 1, base = U / P, extra = U % P;
    first[0] = 0;
    for (uint32_t s = 0; s < P; s++)
        first[s + 1] = first[s] + base + (s < extra ? 1 : 0);
    first[P] = m->n_layers;
}

uint32_t tsl_partition_count(uint32_t n_layers, uint32_t max_cut, uint32_t P)
{
    uint32_t U = (max_cut ? max_cut : n_layers - 1) + 1; /* the cuts lie in 1..U − 1 */
    if (P == 0 || P > U)
        return 0;
    uint64_t c = 1;
    for (uint32_t i = 1; i < P; i++) {
        c = c * (U - i) / i; /* exact: C(U − 1, i) from C(U − 1, i − 1) */
        if (c > UINT32_MAX / U)
            return UINT32_MAX;
    }
    return (uint32_t)c;
}

void tsl_partition_first(uint32_t n_layers, uint32_t P, uint32_t *first)
{
    for (uint32_t s = 0; s < P; s++)
        first[s] = s;
    first[P] = n_layers;
}

bool tsl_partition_next(uint32_t n_layers, uint32_t max_cut, uint32_t P, uint32_t *first)
{
    /* the rightmost cut that can move right does; the cuts after it follow it */
    uint32_t U = (max_cut ? max_cut : n_layers - 1) + 1, s = P - 1;
    while (s >= 1 && first[s] == U - (P - s))
        s--;
    if (s == 0)
        return false;
    first[s]++;
    for (uint32_t t = s + 1; t < P; t++)
        first[t] = first[t - 1] + 1;
    return true;
}
