#include "plan_json.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "json_num.h"
#include "memopt.h"
#include "module_prec.h"
#include "plan_fields.h"
#include "sublayer.h"

/* jansson stores integers as json_int_t (signed 64-bit): byte counts fit. */
static json_t *u64(uint64_t v)
{
    return json_integer((json_int_t)v);
}

struct runs_ctx {
    const tsl_plan_t *plan;
    const tsl_sublayer_model_t *sm; /* labels for sub-layer plans, else NULL */
    json_t *stage_runs[TSL_PLAN_MAX_STAGES];
};

/* "[7.5, 13)": a half-open range of source-layer boundaries (sub-layer plans). */
static json_t *span_label(const tsl_sublayer_model_t *sm, uint32_t first, uint32_t count)
{
    char a[24], b[24], text[64];
    tsl_sublayer_boundary_str(sm, first, a, sizeof(a));
    tsl_sublayer_boundary_str(sm, first + count, b, sizeof(b));
    snprintf(text, sizeof(text), "[%s, %s)", a, b);
    return json_string(text);
}

static void add_run(void *ud, uint32_t stage, uint32_t first, uint32_t count,
                    const tsl_strategy_t *s)
{
    struct runs_ctx *ctx = ud;
    char text[128];
    size_t n = tsl_strategy_format(s, text, sizeof(text));
    if (ctx->plan->layer_switches[first] && n + 2 < sizeof(text)) {
        text[n] = '+';
        tsl_memopt_switch_str(ctx->plan->layer_switches[first], text + n + 1,
                              (uint32_t)(sizeof(text) - n - 1));
    }
    json_t *run = json_pack("{s:I, s:I, s:s}", "first_layer", (json_int_t)first, "count",
                            (json_int_t)count, "strategy", text);
    if (ctx->sm)
        json_object_set_new(run, "layers", span_label(ctx->sm, first, count));
    json_array_append_new(ctx->stage_runs[stage], run);
}

uint64_t tsl_plan_json_u64(const json_t *o, const char *key)
{
    return tsl_json_u64(json_object_get(o, key));
}

