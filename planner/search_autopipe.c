/*
 * search_autopipe.c — a found plan's stage times through AutoPipe's 1F1B event
 * simulator (critical path, master stage) and its slicer (Alg. 2), which splits
 * the first micro-batches' forwards to cut the pipeline's start-up.
 */
#include <stdlib.h>

#include "autopipe.h"
#include "pipesim.h"
#include "search_internal.h"

void tsl_search_simulate(tsl_plan_t *p, bool slicer)
{
    uint32_t P = p->pp;
    if (!p->valid || P < 2 || P > TSL_PIPESIM_MAX_STAGES || p->n_micro > TSL_PIPESIM_MAX_MICRO)
        return;
    double fwd[TSL_PLAN_MAX_STAGES], bwd[TSL_PLAN_MAX_STAGES], sync[TSL_PLAN_MAX_STAGES],
        p2p[TSL_PLAN_MAX_STAGES];
    for (uint32_t s = 0; s < P; s++) {
        const tsl_plan_stage_t *st = &p->stages[s];
        fwd[s] = st->fwd_s;
        bwd[s] = st->time_nosync_s - st->p2p_s - st->fwd_s;
        sync[s] = st->time_s - st->p2p_s - st->fwd_s;
        p2p[s] = st->p2p_s / 2;   /* stage p2p counts both directions */
    }
    tsl_pipesim_in_t in = {.n_stages = P, .n_micro = p->n_micro, .fwd_s = fwd, .bwd_s = bwd,
                           .bwd_sync_s = sync, .p2p_s = p2p};
    size_t bytes = tsl_pipesim_ws_bytes(P, p->n_micro, 0);
    void *ws = malloc(bytes);
    tsl_pipesim_out_t out;
    if (ws && tsl_pipesim_run(&in, ws, bytes, &out, NULL) == 0) {
        p->sim_iter_time_s = out.iter_s;
        p->master_stage = out.master_stage;
    }
    free(ws);
    tsl_autopipe_slice_cfg_t cfg = {0};
    tsl_autopipe_slice_t sl;
    if (slicer && tsl_autopipe_slice(&in, &cfg, &sl, NULL) == 0 && sl.applied) {
        p->n_sliced = sl.n_sliced;
        p->sliced_iter_time_s = sl.sliced_iter_s;
    }
}
