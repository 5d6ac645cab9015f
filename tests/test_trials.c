/*
 * test_trials.c — trials in the store (store_trials.h) and the worker pick
 * (trial_sched.h): the life of a trial (pending, running, rank 0's rendezvous
 * making the other ranks due, results, done; an error failing it and marking
 * the ranks that were handed out for a cancel), batches running one after
 * another and a worker running one trial at a time, recovery after a restart,
 * calibration samples from the plan's slowest stage and the slowest rank; and
 * which workers and GPUs a plan gets (type matching, sim and real never mixed,
 * registered plans on their named nodes, what is missing said); a batch's plans
 * the executor cannot run stored skipped, and which those are (trial_sched.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>
#include <unistd.h>

#include "calibration.h"
#include "check.h"
#include "clock.h"
#include "cost.h"
#include "store_registry.h"
#include "store_trials.h"
#include "trial_sched.h"

static char tmpdir[256];

/* A stored plan: one stage of 2 devices, two micro-batches; tp2 in its first run. */
static const char DOC[] =
    "{\"fingerprint\": \"00000000000000f1\", \"model\": {\"name\": \"GPT2-345M\", "
    "\"tokens_per_sample\": 1024},"
    " \"plan\": {\"label\": \"tessel\", \"pp\": 1, \"global_batch\": 8, \"micro_batch\": 4,"
    "  \"n_micro\": 2, \"iter_time_s\": 0.5, \"peak_bytes\": 1000, \"stages\": [{\"first_layer\": "
    "0,"
    "  \"n_layers\": 26, \"first_device\": 0, \"n_devices\": 2, \"time_s\": 0.25,"
    "  \"time_nosync_s\": 0.2, \"p2p_s\": 0.01, \"runs\": [{\"first_layer\": 0, \"count\": 26,"
    "  \"strategy\": \"tp2\"}]}]}, \"alternatives\": []}";

static tsl_store_t *open_store(void)
{
    char path[300];
    tsl_store_t *s = NULL;
    tsl_err_t err = {0};
    snprintf(path, sizeof path, "%s/t.db", tmpdir);
    CHECK(tsl_store_open(path, &s, &err) == 0, "open: %s", err.msg);
    tsl_stored_plan_t p;
    memset(&p, 0, sizeof p);
    snprintf(p.fingerprint, sizeof p.fingerprint, "00000000000000f1");
    snprintf(p.model_name, sizeof p.model_name, "GPT2-345M");
    p.n_devices = 2;
    p.request_json = (char *)"{\"model_preset\": \"GPT2-345M\", \"seq_len\": 0}";
    p.result_json = (char *)DOC;
    p.cost_model_version = TSL_COST_MODEL_VERSION;
    tsl_stored_plan_t have;
    memset(&have, 0, sizeof have);
    if (s && tsl_store_get_plan(s, "00000000000000f1", &have, &err) == 1)
        CHECK(tsl_store_put_plan(s, &p, &err) == 0, "put: %s", err.msg);
    tsl_stored_plan_clear(&have);
    return s;
}

/* A trial of 2 ranks on workers wa (rank 0) and wb (rank 1). */
static void make(tsl_trial_t *t, const char *batch, uint32_t pos, const char *wa, const char *wb)
{
    memset(t, 0, sizeof *t);
    tsl_trials_new_id("t-", t->trial_id);
    snprintf(t->batch_id, sizeof t->batch_id, "%s", batch);
    t->batch_pos = pos;
    snprintf(t->plan_fingerprint, sizeof t->plan_fingerprint, "00000000000000f1");
    t->world_size = t->n_ranks = 2;
    t->iterations = 5;
    t->warmup = 1;
    t->timeout_s = 60;
    snprintf(t->comm, sizeof t->comm, "tcp");
    snprintf(t->devops, sizeof t->devops, "cpu");
    t->simulated = true;
    snprintf(t->gpu_model, sizeof t->gpu_model, "sim A100 80GB");
    t->global_batch = 8;
    t->predicted_iter_time_s = 0.5;
    t->predicted_peak_bytes = 1000;
    t->created_unix = 100;
    t->plan_json = strdup(strstr(DOC, "{\"label\""));
    t->plan_json[strlen(t->plan_json) - strlen(", \"alternatives\": []}")] = '\0';
    t->ranks = calloc(2, sizeof *t->ranks);
    for (uint32_t r = 0; r < 2; r++) {
        t->ranks[r].rank = r;
        snprintf(t->ranks[r].worker_id, sizeof t->ranks[r].worker_id, "%s", r ? wb : wa);
        snprintf(t->ranks[r].hostname, sizeof t->ranks[r].hostname, "host-%s", r ? wb : wa);
    }
}

static void report(tsl_store_t *s, const char *id, uint32_t rank, double iter, const char *error,
                   bool *all)
{
    tsl_trial_rank_t r;
    tsl_err_t err = {0};
    memset(&r, 0, sizeof r);
    r.rank = rank;
    r.iter_time_s = iter;
    r.peak_bytes = 100 * (rank + 1);
    snprintf(r.phase_json, sizeof r.phase_json, "{\"fwd\": %g, \"bwd\": %g, \"comm\": %g}",
             iter * 0.25, iter * 0.5, iter * 0.125);
    snprintf(r.error, sizeof r.error, "%s", error);
    CHECK(tsl_trials_rank_result(s, id, &r, 200, all, &err) == 0, "result: %s", err.msg);
}

