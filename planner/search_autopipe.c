/*
 * search_autopipe.c — a found plan's stage times through AutoPipe's 1F1B event
 * simulator (critical path, master stage) and its slicer (Alg. 2), which splits
 * the first micro-batches' forwards to cut the pipeline's start-up.
 */
#include <stdlib.h>
#include <string.h>

#include "autopipe.h"
#include "partition.h"
#include "pipesim.h"
#include "search_internal.h"
#include "sublayer.h"

/* Up to what the simulator takes (TSL_PIPESIM_MAX_MICRO), not the search's cap
 * (TSL_SEARCH_SIM_MAX_MICRO): this runs once per reported plan, not per
 * candidate. Measured at m·v = 8192 on 64 stages (Llama3-405B, eval): 0.2 s
 * interleaved, 1.3 s plain 1F1B with the slicer's up to P − 1 more runs, under
 * 100 MB peak (docs/search-space.md). A plan it cannot simulate keeps
 * sim_iter_time_s 0; the client says why (print.c print_simulated). */
void tsl_search_simulate(tsl_plan_t *p, bool slicer, bool paper)
{
    uint32_t P = p->pp, v = tsl_pipesim_sched_chunks(p->schedule, p->interleave);
    if (!p->valid || P < 2 || P > TSL_PIPESIM_MAX_STAGES ||
        (uint64_t)p->n_micro * v > TSL_PIPESIM_MAX_MICRO)
        return;
    tsl_plan_sim_t *sim = malloc(sizeof(*sim));
    if (sim == NULL)
        return;
    tsl_plan_sim_input(p, paper, sim);
    const tsl_pipesim_in_t in = sim->in;
    size_t bytes = tsl_pipesim_in_ws_bytes(&in);
    void *ws = bytes ? malloc(bytes) : NULL;
    tsl_pipesim_out_t out;
    if (ws && tsl_pipesim_run(&in, ws, bytes, &out, NULL) == 0) {
        p->sim_iter_time_s = out.iter_s;
        p->master_stage = out.master_stage;
    }
    free(ws);
    tsl_autopipe_slice_cfg_t cfg = {0};
    tsl_autopipe_slice_t sl;
    /* the slicer splits plain 1F1B's start-up; interleaving already shrinks it;
     * DeepSpeed's engine (rendezvous p2p) runs whole micro-batches only */
    if (slicer && v == 1 && !p->schedule && !in.p2p_rendezvous &&
        tsl_autopipe_slice(&in, &cfg, &sl, NULL) == 0 && sl.applied) {
        p->n_sliced = sl.n_sliced;
        p->sliced_iter_time_s = sl.sliced_iter_s;
    }
    free(sim);
}

/* ---- sub-layer granularity (AutoPipe III-A) ---- */

/* Per-block times for AutoPipe's partitioner: forward from FLOPs at the slowest
 * device's rate, backward twice that, p2p of a cut after the block (sent in the
 * layout of best's first boundary: its stage 0's last layer). */
static void block_times(const tsl_model_t *sm, const tsl_cluster_t *c, const tsl_plan_t *best,
                        tsl_cost_mode_t mode, double *fwd, double *bwd, double *cut)
{
    const tsl_strategy_t *sender =
        &best->layer[best->stages[0].first_layer + best->stages[0].n_layers - 1];
    tsl_cost_env_t env; /* its device_flops: the slowest device's rate */
    tsl_cost_env_init(&env, c, 0, c->n_devices, NULL);
    double rate = env.device_flops;
    uint32_t G = c->n_devices / best->pp;
    for (uint32_t k = 0; k < sm->n_layers; k++) {
        fwd[k] = sm->layers[k].fwd_flops * best->micro_batch / (rate * G);
        bwd[k] = 2 * fwd[k];
        cut[k] = k + 1 < sm->n_layers
                     ? tsl_cost_stage_p2p_s(c, mode, 0, G, sender, sm->layers[k + 1].bnd_act_bytes,
                                            best->micro_batch) /
                           2
                     : 0;
    }
}

/* AutoPipe's heuristic partitioner (Alg. 1 + master-stage moves) over the blocks
 * for best's (B, P, m) into first; false when it has none. It keeps the MTP
 * layers with the head (partition.h max_cut): it moves the blocks up to max_cut
 * and the rest as the last block. Up to m = TSL_SEARCH_SIM_MAX_MICRO only, not
 * the simulator's TSL_PIPESIM_MAX_MICRO: it simulates once per move, and it runs
 * in every refine (each precision's and knob set's engine), so past 1024 it
 * would cost the search several times its time for no better plan measured
 * (Llama3-405B on 128x8 H100, batch 16384: best m 2048, 1.95 s CPU capped,
 * 7.5 s lifted, the same plan; docs/search-space.md); a plan past it is cut by
 * FLOPs (tsl_partition_by_flops) as every other candidate is. */
