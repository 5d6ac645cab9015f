/*
 * handlers_reads.c — Planner.GetPlan, ListPlans, DeletePlan, ExportPlan: store
 * calls of microseconds, answered on the completion-queue thread while
 * searches run on the pool.
 *
 * GetPlan/ExportPlan of a fingerprint not stored → NOT_FOUND. DeletePlan is
 * idempotent: OK with deleted = false when there was nothing to delete. A bad
 * fingerprint or page token → INVALID_ARGUMENT; a store failure → INTERNAL.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "arena.h"
#include "export.h"
#include "fingerprint.h"
#include "handlers.h"
#include "tessel/v1/planner.pb-c.h"

#define LIST_DEFAULT 50u
#define LIST_MAX     1000u

/* The request's fingerprint by the one rule (common/fingerprint.h), lowercased
 * into out[17]; anything else answers INVALID_ARGUMENT (and false). */
static bool request_fingerprint(tsl_call_t *call, const char *fp, char out[17])
{
    tsl_err_t err = {0};
    if (tsl_fingerprint_parse(fp, out, &err) == 0)
        return true;
    tsl_call_fail_err(call, &err);
    return false;
}

static void not_found(tsl_call_t *call, const char *fp)
{
    tsl_call_fail(call, GRPC_STATUS_NOT_FOUND,
                  "no plan with fingerprint %s (ListPlans shows the stored ones)", fp);
}

/* 0 found (row filled; head_only: the summary columns, nothing to clear), -1
 * answered (NOT_FOUND or INTERNAL). */
static int load(tsl_call_t *call, const char *fp, tsl_stored_plan_t *row, bool head_only)
{
    tsl_err_t err = {0};
    int rc = head_only ? tsl_store_plan_head(call->srv->store, fp, row, &err)
                       : tsl_store_get_plan(call->srv->store, fp, row, &err);
    if (rc == 1)
        not_found(call, fp);
    else if (rc < 0)
        tsl_call_fail(call, GRPC_STATUS_INTERNAL, "store: %s", err.msg);
    return rc == 0 ? 0 : -1;
}

void tsl_handle_get_plan(tsl_call_t *call)
{
    Tessel__V1__GetPlanRequest *req = (Tessel__V1__GetPlanRequest *)tsl_call_read(
        call, &tessel__v1__get_plan_request__descriptor);
    if (!req)
        return;
    char fp[17];
    tsl_stored_plan_t row;
    memset(&row, 0, sizeof row);
    if (request_fingerprint(call, req->fingerprint, fp) && load(call, fp, &row, true) == 0)
        tsl_handlers_answer_plan(call, &row);
    protobuf_c_message_free_unpacked(&req->base, NULL);
}

typedef struct list_ctx {
    tsl_arena_t arena;
    Tessel__V1__PlanSummary **items;
    size_t n, cap;
} list_ctx_t;

static int list_row(void *ud, const tsl_stored_plan_t *row)
{
    list_ctx_t *ctx = ud;
    if (ctx->n == ctx->cap)
        return -1;
    Tessel__V1__PlanSummary *s = tsl_arena_alloc(&ctx->arena, sizeof *s);
    if (!s)
        return -1;
    tessel__v1__plan_summary__init(s);
    s->fingerprint = tsl_arena_strdup(&ctx->arena, row->fingerprint);
    s->model_name = tsl_arena_strdup(&ctx->arena, row->model_name);
    if (!s->fingerprint || !s->model_name)
        return -1;
    s->n_devices = row->n_devices;
    s->global_batch = row->global_batch;
    s->iter_time_s = row->iter_time_s;
    s->samples_per_s = row->samples_per_s;
    s->peak_bytes = row->peak_bytes;
    s->stale = row->stale;
    s->created_unix = row->created_unix;
    ctx->items[ctx->n++] = s;
    return 0;
}