static void test_life(void)
{
    tsl_store_t *s = open_store();
    tsl_err_t err = {0};
    tsl_trial_t t, got;
    char id[TSL_TRIAL_ID_LEN + 1];
    uint32_t rank = 9;
    bool cancel = true, all = false;
    make(&t, "b-1", 0, "w-a", "w-b");
    CHECK(tsl_trials_create(s, &t, 1, &err) == 0, "create: %s", err.msg);
    CHECK(tsl_trials_next_for(s, "w-a", id, &rank, &cancel, &err) == 1,
          "a pending trial hands out nothing");
    CHECK(tsl_trials_start(s, t.trial_id, 150, &err) == 0, "start");
    CHECK(tsl_trials_start(s, t.trial_id, 150, &err) == 1, "a running trial does not start again");
    CHECK(tsl_trials_next_for(s, "w-b", id, &rank, &cancel, &err) == 1,
          "rank 1 waits for rank 0's rendezvous");
    CHECK(tsl_trials_next_for(s, "w-a", id, &rank, &cancel, &err) == 0 && rank == 0 && !cancel &&
              strcmp(id, t.trial_id) == 0,
          "rank 0 is due first");
    tsl_trials_delivered(s, id, 0, false, &err);
    CHECK(tsl_trials_next_for(s, "w-a", id, &rank, &cancel, &err) == 1, "handed out once");
    CHECK(tsl_trials_ready(s, t.trial_id, "10.0.0.1:4000", NULL, 0, &err) == 0, "ready");
    CHECK(tsl_trials_next_for(s, "w-b", id, &rank, &cancel, &err) == 0 && rank == 1,
          "rank 1 is due once rank 0 is ready");
    tsl_trials_delivered(s, id, 1, false, &err);
    report(s, t.trial_id, 0, 0.4, "", &all);
    CHECK(!all, "one rank of two reported");
    report(s, t.trial_id, 1, 0.6, "", &all);
    CHECK(all, "both ranks reported");
    CHECK(tsl_trials_get(s, t.trial_id, &got, &err) == 0, "get: %s", err.msg);
    CHECK(strcmp(got.status, "running") == 0 && got.n_ranks == 2 &&
              strcmp(got.ranks[1].state, "done") == 0 && got.ranks[1].iter_time_s == 0.6 &&
              strcmp(got.rendezvous, "10.0.0.1:4000") == 0 && got.ready,
          "the ranks' results and the rendezvous are stored");
    got.measured_iter_time_s = 0.6;
    got.measured_peak_bytes = 200;
    got.measured_samples_per_s = 8 / 0.6;
    CHECK(tsl_trials_finish_done(s, &got, 300, &err) == 0, "finish");
    tsl_trial_clear(&got);
    tsl_trials_get(s, t.trial_id, &got, &err);
    CHECK(strcmp(got.status, "done") == 0 && got.finished_unix == 300 &&
              got.measured_iter_time_s == 0.6,
          "done with the measured figures");
    CHECK(tsl_trials_fail(s, t.trial_id, "late", 301, &err) == 1, "a done trial does not fail");
    tsl_trial_clear(&got);
    char *pj = NULL;
    CHECK(tsl_trials_plan_json(s, t.trial_id, &pj, &err) == 0 && pj && strstr(pj, "\"tp2\""),
          "the plan object is kept with the trial");
    free(pj);
    tsl_trial_clear(&t);
    tsl_store_close(s);
}

static void test_fail_and_batches(void)
{
    tsl_store_t *s = open_store();
    tsl_err_t err = {0};
    tsl_trial_t t[3], got;
    char ids[4][TSL_TRIAL_ID_LEN + 1], id[TSL_TRIAL_ID_LEN + 1];
    size_t n = 0;
    uint32_t rank;
    bool cancel, all;
    make(&t[0], "b-2", 0, "w-c", "w-d");
    make(&t[1], "b-2", 1, "w-c", "w-d");
    make(&t[2], "b-3", 0, "w-d", "w-e");
    CHECK(tsl_trials_create(s, t, 3, &err) == 0, "create: %s", err.msg);
    tsl_trials_ids(s, "startable", ids, 4, &n, &err);
    CHECK(n == 2 && strcmp(ids[0], t[0].trial_id) == 0,
          "the first of each batch is startable (%zu)", n);
    tsl_trials_start(s, t[0].trial_id, 150, &err);
    tsl_trials_ids(s, "startable", ids, 4, &n, &err);
    CHECK(n == 0, "w-d runs a trial: neither the next of its batch nor another batch on it (%zu)",
          n);
    tsl_trials_next_for(s, "w-c", id, &rank, &cancel, &err);
    tsl_trials_delivered(s, id, 0, false, &err);
    report(s, t[0].trial_id, 1, 0, "executor: bad", &all);
    CHECK(tsl_trials_fail(s, t[0].trial_id, "rank 1 failed", 160, &err) == 0, "fail");
    CHECK(tsl_trials_next_for(s, "w-c", id, &rank, &cancel, &err) == 0 && cancel && rank == 0,
          "rank 0 was handed out: its worker is told to stop");
    tsl_trials_delivered(s, id, 0, true, &err);
    CHECK(tsl_trials_next_for(s, "w-c", id, &rank, &cancel, &err) == 1, "told once");
    tsl_trials_get(s, t[0].trial_id, &got, &err);
    CHECK(strcmp(got.status, "failed") == 0 && strcmp(got.error, "rank 1 failed") == 0 &&
              strcmp(got.ranks[1].error, "executor: bad") == 0,
          "failed with the reason; the rank keeps its error");
    tsl_trial_clear(&got);
    tsl_trials_ids(s, "startable", ids, 4, &n, &err);
    CHECK(n == 2, "both waiting trials may start now (%zu)", n);
    tsl_trials_start(s, t[1].trial_id, 170, &err);
    uint32_t failed = 0;
    CHECK(tsl_trials_recover(s, 180, &failed, &err) == 0 && failed == 2,
          "a restart fails the running and the pending trial (%u)", failed);
    tsl_trials_get(s, t[2].trial_id, &got, &err);
    CHECK(strcmp(got.status, "failed") == 0 &&
              strstr(got.error, "daemon restarted during the trial"),
          "with the reason: %s", got.error);
    tsl_trial_clear(&got);
    int64_t count = 0;
    tsl_trials_count(s, "failed", &count, &err);
    CHECK(count == 3, "three failed (%lld)", (long long)count);
    for (int i = 0; i < 3; i++)
        tsl_trial_clear(&t[i]);
    tsl_store_close(s);
}