static bool autopipe_partition(const tsl_model_t *sm, const tsl_cluster_t *c,
                               const tsl_plan_t *best, tsl_cost_mode_t mode, uint32_t *first)
{
    uint32_t L = sm->n_layers, U = tsl_partition_max_cut(sm) + 1;
    bool ok = false;
    double *t = malloc(3 * (size_t)L * sizeof(double));
    tsl_autopipe_result_t *ap = malloc(sizeof(*ap));
    if (t && ap && best->pp <= TSL_PIPESIM_MAX_STAGES &&
        best->n_micro <= TSL_SEARCH_SIM_MAX_MICRO) {
        block_times(sm, c, best, mode, t, t + L, t + 2 * L);
        for (uint32_t k = U; k < L; k++) { /* the MTP layers and the head: one block */
            t[U - 1] += t[k];
            t[L + U - 1] += t[L + k];
        }
        t[2 * L + U - 1] = 0;
        tsl_autopipe_in_t in = {.n_blocks = U,
                                .fwd_s = t,
                                .bwd_s = t + L,
                                .cut_p2p_s = t + 2 * L,
                                .n_stages = best->pp,
                                .n_micro = best->n_micro};
        if (tsl_autopipe_partition(&in, ap, NULL) == 0) {
            memcpy(first, ap->first, best->pp * sizeof(uint32_t));
            first[best->pp] = L;
            ok = true;
        }
    }
    free(t);
    free(ap);
    return ok;
}

/* The layer DP over plan's (B, P, m) with the blocks cut at first, on the
 * sub-layer engine se; *plan is replaced when that beats *bar (samples/s, the
 * best of the candidates so far), which it then raises. An interleave or
 * zero-bubble schedule whose lower bound (search_eval.c) cannot beat *bar is not
 * costed: it could not change the answer. */
static void sublayer_try(tsl_engine_t *se, tsl_plan_t *plan, double *bar, const uint32_t *first,
                         tsl_plan_t *cand)
{
    tsl_plan_init(cand);
    se->bar_samples_per_s = *bar;
    tsl_engine_eval(se, plan->global_batch, plan->pp, plan->n_micro, first, cand);
    se->bar_samples_per_s = 0;
    if (cand->valid && cand->samples_per_s > *bar * (1 + 1e-9)) {
        cand->sublayer = true;
        *plan = *cand;
        *bar = cand->samples_per_s;
    }
}

static bool splittable(const tsl_plan_t *p)
{
    return p->valid && p->pp >= 2 && !p->memopt;
}

void tsl_search_sublayer(tsl_engine_t *e, tsl_plan_t *plans, uint32_t n, double floor)
{
    bool any = false;
    for (uint32_t i = 0; i < n; i++)
        any |= splittable(&plans[i]) && !plans[i].sublayer;
    if (!any)
        return;
    tsl_sublayer_model_t sm;
    if (tsl_sublayer_split(e->model, &sm, NULL) != 0)
        return;
    const tsl_search_hooks_t hooks = {.cancel = e->hooks ? e->hooks->cancel : NULL,
                                      .stack = e->hooks ? e->hooks->stack : NULL};
    tsl_space_t sp = *e->space;
    tsl_engine_t se;
    memset(&se, 0, sizeof(se));
    uint32_t first[TSL_PLAN_MAX_STAGES + 1];
    tsl_plan_t *cand = malloc(sizeof(*cand));
    if (cand && tsl_engine_init(&se, &sm.model, e->cluster, e->req, &hooks, &sp, NULL) == 0) {
        tsl_engine_rerun(&se, &e->knobs);  /* the precision, CP and EP of e's run */
        tsl_engine_borrow_figures(&se, e); /* and the walks it made of the cluster */
        se.node_order = e->node_order;
        se.ws_lent = e->ws;        /* e is idle through the step */
        se.prune_below_bar = true; /* a plan that does not beat the bar replaces none */
        double bar = floor;
        for (uint32_t i = 0; i < n; i++)
            if (plans[i].valid && plans[i].samples_per_s > bar)
                bar = plans[i].samples_per_s;
        /* the fastest on AutoPipe's partition (a simulation per move: the costly
         * step, as it was taken for the search's best alone before) and its
         * compute-balanced one; then every other candidate on its compute-balanced
         * cut, each against the best so far */
        uint32_t b = 0;
        for (uint32_t i = 1; i < n; i++)
            if (plans[i].valid &&
                (!plans[b].valid || plans[i].samples_per_s > plans[b].samples_per_s))
                b = i;
        for (uint32_t k = 0; k <= n && !tsl_search_cancelled(&hooks); k++) {
            uint32_t i = k == 0 ? b : k - 1;
            if ((k > 0 && i == b) || !splittable(&plans[i]) || plans[i].sublayer)
                continue;
            const tsl_plan_t ref = plans[i]; /* block_times reads its strategies */
            if (k == 0 &&
                autopipe_partition(&sm.model, se.cluster, &ref, tsl_engine_cost_mode(&se), first))
                sublayer_try(&se, &plans[i], &bar, first, cand);
            tsl_partition_by_flops(&sm.model, ref.pp, first);
            sublayer_try(&se, &plans[i], &bar, first, cand);
        }
        tsl_search_add_stats(&e->stats, &se.stats);
    }
    tsl_engine_free(&se);
    free(cand);
    tsl_sublayer_free(&sm);
}
