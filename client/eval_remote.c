/*
 * eval_remote.c — `tesselctl eval` through tesseld (Planner.EvaluatePlan). The
 * plan is built here, where the options are read (flags, --strategy,
 * --megatron-args, --torchtitan need the model and the device count): it
 * travels as a <plan> object (plan_json.h) with the layer split resolved, so
 * the daemon reads one form only. The model and cluster go as `plan` sends
 * them (remote.c), the memory budget as the request's field. The answer's
 * result_json is the document `eval --json` prints locally (common/eval_doc.h),
 * printed by the same code; a plan over its memory budget (fits = false) exits
 * as it does locally.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval_cmd.h"
#include "mtp.h"
#include "partition.h"
#include "plan_json.h"
#include "remote.h"
#include "request.h"

/* A flag-built plan leaves the split to "balanced" (every n_layers 0, eval.h):
 * the split the daemon would take, written out, so the <plan> object is
 * complete (tsl_plan_from_json wants every stage's layers and devices). */
static void resolve_split(const tsl_model_t *m, uint32_t n_devices, tsl_plan_t *g)
{
    uint32_t first[TSL_PLAN_MAX_STAGES + 1], P = g->pp, G = P ? n_devices / P : 0;
    bool given = false;
    for (uint32_t s = 0; s < P; s++)
        given |= g->stages[s].n_layers != 0 || g->stages[s].first_layer != 0;
    if (!given) {
        tsl_partition_by_flops(m, P, first);
        for (uint32_t s = 0; s < P; s++) {
            g->stages[s].first_layer = first[s];
            g->stages[s].n_layers = first[s + 1] - first[s];
        }
    }
    for (uint32_t s = 0; s < P; s++) {
        if (g->stages[s].n_devices == 0) {
            g->stages[s].first_device = s * G;
            g->stages[s].n_devices = G;
        }
        if (g->stages[s].n_layers == 0)
            g->stages[s].n_layers =
                (s + 1 < P ? g->stages[s + 1].first_layer : m->n_layers) - g->stages[s].first_layer;
    }
}

