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

void tsl_search_simulate(tsl_plan_t *p, bool slicer, bool paper)
{
    uint32_t P = p->pp, v = tsl_pipesim_sched_chunks(p->schedule, p->interleave);
    if (!p->valid || P < 2 || P > TSL_PIPESIM_MAX_STAGES ||
        (uint64_t)p->n_micro * v > TSL_SEARCH_SIM_MAX_MICRO)
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

/* Candidate sub-layer partitions for best's (B, P, m): compute-balanced over the
 * blocks, and AutoPipe's heuristic partitioner (Alg. 1 + master-stage moves).
 * Both keep the MTP layers with the head (partition.h max_cut): the partitioner
 * moves the blocks up to max_cut and the rest as the last block. */
static uint32_t sublayer_partitions(const tsl_model_t *sm, const tsl_cluster_t *c,
                                    const tsl_plan_t *best, tsl_cost_mode_t mode,
                                    uint32_t (*first)[TSL_PLAN_MAX_STAGES + 1])
{
    uint32_t n = 0, L = sm->n_layers, U = tsl_partition_max_cut(sm) + 1;
    tsl_partition_by_flops(sm, best->pp, first[n++]);
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
            memcpy(first[n], ap->first, best->pp * sizeof(uint32_t));
            first[n++][best->pp] = L;
        }
    }
    free(t);
    free(ap);
    return n;
}

/*
 * Re-partitions the best configuration at sub-layer granularity (attention and
 * FFN blocks as separate units); replaces res->best when that is faster. The
 * plan then indexes the blocks of tsl_sublayer_split(m) and has sublayer set.
 */
void tsl_search_sublayer(const tsl_model_t *m, const tsl_cluster_t *c, const tsl_request_t *r,
                         const tsl_search_hooks_t *hooks, tsl_search_result_t *res)
{
    const tsl_search_hooks_t stack = {.stack = hooks ? hooks->stack : NULL};
    tsl_plan_t *best = &res->best;
    if (!best->valid || best->pp < 2 || best->memopt)
        return;
    tsl_sublayer_model_t sm;
    if (tsl_sublayer_split(m, &sm, NULL) != 0)
        return;
    tsl_cluster_t pc;
    const tsl_cluster_t *cc = c;
    if (best->n_nodes && tsl_cluster_permute(c, best->node_order, &pc, NULL) == 0)
        cc = &pc;
    tsl_space_t sp = tsl_space_tessel(r);
    sp.fixed_pp = best->pp;
    tsl_engine_t e;
    uint32_t(*first)[TSL_PLAN_MAX_STAGES + 1] = malloc(2 * sizeof(*first));
    tsl_plan_t *cand = malloc(sizeof(*cand));
    if (first && cand && tsl_engine_init(&e, &sm.model, cc, r, &stack, &sp, NULL) == 0) {
        e.node_order = best->n_nodes ? best->node_order : NULL;
        uint32_t n = sublayer_partitions(&sm.model, cc, best, tsl_engine_cost_mode(&e), first);
        for (uint32_t i = 0; i < n; i++) {
            tsl_plan_init(cand);
            tsl_engine_eval(&e, best->global_batch, best->pp, best->n_micro, first[i], cand);
            if (cand->valid && cand->samples_per_s > best->samples_per_s * (1 + 1e-9)) {
                cand->sublayer = true;
                *best = *cand;
                res->top[0] = *cand;
            }
        }
        tsl_search_add_stats(&res->stats, &e.stats);
        tsl_engine_free(&e);
    }
    free(first);
    free(cand);
    if (cc == &pc)
        tsl_cluster_free(&pc);
    tsl_sublayer_free(&sm);
}