typedef struct samples {
    tsl_calib_sample_t s[8];
    int n;
} samples_t;

static void take(void *ud, const tsl_calib_sample_t *s)
{
    samples_t *v = ud;
    if (v->n < 8)
        v->s[v->n++] = *s;
}

static int count_rows(void *ud, const char *model, bool sim, const tsl_calib_t *c, int64_t when)
{
    (void)model;
    (void)c;
    (void)when;
    *(int *)ud += sim ? 1 : 100;
    return 0;
}

/* The refit of calibration.h: fitted from the key's one done trial, stored,
 * read back equal, kept apart from the measured key, listed. */
static void test_calibration_store(tsl_store_t *s)
{
    tsl_err_t err = {0};
    tsl_calib_t fit, got, none;
    CHECK(tsl_calibration_get(s, "sim A100 80GB", true, &got, &err) == 0, "nothing stored yet");
    CHECK(tsl_calibration_refit(s, "sim A100 80GB", true, &fit, &err) == 0, "refit: %s", err.msg);
    CHECK(fit.n_samples == 1, "fitted from the one done trial (%u)", fit.n_samples);
    CHECK(fit.mae_before > 0, "the uncorrected error is the trial's (%g)", fit.mae_before);
    CHECK(tsl_calib_compute_scale(&fit, 1024, 4 * 1024) > 1,
          "measured slower than predicted: compute x%g",
          tsl_calib_compute_scale(&fit, 1024, 4 * 1024));
    CHECK(tsl_calibration_get(s, "sim A100 80GB", true, &got, &err) == 1, "stored: %s", err.msg);
    CHECK(got.n_samples == fit.n_samples && fabs(got.comm_scale - fit.comm_scale) < 1e-9 &&
              fabs(got.mem_scale - fit.mem_scale) < 1e-9 &&
              fabs(got.mae_before - fit.mae_before) < 1e-9,
          "read back as fitted");
    CHECK(tsl_calibration_get(s, "sim A100 80GB", false, &none, &err) == 0,
          "the measured key has none");
    CHECK(tsl_calibration_refit(s, "sim A100 80GB", false, &none, &err) == 0 &&
              none.n_samples == 0 &&
              tsl_calibration_get(s, "sim A100 80GB", false, &got, &err) == 0,
          "a key without trials stores nothing");
    int rows = 0;
    CHECK(tsl_calibration_list(s, "", count_rows, &rows, &err) == 0 && rows == 1,
          "one calibration listed (%d)", rows);
    /* As an older tesseld fitted it: its factors correct another cost model's
     * predictions, so this one neither applies nor lists it. */
    sqlite3_exec(tsl_store_lock_db(s), "UPDATE calibrations SET cost_model_version = 1", NULL, NULL,
                 NULL);
    tsl_store_unlock_db(s);
    rows = 0;
    CHECK(tsl_calibration_get(s, "sim A100 80GB", true, &got, &err) == 0 &&
              tsl_calibration_list(s, "", count_rows, &rows, &err) == 0 && rows == 0,
          "a calibration of another cost model is not applied (%d listed)", rows);
    CHECK(tsl_calibration_refit(s, "sim A100 80GB", true, &fit, &err) == 0 &&
              tsl_calibration_get(s, "sim A100 80GB", true, &got, &err) == 1,
          "a refit by this binary stores one it applies: %s", err.msg);
}

/* A done trial of the key (devops cuda) whose slowest rank took iter_s. */
static void done_trial(tsl_store_t *s, double iter_s)
{
    tsl_trial_t t, got;
    tsl_err_t err = {0};
    bool all = false;
    make(&t, "b-c", 0, "w-a", "w-b");
    snprintf(t.devops, sizeof t.devops, "cuda");
    CHECK(tsl_trials_create(s, &t, 1, &err) == 0 && tsl_trials_start(s, t.trial_id, 150, &err) == 0,
          "create and start: %s", err.msg);
    report(s, t.trial_id, 0, iter_s, "", &all);
    report(s, t.trial_id, 1, iter_s, "", &all);
    CHECK(all && tsl_trials_get(s, t.trial_id, &got, &err) == 0, "reported: %s", err.msg);
    got.measured_iter_time_s = iter_s;
    got.measured_peak_bytes = 200;
    CHECK(tsl_trials_finish_done(s, &got, 300, &err) == 0, "finish: %s", err.msg);
    tsl_trial_clear(&got);
    tsl_trial_clear(&t);
}

/* A fit far from what the trials measured is refused and the stored one kept. */
static void test_calibration_refused(tsl_store_t *s)
{
    tsl_err_t err = {0};
    tsl_calib_t fit, got;
    done_trial(s, 600); /* x1000 the prediction: no GPU is that far off */
    CHECK(tsl_calibration_refit(s, "sim A100 80GB", true, &fit, &err) == 1,
          "a fit with a x1000 trial is refused");
    CHECK(strstr(err.msg, "refused, not applied") && strstr(err.msg, "outside [0.05, 20]"),
          "saying why: %s", err.msg);
    CHECK(tsl_calibration_get(s, "sim A100 80GB", true, &got, &err) == 1 && got.n_samples == 1,
          "the calibration fitted before stays (%u trial(s))", got.n_samples);
}

