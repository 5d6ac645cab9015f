/*
 * store_trials.h — trials in tesseld's SQLite store (schema/004_trials.sql):
 * a plan run for real on registered workers, its ranks, what they measured.
 *
 * Life of a trial: created "pending" in a batch (StartTrial: one trial per plan
 * of a top-k call, batch_pos 0, 1, ...) with its ranks "assigned" to a worker
 * and GPU each; "running" once started (tsl_trials_start); rank 0's assignment
 * is then deliverable, the other ranks' once rank 0 reported ready
 * (tsl_trials_ready); each rank "running" once its assignment was handed out
 * (tsl_trials_delivered), "done" with its result; the trial "done" when every
 * rank is (tsl_trials_finish_done), or "failed" with a reason at the first
 * error (tsl_trials_fail), which also marks every rank that was handed out and
 * not finished cancel_pending: its worker is told to stop at its next poll.
 * Everything is stored at once, so it survives a restart; tsl_trials_recover
 * fails what was pending or running when the daemon stopped.
 *
 * Skipped: a plan of a batch the executor cannot run, or an alternative no online
 * workers fit (StartTrial; trial_sched.h), is created "skipped" instead, over from the start: no ranks, never started,
 * never a calibration sample nor part of a top-k choice, and the next trial of
 * its batch does not wait for it. Like a cancelled trial it is stored "failed"
 * with its error prefixed ("skipped: <reason>"; schema/004's CHECK on status
 * predates both) and reads back with its own status.
 *
 * Link probes (kind "link", schema/004): two ranks on two workers time the link
 * between their nodes; no plan (plan_fingerprint "" here, NULL in the table),
 * never a calibration sample nor part of a top-k choice.
 *
 * Calibration samples (tsl_trials_calib_samples): every done trial without an
 * out-of-memory rank of one hardware key (the GPU model of rank 0's device,
 * simulated or not) whose plan this binary's cost model priced
 * (TSL_COST_MODEL_VERSION; store.h), reduced to its slowest stage as planner/calibrate.h wants
 * it. Predicted, from the plan object the trial was made for (plan_json.h;
 * docs/cost-model.md "Pipeline"), with the slowest stage = the largest time_s
 * and its per-micro-batch times scaled to an iteration by n_micro (the
 * executor's phase_s are per iteration):
 *   pred_iter_s     the plan's iter_time_s
 *   pred_compute_s  n_micro × (time_nosync_s − p2p_s): forward + backward with
 *                   recomputation and the TP collectives inside the layers, no
 *                   gradient sync, no pipeline send/recv
 *   pred_comm_s     (time_s − time_nosync_s) + n_micro × p2p_s: the gradient
 *                   sync of the last micro-batch plus the stage's send/recv
 *   pred_peak_bytes the plan's peak_bytes
 * Measured, from the slowest rank (largest median): compute = phase_s "fwd" +
 * "bwd", comm = "comm"; iter = the trial's measured iteration, peak = the
 * largest rank peak. Shape: tp = the TP degree of the slowest stage's first
 * run ("tpN"; 1 without), tokens = micro_batch ÷ that run's data-parallel
 * width × the document's model.tokens_per_sample, hidden = the largest hidden
 * size of the model rebuilt from the stored request (preset or HuggingFace
 * config; 0 when it cannot be rebuilt).
 *
 * Thread-safety: as store.h (the store's lock is held for each call).
 * Ownership: tsl_trial_t holds its ranks and plan_json (malloc'd); tsl_trial_clear
 * frees them.
 */
#ifndef TSL_STORE_TRIALS_H
#define TSL_STORE_TRIALS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "calibrate.h"
#include "err.h"
#include "store.h"
#include "store_registry.h"

#define TSL_TRIAL_ID_LEN     39
#define TSL_TRIAL_MAX_WORLD  4096u
#define TSL_TRIAL_NCCL_ID    128u
#define TSL_TRIAL_ERROR_LEN  512
#define TSL_TRIAL_PHASE_JSON 512

