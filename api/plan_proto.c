/*
 * plan_proto.c — the plan document (common/plan_json.h) ↔ tessel.v1.Plan, both
 * directions, generated from common/plan_fields.h's lists (plan_proto.h).
 */
#include "plan_proto.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "plan_fields.h"
#include "plan_json.h"
#include "proto_json.h"
#include "request.h"

/* ==== reading the document ====================================================== */

static const char *str(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

static const char *text_of(const json_t *v)
{
    const char *s = json_string_value(v);
    return s ? s : "";
}

/* A scalar of plan_fields.h from the document, by its KIND; a string is copied
 * into the arena (NULL when out of memory: the caller checks). */
#define GET_U32(o, key)  tsl_plan_json_u32(o, key)
#define GET_U64(o, key)  tsl_plan_json_u64(o, key)
#define GET_I64(o, key)  tsl_plan_json_i64(o, key)
#define GET_REAL(o, key) tsl_plan_json_real(o, key)
#define GET_BOOL(o, key) json_is_true(json_object_get(o, key))
#define GET_STR(o, key)  tsl_arena_strdup(a, str(o, key))

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

/* ---- a stage ---- */

static int read_stage_runs(tsl_arena_t *a, const json_t *o, Tessel__V1__Stage *st)
{
    const json_t *runs = json_object_get(o, "runs");
    st->n_runs = json_array_size(runs);
    st->runs = (Tessel__V1__LayerRun **)alloc_msgs(a, st->n_runs, sizeof(Tessel__V1__LayerRun),
                                                   (void (*)(void *))tessel__v1__layer_run__init);
    if (!st->runs)
        return -1;
    for (size_t i = 0; i < st->n_runs; i++) {
        const json_t *r = json_array_get(runs, i);
        Tessel__V1__LayerRun *lr = st->runs[i];
        lr->first_layer = tsl_plan_json_u32(r, "first_layer");
        lr->count = tsl_plan_json_u32(r, "count");
        if (!(lr->strategy = tsl_arena_strdup(a, str(r, "strategy"))) ||
            !(lr->layers = tsl_arena_strdup(a, str(r, "layers"))))
            return -1;
    }
    return 0;
}

static int read_stage_layers(tsl_arena_t *a, const json_t *o, Tessel__V1__Stage *st)
{
    return (st->layers = tsl_arena_strdup(a, str(o, "layers"))) ? 0 : -1;
}

/* A V's second chunk (ChunkTimes), set only where the document has "chunk1". */
static int read_stage_chunk1(tsl_arena_t *a, const json_t *o, Tessel__V1__Stage *st)
{
    const json_t *c = json_object_get(o, "chunk1");
    if (!json_is_object(c))
        return 0;
    if (!(st->chunk1 = tsl_arena_alloc(a, sizeof *st->chunk1)))
        return -1;
    tessel__v1__chunk_times__init(st->chunk1);
    st->chunk1->fwd_s = tsl_plan_json_real(c, "fwd_s");
    st->chunk1->bwd_s = tsl_plan_json_real(c, "bwd_s");
    st->chunk1->wgrad_s = tsl_plan_json_real(c, "wgrad_s");
    return 0;
}

static int read_stage(tsl_arena_t *a, const json_t *o, Tessel__V1__Stage *st)
{
    int rc = 0;
#define READ_STAGE_(c, kind, proto, json, when) READ_STAGE_##kind(proto, json)
#define READ_STAGE_CUSTOM(proto, json)          rc |= read_stage_##proto(a, o, st);
#define READ_STAGE_U32(proto, json)             st->proto = GET_U32(o, json);
#define READ_STAGE_U64(proto, json)             st->proto = GET_U64(o, json);
#define READ_STAGE_REAL(proto, json)            st->proto = GET_REAL(o, json);
    TSL_PLAN_STAGE_FIELDS(READ_STAGE_)
#undef READ_STAGE_
    return rc;
}

/* ---- a plan's figures ---- */

typedef struct read_plan_ctx {
    tsl_arena_t *a;
    const json_t *o;
    const char *label; /* when the <plan> has none (a baseline: its name) */
} read_plan_ctx_t;

static int read_plan_label(const read_plan_ctx_t *x, Tessel__V1__PlanFigures *f)
{
    const char *l = str(x->o, "label")[0] ? str(x->o, "label") : x->label;
    return (f->label = tsl_arena_strdup(x->a, l)) ? 0 : -1;
}

static int read_plan_stages(const read_plan_ctx_t *x, Tessel__V1__PlanFigures *f)
{
    const json_t *stages = json_object_get(x->o, "stages");
    f->n_stages = json_array_size(stages);
    f->stages = (Tessel__V1__Stage **)alloc_msgs(x->a, f->n_stages, sizeof(Tessel__V1__Stage),
                                                 (void (*)(void *))tessel__v1__stage__init);
    if (!f->stages)
        return -1;
    for (size_t i = 0; i < f->n_stages; i++)
        if (read_stage(x->a, json_array_get(stages, i), f->stages[i]) != 0)
            return -1;
    return 0;
}

static int read_plan_granularity(const read_plan_ctx_t *x, Tessel__V1__PlanFigures *f)
{
    const char *g = str(x->o, "granularity");
    return (f->granularity = tsl_arena_strdup(x->a, g[0] ? g : "layer")) ? 0 : -1;
}

static int read_plan_schedule(const read_plan_ctx_t *x, Tessel__V1__PlanFigures *f)
{
    const char *sc = str(x->o, "schedule");
    return (f->schedule = tsl_arena_strdup(x->a, sc[0] ? sc : "1F1B")) ? 0 : -1;
}

/* The module names as the PlanFigures bitmask (recompute.h's bit order). */
static int read_plan_recompute_modules(const read_plan_ctx_t *x, Tessel__V1__PlanFigures *f)
{
    f->recompute_modules = tsl_recompute_of_json(json_object_get(x->o, "recompute_modules"));
    return 0;
}

static int read_plan_slicer(const read_plan_ctx_t *x, Tessel__V1__PlanFigures *f)
{
    const json_t *sl = json_object_get(x->o, "slicer");
    if (!json_is_object(sl))
        return 0;
    if (!(f->slicer = tsl_arena_alloc(x->a, sizeof *f->slicer)))
        return -1;
    tessel__v1__slicer_figures__init(f->slicer);
    f->slicer->n_sliced = tsl_plan_json_u32(sl, "n_sliced");
    f->slicer->iter_time_s = tsl_plan_json_real(sl, "iter_time_s");
    return 0;
}

static int read_plan_memopt(const read_plan_ctx_t *x, Tessel__V1__PlanFigures *f)
{
    const json_t *mo = json_object_get(x->o, "memopt");
    if (!json_is_object(mo))
        return 0;
    if (!(f->memopt = tsl_arena_alloc(x->a, sizeof *f->memopt)))
        return -1;
    tessel__v1__memopt_figures__init(f->memopt);
    f->memopt->cpu_bytes_per_node = tsl_plan_json_u64(mo, "cpu_bytes_per_node");
    return (f->memopt->mode = tsl_arena_strdup(x->a, str(mo, "mode"))) ? 0 : -1;
}

static int read_plan_node_order(const read_plan_ctx_t *x, Tessel__V1__PlanFigures *f)
{
    const json_t *order = json_object_get(x->o, "node_order");
    f->n_node_order = json_array_size(order);
    if (!f->n_node_order)
        return 0;
    if (!(f->node_order = tsl_arena_alloc(x->a, f->n_node_order * sizeof *f->node_order)))
        return -1;
    for (size_t i = 0; i < f->n_node_order; i++) {
        json_int_t v = json_integer_value(json_array_get(order, i));
        f->node_order[i] = v > 0 && v <= UINT32_MAX ? (uint32_t)v : 0;
    }
    return 0;
}

/* plan: a <plan> object or null (no plan; why says so). */
static Tessel__V1__PlanFigures *read_plan(tsl_arena_t *a, const json_t *plan, const char *label,
                                          const char *why)
{
    Tessel__V1__PlanFigures *f = tsl_arena_alloc(a, sizeof *f);
    if (!f)
        return NULL;
    tessel__v1__plan_figures__init(f);
    f->valid = json_is_object(plan);
    read_plan_ctx_t x = {.a = a, .o = plan, .label = label};
    if (!(f->why = tsl_arena_strdup(a, why)))
        return NULL;
    if (!f->valid)
        return (f->label = tsl_arena_strdup(a, label)) ? f : NULL;
    int rc = 0;
#define READ_PLAN_(c, kind, proto, json, when) READ_PLAN_##kind(proto, json)
#define READ_PLAN_CUSTOM(proto, json)          rc |= read_plan_##proto(&x, f);
#define READ_PLAN_U32(proto, json)             f->proto = GET_U32(plan, json);
#define READ_PLAN_U64(proto, json)             f->proto = GET_U64(plan, json);
#define READ_PLAN_REAL(proto, json)            f->proto = GET_REAL(plan, json);
#define READ_PLAN_BOOL(proto, json)            f->proto = GET_BOOL(plan, json);
    TSL_PLAN_FIELDS(READ_PLAN_)
#undef READ_PLAN_
    return rc == 0 ? f : NULL;
}

/* ---- the document ---- */

typedef struct read_doc_ctx {
    tsl_arena_t *a;
    const json_t *doc;
} read_doc_ctx_t;

/* model.seq_len repeats tokens_per_sample: nothing of its own to read */
static int read_doc_seq_len(const read_doc_ctx_t *x, Tessel__V1__Plan *p)
{
    (void)x;
    (void)p;
    return 0;
}

/* The request echo; no field when the document has none. */
static int read_doc_request(const read_doc_ctx_t *x, Tessel__V1__Plan *p)
{
    const json_t *r = json_object_get(x->doc, "request");
    if (!json_is_object(r))
        return 0;
    Tessel__V1__PlanOptions *o = tsl_arena_alloc(x->a, sizeof *o);
    if (!o)
        return -1;
    tessel__v1__plan_options__init(o);
    tsl_request_t req;
    tsl_request_from_json(r, &req);
    tsl_request_to_proto(&req, &o->base);
    p->request = o;
    return 0;
}

static int read_doc_best(const read_doc_ctx_t *x, Tessel__V1__Plan *p)
{
    p->best = read_plan(x->a, json_object_get(x->doc, "plan"), "tessel", "");
    return p->best ? 0 : -1;
}

static int read_doc_alternatives(const read_doc_ctx_t *x, Tessel__V1__Plan *p)
{
    const json_t *alts = json_object_get(x->doc, "alternatives");
    p->n_alternatives = json_array_size(alts);
    p->alternatives = tsl_arena_alloc(x->a, (p->n_alternatives + 1) * sizeof *p->alternatives);
    if (!p->alternatives)
        return -1;
    for (size_t i = 0; i < p->n_alternatives; i++)
        if (!(p->alternatives[i] = read_plan(x->a, json_array_get(alts, i), "tessel", "")))
            return -1;
    return 0;
}

static int read_doc_baselines(const read_doc_ctx_t *x, Tessel__V1__Plan *p)
{
    const json_t *bases = json_object_get(x->doc, "baselines");
    p->n_baselines = json_array_size(bases);
    p->baselines = tsl_arena_alloc(x->a, (p->n_baselines + 1) * sizeof *p->baselines);
    if (!p->baselines)
        return -1;
    for (size_t i = 0; i < p->n_baselines; i++) {
        const json_t *b = json_array_get(bases, i);
        p->baselines[i] =
            read_plan(x->a, json_object_get(b, "plan"), str(b, "name"), str(b, "why"));
        if (!p->baselines[i])
            return -1;
    }
    return 0;
}

/* The "target" object: what the unrestricted search found (the rest follows
 * from the request and the best plan). */
static int read_doc_target(const read_doc_ctx_t *x, Tessel__V1__Plan *p)
{
    const json_t *target = json_object_get(x->doc, "target");
    p->unrestricted_samples_per_s = tsl_plan_json_real(target, "unrestricted_samples_per_s");
    p->unrestricted_iter_time_s = tsl_plan_json_real(target, "unrestricted_iter_time_s");
    return 0;
}

/* "figures" is FigureSources key for key (figures_json.h). */
static int read_doc_figures(const read_doc_ctx_t *x, Tessel__V1__Plan *p)
{
    const json_t *f = json_object_get(x->doc, "figures");
    if (!json_is_object(f))
        return 0;
    ProtobufCMessage *m = NULL;
    if (tsl_proto_from_json(f, &tessel__v1__figure_sources__descriptor, x->a, &m) != 0)
        return -1;
    p->figures = (Tessel__V1__FigureSources *)m;
    return 0;
}

/* "notes": what plan --local prints as notes on stderr, present only when there
 * are some (tesseld's stored documents; a local document has none). */
static int read_doc_notes(const read_doc_ctx_t *x, Tessel__V1__Plan *p)
{
    const json_t *notes = json_object_get(x->doc, "notes");
    size_t n = json_array_size(notes);
    if (n == 0)
        return 0;
    if (!(p->notes = tsl_arena_alloc(x->a, n * sizeof *p->notes)))
        return -1;
    for (size_t i = 0; i < n; i++)
        if (!(p->notes[i] = tsl_arena_strdup(x->a, text_of(json_array_get(notes, i)))))
            return -1;
    p->n_notes = n;
    return 0;
}

/* The object a head key sits in (plan_fields.h: NULL = the document). */
static const json_t *doc_obj(const json_t *doc, const char *obj)
{
    return obj ? json_object_get(doc, obj) : doc;
}

static int read_doc(tsl_arena_t *a, const json_t *doc, Tessel__V1__Plan *p)
{
    read_doc_ctx_t x = {.a = a, .doc = doc};
    int rc = 0;
#define READ_DOC_(c, kind, obj, json, when) READ_DOC_##kind(c, obj, json)
#define READ_DOC_CUSTOM(c, obj, json)       rc |= read_doc_##c(&x, p);
#define READ_DOC_U32(c, obj, json)          p->c = GET_U32(doc_obj(doc, obj), json);
#define READ_DOC_U64(c, obj, json)          p->c = GET_U64(doc_obj(doc, obj), json);
#define READ_DOC_I64(c, obj, json)          p->c = GET_I64(doc_obj(doc, obj), json);
#define READ_DOC_REAL(c, obj, json)         p->c = GET_REAL(doc_obj(doc, obj), json);
#define READ_DOC_BOOL(c, obj, json)         p->c = GET_BOOL(doc_obj(doc, obj), json);
#define READ_DOC_STR(c, obj, json)          rc |= (p->c = GET_STR(doc_obj(doc, obj), json)) ? 0 : -1;
    TSL_PLAN_DOC_FIELDS(READ_DOC_)
#undef READ_DOC_
    return rc | read_doc_notes(&x, p);
}

int tsl_plan_proto_from_doc(const json_t *doc, tsl_arena_t *a, Tessel__V1__Plan **out,
                            tsl_err_t *err)
{
    if (!json_is_object(doc) || !json_is_object(json_object_get(doc, "plan")))
        return tsl_err_set(err, "plan document: not a search result (no plan)");
    Tessel__V1__Plan *p = tsl_arena_alloc(a, sizeof *p);
    if (!p)
        return tsl_err_setc(err, TSL_E_NOMEM, "plan document: out of memory");
    tessel__v1__plan__init(p);
    if (read_doc(a, doc, p) != 0)
        return tsl_err_setc(err, TSL_E_NOMEM, "plan document: out of memory");
    *out = p;
    return 0;
}

int tsl_plan_proto_from_json(const char *result_json, tsl_arena_t *a, Tessel__V1__Plan **out,
                             tsl_err_t *err)
{
    json_error_t je;
    json_t *doc = json_loads(result_json, 0, &je);
    if (!doc)
        return tsl_err_set(err, "stored plan: not a search result (%s)", je.text);
    int rc = tsl_plan_proto_from_doc(doc, a, out, err);
    json_decref(doc);
    return rc;
}

/* ==== writing the document ====================================================== */

static const char *text(const char *s)
{
    return s ? s : "";
}

/* ---- a stage ---- */

static void write_stage_runs(json_t *o, const Tessel__V1__Stage *s)
{
    json_t *runs = json_array();
    for (size_t i = 0; runs && i < s->n_runs; i++) {
        const Tessel__V1__LayerRun *r = s->runs[i];
        json_t *run = json_pack("{s:I, s:I, s:s}", "first_layer", (json_int_t)r->first_layer,
                                "count", (json_int_t)r->count, "strategy", text(r->strategy));
        if (run && r->layers && r->layers[0])
            json_object_set_new(run, "layers", json_string(r->layers));
        json_array_append_new(runs, run);
    }
    json_object_set_new(o, "runs", runs);
}

/* "layers" only on sub-layer plans */
static void write_stage_layers(json_t *o, const Tessel__V1__Stage *s)
{
    if (s->layers && s->layers[0])
        json_object_set_new(o, "layers", json_string(s->layers));
}

/* "chunk1" only where the message has it (a V plan priced with its chunks' times) */
static void write_stage_chunk1(json_t *o, const Tessel__V1__Stage *s)
{
    if (s->chunk1)
        json_object_set_new(o, "chunk1",
                            json_pack("{s:f, s:f, s:f}", "fwd_s", s->chunk1->fwd_s, "bwd_s",
                                      s->chunk1->bwd_s, "wgrad_s", s->chunk1->wgrad_s));
}

static json_t *write_stage(const Tessel__V1__Stage *s)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
#define WRITE_STAGE_(c, kind, proto, json, when) WRITE_STAGE_##kind(proto, json, when)
#define WRITE_STAGE_CUSTOM(proto, json, when)    write_stage_##proto(o, s);
#define WRITE_STAGE_U32(proto, json, when)       TSL_PLAN_PUT(o, s, U32, proto, json, when)
#define WRITE_STAGE_U64(proto, json, when)       TSL_PLAN_PUT(o, s, U64, proto, json, when)
#define WRITE_STAGE_REAL(proto, json, when)      TSL_PLAN_PUT(o, s, REAL, proto, json, when)
    TSL_PLAN_STAGE_FIELDS(WRITE_STAGE_)
#undef WRITE_STAGE_
    return o;
}

