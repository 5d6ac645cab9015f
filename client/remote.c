/*
 * remote.c — `tesselctl plan` against tesseld: builds a tessel.v1.PlanRequest
 * from the parsed options, follows the Plan stream (progress.h's bar on stderr
 * when it is a terminal), and prints the plan like a local one.
 */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cluster_json.h"
#include "hf_config.h"
#include "plan_proto.h"
#include "progress.h"
#include "remote.h"
#include "request.h"

/* Largest config / cluster file sent (the daemon's default request limit). */
#define TSL_REMOTE_MAX_FILE_BYTES (4u * 1024 * 1024)

/* The daemon names an HF model by the config's _name_or_path (else its
 * model_type); set it to the name --local derives from the path, so that both
 * modes show the same name. Text that is not a JSON object goes as it is (the
 * daemon reports it). */
static int name_hf_config(const char *path, const char *given, char **text)
{
    char buf[TSL_NAME_MAX];
    const char *name = given ? given : tsl_hf_config_path_name(path, buf, sizeof buf);
    json_t *root = name ? json_loads(*text, 0, NULL) : NULL;
    if (!json_is_object(root)) {
        json_decref(root);
        return 0;
    }
    json_object_set_new(root, "_name_or_path", json_string(name));
    char *named = json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(root);
    if (named == NULL)
        return tsl_remote_fail(TSL_EXIT_SERVER, "out of memory");
    free(*text);
    *text = named;
    return 0;
}

/* Model: a preset name or the text of a HuggingFace config.json. */
int tsl_remote_request_model(const tsl_plan_opts_t *po, Tessel__V1__PlanRequest *req)
{
    if (po->model && po->hf_config)
        return tsl_remote_fail(TSL_EXIT_USAGE,
                               "model: give either --model or --hf-config, not both");
    if (po->hf_config) {
        char path[4096];
        tsl_err_t err = {0};
        if (tsl_hf_config_resolve(po->hf_config, path, sizeof path, &err) != 0)
            return tsl_remote_fail(TSL_EXIT_USAGE, "--hf-config: %s", err.msg);
        bool in = strcmp(path, "-") == 0;
        int rc = tsl_remote_read_file("--hf-config", in ? "/dev/stdin" : path,
                                      TSL_REMOTE_MAX_FILE_BYTES, &req->hf_config_json);
        req->model_case = TESSEL__V1__PLAN_REQUEST__MODEL_HF_CONFIG_JSON;
        return rc == 0 && (!in || po->model_name)
                   ? name_hf_config(path, po->model_name, &req->hf_config_json)
                   : rc;
    }
    if (po->model_name)
        return tsl_remote_fail(TSL_EXIT_USAGE,
                               "name: --name names an --hf-config model; a preset keeps its own");
    if (!po->model || !*po->model)
        return tsl_remote_fail(TSL_EXIT_USAGE, "model: missing; give --model NAME (see `tesselctl "
                                               "models`) or --hf-config PATH");
    req->model_preset = strdup(po->model);
    req->model_case = TESSEL__V1__PLAN_REQUEST__MODEL_MODEL_PRESET;
    return req->model_preset ? 0 : tsl_remote_fail(TSL_EXIT_SERVER, "out of memory");
}

/* Cluster: "registered", a description file or a spec (tsl_cluster_arg_is_file's rule). */
int tsl_remote_request_cluster(const tsl_plan_opts_t *po, Tessel__V1__PlanRequest *req,
                               json_t **sources)
{
    *sources = NULL;
    if (po->cluster && strcmp(po->cluster, "registered") == 0)
        return tsl_remote_registered_cluster(po->nodes, req);
    if (po->nodes)
        return tsl_remote_fail(TSL_EXIT_USAGE, "--nodes: only with --cluster registered");
    if (po->galvatron_profile) { /* what the import attached travels as the cluster JSON */
        req->cluster_case = TESSEL__V1__PLAN_REQUEST__CLUSTER_CLUSTER_JSON;
        return tsl_plan_galvatron_cluster(po, &req->cluster_json, sources);
    }
    if (!po->cluster || !*po->cluster)
        return tsl_remote_fail(
            TSL_EXIT_USAGE,
            "cluster: missing; give --cluster SPEC (e.g. 2x8xA100-40G:ib100) or FILE.json");
    if (tsl_cluster_arg_is_file(po->cluster)) {
        req->cluster_case = TESSEL__V1__PLAN_REQUEST__CLUSTER_CLUSTER_JSON;
        return tsl_remote_read_file("--cluster", po->cluster, TSL_REMOTE_MAX_FILE_BYTES,
                                    &req->cluster_json);
    }
    req->cluster_spec = strdup(po->cluster);
    req->cluster_case = TESSEL__V1__PLAN_REQUEST__CLUSTER_CLUSTER_SPEC;
    return req->cluster_spec ? 0 : tsl_remote_fail(TSL_EXIT_SERVER, "out of memory");
}

