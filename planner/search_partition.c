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
#include <stdint.h>
#include <string.h>

#include "partition.h"
#include "pipeline.h"
#include "pipesim.h"
#include "search_internal.h"
#include "tried.h"

#define REFINE_ROUNDS  3
#define IMPROVE_PASSES 8
#define NEXT_IDLEST    2 /* the stages after the idlest a far move gives to (to_next_idlest) */

typedef struct refine_buf {
    double *t, *y, *p2p, speed[TSL_PLAN_MAX_STAGES];
    uint64_t *ms, *act, stage_budget[TSL_PLAN_MAX_STAGES];
    uint32_t vfirst[TSL_PLAN_MAX_STAGES + 1];
    tsl_partition_ws_t *ws;
    tsl_partition_biobj_t *bo;
    tsl_partition_amp_t *amp;
    tsl_plan_t *cand;
    tsl_tried_t *tried; /* the partitions costed (try_partition): one engine's knobs */
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
    tsl_tried_free(b->tried);
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
    b->tried = tsl_tried_new(); /* NULL: every try costed */
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
 * engine's need, search_engine.h). One tried before under an incumbent *best beats
 * or matches is not costed again (tried.h: its answer is known not to beat *best);
 * every try is noted in b->tried, which must hold the tries of e's knobs only. */
static bool try_partition(tsl_engine_t *e, tsl_plan_t *best, const uint32_t *first, refine_buf_t *b)
{
    const uint32_t B = best->global_batch, P = best->pp, m = best->n_micro;
    if (same_partition(best, first))
        return false;
    double held = tsl_tried_held(b->tried, B, P, m, first);
    if (held > 0 && best->samples_per_s >= held) {
        e->stats.tries_skipped++;
        return false;
    }
    tsl_plan_init(b->cand);
    e->need_samples_per_s = best->samples_per_s;
    tsl_engine_eval(e, B, P, m, first, b->cand);
    e->need_samples_per_s = 0;
    bool kept = b->cand->valid && b->cand->samples_per_s > best->samples_per_s * (1 + 1e-9);
    tsl_tried_note(b->tried, B, P, m, first, kept ? b->cand->samples_per_s : best->samples_per_s);
    if (kept)
        *best = *b->cand;
    return kept;
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

/* p's stage times into time[0..pp) and the first busiest and first idlest stage's
 * index into *hi and *lo. */
static void stage_extremes(const tsl_plan_t *p, double *time, uint32_t *hi, uint32_t *lo)
{
    *hi = *lo = 0;
    for (uint32_t s = 0; s < p->pp; s++) {
        time[s] = p->stages[s].time_s;
        *hi = time[s] > time[*hi] ? s : *hi;
        *lo = time[s] < time[*lo] ? s : *lo;
    }
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

/* Marks the cuts lo..hi to be tried (cut s: between stages s and s + 1), clipped to
 * the P − 1 there are. */
static void mark_cuts(bool *look, int32_t lo, int32_t hi, uint32_t P)
{
    for (int32_t s = lo < 0 ? 0 : lo; s <= hi && s + 1 < (int32_t)P; s++)
        look[s] = true;
}

/* p's stage counts into n[0..pp). */
static void stage_counts(const tsl_plan_t *p, uint32_t *n)
{
    for (uint32_t s = 0; s < p->pp; s++)
        n[s] = p->stages[s].n_layers;
}

/* The cuts on either side of each stage whose count differs from n[] marked (a kept
 * move changed it); `kept` passed through. */
static bool mark_moved(bool *look, const tsl_plan_t *p, const uint32_t *n, bool kept)
{
    for (uint32_t s = 0; kept && s < p->pp; s++)
        if (p->stages[s].n_layers != n[s])
            mark_cuts(look, (int32_t)s - 1, (int32_t)s, p->pp);
    return kept;
}

/* One layer from the busiest stage to the idlest (on p's stage times now), and where
 * that was not kept from each other stage tied busiest (other_busiest_to_idlest); the
 * cuts on either side of a stage whose count a kept move changed marked; whether one
 * was kept. */
static bool busiest_to_idlest(tsl_engine_t *e, tsl_plan_t *p, bool *look, refine_buf_t *b)
{
    double time[TSL_PLAN_MAX_STAGES];
    uint32_t hi, lo, n[TSL_PLAN_MAX_STAGES];
    stage_extremes(p, time, &hi, &lo);
    stage_counts(p, n);
    bool kept = hi + 1 != lo && lo + 1 != hi && try_move(e, p, hi, lo, b);
    if (!kept && !tsl_search_cancelled(e->hooks))
        kept = other_busiest_to_idlest(e, p, time, hi, lo, b);
    return mark_moved(look, p, n, kept);
}

/*
 * One layer from each stage tied busiest to each neighbour not tied busiest (on p's
 * stage times now), until one is kept; the cuts around the stages it changed marked;
 * whether one was. improve_marked's don't-look bits leave a cut unlooked until a kept
 * move shifts it or a neighbour, yet a kept move prices the whole schedule again, so
 * the bottleneck's own cuts are looked at once more before the moves end: GPT3-175B
 * on 100k H100, pp 25 DualPipeV, ended at 36840.43 samples/s where a layer from stage
 * 21 (tied busiest) to stage 20 (3 layers) does 36841.79; DeepSeek-V3 on 2048 H800 at
 * batch 15360, pp 16 m 120 EP 8, at 607.03 where stage 12's layer to stage 13 does
 * 608.56. At most 2 tries a stage tied busiest, and the tried set (try_partition)
 * skips those costed at this partition already.
 */
static bool busiest_to_idler_neighbours(tsl_engine_t *e, tsl_plan_t *p, bool *look, refine_buf_t *b)
{
    const uint32_t P = p->pp;
    double time[TSL_PLAN_MAX_STAGES];
    uint32_t hi, lo, n[TSL_PLAN_MAX_STAGES];
    stage_extremes(p, time, &hi, &lo);
    stage_counts(p, n);
    bool kept = false;
    for (uint32_t s = 0; s < P && !kept && !tsl_search_cancelled(e->hooks); s++) {
        if (!tied(time[s], time[hi]))
            continue;
        if (s > 0 && !tied(time[s - 1], time[hi]))
            kept = try_move(e, p, s, s - 1, b);
        if (!kept && s + 1 < P && !tied(time[s + 1], time[hi]))
            kept = try_move(e, p, s, s + 1, b);
    }
    return mark_moved(look, p, n, kept);
}

/* The stages neither lo nor tied busiest with hi, idlest first (ties in stage order),
 * at most max of them, into idle[]; how many. */
static uint32_t next_idlest(const tsl_plan_t *p, const double *time, uint32_t hi, uint32_t lo,
                            uint32_t *idle, uint32_t max)
{
    uint32_t n = 0;
    for (uint32_t s = 0; s < p->pp; s++) {
        if (s == lo || tied(time[s], time[hi]))
            continue;
        uint32_t at = n < max ? n++ : max;
        while (at > 0 && time[s] < time[idle[at - 1]]) {
            if (at < max)
                idle[at] = idle[at - 1];
            at--;
        }
        if (at < max)
            idle[at] = s;
    }
    return n;
}

/* The classes of block layer p's stage s holds, a bit each: a layer's kind with its
 * experts' bit beside it (DeepSeek-V3's dense and MoE decoder layers differ), the
 * embedding, head and MTP entries aside (every plan's first and last stages hold them);
 * under a V (ZBV, DualPipeV) the layers of its two parts (tsl_pipeline_v_parts: s and
 * 2P − 1 − s). */
static uint32_t stage_classes(const tsl_model_t *m, const tsl_plan_t *p, uint32_t s)
{
    uint32_t n[TSL_PLAN_MAX_STAGES], part[2 * TSL_PLAN_MAX_STAGES + 1], from[2], to[2];
    from[0] = p->stages[s].first_layer;
    to[0] = from[0] + p->stages[s].n_layers;
    from[1] = to[1] = 0;
    if (tsl_pipesim_sched_is_v(p->schedule)) {
        stage_counts(p, n);
        tsl_pipeline_v_parts(p->pp, n, part);
        from[0] = part[s];
        to[0] = part[s + 1];
        from[1] = part[2 * p->pp - 1 - s];
        to[1] = part[2 * p->pp - s];
    }
    uint32_t bits = 0;
    for (int k = 0; k < 2; k++)
        for (uint32_t l = from[k]; l < to[k] && l < m->n_layers; l++)
            if (tsl_layer_is_body(&m->layers[l]))
                bits |= 1u << (2 * m->layers[l].kind + (m->layers[l].experts != 0));
    return bits;
}

/*
 * One layer from each stage tied busiest to each of the NEXT_IDLEST idlest stages after
 * the idlest (on p's stage times now), but those next to it (the cut moves'), until one
 * is kept; the cuts around the stages it changed marked; whether one was; tried only
 * where the idlest stage holds a class of block layer the busiest does not
 * (stage_classes) — DeepSeek-V3's first, with its dense layers: moving a layer there
 * is no balance of the busiest stages' MoE layers, and under a V which idle stage
 * takes the layer decides where the short ranks sit (each rank runs parts s and
 * 2P − 1 − s). Without that test GPT3-175B's 25-stage plans (twenty stages tied
 * busiest, the idlest a 3-layer decoder stage) paid it for nothing: on 25x8 H100 at
 * pp 25, 37,245 → 42,768 layer-DP runs for the same plans. DeepSeek-V3 on 2048 H800,
 * pp 16 DualPipeV at EP 8, kept 5/4/3/4/.../4/3 (611.44 samples/s at batch 8192) where
 * a layer from stage 10 (tied busiest) to stage 2 (3 MoE layers, the third idlest)
 * does 612.55, and at batch 15360, pp 8 m 120, 10/7/7/8/8/8/7/8 (602.75) where such
 * moves reach 10/8/8/8/8/7/7/7 (630.87).
 */
static bool to_next_idlest(tsl_engine_t *e, tsl_plan_t *p, bool *look, refine_buf_t *b)
{
    const uint32_t P = p->pp;
    double time[TSL_PLAN_MAX_STAGES];
    uint32_t hi, lo, n[TSL_PLAN_MAX_STAGES], idle[NEXT_IDLEST];
    stage_extremes(p, time, &hi, &lo);
    stage_counts(p, n);
    const tsl_model_t *m = e->model;
    if ((stage_classes(m, p, lo) & ~stage_classes(m, p, hi)) == 0)
        return false; /* the idlest is of the busiest's kind: the busiest_to_idlest's */
    uint32_t k = next_idlest(p, time, hi, lo, idle, NEXT_IDLEST);
    bool kept = false;
    for (uint32_t i = 0; i < k && !kept; i++)
        for (uint32_t s = 0; s < P && !kept && !tsl_search_cancelled(e->hooks); s++)
            if (tied(time[s], time[hi]) && s + 1 != idle[i] && idle[i] + 1 != s)
                kept = try_move(e, p, s, idle[i], b);
    return mark_moved(look, p, n, kept);
}

/*
 * Local improvement with the engine as the judge, a cut at a time: each cut moved by
 * one layer either way, and where no cut is left to try one layer from the busiest
 * stage to the idlest and then from each other stage tied busiest (busiest_to_idlest),
 * then from each stage tied busiest to its idler neighbours (busiest_to_idler_neighbours)
 * and, where the idlest holds another kind of layer, to the next idlest (to_next_idlest);
 * each move kept when the plan searched again is faster, each held to the plan's
 * throughput (try_partition). A cut whose two moves were not kept is not tried again
 * until a kept move shifts it or a neighbour ("don't look bits": Bentley, "Fast
 * algorithms for geometric traveling salesman problems", ORSA J. Computing 4(4),
 * 1992), where improve_cuts' passes try all 2P − 1 moves again: a layer walking k
 * stages costs about 4k tries, not k passes. A kept move prices the whole schedule
 * again, so a cut left unlooked may have turned worth moving: a heuristic (assumed
 * good enough where it runs: after improve_cuts' passes ran out, and on the plans
 * returned beside the best, tsl_search_improve_top). At most IMPROVE_PASSES · P moves
 * kept.
 */
static void improve_marked(tsl_engine_t *e, tsl_plan_t *p, refine_buf_t *b)
{
    const uint32_t P = p->pp;
    bool look[TSL_PLAN_MAX_STAGES];
    uint32_t kept = 0;
    for (uint32_t s = 0; s + 1 < P; s++)
        look[s] = true;
    while (kept < IMPROVE_PASSES * P && !tsl_search_cancelled(e->hooks)) {
        bool any = false;
        for (uint32_t s = 0; s + 1 < P && !tsl_search_cancelled(e->hooks); s++) {
            if (!look[s])
                continue;
            look[s] = false;
            bool moved = try_move(e, p, s, s + 1, b);
            moved |= try_move(e, p, s + 1, s, b);
            if (moved)
                mark_cuts(look, (int32_t)s - 1, (int32_t)s + 1, P);
            kept += moved;
            any |= moved;
        }
        if (!any && !busiest_to_idlest(e, p, look, b) &&
            !busiest_to_idler_neighbours(e, p, look, b) && !to_next_idlest(e, p, look, b))
            return;
        kept += !any;
    }
}

/*
 * A run's fastest plan improved locally (tsl_search_rebalance) with the engine as the
 * judge, in passes: each cut moved by one layer either way, one layer from the busiest
 * stage to the idlest, and in a pass where none of those was kept from each other stage
 * tied busiest (other_busiest_to_idlest); passes while one is kept, at most
 * IMPROVE_PASSES, 2P − 1 tries a pass; whether they ran out (improve_marked then goes
 * on: GPT3-175B on 100k H100, pp 25 DualPipeV, ran out one cut short of a faster plan,
 * 36809.48 -> 36840.43 samples/s). Not improve_marked alone: its order of moves lands
 * elsewhere, and AMP's heterogeneous GPT2-345M on 3x4 V100 + 4 T4 then ended at 146.08
 * samples/s, not 147.21. The partition module balances contiguous stages under 1F1B's
 * objective from one plan's per-layer costs, but the engine picks the schedule per
 * partition, an interleaved or V schedule runs other layers together on a rank (a V's
 * rank s its parts s and 2P − 1 − s, pipeline.h tsl_pipeline_v_parts), and a
 * zero-bubble schedule's time is not its busiest stage's: GPT-2 345M on 16x16 A100 at
 * batch 32 kept ZB-V at 6/6/7/7 (320.40 samples/s) where 6/7/7/6 does 327.91,
 * BERT-Huge-32 on 8 RTX TITAN ZB-H1 at 18/16 where ZB-V at 17/17 is 1 % faster.
 */
static bool improve_cuts(tsl_engine_t *e, tsl_plan_t *p, refine_buf_t *b)
{
    const uint32_t P = p->pp;
    double time[TSL_PLAN_MAX_STAGES];
    bool improved = true;
    for (int pass = 0; pass < IMPROVE_PASSES && improved; pass++) {
        improved = false;
        uint32_t hi, lo;
        stage_extremes(p, time, &hi, &lo);
        for (uint32_t s = 0; s + 1 < P && !tsl_search_cancelled(e->hooks); s++) {
            improved |= try_move(e, p, s, s + 1, b);
            improved |= try_move(e, p, s + 1, s, b);
        }
        if (hi + 1 != lo && lo + 1 != hi && !tsl_search_cancelled(e->hooks))
            improved |= try_move(e, p, hi, lo, b);
        if (!improved && !tsl_search_cancelled(e->hooks))
            improved = other_busiest_to_idlest(e, p, time, hi, lo, b);
    }
    return improved;
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

/* Whether p's configuration has few enough partitions of model m to search every
 * one (the engine's max_cut is tsl_partition_max_cut's: asked of the model, not of
 * an engine, so that tsl_search_improve_top asks before it readies one). */
static bool few_of(const tsl_model_t *m, const tsl_plan_t *p)
{
    return tsl_partition_count(m->n_layers, tsl_partition_max_cut(m), p->pp) <=
           TSL_SEARCH_ALL_PARTITIONS;
}

static bool few(const tsl_engine_t *e, const tsl_plan_t *p)
{
    return few_of(e->model, p);
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
 * module's rounds), then the fastest improved locally (improve_cuts; improve_marked
 * where its passes run out). */
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
        if (best && !few(e, best) && !tsl_search_cancelled(e->hooks) && improve_cuts(e, best, &b))
            improve_marked(e, best, &b);
    }
    refine_buf_free(&b);
}

/* Engine e (made here where *made is false) set to cost plan p as the search did:
 * under p's knobs (tsl_search_plan_knobs over `run`, the knobs e was made with) and
 * node order (copied into order, which must outlive e's use). One engine serves the
 * plans of the cluster's own order; re-run only where the knobs differ (its memos are
 * keyed by their whole input, so they serve the next plan of the same knobs as they
 * do the next partition); -1 where it cannot be made. */
static int engine_for_plan(tsl_engine_t *e, bool *made, tsl_cost_knobs_t *run,
                           tsl_cost_knobs_t *last, const tsl_search_step_t *s, const tsl_plan_t *p,
                           uint16_t *order)
{
    tsl_err_t err = {0};
    if (*made && p->n_nodes) { /* a placement of its own: an engine of its own */
        tsl_engine_free(e);
        *made = false;
    }
    if (!*made) {
        if (tsl_engine_init(e, s->m, s->c, s->r, s->hooks, s->sp, &err) != 0) {
            tsl_engine_free(e);
            return -1;
        }
        *made = true;
        tsl_engine_share_walks(e, s->walks);
        *run = e->knobs;
        memset(last, 0, sizeof(*last));
        last->ep = UINT32_MAX; /* no plan's: the first is re-run */
    }
    memcpy(order, p->node_order, sizeof(p->node_order));
    e->node_order = p->n_nodes ? order : NULL;
    tsl_cost_knobs_t kn;
    memset(&kn, 0, sizeof(kn));
    tsl_search_plan_knobs(run, p, &kn);
    if (memcmp(&kn, last, sizeof(kn)) != 0) {
        tsl_engine_rerun(e, &kn);
        *last = kn;
    }
    return 0;
}

/* Whether plans a and b were costed under the same knobs of their runs
 * (tsl_search_plan_knobs: EP, expert TP, CP and its exchange, FP8). */
static bool same_knobs(const tsl_plan_t *a, const tsl_plan_t *b)
{
    tsl_cost_knobs_t none, ka, kb;
    memset(&none, 0, sizeof(none));
    memset(&ka, 0, sizeof(ka));
    memset(&kb, 0, sizeof(kb));
    tsl_search_plan_knobs(&none, a, &ka);
    tsl_search_plan_knobs(&none, b, &kb);
    return memcmp(&ka, &kb, sizeof(ka)) == 0;
}

/* Whether a and b are one plan: one configuration (batch, stages, micro-batches)
 * under the same knobs (same_knobs) and node order, cut at whole layers at the same
 * partition — what the engine costs to one answer, whose schedule and strategies it
 * picks itself. */
static bool same_plan(const tsl_plan_t *a, const tsl_plan_t *b)
{
    if (a->sublayer || b->sublayer || a->global_batch != b->global_batch || a->pp != b->pp ||
        a->n_micro != b->n_micro || a->n_nodes != b->n_nodes ||
        memcmp(a->node_order, b->node_order, a->n_nodes * sizeof(*a->node_order)) != 0)
        return false;
    for (uint32_t s = 0; s < a->pp; s++)
        if (a->stages[s].first_layer != b->stages[s].first_layer)
            return false;
    return same_knobs(a, b);
}

/* res->top (best first) without a plan that one before it is (same_plan): two
 * alternatives of one configuration and knobs improved locally may meet on one
 * partition, and the alternatives shown are distinct plans. */
static void drop_repeats(tsl_search_result_t *res)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < res->n_top; i++) {
        bool seen = false;
        for (uint32_t j = 0; j < n && !seen; j++)
            seen = same_plan(&res->top[j], &res->top[i]);
        if (seen)
            continue;
        if (n != i)
            res->top[n] = res->top[i];
        n++;
    }
    res->n_top = n;
}

