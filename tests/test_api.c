/*
 * test_api.c — api/: the status table, the method table, the request fields
 * against the .proto (so planner/request_fields.h and planner.proto cannot
 * drift), request ↔ proto, the plan document ↔ Plan round trip, NUL bytes in
 * strings, and the physical bounds of hardware figures.
 */
#include <string.h>

#include "check.h"
#include "figures_json.h"
#include "hf_config.h"
#include "methods.h"
#include "mtp.h"
#include "plan_fields.h"
#include "plan_json.h"
#include "plan_proto.h"
#include "profile_check.h"
#include "proto_json.h"
#include "request.h"
#include "status.h"
#include "target.h"
#include "wire.h"

static void test_status_table(void)
{
    /* The answers tests and docs promise (docs/tesselctl.md, docs/api.md). */
    CHECK(tsl_errcode_status(TSL_E_INVALID) == GRPC_STATUS_INVALID_ARGUMENT, "invalid");
    CHECK(tsl_errcode_status(TSL_E_NOFIT) == GRPC_STATUS_OUT_OF_RANGE,
          "no plan fits: a status of its own");
    CHECK(tsl_errcode_status(TSL_E_NOMEM) == GRPC_STATUS_RESOURCE_EXHAUSTED, "nomem");
    CHECK(tsl_errcode_status(TSL_E_INTERNAL) == GRPC_STATUS_INTERNAL, "internal");
    CHECK(tsl_errcode_status(TSL_E_CANCELLED) == GRPC_STATUS_DEADLINE_EXCEEDED, "cancelled");
    CHECK(tsl_errcode_status(TSL_E_NOTFOUND) == GRPC_STATUS_NOT_FOUND, "notfound");
    CHECK(tsl_errcode_exit(TSL_E_INVALID) == 2 && tsl_errcode_exit(TSL_E_NOFIT) == 2 &&
              tsl_status_exit(tsl_errcode_status(TSL_E_NOFIT)) == 2,
          "bad input and no fit exit 2, local and remote");
    CHECK(tsl_errcode_exit(TSL_E_CANCELLED) == tsl_status_exit(GRPC_STATUS_DEADLINE_EXCEEDED) &&
              tsl_errcode_exit(TSL_E_CANCELLED) == 5,
          "a local timeout exits as a remote deadline");
    CHECK(tsl_status_exit(GRPC_STATUS_OK) == 0 &&
              tsl_status_exit(GRPC_STATUS_INVALID_ARGUMENT) == 2 &&
              tsl_status_exit(GRPC_STATUS_NOT_FOUND) == 3 &&
              tsl_status_exit(GRPC_STATUS_FAILED_PRECONDITION) == 4 &&
              tsl_status_exit(GRPC_STATUS_UNAUTHENTICATED) == 4 &&
              tsl_status_exit(GRPC_STATUS_UNAVAILABLE) == 5 &&
              tsl_status_exit(GRPC_STATUS_DEADLINE_EXCEEDED) == 5,
          "remote exit statuses unchanged");
    for (int c = TSL_E_NONE; c < TSL_E_COUNT; c++) {
        grpc_status_code st = tsl_errcode_status((tsl_errcode_t)c);
        CHECK(strcmp(tsl_status_name(st), "UNKNOWN") != 0, "code %s has a status",
              tsl_errcode_name((tsl_errcode_t)c));
        CHECK((c == TSL_E_NONE) == (st == GRPC_STATUS_OK), "only NONE is OK (%d)", c);
    }
    CHECK(strcmp(tsl_status_name(GRPC_STATUS_RESOURCE_EXHAUSTED), "RESOURCE_EXHAUSTED") == 0 &&
              strcmp(tsl_status_name((grpc_status_code)99), "UNKNOWN") == 0,
          "status names");
}

static void test_methods(void)
{
    for (size_t i = 0; i < TSL_RPC_ID_COUNT; i++) {
        const tsl_rpc_method_t *m = &tsl_rpc_methods[i];
        CHECK(m->path && m->path[0] == '/' && strchr(m->path + 1, '/') && m->name && m->name[0],
              "method %zu has a path and a name", i);
        for (size_t j = 0; j < i; j++)
            CHECK(strcmp(m->path, tsl_rpc_methods[j].path) != 0, "%s listed once", m->path);
    }
    CHECK(strcmp(TSL_RPC_GET_PLAN, "/tessel.v1.Planner/GetPlan") == 0, "GetPlan path");
}

static void test_fields_match_proto(void)
{
    const char *miss = tsl_request_proto_mismatch(&tessel__v1__plan_options__descriptor, false);
    CHECK(miss == NULL, "PlanOptions has every request field (missing or mistyped: %s)",
          miss ? miss : "");
    miss = tsl_request_proto_mismatch(&tessel__v1__plan_request__descriptor, true);
    CHECK(miss == NULL, "PlanRequest has every request field with a CLI flag (missing: %s)",
          miss ? miss : "");

    tsl_request_t r, back;
    tsl_request_init(&r);
    r.global_batch = 96;
    r.max_batch = 512;
    r.mem_budget_bytes = 80ull << 30;
    r.top_k = 3;
    r.pp = 4;
    r.max_pp = 8;
    r.bucket_bytes = 1u << 20;
    r.no_sdp = r.no_bi_objective = r.no_slicer = true;
    r.etp = 2;
    r.moe_capacity = 1.25; /* REAL fields: doubles on the wire */
    r.moe_imbalance = 1.5;
    Tessel__V1__PlanRequest req = TESSEL__V1__PLAN_REQUEST__INIT;
    tsl_request_to_proto(&r, &req.base);
    CHECK(req.global_batch == 96 && req.memory_bytes == 80ull << 30 && req.pp == 4 && req.no_sdp &&
              req.no_bi_objective && req.no_slicer && !req.no_pp && req.etp == 2 &&
              req.moe_capacity_factor == 1.25 && req.moe_imbalance == 1.5,
          "request → PlanRequest by field name");
    tsl_request_from_proto(&req.base, &back);
    CHECK(back.global_batch == 96 && back.mem_budget_bytes == 80ull << 30 && back.max_pp == 0 &&
              back.no_bi_objective && !back.no_tp && back.moe_capacity == 1.25 &&
              back.moe_imbalance == 1.5,
          "PlanRequest → request (max_pp is not on PlanRequest)");
    Tessel__V1__PlanOptions opt = TESSEL__V1__PLAN_OPTIONS__INIT;
    tsl_request_to_proto(&r, &opt.base);
    tsl_request_from_proto(&opt.base, &back);
    CHECK(memcmp(&r, &back, sizeof r) == 0, "request → PlanOptions → request is the same");
}

