/*
 * handlers_eval.c — Planner.EvaluatePlan: a given plan's predicted figures
 * (planner/eval.h), beside what the search finds for the same batch unless
 * no_search; the answer's result_json is the document `tesselctl eval --json`
 * prints (common/eval_doc.h builds both).
 *
 * On the completion-queue thread: the request is checked exactly as Plan
 * checks it (api/request.h: limits, physical bounds, the planner's
 * validation → INVALID_ARGUMENT naming the field), registered-worker profiles
 * attached as for Plan, and plan_json read (a <plan> object or a whole plan
 * document; its global batch held to max_batch). Evaluating is cheap, but the
 * comparison is a search, so the whole evaluation runs as a job on the pool
 * (RESOURCE_EXHAUSTED when it is full), cancelled like a Plan search when the
 * client cancels, its deadline passes or the daemon stops.
 *
 * Answers: OK with fits = true and the document; a plan over its memory
 * budget is an answer too (fits = false, why = the stage, its peak and the
 * budget, result_json its figures); a plan that cannot run at all is
 * INVALID_ARGUMENT with the planner's reason (the layer and the degree); a
 * cancelled search DEADLINE_EXCEEDED / CANCELLED / UNAVAILABLE as for Plan.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

#include "eval_doc.h"
#include "handlers.h"
#include "registry_plan.h"
#include "request.h"
#include "status.h"

typedef struct eval_job {
    tsl_pool_job_t job; /* first: the pool hands us this pointer */
    tsl_call_t *call;
    tsl_plan_input_t in;
    tsl_registry_profiles_t profiles; /* borrowed by in.cluster */
    tsl_plan_t given;
    bool no_search;
} eval_job_t;

static void job_free(void *ud)
{
    eval_job_t *job = ud;
    tsl_plan_input_free(&job->in);
    tsl_registry_profiles_free(&job->profiles);
    free(job);
}

/* ---- pool thread --------------------------------------------------------- */

/* The search's progress callback is where a passed deadline is noticed. */
static void on_progress(void *ud, double fraction, const char *phase)
{
    eval_job_t *job = ud;
    (void)fraction;
    (void)phase;
    if (tsl_call_deadline_passed(job->call))
        atomic_store(&job->job.cancel, 1);
}

static void answer_cancelled(tsl_call_t *call)
{
    if (tsl_call_deadline_passed(call))
        tsl_call_fail(call, GRPC_STATUS_DEADLINE_EXCEEDED,
                      "eval cancelled: the client's deadline passed during the search");
    else if (!tsl_call_gone(call) && atomic_load(&call->srv->shutting_down))
        tsl_call_fail(call, GRPC_STATUS_UNAVAILABLE,
                      "tesseld is shutting down: eval cancelled after its grace period; retry");
    else
        tsl_call_fail(call, GRPC_STATUS_CANCELLED, "eval cancelled by the client");
}

