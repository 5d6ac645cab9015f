/*
 * pool.h — tesseld's search pool: a fixed set of threads fed by a bounded FIFO.
 *
 * Capacity is threads + queue_cap jobs in all (running and waiting): a job
 * submitted when that many are outstanding is refused at once, so the caller
 * can answer RESOURCE_EXHAUSTED instead of letting work pile up. Counting
 * running jobs too keeps the answer deterministic while a just-submitted job
 * has not been picked up by a thread yet.
 *
 * Jobs: the caller embeds tsl_pool_job_t in its own struct and fills run and
 * release. run() is called on a pool thread; release() after run() returns,
 * once the pool no longer touches the job (it owns the memory from then on).
 * cancel is the job's flag for the planner (search.h hooks): the pool sets it
 * on every job, queued or running, in tsl_pool_cancel_all(). A queued job is
 * still run after a cancel so that its owner can answer its caller; run()
 * should look at the flag first. A queued job whose flag is set (its caller
 * gave up while it waited) does not keep its place: the next tsl_pool_has_room
 * or tsl_pool_submit unlinks it and calls its run() and release() on the
 * calling thread, so that run() must only answer when it finds the flag set.
 *
 * Priority: with nice > 0 each pool thread, as it starts, moves to
 * SCHED_BATCH and lowers its own priority by nice steps (capped at 19), so
 * that the threads answering calls win the CPU whenever they want it; the
 * searches take what is left. A thread that cannot change its priority logs a
 * warning and runs on as it is.
 *
 * Thread-safety: every function may be called from any thread; on_change is
 * called with the pool's lock held — keep it cheap and do not call back in.
 */
#ifndef TSL_POOL_H
#define TSL_POOL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "err.h"

typedef struct tsl_pool tsl_pool_t;

typedef struct tsl_pool_job {
    void (*run)(struct tsl_pool_job *job);
    void (*release)(struct tsl_pool_job *job);
    atomic_int cancel;         /* set by tsl_pool_cancel_all */
    struct tsl_pool_job *next; /* pool-private */
} tsl_pool_job_t;

/* Queue depth changes (for metrics gauges). */
typedef void (*tsl_pool_change_fn)(void *ud, uint32_t queued, uint32_t running);

/* threads: 0 = the number of online CPUs. queue_cap may be 0 (no waiting).
 * nice: the threads' priority below the caller's (0..19; 0 = unchanged). */
int tsl_pool_start(uint32_t threads, uint32_t queue_cap, uint32_t nice,
                   tsl_pool_change_fn on_change, void *ud, tsl_pool_t **out, tsl_err_t *err);

/* The number of threads actually started. */
uint32_t tsl_pool_threads(const tsl_pool_t *p);
uint32_t tsl_pool_queue_cap(const tsl_pool_t *p);

/* True when a submit now would be accepted. */
bool tsl_pool_has_room(tsl_pool_t *p);

/* 0: queued; -1: full or stopping (the job is untouched and still the caller's). */
int tsl_pool_submit(tsl_pool_t *p, tsl_pool_job_t *job);

void tsl_pool_counts(tsl_pool_t *p, uint32_t *queued, uint32_t *running);

/* Refuses new jobs from now on and waits up to timeout_s for every queued and
 * running job to finish. Returns the number still outstanding. */
uint32_t tsl_pool_drain(tsl_pool_t *p, double timeout_s);

/* Sets the cancel flag of every queued and running job. */
void tsl_pool_cancel_all(tsl_pool_t *p);

/* Refuses new jobs, runs what is queued, joins the threads and frees the pool. */
void tsl_pool_stop(tsl_pool_t *p);

#endif