/* Whether an engine readied for plan prev (NULL: none yet) is made or re-run to cost
 * p (engine_for_plan's rule: a placement of p's own, or other knobs). */
static bool readies(const tsl_plan_t *prev, const tsl_plan_t *p)
{
    return prev == NULL || p->n_nodes || !same_knobs(prev, p);
}

/*
 * The plans the search returns beside its best (res->top[1..)) improved locally
 * (improve_marked) once every engine run is done, each by an engine costing it as its
 * run did (engine_for_plan); the best was improved in its run. Each run improves only
 * its fastest plan (tsl_search_rebalance), so the alternatives shown kept the misses the
 * partition
 * module's candidates do not reach — GPT-2 345M on 16x16 A100 at batch 32: pp 8 ZB-V
 * at 5/3/.../3 (308.89 samples/s) where 4/4/3/.../3 does 312.91, pp 16 ZB-H1 at
 * 2 x 10 / 1 x 6 layers (253.99) where a layer walked to the last stage does 260.60.
 * Improving the top-k of every run instead cost a quarter more CPU over bench/search
 * (DeepSeek-V3 has an engine run per EP, CP and precision, each improving plans the
 * merged top-k then drops): here the top_k shown alone. A plan whose every partition
 * its run searched (few) has nothing to improve: no engine is readied for it (counted
 * in reruns_skipped where that would have made or re-run one). Two alternatives of one
 * configuration and knobs may be improved onto one partition: the re-sorted top keeps
 * the first (drop_repeats; test_improve_top_distinct).
 */
