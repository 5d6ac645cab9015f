/*
 * plan_json.h — plans and search results as JSON (jansson), the one format the
 * CLI's --json, the daemon's store and ExportPlan(format=json) share.
 *
 * Units in key names: *_s seconds, *_bytes bytes, *_per_s rates. The document for
 * a search result:
 *   { "fingerprint", "model": {name, layers, params}, "cluster": {description,
 *     devices, nodes}, "request": {...}, "plan": <plan>, "alternatives": [<plan>...],
 *     "baselines": [{"name","title","plan"|null,"why"}], "stats": {...},
 *     "search_time_s" }
 * and a <plan>:
 *   { "label", "pp", "global_batch", "micro_batch", "n_micro", "iter_time_s",
 *     "samples_per_s", "tokens_per_s", "peak_bytes", "budget_bytes", "alpha_t",
 *     "alpha_m", "stages": [{"first_layer","n_layers","first_device","n_devices",
 *     "inflight","time_s","time_nosync_s","p2p_s","opt_s","ms_bytes","act_bytes",
 *     "peak_bytes", "runs": [{"first_layer","count","strategy"}]}], "opt_tail_s" (when
 *     the optimizer steps add time after the pipeline's end: plan.h), "tie_s" (when a
 *     tied LM head's gradient is all-reduced between the first and last stages) }
 */
#ifndef TSL_PLAN_JSON_H
#define TSL_PLAN_JSON_H

#include <jansson.h>

#include "plan.h"
#include "search.h"

json_t *tsl_plan_to_json(const tsl_plan_t *p);
/* Every field of request_fields.h under its JSON key, in the list's order. */
json_t *tsl_request_to_json(const tsl_request_t *r);
/* The inverse: the fields read back by their keys (missing keys read 0). */
void tsl_request_from_json(const json_t *o, tsl_request_t *r);
/* fp: the request's fingerprint, computed once by the caller
 * (tsl_request_fingerprint) and reused for the cache key. */
json_t *tsl_search_result_to_json(const tsl_search_result_t *res, const tsl_model_t *m,
                                  const tsl_cluster_t *c, const tsl_request_t *r, const char *fp,
                                  double search_time_s);

/*
 * The document's "target" object of a request with a target (request.target):
 * {"name", "samples_per_s" (the plan's), "unrestricted_samples_per_s",
 * "unrestricted_iter_time_s", "vs_unrestricted" (the ratio)}; the unrestricted
 * keys are left out when free_samples_per_s is 0 (nothing found without it).
 * NULL when target is TSL_TARGET_ANY.
 */
json_t *tsl_target_cost_json(uint32_t target, double samples_per_s, double free_samples_per_s,
                             double free_iter_time_s);

#endif
