/*
 * eval_doc.c — a given plan's figures beside the search's, as the document of
 * eval_doc.h (one builder for tesselctl eval and Planner.EvaluatePlan).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "eval.h"
#include "eval_doc.h"
#include "export.h"
#include "json_num.h"
#include "plan_json.h"
#include "target.h"

int tsl_eval_plan_of_json(const json_t *doc, tsl_plan_t *g, tsl_err_t *err)
{
    const json_t *p = json_object_get(doc, "plan") ? json_object_get(doc, "plan") : doc;
    if (tsl_plan_from_json(p, g, err) != 0)
        return -1;
    g->interleave = (uint32_t)json_integer_value(json_object_get(p, "interleave"));
    const json_t *order = json_object_get(p, "node_order");
    for (uint32_t k = 0; k < g->n_nodes && k < TSL_PLAN_MAX_ORDER_NODES; k++)
        g->node_order[k] = (uint16_t)json_integer_value(json_array_get(order, k));
    return 0;
}

/* The document's own target (tsl_eval_doc_target), checked. */
static int doc_target(const json_t *doc, uint32_t *target, tsl_err_t *err)
{
    const json_t *req = json_object_get(doc, "request");
    const json_t *t = json_object_get(req, "target");
    *target = TSL_TARGET_ANY;
    if (req != NULL && !json_is_object(req) && !json_is_null(req))
        return tsl_err_set(err, "request: not an object (the request the plan answered)");
    if (!json_is_object(req))
        return 0;
    /* a name that is none of the stacks' is a typo, not "no stack": pricing the plan
     * without its stack's rules would answer another question */
    char shown[TSL_ERR_SHOWN_MAX(40)]; /* a raw newline would end the message's line */
    if ((json_is_string(t) && tsl_target_parse(json_string_value(t), target, NULL) != 0) ||
        (t != NULL && !json_is_string(t) && !json_is_integer(t) && !json_is_null(t)))
        return tsl_err_set(err,
                           "request.target: %s%s%s is not one of any, megatron, deepspeed, "
                           "torchtitan, galvatron",
                           json_is_string(t) ? "'" : "",
                           json_is_string(t)
                               ? tsl_err_shown(json_string_value(t), 40, shown, sizeof shown)
                               : "a non-string",
                           json_is_string(t) ? "'" : "");
    /* a stack's number as plan --json writes one it has no name for; 2^63 - 1 was
     * read as no stack */
    if (json_is_integer(t) &&
        (json_integer_value(t) < 0 || json_integer_value(t) >= (json_int_t)TSL_TARGET_COUNT))
        return tsl_err_set(err, "request.target: %lld is not a stack's number (0..%d)",
                           (long long)json_integer_value(t), (int)TSL_TARGET_COUNT - 1);
    /* every key by its kind (plan_json.h): the MTP switches an evaluation reads
     * besides the target (tsl_eval_doc_mtp) were read loosely — "mtp_layers": -1 or
     * "2" as none, "no_mtp": 1 as false — and the plan split on other layers */
    if (tsl_request_json_check(req, err) != 0)
        return -1;
    tsl_request_t r;
    tsl_request_from_json(req, &r);
    *target = r.target < TSL_TARGET_COUNT ? r.target : TSL_TARGET_ANY;
    return 0;
}

int tsl_eval_doc_target(const json_t *doc, bool given, uint32_t asked, uint32_t *target,
                        tsl_err_t *err)
{
    uint32_t own = TSL_TARGET_ANY;
    if (doc != NULL && doc_target(doc, &own, err) != 0)
        return -1;
    *target = given || doc == NULL ? asked : own;
    return 0;
}

void tsl_eval_doc_mtp(const json_t *doc, uint32_t *mtp_layers, bool *no_mtp)
{
    const json_t *req = json_object_get(doc, "request");
    if (*mtp_layers || *no_mtp || !json_is_object(req))
        return;
    tsl_request_t r;
    tsl_request_from_json(req, &r);
    *mtp_layers = r.mtp_layers;
    *no_mtp = r.no_mtp;
}

/* A plan document's model.tokens_per_sample into *seq_len (0 where absent or null):
 * a whole number 1..2^32-1, not a string (read as absent: the preset's own length)
 * nor 2^32 + 512 (read as 512) — either would price the plan at another sequence
 * than it says without a word. */
static int doc_tokens(const json_t *jm, uint32_t *seq_len, tsl_err_t *err)
{
    const json_t *v = json_object_get(jm, "tokens_per_sample");
    *seq_len = 0;
    if (v == NULL || json_is_null(v))
        return 0;
    if (!json_is_integer(v))
        return tsl_err_set(err, "model.tokens_per_sample: expected a whole number >= 1, got %s",
                           tsl_json_type_name(v));
    json_int_t n = json_integer_value(v);
    if (n < 1 || n > (json_int_t)UINT32_MAX)
        return tsl_err_set(err, "model.tokens_per_sample: %lld is out of range; expected 1..%u",
                           (long long)n, UINT32_MAX);
    *seq_len = (uint32_t)n;
    return 0;
}