/* seq_len and force travel beside the request fields (request_fields.h). */
static void request_options(const tsl_plan_opts_t *po, Tessel__V1__PlanRequest *req)
{
    tsl_request_to_proto(&po->req, &req->base);
    req->seq_len = po->seq_len;
    req->force = po->force;
}

/* model_* and cluster_* are unions (oneof): one free each. */
void tsl_remote_request_free(Tessel__V1__PlanRequest *req)
{
    free(req->model_preset);
    if (req->cluster_case == TESSEL__V1__PLAN_REQUEST__CLUSTER_REGISTERED)
        tsl_remote_registered_free(req->registered);
    else
        free(req->cluster_spec);
}

/* ---- the stream --------------------------------------------------------- */

/* Follows the stream; the last plan event is kept in *plan. */
static int follow_stream(tsl_rpc_client_t *c, const Tessel__V1__PlanRequest *req,
                         Tessel__V1__Plan **plan, tsl_rpc_status_t *st)
{
    tsl_progress_t pg;
    tsl_rpc_stream_t *s = tsl_rpc_stream_start(c, TSL_RPC_PLAN, &req->base, st);
    ProtobufCMessage *msg;

    if (!s)
        return -1;
    tsl_progress_init(&pg);
    while (tsl_rpc_stream_next(s, &tessel__v1__plan_event__descriptor, &msg, st) == 1) {
        Tessel__V1__PlanEvent *ev = (Tessel__V1__PlanEvent *)msg;
        if (ev->event_case == TESSEL__V1__PLAN_EVENT__EVENT_PROGRESS) {
            tsl_progress_draw(&pg, ev->progress->fraction, ev->progress->phase);
        } else if (ev->event_case == TESSEL__V1__PLAN_EVENT__EVENT_PLAN) {
            if (*plan)
                protobuf_c_message_free_unpacked(&(*plan)->base, NULL);
            *plan = ev->plan;
            ev->plan = NULL;
            ev->event_case = TESSEL__V1__PLAN_EVENT__EVENT__NOT_SET;
        }
        protobuf_c_message_free_unpacked(msg, NULL);
    }
    tsl_progress_clear(&pg);
    return tsl_rpc_stream_finish(s, st);
}

int tsl_remote_print_doc(json_t *doc, const tsl_client_opts_t *co)
{
    if (!doc)
        return tsl_remote_fail(TSL_EXIT_SERVER, "out of memory building the plan document");
    if (co->json)
        return tsl_remote_print_json(stdout, doc);
    /* says "(cached)" from the document, which does not say whose embedding copy the
     * embedding group sums */
    tsl_print_result(stdout, doc, TSL_PRINT_TIE_UNKNOWN);
    json_decref(doc);
    return TSL_EXIT_OK;
}

/* A --galvatron-profile import says what it sent as the cluster JSON and what
 * it could not: a list before the table, or "figure_sources" in the JSON. */
static json_t *with_sources(json_t *doc, json_t *sources, const tsl_client_opts_t *co)
{
    size_t i;
    json_t *line;
    if (!doc || !sources)
        return doc;
    if (co->json) {
        json_object_set(doc, "figure_sources", sources);
        return doc;
    }
    printf("Figures (galvatron-profile, sent as the cluster):\n");
    json_array_foreach(sources, i, line) printf("  %s\n", json_string_value(line));
    printf("\n");
    return doc;
}

