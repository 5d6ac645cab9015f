/*
 * search_job.c — what Plan and EvaluatePlan do around their work on the pool
 * (search_job.h).
 */
#include "search_job.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "registry_cluster.h"

/* Where a registered cluster's figures came from and whom it left out, in the
 * log under the plan's fingerprint (the plan's own answer carries left_out). */
static void log_registered(const tsl_search_job_t *job, const tsl_registry_cluster_t *rc)
{
    size_t i;
    json_t *line;
    json_array_foreach(rc->sources, i, line)
    {
        tsl_log_info("plan %s: figures: %s", job->in.fingerprint, json_string_value(line));
    }
    for (i = 0; i < rc->n_left_out; i++)
        tsl_log_info("plan %s: left out: %s", job->in.fingerprint, rc->left_out[i]);
}

/* A `registered` cluster: assembled from the store, then decoded as the
 * request's cluster, its profiles attached and the workers left out named. */
static int decode_registered(tsl_call_t *call, const Tessel__V1__PlanRequest *req,
                             const tsl_request_limits_t *lim, tsl_search_job_t *job, tsl_err_t *err)
{
    tsl_registry_cluster_t rc;
    int ret = -1;
    if (tsl_request_check_registered(req->registered, err) != 0)
        return -1;
    if (tsl_registry_cluster_build(call->srv->store, (const char *const *)req->registered->nodes,
                                   req->registered->n_nodes, (int64_t)time(NULL),
                                   call->srv->cfg->worker_timeout_s, &rc, err) != 0)
        goto out;
    const tsl_request_registered_t reg = {
        .cluster_json = rc.json, .profile_keys = rc.key_ptrs, .n_profile_keys = rc.n_keys};
    if (tsl_plan_request_decode_registered(req, lim, &reg, &job->in, err) != 0 ||
        tsl_registry_attach_profiles(call->srv->store, &job->in, rc.profiles, rc.n_profiles,
                                     &job->profiles, err) != 0)
        goto out;
    memcpy(job->profiles.left_out, rc.left_out, sizeof rc.left_out);
    job->profiles.n_left_out = rc.n_left_out;
    job->figure_details = json_incref(rc.sources);
    log_registered(job, &rc);
    ret = 0;
out:
    tsl_registry_cluster_free(&rc);
    return ret;
}

int tsl_search_job_decode(tsl_call_t *call, const Tessel__V1__PlanRequest *req,
                          tsl_search_job_t *job, tsl_err_t *err)
{
    const tsl_config_t *cfg = call->srv->cfg;
    const tsl_request_limits_t limits = {.max_batch = cfg->max_batch,
                                         .max_layers = cfg->max_layers,
                                         .max_devices = cfg->max_devices};
    if (req->cluster_case == TESSEL__V1__PLAN_REQUEST__CLUSTER_REGISTERED)
        return decode_registered(call, req, &limits, job, err);
    if (tsl_plan_request_decode(req, &limits, &job->in, err) != 0)
        return -1;
    memset(&job->profiles, 0, sizeof job->profiles);
    return 0;
}

void tsl_search_job_free(void *ud)
{
    tsl_search_job_t *job = ud;
    tsl_plan_input_free(&job->in);
    tsl_registry_profiles_free(&job->profiles);
    json_decref(job->figure_details);
    free(job);
}

static void on_cancel(tsl_call_t *call)
{
    tsl_search_job_t *job = call->ctx;
    if (job->keep_on_cancel && job->keep_on_cancel(job))
        return;
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
        if (job->refused)
            job->refused(job);
        tsl_call_fail(call, GRPC_STATUS_UNAVAILABLE, "tesseld is shutting down; retry");
        tsl_call_unref(call);
    }
}

bool tsl_search_job_late(tsl_search_job_t *job)
{
    if (!tsl_call_deadline_passed(job->call))
        return false;
    if (!job->keep_on_cancel || !job->keep_on_cancel(job))
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
