/*
 * search_job.c — what Plan and EvaluatePlan do around their work on the pool
 * (search_job.h).
 */
#include "search_job.h"

#include <stdlib.h>

int tsl_search_job_decode(tsl_call_t *call, const Tessel__V1__PlanRequest *req,
                          tsl_search_job_t *job, tsl_err_t *err)
{
    const tsl_config_t *cfg = call->srv->cfg;
    const tsl_request_limits_t limits = {.max_batch = cfg->max_batch,
                                         .max_layers = cfg->max_layers,
                                         .max_devices = cfg->max_devices};
    if (tsl_plan_request_decode(req, &limits, &job->in, err) != 0)
        return -1;
    return tsl_registry_attach_profiles(call->srv->store, &job->in, &job->profiles, err);
}

void tsl_search_job_free(void *ud)
{
    tsl_search_job_t *job = ud;
    tsl_plan_input_free(&job->in);
    tsl_registry_profiles_free(&job->profiles);
    free(job);
}

static void on_cancel(tsl_call_t *call)
{
    tsl_search_job_t *job = call->ctx;
    atomic_store(&job->job.cancel, 1);
}

static void release(tsl_pool_job_t *pj)
{
    tsl_call_unref(((tsl_search_job_t *)pj)->call); /* may free the job (the call's ctx) */
}

static void queue_full(tsl_call_t *call)
{
    uint32_t queued, running;
    tsl_pool_counts(call->srv->pool, &queued, &running);
    tsl_call_fail(call, GRPC_STATUS_RESOURCE_EXHAUSTED,
                  "search queue full: %u running and %u waiting (pool_size=%u, queue_size=%u); "
                  "retry later",
                  running, queued, tsl_pool_threads(call->srv->pool),
                  tsl_pool_queue_cap(call->srv->pool));
}

void tsl_search_job_submit(tsl_call_t *call, tsl_search_job_t *job, void (*run)(tsl_pool_job_t *pj),
                           void (*accepted)(tsl_search_job_t *job))
{
    tsl_call_set_ctx(call, job, tsl_search_job_free);
    if (atomic_load(&call->srv->shutting_down)) {
        tsl_call_fail(call, GRPC_STATUS_UNAVAILABLE, "tesseld is shutting down; retry");
        return;
    }
    if (!tsl_pool_has_room(call->srv->pool)) {
        queue_full(call);
        return;
    }
    tsl_call_watch_close(call, on_cancel);
    job->call = call;
    job->job.run = run;
    job->job.release = release;
    if (accepted)
        accepted(job);
    tsl_call_ref(call);
    if (tsl_pool_submit(call->srv->pool, &job->job) != 0) {
        tsl_call_fail(call, GRPC_STATUS_UNAVAILABLE, "tesseld is shutting down; retry");
        tsl_call_unref(call);
    }
}

bool tsl_search_job_late(tsl_search_job_t *job)
{
    if (!tsl_call_deadline_passed(job->call))
        return false;
    atomic_store(&job->job.cancel, 1);
    return true;
}

void tsl_search_job_cancelled(tsl_call_t *call, const char *what, double ran_s)
{
    char ran[64] = "";
    if (ran_s >= 0)
        snprintf(ran, sizeof ran, " (after %.2f s of search)", ran_s);
    if (tsl_call_deadline_passed(call))
        tsl_call_fail(call, GRPC_STATUS_DEADLINE_EXCEEDED,
                      "%s cancelled: the client's deadline passed%s", what, ran);
    else if (!tsl_call_gone(call) && atomic_load(&call->srv->shutting_down))
        tsl_call_fail(call, GRPC_STATUS_UNAVAILABLE,
                      "tesseld is shutting down: %s cancelled after its grace period; retry", what);
    else
        tsl_call_fail(call, GRPC_STATUS_CANCELLED, "%s cancelled by the client", what);
}
