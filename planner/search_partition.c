/*
 * search_partition.c — re-balancing the pipeline partition of a found
 * configuration (Galvatron-BMW Algorithm 2 and AMP's layer assignment).
 *
 * The main search partitions by compute (Galvatron-Base). For each of the best
 * configurations, the per-layer costs under the strategies the layer DP chose
 * feed the partition module: Galvatron-BMW's bi-objective queue from the
 * memory-balanced towards the time-balanced partition (plus the best-balanced
 * partition that fits), and AMP's exact Eq. 5 assignment with per-stage speeds.
 * Each candidate partition is searched again (the layer DP re-chooses the
 * strategies for it); a few rounds run while they improve. The fastest plan is
 * then improved locally, a layer at a time, with the engine as the judge
 * (improve_cuts): the partition module's objective is not every schedule's.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "partition.h"
#include "search_internal.h"

#define REFINE_ROUNDS  3
#define IMPROVE_PASSES 8

typedef struct refine_buf {
    double *t, *y, *p2p, speed[TSL_PLAN_MAX_STAGES];
    uint64_t *ms, *act, stage_budget[TSL_PLAN_MAX_STAGES];
    uint32_t vfirst[TSL_PLAN_MAX_STAGES + 1];
    tsl_partition_ws_t *ws;
    tsl_partition_biobj_t *bo;
    tsl_partition_amp_t *amp;
    tsl_plan_t *cand;
} refine_buf_t;

static void refine_buf_free(refine_buf_t *b)
{
    free(b->t);
    free(b->y);
    free(b->p2p);
    free(b->ms);
    free(b->act);
    free(b->bo);
    free(b->amp);
    free(b->cand);
    tsl_partition_ws_free(b->ws);
}

static bool refine_buf_init(refine_buf_t *b, uint32_t L)
{
    memset(b, 0, sizeof(*b));
    b->t = calloc(L, sizeof(double));
    b->y = calloc(L, sizeof(double));
    b->p2p = calloc(L, sizeof(double));
    b->ms = calloc(L, sizeof(uint64_t));
    b->act = calloc(L, sizeof(uint64_t));
    b->bo = malloc(sizeof(*b->bo));
    b->amp = malloc(sizeof(*b->amp));
    b->cand = malloc(sizeof(*b->cand));
    b->ws = tsl_partition_ws_new(L, TSL_PLAN_MAX_STAGES);
    return b->t && b->y && b->p2p && b->ms && b->act && b->bo && b->amp && b->cand && b->ws;
}

/*
 * Per-layer costs of plan p under its strategies, at the nominal speed (the
 * fastest stage's), with each stage's relative speed and memory budget.
 */
