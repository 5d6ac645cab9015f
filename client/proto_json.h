/*
 * proto_json.h — tessel.v1 messages as the JSON documents of common/plan_json.h,
 * so that tsl_print_result() and --json show a plan from the daemon exactly as one
 * planned locally.
 *
 * A tessel.v1.Plan becomes the search-result document of plan_json.h, key for
 * key and in the same order:
 *   { "fingerprint", "model": {"name","layers","params","tokens_per_sample"},
 *     "cluster": {"description","devices","nodes"}, "request": {...},
 *     "plan": <plan>|null, "alternatives": [<plan>...],
 *     "baselines": [{"name","title","plan"|null,"why"}],
 *     "stats": {"dp_runs","dp_states","configs","batches_tried"}, "search_time_s",
 *     "cached", "stale", "created_unix" }
 * with <plan> in plan_json.h's shape (stage bytes as "ms_bytes" / "act_bytes";
 * "layers" labels, "sim_iter_time_s"/"master_stage", "slicer", "memopt" and
 * "node_order" only where the plan has them). The last three keys are the
 * store's and exist only for plans that came from tesseld.
 *
 * Ownership: every function returns a new reference (json_decref it); NULL only
 * when out of memory.
 */
#ifndef TSL_PROTO_JSON_H
#define TSL_PROTO_JSON_H

#include <jansson.h>

#include "tessel/v1/planner.pb-c.h"

json_t *tsl_proto_plan_to_json(const Tessel__V1__Plan *p);
json_t *tsl_proto_figures_to_json(const Tessel__V1__PlanFigures *f);
/* One row of ListPlans, keys as in the proto: {"fingerprint","model_name",
 * "n_devices","global_batch","iter_time_s","samples_per_s","peak_bytes","stale",
 * "created_unix"}. */
json_t *tsl_proto_summary_to_json(const Tessel__V1__PlanSummary *s);

#endif
