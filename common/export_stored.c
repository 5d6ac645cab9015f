/*
 * export_stored.c — from a plan document (plan_json.h) back to a tsl_plan_t, and
 * the export of a plan the daemon stored (export.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster_json.h"
#include "export.h"
#include "hf_config.h"
#include "memopt.h"
#include "plan_fields.h"
#include "plan_json.h"
#include "search.h"
#include "target.h"
#include "trace_json.h"

static uint32_t u32_of(const json_t *o, const char *key)
{
    json_int_t v = json_integer_value(json_object_get(o, key));
    return v > 0 && v <= UINT32_MAX ? (uint32_t)v : 0;
}

/* A run's strategy; the memory-switch suffix of a memopt plan ("+remat...") is
 * left out (exports refuse those plans on p->memopt). */
static int run_strategy(const json_t *run, uint32_t s, size_t i, tsl_strategy_t *sg, tsl_err_t *err)
{
    const char *text = json_string_value(json_object_get(run, "strategy"));
    if (text == NULL)
        return tsl_err_set(err,
                           "plan: stages[%u].runs[%zu].strategy: missing or not a string; a run "
                           "names its layers' strategy (e.g. \"tp2-dp4+zero1\")",
                           s, i);
    if (tsl_strategy_parse(text, sg, err) != 0)
        return tsl_err_prefix(err, "plan: stages[%u].runs[%zu].strategy", s, i);
    return 0;
}

/* ---- a <plan> back to tsl_plan_t: its scalars by plan_fields.h's lists ---- */

#define READ_SCALAR_U32(dst, o, json)  (dst) = tsl_plan_json_u32(o, json);
#define READ_SCALAR_U64(dst, o, json)  (dst) = tsl_plan_json_u64(o, json);
#define READ_SCALAR_REAL(dst, o, json) (dst) = tsl_plan_json_real(o, json);
#define READ_SCALAR_BOOL(dst, o, json) (dst) = json_is_true(json_object_get(o, json));

static void read_stage_scalars(const json_t *st, tsl_plan_stage_t *ps)
{
#define STAGE_(c, kind, proto, json, when) STAGE_##kind(c, json)
#define STAGE_CUSTOM(c, json)              /* runs: read_stage; layers: a label only */
#define STAGE_U32(c, json)                 READ_SCALAR_U32(ps->c, st, json)
#define STAGE_U64(c, json)                 READ_SCALAR_U64(ps->c, st, json)
#define STAGE_REAL(c, json)                READ_SCALAR_REAL(ps->c, st, json)
    TSL_PLAN_STAGE_FIELDS(STAGE_)
#undef STAGE_
}

/* A V's second chunk's own times (plan_json.c stage_custom_chunk1), where the
 * document has them (tsl_plan_json_check checked their form). */
static void read_stage_chunk1(const json_t *st, tsl_plan_stage_t *ps)
{
    const json_t *c = json_object_get(st, "chunk1");
    ps->chunk1_fwd_s = tsl_plan_json_real(c, "fwd_s");
    ps->chunk1_bwd_s = tsl_plan_json_real(c, "bwd_s");
    ps->chunk1_wgrad_s = tsl_plan_json_real(c, "wgrad_s");
}

/* The stage's extent: consecutive from layer 0, at least one layer and one device
 * (each fault named by its key: the message was "bad first_layer/n_layers/n_devices"). */
static int stage_extent(const tsl_plan_stage_t *ps, uint32_t s, uint32_t layers_before,
                        tsl_err_t *err)
{
    if (ps->n_layers == 0)
        return tsl_err_set(err, "plan: stages[%u].n_layers: missing or 0; a stage holds a layer",
                           s);
    if (ps->n_devices == 0)
        return tsl_err_set(err,
                           "plan: stages[%u].n_devices: missing or 0; a stage runs on a device", s);
    if (ps->first_layer != layers_before)
        return tsl_err_set(err,
                           "plan: stages[%u].first_layer: %u, but the stages before it end "
                           "before layer %u (stages are consecutive from layer 0)",
                           s, ps->first_layer, layers_before);
    if (ps->first_layer + ps->n_layers > TSL_PLAN_MAX_LAYERS)
        return tsl_err_set(err, "plan: stages[%u].n_layers: %u layers from layer %u pass %u", s,
                           ps->n_layers, ps->first_layer, TSL_PLAN_MAX_LAYERS);
    return 0;
}

