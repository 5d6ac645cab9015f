/*
 * handlers_assign.c — the worker side of trials: Registry.Assignments (a long
 * poll) and Registry.ReportTrial (rank 0's rendezvous, results, errors).
 *
 * Assignments answers the worker's next due assignment and ends; with none,
 * the call is held up to wait_s (0 = 20, at most 60) and answered as soon as
 * one is due, or ended empty (trial_run.c). A client cancel releases it.
 * A cancel assignment (cancel = true) tells the worker to stop a rank of a
 * trial that is over.
 *
 * ReportTrial: ready (rank 0 only) stores the rendezvous — tcp: "host:port";
 * nccl: the 128-byte ncclUniqueId — and the other ranks' assignments become
 * due with it. A result marks the rank done; the last one finishes the trial.
 * An error fails the trial naming the rank, worker and host. A report for a
 * trial already over answers cancelled = true. NOT_FOUND for an unknown
 * trial or worker; INVALID_ARGUMENT names the field (a rank that is not this
 * worker's, a number that is not finite, ...).
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "handlers.h"
#include "handlers_check.h"
#include "log.h"
#include "names.h"
#include "request.h"
#include "server_auth.h"
#include "trial_run.h"
#include "tessel/v1/registry.pb-c.h"

#define DEFAULT_WAIT_S 20u
#define MAX_WAIT_S     60u
#define MAX_PHASES     16u

/* ---- Assignments ---------------------------------------------------------------------------- */

void tsl_handle_assignments(tsl_call_t *call)
{
    Tessel__V1__AssignmentsRequest *req = (Tessel__V1__AssignmentsRequest *)tsl_call_read(
        call, &tessel__v1__assignments_request__descriptor);
    if (!req)
        return;
    char state[16], host[128];
    tsl_err_t err = {0};
    if (!tsl_check_id(call, "worker_id", req->worker_id, TSL_WORKER_ID_LEN) ||
        !tsl_check_max(call, "wait_s", req->wait_s, MAX_WAIT_S) ||
        !tsl_handlers_own_worker(call, req->worker_id))
        ;
    else if (tsl_trials_worker_state(call->srv->store, req->worker_id, state, sizeof state, host,
                                     sizeof host, &err) != 0)
        tsl_call_fail_err(call, &err);
    else {
        tsl_trial_run_lock(call->srv);
        tsl_trial_run_poll_locked(call->srv, call, req->worker_id,
                                  req->wait_s ? req->wait_s : DEFAULT_WAIT_S);
        tsl_trial_run_unlock(call->srv);
    }
    protobuf_c_message_free_unpacked(&req->base, NULL);
}

/* ---- ReportTrial ---------------------------------------------------------------------------- */

static bool finite_nonneg(tsl_call_t *call, const char *field, double v)
{
    if (isfinite(v) && v >= 0)
        return true;
    tsl_call_fail(call, GRPC_STATUS_INVALID_ARGUMENT, "%s: %g must be a finite number >= 0", field,
                  v);
    return false;
}

static bool check_report(tsl_call_t *call, const Tessel__V1__ReportTrialRequest *req)
{
    if (!tsl_check_id(call, "trial_id", req->trial_id, TSL_TRIAL_ID_LEN) ||
        !tsl_check_id(call, "worker_id", req->worker_id, TSL_WORKER_ID_LEN) ||
        !finite_nonneg(call, "iter_time_s", req->iter_time_s) ||
        !finite_nonneg(call, "iter_min_s", req->iter_min_s) ||
        !finite_nonneg(call, "iter_max_s", req->iter_max_s) ||
        !finite_nonneg(call, "loss", fabs(req->loss)))
        return false;
    if (req->n_phase_s > MAX_PHASES) {
        tsl_call_fail(call, GRPC_STATUS_INVALID_ARGUMENT, "phase_s: %zu entries; at most %u",
                      req->n_phase_s, MAX_PHASES);
        return false;
    }
    for (size_t i = 0; i < req->n_phase_s; i++) {
        char field[48];
        snprintf(field, sizeof field, "phase_s[%zu]", i);
        if (!tsl_check_id(call, field, req->phase_s[i]->key, 15) ||
            !finite_nonneg(call, field, req->phase_s[i]->value))
            return false;
        for (size_t j = 0; j < i; j++) /* a map key sent twice: the last one was kept */
            if (strcmp(req->phase_s[j]->key, req->phase_s[i]->key) == 0) {
                tsl_call_fail(call, GRPC_STATUS_INVALID_ARGUMENT,
                              "%s: '%s' is given twice; one time a phase", field,
                              req->phase_s[i]->key);
                return false;
            }
    }
    /* the rank's peak, stored as a signed 64-bit figure: 2^64 - 1 read back as -1 */
    if (req->peak_bytes > TSL_REQUEST_MAX_DEVICE_MEMORY) {
        tsl_call_fail(call, GRPC_STATUS_INVALID_ARGUMENT,
                      "peak_bytes: %llu is above the physical bound %llu (16 TiB)",
                      (unsigned long long)req->peak_bytes,
                      (unsigned long long)TSL_REQUEST_MAX_DEVICE_MEMORY);
        return false;
    }
    /* host:port the other ranks connect to, and a log line: one token */
    if (req->rendezvous[0] && tsl_name_bad_char(req->rendezvous, " \\") != NULL) {
        char shown[TSL_ERR_SHOWN_MAX(60)];
        tsl_call_fail(call, GRPC_STATUS_INVALID_ARGUMENT,
                      "rendezvous: '%s' holds a space, a quote, a backslash or a control character",
                      tsl_err_shown(req->rendezvous, 60, shown, sizeof shown));
        return false;
    }
    if (strlen(req->rendezvous) > 255 || req->nccl_unique_id.len > TSL_TRIAL_NCCL_ID) {
        tsl_call_fail(call, GRPC_STATUS_INVALID_ARGUMENT,
                      "%s: too long (rendezvous at most 255 characters, nccl_unique_id %u bytes)",
                      strlen(req->rendezvous) > 255 ? "rendezvous" : "nccl_unique_id",
                      TSL_TRIAL_NCCL_ID);
        return false;
    }
    return true;
}