typedef struct tsl_trial_rank {
    uint32_t rank;
    char worker_id[TSL_WORKER_ID_LEN + 1];
    char hostname[128];
    uint32_t device_index;
    char state[12]; /* "assigned", "running", "done", "failed" */
    bool delivered, cancel_pending;
    double iter_time_s, iter_min_s, iter_max_s, loss;
    uint64_t peak_bytes;
    char phase_json[TSL_TRIAL_PHASE_JSON]; /* {"fwd": s, ...} */
    bool oom;
    char error[TSL_TRIAL_ERROR_LEN];
    int64_t reported_unix;
} tsl_trial_rank_t;

typedef struct tsl_trial {
    char trial_id[TSL_TRIAL_ID_LEN + 1];
    char kind[8]; /* "plan", or "link" (a link probe: no plan, plan_fingerprint "") */
    char batch_id[TSL_TRIAL_ID_LEN + 1];
    uint32_t batch_pos;
    char plan_fingerprint[17];
    uint32_t plan_index;
    char plan_label[64];
    char status[12]; /* "pending", "running", "done", "failed", "cancelled", "skipped";
                        create: "skipped" or anything else (pending) */
    uint32_t world_size, iterations, warmup;
    double timeout_s;
    char comm[8], devops[8];
    bool simulated;
    char gpu_model[128];
    uint32_t global_batch;
    double predicted_iter_time_s, measured_iter_time_s, measured_samples_per_s;
    uint64_t predicted_peak_bytes, measured_peak_bytes;
    double time_error, memory_error;
    bool any_oom, chosen, ready;
    char error[TSL_TRIAL_ERROR_LEN]; /* create, skipped: the reason (stored prefixed) */
    char rendezvous[256];
    uint8_t nccl_id[TSL_TRIAL_NCCL_ID];
    size_t nccl_id_len;
    uint64_t seed;
    char *plan_json; /* create: the plan object (malloc'd, freed by tsl_trial_clear);
                        reads leave it NULL: tsl_trials_plan_json */
    int64_t created_unix, started_unix, finished_unix;
    bool plan_stale; /* reads: the plan's row is stale now (plans.stale: a profile it was
                        priced from changed, or another cost model priced it, schema/008);
                        false for a link probe or a plan no longer stored */
    uint32_t n_ranks;
    tsl_trial_rank_t *ranks; /* malloc'd, n_ranks (== world_size) */
} tsl_trial_t;

void tsl_trial_clear(tsl_trial_t *t);
bool tsl_trial_over(const tsl_trial_t *t); /* done, failed, cancelled or skipped */

/* A new id: prefix ("t-", "b-") + 16 hex digits, unique in this process. */
void tsl_trials_new_id(const char *prefix, char out[TSL_TRIAL_ID_LEN + 1]);

/* Inserts n trials (with their ranks) in one transaction: pending, or skipped (status
 * "skipped": error its reason, finished when created, its ranks not stored). */
int tsl_trials_create(tsl_store_t *s, const tsl_trial_t *t, size_t n, tsl_err_t *err);

/* 0 found (out filled; tsl_trial_clear it), 1 unknown (err names it), -1 error. */
int tsl_trials_get(tsl_store_t *s, const char *trial_id, tsl_trial_t *out, tsl_err_t *err);

/* Newest first; fp NULL or "" = every plan; limit ≥ 1. fn runs without the
 * store's lock (it may call the store); non-zero stops the walk (-1). */
typedef int (*tsl_trials_fn)(void *ud, const tsl_trial_t *t);
int tsl_trials_list(tsl_store_t *s, const char *fp, uint32_t limit, tsl_trials_fn fn, void *ud,
                    tsl_err_t *err);

/* The trials of a batch, by batch_pos (same callback rules). */
int tsl_trials_list_batch(tsl_store_t *s, const char *batch_id, tsl_trials_fn fn, void *ud,
                          tsl_err_t *err);

/* Ids of trials in a state, oldest first, into ids (at most cap); *n set.
 * "startable": pending trials whose batch predecessors are over and none of
 * whose workers runs another trial. */
int tsl_trials_ids(tsl_store_t *s, const char *which, char (*ids)[TSL_TRIAL_ID_LEN + 1], size_t cap,
                   size_t *n, tsl_err_t *err);

/* pending → running (0), 1 when it was not pending. */
int tsl_trials_start(tsl_store_t *s, const char *trial_id, int64_t now, tsl_err_t *err);