static void test_calib(void)
{
    tsl_store_t *s = open_store();
    tsl_err_t err = {0};
    samples_t v = {0};
    tsl_calib_t none;
    /* test_life's done trial timed the cpu executor: never a sample, no fit. */
    CHECK(tsl_trials_calib_samples(s, "sim A100 80GB", true, take, &v, &err) == 0 && v.n == 0,
          "a cpu-executor trial is no calibration sample (%d)", v.n);
    CHECK(tsl_calibration_refit(s, "sim A100 80GB", true, &none, &err) == 0 && none.n_samples == 0,
          "and refits nothing");
    /* The same trial as if the cuda executor had run it. */
    sqlite3_exec(tsl_store_lock_db(s), "UPDATE trials SET devops = 'cuda'", NULL, NULL, NULL);
    tsl_store_unlock_db(s);
    CHECK(tsl_trials_calib_samples(s, "sim A100 80GB", true, take, &v, &err) == 0, "samples: %s",
          err.msg);
    CHECK(v.n == 1, "the one done trial is a sample (%d)", v.n);
    if (v.n == 1) {
        const tsl_calib_sample_t *c = &v.s[0];
        CHECK_NEAR(c->pred_compute_s, 2 * (0.2 - 0.01), 1e-12, "compute %g", c->pred_compute_s);
        CHECK_NEAR(c->pred_comm_s, 0.05 + 2 * 0.01, 1e-12, "comm %g", c->pred_comm_s);
        CHECK(c->pred_iter_s == 0.5 && c->pred_peak_bytes == 1000, "iteration and peak");
        CHECK_NEAR(c->meas_compute_s, 0.6 * 0.75, 1e-12, "slowest rank's fwd + bwd");
        CHECK_NEAR(c->meas_comm_s, 0.6 * 0.125, 1e-12, "slowest rank's comm");
        CHECK(c->meas_iter_s == 0.6 && c->meas_peak_bytes == 200, "measured iteration and peak");
        CHECK(c->tp == 2 && c->tokens == 4 * 1024 && c->hidden == 1024,
              "shape: tp %u tokens %u hidden %u", c->tp, c->tokens, c->hidden);
    }
    v.n = 0;
    tsl_trials_calib_samples(s, "sim A100 80GB", false, take, &v, &err);
    CHECK(v.n == 0, "simulated and measured keys are apart");
    /* The plan as an older tesseld stored it: its predictions are another cost
     * model's, so its trial is no sample for this one's calibration. */
    sqlite3_exec(tsl_store_lock_db(s), "UPDATE plans SET cost_model_version = 1", NULL, NULL, NULL);
    tsl_store_unlock_db(s);
    v.n = 0;
    tsl_trials_calib_samples(s, "sim A100 80GB", true, take, &v, &err);
    CHECK(v.n == 0, "a trial of a plan another cost model priced is no sample (%d)", v.n);
    char sql[96];
    snprintf(sql, sizeof sql, "UPDATE plans SET cost_model_version = %u", TSL_COST_MODEL_VERSION);
    sqlite3_exec(tsl_store_lock_db(s), sql, NULL, NULL, NULL);
    tsl_store_unlock_db(s);
    test_calibration_store(s);
    test_calibration_refused(s);
    tsl_store_close(s);
}

/* ---- cancel ---------------------------------------------------------------------------------- */

static void test_cancel(void)
{
    tsl_store_t *s = open_store();
    tsl_err_t err = {0};
    tsl_trial_t t, got;
    char id[TSL_TRIAL_ID_LEN + 1];
    uint32_t rank = 9;
    bool cancel = false;
    make(&t, "b-x", 0, "w-x", "w-y");
    CHECK(tsl_trials_create(s, &t, 1, &err) == 0 && tsl_trials_start(s, t.trial_id, 150, &err) == 0,
          "create and start: %s", err.msg);
    tsl_trials_delivered(s, t.trial_id, 0, false, &err);
    CHECK(tsl_trials_cancel(s, t.trial_id, "mis-sized", 160, &err) == 0, "cancel: %s", err.msg);
    CHECK(tsl_trials_get(s, t.trial_id, &got, &err) == 0 && strcmp(got.status, "cancelled") == 0 &&
              strcmp(got.error, "cancelled: mis-sized") == 0 && got.finished_unix == 160 &&
              tsl_trial_over(&got),
          "cancelled, with the reason and the end time (%s: %s)", got.status, got.error);
    tsl_trial_clear(&got);
    CHECK(tsl_trials_next_for(s, "w-x", id, &rank, &cancel, &err) == 0 && cancel && rank == 0 &&
              strcmp(id, t.trial_id) == 0,
          "the worker of the rank handed out is told to stop it");
    tsl_trials_delivered(s, id, 0, true, &err);
    CHECK(tsl_trials_next_for(s, "w-y", id, &rank, &cancel, &err) == 1,
          "a rank never handed out needs no cancel");
    CHECK(tsl_trials_cancel(s, t.trial_id, "", 170, &err) == 2, "cancelling again changes nothing");
    CHECK(tsl_trials_get(s, t.trial_id, &got, &err) == 0 && got.finished_unix == 160,
          "the first cancel's time stays");
    tsl_trial_clear(&got);
    CHECK(tsl_trials_cancel(s, "t-none", "", 170, &err) == 1 &&
              tsl_err_code(&err) == TSL_E_NOTFOUND,
          "an unknown id: not found");
    tsl_trial_clear(&t);
    make(&t, "b-y", 0, "w-x", "w-y");
    tsl_trials_create(s, &t, 1, &err);
    tsl_trials_start(s, t.trial_id, 150, &err);
    tsl_trials_fail(s, t.trial_id, "rank 1 died", 155, &err);
    err = (tsl_err_t){0};
    CHECK(tsl_trials_cancel(s, t.trial_id, "", 170, &err) == 3 &&
              tsl_err_code(&err) == TSL_E_PRECONDITION && strstr(err.msg, "is failed already"),
          "a failed trial is refused naming its state: %s", err.msg);
    tsl_trial_clear(&t);
    tsl_store_close(s);
}