/* A real search result: document → Plan → document gives the document back. */
static void test_plan_round_trip(void)
{
    tsl_model_t m = {0};
    tsl_cluster_t c = {0};
    tsl_request_t r;
    tsl_err_t err = {0};
    tsl_search_result_t *res = calloc(1, sizeof *res);
    tsl_request_init(&r);
    r.global_batch = 32;
    CHECK(tsl_model_preset("GPT2-345M", &m, &err) == 0, "%s", err.msg);
    CHECK(tsl_cluster_parse_spec(&c, "2x4xA100-40G:ib100", &err) == 0, "%s", err.msg);
    CHECK(tsl_search(&m, &c, &r, NULL, res, &err) == TSL_SEARCH_OK, "search: %s", err.msg);
    /* recompute modules and bf16 moments travel as names in the document and as a
     * bitmask in the Plan, both ways (the plan's and the request echo's) */
    res->best.recompute_modules = TSL_RECOMPUTE_MLA_UP_PROJ | TSL_RECOMPUTE_MLP;
    res->best.bf16_moments = true;
    /* a V's second chunks' own times (Stage.chunk1): set on every stage, carried both
     * ways as written (the plan's schedule aside: the document's reader checks that) */
    res->best.v_chunks = true;
    res->best.tie_stage = 1;           /* PlanFigures.tie_stage, 136 */
    res->best.norm_impl = 1;           /* PlanFigures.norm_impl, 157: apex (norm_impl.h) */
    res->best.fp8_amax_tp_only = true; /* PlanFigures.fp8_amax_tp_only, 158 */
    res->best.fp8_dpa = true;          /* PlanFigures.fp8_dpa, 160 */
    for (uint32_t s = 0; s < res->best.pp; s++) {
        res->best.stages[s].chunk1_fwd_s = 0.25 * res->best.stages[s].fwd_s + 1e-7 * s;
        res->best.stages[s].chunk1_bwd_s = 0.5 * res->best.stages[s].fwd_s;
        res->best.stages[s].chunk1_wgrad_s = 0.125 * res->best.stages[s].fwd_s;
        res->best.stages[s].ep_save_s = 0.0625 * res->best.stages[s].fwd_s; /* Stage 18 */
    }
    r.recompute_modules = TSL_RECOMPUTE_MOE_ACT;
    r.bf16_moments = true;
    char fp[17];
    tsl_request_fingerprint(&r, &m, &c, fp);
    tsl_plan_head_t head;
    tsl_plan_head_fill(&head, res, &m, &c, fp);
    head.search_time_s = 0.25;
    head.created_unix = 1700000000;
    tsl_profile_use_t none = {0};
    const char *left[] = {"node-3 (offline)"};
    tsl_figure_sources_t fs = {
        .use = &none, .line = "figures: built-in", .left_out = left, .n_left_out = 1};
    json_t *figures = tsl_figures_json(&fs);
    json_t *doc = tsl_search_result_to_json(res, &m, &r, &head, figures);
    json_decref(figures);
    CHECK(strcmp(json_string_value(json_object_get(doc, "fingerprint")), fp) == 0,
          "the document carries the fingerprint given");
    CHECK(json_integer_value(json_object_get(doc, "created_unix")) == 1700000000 &&
              json_is_false(json_object_get(doc, "cached")),
          "the head's answer fields are in the document");
    /* the notes tesseld stores with a plan (Plan.notes, 29), last as it adds them */
    json_object_set_new(doc, "notes", json_pack("[s, s]", "first note", "second note"));
    char *text = json_dumps(doc, 0);

    tsl_arena_t a = {0};
    Tessel__V1__Plan *p = NULL;
    CHECK(tsl_plan_proto_from_json(text, &a, &p, &err) == 0, "document → Plan: %s", err.msg);
    CHECK(p && p->figures && p->figures->n_workers_left_out == 1 &&
              strcmp(p->figures->compute, "built-in") == 0 && p->figures->hardware == NULL,
          "figures → FigureSources field for field");
    CHECK(p && p->best && p->best->recompute_modules == 12 && p->best->bf16_moments && p->request &&
              p->request->recompute_modules == 1 && p->request->bf16_moments,
          "recompute modules and bf16 moments → Plan: %u %u",
          p && p->best ? p->best->recompute_modules : 0,
          p && p->request ? p->request->recompute_modules : 0);
    CHECK(p && p->n_notes == 2 && strcmp(p->notes[0], "first note") == 0 &&
              strcmp(p->notes[1], "second note") == 0,
          "notes → Plan.notes, in order: %zu", p ? p->n_notes : 0);
    const Tessel__V1__Stage *st0 = p && p->best && p->best->n_stages ? p->best->stages[0] : NULL;
    CHECK(st0 && st0->chunk1 && st0->chunk1->fwd_s == res->best.stages[0].chunk1_fwd_s &&
              st0->chunk1->bwd_s == res->best.stages[0].chunk1_bwd_s &&
              st0->chunk1->wgrad_s == res->best.stages[0].chunk1_wgrad_s,
          "a V stage's chunk1 → Stage.chunk1 field for field");
    CHECK(p && p->best && p->best->tie_stage == 1, "tie_stage → PlanFigures.tie_stage");
    CHECK(p && p->best && p->best->norm_impl == 1, "norm_impl → PlanFigures.norm_impl");
    CHECK(p && p->best && p->best->fp8_amax_tp_only,
          "fp8_amax_tp_only → PlanFigures.fp8_amax_tp_only");
    CHECK(p && p->best && p->best->fp8_dpa, "fp8_dpa → PlanFigures.fp8_dpa");
    CHECK(st0 && st0->ep_save_s == res->best.stages[0].ep_save_s && st0->ep_save_s > 0,
          "a stage's ep_save_s → Stage.ep_save_s");
    const Tessel__V1__Stage *plain = NULL; /* a baseline's stage: no V */
    for (size_t b = 0; p && b < p->n_baselines && !plain; b++)
        if (p->baselines[b]->n_stages)
            plain = p->baselines[b]->stages[0];
    CHECK(plain && plain->chunk1 == NULL, "a stage without chunk1 leaves Stage.chunk1 unset");
    json_t *back = p ? tsl_plan_proto_to_json(p) : NULL;
    CHECK(back != NULL, "Plan → document");
    char *t1 = json_dumps(doc, JSON_REAL_PRECISION(17)),
         *t2 = json_dumps(back, JSON_REAL_PRECISION(17));
    CHECK(t1 && t2 && strcmp(t1, t2) == 0, "round trip: key for key, in order\n%.400s\n%.400s", t1,
          t2);
    free(t1);
    free(t2);
    json_decref(back);
    tsl_arena_free(&a);
    json_t *canon = tsl_plan_doc_canonical(doc, &err);
    CHECK(canon && json_equal(canon, doc), "the local document is already canonical: %s", err.msg);
    json_decref(canon);
    CHECK(tsl_plan_proto_from_json("{\"plan\": 1}", &a, &p, &err) == -1 &&
              tsl_err_code(&err) == TSL_E_INVALID,
          "not a search result: %s", err.msg);
    tsl_arena_free(&a);
    free(text);
    json_decref(doc);
    free(res);
    tsl_model_free(&m);
    tsl_cluster_free(&c);
}

/* Every field of the plan's messages is carried: named by a line of
 * plan_fields.h, or by the few the hand-written part of plan_proto.c maps. */