int tsl_eval_doc_seq_len(const json_t *doc, const tsl_model_t *m, uint32_t *seq_len, tsl_err_t *err)
{
    const json_t *jm = json_object_get(doc, "model");
    const char *name = json_string_value(json_object_get(jm, "name"));
    uint32_t n = 0;
    *seq_len = 0;
    if (name == NULL || strcasecmp(name, m->name) != 0)
        return 0;
    if (doc_tokens(jm, &n, err) != 0)
        return -1;
    *seq_len = n != m->tokens_per_sample ? n : 0;
    return 0;
}

/* The search for the same model, cluster, budget and batch, under the stack
 * switches the given plan g was priced with (eval.h, tsl_eval_search_request):
 * TSL_SEARCH_OK with *res, else the search's code (why in err). */
static int search_same(const tsl_model_t *m, const tsl_cluster_t *c, const tsl_request_t *er,
                       const tsl_plan_t *g, uint32_t batch, const tsl_search_hooks_t *hooks,
                       tsl_search_result_t **res, tsl_err_t *err)
{
    tsl_request_t r;
    tsl_eval_search_request(er, g, &r);
    r.global_batch = batch;
    r.no_baselines = true;
    tsl_search_hooks_t h = {0};
    if (hooks != NULL)
        h = *hooks;
    h.stack = g;
    *res = malloc(sizeof(**res));
    if (*res == NULL) {
        tsl_err_setc(err, TSL_E_NOMEM, "search: out of memory");
        return TSL_SEARCH_ERR;
    }
    int rc = tsl_search(m, c, &r, &h, *res, err);
    if (rc != TSL_SEARCH_OK) {
        free(*res);
        *res = NULL;
    }
    return rc;
}

static json_t *given_doc(const tsl_model_t *m, const tsl_cluster_t *c, const tsl_plan_t *p)
{
    char desc[256];
    tsl_cluster_describe(c, desc, sizeof desc);
    return json_pack("{s:{s:s, s:I, s:I, s:I}, s:{s:s, s:I}, s:o}", "model", "name", m->name,
                     "layers", (json_int_t)m->n_layers, "params", (json_int_t)tsl_model_params(m),
                     "tokens_per_sample", (json_int_t)m->tokens_per_sample, "cluster",
                     "description", desc, "devices", (json_int_t)c->n_devices, "plan",
                     tsl_plan_to_json_of(p, m));
}

static void add_search(json_t *doc, const tsl_model_t *m, const tsl_plan_t *p,
                       const tsl_search_result_t *res, const tsl_err_t *serr)
{
    json_t *s = json_object();
    json_object_set_new(s, "plan", res ? tsl_plan_to_json_of(&res->best, m) : json_null());
    if (res == NULL)
        json_object_set_new(s, "why", json_string(serr->msg));
    json_object_set_new(doc, "search", s);
    if (res)
        json_object_set_new(doc, "ratio", json_real(p->samples_per_s / res->best.samples_per_s));
}

int tsl_eval_document(const tsl_model_t *m, const tsl_cluster_t *c, const tsl_request_t *r,
                      const tsl_plan_t *given, bool search, const tsl_search_hooks_t *hooks,
                      json_t **doc, tsl_err_t *err)
{
    tsl_plan_t *p = malloc(sizeof(*p));
    tsl_search_result_t *res = NULL;
    tsl_err_t serr = {0};
    int rc = -1;
    *doc = NULL;
    if (p == NULL)
        return tsl_err_setc(err, TSL_E_NOMEM, "eval: out of memory");
    if (tsl_eval_plan(m, c, r, given, p, err) != 0) {
        if (tsl_err_code(err) == TSL_E_NOFIT)
            *doc = given_doc(m, c, p);
        goto out;
    }
    int src =
        search ? search_same(m, c, r, given, p->global_batch, hooks, &res, &serr) : TSL_SEARCH_OK;
    if (src == TSL_SEARCH_CANCELLED || tsl_err_code(&serr) == TSL_E_CANCELLED) {
        tsl_err_setc(err, TSL_E_CANCELLED, "eval: the search was cancelled");
        goto out;
    }
    *doc = given_doc(m, c, p);
    if (*doc == NULL) {
        tsl_err_setc(err, TSL_E_NOMEM, "eval: out of memory");
        goto out;
    }
    /* the budget's source (search.h tsl_request_device_budget), which the table names */
    json_object_set_new(*doc, "memory",
                        json_pack("{s:I, s:I}", "memory_bytes", (json_int_t)r->mem_budget_bytes,
                                  "memory_reserve_bytes", (json_int_t)r->mem_reserve_bytes));
    if (r->target) /* priced with its defaults, checked against its rules */
        json_object_set_new(*doc, "target", json_string(tsl_target_name(r->target)));
    if (search)
        add_search(*doc, m, p, res, &serr);
    rc = 0;
out:
    free(res);
    free(p);
    return rc;
}