/* rank 0's rendezvous; false after answering with an error. */
static bool take_ready(tsl_call_t *call, const Tessel__V1__ReportTrialRequest *req,
                       const tsl_trial_t *t)
{
    tsl_err_t err = {0};
    if (req->rank != 0) {
        tsl_call_fail(call, GRPC_STATUS_INVALID_ARGUMENT,
                      "ready: only rank 0 reports a rendezvous (this is rank %u)", req->rank);
        return false;
    }
    if (strcmp(t->comm, "tcp") == 0 && !strchr(req->rendezvous, ':')) {
        tsl_call_fail(call, GRPC_STATUS_INVALID_ARGUMENT,
                      "rendezvous: '%.60s' must be host:port for comm tcp", req->rendezvous);
        return false;
    }
    if (strcmp(t->comm, "nccl") == 0 && req->nccl_unique_id.len != TSL_TRIAL_NCCL_ID) {
        tsl_call_fail(call, GRPC_STATUS_INVALID_ARGUMENT,
                      "nccl_unique_id: %zu bytes; comm nccl needs the %u-byte ncclUniqueId",
                      req->nccl_unique_id.len, TSL_TRIAL_NCCL_ID);
        return false;
    }
    if (tsl_trials_ready(call->srv->store, t->trial_id, req->rendezvous, req->nccl_unique_id.data,
                         req->nccl_unique_id.len, &err) < 0) {
        tsl_call_fail_err(call, &err);
        return false;
    }
    tsl_log_info("trial %s: rank 0 ready (%s %s); relaying to %u other rank(s)", t->trial_id,
                 t->comm, req->rendezvous, t->world_size - 1);
    tsl_trial_run_changed_locked(call->srv, t->trial_id);
    return true;
}

static void phases_json(const Tessel__V1__ReportTrialRequest *req, char *buf, size_t cap)
{
    json_t *o = json_object();
    for (size_t i = 0; o && i < req->n_phase_s; i++)
        json_object_set_new(o, req->phase_s[i]->key, json_real(req->phase_s[i]->value));
    char *text = o ? json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    snprintf(buf, cap, "%s", text && strlen(text) < cap ? text : "{}");
    free(text);
    json_decref(o);
}

/* The worker prefixes its rank ("rank 1: ..."), as the executor may have too:
 * the reason names the rank once, so those prefixes go. */
static const char *without_rank_prefix(const char *e, uint32_t rank)
{
    char p[32];
    int n = snprintf(p, sizeof p, "rank %u: ", rank);
    while (n > 0 && strncmp(e, p, (size_t)n) == 0)
        e += n;
    return e;
}

/* Why the trial failed, from the first rank that reported an error. The rank
 * that reports first is not always the one at fault: when a peer dies, the
 * others see a broken connection. Ranks whose workers are no longer online are
 * named as the likelier cause; the rest of the ranks' reports are in the trial. */
static void failure_reason(tsl_call_t *call, const tsl_trial_t *t, uint32_t rank, const char *error,
                           char *buf, size_t cap)
{
    const tsl_trial_rank_t *k = &t->ranks[rank];
    int n = snprintf(buf, cap, "rank %u on worker %s (host %.60s) reported: %.400s", rank,
                     k->worker_id, k->hostname, without_rank_prefix(error, rank));
    for (uint32_t i = 0; i < t->n_ranks && n > 0 && (size_t)n < cap; i++) {
        char state[16], host[128];
        tsl_err_t err = {0};
        if (i == rank ||
            tsl_trials_worker_state(call->srv->store, t->ranks[i].worker_id, state, sizeof state,
                                    host, sizeof host, &err) != 0 ||
            strcmp(state, "online") == 0)
            continue;
        n += snprintf(buf + n, cap - (size_t)n, "; rank %u's worker %s (host %.60s) is %s", i,
                      t->ranks[i].worker_id, host, state);
    }
}

