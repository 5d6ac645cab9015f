/*
 * trial_run.h — running trials inside tesseld: the calls it holds (Registry.
 * Assignments long polls, Trials.WatchTrial streams), the transitions that
 * follow a report, and the housekeeping tick.
 *
 * One lock (tsl_trial_run_lock) serialises every trial transition, whichever
 * thread it comes from: the completion-queue thread (handlers, client
 * cancels) and the housekeeping thread (server.c, once a second). Functions
 * named *_locked expect it held. The store is the truth; the engine keeps
 * only the held calls, so a restart loses nothing but them (and
 * tsl_trial_run_new fails what was pending or running: store_trials.h).
 *
 * After any change of a trial, tsl_trial_run_changed_locked hands due
 * assignments (and cancels) to its workers' held polls, sends the trial to
 * its watchers, and starts pending trials whose workers are free. The tick
 * runs the registry's liveness sweep (a worker silent past its timeout is
 * offline even when nobody calls), fails running trials whose worker is no
 * longer online or that ran past timeout_s (naming rank, worker, host and
 * what happened), starts pending trials, ends polls past their wait_s and
 * refreshes watchers whose last send was dropped.
 *
 * Finishing: a trial whose ranks all reported is done with measured =
 * the slowest rank's median, peak = the largest, errors (predicted −
 * measured) / measured; once every trial of its batch is over and one is
 * done without OOM, the best measured samples/s is chosen and becomes the
 * stored plan's answer (trial_topk.c). A link probe (kind "link") runs the
 * same way, its assignments without a document and with the peer's hostname;
 * it is never calibrated from nor chosen (rank 0's worker reports its figures
 * as a profile before its result).
 */
#ifndef TSL_TRIAL_RUN_H
#define TSL_TRIAL_RUN_H

#include <stdbool.h>
#include <stdint.h>

#include "arena.h"
#include "server_call.h"
#include "store_trials.h"
#include "tessel/v1/trials.pb-c.h"

typedef struct tsl_trial_run tsl_trial_run_t;

/* Fails trials left pending/running by a previous daemon (logged). NULL when
 * out of memory. */
tsl_trial_run_t *tsl_trial_run_new(tsl_server_t *srv);
/* Ends every held call (OK for polls, UNAVAILABLE for watchers): the daemon stops. */
void tsl_trial_run_stop(tsl_server_t *srv);
void tsl_trial_run_free(tsl_trial_run_t *r);

void tsl_trial_run_lock(tsl_server_t *srv);
void tsl_trial_run_unlock(tsl_server_t *srv);

/* The registry's liveness sweep, transitions logged (the tick; StartTrial). */
void tsl_trial_run_sweep(tsl_server_t *srv);

/* The housekeeping tick (takes the lock itself). */
void tsl_trial_run_tick(tsl_server_t *srv);

/* Assignments: answers the next due assignment of worker_id, or holds the call
 * up to wait_s (answering it as soon as one is due). */
void tsl_trial_run_poll_locked(tsl_server_t *srv, tsl_call_t *call, const char *worker_id,
                               uint32_t wait_s);
/* WatchTrial: sends t now and holds the call until the trial is over. */
void tsl_trial_run_watch_locked(tsl_server_t *srv, tsl_call_t *call, const tsl_trial_t *t);

void tsl_trial_run_changed_locked(tsl_server_t *srv, const char *trial_id);
/* Cancels a pending or running trial (tsl_trials_cancel's codes: 0 now, 1 unknown,
 * 2 cancelled already, 3 over, -1 error in err); then as a failure: its ranks'
 * workers told, its watchers answered, the next pending trial started. */
int tsl_trial_run_cancel_locked(tsl_server_t *srv, const char *trial_id, const char *reason,
                                tsl_err_t *err);
/* Fails a trial (if not over) with reason; logs, counts, cancels its ranks. */
void tsl_trial_run_fail_locked(tsl_server_t *srv, const char *trial_id, const char *reason);
/* Every rank reported: the trial is done (see above). */
void tsl_trial_run_finish_locked(tsl_server_t *srv, const char *trial_id);
/* Starts the pending trials whose predecessors are over and workers free. */
void tsl_trial_run_start_pending_locked(tsl_server_t *srv);

/* A Trial message from t, allocated in a (trial_proto.c); NULL when out
 * of memory. */
Tessel__V1__Trial *tsl_trial_to_proto(tsl_arena_t *a, const tsl_trial_t *t);

/* trial_topk.c: once every trial of the batch is over, the measured best
 * becomes the stored plan's answer; true (its id in chosen) when one was
 * chosen now. */
bool tsl_trial_topk_locked(tsl_server_t *srv, const char *batch_id,
                           char chosen[TSL_TRIAL_ID_LEN + 1]);

#endif