static void check_covered(const ProtobufCMessageDescriptor *d, const char *const *names, size_t n)
{
    for (unsigned i = 0; i < d->n_fields; i++) {
        bool found = false;
        for (size_t k = 0; k < n && !found; k++)
            found = strcmp(d->fields[i].name, names[k]) == 0;
        CHECK(found, "%s.%s is in no list of plan_fields.h", d->name, d->fields[i].name);
    }
}

static void test_plan_fields_cover_proto(void)
{
#define PROTO_NAME_(c, kind, proto, json, when) #proto,
#define DOC_NAME_(c, kind, obj, json, when)     #c,
    const char *stage[] = {TSL_PLAN_STAGE_FIELDS(PROTO_NAME_)};
    /* valid and why: a baseline without a plan (its "plan" null, "why") */
    const char *plan[] = {TSL_PLAN_FIELDS(PROTO_NAME_) "valid", "why"};
    /* the unrestricted figures: the "target" object */
    const char *doc[] = {TSL_PLAN_DOC_FIELDS(DOC_NAME_) "unrestricted_samples_per_s",
                         "unrestricted_iter_time_s", "notes"};
#undef PROTO_NAME_
#undef DOC_NAME_
    check_covered(&tessel__v1__stage__descriptor, stage, sizeof stage / sizeof *stage);
    check_covered(&tessel__v1__plan_figures__descriptor, plan, sizeof plan / sizeof *plan);
    check_covered(&tessel__v1__plan__descriptor, doc, sizeof doc / sizeof *doc);
}

/* JSON → message → JSON through the descriptor gives the object back. */
static void test_proto_from_json(void)
{
    json_t *o = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:i, s:b, s:f, s:{s:f}}, s:[s, s]}", "line",
                          "figures: x", "compute", "measured", "hardware", "gpu", "H100-80G",
                          "link", "nvlink", "galvatron", "memory_layers", 34, "memory_sp", 1,
                          "inter_node_gbps", 7.5, "sp_time_busbw_gbps", "8", 120.5,
                          "workers_left_out", "a (offline)", "b (stopped)");
    tsl_arena_t a = {0};
    ProtobufCMessage *m = NULL;
    CHECK(tsl_proto_from_json(o, &tessel__v1__figure_sources__descriptor, &a, &m) == 0 && m,
          "object → FigureSources");
    const Tessel__V1__FigureSources *f = (const Tessel__V1__FigureSources *)m;
    CHECK(f && strcmp(f->hardware->gpu, "H100-80G") == 0 && f->galvatron->memory_layers == 34 &&
              f->galvatron->n_sp_time_busbw_gbps == 1 && f->n_workers_left_out == 2 &&
              strcmp(f->workers_left_out[1], "b (stopped)") == 0 && strcmp(f->overlap, "") == 0,
          "field for field, missing keys at their defaults");
    json_t *back = m ? tsl_proto_to_json(m) : NULL;
    json_t *sp = json_object_get(json_object_get(back, "galvatron"), "sp_time_busbw_gbps");
    CHECK(json_real_value(json_object_get(sp, "8")) == 120.5 &&
              strcmp(json_string_value(json_object_get(back, "line")), "figures: x") == 0,
          "and back");
    json_t *one = json_integer(1);
    CHECK(tsl_proto_from_json(one, &tessel__v1__figure_sources__descriptor, &a, &m) == -1 && !m,
          "not an object");
    json_decref(one);
    json_decref(back);
    json_decref(o);
    tsl_arena_free(&a);
}

static void test_nul_strings(void)
{
    Tessel__V1__PlanRequest req = TESSEL__V1__PLAN_REQUEST__INIT;
    req.model_case = TESSEL__V1__PLAN_REQUEST__MODEL_MODEL_PRESET;
    req.model_preset = "GPT2-345M";
    req.cluster_case = TESSEL__V1__PLAN_REQUEST__CLUSTER_CLUSTER_SPEC;
    req.cluster_spec = "4xA100-40G";
    uint8_t buf[256];
    size_t n = tessel__v1__plan_request__pack(&req, buf);
    tsl_err_t err = {0};
    CHECK(tsl_wire_check_string_bytes(buf, n, &tessel__v1__plan_request__descriptor, &err) == 0,
          "plain strings pass");
    /* "GPT2-345M" → "GPT2\0345M": same length, a NUL inside. */
    uint8_t *at = memmem(buf, n, "GPT2-345M", 9);
    CHECK(at != NULL, "preset bytes found");
    if (at)
        at[4] = '\0';
    CHECK(tsl_wire_check_string_bytes(buf, n, &tessel__v1__plan_request__descriptor, &err) == -1 &&
              tsl_err_code(&err) == TSL_E_INVALID && strncmp(err.msg, "model_preset:", 13) == 0,
          "a NUL byte is refused, naming the field: %s", err.msg);

    /* Nested: a Plan's fingerprint and a stage's run strategy. */
    Tessel__V1__LayerRun run = TESSEL__V1__LAYER_RUN__INIT;
    Tessel__V1__LayerRun *runs[] = {&run};
    Tessel__V1__Stage st = TESSEL__V1__STAGE__INIT;
    Tessel__V1__Stage *stages[] = {&st};
    Tessel__V1__PlanFigures f = TESSEL__V1__PLAN_FIGURES__INIT;
    Tessel__V1__Plan p = TESSEL__V1__PLAN__INIT;
    run.strategy = "tp2XXdp4";
    st.n_runs = 1;
    st.runs = runs;
    f.n_stages = 1;
    f.stages = stages;
    p.best = &f;
    n = tessel__v1__plan__pack(&p, buf);
    at = memmem(buf, n, "XX", 2);
    if (at)
        at[0] = '\0';
    CHECK(tsl_wire_check_string_bytes(buf, n, &tessel__v1__plan__descriptor, &err) == -1 &&
              strncmp(err.msg, "strategy:", 9) == 0,
          "nested strings are checked too: %s", err.msg);
}

/* One RegisterWorker hostname per case: refused (naming the field) or not. */
static void utf8_case(const char *host, size_t len, int want, const char *what)
{
    Tessel__V1__RegisterRequest req = TESSEL__V1__REGISTER_REQUEST__INIT;
    char name[32] = {0};
    uint8_t buf[128];
    tsl_err_t err = {0};
    memcpy(name, host, len);
    memset(name + len, 'x', 8); /* a placeholder the same length, patched below */
    req.hostname = name;
    size_t n = tessel__v1__register_request__pack(&req, buf);
    uint8_t *at = memmem(buf, n, name, len + 8);
    if (at)
        memcpy(at, host, len); /* exact bytes, whatever strlen would say */
    int rc = tsl_wire_check_string_bytes(buf, n, &tessel__v1__register_request__descriptor, &err);
    CHECK(rc == want && (rc == 0 || (tsl_err_code(&err) == TSL_E_INVALID &&
                                     strncmp(err.msg, "hostname:", 9) == 0)),
          "%s: rc %d: %s", what, rc, err.msg);
}