/* Rank 0's rendezvous: 0 stored, 1 the trial is not running. */
int tsl_trials_ready(tsl_store_t *s, const char *trial_id, const char *rendezvous,
                     const uint8_t *nccl_id, size_t nccl_len, tsl_err_t *err);

/* The assignment was handed out (rank → running), or its cancel was. */
int tsl_trials_delivered(tsl_store_t *s, const char *trial_id, uint32_t rank, bool cancel,
                         tsl_err_t *err);

/* A rank's result (rank → done, or failed with r->error). *all_done: every
 * rank of the trial is done now. 1 when the trial is over already. */
int tsl_trials_rank_result(tsl_store_t *s, const char *trial_id, const tsl_trial_rank_t *r,
                           int64_t now, bool *all_done, tsl_err_t *err);

/* running → done with the measured figures of t (measured_*, time_error,
 * memory_error, any_oom). 1 when it was not running. */
int tsl_trials_finish_done(tsl_store_t *s, const tsl_trial_t *t, int64_t now, tsl_err_t *err);

/* pending/running → failed with reason; ranks handed out and not finished get
 * cancel_pending. 0 failed now, 1 it was over already. */
int tsl_trials_fail(tsl_store_t *s, const char *trial_id, const char *reason, int64_t now,
                    tsl_err_t *err);

/* pending/running → "cancelled" (stored as failed with the error "cancelled:
 * <reason>", reason "" = "by request"); its ranks as tsl_trials_fail. 0 cancelled
 * now, 1 unknown id (TSL_E_NOTFOUND), 2 cancelled already (nothing changed),
 * 3 done, failed or skipped (TSL_E_PRECONDITION, naming its state), -1 error. */
int tsl_trials_cancel(tsl_store_t *s, const char *trial_id, const char *reason, int64_t now,
                      tsl_err_t *err);

/* The plan object the trial was made for (malloc'd into *json): 0, 1 unknown. */
int tsl_trials_plan_json(tsl_store_t *s, const char *trial_id, char **json, tsl_err_t *err);

int tsl_trials_set_chosen(tsl_store_t *s, const char *trial_id, tsl_err_t *err);

/* What a worker's poll should get next: a cancel (*cancel true) or a rank of a
 * running trial whose assignment is due (rank 0, or ready). 0 found, 1 none. */
int tsl_trials_next_for(tsl_store_t *s, const char *worker_id, char trial_id[TSL_TRIAL_ID_LEN + 1],
                        uint32_t *rank, bool *cancel, tsl_err_t *err);

/* The worker's state ("online", "offline", "stopped") and hostname: 0 found, 1 not. */
int tsl_trials_worker_state(tsl_store_t *s, const char *worker_id, char *state, size_t state_cap,
                            char *hostname, size_t host_cap, tsl_err_t *err);

/* At start-up: every pending or running trial fails with "daemon restarted
 * during the trial"; *n_failed says how many. */
int tsl_trials_recover(tsl_store_t *s, int64_t now, uint32_t *n_failed, tsl_err_t *err);

/* Registered workers by liveness state (store_registry.h), for the metrics gauge. */
int tsl_trials_count_workers(tsl_store_t *s, int64_t *online, int64_t *offline, int64_t *stopped,
                             tsl_err_t *err);

/* Counts per status as trials read ("" = all): "failed" leaves out the cancelled and
 * skipped trials stored failed; for metrics, the status page and tests. */
int tsl_trials_count(tsl_store_t *s, const char *status, int64_t *n, tsl_err_t *err);

/* Done trials without an OOM rank of one hardware key, oldest first. */
int tsl_trials_done_ids(tsl_store_t *s, const char *gpu_model, bool simulated,
                        char (*ids)[TSL_TRIAL_ID_LEN + 1], size_t cap, size_t *n, tsl_err_t *err);

/* The calibration samples of one hardware key (see the header comment;
 * store_trials_calib.c). */
typedef void (*tsl_calib_sample_fn)(void *ud, const tsl_calib_sample_t *sample);
int tsl_trials_calib_samples(tsl_store_t *s, const char *gpu_model, bool simulated,
                             tsl_calib_sample_fn fn, void *ud, tsl_err_t *err);

#endif