/* The <plan> object sent: --plan's as given, else the built plan. */
static char *plan_text(tsl_eval_input_t *in)
{
    json_t *p;
    if (in->doc) {
        p = json_object_get(in->doc, "plan") ? json_object_get(in->doc, "plan") : in->doc;
        json_incref(p);
    } else {
        resolve_split(&in->model, in->cluster.n_devices, in->given);
        in->given->valid = true; /* complete now; plan_json writes only valid plans */
        p = tsl_plan_to_json(in->given);
    }
    char *text = p ? json_dumps(p, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(p);
    return text;
}

/* Prints the answer as the local mode does. */
static int print_answer(const Tessel__V1__EvaluatePlanResponse *resp, tsl_print_tie_t tie,
                        const tsl_client_opts_t *co)
{
    if (!resp->fits) {
        fprintf(stderr, "tesselctl: %s\n", resp->why);
        return tsl_errcode_exit(TSL_E_NOFIT);
    }
    json_error_t je;
    json_t *doc = json_loads(resp->result_json, 0, &je);
    if (!json_is_object(doc)) {
        json_decref(doc);
        return tsl_remote_fail(TSL_EXIT_SERVER,
                               "eval: the daemon's result_json is not a "
                               "JSON object (%s)",
                               je.text);
    }
    return tsl_eval_print(doc, tie, co);
}

static int call(const Tessel__V1__EvaluatePlanRequest *req, tsl_print_tie_t tie,
                const tsl_client_opts_t *co)
{
    tsl_rpc_client_t *c;
    tsl_rpc_status_t st = {0};
    ProtobufCMessage *out = NULL;
    int rc = tsl_remote_open(co, &c);
    if (rc != 0)
        return rc;
    if (tsl_rpc_unary(c, tsl_rpc_methods[TSL_RPC_ID_EVALUATE_PLAN].path, &req->base,
                      &tessel__v1__evaluate_plan_response__descriptor, &out, &st) != 0)
        rc = tsl_rpc_report(stderr, &st);
    else
        rc = print_answer((const Tessel__V1__EvaluatePlanResponse *)out, tie, co);
    if (out)
        protobuf_c_message_free_unpacked(out, NULL);
    tsl_rpc_client_close(c);
    return rc;
}

/* The given plan, the model and the options into the request, then the call. */
static int send_eval(const tsl_eval_opts_t *eo, tsl_eval_input_t *in, Tessel__V1__PlanRequest *pr,
                     const tsl_client_opts_t *co)
{
    int rc = tsl_remote_request_model(&in->po, pr);
    if (rc != 0)
        return rc;
    tsl_request_t r;
    tsl_eval_input_request(eo, in, &r); /* --target, else the plan document's */
    /* the MTP depths the plan was split on (mtp.h; a --megatron-args line or a plan
     * document's request decides them), so that tesseld builds the same layers */
    uint32_t d = tsl_mtp_depths(&in->model);
    r.mtp_layers = d;
    r.no_mtp = d == 0 && (eo->no_mtp || eo->megatron_args != NULL || in->mtp_dropped);
    tsl_request_to_proto(&r, &pr->base);
    pr->seq_len = in->po.seq_len;
    Tessel__V1__EvaluatePlanRequest req = TESSEL__V1__EVALUATE_PLAN_REQUEST__INIT;
    req.request = pr;
    req.no_search = eo->no_search;
    req.target_given = eo->target_given; /* --target any: not the document's */
    req.plan_json = plan_text(in);
    if (req.plan_json == NULL)
        return tsl_remote_fail(TSL_EXIT_SERVER, "eval: out of memory");
    rc = call(&req, tsl_print_tie_of(&in->model), co);
    free(req.plan_json);
    return rc;
}

/* --cluster registered: the cluster tesseld assembles (GetRegisteredCluster), to
 * build the plan on; the request still names the workers, so that tesseld
 * prices the plan on their profiles as Plan would. */
static int registered_cluster_json(const Tessel__V1__PlanRequest *pr, const tsl_client_opts_t *co,
                                   char **json)
{
    ProtobufCMessage *out = NULL;
    int rc = tsl_remote_call(co, tsl_rpc_methods[TSL_RPC_ID_GET_REGISTERED_CLUSTER].path,
                             &pr->registered->base,
                             &tessel__v1__registered_cluster_answer__descriptor, &out);
    if (rc == 0 && !(*json = strdup(((Tessel__V1__RegisteredClusterAnswer *)out)->cluster_json)))
        rc = tsl_remote_fail(TSL_EXIT_SERVER, "out of memory");
    if (out)
        protobuf_c_message_free_unpacked(out, NULL);
    return rc;
}

int tsl_eval_remote(const tsl_eval_opts_t *eo, const tsl_client_opts_t *co_in)
{
    Tessel__V1__PlanRequest pr = TESSEL__V1__PLAN_REQUEST__INIT;
    tsl_client_opts_t co = *co_in;
    tsl_plan_opts_t cpo = {.cluster = eo->cluster};
    json_t *sources = NULL;
    tsl_eval_input_t in;
    tsl_err_t err = {0};
    tsl_remote_defaults(&co, true); /* no deadline unless --timeout: the search may be long */
    memset(&in, 0, sizeof in);
    char *assembled = NULL;
    int rc = tsl_remote_request_cluster(&cpo, &pr, &sources);
    if (rc == 0 && pr.cluster_case == TESSEL__V1__PLAN_REQUEST__CLUSTER_REGISTERED)
        rc = registered_cluster_json(&pr, &co, &assembled);
    if (rc == 0) {
        const char *cj = pr.cluster_case == TESSEL__V1__PLAN_REQUEST__CLUSTER_CLUSTER_JSON
                             ? pr.cluster_json
                             : assembled;
        if (tsl_eval_input_load(eo, cj, &in, &err) != 0) {
            fprintf(stderr, "tesselctl: eval: %s\n", err.msg);
            rc = tsl_eval_input_exit(&err);
        } else {
            rc = send_eval(eo, &in, &pr, &co);
        }
    }
    tsl_eval_input_free(&in);
    free(assembled);
    json_decref(sources);
    tsl_remote_request_free(&pr);
    return rc;
}
