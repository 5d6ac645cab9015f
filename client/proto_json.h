/*
 * proto_json.h — tessel.v1 messages as the JSON documents of common/plan_json.h,
 * so that tsl_print_result() and --json show a plan from the daemon exactly as one
 * planned locally.
 *
 * A tessel.v1.Plan becomes a search-result document:
 *   { "fingerprint", "model": {"name"[, "layers", "params"]}, "cluster": {"description", "devices"},
 *     "plan": <plan>|null, "alternatives": [<plan>...],
 *     "baselines": [{"name","title","plan"|null,"why"}], "stats": {"dp_runs"},
 *     "search_time_s", "cached", "stale", "created_unix" }
 * with <plan> in plan_json.h's shape (stage bytes as "ms_bytes" / "act_bytes").
 * The wire message does not carry the model's layer and parameter counts: for a
 * preset they are taken from the planner's preset table (what the daemon used);
 * for a HuggingFace config, and for the cluster's node count and the request,
 * they are left out rather than invented (remote.c adds them for `plan`, where
 * the inputs are at hand).
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