static void test_utf8_strings(void)
{
    utf8_case("node-1", 6, 0, "ASCII");
    utf8_case("n\xc3\xa9ud", 5, 0, "2-byte é");
    utf8_case("\xe2\x82\xac", 3, 0, "3-byte €");
    utf8_case("\xf0\x9f\x98\x80", 4, 0, "4-byte emoji");
    utf8_case("\xf4\x8f\xbf\xbf", 4, 0, "U+10FFFF");
    utf8_case("\xff", 1, -1, "0xff");
    utf8_case("ab\x80", 3, -1, "a lone continuation byte");
    utf8_case("\xc0\xaf", 2, -1, "overlong '/'");
    utf8_case("\xe0\x80\xaf", 3, -1, "3-byte overlong");
    utf8_case("\xf0\x80\x80\xaf", 4, -1, "4-byte overlong");
    utf8_case("\xed\xa0\x80", 3, -1, "surrogate U+D800");
    utf8_case("\xf4\x90\x80\x80", 4, -1, "U+110000");
    utf8_case("ab\xe2\x82", 4, -1, "truncated at the end");
}

/* One figure, checked alone against its unit's bounds. */
static int figure(const char *name, const char *unit, double v, const char *gkey, const char *gval,
                  tsl_err_t *err)
{
    Tessel__V1__Measurement m = TESSEL__V1__MEASUREMENT__INIT;
    Tessel__V1__Measurement__LabelsEntry l = TESSEL__V1__MEASUREMENT__LABELS_ENTRY__INIT;
    Tessel__V1__Measurement__LabelsEntry *ls[] = {&l};
    m.name = (char *)name;
    m.unit = (char *)unit;
    m.value = v;
    l.key = (char *)gkey;
    l.value = (char *)gval;
    m.n_labels = gkey ? 1 : 0;
    m.labels = ls;
    return tsl_profile_check_figure(&m, 3, err);
}

static void test_profile_bounds(void)
{
    tsl_err_t err = {0};
    CHECK(figure("ffn_fwd", "s", 0.004, NULL, NULL, &err) == 0, "4 ms block: %s", err.msg);
    CHECK(figure("ffn_fwd", "s", -1, NULL, NULL, &err) == -1 &&
              strncmp(err.msg, "measurements[3].value: ffn_fwd", 30) == 0,
          "negative time: %s", err.msg);
    CHECK(figure("ffn_fwd", "s", 5e-324, NULL, NULL, &err) == -1 &&
              strstr(err.msg, "[1e-09, 3600]"),
          "5e-324 s names the bound: %s", err.msg);
    CHECK(figure("ffn_fwd", "s", 4e3, NULL, NULL, &err) == -1, "a block of 4000 s: %s", err.msg);
    CHECK(figure("hbm_bw", "bytes/s", 2e12, NULL, NULL, &err) == 0, "2 TB/s: %s", err.msg);
    CHECK(figure("hbm_bw", "bytes/s", 1e300, NULL, NULL, &err) == -1, "1e300 B/s: %s", err.msg);
    CHECK(figure("allreduce_busbw", "bytes/s", 0, "group", "1", &err) == 0,
          "one GPU's bus bandwidth is 0: %s", err.msg);
    CHECK(figure("allreduce_busbw", "bytes/s", 0, "group", "2", &err) == -1, "two GPUs' is not: %s",
          err.msg);
    CHECK(figure("memory_total", "bytes", 80e9, NULL, NULL, &err) == 0, "80 GB: %s", err.msg);
    CHECK(figure("memory_total", "bytes", 1e20, NULL, NULL, &err) == -1, "1e20 B: %s", err.msg);
    CHECK(figure("overlap_slowdown", "ratio", 1.2, NULL, NULL, &err) == 0, "1.2: %s", err.msg);
    CHECK(figure("overlap_slowdown", "ratio", 1e6, NULL, NULL, &err) == -1, "1e6: %s", err.msg);
    CHECK(figure("x", "furlongs", 1, NULL, NULL, &err) == -1 &&
              strncmp(err.msg, "measurements[3].unit:", 21) == 0,
          "unknown unit: %s", err.msg);
    CHECK(figure("gemm_fwd", "s", 1e-3, "m", "8192", &err) == 0, "partial shape: %s", err.msg);

    int64_t now = 1800000000;
    CHECK(tsl_profile_check_time(0, now, &err) == 0, "0 is now");
    CHECK(tsl_profile_check_time(now - 3600, now, &err) == 0, "an hour ago");
    CHECK(tsl_profile_check_time(INT64_MAX, now, &err) == -1 &&
              strncmp(err.msg, "measured_unix:", 14) == 0,
          "2^63-1: %s", err.msg);
    CHECK(tsl_profile_check_time(INT64_MIN, now, &err) == -1, "-2^63: %s", err.msg);
    CHECK(tsl_profile_check_time(now + 7 * 86400, now, &err) == -1, "a week ahead");
}

/* The checks as ReportProfile runs them: each figure's labels serialised once
 * (tsl_profile_labels_json) and handed to every check. */
static int with_labels(const Tessel__V1__ReportProfileRequest *req, int64_t now,
                       tsl_profile_prior_t *prior, size_t n_prior, tsl_err_t *err, bool all)
{
    char *texts[4] = {0};
    size_t n = req->n_measurements < 4 ? req->n_measurements : 4;
    for (size_t i = 0; i < n; i++)
        texts[i] = tsl_profile_labels_json(req->measurements[i]);
    const char *const *t = (const char *const *)texts;
    int rc = all ? tsl_profile_check_report(req, t, now, prior, n_prior, err)
                 : tsl_profile_check_outliers(req, t, prior, n_prior, err);
    for (size_t i = 0; i < n; i++)
        free(texts[i]);
    return rc;
}

static int check_report(const Tessel__V1__ReportProfileRequest *req, int64_t now,
                        tsl_profile_prior_t *prior, size_t n_prior, tsl_err_t *err)
{
    return with_labels(req, now, prior, n_prior, err, true);
}

static int check_outliers(const Tessel__V1__ReportProfileRequest *req, tsl_profile_prior_t *prior,
                          size_t n_prior, tsl_err_t *err)
{
    return with_labels(req, 0, prior, n_prior, err, false);
}

