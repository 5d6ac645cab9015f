/*
 * handlers_registry.c — Registry.RegisterWorker, Heartbeat, ReportProfile,
 * ListWorkers, GetProfile (store_registry.h does the storing).
 *
 * Every call first brings the liveness states up to date (tsl_registry_sweep),
 * so that a worker silent past its timeout is offline in any answer, and the
 * transition is logged once. Requests are checked field by field
 * (INVALID_ARGUMENT names the field and the limit); an unknown worker_id is
 * NOT_FOUND, which tells the worker to register again (a daemon whose database
 * was replaced); store failures are INTERNAL.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "arena.h"
#include "calibration.h"
#include "clock.h"
#include "handlers.h"
#include "log.h"
#include "names.h"
#include "profile_check.h"
#include "profile_history.h"
#include "proto_arena.h"
#include "request.h"
#include "server_auth.h"
#include "store_registry.h"
#include "trial_run.h"
#include "tessel/v1/registry.pb-c.h"

#define MAX_NAME         127u /* hostname, model, versions */
#define MAX_MEASUREMENTS 100000u
#define MAX_HEARTBEAT_S  3600u
/* The most streaming multiprocessors a device may report. The largest NVIDIA
 * parts to date have under 200 (A100 108, H100/H200 132, B200 148, RTX PRO 6000
 * Blackwell 188: NVIDIA's data sheets, cudaDeviceProp.multiProcessorCount); 1024
 * leaves room for parts to come and still refuses a wrapped negative (2^32 - 1). */
#define MAX_SM_COUNT 1024u

/* The same sweep as the housekeeping tick's, with its rate-limited failure log. */
static void sweep(tsl_call_t *call)
{
    tsl_trial_run_sweep(call->srv);
}

/* A printable name of 1..max characters (names.h: no control characters, no
 * quotes, and here no backslash, so that it stays one clean token in tables, logs
 * and profile keys); the refusal shows it escaped (a raw newline would end the
 * status message's line). */
static bool check_name(tsl_call_t *call, const char *field, const char *v, size_t max,
                       bool empty_ok)
{
    size_t n = strlen(v);
    bool ok = (empty_ok || n > 0) && n <= max && tsl_name_bad_char(v, "\\") == NULL;
    char shown[TSL_ERR_SHOWN_MAX(60)];
    if (!ok)
        tsl_call_fail(call, GRPC_STATUS_INVALID_ARGUMENT,
                      "%s: '%s' must be %s%zu printable characters without quotes", field,
                      tsl_err_shown(v, 60, shown, sizeof shown), empty_ok ? "at most " : "1 to ",
                      max);
    return ok;
}

/* ---- RegisterWorker ------------------------------------------------------------------------ */

/* A device's index and SM count as a real GPU reports them: index a CUDA ordinal,
 * which runs 0..count-1 on a node, and a worker registers at most
 * TSL_REGISTRY_MAX_DEVICES, so 0..63 (a trial hands the index back to the worker
 * as the device to run on); sm_count 0 (not given: a client that does not know)
 * or 1..MAX_SM_COUNT. A negative sent as a 64-bit varint arrives as a uint32 near
 * 2^32 and is refused here too. */
static bool check_device_numbers(tsl_call_t *call, size_t i, const Tessel__V1__Device *d)
{
    if (d->index >= TSL_REGISTRY_MAX_DEVICES) {
        tsl_call_fail(call, GRPC_STATUS_INVALID_ARGUMENT,
                      "devices[%zu].index: %u is not a CUDA device ordinal of a node (0 to %u)", i,
                      d->index, TSL_REGISTRY_MAX_DEVICES - 1);
        return false;
    }
    if (d->sm_count > MAX_SM_COUNT) {
        tsl_call_fail(call, GRPC_STATUS_INVALID_ARGUMENT,
                      "devices[%zu].sm_count: %u is more streaming multiprocessors than any GPU "
                      "has (0: not given, else 1 to %u)",
                      i, d->sm_count, MAX_SM_COUNT);
        return false;
    }
    return true;
}

