/*
 * handlers_cluster.c — Planner.GetRegisteredCluster: the cluster tesseld
 * assembles for a PlanRequest's `registered` member (registry_cluster.h), with
 * where each figure came from and the workers it left out. Read-only: nothing
 * is stored (the liveness sweep ListWorkers also does aside). The same names
 * are refused as in Plan (INVALID_ARGUMENT naming cluster.registered.nodes; no
 * online worker is FAILED_PRECONDITION).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "handlers.h"
#include "registry_cluster.h"
#include "request.h"
#include "status.h"

static char *strings_of(const json_t *a, size_t i)
{
    return (char *)json_string_value(json_array_get(a, i));
}

static void answer(tsl_call_t *call, const tsl_registry_cluster_t *rc)
{
    Tessel__V1__RegisteredClusterAnswer resp = TESSEL__V1__REGISTERED_CLUSTER_ANSWER__INIT;
    size_t nd = json_array_size(rc->sources);
    char **details = calloc(nd ? nd : 1, sizeof *details);
    char **left = calloc(rc->n_left_out ? rc->n_left_out : 1, sizeof *left);
    if (!details || !left) {
        tsl_call_fail(call, GRPC_STATUS_RESOURCE_EXHAUSTED, "GetRegisteredCluster: out of memory");
        goto out;
    }
    for (size_t i = 0; i < nd; i++)
        details[i] = strings_of(rc->sources, i);
    for (size_t i = 0; i < rc->n_left_out; i++)
        left[i] = (char *)rc->left_out[i];
    resp.cluster_json = rc->json;
    resp.n_details = nd;
    resp.details = details;
    resp.n_workers_left_out = rc->n_left_out;
    resp.workers_left_out = left;
    tsl_call_reply(call, &resp.base);
out:
    free(details);
    free(left);
}

void tsl_handle_get_registered_cluster(tsl_call_t *call)
{
    Tessel__V1__RegisteredCluster *req = (Tessel__V1__RegisteredCluster *)tsl_call_read(
        call, &tessel__v1__registered_cluster__descriptor);
    if (!req)
        return;
    tsl_registry_cluster_t rc;
    tsl_err_t err = {0};
    memset(&rc, 0, sizeof rc);
    if (tsl_request_check_registered(req, &err) != 0 ||
        tsl_registry_cluster_build(call->srv->store, (const char *const *)req->nodes, req->n_nodes,
                                   tsl_clock_unix_s(), call->srv->cfg->worker_timeout_s, &rc,
                                   &err) != 0)
        tsl_call_fail_err(call, &err);
    else
        answer(call, &rc);
    tsl_registry_cluster_free(&rc);
    protobuf_c_message_free_unpacked(&req->base, NULL);
}
