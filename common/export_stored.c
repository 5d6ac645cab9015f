/*
 * export_stored.c — from a plan document (plan_json.h) back to a tsl_plan_t, and
 * the export of a plan the daemon stored (export.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "hf_config.h"
#include "trace_json.h"

static uint32_t u32_of(const json_t *o, const char *key)
{
    json_int_t v = json_integer_value(json_object_get(o, key));
    return v > 0 && v <= UINT32_MAX ? (uint32_t)v : 0;
}

/* A run's strategy; the memory-switch suffix of a memopt plan ("+remat...") is
 * left out (exports refuse those plans on p->memopt). */
static int run_strategy(const json_t *run, tsl_strategy_t *s, tsl_err_t *err)
{
    const char *text = json_string_value(json_object_get(run, "strategy"));
    if (text == NULL)
        return tsl_err_set(err, "plan: a run has no strategy");
    return tsl_strategy_parse(text, s, err);
}

static int read_stage(const json_t *st, uint32_t s, tsl_plan_t *out, tsl_err_t *err)
{
    tsl_plan_stage_t *ps = &out->stages[s];
    ps->first_layer = u32_of(st, "first_layer");
    ps->n_layers = u32_of(st, "n_layers");
    ps->first_device = u32_of(st, "first_device");
    ps->n_devices = u32_of(st, "n_devices");
    ps->inflight = u32_of(st, "inflight");
    ps->time_s = json_number_value(json_object_get(st, "time_s"));
    /* the timing a trace replays (trace_json.h) */
    ps->fwd_s = json_number_value(json_object_get(st, "fwd_s"));
    ps->time_nosync_s = json_number_value(json_object_get(st, "time_nosync_s"));
    ps->p2p_s = json_number_value(json_object_get(st, "p2p_s"));
    ps->opt_s = json_number_value(json_object_get(st, "opt_s")); /* absent (older): 0 */
    ps->peak_bytes = (uint64_t)json_integer_value(json_object_get(st, "peak_bytes"));
    if (ps->n_layers == 0 || ps->n_devices == 0 || ps->first_layer != out->n_layers ||
        ps->first_layer + ps->n_layers > TSL_PLAN_MAX_LAYERS)
        return tsl_err_set(err, "plan: stage %u: bad first_layer/n_layers/n_devices", s);
    out->n_layers += ps->n_layers;
    out->n_devices += ps->n_devices;
    size_t i;
    json_t *run;
    json_array_foreach(json_object_get(st, "runs"), i, run)
    {
        uint32_t first = u32_of(run, "first_layer"), count = u32_of(run, "count");
        tsl_strategy_t sg = {0};
        if (first < ps->first_layer || count == 0 || first + count > ps->first_layer + ps->n_layers)
            return tsl_err_set(err, "plan: stage %u: a run outside the stage", s);
        if (run_strategy(run, &sg, out->memopt ? NULL : err) != 0 && !out->memopt)
            return tsl_err_prefix(err, "plan: stage %u", s);
        for (uint32_t k = first; k < first + count; k++)
            out->layer[k] = sg;
    }
    return 0;
}

