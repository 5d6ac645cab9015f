/*
 * trace_json.h — a plan's simulated iteration as a Chrome Trace Event document
 * (the JSON Object Format that Perfetto and chrome://tracing open).
 *
 * The plan's stage times go through the 1F1B event simulator (pipesim.h) exactly
 * as the search feeds it (forward, backward, the last backward with gradient
 * sync, half the stage's p2p per direction; no slicing), and every simulated op
 * becomes a complete event ("ph": "X", ts and dur in microseconds):
 *
 *   pid s + 1      stage s ("process_name" metadata: "stage s (GPUs a-b)")
 *     tid 1        compute: "F j" forward, "R j" recompute (CKPT layers, an
 *                  estimate: the stage's forward time times the checkpointed
 *                  layers' share of its FLOPs, taken out of the backward),
 *                  "B j" backward (under a zero-bubble schedule, ZB-H1 or ZBV:
 *                  the input gradient only, cat backward, and "W j" its weight
 *                  gradient, cat wgrad, later on the same stage), "grad sync"
 *                  (after the stage's last op),
 *                  "optimizer" (the stage's step after its last op, cost.h),
 *                  "tied all-reduce" (cat tie: a tied LM head's gradient summed
 *                  by the first and last stages before their steps, plan.h tie_s),
 *                  and "bubble" for every idle gap up to the end of the iteration
 *     tid 2        "recv F j": an activation arriving from stage s − 1
 *     tid 3        "recv B j": a gradient arriving from stage s + 1
 *
 * So the compute track of every stage covers [0, iteration end] without gaps or
 * overlaps, the events of a track come in order of ts, and the last event ends at
 * the simulated iteration time (the plan's sim_iter_time_s for pp >= 2). "cat"
 * is forward, recompute, backward, sync, tie, optimizer, bubble or p2p; "args" carry the stage
 * and micro-batch. The document's "otherData" has the model, the iteration time
 * and the schedule.
 *
 * m is the model the plan was searched for (NULL: no recompute split).
 */
#ifndef TSL_TRACE_JSON_H
#define TSL_TRACE_JSON_H

#include <jansson.h>

#include "err.h"
#include "model.h"
#include "plan.h"

json_t *tsl_trace_plan(const tsl_plan_t *p, const tsl_model_t *m, tsl_err_t *err);

#endif
