/*
 * search_engine.c — Algorithm 1 over one space: the batch sweep over PP degrees
 * and micro-batch counts, the top-k keeping, and Tessel's own space. Costing one
 * configuration is search_eval.c.
 */
#include "search_engine.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "partition.h"

uint32_t tsl_search_max_batch(const tsl_request_t *r, uint32_t n_devices)
{
    if (r->max_batch)
        return r->max_batch;
    uint32_t b = TSL_SEARCH_DEFAULT_MAX_BATCH;
    while (b < 4ull * n_devices && b < (1u << 20))
        b *= 2;
    return b;
}

uint32_t tsl_search_odd_part(uint32_t n)
{
    while (n > 0 && n % 2 == 0)
        n /= 2;
    return n;
}

/* ---- top-k ---- */

void tsl_top_offer(tsl_plan_t *top, uint32_t cap, uint32_t *n, const tsl_plan_t *p)
{
    if (top == NULL || cap == 0)
        return;
    uint32_t pos = *n;
    while (pos > 0 && tsl_plan_better(p, &top[pos - 1]))
        pos--;
    if (pos >= cap)
        return;
    uint32_t last = *n < cap ? *n : cap - 1;
    memmove(&top[pos + 1], &top[pos], (last - pos) * sizeof(*top));
    top[pos] = *p;
    if (*n < cap)
        (*n)++;
}

/* Insertion sort, best first: the top-k and the best of each PP degree. */
void tsl_top_sort(tsl_plan_t *top, uint32_t n)
{
    for (uint32_t i = 1; i < n; i++)
        for (uint32_t j = i; j > 0 && tsl_plan_better(&top[j], &top[j - 1]); j--) {
            tsl_plan_t t = top[j];
            top[j] = top[j - 1];
            top[j - 1] = t;
        }
}

/* ---- micro-batch counts and batch sweep ---- */

/* The most micro-batch counts tried for one (B, P): six spread geometrically plus
 * the data-parallel degrees' own (rank_counts), a handful past the first six. */
#define MICRO_COUNTS_MAX 64u

static bool has_count(const uint32_t *out, uint32_t n, uint32_t m)
{
    for (uint32_t i = 0; i < n; i++)
        if (out[i] == m)
            return true;
    return false;
}

/* The counts m in [lo, hi] at which each data rank holds one sample: m = B / d
 * for a data-parallel degree d dividing the stage's G devices (G = TP × CP × d
 * for every layer strategy, cost.c: B / m divides by the data ranks). A geometric
 * spread over B's divisors misses them where B or G has an odd factor: GBS 1536
 * at DP 4 is 384 micro-batches (Megatron-Bridge's Llama 3.1 405B GB200 presets),
 * between the spread's 256 and 512. Appended to out[0..n) where not there already;
 * returns the new count. */
static uint32_t rank_counts(uint32_t B, uint32_t G, uint32_t lo, uint32_t hi, uint32_t *out,
                            uint32_t n)
{
    for (uint32_t m = lo; m <= hi && n < MICRO_COUNTS_MAX; m++)
        if (B % m == 0 && G % (B / m) == 0 && !has_count(out, n, m))
            out[n++] = m;
    return n;
}

/* Micro-batch counts tried for B and P: divisors of B in [P, 32P] (up to six,
 * spread geometrically) and the counts giving one sample per data rank there,
 * m = B when B < P; with P = 1, m = 1 plus gradient accumulation 2 … 32 (powers
 * of two and the one-sample-per-rank counts) when the space allows it. */
static uint32_t micro_counts(const tsl_engine_t *e, uint32_t B, uint32_t P, uint32_t *out)
{
    uint32_t n = 0, cap = e->req->max_micro ? e->req->max_micro : B;
    uint32_t G = e->cluster->n_devices / P;
    if (P == 1) {
        out[n++] = 1;
        if (!e->space->accumulate)
            return n;
        for (uint32_t m = 2; m <= 32; m *= 2)
            if (B % m == 0 && m <= cap)
                out[n++] = m;
        return rank_counts(B, G, 2, cap < 32 ? cap : 32, out, n);
    }
    if (B < P) {
        out[n++] = B;
        return n;
    }
    uint32_t last = 0;
    for (uint32_t m = P; m <= 32 * P && m <= cap && n < 6; m++) {
        if (B % m != 0 || (last && m < 2 * last))
            continue;
        out[n++] = m;
        last = m;
    }
    return rank_counts(B, G, P, cap < 32 * P ? cap : 32 * P, out, n);
}