static bool check_devices(tsl_call_t *call, const Tessel__V1__RegisterRequest *req,
                          tsl_reg_device_t *devs)
{
    if (req->n_devices == 0 || req->n_devices > TSL_REGISTRY_MAX_DEVICES) {
        tsl_call_fail(call, GRPC_STATUS_INVALID_ARGUMENT,
                      "devices: %zu given; a worker registers 1 to %u GPUs", req->n_devices,
                      TSL_REGISTRY_MAX_DEVICES);
        return false;
    }
    for (size_t i = 0; i < req->n_devices; i++) {
        const Tessel__V1__Device *d = req->devices[i];
        char field[48];
        snprintf(field, sizeof field, "devices[%zu].model", i);
        if (!check_name(call, field, d->model, MAX_NAME, false))
            return false;
        tsl_err_t err = {0};
        if (tsl_request_check_device_memory(i, d->memory_bytes, &err) != 0)
            return tsl_call_fail_err(call, &err), false;
        if (!check_device_numbers(call, i, d))
            return false;
        snprintf(field, sizeof field, "devices[%zu].uuid", i);
        if (!check_name(call, field, d->uuid, MAX_NAME, true))
            return false;
        for (size_t j = 0; j < i; j++) {
            if (req->devices[j]->index == d->index) {
                tsl_call_fail(call, GRPC_STATUS_INVALID_ARGUMENT,
                              "devices[%zu].index: %u is given twice", i, d->index);
                return false;
            }
            /* one GPU listed twice: the registered cluster counted it as two */
            if (d->uuid[0] && strcmp(req->devices[j]->uuid, d->uuid) == 0) {
                tsl_call_fail(call, GRPC_STATUS_INVALID_ARGUMENT,
                              "devices[%zu].uuid: '%s' is devices[%zu]'s too; one GPU, one "
                              "device",
                              i, d->uuid, j);
                return false;
            }
        }
        devs[i] = (tsl_reg_device_t){.index = d->index,
                                     .model = d->model,
                                     .memory_bytes = d->memory_bytes,
                                     .sm_count = d->sm_count,
                                     .uuid = d->uuid};
    }
    return true;
}

static bool check_register(tsl_call_t *call, const Tessel__V1__RegisterRequest *req)
{
    if (!check_name(call, "hostname", req->hostname, MAX_NAME, false) ||
        !check_name(call, "driver_version", req->driver_version, MAX_NAME, true) ||
        !check_name(call, "cuda_version", req->cuda_version, MAX_NAME, true) ||
        !check_name(call, "nccl_version", req->nccl_version, MAX_NAME, true) ||
        !check_name(call, "version", req->version, MAX_NAME, true))
        return false;
    if (req->heartbeat_interval_s > MAX_HEARTBEAT_S) {
        tsl_call_fail(call, GRPC_STATUS_INVALID_ARGUMENT,
                      "heartbeat_interval_s: %u is above the limit %u", req->heartbeat_interval_s,
                      MAX_HEARTBEAT_S);
        return false;
    }
    return true;
}

/* Another credential registered this id: own_worker says whose (it answers
 * unless the binding changed in between). */
static void refuse_owner(tsl_call_t *call, const char *worker_id)
{
    if (tsl_handlers_own_worker(call, worker_id))
        tsl_call_fail(call, GRPC_STATUS_PERMISSION_DENIED,
                      "worker_id: %s is bound to another credential", worker_id);
}