static void layer_costs(const tsl_engine_t *e, const tsl_plan_t *p, refine_buf_t *b)
{
    const tsl_model_t *m = e->model;
    double fastest = 0;
    tsl_cost_env_t env[TSL_PLAN_MAX_STAGES];
    for (uint32_t s = 0; s < p->pp; s++) {
        tsl_cost_env_init(&env[s], e->cluster, p->stages[s].first_device, p->stages[s].n_devices,
                          NULL);
        env[s].tied_copy = p->stages[s].first_layer > 0; /* as search_eval.c's stages */
        env[s].pipelined = p->pp > 1;
        tsl_engine_env_request(e, &env[s]);
        fastest = fmax(fastest, env[s].device_flops);
    }
    for (uint32_t s = 0; s < p->pp; s++) {
        const tsl_plan_stage_t *st = &p->stages[s];
        b->speed[s] = env[s].device_flops / fastest;
        b->stage_budget[s] = tsl_engine_stage_budget(e, st->first_device, st->n_devices);
        /* a cut after a layer of this stage sends to the next block (the last
         * stage's cuts cost what the previous boundary does) */
        uint32_t to = s + 1 < p->pp ? p->stages[s + 1].first_device
                                    : (s ? p->stages[s - 1].first_device : st->first_device);
        /* the collective figures once per stage for the EP groups and once per run of
         * layers under one strategy (a 2048-GPU block's walks are not cheap) */
        tsl_strategy_bw_t bw, moe;
        memset(&moe, 0, sizeof(moe));
        tsl_cost_moe_bw(&env[s], tsl_model_first_moe(m), &moe);
        /* and the pairs' figure of the stage's boundary once (its layers' strategies
         * all span the stage's devices) */
        uint32_t pairs_of = 0;
        double pairs_bw = 0.0;
        for (uint32_t l = st->first_layer; l < st->first_layer + st->n_layers; l++) {
            tsl_layer_cost_t lc;
            if (l == st->first_layer || !tsl_strategy_equal(&p->layer[l], &p->layer[l - 1])) {
                tsl_cost_strategy_bw(&env[s], &p->layer[l], &bw);
                memcpy(bw.moe, moe.moe, sizeof(moe.moe));
            }
            tsl_cost_layer(&env[s], &m->layers[l], &p->layer[l], &bw, p->micro_batch, &lc);
            b->t[l] = (lc.fwd_s + lc.bwd_s) * b->speed[s];
            b->y[l] = (lc.bwd_sync_s - lc.bwd_s) * b->speed[s];
            b->ms[l] = lc.ms_bytes;
            b->act[l] = lc.fwd_bytes + lc.bwd_bytes;
            uint32_t G = tsl_strategy_group_size(&p->layer[l]);
            if (l + 1 < m->n_layers && env[s].mode != TSL_COST_PAPER && G != pairs_of) {
                pairs_bw = tsl_cluster_pairs_bw(e->cluster, st->first_device, to, G);
                pairs_of = G;
            }
            tsl_p2p_proto_t proto = tsl_cost_p2p_proto(&env[s].knobs);
            b->p2p[l] = l + 1 < m->n_layers
                            ? tsl_cost_stage_p2p_pairs_s(
                                  e->cluster, env[s].mode, st->first_device, to, &p->layer[l],
                                  m->layers[l + 1].bnd_act_bytes, p->micro_batch, pairs_bw, proto,
                                  tsl_cost_ds_mask_bytes(proto, &m->layers[l + 1]))
                            : 0;
        }
    }
}

static bool same_partition(const tsl_plan_t *p, const uint32_t *first)
{
    for (uint32_t s = 0; s < p->pp; s++)
        if (p->stages[s].first_layer != first[s])
            return false;
    return true;
}

/* What a configuration costed here must beat to be kept (0: nothing): the engine's
 * need, which leaves a plain configuration unfinished where a stage proves it cannot
 * (search_engine.h), and its bar, under which no interleave nor ZB-H1 whose bound
 * cannot is costed (search_eval.c eval_group). Not in try_partition, whose costings
 * weigh every interleave: the engine's schedules are not a pure maximum (a V runs
 * the strategies of the best interleave before it), and BERT-Huge-32 on 8 RTX TITAN
 * at 16 GB then ended on 187.25 samples/s, not 187.28. */
static void hold_to(tsl_engine_t *e, double samples_per_s)
{
    e->need_samples_per_s = samples_per_s;
    e->bar_samples_per_s = samples_per_s;
}

/* Searches the configuration of *best again with partition `first`; keeps it when
 * faster. One that a stage proves cannot beat *best is left unfinished (the
 * engine's need, search_engine.h). */
static bool try_partition(tsl_engine_t *e, tsl_plan_t *best, const uint32_t *first, refine_buf_t *b)
{
    if (same_partition(best, first))
        return false;
    tsl_plan_init(b->cand);
    e->need_samples_per_s = best->samples_per_s;
    tsl_engine_eval(e, best->global_batch, best->pp, best->n_micro, first, b->cand);
    e->need_samples_per_s = 0;
    if (!b->cand->valid || b->cand->samples_per_s <= best->samples_per_s * (1 + 1e-9))
        return false;
    *best = *b->cand;
    return true;
}

/* Whether the space weighs a V schedule (ZBV, DualPipeV): the engine picks the
 * schedule per partition, so the V's balanced partition is a candidate for a plan
 * of any schedule (BERT-Huge-32 on 8 RTX TITAN: the interleaved alternatives at 18/16
 * run ZB-V at 17/17, 0.6-1.0 % faster). */