bool tsl_search_cancelled(const tsl_search_hooks_t *hooks)
{
    return hooks && hooks->cancel && atomic_load(hooks->cancel) != 0;
}

static bool cancelled(const tsl_engine_t *e)
{
    return tsl_search_cancelled(e->hooks);
}

static void progress(const tsl_engine_t *e, double f, const char *phase)
{
    if (e->hooks && e->hooks->progress)
        e->hooks->progress(e->hooks->progress_ud, f > 1 ? 1 : f, phase);
}

typedef struct run_state {
    tsl_plan_t *best, *top, *scratch, *scratch2;
    uint32_t top_cap, *n_top;
    uint32_t *order; /* [top_cap]: the top-k best first, as slots of top (keep_top) */
    uint32_t n_pp;
    uint32_t pps[TSL_SEARCH_MAX_GROUPS];
    uint32_t *first;   /* [n_pp × (TSL_PLAN_MAX_STAGES + 1)] */
    double batch_best; /* eval_batch's batch: the best samples/s of the plans it kept */
} run_state_t;

/* tsl_top_offer's rule over rs->top's slots in rs->order: an offer copies one
 * plan, not every plan it moves down (30 KB each, up to k − 1 per offer). */
static void keep_top(run_state_t *rs, const tsl_plan_t *p)
{
    if (rs->top == NULL || rs->n_top == NULL || rs->top_cap == 0)
        return;
    uint32_t n = *rs->n_top, pos = n, cap = rs->top_cap;
    while (pos > 0 && tsl_plan_better(p, &rs->top[rs->order[pos - 1]]))
        pos--;
    if (pos >= cap)
        return;
    uint32_t last = n < cap ? n : cap - 1, slot = n < cap ? n : rs->order[cap - 1];
    memmove(&rs->order[pos + 1], &rs->order[pos], (last - pos) * sizeof(*rs->order));
    rs->order[pos] = slot;
    rs->top[slot] = *p;
    if (n < cap)
        (*rs->n_top)++;
}

/* The k-th best kept (k < *rs->n_top). */
static const tsl_plan_t *top_at(const run_state_t *rs, uint32_t k)
{
    return &rs->top[rs->order[k]];
}

/* rs->top put in its order, best first, as tsl_top_offer keeps it: each cycle of
 * the permutation moved round through one spare plan. */
static void top_in_order(run_state_t *rs, tsl_plan_t *spare)
{
    uint32_t n = rs->top && rs->order && rs->n_top ? *rs->n_top : 0, *order = rs->order;
    for (uint32_t i = 0; i < n; i++) {
        if (order[i] == i)
            continue;
        *spare = rs->top[i];
        uint32_t j = i;
        while (order[j] != i) { /* slot j takes the plan of slot order[j] */
            uint32_t k = order[j];
            rs->top[j] = rs->top[k];
            order[j] = j;
            j = k;
        }
        rs->top[j] = *spare;
        order[j] = j;
    }
}

/* When the starting partition fits nothing and a handful of partitions exist,
 * the best of every one into rs->scratch: another may fit. */
static void eval_every_partition(tsl_engine_t *e, run_state_t *rs, uint32_t B, uint32_t P,
                                 uint32_t m)
{
    const uint32_t L = e->model->n_layers;
    if (P < 2 || tsl_partition_count(L, e->max_cut, P) > TSL_SEARCH_ALL_PARTITIONS)
        return;
    uint32_t first[TSL_PLAN_MAX_STAGES + 1];
    tsl_partition_first(L, P, first);
    do {
        tsl_plan_init(rs->scratch2);
        tsl_engine_eval(e, B, P, m, first, rs->scratch2);
        if (rs->scratch2->valid &&
            (!rs->scratch->valid || tsl_plan_better(rs->scratch2, rs->scratch)))
            *rs->scratch = *rs->scratch2;
    } while (tsl_partition_next(L, e->max_cut, P, first));
}