void tsl_handle_register_worker(tsl_call_t *call)
{
    Tessel__V1__RegisterRequest *req = (Tessel__V1__RegisterRequest *)tsl_call_read(
        call, &tessel__v1__register_request__descriptor);
    if (!req)
        return;
    tsl_reg_device_t devs[TSL_REGISTRY_MAX_DEVICES];
    sweep(call);
    if (check_register(call, req) && check_devices(call, req, devs)) {
        tsl_reg_worker_t w = {.hostname = req->hostname,
                              .driver_version = req->driver_version,
                              .cuda_version = req->cuda_version,
                              .nccl_version = req->nccl_version,
                              .version = req->version,
                              .simulated = req->simulated,
                              .heartbeat_s = req->heartbeat_interval_s
                                                 ? req->heartbeat_interval_s
                                                 : call->srv->cfg->worker_heartbeat_s,
                              .n_devices = (uint32_t)req->n_devices,
                              .devices = devs};
        tsl_err_t err = {0};
        bool known = false;
        char who[TSL_REGISTRY_OWNER_MAX];
        tsl_auth_identity(call, who, sizeof who);
        w.owner = who;
        int rc = tsl_registry_register(call->srv->store, &w, tsl_clock_unix_s(), &known, &err);
        if (rc == 2) {
            refuse_owner(call, w.worker_id);
        } else if (rc != 0) {
            tsl_call_fail_err(call, &err);
        } else {
            tsl_log_info("worker %s (%s, %zu GPU(s) %s%s) %s", w.worker_id, w.hostname,
                         req->n_devices, devs[0].model, w.simulated ? ", simulated" : "",
                         known ? "registered again: identity restored" : "registered");
            Tessel__V1__RegisterResponse resp = TESSEL__V1__REGISTER_RESPONSE__INIT;
            resp.worker_id = w.worker_id;
            resp.heartbeat_interval_s = w.heartbeat_s;
            resp.known = known;
            tsl_call_reply(call, &resp.base);
        }
    }
    protobuf_c_message_free_unpacked(&req->base, NULL);
}

/* ---- Heartbeat ------------------------------------------------------------------------------ */

void tsl_handle_heartbeat(tsl_call_t *call)
{
    Tessel__V1__HeartbeatRequest *req = (Tessel__V1__HeartbeatRequest *)tsl_call_read(
        call, &tessel__v1__heartbeat_request__descriptor);
    if (!req)
        return;
    sweep(call);
    if (check_name(call, "worker_id", req->worker_id, TSL_WORKER_ID_LEN, false) &&
        tsl_handlers_own_worker(call, req->worker_id)) {
        tsl_err_t err = {0};
        bool back = false;
        int rc = tsl_registry_heartbeat(call->srv->store, req->worker_id, req->deregister,
                                        tsl_clock_unix_s(), &back, &err);
        if (rc != 0) {
            tsl_call_fail_err(call, &err);
        } else {
            if (req->deregister)
                tsl_log_info("worker %s deregistered (stopping)", req->worker_id);
            else if (back)
                tsl_log_info("worker %s online again", req->worker_id);
            Tessel__V1__HeartbeatResponse resp = TESSEL__V1__HEARTBEAT_RESPONSE__INIT;
            tsl_call_reply(call, &resp.base);
        }
    }
    protobuf_c_message_free_unpacked(&req->base, NULL);
}

/* ---- ReportProfile ------------------------------------------------------------------------------ */

/* The "link" label (the last one given, as in the stored labels): the link class. */
static const char *link_label(const Tessel__V1__Measurement *m)
{
    const char *link = "";
    for (size_t i = 0; i < m->n_labels; i++)
        if (strcmp(m->labels[i]->key, "link") == 0)
            link = m->labels[i]->value;
    return link;
}

static bool check_measurement(tsl_call_t *call, size_t i, const Tessel__V1__Measurement *m)
{
    char field[48];
    snprintf(field, sizeof field, "measurements[%zu].name", i);
    if (!check_name(call, field, m->name, 63, false))
        return false;
    snprintf(field, sizeof field, "measurements[%zu].unit", i);
    if (!check_name(call, field, m->unit, 15, false))
        return false;
    if (!isfinite(m->value)) {
        tsl_call_fail(call, GRPC_STATUS_INVALID_ARGUMENT,
                      "measurements[%zu].value: not a finite number (%s)", i, m->name);
        return false;
    }
    for (size_t k = 0; k < m->n_labels; k++) {
        snprintf(field, sizeof field, "measurements[%zu].labels", i);
        if (!check_name(call, field, m->labels[k]->key, 63, false) ||
            !check_name(call, field, m->labels[k]->value, 255, true))
            return false;
    }
    return true;
}

