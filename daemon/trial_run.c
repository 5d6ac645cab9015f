/*
 * trial_run.c — the held calls, transitions and the housekeeping tick of
 * trials (trial_run.h).
 */
#include "trial_run.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "calibration.h"
#include "clock.h"
#include "log.h"
#include "store_registry.h"
#include "tessel/v1/registry.pb-c.h"

#define MAX_IDS 256

typedef struct held {
    tsl_call_t *call;
    char id[TSL_TRIAL_ID_LEN + 1]; /* polls: the worker; watchers: the trial */
    bool watcher;
    double until; /* polls: CLOCK_MONOTONIC seconds */
    uint64_t sig; /* watchers: what was last sent */
    struct held *next;
} held_t;

struct tsl_trial_run {
    pthread_mutex_t mu;
    held_t *held;
};

static void count(tsl_server_t *srv, const char *what)
{
    if (srv->metrics)
        tsl_metrics_trial(srv->metrics, what);
}

tsl_trial_run_t *tsl_trial_run_new(tsl_server_t *srv)
{
    tsl_trial_run_t *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    pthread_mutex_init(&r->mu, NULL);
    uint32_t n = 0;
    tsl_err_t err = {0};
    if (tsl_trials_recover(srv->store, tsl_clock_unix_s(), &n, &err) != 0)
        tsl_log_warnx("trials: cannot fail the trials of the previous run: %s", err.msg);
    else if (n > 0)
        tsl_log_info("trials: %u trial(s) pending or running when the daemon stopped: failed "
                     "(daemon restarted during the trial)",
                     n);
    for (uint32_t i = 0; i < n; i++)
        count(srv, "failed");
    return r;
}

void tsl_trial_run_free(tsl_trial_run_t *r)
{
    if (!r)
        return;
    pthread_mutex_destroy(&r->mu);
    free(r);
}

void tsl_trial_run_lock(tsl_server_t *srv)
{
    pthread_mutex_lock(&srv->trials->mu);
}

void tsl_trial_run_unlock(tsl_server_t *srv)
{
    pthread_mutex_unlock(&srv->trials->mu);
}

/* ---- held calls ----------------------------------------------------------------------------- */

/* Unlinks h (which must be in the list) and drops the engine's reference. */
static void release(tsl_trial_run_t *r, held_t *h)
{
    for (held_t **p = &r->held; *p; p = &(*p)->next)
        if (*p == h) {
            *p = h->next;
            break;
        }
    tsl_call_unref(h->call);
    free(h);
}

static void on_cancel(tsl_call_t *call)
{
    tsl_server_t *srv = call->srv;
    tsl_trial_run_lock(srv);
    for (held_t *h = srv->trials->held; h; h = h->next)
        if (h->call == call) {
            tsl_call_fail(call, GRPC_STATUS_CANCELLED, "the client cancelled the call");
            release(srv->trials, h);
            break;
        }
    tsl_trial_run_unlock(srv);
}

