/*
 * search.c — Algorithm 1: the batch sweep over PP degrees and micro-batch counts,
 * the top-k, and the public entry point.
 */
#include "search.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search_internal.h"

void tsl_request_init(tsl_request_t *r)
{
    memset(r, 0, sizeof(*r));
}

static uint32_t max_batch(const tsl_request_t *r)
{
    return r->max_batch ? r->max_batch : TSL_SEARCH_DEFAULT_MAX_BATCH;
}

int tsl_request_validate(const tsl_request_t *r, const tsl_model_t *m, const tsl_cluster_t *c,
                         tsl_err_t *err)
{
    if (tsl_model_validate(m, err) != 0)
        return -1;
    if (c->n_devices == 0)
        return tsl_err_set(err, "cluster: no devices");
    uint64_t dev_mem = tsl_cluster_max_device_mem(c);
    if (r->mem_budget_bytes > dev_mem)
        return tsl_err_set(err, "memory: the budget of %.1f GiB exceeds the %.1f GiB of the "
                           "largest device", r->mem_budget_bytes / 1073741824.0,
                           dev_mem / 1073741824.0);
    if (r->mem_budget_bytes != 0 && r->mem_budget_bytes < (64ull << 20))
        return tsl_err_set(err, "memory: %llu bytes is too small a budget; give at least 64M",
                           (unsigned long long)r->mem_budget_bytes);
    if (r->pp && (c->n_devices % r->pp != 0 || r->pp > m->n_layers || r->pp > TSL_PLAN_MAX_STAGES))
        return tsl_err_set(err, "pp: %u stages must divide the %u devices and be at most the %u "
                           "layers (and %u)", r->pp, c->n_devices, m->n_layers,
                           TSL_PLAN_MAX_STAGES);
    if (r->pp > 1 && r->no_pp)
        return tsl_err_set(err, "pp: %u stages asked with pipelining switched off", r->pp);
    if (r->top_k > TSL_SEARCH_MAX_TOPK)
        return tsl_err_set(err, "top_k: %u is above the limit of %u", r->top_k,
                           TSL_SEARCH_MAX_TOPK);
    if (r->global_batch > max_batch(r))
        return tsl_err_set(err, "batch: %u is above max_batch %u", r->global_batch,
                           max_batch(r));
    if (r->no_dp && r->no_sdp && r->no_tp && r->no_pp && c->n_devices > 1)
        return tsl_err_set(err, "dimensions: every parallel dimension is switched off but the "
                           "cluster has %u devices", c->n_devices);
    uint64_t bucket = r->bucket_bytes ? r->bucket_bytes : TSL_LAYERDP_DEFAULT_BUCKET_BYTES;
    uint64_t budget = r->mem_budget_bytes ? r->mem_budget_bytes : dev_mem;
    if (budget / bucket > 65536)
        return tsl_err_set(err, "bucket: %llu bytes makes %llu memory buckets; the limit is 65536",
                           (unsigned long long)bucket, (unsigned long long)(budget / bucket));
    return 0;
}

void tsl_request_fingerprint(const tsl_request_t *r, const tsl_model_t *m,
                             const tsl_cluster_t *c, char hex[17])
{
    tsl_fp_t fp;
    tsl_fp_init(&fp);
    tsl_fp_model(&fp, m);
    tsl_fp_cluster(&fp, c);
    tsl_fp_str(&fp, "request");
    const uint64_t fields[] = {r->global_batch, r->global_batch ? 0 : max_batch(r), r->pp,
                               r->mem_budget_bytes ? r->mem_budget_bytes
                                                   : tsl_cluster_max_device_mem(c),
                               r->top_k ? r->top_k : TSL_SEARCH_DEFAULT_TOPK, r->max_pp,
                               r->max_micro, r->bucket_bytes, r->no_pp, r->no_tp, r->no_dp,
                               r->no_sdp, r->no_ckpt, r->no_baselines, r->no_placement,
                               r->no_memopt, r->no_slicer, r->no_sublayer, r->no_bi_objective,
                               /* issue-10 switches */
                               r->unfused_attn, r->no_seq_par, r->no_zero, r->no_selective};
    for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
        tsl_fp_u64(&fp, fields[i]);
    tsl_fp_hex(&fp, hex);
}