/* Filter from the request; false after answering INVALID_ARGUMENT. */
static bool list_filter(tsl_call_t *call, const Tessel__V1__ListPlansRequest *req,
                        tsl_plan_filter_t *f)
{
    memset(f, 0, sizeof *f);
    switch (req->stale) {
    case TESSEL__V1__LIST_PLANS_REQUEST__STALE_FILTER__ANY: f->stale = -1; break;
    case TESSEL__V1__LIST_PLANS_REQUEST__STALE_FILTER__FRESH_ONLY: f->stale = 0; break;
    case TESSEL__V1__LIST_PLANS_REQUEST__STALE_FILTER__STALE_ONLY: f->stale = 1; break;
    default:
        tsl_call_fail(call, GRPC_STATUS_INVALID_ARGUMENT,
                      "stale: %d is not ANY (0), FRESH_ONLY (1) or STALE_ONLY (2)",
                      (int)req->stale);
        return false;
    }
    f->model_name = req->model_name[0] ? req->model_name : NULL;
    f->n_devices = req->n_devices;
    f->page_size = req->page_size == 0         ? LIST_DEFAULT
                   : req->page_size > LIST_MAX ? LIST_MAX
                                               : req->page_size;
    f->page_token = req->page_token;
    return true;
}

static void list_answer(tsl_call_t *call, const tsl_plan_filter_t *f)
{
    list_ctx_t ctx = {.cap = f->page_size};
    char next[128] = "";
    tsl_err_t err = {0};
    ctx.items = tsl_arena_alloc(&ctx.arena, ctx.cap * sizeof *ctx.items);
    if (!ctx.items) {
        tsl_call_fail(call, GRPC_STATUS_RESOURCE_EXHAUSTED, "ListPlans: out of memory");
    } else if (tsl_store_list_plans(call->srv->store, f, list_row, &ctx, next, sizeof next, &err) !=
               0) {
        bool bad_input = tsl_err_code(&err) == TSL_E_INVALID; /* the page token */
        tsl_call_fail(call, bad_input ? GRPC_STATUS_INVALID_ARGUMENT : GRPC_STATUS_INTERNAL, "%s%s",
                      bad_input ? "" : "store: ", err.msg[0] ? err.msg : "list failed");
    } else {
        Tessel__V1__ListPlansResponse resp = TESSEL__V1__LIST_PLANS_RESPONSE__INIT;
        resp.n_plans = ctx.n;
        resp.plans = ctx.items;
        resp.next_page_token = next;
        tsl_call_reply(call, &resp.base);
    }
    tsl_arena_free(&ctx.arena);
}

void tsl_handle_list_plans(tsl_call_t *call)
{
    Tessel__V1__ListPlansRequest *req = (Tessel__V1__ListPlansRequest *)tsl_call_read(
        call, &tessel__v1__list_plans_request__descriptor);
    if (!req)
        return;
    tsl_plan_filter_t f;
    if (list_filter(call, req, &f))
        list_answer(call, &f);
    protobuf_c_message_free_unpacked(&req->base, NULL);
}

void tsl_handle_delete_plan(tsl_call_t *call)
{
    Tessel__V1__DeletePlanRequest *req = (Tessel__V1__DeletePlanRequest *)tsl_call_read(
        call, &tessel__v1__delete_plan_request__descriptor);
    if (!req)
        return;
    char fp[17];
    if (request_fingerprint(call, req->fingerprint, fp)) {
        tsl_err_t err = {0};
        tsl_plan_cache_forget(call->srv->plans, fp);
        int rc = tsl_store_delete_plan(call->srv->store, fp, &err);
        if (rc < 0) {
            tsl_call_fail(call, GRPC_STATUS_INTERNAL, "store: %s", err.msg);
        } else {
            Tessel__V1__DeletePlanResponse resp = TESSEL__V1__DELETE_PLAN_RESPONSE__INIT;
            resp.deleted = rc == 0;
            tsl_call_reply(call, &resp.base);
            if (rc == 0 && call->srv->metrics)
                tsl_metrics_set_plans(call->srv->metrics, tsl_store_count_plans(call->srv->store));
        }
    }
    protobuf_c_message_free_unpacked(&req->base, NULL);
}

/* "" and "json": the stored document; "trace": its simulated timeline
 * (TSL_EXPORT_TRACE); the others: common/export.h. *f is set to
 * TSL_EXPORT_COUNT for json. */