/* A skipped plan of a batch (StartTrial: one the executor cannot run): stored over from
 * the start, without ranks; it reads back "skipped" with its reason, never holds up the
 * next trial of its batch, never starts, is no failure to count, cannot be cancelled
 * and a restart leaves it alone. */
static void test_skipped(void)
{
    tsl_store_t *s = open_store();
    tsl_err_t err = {0};
    tsl_trial_t t[3], got;
    char ids[4][TSL_TRIAL_ID_LEN + 1];
    size_t n = 0;
    int64_t count = -1, failed0 = 0, cancelled0 = 0, all0 = 0; /* earlier tests' trials */
    uint32_t failed = 9;
    tsl_trials_count(s, "failed", &failed0, &err);
    tsl_trials_count(s, "cancelled", &cancelled0, &err);
    tsl_trials_count(s, "", &all0, &err);
    make(&t[0], "b-s", 0, "w-s", "w-t");
    make(&t[1], "b-s", 1, "w-s", "w-t");
    make(&t[2], "b-s", 2, "w-s", "w-t");
    snprintf(t[0].status, sizeof t[0].status, "skipped");
    snprintf(t[0].error, sizeof t[0].error,
             "plan 0: plan: schedule ZB-V: the executor runs 1F1B and interleaved 1F1B; the "
             "executor cannot try it");
    CHECK(tsl_trials_create(s, t, 3, &err) == 0, "create: %s", err.msg);
    CHECK(tsl_trials_get(s, t[0].trial_id, &got, &err) == 0 && strcmp(got.status, "skipped") == 0 &&
              strcmp(got.error, "skipped: plan 0: plan: schedule ZB-V: the executor runs 1F1B "
                                "and interleaved 1F1B; the executor cannot try it") == 0 &&
              got.n_ranks == 0 && got.world_size == 2 && got.finished_unix == got.created_unix &&
              got.started_unix == 0 && tsl_trial_over(&got),
          "skipped reads back with its reason, no ranks, over when made (%s: %s, %u ranks)",
          got.status, got.error, got.n_ranks);
    tsl_trial_clear(&got);
    tsl_trials_ids(s, "startable", ids, 4, &n, &err);
    CHECK(n == 1 && strcmp(ids[0], t[1].trial_id) == 0,
          "the skipped first plan holds nothing up: the next of its batch is startable (%zu)", n);
    CHECK(tsl_trials_start(s, t[0].trial_id, 150, &err) == 1, "a skipped trial never starts");
    tsl_trials_start(s, t[1].trial_id, 150, &err);
    tsl_trials_ids(s, "startable", ids, 4, &n, &err);
    CHECK(n == 0, "the third waits for the second, as always (%zu)", n);
    CHECK(tsl_trials_count(s, "skipped", &count, &err) == 0 && count == 1, "one skipped (%lld)",
          (long long)count);
    CHECK(tsl_trials_count(s, "failed", &count, &err) == 0 && count == failed0,
          "a skipped trial is not counted failed (%lld)", (long long)count);
    CHECK(tsl_trials_count(s, "", &count, &err) == 0 && count == all0 + 3,
          "all three stored (%lld)", (long long)count);
    err = (tsl_err_t){0};
    CHECK(tsl_trials_cancel(s, t[0].trial_id, "", 160, &err) == 3 &&
              tsl_err_code(&err) == TSL_E_PRECONDITION && strstr(err.msg, "is skipped already"),
          "a skipped trial cannot be cancelled, naming its state: %s", err.msg);
    CHECK(tsl_trials_fail(s, t[0].trial_id, "late", 161, &err) == 1, "nor failed");
    tsl_trials_cancel(s, t[1].trial_id, "", 162, &err);
    CHECK(tsl_trials_count(s, "cancelled", &count, &err) == 0 && count == cancelled0 + 1 &&
              tsl_trials_count(s, "failed", &count, &err) == 0 && count == failed0,
          "cancelled counted apart from failed too");
    CHECK(tsl_trials_recover(s, 180, &failed, &err) == 0 && failed == 1,
          "a restart fails the pending trial only (%u)", failed);
    CHECK(tsl_trials_get(s, t[0].trial_id, &got, &err) == 0 && strcmp(got.status, "skipped") == 0,
          "and leaves the skipped one skipped (%s)", got.status);
    tsl_trial_clear(&got);
    for (int i = 0; i < 3; i++)
        tsl_trial_clear(&t[i]);
    tsl_store_close(s);
}

/* ---- which plans of a batch run ------------------------------------------------------------- */

/* The plan object of test_trials' DOC with extra keys (a JSON object's text). */
static json_t *scope_plan(const char *extra)
{
    json_t *p =
        json_loads("{\"label\": \"tessel\", \"pp\": 1, \"global_batch\": 8, \"micro_batch\": "
                   "4, \"n_micro\": 2, \"iter_time_s\": 0.5, \"peak_bytes\": 1000, "
                   "\"stages\": [{\"first_layer\": 0, \"n_layers\": 26, \"first_device\": "
                   "0, \"n_devices\": 2, \"time_s\": 0.25, \"runs\": [{\"first_layer\": 0, "
                   "\"count\": 26, \"strategy\": \"tp2\"}]}]}",
                   0, NULL);
    json_t *more = json_loads(extra, 0, NULL);
    json_object_update(p, more);
    json_decref(more);
    return p;
}