/* Converts the report's measurements; false after answering. */
static bool convert_measurements(tsl_call_t *call, const Tessel__V1__ReportProfileRequest *req,
                                 tsl_reg_measurement_t *out, char **texts)
{
    for (size_t i = 0; i < req->n_measurements; i++) {
        const Tessel__V1__Measurement *m = req->measurements[i];
        if (!check_measurement(call, i, m))
            return false;
        /* serialised once: the checks (profile_history.h) and the store read this text */
        texts[i] = tsl_profile_labels_json(m);
        if (!texts[i]) {
            tsl_call_fail(call, GRPC_STATUS_RESOURCE_EXHAUSTED, "ReportProfile: out of memory");
            return false;
        }
        out[i] = (tsl_reg_measurement_t){.name = m->name,
                                         .unit = m->unit,
                                         .value = m->value,
                                         .labels_json = texts[i],
                                         .link_class = link_label(m),
                                         .per_device = m->per_device,
                                         .device_index = m->device_index};
    }
    return true;
}

static void store_report(tsl_call_t *call, const Tessel__V1__ReportProfileRequest *req,
                         const tsl_reg_measurement_t *ms)
{
    tsl_reg_report_result_t res;
    tsl_err_t err = {0};
    char made[40];
    const char *rid = req->report_id;
    if (!rid[0]) { /* a client without spool ids: every report is new */
        snprintf(made, sizeof made, "srv-%lld-%08x", (long long)time(NULL), (unsigned)rand());
        rid = made;
    }
    int rc = tsl_registry_report(call->srv->store, req->worker_id, rid, req->measured_unix,
                                 (int64_t)time(NULL), ms, req->n_measurements, &res, &err);
    if (rc != 0) {
        tsl_call_fail_err(call, &err);
        return;
    }
    if (!res.duplicate)
        tsl_log_info("worker %s: profile %s stored (%u measurements); %u plan(s) marked stale",
                     req->worker_id, rid, res.stored, res.plans_marked_stale);
    Tessel__V1__ReportProfileResponse resp = TESSEL__V1__REPORT_PROFILE_RESPONSE__INIT;
    resp.plans_marked_stale = res.plans_marked_stale;
    resp.duplicate = res.duplicate;
    resp.stored = res.stored;
    tsl_call_reply(call, &resp.base);
}

/* On the store pool's thread: decoding, checking and storing 100,000 figures
 * takes seconds, which the completion-queue thread must not spend. */
static void report_profile(tsl_call_t *call)
{
    Tessel__V1__ReportProfileRequest *req = (Tessel__V1__ReportProfileRequest *)tsl_call_read(
        call, &tessel__v1__report_profile_request__descriptor);
    if (!req)
        return;
    size_t n = req->n_measurements;
    tsl_reg_measurement_t *ms = calloc(n ? n : 1, sizeof *ms);
    char **texts = calloc(n ? n : 1, sizeof *texts);
    sweep(call);
    if (!ms || !texts)
        tsl_call_fail(call, GRPC_STATUS_RESOURCE_EXHAUSTED, "ReportProfile: out of memory");
    else if (check_name(call, "worker_id", req->worker_id, TSL_WORKER_ID_LEN, false) &&
             check_name(call, "report_id", req->report_id, 64, true) &&
             tsl_handlers_own_worker(call, req->worker_id)) {
        if (n > MAX_MEASUREMENTS)
            tsl_call_fail(call, GRPC_STATUS_INVALID_ARGUMENT,
                          "measurements: %zu is above the limit %u", n, MAX_MEASUREMENTS);
        else if (convert_measurements(call, req, ms, texts) &&
                 tsl_profile_check_call(call, req, (const char *const *)texts))
            store_report(call, req, ms);
    }
    for (size_t i = 0; texts && i < n; i++)
        free(texts[i]);
    free(texts);
    free(ms);
    protobuf_c_message_free_unpacked(&req->base, NULL);
}

