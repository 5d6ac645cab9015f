/*
 * handlers_trials.c — Trials.StartTrial, GetTrial, ListTrials, WatchTrial
 * (docs/api.md, "Trials"); the worker side (Registry.Assignments, ReportTrial)
 * is handlers_assign.c, the running of trials trial_run.c.
 *
 * StartTrial checks every field (INVALID_ARGUMENT naming it), finds the stored
 * plan (NOT_FOUND), takes the plan and top_k − 1 alternatives (top_k beyond
 * the alternatives is clamped, logged), sorts out those the executor cannot
 * run (trial_sched.h: a ZB-V schedule, FP8, ...; when none runs,
 * FAILED_PRECONDITION naming each plan's reason), picks online workers for
 * each of the others (none fit the plan asked for: FAILED_PRECONDITION saying
 * what is missing; none fit an alternative: it is skipped saying so), and
 * stores one trial per plan in one batch: pending for those that run, skipped
 * with the reason for the others (store_trials.h), which the reply lists. Pending
 * trials whose workers are free start at once, the others when the trial
 * before them in the batch is over.
 *
 * A stale plan (store.h: a profile it used changed since, or another cost model
 * priced it) is tried all the same: a trial measures the plan as given, which is
 * what a person asking for it wants. The reply says so (plan_stale), because the
 * trials are held to the stored prediction, not to what this tesseld would say.
 *
 * link_probe: no plan; nodes names two hosts whose workers are online (else
 * FAILED_PRECONDITION: which host is unknown, offline or has no GPU); one trial
 * of kind "link", world 2, rank 0 on the first host's first GPU, rank 1 on the
 * second's, started like any other (trial_run.h).
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cost.h"
#include "fingerprint.h"
#include "handlers.h"
#include "handlers_check.h"
#include "log.h"
#include "trial_run.h"
#include "trial_sched.h"

#define MAX_ITERATIONS 100000u
#define MAX_WARMUP     10000u
#define MAX_NODES      256u
#define MAX_TIMEOUT_S  604800.0 /* a week */
#define MAX_TOP_K      17u      /* the plan and the planner's most alternatives */
#define LIST_DEFAULT   50u
#define LIST_MAX       1000u

/* ---- field checks --------------------------------------------------------------------------- */

static bool check_nodes(tsl_call_t *call, const Tessel__V1__StartTrialRequest *req)
{
    char field[32];
    if (req->n_nodes > MAX_NODES) {
        tsl_call_fail(call, GRPC_STATUS_INVALID_ARGUMENT, "nodes: %zu names; at most %u",
                      req->n_nodes, MAX_NODES);
        return false;
    }
    for (size_t i = 0; i < req->n_nodes; i++) {
        snprintf(field, sizeof field, "nodes[%zu]", i);
        if (!tsl_check_token(call, field, req->nodes[i], 127))
            return false;
        for (size_t j = 0; j < i; j++)
            if (strcmp(req->nodes[j], req->nodes[i]) == 0) {
                tsl_call_fail(call, GRPC_STATUS_INVALID_ARGUMENT, "%s: '%s' is given twice", field,
                              req->nodes[i]);
                return false;
            }
    }
    return true;
}

/* A request's plan_fingerprint by the one rule (common/fingerprint.h: 16 hex
 * digits, either case), lowercased in place as the store keeps it, so that a
 * fingerprint in capitals names the plan that GetPlan finds; anything else
 * answers INVALID_ARGUMENT naming plan_fingerprint (and false). */
static bool plan_fingerprint(tsl_call_t *call, char *fp)
{
    char low[TSL_FINGERPRINT_LEN + 1];
    if (tsl_fingerprint_parse(fp, low, NULL) != 0) {
        tsl_call_fail(call, GRPC_STATUS_INVALID_ARGUMENT,
                      "plan_fingerprint: '%.40s' is not 16 hex digits (as ListPlans shows them)",
                      fp);
        return false;
    }
    memcpy(fp, low, sizeof low);
    return true;
}