static bool v_weighed(const tsl_engine_t *e)
{
    return (e->space->zero_bubble & (TSL_SPACE_ZBV | TSL_SPACE_DUALPIPEV)) != 0;
}

/* One round: the partition module's candidates from p's per-layer costs — the
 * contiguous stages' (bi-objective, AMP), and where the space weighs a V the V's
 * ranks' (tsl_partition_v): a V's rank s runs the model's parts s and 2P − 1 − s,
 * not the contiguous stages the 1F1B objective balances (GPT-2 345M on 16x16 A100 at
 * batch 32, pp 4 m 8: ZB-V 7/6/6/7 at 205.20 samples/s, 8/6/6/6 at 213.44; GPT3-175B
 * on 16k H100, pp 8 m 56: DualPipeV 13/12/.../12/13 at 5716.39, 14/12/.../12 at
 * 5914.17). */
static bool refine_round(tsl_engine_t *e, tsl_plan_t *p, refine_buf_t *b)
{
    layer_costs(e, p, b);
    tsl_partition_in_t in = {.n_layers = e->model->n_layers,
                             .n_stages = p->pp,
                             .n_micro = p->n_micro,
                             .time_s = b->t,
                             .sync_s = b->y,
                             .ms_bytes = b->ms,
                             .act_bytes = b->act,
                             .p2p_s = b->p2p,
                             .speed = b->speed,
                             .budget_bytes = p->budget_bytes,
                             .stage_budget_bytes = b->stage_budget,
                             .max_cut = e->max_cut};
    bool improved = false;
    if (tsl_partition_bi_objective(&in, b->ws, 0, true, b->bo, NULL) == 0 && b->bo->found)
        improved |= try_partition(e, p, b->bo->first, b);
    if (tsl_partition_amp(&in, b->ws, true, b->amp, NULL) == TSL_PARTITION_OK)
        improved |= try_partition(e, p, b->amp->first, b);
    if (v_weighed(e) && tsl_partition_v(&in, b->vfirst, NULL, NULL) == TSL_PARTITION_OK)
        improved |= try_partition(e, p, b->vfirst, b);
    return improved;
}

/* p with one layer moved from stage `from` to stage `to` (the cuts between them
 * shifted by one), searched again; whether it was kept. */
static bool try_move(tsl_engine_t *e, tsl_plan_t *p, uint32_t from, uint32_t to, refine_buf_t *b)
{
    const uint32_t P = p->pp;
    uint32_t n[TSL_PLAN_MAX_STAGES], first[TSL_PLAN_MAX_STAGES + 1];
    if (from == to || p->stages[from].n_layers < 2)
        return false;
    for (uint32_t s = 0; s < P; s++)
        n[s] = p->stages[s].n_layers;
    n[from]--;
    n[to]++;
    first[0] = 0;
    for (uint32_t s = 0; s < P; s++)
        first[s + 1] = first[s] + n[s];
    if (!tsl_partition_cuts_ok(first, P, e->max_cut))
        return false;
    return try_partition(e, p, first, b);
}

/* Whether stage times a and b tie: stages of as many layers under the same
 * strategies cost to the same figure (a 100k-GPU GPT3-175B plan's 20 busiest
 * stages). */
static bool tied(double a, double b)
{
    return fabs(a - b) <= 1e-9 * fmax(a, b);
}

/* One layer from each of the busiest stages but hi to the idlest, lo (time[] from
 * the pass's start), but those next to it (the pass moves between neighbours
 * already); whether one was kept. Not hi alone: where several tie, which one
 * gives still matters to the engine — a V's rank s runs its parts s and 2P − 1 − s
 * (the layers a count moves shift every part between them), and 1F1B's stage s
 * holds P − s micro-batches' stashes. GPT3-175B on 100k H100, pp 25 DualPipeV, 20
 * stages tied busiest at 153.34 ms: later ones' layers to the idlest kept where the
 * first's was not, bench/search's best 36776.38 → 36809.48 samples/s. Each run of the
 * engine's (EP, CP degree, precision) improves its own best, and DeepSeek-V3's runs
 * at pp 16 to 32 tie up to 30 stages: so only to the idlest, and only in a pass
 * where no other move was kept (improve_cuts). */