static void test_profile_outliers(void)
{
    Tessel__V1__Measurement m = TESSEL__V1__MEASUREMENT__INIT;
    Tessel__V1__Measurement *ms[] = {&m};
    Tessel__V1__Measurement__LabelsEntry l = TESSEL__V1__MEASUREMENT__LABELS_ENTRY__INIT;
    Tessel__V1__Measurement__LabelsEntry *ls[] = {&l};
    Tessel__V1__ReportProfileRequest req = TESSEL__V1__REPORT_PROFILE_REQUEST__INIT;
    req.n_measurements = 1;
    req.measurements = ms;
    m.name = "attention_fwd";
    m.unit = "s";
    m.per_device = true;
    m.device_index = 1;
    l.key = "mb";
    l.value = "4";
    m.n_labels = 1;
    m.labels = ls;
    tsl_profile_prior_t prior[] = {
        {"attention_fwd", "{\"mb\":\"4\"}", 0, 1.0},   /* another GPU */
        {"attention_fwd", "{\"mb\":\"4\"}", 1, 0.002}, /* this one */
        {"attention_fwd", "{\"mb\":\"8\"}", 1, 0.004}, /* another shape */
        {"attention_mem", "{\"mb\":\"4\"}", 1, 1e9},
    };
    tsl_err_t err = {0};
    m.value = 0.003;
    CHECK(check_report(&req, 1800000000, prior, 4, &err) == 0, "1.5x: %s", err.msg);
    m.value = 0.002 * 1e6;
    CHECK(check_report(&req, 1800000000, prior, 4, &err) == -1 &&
              strncmp(err.msg, "measurements[0].value: attention_fwd", 36) == 0 &&
              strstr(err.msg, "1e+06"),
          "x10^6 refused naming the figure: %s", err.msg);
    m.value = 0.002 / 25;
    CHECK(check_outliers(&req, prior, 4, &err) == -1, "1/25: %s", err.msg);
    m.value = 0.002 / 25;
    CHECK(check_outliers(&req, prior, 0, &err) == 0, "no history: no comparison");
    m.device_index = 2;
    CHECK(check_outliers(&req, prior, 4, &err) == 0, "another device: none stored");
}

/* A report's shape: no empty report, no label twice, numeric labels as the worker
 * writes them, no figure twice (each passed before: an empty report replaced the
 * node's profile with nothing, "m": "inf" made an infinite GEMM, a figure twice
 * was averaged with itself) */
static void test_profile_shape(void)
{
    Tessel__V1__Measurement a = TESSEL__V1__MEASUREMENT__INIT, b = TESSEL__V1__MEASUREMENT__INIT;
    Tessel__V1__Measurement *ms[] = {&a, &b};
    Tessel__V1__Measurement__LabelsEntry l1 = TESSEL__V1__MEASUREMENT__LABELS_ENTRY__INIT,
                                         l2 = TESSEL__V1__MEASUREMENT__LABELS_ENTRY__INIT;
    Tessel__V1__Measurement__LabelsEntry *la[] = {&l1, &l2}, *lb[] = {&l2};
    Tessel__V1__ReportProfileRequest req = TESSEL__V1__REPORT_PROFILE_REQUEST__INIT;
    tsl_err_t err = {0};
    int64_t now = 1800000000;
    CHECK(check_report(&req, now, NULL, 0, &err) == -1 &&
              strcmp(err.msg, "measurements: none given; a report holds at least one figure") == 0,
          "an empty report: %s", err.msg);
    a = (Tessel__V1__Measurement)TESSEL__V1__MEASUREMENT__INIT;
    a.name = b.name = "gemm_fwd";
    a.unit = b.unit = "s";
    a.value = b.value = 1e-3;
    a.per_device = b.per_device = true;
    l1.key = "m";
    l1.value = "8192";
    l2.key = "n";
    l2.value = "8192";
    a.labels = la;
    a.n_labels = 2;
    b.labels = lb;
    b.n_labels = 1;
    req.measurements = ms;
    req.n_measurements = 2;
    CHECK(check_report(&req, now, NULL, 0, &err) == 0, "two figures: %s", err.msg);
    l2.key = "m"; /* a map key sent twice on the wire */
    CHECK(check_report(&req, now, NULL, 0, &err) == -1 &&
              strstr(err.msg, "measurements[0].labels: 'm' is given twice (gemm_fwd)"),
          "a label twice: %s", err.msg);
    l2.key = "n";
    const char *bad[] = {"inf", "1e3", "0x10", "-5", "", " 8", "8.0", "99999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        l1.value = (char *)bad[i];
        CHECK(check_report(&req, now, NULL, 0, &err) == -1 &&
                  strstr(err.msg, "measurements[0].labels: m '") &&
                  strstr(err.msg, "is not a whole decimal number 0..4294967295"),
              "m '%s': %s", bad[i], err.msg);
    }
    l1.key = "f";
    l1.value = "4096g";
    a.name = "ffn_fwd";
    CHECK(tsl_profile_check_labels(&a, 0, &err) == 0, "f 4096g: %s", err.msg);
    l1.value = "4096x";
    CHECK(tsl_profile_check_labels(&a, 0, &err) == -1 && strstr(err.msg, "gated FFN"),
          "f 4096x: %s", err.msg);
    l1.key = "bytes";
    l1.value = "1099511627776";
    CHECK(tsl_profile_check_labels(&a, 0, &err) == 0, "bytes 2^40: %s", err.msg);
    /* the same figure twice: name, device and labels */
    a.name = "gemm_fwd";
    a.labels = lb;
    a.n_labels = 1;
    CHECK(check_report(&req, now, NULL, 0, &err) == -1 &&
              strstr(err.msg, "measurements[1]: gemm_fwd {\"n\":\"8192\"} on its device is "
                              "measurements[0] again"),
          "a figure twice: %s", err.msg);
    b.device_index = 1;
    CHECK(check_report(&req, now, NULL, 0, &err) == 0, "on two devices: %s", err.msg);
    /* the checks compare the texts the handler serialised (and stores), not a
     * serialisation of their own: two figures whose given texts agree are one */
    b.device_index = 0;
    l1.key = "m";
    l1.value = "8192";
    const char *same[] = {"{\"m\":\"1\"}", "{\"m\":\"1\"}"};
    const char *given[] = {"{\"m\":\"8192\",\"n\":\"8192\"}", "{\"n\":\"8192\"}"};
    b.labels = lb;
    b.n_labels = 1;
    a.labels = la;
    a.n_labels = 2;
    CHECK(tsl_profile_check_duplicates(&req, given, &err) == 0, "the texts given: %s", err.msg);
    CHECK(tsl_profile_check_duplicates(&req, same, &err) == -1 &&
              strstr(err.msg, "measurements[1]: gemm_fwd {\"m\":\"1\"} on its device"),
          "the texts given are the figures' keys: %s", err.msg);
    char *t = tsl_profile_labels_json(&a);
    CHECK(t && strcmp(t, given[0]) == 0, "labels → compact JSON, keys sorted: %s", t ? t : "");
    free(t);
}

