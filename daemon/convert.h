/*
 * convert.h — between the API's protobuf messages and the planner's structs.
 *
 * In: a tessel.v1.PlanRequest becomes a model, a cluster and a tsl_request_t,
 * with every field checked against the daemon's limits (config.h [limits]) and
 * the planner's own validation before any search starts. Errors name the field
 * and the limit ("global_batch: 100000 is above the limit max_batch=65536") or
 * carry the planner's message prefixed with the field ("model_preset: ...");
 * the caller answers INVALID_ARGUMENT with them. A cluster_spec is only ever a
 * short spec: it is never opened as a file on the daemon's machine.
 *
 * Out: the search result JSON (plan_json.h — what the store keeps and
 * ExportPlan returns) becomes a tessel.v1.Plan. Fresh and cached answers both
 * go through the JSON, so they are identical field for field. The message and
 * everything it points to is allocated from a tsl_arena_t, freed at once.
 */
#ifndef TSL_CONVERT_H
#define TSL_CONVERT_H

#include <stdbool.h>
#include <stddef.h>

#include "config.h"
#include "err.h"
#include "search.h"
#include "tessel/v1/planner.pb-c.h"

#define TSL_CONVERT_MAX_SEQ_LEN 1048576u     /* seq_len limit */
#define TSL_CONVERT_MAX_SPEC 255u            /* cluster_spec length limit */

typedef struct tsl_plan_input {
    tsl_model_t model;
    tsl_cluster_t cluster;
    tsl_request_t request;
    char fingerprint[17];
    char *request_json;      /* canonical JSON of the PlanRequest as received (malloc'd) */
    bool force;
} tsl_plan_input_t;

/* Fills in (zeroed by the caller first); on failure in holds nothing to free
 * but tsl_plan_input_free is still safe. */
int tsl_convert_plan_request(const Tessel__V1__PlanRequest *req, const tsl_config_t *cfg,
                             tsl_plan_input_t *in, tsl_err_t *err);
void tsl_plan_input_free(tsl_plan_input_t *in);

/* A bump allocator for one answer: every allocation is zeroed; one free. */
typedef struct tsl_arena {
    struct tsl_arena_chunk *head;
} tsl_arena_t;

void *tsl_arena_alloc(tsl_arena_t *a, size_t size);
char *tsl_arena_strdup(tsl_arena_t *a, const char *s);
void tsl_arena_free(tsl_arena_t *a);

/* The Plan message for a stored search result; cached/stale/created_unix are
 * left for the caller. -1 with err when the JSON is not a search result. */
int tsl_convert_plan_json(const char *result_json, tsl_arena_t *a, Tessel__V1__Plan **out,
                          tsl_err_t *err);

#endif
