/*
 * exec_doc.c — a trial rank's model and plan from a stored plan document (exec_doc.h).
 * Parsing is the planner's and common/'s (presets, hf_config, tsl_plan_from_json);
 * this file only decides where in the document each part lives.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "exec_doc.h"
#include "export.h"
#include "hf_config.h"
#include "plan_json.h"
#include "search.h"
#include "target.h"

static uint32_t u32_of(const json_t *o, const char *key)
{
    json_int_t v = json_integer_value(json_object_get(o, key));
    return v > 0 && v <= UINT32_MAX ? (uint32_t)v : 0;
}

/* o names the model ({"model_preset"} or {"hf_config"}): 1 and m filled, 0 when it
 * names none, -1 on a bad model. */
static int model_from(const json_t *o, const char *name, tsl_model_t *m, tsl_err_t *err)
{
    const char *preset = json_string_value(json_object_get(o, "model_preset"));
    const json_t *hf = json_object_get(o, "hf_config");
    if (preset && *preset)
        return tsl_model_preset_seq(preset, u32_of(o, "seq_len"), m, err) ? -1 : 1;
    if (!hf || json_is_null(hf))
        return 0;
    char *text = json_is_string(hf) ? strdup(json_string_value(hf)) : json_dumps(hf, JSON_COMPACT);
    if (!text)
        return tsl_err_setc(err, TSL_E_NOMEM, "document: out of memory");
    int rc = tsl_hf_config_parse(text, name, u32_of(o, "seq_len"), m, err);
    free(text);
    return rc ? tsl_err_prefix(err, "document: hf_config") : 1;
}

static int doc_model(const json_t *doc, tsl_model_t *m, tsl_err_t *err)
{
    const json_t *jm = json_object_get(doc, "model");
    const char *name = json_string_value(json_object_get(jm, "name"));
    int got = model_from(json_object_get(doc, "request"), name ? name : "", m, err);
    if (got == 0)
        got = model_from(doc, name ? name : "", m, err);
    if (got != 0)
        return got < 0 ? -1 : 0;
    if (!name)
        return tsl_err_set(err, "document: no model (request.model_preset, request.hf_config or "
                                "model.name)");
    if (!tsl_model_preset_find(name)) /* not the preset list: the request is what lacks */
        return tsl_err_set(err,
                           "document: the request names no model (request.model_preset or "
                           "request.hf_config) and model.name '%s' is no preset",
                           name);
    if (tsl_model_preset_seq(name, u32_of(jm, "seq_len"), m, err))
        return tsl_err_prefix(err, "document: model.name '%s'", name);
    return 0;
}

/* The request's model switches on m, as the search applied them (search.h
 * tsl_request_model_switches: MTP depths under the target's rule, blocks kept bf16,
 * unfused_attn, no_dropout), so the model has the layers the plan was split on and
 * the attention kind and dropout it was priced with. The request is read as every
 * request document is (plan_json.h: a target by name or by number). */
static int doc_switches(const json_t *doc, tsl_model_t *m, tsl_err_t *err)
{
    const json_t *r = json_object_get(doc, "request");
    tsl_request_t req;
    if (!json_is_object(r))
        r = doc;
    tsl_request_from_json(r, &req);
    const json_t *jt = json_object_get(r, "target");
    uint32_t named;
    if (json_is_string(jt) && tsl_target_parse(json_string_value(jt), &named, err) != 0)
        return tsl_err_prefix(err, "document: request.target");
    if (req.target >= TSL_TARGET_COUNT)
        return tsl_err_set(err, "document: request.target: %u is no target (0 .. %u)", req.target,
                           TSL_TARGET_COUNT - 1);
    tsl_model_switches_t sw = tsl_request_model_switches(&req);
    /* the unfused core the search chose for the target's stack on the cluster's GPUs
     * (the plan's stack_unfused_attn: search.c tsl_search) */
    sw.unfused_attn |=
        json_is_true(json_object_get(json_object_get(doc, "plan"), "stack_unfused_attn"));
    tsl_model_t own = {0};
    const tsl_model_t *out;
    if (tsl_model_for_request(m, &sw, &own, &out, err) != 0) {
        tsl_model_free(&own);
        return tsl_err_prefix(err, "document: request");
    }
    if (out == &own) {
        tsl_model_free(m);
        *m = own;
    }
    return 0;
}

static const json_t *doc_plan(const json_t *doc, uint32_t plan_index, tsl_err_t *err)
{
    const json_t *p = plan_index == 0
                          ? json_object_get(doc, "plan")
                          : json_array_get(json_object_get(doc, "alternatives"), plan_index - 1);
    if (!json_is_object(p)) {
        if (plan_index == 0)
            tsl_err_set(err, "document: no \"plan\" object");
        else
            tsl_err_set(err, "document: plan_index %u: it has %zu alternatives", plan_index,
                        json_array_size(json_object_get(doc, "alternatives")));
    }
    return json_is_object(p) ? p : NULL;
}

int tsl_exec_doc_load(const char *document, uint32_t plan_index, tsl_model_t *m, tsl_plan_t *p,
                      tsl_err_t *err)
{
    json_error_t je;
    memset(m, 0, sizeof *m);
    json_t *doc = document ? json_loads(document, 0, &je) : NULL;
    if (!json_is_object(doc)) {
        if (doc || !document)
            tsl_err_set(err, "document: not a JSON object");
        else
            tsl_err_set(err, "document: line %d: %s", je.line, je.text);
        json_decref(doc);
        return -1;
    }
    const json_t *jp = doc_plan(doc, plan_index, err);
    int rc = -1;
    if (jp && doc_model(doc, m, err) == 0 && doc_switches(doc, m, err) == 0) {
        rc = tsl_plan_from_json(jp, p, err);
        if (rc)
            tsl_err_prefix(err, "document: plan %u", plan_index);
    }
    if (rc)
        tsl_model_free(m);
    json_decref(doc);
    return rc;
}
