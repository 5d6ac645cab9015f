/*
 * remote.c — `tesselctl plan` against tesseld: builds a tessel.v1.PlanRequest
 * from the parsed options, follows the Plan stream (a progress bar on stderr when
 * it is a terminal), and prints the plan like a local one.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proto_json.h"
#include "remote.h"

/* Largest config / cluster file sent (the daemon's default request limit). */
#define TSL_REMOTE_MAX_FILE_BYTES (4u * 1024 * 1024)

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static bool is_regular_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Model: a preset name or the text of a HuggingFace config.json. */
static int request_model(const tsl_plan_opts_t *po, Tessel__V1__PlanRequest *req)
{
    if (po->model && po->hf_config)
        return tsl_remote_fail(TSL_EXIT_USAGE, "model: give either --model or --hf-config, not both");
    if (po->hf_config) {
        int rc = tsl_remote_read_file("--hf-config", po->hf_config, TSL_REMOTE_MAX_FILE_BYTES,
                                      &req->hf_config_json);
        req->model_case = TESSEL__V1__PLAN_REQUEST__MODEL_HF_CONFIG_JSON;
        return rc;
    }
    if (!po->model || !*po->model)
        return tsl_remote_fail(TSL_EXIT_USAGE, "model: missing; give --model NAME (see `tesselctl "
                                               "models`) or --hf-config PATH");
    req->model_preset = strdup(po->model);
    req->model_case = TESSEL__V1__PLAN_REQUEST__MODEL_MODEL_PRESET;
    return req->model_preset ? 0 : tsl_remote_fail(TSL_EXIT_SERVER, "out of memory");
}

/* Cluster: an existing file or a name ending in .json is a description; else a spec. */
static int request_cluster(const tsl_plan_opts_t *po, Tessel__V1__PlanRequest *req)
{
    if (!po->cluster || !*po->cluster)
        return tsl_remote_fail(TSL_EXIT_USAGE,
                               "cluster: missing; give --cluster SPEC (e.g. 2x8xA100-40G:ib100) or FILE.json");
    if (is_regular_file(po->cluster) || ends_with(po->cluster, ".json")) {
        req->cluster_case = TESSEL__V1__PLAN_REQUEST__CLUSTER_CLUSTER_JSON;
        return tsl_remote_read_file("--cluster", po->cluster, TSL_REMOTE_MAX_FILE_BYTES,
                                    &req->cluster_json);
    }
    req->cluster_spec = strdup(po->cluster);
    req->cluster_case = TESSEL__V1__PLAN_REQUEST__CLUSTER_CLUSTER_SPEC;
    return req->cluster_spec ? 0 : tsl_remote_fail(TSL_EXIT_SERVER, "out of memory");
}

static void request_options(const tsl_plan_opts_t *po, Tessel__V1__PlanRequest *req)
{
    req->seq_len = po->seq_len;
    req->memory_bytes = po->memory_bytes;
    req->global_batch = po->batch;
    req->max_batch = po->max_batch;
    req->top_k = po->top_k;
    req->no_pp = po->no_pp;
    req->no_tp = po->no_tp;
    req->no_dp = po->no_dp;
    req->no_sdp = po->no_sdp;
    req->no_ckpt = po->no_ckpt;
    req->no_baselines = po->no_baselines;
    req->no_placement = po->no_placement;
    req->no_memopt = po->no_memopt;
    req->no_slicer = po->no_slicer;
    req->no_sublayer = po->no_sublayer;
    req->no_bi_objective = po->no_bi_objective;
    req->no_interleave = po->no_interleave;
    req->pp = po->pp;
    req->force = po->force;
}

/* model_* and cluster_* are unions (oneof): one free each. */
static void request_free(Tessel__V1__PlanRequest *req)
{
    free(req->model_preset);
    free(req->cluster_spec);
}

/* ---- progress bar ----------------------------------------------------------- */

typedef struct progress {
    bool on;                 /* stderr is a terminal */
    bool drawn;
    int last_pct;
    char last_phase[32];
} progress_t;