/* The throughput a configuration of PP index i at a batch where fit says
 * something fitted must reach to change anything the sweep keeps (its best, its
 * top-k, that PP degree's best, whether the batch fitted), less a margin for
 * rounding: every plan it could yield then ranks below all three (samples/s
 * first, tsl_plan_better). 0 — cost it whole — until the top-k is full and the
 * degree has a plan, in a stack's space (search_eval.c prunes none there), and
 * where a configuration that fits nothing on its first partition has every
 * partition costed (eval_every_partition: another partition's stages are not
 * bound by its). */
static double need_samples_per_s(const tsl_engine_t *e, const run_state_t *rs, uint32_t i,
                                 uint32_t P, int fit)
{
    const tsl_plan_t *pp_best = e->per_pp ? &e->per_pp[i] : NULL;
    if (!fit || pp_best == NULL || !pp_best->valid || rs->top == NULL || rs->n_top == NULL ||
        rs->top_cap == 0 || *rs->n_top < rs->top_cap || e->space->target ||
        e->space->uniform_strategy)
        return 0;
    if (P >= 2 &&
        tsl_partition_count(e->model->n_layers, e->max_cut, P) <= TSL_SEARCH_ALL_PARTITIONS)
        return 0;
    double least = fmin(pp_best->samples_per_s, top_at(rs, rs->top_cap - 1)->samples_per_s);
    return least * (1 - 1e-9);
}

/* All (P, m) for one batch size; returns -1 when cancelled, else whether anything
 * fit; rs->batch_best the best of the plans it kept (a configuration held below the
 * need is not one: a lower bound on the batch's best once the top-k is full). */
static int eval_batch(tsl_engine_t *e, run_state_t *rs, uint32_t B)
{
    int fit = 0;
    rs->batch_best = 0;
    for (uint32_t i = 0; i < rs->n_pp; i++) {
        uint32_t P = rs->pps[i], ms[MICRO_COUNTS_MAX];
        uint32_t nm = micro_counts(e, B, P, ms);
        for (uint32_t k = 0; k < nm; k++) {
            if (cancelled(e))
                return -1;
            tsl_plan_init(rs->scratch);
            e->bar_samples_per_s = rs->best->valid ? rs->best->samples_per_s : 0;
            e->need_samples_per_s = need_samples_per_s(e, rs, i, P, fit);
            tsl_engine_eval(e, B, P, ms[k], &rs->first[i * (TSL_PLAN_MAX_STAGES + 1)], rs->scratch);
            bool held = e->need_samples_per_s > 0; /* invalid: below the need, or no fit */
            e->need_samples_per_s = 0;
            if (!rs->scratch->valid && !held)
                eval_every_partition(e, rs, B, P, ms[k]);
            if (!rs->scratch->valid)
                continue;
            fit = 1;
            rs->batch_best = fmax(rs->batch_best, rs->scratch->samples_per_s);
            if (!rs->best->valid || tsl_plan_better(rs->scratch, rs->best))
                *rs->best = *rs->scratch;
            tsl_plan_t *pp_best = e->per_pp ? &e->per_pp[i] : NULL;
            if (pp_best && (!pp_best->valid || tsl_plan_better(rs->scratch, pp_best)))
                *pp_best = *rs->scratch;
            keep_top(rs, rs->scratch);
        }
    }
    e->stats.batches_tried++;
    return fit;
}

/* Doubling: stops when memory is exhausted, or after two doublings without any
 * gain. A slow rise continues it: a longer pipeline amortises its bubble over
 * more micro-batches, and a rule of "at least 1% per doubling" stopped Llama2-7B
 * at batch 16 (5.11 samples/s) below batch 128 (5.46).
 *
 * "Exhausted" needs a plan found first. Every plan of batch B has a twin at 2B
 * with twice the micro-batches of the same size (until m reaches 32P), so a
 * batch that fits nothing after one that fitted means larger ones fit nothing
 * either. Before any fit the opposite holds: a batch smaller than the device
 * count cannot spread over every data-parallel degree, so the sharded plans
 * that fit (ZeRO-3 over 1024 devices for a 70B model) only appear at larger
 * batches; there the doubling goes on up to the device count, from where every
 * degree can hold one sample per device and a larger batch only adds
 * activations. Returns the last batch tried, 0 when cancelled; *capped when the
 * cap cut the doubling short. */
