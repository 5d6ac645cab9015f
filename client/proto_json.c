/*
 * proto_json.c — tessel.v1.Plan / PlanSummary → plan_json.h documents.
 */
#include "proto_json.h"

#include <string.h>

#include "model.h"
#include "search.h"

static json_t *run_to_json(const Tessel__V1__LayerRun *r)
{
    return json_pack("{s:I, s:I, s:s}", "first_layer", (json_int_t)r->first_layer, "count",
                     (json_int_t)r->count, "strategy", r->strategy ? r->strategy : "");
}

static json_t *stage_runs(const Tessel__V1__Stage *s)
{
    json_t *runs = json_array();

    for (size_t i = 0; runs && i < s->n_runs; i++)
        json_array_append_new(runs, run_to_json(s->runs[i]));
    return runs;
}

static json_t *stage_to_json(const Tessel__V1__Stage *s)
{
    json_t *o = json_pack("{s:I, s:I, s:I, s:I, s:I, s:f, s:f, s:f}", "first_layer",
                          (json_int_t)s->first_layer, "n_layers", (json_int_t)s->n_layers,
                          "first_device", (json_int_t)s->first_device, "n_devices",
                          (json_int_t)s->n_devices, "inflight", (json_int_t)s->inflight,
                          "time_s", s->time_s, "time_nosync_s", s->time_nosync_s, "p2p_s",
                          s->p2p_s);
    if (!o)
        return NULL;
    json_object_set_new(o, "ms_bytes", json_integer((json_int_t)s->model_states_bytes));
    json_object_set_new(o, "act_bytes", json_integer((json_int_t)s->activation_bytes));
    json_object_set_new(o, "peak_bytes", json_integer((json_int_t)s->peak_bytes));
    json_object_set_new(o, "runs", stage_runs(s));
    return o;
}

static json_t *figures_head(const Tessel__V1__PlanFigures *f)
{
    return json_pack("{s:s, s:I, s:I, s:I, s:I, s:f, s:f, s:f}", "label",
                     f->label ? f->label : "", "pp", (json_int_t)f->pp, "global_batch",
                     (json_int_t)f->global_batch, "micro_batch", (json_int_t)f->micro_batch,
                     "n_micro", (json_int_t)f->n_micro, "iter_time_s", f->iter_time_s,
                     "samples_per_s", f->samples_per_s, "tokens_per_s", f->tokens_per_s);
}

json_t *tsl_proto_figures_to_json(const Tessel__V1__PlanFigures *f)
{
    json_t *o = figures_head(f), *stages = json_array();

    if (!o || !stages) {
        json_decref(o);
        json_decref(stages);
        return NULL;
    }
    json_object_set_new(o, "peak_bytes", json_integer((json_int_t)f->peak_bytes));
    json_object_set_new(o, "budget_bytes", json_integer((json_int_t)f->budget_bytes));
    json_object_set_new(o, "alpha_t", json_real(f->alpha_t));
    json_object_set_new(o, "alpha_m", json_real(f->alpha_m));
    for (size_t i = 0; i < f->n_stages; i++)
        json_array_append_new(stages, stage_to_json(f->stages[i]));
    json_object_set_new(o, "stages", stages);
    return o;
}

/* The planner's title for a baseline label ("dp" → "Pure DP (PyTorch DDP)"). */
static const char *baseline_title(const char *label)
{
    for (int b = 0; b < TSL_BASELINE_COUNT; b++)
        if (strcmp(tsl_baseline_name((tsl_baseline_t)b), label) == 0)
            return tsl_baseline_title((tsl_baseline_t)b);
    return label;
}

static json_t *baseline_to_json(const Tessel__V1__PlanFigures *f)
{
    const char *label = f->label ? f->label : "";
    json_t *plan = f->valid ? tsl_proto_figures_to_json(f) : json_null();
    return json_pack("{s:s, s:s, s:o, s:s}", "name", label, "title", baseline_title(label),
                     "plan", plan, "why", f->why ? f->why : "");
}

static json_t *figures_list(Tessel__V1__PlanFigures *const *v, size_t n, bool baselines)
{
    json_t *a = json_array();

    for (size_t i = 0; a && i < n; i++)
        json_array_append_new(a, baselines ? baseline_to_json(v[i])
                                           : tsl_proto_figures_to_json(v[i]));
    return a;
}

static json_t *best_to_json(const Tessel__V1__Plan *p)
{
    if (!p->best || !p->best->valid)
        return json_null();
    return tsl_proto_figures_to_json(p->best);
}

/* The layer and parameter counts are not on the wire; a preset's are known here. */
static void model_from_preset(json_t *doc, const char *name)
{
    json_t *model = json_object_get(doc, "model");
    tsl_model_t m = {0};
    tsl_err_t err;

    if (!name || !tsl_model_preset_find(name) || tsl_model_preset(name, &m, &err) != 0)
        return;
    json_object_set_new(model, "layers", json_integer((json_int_t)m.n_layers));
    json_object_set_new(model, "params", json_integer((json_int_t)tsl_model_params(&m)));
    tsl_model_free(&m);
}

json_t *tsl_proto_plan_to_json(const Tessel__V1__Plan *p)
{
    json_t *doc = json_pack("{s:s, s:{s:s}, s:{s:s, s:I}}", "fingerprint",
                            p->fingerprint ? p->fingerprint : "", "model", "name",
                            p->model_name ? p->model_name : "", "cluster", "description",
                            p->cluster_description ? p->cluster_description : "", "devices",
                            (json_int_t)p->n_devices);
    if (!doc)
        return NULL;
    model_from_preset(doc, p->model_name);
    json_object_set_new(doc, "plan", best_to_json(p));
    json_object_set_new(doc, "alternatives",
                        figures_list(p->alternatives, p->n_alternatives, false));
    json_object_set_new(doc, "baselines", figures_list(p->baselines, p->n_baselines, true));
    json_object_set_new(doc, "stats", json_pack("{s:I}", "dp_runs", (json_int_t)p->dp_runs));
    json_object_set_new(doc, "search_time_s", json_real(p->search_time_s));
    json_object_set_new(doc, "cached", json_boolean(p->cached));
    json_object_set_new(doc, "stale", json_boolean(p->stale));
    json_object_set_new(doc, "created_unix", json_integer((json_int_t)p->created_unix));
    return doc;
}

json_t *tsl_proto_summary_to_json(const Tessel__V1__PlanSummary *s)
{
    json_t *o = json_pack("{s:s, s:s, s:I, s:I, s:f, s:f, s:b, s:I}", "fingerprint",
                          s->fingerprint ? s->fingerprint : "", "model_name",
                          s->model_name ? s->model_name : "", "n_devices",
                          (json_int_t)s->n_devices, "global_batch", (json_int_t)s->global_batch,
                          "iter_time_s", s->iter_time_s, "samples_per_s", s->samples_per_s,
                          "stale", (int)s->stale, "created_unix", (json_int_t)s->created_unix);
    if (o)
        json_object_set_new(o, "peak_bytes", json_integer((json_int_t)s->peak_bytes));
    return o;
}