/* ---- a plan's figures ---- */

static void write_plan_label(json_t *o, const Tessel__V1__PlanFigures *f)
{
    json_object_set_new(o, "label", json_string(text(f->label)));
}

static void write_plan_stages(json_t *o, const Tessel__V1__PlanFigures *f)
{
    json_t *stages = json_array();
    for (size_t i = 0; stages && i < f->n_stages; i++)
        json_array_append_new(stages, write_stage(f->stages[i]));
    json_object_set_new(o, "stages", stages);
}

static void write_plan_granularity(json_t *o, const Tessel__V1__PlanFigures *f)
{
    const char *g = f->granularity && f->granularity[0] ? f->granularity : "layer";
    json_object_set_new(o, "granularity", json_string(g));
}

static void write_plan_schedule(json_t *o, const Tessel__V1__PlanFigures *f)
{
    const char *sc = f->schedule && f->schedule[0] ? f->schedule : "1F1B";
    json_object_set_new(o, "schedule", json_string(sc));
}

static void write_plan_recompute_modules(json_t *o, const Tessel__V1__PlanFigures *f)
{
    if (f->recompute_modules)
        json_object_set_new(o, "recompute_modules", tsl_recompute_json(f->recompute_modules));
}

static void write_plan_slicer(json_t *o, const Tessel__V1__PlanFigures *f)
{
    if (f->slicer && f->slicer->n_sliced)
        json_object_set_new(o, "slicer",
                            json_pack("{s:I, s:f}", "n_sliced", (json_int_t)f->slicer->n_sliced,
                                      "iter_time_s", f->slicer->iter_time_s));
}