static void test_bounds(void)
{
    tsl_err_t err = {0};
    /* Every built-in GPU type and link lies within the bounds. */
    for (size_t i = 0; i < tsl_gpu_count(); i++) {
        for (size_t l = 0; l < tsl_link_count(); l++) {
            char spec[96];
            tsl_cluster_t c = {0};
            snprintf(spec, sizeof spec, "2x4x%s:%s", tsl_gpu_at(i)->name, tsl_link_at(l)->name);
            CHECK(tsl_cluster_parse_spec(&c, spec, &err) == 0, "%s: %s", spec, err.msg);
            CHECK(tsl_request_check_cluster(&c, &err) == 0, "%s within bounds: %s", spec, err.msg);
            tsl_cluster_free(&c);
        }
    }
    tsl_cluster_t c = {0};
    CHECK(tsl_cluster_parse_spec(&c, "2x4xA100-40G:ib100", &err) == 0, "%s", err.msg);
    c.inter_bw = 1e-300;
    CHECK(tsl_request_check_cluster(&c, &err) == -1 && strncmp(err.msg, "inter_gbps:", 11) == 0,
          "inter_gbps 1e-300: %s", err.msg);
    c.inter_bw = 12.5e9;
    c.gpu_types[0].peak_flops = 1e-30 * 1e12;
    CHECK(tsl_request_check_cluster(&c, &err) == -1 && strstr(err.msg, "peak_tflops"),
          "peak_tflops 1e-30: %s", err.msg);
    c.gpu_types[0].peak_flops = 312e12;
    c.gpu_types[0].mem_bytes = 1ull << 50;
    CHECK(tsl_request_check_cluster(&c, &err) == -1 && strstr(err.msg, "memory_gb"),
          "1 PiB of GPU memory: %s", err.msg);
    c.gpu_types[0].mem_bytes = 40ull << 30;
    /* > 0 alone let 1e-300 through: 10^30 s an iteration, printed as a plan */
    c.gpu_types[0].efficiency = 1e-300;
    CHECK(tsl_request_check_cluster(&c, &err) == -1 &&
              strstr(err.msg, "gpu_types.A100-40G.efficiency: 1e-300 is outside [0.01, 1]"),
          "efficiency 1e-300: %s", err.msg);
    c.gpu_types[0].efficiency = 0.5;
    /* a NIC figure of its own (nic_gbps) is bounded as the pair figures are; 0 is none */
    c.nodes[1].nic_bw = 1e-300;
    CHECK(tsl_request_check_cluster(&c, &err) == -1 && strstr(err.msg, "nodes[1].nic_gbps"),
          "nic_gbps 1e-300: %s", err.msg);
    c.nodes[1].nic_bw = 0;
    CHECK(tsl_request_check_cluster(&c, &err) == 0, "nic_gbps 0 (none): %s", err.msg);
    c.nodes[1].intra_bw = 0.0 / 0.0;
    CHECK(tsl_request_check_cluster(&c, &err) == -1 && strstr(err.msg, "nodes[1].intra_gbps"),
          "NaN bandwidth: %s", err.msg);
    tsl_cluster_free(&c);
    /* so many GPUs in one node that their default host memory (2x theirs) passes 1 PiB:
     * the GPU count is at fault, not cpu_memory_gb, which no spec can give */
    CHECK(tsl_cluster_parse_spec(&c, "1x8000xA100-80G", &err) == 0, "%s", err.msg);
    CHECK(tsl_request_check_cluster(&c, &err) == -1 &&
              strstr(err.msg, "nodes[0].gpus: 8000 GPUs of 80 GiB in one node") &&
              !strstr(err.msg, "cpu_memory_gb"),
          "8000 GPUs in a node: %s", err.msg);
    tsl_cluster_free(&c);
    /* given, it is cpu_memory_gb's */
    CHECK(tsl_cluster_parse_spec(&c, "1x8xA100-80G", &err) == 0, "%s", err.msg);
    c.nodes[0].cpu_mem_bytes = 2ull << 50;
    CHECK(tsl_request_check_cluster(&c, &err) == -1 &&
              strstr(err.msg, "nodes[0].cpu_memory_gb: 2.09715e+06 GiB is outside"),
          "2 PiB of host memory: %s", err.msg);
    tsl_cluster_free(&c);
}

/* A PlanRequest for a preset on 8xA100-80G, batch 16, that the decode tests vary. */
static Tessel__V1__PlanRequest preset_request(const char *preset)
{
    Tessel__V1__PlanRequest req = TESSEL__V1__PLAN_REQUEST__INIT;
    req.model_case = TESSEL__V1__PLAN_REQUEST__MODEL_MODEL_PRESET;
    req.model_preset = (char *)preset;
    req.cluster_case = TESSEL__V1__PLAN_REQUEST__CLUSTER_CLUSTER_SPEC;
    req.cluster_spec = (char *)"8xA100-80G";
    req.global_batch = 16;
    return req;
}

/* A PlanRequest for an HF config.json text on 8xH100-80G, batch 16. */
static Tessel__V1__PlanRequest hf_request(const char *config_json)
{
    Tessel__V1__PlanRequest req = TESSEL__V1__PLAN_REQUEST__INIT;
    req.model_case = TESSEL__V1__PLAN_REQUEST__MODEL_HF_CONFIG_JSON;
    req.hf_config_json = (char *)config_json;
    req.cluster_case = TESSEL__V1__PLAN_REQUEST__CLUSTER_CLUSTER_SPEC;
    req.cluster_spec = (char *)"8xH100-80G";
    req.global_batch = 16;
    return req;
}

/* A PlanRequest's MTP switches decoded as plan --local applies them: GPT2-345M (26
 * layers) with 2 depths of its own copy of the last block has 26 + 2 x (entry, block,
 * head copy) = 32 layers, the fingerprint plan --local computes on that model, and
 * the layer limit counts them; a hybrid without an MTP pattern and a depth above 16
 * are refused naming mtp_layers. */
static void decode_mtp(uint32_t depths, bool no_mtp, const char *preset, uint32_t max_layers,
                       tsl_plan_input_t *in, tsl_err_t *err)
{
    Tessel__V1__PlanRequest req = preset_request(preset);
    req.mtp_layers = depths;
    req.no_mtp = no_mtp;
    tsl_request_limits_t lim = {.max_batch = 4096, .max_layers = max_layers, .max_devices = 64};
    memset(in, 0, sizeof *in);
    memset(err, 0, sizeof *err);
    tsl_plan_request_decode(&req, &lim, in, err);
}