/* Plans the executor runs but no online workers fit (tsl_sched_unplaced): the plan asked
 * for refuses the batch saying what is missing; an alternative is skipped naming it;
 * a batch left with none that runs is refused naming each plan's reason. */
static void test_unplaced(const json_t *doc)
{
    tsl_err_t err = {0};
    tsl_sched_scope_t sc[4];
    uint32_t n_runs = 0;
    char out[1024], stored[TSL_TRIAL_ERROR_LEN];
    const char *missing = "the plan needs 4 GPUs of type A100-80G; online matching workers have "
                          "2: w-a (host a, 2 GPUs)";
    tsl_sched_batch_scope(doc, 4, sc, &n_runs, &err);
    CHECK(tsl_sched_unplaced(sc, 0, missing, &n_runs, out, sizeof out) == 1 &&
              strcmp(out, missing) == 0 && sc[0].runs && n_runs == 2,
          "the plan asked for without workers refuses the batch as before: %s", out);
    out[0] = '\0';
    CHECK(tsl_sched_unplaced(sc, 2, missing, &n_runs, out, sizeof out) == 0 && out[0] == '\0' &&
              !sc[2].runs && sc[2].unplaced && n_runs == 1,
          "an alternative without workers is skipped (%u run)", n_runs);
    tsl_sched_skip_reason(&sc[2], stored, sizeof stored);
    CHECK(strcmp(stored, "plan 2: no online workers fit it: the plan needs 4 GPUs of type "
                         "A100-80G; online matching workers have 2: w-a (host a, 2 GPUs)") == 0,
          "its reason names what is missing (hosts, GPUs): %s", stored);
    tsl_sched_skip_reason(&sc[1], stored, sizeof stored);
    CHECK(strncmp(stored, "plan 1: ", 8) == 0 && strstr(stored, "; the executor cannot try it") &&
              !strstr(stored, "online workers"),
          "a plan the executor cannot run keeps its reason: %s", stored);
    char longwhy[700];
    memset(longwhy, 'x', sizeof longwhy - 1);
    longwhy[sizeof longwhy - 1] = '\0';
    tsl_sched_scope_t cut[3];
    uint32_t cut_runs = 0;
    tsl_sched_batch_scope(doc, 3, cut, &cut_runs, &err);
    CHECK(tsl_sched_unplaced(cut, 2, longwhy, &cut_runs, out, sizeof out) == 0 && cut_runs == 1 &&
              strlen(cut[2].why) < TSL_SCHED_WHY_LEN &&
              strncmp(cut[2].why, "plan 2: no online workers fit it: xxx", 37) == 0,
          "a long reason is cut to fit (%zu)", strlen(cut[2].why));
    /* plan 0 the executor cannot run (sc[1]'s reason), plan 2 without workers: none runs */
    sc[0] = sc[1];
    memcpy(sc[0].why, "plan 0", 6);
    tsl_sched_none_runs("00000000000000f1", sc, 3, out, sizeof out);
    const char *head = "plan 00000000000000f1: no plan of the 3 of the batch can be tried now: "
                       "plan 0: ";
    CHECK(strncmp(out, head, strlen(head)) == 0 &&
              strstr(out, "; plan 2: no online workers fit it: the plan needs 4 GPUs") &&
              !strstr(out, "the executor cannot try any"),
          "a batch left with none that runs names each reason: %s", out);
}

static void test_batch_scope(void)
{
    tsl_err_t err = {0};
    /* a plan that runs 1F1B; alternatives a ZB-V plan, a ZB-H1 plan (tried as 1F1B) and
     * an FP8 one */
    json_t *doc =
        json_pack("{s:{s:s}, s:o, s:[o, o, o]}", "model", "name", "GPT2-345M", "plan",
                  scope_plan("{}"), "alternatives", scope_plan("{\"schedule\": \"zbv\"}"),
                  scope_plan("{\"schedule\": \"zbh1\"}"), scope_plan("{\"fp8_recipe\": 1}"));
    tsl_sched_scope_t sc[4];
    uint32_t n_runs = 9;
    char why[1024];
    CHECK(doc != NULL, "the document parses");
    CHECK(tsl_sched_batch_scope(doc, 4, sc, &n_runs, &err) == 0 && n_runs == 2,
          "two of four run (%u): %s", n_runs, err.msg);
    CHECK(sc[0].runs && sc[0].why[0] == '\0', "the 1F1B plan runs (%s)", sc[0].why);
    CHECK(!sc[1].runs && strncmp(sc[1].why, "plan 1: ", 8) == 0 && strstr(sc[1].why, "schedule") &&
              strstr(sc[1].why, "1F1B"),
          "the ZB-V plan does not, naming the schedule: %s", sc[1].why);
    CHECK(sc[2].runs, "the ZB-H1 plan runs (as 1F1B): %s", sc[2].why);
    CHECK(!sc[3].runs && strstr(sc[3].why, "plan 3: ") && strstr(sc[3].why, "FP8"),
          "the FP8 plan does not: %s", sc[3].why);
    tsl_sched_none_runs("00000000000000f1", sc + 1, 1, why, sizeof why);
    CHECK(strncmp(why, "plan 00000000000000f1: plan 1: ", 31) == 0 &&
              strstr(why, "; the executor cannot try it"),
          "one plan refused as a single plan always was: %s", why);
    sc[2] = sc[3]; /* plans 1 and 3: neither runs */
    tsl_sched_none_runs("00000000000000f1", sc + 1, 2, why, sizeof why);
    CHECK(strstr(why, "cannot try any of the 2 plans of the batch") && strstr(why, "schedule") &&
              strstr(why, "; plan 3: ") && strstr(why, "FP8"),
          "a batch none of whose plans runs names each reason: %s", why);
    test_unplaced(doc);
    json_t *hybrid = json_deep_copy(doc);
    json_object_set_new(json_object_get(hybrid, "model"), "mamba_layers", json_integer(23));
    CHECK(tsl_sched_batch_scope(hybrid, 4, sc, &n_runs, &err) == 0 && n_runs == 0 &&
              strstr(sc[0].why, "Mamba"),
          "a hybrid model's plans: none runs (%u): %s", n_runs, sc[0].why);
    json_t *broken = json_pack("{s:{}, s:[]}", "plan", "alternatives");
    CHECK(tsl_sched_batch_scope(broken, 2, sc, &n_runs, &err) == 0 && n_runs == 0 && !sc[1].runs &&
              strncmp(sc[1].why, "plan 1: ", 8) == 0,
          "a plan that is missing does not run: %s", sc[1].why);
    json_decref(broken);
    json_decref(hybrid);
    json_decref(doc);
}