static held_t *hold(tsl_server_t *srv, tsl_call_t *call, const char *id, bool watcher, double until)
{
    held_t *h = calloc(1, sizeof *h);
    if (!h) {
        tsl_call_fail(call, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
        return NULL;
    }
    h->call = call;
    snprintf(h->id, sizeof h->id, "%s", id);
    h->watcher = watcher;
    h->until = until;
    tsl_call_ref(call);
    h->next = srv->trials->held;
    srv->trials->held = h;
    tsl_call_watch_close(call, on_cancel);
    return h;
}

void tsl_trial_run_stop(tsl_server_t *srv)
{
    if (!srv->trials)
        return;
    tsl_trial_run_lock(srv);
    while (srv->trials->held) {
        held_t *h = srv->trials->held;
        if (h->watcher)
            tsl_call_fail(h->call, GRPC_STATUS_UNAVAILABLE, "tesseld is stopping; watch again");
        else
            tsl_call_reply(h->call, NULL);
        release(srv->trials, h);
    }
    tsl_trial_run_unlock(srv);
}

/* ---- assignments ---------------------------------------------------------------------------- */

/* The plan object at index i of a document (0: "plan"; i: alternatives[i-1]). */
static json_t *plan_of(json_t *doc, size_t i)
{
    return i == 0 ? json_object_get(doc, "plan")
                  : json_array_get(json_object_get(doc, "alternatives"), i - 1);
}

/* The stored document and where the trial's plan (plan_json, as it was when the
 * trial was made) is in it now: a top-k rewrite of another batch may have moved
 * it, a re-plan dropped it (then it goes in as "plan"). malloc'd; NULL when out
 * of memory. */
static char *document_for(const char *result_json, const char *plan_json, uint32_t *index,
                          const char *request_json)
{
    json_t *doc = json_loads(result_json, 0, NULL), *want = json_loads(plan_json, 0, NULL);
    json_t *rq = request_json ? json_loads(request_json, 0, NULL) : NULL;
    json_t *dr = json_object_get(doc, "request");
    const char *keys[] = {"model_preset", "hf_config", "seq_len"};
    for (int k = 0; k < 3 && json_is_object(dr); k++)
        if (json_object_get(rq, keys[k]))
            json_object_set(dr, keys[k], json_object_get(rq, keys[k]));
    json_decref(rq);
    bool merged = json_is_object(dr);
    char *text = NULL;
    bool found = false;
    json_object_del(want, "measured");
    for (size_t i = 0; doc && want && !found && plan_of(doc, i); i++) {
        json_t *p = json_deep_copy(plan_of(doc, i));
        json_object_del(p, "measured");
        if ((found = json_equal(p, want)))
            *index = (uint32_t)i;
        json_decref(p);
    }
    if (!doc || (!merged && (found || !json_is_object(want)))) {
        text = strdup(result_json);
    } else if (found || !json_is_object(want)) {
        text = json_dumps(doc, JSON_COMPACT);
    } else {
        json_object_set(doc, "plan", want);
        *index = 0;
        text = json_dumps(doc, JSON_COMPACT);
    }
    json_decref(doc);
    json_decref(want);
    return text;
}

/* Answers call with the next due assignment of worker: true when one was. */
static bool deliver(tsl_server_t *srv, tsl_call_t *call, const char *worker)
{
    char id[TSL_TRIAL_ID_LEN + 1];
    uint32_t rank = 0;
    bool cancel = false;
    tsl_err_t err = {0};
    tsl_trial_t t;
    tsl_stored_plan_t plan;
    char *plan_json = NULL, *doc = NULL;
    memset(&plan, 0, sizeof plan);
    if (tsl_trials_next_for(srv->store, worker, id, &rank, &cancel, &err) != 0 ||
        tsl_trials_get(srv->store, id, &t, &err) != 0)
        return false;
    uint32_t index = t.plan_index;
    bool link = strcmp(t.kind, "link") == 0;
    if (rank >= t.n_ranks ||
        (!cancel && !link &&
         (tsl_store_get_plan(srv->store, t.plan_fingerprint, &plan, &err) != 0 ||
          tsl_trials_plan_json(srv->store, id, &plan_json, &err) != 0 ||
          !(doc = document_for(plan.result_json, plan_json, &index, plan.request_json))))) {
        free(plan_json);
        tsl_stored_plan_clear(&plan);
        tsl_trial_clear(&t);
        return false;
    }
    Tessel__V1__Assignment a = TESSEL__V1__ASSIGNMENT__INIT;
    a.trial_id = t.trial_id;
    a.plan_fingerprint = t.plan_fingerprint;
    a.rank = rank;
    a.world_size = t.world_size;
    a.iterations = t.iterations;
    a.warmup = t.warmup;
    a.device_index = t.ranks[rank].device_index;
    a.comm = t.comm;
    a.devops = t.devops;
    a.document = doc ? doc : "";
    a.plan_index = index;
    a.cancel = cancel;
    a.seed = t.seed;
    a.timeout_s = t.timeout_s;
    a.kind = t.kind;
    if (link && t.n_ranks == 2) /* the probe labels its figures with the other node */
        a.peer = t.ranks[1 - rank].hostname;
    if (rank > 0) {
        a.rendezvous = t.rendezvous;
        a.nccl_unique_id.data = t.nccl_id;
        a.nccl_unique_id.len = t.nccl_id_len;
    }
    tsl_call_reply(call, &a.base);
    if (tsl_trials_delivered(srv->store, id, rank, cancel, &err) != 0)
        tsl_log_warnx("trial %s: rank %u: not marked delivered: %s", id, rank, err.msg);
    tsl_log_info("trial %s: rank %u %s to worker %s (%s)", id, rank,
                 cancel ? "cancelled: told" : "assigned", worker, t.ranks[rank].hostname);
    free(doc);
    free(plan_json);
    tsl_stored_plan_clear(&plan);
    tsl_trial_clear(&t);
    return true;
}

void tsl_trial_run_poll_locked(tsl_server_t *srv, tsl_call_t *call, const char *worker_id,
                               uint32_t wait_s)
{
    if (deliver(srv, call, worker_id))
        return;
    if (atomic_load(&srv->shutting_down)) /* nothing will come: do not hold the stop up */
        tsl_call_reply(call, NULL);
    else
        hold(srv, call, worker_id, false, tsl_clock_mono_s() + wait_s);
}

/* Held polls of worker: the first one gets what is due. */
static void kick_worker(tsl_server_t *srv, const char *worker)
{
    for (held_t *h = srv->trials->held; h; h = h->next)
        if (!h->watcher && strcmp(h->id, worker) == 0 && !tsl_call_gone(h->call)) {
            if (deliver(srv, h->call, worker))
                release(srv->trials, h);
            return;
        }
}

/* ---- watchers ------------------------------------------------------------------------------- */

static uint64_t mix(uint64_t h, const char *p)
{
    for (; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ull;
    return h;
}

/* What a watcher has seen: status, figures and every rank's state. */
static uint64_t signature(const tsl_trial_t *t)
{
    char buf[160];
    snprintf(buf, sizeof buf, "%s|%d|%d|%.9g|%zu|", t->status, t->chosen, t->ready,
             t->measured_iter_time_s, strlen(t->error));
    uint64_t h = mix(1469598103934665603ull, buf);
    for (uint32_t r = 0; r < t->n_ranks; r++)
        h = mix(h, t->ranks[r].state) * 31 + r;
    return h;
}

/* Sends t to h: the last message when the trial is over (then h is released). */
static void send_to(tsl_server_t *srv, held_t *h, const tsl_trial_t *t)
{
    tsl_arena_t a = {0};
    Tessel__V1__Trial *msg = tsl_trial_to_proto(&a, t);
    uint64_t sig = signature(t);
    if (!msg) {
        tsl_call_fail(h->call, GRPC_STATUS_RESOURCE_EXHAUSTED, "WatchTrial: out of memory");
        release(srv->trials, h);
    } else if (tsl_trial_over(t)) {
        tsl_call_reply(h->call, &msg->base);
        release(srv->trials, h);
    } else if (sig != h->sig && tsl_call_send(h->call, &msg->base)) {
        h->sig = sig;
    }
    tsl_arena_free(&a);
}

void tsl_trial_run_watch_locked(tsl_server_t *srv, tsl_call_t *call, const tsl_trial_t *t)
{
    if (atomic_load(&srv->shutting_down) && !tsl_trial_over(t)) {
        tsl_call_fail(call, GRPC_STATUS_UNAVAILABLE, "tesseld is stopping; watch again");
        return;
    }
    held_t *h = hold(srv, call, t->trial_id, true, 0);
    if (h)
        send_to(srv, h, t);
}

static void notify_watchers(tsl_server_t *srv, const tsl_trial_t *t)
{
    held_t *h = srv->trials->held, *next;
    for (; h; h = next) {
        next = h->next;
        if (h->watcher && strcmp(h->id, t->trial_id) == 0)
            send_to(srv, h, t);
    }
}

void tsl_trial_run_changed_locked(tsl_server_t *srv, const char *trial_id)
{
    tsl_trial_t t;
    tsl_err_t err = {0};
    if (tsl_trials_get(srv->store, trial_id, &t, &err) != 0)
        return;
    for (uint32_t r = 0; r < t.n_ranks; r++)
        kick_worker(srv, t.ranks[r].worker_id);
    notify_watchers(srv, &t);
    tsl_trial_clear(&t);
}

/* ---- transitions ---------------------------------------------------------------------------- */

void tsl_trial_run_start_pending_locked(tsl_server_t *srv)
{
    char ids[8][TSL_TRIAL_ID_LEN + 1];
    size_t n = 0;
    tsl_err_t err = {0};
    /* One at a time: starting one may keep the next from starting (same workers). */
    for (int guard = 0; guard < 64; guard++) {
        if (tsl_trials_ids(srv->store, "startable", ids, 1, &n, &err) != 0 || n == 0)
            return;
        if (tsl_trials_start(srv->store, ids[0], tsl_clock_unix_s(), &err) != 0)
            return;
        tsl_log_info("trial %s: started", ids[0]);
        count(srv, "started");
        tsl_trial_run_changed_locked(srv, ids[0]);
    }
}

/* The batch's top-k choice, and its watchers told. */
static void topk(tsl_server_t *srv, const char *batch_id)
{
    char chosen[TSL_TRIAL_ID_LEN + 1];
    if (tsl_trial_topk_locked(srv, batch_id, chosen))
        tsl_trial_run_changed_locked(srv, chosen);
}

void tsl_trial_run_fail_locked(tsl_server_t *srv, const char *trial_id, const char *reason)
{
    tsl_err_t err = {0};
    tsl_trial_t t;
    if (tsl_trials_fail(srv->store, trial_id, reason, tsl_clock_unix_s(), &err) != 0)
        return;
    tsl_log_warnx("trial %s: failed: %s", trial_id, reason);
    count(srv, "failed");
    tsl_trial_run_changed_locked(srv, trial_id);
    if (tsl_trials_get(srv->store, trial_id, &t, &err) == 0) {
        if (strcmp(t.kind, "link") != 0)
            topk(srv, t.batch_id);
        tsl_trial_clear(&t);
    }
    tsl_trial_run_start_pending_locked(srv);
}

int tsl_trial_run_cancel_locked(tsl_server_t *srv, const char *trial_id, const char *reason,
                                tsl_err_t *err)
{
    int rc = tsl_trials_cancel(srv->store, trial_id, reason, tsl_clock_unix_s(), err);
    if (rc != 0)
        return rc;
    tsl_log_info("trial %s: cancelled (%s): its workers are told to stop its ranks", trial_id,
                 reason && reason[0] ? reason : "by request");
    count(srv, "cancelled");
    /* Same path as a failure: the ranks' cancels go to the held polls, watchers
     * get the last message, the batch's choice and the next trial go ahead. */
    tsl_trial_run_changed_locked(srv, trial_id);
    tsl_trial_t t;
    tsl_err_t e2 = {0};
    if (tsl_trials_get(srv->store, trial_id, &t, &e2) == 0) {
        if (strcmp(t.kind, "link") != 0)
            topk(srv, t.batch_id);
        tsl_trial_clear(&t);
    }
    tsl_trial_run_start_pending_locked(srv);
    return 0;
}

/* The measured figures of a trial whose ranks all reported. */
static void measure(tsl_trial_t *t)
{
    for (uint32_t r = 0; r < t->n_ranks; r++) {
        const tsl_trial_rank_t *k = &t->ranks[r];
        if (k->iter_time_s > t->measured_iter_time_s)
            t->measured_iter_time_s = k->iter_time_s;
        if (k->peak_bytes > t->measured_peak_bytes)
            t->measured_peak_bytes = k->peak_bytes;
        t->any_oom = t->any_oom || k->oom;
    }
    double m = t->measured_iter_time_s, p = t->predicted_iter_time_s;
    t->measured_samples_per_s = m > 0 ? (double)t->global_batch / m : 0;
    t->time_error = m > 0 ? (p - m) / m : 0;
    t->memory_error = t->measured_peak_bytes > 0
                          ? ((double)t->predicted_peak_bytes - (double)t->measured_peak_bytes) /
                                (double)t->measured_peak_bytes
                          : 0;
}

/* A done trial refits its hardware key's calibration (calibration.h). */
static void recalibrate(tsl_server_t *srv, const tsl_trial_t *t)
{
    tsl_calib_t c;
    tsl_err_t err = {0};
    if (strcmp(t->devops, "cuda") != 0) {
        tsl_log_info("trial %s: not used for calibration: it timed the %s executor%s, not %s "
                     "GPUs (only cuda trials calibrate GPU figures)",
                     t->trial_id, t->devops, t->simulated ? " on simulated workers" : "",
                     t->gpu_model);
        return;
    }
    int rc = tsl_calibration_refit(srv->store, t->gpu_model, t->simulated, &c, &err);
    if (rc != 0) {
        tsl_log_warnx("calibration of %s (%s): %s", t->gpu_model,
                      t->simulated ? "simulated" : "measured", err.msg);
        return;
    }
    if (c.n_samples == 0)
        tsl_log_info("calibration of %s (%s): no usable trial yet", t->gpu_model,
                     t->simulated ? "simulated" : "measured");
    else
        tsl_log_info("calibration of %s (%s): %u trial(s), iteration error %.1f%% -> %.1f%% "
                     "(leave-one-out), comm x%.3g, memory x%.3g",
                     t->gpu_model, t->simulated ? "simulated" : "measured", c.n_samples,
                     100 * c.mae_before, 100 * c.mae_after, c.comm_scale, c.mem_scale);
}

void tsl_trial_run_finish_locked(tsl_server_t *srv, const char *trial_id)
{
    tsl_trial_t t;
    tsl_err_t err = {0};
    if (tsl_trials_get(srv->store, trial_id, &t, &err) != 0)
        return;
    measure(&t);
    if (tsl_trials_finish_done(srv->store, &t, tsl_clock_unix_s(), &err) == 0) {
        tsl_log_info("trial %s: done: measured %.4f s/iteration (predicted %.4f s, error %+.1f%%), "
                     "peak %.2f GiB%s",
                     trial_id, t.measured_iter_time_s, t.predicted_iter_time_s, 100 * t.time_error,
                     (double)t.measured_peak_bytes / 1073741824.0,
                     t.any_oom ? ", out of memory" : "");
        count(srv, "done");
        bool plan = strcmp(t.kind, "link") != 0; /* a link probe has no plan to judge */
        if (plan && !t.any_oom)
            recalibrate(srv, &t);
        tsl_trial_run_changed_locked(srv, trial_id);
        if (plan)
            topk(srv, t.batch_id);
        tsl_trial_run_start_pending_locked(srv);
    }
    tsl_trial_clear(&t);
}

/* ---- the tick ------------------------------------------------------------------------------- */

static void log_offline(void *ud, const char *worker_id, const char *hostname)
{
    (void)ud;
    tsl_log_info("worker %s (%s) offline: no heartbeat within its timeout", worker_id, hostname);
}

/* A running trial: fails it when a rank's worker is gone or time is up. */
static void check_running(tsl_server_t *srv, const char *id, int64_t now)
{
    tsl_trial_t t;
    tsl_err_t err = {0};
    char reason[TSL_TRIAL_ERROR_LEN] = "";
    if (tsl_trials_get(srv->store, id, &t, &err) != 0)
        return;
    for (uint32_t r = 0; r < t.n_ranks && !reason[0]; r++) {
        const tsl_trial_rank_t *k = &t.ranks[r];
        char state[16] = "", host[128] = "";
        if (strcmp(k->state, "done") == 0)
            continue;
        if (tsl_trials_worker_state(srv->store, k->worker_id, state, sizeof state, host,
                                    sizeof host, &err) == 0 &&
            strcmp(state, "online") != 0)
            snprintf(reason, sizeof reason,
                     "rank %u on worker %s (host %s): the worker went %s during the trial (%s)",
                     k->rank, k->worker_id, k->hostname, state,
                     strcmp(state, "stopped") == 0 ? "it deregistered"
                                                   : "no heartbeat within its timeout");
    }
    if (!reason[0] && t.started_unix > 0 && (double)(now - t.started_unix) > t.timeout_s) {
        uint32_t r = 0;
        while (r + 1 < t.n_ranks && strcmp(t.ranks[r].state, "done") == 0)
            r++;
        snprintf(reason, sizeof reason,
                 "timed out after %.0f s: rank %u on worker %s (host %s) had not reported (%s)",
                 t.timeout_s, r, t.ranks[r].worker_id, t.ranks[r].hostname, t.ranks[r].state);
    }
    tsl_trial_clear(&t);
    if (reason[0])
        tsl_trial_run_fail_locked(srv, id, reason);
}

static void expire_and_refresh(tsl_server_t *srv)
{
    double now = tsl_clock_mono_s();
    held_t *h = srv->trials->held, *next;
    for (; h; h = next) {
        next = h->next;
        if (!h->watcher && (now >= h->until || tsl_call_gone(h->call))) {
            tsl_call_reply(h->call, NULL);
            release(srv->trials, h);
        } else if (h->watcher) {
            tsl_trial_t t;
            tsl_err_t err = {0};
            int rc = tsl_trials_get(srv->store, h->id, &t, &err);
            if (rc == 0)
                send_to(srv, h, &t);
            else if (rc == 1) { /* deleted with its plan */
                tsl_call_fail(h->call, GRPC_STATUS_NOT_FOUND, "trial %s was deleted with its plan",
                              h->id);
                release(srv->trials, h);
            }
            if (rc == 0)
                tsl_trial_clear(&t);
        }
    }
}

/* The sweep runs every second: a store that keeps failing (a full disk, a
 * database made read-only under us) is logged once a minute with a count, not
 * 3,600 times an hour. */
#define SWEEP_LOG_EVERY_S 60.0

static void log_sweep_failure(const char *msg)
{
    static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    static double last_s = -1e9;
    static unsigned long quiet;
    double now = tsl_clock_mono_s();
    pthread_mutex_lock(&mu);
    bool say = now - last_s >= SWEEP_LOG_EVERY_S;
    unsigned long n = quiet;
    if (say) {
        last_s = now;
        quiet = 0;
    } else {
        quiet++;
    }
    pthread_mutex_unlock(&mu);
    if (say && n > 0)
        tsl_log_warnx("registry: liveness sweep failed: %s (and %lu more time(s) in the last "
                      "%.0f s)",
                      msg, n, SWEEP_LOG_EVERY_S);
    else if (say)
        tsl_log_warnx("registry: liveness sweep failed: %s", msg);
}

void tsl_trial_run_sweep(tsl_server_t *srv)
{
    tsl_err_t err = {0};
    if (tsl_registry_sweep(srv->store, tsl_clock_unix_s(), srv->cfg->worker_timeout_s, log_offline,
                           NULL, &err) != 0)
        log_sweep_failure(err.msg);
    int64_t on, off, stopped;
    if (srv->metrics && tsl_trials_count_workers(srv->store, &on, &off, &stopped, &err) == 0)
        tsl_metrics_set_workers(srv->metrics, on, off, stopped);
}

void tsl_trial_run_tick(tsl_server_t *srv)
{
    tsl_err_t err = {0};
    int64_t now = tsl_clock_unix_s();
    tsl_trial_run_sweep(srv);
    if (!srv->trials)
        return;
    char(*ids)[TSL_TRIAL_ID_LEN + 1] = calloc(MAX_IDS, sizeof *ids);
    size_t n = 0;
    tsl_trial_run_lock(srv);
    if (ids && tsl_trials_ids(srv->store, "running", ids, MAX_IDS, &n, &err) == 0)
        for (size_t i = 0; i < n; i++)
            check_running(srv, ids[i], now);
    tsl_trial_run_start_pending_locked(srv);
    expire_and_refresh(srv);
    tsl_trial_run_unlock(srv);
    free(ids);
}