static void progress_draw(progress_t *pg, const Tessel__V1__PlanProgress *ev)
{
    enum { WIDTH = 30 };
    double f = ev->fraction < 0 ? 0 : ev->fraction > 1 ? 1 : ev->fraction;
    int pct = (int)(f * 100.0 + 0.5), fill = (int)(f * WIDTH + 0.5);
    const char *phase = ev->phase ? ev->phase : "";
    char bar[WIDTH + 1];

    if (!pg->on || (pct == pg->last_pct && strcmp(phase, pg->last_phase) == 0))
        return;
    memset(bar, '#', (size_t)fill);
    memset(bar + fill, '.', (size_t)(WIDTH - fill));
    bar[WIDTH] = '\0';
    fprintf(stderr, "\r\033[K%-10.10s [%s] %3d%%", phase, bar, pct);
    fflush(stderr);
    pg->drawn = true;
    pg->last_pct = pct;
    snprintf(pg->last_phase, sizeof(pg->last_phase), "%s", phase);
}

static void progress_clear(progress_t *pg)
{
    if (pg->drawn)
        fputs("\r\033[K", stderr);
    pg->drawn = false;
}

/* ---- the stream --------------------------------------------------------- */

/* Follows the stream; the last plan event is kept in *plan. */
static int follow_stream(tsl_rpc_client_t *c, const Tessel__V1__PlanRequest *req,
                         Tessel__V1__Plan **plan, tsl_rpc_status_t *st)
{
    progress_t pg = {.on = isatty(STDERR_FILENO) == 1, .last_pct = -1};
    tsl_rpc_stream_t *s = tsl_rpc_stream_start(c, TSL_RPC_PLAN, &req->base, st);
    ProtobufCMessage *msg;

    if (!s)
        return -1;
    while (tsl_rpc_stream_next(s, &tessel__v1__plan_event__descriptor, &msg, st) == 1) {
        Tessel__V1__PlanEvent *ev = (Tessel__V1__PlanEvent *)msg;
        if (ev->event_case == TESSEL__V1__PLAN_EVENT__EVENT_PROGRESS) {
            progress_draw(&pg, ev->progress);
        } else if (ev->event_case == TESSEL__V1__PLAN_EVENT__EVENT_PLAN) {
            if (*plan)
                protobuf_c_message_free_unpacked(&(*plan)->base, NULL);
            *plan = ev->plan;
            ev->plan = NULL;
            ev->event_case = TESSEL__V1__PLAN_EVENT__EVENT__NOT_SET;
        }
        protobuf_c_message_free_unpacked(msg, NULL);
    }
    progress_clear(&pg);
    return tsl_rpc_stream_finish(s, st);
}

int tsl_remote_print_doc(json_t *doc, const tsl_client_opts_t *co)
{
    if (!doc)
        return tsl_remote_fail(TSL_EXIT_SERVER, "out of memory building the plan document");
    if (co->json)
        return tsl_remote_print_json(stdout, doc);
    tsl_print_result(stdout, doc);   /* says "(cached)" from the document */
    json_decref(doc);
    return TSL_EXIT_OK;
}

static int run_plan(const Tessel__V1__PlanRequest *req, const tsl_client_opts_t *co)
{
    Tessel__V1__Plan *plan = NULL;
    tsl_rpc_client_t *c;
    tsl_rpc_status_t st = {0};
    int rc = tsl_remote_open(co, &c);

    if (rc != 0)
        return rc;
    if (follow_stream(c, req, &plan, &st) != 0)
        rc = tsl_rpc_report(stderr, &st);
    else if (!plan)
        rc = tsl_remote_fail(TSL_EXIT_SERVER, "the daemon ended the Plan stream without a plan");
    else
        rc = tsl_remote_print_doc(tsl_proto_plan_to_json(plan), co);
    if (plan)
        protobuf_c_message_free_unpacked(&plan->base, NULL);
    tsl_rpc_client_close(c);
    return rc;
}

int tsl_plan_remote(const tsl_plan_opts_t *po, const tsl_client_opts_t *co_in)
{
    Tessel__V1__PlanRequest req = TESSEL__V1__PLAN_REQUEST__INIT;
    tsl_client_opts_t co = *co_in;
    int rc;

    tsl_remote_defaults(&co, true);
    rc = request_model(po, &req);
    if (rc == 0)
        rc = request_cluster(po, &req);
    if (rc == 0) {
        request_options(po, &req);
        rc = run_plan(&req, &co);
    }
    request_free(&req);
    return rc;
}