static uint32_t sweep_doubling(tsl_engine_t *e, run_state_t *rs, uint32_t base, double lo,
                               double hi, bool *capped)
{
    uint32_t maxb = tsl_search_max_batch(e->req, e->cluster->n_devices), stale = 0, steps = 0,
             last = 0, n_steps = 0;
    for (uint64_t B = base; B <= maxb; B *= 2)
        n_steps++; /* the most this doubling can take: its progress stays below hi */
    double best_seen = 0;
    bool found = false; /* a plan at one of this doubling's batches */
    *capped = false;
    for (uint32_t B = base; B <= maxb; B *= 2, steps++) {
        progress(e, lo + (hi - lo) * steps / n_steps, "search");
        e->seen_samples_per_s = best_seen;
        int fit = eval_batch(e, rs, B);
        e->seen_samples_per_s = INFINITY;
        if (fit < 0)
            return 0;
        last = B;
        /* In a stack's space a batch may divide and still fit nothing the stack
         * runs (DeepSpeed: TP but no stages): there too only a plan found before
         * ends the doubling. The odd doubling (base > 1) ends on its own plans
         * only: the powers of two's say nothing about its batches. */
        bool before = base > 1 ? found : rs->best->valid;
        if (fit == 0 && (before || (B >= e->cluster->n_devices && !e->space->target)))
            return last;
        found |= fit > 0;
        if (fit == 0)
            continue;
        /* a gain over this doubling's own batches: the odd doubling's small batches
         * fall below the powers of two's best, and measured against it their rise
         * stopped it at 4q (GPT2-345M on 5x8 A100: 5, 10, 20, where 2560 does 2524
         * samples/s to 4096's 1682); for the doubling from 1, the best so far */
        stale = rs->batch_best > best_seen * (1 + 1e-9) ? 0 : stale + 1;
        best_seen = fmax(best_seen, rs->batch_best);
        if (stale >= 2)
            return last;
    }
    *capped = true;
    return last;
}

/* The batches the doublings and the cap tried, which the refinement skips: a
 * batch tried twice would enter the top-k twice. */
typedef struct swept {
    uint32_t last;     /* powers of two 1 … last */
    uint32_t odd;      /* the device count's odd part q, > 1 when doubled from */
    uint32_t last_odd; /* q·2^k, q … last_odd (0: none) */
    uint32_t cap;      /* the cap, tried on its own (0: not) */
} swept_t;

static bool swept_batch(const swept_t *s, uint32_t B)
{
    uint32_t q = tsl_search_odd_part(B);
    return (q == 1 && B <= s->last) || (s->odd > 1 && q == s->odd && B <= s->last_odd) ||
           B == s->cap;
}

/* The most batches one side of the refinement tries. */
#define REFINE_SIDE 7u

/* The refinement's batches on one side of the doubling's best b, ascending, into
 * out: below b in steps of a sixteenth of it from just above b/2, above it in
 * steps of an eighth up to just below 2b and the cap — one step's resolution
 * relative to the batches on either side (b/16 of b/2 … b is what b/8 is of
 * b … 2b). The batches already swept are left out; returns the count. */
static uint32_t side_batches(uint32_t b, uint32_t maxb, bool below, const swept_t *s, uint32_t *out)
{
    uint32_t n = 0;
    if (b < 8)
        return 0;
    uint32_t step = below ? (b / 16 ? b / 16 : 1) : b / 8;
    for (uint32_t k = 1; k <= REFINE_SIDE; k++) {
        uint32_t B = below ? b - (REFINE_SIDE + 1 - k) * step : b + k * step;
        if ((below ? B > b / 2 : B <= maxb) && !swept_batch(s, B))
            out[n++] = B;
    }
    return n;
}