int tsl_plan_from_json(const json_t *plan, tsl_plan_t *out, tsl_err_t *err)
{
    tsl_plan_init(out);
    if (!json_is_object(plan))
        return tsl_err_set(err, "plan: not an object");
    const json_t *stages = json_object_get(plan, "stages");
    out->pp = (uint32_t)json_array_size(stages);
    if (out->pp == 0 || out->pp > TSL_PLAN_MAX_STAGES || out->pp != u32_of(plan, "pp"))
        return tsl_err_set(err, "plan: pp and stages[] disagree");
    snprintf(out->label, sizeof out->label, "%s",
             json_string_value(json_object_get(plan, "label")) ?: "tessel");
    out->global_batch = u32_of(plan, "global_batch");
    out->micro_batch = u32_of(plan, "micro_batch");
    out->n_micro = u32_of(plan, "n_micro");
    out->interleave = u32_of(plan, "interleave");
    out->iter_time_s = json_number_value(json_object_get(plan, "iter_time_s"));
    out->opt_tail_s = json_number_value(json_object_get(plan, "opt_tail_s"));
    out->tie_s = json_number_value(json_object_get(plan, "tie_s")); /* absent: none */
    out->samples_per_s = json_number_value(json_object_get(plan, "samples_per_s"));
    out->peak_bytes = (uint64_t)json_integer_value(json_object_get(plan, "peak_bytes"));
    const char *gran = json_string_value(json_object_get(plan, "granularity"));
    out->sublayer = gran && strcmp(gran, "sublayer") == 0;
    out->memopt = json_object_get(plan, "memopt") != NULL;
    if (json_object_get(plan, "node_order"))
        out->n_nodes = (uint32_t)json_array_size(json_object_get(plan, "node_order"));
    if (out->micro_batch == 0 || out->micro_batch * out->n_micro != out->global_batch)
        return tsl_err_set(err, "plan: micro_batch x n_micro is not global_batch");
    for (uint32_t s = 0; s < out->pp; s++)
        if (read_stage(json_array_get(stages, s), s, out, err) != 0)
            return -1;
    out->valid = true;
    return 0;
}

/* The model of a stored request: {"model_preset": NAME} or {"hf_config": {...}}. */
static int stored_model(const json_t *req, const json_t *doc, tsl_model_t *m, tsl_err_t *err)
{
    const char *preset = json_string_value(json_object_get(req, "model_preset"));
    if (preset)
        return tsl_model_preset_seq(preset, u32_of(req, "seq_len"), m, err);
    const json_t *hf = json_object_get(req, "hf_config");
    if (hf == NULL)
        return tsl_err_set(err, "request: neither model_preset nor hf_config");
    char *text = json_is_string(hf) ? strdup(json_string_value(hf)) : json_dumps(hf, JSON_COMPACT);
    const char *name = json_string_value(json_object_get(json_object_get(doc, "model"), "name"));
    int rc = text ? tsl_hf_config_parse(text, name ? name : "", u32_of(req, "seq_len"), m, err)
                  : tsl_err_setc(err, TSL_E_NOMEM, "export: out of memory");
    free(text);
    return rc;
}

/* The stored plan's Chrome trace as compact JSON text (trace_json.h). */
static int trace_text(const tsl_plan_t *p, const tsl_model_t *m, char **text, size_t *len,
                      tsl_err_t *err)
{
    json_t *doc = tsl_trace_plan(p, m, err);
    if (doc == NULL)
        return -1;
    *text = json_dumps(doc, JSON_COMPACT | JSON_REAL_PRECISION(12));
    json_decref(doc);
    if (*text == NULL)
        return tsl_err_setc(err, TSL_E_NOMEM, "trace: out of memory");
    *len = strlen(*text);
    return 0;
}

int tsl_export_stored(tsl_export_format_t f, const char *request_json, const char *result_json,
                      char **text, size_t *len, tsl_err_t *err)
{
    json_t *req = json_loads(request_json, 0, NULL), *doc = json_loads(result_json, 0, NULL);
    tsl_model_t m = {0};
    tsl_plan_t *p = malloc(sizeof(*p));
    int rc = -1;
    *text = NULL;
    if (p == NULL) {
        tsl_err_setc(err, TSL_E_NOMEM, "export: out of memory");
        goto out;
    }
    if (req == NULL || doc == NULL) {
        tsl_err_setc(err, TSL_E_INTERNAL, "export: the stored plan is not JSON");
        goto out;
    }
    if (stored_model(req, doc, &m, err) != 0 ||
        tsl_plan_from_json(json_object_get(doc, "plan"), p, err) != 0) {
        tsl_err_prefix(err, "stored plan");
        goto out;
    }
    rc = f == TSL_EXPORT_TRACE ? trace_text(p, &m, text, len, err)
                               : tsl_export(f, p, &m, text, len, err);
out:
    tsl_model_free(&m);
    free(p);
    json_decref(req);
    json_decref(doc);
    return rc;
}
