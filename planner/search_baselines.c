/*
 * search_baselines.c — the hand-made strategies Tessel compares itself with,
 * each the same engine over a restricted space (no CKPT: these are the systems as
 * people run them out of the box).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "partition.h"
#include "search_internal.h"

static const struct {
    const char *name, *title;
} baseline_names[TSL_BASELINE_COUNT] = {
    [TSL_BASELINE_DP] = {"dp", "Pure DP (PyTorch DDP)"},
    [TSL_BASELINE_TP] = {"megatron-tp", "Pure TP (Megatron-LM)"},
    [TSL_BASELINE_PP] = {"gpipe-pp", "Pure PP (GPipe)"},
    [TSL_BASELINE_SDP] = {"zero3-sdp", "Pure SDP (ZeRO-3 / FSDP)"},
    [TSL_BASELINE_3D] = {"deepspeed-3d", "DeepSpeed 3D (2-way TP x 2-way PP x DP)"},
    [TSL_BASELINE_DP_TP] = {"dp+tp", "Galvatron DP+TP"},
    [TSL_BASELINE_DP_PP] = {"dp+pp", "Galvatron DP+PP"},
    [TSL_BASELINE_MEGATRON] = {"megatron-heuristic", "Megatron heuristics (AMP Sec. 4.1)"},
    [TSL_BASELINE_GALVATRON_BASE] = {"galvatron-base", "Galvatron-Base (no bi-objective)"},
};

const char *tsl_baseline_name(tsl_baseline_t b)
{
    return b < TSL_BASELINE_COUNT ? baseline_names[b].name : "?";
}

const char *tsl_baseline_title(tsl_baseline_t b)
{
    return b < TSL_BASELINE_COUNT ? baseline_names[b].title : "?";
}

static tsl_strategy_opts_t only_dims(bool dp, bool sdp, bool tp)
{
    tsl_strategy_opts_t o = tsl_strategy_opts_default();
    o.allow_dp = dp;
    o.allow_sdp = sdp;
    o.allow_tp = tp;
    o.allow_ckpt = false;
    o.allow_no_ckpt = true;
    return o;
}

/* TP innermost (inside a node), DP outside it: the layout Megatron places. */
static tsl_strategy_t tp_then_dp(uint32_t tp, uint32_t dp)
{
    tsl_strategy_t s;
    memset(&s, 0, sizeof(s));
    if (tp > 1) {
        s.dim[s.n_levels] = TSL_DIM_TP;
        s.degree[s.n_levels++] = tp;
    }
    if (dp > 1) {
        s.dim[s.n_levels] = TSL_DIM_DP;
        s.degree[s.n_levels++] = dp;
    }
    return s;
}

/* DeepSpeed 3D: TP 2 inside a node (innermost), PP 2, DP over the rest. Returns
 * false (with why) when the device count does not allow it. */
static bool space_3d(uint32_t N, tsl_space_t *sp, char *why, size_t cap)
{
    if (N < 4 || N % 4 != 0) {
        snprintf(why, cap, "needs a multiple of 4 devices (2 TP x 2 PP x DP), have %u", N);
        return false;
    }
    sp->fixed_pp = 2;
    sp->only_one_strategy = true;
    sp->only = tp_then_dp(2, N / 4);
    return true;
}

static bool baseline_space(tsl_baseline_t b, const tsl_model_t *m, uint32_t N, tsl_space_t *sp,
                           char *why, size_t cap)
{
    memset(sp, 0, sizeof(*sp));
    sp->label = baseline_names[b].name;
    switch (b) {
    case TSL_BASELINE_DP:
        sp->opts = only_dims(true, false, false);
        sp->fixed_pp = 1;
        break;
    case TSL_BASELINE_TP:
        sp->opts = only_dims(false, false, true);
        sp->fixed_pp = 1;
        break;
    case TSL_BASELINE_SDP:
        sp->opts = only_dims(false, true, false);
        sp->fixed_pp = 1;
        break;
    case TSL_BASELINE_DP_TP:
        sp->opts = only_dims(true, false, true);
        sp->fixed_pp = 1;
        break;
    case TSL_BASELINE_DP_PP: sp->opts = only_dims(true, false, false); break;
    case TSL_BASELINE_PP:
        sp->opts = only_dims(true, false, false);
        sp->fixed_pp = N;
        if (N > m->n_layers || N > TSL_PLAN_MAX_STAGES) {
            snprintf(why, cap, "%u stages needed, but the model has %u layers (limit %u stages)", N,
                     m->n_layers, TSL_PLAN_MAX_STAGES);
            return false;
        }
        break;
    case TSL_BASELINE_3D: sp->opts = only_dims(true, false, true); return space_3d(N, sp, why, cap);
    default: return false;
    }
    return true;
}

/* ---- Megatron-LM's heuristics (AMP Sec. 4.1) ---- */

static uint32_t min_gpus_per_node(const tsl_cluster_t *c)
{
    uint32_t g = UINT32_MAX;
    for (uint32_t i = 0; i < c->n_nodes; i++)
        if (c->nodes[i].n_gpus < g)
            g = c->nodes[i].n_gpus;
    return g;
}