/* The refinement around the doubling's best b. The best batch between b's two
 * neighbours may lie below b: GPT3-65B on 8×8 A100 makes 2048 the doubling's
 * best (an interleaved plan) where 1536 does better. Walking both sides costs
 * each side's batches, and a batch near the best costs the most (few of its
 * configurations fall below the plans kept), so each side's middle (3b/4, 3b/2)
 * and b's nearer neighbour below at the walk's resolution above (7b/8, as b + b/8
 * is above) are tried first and one side walked in full: the side below where
 * one of its two became the best, else the side above — the throughput the
 * doubling saw rising rises on past b more often than it peaks below it. With
 * 3b/4 alone, a peak at 7b/8 behind a weaker 3b/4 went unseen (BERT-Huge-32 on 8
 * RTX TITAN at 8 GiB: 2048's ZB-V plan beat 1536's, 1792 did better than both).
 * Progress runs from lo to below hi. Returns -1 when cancelled. */
static int refine_around(tsl_engine_t *e, run_state_t *rs, uint32_t b, uint32_t maxb,
                         const swept_t *s, double lo, double hi)
{
    uint32_t side[2][REFINE_SIDE], n[2]; /* [0] above b, [1] below it */
    n[0] = side_batches(b, maxb, false, s, side[0]);
    n[1] = side_batches(b, maxb, true, s, side[1]);
    uint32_t probe[3] = {n[0] ? side[0][n[0] / 2] : 0, n[1] ? side[1][n[1] / 2] : 0, 0};
    for (uint32_t i = 0; i < n[1]; i++)
        if (side[1][i] == b - b / 8 && side[1][i] != probe[1])
            probe[2] = side[1][i];
    double slots = 3 + (n[0] > n[1] ? n[0] : n[1]);
    for (uint32_t k = 0; k < 3; k++) {
        if (probe[k] == 0)
            continue;
        progress(e, lo + (hi - lo) * k / slots, "search");
        if (eval_batch(e, rs, probe[k]) < 0)
            return -1;
    }
    uint32_t best = rs->best->valid ? rs->best->global_batch : 0;
    uint32_t walk = n[1] && (best == probe[1] || (probe[2] && best == probe[2]));
    for (uint32_t i = 0; i < n[walk]; i++) {
        if (side[walk][i] == probe[walk] || (walk && side[walk][i] == probe[2]))
            continue;
        progress(e, lo + (hi - lo) * (3 + i) / slots, "search");
        if (eval_batch(e, rs, side[walk][i]) < 0)
            return -1;
    }
    return 0;
}

/* The doubling, the cap itself when it is not a power of two, then the
 * refinement around the best batch (refine_around; a batch there that fits
 * nothing, e.g. for divisibility, does not end it). The doublings report the
 * first three quarters of the progress, the refinement the rest. */
static int sweep(tsl_engine_t *e, run_state_t *rs, double lo, double hi)
{
    uint32_t maxb = tsl_search_max_batch(e->req, e->cluster->n_devices);
    uint32_t odd = tsl_search_odd_part(e->cluster->n_devices);
    double split = lo + (hi - lo) * 0.75, mid = odd > 1 ? lo + (split - lo) / 2 : split;
    swept_t s = {.odd = odd};
    bool capped;
    s.last = sweep_doubling(e, rs, 1, lo, mid, &capped);
    if (s.last == 0 && cancelled(e))
        return -1;
    /* N = 2^a·q with q odd (100,000 = 2^5·5^5): a data-parallel degree with a
     * factor of q never divides a power of two, so those plans (every one, when
     * the stages and TP cannot take all of q) need batches of q·2^k — the
     * doubling again from q, where each replica of every degree can hold a whole
     * sample from q·2^a = N up. */
    if (odd > 1 && odd <= maxb) {
        bool capped2;
        s.last_odd = sweep_doubling(e, rs, odd, mid, split, &capped2);
        if (s.last_odd == 0 && cancelled(e))
            return -1;
    }
    if (capped && !swept_batch(&s, maxb)) {
        progress(e, split, "search");
        if (eval_batch(e, rs, maxb) < 0)
            return -1;
        s.cap = maxb;
    }
    uint32_t b = rs->best->valid ? rs->best->global_batch : 0;
    return refine_around(e, rs, b, maxb, &s, split, hi);
}

