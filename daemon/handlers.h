/*
 * handlers.h — tesseld's RPC handlers, one file per service:
 *   handlers_plan.c    Planner.Plan (validation, cache, the search job)
 *   handlers_reads.c   Planner.GetPlan, ListPlans, DeletePlan, ExportPlan
 *   handlers_eval.c    Planner.EvaluatePlan (a given plan costed on the pool)
 *   search_job.c       what Plan and EvaluatePlan do around their pool work
 *   handlers_health.c  grpc.health.v1.Health/Check
 *   handlers_registry.c Registry: RegisterWorker, Heartbeat, ReportProfile,
 *                      ListWorkers, GetProfile
 *   handlers_trials.c  Trials: StartTrial, GetTrial, WatchTrial, ListTrials,
 *                      CancelTrial
 *   handlers_assign.c  Registry.Assignments (long poll) and ReportTrial
 *                      (trial_run.c runs the trials, trial_topk.c the top-k)
 *   handlers_unimpl.c  any method nobody registered (UNIMPLEMENTED naming it)
 *   handlers_check.c   field checks Trials and Assignments share (handlers_check.h)
 * handlers.c holds the method table (roles and handler per method of
 * api/methods.h); server_call.c checks the caller's token against it before
 * any handler runs.
 *
 * Every handler runs on the completion-queue thread and must stay cheap: it
 * reads the request, answers from the store or hands a search to the pool.
 * Each finishes its call exactly once (server_call.h), directly or through the
 * job it submits.
 */
#ifndef TSL_HANDLERS_H
#define TSL_HANDLERS_H

#include <jansson.h>

#include "server_call.h"

void tsl_handle_plan(tsl_call_t *call);
void tsl_handle_get_plan(tsl_call_t *call);
void tsl_handle_list_plans(tsl_call_t *call);
void tsl_handle_delete_plan(tsl_call_t *call);
void tsl_handle_export_plan(tsl_call_t *call);
/* Planner.EvaluatePlan (handlers_eval.c): a given plan costed, the search beside it, on the pool */
void tsl_handle_evaluate_plan(tsl_call_t *call);
void tsl_handle_health_check(tsl_call_t *call);
void tsl_handle_unimplemented(tsl_call_t *call);
void tsl_handle_register_worker(tsl_call_t *call);
void tsl_handle_heartbeat(tsl_call_t *call);
void tsl_handle_report_profile(tsl_call_t *call);
void tsl_handle_get_registered_cluster(tsl_call_t *call);
void tsl_handle_list_workers(tsl_call_t *call);
void tsl_handle_get_profile(tsl_call_t *call);
void tsl_handle_start_trial(tsl_call_t *call);
void tsl_handle_get_trial(tsl_call_t *call);
void tsl_handle_watch_trial(tsl_call_t *call);
void tsl_handle_list_trials(tsl_call_t *call);
void tsl_handle_cancel_trial(tsl_call_t *call);
void tsl_handle_assignments(tsl_call_t *call);
void tsl_handle_report_trial(tsl_call_t *call);

/* tsl_auth_worker (server_auth.h) for a handler: true when the caller may act
 * as worker_id; otherwise the call is answered with the status and message. */
bool tsl_handlers_own_worker(tsl_call_t *call, const char *worker_id);

/* What the request that asked says of its own answer, where requests of one
 * fingerprint may differ: its notes (note, "" none; api/request.h
 * tsl_plan_input_t: an MTP depth a target leaves out builds the same model) and
 * its model's name (model_name: --name, or the config file's; the name is not
 * part of the fingerprint, so one model under two names is one plan). */
typedef struct tsl_plan_asker {
    const char *note;
    const char *model_name;
} tsl_plan_asker_t;

/* Answers with the Plan of a stored row (GetPlan), its stored notes and name
 * those of the request stored with it; answer_plan_event: as the last PlanEvent
 * of a Plan call (cached = true), with asked's notes and model name in place of
 * the stored ones. Made once from the stored document and kept
 * (handlers_cache.c). row may be a head only (tsl_store_plan_head): the
 * document is read from the store when the Plan is not cached. */
void tsl_handlers_answer_plan(tsl_call_t *call, const tsl_stored_plan_t *row);
void tsl_handlers_answer_plan_event(tsl_call_t *call, const tsl_stored_plan_t *row,
                                    const tsl_plan_asker_t *asked);
/* As answer_plan_event, but a stored plan that cannot be read (a damaged row: its
 * text is not a plan document, or the store fails reading it) is not answered:
 * -1 with err set and the call left open, so that Plan can search again instead
 * of failing the request until --force. 0 answered. */
int tsl_handlers_try_plan_event(tsl_call_t *call, const tsl_stored_plan_t *row,
                                const tsl_plan_asker_t *asked, tsl_err_t *err);

/* Answers a search just stored as row, as the last PlanEvent, from its document
 * in memory (never re-reading the text it stored), and caches the Plan. */
void tsl_handlers_answer_new_plan(tsl_call_t *call, const tsl_stored_plan_t *row,
                                  const json_t *doc);

/* The cache of Plans (NULL-safe): the daemon forgets a fingerprint whenever it
 * stores or deletes it. */
tsl_plan_cache_t *tsl_plan_cache_new(void);
void tsl_plan_cache_free(tsl_plan_cache_t *c);
void tsl_plan_cache_forget(tsl_plan_cache_t *c, const char *fp);

#endif
