/*
 * plan_json.h — plans and search results as JSON (jansson): the plan document
 * (docs/plan-format.md), the one form a plan has outside the planner. The CLI's
 * --json and table, the daemon's store, ExportPlan(format=json) and every
 * tessel.v1.Plan (api/plan_proto.h maps the document both ways) all carry it.
 *
 * Which keys a document has, in which order, under which name and when, is
 * plan_fields.h's lists; this file only fills them from the planner's structs.
 * Units in key names: *_s seconds, *_bytes bytes, *_per_s rates.
 */
#ifndef TSL_PLAN_JSON_H
#define TSL_PLAN_JSON_H

#include <jansson.h>

#include "plan.h"
#include "plan_fields.h"
#include "search.h"

json_t *tsl_plan_to_json(const tsl_plan_t *p);
/* The same, with a sublayer plan's stages and runs labelled by their spans in m's
 * source layers ("layers": "[25.5, 37.5)"), as the search's document writes them. */
json_t *tsl_plan_to_json_of(const tsl_plan_t *p, const tsl_model_t *m);

/* Recompute modules (recompute.h) as the plan document and the request write them,
 * a JSON array of Megatron's names, and back (an array of names, or a number): a
 * name this build does not know reads as TSL_RECOMPUTE_UNKNOWN, which eval and the
 * exports refuse. */
json_t *tsl_recompute_json(uint32_t mask);
uint32_t tsl_recompute_of_json(const json_t *v);
/* Every field of request_fields.h under its JSON key, in the list's order. */
json_t *tsl_request_to_json(const tsl_request_t *r);
/* The inverse: the fields read back by their keys (missing keys read 0). */
void tsl_request_from_json(const json_t *o, tsl_request_t *r);
/* A "request" object a person may have edited, checked key by key against
 * request_fields.h before tsl_request_from_json reads it loosely: a switch true or
 * false, a count a whole number 0..its option's max, a number 0 or within its
 * option's range, bytes a whole number >= 0, modules and loss_impl of their types
 * (null or absent: the default). The target's name is eval_doc.c's to check. -1
 * naming the key ("request.mtp_layers: ..."). */
int tsl_request_json_check(const json_t *req, tsl_err_t *err);
/* A scalar of plan_fields.h as JSON, by its KIND. */
#define TSL_PLAN_JSON_OF_U32(v)  json_integer((json_int_t)(v))
#define TSL_PLAN_JSON_OF_U64(v)  json_integer((json_int_t)(v)) /* byte counts fit in 63 bits */
#define TSL_PLAN_JSON_OF_I64(v)  json_integer((json_int_t)(v))
#define TSL_PLAN_JSON_OF_REAL(v) json_real(v)
#define TSL_PLAN_JSON_OF_BOOL(v) json_boolean(v)
#define TSL_PLAN_JSON_OF_STR(v)  json_string(v)
/* Writes member c of src under key json in o when its WHEN holds: what every
 * scalar line of plan_fields.h becomes, on the C structs and on the messages. */
#define TSL_PLAN_PUT(o, src, kind, c, json, when)                                                  \
    if (TSL_PLAN_WHEN_##when((src)->c, src))                                                       \
        json_object_set_new(o, json, TSL_PLAN_JSON_OF_##kind((src)->c));

/* A key of an object as a number of that type: absent or not a number reads 0,
 * values are clamped to the type's range (json_num.h). */
uint32_t tsl_plan_json_u32(const json_t *o, const char *key);
uint64_t tsl_plan_json_u64(const json_t *o, const char *key);
int64_t tsl_plan_json_i64(const json_t *o, const char *key);
double tsl_plan_json_real(const json_t *o, const char *key);

/* The document's head: the figures around the plans (plan_fields.h,
 * TSL_PLAN_DOC_FIELDS). Member names are tessel.v1.Plan's. */
typedef struct tsl_plan_head {
    char fingerprint[17];
    const char *model_name; /* borrowed */
    uint32_t model_layers;
    uint64_t model_params;
    uint32_t tokens_per_sample;
    uint32_t max_context;        /* the window an HF config allows; 0 = none */
    uint32_t train_context;      /* the training length it records, when planned at it; 0 = none */
    uint32_t model_mamba_layers; /* Mamba-2 layers (a hybrid model); 0 = none */
    char cluster_description[256];
    uint32_t n_devices, cluster_nodes;
    uint64_t dp_runs, dp_states, configs;
    uint32_t batches_tried;
    double search_time_s;
    bool cached, stale;   /* answered from the store; a profile it used changed */
    int64_t created_unix; /* when the search finished */
    char cp_why[sizeof(((tsl_search_result_t *)0)->cp_why)]; /* the search's CP reason */
    char ep_why[sizeof(((tsl_search_result_t *)0)->ep_why)]; /* the search's EP reason */
} tsl_plan_head_t;

/* The head of a search result; search_time_s, cached, stale and created_unix
 * are left 0 for the caller. fp: tsl_request_fingerprint's, computed once. */
void tsl_plan_head_fill(tsl_plan_head_t *h, const tsl_search_result_t *res, const tsl_model_t *m,
                        const tsl_cluster_t *c, const char *fp);

/* The object a key of plan_fields.h's document list sits in: doc itself (obj
 * NULL), or its "model", "cluster" or "stats" object, made on first use (so the
 * objects come in the list's order). Borrowed. */
json_t *tsl_plan_doc_obj(json_t *doc, const char *obj);

/* The whole document (m: for sub-layer labels). figures: the "figures" object (figures_json.h), copied;
 * NULL leaves the key out. */
json_t *tsl_search_result_to_json(const tsl_search_result_t *res, const tsl_model_t *m,
                                  const tsl_request_t *r, const tsl_plan_head_t *h,
                                  const json_t *figures);

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
