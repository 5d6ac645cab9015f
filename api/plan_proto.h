/*
 * plan_proto.h — the plan document ↔ tessel.v1.Plan, both directions in one
 * place (plan_proto.c), so that the two cannot drift.
 *
 * The canonical form of a search result is the JSON document of
 * common/plan_json.h: the planner's result is written once into it
 * (tsl_search_result_to_json), the daemon stores it and ExportPlan returns it.
 * The Plan message is a mapping of that document, field for field:
 *   - tsl_plan_proto_from_json: the daemon's answers (fresh and cached alike go
 *     through the stored JSON, so they are identical field for field);
 *   - tsl_plan_proto_to_json: what a client prints, key for key and in the same
 *     order as the document, so tsl_print_result() and --json show a plan from
 *     the daemon exactly as one planned locally. Three keys more come from the
 *     store and exist only for plans from tesseld: "cached", "stale",
 *     "created_unix".
 * tests/test_api.c checks document → Plan → document gives the document back.
 *
 * The document:
 *   { "fingerprint", "model": {"name","layers","params","tokens_per_sample"},
 *     "cluster": {"description","devices","nodes"}, "request": {...},
 *     "plan": <plan>|null, "alternatives": [<plan>...],
 *     "baselines": [{"name","title","plan"|null,"why"}],
 *     "stats": {"dp_runs","dp_states","configs","batches_tried"}, "search_time_s" }
 * with <plan> in plan_json.h's shape (stage bytes as "ms_bytes" / "act_bytes";
 * "layers" labels, "sim_iter_time_s"/"master_stage", "slicer", "memopt" and
 * "node_order" only where the plan has them).
 *
 * Ownership: from_json allocates the message and everything it points to from
 * the arena (common/arena.h; free the arena, not the message). The to_json
 * functions return a new reference (json_decref it); NULL only when out of
 * memory.
 */
#ifndef TSL_API_PLAN_PROTO_H
#define TSL_API_PLAN_PROTO_H

#include <jansson.h>

#include "arena.h"
#include "err.h"
#include "tessel/v1/planner.pb-c.h"

/* The Plan message for a stored search result; cached/stale/created_unix are
 * left for the caller. -1 with err when the JSON is not a search result
 * (TSL_E_INVALID) or memory runs out (TSL_E_NOMEM). */
int tsl_plan_proto_from_json(const char *result_json, tsl_arena_t *a, Tessel__V1__Plan **out,
                             tsl_err_t *err);

json_t *tsl_plan_proto_to_json(const Tessel__V1__Plan *p);
json_t *tsl_proto_figures_to_json(const Tessel__V1__PlanFigures *f);
/* One row of ListPlans, keys as in the proto: {"fingerprint","model_name",
 * "n_devices","global_batch","iter_time_s","samples_per_s","peak_bytes","stale",
 * "created_unix"}. */
json_t *tsl_proto_summary_to_json(const Tessel__V1__PlanSummary *s);

#endif