void tsl_search_improve_top(const tsl_search_step_t *s, tsl_search_result_t *res)
{
    refine_buf_t b;
    tsl_engine_t *e = calloc(1, sizeof(*e));
    tsl_cost_knobs_t run, last;
    uint16_t order[TSL_PLAN_MAX_ORDER_NODES];
    bool made = false, improved = false, ok = refine_buf_init(&b, s->m->n_layers);
    const tsl_plan_t *would_prev = NULL, *readied_prev = NULL;
    uint32_t would = 0, readied = 0;
    for (uint32_t i = 1; e && ok && i < res->n_top && !tsl_search_cancelled(s->hooks); i++) {
        tsl_plan_t *p = &res->top[i];
        if (!rebalanced(p) || p->sublayer)
            continue;
        /* engines readied had every plan been (reruns_skipped: those less those readied) */
        would += readies(would_prev, p);
        would_prev = p;
        if (few_of(s->m, p)) /* every partition searched in its run: nothing follows */
            continue;
        readied += readies(readied_prev, p);
        readied_prev = p;
        if (engine_for_plan(e, &made, &run, &last, s, p, order) != 0)
            continue;
        double before = p->samples_per_s;
        memset(&e->stats, 0, sizeof(e->stats));
        tsl_tried_clear(b.tried); /* another plan: perhaps other knobs */
        improve_marked(e, p, &b);
        improved |= p->samples_per_s > before;
        tsl_search_add_stats(&res->stats, &e->stats);
    }
    res->stats.reruns_skipped += would - readied;
    if (made)
        tsl_engine_free(e);
    refine_buf_free(&b);
    free(e);
    if (!improved)
        return;
    tsl_top_sort(res->top, res->n_top);
    drop_repeats(res);
    if (tsl_plan_better(&res->top[0], &res->best))
        res->best = res->top[0];
}
