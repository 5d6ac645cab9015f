/*
 * search_memopt.c — H3T's space, for when memory is too tight for Galvatron's
 * strategies alone: ZeRO-3 over every device with per-layer memory switches
 * (rematerialisation, hidden-state offload, parameter partition, lazy prefetch)
 * and, as the global mode, optimizer/parameter offload to host memory, solved by
 * H3T's DP (memopt.h). Host memory per node is part of the validity check.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memopt.h"
#include "search_internal.h"

/* One per-device micro-batch b: the memopt DP over the whole model. */
static bool memopt_plan(const tsl_model_t *m, const tsl_cluster_t *c, const tsl_request_t *r,
                        uint64_t budget, uint32_t b, const atomic_int *cancel, tsl_memopt_ws_t *ws,
                        tsl_plan_t *plan, tsl_err_t *err)
{
    tsl_memopt_ctx_t ctx;
    tsl_memopt_ctx_init(&ctx);
    ctx.micro_batch = b;
    tsl_cost_knobs_t k; /* TF32 as the request's target runs it (knobs.tf32_off) */
    tsl_request_knobs(r, &k);
    tsl_knobs_on_cluster(&k, c);
    if (tsl_memopt_ctx_from_cluster(&ctx, c, 0, c->n_devices, budget, err) != 0 ||
        (r->fp32 && tsl_memopt_ctx_fp32(&ctx, c, 0, c->n_devices, k.tf32_off, err) != 0))
        return false;
    if (r->no_ckpt) /* rematerialisation is checkpointing by another name */
        ctx.allowed_switches &= ~(uint32_t)TSL_MEMOPT_REMAT;
    tsl_memopt_opts_t o;
    tsl_memopt_opts_init(&o, TSL_MEMOPT_SOLVER_DP);
    o.cancel = cancel; /* the DP polls it once per layer */
    tsl_memopt_plan_t *mp = malloc(sizeof(*mp));
    if (mp == NULL) {
        tsl_err_setc(err, TSL_E_NOMEM, "memopt: out of memory");
        return false;
    }
    bool ok =
        tsl_memopt_solve(m->layers, m->n_layers, &ctx, &o, ws, mp, NULL, err) == 0 && mp->valid;
    if (ok) {
        uint32_t N = c->n_devices;
        tsl_plan_init(plan);
        plan->valid = true;
        snprintf(plan->label, sizeof(plan->label), "tessel-h3t");
        plan->n_devices = N;
        plan->n_layers = m->n_layers;
        plan->pp = 1;
        plan->stages[0] = (tsl_plan_stage_t){.n_layers = m->n_layers,
                                             .n_devices = N,
                                             .inflight = 1,
                                             .time_s = mp->step_s,
                                             .time_nosync_s = mp->step_s,
                                             .peak_bytes = mp->gpu_peak_bytes};
        tsl_strategy_t sdp = {.n_levels = N > 1, .dim = {TSL_DIM_SDP}, .degree = {N}};
        for (uint32_t l = 0; l < m->n_layers; l++) {
            plan->layer[l] = sdp;
            plan->layer_switches[l] = mp->sw[l];
        }
        plan->global_batch = b * N;
        plan->micro_batch = b * N;
        plan->n_micro = 1;
        plan->iter_time_s = mp->step_s;
        plan->samples_per_s = plan->global_batch / mp->step_s;
        plan->tokens_per_s = plan->samples_per_s * m->tokens_per_sample;
        plan->peak_bytes = mp->gpu_peak_bytes;
        plan->budget_bytes = budget;
        plan->memopt = (uint8_t)(1 + mp->mode);
        plan->fp32 = r->fp32; /* priced so (tsl_memopt_ctx_fp32): the plan says it */
        plan->tf32_off = r->fp32 && k.tf32_off;
        plan->tf32 = r->fp32 && k.tf32;
        plan->fp16 = k.fp16; /* its 16 bits as the stack keeps them (exports) */
        plan->cpu_bytes_per_node = mp->cpu_bytes_per_node;
    }
    free(mp);
    return ok;
}

/* Appends "; the fallback to H3T is not tried: <why>" to err's no-fit message
 * (the main space's reason, kept) as TSL_E_NOFIT; returns -1. The earlier
 * message is cut only where the two do not fit in the buffer together: a fixed
 * cut at 300 characters broke "a larger batch (or the sweep) may fit" mid-word. */
