/*
 * plan_proto.c — the plan document (common/plan_json.h) ↔ tessel.v1.Plan, both
 * directions (plan_proto.h).
 */
#include "plan_proto.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "plan_json.h"
#include "request.h"

/* ==== document → Plan ============================================================ */

static double num(const json_t *o, const char *key)
{
    return json_number_value(json_object_get(o, key));
}

static uint64_t u64(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    if (json_is_integer(v))
        return json_integer_value(v) > 0 ? (uint64_t)json_integer_value(v) : 0;
    /* a foreign or hand-edited document may hold any double: clamp before the
     * cast, which is undefined outside [0, 2^64) (tests/fuzz/corpus/plan_json) */
    double d = json_number_value(v);
    return d >= 18446744073709551616.0 ? UINT64_MAX : d > 0 ? (uint64_t)d : 0;
}

static uint32_t u32(const json_t *o, const char *key)
{
    uint64_t v = u64(o, key);
    return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

static const char *str(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

/* Allocates an array of n message pointers, each to a zeroed message of size sz
 * initialised by init. */
static void **alloc_msgs(tsl_arena_t *a, size_t n, size_t sz, void (*init)(void *))
{
    void **v = tsl_arena_alloc(a, (n ? n : 1) * sizeof *v);
    for (size_t i = 0; v && i < n; i++) {
        v[i] = tsl_arena_alloc(a, sz);
        if (!v[i])
            return NULL;
        init(v[i]);
    }
    return v;
}

static int fill_runs(tsl_arena_t *a, const json_t *runs, Tessel__V1__Stage *st)
{
    st->n_runs = json_array_size(runs);
    st->runs = (Tessel__V1__LayerRun **)alloc_msgs(a, st->n_runs, sizeof(Tessel__V1__LayerRun),
                                                   (void (*)(void *))tessel__v1__layer_run__init);
    if (!st->runs)
        return -1;
    for (size_t i = 0; i < st->n_runs; i++) {
        const json_t *r = json_array_get(runs, i);
        Tessel__V1__LayerRun *lr = st->runs[i];
        lr->first_layer = u32(r, "first_layer");
        lr->count = u32(r, "count");
        if (!(lr->strategy = tsl_arena_strdup(a, str(r, "strategy"))) ||
            !(lr->layers = tsl_arena_strdup(a, str(r, "layers"))))
            return -1;
    }
    return 0;
}

static int fill_stage(tsl_arena_t *a, const json_t *o, Tessel__V1__Stage *st)
{
    st->first_layer = u32(o, "first_layer");
    st->n_layers = u32(o, "n_layers");
    st->first_device = u32(o, "first_device");
    st->n_devices = u32(o, "n_devices");
    st->inflight = u32(o, "inflight");
    st->fwd_s = num(o, "fwd_s");
    st->time_s = num(o, "time_s");
    st->time_nosync_s = num(o, "time_nosync_s");
    st->p2p_s = num(o, "p2p_s");
    st->optimizer_s = num(o, "opt_s");
    st->model_states_bytes = u64(o, "ms_bytes");
    st->activation_bytes = u64(o, "act_bytes");
    st->peak_bytes = u64(o, "peak_bytes");
    if (!(st->layers = tsl_arena_strdup(a, str(o, "layers"))))
        return -1;
    return fill_runs(a, json_object_get(o, "runs"), st);
}

/* The AutoPipe and H3T extras of a <plan>: each present only when the planner
 * used it (plan_json.c). */
static int fill_extras(tsl_arena_t *a, const json_t *plan, Tessel__V1__PlanFigures *f)
{
    const char *g = str(plan, "granularity");
    if (!(f->granularity = tsl_arena_strdup(a, g[0] ? g : "layer")))
        return -1;
    f->sim_iter_time_s = num(plan, "sim_iter_time_s");
    f->master_stage = u32(plan, "master_stage");
    f->interleave = u32(plan, "interleave");
    const json_t *sl = json_object_get(plan, "slicer");
    if (json_is_object(sl)) {
        if (!(f->slicer = tsl_arena_alloc(a, sizeof *f->slicer)))
            return -1;
        tessel__v1__slicer_figures__init(f->slicer);
        f->slicer->n_sliced = u32(sl, "n_sliced");
        f->slicer->iter_time_s = num(sl, "iter_time_s");
    }
    const json_t *mo = json_object_get(plan, "memopt");
    if (json_is_object(mo)) {
        if (!(f->memopt = tsl_arena_alloc(a, sizeof *f->memopt)))
            return -1;
        tessel__v1__memopt_figures__init(f->memopt);
        if (!(f->memopt->mode = tsl_arena_strdup(a, str(mo, "mode"))))
            return -1;
        f->memopt->cpu_bytes_per_node = u64(mo, "cpu_bytes_per_node");
    }
    const json_t *order = json_object_get(plan, "node_order");
    f->n_node_order = json_array_size(order);
    if (f->n_node_order) {
        if (!(f->node_order = tsl_arena_alloc(a, f->n_node_order * sizeof *f->node_order)))
            return -1;
        for (size_t i = 0; i < f->n_node_order; i++) {
            json_int_t v = json_integer_value(json_array_get(order, i));
            f->node_order[i] = v > 0 && v <= UINT32_MAX ? (uint32_t)v : 0;
        }
    }
    return 0;
}

/* plan: a <plan> object or null (no plan; why says so). */
static Tessel__V1__PlanFigures *figures(tsl_arena_t *a, const json_t *plan, const char *label,
                                        const char *why)
{
    Tessel__V1__PlanFigures *f = tsl_arena_alloc(a, sizeof *f);
    if (!f)
        return NULL;
    tessel__v1__plan_figures__init(f);
    f->valid = json_is_object(plan);
    const char *l = f->valid && str(plan, "label")[0] ? str(plan, "label") : label;
    if (!(f->label = tsl_arena_strdup(a, l)) || !(f->why = tsl_arena_strdup(a, why)))
        return NULL;
    if (!f->valid)
        return f;
    f->pp = u32(plan, "pp");
    f->global_batch = u32(plan, "global_batch");
    f->micro_batch = u32(plan, "micro_batch");
    f->n_micro = u32(plan, "n_micro");
    f->iter_time_s = num(plan, "iter_time_s");
    f->samples_per_s = num(plan, "samples_per_s");
    f->tokens_per_s = num(plan, "tokens_per_s");
    f->peak_bytes = u64(plan, "peak_bytes");
    f->budget_bytes = u64(plan, "budget_bytes");
    f->alpha_t = num(plan, "alpha_t");
    f->alpha_m = num(plan, "alpha_m");
    f->optimizer_tail_s = num(plan, "opt_tail_s");
    f->tied_allreduce_s = num(plan, "tie_s");
    const json_t *stages = json_object_get(plan, "stages");
    f->n_stages = json_array_size(stages);
    f->stages = (Tessel__V1__Stage **)alloc_msgs(a, f->n_stages, sizeof(Tessel__V1__Stage),
                                                 (void (*)(void *))tessel__v1__stage__init);
    if (!f->stages)
        return NULL;
    for (size_t i = 0; i < f->n_stages; i++)
        if (fill_stage(a, json_array_get(stages, i), f->stages[i]) != 0)
            return NULL;
    return fill_extras(a, plan, f) == 0 ? f : NULL;
}

static int fill_lists(tsl_arena_t *a, const json_t *doc, Tessel__V1__Plan *p)
{
    const json_t *alts = json_object_get(doc, "alternatives");
    const json_t *bases = json_object_get(doc, "baselines");
    p->n_alternatives = json_array_size(alts);
    p->n_baselines = json_array_size(bases);
    p->alternatives = tsl_arena_alloc(a, (p->n_alternatives + 1) * sizeof *p->alternatives);
    p->baselines = tsl_arena_alloc(a, (p->n_baselines + 1) * sizeof *p->baselines);
    if (!p->alternatives || !p->baselines)
        return -1;
    for (size_t i = 0; i < p->n_alternatives; i++)
        if (!(p->alternatives[i] = figures(a, json_array_get(alts, i), "tessel", "")))
            return -1;
    for (size_t i = 0; i < p->n_baselines; i++) {
        const json_t *b = json_array_get(bases, i);
        p->baselines[i] = figures(a, json_object_get(b, "plan"), str(b, "name"), str(b, "why"));
        if (!p->baselines[i])
            return -1;
    }
    return 0;
}

/* The "request" echo; NULL (no field) when the document has none. */
static int fill_request(tsl_arena_t *a, const json_t *r, Tessel__V1__Plan *p)
{
    if (!json_is_object(r))
        return 0;
    Tessel__V1__PlanOptions *o = tsl_arena_alloc(a, sizeof *o);
    if (!o)
        return -1;
    tessel__v1__plan_options__init(o);
    tsl_request_t req;
    tsl_request_from_json(r, &req);
    tsl_request_to_proto(&req, &o->base);
    p->request = o;
    return 0;
}

int tsl_plan_proto_from_json(const char *result_json, tsl_arena_t *a, Tessel__V1__Plan **out,
                             tsl_err_t *err)
{
    json_error_t je;
    json_t *doc = json_loads(result_json, 0, &je);
    if (!json_is_object(doc) || !json_is_object(json_object_get(doc, "plan"))) {
        json_decref(doc);
        return tsl_err_set(err, "stored plan: not a search result (%s)", doc ? "no plan" : je.text);
    }
    int rc = -1;
    Tessel__V1__Plan *p = tsl_arena_alloc(a, sizeof *p);
    if (!p)
        goto out;
    tessel__v1__plan__init(p);
    const json_t *model = json_object_get(doc, "model");
    const json_t *cluster = json_object_get(doc, "cluster");
    p->fingerprint = tsl_arena_strdup(a, str(doc, "fingerprint"));
    p->model_name = tsl_arena_strdup(a, str(model, "name"));
    p->cluster_description = tsl_arena_strdup(a, str(cluster, "description"));
    const char *line = str(json_object_get(doc, "figures"), "line");
    if (line[0] && (p->figures = tsl_arena_alloc(a, sizeof *p->figures)) != NULL) {
        tessel__v1__figure_sources__init(p->figures);
        p->figures->line = tsl_arena_strdup(a, line);
    }
    p->n_devices = u32(cluster, "devices");
    p->cluster_nodes = u32(cluster, "nodes");
    p->model_layers = u32(model, "layers");
    p->model_params = u64(model, "params");
    p->tokens_per_sample = u32(model, "tokens_per_sample");
    p->max_context = u32(model, "max_context");
    p->search_time_s = num(doc, "search_time_s");
    const json_t *stats = json_object_get(doc, "stats");
    p->dp_runs = u64(stats, "dp_runs");
    p->dp_states = u64(stats, "dp_states");
    p->configs = u64(stats, "configs");
    p->batches_tried = u32(stats, "batches_tried");
    p->best = figures(a, json_object_get(doc, "plan"), "tessel", "");
    const json_t *target = json_object_get(doc, "target");
    p->unrestricted_samples_per_s = num(target, "unrestricted_samples_per_s");
    p->unrestricted_iter_time_s = num(target, "unrestricted_iter_time_s");
    if (!p->fingerprint || !p->model_name || !p->cluster_description || !p->best ||
        fill_lists(a, doc, p) != 0 || fill_request(a, json_object_get(doc, "request"), p) != 0)
        goto out;
    *out = p;
    rc = 0;
out:
    if (rc != 0)
        tsl_err_setc(err, TSL_E_NOMEM, "stored plan: out of memory");
    json_decref(doc);
    return rc;
}

/* ==== Plan → document ============================================================ */

static json_t *ju64(uint64_t v)
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
    json_t *o = json_pack(
        "{s:I, s:I, s:I, s:I, s:I, s:f, s:f, s:f, s:f}", "first_layer", (json_int_t)s->first_layer,
        "n_layers", (json_int_t)s->n_layers, "first_device", (json_int_t)s->first_device,
        "n_devices", (json_int_t)s->n_devices, "inflight", (json_int_t)s->inflight, "fwd_s",
        s->fwd_s, "time_s", s->time_s, "time_nosync_s", s->time_nosync_s, "p2p_s", s->p2p_s);
    if (!o)
        return NULL;
    json_object_set_new(o, "opt_s", json_real(s->optimizer_s));
    json_object_set_new(o, "ms_bytes", ju64(s->model_states_bytes));
    json_object_set_new(o, "act_bytes", ju64(s->activation_bytes));
    json_object_set_new(o, "peak_bytes", ju64(s->peak_bytes));
    json_object_set_new(o, "runs", stage_runs(s));
    if (s->layers && s->layers[0])
        json_object_set_new(o, "layers", json_string(s->layers));
    return o;
}

static json_t *figures_head(const Tessel__V1__PlanFigures *f)
{
    return json_pack("{s:s, s:I, s:I, s:I, s:I, s:f, s:f, s:f}", "label", text(f->label), "pp",
                     (json_int_t)f->pp, "global_batch", (json_int_t)f->global_batch, "micro_batch",
                     (json_int_t)f->micro_batch, "n_micro", (json_int_t)f->n_micro, "iter_time_s",
                     f->iter_time_s, "samples_per_s", f->samples_per_s, "tokens_per_s",
                     f->tokens_per_s);
}

/* granularity, the 1F1B simulation, the slicer, H3T and the node order: each
 * present only when the plan has it, as plan_json.c writes them. */
static void figures_extras(json_t *o, const Tessel__V1__PlanFigures *f)
{
    json_object_set_new(
        o, "granularity",
        json_string(f->granularity && f->granularity[0] ? f->granularity : "layer"));
    if (f->optimizer_tail_s > 0)
        json_object_set_new(o, "opt_tail_s", json_real(f->optimizer_tail_s));
    if (f->tied_allreduce_s > 0)
        json_object_set_new(o, "tie_s", json_real(f->tied_allreduce_s));
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
    json_object_set_new(o, "peak_bytes", ju64(f->peak_bytes));
    json_object_set_new(o, "budget_bytes", ju64(f->budget_bytes));
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
    return json_pack("{s:s, s:s, s:o, s:s}", "name", label, "title", baseline_title(label), "plan",
                     plan, "why", f->why ? f->why : "");
}

static json_t *figures_list(Tessel__V1__PlanFigures *const *v, size_t n, bool baselines)
{
    json_t *a = json_array();

    for (size_t i = 0; a && i < n; i++)
        json_array_append_new(a,
                              baselines ? baseline_to_json(v[i]) : tsl_proto_figures_to_json(v[i]));
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
    tsl_request_t req;
    tsl_request_from_proto(&r->base, &req);
    return tsl_request_to_json(&req);
}

json_t *tsl_plan_proto_to_json(const Tessel__V1__Plan *p)
{
    json_t *doc = json_pack("{s:s, s:{s:s, s:I, s:I, s:I}, s:{s:s, s:I, s:I}}", "fingerprint",
                            text(p->fingerprint), "model", "name", text(p->model_name), "layers",
                            (json_int_t)p->model_layers, "params", (json_int_t)p->model_params,
                            "tokens_per_sample", (json_int_t)p->tokens_per_sample, "cluster",
                            "description", text(p->cluster_description), "devices",
                            (json_int_t)p->n_devices, "nodes", (json_int_t)p->cluster_nodes);
    if (!doc)
        return NULL;
    /* model.seq_len repeats tokens_per_sample (plan_json.c writes both) */
    json_t *model = json_object_get(doc, "model");
    json_object_set_new(model, "seq_len", json_integer((json_int_t)p->tokens_per_sample));
    if (p->max_context)
        json_object_set_new(model, "max_context", json_integer((json_int_t)p->max_context));
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
    tsl_request_t req;
    tsl_request_init(&req);
    if (p->request)
        tsl_request_from_proto(&p->request->base, &req);
    json_t *target =
        tsl_target_cost_json(req.target, p->best ? p->best->samples_per_s : 0,
                             p->unrestricted_samples_per_s, p->unrestricted_iter_time_s);
    if (target != NULL)
        json_object_set_new(doc, "target", target);
    if (p->figures && p->figures->line && p->figures->line[0])
        json_object_set_new(doc, "figures", json_pack("{s:s}", "line", p->figures->line));
    return doc;
}

json_t *tsl_proto_summary_to_json(const Tessel__V1__PlanSummary *s)
{
    json_t *o = json_pack("{s:s, s:s, s:I, s:I, s:f, s:f, s:b, s:I}", "fingerprint",
                          s->fingerprint ? s->fingerprint : "", "model_name",
                          s->model_name ? s->model_name : "", "n_devices", (json_int_t)s->n_devices,
                          "global_batch", (json_int_t)s->global_batch, "iter_time_s",
                          s->iter_time_s, "samples_per_s", s->samples_per_s, "stale", (int)s->stale,
                          "created_unix", (json_int_t)s->created_unix);
    if (o)
        json_object_set_new(o, "peak_bytes", json_integer((json_int_t)s->peak_bytes));
    return o;
}