/* ---- the pick ------------------------------------------------------------------------------- */

static tsl_reg_device_t devs_a[2] = {{0, "NVIDIA A100-SXM4-80GB", 80ull << 30, 108, "u0"},
                                     {1, "NVIDIA A100-SXM4-80GB", 80ull << 30, 108, "u1"}};
static tsl_reg_device_t devs_b[1] = {{0, "NVIDIA A100-SXM4-80GB", 80ull << 30, 108, "u2"}};
static tsl_reg_device_t devs_c[1] = {{0, "sim NVIDIA A100 80GB", 80ull << 30, 108, "u3"}};
static tsl_reg_device_t devs_d[1] = {{0, "NVIDIA A100-PCIE-40GB", 40ull << 30, 108, "u4"}};

static void worker(tsl_reg_worker_t *w, const char *id, const char *host, bool sim,
                   const char *state, tsl_reg_device_t *d, uint32_t n)
{
    memset(w, 0, sizeof *w);
    snprintf(w->worker_id, sizeof w->worker_id, "%s", id);
    w->hostname = host;
    w->simulated = sim;
    w->state = state;
    w->devices = d;
    w->n_devices = n;
}

static void test_pick(void)
{
    tsl_sched_need_t need;
    tsl_err_t err = {0};
    tsl_reg_worker_t ws[5];
    tsl_sched_pick_t out[4];
    char why[600];
    bool sim = true;
    worker(&ws[0], "w-a", "a", false, "online", devs_a, 2);
    worker(&ws[1], "w-b", "b", false, "online", devs_b, 1);
    worker(&ws[2], "w-c", "c", true, "online", devs_c, 1);
    worker(&ws[3], "w-d", "d", false, "online", devs_d, 1);
    worker(&ws[4], "w-e", "e", false, "offline", devs_b, 1);
    CHECK(tsl_sched_need_from_request("{\"cluster_spec\": \"4xA100-80G\"}", NULL, 3, &need, &err) ==
              0,
          "need: %s", err.msg);
    CHECK(strcmp(need.rank_type[2].name, "A100-80G") == 0, "ranks of type A100-80G");
    CHECK(tsl_sched_pick(&need, ws, 5, NULL, 0, out, &sim, why, sizeof why) == 0, "pick: %s", why);
    CHECK(!sim && out[0].worker == 0 && out[0].device_index == 0 && out[1].worker == 0 &&
              out[1].device_index == 1 && out[2].worker == 1,
          "worker by worker, device by device; the 40 GB and offline ones left out");
    tsl_sched_need_free(&need);
    tsl_sched_need_from_request("{\"cluster_spec\": \"4xA100-80G\"}", NULL, 4, &need, &err);
    CHECK(tsl_sched_pick(&need, ws, 5, NULL, 0, out, &sim, why, sizeof why) != 0 &&
              strstr(why, "needs 4 GPUs of type A100-80G") && strstr(why, "have 3") &&
              strstr(why, "w-a (host a, 2 GPUs)") &&
              strstr(why, "simulated and real workers are never mixed"),
          "what is missing: %s", why);
    need.world = 1;
    const char *nodes[] = {"c"};
    CHECK(tsl_sched_pick(&need, ws, 5, nodes, 1, out, &sim, why, sizeof why) == 0 && sim &&
              out[0].worker == 2,
          "--nodes c: the simulated worker (%s)", why);
    tsl_sched_need_free(&need);
    CHECK(tsl_sched_need_from_request(
              "{\"cluster\": {\"name\": \"registered: b,a\", \"link\": \"ib100\", \"nodes\": "
              "[{\"name\": \"b\", \"gpus\": 1, \"type\": \"A100-80G\"}, {\"name\": \"a\", "
              "\"gpus\": 2, \"type\": \"A100-80G\"}]}}",
              NULL, 3, &need, &err) == 0,
          "registered need: %s", err.msg);
    CHECK(need.n_hosts == 2 && strcmp(need.hosts[0], "b") == 0, "the plan's nodes in order");
    CHECK(tsl_sched_pick(&need, ws, 5, NULL, 0, out, &sim, why, sizeof why) == 0 &&
              out[0].worker == 1 && out[1].worker == 0 && out[2].device_index == 1,
          "registered plans run on their nodes in the plan's order (%s)", why);
    ws[1].state = "offline";
    CHECK(tsl_sched_pick(&need, ws, 5, NULL, 0, out, &sim, why, sizeof why) != 0 &&
              strstr(why, "'b'"),
          "a plan node without an online worker is named: %s", why);
    tsl_sched_need_free(&need);
    json_t *plan = json_loads("{\"node_order\": [1, 0]}", 0, NULL);
    CHECK(tsl_sched_need_from_request("{\"cluster\": {\"link\": \"ib100\", \"nodes\": "
                                      "[{\"gpus\": 1, \"type\": \"A100-80G\"}, "
                                      "{\"gpus\": 1, \"type\": \"V100-32G\"}]}}",
                                      plan, 2, &need, &err) == 0 &&
              strcmp(need.rank_type[0].name, "V100-32G") == 0 &&
              strcmp(need.rank_type[1].name, "A100-80G") == 0,
          "a plan's node_order places its ranks (%s)", err.msg);
    json_decref(plan);
    tsl_sched_need_free(&need);
    CHECK(tsl_sched_need_from_request("{\"model_preset\": \"x\"}", NULL, 1, &need, &err) != 0,
          "a request without a cluster is an error");
    CHECK(tsl_gpu_model_matches("NVIDIA H100 80GB HBM3", 80ull << 30, tsl_gpu_find("H100-80G")) &&
              !tsl_gpu_model_matches("NVIDIA A100 80GB", 80ull << 30, tsl_gpu_find("H100-80G")),
          "models match by family and memory");
}

