#include "plan_json.h"

#include <stdint.h>
#include <stdio.h>

#include "memopt.h"
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

static json_t *stage_to_json(const tsl_plan_stage_t *st, json_t *runs)
{
    json_t *o = json_object();
    json_object_set_new(o, "first_layer", json_integer(st->first_layer));
    json_object_set_new(o, "n_layers", json_integer(st->n_layers));
    json_object_set_new(o, "first_device", json_integer(st->first_device));
    json_object_set_new(o, "n_devices", json_integer(st->n_devices));
    json_object_set_new(o, "inflight", json_integer(st->inflight));
    json_object_set_new(o, "fwd_s", json_real(st->fwd_s));
    json_object_set_new(o, "time_s", json_real(st->time_s));
    json_object_set_new(o, "time_nosync_s", json_real(st->time_nosync_s));
    json_object_set_new(o, "p2p_s", json_real(st->p2p_s));
    json_object_set_new(o, "opt_s", json_real(st->opt_s));
    json_object_set_new(o, "ms_bytes", u64(st->ms_bytes));
    json_object_set_new(o, "act_bytes", u64(st->act_bytes));
    json_object_set_new(o, "peak_bytes", u64(st->peak_bytes));
    json_object_set_new(o, "runs", runs);
    return o;
}

static json_t *plan_to_json(const tsl_plan_t *p, const tsl_sublayer_model_t *sm)
{
    if (!p->valid)
        return json_null();
    if (!p->sublayer)
        sm = NULL;
    json_t *o = json_object();
    json_object_set_new(o, "label", json_string(p->label));
    json_object_set_new(o, "pp", json_integer(p->pp));
    json_object_set_new(o, "global_batch", json_integer(p->global_batch));
    json_object_set_new(o, "micro_batch", json_integer(p->micro_batch));
    json_object_set_new(o, "n_micro", json_integer(p->n_micro));
    json_object_set_new(o, "iter_time_s", json_real(p->iter_time_s));
    json_object_set_new(o, "samples_per_s", json_real(p->samples_per_s));
    json_object_set_new(o, "tokens_per_s", json_real(p->tokens_per_s));
    json_object_set_new(o, "peak_bytes", u64(p->peak_bytes));
    json_object_set_new(o, "budget_bytes", u64(p->budget_bytes));
    json_object_set_new(o, "alpha_t", json_real(p->alpha_t));
    json_object_set_new(o, "alpha_m", json_real(p->alpha_m));
    struct runs_ctx ctx = {.plan = p, .sm = sm};
    for (uint32_t s = 0; s < p->pp; s++)
        ctx.stage_runs[s] = json_array();
    tsl_plan_foreach_run(p, add_run, &ctx);
    json_t *stages = json_array();
    for (uint32_t s = 0; s < p->pp; s++) {
        json_t *st = stage_to_json(&p->stages[s], ctx.stage_runs[s]);
        if (sm)
            json_object_set_new(st, "layers",
                                span_label(sm, p->stages[s].first_layer, p->stages[s].n_layers));
        json_array_append_new(stages, st);
    }
    json_object_set_new(o, "stages", stages);
    json_object_set_new(o, "granularity", json_string(p->sublayer ? "sublayer" : "layer"));
    if (p->opt_tail_s > 0)
        json_object_set_new(o, "opt_tail_s", json_real(p->opt_tail_s));
    if (p->tie_s > 0)
        json_object_set_new(o, "tie_s", json_real(p->tie_s));
    if (p->sim_iter_time_s > 0) {
        json_object_set_new(o, "sim_iter_time_s", json_real(p->sim_iter_time_s));
        json_object_set_new(o, "master_stage", json_integer(p->master_stage));
    }
    if (p->interleave > 1)
        json_object_set_new(o, "interleave", json_integer(p->interleave));
    if (p->n_sliced)
        json_object_set_new(o, "slicer",
                            json_pack("{s:I, s:f}", "n_sliced", (json_int_t)p->n_sliced,
                                      "iter_time_s", p->sliced_iter_time_s));
    if (p->memopt)
        json_object_set_new(o, "memopt",
                            json_pack("{s:s, s:I}", "mode",
                                      tsl_memopt_mode_name((tsl_memopt_mode_t)(p->memopt - 1)),
                                      "cpu_bytes_per_node", (json_int_t)p->cpu_bytes_per_node));
    if (p->n_nodes) {
        json_t *order = json_array();
        for (uint32_t k = 0; k < p->n_nodes; k++)
            json_array_append_new(order, json_integer(p->node_order[k]));
        json_object_set_new(o, "node_order", order);
    }
    return o;
}

