/*
 * trial_sched.h — which registered workers and GPUs run the ranks of a trial.
 *
 * The need (tsl_sched_need_from_request): world = the plan's device count;
 * per rank the GPU type the plan was priced on, from the cluster of the stored
 * request (cluster_spec or cluster JSON, rebuilt with planner/cluster.h). A
 * plan made on `--cluster registered` (its cluster is named "registered: a,b")
 * names its nodes: those hostnames, in the plan's order, with their GPU counts.
 *
 * The pick (tsl_sched_pick), pure: online workers only (and only those whose
 * hostname is in `nodes` when given), never simulated and real ones in one
 * trial (real workers are tried first, then simulated ones); ranks laid out
 * worker by worker, device by device (device index order). A worker's GPU
 * matches a type by tsl_gpu_model_matches (planner/cluster.h: the type's family
 * in the model name, memory within 15 %), the rule `tesselctl plan --cluster
 * registered` maps models to types by. Registered plans take the named hosts' first
 * GPUs instead. When no such set exists, why says what is missing: "the plan
 * needs 4 GPUs of type A100-80G; online matching workers have 2: w-… (host a,
 * 2 GPUs)".
 *
 * Which plans of a batch run (tsl_sched_batch_scope), pure: the executor runs a
 * plan in the form a trial runs it (plan.h tsl_plan_trial_form: ZB-H1 as 1F1B)
 * when tsl_plan_exec_scope and the document's model.mamba_layers
 * (tsl_exec_scope_mamba) allow it. StartTrial runs the plans of a batch that
 * run and reports the others skipped, each with its reason; only a batch none
 * of whose plans runs is refused (tsl_sched_none_runs says why, plan by plan).
 *
 * Which plans of a batch have workers (tsl_sched_unplaced), pure: a plan the
 * executor runs but no online workers fit now (tsl_sched_pick's why). The plan
 * asked for (plan 0) refuses the batch with that why, as a single plan always
 * was: the caller asked for that plan, and only more workers make it run. An
 * alternative is skipped instead, its why naming what is missing, like a plan
 * the executor cannot run; a batch left with no plan that runs is refused
 * (tsl_sched_none_runs).
 *
 * Ownership: a need owns its arrays (tsl_sched_need_free). Workers are
 * borrowed for the call.
 */
#ifndef TSL_TRIAL_SCHED_H
#define TSL_TRIAL_SCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "cluster.h"
#include "err.h"
#include "store_registry.h"

typedef struct tsl_sched_need {
    uint32_t world;
    tsl_gpu_spec_t *rank_type; /* world entries (malloc'd) */
    uint32_t n_hosts;          /* registered plans: the nodes, in order */
    char (*hosts)[128];        /* malloc'd */
    uint32_t *host_gpus;       /* malloc'd */
} tsl_sched_need_t;

typedef struct tsl_sched_pick {
    uint32_t worker;       /* index into the workers given */
    uint32_t device_index; /* that worker's GPU */
} tsl_sched_pick_t;

/* The need of plan (its plan object; may be NULL) of `world` devices whose
 * request was request_json (the stored request: "cluster_spec" or "cluster").
 * A plan with a "node_order" (heterogeneous placement, plan.h) takes the
 * cluster's nodes in that order. */
int tsl_sched_need_from_request(const char *request_json, const json_t *plan, uint32_t world,
                                tsl_sched_need_t *need, tsl_err_t *err);
void tsl_sched_need_free(tsl_sched_need_t *need);

/* Fills out[0 .. need->world) and *simulated; 0, or -1 with why filled. nodes
 * (n_nodes; 0 = any) restricts the hostnames. */
int tsl_sched_pick(const tsl_sched_need_t *need, const tsl_reg_worker_t *workers, size_t n_workers,
                   const char *const *nodes, size_t n_nodes, tsl_sched_pick_t *out, bool *simulated,
                   char *why, size_t why_cap);

/* ---- which plans of a batch the executor runs ---------------------------------------------- */

#define TSL_SCHED_WHY_LEN 400

typedef struct tsl_sched_scope {
    bool runs;
    bool unplaced;               /* !runs because no online workers fit it (not the executor) */
    char why[TSL_SCHED_WHY_LEN]; /* !runs: "plan I: <what>: <why>", naming the plan field;
                                    unplaced: "plan I: no online workers fit it: <pick's why>" */
} tsl_sched_scope_t;

/* The first n plans of the stored plan document doc (plan i: 0 its "plan", i
 * alternatives[i-1]; a missing or malformed one does not run): scope[i] for each
 * (n entries, the caller's), how many run in *n_runs. 0, or -1 when out of memory
 * (err). */
int tsl_sched_batch_scope(const json_t *doc, uint32_t n, tsl_sched_scope_t *scope, uint32_t *n_runs,
                          tsl_err_t *err);

/* Plan i of a batch (scope[i] runs on the executor) for which tsl_sched_pick found no
 * workers, why its answer. i 0, the plan asked for: 1, the batch is refused and out
 * (cap bytes) is the answer, why itself. An alternative: 0, scope[i] no longer runs,
 * unplaced, its why "plan I: no online workers fit it: <why>" (truncated to fit), and
 * *n_runs (the batch's plans that run) one less. */
int tsl_sched_unplaced(tsl_sched_scope_t *scope, uint32_t i, const char *why, uint32_t *n_runs,
                       char *out, size_t cap);

/* Why a skipped plan (scope, !runs) does not run, as its trial stores it (out, cap
 * bytes): "<why>; the executor cannot try it", or an unplaced plan's why as it is. */
void tsl_sched_skip_reason(const tsl_sched_scope_t *scope, char *out, size_t cap);

/* Why a batch none of whose n plans runs is refused, into out (cap bytes),
 * naming the plan fp: one plan "plan FP: plan 0: <why>; the executor cannot try
 * it"; more "plan FP: the executor cannot try any of the N plans of the batch:
 * plan 0: <why>; plan 1: <why>", or, when some ran out of workers instead (unplaced),
 * "plan FP: no plan of the N of the batch can be tried now: plan 0: <why>; plan 1:
 * no online workers fit it: <why>". */
void tsl_sched_none_runs(const char *fp, const tsl_sched_scope_t *scope, uint32_t n, char *out,
                         size_t cap);

#endif