typedef struct report_job {
    tsl_pool_job_t job; /* first: the pool hands us this pointer */
    tsl_call_t *call;   /* a reference of ours */
} report_job_t;

static void report_run(tsl_pool_job_t *pj)
{
    report_profile(((report_job_t *)pj)->call);
}

static void report_release(tsl_pool_job_t *pj)
{
    tsl_call_t *call = ((report_job_t *)pj)->call;
    free(pj);
    tsl_call_unref(call);
}

void tsl_handle_report_profile(tsl_call_t *call)
{
    report_job_t *job = calloc(1, sizeof *job);
    if (!job) {
        tsl_call_fail(call, GRPC_STATUS_RESOURCE_EXHAUSTED, "ReportProfile: out of memory");
        return;
    }
    job->call = call;
    job->job.run = report_run;
    job->job.release = report_release;
    tsl_call_ref(call);
    if (atomic_load(&call->srv->shutting_down) ||
        tsl_pool_submit(call->srv->store_pool, &job->job) != 0) {
        tsl_call_fail(call, GRPC_STATUS_UNAVAILABLE, "ReportProfile: %s; retry",
                      atomic_load(&call->srv->shutting_down) ? "tesseld is shutting down"
                                                             : "too many reports waiting");
        tsl_call_unref(call);
        free(job);
    }
}

/* ---- ListWorkers ------------------------------------------------------------------------------- */

typedef struct list_ctx {
    tsl_arena_t arena;
    Tessel__V1__Worker **items;
    size_t n, cap;
} list_ctx_t;

static Tessel__V1__Device *copy_device(tsl_arena_t *a, const tsl_reg_device_t *d)
{
    Tessel__V1__Device *o = tsl_arena_alloc(a, sizeof *o);
    if (!o)
        return NULL;
    tessel__v1__device__init(o);
    o->index = d->index;
    o->memory_bytes = d->memory_bytes;
    o->sm_count = d->sm_count;
    const tsl_str_copy_t strs[] = {{&o->model, d->model}, {&o->uuid, d->uuid}};
    return tsl_proto_copy_strs(a, strs, 2) ? o : NULL;
}

static int fill_worker(tsl_arena_t *a, Tessel__V1__Worker *o, const tsl_reg_worker_t *w)
{
    tessel__v1__worker__init(o);
    o->last_seen_unix = w->last_seen_unix;
    o->registered_unix = w->registered_unix;
    o->profile_unix = w->profile_unix;
    o->n_measurements = w->n_measurements;
    o->heartbeat_interval_s = w->heartbeat_s;
    o->simulated = w->simulated;
    o->devices = tsl_arena_alloc(a, (w->n_devices ? w->n_devices : 1) * sizeof *o->devices);
    const tsl_str_copy_t strs[] = {{&o->worker_id, w->worker_id},
                                   {&o->hostname, w->hostname},
                                   {&o->state, w->state},
                                   {&o->driver_version, w->driver_version},
                                   {&o->cuda_version, w->cuda_version},
                                   {&o->nccl_version, w->nccl_version}};
    if (!tsl_proto_copy_strs(a, strs, sizeof strs / sizeof *strs) || !o->devices)
        return -1;
    for (uint32_t i = 0; i < w->n_devices; i++)
        if (!(o->devices[o->n_devices++] = copy_device(a, &w->devices[i])))
            return -1;
    return 0;
}

static int list_row(void *ud, const tsl_reg_worker_t *w)
{
    list_ctx_t *ctx = ud;
    if (ctx->n == ctx->cap) {
        size_t cap = ctx->cap ? 2 * ctx->cap : 16;
        Tessel__V1__Worker **items = realloc(ctx->items, cap * sizeof *items);
        if (!items)
            return -1;
        ctx->items = items;
        ctx->cap = cap;
    }
    Tessel__V1__Worker *o = tsl_arena_alloc(&ctx->arena, sizeof *o);
    if (!o || fill_worker(&ctx->arena, o, w) != 0)
        return -1;
    ctx->items[ctx->n++] = o;
    return 0;
}