void tsl_remote_print_notes(const Tessel__V1__Plan *plan)
{
    for (size_t i = 0; i < plan->n_notes; i++)
        fprintf(stderr, "tesselctl: plan: note: %s\n", plan->notes[i]);
}

/* The refusal plan --local does not make: --te-precision-config-file's overrides on a
 * registered cluster without an FP8 plan (TSL_MODULE_PREC_NO_FP8_PLAN), which only
 * tesseld can tell. Says so as plan_te_prec.c's note does; the caller asks again
 * without them. */
static bool te_prec_overrides_nothing(const tsl_plan_opts_t *po, const tsl_rpc_status_t *st)
{
    size_t n = strlen(TSL_MODULE_PREC_NO_FP8_PLAN);
    if (!po->te_prec_file || st->code != GRPC_STATUS_INVALID_ARGUMENT ||
        strncmp(st->message, TSL_MODULE_PREC_NO_FP8_PLAN, n) != 0)
        return false;
    const char *reason = strchr(st->message + n, '('); /* "(the reason)" closes it */
    char why[sizeof st->message + 64];
    snprintf(why, sizeof why, "no FP8 plan is weighed on the registered cluster%s%s",
             reason ? " " : "", reason ? reason : "");
    tsl_plan_te_prec_unused(why);
    return true;
}

/* *again: tesseld refused the request's --te-precision-config-file overrides where
 * plan --local drops them (te_prec_overrides_nothing); nothing reported then. */
static int run_plan(const Tessel__V1__PlanRequest *req, const tsl_plan_opts_t *po,
                    const tsl_client_opts_t *co, json_t *sources, bool *again)
{
    Tessel__V1__Plan *plan = NULL;
    tsl_rpc_client_t *c;
    tsl_rpc_status_t st = {0};
    const char *trace = po->trace;
    int rc = tsl_remote_open(co, &c);

    *again = false;
    if (rc != 0)
        return rc;
    if (follow_stream(c, req, &plan, &st) != 0) {
        *again = te_prec_overrides_nothing(po, &st);
        /* A first `tesselctl plan` on a machine without tesseld ends here: say that
           the planner also runs in-process. */
        size_t n = strlen(st.message);
        if (st.code == GRPC_STATUS_UNAVAILABLE && n + 80 < sizeof st.message)
            snprintf(st.message + n, sizeof st.message - n,
                     " (is tesseld running? --local plans in-process, without it)");
        rc = *again ? TSL_EXIT_OK : tsl_rpc_report(stderr, &st);
    } else if (!plan)
        rc = tsl_remote_fail(TSL_EXIT_SERVER, "the daemon ended the Plan stream without a plan");
    else {
        tsl_remote_print_notes(plan); /* on stderr, as plan --local prints them */
        rc = tsl_remote_print_doc(with_sources(tsl_plan_proto_to_json(plan), sources, co), co);
    }
    if (rc == 0 && trace != NULL) /* --trace FILE: the stored plan's timeline (ExportPlan) */
        rc = tsl_remote_export_to(co, "trace", plan->fingerprint, "trace", trace, false);
    if (plan)
        protobuf_c_message_free_unpacked(&plan->base, NULL);
    tsl_rpc_client_close(c);
    return rc;
}

int tsl_plan_remote(const tsl_plan_opts_t *po, const tsl_client_opts_t *co_in)
{
    Tessel__V1__PlanRequest req = TESSEL__V1__PLAN_REQUEST__INIT;
    tsl_client_opts_t co = *co_in;
    json_t *sources = NULL;
    int rc;

    tsl_remote_defaults(&co, true);
    rc = tsl_remote_request_model(po, &req);
    if (rc == 0)
        rc = tsl_remote_request_cluster(po, &req, &sources);
    if (rc == 0) {
        request_options(po, &req);
        bool again;
        rc = run_plan(&req, po, &co, sources, &again);
        if (again) {
            req.module_precision = 0;
            rc = run_plan(&req, po, &co, sources, &again);
        }
    }
    json_decref(sources);
    tsl_remote_request_free(&req);
    return rc;
}