static bool check_start(tsl_call_t *call, Tessel__V1__StartTrialRequest *req)
{
    if (req->link_probe) {
        if (req->plan_fingerprint[0] || req->top_k > 1) {
            tsl_call_fail(call, GRPC_STATUS_INVALID_ARGUMENT,
                          "%s: a link probe runs no plan (leave plan_fingerprint empty, top_k 0)",
                          req->plan_fingerprint[0] ? "plan_fingerprint" : "top_k");
            return false;
        }
        if (req->n_nodes != 2) {
            tsl_call_fail(call, GRPC_STATUS_INVALID_ARGUMENT,
                          "nodes: a link probe names exactly two hostnames (%zu given)",
                          req->n_nodes);
            return false;
        }
    } else if (!plan_fingerprint(call, req->plan_fingerprint))
        return false;
    if (!tsl_check_max(call, "top_k", req->top_k, 1000) ||
        !tsl_check_max(call, "iterations", req->iterations, MAX_ITERATIONS) ||
        !tsl_check_max(call, "warmup", req->warmup, MAX_WARMUP))
        return false;
    if (!isfinite(req->timeout_s) || req->timeout_s < 0 || req->timeout_s > MAX_TIMEOUT_S) {
        tsl_call_fail(call, GRPC_STATUS_INVALID_ARGUMENT,
                      "timeout_s: %g must be 0 (600 s) to %.0f seconds", req->timeout_s,
                      MAX_TIMEOUT_S);
        return false;
    }
    return check_nodes(call, req);
}

/* ---- StartTrial ----------------------------------------------------------------------------- */

typedef struct workers {
    tsl_arena_t arena;
    tsl_reg_worker_t *w;
    size_t n, cap;
} workers_t;

/* A copy of one listed worker (the listing's strings are borrowed). */
static int keep_worker(void *ud, const tsl_reg_worker_t *w)
{
    workers_t *ws = ud;
    tsl_arena_t *a = &ws->arena;
    if (ws->n == ws->cap) {
        size_t cap = ws->cap ? 2 * ws->cap : 16;
        tsl_reg_worker_t *v = realloc(ws->w, cap * sizeof *v);
        if (!v)
            return -1;
        ws->w = v;
        ws->cap = cap;
    }
    tsl_reg_worker_t *o = &ws->w[ws->n];
    tsl_reg_device_t *devs = tsl_arena_alloc(a, (w->n_devices ? w->n_devices : 1) * sizeof *devs);
    *o = *w;
    o->hostname = tsl_arena_strdup(a, w->hostname);
    o->state = tsl_arena_strdup(a, w->state);
    if (!devs || !o->hostname || !o->state)
        return -1;
    for (uint32_t d = 0; d < w->n_devices; d++) {
        devs[d] = w->devices[d];
        devs[d].model = tsl_arena_strdup(a, w->devices[d].model);
        devs[d].uuid = "";
        if (!devs[d].model)
            return -1;
    }
    o->devices = devs;
    o->driver_version = o->cuda_version = o->nccl_version = o->version = "";
    ws->n++;
    return 0;
}

/* The plan object of index i (0: "plan"; i: alternatives[i-1]) and its device count. */
static const json_t *plan_at(const json_t *doc, uint32_t i, uint32_t *world)
{
    const json_t *p = i == 0 ? json_object_get(doc, "plan")
                             : json_array_get(json_object_get(doc, "alternatives"), i - 1);
    size_t k;
    const json_t *st;
    *world = 0;
    json_array_foreach(json_object_get(p, "stages"), k, st)
    {
        json_int_t end = json_integer_value(json_object_get(st, "first_device")) +
                         json_integer_value(json_object_get(st, "n_devices"));
        if (end > (json_int_t)*world && end <= (json_int_t)TSL_TRIAL_MAX_WORLD)
            *world = (uint32_t)end;
    }
    return p;
}

typedef struct start_ctx {
    tsl_call_t *call;
    const Tessel__V1__StartTrialRequest *req;
    tsl_stored_plan_t plan;
    json_t *doc;
    workers_t ws;
    tsl_trial_t *trials;
    uint32_t n;
} start_ctx_t;

/* How every trial runs, plan or link: the request's counts or their defaults, and tcp on
 * cpu for simulated workers, nccl on cuda for real ones. */
static void run_settings(tsl_trial_t *t, const Tessel__V1__StartTrialRequest *req, bool sim)
{
    t->iterations = req->iterations ? req->iterations : 10;
    t->warmup = req->warmup ? req->warmup : 3;
    t->timeout_s = req->timeout_s > 0 ? req->timeout_s : 600;
    snprintf(t->comm, sizeof t->comm, "%s", sim ? "tcp" : "nccl");
    snprintf(t->devops, sizeof t->devops, "%s", sim ? "cpu" : "cuda");
    t->simulated = sim;
}