/* ---- durations against a stepped wall clock ------------------------------------------------ */

static struct timespec fake_wall, fake_mono;

static int fake_clock(clockid_t id, struct timespec *ts)
{
    *ts = id == CLOCK_MONOTONIC ? fake_mono : fake_wall;
    return 0;
}

static void fake_advance(time_t wall_step_s, time_t elapsed_s)
{
    fake_wall.tv_sec += wall_step_s + elapsed_s;
    fake_mono.tv_sec += elapsed_s;
}

static void worker_state(tsl_store_t *s, const char *id, char *state, size_t cap)
{
    char host[64];
    tsl_err_t err = {0};
    state[0] = '\0';
    CHECK(tsl_trials_worker_state(s, id, state, cap, host, sizeof host, &err) == 0, "state: %s",
          err.msg);
}

/* Liveness and a trial's deadline follow elapsed time, not the wall clock: a +2 h
 * step neither takes a heartbeating worker offline nor ends a trial; a -2 h step
 * does not keep a silent worker online. */
static void test_clock_steps(void)
{
    tsl_store_t *s = open_store();
    tsl_err_t err = {0};
    tsl_reg_worker_t w;
    bool known = false;
    char state[16];
    fake_wall.tv_sec = 1700000000;
    fake_mono.tv_sec = 1000;
    tsl_clock_set_source(fake_clock);
    worker(&w, "", "clock-host", true, "online", devs_c, 1);
    w.heartbeat_s = 1;
    w.version = "test";
    w.driver_version = w.cuda_version = w.nccl_version = "";
    CHECK(tsl_registry_register(s, &w, tsl_clock_unix_s(), &known, &err) == 0, "register: %s",
          err.msg);
    int64_t started = tsl_clock_unix_s();
    fake_advance(2 * 3600, 1);
    CHECK(tsl_registry_sweep(s, tsl_clock_unix_s(), 10, NULL, NULL, &err) == 0, "sweep: %s",
          err.msg);
    worker_state(s, w.worker_id, state, sizeof state);
    CHECK(strcmp(state, "online") == 0, "+2 h step, 1 s elapsed: still online (%s)", state);
    CHECK(tsl_clock_unix_s() - started == 1, "+2 h step: a trial has run 1 s, not 2 h (%lld)",
          (long long)(tsl_clock_unix_s() - started));
    fake_advance(-4 * 3600, 20);
    CHECK(tsl_registry_sweep(s, tsl_clock_unix_s(), 10, NULL, NULL, &err) == 0, "sweep: %s",
          err.msg);
    worker_state(s, w.worker_id, state, sizeof state);
    CHECK(strcmp(state, "offline") == 0, "-2 h step, 21 s silent: offline (%s)", state);
    CHECK(tsl_clock_unix_s() - started == 21, "-2 h step: a trial's deadline still comes");
    /* A restart after a backward step: a last_seen in the future counts from now. */
    bool back = false;
    CHECK(tsl_registry_heartbeat(s, w.worker_id, false, tsl_clock_unix_s() + 7200, &back, &err) ==
              0,
          "heartbeat: %s", err.msg);
    fake_advance(0, 11);
    tsl_registry_sweep(s, tsl_clock_unix_s(), 10, NULL, NULL, &err);
    fake_advance(0, 11);
    tsl_registry_sweep(s, tsl_clock_unix_s(), 10, NULL, NULL, &err);
    worker_state(s, w.worker_id, state, sizeof state);
    CHECK(strcmp(state, "offline") == 0, "a future last_seen: offline after one timeout (%s)",
          state);
    tsl_clock_set_source(NULL);
    tsl_store_close(s);
}

int main(void)
{
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/tsl-trials-XXXXXX", base && *base ? base : "/tmp");
    if (mkdtemp(tmpdir) == NULL)
        SKIP_ALL("cannot create a temporary directory");
    test_life();
    test_fail_and_batches();
    test_calib();
    test_cancel();
    test_skipped();
    test_batch_scope();
    test_pick();
    test_clock_steps();
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0)
        fprintf(stderr, "note: %s left behind\n", tmpdir);
    return CHECK_DONE();
}