uint32_t tsl_plan_json_u32(const json_t *o, const char *key)
{
    uint64_t v = tsl_plan_json_u64(o, key);
    return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

int64_t tsl_plan_json_i64(const json_t *o, const char *key)
{
    return tsl_json_i64(json_object_get(o, key));
}

double tsl_plan_json_real(const json_t *o, const char *key)
{
    return json_number_value(json_object_get(o, key));
}

/* ---- a stage ------------------------------------------------------------------ */

typedef struct stage_ctx {
    const tsl_plan_t *plan;
    uint32_t s;
    json_t *runs;
    const tsl_sublayer_model_t *sm;
} stage_ctx_t;

static void stage_custom_runs(json_t *o, const stage_ctx_t *x)
{
    json_object_set_new(o, "runs", x->runs);
}

/* "layers" only on sub-layer plans: the stage's span in source layers. */
static void stage_custom_layers(json_t *o, const stage_ctx_t *x)
{
    const tsl_plan_stage_t *st = &x->plan->stages[x->s];
    if (x->sm)
        json_object_set_new(o, "layers", span_label(x->sm, st->first_layer, st->n_layers));
}

/* "chunk1" only where the pricing gave a V's chunks their own times (v_chunks):
 * the second chunk's, which a stored plan's simulation and trace take as priced
 * (tsl_plan_sim_input); absent, they split the stage in halves. */
static void stage_custom_chunk1(json_t *o, const stage_ctx_t *x)
{
    const tsl_plan_stage_t *st = &x->plan->stages[x->s];
    if (x->plan->v_chunks)
        json_object_set_new(o, "chunk1",
                            json_pack("{s:f, s:f, s:f}", "fwd_s", st->chunk1_fwd_s, "bwd_s",
                                      st->chunk1_bwd_s, "wgrad_s", st->chunk1_wgrad_s));
}

static json_t *stage_to_json(const stage_ctx_t *x)
{
    const tsl_plan_stage_t *st = &x->plan->stages[x->s];
    json_t *o = json_object();
#define STAGE_KEY_(c, kind, proto, json, when) STAGE_##kind(c, json, when)
#define STAGE_CUSTOM(c, json, when)            stage_custom_##c(o, x);
#define STAGE_U32(c, json, when)               TSL_PLAN_PUT(o, st, U32, c, json, when)
#define STAGE_U64(c, json, when)               TSL_PLAN_PUT(o, st, U64, c, json, when)
#define STAGE_REAL(c, json, when)              TSL_PLAN_PUT(o, st, REAL, c, json, when)
    TSL_PLAN_STAGE_FIELDS(STAGE_KEY_)
#undef STAGE_KEY_
    return o;
}

/* ---- a plan -------------------------------------------------------------------- */

typedef struct plan_ctx {
    const tsl_plan_t *p;
    const tsl_sublayer_model_t *sm; /* sub-layer labels, or NULL */
} plan_ctx_t;

static void plan_custom_label(json_t *o, const plan_ctx_t *x)
{
    json_object_set_new(o, "label", json_string(x->p->label));
}

static void plan_custom_stages(json_t *o, const plan_ctx_t *x)
{
    struct runs_ctx ctx = {.plan = x->p, .sm = x->sm};
    for (uint32_t s = 0; s < x->p->pp; s++)
        ctx.stage_runs[s] = json_array();
    tsl_plan_foreach_run(x->p, add_run, &ctx);
    json_t *stages = json_array();
    for (uint32_t s = 0; s < x->p->pp; s++) {
        stage_ctx_t sx = {.plan = x->p, .s = s, .runs = ctx.stage_runs[s], .sm = x->sm};
        json_array_append_new(stages, stage_to_json(&sx));
    }
    json_object_set_new(o, "stages", stages);
}

static void plan_custom_granularity(json_t *o, const plan_ctx_t *x)
{
    json_object_set_new(o, "granularity", json_string(x->p->sublayer ? "sublayer" : "layer"));
}

static void plan_custom_schedule(json_t *o, const plan_ctx_t *x)
{
    json_object_set_new(o, "schedule",
                        json_string(tsl_pipesim_sched_name(x->p->schedule, x->p->interleave)));
}

/* Only when the plan recomputes modules: their names (recompute.h). */
static void plan_custom_recompute_modules(json_t *o, const plan_ctx_t *x)
{
    if (x->p->recompute_modules)
        json_object_set_new(o, "recompute_modules", tsl_recompute_json(x->p->recompute_modules));
}

json_t *tsl_recompute_json(uint32_t mask)
{
    json_t *a = json_array();
    for (uint32_t i = 0; i < TSL_RECOMPUTE_COUNT; i++)
        if (mask & (1u << i))
            json_array_append_new(a, json_string(tsl_recompute_module_name(i)));
    if (mask & ~TSL_RECOMPUTE_ALL) /* bits this build has no name for stay a number */
        json_array_append_new(a, json_integer(mask & ~TSL_RECOMPUTE_ALL));
    return a;
}

/* One bitmask, whole or an entry: past 32 bits (or negative) unknown, not cut to
 * its low word (2^32 + 8 read as mlp). */
static uint32_t module_mask_of(const json_t *v)
{
    json_int_t x = json_integer_value(v);
    return x >= 0 && x <= (json_int_t)UINT32_MAX ? (uint32_t)x : TSL_RECOMPUTE_UNKNOWN;
}

uint32_t tsl_recompute_of_json(const json_t *v)
{
    if (json_is_integer(v))
        return module_mask_of(v);
    uint32_t mask = 0, bit;
    size_t i;
    const json_t *e;
    json_array_foreach(v, i, e)
    {
        const char *name = json_string_value(e);
        if (json_is_integer(e))
            mask |= module_mask_of(e);
        else if (name && tsl_recompute_modules_parse(name, &bit, NULL, NULL) == 0 && bit)
            mask |= bit;
        else /* a null, a real or "" names no module this build prices */
            mask |= TSL_RECOMPUTE_UNKNOWN;
    }
    return mask;
}

static void plan_custom_slicer(json_t *o, const plan_ctx_t *x)
{
    if (x->p->n_sliced)
        json_object_set_new(o, "slicer",
                            json_pack("{s:I, s:f}", "n_sliced", (json_int_t)x->p->n_sliced,
                                      "iter_time_s", x->p->sliced_iter_time_s));
}

static void plan_custom_memopt(json_t *o, const plan_ctx_t *x)
{
    const tsl_plan_t *p = x->p;
    if (p->memopt)
        json_object_set_new(o, "memopt",
                            json_pack("{s:s, s:I}", "mode",
                                      tsl_memopt_mode_name((tsl_memopt_mode_t)(p->memopt - 1)),
                                      "cpu_bytes_per_node", (json_int_t)p->cpu_bytes_per_node));
}

static void plan_custom_node_order(json_t *o, const plan_ctx_t *x)
{
    if (!x->p->n_nodes)
        return;
    json_t *order = json_array();
    for (uint32_t k = 0; k < x->p->n_nodes; k++)
        json_array_append_new(order, json_integer(x->p->node_order[k]));
    json_object_set_new(o, "node_order", order);
}

static json_t *plan_to_json(const tsl_plan_t *p, const tsl_sublayer_model_t *sm)
{
    if (!p->valid)
        return json_null();
    plan_ctx_t x = {.p = p, .sm = p->sublayer ? sm : NULL};
    json_t *o = json_object();
#define PLAN_KEY_(c, kind, proto, json, when) PLAN_##kind(c, json, when)
#define PLAN_CUSTOM(c, json, when)            plan_custom_##c(o, &x);
#define PLAN_U32(c, json, when)               TSL_PLAN_PUT(o, p, U32, c, json, when)
#define PLAN_U64(c, json, when)               TSL_PLAN_PUT(o, p, U64, c, json, when)
#define PLAN_REAL(c, json, when)              TSL_PLAN_PUT(o, p, REAL, c, json, when)
#define PLAN_BOOL(c, json, when)              TSL_PLAN_PUT(o, p, BOOL, c, json, when)
    TSL_PLAN_FIELDS(PLAN_KEY_)
#undef PLAN_KEY_
    return o;
}

json_t *tsl_plan_to_json(const tsl_plan_t *p)
{
    return plan_to_json(p, NULL);
}

json_t *tsl_plan_to_json_of(const tsl_plan_t *p, const tsl_model_t *m)
{
    tsl_sublayer_model_t sm;
    if (!p->valid || !p->sublayer || m == NULL || tsl_sublayer_split(m, &sm, NULL) != 0)
        return plan_to_json(p, NULL);
    json_t *o = plan_to_json(p, &sm);
    tsl_sublayer_free(&sm);
    return o;
}

/* A request field as JSON, by its kind (request_fields.h). */
#define JSON_OF_BOOL(v)    json_boolean(v)
#define JSON_OF_UINT(v)    json_integer((json_int_t)(v))
#define JSON_OF_BYTES(v)   u64(v)
#define JSON_OF_REAL(v)    json_real(v)
#define JSON_OF_MODULES(v) tsl_recompute_json(v)
/* an implementation's name; 0 (the target's) and a value none has stay numbers */
#define JSON_OF_LOSS(v)                                                                            \
    ((v) && (v) < TSL_LOSS_IMPL_COUNT ? json_string(tsl_loss_impl_name(v))                         \
                                      : json_integer((json_int_t)(v)))
/* the list as tesselctl plan --module-precision takes it; 0 (none) and nibbles that are
 * no precision stay a number, so that they read back (and are refused as such) */
#define JSON_OF_PREC(v) json_prec(v)
/* a stack's name; a value no stack has stays a number, so that it reads back */
#define JSON_OF_TARGET(v)                                                                          \
    ((v) < TSL_TARGET_COUNT ? json_string(tsl_target_name(v)) : json_integer((json_int_t)(v)))

static json_t *json_prec(uint32_t prec)
{
    char list[256];
    tsl_err_t err = {0};
    if (!prec || tsl_module_prec_check(prec, &err) != 0)
        return json_integer((json_int_t)prec);
    tsl_module_prec_format(prec, list, sizeof list);
    return json_string(list);
}

json_t *tsl_request_to_json(const tsl_request_t *r)
{
    json_t *o = json_object();
#define SET_FIELD_(name, kind, flag, metavar, min, max, help, proto, json)                         \
    json_object_set_new(o, json, JSON_OF_##kind(r->name));
    TSL_REQUEST_FIELDS(SET_FIELD_)
#undef SET_FIELD_
    return o;
}

/* A request field from JSON, by its kind; absent or not a number reads 0. */
static uint64_t json_u64(const json_t *v, uint64_t max)
{
    uint64_t x = tsl_json_u64(v);
    return x > max ? max : x;
}
#define FROM_JSON_BOOL(v)    json_is_true(v)
#define FROM_JSON_UINT(v)    (uint32_t) json_u64(v, UINT32_MAX)
#define FROM_JSON_BYTES(v)   json_u64(v, UINT64_MAX)
#define FROM_JSON_TARGET(v)  json_target(v)
#define FROM_JSON_REAL(v)    json_number_value(v)
#define FROM_JSON_MODULES(v) tsl_recompute_of_json(v)
#define FROM_JSON_LOSS(v)    json_loss_impl(v)
#define FROM_JSON_PREC(v)    json_module_prec(v)

/* module_precision: the list (tsl_module_prec_parse) or tessel.v1's nibbles; a list
 * that does not parse reads 0 (tsl_request_json_check refuses it first) */
static uint32_t json_module_prec(const json_t *v)
{
    uint32_t prec = 0;
    tsl_err_t err = {0};
    if (json_is_string(v))
        return tsl_module_prec_parse(json_string_value(v), &prec, &err) == 0 ? prec : 0;
    return (uint32_t)json_u64(v, UINT32_MAX);
}

static uint32_t json_loss_impl(const json_t *v)
{
    int i = json_is_string(v) ? tsl_loss_impl_parse(json_string_value(v)) : -1;
    return i >= 0 ? (uint32_t)i : (uint32_t)json_u64(v, UINT32_MAX);
}

static uint32_t json_target(const json_t *v)
{
    uint32_t t = TSL_TARGET_ANY;
    if (json_is_string(v) && tsl_target_parse(json_string_value(v), &t, NULL) == 0)
        return t;
    return (uint32_t)json_u64(v, UINT32_MAX);
}

void tsl_request_from_json(const json_t *o, tsl_request_t *r)
{
    tsl_request_init(r);
#define GET_FIELD_(name, kind, flag, metavar, min, max, help, proto, json)                         \
    r->name = FROM_JSON_##kind(json_object_get(o, json));
    TSL_REQUEST_FIELDS(GET_FIELD_)
#undef GET_FIELD_
}

static json_t *baselines_to_json(const tsl_search_result_t *res, bool skipped)
{
    json_t *a = json_array();
    for (int b = 0; b < TSL_BASELINE_COUNT && !skipped; b++) {
        const tsl_plan_t *p = &res->baseline[b];
        json_t *o = json_object();
        json_object_set_new(o, "name", json_string(tsl_baseline_name((tsl_baseline_t)b)));
        json_object_set_new(o, "title", json_string(tsl_baseline_title((tsl_baseline_t)b)));
        json_object_set_new(o, "plan", tsl_plan_to_json(p));
        json_object_set_new(o, "why", json_string(p->valid ? "" : res->baseline_why[b]));
        json_array_append_new(a, o);
    }
    return a;
}

json_t *tsl_target_cost_json(uint32_t target, double samples_per_s, double free_samples_per_s,
                             double free_iter_time_s)
{
    if (target == TSL_TARGET_ANY)
        return NULL;
    json_t *o =
        json_pack("{s:s, s:f}", "name", tsl_target_name(target), "samples_per_s", samples_per_s);
    if (o != NULL && free_samples_per_s > 0) {
        json_object_set_new(o, "unrestricted_samples_per_s", json_real(free_samples_per_s));
        json_object_set_new(o, "unrestricted_iter_time_s", json_real(free_iter_time_s));
        json_object_set_new(o, "vs_unrestricted", json_real(samples_per_s / free_samples_per_s));
    }
    return o;
}

/* ---- the document ---------------------------------------------------------------- */

typedef struct doc_ctx {
    const tsl_plan_head_t *h;
    const tsl_search_result_t *res;
    const tsl_request_t *r;
    const tsl_sublayer_model_t *sm;
    const json_t *figures;
} doc_ctx_t;

json_t *tsl_plan_doc_obj(json_t *doc, const char *obj)
{
    if (obj == NULL)
        return doc;
    json_t *o = json_object_get(doc, obj);
    if (o == NULL)
        json_object_set_new(doc, obj, o = json_object());
    return o;
}

/* the sequence every figure assumes (model.seq_len repeats tokens_per_sample) */
static void doc_custom_seq_len(json_t *o, const doc_ctx_t *x)
{
    json_object_set_new(o, "seq_len", json_integer(x->h->tokens_per_sample));
}

static void doc_custom_request(json_t *o, const doc_ctx_t *x)
{
    json_object_set_new(o, "request", tsl_request_to_json(x->r));
}

static void doc_custom_best(json_t *o, const doc_ctx_t *x)
{
    json_object_set_new(o, "plan", plan_to_json(&x->res->best, x->sm));
}

static void doc_custom_alternatives(json_t *o, const doc_ctx_t *x)
{
    json_t *alts = json_array();
    for (uint32_t i = 1; i < x->res->n_top; i++)
        json_array_append_new(alts, plan_to_json(&x->res->top[i], x->sm));
    json_object_set_new(o, "alternatives", alts);
}

static void doc_custom_baselines(json_t *o, const doc_ctx_t *x)
{
    json_object_set_new(o, "baselines", baselines_to_json(x->res, x->r->no_baselines));
}

static void doc_custom_target(json_t *o, const doc_ctx_t *x)
{
    const tsl_search_result_t *res = x->res;
    json_t *target =
        tsl_target_cost_json(x->r->target, res->best.samples_per_s,
                             res->unrestricted_valid ? res->unrestricted_samples_per_s : 0,
                             res->unrestricted_iter_time_s);
    if (target != NULL)
        json_object_set_new(o, "target", target);
}

static void doc_custom_figures(json_t *o, const doc_ctx_t *x)
{
    if (x->figures != NULL)
        json_object_set_new(o, "figures", json_deep_copy(x->figures));
}

void tsl_plan_head_fill(tsl_plan_head_t *h, const tsl_search_result_t *res, const tsl_model_t *m,
                        const tsl_cluster_t *c, const char *fp)
{
    memset(h, 0, sizeof *h);
    snprintf(h->fingerprint, sizeof h->fingerprint, "%s", fp);
    h->model_name = m->name;
    h->model_layers = m->n_layers;
    h->model_params = tsl_model_params(m);
    h->tokens_per_sample = m->tokens_per_sample;
    h->max_context = m->max_context;
    h->train_context = m->train_context;
    h->model_mamba_layers = tsl_model_mamba_layers(m);
    tsl_cluster_describe(c, h->cluster_description, sizeof h->cluster_description);
    h->n_devices = c->n_devices;
    h->cluster_nodes = c->n_nodes;
    h->dp_runs = res->stats.dp_runs;
    h->dp_states = res->stats.dp_states;
    h->configs = res->stats.configs;
    h->batches_tried = res->stats.batches_tried;
    snprintf(h->cp_why, sizeof h->cp_why, "%s", res->cp_why);
    snprintf(h->ep_why, sizeof h->ep_why, "%s", res->ep_why);
}

json_t *tsl_search_result_to_json(const tsl_search_result_t *res, const tsl_model_t *m,
                                  const tsl_request_t *r, const tsl_plan_head_t *h,
                                  const json_t *figures)
{
    tsl_sublayer_model_t sm;
    doc_ctx_t x = {.h = h, .res = res, .r = r, .figures = figures};
    if (res->best.sublayer && tsl_sublayer_split(m, &sm, NULL) == 0)
        x.sm = &sm;
    json_t *doc = json_object();
#define DOC_KEY_(c, kind, obj, json, when) DOC_##kind(c, obj, json, when)
#define DOC_CUSTOM(c, obj, json, when)     doc_custom_##c(tsl_plan_doc_obj(doc, obj), &x);
#define DOC_U32(c, obj, json, when)        TSL_PLAN_PUT(tsl_plan_doc_obj(doc, obj), h, U32, c, json, when)
#define DOC_U64(c, obj, json, when)        TSL_PLAN_PUT(tsl_plan_doc_obj(doc, obj), h, U64, c, json, when)
#define DOC_I64(c, obj, json, when)        TSL_PLAN_PUT(tsl_plan_doc_obj(doc, obj), h, I64, c, json, when)
#define DOC_REAL(c, obj, json, when)                                                               \
    TSL_PLAN_PUT(tsl_plan_doc_obj(doc, obj), h, REAL, c, json, when)
#define DOC_BOOL(c, obj, json, when)                                                               \
    TSL_PLAN_PUT(tsl_plan_doc_obj(doc, obj), h, BOOL, c, json, when)
#define DOC_STR(c, obj, json, when) TSL_PLAN_PUT(tsl_plan_doc_obj(doc, obj), h, STR, c, json, when)
    TSL_PLAN_DOC_FIELDS(DOC_KEY_)
#undef DOC_KEY_
    if (x.sm)
        tsl_sublayer_free(&sm);
    return doc;
}