static int read_stage(const json_t *st, uint32_t s, tsl_plan_t *out, tsl_err_t *err)
{
    tsl_plan_stage_t *ps = &out->stages[s];
    read_stage_scalars(st, ps);
    read_stage_chunk1(st, ps);
    if (stage_extent(ps, s, out->n_layers, err) != 0)
        return -1;
    out->n_layers += ps->n_layers;
    out->n_devices += ps->n_devices;
    size_t i;
    json_t *run;
    uint32_t covered = 0;
    json_array_foreach(json_object_get(st, "runs"), i, run)
    {
        uint32_t first = u32_of(run, "first_layer"), count = u32_of(run, "count");
        tsl_strategy_t sg = {0};
        if (count == 0)
            return tsl_err_set(err, "plan: stages[%u].runs[%zu].count: must be at least 1", s, i);
        if (first < ps->first_layer || first + count > ps->first_layer + ps->n_layers)
            return tsl_err_set(err,
                               "plan: stages[%u].runs[%zu]: layers %u..%u (first_layer, count) "
                               "are not inside the stage's layers %u..%u",
                               s, i, first, first + count - 1, ps->first_layer,
                               ps->first_layer + ps->n_layers - 1);
        if (run_strategy(run, s, i, &sg, out->memopt ? NULL : err) != 0 && !out->memopt)
            return -1;
        for (uint32_t k = first; k < first + count; k++)
            out->layer[k] = sg;
        covered += count;
    }
    /* runs given must cover the stage: a layer left out was priced as a single
     * device's and refused as "layer 25 (single): its degrees multiply to 1
     * devices", naming no run (tests/cli_fuzz.py) */
    if (i > 0 && covered != ps->n_layers)
        return tsl_err_set(err,
                           "plan: stages[%u].runs: cover %u layers, but the stage has %u "
                           "(layers %u..%u, each in one run)",
                           s, covered, ps->n_layers, ps->first_layer,
                           ps->first_layer + ps->n_layers - 1);
    return 0;
}

static void read_plan_label(const json_t *o, tsl_plan_t *p)
{
    snprintf(p->label, sizeof p->label, "%s",
             json_string_value(json_object_get(o, "label")) ?: "tessel");
}

/* the stages are read last (plan_from_json): their runs depend on memopt */
static void read_plan_stages(const json_t *o, tsl_plan_t *p)
{
    (void)o;
    (void)p;
}

static void read_plan_granularity(const json_t *o, tsl_plan_t *p)
{
    const char *g = json_string_value(json_object_get(o, "granularity"));
    p->sublayer = g && strcmp(g, "sublayer") == 0;
}

/* Absent: 1F1B (interleaved with interleave > 1); a name this build does not
 * run reads as UINT32_MAX, which eval and the exports refuse. */
static void read_plan_schedule(const json_t *o, tsl_plan_t *p)
{
    const char *name = json_string_value(json_object_get(o, "schedule"));
    int sched = name ? tsl_pipesim_sched_parse(name) : 0;
    p->schedule = sched >= 0 ? (uint32_t)sched : UINT32_MAX;
}

static void read_plan_recompute_modules(const json_t *o, tsl_plan_t *p)
{
    p->recompute_modules = tsl_recompute_of_json(json_object_get(o, "recompute_modules"));
}

static void read_plan_slicer(const json_t *o, tsl_plan_t *p)
{
    const json_t *sl = json_object_get(o, "slicer");
    p->n_sliced = tsl_plan_json_u32(sl, "n_sliced");
    p->sliced_iter_time_s = tsl_plan_json_real(sl, "iter_time_s");
}

/* The mode by its name; a name this build does not know keeps the plan marked
 * as a memopt plan (exports refuse those on the flag alone). */
static void read_plan_memopt(const json_t *o, tsl_plan_t *p)
{
    const json_t *mo = json_object_get(o, "memopt");
    if (mo == NULL)
        return;
    const char *mode = json_string_value(json_object_get(mo, "mode"));
    p->memopt = 1;
    for (int m = 0; mode && m < TSL_MEMOPT_MODE_COUNT; m++)
        if (strcmp(mode, tsl_memopt_mode_name((tsl_memopt_mode_t)m)) == 0)
            p->memopt = (uint8_t)(1 + m);
    p->cpu_bytes_per_node = tsl_plan_json_u64(mo, "cpu_bytes_per_node");
}

static void read_plan_node_order(const json_t *o, tsl_plan_t *p)
{
    const json_t *order = json_object_get(o, "node_order");
    size_t n = json_array_size(order);
    p->n_nodes = (uint32_t)(n <= TSL_PLAN_MAX_ORDER_NODES ? n : 0);
    for (uint32_t k = 0; k < p->n_nodes; k++) {
        json_int_t v = json_integer_value(json_array_get(order, k));
        p->node_order[k] = v > 0 && v < TSL_PLAN_MAX_ORDER_NODES ? (uint16_t)v : 0;
    }
}