static void answer(tsl_call_t *call, json_t *doc, bool fits, const char *why)
{
    Tessel__V1__EvaluatePlanResponse resp = TESSEL__V1__EVALUATE_PLAN_RESPONSE__INIT;
    char *text = doc ? json_dumps(doc, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    if (text == NULL) {
        tsl_call_fail(call, GRPC_STATUS_RESOURCE_EXHAUSTED, "EvaluatePlan: out of memory");
        return;
    }
    resp.result_json = text;
    resp.fits = fits;
    resp.why = (char *)(why ? why : "");
    tsl_call_reply(call, &resp.base);
    free(text);
}

static void job_run(tsl_pool_job_t *pj)
{
    eval_job_t *job = (eval_job_t *)pj;
    tsl_call_t *call = job->call;
    if (atomic_load(&pj->cancel) || tsl_call_gone(call) || tsl_call_deadline_passed(call)) {
        answer_cancelled(call);
        return;
    }
    tsl_search_hooks_t hooks = {.progress = on_progress, .progress_ud = job, .cancel = &pj->cancel};
    tsl_err_t err = {0};
    json_t *doc = NULL;
    int rc = tsl_eval_document(&job->in.model, &job->in.cluster, &job->in.request, &job->given,
                               !job->no_search, &hooks, &doc, &err);
    if (rc == 0)
        answer(call, doc, true, NULL);
    else if (tsl_err_code(&err) == TSL_E_NOFIT && doc)
        answer(call, doc, false, err.msg);
    else if (tsl_err_code(&err) == TSL_E_CANCELLED)
        answer_cancelled(call);
    else
        tsl_call_fail_err(call, &err);
    json_decref(doc);
}

static void job_release(tsl_pool_job_t *pj)
{
    tsl_call_unref(((eval_job_t *)pj)->call); /* may free the job (the call's ctx) */
}

/* ---- completion-queue thread --------------------------------------------- */

static void on_cancel(tsl_call_t *call)
{
    eval_job_t *job = call->ctx;
    atomic_store(&job->job.cancel, 1);
}

/* plan_json into job->given; INVALID naming plan_json on failure. */
static int read_plan(const char *text, uint32_t max_batch, eval_job_t *job, tsl_err_t *err)
{
    if (text == NULL || *text == '\0')
        return tsl_err_set(err, "plan_json: missing; give a <plan> object or a plan document");
    json_error_t je;
    json_t *doc = json_loads(text, JSON_REJECT_DUPLICATES, &je);
    if (doc == NULL)
        return tsl_err_set(err, "plan_json: not JSON: line %d: %s", je.line, je.text);
    int rc = tsl_eval_plan_of_json(doc, &job->given, err);
    json_decref(doc);
    if (rc != 0)
        return tsl_err_prefix(err, "plan_json");
    if (job->given.global_batch > max_batch)
        return tsl_err_set(err, "plan_json: global_batch %u is above the limit max_batch=%u",
                           job->given.global_batch, max_batch);
    return 0;
}

static void submit(tsl_call_t *call, eval_job_t *job)
{
    tsl_call_set_ctx(call, job, job_free);
    if (atomic_load(&call->srv->shutting_down)) {
        tsl_call_fail(call, GRPC_STATUS_UNAVAILABLE, "tesseld is shutting down; retry");
        return;
    }
    if (!tsl_pool_has_room(call->srv->pool)) {
        tsl_call_fail(call, GRPC_STATUS_RESOURCE_EXHAUSTED,
                      "search queue full (pool_size=%u, queue_size=%u); retry later",
                      tsl_pool_threads(call->srv->pool), tsl_pool_queue_cap(call->srv->pool));
        return;
    }
    tsl_call_watch_close(call, on_cancel);
    job->call = call;
    job->job.run = job_run;
    job->job.release = job_release;
    tsl_call_ref(call);
    if (tsl_pool_submit(call->srv->pool, &job->job) != 0) {
        tsl_call_fail(call, GRPC_STATUS_UNAVAILABLE, "tesseld is shutting down; retry");
        tsl_call_unref(call);
    }
}

/* Checks the request as Plan does, then the plan; 0 or -1 with err. */
static int decode(tsl_call_t *call, const Tessel__V1__EvaluatePlanRequest *req, eval_job_t *job,
                  tsl_err_t *err)
{
    const tsl_config_t *cfg = call->srv->cfg;
    const tsl_request_limits_t limits = {.max_batch = cfg->max_batch,
                                         .max_layers = cfg->max_layers,
                                         .max_devices = cfg->max_devices};
    if (req->request == NULL)
        return tsl_err_set(err, "request: missing; give the model, the cluster and the options");
    if (tsl_plan_request_decode(req->request, &limits, &job->in, err) != 0)
        return -1;
    if (tsl_registry_attach_profiles(call->srv->store, &job->in, &job->profiles, err) != 0)
        return -1;
    job->no_search = req->no_search;
    return read_plan(req->plan_json, cfg->max_batch, job, err);
}

void tsl_handle_evaluate_plan(tsl_call_t *call)
{
    Tessel__V1__EvaluatePlanRequest *req = (Tessel__V1__EvaluatePlanRequest *)tsl_call_read(
        call, &tessel__v1__evaluate_plan_request__descriptor);
    if (!req)
        return;
    eval_job_t *job = calloc(1, sizeof *job);
    tsl_err_t err = {0};
    if (!job) {
        tsl_call_fail(call, GRPC_STATUS_RESOURCE_EXHAUSTED, "EvaluatePlan: out of memory");
    } else if (decode(call, req, job, &err) != 0) {
        tsl_call_fail_err(call, &err);
        job_free(job);
    } else {
        submit(call, job);
    }
    protobuf_c_message_free_unpacked(&req->base, NULL);
}