/* What a trial of plan p is held to: its iteration, or for ZB-H1 the 1F1B figure of
 * the same stages (trial_sched.h: a trial runs ZB-H1 as 1F1B). */
static double trial_predicted_s(const json_t *p)
{
    const char *sched = json_string_value(json_object_get(p, "schedule"));
    double f1b = json_number_value(json_object_get(p, "iter_time_1f1b_s"));
    if (sched && !strcmp(sched, "zbh1") && f1b > 0)
        return f1b;
    return json_number_value(json_object_get(p, "iter_time_s"));
}

/* What every trial of the batch records, run or skipped: plan i (p, world devices),
 * its place in the batch, how it runs and what it is held to. false after answering. */
static bool fill_record(start_ctx_t *c, uint32_t i, const json_t *p, uint32_t world,
                        const char *batch_id, uint64_t seed, bool sim)
{
    tsl_trial_t *t = &c->trials[i];
    tsl_trials_new_id("t-", t->trial_id);
    snprintf(t->batch_id, sizeof t->batch_id, "%s", batch_id);
    t->batch_pos = i;
    snprintf(t->plan_fingerprint, sizeof t->plan_fingerprint, "%s", c->plan.fingerprint);
    t->plan_index = i;
    snprintf(t->plan_label, sizeof t->plan_label, "%s",
             json_string_value(json_object_get(p, "label")) ?: "");
    t->world_size = world;
    run_settings(t, c->req, sim);
    t->global_batch = (uint32_t)json_integer_value(json_object_get(p, "global_batch"));
    t->predicted_iter_time_s = trial_predicted_s(p);
    t->predicted_peak_bytes = (uint64_t)json_integer_value(json_object_get(p, "peak_bytes"));
    t->seed = seed;
    t->created_unix = (int64_t)time(NULL);
    if (!(t->plan_json = json_dumps(p, JSON_COMPACT))) {
        tsl_call_fail(c->call, GRPC_STATUS_RESOURCE_EXHAUSTED, "StartTrial: out of memory");
        return false;
    }
    return true;
}

/* Trial i of the batch, a plan the executor runs: its ranks on the workers picked.
 * 0; 1 when no online workers fit it (why filled, nothing kept); -1 after answering. */
static int make_trial(start_ctx_t *c, uint32_t i, const char *batch_id, uint64_t seed, char *why,
                      size_t why_cap)
{
    tsl_trial_t *t = &c->trials[i];
    uint32_t world;
    const json_t *p = plan_at(c->doc, i, &world);
    tsl_sched_need_t need;
    tsl_err_t err = {0};
    bool sim = false;
    if (tsl_sched_need_from_request(c->plan.request_json, p, world, &need, &err) != 0) {
        tsl_call_fail_err(c->call, &err);
        return -1;
    }
    tsl_sched_pick_t *pick = calloc(world, sizeof *pick);
    if (pick == NULL) {
        tsl_sched_need_free(&need);
        tsl_call_fail(c->call, GRPC_STATUS_RESOURCE_EXHAUSTED, "StartTrial: out of memory");
        return -1;
    }
    int rc = tsl_sched_pick(&need, c->ws.w, c->ws.n, (const char *const *)c->req->nodes,
                            c->req->n_nodes, pick, &sim, why, why_cap);
    tsl_sched_need_free(&need);
    if (rc != 0) {
        free(pick);
        return 1;
    }
    if (!(t->ranks = calloc(world, sizeof *t->ranks)))
        tsl_call_fail(c->call, GRPC_STATUS_RESOURCE_EXHAUSTED, "StartTrial: out of memory");
    if (!t->ranks || !fill_record(c, i, p, world, batch_id, seed, sim)) {
        free(pick);
        return -1;
    }
    t->n_ranks = world;
    for (uint32_t r = 0; r < world; r++) {
        const tsl_reg_worker_t *w = &c->ws.w[pick[r].worker];
        tsl_trial_rank_t *k = &t->ranks[r];
        k->rank = r;
        snprintf(k->worker_id, sizeof k->worker_id, "%s", w->worker_id);
        snprintf(k->hostname, sizeof k->hostname, "%s", w->hostname);
        k->device_index = pick[r].device_index;
        for (uint32_t d = 0; d < w->n_devices; d++)
            if (r == 0 && w->devices[d].index == k->device_index)
                snprintf(t->gpu_model, sizeof t->gpu_model, "%s", w->devices[d].model);
    }
    free(pick);
    return 0;
}

