/*
 * handlers_plan.c — Planner.Plan: validate, answer from the cache, or queue a
 * search on the pool and stream its progress.
 *
 * On the completion-queue thread: decode and check every field (api/request.h
 * → INVALID_ARGUMENT naming the field and the limit), look the fingerprint up in
 * the store (a fresh plan comes back at once with cached = true, and the notes
 * and model name of this request rather than the stored one's, unless force), then either
 * refuse at once with RESOURCE_EXHAUSTED when the pool and its queue are full,
 * or send a "queued" progress event and submit the job.
 *
 * On a pool thread: the search, with progress events (at most 10 a second;
 * one may be dropped while the previous is still being sent) and the
 * planner's cancel flag, which is set when the client cancels, its deadline
 * passes (RECV_CLOSE_ON_SERVER, and checked again at each progress callback),
 * or the daemon stops after its grace period. A finished search is stored
 * (request and result JSON) and its plan sent as the last event. A failed
 * search answers by its error code through api/status.h with the planner's
 * message: no plan within the memory budget (NOFIT) is OUT_OF_RANGE —
 * the request is well-formed, the cluster cannot hold it; running out of
 * memory RESOURCE_EXHAUSTED; a broken invariant INTERNAL. A search that stops
 * early (CANCELLED) answers DEADLINE_EXCEEDED, CANCELLED or UNAVAILABLE by why
 * it stopped.
 *
 * Identical requests coalesce: a Plan (without force) whose fingerprint a
 * search is already computing does not queue a second search; it waits on the
 * running one (a "queued" event, then nothing until it ends) and gets the same
 * plan with cached = true (with its own request's notes and model name: two
 * requests of one fingerprint may differ in them, an MTP depth a target leaves
 * out building the same model, one model named twice), or the same error. Such a search no longer stops
 * when its first caller cancels or passes its deadline while another still
 * waits: the waiting calls would lose what was already done. Once none of its
 * calls waits any more (each joined call's cancel and deadline are watched too),
 * it stops. The daemon's stop cancels it as before, and its waiting calls answer
 * UNAVAILABLE.
 */
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cost.h"
#include "figures_json.h"
#include "handlers.h"
#include "log.h"
#include "plan_json.h"
#include "request.h"
#include "search_job.h"
#include "status.h"

#define PROGRESS_MIN_INTERVAL_S 0.1

typedef struct follower {
    tsl_call_t *call; /* a reference of ours */
    /* its request's notes and model name (handlers.h tsl_plan_asker_t) */
    char note[sizeof((tsl_plan_input_t *)0)->note];
    char model_name[sizeof((tsl_plan_input_t *)0)->model.name];
    struct follower *next;
} follower_t;

typedef struct plan_job {
    tsl_search_job_t s; /* first (search_job.h) */
    double last_progress_s;
    /* Under running_mu: in the running list, and the calls waiting on it. */
    bool listed;
    follower_t *followers;
    struct plan_job *next_running;
} plan_job_t;

/* The searches queued or running, by fingerprint: few (pool + queue size). */
static pthread_mutex_t running_mu = PTHREAD_MUTEX_INITIALIZER;
static plan_job_t *running;

static double mono_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void send_progress(tsl_call_t *call, double fraction, const char *phase)
{
    Tessel__V1__PlanProgress pr = TESSEL__V1__PLAN_PROGRESS__INIT;
    Tessel__V1__PlanEvent ev = TESSEL__V1__PLAN_EVENT__INIT;
    pr.fraction = fraction < 0 ? 0 : fraction > 1 ? 1 : fraction;
    pr.phase = (char *)phase;
    ev.event_case = TESSEL__V1__PLAN_EVENT__EVENT_PROGRESS;
    ev.progress = &pr;
    tsl_call_send(call, &ev.base);
}

/* A search that failed: by its code (api/status.c). The planner reports "nothing
 * fits" as NOFIT (OUT_OF_RANGE); a request only the search finds bad (a batch no
 * allowed strategy splits: search_engine.c no_fit_error) as TSL_E_INVALID, which is
 * INVALID_ARGUMENT here as it is exit 2 for plan --local. Mapping it to NOFIT told
 * the caller to raise the budget. A failure without a code stays NOFIT. */
static void answer_failed(tsl_call_t *call, const tsl_err_t *err)
{
    tsl_errcode_t code = tsl_err_code(err);
    if (code == TSL_E_NONE)
        code = TSL_E_NOFIT;
    tsl_call_fail(call, tsl_errcode_status(code), "%s", err->msg);
}

/* ---- coalescing ---------------------------------------------------------- */