/* A rank's error text (its first 400 bytes) as one line: a control byte as a space.
 * It is logged, stored, and shown by `trial show` and the status page; a newline in it
 * wrote a log line of the worker's making, an escape sequence acted on a terminal. */
static void one_line(char *dst, size_t cap, const char *src)
{
    size_t n = 0;
    for (; src[n] && n < 400 && n + 1 < cap; n++) {
        unsigned char c = (unsigned char)src[n];
        dst[n] = c < 0x20 || c == 0x7f ? ' ' : (char)c;
    }
    dst[n] = '\0';
}

/* A result or an error of one rank; false after answering with an error. */
static bool take_result(tsl_call_t *call, const Tessel__V1__ReportTrialRequest *req,
                        const tsl_trial_t *t)
{
    tsl_trial_rank_t r;
    tsl_err_t err = {0};
    bool all_done = false;
    memset(&r, 0, sizeof r);
    r.rank = req->rank;
    r.iter_time_s = req->iter_time_s;
    r.iter_min_s = req->iter_min_s;
    r.iter_max_s = req->iter_max_s;
    r.peak_bytes = req->peak_bytes;
    r.oom = req->oom;
    r.loss = req->loss;
    one_line(r.error, sizeof r.error, req->error);
    phases_json(req, r.phase_json, sizeof r.phase_json);
    if (!r.error[0] && !r.oom && r.iter_time_s <= 0) {
        tsl_call_fail(call, GRPC_STATUS_INVALID_ARGUMENT,
                      "iter_time_s: a result needs the measured median (> 0), an error or oom");
        return false;
    }
    int rc = tsl_trials_rank_result(call->srv->store, t->trial_id, &r, (int64_t)time(NULL),
                                    &all_done, &err);
    if (rc < 0) {
        tsl_call_fail_err(call, &err);
        return false;
    }
    if (r.error[0]) {
        char reason[TSL_TRIAL_ERROR_LEN + 256];
        failure_reason(call, t, r.rank, r.error, reason, sizeof reason);
        tsl_trial_run_fail_locked(call->srv, t->trial_id, reason);
    } else if (all_done) {
        tsl_trial_run_finish_locked(call->srv, t->trial_id);
    } else {
        tsl_trial_run_changed_locked(call->srv, t->trial_id);
    }
    return true;
}

/* Under the trial lock: the trial as it is now, then the report applied. */
static void report_locked(tsl_call_t *call, const Tessel__V1__ReportTrialRequest *req)
{
    tsl_trial_t t;
    tsl_err_t err = {0};
    char state[16], host[128];
    if (tsl_trials_worker_state(call->srv->store, req->worker_id, state, sizeof state, host,
                                sizeof host, &err) != 0 ||
        tsl_trials_get(call->srv->store, req->trial_id, &t, &err) != 0) {
        tsl_call_fail_err(call, &err);
        return;
    }
    Tessel__V1__ReportTrialResponse resp = TESSEL__V1__REPORT_TRIAL_RESPONSE__INIT;
    bool ok = true;
    if (req->rank >= t.n_ranks) {
        tsl_call_fail(call, GRPC_STATUS_INVALID_ARGUMENT, "rank: %u; trial %s has %u rank(s)",
                      req->rank, t.trial_id, t.n_ranks);
        ok = false;
    } else if (strcmp(t.ranks[req->rank].worker_id, req->worker_id) != 0) {
        tsl_call_fail(call, GRPC_STATUS_INVALID_ARGUMENT,
                      "worker_id: rank %u of trial %s is assigned to %s, not %s", req->rank,
                      t.trial_id, t.ranks[req->rank].worker_id, req->worker_id);
        ok = false;
    } else if (strcmp(t.status, "pending") == 0) {
        tsl_call_fail(call, GRPC_STATUS_FAILED_PRECONDITION,
                      "trial_id: trial %s has not started; its assignments are not out yet",
                      t.trial_id);
        ok = false;
    } else if (tsl_trial_over(&t)) {
        resp.cancelled = true; /* the worker knows now: no cancel assignment needed */
        tsl_trials_delivered(call->srv->store, t.trial_id, req->rank, true, &err);
    } else if (req->ready) {
        ok = take_ready(call, req, &t);
    } else {
        ok = take_result(call, req, &t);
    }
    if (ok)
        tsl_call_reply(call, &resp.base);
    tsl_trial_clear(&t);
}

void tsl_handle_report_trial(tsl_call_t *call)
{
    Tessel__V1__ReportTrialRequest *req = (Tessel__V1__ReportTrialRequest *)tsl_call_read(
        call, &tessel__v1__report_trial_request__descriptor);
    if (!req)
        return;
    if (check_report(call, req) && tsl_handlers_own_worker(call, req->worker_id)) {
        tsl_trial_run_lock(call->srv);
        report_locked(call, req);
        tsl_trial_run_unlock(call->srv);
    }
    protobuf_c_message_free_unpacked(&req->base, NULL);
}