void tsl_handle_list_workers(tsl_call_t *call)
{
    Tessel__V1__ListWorkersRequest *req = (Tessel__V1__ListWorkersRequest *)tsl_call_read(
        call, &tessel__v1__list_workers_request__descriptor);
    if (!req)
        return;
    list_ctx_t ctx = {0};
    tsl_err_t err = {0};
    sweep(call);
    if (tsl_registry_list(call->srv->store, list_row, &ctx, &err) != 0) {
        tsl_call_fail_err(call, &err);
    } else {
        Tessel__V1__ListWorkersResponse resp = TESSEL__V1__LIST_WORKERS_RESPONSE__INIT;
        resp.n_workers = ctx.n;
        resp.workers = ctx.items;
        tsl_call_reply(call, &resp.base);
    }
    free(ctx.items);
    tsl_arena_free(&ctx.arena);
    protobuf_c_message_free_unpacked(&req->base, NULL);
}

/* ---- GetProfile ----------------------------------------------------------------------------------- */

typedef struct profile_ctx {
    tsl_arena_t arena;
    Tessel__V1__Measurement **items;
    size_t n, cap;
} profile_ctx_t;

static bool set_label(tsl_arena_t *a, ProtobufCMessage *m, const char *key, json_t *value)
{
    Tessel__V1__Measurement__LabelsEntry *e = (Tessel__V1__Measurement__LabelsEntry *)m;
    e->key = tsl_arena_strdup(a, key);
    e->value = tsl_arena_strdup(a, json_is_string(value) ? json_string_value(value) : "");
    return e->key && e->value;
}

/* The stored labels JSON back into map entries. */
static int copy_labels(tsl_arena_t *a, Tessel__V1__Measurement *o, const char *text)
{
    size_t n;
    o->labels = (Tessel__V1__Measurement__LabelsEntry **)tsl_proto_map_from_json(
        a, text, &tessel__v1__measurement__labels_entry__descriptor, set_label, &n, &o->n_labels);
    return o->labels && o->n_labels == n ? 0 : -1;
}

static int profile_row(void *ud, const tsl_reg_measurement_t *m)
{
    profile_ctx_t *ctx = ud;
    if (ctx->n == ctx->cap) {
        size_t cap = ctx->cap ? 2 * ctx->cap : 64;
        Tessel__V1__Measurement **items = realloc(ctx->items, cap * sizeof *items);
        if (!items)
            return -1;
        ctx->items = items;
        ctx->cap = cap;
    }
    tsl_arena_t *a = &ctx->arena;
    Tessel__V1__Measurement *o = tsl_arena_alloc(a, sizeof *o);
    if (!o)
        return -1;
    tessel__v1__measurement__init(o);
    o->value = m->value;
    o->measured_unix = m->measured_unix;
    o->simulated = m->simulated;
    o->n_samples = m->n_samples;
    o->per_device = m->per_device;
    o->device_index = m->device_index;
    const tsl_str_copy_t strs[] = {{&o->name, m->name},
                                   {&o->unit, m->unit},
                                   {&o->gpu_model, m->gpu_model},
                                   {&o->link_class, m->link_class},
                                   {&o->hostname, m->hostname}};
    if (!tsl_proto_copy_strs(a, strs, sizeof strs / sizeof *strs) ||
        copy_labels(a, o, m->labels_json) != 0)
        return -1;
    ctx->items[ctx->n++] = o;
    return 0;
}

/* A calibration (calibration.h) as calib_* rows of the aggregated answer:
 * the compute factor of each token range that had trials, the comm and memory
 * factors, and the iteration-time error before and after (leave-one-out). */
static int calib_row(profile_ctx_t *ctx, const char *model, bool sim, int64_t when,
                     const char *name, const char *unit, double value, uint32_t n,
                     const char *labels)
{
    tsl_reg_measurement_t m = {.name = name,
                               .unit = unit,
                               .value = value,
                               .labels_json = labels,
                               .link_class = "",
                               .measured_unix = when,
                               .simulated = sim,
                               .gpu_model = model,
                               .n_samples = n};
    return profile_row(ctx, &m);
}