static bool still_waits(const tsl_call_t *call)
{
    return !tsl_call_gone(call) && !tsl_call_deadline_passed(call);
}

/* Under running_mu: a caller still waits on the search besides its first one. */
static bool followers_wait(const plan_job_t *job)
{
    for (const follower_t *f = job->followers; f; f = f->next)
        if (still_waits(f->call))
            return true;
    return false;
}

static bool keep_on_cancel(tsl_search_job_t *sj)
{
    pthread_mutex_lock(&running_mu);
    bool keep = followers_wait((plan_job_t *)sj);
    pthread_mutex_unlock(&running_mu);
    return keep;
}

/* A waiting call cancelled or passed its deadline (its RECV_CLOSE, CQ thread):
 * when the search's first caller has gone too and no other call waits, the
 * search stops. Without this, a search whose callers all left after a second
 * one joined ran to its end for nobody, holding a pool thread. */
static void on_follower_close(tsl_call_t *call)
{
    pthread_mutex_lock(&running_mu);
    for (plan_job_t *job = running; job; job = job->next_running) {
        bool follows = false;
        for (follower_t *f = job->followers; f && !follows; f = f->next)
            follows = f->call == call;
        if (follows && !still_waits(job->s.call) && !followers_wait(job))
            atomic_store(&job->s.job.cancel, 1);
        if (follows)
            break;
    }
    pthread_mutex_unlock(&running_mu);
}

static void list_running(plan_job_t *job)
{
    pthread_mutex_lock(&running_mu);
    job->listed = true;
    job->next_running = running;
    running = job;
    pthread_mutex_unlock(&running_mu);
}

/* Out of the list, with the calls that waited on it (theirs to answer). */
static follower_t *unlist_running(plan_job_t *job)
{
    pthread_mutex_lock(&running_mu);
    for (plan_job_t **pp = &running; job->listed && *pp; pp = &(*pp)->next_running)
        if (*pp == job) {
            *pp = job->next_running;
            break;
        }
    job->listed = false;
    follower_t *fs = job->followers;
    job->followers = NULL;
    pthread_mutex_unlock(&running_mu);
    return fs;
}

/* true when call now waits on a search of the same fingerprint; in: its request. */
static bool follow_running(tsl_call_t *call, const tsl_plan_input_t *in)
{
    const char *fingerprint = in->fingerprint;
    follower_t *f = calloc(1, sizeof *f);
    if (!f)
        return false;
    snprintf(f->note, sizeof f->note, "%s", in->note);
    snprintf(f->model_name, sizeof f->model_name, "%s", in->model.name);
    unsigned n = 0;
    pthread_mutex_lock(&running_mu);
    plan_job_t *job = running;
    while (job && strcmp(job->s.in.fingerprint, fingerprint) != 0)
        job = job->next_running;
    if (job) {
        tsl_call_ref(call);
        f->call = call;
        f->next = job->followers;
        job->followers = f;
        for (follower_t *g = f; g; g = g->next)
            n++;
    }
    pthread_mutex_unlock(&running_mu);
    if (!job) {
        free(f);
        return false;
    }
    tsl_call_watch_close(call, on_follower_close);
    send_progress(call, 0, "queued");
    tsl_log_info("plan %s: joins the search already running (%u waiting on it)", fingerprint, n);
    return true;
}

/* rc: 0 the search's plan is in row; 1 cancelled; -1 failed with err. */
static void answer_followers(follower_t *fs, int rc, const tsl_stored_plan_t *row,
                             const tsl_err_t *err, double took)
{
    while (fs) {
        follower_t *next = fs->next;
        tsl_plan_asker_t asked = {fs->note, fs->model_name};
        if (rc == 0)
            tsl_handlers_answer_plan_event(fs->call, row, &asked);
        else if (rc > 0)
            tsl_search_job_cancelled(fs->call, "search", took);
        else
            answer_failed(fs->call, err);
        tsl_call_unref(fs->call);
        free(fs);
        fs = next;
    }
}

static void refused(tsl_search_job_t *sj)
{
    answer_followers(unlist_running((plan_job_t *)sj), 1, NULL, NULL, -1);
}

/* ---- pool thread --------------------------------------------------------- */

/* Every progress event of a search goes through here: at most one per
 * PROGRESS_MIN_INTERVAL_S, so a client sees at most 10 a second. */
static void rate_limited_progress(plan_job_t *job, double fraction, const char *phase)
{
    double now = mono_s();
    if (now - job->last_progress_s < PROGRESS_MIN_INTERVAL_S)
        return;
    job->last_progress_s = now;
    send_progress(job->s.call, fraction, phase);
}