__attribute__((format(printf, 2, 3))) static int h3t_not_tried(tsl_err_t *err, const char *fmt, ...)
{
    static const char lead[] = "; the fallback to H3T is not tried: ";
    char why[TSL_ERR_MAX], prev[TSL_ERR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    snprintf(prev, sizeof prev, "%s", err->msg);
    size_t need = sizeof lead - 1 + strlen(why), cap = TSL_ERR_MAX - 1;
    int keep = need < cap ? (int)(cap - need) : 0;
    return tsl_err_setc(err, TSL_E_NOFIT, "%.*s%s%s", keep, prev, lead, why);
}

/* H3T's space is ZeRO-3 over every device in one stage, in bf16 (or fp32: the
 * request's fp32 rate and 4-byte parameters, tsl_memopt_ctx_fp32), its own
 * rematerialisation and offload in place of the stacks': a request that switches
 * sharding off, fixes several stages, asks for Megatron-LM's activation offloading
 * (which refuses recompute) or an FP8/FP4 recipe (FP8 only, docs/tesselctl.md)
 * excludes it. Adds why to err's no-fit message (keeping its code) and returns
 * -1 then. */
static int request_excludes(const tsl_request_t *r, uint32_t N, tsl_err_t *err)
{
    const char *why = NULL;
    if (r->no_sdp && N > 1)
        why = "sharded data parallelism is switched off (no_sdp) and H3T's memory switches "
              "build on ZeRO-3";
    else if (r->pp > 1)
        why = "H3T's memory switches run in one pipeline stage and the request fixes more";
    else if (r->cpu_offload_layers)
        why = "the request offloads activations as Megatron-LM does (cpu_offload_layers), which "
              "runs without recompute, and H3T's switches rematerialise and offload their own way";
    else if (r->fp8_recipe)
        why = "the request asks for an FP8 recipe (fp8_recipe) and H3T's switches are priced "
              "in bf16";
    if (why == NULL)
        return 0;
    return h3t_not_tried(err, "%s", why);
}

int tsl_search_memopt(const tsl_model_t *m, const tsl_cluster_t *c, const tsl_request_t *r,
                      const tsl_search_hooks_t *hooks, tsl_search_result_t *res, tsl_err_t *err)
{
    if (request_excludes(r, c->n_devices, err) != 0)
        return TSL_SEARCH_ERR;
    uint32_t N = c->n_devices, maxb = r->max_batch ? r->max_batch : TSL_SEARCH_DEFAULT_MAX_BATCH;
    uint64_t budget = tsl_request_device_budget(r, tsl_cluster_min_device_mem(c));
    /* err holds why the main space has no plan (often not memory: a batch below
     * the device count); it is kept, as request_excludes keeps it */
    if (r->global_batch && r->global_batch % N != 0)
        return h3t_not_tried(err,
                             "its ZeRO-3 over all %u devices needs a batch that divides over "
                             "them (batch %u)",
                             N, r->global_batch);
    tsl_memopt_ws_t ws;
    if (tsl_memopt_ws_init(&ws, m->n_layers, TSL_MEMOPT_DEFAULT_MEM_LEVELS, 0, err) != 0)
        return -1;
    tsl_plan_t *plan = malloc(sizeof(*plan));
    tsl_err_t why = {0};
    int rc = -1;
    for (uint32_t b = r->global_batch ? r->global_batch / N : 1; plan && b * N <= maxb; b *= 2) {
        if (tsl_search_cancelled(hooks)) {
            rc = TSL_SEARCH_CANCELLED;
            break;
        }
        if (!memopt_plan(m, c, r, budget, b, hooks ? hooks->cancel : NULL, &ws, plan, &why)) {
            if (tsl_err_code(&why) == TSL_E_CANCELLED)
                rc = TSL_SEARCH_CANCELLED;
            break; /* larger micro-batches only need more memory */
        }
        if (!res->best.valid || plan->samples_per_s > res->best.samples_per_s)
            res->best = *plan;
        if (r->global_batch)
            break;
    }
    if (rc == TSL_SEARCH_CANCELLED) {
        tsl_err_setc(err, TSL_E_CANCELLED, "search: cancelled");
    } else if (res->best.valid) {
        res->top[0] = res->best;
        res->n_top = 1;
        rc = 0;
    } else {
        tsl_err_setc(err, TSL_E_NOFIT,
                     "memory: no plan fits %.2f GiB per device at sequence "
                     "length %u, not even with ZeRO-3, CPU offload and every H3T switch (%s)",
                     budget / 1073741824.0, m->tokens_per_sample,
                     why.msg[0] ? why.msg : "host memory or device memory exhausted");
    }
    free(plan);
    tsl_memopt_ws_free(&ws);
    return rc;
}
