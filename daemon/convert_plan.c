/*
 * convert_plan.c — a stored search result (plan_json.h) → tessel.v1.Plan, and
 * the arena the message lives in (convert.h).
 */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "convert.h"

#define ARENA_CHUNK 16384u

struct tsl_arena_chunk {
    struct tsl_arena_chunk *next;
    size_t used, cap;
    _Alignas(max_align_t) unsigned char data[];
};

void *tsl_arena_alloc(tsl_arena_t *a, size_t size)
{
    size = (size + _Alignof(max_align_t) - 1) & ~(_Alignof(max_align_t) - 1);
    struct tsl_arena_chunk *c = a->head;
    if (!c || c->cap - c->used < size) {
        size_t cap = size > ARENA_CHUNK ? size : ARENA_CHUNK;
        c = malloc(sizeof *c + cap);
        if (!c)
            return NULL;
        c->next = a->head;
        c->used = 0;
        c->cap = cap;
        a->head = c;
    }
    void *p = c->data + c->used;
    c->used += size;
    memset(p, 0, size);
    return p;
}

char *tsl_arena_strdup(tsl_arena_t *a, const char *s)
{
    size_t n = strlen(s ? s : "") + 1;
    char *d = tsl_arena_alloc(a, n);
    if (d)
        memcpy(d, s ? s : "", n);
    return d;
}

void tsl_arena_free(tsl_arena_t *a)
{
    while (a->head) {
        struct tsl_arena_chunk *next = a->head->next;
        free(a->head);
        a->head = next;
    }
}

static double num(const json_t *o, const char *key)
{
    return json_number_value(json_object_get(o, key));
}

static uint64_t u64(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    if (json_is_integer(v))
        return json_integer_value(v) > 0 ? (uint64_t)json_integer_value(v) : 0;
    double d = json_number_value(v);
    return d > 0 ? (uint64_t)d : 0;
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
    st->runs = (Tessel__V1__LayerRun **)alloc_msgs(
        a, st->n_runs, sizeof(Tessel__V1__LayerRun), (void (*)(void *))tessel__v1__layer_run__init);
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

static bool flag(const json_t *o, const char *key)
{
    return json_is_true(json_object_get(o, key));
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
    o->pp = u32(r, "pp");
    o->global_batch = u32(r, "global_batch");
    o->max_batch = u32(r, "max_batch");
    o->memory_bytes = u64(r, "memory_bytes");
    o->top_k = u32(r, "top_k");
    o->max_pp = u32(r, "max_pp");
    o->max_micro = u32(r, "max_micro");
    o->bucket_bytes = u64(r, "bucket_bytes");
    o->no_pp = flag(r, "no_pp");
    o->no_tp = flag(r, "no_tp");
    o->no_dp = flag(r, "no_dp");
    o->no_sdp = flag(r, "no_sdp");
    o->no_ckpt = flag(r, "no_ckpt");
    o->no_baselines = flag(r, "no_baselines");
    o->no_placement = flag(r, "no_placement");
    o->no_memopt = flag(r, "no_memopt");
    o->no_slicer = flag(r, "no_slicer");
    o->no_sublayer = flag(r, "no_sublayer");
    o->no_bi_objective = flag(r, "no_bi_objective");
    o->no_interleave = flag(r, "no_interleave");
    p->request = o;
    return 0;
}

int tsl_convert_plan_json(const char *result_json, tsl_arena_t *a, Tessel__V1__Plan **out,
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
    p->n_devices = u32(cluster, "devices");
    p->cluster_nodes = u32(cluster, "nodes");
    p->model_layers = u32(model, "layers");
    p->model_params = u64(model, "params");
    p->tokens_per_sample = u32(model, "tokens_per_sample");
    p->search_time_s = num(doc, "search_time_s");
    const json_t *stats = json_object_get(doc, "stats");
    p->dp_runs = u64(stats, "dp_runs");
    p->dp_states = u64(stats, "dp_states");
    p->configs = u64(stats, "configs");
    p->batches_tried = u32(stats, "batches_tried");
    p->best = figures(a, json_object_get(doc, "plan"), "tessel", "");
    if (!p->fingerprint || !p->model_name || !p->cluster_description || !p->best ||
        fill_lists(a, doc, p) != 0 || fill_request(a, json_object_get(doc, "request"), p) != 0)
        goto out;
    *out = p;
    rc = 0;
out:
    if (rc != 0)
        tsl_err_set(err, "stored plan: out of memory");
    json_decref(doc);
    return rc;
}