static void write_plan_memopt(json_t *o, const Tessel__V1__PlanFigures *f)
{
    if (f->memopt)
        json_object_set_new(o, "memopt",
                            json_pack("{s:s, s:I}", "mode", text(f->memopt->mode),
                                      "cpu_bytes_per_node",
                                      (json_int_t)f->memopt->cpu_bytes_per_node));
}

static void write_plan_node_order(json_t *o, const Tessel__V1__PlanFigures *f)
{
    if (!f->n_node_order)
        return;
    json_t *order = json_array();
    for (size_t k = 0; order && k < f->n_node_order; k++)
        json_array_append_new(order, json_integer((json_int_t)f->node_order[k]));
    json_object_set_new(o, "node_order", order);
}

json_t *tsl_proto_figures_to_json(const Tessel__V1__PlanFigures *f)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
#define WRITE_PLAN_(c, kind, proto, json, when) WRITE_PLAN_##kind(proto, json, when)
#define WRITE_PLAN_CUSTOM(proto, json, when)    write_plan_##proto(o, f);
#define WRITE_PLAN_U32(proto, json, when)       TSL_PLAN_PUT(o, f, U32, proto, json, when)
#define WRITE_PLAN_U64(proto, json, when)       TSL_PLAN_PUT(o, f, U64, proto, json, when)
#define WRITE_PLAN_REAL(proto, json, when)      TSL_PLAN_PUT(o, f, REAL, proto, json, when)
#define WRITE_PLAN_BOOL(proto, json, when)      TSL_PLAN_PUT(o, f, BOOL, proto, json, when)
    TSL_PLAN_FIELDS(WRITE_PLAN_)
