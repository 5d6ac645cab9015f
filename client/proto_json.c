/*
 * proto_json.c — tessel.v1.Plan / PlanSummary → plan_json.h documents.
 */
#include "proto_json.h"

#include <string.h>

#include "search.h"

static json_t *u64(uint64_t v)
{
    return json_integer((json_int_t)v);
}

static const char *text(const char *s)
{
    return s ? s : "";
}

static json_t *run_to_json(const Tessel__V1__LayerRun *r)
{
    json_t *o = json_pack("{s:I, s:I, s:s}", "first_layer", (json_int_t)r->first_layer, "count",
                          (json_int_t)r->count, "strategy", text(r->strategy));
    if (o && r->layers && r->layers[0])
        json_object_set_new(o, "layers", json_string(r->layers));
    return o;
}

static json_t *stage_runs(const Tessel__V1__Stage *s)
{
    json_t *runs = json_array();

    for (size_t i = 0; runs && i < s->n_runs; i++)
        json_array_append_new(runs, run_to_json(s->runs[i]));
    return runs;
}

/* Keys in plan_json.c's order; "layers" only on sub-layer plans. */
static json_t *stage_to_json(const Tessel__V1__Stage *s)
{
    json_t *o = json_pack("{s:I, s:I, s:I, s:I, s:I, s:f, s:f, s:f, s:f}", "first_layer",
                          (json_int_t)s->first_layer, "n_layers", (json_int_t)s->n_layers,
                          "first_device", (json_int_t)s->first_device, "n_devices",
                          (json_int_t)s->n_devices, "inflight", (json_int_t)s->inflight,
                          "fwd_s", s->fwd_s, "time_s", s->time_s, "time_nosync_s",
                          s->time_nosync_s, "p2p_s", s->p2p_s);
    if (!o)
        return NULL;
    json_object_set_new(o, "ms_bytes", u64(s->model_states_bytes));
    json_object_set_new(o, "act_bytes", u64(s->activation_bytes));
    json_object_set_new(o, "peak_bytes", u64(s->peak_bytes));
    json_object_set_new(o, "runs", stage_runs(s));
    if (s->layers && s->layers[0])
        json_object_set_new(o, "layers", json_string(s->layers));
    return o;
}

static json_t *figures_head(const Tessel__V1__PlanFigures *f)
{
    return json_pack("{s:s, s:I, s:I, s:I, s:I, s:f, s:f, s:f}", "label", text(f->label), "pp",
                     (json_int_t)f->pp, "global_batch", (json_int_t)f->global_batch,
                     "micro_batch", (json_int_t)f->micro_batch, "n_micro",
                     (json_int_t)f->n_micro, "iter_time_s", f->iter_time_s, "samples_per_s",
                     f->samples_per_s, "tokens_per_s", f->tokens_per_s);
}

/* granularity, the 1F1B simulation, the slicer, H3T and the node order: each
 * present only when the plan has it, as plan_json.c writes them. */
static void figures_extras(json_t *o, const Tessel__V1__PlanFigures *f)
{
    json_object_set_new(o, "granularity",
                        json_string(f->granularity && f->granularity[0] ? f->granularity
                                                                        : "layer"));
    if (f->sim_iter_time_s > 0) {
        json_object_set_new(o, "sim_iter_time_s", json_real(f->sim_iter_time_s));
        json_object_set_new(o, "master_stage", json_integer((json_int_t)f->master_stage));
    }
    if (f->interleave > 1)
        json_object_set_new(o, "interleave", json_integer((json_int_t)f->interleave));
    if (f->slicer && f->slicer->n_sliced)
        json_object_set_new(o, "slicer",
                            json_pack("{s:I, s:f}", "n_sliced", (json_int_t)f->slicer->n_sliced,
                                      "iter_time_s", f->slicer->iter_time_s));
    if (f->memopt)
        json_object_set_new(o, "memopt",
                            json_pack("{s:s, s:I}", "mode", text(f->memopt->mode),
                                      "cpu_bytes_per_node",
                                      (json_int_t)f->memopt->cpu_bytes_per_node));
    if (f->n_node_order) {
        json_t *order = json_array();
        for (size_t k = 0; order && k < f->n_node_order; k++)
            json_array_append_new(order, json_integer((json_int_t)f->node_order[k]));
        json_object_set_new(o, "node_order", order);
    }
}