static bool other_busiest_to_idlest(tsl_engine_t *e, tsl_plan_t *p, const double *time, uint32_t hi,
                                    uint32_t lo, refine_buf_t *b)
{
    bool improved = false;
    for (uint32_t s = 0; s < p->pp && !tsl_search_cancelled(e->hooks); s++)
        if (s != hi && tied(time[s], time[hi]) && s + 1 != lo && lo + 1 != s)
            improved |= try_move(e, p, s, lo, b);
    return improved;
}

/*
 * Local improvement with the engine as the judge: each boundary moved by one
 * layer either way, one layer from the busiest stage to the idlest, and where
 * none of those was kept from each other stage tied busiest to the idlest
 * (other_busiest_to_idlest); each kept when the plan searched again is faster; passes
 * while one is kept (at most IMPROVE_PASSES). The partition module balances
 * contiguous stages under 1F1B's objective from one plan's per-layer costs, but
 * the engine picks the schedule per partition, and an interleaved or V schedule
 * runs other layers together on a rank (a V's rank s its parts s and 2P − 1 − s,
 * pipeline.h tsl_pipeline_v_parts): GPT-2 345M on 16x16 A100 at batch 32 kept
 * ZB-V at 6/6/7/7 (320.40 samples/s) where 6/7/7/6 does 327.91, BERT-Huge-32 on 8
 * RTX TITAN ZB-H1 at 18/16 where ZB-V at 17/17 is 1 % faster. 2P − 1 candidates a
 * pass (and the ties' in the last), each held to the plan's throughput (try_partition).
 * Run on the fastest plan alone: on the plans within 2 % of it, search CPU rose
 * 38 % over bench/search (DeepSeek-V3 on 2048 H800 9.3 → 13.3 s) for the same
 * best plans; the price is that a narrower space can return more (docs/design.md,
 * step 2).
 */
static void improve_cuts(tsl_engine_t *e, tsl_plan_t *p, refine_buf_t *b)
{
    const uint32_t P = p->pp;
    double time[TSL_PLAN_MAX_STAGES];
    bool improved = true;
    for (int pass = 0; pass < IMPROVE_PASSES && improved; pass++) {
        improved = false;
        uint32_t hi = 0, lo = 0;
        for (uint32_t s = 0; s < P; s++) {
            time[s] = p->stages[s].time_s;
            hi = time[s] > time[hi] ? s : hi;
            lo = time[s] < time[lo] ? s : lo;
        }
        for (uint32_t s = 0; s + 1 < P && !tsl_search_cancelled(e->hooks); s++) {
            improved |= try_move(e, p, s, s + 1, b);
            improved |= try_move(e, p, s + 1, s, b);
        }
        if (hi + 1 != lo && lo + 1 != hi && !tsl_search_cancelled(e->hooks))
            improved |= try_move(e, p, hi, lo, b);
        if (!improved && !tsl_search_cancelled(e->hooks))
            improved = other_busiest_to_idlest(e, p, time, hi, lo, b);
    }
}

/* Small cases: the partition heuristics can miss the optimum of a handful of
 * partitions; every one is searched (cuts in lexicographic order). */
static void try_every_partition(tsl_engine_t *e, tsl_plan_t *p, refine_buf_t *b)
{
    const uint32_t L = e->model->n_layers, P = p->pp;
    uint32_t first[TSL_PLAN_MAX_STAGES + 1];
    tsl_partition_first(L, P, first);
    do {
        if (tsl_search_cancelled(e->hooks))
            return;
        try_partition(e, p, first, b);
    } while (tsl_partition_next(L, e->max_cut, P, first));
}

/* Whether plan p is one the re-balancing searches beyond its own partition. */
static bool rebalanced(const tsl_plan_t *p)
{
    return p->valid && p->pp >= 2 && p->pp <= TSL_PARTITION_MAX_STAGES;
}