static void test_decode_mtp(void)
{
    tsl_plan_input_t in;
    tsl_err_t err;
    decode_mtp(2, false, "GPT2-345M", 1000, &in, &err);
    CHECK(err.msg[0] == '\0' && in.model.n_layers == 32 && tsl_mtp_depths(&in.model) == 2,
          "2 depths: %u layers: %s", in.model.n_layers, err.msg);
    tsl_model_t m = {0};
    tsl_cluster_t c = {0};
    char fp[17];
    CHECK(tsl_model_preset("GPT2-345M", &m, &err) == 0 && tsl_model_set_mtp(&m, 2, &err) == 0 &&
              tsl_cluster_parse_spec(&c, "8xA100-80G", &err) == 0,
          "%s", err.msg);
    tsl_request_fingerprint(&in.request, &m, &c, fp);
    CHECK(strcmp(fp, in.fingerprint) == 0, "fingerprint %s, plan --local's %s", in.fingerprint, fp);
    tsl_plan_input_free(&in);
    tsl_model_free(&m);
    tsl_cluster_free(&c);
    decode_mtp(2, false, "GPT2-345M", 30, &in, &err);
    CHECK(strstr(err.msg, "32 layers (6 of them MTP depths') is above the limit max_layers=30"),
          "%s", err.msg);
    decode_mtp(17, false, "GPT2-345M", 1000, &in, &err);
    CHECK(strstr(err.msg, "mtp_layers: 17"), "%s", err.msg);
    /* the range named plainly (it read "with no_mtp unset: give 1..16 depths") */
    decode_mtp(1000, false, "GPT2-345M", 1000, &in, &err);
    CHECK(strstr(err.msg, "mtp_layers: 1000 is out of range; give 1..16"), "%s", err.msg);
    decode_mtp(1, true, "GPT2-345M", 1000, &in, &err);
    CHECK(strstr(err.msg, "mtp_layers: 1 with no_mtp set"), "%s", err.msg);
    decode_mtp(1, false, "Nemotron-3-Nano", 1000, &in, &err);
    CHECK(strstr(err.msg, "mtp_layers: 1: hybrid model"), "%s", err.msg);
    decode_mtp(0, true, "GPT2-345M", 1000, &in, &err);
    CHECK(err.msg[0] == '\0' && in.model.n_layers == 26, "no_mtp on a model without: %s", err.msg);
    tsl_plan_input_free(&in);
}

/* A count field holds tesselctl's range over gRPC too (request_fields.h, checked in
 * tsl_request_validate): vp_group 2^32 - 1 planned, where --vp-group stops at 4096. */
static void test_decode_bounds(void)
{
    Tessel__V1__PlanRequest req = preset_request("GPT2-345M");
    tsl_request_limits_t lim = {.max_batch = 4096, .max_layers = 1000, .max_devices = 64};
    tsl_plan_input_t in;
    tsl_err_t err;
    uint32_t vp[] = {4294967295u, 4097u, 4096u};
    for (unsigned i = 0; i < 3; i++) {
        req.vp_group = vp[i];
        memset(&in, 0, sizeof in);
        memset(&err, 0, sizeof err);
        int rc = tsl_plan_request_decode(&req, &lim, &in, &err);
        char want[64];
        snprintf(want, sizeof want, "vp_group: %u is out of range; give 1..4096", vp[i]);
        CHECK(vp[i] > 4096 ? rc != 0 && strstr(err.msg, want) != NULL : rc == 0, "vp_group %u: %s",
              vp[i], err.msg);
        tsl_plan_input_free(&in);
    }
}

/* memory_reserve_bytes is kept back on every device, so at most what a device
 * holds (16 TiB): 2^64 - 1 and 2^64 - 32 MiB used to pass the planner's "leaves
 * 64 MiB" check by wrapping (reserve + 64 MiB < 80 GiB) and plan against a 0-byte
 * budget, cached; 2 GiB is a reserve like any. */
static void test_decode_reserve(void)
{
    const uint64_t bad[] = {UINT64_MAX, UINT64_MAX - (32ull << 20), (16384ull << 30) + 1};
    for (int k = 0; k < 4; k++) {
        Tessel__V1__PlanRequest req = preset_request("GPT2-345M");
        req.memory_reserve_bytes = k < 3 ? bad[k] : 2ull << 30;
        tsl_request_limits_t lim = {.max_batch = 4096, .max_layers = 1000, .max_devices = 64};
        tsl_plan_input_t in;
        tsl_err_t err = {0};
        memset(&in, 0, sizeof in);
        int rc = tsl_plan_request_decode(&req, &lim, &in, &err);
        if (k < 3)
            CHECK(rc != 0 && strstr(err.msg, "memory_reserve_bytes: ") == err.msg &&
                      strstr(err.msg, "above the physical bound 17592186044416"),
                  "reserve %llu: rc %d, '%s'", (unsigned long long)bad[k], rc, err.msg);
        else
            CHECK(rc == 0 && in.request.mem_reserve_bytes == 2ull << 30 &&
                      tsl_request_device_budget(&in.request, 80ull << 30) == 78ull << 30,
                  "a 2 GiB reserve: rc %d, '%s'", rc, err.msg);
        tsl_plan_input_free(&in);
    }
}

/* Left open, the depths are the target's (target.h), as plan --local builds them: a
 * 2-layer DeepSeek-V3 config with one MTP depth (num_nextn_predict_layers 1) is
 * [emb, 2 layers, head] + (entry, block, head copy) = 7 layers under megatron, 4 under
 * torchtitan, which trains none unless asked, with --local's fingerprint on that model
 * (tesseld kept the depth: 7 layers, another fingerprint). */
static void test_decode_target_mtp(void)
{
    const char *js = "{\"model_type\": \"deepseek_v3\", \"hidden_size\": 64, "
                     "\"intermediate_size\": 128, \"num_hidden_layers\": 2, "
                     "\"num_attention_heads\": 4, \"vocab_size\": 100, "
                     "\"max_position_embeddings\": 128, \"kv_lora_rank\": 16, "
                     "\"qk_nope_head_dim\": 8, \"qk_rope_head_dim\": 4, \"v_head_dim\": 8, "
                     "\"n_routed_experts\": 8, \"num_experts_per_tok\": 2, "
                     "\"moe_intermediate_size\": 32, \"num_nextn_predict_layers\": 1}";
    const uint32_t targets[] = {TSL_TARGET_MEGATRON, TSL_TARGET_TORCHTITAN}, layers[] = {7, 4};
    for (int k = 0; k < 2; k++) {
        Tessel__V1__PlanRequest req = hf_request(js);
        req.target = (Tessel__V1__Target)targets[k];
        tsl_request_limits_t lim = {.max_batch = 4096, .max_layers = 1000, .max_devices = 64};
        tsl_plan_input_t in;
        tsl_err_t err = {0};
        memset(&in, 0, sizeof in);
        CHECK(tsl_plan_request_decode(&req, &lim, &in, &err) == 0 &&
                  in.model.n_layers == layers[k] && tsl_mtp_depths(&in.model) == (k == 0 ? 1u : 0u),
              "target %u: %u layers, want %u: %s", targets[k], in.model.n_layers, layers[k],
              err.msg);
        /* the note plan --local prints for the depth torchtitan leaves out (target.h),
         * which tesseld stores with the plan (Plan.notes); none under megatron */
        char want[400] = "";
        tsl_target_mtp_note(targets[k], in.model.name, 1, k == 0 ? 1 : 0, want, sizeof want);
        CHECK(strcmp(in.note, want) == 0 && (k == 0) == (in.note[0] == '\0') &&
                  (k == 0 || strstr(in.note, "1 MTP depth left out")),
              "target %u: note '%s', plan --local's '%s'", targets[k], in.note, want);
        tsl_model_t m = {0};
        tsl_cluster_t c = {0};
        char fp[17] = "";
        CHECK(tsl_hf_config_parse(js, in.model.name, 0, &m, &err) == 0 &&
                  tsl_model_set_mtp(&m, k == 0 ? 1 : 0, &err) == 0 &&
                  tsl_cluster_parse_spec(&c, "8xH100-80G", &err) == 0,
              "%s", err.msg);
        tsl_request_fingerprint(&in.request, &m, &c, fp);
        CHECK(strcmp(fp, in.fingerprint) == 0, "target %u: fingerprint %s, plan --local's %s",
              targets[k], in.fingerprint, fp);
        tsl_model_free(&m);
        tsl_cluster_free(&c);
        tsl_plan_input_free(&in);
    }
}