static void on_progress(void *ud, double fraction, const char *phase)
{
    plan_job_t *job = ud;
    if (!tsl_search_job_late(&job->s))
        rate_limited_progress(job, fraction, phase);
}

/* Where the plan's figures came from, as tesselctl plan --local says it
 * (figures_json.h): the registered profiles the layers were priced by, or the
 * built-in figures; and the registered workers the cluster left out. */
static json_t *figures_of(const tsl_search_job_t *sj)
{
    const tsl_registry_profiles_t *ps = &sj->profiles;
    const char *left[TSL_REGISTRY_MAX_LEFT_OUT];
    for (size_t i = 0; i < ps->n_left_out; i++)
        left[i] = ps->left_out[i];
    tsl_profile_use_t none;
    memset(&none, 0, sizeof none);
    char line[sizeof ps->line];
    tsl_figure_sources_t fs = {.use = &none,
                               .line = line,
                               .left_out = left,
                               .n_left_out = ps->n_left_out,
                               .details = sj->figure_details};
    if (ps->n) {
        fs.profile = ps->p[0];
        fs.use = &ps->use[0];
        fs.profile_name = "registered";
        snprintf(line, sizeof line, "%s", ps->line);
    } else {
        tsl_profile_describe(NULL, &none, line, sizeof line);
    }
    return tsl_figures_json(&fs);
}

/* The summary columns of the store row, from the search. */
static void row_fill(tsl_stored_plan_t *row, const plan_job_t *job, const tsl_search_result_t *res,
                     const tsl_plan_head_t *h)
{
    memset(row, 0, sizeof *row);
    snprintf(row->fingerprint, sizeof row->fingerprint, "%s", job->s.in.fingerprint);
    snprintf(row->model_name, sizeof row->model_name, "%s", job->s.in.model.name);
    row->n_devices = job->s.in.cluster.n_devices;
    row->global_batch = res->best.global_batch;
    row->iter_time_s = res->best.iter_time_s;
    row->samples_per_s = res->best.samples_per_s;
    row->peak_bytes = res->best.peak_bytes;
    row->search_time_s = h->search_time_s;
    row->created_unix = h->created_unix;
    row->cost_model_version = TSL_COST_MODEL_VERSION;
    row->request_json = job->s.in.request_json;
}

/* The plan document is made once: its text is stored, and the answer is made
 * from it in memory (handlers_cache.c). */
static void store_and_answer(plan_job_t *job, const tsl_search_result_t *res, double search_s)
{
    tsl_server_t *srv = job->s.call->srv;
    const tsl_plan_input_t *in = &job->s.in;
    tsl_plan_head_t head;
    tsl_plan_head_fill(&head, res, &in->model, &in->cluster, in->fingerprint);
    head.search_time_s = search_s;
    head.created_unix = (int64_t)time(NULL);
    json_t *figures = figures_of(&job->s);
    json_t *doc =
        figures ? tsl_search_result_to_json(res, &in->model, &in->request, &head, figures) : NULL;
    json_decref(figures);
    /* the note plan --local prints, stored with the plan (Plan.notes): the notes
     * of the request stored with it; a later request of the same fingerprint is
     * answered with its own (answer_cached, answer_followers) */
    if (doc && in->note[0])
        json_object_set_new(doc, "notes", tsl_notes_json(in->note));
    char *text = doc ? json_dumps(doc, JSON_INDENT(2)) : NULL;
    if (!text) {
        json_decref(doc);
        tsl_err_t oom = {0};
        tsl_err_setc(&oom, TSL_E_NOMEM, "plan: out of memory");
        tsl_call_fail(job->s.call, GRPC_STATUS_RESOURCE_EXHAUSTED, "%s", oom.msg);
        answer_followers(unlist_running(job), -1, NULL, &oom, search_s);
        return;
    }
    rate_limited_progress(job, 1.0, "store");
    tsl_stored_plan_t row;
    row_fill(&row, job, res, &head);
    row.result_json = text;
    tsl_err_t err = {0};
    tsl_plan_cache_forget(srv->plans, row.fingerprint);
    if (tsl_store_put_plan(srv->store, &row, &err) != 0)
        tsl_log_error("plan %s: not stored: %s", row.fingerprint, err.msg);
    else if (srv->metrics)
        tsl_metrics_set_plans(srv->metrics, tsl_store_count_plans(srv->store));
    /* Stored first: a request arriving after this finds the row, not the list. */
    follower_t *fs = unlist_running(job);
    tsl_handlers_answer_new_plan(job->s.call, &row, doc);
    answer_followers(fs, 0, &row, NULL, search_s);
    json_decref(doc);
    free(text);
}