/* Trial i of the batch, a plan that does not run (the executor cannot run it, or no
 * online workers fit it): recorded skipped with its reason (store_trials.h), no ranks,
 * in the run settings of the batch's other trials (sim). false after answering. */
static bool make_skipped(start_ctx_t *c, uint32_t i, const char *batch_id, uint64_t seed, bool sim,
                         const tsl_sched_scope_t *scope)
{
    tsl_trial_t *t = &c->trials[i];
    uint32_t world;
    const json_t *p = plan_at(c->doc, i, &world);
    if (!fill_record(c, i, p, world, batch_id, seed, sim))
        return false;
    snprintf(t->status, sizeof t->status, "skipped");
    tsl_sched_skip_reason(scope, t->error, sizeof t->error);
    return true;
}

/* The batch size: top_k (0 = 1) clamped to the plan and its alternatives. */
static uint32_t batch_size(start_ctx_t *c)
{
    uint32_t avail = 1 + (uint32_t)json_array_size(json_object_get(c->doc, "alternatives"));
    uint32_t k = c->req->top_k ? c->req->top_k : 1;
    if (k > avail) {
        tsl_log_info("StartTrial %s: top_k %u clamped to %u (the plan and its %u alternatives)",
                     c->plan.fingerprint, k, avail, avail - 1);
        k = avail;
    }
    return k;
}

/* Which plans of the batch the executor runs (trial_sched.h), into scope[c->n], how
 * many in *n_runs. false after answering: a stored plan without stages (INTERNAL), or
 * none runs (FAILED_PRECONDITION naming each plan's reason). */
static bool batch_scope(start_ctx_t *c, tsl_sched_scope_t *scope, uint32_t *n_runs)
{
    tsl_err_t err = {0};
    uint32_t world;
    char why[1024];
    for (uint32_t i = 0; i < c->n; i++)
        if (!json_is_object(plan_at(c->doc, i, &world)) || world == 0) {
            tsl_call_fail(c->call, GRPC_STATUS_INTERNAL,
                          "plan %s: plan %u of the stored document has no stages",
                          c->plan.fingerprint, i);
            return false;
        }
    if (tsl_sched_batch_scope(c->doc, c->n, scope, n_runs, &err) != 0) {
        tsl_call_fail(c->call, GRPC_STATUS_RESOURCE_EXHAUSTED, "StartTrial: %s", err.msg);
        return false;
    }
    if (*n_runs == 0) {
        tsl_sched_none_runs(c->plan.fingerprint, scope, c->n, why, sizeof why);
        tsl_call_fail(c->call, GRPC_STATUS_FAILED_PRECONDITION, "%s", why);
        return false;
    }
    return true;
}

/* The batch's trials: those that run first (their workers picked), then the skipped
 * ones in the same run settings. A plan the executor runs but no online workers fit
 * (trial_sched.h, tsl_sched_unplaced): the plan asked for refuses the batch
 * (FAILED_PRECONDITION saying what is missing), an alternative is skipped naming it;
 * a batch left with none that runs is refused naming each reason. false after
 * answering. */
static bool make_batch(start_ctx_t *c, tsl_sched_scope_t *scope, uint32_t n_runs,
                       const char *batch_id)
{
    uint64_t seed = (uint64_t)time(NULL) ^ (uint64_t)rand();
    bool sim = false, have_sim = false;
    char why[600], answer[1024];
    for (uint32_t i = 0; i < c->n; i++) {
        if (!scope[i].runs)
            continue;
        int rc = make_trial(c, i, batch_id, seed, why, sizeof why);
        if (rc < 0)
            return false;
        if (rc == 1 && tsl_sched_unplaced(scope, i, why, &n_runs, answer, sizeof answer) != 0) {
            tsl_call_fail(c->call, GRPC_STATUS_FAILED_PRECONDITION, "%s", answer);
            return false;
        }
        if (rc == 0 && !have_sim)
            sim = c->trials[i].simulated, have_sim = true;
    }
    if (n_runs == 0) {
        tsl_sched_none_runs(c->plan.fingerprint, scope, c->n, answer, sizeof answer);
        tsl_call_fail(c->call, GRPC_STATUS_FAILED_PRECONDITION, "%s", answer);
        return false;
    }
    for (uint32_t i = 0; i < c->n; i++)
        if (!scope[i].runs && !make_skipped(c, i, batch_id, seed, sim, &scope[i]))
            return false;
    return true;
}

