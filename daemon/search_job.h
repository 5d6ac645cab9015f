/*
 * search_job.h — a Planner call that runs on the search pool (Plan and
 * EvaluatePlan): what both do around their own work.
 *
 *   tsl_search_job_decode   the PlanRequest checked with the server's limits
 *                           (api/request.h: INVALID_ARGUMENT naming the field);
 *                           a `registered` cluster assembled from the store
 *                           (registry_cluster.h), its profiles attached
 *                           (registry_plan.h) and the workers it left out in
 *                           profiles.left_out;
 *   tsl_search_job_submit   refusals first (UNAVAILABLE while stopping,
 *                           RESOURCE_EXHAUSTED naming the pool's counts), then
 *                           RECV_CLOSE armed so that a client cancel or a passed
 *                           deadline sets the planner's cancel flag, then the job
 *                           handed to the pool holding a reference to the call;
 *   tsl_search_job_late     a progress callback's check of the deadline;
 *   tsl_search_job_cancelled the answer of a search that stopped early:
 *                           DEADLINE_EXCEEDED, UNAVAILABLE (the daemon stops) or
 *                           CANCELLED, by why it stopped.
 *
 * A job type embeds tsl_search_job_t FIRST (the pool and the call's ctx hand
 * back that pointer) and is allocated whole with calloc; tsl_search_job_free
 * frees the input, the profiles and the allocation.
 */
#ifndef TSL_SEARCH_JOB_H
#define TSL_SEARCH_JOB_H

#include <jansson.h>
#include <stdbool.h>

#include "pool.h"
#include "registry_plan.h"
#include "request.h"
#include "server_call.h"
#include "tessel/v1/planner.pb-c.h"

typedef struct tsl_search_job {
    tsl_pool_job_t job; /* first: the pool hands us this pointer */
    tsl_call_t *call;
    tsl_plan_input_t in;
    tsl_registry_profiles_t profiles; /* borrowed by in.cluster (registry_plan.h) */
    json_t *figure_details; /* registered: where each figure came from (strings); or NULL */
    /* Or NULL. Asked when the caller cancels or its deadline passes: true keeps
     * the search going (other calls wait on it). The daemon's stop cancels it
     * anyway (tsl_pool_cancel_all). */
    bool (*keep_on_cancel)(struct tsl_search_job *job);
    /* Or NULL. The pool refused the job after accepted() ran (the daemon stops):
     * undo what accepted() did; the call is answered UNAVAILABLE. */
    void (*refused)(struct tsl_search_job *job);
} tsl_search_job_t;

int tsl_search_job_decode(tsl_call_t *call, const Tessel__V1__PlanRequest *req,
                          tsl_search_job_t *job, tsl_err_t *err);

void tsl_search_job_free(void *job);

/* accepted (may be NULL) runs once the job will be queued, before the pool can
 * start it (Plan sends its "queued" event there). The call is answered here
 * when the job is refused; either way the call owns the job from now on. */
void tsl_search_job_submit(tsl_call_t *call, tsl_search_job_t *job, void (*run)(tsl_pool_job_t *pj),
                           void (*accepted)(tsl_search_job_t *job));

/* true (and the cancel flag set) once the client's deadline has passed. */
bool tsl_search_job_late(tsl_search_job_t *job);

/* what: "search" or "eval"; ran_s < 0 when not worth saying. */
void tsl_search_job_cancelled(tsl_call_t *call, const char *what, double ran_s);

#endif