/* Whether p's configuration has few enough partitions to search every one. */
static bool few(const tsl_engine_t *e, const tsl_plan_t *p)
{
    return tsl_partition_count(e->model->n_layers, e->max_cut, p->pp) <= TSL_SEARCH_ALL_PARTITIONS;
}

/*
 * Each plan of pp >= 2 costed again on its own partition with every schedule that
 * could beat it weighed, kept when faster. The sweep costs no interleave nor ZB-H1
 * whose bound cannot beat its best so far (search_engine.c eval_batch,
 * bar_samples_per_s), yet keeps plans below that best: its top-k and each PP
 * degree's best, which the re-balancing starts from and the alternatives show. So
 * such a plan may be its partition's ZB-V where an interleave there is faster
 * (GPT2-345M on 2 A100-80G at batch 8: the best one stage at 126.75 samples/s, PP
 * 2 kept ZB-V at 15/11, 107.06, where interleaved 1F1B at 4 chunks does 114.45),
 * and the re-balancing costs every partition but the plan's own (try_partition).
 * Held to the plan's throughput (hold_to): the layer DP's answers are in the memo,
 * so what this costs is the schedules the sweep's bar skipped and that could beat
 * the plan.
 */
void tsl_search_reprice(tsl_engine_t *e, tsl_plan_t *plans, uint32_t n)
{
    tsl_plan_t *cand = malloc(sizeof(*cand));
    for (uint32_t i = 0; cand && i < n && !tsl_search_cancelled(e->hooks); i++) {
        const tsl_plan_t *p = &plans[i];
        if (!p->valid || p->pp < 2 || p->sublayer)
            continue;
        hold_to(e, p->samples_per_s);
        tsl_search_cost_own(e, p, cand);
        hold_to(e, 0);
        if (cand->valid && cand->samples_per_s > p->samples_per_s * (1 + 1e-9))
            plans[i] = *cand;
    }
    free(cand);
}

void tsl_search_cost_own(tsl_engine_t *e, const tsl_plan_t *p, tsl_plan_t *out)
{
    uint32_t first[TSL_PLAN_MAX_STAGES + 1];
    for (uint32_t s = 0; s < p->pp; s++)
        first[s] = p->stages[s].first_layer;
    first[p->pp] = e->model->n_layers;
    tsl_plan_init(out);
    tsl_engine_eval(e, p->global_batch, p->pp, p->n_micro, first, out);
}

void tsl_search_plan_knobs(const tsl_cost_knobs_t *run, const tsl_plan_t *p, tsl_cost_knobs_t *k)
{
    tsl_cost_knobs_t own;
    memset(&own, 0, sizeof(own));
    tsl_plan_get_knobs(p, &own); /* the plan's record of them (tsl_plan_set_knobs) */
    *k = *run;
    k->ep = own.ep;
    k->etp = own.etp;
    k->cp = own.cp;
    k->cp_comm = own.cp_comm;
    k->fp8 = own.fp8;
}

/* Each plan re-partitioned (every partition where they are few, else the partition
 * module's rounds), then the fastest improved locally (improve_cuts). */
void tsl_search_rebalance(tsl_engine_t *e, tsl_plan_t *plans, uint32_t n)
{
    refine_buf_t b;
    tsl_plan_t *best = NULL;
    if (refine_buf_init(&b, e->model->n_layers)) {
        for (uint32_t i = 0; i < n; i++) {
            if (!rebalanced(&plans[i]))
                continue;
            if (few(e, &plans[i]))
                try_every_partition(e, &plans[i], &b);
            else
                for (int round = 0; round < REFINE_ROUNDS; round++)
                    if (tsl_search_cancelled(e->hooks) || !refine_round(e, &plans[i], &b))
                        break;
            if (best == NULL || tsl_plan_better(&plans[i], best))
                best = &plans[i];
        }
        /* a plan whose every partition was searched is at its optimum already */
        if (best && !few(e, best) && !tsl_search_cancelled(e->hooks))
            improve_cuts(e, best, &b);
    }
    refine_buf_free(&b);
}