#undef WRITE_PLAN_
    return o;
}

/* ---- the document ---- */

/* The planner's title for a baseline label ("dp" → "Pure DP (PyTorch DDP)"). */
static const char *baseline_title(const char *label)
{
    for (int b = 0; b < TSL_BASELINE_COUNT; b++)
        if (strcmp(tsl_baseline_name((tsl_baseline_t)b), label) == 0)
            return tsl_baseline_title((tsl_baseline_t)b);
    return label;
}

static json_t *plan_or_null(const Tessel__V1__PlanFigures *f)
{
    return f && f->valid ? tsl_proto_figures_to_json(f) : json_null();
}

static void write_doc_seq_len(json_t *o, const Tessel__V1__Plan *p)
{
    json_object_set_new(o, "seq_len", json_integer((json_int_t)p->tokens_per_sample));
}

/* The request echo in tsl_request_to_json()'s shape; an empty object when the
 * daemon sent none. */
static void write_doc_request(json_t *o, const Tessel__V1__Plan *p)
{
    tsl_request_t req;
    if (!p->request) {
        json_object_set_new(o, "request", json_object());
        return;
    }
    tsl_request_from_proto(&p->request->base, &req);
    json_object_set_new(o, "request", tsl_request_to_json(&req));
}

static void write_doc_best(json_t *o, const Tessel__V1__Plan *p)
{
    json_object_set_new(o, "plan", plan_or_null(p->best));
}