static bool export_format(tsl_call_t *call, const char *format, tsl_export_format_t *f)
{
    tsl_err_t err = {0};
    *f = TSL_EXPORT_COUNT;
    if (!format[0] || strcasecmp(format, "json") == 0)
        return true;
    if (strcasecmp(format, "trace") == 0) {
        *f = TSL_EXPORT_TRACE;
        return true;
    }
    if (tsl_export_format_parse(format, f, &err) == 0)
        return true;
    tsl_call_fail(call, GRPC_STATUS_INVALID_ARGUMENT, "%s (or json, trace)", err.msg);
    return false;
}

/* stale: the row's flag, so that every format says it (only json's content can: the
 * stacks' configs have no place for it, and a scheduler would run them as current).
 * notes: what the format's content cannot carry (tsl_export_side_notes), or none. */
static void reply_export(tsl_call_t *call, const char *format, const char *content_type,
                         const char *text, size_t len, bool stale, char **notes, size_t n_notes)
{
    Tessel__V1__ExportPlanResponse resp = TESSEL__V1__EXPORT_PLAN_RESPONSE__INIT;
    resp.format = (char *)format;
    resp.content_type = (char *)content_type;
    resp.content.data = (uint8_t *)text;
    resp.content.len = len;
    resp.stale = stale;
    resp.notes = notes;
    resp.n_notes = n_notes;
    tsl_call_reply(call, &resp.base);
}

/* The json format: the stored document with "cached" and "stale" as GetPlan
 * answers them. The stored text keeps the values of when it was searched
 * (cached false, stale false), which read as current on a plan marked stale
 * since. A document that does not parse goes out as stored. */
static void export_json(tsl_call_t *call, const tsl_stored_plan_t *row)
{
    json_t *doc = json_loads(row->result_json, 0, NULL);
    char *text = NULL;
    if (json_is_object(doc) && json_object_set_new(doc, "cached", json_true()) == 0 &&
        json_object_set_new(doc, "stale", json_boolean(row->stale)) == 0)
        text = json_dumps(doc, JSON_INDENT(2));
    json_decref(doc);
    const char *out = text ? text : row->result_json;
    reply_export(call, "json", "application/json", out, strlen(out), row->stale, NULL, 0);
    free(text);
}

/* A plan the target cannot express is FAILED_PRECONDITION with the reason. */
static void export_stored(tsl_call_t *call, tsl_export_format_t f, const tsl_stored_plan_t *row)
{
    tsl_err_t err = {0};
    char *text;
    size_t len;
    if (tsl_export_stored(f, row->request_json, row->result_json, &text, &len, &err) != 0) {
        tsl_call_fail(call,
                      tsl_err_code(&err) == TSL_E_UNSUPPORTED ? GRPC_STATUS_FAILED_PRECONDITION
                                                              : GRPC_STATUS_INTERNAL,
                      "%s", err.msg);
        return;
    }
    if (f == TSL_EXPORT_TRACE) {
        reply_export(call, "trace", "application/json", text, len, row->stale, NULL, 0);
    } else {
        char(*notes)[TSL_EXPORT_NOTE_CAP] = malloc(TSL_EXPORT_MAX_NOTES * sizeof *notes);
        char *ptrs[TSL_EXPORT_MAX_NOTES];
        size_t n = notes ? tsl_export_stored_notes(f, row->result_json, notes) : 0;
        for (size_t i = 0; i < n; i++)
            ptrs[i] = notes[i];
        reply_export(call, tsl_export_format_name(f), tsl_export_content_type(f), text, len,
                     row->stale, ptrs, n);
        free(notes);
    }
    free(text);
}

void tsl_handle_export_plan(tsl_call_t *call)
{
    Tessel__V1__ExportPlanRequest *req = (Tessel__V1__ExportPlanRequest *)tsl_call_read(
        call, &tessel__v1__export_plan_request__descriptor);
    if (!req)
        return;
    char fp[17];
    tsl_export_format_t f;
    tsl_stored_plan_t row;
    memset(&row, 0, sizeof row);
    if (request_fingerprint(call, req->fingerprint, fp) && export_format(call, req->format, &f) &&
        load(call, fp, &row, false) == 0) {
        if (f == TSL_EXPORT_COUNT)
            export_json(call, &row);
        else
            export_stored(call, f, &row);
        tsl_stored_plan_clear(&row);
    }
    protobuf_c_message_free_unpacked(&req->base, NULL);
}