/* v_chunks: a V plan whose every stage carries its second chunk's times, which the
 * simulator then takes as priced (tsl_plan_sim_input); a document without them (a
 * plan stored before they were written) simulates each chunk as half its stage. On
 * another schedule (a V plan's document edited to run 1F1B) they describe no chunk
 * the plan runs and are left unread. Some stages only is a document edited out of
 * shape: its V would run half its chunks as priced and half in halves. */
static int read_v_chunks(const json_t *stages, tsl_plan_t *out, tsl_err_t *err)
{
    uint32_t with = 0, first_with = 0, first_without = 0;
    for (uint32_t s = out->pp; s-- > 0;) {
        if (json_object_get(json_array_get(stages, s), "chunk1") != NULL) {
            with++;
            first_with = s;
        } else {
            first_without = s;
        }
    }
    if (with == 0 || !tsl_pipesim_sched_is_v(out->schedule)) {
        for (uint32_t s = 0; s < out->pp; s++)
            out->stages[s].chunk1_fwd_s = out->stages[s].chunk1_bwd_s =
                out->stages[s].chunk1_wgrad_s = 0;
        return 0;
    }
    if (with != out->pp)
        return tsl_err_set(err,
                           "plan: stages[%u].chunk1: missing, but stages[%u] has one (a V "
                           "plan's chunk times come for every stage or none)",
                           first_without, first_with);
    out->v_chunks = true;
    return 0;
}

int tsl_plan_from_json(const json_t *plan, tsl_plan_t *out, tsl_err_t *err)
{
    tsl_plan_init(out);
    if (!json_is_object(plan))
        return tsl_err_set(err, "plan: not an object");
    if (tsl_plan_json_check(plan, err) != 0)
        return -1;
#define PLAN_(c, kind, proto, json, when) PLAN_##kind(c, json)
#define PLAN_CUSTOM(c, json)              read_plan_##c(plan, out);
#define PLAN_U32(c, json)                 READ_SCALAR_U32(out->c, plan, json)
#define PLAN_U64(c, json)                 READ_SCALAR_U64(out->c, plan, json)
#define PLAN_REAL(c, json)                READ_SCALAR_REAL(out->c, plan, json)
#define PLAN_BOOL(c, json)                READ_SCALAR_BOOL(out->c, plan, json)
    TSL_PLAN_FIELDS(PLAN_)
#undef PLAN_
    /* each part named: '{}' (no plan at all) read "pp and stages[] disagree" */
    const json_t *stages = json_object_get(plan, "stages");
    if (!json_is_array(stages) || json_array_size(stages) == 0)
        return tsl_err_set(err,
                           "plan.stages: %s; a plan document lists its pipeline stages (as "
                           "tesselctl plan --json writes them)",
                           stages ? "must be a non-empty array" : "missing");
    if (out->pp == 0 || out->pp > TSL_PLAN_MAX_STAGES || out->pp != json_array_size(stages))
        return tsl_err_set(err, "plan.pp: %u, but stages[] holds %zu stages (at most %u)", out->pp,
                           json_array_size(stages), TSL_PLAN_MAX_STAGES);
    if (out->micro_batch == 0 ||
        (uint64_t)out->micro_batch * out->n_micro != (uint64_t)out->global_batch)
        return tsl_err_set(
            err,
            "plan.global_batch: %u is not micro_batch %u x n_micro %u (a micro_batch "
            "of at least 1)",
            out->global_batch, out->micro_batch, out->n_micro);
    for (uint32_t s = 0; s < out->pp; s++)
        if (read_stage(json_array_get(stages, s), s, out, err) != 0)
            return -1;
    if (read_v_chunks(stages, out, err) != 0)
        return -1;
    if (out->tie_stage >= out->pp) /* the simulator would time the tie with the last */
        return tsl_err_set(err, "plan.tie_stage: %u is not a stage of the plan's %u",
                           out->tie_stage, out->pp);
    out->valid = true;
    return 0;
}

/* The stored request's model switches (search.h tsl_request_model_switches: MTP
 * depths under its target's rule, blocks kept bf16, unfused_attn, no_dropout) on
 * m, as the search applied them: the plan's layers are that model's, so the
 * export is plan --local --export's. The request is read as every request
 * document is (plan_json.h; tesseld stores its target as a number). The unfused core
 * the search chose for its target's stack on the cluster's GPUs (the plan's
 * stack_unfused_attn: search.c tsl_search) applies as the request's would. */