static void write_doc_alternatives(json_t *o, const Tessel__V1__Plan *p)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < p->n_alternatives; i++)
        json_array_append_new(a, tsl_proto_figures_to_json(p->alternatives[i]));
    json_object_set_new(o, "alternatives", a);
}

static void write_doc_baselines(json_t *o, const Tessel__V1__Plan *p)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < p->n_baselines; i++) {
        const Tessel__V1__PlanFigures *f = p->baselines[i];
        const char *label = text(f->label);
        json_array_append_new(a, json_pack("{s:s, s:s, s:o, s:s}", "name", label, "title",
                                           baseline_title(label), "plan", plan_or_null(f), "why",
                                           text(f->why)));
    }
    json_object_set_new(o, "baselines", a);
}

static void write_doc_target(json_t *o, const Tessel__V1__Plan *p)
{
    tsl_request_t req;
    tsl_request_init(&req);
    if (p->request)
        tsl_request_from_proto(&p->request->base, &req);
    json_t *target =
        tsl_target_cost_json(req.target, p->best ? p->best->samples_per_s : 0,
                             p->unrestricted_samples_per_s, p->unrestricted_iter_time_s);
    if (target != NULL)
        json_object_set_new(o, "target", target);
}

static void write_doc_figures(json_t *o, const Tessel__V1__Plan *p)
{
    if (p->figures)
        json_object_set_new(o, "figures", tsl_proto_to_json(&p->figures->base));
}