/* The skipped trials as stored (GetTrial's Trial: status "skipped", error its reason),
 * into resp; false when out of memory. */
static bool skipped_to_proto(start_ctx_t *c, tsl_arena_t *a, Tessel__V1__StartTrialResponse *resp)
{
    tsl_err_t err = {0};
    resp->skipped = tsl_arena_alloc(a, c->n * sizeof *resp->skipped);
    if (resp->skipped == NULL)
        return false;
    for (uint32_t i = 0; i < c->n; i++) {
        tsl_trial_t t;
        if (strcmp(c->trials[i].status, "skipped") != 0)
            continue;
        if (tsl_trials_get(c->call->srv->store, c->trials[i].trial_id, &t, &err) != 0)
            return false;
        resp->skipped[resp->n_skipped] = tsl_trial_to_proto(a, &t);
        tsl_trial_clear(&t);
        if (resp->skipped[resp->n_skipped++] == NULL)
            return false;
    }
    return true;
}

static void log_batch(start_ctx_t *c, const char *batch_id)
{
    for (uint32_t i = 0; i < c->n; i++) {
        const tsl_trial_t *t = &c->trials[i];
        if (strcmp(t->status, "skipped") == 0) {
            tsl_log_info("trial %s: plan %s #%u (%s) skipped, batch %s: %s", t->trial_id,
                         c->plan.fingerprint, i, t->plan_label, batch_id, t->error);
            tsl_metrics_trial(c->call->srv->metrics, "skipped");
        } else
            tsl_log_info(
                "trial %s: plan %s #%u (%s) on %u %s rank(s) from worker %s (%s), batch %s",
                t->trial_id, c->plan.fingerprint, i, t->plan_label, t->world_size,
                t->simulated ? "simulated" : "GPU", t->ranks[0].worker_id, t->ranks[0].hostname,
                batch_id);
    }
    if (c->plan.stale)
        tsl_log_info("batch %s: plan %s is stale (a profile it used changed since, or another "
                     "cost model priced it: model %u, this tesseld runs %u, 0 = unknown); its "
                     "trials are held to its stored prediction",
                     batch_id, c->plan.fingerprint, c->plan.cost_model_version,
                     (unsigned)TSL_COST_MODEL_VERSION);
}

/* The reply: the ids of the trials that run, best predicted first, and the skipped
 * plans' trials. */
static void reply_batch(start_ctx_t *c, char *batch_id)
{
    Tessel__V1__StartTrialResponse resp = TESSEL__V1__START_TRIAL_RESPONSE__INIT;
    tsl_arena_t a = {0};
    char *ids[MAX_TOP_K];
    for (uint32_t i = 0; i < c->n && resp.n_trial_ids < MAX_TOP_K; i++)
        if (strcmp(c->trials[i].status, "skipped") != 0)
            ids[resp.n_trial_ids++] = c->trials[i].trial_id;
    resp.trial_ids = ids;
    resp.batch_id = batch_id;
    resp.plan_stale = c->plan.stale;
    if (skipped_to_proto(c, &a, &resp))
        tsl_call_reply(c->call, &resp.base);
    else /* the trials are stored and start below: GetTrial / ListTrials show them */
        tsl_call_fail(c->call, GRPC_STATUS_RESOURCE_EXHAUSTED,
                      "StartTrial: out of memory answering batch %s (its trials are stored: "
                      "ListTrials shows them)",
                      batch_id);
    tsl_arena_free(&a);
}

static void start_batch(start_ctx_t *c)
{
    char batch_id[TSL_TRIAL_ID_LEN + 1];
    tsl_err_t err = {0};
    tsl_trials_new_id("b-", batch_id);
    c->n = batch_size(c);
    c->trials = calloc(c->n, sizeof *c->trials);
    tsl_sched_scope_t *scope = calloc(c->n, sizeof *scope);
    if (!c->trials || !scope) {
        tsl_call_fail(c->call, GRPC_STATUS_RESOURCE_EXHAUSTED, "StartTrial: out of memory");
        goto out;
    }
    uint32_t n_runs = 0;
    if (!batch_scope(c, scope, &n_runs) || !make_batch(c, scope, n_runs, batch_id))
        goto out;
    if (tsl_trials_create(c->call->srv->store, c->trials, c->n, &err) != 0) {
        tsl_call_fail_err(c->call, &err);
        goto out;
    }
    log_batch(c, batch_id);
    reply_batch(c, batch_id);
    tsl_trial_run_lock(c->call->srv);
    tsl_trial_run_start_pending_locked(c->call->srv);
    tsl_trial_run_unlock(c->call->srv);
out:
    free(scope);
}