static int stored_switches(const json_t *req, const json_t *doc, tsl_model_t *m, tsl_err_t *err)
{
    tsl_request_t r;
    tsl_request_from_json(req, &r);
    if (r.target >= TSL_TARGET_COUNT)
        r.target = TSL_TARGET_ANY; /* tesseld stores only targets it knows */
    tsl_model_switches_t sw = tsl_request_model_switches(&r);
    sw.unfused_attn |=
        json_is_true(json_object_get(json_object_get(doc, "plan"), "stack_unfused_attn"));
    tsl_model_t own = {0};
    const tsl_model_t *out = m;
    int rc = tsl_model_for_request(m, &sw, &own, &out, err);
    if (rc == 0 && out == &own) {
        tsl_model_free(m);
        *m = own;
    } else {
        tsl_model_free(&own);
    }
    return rc;
}

/* The model of a stored request: {"model_preset": NAME} or {"hf_config": {...}},
 * with the request's model switches. */
static int stored_model(const json_t *req, const json_t *doc, tsl_model_t *m, tsl_err_t *err)
{
    const char *preset = json_string_value(json_object_get(req, "model_preset"));
    if (preset)
        return tsl_model_preset_seq(preset, u32_of(req, "seq_len"), m, err) != 0
                   ? -1
                   : stored_switches(req, doc, m, err);
    const json_t *hf = json_object_get(req, "hf_config");
    if (hf == NULL)
        return tsl_err_set(err, "request: neither model_preset nor hf_config");
    char *text = json_is_string(hf) ? strdup(json_string_value(hf)) : json_dumps(hf, JSON_COMPACT);
    const char *name = json_string_value(json_object_get(json_object_get(doc, "model"), "name"));
    int rc = text ? tsl_hf_config_parse(text, name ? name : "", u32_of(req, "seq_len"), m, err)
                  : tsl_err_setc(err, TSL_E_NOMEM, "export: out of memory");
    free(text);
    return rc != 0 ? -1 : stored_switches(req, doc, m, err);
}

/* A 16-bit plan stored for a cluster with a GPU without bf16 tensor cores (V100, T4,
 * TITAN RTX, 2080 Ti: tsl_cluster_no_bf16) that says neither fp16 nor fp32 was priced
 * in bf16 — what tesseld stored before cost model 89, which trains fp16 there. No
 * stack runs bf16 on that GPU, and an fp16 launch is not what the plan was priced
 * as (the loss scaler's step, cost.h 89): the stack's formats refuse it, naming the
 * GPU, and send the person to plan again (the stored request searched under this
 * cost model). The trace is the stored figures, kept. A request without a cluster
 * that parses (tests' documents) has nothing to check. */
static int stored_precision_ok(tsl_export_format_t f, const json_t *req, const tsl_plan_t *p,
                               tsl_err_t *err)
{
    if (f == TSL_EXPORT_TRACE || p->fp16 || p->fp32)
        return 0;
    tsl_cluster_t c;
    tsl_err_t ignored = {0};
    if (tsl_cluster_from_request(req, &c, &ignored) != 0) {
        tsl_cluster_free(&c);
        return 0;
    }
    const tsl_gpu_spec_t *g = tsl_cluster_no_bf16(&c);
    int rc = 0;
    if (g != NULL)
        rc = tsl_err_setc(err, TSL_E_UNSUPPORTED,
                          "stored plan: priced in bf16, but the %s of its cluster has no bf16 "
                          "tensor cores (a plan stored before cost model 89, which trains fp16 "
                          "there): no stack runs it as priced; plan it again (tesselctl plan "
                          "with its options searches it in fp16)",
                          g->name);
    tsl_cluster_free(&c);
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
    if (stored_precision_ok(f, req, p, err) != 0)
        goto out;
    rc = f == TSL_EXPORT_TRACE ? trace_text(p, &m, text, len, err)
                               : tsl_export(f, p, &m, text, len, err);
out:
    tsl_model_free(&m);
    free(p);
    json_decref(req);
    json_decref(doc);
    return rc;
}

size_t tsl_export_stored_notes(tsl_export_format_t f, const char *result_json,
                               char (*notes)[TSL_EXPORT_NOTE_CAP])
{
    json_t *doc = json_loads(result_json, 0, NULL);
    tsl_plan_t *p = malloc(sizeof(*p));
    tsl_err_t err = {0};
    size_t n = 0;
    if (doc != NULL && p != NULL && tsl_plan_from_json(json_object_get(doc, "plan"), p, &err) == 0)
        n = tsl_export_side_notes(f, p, notes);
    free(p);
    json_decref(doc);
    return n;
}