json_t *tsl_plan_proto_to_json(const Tessel__V1__Plan *p)
{
    json_t *doc = json_object();
    if (!doc)
        return NULL;
#define WRITE_DOC_(c, kind, obj, json, when) WRITE_DOC_##kind(c, obj, json, when)
#define WRITE_DOC_CUSTOM(c, obj, json, when) write_doc_##c(tsl_plan_doc_obj(doc, obj), p);
#define WRITE_DOC_U32(c, obj, json, when)                                                          \
    TSL_PLAN_PUT(tsl_plan_doc_obj(doc, obj), p, U32, c, json, when)
#define WRITE_DOC_U64(c, obj, json, when)                                                          \
    TSL_PLAN_PUT(tsl_plan_doc_obj(doc, obj), p, U64, c, json, when)
#define WRITE_DOC_I64(c, obj, json, when)                                                          \
    TSL_PLAN_PUT(tsl_plan_doc_obj(doc, obj), p, I64, c, json, when)
#define WRITE_DOC_REAL(c, obj, json, when)                                                         \
    TSL_PLAN_PUT(tsl_plan_doc_obj(doc, obj), p, REAL, c, json, when)
#define WRITE_DOC_BOOL(c, obj, json, when)                                                         \
    TSL_PLAN_PUT(tsl_plan_doc_obj(doc, obj), p, BOOL, c, json, when)
#define WRITE_DOC_STR(c, obj, json, when)                                                          \
    TSL_PLAN_PUT(tsl_plan_doc_obj(doc, obj), p, STR, c, json, when)
    TSL_PLAN_DOC_FIELDS(WRITE_DOC_)
#undef WRITE_DOC_
    if (p->n_notes > 0) { /* as tesseld stored them (read_doc_notes) */
        json_t *notes = json_array();
        for (size_t i = 0; i < p->n_notes; i++)
            json_array_append_new(notes, json_string(text(p->notes[i])));
        json_object_set_new(doc, "notes", notes);
    }
    return doc;
}

json_t *tsl_plan_doc_canonical(const json_t *doc, tsl_err_t *err)
{
    tsl_arena_t a = {0};
    Tessel__V1__Plan *p = NULL;
    json_t *out = NULL;
    if (tsl_plan_proto_from_doc(doc, &a, &p, err) == 0 && !(out = tsl_plan_proto_to_json(p)))
        tsl_err_setc(err, TSL_E_NOMEM, "plan document: out of memory");
    tsl_arena_free(&a);
    return out;
}

json_t *tsl_proto_summary_to_json(const Tessel__V1__PlanSummary *s)
{
    json_t *o = json_pack("{s:s, s:s, s:I, s:I, s:f, s:f, s:b, s:I}", "fingerprint",
                          text(s->fingerprint), "model_name", text(s->model_name), "n_devices",
                          (json_int_t)s->n_devices, "global_batch", (json_int_t)s->global_batch,
                          "iter_time_s", s->iter_time_s, "samples_per_s", s->samples_per_s, "stale",
                          (int)s->stale, "created_unix", (json_int_t)s->created_unix);
    if (o)
        json_object_set_new(o, "peak_bytes", json_integer((json_int_t)s->peak_bytes));
    return o;
}