static void job_run(tsl_pool_job_t *pj)
{
    plan_job_t *job = (plan_job_t *)pj;
    tsl_call_t *call = job->s.call;
    bool gone = tsl_call_gone(call) || tsl_call_deadline_passed(call);
    if (atomic_load(&pj->cancel) || (gone && !keep_on_cancel(&job->s))) {
        tsl_search_job_cancelled(call, "search", -1);
        answer_followers(unlist_running(job), 1, NULL, NULL, -1);
        return;
    }
    tsl_search_result_t *res = calloc(1, sizeof *res);
    if (!res) {
        tsl_err_t oom = {0};
        tsl_err_setc(&oom, TSL_E_NOMEM, "search: out of memory");
        tsl_call_fail(call, GRPC_STATUS_RESOURCE_EXHAUSTED, "%s", oom.msg);
        answer_followers(unlist_running(job), -1, NULL, &oom, -1);
        return;
    }
    rate_limited_progress(job, 0, "search");
    tsl_search_hooks_t hooks = {.progress = on_progress, .progress_ud = job, .cancel = &pj->cancel};
    tsl_err_t err = {0};
    double t0 = mono_s();
    int rc =
        tsl_search(&job->s.in.model, &job->s.in.cluster, &job->s.in.request, &hooks, res, &err);
    double took = mono_s() - t0;
    if (call->srv->metrics)
        tsl_metrics_search_time(call->srv->metrics, took);
    if (rc == TSL_SEARCH_CANCELLED || tsl_err_code(&err) == TSL_E_CANCELLED) {
        tsl_search_job_cancelled(call, "search", took);
        answer_followers(unlist_running(job), 1, NULL, NULL, took);
    } else if (rc != TSL_SEARCH_OK) {
        answer_failed(call, &err);
        answer_followers(unlist_running(job), -1, NULL, &err, took);
    } else {
        store_and_answer(job, res, took);
    }
    free(res);
}

/* ---- completion-queue thread --------------------------------------------- */

/* true when answered from the store. */
static bool answer_cached(tsl_call_t *call, const plan_job_t *job)
{
    tsl_stored_plan_t row;
    memset(&row, 0, sizeof row);
    tsl_err_t err = {0};
    int rc = tsl_store_plan_head(call->srv->store, job->s.in.fingerprint, &row, &err);
    if (rc < 0)
        tsl_log_warnx("plan %s: cache lookup failed: %s", job->s.in.fingerprint, err.msg);
    bool hit = rc == 0 && !row.stale;
    tsl_plan_asker_t asked = {job->s.in.note, job->s.in.model.name};
    /* a stored copy that cannot be read is a miss: the search's plan replaces it */
    if (hit && tsl_handlers_try_plan_event(call, &row, &asked, &err) != 0) {
        tsl_log_warnx("plan %s: the stored plan cannot be read (%s); searching again",
                      job->s.in.fingerprint, err.msg);
        hit = false;
    }
    if (call->srv->metrics)
        tsl_metrics_cache(call->srv->metrics, hit);
    return hit;
}

/* Accepted: the client sees it queued before the pool can start it. */
static void queued(tsl_search_job_t *sj)
{
    plan_job_t *job = (plan_job_t *)sj;
    send_progress(sj->call, 0, "queued");
    job->last_progress_s = mono_s();
    job->s.keep_on_cancel = keep_on_cancel;
    job->s.refused = refused;
    list_running(job);
}

void tsl_handle_plan(tsl_call_t *call)
{
    Tessel__V1__PlanRequest *req =
        (Tessel__V1__PlanRequest *)tsl_call_read(call, &tessel__v1__plan_request__descriptor);
    if (!req)
        return;
    plan_job_t *job = calloc(1, sizeof *job);
    tsl_err_t err = {0};
    if (!job) {
        tsl_call_fail(call, GRPC_STATUS_RESOURCE_EXHAUSTED, "Plan: out of memory");
    } else if (tsl_search_job_decode(call, req, &job->s, &err) != 0) {
        tsl_call_fail_err(call, &err);
        tsl_search_job_free(job);
    } else if (!job->s.in.force && answer_cached(call, job)) {
        tsl_search_job_free(job);
    } else if (!job->s.in.force && follow_running(call, &job->s.in)) {
        tsl_search_job_free(job);
    } else {
        tsl_search_job_submit(call, &job->s, job_run, queued);
    }
    protobuf_c_message_free_unpacked(&req->base, NULL);
}