/* ---- top-k ---- */

static bool better(const tsl_plan_t *a, const tsl_plan_t *b)
{
    if (a->samples_per_s != b->samples_per_s)
        return a->samples_per_s > b->samples_per_s;
    if (a->peak_bytes != b->peak_bytes)   /* deterministic tie-breaks */
        return a->peak_bytes < b->peak_bytes;
    if (a->pp != b->pp)
        return a->pp < b->pp;
    return a->n_micro < b->n_micro;
}

static void offer_top(tsl_plan_t *top, uint32_t cap, uint32_t *n, const tsl_plan_t *p)
{
    if (top == NULL || cap == 0)
        return;
    uint32_t pos = *n;
    while (pos > 0 && better(p, &top[pos - 1]))
        pos--;
    if (pos >= cap)
        return;
    uint32_t last = *n < cap ? *n : cap - 1;
    memmove(&top[pos + 1], &top[pos], (last - pos) * sizeof(*top));
    top[pos] = *p;
    if (*n < cap)
        (*n)++;
}

/* Insertion sort, best first (n ≤ TSL_SEARCH_MAX_TOPK). */
static void sort_top(tsl_plan_t *top, uint32_t n)
{
    for (uint32_t i = 1; i < n; i++)
        for (uint32_t j = i; j > 0 && better(&top[j], &top[j - 1]); j--) {
            tsl_plan_t t = top[j];
            top[j] = top[j - 1];
            top[j - 1] = t;
        }
}

/* ---- micro-batch counts and batch sweep ---- */

/* Micro-batch counts tried for B and P: divisors of B in [P, 32P] (up to six,
 * spread geometrically), m = B when B < P; with P = 1, m = 1 plus gradient
 * accumulation 2 … 32 when the space allows it. */
