/*
 * plan_proto.h — the plan document (common/plan_json.h) ↔ tessel.v1.Plan, both
 * directions in one place (plan_proto.c), generated from the field lists of
 * common/plan_fields.h so that the two cannot drift.
 *
 * The plan document is the one form of a search result: the planner's result is
 * written once into it (tsl_search_result_to_json); tesseld stores its text and
 * answers with the Plan made from it (a fresh plan from the document in memory,
 * a stored one from its text), and every client prints the document made back
 * from the Plan — the same mapping tesselctl plan --local passes its own
 * document through (tsl_plan_doc_canonical), so a plan prints alike, key for key,
 * whether it was made in-process or in tesseld. document → Plan → document is
 * the identity (tests/test_api.c).
 *
 * Ownership: the from_* functions allocate the message and everything it points
 * to from the arena (common/arena.h; free the arena, not the message). The
 * to_json functions return a new reference (json_decref it); NULL only when out
 * of memory.
 */
#ifndef TSL_API_PLAN_PROTO_H
#define TSL_API_PLAN_PROTO_H

#include <jansson.h>

#include "arena.h"
#include "err.h"
#include "tessel/v1/planner.pb-c.h"

/* The Plan message of a document. -1 with err when doc is not a search result
 * (TSL_E_INVALID: no "plan" object) or memory runs out (TSL_E_NOMEM). */
int tsl_plan_proto_from_doc(const json_t *doc, tsl_arena_t *a, Tessel__V1__Plan **out,
                            tsl_err_t *err);
/* The same from the document's text (a stored plan). */
int tsl_plan_proto_from_json(const char *result_json, tsl_arena_t *a, Tessel__V1__Plan **out,
                             tsl_err_t *err);

/* The document of a Plan, keys in plan_fields.h's order. */
json_t *tsl_plan_proto_to_json(const Tessel__V1__Plan *p);
/* One <plan> of it. */
json_t *tsl_proto_figures_to_json(const Tessel__V1__PlanFigures *f);

/* doc as a client of tesseld would print it: document → Plan → document. NULL
 * with err as tsl_plan_proto_from_doc. */
json_t *tsl_plan_doc_canonical(const json_t *doc, tsl_err_t *err);

/* One row of ListPlans, keys as in the proto: {"fingerprint","model_name",
 * "n_devices","global_batch","iter_time_s","samples_per_s","stale",
 * "created_unix","peak_bytes"}. */
json_t *tsl_proto_summary_to_json(const Tessel__V1__PlanSummary *s);

#endif