/* ---- StartTrial, link_probe ---------------------------------------------------------------- */

/* The online worker called host, or NULL with why filled (unknown, offline, no GPU). */
static const tsl_reg_worker_t *link_worker(const workers_t *ws, const char *host, size_t i,
                                           char *why, size_t cap)
{
    const tsl_reg_worker_t *seen = NULL;
    for (size_t k = 0; k < ws->n; k++)
        if (strcmp(ws->w[k].hostname, host) == 0) {
            seen = &ws->w[k];
            if (strcmp(seen->state, "online") == 0)
                break;
        }
    if (!seen)
        snprintf(why, cap, "nodes[%zu]: no worker registered on host '%s'", i, host);
    else if (strcmp(seen->state, "online") != 0)
        snprintf(why, cap, "nodes[%zu]: the worker on host '%s' (%s) is %s", i, host,
                 seen->worker_id, seen->state);
    else if (seen->n_devices == 0)
        snprintf(why, cap, "nodes[%zu]: the worker on host '%s' registered no GPU", i, host);
    else
        return seen;
    return NULL;
}

/* One trial of kind "link": rank 0 on nodes[0], rank 1 on nodes[1], their first GPU. */
static bool make_link_trial(start_ctx_t *c, tsl_trial_t *t)
{
    const tsl_reg_worker_t *w[2];
    char why[400] = "";
    for (size_t i = 0; i < 2; i++)
        if (!(w[i] = link_worker(&c->ws, c->req->nodes[i], i, why, sizeof why))) {
            tsl_call_fail(c->call, GRPC_STATUS_FAILED_PRECONDITION, "link probe: %s", why);
            return false;
        }
    if (w[0]->simulated != w[1]->simulated) {
        tsl_call_fail(c->call, GRPC_STATUS_FAILED_PRECONDITION,
                      "link probe: host '%s' is %s and host '%s' is not: simulated and real "
                      "workers are never paired",
                      w[w[0]->simulated ? 0 : 1]->hostname, "simulated",
                      w[w[0]->simulated ? 1 : 0]->hostname);
        return false;
    }
    if (!(t->ranks = calloc(2, sizeof *t->ranks)))
        return false;
    bool sim = w[0]->simulated;
    snprintf(t->kind, sizeof t->kind, "link");
    tsl_trials_new_id("t-", t->trial_id);
    snprintf(t->plan_label, sizeof t->plan_label, "link %.28s-%.28s", w[0]->hostname,
             w[1]->hostname);
    t->world_size = t->n_ranks = 2;
    run_settings(t, c->req, sim);
    t->seed = (uint64_t)time(NULL) ^ (uint64_t)rand();
    t->created_unix = (int64_t)time(NULL);
    snprintf(t->gpu_model, sizeof t->gpu_model, "%s", w[0]->devices[0].model);
    for (uint32_t r = 0; r < 2; r++) {
        tsl_trial_rank_t *k = &t->ranks[r];
        k->rank = r;
        snprintf(k->worker_id, sizeof k->worker_id, "%s", w[r]->worker_id);
        snprintf(k->hostname, sizeof k->hostname, "%s", w[r]->hostname);
        k->device_index = w[r]->devices[0].index;
    }
    snprintf(t->batch_id, sizeof t->batch_id, "b-%s", t->trial_id + 2);
    return true;
}

static void start_link(start_ctx_t *c)
{
    tsl_err_t err = {0};
    if (strcmp(c->req->nodes[0], c->req->nodes[1]) == 0) {
        tsl_call_fail(c->call, GRPC_STATUS_INVALID_ARGUMENT,
                      "nodes: a link probe needs two different hosts");
        return;
    }
    if (!(c->trials = calloc(1, sizeof *c->trials))) {
        tsl_call_fail(c->call, GRPC_STATUS_RESOURCE_EXHAUSTED, "StartTrial: out of memory");
        return;
    }
    c->n = 1;
    if (!make_link_trial(c, &c->trials[0]))
        return;
    if (tsl_trials_create(c->call->srv->store, c->trials, 1, &err) != 0) {
        tsl_call_fail_err(c->call, &err);
        return;
    }
    tsl_trial_t *t = &c->trials[0];
    tsl_log_info("trial %s: link probe %s (rank 0) <-> %s (rank 1), %s", t->trial_id,
                 t->ranks[0].hostname, t->ranks[1].hostname, t->comm);
    Tessel__V1__StartTrialResponse resp = TESSEL__V1__START_TRIAL_RESPONSE__INIT;
    char *ids[1] = {t->trial_id};
    resp.n_trial_ids = 1;
    resp.trial_ids = ids;
    resp.batch_id = t->batch_id;
    tsl_call_reply(c->call, &resp.base);
    tsl_trial_run_lock(c->call->srv);
    tsl_trial_run_start_pending_locked(c->call->srv);
    tsl_trial_run_unlock(c->call->srv);
}