static uint32_t micro_counts(const tsl_engine_t *e, uint32_t B, uint32_t P, uint32_t *out)
{
    uint32_t n = 0, cap = e->req->max_micro ? e->req->max_micro : B;
    if (P == 1) {
        out[n++] = 1;
        for (uint32_t m = 2; e->space->accumulate && m <= 32; m *= 2)
            if (B % m == 0 && m <= cap)
                out[n++] = m;
        return n;
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
    return n;
}

static bool cancelled(const tsl_engine_t *e)
{
    return e->hooks && e->hooks->cancel && atomic_load(e->hooks->cancel) != 0;
}

static void progress(const tsl_engine_t *e, double f, const char *phase)
{
    if (e->hooks && e->hooks->progress)
        e->hooks->progress(e->hooks->progress_ud, f > 1 ? 1 : f, phase);
}

typedef struct run_state {
    tsl_plan_t *best, *top, *scratch;
    uint32_t top_cap, *n_top;
    uint32_t n_pp;
    uint32_t pps[TSL_SEARCH_MAX_GROUPS];
    uint32_t *first;   /* [n_pp × (TSL_PLAN_MAX_STAGES + 1)] */
} run_state_t;

/* All (P, m) for one batch size; returns -1 when cancelled, else whether anything fit. */
static int eval_batch(tsl_engine_t *e, run_state_t *rs, uint32_t B)
{
    int fit = 0;
    for (uint32_t i = 0; i < rs->n_pp; i++) {
        uint32_t P = rs->pps[i], ms[16];
        uint32_t nm = micro_counts(e, B, P, ms);
        for (uint32_t k = 0; k < nm; k++) {
            if (cancelled(e))
                return -1;
            tsl_plan_init(rs->scratch);
            tsl_engine_eval(e, B, P, ms[k], &rs->first[i * (TSL_PLAN_MAX_STAGES + 1)],
                            rs->scratch);
            if (!rs->scratch->valid)
                continue;
            fit = 1;
            if (!rs->best->valid || better(rs->scratch, rs->best))
                *rs->best = *rs->scratch;
            offer_top(rs->top, rs->top_cap, rs->n_top, rs->scratch);
        }
    }
    e->stats.batches_tried++;
    return fit;
}

/* Doubling until nothing fits (or two doublings bring < 1%), then a linear
 * refinement above the best batch in steps of an eighth of it. */
static int sweep(tsl_engine_t *e, run_state_t *rs, double lo, double hi)
{
    uint32_t maxb = max_batch(e->req), stale = 0, steps = 0;
    double best_seen = 0;
    for (uint32_t B = 1; B <= maxb; B *= 2, steps++) {
        progress(e, lo + (hi - lo) * steps / 16.0, "search");
        int fit = eval_batch(e, rs, B);
        if (fit < 0)
            return -1;
        if (fit == 0 && (rs->best->valid || e->saw_divisible))
            break;   /* memory is exhausted: larger batches only need more */
        if (fit == 0)
            continue;   /* nothing divided yet: small batches may not split across devices */
        stale = rs->best->samples_per_s > best_seen * 1.01 ? 0 : stale + 1;
        if (rs->best->samples_per_s > best_seen)
            best_seen = rs->best->samples_per_s;
        if (stale >= 2)
            break;
    }
    uint32_t b = rs->best->valid ? rs->best->global_batch : 0;
    for (uint32_t B = b + b / 8; b >= 8 && B < 2 * b && B <= maxb; B += b / 8) {
        progress(e, lo + (hi - lo) * (15.0 + (double)(B - b) / b) / 16.0, "search");
        int fit = eval_batch(e, rs, B);
        if (fit <= 0)
            return fit < 0 ? -1 : 0;
    }
    return 0;
}

static int no_fit_error(const tsl_engine_t *e, tsl_err_t *err)
{
    if (!e->saw_divisible)
        return tsl_err_set(err, "batch: %s cannot be split evenly across the data-parallel "
                           "strategies allowed on %u devices; use a batch divisible by the "
                           "device count or allow tensor/pipeline parallelism",
                           e->req->global_batch ? "the global batch" : "no batch up to max_batch",
                           e->cluster->n_devices);
    double states = (double)tsl_model_params(e->model) * TSL_BYTES_PER_PARAM_STATES /
                    e->cluster->n_devices;
    return tsl_err_set(err, "memory: no plan fits %.2f GiB per device (%s at sequence length %u "
                       "on %u devices%s); model states alone need at least %.2f GiB per device "
                       "when fully sharded",
                       e->budget_bytes / 1073741824.0, e->model->name,
                       e->model->tokens_per_sample, e->cluster->n_devices,
                       e->req->global_batch ? ", fixed batch" : "", states / 1073741824.0);
}

int tsl_engine_run(tsl_engine_t *e, tsl_plan_t *best, tsl_plan_t *top, uint32_t top_cap,
                   uint32_t *n_top, double progress_lo, double progress_hi, tsl_err_t *err)
{
    run_state_t rs = {.best = best, .top = top, .top_cap = top_cap, .n_top = n_top};
    int rc = TSL_SEARCH_ERR;
    best->valid = false;
    if (n_top)
        *n_top = 0;
    rs.scratch = malloc(sizeof(*rs.scratch));
    rs.first = calloc((size_t)TSL_SEARCH_MAX_GROUPS * (TSL_PLAN_MAX_STAGES + 1), sizeof(uint32_t));
    if (rs.scratch == NULL || rs.first == NULL) {
        tsl_err_set(err, "search: out of memory");
        goto out;
    }
    for (uint32_t i = 0; i < e->n_groups; i++) {
        uint32_t P = e->cluster->n_devices / e->groups[i].group_size;
        rs.pps[rs.n_pp] = P;
        uint32_t *first = &rs.first[rs.n_pp * (TSL_PLAN_MAX_STAGES + 1)];
        if (e->space->uniform_layers)
            tsl_partition_uniform(e->model->n_layers, P, first);
        else
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
        tsl_err_set(err, "search: cancelled");
        goto out;
    }
    if (!best->valid) {
        no_fit_error(e, err);
        goto out;
    }
    progress(e, progress_hi, "search");
    rc = TSL_SEARCH_OK;
out:
    free(rs.scratch);
    free(rs.first);
    return rc;
}

/* ---- public entry ---- */

tsl_space_t tsl_space_tessel(const tsl_request_t *r)
{
    tsl_space_t sp = {.label = "tessel", .opts = tsl_strategy_opts_default(), .accumulate = true};
    sp.opts.allow_dp = !r->no_dp;
    sp.opts.allow_sdp = !r->no_sdp;
    sp.opts.allow_tp = !r->no_tp;
    sp.opts.allow_ckpt = !r->no_ckpt;
    /* issue-10 choices; selective recomputation only has scores to drop when
     * attention is unfused */
    sp.opts.allow_sp = !r->no_seq_par;
    sp.opts.allow_zero = !r->no_zero;
    sp.opts.allow_selective = !r->no_selective && r->unfused_attn;
    return sp;
}


/* Tessel's space contains every baseline's, but its search visits fewer batch and
 * micro-batch combinations than a baseline's rule may; a baseline plan that beats
 * the best found is itself a Tessel plan, and is taken. */
static void adopt_baselines(tsl_search_result_t *res, const tsl_request_t *r)
{
    uint32_t k = r->top_k ? r->top_k : TSL_SEARCH_DEFAULT_TOPK;
    for (int b = 0; b < TSL_BASELINE_COUNT; b++) {
        tsl_plan_t *p = &res->baseline[b];
        if (!p->valid || !better(p, &res->best))
            continue;
        res->best = *p;
        snprintf(res->best.label, sizeof(res->best.label), "tessel");
        offer_top(res->top, k, &res->n_top, &res->best);
    }
}

/* One placement: the engine over cluster c (nodes already in `order`). */
static int search_placement(const tsl_model_t *m, const tsl_cluster_t *c, const uint16_t *order,
                            const tsl_request_t *r, const tsl_search_hooks_t *hooks,
                            tsl_search_result_t *res, double lo, double hi, tsl_err_t *err)
{
    tsl_space_t space = tsl_space_tessel(r);
    tsl_engine_t e;
    if (tsl_engine_init(&e, m, c, r, hooks, &space, err) != 0) {
        tsl_engine_free(&e);
        return TSL_SEARCH_ERR;
    }
    e.node_order = order;
    uint32_t k = r->top_k ? r->top_k : TSL_SEARCH_DEFAULT_TOPK;
    tsl_plan_t *top = malloc(k * sizeof(*top)), *best = malloc(sizeof(*best));
    uint32_t n_top = 0;
    int rc = TSL_SEARCH_ERR;
    if (top == NULL || best == NULL)
        tsl_err_set(err, "search: out of memory");
    else
        rc = tsl_engine_run(&e, best, top, k, &n_top, lo, hi, err);
    tsl_plan_t *base = &res->baseline[TSL_BASELINE_GALVATRON_BASE];
    if (rc == TSL_SEARCH_OK && (!base->valid || better(best, base))) {
        *base = *best;   /* before re-balancing: Galvatron-Base */
        snprintf(base->label, sizeof(base->label), "galvatron-base");
    }
    if (rc == TSL_SEARCH_OK && !r->no_bi_objective) {
        tsl_search_rebalance(&e, top, n_top);
        sort_top(top, n_top);
        *best = top[0];
    }
    tsl_search_add_stats(&res->stats, &e.stats);
    tsl_engine_free(&e);
    if (rc == TSL_SEARCH_OK) {
        if (!res->best.valid || better(best, &res->best))
            res->best = *best;
        for (uint32_t i = 0; i < n_top; i++)
            offer_top(res->top, k, &res->n_top, &top[i]);
    }
    free(top);
    free(best);
    return rc;
}

/* Every placement worth trying (one on homogeneous clusters); the best wins. */
static int search_placements(const tsl_model_t *m, const tsl_cluster_t *c,
                             const tsl_request_t *r, const tsl_search_hooks_t *hooks,
                             tsl_search_result_t *res, double hi, tsl_err_t *err)
{
    static const uint32_t max_orders = 4;
    bool place = !r->no_placement && c->n_nodes > 1 && !tsl_cluster_is_homogeneous(c);
    if (!place)
        return search_placement(m, c, NULL, r, hooks, res, 0.0, hi, err);
    uint16_t(*orders)[TSL_CLUSTER_MAX_NODES] = malloc(max_orders * sizeof(*orders));
    if (orders == NULL)
        return tsl_err_set(err, "search: out of memory");
    uint32_t n = tsl_placement_orders(c, orders, max_orders);
    int rc = TSL_SEARCH_ERR, any_ok = 0;
    for (uint32_t i = 0; i < n; i++) {
        tsl_cluster_t pc;
        if (tsl_cluster_permute(c, orders[i], &pc, err) != 0)
            break;
        bool identity = true;
        for (uint32_t k = 0; k < c->n_nodes && identity; k++)
            identity = orders[i][k] == k;
        rc = search_placement(m, &pc, identity ? NULL : orders[i], r, hooks, res, hi * i / n,
                              hi * (i + 1) / n, err);
        tsl_cluster_free(&pc);
        if (rc == TSL_SEARCH_CANCELLED)
            break;
        any_ok |= rc == TSL_SEARCH_OK;
    }
    free(orders);
    if (rc == TSL_SEARCH_CANCELLED)
        return rc;
    return any_ok ? TSL_SEARCH_OK : TSL_SEARCH_ERR;
}

static int search_model(const tsl_model_t *m, const tsl_cluster_t *c, const tsl_request_t *r,
                        const tsl_search_hooks_t *hooks, tsl_search_result_t *res, tsl_err_t *err)
{
    double split = r->no_baselines ? 1.0 : 0.6;
    int rc = search_placements(m, c, r, hooks, res, split, err);
    if (rc == TSL_SEARCH_ERR && !r->no_memopt && strncmp(err->msg, "memory:", 7) == 0) {
        /* too tight for Galvatron's space: H3T's switches and offloading */
        if (hooks && hooks->progress)
            hooks->progress(hooks->progress_ud, split, "memopt");
        rc = tsl_search_memopt(m, c, r, hooks, res, err);
    }
    if (rc != TSL_SEARCH_OK)
        return rc;
    if (!r->no_sublayer)
        tsl_search_sublayer(m, c, r, res);
    if (!r->no_baselines) {
        tsl_search_baselines(m, c, r, hooks, res);
        if (hooks && hooks->cancel && atomic_load(hooks->cancel)) {
            tsl_err_set(err, "search: cancelled");
            return TSL_SEARCH_CANCELLED;
        }
    }
    adopt_baselines(res, r);
    tsl_search_simulate(&res->best, !r->no_slicer);
    for (uint32_t i = 0; i < res->n_top; i++)
        tsl_search_simulate(&res->top[i], !r->no_slicer);
    for (int b = 0; b < TSL_BASELINE_COUNT; b++)
        tsl_search_simulate(&res->baseline[b], false);
    if (hooks && hooks->progress)
        hooks->progress(hooks->progress_ud, 1.0, "done");
    return TSL_SEARCH_OK;
}

int tsl_search(const tsl_model_t *m, const tsl_cluster_t *c, const tsl_request_t *r,
               const tsl_search_hooks_t *hooks, tsl_search_result_t *res, tsl_err_t *err)
{
    tsl_err_t local = {0};
    if (err == NULL)
        err = &local;
    memset(res, 0, sizeof(*res));
    if (tsl_request_validate(r, m, c, err) != 0)
        return TSL_SEARCH_ERR;
    if (!r->unfused_attn)
        return search_model(m, c, r, hooks, res, err);
    /* issue 10: the request's attention kind applies to the model searched */
    tsl_model_t own = {0};
    int rc = TSL_SEARCH_ERR;
    if (tsl_model_copy(&own, m, err) == 0 && tsl_model_set_unfused_attn(&own, true, err) == 0)
        rc = search_model(&own, c, r, hooks, res, err);
    tsl_model_free(&own);
    return rc;
}