json_t *tsl_plan_to_json(const tsl_plan_t *p)
{
    return plan_to_json(p, NULL);
}

/* A request field as JSON, by its kind (request_fields.h). */
#define JSON_OF_BOOL(v)  json_boolean(v)
#define JSON_OF_UINT(v)  json_integer((json_int_t)(v))
#define JSON_OF_BYTES(v) u64(v)
/* a stack's name; a value no stack has stays a number, so that it reads back */
#define JSON_OF_TARGET(v)                                                                          \
    ((v) < TSL_TARGET_COUNT ? json_string(tsl_target_name(v)) : json_integer((json_int_t)(v)))

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
    double d = json_is_integer(v) ? (double)json_integer_value(v) : json_number_value(v);
    return d <= 0 ? 0 : d >= (double)max ? max : (uint64_t)d;
}
#define FROM_JSON_BOOL(v)   json_is_true(v)
#define FROM_JSON_UINT(v)   (uint32_t) json_u64(v, UINT32_MAX)
#define FROM_JSON_BYTES(v)  json_u64(v, UINT64_MAX)
#define FROM_JSON_TARGET(v) json_target(v)

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

json_t *tsl_search_result_to_json(const tsl_search_result_t *res, const tsl_model_t *m,
                                  const tsl_cluster_t *c, const tsl_request_t *r, const char *fp,
                                  double search_time_s)
{
    char desc[256];
    tsl_sublayer_model_t sm, *smp = NULL;
    if (res->best.sublayer && tsl_sublayer_split(m, &sm, NULL) == 0)
        smp = &sm;
    tsl_cluster_describe(c, desc, sizeof(desc));
    json_t *alts = json_array();
    for (uint32_t i = 1; i < res->n_top; i++)
        json_array_append_new(alts, plan_to_json(&res->top[i], smp));
    json_t *doc = json_object();
    json_object_set_new(doc, "fingerprint", json_string(fp));
    json_object_set_new(doc, "model",
                        json_pack("{s:s, s:I, s:I, s:I}", "name", m->name, "layers",
                                  (json_int_t)m->n_layers, "params",
                                  (json_int_t)tsl_model_params(m), "tokens_per_sample",
                                  (json_int_t)m->tokens_per_sample));
    /* the sequence every figure assumes, and the window it was cut from (issue 10) */
    json_t *jm = json_object_get(doc, "model");
    json_object_set_new(jm, "seq_len", json_integer(m->tokens_per_sample));
    if (m->max_context)
        json_object_set_new(jm, "max_context", json_integer(m->max_context));
    json_object_set_new(doc, "cluster",
                        json_pack("{s:s, s:I, s:I}", "description", desc, "devices",
                                  (json_int_t)c->n_devices, "nodes", (json_int_t)c->n_nodes));
    json_object_set_new(doc, "request", tsl_request_to_json(r));
    json_object_set_new(doc, "plan", plan_to_json(&res->best, smp));
    json_object_set_new(doc, "alternatives", alts);
    json_object_set_new(doc, "baselines", baselines_to_json(res, r->no_baselines));
    json_object_set_new(doc, "stats",
                        json_pack("{s:I, s:I, s:I, s:I}", "dp_runs", (json_int_t)res->stats.dp_runs,
                                  "dp_states", (json_int_t)res->stats.dp_states, "configs",
                                  (json_int_t)res->stats.configs, "batches_tried",
                                  (json_int_t)res->stats.batches_tried));
    json_object_set_new(doc, "search_time_s", json_real(search_time_s));
    json_t *target =
        tsl_target_cost_json(r->target, res->best.samples_per_s,
                             res->unrestricted_valid ? res->unrestricted_samples_per_s : 0,
                             res->unrestricted_iter_time_s);
    if (target != NULL)
        json_object_set_new(doc, "target", target);
    if (smp)
        tsl_sublayer_free(smp);
    return doc;
}