void tsl_handle_start_trial(tsl_call_t *call)
{
    Tessel__V1__StartTrialRequest *req = (Tessel__V1__StartTrialRequest *)tsl_call_read(
        call, &tessel__v1__start_trial_request__descriptor);
    if (!req)
        return;
    start_ctx_t c = {.call = call, .req = req};
    tsl_err_t err = {0};
    tsl_server_t *srv = call->srv;
    if (req->link_probe && check_start(call, req)) {
        tsl_trial_run_sweep(srv);
        if (tsl_registry_list(srv->store, keep_worker, &c.ws, &err) != 0)
            tsl_call_fail_err(call, &err);
        else
            start_link(&c);
    } else if (!req->link_probe && check_start(call, req)) {
        int got = tsl_store_get_plan(srv->store, req->plan_fingerprint, &c.plan, &err);
        tsl_trial_run_sweep(srv);
        if (got == 1)
            tsl_call_fail(call, GRPC_STATUS_NOT_FOUND,
                          "plan_fingerprint: no plan '%s' is stored (Plan it first)",
                          req->plan_fingerprint);
        else if (got < 0)
            tsl_call_fail_err(call, &err);
        else if (!(c.doc = json_loads(c.plan.result_json, 0, NULL)))
            tsl_call_fail(call, GRPC_STATUS_INTERNAL, "plan %s: the stored document is not JSON",
                          req->plan_fingerprint);
        else if (tsl_registry_list(srv->store, keep_worker, &c.ws, &err) != 0)
            tsl_call_fail_err(call, &err);
        else
            start_batch(&c);
    }
    for (uint32_t i = 0; c.trials && i < c.n; i++)
        tsl_trial_clear(&c.trials[i]);
    free(c.trials);
    free(c.ws.w);
    tsl_arena_free(&c.ws.arena);
    json_decref(c.doc);
    tsl_stored_plan_clear(&c.plan);
    protobuf_c_message_free_unpacked(&req->base, NULL);
}

/* ---- GetTrial, WatchTrial ------------------------------------------------------------------- */

/* The trial of a GetTrialRequest, or false after answering. */
static bool read_trial(tsl_call_t *call, tsl_trial_t *t)
{
    Tessel__V1__GetTrialRequest *req = (Tessel__V1__GetTrialRequest *)tsl_call_read(
        call, &tessel__v1__get_trial_request__descriptor);
    bool ok = false;
    tsl_err_t err = {0};
    if (!req)
        return false;
    if (tsl_check_token(call, "trial_id", req->trial_id, TSL_TRIAL_ID_LEN)) {
        if (tsl_trials_get(call->srv->store, req->trial_id, t, &err) != 0)
            tsl_call_fail_err(call, &err);
        else
            ok = true;
    }
    protobuf_c_message_free_unpacked(&req->base, NULL);
    return ok;
}

/* Answers with the trial (what: the method, for the out-of-memory message);
 * clears it. */
static void answer_trial(tsl_call_t *call, tsl_trial_t *t, const char *what)
{
    tsl_arena_t a = {0};
    Tessel__V1__Trial *msg = tsl_trial_to_proto(&a, t);
    if (msg)
        tsl_call_reply(call, &msg->base);
    else
        tsl_call_fail(call, GRPC_STATUS_RESOURCE_EXHAUSTED, "%s: out of memory", what);
    tsl_arena_free(&a);
    tsl_trial_clear(t);
}

void tsl_handle_get_trial(tsl_call_t *call)
{
    tsl_trial_t t;
    if (read_trial(call, &t))
        answer_trial(call, &t, "GetTrial");
}

void tsl_handle_watch_trial(tsl_call_t *call)
{
    tsl_trial_t t;
    if (!read_trial(call, &t))
        return;
    tsl_trial_run_lock(call->srv);
    tsl_trial_run_watch_locked(call->srv, call, &t);
    tsl_trial_run_unlock(call->srv);
    tsl_trial_clear(&t);
}

