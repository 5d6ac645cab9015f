/*
 * exec_doc.h — a trial rank's model and plan from the plan document the daemon
 * stores and sends in a Registry.Assignment (common/plan_json.h).
 *
 * The model: the request that made the document names it — {"model_preset": NAME}
 * or {"hf_config": {...} | "text"}, with "seq_len" — looked up under the document's
 * "request" first, then at the top of the document (the daemon's stored request
 * merged in); failing both, the document's "model" {"name", "seq_len"} read as a
 * preset; then the request's model switches on it (mtp_layers, no_mtp and the target's
 * rule for MTP depths left open, bf16_layers_start/_end, unfused_attn, no_dropout:
 * model.h tsl_model_for_request), as the search applied them. The plan: "plan" for
 * plan_index 0, "alternatives"[i-1] for i, through tsl_plan_from_json (common/export.h). Errors name the key that was wrong.
 */
#ifndef TSL_EXEC_DOC_H
#define TSL_EXEC_DOC_H

#include <stdint.h>

#include "err.h"
#include "model.h"
#include "plan.h"

/* On success m (free with tsl_model_free) and p are filled; on failure m is freed. */
int tsl_exec_doc_load(const char *document, uint32_t plan_index, tsl_model_t *m, tsl_plan_t *p,
                      tsl_err_t *err);

#endif