/* Nothing fits: the cause a person can act on. A batch (the fixed one, or the
 * sweep's cap) below the device count cannot spread its samples, and so its
 * sharded states and activations, over every device: that is named before the
 * memory figures, which assume full sharding. A batch no allowed strategy splits
 * is the request's fault, not the budget's: TSL_E_INVALID naming the field
 * (tesseld answers it INVALID_ARGUMENT, the rest NOFIT: OUT_OF_RANGE). */
static int no_fit_error(const tsl_engine_t *e, tsl_err_t *err)
{
    const uint32_t N = e->cluster->n_devices;
    const uint32_t top_b = e->req->global_batch
                               ? e->req->global_batch
                               : tsl_search_max_batch(e->req, e->cluster->n_devices);
    if (!e->saw_divisible)
        return tsl_err_set(err,
                           "%s: %s cannot be split evenly across the data-parallel "
                           "strategies allowed on %u devices; use a batch divisible by the "
                           "device count or allow tensor/pipeline parallelism",
                           e->req->global_batch ? "global_batch" : "max_batch",
                           e->req->global_batch ? "the global batch" : "no batch up to max_batch",
                           N);
    char small[160] = "";
    if (top_b < N)
        snprintf(small, sizeof small,
                 "; %s %u is below the %u devices, so data parallelism cannot shard over all "
                 "of them: a larger %s may fit",
                 e->req->global_batch ? "the fixed batch" : "max_batch", top_b, N,
                 e->req->global_batch ? "batch (or the sweep)" : "max_batch");
    double states = (double)tsl_model_params(e->model) * TSL_BYTES_PER_PARAM_STATES / N;
    return tsl_err_setc(err, TSL_E_NOFIT,
                        "memory: no plan fits %.2f GiB per device (%s at sequence length %u on "
                        "%u devices%s); model states alone need at least %.2f GiB per device "
                        "when fully sharded%s",
                        e->budget_bytes / 1073741824.0, e->model->name, e->model->tokens_per_sample,
                        N, e->req->global_batch ? ", fixed batch" : "", states / 1073741824.0,
                        small);
}

int tsl_engine_run(tsl_engine_t *e, tsl_plan_t *best, tsl_plan_t *top, uint32_t top_cap,
                   uint32_t *n_top, double progress_lo, double progress_hi, tsl_err_t *err)
{
    run_state_t rs = {.best = best, .top = top, .top_cap = top_cap, .n_top = n_top};
    int rc = TSL_SEARCH_ERR;
    best->valid = false;
    e->seen_samples_per_s = INFINITY;
    if (n_top)
        *n_top = 0;
    rs.scratch = malloc(sizeof(*rs.scratch));
    rs.scratch2 = malloc(sizeof(*rs.scratch2));
    rs.first = calloc((size_t)TSL_SEARCH_MAX_GROUPS * (TSL_PLAN_MAX_STAGES + 1), sizeof(uint32_t));
    rs.order = calloc(top_cap ? top_cap : 1, sizeof(*rs.order));
    if (rs.scratch == NULL || rs.scratch2 == NULL || rs.first == NULL || rs.order == NULL ||
        tsl_engine_ws(e) != 0) {
        tsl_err_setc(err, TSL_E_NOMEM, "search: out of memory");
        goto out;
    }
    for (uint32_t i = 0; i < e->n_groups; i++) {
        if (e->per_pp)
            e->per_pp[i].valid = false;
        uint32_t P = e->cluster->n_devices / e->groups[i].group_size;
        rs.pps[rs.n_pp] = P;
        uint32_t *first = &rs.first[rs.n_pp * (TSL_PLAN_MAX_STAGES + 1)];
        /* a stack's own cut first: whole layers, equal middle stages */
        bool cut = e->space->target && tsl_target_partition(e->space->target, e->model, P, first);
        if (!cut && e->space->uniform_layers)
            tsl_partition_uniform(e->model, P, first);
        else if (!cut)
            tsl_partition_by_flops(e->model, P, first);
        rs.n_pp++;
    }
    int r;
    if (e->req->global_batch) {
        progress(e, progress_lo, "search");
        r = eval_batch(e, &rs, e->req->global_batch);
    } else {
        r = sweep(e, &rs, progress_lo, progress_hi);
    }
    if (r < 0) {
        rc = TSL_SEARCH_CANCELLED;
        tsl_err_setc(err, TSL_E_CANCELLED, "search: cancelled");
        goto out;
    }
    if (!best->valid) {
        no_fit_error(e, err);
        goto out;
    }
    progress(e, progress_hi, "search");
    rc = TSL_SEARCH_OK;
out:
    e->bar_samples_per_s = 0; /* the refinement costs every interleave */
    e->need_samples_per_s = 0;
    if (rs.scratch2 != NULL)
        top_in_order(&rs, rs.scratch2);
    free(rs.scratch);
    free(rs.scratch2);
    free(rs.first);
    free(rs.order);
    return rc;
}