static int calibration_rows(void *ud, const char *model, bool sim, const tsl_calib_t *c,
                            int64_t updated_unix)
{
    profile_ctx_t *ctx = ud;
    char labels[96];
    int rc = 0;
    for (uint32_t i = 0; i < TSL_CALIB_RANGES && rc == 0; i++) {
        if (c->range_samples[i] == 0)
            continue;
        if (i + 1 < TSL_CALIB_RANGES)
            snprintf(labels, sizeof labels, "{\"tokens_below\": \"%u\"}", c->range_max[i]);
        else
            snprintf(labels, sizeof labels, "{\"tokens_from\": \"%u\"}",
                     i ? c->range_max[i - 1] : 0);
        rc = calib_row(ctx, model, sim, updated_unix, "calib_compute", "ratio", c->compute_scale[i],
                       c->range_samples[i], labels);
    }
    const struct {
        const char *name, *labels;
        double value;
    } rows[] = {
        {"calib_comm", "{}", c->comm_scale},
        {"calib_memory", "{}", c->mem_scale},
        {"calib_iter_error", "{\"when\": \"before\"}", c->mae_before},
        {"calib_iter_error", "{\"when\": \"after, leave-one-out\"}", c->mae_after},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0] && rc == 0; i++)
        rc = calib_row(ctx, model, sim, updated_unix, rows[i].name, "ratio", rows[i].value,
                       c->n_samples, rows[i].labels);
    return rc;
}

/* A worker's credential reads the raw figures of its own host only (the
 * aggregates, which every plan shows anyway, stay open to it); scheduler and
 * ops read any. true when allowed; otherwise the call is answered. */
static bool may_read_host(tsl_call_t *call, const char *hostname)
{
    char who[TSL_REGISTRY_OWNER_MAX];
    tsl_err_t err = {0};
    if (!hostname[0] || call->role != TSL_ROLE_WORKER)
        return true;
    tsl_auth_identity(call, who, sizeof who);
    int rc = who[0] ? tsl_registry_host_readable(call->srv->store, hostname, who, &err) : 1;
    if (rc < 0)
        tsl_call_fail_err(call, &err);
    else if (rc == 0)
        tsl_call_fail(call, GRPC_STATUS_PERMISSION_DENIED,
                      "hostname: the raw figures of %s belong to the workers registered there; "
                      "this caller (%.100s) registered none of them",
                      hostname, who);
    return rc == 1;
}

void tsl_handle_get_profile(tsl_call_t *call)
{
    Tessel__V1__GetProfileRequest *req = (Tessel__V1__GetProfileRequest *)tsl_call_read(
        call, &tessel__v1__get_profile_request__descriptor);
    if (!req)
        return;
    profile_ctx_t ctx = {0};
    tsl_err_t err = {0};
    if (check_name(call, "gpu_model", req->gpu_model, MAX_NAME, true) &&
        check_name(call, "hostname", req->hostname, MAX_NAME, true) &&
        may_read_host(call, req->hostname)) {
        if (tsl_registry_profile(call->srv->store, req->gpu_model, req->hostname, profile_row, &ctx,
                                 &err) != 0 ||
            (!req->hostname[0] && tsl_calibration_list(call->srv->store, req->gpu_model,
                                                       calibration_rows, &ctx, &err) != 0)) {
            tsl_call_fail_err(call, &err);
        } else {
            Tessel__V1__GetProfileResponse resp = TESSEL__V1__GET_PROFILE_RESPONSE__INIT;
            resp.gpu_model = req->gpu_model;
            resp.n_measurements = ctx.n;
            resp.measurements = ctx.items;
            tsl_call_reply(call, &resp.base);
        }
    }
    free(ctx.items);
    tsl_arena_free(&ctx.arena);
    protobuf_c_message_free_unpacked(&req->base, NULL);
}