/* One (tp, pp, micro-batch size b) candidate: TP inside a node, DP next, uniform
 * layers, m = B / (b·dp). Megatron picks its degrees by memory alone, so whether
 * the candidate fits is judged at the nearest batch the degrees can run
 * (*fits); plan->valid only when B itself divides. */
static void megatron_eval(const tsl_model_t *m, const tsl_cluster_t *c, const tsl_request_t *r,
                          tsl_cost_walks_t *walks, uint32_t B, uint32_t tp, uint32_t pp, uint32_t b,
                          tsl_plan_t *plan, bool *fits, tsl_search_stats_t *stats)
{
    uint32_t N = c->n_devices, dp = N / (tp * pp), first[TSL_PLAN_MAX_STAGES + 1];
    uint32_t per = b * dp, B_run = B / per ? B / per * per : per;
    tsl_space_t sp = {.label = baseline_names[TSL_BASELINE_MEGATRON].name,
                      .opts = only_dims(true, false, true),
                      .fixed_pp = pp,
                      .only_one_strategy = true,
                      .only = tp_then_dp(tp, dp),
                      .uniform_layers = true};
    tsl_engine_t e;
    plan->valid = false;
    if (tsl_engine_init(&e, m, c, r, NULL, &sp, NULL) == 0) {
        tsl_engine_share_walks(&e, walks);
        tsl_partition_uniform(m, pp, first);
        tsl_engine_eval(&e, B_run, pp, B_run / per, first, plan);
    }
    *fits = plan->valid;
    plan->valid = plan->valid && B_run == B;
    tsl_search_add_stats(stats, &e.stats);
    tsl_engine_free(&e);
}

/* For every micro-batch size: the smallest TP×PP whose memory fits, TP no wider
 * than the smallest node; that micro-batch size is dropped when the global batch
 * does not divide over its DP degree. The best of those over the sizes. */
static void megatron_baseline(const tsl_model_t *m, const tsl_cluster_t *c, const tsl_request_t *r,
                              const tsl_search_hooks_t *hooks, tsl_cost_walks_t *walks, uint32_t B,
                              tsl_search_result_t *res)
{
    /* at most one stage a layer, the MTP layers and the head one unit (partition.h) */
    uint32_t N = c->n_devices, gpn = min_gpus_per_node(c), units = tsl_partition_max_cut(m) + 1;
    tsl_plan_t *best = &res->baseline[TSL_BASELINE_MEGATRON], *cand = malloc(sizeof(*cand));
    if (cand == NULL)
        return;
    for (uint32_t b = 1; b <= B; b *= 2) { /* micro-batch sizes per replica */
        bool found = false;
        for (uint32_t k = 1; k <= N && !found; k++) {
            for (uint32_t tp = 1; tp <= k && tp <= gpn; tp++) {
                uint32_t pp = k / tp;
                if (k % tp || N % k || pp > units || pp > TSL_PLAN_MAX_STAGES)
                    continue;
                if (tsl_search_cancelled(hooks))
                    goto out;
                bool fits;
                tsl_plan_init(cand);
                megatron_eval(m, c, r, walks, B, tp, pp, b, cand, &fits, &res->stats);
                found |= fits;
                if (cand->valid && (!best->valid || cand->samples_per_s > best->samples_per_s))
                    *best = *cand;
            }
        }
    }
out:
    free(cand);
    if (!best->valid)
        snprintf(res->baseline_why[TSL_BASELINE_MEGATRON], sizeof(res->baseline_why[0]),
                 "OOM or the batch does not divide");
}

void tsl_search_baselines(const tsl_model_t *m, const tsl_cluster_t *c, const tsl_request_t *r,
                          const tsl_search_hooks_t *hooks, tsl_cost_walks_t *walks,
                          tsl_search_result_t *res)
{
    tsl_plan_init(&res->baseline[TSL_BASELINE_MEGATRON]);
    megatron_baseline(m, c, r, hooks, walks,
                      r->global_batch ? r->global_batch : res->best.global_batch, res);
    for (int b = 0; b < TSL_BASELINE_MEGATRON; b++) {
        tsl_plan_t *plan = &res->baseline[b];
        char *why = res->baseline_why[b];
        size_t cap = sizeof(res->baseline_why[b]);
        tsl_plan_init(plan);
        tsl_space_t sp;
        if (!baseline_space((tsl_baseline_t)b, m, c->n_devices, &sp, why, cap))
            continue;
        tsl_engine_t e;
        tsl_err_t err = {0};
        double lo = 0.6 + 0.4 * b / TSL_BASELINE_COUNT,
               hi = 0.6 + 0.4 * (b + 1) / TSL_BASELINE_COUNT;
        int rc = -1;
        if (tsl_engine_init(&e, m, c, r, hooks, &sp, &err) == 0) {
            tsl_engine_share_walks(&e, walks);
            rc = tsl_engine_run(&e, plan, NULL, 0, NULL, lo, hi, &err);
        }
        tsl_search_add_stats(&res->stats, &e.stats);
        tsl_engine_free(&e);
        if (rc == TSL_SEARCH_CANCELLED)
            return;
        if (rc != TSL_SEARCH_OK) {
            plan->valid = false;
            snprintf(why, cap, "%.90s", tsl_err_code(&err) == TSL_E_NOFIT ? "OOM" : err.msg);
        }
    }
}