/* What a stack cannot run is not enumerated at all (the rest the engine's
 * tsl_target_check drops): target.h lists each stack's space. */
static void space_target(tsl_space_t *sp, uint32_t t)
{
    sp->target = t;
    if (t == TSL_TARGET_ANY)
        return;
    sp->ckpt_blocks_only = true;
    sp->uniform_strategy = t != TSL_TARGET_GALVATRON;
    sp->uniform_layers = false;
    /* of the zero-bubble schedules only torch.distributed.pipelining's ZBV and
     * DualPipeV (torchtitan's ZBVZeroBubble, DualPipeV) run in a stack Tessel
     * exports to */
    sp->zero_bubble &= t == TSL_TARGET_TORCHTITAN ? TSL_SPACE_ZBV | TSL_SPACE_DUALPIPEV : 0;
    /* interleaving: Megatron-LM's schedule, and torch.distributed.pipelining's
     * Interleaved1F1B that torchtitan runs (target_rules.c torchtitan_interleave
     * admits its group) */
    if (t != TSL_TARGET_MEGATRON && t != TSL_TARGET_TORCHTITAN)
        sp->interleave = false;
    if (t != TSL_TARGET_MEGATRON)
        sp->opts.allow_selective = false;
    /* Galvatron runs Megatron's sequence parallelism on every TP layer by default
     * (runtime sequence_parallel: true, Hetu-Galvatron cea12ff); DeepSpeed has none */
    if (t == TSL_TARGET_DEEPSPEED)
        sp->opts.allow_sp = false;
    if (t == TSL_TARGET_TORCHTITAN || t == TSL_TARGET_GALVATRON)
        sp->opts.allow_zero = false;
    /* Galvatron main lays TP innermost whatever tp_consecutive_flags says, and every
     * version the embedding's and head's (target_rules.c check_galvatron) */
    if (t == TSL_TARGET_GALVATRON)
        sp->opts.tp_innermost = true;
}

tsl_space_t tsl_space_tessel(const tsl_request_t *r)
{
    tsl_space_t sp = {.label = "tessel", .opts = tsl_strategy_opts_default(), .accumulate = true};
    sp.opts.allow_dp = !r->no_dp;
    sp.opts.allow_sdp = !r->no_sdp;
    sp.opts.allow_tp = !r->no_tp;
    sp.opts.allow_ckpt = !r->no_ckpt;
    sp.interleave = !r->no_interleave;
    sp.zero_bubble = r->no_zero_bubble ? 0 : TSL_SPACE_ZBH1 | TSL_SPACE_ZBV | TSL_SPACE_DUALPIPEV;
    /* the choices beyond the papers (docs/search-space.md); selective recomputation
     * only has scores to drop when
     * attention is unfused */
    sp.opts.allow_sp = !r->no_seq_par && !r->tp_sync; /* AMP's fork has no SP (search.h) */
    sp.opts.allow_zero = !r->no_zero;
    sp.opts.allow_selective = !r->no_selective && r->unfused_attn;
    space_target(&sp, r->target);
    return sp;
}