json_t *tsl_proto_figures_to_json(const Tessel__V1__PlanFigures *f)
{
    json_t *o = figures_head(f), *stages = json_array();

    if (!o || !stages) {
        json_decref(o);
        json_decref(stages);
        return NULL;
    }
    json_object_set_new(o, "peak_bytes", u64(f->peak_bytes));
    json_object_set_new(o, "budget_bytes", u64(f->budget_bytes));
    json_object_set_new(o, "alpha_t", json_real(f->alpha_t));
    json_object_set_new(o, "alpha_m", json_real(f->alpha_m));
    for (size_t i = 0; i < f->n_stages; i++)
        json_array_append_new(stages, stage_to_json(f->stages[i]));
    json_object_set_new(o, "stages", stages);
    figures_extras(o, f);
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

/* The request echo in tsl_request_to_json()'s shape; an empty object when the
 * daemon sent none. */
static json_t *request_to_json(const Tessel__V1__PlanOptions *r)
{
    if (!r)
        return json_object();
    json_t *o = json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "pp", (json_int_t)r->pp,
                          "global_batch", (json_int_t)r->global_batch, "max_batch",
                          (json_int_t)r->max_batch, "memory_bytes", (json_int_t)r->memory_bytes,
                          "top_k", (json_int_t)r->top_k, "max_pp", (json_int_t)r->max_pp,
                          "max_micro", (json_int_t)r->max_micro, "bucket_bytes",
                          (json_int_t)r->bucket_bytes);
    const struct {
        const char *key;
        bool value;
    } flags[] = {{"no_pp", r->no_pp},
                 {"no_tp", r->no_tp},
                 {"no_dp", r->no_dp},
                 {"no_sdp", r->no_sdp},
                 {"no_ckpt", r->no_ckpt},
                 {"no_baselines", r->no_baselines},
                 {"no_placement", r->no_placement},
                 {"no_memopt", r->no_memopt},
                 {"no_slicer", r->no_slicer},
                 {"no_sublayer", r->no_sublayer},
                 {"no_bi_objective", r->no_bi_objective},
                 {"no_interleave", r->no_interleave}};
    for (size_t i = 0; o && i < sizeof(flags) / sizeof(flags[0]); i++)
        json_object_set_new(o, flags[i].key, json_boolean(flags[i].value));
    return o;
}

json_t *tsl_proto_plan_to_json(const Tessel__V1__Plan *p)
{
    json_t *doc = json_pack(
        "{s:s, s:{s:s, s:I, s:I, s:I}, s:{s:s, s:I, s:I}}", "fingerprint", text(p->fingerprint),
        "model", "name", text(p->model_name), "layers", (json_int_t)p->model_layers, "params",
        (json_int_t)p->model_params, "tokens_per_sample", (json_int_t)p->tokens_per_sample,
        "cluster", "description", text(p->cluster_description), "devices",
        (json_int_t)p->n_devices, "nodes", (json_int_t)p->cluster_nodes);
    if (!doc)
        return NULL;
    json_object_set_new(doc, "request", request_to_json(p->request));
    json_object_set_new(doc, "plan", best_to_json(p));
    json_object_set_new(doc, "alternatives",
                        figures_list(p->alternatives, p->n_alternatives, false));
    json_object_set_new(doc, "baselines", figures_list(p->baselines, p->n_baselines, true));
    json_object_set_new(doc, "stats",
                        json_pack("{s:I, s:I, s:I, s:I}", "dp_runs", (json_int_t)p->dp_runs,
                                  "dp_states", (json_int_t)p->dp_states, "configs",
                                  (json_int_t)p->configs, "batches_tried",
                                  (json_int_t)p->batches_tried));
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