/* An MoE config whose experts Tessel does not read (DBRX) is bad input through
 * tesseld as with --local: INVALID_ARGUMENT, tesselctl's exit 2. */
static void test_decode_moe_unread(void)
{
    Tessel__V1__PlanRequest req =
        hf_request("{\"model_type\": \"dbrx\", \"d_model\": 64, "
                   "\"n_layers\": 2, \"n_heads\": 4, \"vocab_size\": 100}");
    tsl_request_limits_t lim = {.max_batch = 4096, .max_layers = 1000, .max_devices = 64};
    tsl_plan_input_t in;
    tsl_err_t err = {0};
    memset(&in, 0, sizeof in);
    CHECK(tsl_plan_request_decode(&req, &lim, &in, &err) == -1 &&
              strstr(err.msg, "mixture-of-experts") &&
              tsl_errcode_status(tsl_err_code(&err)) == GRPC_STATUS_INVALID_ARGUMENT &&
              tsl_status_exit(GRPC_STATUS_INVALID_ARGUMENT) == 2,
          "dbrx: code %d: %s", (int)tsl_err_code(&err), err.msg);
    tsl_plan_input_free(&in);
}

/* PlanRequest.module_precision (148): decoded into the request (tesseld's search
 * weighs every FP8 plan with it), into the fingerprint its store keys plans by (none,
 * or another list, is another plan) and the stored request; a value that is no
 * precision, or one no FP8 plan takes (no_fp8, an A100 cluster), INVALID_ARGUMENT
 * naming the field (exit 2); under torchtitan UNIMPLEMENTED (exit 4). */
static void decode_prec(uint32_t prec, bool no_fp8, const char *cluster, Tessel__V1__Target target,
                        tsl_plan_input_t *in, tsl_err_t *err)
{
    Tessel__V1__PlanRequest req = preset_request("GPT2-345M");
    req.cluster_spec = (char *)cluster;
    req.module_precision = prec;
    req.no_fp8 = no_fp8;
    req.target = target;
    tsl_request_limits_t lim = {.max_batch = 4096, .max_layers = 1000, .max_devices = 64};
    memset(in, 0, sizeof *in);
    *err = (tsl_err_t){0};
    tsl_plan_request_decode(&req, &lim, in, err);
}

static void test_decode_module_prec(void)
{
    tsl_plan_input_t in, none;
    tsl_err_t err;
    decode_prec(0, false, "8xH100-80G", 0, &none, &err);
    decode_prec(0x1010, false, "8xH100-80G", 0, &in, &err);
    CHECK(err.msg[0] == '\0' && in.request.module_prec == 0x1010 &&
              strcmp(in.fingerprint, none.fingerprint) != 0 && in.request_json &&
              strstr(in.request_json, "\"module_precision\":4112"),
          "0x1010: '%s', fingerprint %s against %s", err.msg, in.fingerprint, none.fingerprint);
    tsl_plan_input_free(&in);
    tsl_plan_input_free(&none);
    static const struct {
        uint32_t prec;
        bool no_fp8;
        const char *cluster;
        Tessel__V1__Target target;
        const char *why;
        grpc_status_code status;
    } bad[] = {
        {0x7, false, "8xH100-80G", 0, "module_precision: 0x7: linear_qkv's value 7 is no",
         GRPC_STATUS_INVALID_ARGUMENT},
        {0x10, true, "8xH100-80G", 0, "module_precision: per-module precision overrides FP8",
         GRPC_STATUS_INVALID_ARGUMENT},
        {0x10, false, "8xA100-80G", 0,
         "module_precision: per-module precision overrides FP8 "
         "plans' modules, and no FP8 plan is weighed on this cluster",
         GRPC_STATUS_INVALID_ARGUMENT},
        {0x10, false, "8xH100-80G", TESSEL__V1__TARGET__TARGET_TORCHTITAN,
         "module_precision: torchtitan: ", GRPC_STATUS_UNIMPLEMENTED},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        decode_prec(bad[i].prec, bad[i].no_fp8, bad[i].cluster, bad[i].target, &in, &err);
        CHECK(strstr(err.msg, bad[i].why) == err.msg &&
                  tsl_errcode_status(tsl_err_code(&err)) == bad[i].status,
              "case %zu: status %d, '%s'", i, (int)tsl_errcode_status(tsl_err_code(&err)), err.msg);
        tsl_plan_input_free(&in);
    }
}

/* A request's notes as one buffer of lines (request.h tsl_notes_*): appended whole
 * or not at all, written as the document's array, split and compared line by line. */
static void test_notes(void)
{
    char notes[32] = "", *lines[4];
    tsl_notes_add(notes, sizeof notes, "first");
    tsl_notes_add(notes, sizeof notes, "second");
    tsl_notes_add(notes, sizeof notes, "a line too long to fit whole");
    CHECK(strcmp(notes, "first\nsecond") == 0, "notes: '%s'", notes);
    json_t *arr = tsl_notes_json(notes);
    CHECK(json_array_size(arr) == 2 &&
              strcmp(json_string_value(json_array_get(arr, 1)), "second") == 0,
          "two lines in the array");
    json_decref(arr);
    CHECK(tsl_notes_json("") == NULL, "no notes: no array");
    char *first = "first", *only[] = {first};
    CHECK(!tsl_notes_equal(notes, only, 1) && tsl_notes_equal("first", only, 1) &&
              tsl_notes_equal(NULL, NULL, 0) && !tsl_notes_equal("first", NULL, 0),
          "compared line by line");
    char copy[32];
    snprintf(copy, sizeof copy, "%s", notes);
    size_t n = tsl_notes_split(copy, lines, 4);
    CHECK(n == 2 && strcmp(lines[0], "first") == 0 && strcmp(lines[1], "second") == 0 &&
              tsl_notes_equal(notes, lines, n) && !tsl_notes_equal("first\nsecon", lines, n),
          "split: %zu", n);
    CHECK(tsl_notes_split(copy, lines, 1) == 1, "split at most max");
}

int main(void)
{
    test_notes();
    test_status_table();
    test_methods();
    test_fields_match_proto();
    test_plan_round_trip();
    test_plan_fields_cover_proto();
    test_proto_from_json();
    test_nul_strings();
    test_utf8_strings();
    test_profile_bounds();
    test_profile_outliers();
    test_profile_shape();
    test_bounds();
    test_decode_mtp();
    test_decode_bounds();
    test_decode_reserve();
    test_decode_target_mtp();
    test_decode_moe_unread();
    test_decode_module_prec();
    return CHECK_DONE();
}