/* ---- CancelTrial --------------------------------------------------------------------------- */

#define REASON_MAX 200

static void reply_trial(tsl_call_t *call, const char *trial_id)
{
    tsl_trial_t t;
    tsl_err_t err = {0};
    if (tsl_trials_get(call->srv->store, trial_id, &t, &err) != 0)
        tsl_call_fail_err(call, &err);
    else
        answer_trial(call, &t, "CancelTrial");
}

/* The reason is stored in the trial's error and shown in tables: printable ASCII,
 * short. */
static bool check_reason(tsl_call_t *call, const char *v)
{
    size_t n = strlen(v);
    for (size_t i = 0; i < n; i++)
        if (v[i] < 0x20 || v[i] > 0x7e) {
            tsl_call_fail(call, GRPC_STATUS_INVALID_ARGUMENT,
                          "reason: printable ASCII only (a control or non-ASCII byte at %zu)", i);
            return false;
        }
    if (n > REASON_MAX) {
        tsl_call_fail(call, GRPC_STATUS_INVALID_ARGUMENT, "reason: %zu characters, at most %d", n,
                      REASON_MAX);
        return false;
    }
    return true;
}

void tsl_handle_cancel_trial(tsl_call_t *call)
{
    Tessel__V1__CancelTrialRequest *req = (Tessel__V1__CancelTrialRequest *)tsl_call_read(
        call, &tessel__v1__cancel_trial_request__descriptor);
    tsl_err_t err = {0};
    if (!req)
        return;
    if (tsl_check_token(call, "trial_id", req->trial_id, TSL_TRIAL_ID_LEN) &&
        check_reason(call, req->reason)) {
        tsl_trial_run_lock(call->srv);
        int rc = tsl_trial_run_cancel_locked(call->srv, req->trial_id, req->reason, &err);
        tsl_trial_run_unlock(call->srv);
        if (rc == 0 || rc == 2) /* cancelling twice answers the cancelled trial again */
            reply_trial(call, req->trial_id);
        else
            tsl_call_fail_err(call, &err);
    }
    protobuf_c_message_free_unpacked(&req->base, NULL);
}

/* ---- ListTrials ----------------------------------------------------------------------------- */

typedef struct list_ctx {
    tsl_arena_t arena;
    Tessel__V1__Trial **items;
    size_t n, cap;
} list_ctx_t;

static int list_one(void *ud, const tsl_trial_t *t)
{
    list_ctx_t *c = ud;
    if (c->n == c->cap)
        return -1;
    return (c->items[c->n++] = tsl_trial_to_proto(&c->arena, t)) ? 0 : -1;
}

/* The trials a ListTrialsRequest asks for; false after answering an error. */
static bool list(tsl_call_t *call, Tessel__V1__ListTrialsRequest *req, list_ctx_t *c)
{
    tsl_err_t err = {0};
    uint32_t limit = req->limit ? req->limit : LIST_DEFAULT;
    if (req->plan_fingerprint[0] && !plan_fingerprint(call, req->plan_fingerprint))
        return false;
    if (!tsl_check_max(call, "limit", limit, LIST_MAX))
        return false;
    if (!(c->items = calloc(limit, sizeof *c->items))) {
        tsl_call_fail(call, GRPC_STATUS_RESOURCE_EXHAUSTED, "ListTrials: out of memory");
        return false;
    }
    c->cap = limit;
    if (tsl_trials_list(call->srv->store, req->plan_fingerprint, limit, list_one, c, &err) != 0) {
        tsl_call_fail_err(call, &err);
        return false;
    }
    return true;
}

void tsl_handle_list_trials(tsl_call_t *call)
{
    Tessel__V1__ListTrialsRequest *req = (Tessel__V1__ListTrialsRequest *)tsl_call_read(
        call, &tessel__v1__list_trials_request__descriptor);
    if (!req)
        return;
    list_ctx_t c = {0};
    if (list(call, req, &c)) {
        Tessel__V1__ListTrialsResponse resp = TESSEL__V1__LIST_TRIALS_RESPONSE__INIT;
        resp.n_trials = c.n;
        resp.trials = c.items;
        tsl_call_reply(call, &resp.base);
    }
    free(c.items);
    tsl_arena_free(&c.arena);
    protobuf_c_message_free_unpacked(&req->base, NULL);
}
